"""The report of one retrain run: `report.json` (everything recorded) and `report.md` (what a
person reads the next morning: data, training curve, gate table, decision, what is served)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from assistant.store import atomic
from trainer.release.gate import gate_table


def _fmt(value: Any, spec: str = ".3f") -> str:
    return "-" if value is None else format(value, spec)


def render_markdown(run: Any, status: str) -> str:
    steps = run.steps
    lines = [f"# Retrain run {run.id}: {status}", ""]
    since = run.window.get("since")
    lines.append(f"- model: {run.model} (profile {run.profile}); attempts: {run.attempts}")
    lines.append(
        f"- sessions since: {'the beginning' if since is None else time.ctime(since)}; "
        f"until {time.ctime(run.window.get('until') or 0)}"
    )
    data = steps.get("dataset") or {}
    if data.get("skip"):
        lines += ["", f"Skipped: {data['skip']}."]
        return "\n".join(lines) + "\n"
    if data:
        lines += [
            "",
            "## Dataset",
            "",
            f"{data.get('train')} training prompts, {data.get('validation')} "
            f"validation prompts, data hash {str(data.get('data_hash'))[:12]}",
            "",
            "| filter | count |",
            "|---|---|",
        ]
        lines += [f"| {k} | {v} |" for k, v in (data.get("counts") or {}).items()]
        origins = ((data.get("mix") or {}).get("rows") or {}).get("train") or {}
        if origins:
            lines += ["", "Training prompts by origin: " + ", ".join(f"{k} {v}" for k, v in origins.items())]
    train = steps.get("train") or {}
    metrics = train.get("metrics") or {}
    if metrics:
        lines += [
            "",
            "## Training",
            "",
            f"{metrics.get('steps')} steps in {metrics.get('wall_s')} s; mean reward "
            f"{_fmt(metrics.get('first_reward'), '+.3f')} (first third) -> "
            f"{_fmt(metrics.get('last_reward'), '+.3f')} (last third); parent "
            f"{train.get('parent_version') or 'base model'}; resumed from {train.get('resumed_from') or '-'}",
            "",
            "reward per step: " + ", ".join(f"{r:+.3f}" for r in metrics.get("reward_curve") or []),
        ]
    reg = steps.get("register") or {}
    gate = steps.get("gate") or {}
    if gate.get("comparisons"):
        natural = (
            f" and {gate.get('natural_tasks')} natural tasks ({gate.get('natural_turns')} turns)"
            if gate.get("natural_tasks")
            else ""
        )
        lines += [
            "",
            f"## Gate: {gate.get('candidate')} on {gate.get('items')} repair items "
            f"({gate.get('tasks')} tasks){natural}, margin {gate.get('margin')}",
            "",
            gate_table(gate),
        ]
    promote = steps.get("promote") or {}
    hot = steps.get("hotload") or {}
    if promote:
        verdict = "promoted" if promote.get("promoted") else "not promoted"
        lines += [
            "",
            "## Decision",
            "",
            f"v{reg.get('version')} ({reg.get('name')}) {verdict}: {promote.get('reason')}",
        ]
    if hot:
        lines.append(f"serving: {hot.get('loaded') or hot.get('note') or 'unchanged'}")
    return "\n".join(lines) + "\n"


def write_report(run: Any, status: str) -> dict[str, str]:
    """Write report.json and report.md into the run directory; returns their paths."""
    path = Path(run.path)
    data = {
        "id": run.id,
        "status": status,
        "model": run.model,
        "profile": run.profile,
        "window": run.window,
        "attempts": run.attempts,
        "steps": run.steps,
        "written_at": time.time(),
    }
    atomic.write_json(path / "report.json", data)
    atomic.write_text(path / "report.md", render_markdown(run, status))
    return {"json": str(path / "report.json"), "markdown": str(path / "report.md")}
