"""`cobalt bench sandbox`: throughput of the warm pool against the obvious alternatives,
side by side in one run, on the same generated stdio programs and tests:

1. warm pool: `Sandbox.run_many` (the default transport: each program's job goes over the
   attach socket to the container's PID 1, which forks a worker; a fork per test);
   also, for information, the same pool with one `docker exec` per program;
2. one `docker run` per program (same image, same harness, same hardening; through the
   API: create, attach, start, wait for removal - no CLI start-up counted);
3. one `docker run` per test (on a declared subset of programs: it is slow);
4. bare local `python3` per test, no isolation at all. The programs are trusted ones
   generated here; this is the only place code runs outside the sandbox.

All four run with the same concurrency, and every way must get every test right.
`--grading ROUNDS` adds the grading guards on vs off (bench/sandbox_grading.py);
`--runtime-compare ROUNDS` adds gVisor (runsc) beside runc (bench/sandbox_runtime.py).
`--backend ray` measures the Ray backend beside the warm pool instead (bench/sandbox_ray.py).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Callable

from bench import sandbox_grading, sandbox_ray, sandbox_runtime
from bench.sandbox_jobs import docker_run, make_jobs, pool_passed, timed
from bench.tables import table
from sandbox.api import Job, Limits, SandboxError, TestCase
from sandbox.core import Sandbox
from sandbox.engine import ENGINE_ERRORS, short_reason
from sandbox.harness.compare import outputs_match

if TYPE_CHECKING:
    from sandbox.sandbox_settings import SandboxSettings

HELP = "warm pool vs docker run per program/test vs bare python3"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--programs", type=int, default=200, help="programs (default 200)")
    parser.add_argument("--tests", type=int, default=10, help="stdio tests per program (default 10)")
    parser.add_argument(
        "--per-program-programs", type=int, default=None, help="programs for `docker run` per program (default: all)"
    )
    parser.add_argument(
        "--per-test-programs",
        type=int,
        default=20,
        help="programs for `docker run` per test, a declared subset (default 20)",
    )
    parser.add_argument("--concurrency", type=int, default=None, help="jobs in flight (default: config)")
    parser.add_argument(
        "--grading",
        type=int,
        default=0,
        metavar="ROUNDS",
        help="also measure the grading guards (canaries, value tests judged outside) on vs off "
        "on the warm pool, over ROUNDS interleaved rounds per kind (e.g. 2; default 0: not)",
    )
    parser.add_argument(
        "--runtime-compare",
        type=int,
        default=0,
        metavar="ROUNDS",
        help="also measure gVisor (runtime runsc) beside runc: two pools, the same jobs, ROUNDS "
        "interleaved rounds per kind, and docker run per program on the "
        "--per-program-programs subset (e.g. 2; default 0: not; needs runsc registered)",
    )
    parser.add_argument(
        "--backend",
        choices=["docker", "ray"],
        default="docker",
        help="ray: the Ray backend beside the local warm pool instead (bench/sandbox_ray.py)",
    )
    parser.add_argument(
        "--ray-address",
        default=None,
        help="with --backend ray: the cluster (default: sandbox.ray.address; local: a private one)",
    )


def _bare(jobs: list[Job], python: str, limits: Limits, concurrency: int, tmp: str) -> int:
    files = []
    for i, job in enumerate(jobs):
        path = os.path.join(tmp, f"prog{i}.py")
        with open(path, "w") as fh:
            fh.write(job.program)
        files.append(path)

    def one(item: tuple[str, TestCase]) -> bool:
        path, case = item
        proc = subprocess.run(
            [python, path], input=case.input, capture_output=True, text=True, timeout=limits.timeout_s, cwd=tmp
        )
        return proc.returncode == 0 and outputs_match(case.output or "", proc.stdout)

    work = [(files[i], case) for i, job in enumerate(jobs) for case in job.tests]
    with ThreadPoolExecutor(concurrency) as pool:
        return sum(pool.map(one, work))


def run_benchmark(
    section: SandboxSettings,
    programs: int,
    tests: int,
    per_program: int | None,
    per_test: int,
    concurrency: int | None,
    log: Callable[[str], None] = print,
    grading_rounds: int = 0,
    runtime_rounds: int = 0,
) -> dict[str, Any]:
    concurrency = concurrency or section.concurrency
    jobs = make_jobs(programs, tests)
    per_program = min(programs, per_program if per_program is not None else programs)
    per_test = min(programs, per_test)
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    rows = []
    opts = dict(pool_size=concurrency, concurrency=concurrency, max_jobs_per_container=max(programs, 1))
    with (
        Sandbox.from_config(section, **opts) as box,
        Sandbox.from_config(section, transport="exec", client=box.client, **opts) as exec_box,
    ):
        log(f"warming {concurrency} containers ...")
        start = time.perf_counter()
        box.warm()
        warm_s = time.perf_counter() - start
        exec_box.warm()
        log("1/5 warm pool (run_many) ...")
        rows.append(timed("warm pool (run_many)", programs, programs * tests, lambda: pool_passed(box, jobs)))
        log("2/5 warm pool, docker exec per program ...")
        rows.append(timed("pool, docker exec/program", programs, programs * tests, lambda: pool_passed(exec_box, jobs)))
        log(f"3/5 docker run per program ({per_program} programs) ...")
        rows.append(
            timed(
                "docker run per program",
                per_program,
                per_program * tests,
                lambda: docker_run(box, jobs[:per_program], concurrency),
            )
        )
        log(f"4/5 docker run per test ({per_test} programs) ...")
        singles = [Job(j.program, [c]) for j in jobs[:per_test] for c in j.tests]
        rows.append(
            timed("docker run per test", per_test, per_test * tests, lambda: docker_run(box, singles, concurrency))
        )
        log(f"5/5 bare {python} per test ...")
        with tempfile.TemporaryDirectory(prefix="cobalt-bench-") as tmp:
            rows.append(
                timed(
                    "bare python3 per test",
                    programs,
                    programs * tests,
                    lambda: _bare(jobs, python, box.limits, concurrency, tmp),
                )
            )
        grading = sandbox_grading.measure(box, jobs, grading_rounds, log) if grading_rounds > 0 else None
        runtime = (
            sandbox_runtime.measure(section, opts, box.client, jobs, runtime_rounds, per_program, concurrency, log)
            if runtime_rounds > 0
            else None
        )
    pool = rows[0]["tests_per_s"]
    return {
        "grading": grading,
        "runtime": runtime,
        "programs": programs,
        "tests_per_program": tests,
        "concurrency": concurrency,
        "cpus": os.cpu_count(),
        "python": python,
        "pool_warmup_s": round(warm_s, 2),
        "subsets": {"docker_run_per_program": per_program, "docker_run_per_test": per_test},
        "ways": rows,
        "all_correct": all(r["passed"] == r["tests"] for r in rows)
        and (grading or {}).get("all_correct", True)
        and (runtime or {}).get("all_correct", True),
        "ratios": {
            "pool_vs_docker_run_per_test": round(pool / rows[3]["tests_per_s"], 2),
            "pool_vs_docker_run_per_program": round(pool / rows[2]["tests_per_s"], 2),
            "pool_vs_bare_python": round(pool / rows[4]["tests_per_s"], 2),
            "pool_vs_pool_with_docker_exec": round(pool / rows[1]["tests_per_s"], 2),
        },
        "targets": {"pool_vs_docker_run_per_test": 20, "pool_vs_docker_run_per_program": 3, "pool_vs_bare_python": 1.0},
    }


def render(report: dict[str, Any]) -> str:
    lines = [
        f"sandbox benchmark: {report['programs']} programs x {report['tests_per_program']} stdio tests, "
        f"concurrency {report['concurrency']}, {report['cpus']} CPUs",
        *table(report["ways"]),
    ]
    subsets = report["subsets"]
    if subsets["docker_run_per_test"] < report["programs"] or subsets["docker_run_per_program"] < report["programs"]:
        lines.append(
            f"(docker run per test measured on the first {subsets['docker_run_per_test']} programs, per "
            f"program on the first {subsets['docker_run_per_program']}; tests/s is comparable)"
        )
    lines.append(
        "all ways use the same image, harness, hardening and concurrency; docker run goes through the "
        "API (create, attach, start, wait for removal), without CLI start-up"
    )
    names = {
        "pool_vs_docker_run_per_test": "pool / docker run per test",
        "pool_vs_docker_run_per_program": "pool / docker run per program",
        "pool_vs_bare_python": "pool / bare python3",
    }
    lines.append(
        f"{'pool / pool with docker exec':<32}{report['ratios']['pool_vs_pool_with_docker_exec']:>7.2f}x"
        "   (information: the transport choice)"
    )
    for key, label in names.items():
        ratio, target = report["ratios"][key], report["targets"][key]
        verdict = "ok" if ratio >= target else "BELOW TARGET"
        lines.append(f"{label:<32}{ratio:>7.2f}x   target >= {target:g}x   {verdict}")
    lines.append(f"pool warm-up (not timed above): {report['pool_warmup_s']:.2f} s; bare python: {report['python']}")
    if report.get("grading"):
        lines += sandbox_grading.render(report["grading"])
    if report.get("runtime"):
        lines += sandbox_runtime.render(report["runtime"])
    if not report["all_correct"]:
        lines.append("WARNING: some way did not pass every test; see the 'correct' column")
    return "\n".join(lines)


def main(args: argparse.Namespace, settings: Any) -> int:
    """`cobalt bench sandbox`; `settings` is the loaded configuration (its `sandbox` section is used)."""
    quiet = bool(getattr(args, "json", False))
    log = (lambda s: print(s, file=sys.stderr)) if quiet else print
    try:
        if getattr(args, "backend", "docker") == "ray":
            report = sandbox_ray.run_ray_benchmark(
                settings.sandbox, args.programs, args.tests, args.concurrency, args.ray_address, log=log
            )
            print(json.dumps(report) if quiet else sandbox_ray.render_ray(report))
            return 0 if report["all_correct"] else 1
        report = run_benchmark(
            settings.sandbox,
            args.programs,
            args.tests,
            args.per_program_programs,
            args.per_test_programs,
            args.concurrency,
            log=log,
            grading_rounds=int(getattr(args, "grading", 0) or 0),
            runtime_rounds=int(getattr(args, "runtime_compare", 0) or 0),
        )
    except ENGINE_ERRORS as exc:  # after the retries (sandbox/engine.py); the pools are closed by now
        raise SandboxError(
            f"the benchmark lost the Docker engine ({short_reason(exc)}) even after retrying "
            "with back-off; it may be starved of CPU, so run it when the machine is less loaded"
        ) from None
    print(json.dumps(report) if quiet else render(report))
    return 0 if report["all_correct"] else 1
