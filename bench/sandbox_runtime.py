"""`cobalt bench sandbox --runtime-compare ROUNDS`: what gVisor (`sandbox.runtime: runsc`)
costs the warm pool, beside the engine's default runtime (runc), in the same run.

Two pools of the same size, image, limits, transport and hardening, one per runtime, run the
same jobs interleaved over a few rounds (so drift in the machine's load hits both alike):
stdio jobs (bench/sandbox_pool.py's programs) and function-kind jobs (bench/sandbox_grading.py's).
Also per runtime: the pool's warm-up (container starts, in parallel) and `docker run` per
program on a few programs (create, attach, start, wait for removal). Reports tests/s and the
runsc/runc ratios; every job must pass every test under both. Needs runsc registered with the
engine (scripts/register-runsc.sh); otherwise the sandbox says so in one sentence.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from bench.sandbox_grading import make_function_jobs
from bench.sandbox_jobs import docker_run
from bench.tables import way_table
from sandbox.api import Job
from sandbox.core import Sandbox

COMPARED = "runsc"


def _pool_round(box: Sandbox, jobs: list[Job]) -> tuple[float, int]:
    start = time.perf_counter()
    results = box.run_many(jobs)
    return time.perf_counter() - start, sum(sum(t.passed for t in r.tests) for r in results if not r.tampered)


def measure(
    section: Any,
    opts: dict[str, Any],
    client: Any,
    stdio_jobs: list[Job],
    rounds: int,
    per_program: int,
    concurrency: int,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """runc vs runsc, pools opened here beside the benchmark's (same settings, same client)."""
    tests_per_program = len(stdio_jobs[0].tests) if stdio_jobs else 0
    kinds = (("stdio", stdio_jobs), ("function", make_function_jobs(len(stdio_jobs), tests_per_program)))
    runtimes = (None, COMPARED)
    rows: list[dict[str, Any]] = []
    with (
        Sandbox.from_config(section, runtime=None, client=client, **opts) as runc,
        Sandbox.from_config(section, runtime=COMPARED, client=client, **opts) as runsc,
    ):
        boxes = dict(zip(runtimes, (runc, runsc)))
        warmup = {}
        for name, box in boxes.items():
            log(f"runtime {name or 'runc'}: warming {box.backend.pool_size} containers ...")  # type: ignore[attr-defined]
            start = time.perf_counter()
            box.warm()
            warmup[name or "runc"] = round(time.perf_counter() - start, 2)
        for kind, jobs in kinds:
            totals = {name: [0.0, 0] for name in runtimes}
            for r in range(max(1, rounds)):
                for name in runtimes if r % 2 == 0 else runtimes[::-1]:
                    log(f"runtime {name or 'runc'}, pool {kind}, round {r + 1}/{rounds} ...")
                    seconds, passed = _pool_round(boxes[name], jobs)
                    totals[name][0] += seconds
                    totals[name][1] += passed
            n_tests = sum(len(j.tests) for j in jobs) * max(1, rounds)
            for name in runtimes:
                rows.append(_row(f"pool {kind}, {name or 'runc'}", n_tests, *totals[name]))
        subset = stdio_jobs[:per_program]
        for name in runtimes:
            log(f"runtime {name or 'runc'}: docker run per program ({len(subset)} programs) ...")
            start = time.perf_counter()
            passed = docker_run(boxes[name], subset, concurrency)
            rows.append(
                _row(
                    f"docker run/program, {name or 'runc'}",
                    sum(len(j.tests) for j in subset),
                    time.perf_counter() - start,
                    passed,
                )
            )
    keys = ("pool_stdio", "pool_function", "docker_run_per_program")  # rows come in (runc, runsc) pairs
    ratios = {
        f"{key}_{COMPARED}_vs_runc": round(rows[2 * i + 1]["tests_per_s"] / rows[2 * i]["tests_per_s"], 3)
        for i, key in enumerate(keys)
    }
    return {
        "rounds": rounds,
        "compared": COMPARED,
        "warmup_s": warmup,
        "rows": rows,
        "ratios": ratios,
        "all_correct": all(r["passed"] == r["tests"] for r in rows),
    }


def _row(way: str, tests: int, seconds: float, passed: int) -> dict[str, Any]:
    return {
        "way": way,
        "tests": tests,
        "seconds": round(seconds, 3),
        "tests_per_s": round(tests / seconds, 1) if seconds > 0 else 0.0,
        "passed": passed,
    }


def render(report: dict[str, Any]) -> list[str]:
    lines = [
        f"runtime: runc (the engine's default) vs {report['compared']} (gVisor), same settings, "
        f"{report['rounds']} interleaved rounds for the pools:",
        *way_table(report["rows"], 30),
    ]
    for key, ratio in report["ratios"].items():
        lines.append(f"{key.replace('_', ' '):<44}{ratio:>7.3f}")
    lines.append("pool warm-up (s): " + ", ".join(f"{k} {v:.2f}" for k, v in report["warmup_s"].items()))
    return lines
