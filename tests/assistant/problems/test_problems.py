"""Problem schema, validation messages, and the HumanEval / TACO / LiveCodeBench /
reference loaders."""

from __future__ import annotations

import base64
import json
import pickle
import zlib
from pathlib import Path
from typing import Any

import pytest
import yaml

from assistant.problems.resolve import load_problem, load_problems
from assistant.problems.schema import Problem, ProblemError
from assistant.problems.sources import from_record, humaneval, humaneval_one, split_check

GOOD: dict[str, Any] = {
    "id": "sum",
    "title": "Sum",
    "kind": "stdio",
    "statement": "Add two numbers.",
    "public_tests": [{"input": "1 2\n", "output": "3\n"}],
    "hidden_tests": [{"input": "1 2\n", "output": "3\n"}, {"input": "5 5\n", "output": "10\n"}],
}


def _write(tmp_path: Path, data: Any, name: str = "p.yaml") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data) if name.endswith(".json") else yaml.safe_dump(data))
    return path


def test_a_valid_file_loads_and_round_trips(tmp_path: Path) -> None:
    problem = load_problem(str(_write(tmp_path, GOOD)))
    assert (problem.id, problem.kind, len(problem.public_tests), len(problem.hidden_tests)) == ("sum", "stdio", 1, 2)
    assert Problem.from_dict(problem.to_dict()).to_dict() == problem.to_dict()
    assert load_problem(str(_write(tmp_path, GOOD, "p.json"))).content_hash() == problem.content_hash()


def test_one_set_of_tests_is_both_public_and_hidden(tmp_path: Path) -> None:
    only_public = {k: v for k, v in GOOD.items() if k != "hidden_tests"}
    p = load_problem(str(_write(tmp_path, only_public)))
    assert p.hidden_tests == p.public_tests and len(p.public_tests) == 1
    only_hidden = {k: v for k, v in GOOD.items() if k != "public_tests"}
    assert load_problem(str(_write(tmp_path, only_hidden))).public_tests == GOOD_hidden()
    shorthand = {**{k: v for k, v in GOOD.items() if not k.endswith("_tests")}, "tests": GOOD["hidden_tests"]}
    p = load_problem(str(_write(tmp_path, shorthand)))
    assert p.public_tests == p.hidden_tests == GOOD_hidden()


def GOOD_hidden() -> list[Any]:
    return Problem.from_dict(GOOD).hidden_tests


BAD_FIELDS = [
    ({"id": None}, "the field 'id' is missing"),
    ({"id": 7}, "the field 'id' must be a string"),
    ({"id": "has space"}, "may hold only letters"),
    ({"title": ["x"]}, "the field 'title' must be a string"),
    ({"statement": None}, "the field 'statement' is missing"),
    ({"statement": "   "}, "the field 'statement' is empty"),
    ({"kind": "java"}, "the kind 'java' is not supported"),
    ({"kind": "function"}, "needs 'entry_point'"),
    ({"kind": "function", "entry_point": "not valid"}, "is not a Python identifier"),
    ({"entry_point": 3}, "the field 'entry_point' must be a string"),
    ({"starter_code": 1}, "the field 'starter_code' must be a string"),
    ({"public_tests": "1 2 -> 3"}, "the field 'public_tests' must be a list"),
    ({"public_tests": [{"input": "1 2"}]}, "public_tests[0]"),
    ({"public_tests": [{"input": 1, "output": "2"}]}, "test case field 'input' must be a string"),
    ({"public_tests": [{"inp": "1", "output": "2"}]}, "unknown test case field(s): inp"),
    ({"hidden_tests": [["1", "2"]]}, "hidden_tests[0]: a test case must be an object"),
    (
        {"kind": "function", "entry_point": "f", "public_tests": [{"input": "1", "output": "1"}]},
        "a function test needs 'code'",
    ),
    ({"tests": [{"input": "1", "output": "1"}]}, "not both"),
    ({"difficulty": ["hard"]}, "the field 'difficulty' must be a string"),
    ({"source": 5}, "the field 'source' must be a string"),
    ({"colour": "red"}, "unknown field(s) 'colour'"),
    ({"project_dir": "."}, "only for pytest problems"),
    ({"kind": "pytest", "project_dir": "nowhere", "target_file": "a.py"}, "is not a directory"),
]


@pytest.mark.parametrize("change, message", BAD_FIELDS, ids=[m for _, m in BAD_FIELDS])
def test_each_wrong_field_gives_one_clear_sentence(tmp_path: Path, change: dict[str, Any], message: str) -> None:
    data = {**GOOD, **change}
    data = {k: v for k, v in data.items() if v is not None}
    path = _write(tmp_path, data)
    with pytest.raises(ProblemError) as err:
        load_problems(str(path))
    text = str(err.value)
    assert message in text and str(path) in text and "\n" not in text


