"""`cobalt bench train`: what the contextual bandit saves, measured side by side.

1. Same model, same tasks, same LoRA, G, batch, steps and per-turn completion length:
   - Cobalt: GRPO on single-step partial-trajectory prompts built from the stored
     trajectories of the tasks (one generation per example, one sandbox run);
   - baseline: multi-turn online GRPO that rolls out whole T-turn trajectories per example
     (`trainer.training.rollout`: T generations and sandbox runs, trained on all model tokens).
   Seconds per training example (wall time of the training loop / examples) and their
   ratio, target <= 0.5.
2. With `--real`: a short real training of the model on the bandit dataset of the tasks'
   stored trajectories (e.g. the embedded model on HumanEval train-split sessions from
   `cobalt collect`), printing the mean reward per step and whether it rose. With
   `--register` its adapter is registered as a new version (never promoted), so it can be
   evaluated against the base model with `cobalt eval --adapter vN`.

3. With `--paths standard,shared`: the same bandit dataset trained with TRL's standard step
   and with the shared-prefix step (`trainer.training.shared_prefix`: one prompt forward per
   group, one prefill per prompt, no loss pass for zero-spread groups), one after the other in
   this process, same seed and steps; prints prompts per hour of wall time and per CPU-hour
   (this process and its children; the sandbox containers are not counted), the time split of
   the steps, and the ratio shared / standard. Replaces part 1 in that run.

`--json` prints one JSON object. Nothing is promoted.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assistant.errors import UserError
from assistant.loop import prompts
from assistant.problems.schema import Problem
from assistant.runtime import open_sandbox, open_store
from assistant.serving import models
from assistant.store.trajectory_db import Store
from trainer.data import build
from trainer.data.session_source import sessions_from_store
from trainer.eval.evaluate import load_benchmark
from trainer.release.registry import Registry
from trainer.train_settings import SharedPrefixSettings, TrainSettings, load_train_settings
from trainer.training import grpo
from trainer.training.rollout import MultiTurnRollout, trajectory_reward

if TYPE_CHECKING:
    from assistant.settings import EvalSection, LoopSettings, PathsSettings, Settings

TARGET = 0.5
_SHARED = SharedPrefixSettings(loss=True, generation=True, skip_zero_spread=True)
PATHS: dict[str, tuple[SharedPrefixSettings, dict[str, Any]]] = {
    "standard": (SharedPrefixSettings(loss=False, generation=False, skip_zero_spread=False), {"bf16": False}),  # TRL
    "shared": (_SHARED, {"bf16": False}),
    # the shared step with the frozen base model in bfloat16 (LoRA weights stay float32, as
    # PEFT keeps them): half the bytes read per decoded token; not bit-equal to float32
    "shared-bf16": (_SHARED, {"bf16": True}),
}

HELP = "seconds per example: bandit GRPO vs multi-turn online GRPO"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", help="policy model (default: config model.name)")
    parser.add_argument("--tasks", default="humaneval", help="problem set: humaneval or a problem file/dir")
    parser.add_argument("--split", default="train", help="split of the problem set (all, train, val, test)")
    parser.add_argument("--limit", type=int, default=4, help="tasks used (those with stored trajectories)")
    parser.add_argument("--steps", type=int, default=3, help="training steps of each side")
    parser.add_argument("--turns", type=int, default=3, help="T of the multi-turn baseline")
    parser.add_argument("--generations", type=int, default=4, help="G completions per prompt")
    parser.add_argument("--max-completion-length", type=int, default=256, help="tokens per turn")
    parser.add_argument("--profile", default="cpu-small", help="training profile (LoRA and GRPO settings)")
    parser.add_argument("--real", action="store_true", help="also run the short real training")
    parser.add_argument("--real-steps", type=int, default=10, help="steps of the real training")
    parser.add_argument("--register", action="store_true", help="register the real training's adapter (not promoted)")
    parser.add_argument("--skip-compare", action="store_true", help="only the real training")
    parser.add_argument(
        "--paths",
        type=_paths,
        help="compare training steps instead of bandit vs baseline: comma-separated of " + ", ".join(PATHS),
    )
    parser.add_argument("--prompts-per-step", type=int, default=1, help="prompts per step (batch = this x G)")


def _paths(value: str) -> list[str]:
    names = [v.strip() for v in value.split(",") if v.strip()]
    unknown = [n for n in names if n not in PATHS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"unknown path(s) {', '.join(unknown) or value!r}; known: {', '.join(PATHS)}")
    return names


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _tasks(
    section: EvalSection, store: Store, spec: str, split: str, limit: int, sources: list[str]
) -> tuple[list[Problem], list[Any]]:
    """The first `limit` tasks of the split that have stored trajectories, and those sessions."""
    problems = load_benchmark(spec, split, section)
    sessions = sessions_from_store(store, sources=sources)
    by_hash: dict[str, list[Any]] = {}
    for s in sessions:
        if s.turns and s.problem is not None:
            by_hash.setdefault(s.problem_hash, []).append(s)
    chosen = [p for p in problems if p.content_hash() in by_hash][:limit]
    if not chosen:
        raise UserError(
            f"no stored trajectories for the {split} split of {spec}; collect some first, e.g. "
            f"`cobalt collect {spec} --samples 4`"
        )
    return chosen, [s for p in chosen for s in by_hash[p.content_hash()]]


def _batch(args: argparse.Namespace) -> int:
    """Completions per step (training examples): G for each of the step's prompts."""
    return args.generations * max(1, getattr(args, "prompts_per_step", 1))


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "num_generations": args.generations,
        "per_device_train_batch_size": _batch(args),
        "gradient_accumulation_steps": 1,
        "max_completion_length": args.max_completion_length,
        "save_strategy": "no",
        "logging_steps": 1,
    }


