"""`Prepared`: a validated job, ready to send, as `protocol.prepare` builds it and grading
reads it back (below both, so neither imports the other)."""

from __future__ import annotations

from dataclasses import dataclass, field

from sandbox.api import Limits, RunResult, TestCase
from sandbox.canary import PytestCanary
from sandbox.checks import Check


@dataclass
class Prepared:
    """A validated job, ready to send. `slots` maps each test the payload carries, in order,
    to its index in `tests`, or -1 for a hidden canary (sandbox/canary.py); `checks` holds a
    function test's `Check` when its expected value stays here (sandbox/checks.py)."""

    kind: str
    tests: list[TestCase]
    limits: Limits
    payload: bytes
    deadline_s: float
    result: RunResult | None = None  # set when the job needs no sandbox (e.g. not UTF-8)
    slots: list[int] = field(default_factory=list)
    checks: list[Check | None] = field(default_factory=list)
    pytest_canary: PytestCanary | None = None
    flags: list[str] = field(default_factory=list)
