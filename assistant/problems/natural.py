"""Cobalt's own natural task set (docs/data.md "The natural set"): original everyday problems.

`examples/natural/problems.jsonl` holds the problems (`Problem` records, `source: natural`, ids
`natural/<slug>`); `natural` names the whole set and `natural:SPLIT` one split of it
(`assistant.problems.resolve`). The sources, `examples/natural/src/*.yaml`, add each problem's
reference solution and test arguments; `scripts/check_natural.py` builds the JSONL from them
and grades every reference in the sandbox. A reference never enters a `Problem`, so no prompt
can show it.
"""

from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from assistant.interfaces import BatchRunner
from assistant.problems.schema import Problem, ProblemError
from assistant.problems.sources import parse_jsonl
from sandbox import pyast
from sandbox.api import Job

NATURAL_DIR = Path(__file__).resolve().parents[2] / "examples" / "natural"
NATURAL_FILE = NATURAL_DIR / "problems.jsonl"
SOURCE_DIR = NATURAL_DIR / "src"
COHORTS_FILE = NATURAL_DIR / "cohorts.yaml"
SOURCE = "natural"
PREFIX = "natural/"
DIFFICULTIES = ("easy", "medium", "hard")
PUBLIC_RANGE = (2, 3)
HIDDEN_RANGE = (6, 12)
SOURCE_FIELDS = ("id", "title", "kind", "difficulty", "signature", "statement", "reference", "public", "hidden")


@dataclass
class Source:
    """One problem as written in `examples/natural/src/`: `public` and `hidden` (the hidden
    tests beyond the public ones) are call arguments (function) or stdin texts (stdio)."""

    id: str
    title: str
    kind: str
    difficulty: str
    statement: str
    reference: str
    public: list[str]
    hidden: list[str]
    signature: str = ""
    where: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def entry_point(self) -> str:
        """The function's name, from `def NAME(` of the signature."""
        return self.signature.removeprefix("def ").split("(", 1)[0].strip()


def read_sources(directory: Path = SOURCE_DIR, set_name: str = SOURCE) -> list[Source]:
    """Every problem of the source files, in file order, with ids `<set_name>/<slug>` (another
    set in this format, such as examples/heldout/, names itself)."""
    out = []
    for path in sorted(directory.glob("*.yaml")):
        items = yaml.safe_load(path.read_text(encoding="utf-8")) or []
        for i, item in enumerate(items):
            where = f"{path.name}[{i}]"
            if not isinstance(item, dict) or "id" not in item:
                raise ProblemError(f"{where}: a source problem must be a mapping with an id")
            unknown = sorted(set(item) - set(SOURCE_FIELDS))
            if unknown:
                raise ProblemError(f"{where}: unknown field(s) {', '.join(unknown)}")
            out.append(
                Source(
                    id=f"{set_name}/{item['id']}",
                    title=str(item.get("title") or item["id"]),
                    kind=str(item.get("kind") or "function"),
                    difficulty=str(item.get("difficulty") or ""),
                    statement=str(item.get("statement") or ""),
                    reference=str(item.get("reference") or ""),
                    public=[str(a) for a in item.get("public") or []],
                    hidden=[str(a) for a in item.get("hidden") or []],
                    signature=str(item.get("signature") or ""),
                    where=where,
                )
            )
    return out


@cache
def _natural_all() -> tuple[Problem, ...]:
    if not NATURAL_FILE.is_file():
        raise ProblemError(f"{NATURAL_FILE}: the natural set is missing (scripts/check_natural.py --build)")
    return tuple(parse_jsonl(NATURAL_FILE.read_text(encoding="utf-8"), str(NATURAL_FILE)))


def natural_problems() -> list[Problem]:
    """The whole natural set, in file order."""
    return list(_natural_all())


def natural_one(problem_id: str) -> Problem:
    """One problem by its id (`natural/<slug>`)."""
    for problem in _natural_all():
        if problem.id == problem_id:
            return problem
    raise ProblemError(f"{problem_id}: no such problem in the natural set")


def natural_ids() -> list[str]:
    """The ids of the natural set (empty when its file is missing)."""
    return [p.id for p in _natural_all()] if NATURAL_FILE.is_file() else []


