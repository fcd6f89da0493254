"""The promotion gate's settings: the `gate:` section of configs/train.yaml (the val repair items,
the natural tasks, the margin and interval) and `gate.simulation:`, what the size simulation
(`trainer.release.gate_sim`) assumes of the paired data. Part of `TrainSettings`.
"""

from __future__ import annotations

from pydantic import ConfigDict, Field

from assistant.settings import Section


class MeasureSim(Section):
    """What `trainer.release.gate_sim` assumes of one measure's paired data."""

    model_config = ConfigDict(frozen=True)

    base_rate: float = Field(0.3, gt=0, lt=1, description="The reference's mean rate on the measure.")
    discordance: float = Field(
        0.25, ge=0, le=1, description="Share of items on which candidate and reference differ (paired, greedy)."
    )
    task_concentration: float = Field(
        4.0, gt=0, description="Beta concentration of the per-task rates (smaller: tasks differ more)."
    )


class RepairSim(MeasureSim):
    """The repair measure: the fix rate of the val repair items (several items per task)."""

    tasks: int = Field(
        46, ge=1, description="Tasks of the gate's repair items, every set's (checked against the items it loads)."
    )
    items: int = Field(131, ge=1, description="Repair items on those tasks (checked likewise).")


class NaturalSim(MeasureSim):
    """The natural measures: turn-0 and last-turn Pass@1, one greedy session per task; the
    last turn's pair is the turn-0 pair with the same share of turn-0 failures fixed for both."""

    base_rate: float = Field(0.45, gt=0, lt=1, description="The reference's turn-0 Pass@1.")
    discordance: float = Field(
        0.15, ge=0, le=1, description="Share of tasks on which candidate and reference differ at turn 0 (greedy)."
    )
    tasks: int = Field(46, ge=1, description="Natural val tasks (checked against the loaded problems).")
    fix_rate: float = Field(
        0.03, ge=0, lt=1, description="Share of turn-0 failures fixed by the last turn (the same tasks for both)."
    )


class SimSettings(Section):
    """The `gate.simulation:` section: what `trainer.release.gate_sim` assumes of the data."""

    model_config = ConfigDict(frozen=True)

    repair: RepairSim = Field(default_factory=RepairSim, description="The repair measure's data.")
    natural: NaturalSim = Field(default_factory=NaturalSim, description="The natural measures' data.")
    drop: float = Field(0.10, description="A drop this large on any one measure must be refused ...")
    refuse_at_least: float = Field(0.90, description="... at least this often.")
    simulations: int = Field(400, ge=1, description="Simulated gate runs per estimate.")
    resamples: int = Field(1000, ge=1, description="Bootstrap resamples per simulated run.")
    seed: int = Field(0, description="Seeds the simulated data.")


class NaturalGateSettings(Section):
    """The gate's natural tasks: what `cobalt eval --benchmark B --split <gate.split>` runs."""

    benchmarks: list[str] = Field(
        ["humaneval", "natural"],
        min_length=1,
        description="Benchmarks whose `gate.split` tasks the gate evaluates (anything `cobalt eval` takes).",
    )
    turns: int = Field(3, ge=1, description="Turns per session: Pass@1 is judged at turn 0 and at the last turn.")
    temperature: float = Field(0.0, ge=0, description="Sampling temperature of every turn (0: greedy).")
    max_problems: int = Field(
        0, ge=0, description="A deterministic subset of this many tasks (0: every task of the split)."
    )


class GateSettings(Section):
    benchmarks: list[str] = Field(
        default_factory=lambda: ["humaneval-repair", "natural-repair"],
        min_length=1,
        description="The repair item sets the gate runs (their `split` items, pooled into one measure): "
        "humaneval-repair (pinned), natural-repair (the natural set's committed val bugs) or repair:FILE.jsonl.",
    )
    split: str = Field("val", description="Their split (and the natural tasks'): validation, never training tasks.")
    turns: int = Field(1, description="Model turns after the buggy program (greedy, with feedback).")
    max_problems: int = Field(
        0, description="A deterministic subset of this many tasks, all their items (0: every task of the split)."
    )
    natural: NaturalGateSettings = Field(
        default_factory=NaturalGateSettings, description="The natural tasks (turn-0 and last-turn Pass@1)."
    )
    margin: float = Field(
        0.10,
        description="Promote only when, on every measure against every reference, the paired interval's lower "
        "end is above -margin.",
    )
    bootstrap: int | None = Field(
        None,
        ge=1,
        description="Paired bootstrap resamples, over tasks (None: the evaluation's, eval.bootstrap.resamples).",
    )
    confidence: float = Field(
        0.90,
        gt=0,
        lt=1,
        description="Width of the bootstrap interval (two-sided; its lower end decides): 0.90, so that a 10-point "
        "drop is refused at least 90% of the time and no more than needed (configs/train.yaml).",
    )
    concurrency: int = Field(4, description="Sessions run at once.")
    seed: int = Field(0, description="Seeds the task subsets and the bootstrap.")
    serve_merged: bool = Field(
        True,
        description="Serve each adapter arm merged into the base (its merged checkpoint, made if missing) by a "
        "server of its own for its turn, instead of hot-loading it as a LoRA into the base server (vLLM only: "
        "llama.cpp always hot-loads a GGUF LoRA).",
    )
    simulation: SimSettings = Field(
        default_factory=SimSettings, description="What the size simulation assumes (trainer.release.gate_sim)."
    )
