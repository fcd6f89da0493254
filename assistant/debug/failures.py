"""What a project's test run says, test by test: the failing tests in the run's stable order, each
with its message and the frames of its short traceback (`path:line: in function`, as pytest's
`--tb=short` writes them into the JUnit report the sandbox reads), and the one-sentence error for a
run that tested nothing (command not found, no tests collected, no report).

Paths are made relative to the project root; this module reads results, it runs nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sandbox.api import RunResult, TestResult

SANDBOX_ROOT = "/work/project/"  # where the harness unpacks the project (sandbox/harness/project.py)
FRAME = re.compile(r"^(?P<path>[^\s:][^:\n]*\.py):(?P<line>\d+):(?: in (?P<function>[\w<>.]+))?", re.MULTILINE)
EXIT_WORDS = {
    127: "the test command was not found in the sandbox",
    126: "the test command could not be executed in the sandbox",
    5: "the test command collected no tests (pytest exit status 5)",
    4: "pytest refused the test command's arguments (exit status 4)",
    3: "pytest stopped on an internal error (exit status 3)",
}

LIMIT_WORDS = {
    "timeout": "the test command did not finish within its time limit (debug.test_timeout_s)",
    "output_limit": "the test command wrote more output than the sandbox keeps",
    "memory": "the test command ran out of memory in the sandbox",
}


@dataclass(frozen=True)
class Frame:
    path: str  # relative to the project root when inside it
    line: int
    function: str | None


@dataclass
class Failure:
    test: str  # the pytest node id, e.g. tests/test_calc.py::test_mul
    status: str
    message: str
    text: str  # the failure text: frames, source lines, `E` lines
    frames: list[Frame] = field(default_factory=list)


def _relative(path: str) -> str:
    return path[len(SANDBOX_ROOT) :] if path.startswith(SANDBOX_ROOT) else path


def frames(text: str) -> list[Frame]:
    """The traceback frames of a failure text, outermost first."""
    found = FRAME.finditer((text or "").replace("\r", ""))
    return [Frame(_relative(m["path"]), int(m["line"]), m["function"]) for m in found]


def _failure(test: TestResult) -> Failure:
    text = test.stderr or test.actual or ""
    message = (test.detail or "").strip() or (text.strip().splitlines() or [test.status])[-1]
    return Failure(test.name or "?", test.status, message, text, frames(text))


def failures(result: RunResult) -> list[Failure]:
    """The tests that did not pass, in the run's order."""
    return [_failure(t) for t in result.tests if not t.passed]


def run_error(result: RunResult, test_command: str) -> str | None:
    """One sentence when the run tested nothing (the whole command stands as its only result):
    the command is missing, collects no tests, or writes no report; None for a real test run."""
    if result.sandbox_error:
        return f"the sandbox could not run the tests: {result.sandbox_error}"
    if len(result.tests) != 1 or result.tests[0].name != test_command or result.tests[0].passed:
        return None
    whole = result.tests[0]
    if whole.status in LIMIT_WORDS:
        return f"{LIMIT_WORDS[whole.status]}: `{test_command}` ({whole.detail or whole.status})"
    if whole.status != "error":
        return None
    if whole.exit_code in EXIT_WORDS:
        why = EXIT_WORDS[whole.exit_code]
    elif whole.exit_code == 0:
        why = "the test command ran no pytest tests (it exited 0 without a JUnit report)"
    else:
        last = (whole.stderr.strip().splitlines() or whole.stdout.strip().splitlines() or [""])[-1][:200]
        why = f"the test command ran no pytest tests (exit status {whole.exit_code}{': ' + last if last else ''})"
    return f"{why}: `{test_command}`; it must run pytest on the project's tests"


def shorten(text: str, limit: int) -> str:
    """The first and last parts of `text` within `limit` characters."""
    text = text.strip()
    if len(text) <= limit:
        return text
    half = max(limit // 2 - 10, 1)
    return text[:half] + "\n...(cut)...\n" + text[-half:]


def render(failure: Failure, limit: int = 1500) -> str:
    """The feedback for one failing test: its id, its message, its short traceback."""
    lines = [f"Failing test: {failure.test}", f"Error: {shorten(failure.message, 300)}"]
    if failure.text.strip():
        lines += ["Traceback (most recent call last):", shorten(failure.text, limit)]
    return "\n".join(lines)


def summary(result: RunResult) -> str:
    """`N passed, M failed of K tests`."""
    passed = sum(t.passed for t in result.tests)
    return f"{passed} passed, {len(result.tests) - passed} failed of {len(result.tests)} tests"
