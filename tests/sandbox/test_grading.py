"""Grading against the real engine: comparison rules end to end, exit statuses, programs
that try to fake a pass, the function kind's actual values, and the pytest kind."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox import Project, TestCase
from tests.sandbox.cases import assert_cases, calc_project

pytestmark = pytest.mark.docker

ADD = "a, b = map(int, input().split())\n"


def statuses(result) -> list[str]:
    assert result.sandbox_error is None, result.sandbox_error
    return [t.status for t in result.tests]


def test_stdio_comparison_rules(sandbox) -> None:
    program = "import sys\nprint(*sys.stdin.read().split('|'), sep='\\n')\n"
    cases = [
        ("3   \n\n\n", "3"),  # trailing whitespace and blank lines
        ("0.3333333333333333", "0.3333333\n"),  # float tolerance
        ("1\n2", "1\n2\n"),  # exact
        ("2\n1", "1\n2\n"),  # reordered lines
        ("1 2", "2 1\n"),  # swapped tokens
        ("1000001", "1000000\n"),  # integers are exact
    ]
    tests = [TestCase(input=printed.replace("\n", "|"), output=expected) for printed, expected in cases]
    result = sandbox.run(program, tests, "stdio")
    assert statuses(result) == ["passed", "passed", "passed", "failed", "failed", "failed"]
    assert result.tests[3].actual == "2\n1\n" and result.tests[3].expected == "1\n2\n"
    assert result.pass_rate == pytest.approx(0.5)


def test_results_carry_feedback_fields(sandbox) -> None:
    result = sandbox.run(
        ADD + "print(a + b)\n", [TestCase(input="1 2\n", output="3\n"), TestCase(input="5 5\n", output="11\n")], "stdio"
    )
    assert statuses(result) == ["passed", "failed"]
    failed = result.tests[1]
    assert (failed.input, failed.expected, failed.stdout, failed.actual) == ("5 5\n", "11\n", "10\n", "10\n")
    assert failed.exit_code == 0 and failed.detail == "wrong answer" and failed.duration_s > 0


def test_traceback_shows_the_users_line_numbers(sandbox) -> None:
    program = "x = 1\ny = 2\n\ndef f():\n    return {}['missing']\n\nprint(f())\n"
    test = sandbox.run(program, [TestCase(input="", output="1")], "stdio").tests[0]
    assert test.status == "error" and test.detail == "runtime error: KeyError"
    assert 'File "solution.py", line 7, in <module>' in test.stderr
    assert 'File "solution.py", line 5, in f' in test.stderr
    assert "harness" not in test.stderr and "cobalt" not in test.stderr


def test_right_output_but_nonzero_exit_fails(sandbox) -> None:
    tests = [TestCase(input="1 2\n", output="3\n")]
    exit1 = sandbox.run(ADD + "print(a + b)\nimport sys\nsys.exit(1)\n", tests, "stdio").tests[0]
    assert (exit1.status, exit1.exit_code, exit1.stdout) == ("failed", 1, "3\n")
    raised = sandbox.run(ADD + "print(a + b)\nraise RuntimeError('late')\n", tests, "stdio").tests[0]
    assert (raised.status, raised.exit_code) == ("error", 1)
    clean = sandbox.run(ADD + "print(a + b)\nimport sys\nsys.exit(0)\n", tests, "stdio").tests[0]
    assert clean.status == "passed"


def test_patching_exit_functions_cannot_fake_a_pass(sandbox) -> None:
    patch = (
        "import os, sys, builtins, atexit\n"
        "sys.exit = os._exit = builtins.exit = lambda *a: None\n"
        "sys.excepthook = lambda *a: None\n"
        'atexit.register(lambda: print(\'{"status": "passed"}\'))\n'
    )
    stdio = sandbox.run(
        patch + ADD + "print(a + b)\nraise SystemExit(3)\n", [TestCase(input="1 2\n", output="3\n")], "stdio"
    )
    assert statuses(stdio) == ["failed"]
    function = sandbox.run(
        patch + "def add(a, b):\n    raise SystemExit(0)\n", [TestCase(code="assert add(1, 2) == 3")], "function"
    )
    assert statuses(function) == ["error"]
    real_exit = sandbox.run(
        "import os\ndef add(a, b):\n    os._exit(0)\n",
        [TestCase(code="assert add(1, 2) == 3\nassert add(2, 2) == 4")],
        "function",
    )
    assert statuses(real_exit) == ["error"]
    assert "before every statement" in real_exit.tests[0].detail


def test_fake_markers_and_always_equal_objects_fail(sandbox) -> None:
    program = (
        'print(\'{"status": "passed"}\\n{"done": true}\')\n'
        "import sys\nsys.stderr.write('OK\\n')\n"
        "class Same:\n    __eq__ = lambda self, other: True\n"
        "def add(a, b):\n    return Same()\n"
    )
    result = sandbox.run(program, [TestCase(code="assert add(1, 2) == 3")], "function")
    assert statuses(result) == ["failed"]


def test_killing_the_parent_cannot_fake_a_pass(sandbox) -> None:
    tests = [TestCase(input="1 2\n", output="3\n"), TestCase(input="2 2\n", output="4\n")]
    for kill in ("os.kill(os.getppid(), signal.SIGKILL)", "os.kill(-1, signal.SIGKILL)"):
        program = ADD + f"import os, signal, sys\nprint(a + b)\nsys.stdout.flush()\n{kill}\n"
        result = sandbox.run(program, tests, "stdio")
        assert statuses(result) == ["error", "error"], result
        assert "killed" in result.tests[0].detail
    assert statuses(sandbox.run(ADD + "print(a + b)\n", tests, "stdio")) == ["passed", "passed"]


def test_function_kind_shows_the_actual_value(sandbox) -> None:
    program = "def add(a, b):\n    return a - b\n\ndef mul(a, b):\n    return a * b\n"
    tests = assert_cases(
        "assert mul(2, 3) == 6",
        "assert add(1, 2) == 3",
        "x = [add(i, 1) for i in range(3)]\nassert x == [1, 2, 3], 'list'",
        "assert add(1, 2) == 3 == 3",
        "assert div(1, 0) == 0",
    )
    result = sandbox.run(program, tests, "function")
    assert statuses(result) == ["passed", "failed", "failed", "failed", "error"]
    assert (result.tests[1].actual, result.tests[1].expected) == ("-1", "3")
    assert result.tests[2].actual == "[-1, 0, 1]"
    assert "AssertionError: list" in result.tests[2].stderr
    assert "NameError" in result.tests[4].stderr and '"<test>", line 1' in result.tests[4].stderr


def test_function_tests_are_independent(sandbox) -> None:
    program = "seen = []\ndef f(x):\n    seen.append(x)\n    return len(seen)\n"
    result = sandbox.run(program, [TestCase(code="assert f(1) == 1")] * 3, "function")
    assert statuses(result) == ["passed"] * 3  # a fresh process per test


def test_pytest_kind_gives_per_test_results(sandbox, tmp_path: Path) -> None:
    project = calc_project(
        tmp_path / "proj",
        "from calc import add, sub\n\n"
        "def test_add():\n    assert add(1, 2) == 3\n\n"
        "def test_sub():\n    assert sub(3, 1) == 2\n\n"
        "class TestMore:\n    def test_add_neg(self):\n        assert add(-1, -1) == -2\n",
    )
    program = "def add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return a + b\n"
    result = sandbox.run(program, [], "pytest", project=Project(str(project), "calc.py"))
    by_name = {t.name: t.status for t in result.tests}
    assert by_name == {
        "tests/test_calc.py::test_add": "passed",
        "tests/test_calc.py::test_sub": "failed",
        "tests/test_calc.py::TestMore::test_add_neg": "passed",
    }, result
    failing = next(t for t in result.tests if t.status == "failed")
    assert "assert 4 == 2" in failing.stderr
    # `only`: the named tests alone run (a class's method too); a selection naming no collected
    # test runs every test rather than none
    only = ("tests/test_calc.py::test_sub", "tests/test_calc.py::TestMore::test_add_neg")
    chosen = sandbox.run(program, [], "pytest", project=Project(str(project), "calc.py", only=only))
    assert {t.name: t.status for t in chosen.tests} == {only[0]: "failed", only[1]: "passed"}, chosen
    stray = sandbox.run(program, [], "pytest", project=Project(str(project), "calc.py", only=("tests/x.py::t",)))
    assert {t.name: t.status for t in stray.tests} == by_name
    skipping = "import pytest\npytest.skip('no', allow_module_level=True)\n"
    skipped = sandbox.run(skipping, [], "pytest", project=Project(str(project), "calc.py"))
    assert skipped.pass_rate == 0.0 and skipped.tests
