"""Counts per natural or HumanEval eval report: turn-0 and last-turn solved, the model's own turn-0
failures fixed by a later turn, and turn-1 replies that send the failing program back unchanged.

    python own_failures.py A/report.json B.json ...
"""

from __future__ import annotations

import json
import sys


def counts(path: str) -> str:
    """One line of counts for the report at `path`."""
    with open(path) as f:
        report = json.load(f)
    outcomes = report["outcomes"]
    first = sum(o["passed"][0] for o in outcomes)
    last = sum(o["passed"][-1] for o in outcomes)
    failures = [o for o in outcomes if not o["passed"][0]]
    fixed = sum(1 for o in failures if any(o["passed"][1:]))
    ran = [o for o in failures if len(o["ran"]) > 1 and o["ran"][1]]
    unchanged = sum(o["unchanged"][1] for o in ran)
    return (
        f"{path}: {len(outcomes)} sessions, turn 0 {first}, last turn {last}, "
        f"own failures fixed {fixed}/{len(failures)}, turn 1 unchanged {unchanged}/{len(ran)}"
    )


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        print(counts(arg))
