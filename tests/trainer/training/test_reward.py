"""The bandit reward: every branch of `score` (docs/method.md), the format checks, and the
TRL reward function with its sandbox-fault handling (fake runner) and on the real sandbox."""

from __future__ import annotations

import json

import pytest

from sandbox.api import Limits, RunResult, SandboxError, TestResult
from tests.trainer.trainer_fakes import RIGHT_SUM, WRONG_SUM, answer, sum_problem
from trainer.train_settings import RewardSettings
from trainer.training.reward import SandboxReward, completion_text, format_problems, overlong_penalty, score

OK = answer("print(1)")
TWO_BLOCKS = "```python\nprint(1)\n```\nor\n```python\nprint(2)\n```"


@pytest.mark.parametrize(
    "p, prev, expected",
    [
        (1.0, 0.0, 1.0),  # R_correct: all tests pass
        (1.0, 0.5, 1.0),  # no R_improve once p = 1
        (0.75, 0.0, 0.2),  # p >= 0.5
        (0.5, 0.0, 0.2),  # boundary p = 0.5
        (0.25, 0.0, 0.0),  # 0 < p < 0.5
        (0.0, 0.0, -0.1),  # p = 0
        (0.75, 0.5, 0.25),  # improved: 0.2 + 0.1 * 0.25 / 0.5
        (0.4, 0.2, 0.025),  # improved below 0.5: 0 + 0.1 * 0.2 / 0.8
        (0.5, 0.5, -0.1),  # not improved (equal): -0.1 + 0
        (0.25, 0.5, -0.15),  # worse: -0.1 + 0.1 * (-0.25) / 0.5
        (0.0, 0.5, -0.2),  # fell to zero: the floor of R_improve
        (0.5, 1.0, -0.15),  # an earlier turn was fully correct, this one is not
    ],
)
def test_score_correctness_and_improvement(p: float, prev: float, expected: float) -> None:
    assert score(OK, p, prev) == pytest.approx(expected)


def test_no_code_block_is_minus_one_whatever_the_pass_rate() -> None:
    assert score("I would add the numbers.", 1.0, 0.0) == -1.0
    assert score("```python\n\n```", 1.0, 0.0) == -1.0  # an empty block is no program
    assert score("```python\nprint(1)", 1.0, 0.0) == -1.0  # an unclosed block is not a block


def test_more_than_one_block_is_malformed() -> None:
    assert format_problems(TWO_BLOCKS) == ["more than one code block"]
    assert score(TWO_BLOCKS, 1.0, 0.0) == pytest.approx(0.1)
    assert score(TWO_BLOCKS, 0.0, 0.0) == pytest.approx(-1.0)
    assert score(TWO_BLOCKS, 0.0, 0.5) == -1.0  # -0.9 - 0.2 clipped
    # a non-python block next to the program is fine
    assert score("```text\n3\n```\n" + OK, 1.0, 0.0) == 1.0


def test_degenerate_repetition_is_malformed() -> None:  # boundaries: tests/assistant/test_repetition.py
    block = "x = compute(value) + 1  # again\n"  # 32 characters
    long_repeat = answer("print(1)") + "\n" + block * 9
    assert score(long_repeat, 1.0, 0.0) == pytest.approx(0.1)
    assert score(block * 3 + answer("print(1)"), 1.0, 0.0) == 1.0


def test_thinking_format() -> None:
    good = "<think>plan</think>\n" + OK
    assert score(good, 1.0, 0.0, thinking=True) == 1.0
    assert score(OK, 1.0, 0.0, thinking=True) == pytest.approx(0.1)  # missing </think>
    twice = "<think>a</think> b </think>\n" + OK
    assert format_problems(twice, thinking=True) == ["repeated </think>"]
    assert score(twice, 1.0, 0.0, thinking=True) == pytest.approx(0.1)
    only_in_thoughts = "<think>" + OK + "</think> done"
    assert score(only_in_thoughts, 1.0, 0.0, thinking=True) == -1.0
    assert score(good, 1.0, 0.0, thinking=False) == 1.0  # a non-thinking model may write the tag