def test_empty_test_lists_and_broken_files(tmp_path: Path) -> None:
    with pytest.raises(ProblemError, match="has no tests"):
        load_problem(str(_write(tmp_path, {**GOOD, "public_tests": [], "hidden_tests": []})))
    (tmp_path / "bad.yaml").write_text("id: [unclosed\n")
    with pytest.raises(ProblemError, match="not valid YAML"):
        load_problem(str(tmp_path / "bad.yaml"))
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(ProblemError, match="not valid JSON"):
        load_problem(str(tmp_path / "bad.json"))
    (tmp_path / "x.txt").write_text("")
    with pytest.raises(ProblemError, match="must end in"):
        load_problem(str(tmp_path / "x.txt"))
    with pytest.raises(ProblemError, match="no such problem file or directory"):
        load_problems(str(tmp_path / "missing.yaml"))
    (tmp_path / "empty.yaml").write_text("[]")
    with pytest.raises(ProblemError, match="holds no problems"):
        load_problem(str(tmp_path / "empty.yaml"))


def test_files_with_several_problems_and_directories(tmp_path: Path) -> None:
    two = tmp_path / "two.yaml"
    two.write_text(yaml.safe_dump([GOOD, {**GOOD, "id": "sum2"}]))
    with pytest.raises(ProblemError, match="holds 2 problems; pick one"):
        load_problem(str(two))
    assert load_problem(f"{two}#sum2").id == "sum2"
    with pytest.raises(ProblemError, match="no problem with id 'nope'"):
        load_problem(f"{two}#nope")
    _write(tmp_path, GOOD, "dup.yaml")
    with pytest.raises(ProblemError, match="appears twice"):
        load_problems(str(tmp_path))


def test_the_examples_are_valid_and_have_public_and_hidden_tests() -> None:
    problems = load_problems(str(Path(__file__).parents[3] / "examples" / "problems"))
    assert len(problems) >= 8
    assert {p.kind for p in problems} == {"stdio", "function"}
    for p in problems:
        assert p.public_tests and len(p.hidden_tests) > len(p.public_tests), p.id


def test_humaneval_split_counts() -> None:
    problems = humaneval()
    assert len(problems) == 164
    first = problems[0]
    assert (first.id, first.entry_point, len(first.hidden_tests), len(first.public_tests)) == (
        "HumanEval/0",
        "has_close_elements",
        7,
        3,
    )
    assert first.hidden_tests[0].code == "assert has_close_elements([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3) == True"
    assert first.public_tests == first.hidden_tests[:3]
    loop = humaneval_one(44)  # six asserts and a for-loop of asserts: seven tests
    assert len(loop.hidden_tests) == 7 and loop.hidden_tests[-1].code.startswith("for x in range(2, 8):")
    setup = humaneval_one(53)  # `import random` is kept in front of the later tests
    assert len(setup.hidden_tests) == 6 and setup.hidden_tests[-1].code.startswith("import random\nfor i")
    single = humaneval_one(32)  # setup + one loop of asserts: one test, public and hidden
    assert len(single.hidden_tests) == 1 and single.public_tests == single.hidden_tests
    assert single.hidden_tests[0].code.startswith("import math\nimport random\nrng = random.Random(42)")
    whole = split_check("def check(candidate):\n    x = candidate(1)\n", "f")  # nothing to split
    assert [t.code for t in whole] == ["def check(candidate):\n    x = candidate(1)\ncheck(f)"]
    for p in problems:
        n = len(p.hidden_tests)
        assert len(p.public_tests) == (min(3, n - 1) if n > 1 else 1), p.id
        assert all("candidate" not in t.code for t in p.hidden_tests if "def check" not in t.code)
    assert load_problems("humaneval:5") == problems[:5]
    assert load_problem("HumanEval/7").id == "HumanEval/7"
    with pytest.raises(ProblemError, match="ids run from 0 to 163"):
        load_problem("HumanEval/999")
    with pytest.raises(ProblemError, match="humaneval:N"):
        load_problems("humaneval:ten")


def test_humaneval_tests_pass_with_the_canonical_solution_and_fail_without() -> None:
    from assistant.problems.sources import _humaneval_rows

    for row, problem in zip(_humaneval_rows()[:40], humaneval(40)):
        for test in problem.hidden_tests:
            namespace: dict[str, Any] = {}
            exec(row["prompt"] + row["canonical_solution"], namespace)
            exec(test.code, namespace)
    tests = split_check("def check(candidate):\n    assert candidate(1) == 2\n    assert True\n", "inc")
    assert [t.code for t in tests] == ["assert inc(1) == 2"]
    with pytest.raises(AssertionError):
        exec("def inc(x):\n    return x\n" + tests[0].code, {})


