"""Per 16 steps of a run's metrics.jsonl: mean reward, own completions' mean, no-code share,
median step seconds, groups without spread, mean completion tokens, steps' seconds summed."""

import json
import statistics
import sys


def mean(rows: list[dict], key: str) -> float:
    return statistics.mean(r[key] for r in rows)


def main(path: str) -> None:
    by_step = {r["step"]: r for r in (json.loads(line) for line in open(path))}
    rows = [by_step[k] for k in sorted(by_step)]
    print("| steps | reward | own mean | no code | median step s | no spread | mean completion tokens | seconds |")
    print("|---|---|---|---|---|---|---|---|")
    for a in range(0, len(rows), 16):
        c = rows[a : a + 16]
        step_s = [r["time/step_s"] for r in c]
        print(
            f"| {c[0]['step']}-{c[-1]['step']} | {mean(c, 'reward'):+.3f} | {mean(c, 'reward/own_mean'):+.3f} "
            f"| {mean(c, 'reward/no_code_share'):.3f} | {statistics.median(step_s):.0f} "
            f"| {sum(r['zero_spread/groups_dropped'] for r in c):.0f} | {mean(c, 'completions/mean_length'):.0f} "
            f"| {sum(step_s):.0f} |"
        )


if __name__ == "__main__":
    main(sys.argv[1])