@dataclass
class Side:
    """What every side of the comparison runs with: where models live, the loop (its prompt
    style), the training settings, the policy model, the sandbox and the command's arguments."""

    paths: PathsSettings
    loop: LoopSettings
    settings: TrainSettings
    model: str
    sandbox: Any
    args: argparse.Namespace


def build_dataset(side: Side, sessions: list[Any], work: Path, perturb: bool = False) -> Any:
    """The bandit dataset of `sessions` built into `work/dataset`, where `train_side` reads it."""
    tokenizer = build.load_tokenizer(side.model, side.paths)
    return build.build(
        sessions,
        work / "dataset",
        side.settings,
        tokenizer=tokenizer,
        sandbox=side.sandbox,
        loop=side.loop,
        perturb=perturb,
        progress=_say,
    )


def train_side(
    side: Side, work: Path, name: str, steps: int, grpo_extra: dict[str, Any] | None = None
) -> tuple[dict[str, Any], Any]:
    """GRPO on the dataset built in `work` for `steps` steps into `work/name`: its cost and reward curve."""
    args = side.args
    result = grpo.train(
        side.settings,
        model=side.model,
        dataset=work / "dataset",
        out=work / name,
        paths=side.paths,
        sandbox=side.sandbox,
        max_steps=steps,
        progress=_say,
        **_overrides(args),
        **(grpo_extra or {}),
    )
    m = result.meta["metrics"]
    examples = steps * _batch(args)
    return {
        "seconds_per_example": m["wall_s"] / examples,
        "wall_s": m["wall_s"],
        "cpu_s": m["cpu_s"],
        "examples": examples,
        "generations": examples,
        "prompts_trained": m["prompts"],
        "time_split": m["time_split"],
        "zero_spread_groups_dropped": m["zero_spread_groups_dropped"],
        "reward_curve": m["reward_curve"],
        "first_reward": m["first_reward"],
        "last_reward": m["last_reward"],
        "sandbox": m["sandbox"],
        "base_dtype": result.meta.get("base_dtype"),
    }, result