def test_length_penalty_and_clipping() -> None:
    assert overlong_penalty(100, 256, 64, 0.5) == 0.0
    assert overlong_penalty(224, 256, 64, 0.5) == pytest.approx(-0.25)
    assert overlong_penalty(300, 256, 64, 0.5) == pytest.approx(-0.5)
    assert overlong_penalty(300, 256, 64, 0.0) == 0.0
    assert score(OK, 1.0, 0.0, length_penalty=-0.5) == pytest.approx(0.5)
    assert score(TWO_BLOCKS, 0.0, 0.0, length_penalty=-0.5) == -1.0


class FlakyRunner:
    """Faults the first `faults` runs of each program listed in `bad`; `always` never heals."""

    def __init__(self, bad: set[str], faults: int = 1, always: bool = False) -> None:
        self.bad, self.faults, self.always = bad, faults, always
        self.calls: list[int] = []
        self.seen: dict[str, int] = {}

    def run_many(self, jobs):
        self.calls.append(len(jobs))
        out = []
        for job in jobs:
            self.seen[job.program] = self.seen.get(job.program, 0) + 1
            if job.program.strip() in self.bad and (self.always or self.seen[job.program] <= self.faults):
                out.append(RunResult(sandbox_error="container vanished"))
            else:
                passed = job.program.strip() == RIGHT_SUM
                out.append(RunResult(tests=[TestResult(status="passed" if passed else "failed") for _ in job.tests]))
        return out


def _call(
    reward: SandboxReward, replies: list[str], prev: float = 0.0, context: list | None = None
) -> list[float | None]:
    blob = json.dumps(sum_problem().to_dict())
    completions = [[{"role": "assistant", "content": r}] for r in replies]
    return reward(
        prompts=[context or []] * len(replies),
        completions=completions,
        problem=[blob] * len(replies),
        prev_best=[prev] * len(replies),
    )


def test_reward_function_retries_faults_and_drops_persistent_ones() -> None:
    runner = FlakyRunner({WRONG_SUM}, faults=1)
    reward = SandboxReward(runner, RewardSettings(sandbox_retries=2, retry_wait_s=0))
    out = _call(reward, [answer(RIGHT_SUM), answer(WRONG_SUM), "no code", answer(RIGHT_SUM)])
    assert out == [1.0, -0.1, -1.0, 1.0]  # the fault was retried, never scored as a failure
    assert runner.calls == [2, 1]  # identical programs ran once; only the faulted one re-ran
    assert reward.totals["faults_dropped"] == 0 and reward.totals["reruns"] == 1
    runner = FlakyRunner({WRONG_SUM}, always=True)
    reward = SandboxReward(runner, RewardSettings(sandbox_retries=2, retry_wait_s=0))
    out = _call(reward, [answer(RIGHT_SUM), answer(WRONG_SUM)], prev=0.5)
    assert out == [1.0, None]  # None: TRL treats the sample as unscorable
    assert reward.totals["faults_dropped"] == 1 and runner.calls == [2, 1, 1]


def test_reward_function_raises_when_the_sandbox_is_down() -> None:
    runner = FlakyRunner({RIGHT_SUM, WRONG_SUM}, always=True)
    reward = SandboxReward(runner, RewardSettings(sandbox_retries=1, retry_wait_s=0))
    with pytest.raises(SandboxError, match="every one of 2 programs"):
        _call(reward, [answer(RIGHT_SUM), answer(WRONG_SUM)])


