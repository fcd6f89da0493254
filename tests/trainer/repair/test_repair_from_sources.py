"""`cobalt dataset mutants`: a problem set with references (the natural set's layout) becomes a
`repair:FILE.jsonl` benchmark whose every buggy program fails a public test in the real sandbox
while its reference passes every test; a directory that is not such a set, or a problem without
its reference, is one clear sentence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from assistant.problems.natural import NATURAL_FILE, SOURCE_DIR
from assistant.problems.schema import ProblemError
from assistant.problems.splits import membership
from assistant.settings import EvalSection
from sandbox.api import Job
from tests.assistant.cli.test_cli_foundation import assert_one_sentence, run_cli
from trainer.eval.eval_sets import load_benchmark
from trainer.repair.from_sources import reference_pairs
from trainer.repair.items import build_items, load_items, write_items
from trainer.repair.repair_eval import NATURAL, load_repair_items
from trainer.repair.repair_settings import repair_settings

SLUGS = ("clamp-all", "second-largest", "grade-letters")  # two function problems and a stdio one


def make_set(root: Path, slugs: tuple[str, ...] = SLUGS, drop_reference: str = "") -> Path:
    """A three-problem set in the natural layout, cut from the shipped natural set."""
    sources = [s for f in sorted(SOURCE_DIR.glob("*.yaml")) for s in yaml.safe_load(f.read_text()) or []]
    chosen = [dict(s) for s in sources if s["id"] in slugs]
    for s in chosen:
        if s["id"] == drop_reference:
            s["reference"] = ""
    (root / "src").mkdir(parents=True)
    (root / "src" / "batch.yaml").write_text(yaml.safe_dump(chosen, sort_keys=False))
    rows = [line for line in NATURAL_FILE.read_text().splitlines() if json.loads(line)["id"].split("/")[1] in slugs]
    (root / "problems.jsonl").write_text("\n".join(rows) + "\n")
    return root


def test_mutants_of_the_references_fail_a_public_test_in_the_sandbox(tmp_path: Path, sandbox) -> None:
    pairs = reference_pairs(make_set(tmp_path / "set"))
    assert [p.id for p, _ in pairs] == [f"natural/{s}" for s in ("clamp-all", "second-largest", "grade-letters")]
    assert {p.kind for p, _ in pairs} == {"function", "stdio"}
    items, log = build_items(pairs, sandbox, repair_settings().mutate)
    assert log["canonical_failed"] == [] and items
    assert all(len([i for i in items if i.task == p.id]) <= repair_settings().mutate.per_task for p, _ in pairs)
    write_items(items, tmp_path / "bugs.jsonl")
    back = load_items(tmp_path / "bugs.jsonl")
    assert [(i.id, i.buggy_program) for i in back] == [(i.id, i.buggy_program) for i in items]

    references = dict((p.id, ref) for p, ref in pairs)
    runs = sandbox.run_many([Job(i.buggy_program, i.problem.public_tests, i.problem.kind) for i in back])
    assert all(i.buggy_program != references[i.task] for i in back)
    assert all(not r.all_passed for r in runs), "every item must fail a public test"
    clean = sandbox.run_many([Job(references[i.task], i.problem.all_tests(), i.problem.kind) for i in back])
    assert all(r.all_passed for r in clean)


def test_the_heldout_sets_items_are_its_own_problems_mutated() -> None:
    """examples/heldout/repair.jsonl (`cobalt dataset mutants examples/heldout`): every item a
    changed reference of one of the set's problems, carrying that problem as it is."""
    heldout = NATURAL_FILE.parents[1] / "heldout"
    pairs = {p.id: (p, ref) for p, ref in reference_pairs(heldout)}
    items = load_items(heldout / "repair.jsonl")
    assert len(items) >= 100 and {i.task for i in items} <= set(pairs)
    assert all(i.buggy_program != pairs[i.task][1] and i.mutation for i in items)
    assert all(i.problem.to_dict() == pairs[i.task][0].to_dict() for i in items)


def test_a_set_without_references_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ProblemError, match="needs problems.jsonl and src"):
        reference_pairs(tmp_path)
    with pytest.raises(ProblemError, match="no reference for natural/second-largest"):
        reference_pairs(make_set(tmp_path / "set", drop_reference="second-largest"))


def test_the_command_refuses_bad_input_in_one_sentence(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert_one_sentence(
        run_cli("dataset", "mutants", str(tmp_path), "--out", str(tmp_path / "b.jsonl"), home=home), "not a problem set"
    )
    taken = tmp_path / "taken.jsonl"
    taken.write_text("mine\n")
    assert_one_sentence(
        run_cli("dataset", "mutants", str(tmp_path), "--out", str(taken), home=home), "must be a new .jsonl"
    )
    assert taken.read_text() == "mine\n"


def test_the_natural_sets_gate_bugs_are_its_val_problems_mutated() -> None:
    """examples/natural/repair-val.jsonl (`cobalt dataset mutants examples/natural --split val`),
    read as the `natural-repair` benchmark: bugs of the natural val tasks only, each a changed
    reference carrying its problem as it is; no other split has any."""
    es = EvalSection()
    pairs = {p.id: (p, ref) for p, ref in reference_pairs(NATURAL_FILE.parent)}
    val = {p.id for p in load_benchmark("natural", "val", es)}
    items = load_repair_items(NATURAL, "val", None, es)
    assert len(items) == len(load_items(NATURAL_FILE.parent / "repair-val.jsonl")) == 85
    assert {i.task for i in items} == val and len(val) == 30
    assert all(i.buggy_program != pairs[i.task][1] and i.mutation for i in items)
    assert all(i.problem.to_dict() == pairs[i.task][0].to_dict() for i in items)
    for split in ("train", "test"):
        with pytest.raises(ProblemError, match=f"the '{split}' split holds no repair items"):
            load_repair_items(NATURAL, split, None, es)


def test_the_command_keeps_one_split(tmp_path: Path, sandbox) -> None:
    """`--split` keeps the problems of that split (the `eval:` rule, as `cobalt eval` selects
    them); a split without problems is one sentence and writes nothing."""
    root = make_set(tmp_path / "set")
    home = tmp_path / "home"
    ids = [p.id for p, _ in reference_pairs(root)]
    which = membership([p for p, _ in reference_pairs(root)], EvalSection().split)
    for split in ("train", "val", "test"):
        out = tmp_path / f"{split}.jsonl"
        r = run_cli("dataset", "mutants", str(root), "--out", str(out), "--split", split, "--json", home=home)
        mine = [i for i in ids if which[i] == split]
        if not mine:
            assert_one_sentence(r, "holds no problems")
            assert not out.exists()
            continue
        assert r.returncode == 0, r.stderr
        assert {i.task for i in load_items(out)} <= set(mine) and json.loads(r.stdout)["problems"] == len(mine)