def bandit_side(
    side: Side, sessions: list[Any], work: Path, steps: int, perturb: bool = False
) -> tuple[dict[str, Any], Any]:
    built = build_dataset(side, sessions, work, perturb)
    trained, result = train_side(side, work, "bandit", steps)
    return {**trained, "prompts": built.train_rows}, result


def paths_side(side: Side, sessions: list[Any], work: Path) -> dict[str, Any]:
    """Each of `args.paths` trained on the same dataset, its prompts per hour and CPU-hour."""
    args = side.args
    built = build_dataset(side, sessions, work)
    out: dict[str, Any] = {"dataset_prompts": built.train_rows}
    for name in args.paths:
        _say(f"{name} step: {args.steps} steps x {args.prompts_per_step} prompts x {args.generations} completions")
        shared_prefix, grpo_extra = PATHS[name]
        chosen = replace(side, settings=side.settings.model_copy(update={"shared_prefix": shared_prefix}))
        trained, _ = train_side(chosen, work, name, args.steps, grpo_extra)
        prompts = trained["prompts_trained"]
        trained["prompts_per_hour"] = round(prompts * 3600 / trained["wall_s"], 2) if trained["wall_s"] else None
        trained["prompts_per_cpu_hour"] = round(prompts * 3600 / trained["cpu_s"], 2) if trained["cpu_s"] else None
        out[name] = trained
    if "standard" in out:
        for name in (n for n in args.paths if n != "standard"):
            for key in ("prompts_per_hour", "prompts_per_cpu_hour"):
                new, old = out[name][key], out["standard"][key]
                out[_ratio_key(key, name)] = round(new / old, 3) if new and old else None
    return out


def _ratio_key(key: str, name: str) -> str:
    """The report key of `name`'s ratio to the standard step (`shared` keeps the unsuffixed key)."""
    return f"ratio_{key}" + ("" if name == "shared" else "_" + name.replace("-", "_"))


def baseline_side(side: Side, problems: list[Problem], work: Path) -> dict[str, Any]:
    import os

    from datasets import Dataset

    args = side.args
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")  # rollout_func is experimental in TRL
    style = prompts.style_for(side.loop)
    rows = [{"prompt": style.initial_messages(p), "task_id": p.id} for p in problems]
    gargs = grpo.grpo_config(side.settings, work / "baseline", args.steps, **_overrides(args))
    model_path = models.resolve(side.model, side.paths)
    rollout = MultiTurnRollout(
        {MultiTurnRollout.prompt_key(r["prompt"]): p for r, p in zip(rows, problems)},
        side.sandbox,
        None,
        args.turns,
        args.max_completion_length,
        float(gargs.temperature),
        style=style,
    )
    trainer = grpo.make_trainer(
        model_path, side.settings, gargs, Dataset.from_list(rows), [trajectory_reward], rollout_func=rollout
    )
    rollout.tok = trainer.processing_class
    started = time.monotonic()
    trainer.train()
    wall = time.monotonic() - started
    rewards = [h["reward"] for h in trainer.state.log_history if "reward" in h]
    examples = args.steps * _batch(args)
    return {
        "seconds_per_example": wall / examples,
        "wall_s": round(wall, 1),
        "examples": examples,
        "generations": rollout.turns_generated,
        "turns": args.turns,
        "reward_curve": rewards,
    }


