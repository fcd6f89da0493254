"""feedback: first failing public test only, fields cut to 400 chars, exact wording."""

from assistant.loop import feedback
from sandbox.api import RunResult, TestResult


def _stdio(status: str, **kw) -> TestResult:
    return TestResult(status=status, input=kw.pop("input", "1 2"), **kw)


def test_wrong_answer_shows_input_output_expected_of_the_first_failure_only() -> None:
    result = RunResult(
        tests=[
            _stdio("passed", expected="3", actual="3"),
            _stdio("failed", input="2 3\n", expected="5\n", actual="-1\n", stdout="-1\n"),
            _stdio("failed", input="9 9", expected="18", actual="0"),
        ]
    )
    assert feedback.render(result) == "Input:\n2 3\nProgram's Output:\n-1\nExpected Output:\n5"


def test_each_field_is_cut_to_first_200_marker_last_200() -> None:
    long_input = "".join(chr(ord("a") + i % 26) for i in range(1000))
    text = feedback.render(RunResult(tests=[_stdio("failed", input=long_input, expected="x" * 401, actual="y")]))
    cut = long_input[:200] + "...(truncated) ..." + long_input[-200:]
    assert text == f"Input:\n{cut}\nProgram's Output:\ny\nExpected Output:\n{'x' * 200}...(truncated) ...{'x' * 200}"
    assert feedback.truncate("z" * 400) == "z" * 400  # exactly the limit: untouched
    assert feedback.truncate("abcdef", 4) == "ab...(truncated) ...ef"


def test_runtime_error_shows_the_traceback() -> None:
    tb = (
        'Traceback (most recent call last):\n  File "/work/solution.py", line 2, in <module>\n'
        "ZeroDivisionError: division by zero\n"
    )
    text = feedback.render(RunResult(tests=[_stdio("error", input="0", expected="1", stderr=tb)]))
    assert text == "Input:\n0\nError:\n" + tb.strip()


def test_timeout_memory_and_output_limit() -> None:
    assert feedback.render(RunResult(tests=[_stdio("timeout")]), timeout_s=5.0) == (
        "Input:\n1 2\nTimeout: the program did not finish within 5 seconds."
    )
    assert feedback.render(RunResult(tests=[_stdio("timeout")])).endswith("within the time limit.")
    assert "Memory limit exceeded" in feedback.render(RunResult(tests=[_stdio("memory")]))
    assert "Output limit exceeded" in feedback.render(RunResult(tests=[_stdio("output_limit")]))


def test_function_tests_show_the_assert_and_the_values() -> None:
    failed = TestResult(
        status="failed", code="assert add(1, 2) == 3", actual="-1", expected="3", stderr="AssertionError"
    )
    assert feedback.render(RunResult(tests=[failed])) == (
        "Test:\nassert add(1, 2) == 3\nProgram's Output:\n-1\nExpected Output:\n3"
    )
    crashed = TestResult(status="error", code="assert add(1, 2) == 3", stderr="NameError: name 'add' is not defined")
    assert feedback.render(RunResult(tests=[crashed])) == (
        "Test:\nassert add(1, 2) == 3\nError:\nNameError: name 'add' is not defined"
    )


def test_compile_error_and_all_passed() -> None:
    syntax = '  File "solution.py", line 1\n    def f(:\n          ^\nSyntaxError: invalid syntax'
    assert feedback.render(RunResult(tests=[], compile_error=syntax)) == "Error:\n" + syntax.strip()
    passed = feedback.render(RunResult(tests=[_stdio("passed"), _stdio("passed")]))
    assert passed == feedback.ALL_PASSED
    assert "passed all public test cases" in passed and "hidden" in passed and "edge cases" in passed
    assert feedback.is_all_passed(passed)


def test_a_tampered_run_says_so_and_shows_none_of_its_values() -> None:
    forged = TestResult(status="tampered", code="assert add(1, 2) == 3", actual="3", expected="3", stderr="")
    text = feedback.render(RunResult(tests=[forged], tampered=True))
    assert text == (
        "Test:\nassert add(1, 2) == 3\nTampered: the program interfered with how tests are graded, so no test counts."
    )
