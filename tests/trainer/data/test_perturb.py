"""Perturbation: swapping two public expected outputs (stdio and assert-style function
tests), the cases where it is impossible, and contexts re-rendered from real sandbox runs
against the perturbed tests while the dataset row keeps the true problem."""

from __future__ import annotations

import dataclasses
import json
import random

import pytest

from assistant.loop import feedback
from assistant.settings_loader import load_settings
from sandbox.api import TestCase
from tests.trainer.trainer_fakes import RIGHT_SUM, WRONG_SUM, add_problem, session, sum_problem
from trainer.data import context
from trainer.data.build import build
from trainer.data.dataset import BuildStats, select
from trainer.data.dataset_files import load_split, read_meta
from trainer.data.perturb import candidate_pairs, perturb_problem, perturb_with_swap
from trainer.train_settings import load_train_settings


def test_stdio_swap_changes_two_public_outputs_only() -> None:
    problem = sum_problem()
    perturbed = perturb_problem(problem, random.Random(0))
    assert perturbed is not None
    assert [t.output for t in perturbed.public_tests] == ["6\n", "5\n"]
    assert [t.input for t in perturbed.public_tests] == ["2 3\n", "10 -4\n"]
    assert perturbed.hidden_tests == problem.hidden_tests and problem.public_tests[0].output == "5\n"
    assert perturbed.id == problem.id and perturbed.content_hash() != problem.content_hash()


def test_swap_is_between_different_outputs_and_seeded() -> None:
    tests = [TestCase(input=f"{i}\n", output=o) for i, o in enumerate(["1\n", "1  \n", "2\n", "3\n"])]
    problem = dataclasses.replace(sum_problem(), public_tests=tests)
    assert (0, 1) not in candidate_pairs(problem)  # equal once trailing spaces are ignored
    seen = set()
    for seed in range(30):
        found = perturb_with_swap(problem, random.Random(seed))
        assert found is not None
        swapped, swap = found
        assert swapped.public_tests[swap.i].output == swap.expected_j
        seen.add((swap.i, swap.j))
    assert len(seen) > 1
    again = [perturb_with_swap(problem, random.Random(7))[1] for _ in range(2)]  # type: ignore[index]
    assert again[0] == again[1]


def test_function_tests_swap_the_expected_expression() -> None:
    problem = add_problem()
    perturbed = perturb_problem(problem, random.Random(0))
    assert perturbed is not None
    assert [t.code for t in perturbed.public_tests] == ["assert add(1, 2) == 4", "assert add(2, 2) == 3"]
    setup = dataclasses.replace(
        problem,
        public_tests=[
            TestCase(code="x = [1, 2]\nassert add(*x) == 3"),
            TestCase(code="assert add(0, 'é') == 'é'  # note"),
        ],
    )
    swapped = perturb_problem(setup, random.Random(0))
    assert swapped is not None
    assert [t.code for t in swapped.public_tests] == [
        "x = [1, 2]\nassert add(*x) == 'é'",
        "assert add(0, 'é') == 3  # note",
    ]


def test_impossible_perturbations_give_none() -> None:
    same = dataclasses.replace(
        sum_problem(), public_tests=[TestCase(input="1\n", output="2\n"), TestCase(input="3\n", output="2\n")]
    )
    one = dataclasses.replace(sum_problem(), public_tests=[TestCase(input="1\n", output="2\n")])
    not_eq = dataclasses.replace(
        add_problem(), public_tests=[TestCase(code="assert add(1, 2) > 0"), TestCase(code="assert add(1, 1) == 2")]
    )
    pytest_kind = dataclasses.replace(sum_problem(), kind="pytest", public_tests=[], hidden_tests=[])
    for problem in (same, one, not_eq, pytest_kind):
        assert perturb_problem(problem, random.Random(0)) is None


@pytest.mark.docker
def test_contexts_are_rerun_against_perturbed_tests(sandbox) -> None:
    problem = sum_problem()
    traj = session(problem, [0.0, 1.0], "s1", programs=[WRONG_SUM, RIGHT_SUM])
    chosen = select([traj], k=4, max_context=3)
    with_context = [p for p in chosen.train if p.turns]
    stats = BuildStats()
    plans = context.choose(with_context, 1.0, random.Random(0), stats)
    assert len(plans) == 2
    loop = load_settings().loop
    assert context.apply(plans, sandbox, loop, retries=1, wait_s=0, stats=stats) == 2
    two = next(p for p in with_context if len(p.turns) == 2)
    assert two.perturbed and two.feedback_override is not None
    # the right program passed every true public test, but fails the swapped ones
    assert feedback.is_all_passed(two.turns[1].feedback)
    assert two.feedback_override[1] == "Input:\n2 3\nProgram's Output:\n5\nExpected Output:\n6"
    assert "Expected Output:\n6" in two.messages()[-1]["content"]
    row = two.row("train")
    assert json.loads(row["problem"])["public_tests"][0]["output"] == "5\n"  # the reward uses true tests
    assert row["perturbed"] and row["prev_best"] == 1.0  # prev_best comes from the true tests


@pytest.mark.docker
def test_build_perturbs_the_configured_fraction(sandbox, tmp_path) -> None:
    cfg = load_settings()
    settings = load_train_settings(cfg.train, "test")
    settings.dataset.perturb_fraction = 0.5
    problems = [sum_problem(f"sum-{i}") for i in range(4)]
    sessions = [session(p, [0.0, 1.0], f"s{i}", programs=[WRONG_SUM, RIGHT_SUM]) for i, p in enumerate(problems)]
    built = build(sessions, tmp_path / "ds", settings, tokenizer=None, sandbox=sandbox, loop=cfg.loop)
    counts = read_meta(tmp_path / "ds")["counts"]
    assert counts["prompts_partial"] == 8 and counts["prompts_perturbed"] == 4  # half of 8 contexts
    rows = load_split(tmp_path / "ds", "train")
    assert sum(rows["perturbed"]) == 4 and built.train_rows == 12


def test_a_function_context_is_rerun_as_the_loop_graded_it() -> None:
    program = "def add(a, b):\n    return a + b\n\nassert add(2, 2) == 5  # the model's own wrong example\n"
    traj = session(add_problem(), [0.0, 1.0], "s3", programs=[program, program])
    with_context = [p for p in select([traj], k=4, max_context=3).train if p.turns]
    graded = context.choose(with_context, 1.0, random.Random(0))
    assert graded and all("assert add(2, 2) == 5" not in job.program for plan in graded for _, job in plan.jobs)
    whole = context.choose(with_context, 1.0, random.Random(0), sanitize=False)  # loop.sanitize_answers off
    assert all("assert add(2, 2) == 5" in job.program for plan in whole for _, job in plan.jobs)
