"""`cobalt bench sandbox --grading`: what grading that cannot be forged costs the warm pool.

The same pool runs the same jobs with the guards on (a hidden canary per job, value-shaped
function tests judged outside the program: sandbox/canary.py, sandbox/checks.py) and off,
interleaved over a few rounds so drift in the machine's load hits both alike: stdio jobs
(bench/sandbox_pool.py's programs) and generated function-kind jobs with HumanEval-style
`assert f(...) == ...` tests. Reports tests/s each way and on/off ratios (target: the
guards cost at most 10%, i.e. on/off >= 0.9). Every job must pass every test, untampered.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from bench.sandbox_jobs import generate_jobs
from bench.tables import way_table
from sandbox.api import Job, TestCase
from sandbox.core import Sandbox

TARGET = 0.9
FUNCTION_TEMPLATES: list[tuple[str, Callable[[Any], Any], Callable[[Any, int], Any]]] = [
    (
        "def f(xs):\n    return sorted(xs)[{m}:]",
        lambda r: [r.randint(0, 99) for _ in range(8)],
        lambda x, k: sorted(x)[k % 5 :],
    ),
    (
        "def f(n):\n    return sum(i * i for i in range(n)) % 1000003 + {k}",
        lambda r: r.randint(1, 2000),
        lambda x, k: sum(i * i for i in range(x)) % 1000003 + k,
    ),
    (
        "def f(s):\n    return s[::-1] + '{k}'",
        lambda r: "".join(r.choice("abc") for _ in range(6)),
        lambda x, k: x[::-1] + str(k),
    ),
    (
        "def f(xs):\n    return {{x: xs.count(x) + {k} for x in set(xs)}}",
        lambda r: [r.randint(0, 3) for _ in range(6)],
        lambda x, k: {v: x.count(v) + k for v in set(x)},
    ),
]


def make_function_jobs(programs: int, tests: int, seed: int = 0) -> list[Job]:
    """Deterministic, correct function-kind programs with `assert f(X) == Y` tests."""
    return generate_jobs(
        FUNCTION_TEMPLATES,
        programs,
        tests,
        lambda given, out: TestCase(code=f"assert f({given!r}) == {out!r}"),
        "function",
        seed,
    )


def _run(box: Sandbox, jobs: list[Job], guards: bool) -> tuple[float, int, int]:
    box.canaries = box.outside_checks = guards
    start = time.perf_counter()
    results = box.run_many(jobs)
    seconds = time.perf_counter() - start
    return seconds, sum(sum(t.passed for t in r.tests) for r in results), sum(r.tampered for r in results)


def measure(box: Sandbox, stdio_jobs: list[Job], rounds: int = 2, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Guards on vs off on the same pool: rows per kind and way, and on/off ratios."""
    tests_per_program = len(stdio_jobs[0].tests) if stdio_jobs else 0
    function_jobs = make_function_jobs(len(stdio_jobs), tests_per_program)
    saved = (box.canaries, box.outside_checks)
    rows, ratios = [], {}
    try:
        for kind, jobs in (("stdio", stdio_jobs), ("function", function_jobs)):
            totals = {True: [0.0, 0, 0], False: [0.0, 0, 0]}
            for r in range(max(1, rounds)):
                for guards in (False, True) if r % 2 == 0 else (True, False):
                    log(f"grading guards {'on' if guards else 'off'}, {kind}, round {r + 1}/{rounds} ...")
                    seconds, passed, tampered = _run(box, jobs, guards)
                    for i, value in enumerate((seconds, passed, tampered)):
                        totals[guards][i] += value
            n_tests = sum(len(j.tests) for j in jobs) * max(1, rounds)
            for guards in (False, True):
                seconds, passed, tampered = totals[guards]
                rows.append(
                    {
                        "way": f"pool {kind}, guards {'on' if guards else 'off'}",
                        "tests": n_tests,
                        "seconds": round(seconds, 3),
                        "tests_per_s": round(n_tests / seconds, 1),
                        "passed": passed,
                        "tampered": tampered,
                    }
                )
            ratios[f"{kind}_on_vs_off"] = round(rows[-1]["tests_per_s"] / rows[-2]["tests_per_s"], 3)
    finally:
        box.canaries, box.outside_checks = saved
    return {
        "rounds": rounds,
        "rows": rows,
        "ratios": ratios,
        "target": TARGET,
        "all_correct": all(r["passed"] == r["tests"] and not r["tampered"] for r in rows),
    }


def render(report: dict[str, Any]) -> list[str]:
    lines = [
        f"grading guards (canary per job + value tests judged outside), on vs off, "
        f"{report['rounds']} interleaved rounds:",
        *way_table(report["rows"], 28, extra=("tampered",)),
    ]
    for key, ratio in report["ratios"].items():
        verdict = "ok" if ratio >= report["target"] else "BELOW TARGET"
        lines.append(f"{key.replace('_', ' '):<32}{ratio:>7.3f}   target >= {report['target']:g}   {verdict}")
    return lines
