"""The multi-turn online GRPO baseline for `cobalt bench train`: a TRL `rollout_func` that
rolls out whole T-turn trajectories with the current policy (generate -> extract -> run
the public tests in the sandbox -> feedback -> next turn, stopping once every public test
passes), so its cost per example can be compared with the bandit's single step.

The completion is every turn's reply plus the feedback turns between them; feedback tokens
carry `env_mask` 0 so only the model's own tokens are trained. The reward is `score` of the
last turn (pass rate on all tests, prev = best earlier turn). Prompts and feedback come from
`assistant.loop.prompts` / `assistant.loop.feedback`, as at serving time. Benchmark code, not used by
the nightly job.
"""

from __future__ import annotations

import json
from typing import Any

from assistant.interfaces import BatchRunner
from assistant.loop import feedback, prompts
from assistant.loop.prompts import PromptStyle
from assistant.loop.sanitize import graded_program
from assistant.messages import extract
from assistant.problems.schema import Problem
from sandbox.api import Job, RunResult
from trainer.training.execution import run_with_retries
from trainer.training.reward import score


def graded_job(program: str, problem: Problem) -> Job:
    """The sandbox job of one turn's program, graded as the bandit's reward grades it (the answer
    sanitized: a function answer's own example asserts do not fail it), so the two sides of
    `cobalt bench train` score the same programs alike."""
    return Job(program=graded_program(program, problem.kind), tests=problem.all_tests(), kind=problem.kind)


