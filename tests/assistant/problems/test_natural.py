"""The natural set (examples/natural/): its size and mix, its schema, deterministic splits,
names that resolve, prompts that never show a reference, and every reference passing all its
tests in the real sandbox (a broken one is named)."""

from __future__ import annotations

import dataclasses
import hashlib
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from assistant.loop import prompts
from assistant.problems.natural import (
    COHORTS_FILE,
    NATURAL_DIR,
    SOURCE_DIR,
    grade_references,
    natural_problems,
    read_cohorts,
    read_sources,
    schema_problems,
)
from assistant.problems.resolve import load_problem, load_problems
from assistant.problems.schema import ProblemError
from assistant.problems.splits import membership, natural_splits, select, split_ids
from assistant.settings import SplitSection

SIZES = {"train": 121, "val": 30, "test": 150}  # cohorts (docs/data.md): 49/12/60 + 16/4/20 + 10/2/12 + 46/12/58
# sha256 of the sorted ids of each split of the first cohort (121 problems), as every adapter and
# report up to 2026-11-26 used them: adding problems must never move one of these.
FIRST_COHORT = {"test": "754f0a68d3911b80", "val": "c15d4e30b077d555", "train": "8ee51828ed810867"}


def test_size_mix_and_schema() -> None:
    problems = natural_problems()
    assert len(problems) >= 120
    kinds = Counter(p.kind for p in problems)
    levels = Counter(p.difficulty for p in problems)
    assert set(kinds) == {"function", "stdio"} and 0.55 <= kinds["function"] / len(problems) <= 0.75
    assert set(levels) == {"easy", "medium", "hard"} and min(levels.values()) >= 30
    assert all(p.source == "natural" and p.id.startswith("natural/") for p in problems)
    assert schema_problems(read_sources(), problems) == {}


def test_splits_are_deterministic_sized_and_kept_in_subsets() -> None:
    rule = SplitSection()
    problems = natural_problems()
    chosen = {name: select(problems, name, rule) for name in SIZES}
    assert {name: len(ps) for name, ps in chosen.items()} == SIZES
    assert {p.id for p in select(list(reversed(problems)), "test", rule)} == {p.id for p in chosen["test"]}
    assert [p.id for p in load_problems("natural:val")] == [p.id for p in chosen["val"]]
    subset = chosen["test"][:3] + chosen["train"][:2]  # a subset keeps each task's split in the whole set
    assert membership(subset, rule) == {p.id: ("test" if i < 3 else "train") for i, p in enumerate(subset)}
    assert len(load_problems("natural")) == len(problems)
    assert load_problem("natural/initials").entry_point == "initials"
    with pytest.raises(ProblemError, match="natural:SPLIT"):
        load_problems("natural:everything")


def test_each_cohort_is_split_on_its_own_and_the_first_never_moves() -> None:
    rule = SplitSection()
    cohorts = read_cohorts()
    assert list(cohorts) == ["first", "easier", "easiest", "twist"] and len(cohorts["first"]) == 121
    whole = natural_splits(rule)
    assert set(whole) == {p.id for p in natural_problems()}
    for name, ids in cohorts.items():
        alone = split_ids(ids, rule)
        assert {i: whole[i] for i in ids} == {i: s for s in ("test", "val", "train") for i in alone[s]}, name
    first = split_ids(cohorts["first"], rule)
    pinned = {s: hashlib.sha256("\n".join(sorted(first[s])).encode()).hexdigest()[:16] for s in FIRST_COHORT}
    assert pinned == FIRST_COHORT


def test_a_source_file_in_no_cohort_or_in_two_is_refused(tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(SOURCE_DIR, src)
    cohorts = tmp_path / "cohorts.yaml"
    cohorts.write_text(COHORTS_FILE.read_text(encoding="utf-8"), encoding="utf-8")
    assert read_cohorts(src, cohorts) == read_cohorts()
    (src / "batch99.yaml").write_text((src / "batch1.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(ProblemError, match="batch99.yaml are in no cohort"):
        read_cohorts(src, cohorts)
    cohorts.write_text("- name: a\n  files: [batch1.yaml]\n- name: b\n  files: [batch1.yaml]\n", encoding="utf-8")
    with pytest.raises(ProblemError, match="batch1.yaml is in cohorts 'a' and 'b'"):
        read_cohorts(src, cohorts)


def test_no_prompt_shows_a_reference() -> None:
    by_id = {p.id: p for p in natural_problems()}
    style = prompts.style()
    for src in read_sources():
        text = "\n".join(str(m["content"]) for m in style.build(by_id[src.id], []))
        body = [line for line in src.reference.splitlines() if line.strip() and not line.startswith("def ")]
        assert src.reference not in text and max(body, key=len) not in text, src.id


def test_every_reference_passes_in_the_sandbox_and_a_broken_one_is_named(sandbox: Any) -> None:
    sources = read_sources()
    assert grade_references(sandbox, sources) == {}
    first = sources[0]
    broken = dataclasses.replace(first, reference=f"def {first.entry_point}(*args):\n    return None\n")
    broken_stdio = next(s for s in sources if s.kind == "stdio")
    broken_stdio = dataclasses.replace(broken_stdio, reference="print('nothing')\n")
    failures = grade_references(sandbox, [broken, broken_stdio])
    assert set(failures) == {broken.id, broken_stdio.id}


HELDOUT_DIR = NATURAL_DIR.parent / "heldout"


def test_the_heldout_set_is_its_own_valid_set_and_its_references_pass(sandbox: Any) -> None:
    """examples/heldout/ (docs/data.md "The held-out set"): the natural layout under the set name
    `heldout`, no slug or title shared with the natural set, every reference passing in the
    sandbox."""
    sources = read_sources(HELDOUT_DIR / "src", "heldout")
    problems = load_problems(str(HELDOUT_DIR / "problems.jsonl"))
    assert len(problems) == len(sources) >= 40
    assert schema_problems(sources, problems, "heldout") == {}
    assert all(p.source == "heldout" and p.id.startswith("heldout/") for p in problems)
    natural = natural_problems()
    assert not {p.id.split("/")[1] for p in problems} & {p.id.split("/")[1] for p in natural}
    assert not {p.title.lower() for p in problems} & {p.title.lower() for p in natural}
    assert grade_references(sandbox, sources, problems) == {}
