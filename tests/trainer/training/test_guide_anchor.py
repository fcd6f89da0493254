"""Guided groups on the tiny model: the last completion of a guided prompt's group is exactly its
guide then EOS (with and without one prefill per prompt), the other completions are still
sampled, an unguided group and a greedy call are untouched; and a real run through TRL finds the
guide of its dataset's prompt, so the sandbox scores the guide as a passing completion."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.trainer.trainer_fakes import RIGHT_SUM, WRONG_SUM, sum_problem
from tests.trainer.training.grouped_generation import PROMPTS, generate_groups
from tests.trainer.training.tiny_grpo import biased_settings, one_session_dataset, train_tiny
from trainer.data.dataset_files import read_rows
from trainer.data.guides import add_guides
from trainer.training import guide_anchor

GUIDE = [21, 22, 23, 24, 25]


@pytest.fixture
def trainer(generating_trainer: Any) -> Any:
    return generating_trainer


def _table(trainer: Any) -> guide_anchor.GuideTable:
    table = guide_anchor.GuideTable(trainer.processing_class, [], max_tokens=16)
    table.ids[trainer.processing_class.decode(PROMPTS[0], skip_special_tokens=False)] = GUIDE
    return table


def _generate(trainer: Any, table: Any, *, prefill: bool, greedy: bool = False) -> list[list[int]]:
    install = None if table is None else lambda model: guide_anchor.guide_in_generation(model, table)
    return generate_groups(trainer, install, prefill=prefill, greedy=greedy)


@pytest.mark.parametrize("prefill", [False, True])
def test_the_last_completion_of_a_guided_group_is_its_guide(trainer: Any, no_eos: None, prefill: bool) -> None:
    table = _table(trainer)
    out = _generate(trainer, table, prefill=prefill)
    eos = trainer.processing_class.eos_token_id
    assert out[3][:6] == GUIDE + [eos]  # then generate pads the finished row
    assert all(out[i][:5] != GUIDE for i in (0, 1, 2, 4, 5, 6, 7))  # the others are still sampled
    assert len({tuple(out[i]) for i in (0, 1, 2)}) > 1
    assert table.counts["groups_guided"] == 1 and table.counts["groups_unguided"] == 1


def test_without_a_guide_or_sampling_nothing_is_forced(trainer: Any, no_eos: None) -> None:
    plain = _generate(trainer, None, prefill=False)
    assert plain == _generate(trainer, guide_anchor.GuideTable(trainer.processing_class, [], 16), prefill=False)
    assert plain[3][:5] != GUIDE  # the test above cannot pass by chance
    greedy = _generate(trainer, None, prefill=False, greedy=True)
    assert _generate(trainer, _table(trainer), prefill=False, greedy=True) == greedy


def test_the_processor_forces_each_rows_next_guide_token_then_eos() -> None:
    import torch

    scores = torch.tensor([[0.1, 2.0, -1.0, 0.0], [3.0, 0.0, 1.0, 0.5], [0.5, 0.25, 0.75, 0.1]])
    ids = torch.zeros(3, 7, dtype=torch.long)  # prompt of 5, two tokens generated
    out = guide_anchor.ForcedRows({0: [1, 1, 2], 2: [3, 3]}, start=5, eos=0)(ids, scores)
    inf = float("-inf")
    assert out.tolist() == [[inf, inf, -1.0, inf], [3.0, 0.0, 1.0, 0.5], [0.5, inf, inf, inf]]


def test_a_training_run_forces_its_datasets_guide(
    tmp_path: Path, sandbox: Any, test_config: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[dict[int, list[int]]] = []
    keep = guide_anchor.ForcedRows.__call__

    def recorded(self: guide_anchor.ForcedRows, ids: Any, scores: Any) -> Any:
        seen.append(self.targets)
        return keep(self, ids, scores)

    monkeypatch.setattr(guide_anchor.ForcedRows, "__call__", recorded)
    settings = biased_settings(test_config, [WRONG_SUM], completion_length=48, generations=4)
    settings.guide_anchor = True
    problem = sum_problem()
    plain = one_session_dataset(tmp_path / "ds", test_config, settings, problem, WRONG_SUM, RIGHT_SUM)
    guided = tmp_path / "guided"
    add_guides(plain, guided, {problem.id: RIGHT_SUM})

    result = train_tiny(settings, test_config, sandbox, guided, tmp_path / "run", max_steps=1)

    assert seen and all(list(t) == [3] for t in seen)  # the last row of the one group, every token
    rows = len(read_rows(guided, "train"))
    assert result.meta["guides"] == {"guides": rows, "groups_guided": 1}  # and none missed
    assert result.meta["config"]["guide_anchor"] is True
    totals = result.meta["metrics"]["sandbox"]
    assert totals["completions"] == 4 and totals["scored"] == 4
