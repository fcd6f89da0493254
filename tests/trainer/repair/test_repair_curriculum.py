"""The synthetic curriculum in the real sandbox: two-turn sessions (mutant, canonical) of
train-split tasks stored with source `synthetic`, a rerun adds nothing, and the dataset
builder makes from each exactly the repair prompt (the mutant and its feedback, prev = the
mutant's pass rate), none after the canonical turn; `served` sessions hold programs without
docstrings or comments in served-form replies, and the builder takes the configured rendering;
`--from DIR` mutates another set's train split and never the held-out set."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assistant.loop import prompts
from assistant.problems.natural import NATURAL_DIR
from assistant.problems.schema import ProblemError
from assistant.problems.splits import heldout_ids, natural_splits
from assistant.settings import LoopSettings, SplitSection
from assistant.store.trajectory_db import Store
from tests.assistant.cli.test_cli_foundation import assert_one_sentence, run_cli
from trainer.data.dataset import BuildStats, select
from trainer.data.mix import select_mix
from trainer.data.session_source import sessions_from_store
from trainer.repair.curriculum import AUTHOR, MODEL, SOURCE, render_of, synthesize, train_pairs
from trainer.repair.from_sources import reference_pairs
from trainer.repair.items import MutateParams
from trainer.repair.served_form import doc_key, served_program, served_reply
from trainer.train_settings import MixSettings

HELDOUT_DIR = NATURAL_DIR.parent / "heldout"


def test_synthetic_sessions_and_their_prompts(cobalt_home: Any, sandbox: Any) -> None:
    params = MutateParams(per_task=2, max_candidates=8)
    with Store.open() as store:
        counts = synthesize(store, sandbox, LoopSettings(), params, limit=2)
        assert counts["stored"] == counts["items"] >= 3 and counts["already_stored"] == 0
        again = synthesize(store, sandbox, LoopSettings(), params, limit=2)
        assert (again["already_stored"], again["stored"]) == (counts["items"], 0)
        sessions = [s for s in sessions_from_store(store) if s.source == SOURCE]
    assert len(sessions) == counts["stored"] and {s.model for s in sessions} == {MODEL}
    assert not {s.problem_id for s in sessions} & heldout_ids(SplitSection())
    for s in sessions:
        mutant, fixed = s.turns
        assert not mutant.passed_public and fixed.passed_hidden and mutant.author == fixed.author == AUTHOR
        assert s.meta["item"].startswith(s.problem_id + "#m") and s.problem is not None
    chosen = select(sessions, k=4, max_context=3)
    partial = [p for p in chosen.train if p.turns]
    assert len(partial) == len(sessions) and all(len(p.turns) == 1 for p in partial)
    by_session = {s.id: s for s in sessions}
    for p in partial:
        mutant = by_session[p.session_id].turns[0]
        assert p.turns[0].program == mutant.program and p.prev_best < 1.0
        assert prompts.feedback_of(p.messages()[-1]["content"]) == mutant.feedback


def test_served_sessions_are_written_like_served_replies(cobalt_home: Any, sandbox: Any) -> None:
    params = MutateParams(per_task=1, max_candidates=8)
    with Store.open() as store:
        served = synthesize(store, sandbox, LoopSettings(), params, limit=2, render="served")
        canonical = synthesize(store, sandbox, LoopSettings(), params, limit=2, render="canonical")
        # the same items once per rendering; a rerun adds nothing
        assert canonical["already_stored"] == 0 and canonical["stored"] == served["stored"] >= 2
        assert synthesize(store, sandbox, LoopSettings(), params, limit=2, render="served")["stored"] == 0
        sessions = [s for s in sessions_from_store(store) if s.source == SOURCE]
    by_render = {r: [s for s in sessions if render_of(s) == r] for r in ("served", "canonical")}
    assert len(by_render["served"]) == len(by_render["canonical"]) == served["stored"]
    for s in by_render["served"]:
        mutant, fixed = s.turns
        assert served_program(mutant.program) == mutant.program and not mutant.passed_public
        assert mutant.reply == served_reply(mutant.program) and fixed.passed_hidden
    twin = {s.meta["item"]: s for s in by_render["canonical"]}
    for s in by_render["served"]:
        assert doc_key(s.turns[0].program) == doc_key(twin[s.meta["item"]].turns[0].program)
    # the builder takes only the configured rendering (configs/train.yaml dataset.mix.synthetic_render)
    stats = BuildStats()
    chosen, report = select_mix(sessions, MixSettings(), stats=stats)
    assert stats.counts["sessions_other_render"] == len(by_render["canonical"])
    contexts = [p for p in chosen.train if p.turns]
    assert contexts and all(p.origin == "synthetic" and '"""' not in p.turns[0].reply for p in contexts)
    assert report.to_dict()["parts"]["synthetic"]["sessions"] == len(by_render["served"])


def test_mutants_of_another_sets_train_split(cobalt_home: Path, sandbox: Any) -> None:
    """`synthesize --from examples/natural`: only the natural set's train split is mutated, its
    sessions carry the natural problems, and the held-out set is refused in one sentence."""
    pairs = train_pairs(NATURAL_DIR)
    splits = natural_splits(SplitSection())
    assert pairs and {splits[p.id] for p, _ in pairs} == {"train"}
    assert len(pairs) < len(reference_pairs(NATURAL_DIR)) and all(ref.strip() for _, ref in pairs)
    with Store.open() as store:
        counts = synthesize(
            store, sandbox, LoopSettings(), MutateParams(per_task=1, max_candidates=8), sources=pairs[:2]
        )
        sessions = [s for s in sessions_from_store(store) if s.source == SOURCE]
    assert counts["stored"] == len(sessions) >= 1
    assert {s.problem_id for s in sessions} <= {p.id for p, _ in pairs[:2]}
    assert all(s.problem is not None and s.problem.source == "natural" for s in sessions)
    with pytest.raises(ProblemError, match="held-out set is for evaluation only"):
        train_pairs(HELDOUT_DIR)
    refused = run_cli("dataset", "synthesize", "--from", str(HELDOUT_DIR), home=cobalt_home)
    assert_one_sentence(refused, "never trained on")
