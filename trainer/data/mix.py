"""The dataset's mix (issue 25 item 2): the training prompts of two parts, each selected on its
own by the filters of `trainer.data.dataset.select`, then combined under `dataset.mix`.

- `own`: the served model's own sessions (every source but `synthetic`: `collect`, `tui`,
  `cli`, `debug`, `import`): its own wrong programs and the feedback they got.
- `synthetic`: the repair sessions of `cobalt dataset synthesize` (mutants of train-split
  tasks, `trainer.repair.curriculum`), only those written in `mix.synthetic_render`.

A task with sessions of both parts is filtered and down-sampled within each part, so one part
never crowds the other out of a task's K trajectories. The first-turn prompt of such a task is
kept once, in the own part. Then, seeded (`dataset.seed`): each part is cut to its cap
(`max_own`, `max_synthetic`), and with `synthetic_share` the part in excess is down-sampled so
the synthetic part is that share of the training prompts (not when a part has none). Every
prompt carries its `origin`; `MixReport` counts each part for the dataset's meta.json. The
validation prompts of both parts are kept whole. This module selects; it reads no store.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable

from assistant.loop.prompts import PromptStyle
from assistant.problems.schema import Problem
from assistant.store.trajectory import SessionRecord
from trainer.data.dataset import BuildStats, PartialPrompt, Selection, dedupe, select
from trainer.data.trajectories import SCRIPTED_SOURCES
from trainer.repair.curriculum import render_of
from trainer.train_settings import MixSettings

OWN, SYNTHETIC = "own", "synthetic"
ORIGINS = (OWN, SYNTHETIC)


def origin_of(session: SessionRecord) -> str:
    """`synthetic` for a scripted repair session, `own` for every other."""
    return SYNTHETIC if session.source in SCRIPTED_SOURCES else OWN


@dataclass
class MixReport:
    """Per part: sessions in, tasks, training prompts selected and kept, validation prompts."""

    settings: dict[str, Any]
    parts: dict[str, Counter] = field(default_factory=lambda: {o: Counter() for o in ORIGINS})
    share_applied: bool = False

    def to_dict(self) -> dict[str, Any]:
        train = sum(p["train_kept"] for p in self.parts.values())
        return {
            "settings": self.settings,
            "parts": {o: {k: int(v) for k, v in sorted(c.items())} for o, c in self.parts.items()},
            "share_applied": self.share_applied,
            "synthetic_share": round(self.parts[SYNTHETIC]["train_kept"] / train, 4) if train else 0.0,
        }


def _sample(items: list[PartialPrompt], n: int, rng: random.Random) -> list[PartialPrompt]:
    """At most `n` of `items`, chosen by `rng`, in their order."""
    if n >= len(items):
        return items
    keep = set(rng.sample(range(len(items)), n))
    return [p for i, p in enumerate(items) if i in keep]


def share_counts(own: int, synthetic: int, share: float | None) -> tuple[int, int]:
    """The (own, synthetic) prompt counts that make the synthetic part `share` of the whole by
    down-sampling the part in excess; unchanged without a share or when a part is empty."""
    if share is None or not own or not synthetic:
        return own, synthetic
    if share >= 1.0:
        return 0, synthetic
    target = share / (1.0 - share) * own
    if synthetic > target:
        return own, round(target)
    return round((1.0 - share) / share * synthetic), synthetic


def _parts(sessions: Iterable[SessionRecord], render: str, stats: BuildStats) -> dict[str, list[SessionRecord]]:
    parts: dict[str, list[SessionRecord]] = {o: [] for o in ORIGINS}
    for s in sessions:
        origin = origin_of(s)
        if origin == SYNTHETIC and render != "any" and render_of(s) != render:
            stats.add("sessions_other_render")
            continue
        parts[origin].append(s)
    return parts


def select_mix(
    sessions: Iterable[SessionRecord],
    mix: MixSettings,
    *,
    k: int = 4,
    max_context: int = 3,
    seed: int = 0,
    stats: BuildStats | None = None,
    style: PromptStyle | None = None,
) -> tuple[Selection, MixReport]:
    """Select each part on its own, then combine them as `mix` says (see the module doc)."""
    stats = stats or BuildStats()
    report = MixReport(mix.model_dump())
    parts = _parts(sessions, mix.synthetic_render, stats)
    chosen: dict[str, Selection] = {}
    for origin in ORIGINS:
        unsolved = mix.own_unsolved if origin == OWN else 0
        sel = select(
            parts[origin],
            k=k,
            max_context=max_context,
            stats=stats,
            style=style,
            unsolved=unsolved,
            first_turn=mix.first_turn_prompts,
        )
        for p in sel.train + sel.validation:
            p.origin = origin
        chosen[origin] = sel
        report.parts[origin].update(
            sessions=len(parts[origin]),
            tasks=len({s.problem_hash for s in parts[origin] if s.turns and s.problem is not None}),
            train_selected=len(sel.train),
        )
    own_keys = {p.key() for p in chosen[OWN].train}
    shared = [p for p in chosen[SYNTHETIC].train if p.key() in own_keys]
    stats.add("prompts_duplicate", len(shared))
    report.parts[SYNTHETIC]["train_in_own"] = len(shared)
    train = {OWN: chosen[OWN].train, SYNTHETIC: [p for p in chosen[SYNTHETIC].train if p.key() not in own_keys]}
    caps = {OWN: mix.max_own, SYNTHETIC: mix.max_synthetic}
    for origin in ORIGINS:
        cap = caps[origin]
        if cap is not None and len(train[origin]) > cap:
            stats.add("prompts_mix_capped", len(train[origin]) - cap)
            train[origin] = _sample(train[origin], cap, random.Random(f"{seed}:cap:{origin}"))
    n_own, n_syn = share_counts(len(train[OWN]), len(train[SYNTHETIC]), mix.synthetic_share)
    report.share_applied = mix.synthetic_share is not None and bool(train[OWN]) and bool(train[SYNTHETIC])
    for origin, n in ((OWN, n_own), (SYNTHETIC, n_syn)):
        stats.add("prompts_mix_share", len(train[origin]) - n)
        train[origin] = _sample(train[origin], n, random.Random(f"{seed}:share:{origin}"))
        report.parts[origin]["train_kept"] = len(train[origin])
    validation = dedupe(chosen[OWN].validation + chosen[SYNTHETIC].validation)
    for p in validation:
        report.parts[p.origin]["validation"] += 1
    problems: dict[str, Problem] = {}
    for problem in chosen[OWN].validation_problems + chosen[SYNTHETIC].validation_problems:
        problems.setdefault(problem.content_hash(), problem)
    return Selection(train[OWN] + train[SYNTHETIC], validation, list(problems.values()), stats), report