def test_taco_records_stdio_and_call_based() -> None:
    stdio = from_record(
        {
            "question": "Echo.",
            "input_output": json.dumps({"inputs": ["1\n", ["2", "3"]], "outputs": ["1\n", ["2", "3"]]}),
            "difficulty": "EASY",
        },
        "t",
        4,
    )
    assert (stdio.id, stdio.kind, stdio.public_tests[1].input, stdio.hidden_tests[1].output) == (
        "taco-4",
        "stdio",
        "2\n3",
        "2\n3",
    )
    call = from_record(
        {
            "id": "cw",
            "question": "Square.",
            "starter_code": "def sq(x):",
            "input_output": {"fn_name": "sq", "inputs": [[3], [[1, 2]]], "outputs": [[9], [[1, 4]]]},
        },
        "t",
    )
    assert call.kind == "function" and call.entry_point == "sq"
    assert [t.code for t in call.hidden_tests] == ["assert sq(3) == 9", "assert sq([1, 2]) == [1, 4]"]
    leet = from_record(
        {
            "id": "lc",
            "question": "x",
            "starter_code": "class Solution:\n    def f(self, a):",
            "input_output": {"fn_name": "f", "inputs": [[1]], "outputs": [True]},
        },
        "t",
    )
    assert leet.hidden_tests[0].code == "assert Solution().f(1) == True"
    with pytest.raises(ProblemError, match="2 test inputs but 1 outputs"):
        from_record({"question": "q", "input_output": {"inputs": ["1", "2"], "outputs": ["1"]}}, "t")


def _packed(cases: list[dict[str, str]]) -> str:
    return base64.b64encode(zlib.compress(pickle.dumps(json.dumps(cases)))).decode()


def test_livecodebench_records_with_packed_private_tests() -> None:
    record = {
        "question_id": "abc301_a",
        "question_title": "Winner",
        "question_content": "Print the winner.",
        "platform": "atcoder",
        "difficulty": "easy",
        "starter_code": "",
        "metadata": "{}",
        "public_test_cases": json.dumps([{"input": "5\nTTAAT\n", "output": "T\n", "testtype": "stdin"}]),
        "private_test_cases": _packed([{"input": "1\nA\n", "output": "A\n", "testtype": "stdin"}]),
    }
    p = from_record(record, "lcb")
    assert (p.id, p.kind, len(p.public_tests), p.hidden_tests[0].input, p.source) == (
        "abc301_a",
        "stdio",
        1,
        "1\nA\n",
        "atcoder",
    )
    functional = {
        **record,
        "question_id": "lc1",
        "starter_code": "class Solution:\n    def twoSum(self, nums, target):",
        "metadata": json.dumps({"func_name": "twoSum"}),
        "public_test_cases": json.dumps([{"input": "[2,7]\n9", "output": "[0, 1]", "testtype": "functional"}]),
        "private_test_cases": "[]",
    }
    f = from_record(functional, "lcb")
    assert f.kind == "function" and f.public_tests[0].code == "assert Solution().twoSum([2, 7], 9) == [0, 1]"
    assert f.hidden_tests == f.public_tests
    evil = base64.b64encode(zlib.compress(pickle.dumps(Path("/")))).decode()
    with pytest.raises(ProblemError, match="neither JSON nor"):
        from_record({**record, "private_test_cases": evil}, "lcb")


def test_reference_records_import_as_problems() -> None:
    record = {
        "id": "r1",
        "instruction": "Think... Remember, your program should read from stdin and write to stdout:\nAdd.",
        "public_test_cases": json.dumps({"inputs": ["1 2"], "outputs": ["3"]}),
        "hidden_test_cases": json.dumps({"inputs": ["1 2", "2 2"], "outputs": ["3", "4"]}),
    }
    p = from_record(record, "ref")
    assert (p.statement, len(p.public_tests), len(p.hidden_tests)) == ("Add.", 1, 2)


ONE_TEST = json.dumps({"inputs": ["1"], "outputs": ["1"]})


@pytest.mark.parametrize(
    ("record", "fragment"),
    [
        ({"task_id": "X/1", "entry_point": "f", "test": "int main() { return 0; }"}, "test code is not Python"),
        ({"task_id": "X/1", "entry_point": "f", "test": "def check(candidate):\n    assert candidate(1)\n"}, "prompt"),
        (
            {
                "question_id": "q1",
                "question_content": "Add.",
                "metadata": json.dumps({"func_name": "add"}),
                "public_test_cases": json.dumps([{"testtype": "functional", "input": "1 2", "output": "3"}]),
            },
            "does not parse",  # an input line that is not JSON
        ),
        ({"question": "q", "input_output": {"fn_name": 5, "inputs": [[1]], "outputs": [1]}}, "not a Python identifier"),
        (
            {"id": "my task", "instruction": "Add.", "public_test_cases": ONE_TEST},
            "may hold only letters",
        ),
    ],
)
def test_a_record_that_does_not_fit_its_shape_is_one_sentence(record: dict, fragment: str) -> None:
    with pytest.raises(ProblemError, match="^f.jsonl:3: ") as err:
        from_record(record, "f.jsonl:3")
    assert fragment in str(err.value) and "\n" not in str(err.value)
