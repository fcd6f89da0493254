"""The host's verdict on a job's harness lines (docs/method.md): value tests judged here,
canaries taken out and checked, a forged run turned into `tampered`.

`grade(job, lines, done)` gets the harness' per-test lines in payload order (real tests and
canaries interleaved, sandbox/protocol.py) and returns the real tests' results in the caller's
order, whether a canary passed, and the signals it adds. A value test (sandbox/checks.py)
passes only when its `Check` accepts the plain value the harness sent; the harness' own
"passed" never counts for one. If a canary passed, every test becomes "tampered" (pass rate
0; RunResult.tampered). Not here: the wire format or sockets (sandbox/protocol.py).
"""

from __future__ import annotations

from sandbox.api import TAMPERED_DETAIL, TestCase, TestResult
from sandbox.prepared import Prepared

NO_VALUE = "the returned value cannot be compared: no value came back"


def error_tests(tests: list[TestCase], kind: str, detail: str, stderr: str = "") -> list[TestResult]:
    cases = tests or [TestCase(name="program")]
    return [
        TestResult(
            status="error",
            stderr=stderr,
            detail=detail,
            input=t.input,
            code=t.code,
            name=t.name,
            expected=t.output if kind == "stdio" else None,
        )
        for t in cases
    ]


def _test_result(job: Prepared, case: TestCase, obj: dict) -> TestResult:
    result = TestResult(
        status=obj["status"],
        stdout=obj.get("stdout") or "",
        stderr=obj.get("stderr") or "",
        duration_s=float(obj.get("duration_s") or 0.0),
        input=case.input,
        code=case.code,
        name=obj.get("name") or case.name,
        exit_code=obj.get("exit_code"),
        detail=obj.get("detail") or None,
        calls=obj.get("calls") if isinstance(obj.get("calls"), list) else None,
        lines=obj.get("lines") if isinstance(obj.get("lines"), list) else None,
        files=obj.get("files") if isinstance(obj.get("files"), dict) else None,
    )
    if job.kind == "stdio":
        result.expected, result.actual = case.output, result.stdout
    else:
        result.expected, result.actual = obj.get("expected"), obj.get("actual")
    return result


def _judge_function(job: Prepared, index: int, result: TestResult, obj: dict) -> None:
    """Apply the host's verdict to a function test's result, in place."""
    check = job.checks[index] if index < len(job.checks) else None
    if check is None:
        if result.status == "value":  # a value record for a test that asked for none: forged
            result.status, result.detail = "failed", NO_VALUE
        return
    if result.status == "passed":  # the harness never says so for a value test: a forged record
        result.status, result.detail = "failed", NO_VALUE
    elif result.status == "value":
        verdict = check.judge(obj.get("value"))
        result.status, result.detail = verdict["status"], verdict["detail"] or None
        result.actual, result.expected = verdict.get("actual"), verdict.get("expected")
        result.stderr += verdict.get("stderr", "")
    result.stderr = check.restore_line(result.stderr)


def grade(job: Prepared, lines: list[dict], done: bool) -> tuple[list[TestResult], bool, list[str]]:
    """(results of the real tests, tampered, extra flags) from the harness lines."""
    if job.kind == "pytest":
        return _grade_pytest(job, lines, done)
    tests: list[TestResult | None] = [None] * len(job.tests)
    tampered, stopped = False, False
    for position, slot in enumerate(job.slots):
        obj = lines[position] if position < len(lines) else None
        if obj is None:
            if slot >= 0:
                detail = (
                    "not run: the sandbox harness stopped early"
                    if stopped
                    else "the sandbox harness was "
                    "killed or stopped while this test ran (did the program signal its parent process?)"
                )
                tests[slot] = error_tests([job.tests[slot]], job.kind, detail)[0]
                stopped = True
            continue
        if slot < 0:
            tampered = tampered or obj.get("status") == "passed"
            continue
        result = _test_result(job, job.tests[slot], obj)
        if job.kind == "function":
            _judge_function(job, slot, result, obj)
        tests[slot] = result
    done_tests = [t for t in tests if t is not None]
    return _mark(done_tests, tampered), tampered, []


def _grade_pytest(job: Prepared, lines: list[dict], done: bool) -> tuple[list[TestResult], bool, list[str]]:
    canary, tests, tampered, seen = job.pytest_canary, [], False, False
    for obj in lines:
        if canary is not None and canary.owns(obj.get("name")):
            seen = True
            tampered = tampered or obj.get("status") == "passed"
            continue
        tests.append(_test_result(job, TestCase(name=obj.get("name")), obj))
    if not done:
        dead = error_tests(
            [TestCase(name="program")],
            job.kind,
            "the sandbox harness was killed or stopped while "
            "this test ran (did the program signal its parent process?)",
        )
        tests += dead
    missing = canary is not None and not seen and any(t.status != "error" for t in tests)
    return _mark(tests, tampered), tampered, ["canary_missing"] if missing else []


def _mark(tests: list[TestResult], tampered: bool) -> list[TestResult]:
    if tampered:
        for test in tests:
            test.status, test.detail = "tampered", TAMPERED_DETAIL
    return tests
