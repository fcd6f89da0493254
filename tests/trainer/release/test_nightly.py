"""The nightly job hands its `--config` file on to training ranks started under `accelerate launch`,
so every rank trains with the settings (data dir, registry, recipe) the job itself loaded; a gate
that could not finish leaves its run to resume."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from assistant.errors import UserError
from trainer.release import nightly
from trainer.release.nightly import Retrain
from trainer.train_settings import load_train_settings


def test_launched_ranks_get_the_jobs_config_file(
    home_config: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[list[str]] = []
    monkeypatch.setattr(nightly.launcher, "run", lambda settings, argv, progress: seen.append(argv) or 3)
    settings = load_train_settings(home_config.train, "test")
    job = Retrain(home_config, settings, model="tiny", progress=lambda _: None, config_file="my.yaml")
    with pytest.raises(UserError, match="exited with code 3"):
        job._train_launched(SimpleNamespace(path=tmp_path), None)
    (argv,) = seen
    assert argv[argv.index("--config") + 1] == "my.yaml" and argv.index("--config") < argv.index("train")


def test_a_gate_that_could_not_finish_leaves_the_run_to_resume_and_the_window_open(tmp_path: Path) -> None:
    """A dead server mid-gate is no verdict: the run stays unfinished (the next `cobalt retrain`
    gates the same version again) and the window's sessions stay the next run's to train on."""
    from trainer.release.runstate import RetrainState

    state = RetrainState(tmp_path / "retrain")
    run = state.new_run("tiny", "test")
    run.window["until"] = 123.0
    gated: list[int] = []
    steps = SimpleNamespace(
        state=state,
        progress=lambda _: None,
        step_dataset=lambda r: {"counts": {}},
        step_train=lambda r: {"adapter": "a"},
        step_register=lambda r: {"version": 2, "name": "tiny-v2"},
        step_gate=lambda r: gated.append(2) or {"promote": False, "incomplete": ["the server died"]},
    )
    Retrain._steps(steps, run)  # type: ignore[arg-type]
    assert run.status == "failed" and "the server died" in (run.error or "")
    assert "gate" not in run.steps and state.unfinished() is not None and state.last_cutoff() is None
    assert gated == [2]


def test_a_verdict_against_an_adapter_no_longer_current_promotes_nothing() -> None:
    """The gate compared v5 with the current v3; v4 was promoted meanwhile (`adapters promote`, a
    shipped adapter): v5 was never compared with v4, so it is not promoted over it."""
    current = SimpleNamespace(version=4)
    promoted: list[int] = []
    job = SimpleNamespace(
        model="tiny",
        progress=lambda _: None,
        registry=SimpleNamespace(current=lambda model: current, promote=lambda v, *a, **k: promoted.append(v)),
    )
    decision = {"promote": True, "reason": "better", "current_version": 3}
    out = Retrain.promote_if_passed(job, 5, decision, "nightly")  # type: ignore[arg-type]
    assert out["promoted"] is False and "v3 then, v4 now" in out["reason"] and promoted == []
    current.version = 3
    job.config = SimpleNamespace()
    nightly.merge_into_base, saved = (lambda *a, **k: None), nightly.merge_into_base
    try:
        assert Retrain.promote_if_passed(job, 5, decision, "nightly")["promoted"] and promoted == [5]  # type: ignore[arg-type]
    finally:
        nightly.merge_into_base = saved


def test_fresh_after_a_promoted_run_does_not_train_on_its_window_again(tmp_path: Path) -> None:
    from trainer.release.runstate import RetrainState

    state = RetrainState(tmp_path / "retrain")
    run = state.new_run("tiny", "test")
    run.window["until"] = 123.0
    run.record("promote", {"promoted": True, "version": 2})
    run.finish("failed", "the server could not load it")  # hotload failed after the promotion
    job = SimpleNamespace(state=state, progress=lambda _: None, model="tiny", settings=SimpleNamespace(profile="test"))
    job._steps = lambda r: None
    Retrain._run(job, fresh=True)  # type: ignore[arg-type]
    assert state.last_cutoff() == 123.0


def test_pruning_keeps_a_run_whose_dataset_a_registered_adapter_needs(tmp_path: Path) -> None:
    """`adapters export vN` copies the dataset from the run that trained it: pruned, export failed."""
    from trainer.release.runstate import RetrainState

    state = RetrainState(tmp_path / "retrain")
    runs = []
    for _ in range(3):
        run = state.new_run("tiny", "test")
        (run.path / "dataset").mkdir()
        run.finish("done")
        runs.append(run)
    state.prune(1, needed=[runs[0].path / "dataset"])
    assert [r.path.exists() for r in runs] == [True, False, True]
