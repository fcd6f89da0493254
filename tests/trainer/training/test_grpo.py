"""Integration: a few GRPO steps on the tiny model, rewarded by the real sandbox -> adapter
saved with its metadata -> registered -> promoted -> hot-loaded into the real vLLM server
-> it answers. (Continuing a parent adapter and resuming from a checkpoint after SIGKILL
are exercised by test_retrain.py.) A generation bias makes the random tiny model write python blocks (see
`trainer_fakes.code_bias`), so its completions are programs the sandbox really runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant.serving import hot_load
from tests.trainer.trainer_fakes import RIGHT_SUM, WRONG_SUM, sum_problem
from tests.trainer.training.tiny_grpo import biased_settings, one_session_dataset, train_tiny
from trainer.release.registry import Registry
from trainer.training import grpo

pytestmark = [pytest.mark.docker]


@pytest.mark.server
def test_grpo_steps_save_register_and_hot_load(tmp_path: Path, sandbox, tiny_server) -> None:
    cfg = tiny_server.cfg
    settings = biased_settings(cfg, [RIGHT_SUM, WRONG_SUM], completion_length=48, generations=4)
    dataset = one_session_dataset(tmp_path / "ds", cfg, settings, sum_problem(), WRONG_SUM, RIGHT_SUM)

    result = train_tiny(settings, cfg, sandbox, dataset, tmp_path / "run", max_steps=2)

    meta = result.meta
    assert meta["base_model"] == "tiny" and meta["parent_version"] is None
    assert meta["data_hash"] == json.loads((dataset / "meta.json").read_text())["data_hash"]
    assert meta["config"]["lora"]["r"] == 8 and meta["metrics"]["steps"] == 2
    totals = meta["metrics"]["sandbox"]
    assert totals["programs_run"] > 0 and totals["faults_dropped"] == 0  # real programs ran
    assert totals["scored"] > 0 and max(meta["metrics"]["reward_curve"]) > -1.0
    curve = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [row["step"] for row in curve] == [1, 2] and all("reward" in row and "kl" in row for row in curve)
    saved = {p.name for p in result.adapter.iterdir()}
    assert {"adapter_config.json", "adapter_model.safetensors", grpo.ADAPTER_META} <= saved

    registry = Registry(tmp_path / "adapters")
    item = registry.register(result.adapter, meta)
    registry.promote(item.version, "integration test")
    assert item.name == "tiny-v1" and registry.current("tiny").version == 1
    hot_load.load_adapter(tiny_server.api_base, item.name, item.path)
    try:
        assert item.name in hot_load.served_models(tiny_server.api_base)
        client = tiny_server.chat_client()
        client.model = f"hosted_vllm/{item.name}"
        reply = client.chat(
            [{"role": "user", "content": "Read two integers and print their sum."}], temperature=0.0, max_tokens=16
        )
        assert reply.completion_tokens > 0
    finally:
        hot_load.unload_adapter(tiny_server.api_base, item.name)


def test_a_greedy_anchored_run_decodes_one_greedy_completion_per_prompt(
    tmp_path: Path, sandbox, test_config, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trainer.training import greedy_anchor

    calls: list[list[int]] = []
    keep = greedy_anchor.GreedyRows.__call__

    def counted(self: greedy_anchor.GreedyRows, ids: object, scores: object) -> object:
        calls.append(self.rows)
        return keep(self, ids, scores)

    monkeypatch.setattr(greedy_anchor.GreedyRows, "__call__", counted)
    settings = biased_settings(test_config, [RIGHT_SUM, WRONG_SUM], completion_length=48, generations=4)
    settings.greedy_anchor = True
    dataset = one_session_dataset(tmp_path / "ds", test_config, settings, sum_problem(), WRONG_SUM, RIGHT_SUM)

    result = train_tiny(settings, test_config, sandbox, dataset, tmp_path / "run", max_steps=2)

    totals = result.meta["metrics"]["sandbox"]
    assert totals["anchors"] == 2 and totals["completions"] == 8  # one prompt of 4 per step
    assert calls and all(rows == [0] for rows in calls)  # the first row of the group, every token
    assert result.meta["config"]["greedy_anchor"] is True


def test_a_resumed_runs_summary_says_which_steps_its_sandbox_counts_cover() -> None:
    """Resumed at step 26 of 48: the reward's counts are this process's (steps 27-48), the shares
    every logged step's; the metadata said neither and read as the whole run's counts."""
    rows = [
        {"step": s, "reward": 0.1, "reward/tampered_share": 0.0, "reward/no_code_share": 0.25 if s < 27 else 0.0}
        for s in range(1, 49)
    ]
    summary = grpo._summary(rows, {"completions": 176, "no_code": 0}, 100.0, 176, 22, first_step=26)
    assert summary["sandbox_steps"] == [27, 48] and summary["sandbox"]["no_code"] == 0
    assert summary["shares"] == {"no_code": round(26 * 0.25 / 48, 4), "tampered": 0.0}
