"""Helpers for the trainer tests: small problems, stored-looking turns and sessions with
chosen pass rates, a scripted chat client (litellm `mock_response`), and a generation bias
that makes the random tiny model write python blocks, so GRPO on it produces programs the
real sandbox runs."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from assistant.loop import feedback, prompts
from assistant.messages.extract import fence
from assistant.problems.schema import Problem
from assistant.serving.chat import ChatClient
from assistant.store.trajectory import SessionRecord, Turn
from sandbox.api import RunResult, TestCase, TestResult
from tests.assistant import sample_problems
from tests.assistant.loop_fakes import graded

RIGHT_SUM = "print(sum(map(int, input().split())))"
WRONG_SUM = "a, b = map(int, input().split())\nprint(a - b)"
RIGHT_ADD = "def add(a, b):\n    return a + b"
WRONG_ADD = "def add(a, b):\n    return a - b"
# Forges its grading: returns the expected value read from the calling test's constants
# (a hidden canary catches it: sandbox/canary.py).
FORGE_ADD = "import sys\ndef add(a, b):\n    return sys._getframe(1).f_code.co_consts[-2]"


def sum_problem(pid: str = "sum-two") -> Problem:
    """The assistant tests' sum problem, with one more hidden test."""
    return sample_problems.sum_problem(pid, ("7 1\n", "8\n"))


def add_problem(pid: str = "add") -> Problem:
    public = ("assert add(1, 2) == 3", "assert add(2, 2) == 4")
    return sample_problems.add_problem(pid, public, ("assert add(1, 2) == 3", "assert add(-1, 1) == 0"))


def inc_problem() -> Problem:
    """inc(x) -> x + 1: two public asserts, one more hidden."""
    tests = ("assert inc(1) == 2", "assert inc(5) == 6")
    return sample_problems.function_problem(
        "inc", "Write inc(x) that returns x + 1.", tests, (*tests, "assert inc(-1) == 0")
    )


def answer(program: str) -> str:
    return f"Here is my solution.\n\n```python\n{program.strip()}\n```\n"


def result(n_pass: int, n: int, tests: list[TestCase] | None = None) -> RunResult:
    tests = tests or [TestCase(input=f"{i}\n", output=f"{i}\n") for i in range(n)]
    return RunResult(
        tests=[
            TestResult(
                status="passed" if i < n_pass else "failed", input=t.input, expected=t.output, actual="x", code=t.code
            )
            for i, t in enumerate(tests[:n])
        ]
    )


def turn(
    index: int,
    rate: float,
    problem: Problem,
    *,
    program: str | None = "print(1)",
    feedback_text: str | None = None,
    n: int = 4,
) -> Turn:
    """A turn whose program passed `rate` of `n` tests (public = hidden results)."""
    passed = round(rate * n)
    res = result(passed, n) if program is not None else None
    text = feedback_text or (feedback.ALL_PASSED if rate >= 1 else f"Input:\n{index}\nExpected Output:\n{index}")
    return Turn(
        index=index,
        messages=prompts.style().initial_messages(problem),
        reply=answer(program) if program else "no code",
        program=program,
        **graded(text, res, rate, rate),
        created_at=time.time(),
    )


def bare_turn(index: int, program: str | None, **grading: Any) -> Turn:
    """A turn with no context, reply or feedback: its program and the `grading` fields given
    (what the per-turn metrics read)."""
    return Turn(index=index, messages=[], reply="", program=program, feedback="", feedback_message="", **grading)


def session(
    problem: Problem,
    rates: list[float],
    sid: str,
    programs: list[str | None] | None = None,
    source: str = "collect",
    started_at: float | None = None,
) -> SessionRecord:
    programs = programs or [f"print({sid!r}, {i})" for i in range(len(rates))]
    turns = [turn(i, r, problem, program=programs[i]) for i, r in enumerate(rates)]
    for i, t in enumerate(turns):  # each turn's context: the problem and the earlier turns
        t.messages = prompts.style().build(problem, [(e.reply, e.feedback) for e in turns[:i]])
    return SessionRecord(
        id=sid,
        problem_id=problem.id,
        problem_hash=problem.content_hash(),
        model="ref",
        source=source,
        status="passed" if rates and rates[-1] >= 1 else "unsolved",
        started_at=started_at or time.time(),
        turns=turns,
        turn_count=len(turns),
        problem=problem,
    )


class ScriptedClient(ChatClient):
    """Pops one scripted reply per request (litellm's mock_response; the real client path)."""

    def __init__(self, replies: list[str], name: str = "scripted") -> None:
        super().__init__("openai/scripted-model", display_name=name, retries=0, timeout_s=30)
        self.replies = list(replies)

    def request_kwargs(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        if not self.replies:
            raise AssertionError("the model was asked for more replies than were scripted")
        return {"mock_response": self.replies.pop(0)}


def code_bias(model_dir: Path, programs: list[str], bias: float = 12.0) -> list[list[Any]]:
    """`generation_kwargs={"sequence_bias": ...}` that make the random tiny model write one of
        `programs` as a python block (the next token of each answer prefix, right after the generation
    prompt, gets `bias`), with a few
        corrupted tokens now and then: GRPO on the tiny model then produces real programs with
        different rewards. (A LoRA cannot teach the tiny model this: its random lm_head caps
        every logit, and TRL refuses adapters on lm_head.)"""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    start = tok("<|im_start|>assistant\n", add_special_tokens=False)["input_ids"]  # the generation prompt
    entries: dict[tuple[int, ...], float] = {}
    for program in programs:
        ids = tok(fence(program) + "<|im_end|>", add_special_tokens=False)["input_ids"]
        for k in range(len(ids)):  # the whole answer so far is the context: no stray matches
            entries[tuple(start + ids[: k + 1])] = bias
    return [[list(key), value] for key, value in entries.items()]
