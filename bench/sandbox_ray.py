"""`cobalt bench sandbox --backend ray`: the Ray backend beside the local warm pool, in one
run, on the same generated stdio programs and tests (bench/sandbox_jobs.py's `make_jobs`).

Both use the same pool size per host and concurrency; they run one after the other so they
do not compete for the CPU. On one machine the ratio is the overhead of going through Ray
(submission, serialisation, the actor hop); on a cluster of N sandbox hosts it is the
scale-out. Not here: the other ways (docker run, bare python) of bench/sandbox_pool.py.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable

from bench.sandbox_jobs import make_jobs, pool_passed, timed
from bench.tables import table
from sandbox.core import Sandbox

if TYPE_CHECKING:
    from sandbox.sandbox_settings import SandboxSettings


def run_ray_benchmark(
    section: SandboxSettings,
    programs: int,
    tests: int,
    concurrency: int | None,
    address: str | None,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    concurrency = concurrency or section.concurrency
    jobs = make_jobs(programs, tests)
    opts = dict(pool_size=concurrency, concurrency=concurrency, max_jobs_per_container=max(programs, 1))
    ray = section.ray.model_copy(update={"address": address} if address else {})
    rows = []
    with Sandbox.from_config(section.model_copy(update={"backend": "docker"}), **opts) as local:
        log(f"1/2 local warm pool ({concurrency} containers) ...")
        local.warm()
        rows.append(timed("local warm pool", programs, programs * tests, lambda: pool_passed(local, jobs)))
    with Sandbox.from_config(section.model_copy(update={"backend": "ray", "ray": ray}), **opts) as remote:
        nodes = remote.backend.workers()  # type: ignore[attr-defined]
        log(f"2/2 ray backend ({len(nodes)} node(s), {concurrency} containers each) ...")
        remote.warm()
        rows.append(
            timed(f"ray backend, {len(nodes)} node(s)", programs, programs * tests, lambda: pool_passed(remote, jobs))
        )
        by_node = {node[:12]: n for node, n in remote.backend.jobs_by_node.items()}  # type: ignore[attr-defined]
    return {
        "programs": programs,
        "tests_per_program": tests,
        "concurrency": concurrency,
        "cpus": os.cpu_count(),
        "ray_address": ray.address,
        "nodes": len(nodes),
        "jobs_by_node": by_node,
        "ways": rows,
        "all_correct": all(r["passed"] == r["tests"] for r in rows),
        "ratios": {"ray_vs_local_pool": round(rows[1]["tests_per_s"] / rows[0]["tests_per_s"], 2)},
    }


def render_ray(report: dict[str, Any]) -> str:
    lines = [
        f"sandbox benchmark, Ray backend: {report['programs']} programs x {report['tests_per_program']} stdio "
        f"tests, concurrency {report['concurrency']}, {report['cpus']} CPUs here, Ray at {report['ray_address']}",
        *table(report["ways"]),
    ]
    lines.append(
        f"{'ray / local warm pool':<32}{report['ratios']['ray_vs_local_pool']:>7.2f}x   "
        "(one host: the overhead of going through Ray; N hosts: the scale-out)"
    )
    lines.append("jobs per node: " + ", ".join(f"{node} {n}" for node, n in sorted(report["jobs_by_node"].items())))
    if not report["all_correct"]:
        lines.append("WARNING: some way did not pass every test; see the 'correct' column")
    return "\n".join(lines)
