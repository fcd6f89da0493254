"""The multi-turn baseline of `cobalt bench train` grades each turn's program as the bandit's
reward does (trainer/training/rollout.py)."""

from __future__ import annotations

from assistant.loop.sanitize import graded_program
from tests.assistant.sample_problems import add_problem, sum_problem
from trainer.training.rollout import graded_job


def test_a_function_answers_own_wrong_example_does_not_fail_it_on_either_side() -> None:
    answer = "def add(a, b):\n    return a + b\n\nassert add(1, 1) == 3\n"
    job = graded_job(answer, add_problem())
    assert job.program == graded_program(answer, "function") and "assert add(1, 1) == 3" not in job.program
    assert job.kind == "function" and [t.code for t in job.tests] == [t.code for t in add_problem().all_tests()]
    stdio = "print(sum(map(int, input().split())))\n"
    assert graded_job(stdio, sum_problem()).program == stdio  # a whole program runs as written