@pytest.mark.docker
def test_reward_function_on_the_real_sandbox(sandbox) -> None:
    reward = SandboxReward(sandbox, RewardSettings(retry_wait_s=0), limits=Limits(timeout_s=3.0))
    two = "a, b = map(int, input().split())\nprint(a + b if a > 5 else 1)"  # 2 of 5 tests
    three = "a, b = map(int, input().split())\nprint(a + b if a > 1 else 9)"  # 3 of 5 tests
    crash = "raise SystemExit(3)"
    slow = "while True:\n    pass"
    out = _call(
        reward,
        [answer(RIGHT_SUM), answer(WRONG_SUM), answer(two), answer(three), answer(crash), answer(slow), TWO_BLOCKS],
    )
    # p is the pass rate on all tests: public + hidden, each distinct test once (5 tests)
    assert out[0] == 1.0
    assert out[1] == pytest.approx(0.0)  # a - b passes only "0 0": p = 0.2
    assert out[2] == pytest.approx(0.0)  # p = 0.4
    assert out[3] == pytest.approx(0.2)  # p = 0.6
    assert out[4] == pytest.approx(-0.1)  # a crash is a failure, not a fault
    assert out[5] == pytest.approx(-0.1)  # a timeout is a failure, not a fault
    assert out[6] == pytest.approx(-0.9 - 0.1)  # two blocks: the last one runs (print(2): p = 0)
    assert reward.totals["faults_dropped"] == 0 and reward.totals["programs_run"] == 7
    improved = _call(reward, [answer(three)], prev=0.4)
    assert improved == [pytest.approx(0.2 + 0.1 * 0.2 / 0.6)]


@pytest.mark.docker
def test_an_unchanged_failing_resubmission_loses_the_unchanged_penalty(sandbox) -> None:
    three = "a, b = map(int, input().split())\nprint(a + b if a > 1 else 9)"  # 3 of 5 tests
    two = "a, b = map(int, input().split())\nprint(a + b if a > 5 else 1)"  # 2 of 5 tests
    context = [
        {"role": "user", "content": "the task"},
        {"role": "assistant", "content": answer(three)},
        {"role": "user", "content": "Input: 1 1 ..."},
    ]
    again = answer("a, b = map(int, input().split())\n\n# the same\nprint(a + b if a > 1 else 9)")
    replies = [again, answer(two), answer(RIGHT_SUM)]
    paper = SandboxReward(sandbox, RewardSettings(retry_wait_s=0), limits=Limits(timeout_s=3.0))
    plain = _call(paper, replies, prev=0.6, context=context)
    assert plain == [pytest.approx(-0.1), pytest.approx(-0.1 + 0.1 * -0.2 / 0.6), 1.0]  # unchanged beats worse
    assert paper.totals["unchanged"] == 1  # counted (same syntax tree), not penalised
    shaped = SandboxReward(sandbox, RewardSettings(retry_wait_s=0, unchanged_penalty=0.2), limits=Limits(timeout_s=3.0))
    out = _call(shaped, replies, prev=0.6, context=context)
    assert out == [pytest.approx(-0.3), plain[1], 1.0]  # now below any change
    assert _call(shaped, [answer(three)], prev=0.6) == [pytest.approx(-0.1)]  # no earlier program: no penalty
    correct_context = [context[0], {"role": "assistant", "content": answer(RIGHT_SUM)}, context[2]]
    assert _call(shaped, [answer(RIGHT_SUM)], prev=1.0, context=correct_context) == [1.0]  # correct kept: fine


@pytest.mark.docker
def test_a_forging_program_gets_minus_one_and_is_counted(sandbox) -> None:
    from tests.trainer.trainer_fakes import FORGE_ADD, RIGHT_ADD, WRONG_ADD, add_problem

    reward = SandboxReward(sandbox, RewardSettings(retry_wait_s=0), limits=Limits(timeout_s=3.0))
    replies = [answer(RIGHT_ADD), answer(WRONG_ADD), answer(FORGE_ADD)]
    blob = json.dumps(add_problem().to_dict())
    out = reward(
        prompts=[[]] * 3,
        completions=[[{"role": "assistant", "content": r}] for r in replies],
        problem=[blob] * 3,
        prev_best=[0.0] * 3,
    )
    assert out == [1.0, pytest.approx(-0.1), -1.0]
    assert reward.totals["tampered"] == 1 and reward.totals["flagged"] == 1
    assert score(answer(FORGE_ADD), 1.0, 0.0, tampered=True) == -1.0


