"""A repair session that ended on a model or sandbox error is no evidence of a wrong repair: it
counts in no metric and no paired difference, is not called invalid, and the report lists it, so
a rerun (which redoes it) finishes the measurement."""

from __future__ import annotations

from assistant.store.trajectory import MODEL_ERROR, SANDBOX_ERROR, UNSOLVED
from trainer.repair.repair_metrics import RepairOutcome, counts
from trainer.repair.repair_report import RepairReport, table


def _outcome(item: str, arm: str, fixed: bool, status: str = UNSOLVED, valid: bool = True) -> RepairOutcome:
    ran = [False, status != SANDBOX_ERROR]
    return RepairOutcome(
        item,
        item,
        arm,
        f"s-{item}-{arm}",
        status,
        valid,
        [False, fixed],
        [False, fixed],
        ran,
        [False, False],
        [False, False],
    )


def _report() -> RepairReport:
    outcomes = [_outcome(f"i{k}", arm, fixed=True) for k in range(9) for arm in ("feedback", "blind")]
    outcomes += [_outcome("i9", "feedback", False, MODEL_ERROR), _outcome("i9", "blind", True)]
    outcomes += [_outcome("i10", "feedback", False, SANDBOX_ERROR, valid=False), _outcome("i10", "blind", False)]
    return RepairReport("b", "test", "m", 1, "w", outcomes, [f"i{k}" for k in range(11)])


def test_an_errored_session_counts_in_no_metric() -> None:
    report = _report()
    num, den = counts(report.arm("feedback"), "fix_rate", 1)
    assert (num[:, 1].sum(), den[:, 1].sum()) == (9, 9)  # not 9/11
    assert report.metrics()["feedback"]["fix_rate"][1].value == 1.0


def test_the_paired_difference_drops_both_arms_of_an_errored_item() -> None:
    delta = _report().feedback_minus_blind()["fix_rate"][1]
    assert (delta.a, delta.b) == (1.0, 1.0)  # i9 and i10 dropped from both arms


def test_the_report_lists_errors_apart_from_invalid_items() -> None:
    report = _report()
    assert report.errored() == ["i9/feedback", "i10/feedback"] and report.invalid() == []
    assert report.to_dict()["errored_sessions"] == ["i9/feedback", "i10/feedback"]
    assert "- i9: feedback error (model_error): not counted; blind fixed@1" in table(report)
