"""Paired fix rate with feedback over several repair reports taken together (the two val repair
sets): B - A with a 95% bootstrap over tasks (trainer.eval.bootstrap, 10,000 resamples, seed 0).

    python pair_val.py A1.json,A2.json B1.json,B2.json
"""

from __future__ import annotations

import json
import sys

import numpy as np

from trainer.eval.bootstrap import paired_intervals


def fixed(paths: list[str]) -> dict[str, tuple[str, int]]:
    """{item: (task, fixed at turn 1)} of the valid feedback-arm outcomes of `paths`."""
    out = {}
    for path in paths:
        with open(path) as f:
            for o in json.load(f)["outcomes"]:
                if o["arm"] == "feedback" and o["valid"]:
                    out[o["item"]] = (o["task"], o["fixed"][1])
    return out


def main(a_paths: str, b_paths: str) -> None:
    a, b = fixed(a_paths.split(",")), fixed(b_paths.split(","))
    items = sorted(set(a) & set(b))
    tasks = sorted({a[i][0] for i in items})
    index = {t: k for k, t in enumerate(tasks)}
    na, nb, den = (np.zeros((len(tasks), 1)) for _ in range(3))
    for i in items:
        k = index[a[i][0]]
        na[k] += a[i][1]
        nb[k] += b[i][1]
        den[k] += 1
    d = paired_intervals(na, den, nb, den, confidence=0.95, resamples=10000, seed=0)[0]
    counts = f"{len(items)} items, {len(tasks)} tasks: A {int(na.sum())}, B {int(nb.sum())}"
    print(f"{counts}; B - A {d.delta:+.3f} [{d.lo:+.3f}, {d.hi:+.3f}]")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
