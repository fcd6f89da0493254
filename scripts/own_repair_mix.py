"""Re-mix a built bandit dataset towards the model's own wrong programs (own-2's dataset).

`cobalt dataset build` keeps a trajectory's partial prompts only when the trajectory changed
its pass rate and was solved in the end (docs/method.md, the paper's filter), so the served
model's own failures that it never fixed give no repair prompt: own-1's dataset had 30 own
repair rows out of 255. Its validation file, however, holds each train task's least-improved
trajectory, i.e. exactly those contexts (on train-split tasks, never an evaluation task).

This script writes a new dataset: every own repair row of the source's train file, plus the
own rows of its validation file with 1..`--max-context` earlier turns whose best earlier pass
rate is below 1 (moved out of validation), plus every perturbed row, plus `--synthetic` other
synthetic repair rows and `--first-turn` own first-turn rows drawn with `--seed`. The result
is an ordinary dataset directory for `cobalt train --dataset`; its meta records the source's
data hash and these settings.

    python scripts/own_repair_mix.py examples/adapters/qwen-coder-own-1/dataset DATA/own-repair-2
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from trainer.data import dataset_files  # noqa: E402


def is_own_repair(row: dict[str, Any], max_context: int) -> bool:
    return row["origin"] == "own" and 1 <= row["context_turns"] <= max_context and row["prev_best"] < 1.0


def mix(
    train: list[dict[str, Any]],
    validation: list[dict[str, Any]],
    max_context: int,
    synthetic: int,
    first_turn: int,
    seed: int,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, int]]:
    rng = random.Random(seed)
    own_train = [r for r in train if r["origin"] == "own" and r["context_turns"] >= 1]
    moved = [r for r in validation if is_own_repair(r, max_context)]
    perturbed = [r for r in train if r["perturbed"] and r not in own_train]
    rest_synth = [r for r in train if r["origin"] == "synthetic" and not r["perturbed"] and r["context_turns"] >= 1]
    firsts = [r for r in train if r["context_turns"] == 0]
    picked_synth = rng.sample(rest_synth, min(synthetic, len(rest_synth)))
    picked_first = rng.sample(firsts, min(first_turn, len(firsts)))
    moved_ids = {id(r) for r in moved}
    out_train = [
        *own_train,
        *({**r, "split": "train"} for r in moved),
        *perturbed,
        *picked_synth,
        *picked_first,
    ]
    out_val = [r for r in validation if id(r) not in moved_ids]
    counts = {
        "own_repair_from_train": len(own_train),
        "own_repair_from_validation": len(moved),
        "perturbed": len(perturbed),
        "synthetic": len(picked_synth),
        "first_turn": len(picked_first),
        "train_prompts": len(out_train),
        "validation_prompts": len(out_val),
    }
    return out_train, out_val, counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--max-context", type=int, default=2)
    parser.add_argument("--synthetic", type=int, default=30)
    parser.add_argument("--first-turn", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    src_meta = dataset_files.read_meta(args.source)
    train, val, counts = mix(
        dataset_files.read_rows(args.source, "train"),
        dataset_files.read_rows(args.source, "validation"),
        args.max_context,
        args.synthetic,
        args.first_turn,
        args.seed,
    )
    meta = {
        "derived_from": {"data_hash": src_meta["data_hash"], "script": "scripts/own_repair_mix.py"},
        "settings": {k: getattr(args, k) for k in ("max_context", "synthetic", "first_turn", "seed")},
        "counts": counts,
    }
    problems = dataset_files.validation_problems(args.source)
    written = dataset_files.write(args.out, train, val, problems, meta)
    print(f"{args.out}: {counts} data_hash {written['data_hash'][:12]}")


if __name__ == "__main__":
    main()
