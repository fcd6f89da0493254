"""`cobalt debug` as a library: fix one file of a local project until its test command
passes. The file becomes a pytest-kind Problem (the project is copied into the sandbox,
the model's program replaces the file, the command runs there); the user's tree is never
touched here (assistant/debug/applied.py writes a fix, with a backup, and undoes it).

This module does not pick models or print; the CLI (assistant/cli/debug_cmd.py) does.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

from assistant.debug import failures as fails
from assistant.loop.candidates import passed_count
from assistant.problems.schema import Problem, ProblemError
from assistant.store.trajectory import Turn
from sandbox.api import RunResult
from sandbox.pyast import source_lines

ROOT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "pytest.ini", "tox.ini", ".git")
BACKUP_SUFFIX = ".orig"


def project_root(file: Path) -> Path:
    """The nearest ancestor holding a project marker; the file's directory otherwise."""
    for parent in file.resolve().parents:
        if any((parent / marker).exists() for marker in ROOT_MARKERS):
            return parent
    return file.resolve().parent


def debug_problem(
    file: Path, test_command: str, root: Path | None = None, current_failure: str | None = None
) -> Problem:
    """A pytest-kind problem whose target is `file` inside its project."""
    if not file.is_file():
        raise ProblemError(f"{file}: no such file")
    if file.suffix != ".py":
        raise ProblemError(f"{file}: cobalt debug fixes Python files (.py)")
    if not test_command.strip():
        raise ProblemError('the test command is empty; pass it with --test "python -m pytest -q"')
    root = (root or project_root(file)).resolve()
    try:
        target = file.resolve().relative_to(root)
    except ValueError:
        raise ProblemError(f"{file} is not inside the project {root}") from None
    try:
        content = read_text(file.read_bytes())
    except UnicodeDecodeError:
        raise ProblemError(f"{file} is not UTF-8 text; cobalt debug fixes Python source files") from None
    except OSError as exc:
        raise ProblemError(f"{file}: cannot be read ({exc.strerror or exc})") from None
    if "\x00" in content:
        raise ProblemError(f"{file} is a binary file; cobalt debug fixes Python source files")
    return pytest_problem(root, str(target), test_command, content, current_failure)


def pytest_problem(
    root: Path, target: str, test_command: str, content: str, current_failure: str | None = None
) -> Problem:
    """The pytest-kind problem of `target` (a path inside `root`) holding `content`."""
    statement = (
        f"The tests of the project `{root.name}` fail. Fix the file `{target}` so that "
        f"the command `{test_command}` passes. Change only what is needed."
    )
    if current_failure:
        statement += f"\n\nThe test command currently fails like this:\n{current_failure}"
    slug = re.sub(r"[^A-Za-z0-9_.:/-]", "_", f"debug:{root.name}/{target}")
    return Problem(
        id=slug,
        title=target,
        statement=statement,
        kind="pytest",
        starter_code=content,
        public_tests=[],
        hidden_tests=[],
        source="debug",
        project_dir=str(root),
        target_file=target,
        test_command=test_command,
    )


def probe_problem(root: Path, test_command: str, probe_file: str) -> Problem:
    """A pytest-kind problem that runs the project's tests unchanged (its target is a new, empty
    file in the sandbox's copy), to find which file the failures point at."""
    if not test_command.strip():
        raise ProblemError('the test command is empty; pass it with --test "python -m pytest -q"')
    return pytest_problem(root.resolve(), probe_file, test_command, "")


def best_turn(turns: list[Turn], first_run: RunResult | None = None, test_command: str | None = None) -> Turn | None:
    """The one rule for the best turn of a debug session (the file it shows and edits next, the fix
    `cobalt debug` reports and the TUI writes): the earliest turn whose program passes the most
    tests, and more than the user's file did (`first_run`); a run in which the test command itself
    failed (`failures.run_error` of `test_command`) does not count. None: the user's file."""
    best, most = None, passed_count(first_run) if first_run is not None else -1
    for turn in turns:
        run = turn.public
        if turn.program is None or run is None:
            continue
        if test_command is not None and fails.run_error(run, test_command) is not None:
            continue
        if passed_count(run) > most:
            best, most = turn, passed_count(run)
    return best


def unified_diff(original: str, fixed: str, name: str) -> str:
    """The diff of the file `name` (a/ and b/ labels, as git writes them); "" when unchanged."""
    return text_diff(original, fixed, f"a/{name}", f"b/{name}")


def text_diff(before: str, after: str, before_label: str, after_label: str) -> str:
    """A unified diff of two texts, split into lines where Python splits a source file (a form
    feed inside a line is not a line break); "" when they are the same."""
    lines = difflib.unified_diff(
        source_lines(before, keepends=True), source_lines(after, keepends=True), before_label, after_label
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def read_text(raw: bytes) -> str:
    """A source file's text as Python reads it: UTF-8 without its byte-order mark, newlines as `\\n`."""
    return raw.decode("utf-8-sig").replace("\r\n", "\n").replace("\r", "\n")


def backup_path(file: Path) -> Path:
    candidate = file.with_name(file.name + BACKUP_SUFFIX)
    n = 1
    while candidate.exists():
        candidate = file.with_name(f"{file.name}{BACKUP_SUFFIX}.{n}")
        n += 1
    return candidate
