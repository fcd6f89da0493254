"""Hostile programs against the real engine (issue 14): programs written to forge a pass
the way an RL policy that has read the harness source would (tests/sandbox/hostile.py).
Every one gets pass rate 0; those a hidden canary caught are `tampered`, every test marked.
Honest programs keep their results and never see a canary."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox import Job, Project, TestCase
from tests.sandbox import hostile
from tests.sandbox.cases import calc_project

pytestmark = pytest.mark.docker

HUMANEVAL_LIKE = [
    TestCase(code="assert add(1, 2) == 3"),
    TestCase(code="assert add(2, 2) == 4"),
    TestCase(code="assert add(-1, 1) == 0"),
]
MIXED = HUMANEVAL_LIKE + [TestCase(code="x = add(5, 5)\nassert x in (10, 11)")]
HONEST_ADD = "def add(a, b):\n    return a + b\n"


def forged(result) -> None:
    assert result.sandbox_error is None, result.sandbox_error
    assert result.tampered and result.pass_rate == 0.0
    assert result.tests and {t.status for t in result.tests} == {"tampered"}


def test_forging_the_childs_record_is_tampered(sandbox) -> None:
    for program in (hostile.FORGE_RECORD, hostile.READ_CONSTANTS, hostile.PATCH_HARNESS):
        result = sandbox.run(program, HUMANEVAL_LIKE, "function")
        forged(result)
        assert result.flags and len(result.tests) == len(HUMANEVAL_LIKE)


def test_always_equal_objects_and_patched_builtins_get_nothing(sandbox) -> None:
    judged_outside = sandbox.run(hostile.ALWAYS_EQUAL, HUMANEVAL_LIKE, "function")
    assert judged_outside.pass_rate == 0.0 and "builtins_patch" in judged_outside.flags
    assert not any(t.passed for t in judged_outside.tests)
    forged(sandbox.run(hostile.ALWAYS_EQUAL, MIXED, "function"))  # `x in (...)` runs inside: the canary


@pytest.mark.parametrize("program", ["EARLY_EXITS", "JUMP_ASSERTS", "FORGE_RECORD_GC"])
def test_other_tricks_pass_nothing(sandbox, program: str) -> None:
    result = sandbox.run(getattr(hostile, program), MIXED, "function")
    assert result.sandbox_error is None and result.pass_rate == 0.0
    assert not any(t.passed for t in result.tests)


def test_stdio_expected_output_is_out_of_reach(sandbox) -> None:
    tests = [TestCase(input="1 2\n", output="3\n"), TestCase(input="2 5\n", output="7\n")]
    result = sandbox.run(hostile.STDIO_SNOOP, tests, "stdio")
    assert result.sandbox_error is None and result.pass_rate == 0.0 and "fd3" in result.flags
    assert all("7" not in t.stdout for t in result.tests)


def test_honest_programs_never_see_a_canary_or_an_expected_value(sandbox) -> None:
    spy = "import linecache, sys\n" + HONEST_ADD.replace(
        "    return", "    sys.stderr.write(''.join(linecache.cache.get('<test>', (0, 0, [], 0))[2]))\n    return"
    )
    result = sandbox.run(spy, HUMANEVAL_LIKE, "function")
    assert [t.status for t in result.tests] == ["passed"] * 3 and not result.tampered
    assert [t.code for t in result.tests] == [t.code for t in HUMANEVAL_LIKE]
    assert [t.stderr for t in result.tests] == ["(add(1, 2))\n", "(add(2, 2))\n", "(add(-1, 1))\n"]
    stdio = sandbox.run("print(sum(map(int, input().split())))", [TestCase(input="1 2\n", output="3\n")] * 2)
    assert [t.status for t in stdio.tests] == ["passed", "passed"] and not stdio.tampered


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    return calc_project(
        tmp_path_factory.mktemp("hostile") / "proj",
        "from calc import add, sub\n\n"
        "def test_add():\n    assert add(1, 2) == 3\n\n"
        "def test_sub():\n    assert sub(3, 1) == 2\n",
    )


@pytest.mark.parametrize(
    "program", ["PYTEST_REWRITE_REPORT", "PYTEST_PATCH_REPORTS", "PYTEST_REWRITE_TESTS", "PYTEST_EXIT"]
)
def test_pytest_kind_report_forgery(sandbox, project: Path, program: str) -> None:
    if sandbox.transport.name == "exec":
        pytest.skip("the pytest kind's grading does not depend on the transport; once is enough")
    result = sandbox.run(getattr(hostile, program), [], "pytest", project=Project(str(project), "calc.py"))
    if program == "PYTEST_EXIT":
        assert result.pass_rate == 0.0 and not result.tampered
    else:
        forged(result)
        assert {t.name for t in result.tests} == {"tests/test_calc.py::test_add", "tests/test_calc.py::test_sub"}
    honest = sandbox.run(
        "def add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return a - b\n",
        [],
        "pytest",
        project=Project(str(project), "calc.py", "python -m pytest -x -q"),
    )
    assert honest.pass_rate == 1.0 and not honest.tampered and len(honest.tests) == 2  # the canary runs last


def test_stdio_tests_with_one_input_share_a_run(sandbox) -> None:
    """The stdio canary repeats a real input: it costs a comparison, not a run, and the real
    test keeps its own read limit (here an output far above the kept bytes)."""
    coin = sandbox.run(
        "import os\nprint(os.urandom(8).hex())\n",
        [TestCase(input="x\n", output="a\n"), TestCase(input="x\n", output="b\n")],
    )
    assert coin.tests[0].stdout == coin.tests[1].stdout  # one run, two comparisons
    big = "\n".join(str(i) for i in range(40000)) + "\n"  # ~230 KB, kept bytes are 64 KB
    for _ in range(3):  # the canary lands before or after the real test
        result = sandbox.run("print(*range(40000), sep='\\n')\n", [TestCase(input="go\n", output=big)])
        assert [t.status for t in result.tests] == ["passed"] and not result.tampered


def test_humaneval_canonical_solutions_keep_passing(sandbox) -> None:
    """Honest programs keep their results: HumanEval's canonical solutions pass every test with
    the guards on (most asserts judged outside, a canary each), none tampered or flagged.
    (All 164 were checked the same way, on and off; here a slice, to keep the suite fast.)"""
    from assistant.problems.sources import _humaneval_rows, humaneval_problem

    if sandbox.transport.name == "exec":
        pytest.skip("grading does not depend on the transport; once is enough")
    rows = _humaneval_rows()[::8]
    jobs = [
        Job(row["prompt"] + row["canonical_solution"], humaneval_problem(row).all_tests(), kind="function")
        for row in rows
    ]
    results = sandbox.run_many(jobs)
    assert [r.all_passed for r in results] == [True] * len(rows)
    assert not any(r.tampered or r.flags for r in results)
