"""Problem files for the TUI: finding the example problems, turning the new-problem form
into a validated Problem, and saving it as a YAML file that `cobalt solve` reads back.

Test syntax in the form (shown next to the fields):
- function problems: one assert snippet per line, e.g. `assert add(1, 2) == 3`;
- stdio problems: tests separated by a line `===`; in each, the input, a line `---`, then
  the expected output.
Validation is the loader's own (`Problem.from_dict`), so the form accepts exactly what a
problem file may hold.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from assistant.problems.resolve import PROBLEM_SUFFIXES, read_problem_file
from assistant.problems.schema import Problem, ProblemError

REPO_ROOT = Path(__file__).resolve().parents[2]
TEST_SEPARATOR = "==="
OUTPUT_SEPARATOR = "---"


@dataclass
class Example:
    path: Path
    id: str
    title: str
    kind: str


def example_dirs(cwd: Path | None = None) -> list[Path]:
    """`examples/problems` under the working directory and in the source checkout."""
    dirs = [(cwd or Path.cwd()) / "examples" / "problems", REPO_ROOT / "examples" / "problems"]
    unique: list[Path] = []
    for d in dirs:
        if d.is_dir() and d.resolve() not in [u.resolve() for u in unique]:
            unique.append(d)
    return unique


def examples(cwd: Path | None = None) -> list[Example]:
    """Every readable example problem (unreadable files are skipped, not fatal)."""
    found: list[Example] = []
    for directory in example_dirs(cwd):
        for path in sorted(p for p in directory.iterdir() if p.suffix in PROBLEM_SUFFIXES and p.is_file()):
            try:
                problems = read_problem_file(path)
            except ProblemError:
                continue
            if len(problems) == 1:
                p = problems[0]
                found.append(Example(path, p.id, p.title, p.kind))
    return found


def parse_tests(text: str, kind: str) -> list[dict[str, str]]:
    """The tests typed in the form, as problem-file test mappings."""
    if kind == "function":
        return [{"code": line.strip()} for line in text.splitlines() if line.strip()]
    tests = []
    for block in _split(text, TEST_SEPARATOR):
        if not block.strip():
            continue
        parts = _split(block, OUTPUT_SEPARATOR)
        if len(parts) != 2:
            raise ProblemError(
                f"each stdio test needs its input, a line '{OUTPUT_SEPARATOR}', then its "
                f"expected output (tests are separated by a line '{TEST_SEPARATOR}')"
            )
        given, expected = (_clean(part) for part in parts)
        tests.append({"input": given, "output": expected})
    return tests


def _split(text: str, separator: str) -> list[str]:
    blocks: list[str] = []
    current: list[str] = []
    for line in text.splitlines():
        if line.strip() == separator:
            blocks.append("\n".join(current))
            current = []
        else:
            current.append(line)
    blocks.append("\n".join(current))
    return blocks


def _clean(block: str) -> str:
    lines = block.strip("\n").splitlines()
    return "\n".join(lines) + "\n" if lines else ""


def format_tests(problem: Problem, hidden: bool = False) -> str:
    """The inverse of `parse_tests`, to prefill the form from a problem."""
    tests = problem.hidden_tests if hidden else problem.public_tests
    if problem.kind == "function":
        return "\n".join(t.code or "" for t in tests)
    return f"\n{TEST_SEPARATOR}\n".join(
        f"{(t.input or '').rstrip()}\n{OUTPUT_SEPARATOR}\n{(t.output or '').rstrip()}" for t in tests
    )


def build_problem(fields: dict[str, str]) -> tuple[Problem, dict[str, Any]]:
    """Validate the form (id, title, kind, entry_point, statement, public, hidden); returns
    the Problem and the mapping to save. Raises ProblemError with one sentence."""
    kind = (fields.get("kind") or "stdio").strip()
    data: dict[str, Any] = {
        "id": (fields.get("id") or "").strip(),
        "title": (fields.get("title") or "").strip(),
        "kind": kind,
        "statement": (fields.get("statement") or "").strip() + "\n",
    }
    if not data["title"]:
        del data["title"]
    if kind == "function":
        data["entry_point"] = (fields.get("entry_point") or "").strip()
    data["source"] = "tui"
    public = parse_tests(fields.get("public") or "", kind)
    hidden = parse_tests(fields.get("hidden") or "", kind)
    if public:
        data["public_tests"] = public
    if hidden:
        data["hidden_tests"] = hidden
    problem = Problem.from_dict(data, "the new problem")
    return problem, data


class _BlockDumper(yaml.SafeDumper):
    """Writes multi-line strings as `|` blocks, so saved problems read like the examples."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    multiline = "\n" in value.rstrip("\n")
    style = "|" if multiline and all(line == line.rstrip() for line in value.splitlines()) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_BlockDumper.add_representer(str, _str)


def save_problem(data: dict[str, Any], path: Path) -> Path:
    """Write the problem file (refusing to replace another file) and check it loads back."""
    path = path.expanduser()
    if path.suffix not in (".yaml", ".yml"):
        raise ProblemError(f"{path}: save the problem as a .yaml file")
    if path.exists():
        raise ProblemError(f"{path} already exists: choose another file name")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.dump(data, Dumper=_BlockDumper, sort_keys=False, allow_unicode=True), encoding="utf-8")
    read_problem_file(path)
    return path


def save_program(program: str, path: Path) -> tuple[Path, bool]:
    """Write a solution; returns the path and whether an older file was replaced."""
    path = path.expanduser()
    existed = path.exists()
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a directory: give a file name")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(program if program.endswith("\n") else program + "\n", encoding="utf-8")
    return path, existed


def default_solution_path(problem: Problem, cwd: Path | None = None) -> Path:
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in problem.id)
    return (cwd or Path.cwd()) / f"solution_{safe}.py"
