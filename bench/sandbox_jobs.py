"""The workload of the sandbox benchmarks: deterministic, correct generated programs with their
tests, and the timed ways of running them that more than one benchmark uses."""

from __future__ import annotations

import random
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

from sandbox.api import Job, TestCase
from sandbox.core import Sandbox
from sandbox.pool import run_once
from sandbox.protocol import assemble, prepare

TEMPLATES: list[tuple[str, Callable[[random.Random], str], Callable[[str, int], str]]] = [
    (
        "print(sum(map(int, input().split())) + {k})",
        lambda r: " ".join(str(r.randint(-99, 99)) for _ in range(8)),
        lambda s, k: str(sum(map(int, s.split())) + k),
    ),
    (
        "nums = sorted(map(int, input().split()))\nprint(*nums[{m}:])",
        lambda r: " ".join(str(r.randint(0, 999)) for _ in range(12)),
        lambda s, k: " ".join(map(str, sorted(map(int, s.split()))[k % 5 :])),
    ),
    (
        "words = input().split()\nprint(' '.join(reversed(words)), {k})",
        lambda r: " ".join(r.choice(["ab", "cd", "ef", "gh"]) for _ in range(6)),
        lambda s, k: " ".join(reversed(s.split())) + f" {k}",
    ),
    (
        "n = int(input())\nprint(sum(i * i for i in range(n)) % 1000003 + {k})",
        lambda r: str(r.randint(1, 3000)),
        lambda s, k: str(sum(i * i for i in range(int(s))) % 1000003 + k),
    ),
    (
        "xs = list(map(float, input().split()))\nprint(f'{{sum(xs) / len(xs) + {k}:.6f}}')",
        lambda r: " ".join(f"{r.uniform(0, 10):.3f}" for _ in range(5)),
        lambda s, k: f"{sum(map(float, s.split())) / 5 + k:.6f}",
    ),
    (
        "import sys\nlines = sys.stdin.read().split()\nprint(len(lines) + {k})\nprint(max(lines))",
        lambda r: "\n".join(r.choice(["x", "yy", "zzz", "w"]) for _ in range(r.randint(1, 9))),
        lambda s, k: f"{len(s.split()) + k}\n{max(s.split())}",
    ),
]


def generate_jobs(
    templates: list,
    programs: int,
    tests: int,
    make_case: Callable[[Any, Any], TestCase],
    kind: str = "stdio",
    seed: int = 0,
) -> list[Job]:
    """Deterministic, correct programs from (source, make_input, solve) templates; each test
    is make_case(input, solve(input, k)) for program k."""
    rng, jobs = random.Random(seed), []
    for k in range(programs):
        source, make_input, solve = templates[k % len(templates)]
        cases = []
        for _ in range(tests):
            given = make_input(rng)
            cases.append(make_case(given, solve(given, k)))
        jobs.append(Job(source.format(k=k, m=k % 5) + "\n", cases, kind=kind))
    return jobs


def make_jobs(programs: int, tests: int, seed: int = 0) -> list[Job]:
    """Deterministic, correct stdio programs with their tests."""
    return generate_jobs(
        TEMPLATES, programs, tests, lambda given, out: TestCase(input=given + "\n", output=out + "\n"), seed=seed
    )


def timed(label: str, n_programs: int, n_tests: int, fn: Callable[[], int]) -> dict[str, Any]:
    start = time.perf_counter()
    passed = fn()
    seconds = time.perf_counter() - start
    return {
        "way": label,
        "programs": n_programs,
        "tests": n_tests,
        "seconds": round(seconds, 3),
        "tests_per_s": round(n_tests / seconds, 1),
        "passed": passed,
    }


def pool_passed(box: Sandbox, jobs: list[Job]) -> int:
    return sum(sum(t.passed for t in r.tests) for r in box.run_many(jobs))


def docker_run(box: Sandbox, jobs: list[Job], concurrency: int) -> int:
    def one(job: Job) -> int:
        prepared = prepare(job.program, job.tests, job.kind, box.limits, None)
        out, err, _ = run_once(
            box.client,
            box.image,
            box.limits,
            box.owner,
            prepared.payload,
            prepared.deadline_s,
            box.instance,
            box.backend.retry,  # type: ignore[attr-defined]
            box.backend.runtime,
        )  # type: ignore[attr-defined]
        return sum(t.passed for t in assemble(prepared, out, err).result.tests)

    with ThreadPoolExecutor(concurrency) as pool:
        return sum(pool.map(one, jobs))
