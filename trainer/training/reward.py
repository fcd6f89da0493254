"""The bandit reward (docs/method.md) and the reward function TRL calls.

`score(completion, p, prev)` with p = pass rate on all tests, prev = best earlier pass rate:
  R_correct  p = 1 -> 1.0;  p >= 0.5 -> 0.2;  0 < p < 0.5 -> 0.0;  p = 0 -> -0.1
  R_improve  only when p < 1 and prev > 0: p > prev adds 0.1 (p - prev) / (1 - prev);
             p <= prev makes the reward -0.1 + 0.1 (p - prev) / prev  (in [-0.2, -0.1])
  R_format   -0.9 when malformed: more than one python block, degenerate repetition (a block
             of >= 32 characters repeated >= 8 times in a row), and for thinking models a
             missing or repeated `</think>`; plus an optional soft overlong penalty
  final      clip(sum, -1, 1); no code block at all: -1; a `tampered` run (a hidden canary
             test passed: the program forged its grading, sandbox/canary.py): -1.

`SandboxReward` extracts each completion's program (`assistant.messages.extract`), runs all programs
of a batch at once with `Sandbox.run_many` on each problem's public + hidden tests, retries
sandbox faults and returns None (TRL: unscorable, no advantage) for a sample whose runs
keep faulting; faults are counted and never scored as failures. Tampered runs and runs
with static flags (sandbox/flags.py) are counted too (`totals`, `reward/tampered_share`).
"""

from __future__ import annotations

import json
import threading
from typing import Any, Callable

from assistant.debug.edits import apply_reply
from assistant.interfaces import BatchRunner
from assistant.loop.sanitize import graded_program
from assistant.messages import extract
from assistant.messages.repetition import degenerate
from assistant.problems.schema import Problem
from sandbox.api import Job, Limits
from trainer.train_settings import RewardSettings
from trainer.training.execution import run_with_retries

THINK_END = "</think>"
MALFORMED = -0.9
NO_CODE = -1.0
TAMPERED = -1.0
# The greedy-anchor counts (`anchor_counts`), and every count a batch and the run's totals keep.
ANCHOR_COUNTS = ("anchors", "anchor_unchanged", "anchor_solved", "anchor_beaten")
COUNTS = (
    "completions",
    "scored",
    "no_code",
    "malformed",
    "faults_dropped",
    "reruns",
    "programs_run",
    "tampered",
    "flagged",
    "unchanged",
    *ANCHOR_COUNTS,
)


def r_correct(p: float) -> float:
    if p >= 1.0:
        return 1.0
    if p >= 0.5:
        return 0.2
    if p > 0.0:
        return 0.0
    return -0.1


def r_step(p: float, prev: float) -> float:
    """R_correct with R_improve applied (the reward before format terms)."""
    if p >= 1.0 or prev <= 0.0:
        return r_correct(p)
    if p > prev:
        return r_correct(p) + 0.1 * (p - prev) / (1.0 - prev)
    return -0.1 + 0.1 * (p - prev) / prev


def format_problems(completion: str, *, thinking: bool = False, block_chars: int = 32, times: int = 8) -> list[str]:
    """Why a completion is malformed (empty when it is well-formed apart from its code)."""
    reasons = []
    if thinking and completion.count(THINK_END) != 1:
        reasons.append("missing </think>" if THINK_END not in completion else "repeated </think>")
    if len([b for b in extract.python_blocks(completion) if b.strip()]) > 1:
        reasons.append("more than one code block")
    if degenerate(completion, block_chars, times):
        reasons.append("degenerate repetition")
    return reasons


def overlong_penalty(tokens: int, max_tokens: int, buffer: int, penalty: float) -> float:
    """0, falling linearly to -penalty over the last `buffer` tokens before max_tokens."""
    if penalty <= 0 or buffer <= 0 or max_tokens <= 0:
        return 0.0
    start = max_tokens - buffer
    if tokens <= start:
        return 0.0
    return -penalty * min(1.0, (tokens - start) / buffer)


