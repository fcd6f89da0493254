"""What the sampled repairs of a ceiling collection did, from its exported sessions: how many
repaired a failing first turn, how many of those were resampled because the first sample sent an
earlier program back (the loop's `repeat_resamples`), how many still repeat it after the
resamples, how many hold no program, and how many pass every hidden test.

    gunzip -c sessions.jsonl.gz | python repairs.py
"""

from __future__ import annotations

import json
import sys


def main() -> None:
    repairs = resampled = repeated = no_program = fixed = 0
    for line in sys.stdin:
        record = json.loads(line)
        for session in record["cobalt"]["sessions"]:
            if len(session["turns"]) < 2:
                continue
            turn = session["turns"][1]
            hidden = turn.get("hidden_result") or {}
            repairs += 1
            resampled += turn["resamples"] > 0
            repeated += bool(turn["repeated"])
            no_program += turn.get("public_result") is None
            fixed += hidden.get("pass_rate") == 1.0 and not hidden.get("tampered")
    print(
        f"{repairs} repairs: {resampled} resampled (a repeat), {repeated} still a repeat, "
        f"{no_program} without a program, {fixed} pass every hidden test"
    )


if __name__ == "__main__":
    main()
