"""The shipped adapter (examples/adapters/): which adapter is served is decided by `plan`
(imported once, promoted only when nothing else was chosen or it replaces an earlier shipped
one, never when its gate did not pass it against the base), and `before_serve` carries it out
on the tiny model: imported, promoted and merged, so the next server start serves it merged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.trainer.release.test_adapter_export import GATE, trained
from trainer.release.adapter_export import export_adapter
from trainer.release.registry import AdapterVersion, Registry
from trainer.release.shipped import Shipped, before_serve, passed_against_base, plan, shipped_adapters
from trainer.train_settings import ShipSettings


def shipped(sha: str = "a" * 64, base: str = "tiny", gate: dict | None = GATE) -> Shipped:
    return Shipped(Path(f"/ship/{sha[:4]}"), {"base_model": base, "weights_sha256": sha, "gate": gate})


def version(n: int, sha: str | None = None, origin: str | None = None) -> AdapterVersion:
    return AdapterVersion(n, Path(f"/reg/v{n}"), {"base_model": "tiny", "weights_sha256": sha, "origin": origin})


def test_passed_against_base_reads_the_base_comparison() -> None:
    assert passed_against_base(GATE)
    low = {**GATE, "comparisons": [{**GATE["comparisons"][0], "lo": -0.2}]}
    current_only = {**GATE, "comparisons": [{**GATE["comparisons"][0], "reference": "current"}]}
    assert not passed_against_base(low) and not passed_against_base(current_only)
    assert not passed_against_base({**GATE, "incomplete": ["aborted"]}) and not passed_against_base(None)
    failed_vs_current = {**GATE, "promote": False, "comparisons": [*GATE["comparisons"], {"reference": "current"}]}
    assert passed_against_base(failed_vs_current)  # only the base comparison matters here


def test_plan_decides_which_adapter_is_served() -> None:
    promote = {"event": "promote", "base_model": "tiny", "version": 1}
    rollback = {"event": "rollback", "base_model": "tiny", "version": None}
    assert plan("tiny", [], [], None, []).action == "none"
    assert plan("tiny", [shipped(gate=None)], [], None, []).action == "none"  # never gated
    assert plan("qwen-coder", [shipped()], [], None, []).action == "none"  # another base
    first = plan("tiny", [shipped()], [], None, [])
    assert first.action == "promote" and first.shipped is not None and first.shipped.path.name == "aaaa"
    assert plan("tiny", [shipped()], [version(1, "a" * 64)], None, [promote, rollback]).action == "none"
    cut_short = plan("tiny", [shipped()], [version(1, "a" * 64)], None, [])  # imported, its promotion interrupted
    assert cut_short.action == "promote" and "never promoted" in cut_short.why
    users = version(1, "u" * 64)
    assert plan("tiny", [shipped()], [users], users, [promote]).action == "import"
    assert plan("tiny", [shipped()], [users], None, [promote, rollback]).action == "import"  # chose the base
    old = version(1, "o" * 64, origin="shipped")
    assert plan("tiny", [shipped()], [old], old, [promote]).action == "promote"  # a better one replaced it
    better = shipped("b" * 64, gate={**GATE, "comparisons": [{**GATE["comparisons"][0], "lo": 0.1}]})
    assert plan("tiny", [shipped(), better], [], None, []).shipped is better


def test_before_serve_imports_promotes_and_merges_once(home_config: Any, tmp_path: Path) -> None:
    registry, v = trained(home_config, tmp_path / "train")
    ship_dir = tmp_path / "examples-adapters"
    export_adapter(registry, v, ship_dir / "tiny-best", home_config.paths, ShipSettings())
    assert [s.path.name for s in shipped_adapters(ship_dir)] == ["tiny-best"]
    home = tmp_path / "user-home"
    settings = home_config.model_copy(
        update={
            "paths": home_config.paths.model_copy(update={"data_dir": home}),
            "train": {"ship": {"dir": str(ship_dir)}},
        }
    )
    said: list[str] = []
    done = before_serve(settings, "tiny", said.append)
    user = Registry.open(settings.paths)
    current = user.current("tiny")
    assert done.action == "promote" and current is not None and current.meta["origin"] == "shipped"
    entry = user.current_entry("tiny")
    assert entry["merged"] and Path(entry["merged"], "config.json").is_file()  # served merged on start
    assert "passed the gate against the base" in entry["reason"]
    assert before_serve(settings, "tiny", said.append).why == "already imported"
    assert before_serve(settings, "smollm2", said.append).action == "none"
    user.rollback("tiny", "the user wants the bare model", to_base=True)
    assert before_serve(settings, "tiny", said.append).action == "none" and user.current("tiny") is None
    broken = json.loads((ship_dir / "tiny-best" / "cobalt-adapter.json").read_text())
    fresh = settings.model_copy(update={"paths": settings.paths.model_copy(update={"data_dir": tmp_path / "h3"})})
    (ship_dir / "tiny-best" / "cobalt-adapter.json").write_text(json.dumps({**broken, "base_model_sha256": "0" * 64}))
    assert before_serve(fresh, "tiny", said.append).action == "none"
    assert "was not imported" in said[-1] and Registry.open(fresh.paths).versions() == []


def test_the_committed_shipped_adapters_are_intact() -> None:
    """What `examples/adapters/` holds is what its metadata says: one adapter per base model, every
    file with the recorded sha256, the dataset it was trained on there, the recipe a fixed step
    count and seed, and its recorded gate passed against the base (so `make run` serves it)."""
    from trainer.release.adapter_export import verify_files
    from trainer.release.shipped import REPO

    found = shipped_adapters(REPO / "examples" / "adapters")
    bases = [item.base_model for item in found]
    assert "qwen-coder-1.5b" in bases and len(bases) == len(set(bases))  # one per base, replaced only by a better one
    for item in found:
        verify_files(item.path, item.meta)
        assert item.meta["dataset_files"]["copied"] and (item.path / "dataset" / "train.jsonl").is_file()
        assert item.meta["dataset_sha256"] == item.meta["dataset_files"]["sha256"]["train.jsonl"]
        recipe = item.meta["recipe"]
        assert recipe["max_steps"] > 0 and recipe["seed"] is not None and recipe.get("max_minutes") in (0, None)
        assert passed_against_base(item.meta["gate"])