def main(args: argparse.Namespace, config: Settings) -> int:
    settings = load_train_settings(config.train, args.profile)
    model = args.model or config.model.name
    out: dict[str, Any] = {
        "model": model,
        "tasks": args.tasks,
        "split": args.split,
        "steps": args.steps,
        "generations": args.generations,
        "turns": args.turns,
        "max_completion_length": args.max_completion_length,
        "prompts_per_step": args.prompts_per_step,
        "profile": settings.profile,
    }
    with open_store(config) as store:
        problems, sessions = _tasks(config.eval, store, args.tasks, args.split, args.limit, settings.dataset.sources)
    out["task_ids"] = [p.id for p in problems]
    sandbox = open_sandbox(config)
    side = Side(config.paths, config.loop, settings, model, sandbox, args)
    try:
        with tempfile.TemporaryDirectory(prefix="cobalt-bench-train-") as tmp:
            work = Path(tmp)
            if args.paths:
                out["paths"] = paths_side(side, sessions, work / "p")
            elif not args.skip_compare:
                _say(f"Cobalt (bandit): {args.steps} steps x {args.generations} single-step completions")
                out["cobalt"], _ = bandit_side(side, sessions, work / "c", args.steps)
                _say(
                    f"baseline (multi-turn online GRPO, T={args.turns}): "
                    f"{args.steps} steps x {args.generations} trajectories"
                )
                out["baseline"] = baseline_side(side, problems, work / "b")
                ratio = out["cobalt"]["seconds_per_example"] / out["baseline"]["seconds_per_example"]
                out.update(ratio=round(ratio, 3), target=TARGET, meets_target=ratio <= TARGET)
            if args.real:
                _say(f"real training: {args.real_steps} steps on the bandit dataset of {len(problems)} tasks")
                real, result = bandit_side(side, sessions, work / "r", args.real_steps, perturb=True)
                curve = real["reward_curve"]
                out["real"] = {**real, "rose": bool(curve) and real["last_reward"] > real["first_reward"]}
                if args.register:
                    item = Registry.open(config.paths).register(result.adapter, result.meta)
                    out["real"]["registered"] = {"version": item.version, "name": item.name}
    finally:
        sandbox.close()
    if args.json:
        print(json.dumps(out))
        return 0
    if "paths" in out:
        _print_paths(out["paths"], args.paths)
    if "ratio" in out:
        c, b = out["cobalt"], out["baseline"]
        print(f"{'':<28}{'s/example':>10}{'examples':>10}{'generations':>13}")
        print(
            f"{'Cobalt (single-step bandit)':<28}{c['seconds_per_example']:>10.2f}"
            f"{c['examples']:>10}{c['generations']:>13}"
        )
        print(
            f"{'multi-turn online GRPO':<28}{b['seconds_per_example']:>10.2f}{b['examples']:>10}{b['generations']:>13}"
        )
        print(f"ratio {out['ratio']:.3f} (target <= {TARGET}): {'met' if out['meets_target'] else 'not met'}")
    if "real" in out:
        r = out["real"]
        print("mean reward per step: " + ", ".join(f"{x:+.3f}" for x in r["reward_curve"]))
        print(
            f"first third {r['first_reward']:+.3f} -> last third {r['last_reward']:+.3f}: "
            f"{'rose' if r['rose'] else 'did not rise'}"
        )
        if "registered" in r:
            print(
                f"registered as v{r['registered']['version']} ({r['registered']['name']}); "
                f"evaluate it with `cobalt eval --adapter v{r['registered']['version']}`"
            )
    return 0


def _print_paths(report: dict[str, Any], names: list[str]) -> None:
    parts = ["generate", "reward", "logps_no_grad", "loss_forward", "loss_backward"]
    print(
        f"{'step':<12}{'prompts':>8}{'wall s':>9}{'CPU s':>9}{'prompts/h':>11}{'prompts/CPU-h':>15}"
        + "".join(f"{p + ' s':>16}" for p in parts)
    )
    for name in names:
        r = report[name]
        split = r["time_split"]
        print(
            f"{name:<12}{r['prompts_trained']:>8}{r['wall_s']:>9.1f}{r['cpu_s']:>9.1f}"
            f"{r['prompts_per_hour'] or 0:>11.1f}{r['prompts_per_cpu_hour'] or 0:>15.1f}"
            + "".join(f"{split.get(p + '_s', 0.0):>16.1f}" for p in parts)
        )
    for name in (n for n in names if n != "standard" and "standard" in report):
        print(
            f"{name} / standard: prompts per hour x{report[_ratio_key('prompts_per_hour', name)]}, "
            f"per CPU-hour x{report[_ratio_key('prompts_per_cpu_hour', name)]} "
            f"(zero-spread groups left out: {report[name]['zero_spread_groups_dropped']})"
        )
