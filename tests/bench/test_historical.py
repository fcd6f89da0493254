"""examples/historical, the second `cobalt bench debug` set (real bugs that libraries fixed in a
release, put back): checked statically, without Docker. Every case applies once to a module of
80-1500 lines of its packed project, which carries the library's LICENSE; the set spreads over at
least 4 libraries, none of those the injected set or the hidden evaluation set use."""

from __future__ import annotations

import ast
import json
import tarfile
from collections import Counter
from pathlib import Path

from bench.debug_cases import read_cases

HISTORICAL = Path(__file__).resolve().parents[2] / "examples" / "historical"
CASES = read_cases(HISTORICAL / "cases.jsonl")
FIELDS = {"id", "project", "target_file", "test_command", "function", "search", "replace", "bug"}
NOT_THESE = {"inflection", "toolz", "more-itertools", "boltons", "webcolors", "isodate", "tinydb", "xmltodict"}


def _library(project: str) -> str:
    return project.rsplit("-", 1)[0]


def test_the_set_has_20_cases_over_4_libraries_in_the_injected_sets_format() -> None:
    lines = (HISTORICAL / "cases.jsonl").read_text(encoding="utf-8").splitlines()
    assert all(set(json.loads(line)) == FIELDS for line in lines if line.strip())
    assert len(CASES) >= 20 and len({c.id for c in CASES}) == len(CASES)
    per_library = Counter(_library(c.project) for c in CASES)
    assert len(per_library) >= 4 and max(per_library.values()) <= 8, per_library
    assert not set(per_library) & NOT_THESE
    assert all(c.id.startswith(_library(c.project) + "-") for c in CASES)
    assert all("->" in c.bug and c.test_command.startswith("python -m pytest") for c in CASES)


def test_every_case_applies_once_to_a_module_of_80_to_1500_lines() -> None:
    for case in CASES:
        original = case.original()
        assert 80 <= len(original.splitlines()) <= 1500, case.id
        assert original.count(case.search) == 1, case.id
        buggy = case.buggy()
        assert buggy != original and ast.parse(buggy), case.id


def test_every_archive_holds_its_license_and_pyproject() -> None:
    for project in {c.project for c in CASES}:
        archive = HISTORICAL / "projects" / f"{project}.tar.gz"
        assert archive.is_file(), project
        with tarfile.open(archive) as tar:
            names = set(tar.getnames())
        assert {f"{project}/LICENSE", f"{project}/pyproject.toml"} <= names, project
        assert all(name.startswith(project + "/") for name in names), project