def test_trajectory_reward_gives_minus_one_to_a_tampered_trajectory() -> None:
    from trainer.training.rollout import trajectory_reward

    replies = [answer("print(1)"), answer("print(2)")]
    out = trajectory_reward(
        [[]] * 2,
        replies,
        final_reply=replies,
        final_pass=[1.0, 1.0],
        rollout_prev_best=[0.0, 0.0],
        final_tampered=[False, True],
    )
    assert out == [1.0, -1.0]
    assert trajectory_reward([[]], replies[:1], final_reply=replies[:1], final_pass=[1.0], rollout_prev_best=[0.0]) == [
        1.0
    ]  # older rollouts without the field
    faulted = trajectory_reward(
        [[]] * 2,
        replies,
        final_reply=replies,
        final_pass=[0.0, 1.0],
        rollout_prev_best=[0.0, 0.0],
        final_faulted=[True, False],
    )
    assert faulted == [None, 1.0]  # a sandbox fault is unscorable, not a failing program's -0.1


def test_the_own_reward_leaves_out_the_guide_rows() -> None:
    """A guided group's last row is the reference program forced in: its reward is not a sample's,
    so `reward/own_mean` (the curve a run is read by) leaves it out; TRL's `reward` keeps it."""
    from trainer.training.reward import guide_rows

    reward = SandboxReward(FlakyRunner(set()), RewardSettings(retry_wait_s=0))
    blob = json.dumps(sum_problem().to_dict())
    replies = [answer(WRONG_SUM), answer(WRONG_SUM), answer(RIGHT_SUM), "no code", answer(RIGHT_SUM)]
    prompts = [[{"role": "user", "content": "p1"}]] * 3 + [[{"role": "user", "content": "p2"}]] * 2
    guide = [answer(RIGHT_SUM)] * 3 + [""] * 2  # p1 is guided (its last row is the guide), p2 is not
    logged: dict[str, float] = {}
    out = reward(
        prompts=prompts,
        completions=[[{"role": "assistant", "content": r}] for r in replies],
        problem=[blob] * 5,
        prev_best=[0.0] * 5,
        guide=guide,
        log_metric=logged.__setitem__,
    )
    texts = [completion_text([{"role": "assistant", "content": r}]) for r in replies]
    assert guide_rows(prompts, guide, texts) == {2} and guide_rows([["p"]], ["g"], ["g"]) == set()  # one row: none
    not_forced = texts[:2] + [answer(WRONG_SUM)] + texts[3:]  # a guide too long to force: the policy's own row
    assert guide_rows(prompts, guide, not_forced) == set()
    assert logged["reward/own_mean"] == pytest.approx((out[0] + out[1] + out[3] + out[4]) / 4)
    assert logged["reward/guide_share"] == pytest.approx(0.2)


def test_a_forced_guide_does_not_count_as_a_sample_beating_the_greedy_anchor() -> None:
    from trainer.training.reward import anchor_counts

    prompts, rewards = [["p"]] * 3, [0.0, -0.1, 1.0]  # the greedy anchor, a sample, the forced guide
    assert anchor_counts(prompts, rewards, set(), set())["anchor_beaten"] == 1
    assert anchor_counts(prompts, rewards, set(), set(), {2})["anchor_beaten"] == 0


def test_the_reward_grades_answers_as_the_loop_settings_say() -> None:
    """With `loop.sanitize_answers: false` the sessions and eval grade a function answer whole; the
    reward did not (a module-level assert that fails was cut away in training only)."""
    from tests.assistant.sample_problems import add_problem

    program = "def add(a, b):\n    return a + b\n\nassert add(1, 1) == 3\n"
    blob = json.dumps(add_problem().to_dict())
    for sanitize, whole in ((True, False), (False, True)):
        runner = FlakyRunner(set())
        reward = SandboxReward(runner, RewardSettings(retry_wait_s=0), sanitize=sanitize)
        reward(
            prompts=[[]],
            completions=[[{"role": "assistant", "content": answer(program)}]],
            problem=[blob],
            prev_best=[0.0],
        )
        (graded,) = runner.seen
        assert ("assert add(1, 1) == 3" in graded) is whole
