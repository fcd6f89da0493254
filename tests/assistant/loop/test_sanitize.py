"""A function answer is graded without the module-level code the model added around it (its own
asserts, prints, example calls, __main__ block), with line numbers kept; its imports, definitions
and constants stay; stdio programs run whole."""

from __future__ import annotations

import pytest

from assistant.loop.public_hidden import run_public_and_hidden
from assistant.loop.sanitize import graded_program, sanitize
from tests.assistant.sample_problems import function_problem

ANSWER = """import math
MOD = 10**9 + 7
SQUARES = [i * i for i in range(4)]
def two_sum(nums, target):
    return [0, 1]
assert two_sum([1, 3, 4, 1], 0) == [0, 2]
print(two_sum([1, 2], 3))
result = two_sum([1], 1)
if __name__ == "__main__":
    print("demo")
"""


def test_only_imports_definitions_and_constants_are_kept_on_their_own_lines() -> None:
    cut = sanitize(ANSWER)
    assert cut.splitlines()[:5] == ANSWER.splitlines()[:5]
    assert len(cut.splitlines()) == len(ANSWER.splitlines())  # blanked, so tracebacks keep their line numbers
    assert "assert" not in cut and "print" not in cut and "result" not in cut and "__main__" not in cut


def test_unparsable_or_clean_answers_are_unchanged_and_stdio_runs_whole() -> None:
    assert sanitize("def f(:\n  pass") == "def f(:\n  pass"
    clean = "def f():\n    return 1\n"
    assert sanitize(clean) == clean
    assert graded_program(ANSWER, "stdio") == ANSWER and graded_program(ANSWER, "function", enabled=False) == ANSWER


@pytest.mark.docker
def test_a_wrong_assert_of_the_models_own_no_longer_fails_the_run(sandbox) -> None:
    problem = function_problem(
        "two-sum",
        "two_sum",
        ["assert two_sum([2, 7], 9) == [0, 1]"],
        ["assert two_sum([3, 3], 6) == [0, 1]"],
        "two_sum",
    )
    raw_public, raw_hidden = run_public_and_hidden(sandbox, problem, ANSWER, sanitize=False)
    public, hidden = run_public_and_hidden(sandbox, problem, ANSWER)
    assert not raw_public.all_passed and not raw_hidden.all_passed
    assert public.all_passed and hidden.all_passed


def test_a_table_the_answer_reads_is_kept_and_a_shared_line_stays_whole() -> None:
    program = (
        "import sys; sys.setrecursionlimit(10000)\n"
        "def sieve(n):\n    return [k for k in range(2, n) if all(k % d for d in range(2, k))]\n"
        "PRIMES = sieve(50)\n"
        "def nth_prime(k):\n    return PRIMES[k]\n"
        "example = nth_prime(0)\n"
        "print(example)\n"
    )
    kept = sanitize(program)
    assert kept.splitlines()[:6] == program.splitlines()[:6]  # the import's line, the table nth_prime reads
    assert kept.splitlines()[6:] == ["", ""]  # an example call of the answer and a print: cut
