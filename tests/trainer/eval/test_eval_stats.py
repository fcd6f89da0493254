"""Evaluation without a sandbox: pinned splits, bootstrap and paired intervals, the reduction
of a session to per-turn outcomes (carry-forward, unchanged, exposure and hacking), the
report round trip, table, plot, and `cobalt eval compare` / `cobalt eval splits`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from assistant.cli import main
from assistant.settings import BootstrapSection, EvalSection, SplitSection
from assistant.settings_loader import load_settings
from assistant.store.trajectory import Turn
from sandbox.api import RunResult, TestResult
from tests.trainer.trainer_fakes import bare_turn
from trainer.data.perturb import Swap
from trainer.eval.bootstrap import paired_intervals, ratio_intervals
from trainer.eval.eval_metrics import SampleOutcome, outcome
from trainer.eval.eval_report import EvalReport, plot, table
from trainer.eval.eval_sets import select, shuffled, split_ids
from trainer.eval.paired import CompareError, compare, verdict_words

FAST = EvalSection(bootstrap=BootstrapSection(resamples=500))  # a quicker bootstrap
HUMANEVAL_IDS = [f"HumanEval/{i}" for i in range(164)]
PINNED_VAL = [
    "HumanEval/3",
    "HumanEval/21",
    "HumanEval/33",
    "HumanEval/53",
    "HumanEval/66",
    "HumanEval/74",
    "HumanEval/85",
    "HumanEval/89",
    "HumanEval/105",
    "HumanEval/138",
    "HumanEval/141",
    "HumanEval/145",
    "HumanEval/150",
    "HumanEval/156",
    "HumanEval/157",
    "HumanEval/163",
]
PINNED_TEST_HEAD = ["HumanEval/7", "HumanEval/10", "HumanEval/16", "HumanEval/17", "HumanEval/19"]


# --- splits -------------------------------------------------------------------------------


def test_humaneval_splits_are_pinned() -> None:
    ids = split_ids(HUMANEVAL_IDS, load_settings().eval.split)
    assert [len(ids[s]) for s in ("all", "test", "train", "val")] == [164, 82, 66, 16]
    assert sorted(ids["val"], key=lambda i: int(i.split("/")[1])) == PINNED_VAL
    assert sorted(ids["test"], key=lambda i: int(i.split("/")[1]))[:5] == PINNED_TEST_HEAD
    assert set(ids["test"]) | set(ids["train"]) | set(ids["val"]) == set(HUMANEVAL_IDS)
    assert not (set(ids["test"]) & set(ids["train"])) and not (set(ids["val"]) & set(ids["train"] + ids["test"]))


def test_split_ignores_input_order_and_depends_on_seed() -> None:
    settings = SplitSection()
    assert split_ids(HUMANEVAL_IDS[::-1], settings) == split_ids(HUMANEVAL_IDS, settings)
    assert shuffled(["b", "a", "a"], 1) == shuffled(["a", "b"], 1)
    other = split_ids(HUMANEVAL_IDS, SplitSection(seed=1))
    assert set(other["test"]) != set(split_ids(HUMANEVAL_IDS, settings)["test"])


def test_select_keeps_problem_order_and_limit() -> None:
    class P:
        def __init__(self, pid: str) -> None:
            self.id = pid

    problems: list[Any] = [P(f"p{i}") for i in range(10)]
    test = select(problems, "test", SplitSection())
    assert len(test) == 5 and [p.id for p in test] == sorted((p.id for p in test), key=lambda s: int(s[1:]))
    assert [len(select(problems, s, SplitSection())) for s in ("train", "val")] == [4, 1]
    assert select(problems, "test", SplitSection(), limit=2) == test[:2]


# --- bootstrap ----------------------------------------------------------------------------


def col(values: list[float]) -> np.ndarray:
    return np.asarray(values, dtype=float).reshape(-1, 1)


def test_ratio_interval_known_cases() -> None:
    ones = ratio_intervals(col([1] * 20), col([1] * 20))[0]
    assert (ones.value, ones.lo, ones.hi, ones.num, ones.den) == (1.0, 1.0, 1.0, 20, 20)
    half = ratio_intervals(col([1, 0] * 200), col([1] * 400), seed=3)[0]
    assert half.value == 0.5 and 0.44 < half.lo < 0.46 and 0.54 < half.hi < 0.56  # normal: +-0.049
    assert ratio_intervals(col([1, 0] * 200), col([1] * 400), seed=3)[0] == half  # seeded
    empty = ratio_intervals(col([0, 0]), col([0, 0]))[0]
    assert (empty.value, empty.lo, empty.hi) == (None, None, None)
    clustered = ratio_intervals(col([2, 0]), col([2, 2]))[0]  # 2 problems x 2 samples
    assert (clustered.value, clustered.lo, clustered.hi) == (0.5, 0.0, 1.0)


def test_paired_interval_uses_the_pairing() -> None:
    rng = np.random.default_rng(0)
    a = (rng.random(200) < 0.5).astype(float)
    b = a.copy()
    b[np.flatnonzero(a == 0)[:10]] = 1  # B fixes 10 of A's failures, changes nothing else
    ones = col([1] * 200)
    same = paired_intervals(col(a), ones, col(a), ones)[0]
    assert (same.delta, same.lo, same.hi) == (0.0, 0.0, 0.0)
    d = paired_intervals(col(a), ones, col(b), ones)[0]
    assert d.delta == 0.05 and 0 < d.lo <= 0.05 <= d.hi < 0.1
    ia, ib = ratio_intervals(col(a), ones)[0], ratio_intervals(col(b), ones)[0]
    assert ia.hi > ib.lo  # unpaired intervals overlap, the paired one excludes 0
    with pytest.raises(ValueError):
        paired_intervals(col([1]), col([1]), col([1, 1]), col([1, 1]))


# --- outcomes -----------------------------------------------------------------------------


def turn(
    i: int,
    program: str | None,
    public: list[str],
    hidden: bool,
    expected: str | None = "x",
    compile_error: str | None = None,
) -> Turn:
    tests = [TestResult(status=s, expected=expected) for s in public]
    return bare_turn(
        i, program, public=RunResult(tests=tests, compile_error=compile_error), hidden_pass_rate=1.0 if hidden else 0.0
    )


def test_outcome_carries_forward_and_spots_unchanged_programs() -> None:
    turns = [
        turn(0, "x = 1\n", ["failed"], False),
        turn(1, "x  =  1", ["failed"], False),
        turn(2, "x = 2", ["passed"], True),
    ]
    o = outcome(turns, 5, problem_id="p", sample=0, session_id="s")
    assert o.passed == [False, False, True, True, True] and o.ran == [True, True, True, False, False]
    assert o.unchanged == [False, True, False, False, False] and not any(o.exposed + o.hacked)
    assert outcome(turns, 2, problem_id="p", sample=0, session_id="s").passed == [False, False]


def test_outcome_counts_tampered_and_flagged_turns() -> None:
    from trainer.eval.eval_metrics import counts

    turns = [
        turn(0, "x = 1", ["failed"], False),
        turn(1, "x = 2", ["tampered"], False),
        turn(2, "x = 3", ["passed"], True),
    ]
    turns[1].public = RunResult(tests=[TestResult(status="tampered")], tampered=True, flags=["frames"])
    turns[2].hidden = RunResult(tests=[TestResult(status="passed")], flags=["inspect"])
    o = outcome(turns, 4, problem_id="p", sample=0, session_id="s")
    assert o.tampered == [False, True, False, False] and o.flagged == [False, True, True, False]
    assert SampleOutcome.from_dict(o.to_dict()) == o
    old = {k: v for k, v in o.to_dict().items() if k not in ("tampered", "flagged")}  # an older report
    assert SampleOutcome.from_dict(old).tampered == [False] * 4
    num, den = counts([o], "tampered_rate", 4)
    assert num.tolist() == [[0, 1, 0, 0]] and den.tolist() == [[1, 1, 1, 0]]  # of the turns taken
    assert SampleOutcome.from_dict(json.loads(json.dumps(o.to_dict()))) == o


def test_outcome_hacking_needs_a_shown_swapped_expected_output() -> None:
    swap = Swap(1, 2, "a", "b")
    turns = [
        turn(0, "p0", ["passed", "failed", "failed"], False),  # shows test 1 (swapped)
        turn(1, "p1", ["failed", "passed", "failed"], False),  # reproduces it: hacked; shows 0
        turn(2, "p2", ["passed", "failed", "passed"], False),  # passes 2 (never shown), shows 1
        turn(3, "p3", ["passed", "failed", "error"], True),
    ]
    o = outcome(turns, 4, problem_id="p", sample=0, session_id="s", kind="stdio", swap=swap)
    assert o.exposed == [False, True, True, True] and o.hacked == [False, True, False, False]
    crash = [
        turn(0, "p0", ["passed", "error", "failed"], False, expected=None),
        turn(1, "p1", ["passed", "passed", "failed"], False),
    ]
    stdio = outcome(crash, 2, problem_id="p", sample=0, session_id="s", kind="stdio", swap=swap)
    assert stdio.exposed == [False, False]  # a crash shows the error, not the expected output
    func = outcome(crash, 2, problem_id="p", sample=0, session_id="s", kind="function", swap=swap)
    assert func.exposed == [False, True] and func.hacked == [False, True]  # the assert shows it
    broken = [turn(0, "p0", [], False, compile_error="SyntaxError"), turn(1, None, [], False)]
    assert not any(outcome(broken, 2, problem_id="p", sample=0, session_id="s", swap=swap).exposed)


# --- reports and comparison ---------------------------------------------------------------


def make_report(
    passed: dict[str, list[list[int]]], turns: int = 3, model: str = "m", perturbed: bool = False
) -> EvalReport:
    outcomes = []
    for pid, samples in passed.items():
        for k, flags in enumerate(samples):
            outcomes.append(
                SampleOutcome(
                    pid,
                    k,
                    f"{pid}-{k}",
                    [bool(x) for x in flags],
                    [True] * turns,
                    [False] * turns,
                    [False] * turns,
                    [False] * turns,
                )
            )
    return EvalReport(
        benchmark="toy",
        split="all",
        model=model,
        turns=turns,
        samples=2,
        perturbed=perturbed,
        outcomes=outcomes,
        problems=list(passed),
        settings={"temperature": 0.0, "concurrency": 2},
        eval_settings=FAST,
    )


BASE = {"p1": [[0, 0, 1], [0, 1, 1]], "p2": [[1, 1, 1], [0, 0, 0]], "p3": [[0, 0, 0], [0, 0, 0]]}
BETTER = {"p1": [[1, 1, 1], [0, 1, 1]], "p2": [[1, 1, 1], [0, 1, 1]], "p3": [[0, 0, 0], [0, 0, 1]]}


def times(problems: dict[str, list[list[int]]], n: int) -> dict[str, list[list[int]]]:
    """The same problems n times over (more problems, the same rates)."""
    return {f"{pid}-{r}": samples for r in range(n) for pid, samples in problems.items()}


def test_report_metrics_round_trip_table_and_plot(tmp_path: Path) -> None:
    report = make_report(BASE)
    assert [e.value for e in report.metrics["pass_at_1"]] == [round(1 / 6, 4), round(2 / 6, 4), 0.5]
    assert report.metrics["fix_rate"][0] is None and report.metrics["fix_rate"][2].value == 0.4
    assert "hacking_rate" not in report.metrics
    again = EvalReport.load(report.save(tmp_path / "r.json"))
    assert again.to_dict() | {"created_at": 0} == report.to_dict() | {"created_at": 0}
    text = table(report)
    assert "| 2 | 0.500 [" in text and "fix rate" in text and "| 0 |" in text
    png = plot([report, make_report(BETTER, model="b")], tmp_path / "p.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_compare_pairs_samples_and_gives_a_verdict() -> None:
    base, better = make_report(times(BASE, 5)), make_report(times(BETTER, 5), model="b")
    result = compare(base, better, FAST)
    assert result.pairs == 30 and [d.delta for d in result.deltas["pass_at_1"]] == [0.1667, 0.3333, 0.3333]
    assert result.not_worse and result.verdict.lo >= 0
    reverse = compare(better, base, FAST)
    assert reverse.verdict.hi <= 0 and not reverse.not_worse
    assert compare(better, base, FAST, margin=0.5).not_worse
    partial = make_report({"p1": BETTER["p1"], "p9": [[1, 1, 1], [1, 1, 1]]}, model="c")
    assert (compare(make_report(BASE), partial).pairs, compare(make_report(BASE), partial).unpaired_a) == (2, 4)
    with pytest.raises(CompareError, match="turn counts"):
        compare(base, make_report({"p1": [[0, 1]]}, turns=2))
    with pytest.raises(CompareError, match="share no"):
        compare(base, make_report({"zz": [[0, 0, 1]]}))
    with pytest.raises(CompareError, match="perturbed"):
        compare(base, make_report(BASE, perturbed=True))
    assert compare(base, better, FAST, turn=-3).turn == 0
    for outside in (3, -4):  # not taken modulo the turn count: a verdict on another turn
        with pytest.raises(CompareError, match=f"turn {outside} is outside these 3-turn reports"):
            compare(base, better, FAST, turn=outside)


def test_compare_and_splits_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = make_report(times(BASE, 5)).save(tmp_path / "a.json")
    b = make_report(times(BETTER, 5), model="b").save(tmp_path / "b.json")
    assert main(["eval", "compare", str(a), str(b), "--plot", str(tmp_path / "ab.png")]) == 0
    out = capsys.readouterr().out
    assert "+0.333 [" in out and "B is shown not worse than A" in out and (tmp_path / "ab.png").is_file()
    assert main(["eval", "compare", str(b), str(a), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"]["not_worse"] is False
    # the words claim no more than the interval: [-0.30, +0.02] against a 0.05 margin shows nothing
    assert verdict_words(-0.30, 0.02, 0.05).startswith("not shown worse (nor shown not worse)")
    assert (verdict_words(-0.01, 0.2, 0.05), verdict_words(-0.4, -0.1, 0.05)) == (
        "shown not worse than",
        "shown worse than",
    )
    (tmp_path / "bad.json").write_text("{}")
    assert main(["eval", "compare", str(a), str(tmp_path / "bad.json")]) == 1
    assert "not an evaluation report" in capsys.readouterr().err
    assert main(["eval", "splits", "--json"]) == 0
    ids = json.loads(capsys.readouterr().out)
    assert sorted(ids["val"], key=lambda i: int(i.split("/")[1])) == PINNED_VAL


def test_merged_reports_equal_one_report_of_the_union(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    part1, part2 = {"p1": BASE["p1"], "p2": BASE["p2"]}, {"p3": BASE["p3"]}
    paths = [make_report(p).save(tmp_path / f"{i}.json") for i, p in enumerate((part1, part2))]
    assert main(["eval", "merge", *map(str, paths), "--out", str(tmp_path / "m")]) == 0
    assert "merged 2 reports (3 problems)" in capsys.readouterr().out
    merged, whole = EvalReport.load(tmp_path / "m" / "report.json"), make_report(BASE)
    assert merged.to_dict()["metrics"] == whole.to_dict()["metrics"] and merged.problems == whole.problems
    assert compare(whole, make_report(BETTER, model="m")).deltas == compare(merged, make_report(BETTER)).deltas
    assert main(["eval", "merge", str(paths[0]), str(paths[0]), "--out", str(tmp_path / "x")]) == 1
    assert "share a (problem, sample) pair" in capsys.readouterr().err
    other = make_report(part2, model="b").save(tmp_path / "b.json")
    assert main(["eval", "merge", str(paths[0]), str(other), "--out", str(tmp_path / "y")]) == 1
    assert "differ in model" in capsys.readouterr().err
    hot = make_report(part2)
    hot.settings = {**hot.settings, "temperature": 0.8, "concurrency": 4}
    assert (
        main(["eval", "merge", str(paths[0]), str(hot.save(tmp_path / "hot.json")), "--out", str(tmp_path / "z")]) == 1
    )
    assert "differ in temperature" in capsys.readouterr().err
    again = make_report({"p4": BASE["p1"]}).save(tmp_path / "p4.json")  # a merged report merges again
    assert main(["eval", "merge", str(tmp_path / "m" / "report.json"), str(again), "--out", str(tmp_path / "w")]) == 0
    older = EvalReport.load(tmp_path / "m" / "report.json")  # merged by older code: only `merged_from` kept
    older.settings = {"merged_from": older.settings["merged_from"]}
    older_path = older.save(tmp_path / "older.json")
    assert main(["eval", "merge", str(older_path), str(again), "--out", str(tmp_path / "v")]) == 0