def score(
    completion: str,
    pass_rate: float,
    prev_best: float,
    *,
    thinking: bool = False,
    length_penalty: float = 0.0,
    block_chars: int = 32,
    times: int = 8,
    tampered: bool = False,
    edit: bool = False,
) -> float:
    """The reward of one completion whose program passed `pass_rate` of all tests, after
    earlier turns whose best pass rate was `prev_best` (0 on the first turn).
    `length_penalty` (<= 0) is added before clipping; a tampered run gets TAMPERED. An `edit`
    completion (a debug turn's edit of a file, assistant.debug.edits) that applied needs no code
    block of its own and may hold several; only degenerate repetition makes it malformed."""
    if not edit and extract.code(completion) is None:
        return NO_CODE
    if tampered:
        return TAMPERED
    total = r_step(float(pass_rate), float(prev_best)) + float(length_penalty)
    malformed = (
        degenerate(completion, block_chars, times)
        if edit
        else format_problems(completion, thinking=thinking, block_chars=block_chars, times=times)
    )
    if malformed:
        total += MALFORMED
    return float(min(1.0, max(-1.0, total)))


def last_program(prompt: Any) -> str | None:
    """The program of the prompt's last assistant turn (None on a first-turn prompt)."""
    if isinstance(prompt, list):
        for message in reversed(prompt):
            if message.get("role") == "assistant":
                return extract.code(message.get("content") or "")
    return None


def resubmitted(program: str, prompt: Any) -> bool:
    """Whether `program` is the prompt's last program again (same syntax tree)."""
    before = last_program(prompt)
    return before is not None and extract.code_key(before) == extract.code_key(program)