class MultiTurnRollout:
    def __init__(
        self,
        problems: dict[str, Problem],
        sandbox: BatchRunner,
        tokenizer: Any,
        turns: int,
        max_new_tokens: int,
        temperature: float = 1.0,
        style: PromptStyle | None = None,
    ) -> None:
        """`tokenizer` may be set later (to the trainer's processing class); feedback turns
        are written in `style` (default: prompts.style())."""
        self.style = style or prompts.style()
        self.problems = problems  # keyed by `prompt_key(first-turn messages)`
        self.sandbox, self.tok, self.turns = sandbox, tokenizer, turns
        self.max_new_tokens, self.temperature = max_new_tokens, temperature
        self.turns_generated = 0

    @staticmethod
    def prompt_key(messages: list[dict[str, str]]) -> str:
        return json.dumps(messages, sort_keys=True, ensure_ascii=False)

    def _template(self, messages: list[dict[str, str]], generation: bool) -> str:
        return self.tok.apply_chat_template(messages, add_generation_prompt=generation, tokenize=False)

    def _encode(self, text: str) -> list[int]:
        return self.tok(text, add_special_tokens=False)["input_ids"]

    def _generate(self, model: Any, contexts: list[list[int]]) -> list[list[int]]:
        import torch

        pad = self.tok.pad_token_id
        width = max(len(c) for c in contexts)
        ids = torch.tensor([[pad] * (width - len(c)) + c for c in contexts])
        mask = torch.tensor([[0] * (width - len(c)) + [1] * len(c) for c in contexts])
        with torch.no_grad():
            out = model.generate(
                input_ids=ids.to(model.device),
                attention_mask=mask.to(model.device),
                do_sample=True,
                temperature=self.temperature,
                max_new_tokens=self.max_new_tokens,
                pad_token_id=pad,
                eos_token_id=self.tok.eos_token_id,
            )
        replies = []
        for row in out[:, width:].tolist():
            if self.tok.eos_token_id in row:
                row = row[: row.index(self.tok.eos_token_id) + 1]
            replies.append([t for t in row if t != pad])
        self.turns_generated += len(contexts)
        return replies

    def __call__(self, batch: list[list[dict[str, str]]], trainer: Any) -> dict[str, Any]:
        model = trainer.accelerator.unwrap_model(trainer.model)
        was_training = model.training
        model.eval()
        n = len(batch)
        problems = [self.problems[self.prompt_key(p)] for p in batch]
        messages = [list(p) for p in batch]
        prompt_ids = [self._encode(self._template(m, True)) for m in messages]
        completion: list[list[int]] = [[] for _ in range(n)]
        env_mask: list[list[int]] = [[] for _ in range(n)]
        last_reply, best, last_pass = [""] * n, [0.0] * n, [0.0] * n
        prev_best = [0.0] * n
        tampered = [False] * n  # some turn's program forged its grading (a hidden canary passed)
        faulted = [False] * n  # the sandbox failed on a turn's program even after a retry: no score
        active = list(range(n))
        for turn in range(self.turns):
            replies = self._generate(model, [prompt_ids[i] + completion[i] for i in active])
            texts = [self.tok.decode(r, skip_special_tokens=True) for r in replies]
            programs = [extract.code(t) for t in texts]
            runnable = [k for k, p in enumerate(programs) if p]
            jobs = [graded_job(programs[k] or "", problems[active[k]]) for k in runnable]
            ran, _ = run_with_retries(self.sandbox, jobs, 1, 0.5) if jobs else ([], 0)
            results: list[Any] = [None] * len(active)
            for k, res in zip(runnable, ran):
                results[k] = res
            still = []
            for i, ids, text, program, result in zip(active, replies, texts, programs, results):
                rate = result.pass_rate if (program and result) else 0.0
                prev_best[i], last_reply[i], last_pass[i] = best[i], text, rate
                best[i] = max(best[i], rate)
                tampered[i] = tampered[i] or bool(program and result and result.tampered)
                body = ids[:-1] if ids and ids[-1] == self.tok.eos_token_id else ids
                completion[i] += body
                env_mask[i] += [1] * len(body)
                public = self._public(problems[i], result) if program and result else None
                done = public is not None and public.all_passed
                faulted[i] = bool(program) and result is None  # not a failure: the trajectory ends unscored
                if turn == self.turns - 1 or done or faulted[i]:
                    completion[i].append(self.tok.eos_token_id)
                    env_mask[i].append(1)
                    continue
                text_fb = feedback.NO_CODE if public is None else feedback.render(public)
                bridge = self._bridge(messages[i], text, text_fb)
                completion[i] += bridge
                env_mask[i] += [0] * len(bridge)
                messages[i] = self.style.extend(messages[i], text, text_fb)
                still.append(i)
            active = still
            if not active:
                break
        if was_training:
            model.train()
        return {
            "prompt_ids": prompt_ids,
            "completion_ids": completion,
            "logprobs": None,
            "env_mask": env_mask,
            "final_reply": last_reply,
            "final_pass": last_pass,
            "rollout_prev_best": prev_best,
            "final_tampered": tampered,
            "final_faulted": faulted,
        }

    @staticmethod
    def _public(problem: Problem, result: Any) -> Any:
        """The public-test part of a run on all tests (public tests come first)."""
        keys = {json.dumps(t.to_dict(), sort_keys=True) for t in problem.public_tests}
        union = problem.all_tests()
        tests = [r for t, r in zip(union, result.tests) if json.dumps(t.to_dict(), sort_keys=True) in keys]
        return RunResult(tests=tests, compile_error=result.compile_error)

    def _bridge(self, messages: list[dict[str, str]], reply: str, text_fb: str) -> list[int]:
        """Tokens between a reply's last token and the next reply: end of turn, feedback turn,
        generation prompt (rendered by the chat template)."""
        with_reply = messages + [prompts.assistant_message(reply)]
        before = self._template(with_reply, False)
        after = self._template(with_reply + [self.style.feedback_message(text_fb)], True)
        content = with_reply[-1]["content"]
        cut = before.rfind(content) + len(content) if content else len(before)
        return self._encode(after[cut:])


def trajectory_reward(
    prompts: list[Any],
    completions: list[Any],
    *,
    final_reply: list[str],
    final_pass: list[float],
    rollout_prev_best: list[float],
    final_tampered: list[bool] | None = None,
    final_faulted: list[bool] | None = None,
    **_: Any,
) -> list[float | None]:
    """The baseline's reward: `score` of the last turn of each trajectory; None (unscorable, as the
    bandit's reward drops a sandbox fault) for one whose last program the sandbox could not run."""
    forged = final_tampered or [False] * len(final_reply)  # a trajectory with a tampered turn gets -1
    faults = final_faulted or [False] * len(final_reply)
    return [
        None if f else score(text, p, prev, tampered=bool(t))
        for text, p, prev, t, f in zip(final_reply, final_pass, rollout_prev_best, forged, faults)
    ]
