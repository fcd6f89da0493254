"""Stored trajectories -> bandit prompts (docs/method.md), as pure functions over sessions.

Per task (one problem content), with d = max - min of a trajectory's per-turn pass rates
on *all* tests:

1. drop the task when its first turn is correct in every sample (too easy);
2. always keep its first-turn prompt (prev_best = 0);
3. keep trajectories with d > 0, then those with max = 1;
4. when more than K remain, keep the max-variance subset (`max_variance_subset`);
5. each kept trajectory gives partial prompts after 1..3 earlier attempts (a scripted
   `synthetic` session: after its first, the mutant, only), with prev_best =
   the best earlier pass rate; stop once the last two feedbacks both say every public test
   passed, and before a context that would hold a `tampered` turn (its program forged its
   grading: a hidden canary passed), so no prompt shows a forged turn; identical prompts
   are kept once;
6. validation: per task, the trajectory with the smallest d (its first-turn and partial
   prompts); it is not removed from the training pool, whose filters usually drop it.

Every filter is counted in `BuildStats`. Reading the store, tokenising, perturbing and
writing files live in `trainer.data.build`; prompts are rendered by `assistant.loop.prompts` only.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable

from assistant.debug.edits import WHOLE_FILE
from assistant.loop import feedback, prompts
from assistant.loop.prompts import PromptStyle
from assistant.problems.schema import Problem
from assistant.store.trajectory import SessionRecord, Turn
from trainer.data.trajectories import Trajectory, max_variance_subset

Message = dict[str, str]
SEARCH = "search"  # the author of a turn found by `cobalt debug`'s small-edit search, not by the model


@dataclass
class PartialPrompt:
    """The context for one bandit step: the problem and the earlier turns (reply, feedback).
    `feedback_override` replaces the stored feedback texts (perturbed contexts)."""

    task: str
    problem: Problem
    session_id: str | None
    turns: list[Turn]
    prev_best: float
    d: float = 0.0
    perturbed: bool = False
    feedback_override: list[str] | None = None
    style: PromptStyle = field(default_factory=prompts.style)
    stored_messages: list[Message] | None = None
    """A debug session's turn: the messages the model saw, as stored (its prompt is rebuilt from the
    file each turn, not from a history); `problem.starter_code` is then the file before that turn."""
    edit_format: str = ""
    """How a debug turn's reply edits the file (assistant.debug.edits); empty: the reply is a program."""
    origin: str = ""
    """The part of the mix the prompt comes from (`trainer.data.mix`: `own` or `synthetic`)."""

    def history(self) -> list[tuple[str, str]]:
        texts = self.feedback_override or [t.feedback for t in self.turns]
        return [(t.reply, text) for t, text in zip(self.turns, texts)]

    def messages(self) -> list[Message]:
        if self.stored_messages is not None:
            return [dict(m) for m in self.stored_messages]
        return self.style.build(self.problem, self.history())

    def key(self) -> str:
        blob = json.dumps([self.task, self.messages()], ensure_ascii=False, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()

    def row(self, split: str, tokens: int | None = None) -> dict[str, Any]:
        """The dataset row: the prompt messages plus what the reward needs (true tests)."""
        return {
            "prompt": self.messages(),
            "problem": json.dumps(self.problem.to_dict(), ensure_ascii=False),
            "prev_best": float(self.prev_best),
            "task_id": self.problem.id,
            "task": self.task,
            "session_id": self.session_id or "",
            "context_turns": len(self.turns),
            "perturbed": bool(self.perturbed),
            "d": float(self.d),
            "split": split,
            "prompt_tokens": int(tokens or 0),
            "edit_format": self.edit_format,
            "origin": self.origin,
        }


@dataclass
class BuildStats:
    """How many items each filter saw and dropped, in order."""

    counts: Counter = field(default_factory=Counter)

    def add(self, name: str, n: int = 1) -> None:
        self.counts[name] += n

    def to_dict(self) -> dict[str, int]:
        return dict(self.counts)


FILTER_ORDER = (
    "sessions",
    "sessions_without_turns",
    "sessions_unusable",
    "sessions_other_render",
    "turns_tampered",
    "tasks",
    "tasks_too_easy",
    "trajectories",
    "trajectories_no_change",
    "trajectories_never_solved",
    "trajectories_downsampled",
    "trajectories_kept",
    "trajectories_unsolved",
    "prompts_first_turn",
    "prompts_partial",
    "prompts_unsolved",
    "prompts_stopped_all_passed",
    "prompts_tampered_context",
    "prompts_duplicate",
    "prompts_mix_capped",
    "prompts_mix_share",
    "prompts_too_long",
    "prompts_perturbed",
    "perturb_not_possible",
    "perturb_faults",
    "train_prompts",
    "validation_prompts",
    "validation_tasks",
)


def partial_prompts(
    task: str,
    problem: Problem,
    traj: Trajectory,
    max_context: int,
    stats: BuildStats | None = None,
    style: PromptStyle | None = None,
) -> list[PartialPrompt]:
    """Prompts after 1..max_context earlier turns of one trajectory."""
    out = []
    for k in range(1, min(max_context, len(traj.turns)) + 1):
        if traj.turns[k - 1].tampered:
            if stats:
                stats.add("prompts_tampered_context")
            break
        if k >= 2 and all(feedback.is_all_passed(t.feedback) for t in traj.turns[k - 2 : k]):
            if stats:
                stats.add("prompts_stopped_all_passed")
            break
        out.append(
            PartialPrompt(
                task,
                problem,
                traj.session_id,
                traj.turns[:k],
                prev_best=max(traj.rates[:k]),
                d=traj.d,
                style=style or prompts.style(),
            )
        )
    return out


def first_turn_prompt(task: str, problem: Problem, style: PromptStyle | None = None) -> PartialPrompt:
    return PartialPrompt(task, problem, None, [], prev_best=0.0, style=style or prompts.style())


def debug_prompts(
    task: str, problem: Problem, traj: Trajectory, edit_format: str, first: int = 0
) -> list[PartialPrompt]:
    """A debug session's prompts from turn `first` on: each turn's stored messages, rewarded against
    the file that turn was shown and its pass rate (the user's file, then the best edit so far; a
    session stored without its baseline: the last edit that applied, the best earlier rate)."""
    out, source, best = [], problem.starter_code, traj.baseline
    for k, turn in enumerate(traj.turns):
        if k >= first and turn.messages:
            state = dataclasses.replace(problem, starter_code=source)
            prev = best if best is not None else max(traj.rates[:k], default=0.0)
            out.append(
                PartialPrompt(
                    task,
                    state,
                    traj.session_id if k else None,
                    traj.turns[:k],
                    prev,
                    traj.d,
                    stored_messages=turn.messages,
                    edit_format=edit_format,
                )
            )
        if turn.program is not None and (best is None or traj.rates[k] > best):
            source = turn.program
            best = traj.rates[k] if best is not None else None
    return out


@dataclass
class Selection:
    """The prompts chosen from a set of sessions, before tokenising and perturbing."""

    train: list[PartialPrompt]
    validation: list[PartialPrompt]
    validation_problems: list[Problem]
    stats: BuildStats


def select(
    sessions: Iterable[SessionRecord],
    k: int = 4,
    max_context: int = 3,
    stats: BuildStats | None = None,
    style: PromptStyle | None = None,
    unsolved: int = 0,
    first_turn: bool = True,
) -> Selection:
    """Apply the task and trajectory filters of docs/method.md to sessions that carry their
    problem; sessions without turns or without a problem are counted and skipped. Every
    prompt is written in `style` (default: prompts.style()). `unsolved` > 0 also keeps, per
    task, that many trajectories that failed their first turn and never solved it (the
    least improved first, never the validation one): their partial prompts are the model's own
    wrong programs with their feedback, which the paper's filter drops. `first_turn` False leaves
    each task's first-turn prompt out of the training prompts (repair contexts only; validation
    keeps it)."""
    stats = stats or BuildStats()
    style = style or prompts.style()
    by_task: dict[str, list[SessionRecord]] = {}
    problems: dict[str, Problem] = {}
    for s in sessions:
        stats.add("sessions")
        if not s.turns:
            stats.add("sessions_without_turns")
            continue
        if s.problem is None:
            stats.add("sessions_unusable")
            continue
        stats.add("turns_tampered", sum(t.tampered for t in s.turns))
        by_task.setdefault(s.problem_hash, []).append(s)
        problems.setdefault(s.problem_hash, s.problem)
    train: list[PartialPrompt] = []
    validation: list[PartialPrompt] = []
    val_problems: list[Problem] = []
    for task, group in by_task.items():
        stats.add("tasks")
        problem = problems[task]
        trajs = [Trajectory.of(s) for s in group]
        if all(t.rates[0] >= 1.0 and t.turns[0].author != SEARCH for t in trajs):
            stats.add("tasks_too_easy")  # a bug the small-edit search fixed was not solved by the model
            continue
        debug = problem.source == "debug"  # `cobalt debug` or the TUI's debug session
        fmt = (group[0].meta or {}).get("edit_format", "") if debug else ""
        fmt = "" if fmt == WHOLE_FILE else fmt  # a whole-file answer trains as a task's program
        if not first_turn:
            first = []
        elif debug:
            first = debug_prompts(task, problem, trajs[0], fmt)[:1]
        else:
            first = [first_turn_prompt(task, problem, style)]
        train.extend(first)
        stats.add("prompts_first_turn", len(first))
        stats.add("trajectories", len(trajs))
        changed = [t for t in trajs if t.d > 0]
        stats.add("trajectories_no_change", len(trajs) - len(changed))
        solved = [t for t in changed if max(t.rates) >= 1.0]
        stats.add("trajectories_never_solved", len(changed) - len(solved))
        kept = [solved[i] for i in max_variance_subset([t.d for t in solved], k)] if solved else []
        stats.add("trajectories_downsampled", len(solved) - len(kept))
        stats.add("trajectories_kept", len(kept))
        for traj in kept:
            if debug:
                found = debug_prompts(task, problem, traj, fmt, first=1)[:max_context]
            else:
                found = partial_prompts(task, problem, traj, traj.context_limit or max_context, stats, style)
            stats.add("prompts_partial", len(found))
            train.extend(found)
        smallest = min(trajs, key=lambda t: t.d)  # the first on ties
        if unsolved and not debug:
            train.extend(unsolved_prompts(task, problem, trajs, [*kept, smallest], unsolved, max_context, stats, style))
        if debug:
            validation.extend(debug_prompts(task, problem, smallest, fmt)[: max_context + 1])
        else:
            validation.append(first_turn_prompt(task, problem, style))
            validation.extend(
                partial_prompts(task, problem, smallest, smallest.context_limit or max_context, style=style)
            )
        val_problems.append(problem)
    return Selection(dedupe(train, stats), dedupe(validation), val_problems, stats)


def unsolved_prompts(
    task: str,
    problem: Problem,
    trajs: list[Trajectory],
    taken: list[Trajectory],
    n: int,
    max_context: int,
    stats: BuildStats,
    style: PromptStyle,
) -> list[PartialPrompt]:
    """Partial prompts of up to `n` trajectories not in `taken` that failed at turn 0 and
    never passed every test, least improved first (stable)."""
    others = [t for t in trajs if all(t is not o for o in taken) and max(t.rates) < 1.0]
    chosen = sorted(others, key=lambda t: t.d)[:n]
    stats.add("trajectories_unsolved", len(chosen))
    out = [p for t in chosen for p in partial_prompts(task, problem, t, t.context_limit or max_context, stats, style)]
    stats.add("prompts_unsolved", len(out))
    return out


def dedupe(items: list[PartialPrompt], stats: BuildStats | None = None) -> list[PartialPrompt]:
    seen: set[str] = set()
    out = []
    for item in items:
        key = item.key()
        if key in seen:
            if stats:
                stats.add("prompts_duplicate")
            continue
        seen.add(key)
        out.append(item)
    return out