def read_cohorts(directory: Path = SOURCE_DIR, cohorts_file: Path = COHORTS_FILE) -> dict[str, list[str]]:
    """{cohort name: the ids of its problems, in file order} from `cohorts.yaml`; raises
    ProblemError when a source file is in no cohort or in two, or a cohort names a missing file."""
    entries = yaml.safe_load(cohorts_file.read_text(encoding="utf-8")) or []
    files = {path.name for path in directory.glob("*.yaml")}
    owner: dict[str, str] = {}
    for entry in entries:
        for name in entry["files"]:
            if name in owner:
                raise ProblemError(f"{cohorts_file.name}: {name} is in cohorts {owner[name]!r} and {entry['name']!r}")
            if name not in files:
                raise ProblemError(f"{cohorts_file.name}: cohort {entry['name']!r} names {name}, not in {directory}")
            owner[name] = entry["name"]
    loose = sorted(files - set(owner))
    if loose:
        raise ProblemError(f"{cohorts_file.name}: source file(s) {', '.join(loose)} are in no cohort")
    out: dict[str, list[str]] = {entry["name"]: [] for entry in entries}
    for src in read_sources(directory):
        out[owner[src.where.split("[", 1)[0]]].append(src.id)
    return out


@cache
def natural_cohorts() -> tuple[tuple[str, ...], ...]:
    """The shipped set's cohorts (`read_cohorts`) as id tuples, restricted to problems.jsonl's ids."""
    known = set(natural_ids())
    return tuple(tuple(i for i in ids if i in known) for ids in read_cohorts().values())


def _defines(reference: str, name: str) -> bool:
    try:
        tree = pyast.parse(reference)
    except SyntaxError:
        return False
    return any(isinstance(n, ast.FunctionDef) and n.name == name for n in tree.body)


def schema_problems(
    sources: list[Source], problems: list[Problem] | None = None, set_name: str = SOURCE
) -> dict[str, list[str]]:
    """{problem id: what is wrong} over the sources and the built problems (default: the set's
    file); every problem's `source` must be `set_name`."""
    bad: dict[str, list[str]] = {}
    built = {p.id: p for p in (problems if problems is not None else natural_problems())}
    ids = Counter(s.id for s in sources)
    for src in sources:
        why = bad.setdefault(src.id, [])
        if ids[src.id] > 1:
            why.append("the id appears more than once")
        if src.kind not in ("function", "stdio"):
            why.append(f"kind {src.kind!r} is neither function nor stdio")
        if src.difficulty not in DIFFICULTIES:
            why.append(f"difficulty {src.difficulty!r} is not one of {', '.join(DIFFICULTIES)}")
        if src.kind == "function" and not (src.entry_point and _defines(src.reference, src.entry_point)):
            why.append(f"the reference does not define the entry point {src.entry_point!r} at the top level")
        if not src.statement.strip() or not src.reference.strip():
            why.append("the statement or the reference is empty")
        problem = built.get(src.id)
        if problem is None:
            why.append("not in problems.jsonl")
            continue
        keys = [repr(t.to_dict()) for t in problem.hidden_tests]
        if len(set(keys)) != len(keys):
            why.append("two hidden tests are the same")
        if not all(repr(t.to_dict()) in keys for t in problem.public_tests):
            why.append("a public test is not among the hidden tests")
        if not PUBLIC_RANGE[0] <= len(problem.public_tests) <= PUBLIC_RANGE[1]:
            why.append(f"{len(problem.public_tests)} public tests, not {PUBLIC_RANGE[0]}-{PUBLIC_RANGE[1]}")
        if not HIDDEN_RANGE[0] <= len(problem.hidden_tests) <= HIDDEN_RANGE[1]:
            why.append(f"{len(problem.hidden_tests)} hidden tests, not {HIDDEN_RANGE[0]}-{HIDDEN_RANGE[1]}")
        if problem.source != set_name or problem.difficulty != src.difficulty or problem.kind != src.kind:
            why.append("problems.jsonl disagrees with the source on source, kind or difficulty")
        if src.reference.strip() and src.reference.strip() in (problem.statement + problem.starter_code):
            why.append("the statement or starter code shows the reference")
    for pid in sorted(set(built) - set(ids)):
        bad.setdefault(pid, []).append("in problems.jsonl but in no source file")
    return {pid: why for pid, why in bad.items() if why}


def grade_references(
    runner: BatchRunner, sources: list[Source], problems: list[Problem] | None = None
) -> dict[str, str]:
    """{problem id: why its reference fails} after running every reference against all the
    tests of its problem (public and hidden) in one batch."""
    built = {p.id: p for p in (problems if problems is not None else natural_problems())}
    pairs = [(s, built[s.id]) for s in sources if s.id in built]
    results = runner.run_many([Job(program=s.reference, tests=p.all_tests(), kind=p.kind) for s, p in pairs])
    failures = {}
    for (src, problem), result in zip(pairs, results):
        if result.all_passed and len(result.tests) == len(problem.all_tests()):
            continue
        first = result.first_failure()
        detail = result.sandbox_error or result.compile_error
        if first is not None:
            detail = f"{first.status}: {first.code or repr(first.input)} -> {first.detail or first.actual!r}"
        failures[src.id] = detail or "not every test passed"
    return failures
