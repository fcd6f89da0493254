"""`cobalt retrain` end to end on the tiny model, the real sandbox, a real SQLite store and
the real vLLM server: a run that fails at the gate resumes after its last finished step; a
finished run promotes and hot-loads; a second concurrent retrain refuses with one
sentence; a retrain killed with SIGKILL mid-training leaves the served adapter unchanged
and the next run resumes from its checkpoint."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from assistant.cli import main
from assistant.loop.recorder import record
from assistant.loop.session import Session
from assistant.serving import hot_load, models, server
from assistant.serving.adapters import read_current
from assistant.settings_loader import load_settings
from assistant.store.trajectory_db import Store
from tests.trainer.trainer_fakes import RIGHT_SUM, WRONG_SUM, ScriptedClient, add_problem, answer, sum_problem
from trainer.release.registry import Registry

pytestmark = [pytest.mark.docker, pytest.mark.server, pytest.mark.slow]
REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def home(cobalt_home: Path, tmp_path: Path, sandbox, tiny_server) -> dict:
    """A data dir with two problems' sessions (wrong, then right), a current adapter v1 for
    the tiny model, and a config file for the CLI."""
    config = tmp_path / "cobalt.yaml"
    config.write_text(
        yaml.safe_dump(
            {"model": {"name": "tiny", "max_tokens": 32, "timeout_s": 120, "retries": 1}, "train": {"profile": "test"}}
        )
    )
    cfg = load_settings(config)
    loop = cfg.loop.with_turns(3)
    with Store.open(cfg.paths) as store:
        for problem, wrong, right in (
            (sum_problem(), WRONG_SUM, RIGHT_SUM),
            (add_problem(), "def add(a, b):\n    return a - b", "def add(a, b):\n    return a + b"),
        ):
            client = ScriptedClient([answer(wrong), answer(right)], name="reference")
            assert record(Session(problem, client, sandbox, loop, source="collect"), store).run() == "passed"
    from tests.conftest import make_random_adapter

    registry = Registry.open(cfg.paths)
    v1 = registry.register(
        make_random_adapter(models.resolve("tiny", cfg.paths), tmp_path / "v1"), {"base_model": "tiny"}
    )
    registry.promote(v1.version, "seeded by the test")
    yield {"config": str(config), "cfg": cfg, "api": tiny_server.api_base, "registry": registry}
    for name in hot_load.served_models(tiny_server.api_base):
        if name.startswith("tiny-v"):
            hot_load.unload_adapter(tiny_server.api_base, name)


def _retrain(home: dict, *extra: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict, str]:
    capsys.readouterr()
    code = main(["--config", home["config"], "retrain", *extra, "--json"])
    out = capsys.readouterr()
    return code, (json.loads(out.out) if out.out.strip() else {}), out.err


def test_retrain_end_to_end_with_a_failed_gate_resumed(home: dict, capsys: pytest.CaptureFixture[str]) -> None:
    registry: Registry = home["registry"]
    before = (registry.root / "current.json").read_bytes()

    code, _, err = _retrain(home, "--server", "http://127.0.0.1:9/v1", capsys=capsys)
    assert code == 1 and "Traceback" not in err, err
    assert err.strip().splitlines()[-1].startswith("cobalt: error: cannot reach the model server")
    assert (registry.root / "current.json").read_bytes() == before  # nothing served changed
    run_dir = next((home["cfg"].paths.data_dir / "retrain" / "runs").iterdir())
    failed = json.loads((run_dir / "run.json").read_text())
    assert failed["status"] == "failed" and set(failed["steps"]) >= {"dataset", "train", "register"}
    assert "gate" not in failed["steps"] and [v.version for v in registry.versions("tiny")] == [1, 2]

    code, result, err = _retrain(home, "--server", home["api"], capsys=capsys)
    assert code == 0, err
    steps = result["steps"]
    assert result["status"] == "done" and "resuming retrain run" in err
    assert steps["train"] == failed["steps"]["train"]  # not trained again
    assert steps["train_parent"] == {"version": 1} and steps["train"]["parent_version"] == 1
    assert steps["dataset"]["counts"]["train_prompts"] >= 4 and steps["dataset"]["counts"]["validation_tasks"] == 2
    assert steps["register"] == {"version": 2, "name": "tiny-v2"}
    saved = registry.get(2)
    assert saved.meta["parent_version"] == 1 and not (saved.path / "ref").exists()  # no KL-reference copy
    gate = steps["gate"]
    assert (gate["current"], gate["candidate"], gate["tasks"], gate["natural_tasks"]) == ("tiny-v1", "tiny-v2", 2, 2)
    # val-split repair items, then val natural tasks at turn 0 and the last turn: each against both
    assert [(c["measure"], c["reference"]) for c in gate["comparisons"]] == [
        (m, r) for m in ("repair_fix_rate", "natural_pass_turn0", "natural_pass_last") for r in ("base", "current")
    ]
    assert steps["promote"]["promoted"] is gate["promote"] and steps["promote"]["reason"] == gate["reason"]
    # the tiny model fixes and solves nothing with any adapter: 0 vs 0 (interval [0, 0]) is shown not worse
    assert gate["promote"] and gate["reason"].startswith("shown not worse"), gate["reason"]
    current = read_current(registry.root)["tiny"]
    assert current["version"] == 2 and current["previous"] == 1 and "retrain" in current["reason"]
    assert steps["hotload"]["loaded"] == "tiny-v2" and "tiny-v2" in hot_load.served_models(home["api"])
    report = Path(result["report"]["markdown"]).read_text()
    assert "## Gate" in report and "## Decision" in report and "train_prompts" in report
    assert not (run_dir / "training" / "checkpoints").exists()  # cleaned once finished

    code, again, _ = _retrain(home, "--server", home["api"], capsys=capsys)
    assert code == 0 and again["status"] == "skipped" and "0 new sessions" in again["error"]


def _cli(home: dict, *args: str, log: Path | None = None, **kwargs) -> subprocess.Popen:
    out = open(log, "w") if log else subprocess.PIPE  # a long run must not block on a full pipe
    return subprocess.Popen(
        [sys.executable, "-m", "assistant.cli", "--config", home["config"], "retrain", "--server", home["api"], *args],
        cwd=REPO,
        env=dict(os.environ),
        stdout=out,
        stderr=subprocess.STDOUT if log else subprocess.PIPE,
        text=True,
        **kwargs,
    )


def test_concurrent_refusal_and_sigkill_mid_training_then_resume(
    home: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    registry: Registry = home["registry"]
    before = (registry.root / "current.json").read_bytes()
    runs = Path(os.environ["COBALT_HOME"]) / "retrain" / "runs"
    log = tmp_path / "first.log"
    first = _cli(home, "--max-steps", "10000", log=log, start_new_session=True)  # killed long before
    try:
        deadline = time.monotonic() + 600
        while not list(runs.glob("*/training/checkpoints/checkpoint-*/trainer_state.json")):
            assert first.poll() is None, log.read_text()[-2000:]
            assert time.monotonic() < deadline, "no checkpoint within 10 minutes"
            time.sleep(1)
        second = _cli(home)
        out, err = second.communicate(timeout=300)
        assert second.returncode == 1 and out == "" and "Traceback" not in err
        refusal = [line for line in err.splitlines() if line.startswith("cobalt: error:")]
        assert len(refusal) == 1  # one sentence
        assert f"another `cobalt retrain` is already running (pid {first.pid}" in refusal[0]
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
    assert (registry.root / "current.json").read_bytes() == before
    assert [v.version for v in registry.versions()] == [1]
    crashed = json.loads(next(runs.glob("*/run.json")).read_text())
    assert crashed["status"] == "running" and "register" not in crashed["steps"]
    done = max(
        int(p.parent.name.split("-")[1]) for p in runs.glob("*/training/checkpoints/checkpoint-*/trainer_state.json")
    )

    code, result, err = _retrain(home, "--server", home["api"], "--max-steps", str(done + 1), capsys=capsys)
    assert code == 0, err
    assert result["status"] == "done" and result["steps"]["train"]["resumed_from"] == f"checkpoint-{done}"
    assert result["steps"]["train"]["metrics"]["steps"] == done + 1
    assert json.loads(next(runs.glob("*/run.json")).read_text())["attempts"] == 2


def test_a_merged_gate_serves_each_adapter_merged_by_a_server_of_its_own(
    home: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.conftest import make_random_adapter

    monkeypatch.setenv("COBALT__TRAIN__GATE__SERVE_MERGED", "true")
    registry: Registry = home["registry"]
    v2 = registry.register(
        make_random_adapter(models.resolve("tiny", home["cfg"].paths), tmp_path / "v2", seed=1), {"base_model": "tiny"}
    )
    data = home["cfg"].paths.data_dir
    code, result, err = _gate(home, "v2", "--promote", capsys=capsys)
    gate = result["gate"]
    assert code == 0 and gate["promote"] and result["promote"]["promoted"], err
    assert [c["reference"] for c in gate["comparisons"]] == ["base", "current"] * 3
    assert gate["loaded"] == [] and set(gate["arm_seconds"]) == {"base", "current", "candidate"}
    # nothing was hot-loaded for the gate ...
    for name, item in (("tiny-v1", registry.get(1)), ("tiny-v2", v2)):  # ... each arm merged, served on its own
        assert (item.path / "merged" / "config.json").is_file()
        assert f"starting vLLM on {name}" in err and list((data / "servers" / name).glob("server-*.log"))
        assert not (data / "servers" / name / "server.json").exists()  # stopped after its turn
    assert "tiny-v2" in hot_load.served_models(home["api"])  # promoted: the running base server serves it
    assert server.running(home["cfg"].paths) is None or server.running(home["cfg"].paths).merged is None


def _gate(home: dict, *args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict, str]:
    capsys.readouterr()
    code = main(["--config", home["config"], "adapters", "gate", *args, "--server", home["api"], "--json"])
    out = capsys.readouterr()
    return code, (json.loads(out.out) if out.out.strip() else {}), out.err


def test_adapters_gate_judges_a_hand_trained_version_and_promotes_only_when_asked(
    home: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.conftest import make_random_adapter

    registry: Registry = home["registry"]
    v2 = registry.register(
        make_random_adapter(models.resolve("tiny", home["cfg"].paths), tmp_path / "v2", seed=1), {"base_model": "tiny"}
    )
    code, result, err = _gate(home, f"v{v2.version}", capsys=capsys)
    gate = result["gate"]
    assert code == 0, err
    assert (gate["candidate"], gate["current"]) == ("tiny-v2", "tiny-v1")
    assert [c["reference"] for c in gate["comparisons"]] == ["base", "current"] * 3 and gate["promote"]
    assert result["promote"] == {"promoted": False}
    assert read_current(registry.root)["tiny"]["version"] == 1  # judged, not promoted
    assert not {"tiny-v1", "tiny-v2"} & set(hot_load.served_models(home["api"]))  # loaded for the gate only

    code, result, err = _gate(home, "2", "--promote", capsys=capsys)
    assert code == 0 and result["promote"]["promoted"], err
    current = read_current(registry.root)["tiny"]
    assert current["version"] == 2 and current["reason"].startswith("adapters gate: shown not worse")
    assert "tiny-v2" in hot_load.served_models(home["api"])

    code, result, err = _gate(home, "9", capsys=capsys)
    assert (
        code == 1
        and result == {}
        and err.strip().splitlines()[-1].startswith("cobalt: error: there is no adapter version 9")
    )
