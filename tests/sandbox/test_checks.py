"""Unit tests (no Docker) of grading that cannot be forged: value-test shapes and their
verdicts, plain data across the process boundary, canary building, the host's verdict on
harness lines (tampered runs) and the static flags."""

from __future__ import annotations

import ast
import math

import pytest

from sandbox.api import Limits, RunResult, TestCase
from sandbox.canary import PytestCanary, function_canary, pytest_canary, stdio_canary
from sandbox.checks import value_check
from sandbox.flags import scan
from sandbox.harness.plain import NotPlain, decode, encode
from sandbox.protocol import assemble, prepare


@pytest.mark.parametrize(
    "snippet, shape, call",
    [
        ("assert add(1, 2) == 3", "eq", "add(1, 2)"),
        ("assert 3 == add(1, 2)", "eq", "add(1, 2)"),
        ("x = [1]\nassert f(x) == [2], 'msg'", "eq", "f(x)"),
        ("assert is_ok('a')", "true", "is_ok('a')"),
        ("assert not is_ok('a')", "false", "is_ok('a')"),
        ("assert f(1) is None", "is", "f(1)"),
        ("assert abs(f(2) - 0.5) < 1e-6", "close", "f(2)"),
        ("import math\nassert math.fabs(0.5 - f(2)) <= 1e-6", "close", "f(2)"),
    ],
)
def test_value_shapes_keep_the_expected_value_out_of_the_child(snippet: str, shape: str, call: str) -> None:
    check = value_check(snippet)
    assert check is not None and check.shape == shape and check.call_src == call
    child = check.child_code
    assert child.splitlines()[check.line - 1] == f"({call})"  # same line number as the test
    for literal in ("[2]", "0.5", "'msg'", "== 3", "None"):
        if literal in snippet.splitlines()[-1] and literal not in call:
            assert literal not in child.splitlines()[-1]


def test_a_form_feed_in_the_setup_keeps_it_whole_in_the_child() -> None:
    """`str.splitlines` cut a setup line at a form feed (Python does not): the child's code was a
    SyntaxError and an honest program failed the test."""
    check = value_check('s = "a\x0cb"\nassert f(s) == 3\n')
    assert check is not None and check.setup_src == 's = "a\x0cb"\n'
    compile(check.child_code, "child", "exec")
    canary = function_canary([TestCase(code='s = "a\u2028b"\nassert f(s) == 3')], [None])
    assert canary is not None and 's = "a\u2028b"\n' in canary


@pytest.mark.parametrize(
    "snippet",
    [
        "assert f(1) == g(2)",  # no literal side
        "assert f(1) != 2",  # not a value shape
        "assert f(1) == 2 == 2",  # chained
        "x = 1; assert f(x) == 2",  # setup on the assert's line
        "assert f(1) == float('nan')",  # not a literal
        "assert f(1) == 2, f'{x}'",  # a message that is not a literal
        "print(f(1))",  # not an assert
        "assert (",  # not Python
    ],
)
def test_other_snippets_run_whole_in_the_child(snippet: str) -> None:
    assert value_check(snippet) is None


def test_judge_compares_plain_values_only() -> None:
    check = value_check("assert f(1) == [1, 2]")
    assert check.judge(encode([1, 2]))["status"] == "passed"
    failed = check.judge(encode([2, 1]))
    assert failed["status"] == "failed" and (failed["actual"], failed["expected"]) == ("[2, 1]", "[1, 2]")
    assert 'File "<test>", line 1' in failed["stderr"] and "assert f(1) == [1, 2]" in failed["stderr"]
    assert check.judge(None)["status"] == "failed" and check.judge("")["status"] == "failed"
    assert check.judge('["i","zz"]')["status"] == "failed"  # malformed plain data
    close = value_check("assert abs(f(2) - 0.5) < 1e-6")
    assert close.judge(encode(0.5000001))["status"] == "passed"
    assert close.judge(encode(0.6))["status"] == "failed"
    assert close.judge(encode("x"))["status"] == "error"  # like Python's TypeError
    assert value_check("assert f(1) is None").judge(encode(0))["status"] == "failed"
    assert value_check("assert not f(1)").judge(encode([]))["status"] == "passed"


def test_plain_data_round_trips_and_leaves_tricks_behind() -> None:
    value = {"a": [1, 2.5, None, True], (1, "x"): {frozenset({3}), b"\x00"}, "c": complex(1, -2), "big": 10**5000}
    assert decode(encode(value)) == value

    class Same(int):
        def __eq__(self, other):
            return True

    class Sneaky(list):
        def __iter__(self):
            return iter([1, 2, 3])

    crossed = decode(encode([Same(7), Sneaky([9])]))
    assert crossed == [7, [9]] and type(crossed[0]) is int and crossed[0] != 8
    for bad in (object(), [lambda: 0], {1: Same}, float):
        with pytest.raises(NotPlain):
            encode(bad)
    loop: list = []
    loop.append(loop)
    with pytest.raises(NotPlain, match="itself"):
        encode(loop)
    with pytest.raises(NotPlain, match="bigger"):
        encode("x" * 100, cap=50)
    deep: list = []
    for _ in range(200):
        deep = [deep]
    with pytest.raises(NotPlain, match="deeper"):
        encode(deep)
    with pytest.raises(NotPlain):
        decode('{"__class__": 1}')
    assert math.isnan(decode(encode(float("nan"))))