def completion_text(completion: Any) -> str:
    """TRL gives a string (plain prompts) or a list of messages (conversational)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list):
        return "".join(m.get("content") or "" for m in completion if m.get("role") == "assistant")
    return str(completion)


class SandboxReward:
    """The reward function for `GRPOTrainer`: one float (or None) per completion."""

    def __init__(
        self,
        sandbox: BatchRunner,
        settings: RewardSettings | None = None,
        max_completion_length: int = 0,
        on_batch: Callable[[dict[str, float]], None] | None = None,
        limits: Limits | None = None,
        anchored: bool = False,
        sanitize: bool = True,
    ) -> None:
        self.__name__ = "sandbox"
        self.sanitize = sanitize  # `loop.sanitize_answers`: grade as the sessions and eval grade
        self.limits = limits
        self.sandbox = sandbox
        self.settings = settings or RewardSettings()
        self.max_completion_length = max_completion_length
        self.on_batch = on_batch
        self._problems: dict[str, Problem] = {}
        self._lock = threading.Lock()
        self.totals = dict.fromkeys(COUNTS, 0)
        # True when the first completion of each prompt is greedy (trainer/training/greedy_anchor.py):
        # the batch then also counts those anchors, their unchanged resubmissions, their solves
        # and the groups where a sample scored above the greedy reply.
        self.anchored = anchored

    def _problem(self, blob: str) -> Problem:
        with self._lock:
            problem = self._problems.get(blob)
            if problem is None:
                problem = Problem.from_dict(json.loads(blob), "reward", check_paths=False)
                self._problems[blob] = problem
            return problem

    def __call__(
        self,
        prompts: list[Any],
        completions: list[Any],
        completion_ids: list[list[int]] | None = None,
        *,
        problem: list[str],
        prev_best: list[float],
        edit_format: list[str] | None = None,
        guide: list[str] | None = None,
        log_metric: Callable[[str, float], None] | None = None,
        **_: Any,
    ) -> list[float | None]:
        s = self.settings
        texts = [completion_text(c) for c in completions]
        formats = list(edit_format) if edit_format is not None else [""] * len(texts)
        programs = [
            apply_reply(self._problem(blob).starter_code, text, fmt).source if fmt else extract.code(text)
            for blob, text, fmt in zip(problem, texts, formats)
        ]
        jobs: list[Job] = []
        index: dict[tuple[str, str], int] = {}  # identical programs on one problem run once
        slots: list[int | None] = []
        for blob, program in zip(problem, programs):
            if program is None:
                slots.append(None)
                continue
            key = (blob, program)
            if key not in index:
                prob = self._problem(blob)
                index[key] = len(jobs)
                tests = [] if prob.kind == "pytest" else prob.all_tests()
                jobs.append(
                    Job(
                        program=graded_program(program, prob.kind, self.sanitize),
                        tests=tests,
                        kind=prob.kind,
                        limits=self.limits,
                        project=prob.project(),
                    )
                )
            slots.append(index[key])
        results, reruns = run_with_retries(self.sandbox, jobs, s.sandbox_retries, s.retry_wait_s) if jobs else ([], 0)
        rewards: list[float | None] = []
        batch = dict.fromkeys(COUNTS, 0) | {"completions": len(texts), "reruns": reruns, "programs_run": len(jobs)}
        unchanged: set[int] = set()
        solved: set[int] = set()
        for i, (text, slot) in enumerate(zip(texts, slots)):
            tokens = len(completion_ids[i]) if completion_ids is not None else 0
            penalty = overlong_penalty(tokens, self.max_completion_length, s.overlong_buffer, s.overlong_penalty)
            if slot is None:
                rewards.append(NO_CODE)
                batch["no_code"] += 1
                continue
            result = results[slot]
            if result is None:
                rewards.append(None)
                batch["faults_dropped"] += 1
                continue
            checks = dict(block_chars=s.repeat_block_chars, times=s.repeat_times)
            if degenerate(text, **checks) if formats[i] else format_problems(text, thinking=s.thinking, **checks):
                batch["malformed"] += 1
            batch["tampered"] += int(result.tampered)
            if result.pass_rate >= 1.0 and not result.tampered:
                solved.add(i)
            batch["flagged"] += int(bool(result.flags))
            if not formats[i] and result.pass_rate < 1.0 and resubmitted(programs[i] or "", prompts[i]):
                batch["unchanged"] += 1
                unchanged.add(i)
                penalty -= s.unchanged_penalty
            rewards.append(
                score(
                    text,
                    result.pass_rate,
                    float(prev_best[i]),
                    thinking=s.thinking,
                    length_penalty=penalty,
                    block_chars=s.repeat_block_chars,
                    times=s.repeat_times,
                    tampered=result.tampered,
                    edit=bool(formats[i]),
                )
            )
            batch["scored"] += 1
        guided = guide_rows(prompts, guide, texts)
        if self.anchored:
            batch.update(anchor_counts(prompts, rewards, unchanged, solved, guided))
        with self._lock:
            for key, value in batch.items():
                self.totals[key] += value
        if log_metric is not None:
            log_metric("sandbox/faults_dropped", float(batch["faults_dropped"]))
            log_metric("sandbox/reruns", float(reruns))
            log_metric("reward/no_code_share", batch["no_code"] / max(1, len(texts)))
            log_metric("reward/tampered_share", batch["tampered"] / max(1, len(texts)))
            log_metric("reward/flagged_share", batch["flagged"] / max(1, len(texts)))
            own = [r for i, r in enumerate(rewards) if r is not None and i not in guided]
            # the policy's own completions: a guide row's reward is the reference's, not a sample's
            log_metric("reward/own_mean", sum(own) / len(own) if own else float("nan"))
            log_metric("reward/guide_share", len(guided) / max(1, len(texts)))
        if self.on_batch:
            self.on_batch(batch)
        return rewards


def guide_rows(prompts: list[Any], guide: list[str] | None, texts: list[str]) -> set[int]:
    """The rows a guide was forced into (`guide_anchor.guided_rows`' rule, seen from the reward):
    the last row of each group of identical consecutive prompts, of more than one row, whose
    prompt has a guide, and whose text is that guide (a guide too long to force, or not found,
    left the row to the policy)."""
    if not guide:
        return set()
    keys = [json.dumps(p, sort_keys=True, default=str) for p in prompts]
    return {
        i
        for i, key in enumerate(keys)
        if guide[i]
        and i > 0
        and keys[i - 1] == key
        and (i + 1 == len(keys) or keys[i + 1] != key)
        and texts[i].strip() == guide[i].strip()
    }


def anchor_counts(
    prompts: list[Any],
    rewards: list[float | None],
    unchanged: set[int],
    solved: set[int],
    guided: set[int] | frozenset[int] = frozenset(),
) -> dict[str, int]:
    """For greedy-anchored groups (the first completion of each prompt is the greedy one): how
    many anchors, how many resubmitted their context's program unchanged, how many passed every
    test, and in how many groups some sample (not a forced guide, `guided`) scored above the anchor."""
    groups: dict[str, list[int]] = {}
    for i, prompt in enumerate(prompts):
        groups.setdefault(repr(prompt), []).append(i)
    out = dict.fromkeys(ANCHOR_COUNTS, 0)
    for rows in groups.values():
        first = rows[0]
        out["anchors"] += 1
        out["anchor_unchanged"] += int(first in unchanged)
        mine = rewards[first]
        out["anchor_solved"] += int(first in solved)
        others = [rewards[i] for i in rows[1:] if rewards[i] is not None and i not in guided]
        out["anchor_beaten"] += int(mine is not None and any(r > mine for r in others))
    return out
