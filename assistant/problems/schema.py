"""Problems: the schema (docs/data.md) and its validation with one-sentence errors.

This module does not read files, run tests or build prompts; it only says what a problem
is. Files and names become problems in `assistant.problems.resolve`; published datasets'
records in `assistant.problems.sources`.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assistant.errors import UserError
from sandbox.api import KINDS, Project, TestCase

ID_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.:/-]*$")
IDENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
FIELDS = (
    "id",
    "title",
    "statement",
    "kind",
    "entry_point",
    "starter_code",
    "public_tests",
    "hidden_tests",
    "tests",
    "source",
    "difficulty",
    "project_dir",
    "target_file",
    "test_command",
)


class ProblemError(UserError):
    """A problem (file, record or name) is unusable; the message is one sentence."""


@dataclass
class Problem:
    """One task. `hidden_tests` grade a program and never reach the model; when a problem
    has a single set of tests, that set is both public and hidden."""

    id: str
    statement: str
    kind: str
    public_tests: list[TestCase]
    hidden_tests: list[TestCase]
    title: str = ""
    entry_point: str | None = None
    starter_code: str = ""
    source: str = ""
    difficulty: str = ""
    project_dir: str | None = None
    target_file: str | None = None
    test_command: str | None = None

    def __post_init__(self) -> None:
        self.title = self.title or self.id

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping that `Problem.from_dict` reads back unchanged."""
        out: dict[str, Any] = {"id": self.id, "title": self.title, "statement": self.statement, "kind": self.kind}
        for key in (
            "entry_point",
            "starter_code",
            "source",
            "difficulty",
            "project_dir",
            "target_file",
            "test_command",
        ):
            value = getattr(self, key)
            if value:
                out[key] = value
        out["public_tests"] = [t.to_dict() for t in self.public_tests]
        out["hidden_tests"] = [t.to_dict() for t in self.hidden_tests]
        return out

    @classmethod
    def from_dict(
        cls, data: Any, where: str = "problem", base_dir: Path | None = None, check_paths: bool = True
    ) -> "Problem":
        """Validate a mapping; `where` names it in error messages; `base_dir` anchors
        a relative `project_dir`; `check_paths=False` accepts a stored pytest problem
        whose project is not on this machine."""
        return _validate(data, where, base_dir, check_paths)

    def content_hash(self) -> str:
        blob = json.dumps(self.to_dict(), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()

    def all_tests(self) -> list[TestCase]:
        """Public and hidden tests together, without duplicates, public first."""
        return dedupe(self.public_tests + self.hidden_tests)

    def project(self) -> Project | None:
        if self.kind != "pytest":
            return None
        return Project(
            project_dir=str(self.project_dir),
            target_file=str(self.target_file),
            test_command=self.test_command or "python -m pytest -q",
        )


def dedupe(tests: list[TestCase]) -> list[TestCase]:
    seen: set[str] = set()
    out = []
    for test in tests:
        key = json.dumps(test.to_dict(), sort_keys=True)
        if key not in seen:
            seen.add(key)
            out.append(test)
    return out


def _fail(where: str, message: str) -> ProblemError:
    return ProblemError(f"{where}: {message}")


def _string(data: dict[str, Any], key: str, where: str, required: bool = False) -> str | None:
    value = data.get(key)
    if value is None:
        if required:
            raise _fail(where, f"the field '{key}' is missing")
        return None
    if key == "difficulty" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise _fail(where, f"the field '{key}' must be a string, not {type(value).__name__}")
    if required and not value.strip():
        raise _fail(where, f"the field '{key}' is empty")
    return value


def _tests(data: dict[str, Any], key: str, kind: str, where: str) -> list[TestCase] | None:
    raw = data.get(key)
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise _fail(where, f"the field '{key}' must be a list of tests, not {type(raw).__name__}")
    tests = []
    for i, item in enumerate(raw):
        try:
            test = TestCase.from_dict(item)
        except ValueError as exc:
            raise _fail(where, f"{key}[{i}]: {exc}") from None
        if kind == "stdio" and (test.input is None or test.output is None):
            raise _fail(where, f"{key}[{i}]: a stdio test needs both 'input' and 'output'")
        if kind == "function" and not (test.code or "").strip():
            raise _fail(where, f"{key}[{i}]: a function test needs 'code' (an assert snippet)")
        tests.append(test)
    return tests


def _validate(data: Any, where: str, base_dir: Path | None, check_paths: bool = True) -> Problem:
    if not isinstance(data, dict):
        raise _fail(where, f"a problem must be a mapping of fields, not {type(data).__name__}")
    unknown = sorted(set(data) - set(FIELDS))
    if unknown:
        raise _fail(where, f"unknown field(s) {', '.join(map(repr, unknown))}; known fields are {', '.join(FIELDS)}")
    pid = _string(data, "id", where, required=True)
    assert pid is not None
    if not ID_RE.match(pid):
        raise _fail(where, f"the id {pid!r} may hold only letters, digits and _ . : / -")
    where = f"{where} ({pid})" if pid not in where else where
    statement = _string(data, "statement", where, required=True)
    kind = _string(data, "kind", where) or "stdio"
    if kind not in KINDS:
        raise _fail(where, f"the kind {kind!r} is not supported; use one of {', '.join(KINDS)}")
    entry = _string(data, "entry_point", where)
    if kind == "function":
        if not entry:
            raise _fail(where, "a function problem needs 'entry_point' (the function's name)")
        if not IDENT_RE.match(entry):
            raise _fail(where, f"the entry_point {entry!r} is not a Python identifier")
    public = _tests(data, "public_tests", kind, where)
    hidden = _tests(data, "hidden_tests", kind, where)
    both = _tests(data, "tests", kind, where)
    if both is not None and (public is not None or hidden is not None):
        raise _fail(where, "give either 'tests' or 'public_tests'/'hidden_tests', not both")
    public, hidden = _test_sets(public, hidden, both, kind, where)
    extra = _pytest_fields(data, kind, where, base_dir, check_paths)
    return Problem(
        id=pid,
        title=_string(data, "title", where) or pid,
        statement=str(statement),
        kind=kind,
        entry_point=entry,
        starter_code=_string(data, "starter_code", where) or "",
        public_tests=public,
        hidden_tests=hidden,
        source=_string(data, "source", where) or "",
        difficulty=_string(data, "difficulty", where) or "",
        **extra,
    )


def _test_sets(
    public: list[TestCase] | None, hidden: list[TestCase] | None, both: list[TestCase] | None, kind: str, where: str
) -> tuple[list[TestCase], list[TestCase]]:
    if both is not None:
        public = hidden = both
    if not public and not hidden:
        if kind == "pytest":  # the project's own test command is the test
            return [], []
        raise _fail(where, "the problem has no tests; add 'public_tests' (and 'hidden_tests')")
    if not public:
        public = hidden
    if not hidden:
        hidden = public
    return list(public or []), list(hidden or [])


def _pytest_fields(
    data: dict[str, Any], kind: str, where: str, base_dir: Path | None, check_paths: bool
) -> dict[str, Any]:
    keys = ("project_dir", "target_file", "test_command")
    if kind != "pytest":
        present = [k for k in keys if data.get(k) is not None]
        if present:
            raise _fail(where, f"the field '{present[0]}' is only for pytest problems")
        return {}
    project = _string(data, "project_dir", where, required=True)
    target = _string(data, "target_file", where, required=True)
    command = _string(data, "test_command", where) or "python -m pytest -q"
    root = Path(str(project)).expanduser()
    if not check_paths:
        return {"project_dir": str(project), "target_file": target, "test_command": command}
    if not root.is_absolute() and base_dir is not None:
        root = base_dir / root
    if not root.is_dir():
        raise _fail(where, f"the project_dir {project!r} is not a directory")
    if Path(str(target)).is_absolute() or ".." in Path(str(target)).parts:
        raise _fail(where, f"the target_file {target!r} must be a path inside the project")
    if not (root / str(target)).is_file():
        raise _fail(where, f"the target_file {target!r} does not exist in {root}")
    return {"project_dir": str(root.resolve()), "target_file": target, "test_command": command}