def test_canaries_look_like_the_tests_and_fail_for_honest_programs() -> None:
    cases = [TestCase(code="assert add(1, 2) == 3"), TestCase(code="x = add(5, 5)\nassert x in (10, 11)")]
    checks = [value_check(c.code) for c in cases]
    canary = function_canary(cases, checks)
    assert canary.startswith("x = add(5, 5)\nassert x in (")
    fresh = ast.literal_eval(canary.splitlines()[1].split(" in ", 1)[1])
    assert len(fresh) == 2 and not {10, 11} & set(fresh)
    only_values = function_canary(cases[:1], checks[:1])
    assert only_values.startswith("assert add(1, 2) == ") and only_values.strip() != "assert add(1, 2) == 3"
    assert function_canary([TestCase(code="assert True")], [None]) is None
    stdio = stdio_canary([TestCase(input="1 2\n", output="3\n")])
    assert stdio.input == "1 2\n" and stdio.output != "3\n"


def test_pytest_canary_sits_beside_the_projects_tests(tmp_path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_calc.py").write_text(
        "from calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n"
    )
    canary = pytest_canary(str(tmp_path))
    assert canary.path.startswith("tests/test_calc_") and canary.path.endswith(".py")
    assert canary.source.startswith("def test_add_") and "\n    from calc import add\n" in canary.source
    (tmp_path / "tests" / "test_zoo.py").write_text("def test_z():\n    pass\n")
    assert pytest_canary(str(tmp_path)).path.startswith("tests/test_zoo_")  # after the last test file
    assert canary.owns(f"{canary.path}::test_x") and not canary.owns("tests/test_calc.py::test_add")
    assert pytest_canary(str(tmp_path / "tests" / "none")) is None
    assert PytestCanary("t/test_a_extra.py", "").owns("t.test_a_extra")  # a collection error's name


def _line(status: str, **extra) -> str:
    import json

    return json.dumps(dict(status=status, exit_code=0, **extra)) + "\n"


def test_a_passed_canary_makes_the_run_tampered() -> None:
    tests = [TestCase(code="assert add(1, 2) == 3"), TestCase(code="assert add(2, 2) == 4 and True")]
    job = prepare("def add(a, b):\n    return a + b\n", tests, "function", Limits(), None)
    assert len(job.slots) == 3 and sorted(job.slots) == [-1, 0, 1]

    def run(canary_status: str, value: str = encode(3)):
        lines = [
            _line(canary_status) if s < 0 else _line("value", value=value) if s == 0 else _line("passed")
            for s in job.slots
        ]
        return assemble(job, ("".join(lines) + '{"done": true}\n').encode(), b"").result

    honest = run("failed")
    assert not honest.tampered and [t.status for t in honest.tests] == ["passed", "passed"]
    assert [t.code for t in honest.tests] == [t.code for t in tests]  # the canary is not shown
    forged = run("passed")
    assert forged.tampered and forged.pass_rate == 0.0 and {t.status for t in forged.tests} == {"tampered"}
    assert RunResult.from_dict(forged.to_dict()).tampered
    assert [t.status for t in run("failed", encode(4)).tests] == ["failed", "passed"]
    # the harness' own "passed" never counts for a value test (a forged record has no value)
    lines = [_line("passed") for _ in job.slots]
    result = assemble(job, ("".join(lines) + '{"done": true}\n').encode(), b"").result
    assert result.tampered  # and the canary caught it


def test_value_checks_and_canaries_can_be_switched_off() -> None:
    tests = [TestCase(code="assert add(1, 2) == 3")]
    job = prepare(
        "def add(a, b):\n    return a + b\n", tests, "function", Limits(), None, canaries=False, outside=False
    )
    assert job.slots == [0] and job.checks == [None] and b"== 3" in job.payload
    outside = prepare("def add(a, b):\n    return a + b\n", tests, "function", Limits(), None, canaries=False)
    assert b"== 3" not in outside.payload and b"(add(1, 2))" in outside.payload


@pytest.mark.parametrize(
    "program, flag",
    [
        ("import sys\nf = sys._getframe(1)\n", "frames"),
        (
            "def f():\n    raise Exception\ntry:\n    f()\nexcept Exception as e:\n    e.__traceback__.tb_frame\n",
            "frames",
        ),
        ("import gc\ngc.get_objects()\n", "gc"),
        ("from inspect import currentframe\n", "inspect"),
        ("open('/opt/cobalt/sandbox/harness/child.py').read()\n", "harness"),
        ("import _pytest.reports\n", "pytest_internals"),
        ("def pytest_runtest_makereport(item, call):\n    pass\n", "pytest_internals"),
        ("import builtins\nbuiltins.print = None\n", "builtins_patch"),
        ("__builtins__['len'] = None\n", "builtins_patch"),
        ("import os\nos.write(3, b'x')\n", "fd3"),
        ("import os\nos.listdir('/proc/self/fd')\n", "fd3"),
    ],
)
def test_flags_name_what_the_program_reaches_for(program: str, flag: str) -> None:
    assert flag in scan(program)


def test_ordinary_programs_raise_no_flags() -> None:
    for program in (
        "import sys\nprint(sum(map(int, sys.stdin.read().split())))\n",
        "import math, itertools\ndef f(x):\n    return math.comb(x, 2)\n",
        "import os\nos.write(1, b'hi')\n",
        "x = {}\nx['a'] = 1\n",
        "def (:\n",
    ):
        assert scan(program) == []
