"""Running many programs in the sandbox for the trainer, with sandbox faults kept apart from
program failures.

A program that fails, crashes or times out is a result. A *sandbox fault* (the run reports
`sandbox_error`, or `run_many` raises) says nothing about the program: the
job is re-run up to `retries` times, and a job that still faults comes back as `None` so
the caller drops it and counts it. When every job of a call faults, the sandbox itself is
down and `SandboxError` is raised: training on nothing but dropped samples would be silent.
"""

from __future__ import annotations

import time
from typing import Sequence

from assistant.interfaces import BatchRunner
from sandbox.api import Job, RunResult, SandboxError


def run_with_retries(
    sandbox: BatchRunner, jobs: Sequence[Job], retries: int = 2, wait_s: float = 1.0
) -> tuple[list[RunResult | None], int]:
    """Results in job order (None for persistent faults) and how many re-runs it took."""
    results: list[RunResult | None] = [None] * len(jobs)
    pending = list(range(len(jobs)))
    last_error = ""
    reruns = 0
    for attempt in range(retries + 1):
        if not pending:
            break
        if attempt:
            time.sleep(wait_s * 2 ** (attempt - 1))
            reruns += len(pending)
        try:
            batch = sandbox.run_many([jobs[i] for i in pending])
        except Exception as exc:  # noqa: BLE001 - any failure of the sandbox is a fault, not a result
            last_error = f"{type(exc).__name__}: {exc}" if not isinstance(exc, SandboxError) else str(exc)
            continue
        still = []
        for index, result in zip(pending, batch):
            if result.sandbox_error:
                last_error = result.sandbox_error
                still.append(index)
            else:
                results[index] = result
        pending = still
    if jobs and len(pending) == len(jobs):
        raise SandboxError(
            f"the sandbox failed on every one of {len(jobs)} programs after {retries} retries: {last_error}"
        )
    return results, reruns
