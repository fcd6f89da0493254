"""What the two benchmark runs, `trainer.eval.evaluate.evaluate` and
`trainer.repair.repair_run.run_repair`, share: the keyword options that label their report and
follow their sessions (`RunOptions`), those labels as report fields, and the sampling settings
that their reports and stored sessions record."""

from __future__ import annotations

from typing import Any, Callable, Generic, TypedDict, TypeVar

from assistant.settings import LoopSettings

T = TypeVar("T")


class RunOptions(TypedDict, Generic[T], total=False):
    """`benchmark` and `split` (default all) name what ran, `adapter` the adapter served; `on_plan`
    hears (sessions to run, sessions already stored), `on_session` each finished one (a T)."""

    benchmark: str
    split: str
    adapter: str | None
    on_plan: Callable[[int, int], None] | None
    on_session: Callable[[T], None] | None


def report_labels(options: RunOptions[Any], model: str, benchmark: str) -> dict[str, Any]:
    """The report fields that say what ran: the benchmark (`benchmark` unless the options name
    one), the split, the model and the adapter. TypeError for an option that is not one."""
    unknown = sorted(set(options) - set(RunOptions.__annotations__))
    if unknown:
        raise TypeError(f"unexpected keyword argument(s): {', '.join(unknown)}")
    return {
        "benchmark": options.get("benchmark", benchmark),
        "split": options.get("split", "all"),
        "model": model,
        "adapter": options.get("adapter"),
    }


def loop_sampling(loop: LoopSettings) -> dict[str, Any]:
    """How the loop samples: temperature (per turn), top_p and max_tokens."""
    return {"temperature": loop.temperature, "top_p": loop.top_p, "max_tokens": loop.max_tokens}


# `timeout_s` is left out: the settings derive it from the sandbox's limit, so it never equals the
# class default and would part every session stored before this from every run after
GRADING_FIELDS = ("sanitize_answers", "feedback_field_chars", "repeat_temperature")


def loop_grading(loop: LoopSettings) -> dict[str, Any]:
    """The loop settings that change what is graded or what the feedback says (the sanitizer, the
    feedback's field cut, the resample temperature), each only where it
    differs from its default, so that sessions stored before they were recorded still match."""
    defaults = LoopSettings()
    return {f: getattr(loop, f) for f in GRADING_FIELDS if getattr(loop, f) != getattr(defaults, f)}
