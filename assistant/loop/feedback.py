"""Execution feedback for the model (docs/method.md): the first failing *public* test
only, as `Input:` / `Program's Output:` / `Expected Output:`, or the error traceback, or
the timeout; each field cut to 400 characters (first 200 + marker + last 200). When every
public test passes, say so and ask to consider edge cases for the hidden tests.

The same renderer serves the loop, dataset building and evaluation; the trainer renders
perturbed feedback by passing a RunResult whose expected outputs were swapped. This
module formats text only; it never runs anything and never sees hidden tests.
"""

from __future__ import annotations

from sandbox.api import RunResult, TestResult

FIELD_CHARS = 400
TRUNCATION_MARKER = "...(truncated) ..."
ALL_PASSED = (
    "The code has passed all public test cases. Please try your best to think about "
    "possible edge cases and fix any remaining issues in the code to pass the hidden "
    "test cases."
)
NO_CODE = "No Python code block was found in your reply. Write the complete program in a single ```python code block."
NO_TESTS = "No tests were run: the test command collected no tests."


def truncate(text: str | None, limit: int = FIELD_CHARS) -> str:
    """Strip, then keep the first and last limit/2 characters around a marker."""
    text = (text or "").strip()
    if len(text) <= limit:
        return text
    half = limit // 2
    return text[:half] + TRUNCATION_MARKER + text[-half:]


def is_all_passed(feedback_text: str) -> bool:
    return ALL_PASSED in feedback_text


def _subject(test: TestResult, limit: int) -> list[str]:
    """What the test fed the program: its stdin, its assert snippet, or its name."""
    if test.input is not None:
        return ["Input:", truncate(test.input, limit)]
    if test.code is not None:
        return ["Test:", truncate(test.code, limit)]
    if test.name:
        return ["Test:", truncate(test.name, limit)]
    return []


def _error_text(test: TestResult) -> str:
    if test.stderr.strip():
        return test.stderr
    if test.actual and test.input is None:
        return test.actual
    return "The program exited with an error and printed no traceback."


def render_test(test: TestResult, field_chars: int = FIELD_CHARS, timeout_s: float | None = None) -> str:
    """The feedback text for one failing test."""
    lines = _subject(test, field_chars)
    status = test.status
    if status == "timeout":
        limit = f" within {timeout_s:g} seconds" if timeout_s else " within the time limit"
        lines.append(f"Timeout: the program did not finish{limit}.")
    elif status == "memory":
        lines.append("Memory limit exceeded: the program used more memory than allowed.")
    elif status == "output_limit":
        lines.append("Output limit exceeded: the program wrote more output than allowed.")
    elif status == "tampered":
        lines.append("Tampered: the program interfered with how tests are graded, so no test counts.")
    elif status == "failed" and test.expected is not None:
        actual = test.actual if test.actual is not None else test.stdout
        lines += [
            "Program's Output:",
            truncate(actual, field_chars),
            "Expected Output:",
            truncate(test.expected, field_chars),
        ]
    else:  # a crash, or a failed assert that carries no expected value
        lines += ["Error:", truncate(_error_text(test), field_chars)]
    return "\n".join(lines)


def render(result: RunResult, *, field_chars: int = FIELD_CHARS, timeout_s: float | None = None) -> str:
    """Feedback for a run of the public tests. `result` must hold public tests only."""
    if result.compile_error:
        return "\n".join(["Error:", truncate(result.compile_error, field_chars)])
    failure = result.first_failure()
    if failure is not None:
        return render_test(failure, field_chars, timeout_s)
    if not result.tests:
        return NO_TESTS
    return ALL_PASSED
