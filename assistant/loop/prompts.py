"""The chat prompts (docs/method.md), one builder for inference, dataset building and
evaluation: a prompt that differs between training and serving is a bug.

    messages = style_for(settings.loop).build(problem, [(reply_0, feedback_0), ...])

gives the context for the next turn: system, first user turn, then for each earlier turn
the assistant reply (only the text after `</think>`) and the feedback turn. The words of
the first turn's answer format and of the feedback turn are a `PromptStyle`, named by
`loop.answer_format` and `loop.feedback_wording` in configs/prompts.yaml (read once into the
typed `assistant.config_files.PromptCatalog`). The loop
(`continued`, from its stored turns), the exported records, the dataset builder (`build`)
and the multi-turn rollout (`extend`) all take the configured style, so they send the
same messages for the same history. This module formats text only; it does not run
programs or call models.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Sequence

from assistant.config_files import PROMPTS_YAML, PromptError, prompt_catalog
from assistant.messages.extract import after_thinking
from assistant.messages.shapes import Message
from assistant.problems.schema import Problem
from assistant.settings import DEFAULT_ANSWER_FORMAT, DEFAULT_FEEDBACK_WORDING, LoopSettings
from assistant.store.trajectory import Turn

MARKER = "Here is the execution feedback:"

SYSTEM_PROMPT = """You are a careful Python programming assistant who helps the user solve coding problems.

Your code runs in a sandbox and must follow these rules:
R1. Stay within the time and memory limits; avoid deep recursion and heavy memory use.
R2. Do not start processes, send signals, or run shell commands.
R3. Do not touch the filesystem outside the current working directory; there is no network.
R4. Use only the Python standard library.""".strip()

RUN_DESCRIPTION = {
    "stdio": "Your program reads its input from standard input and writes its answer to "
    "standard output. Do not print anything else.",
    "function": "Your code defines the function `{entry_point}`; the tests import nothing and "
    "call it directly (for example in `assert` statements). Include every import "
    "and helper it needs; do not read input or print.",
    "pytest": "Your answer replaces the whole file `{target_file}` of a project; the project's "
    "tests are run with `{test_command}`. Keep the file's public names and behaviour "
    "that the tests rely on.",
}


def answer_formats(path: Path = PROMPTS_YAML) -> dict[str, str]:
    """The named answer-format paragraphs of configs/prompts.yaml."""
    return dict(prompt_catalog(path).answer_formats)


@lru_cache(maxsize=8)
def feedback_wordings(path: Path = PROMPTS_YAML) -> dict[str, tuple[str, str]]:
    """The named feedback wordings of configs/prompts.yaml as (prefix, suffix); PromptError
    (one sentence) names a wording whose prefix does not end with the marker."""
    out = {}
    for name, spec in prompt_catalog(path).feedback_wordings.items():
        if not spec.prefix.rstrip().endswith(MARKER):
            raise PromptError(f"the feedback wording {name!r} must end its prefix with {MARKER!r}")
        out[name] = (spec.prefix, spec.suffix)
    return out


@dataclass(frozen=True)
class PromptStyle:
    """The words of one prompt style: the first turn's answer format and the feedback turn's
    wording, with their names (as in configs/prompts.yaml)."""

    answer_format_name: str
    feedback_wording_name: str
    answer_format: str
    feedback_prefix: str
    feedback_suffix: str = ""

    def first_user_content(self, problem: Problem) -> str:
        """The first user turn: how the program is run, the answer format, the statement."""
        how = RUN_DESCRIPTION[problem.kind].format(
            entry_point=problem.entry_point, target_file=problem.target_file, test_command=problem.test_command
        )
        parts = [
            f"Solve the following problem in Python. {how}",
            self.answer_format,
            "Here is the problem you need to solve:",
            problem.statement.strip(),
        ]
        starter = problem.starter_code.strip()
        if starter and starter not in problem.statement:
            label = "Current content of the file" if problem.kind == "pytest" else "Starter code"
            parts.append(f"{label}:\n```python\n{starter}\n```")
        return "\n\n".join(parts)

    def initial_messages(self, problem: Problem) -> list[Message]:
        return [system_message(), {"role": "user", "content": self.first_user_content(problem)}]

    def feedback_content(self, feedback_text: str) -> str:
        """The user turn that carries execution feedback back to the model."""
        return self.feedback_prefix + feedback_text + self.feedback_suffix

    def feedback_message(self, feedback_text: str) -> Message:
        return {"role": "user", "content": self.feedback_content(feedback_text)}

    def extend(self, messages: list[Message], reply: str, feedback_text: str) -> list[Message]:
        """`messages` followed by one more turn: its reply and the feedback turn after it."""
        return [*messages, assistant_message(reply), self.feedback_message(feedback_text)]

    def build(self, problem: Problem, history: Sequence[tuple[str, str]]) -> list[Message]:
        """The messages for the next turn, given earlier (reply, feedback text) pairs."""
        messages = self.initial_messages(problem)
        for reply, feedback_text in history:
            messages = self.extend(messages, reply, feedback_text)
        return messages

    def continued(self, problem: Problem, turns: Sequence[Turn]) -> list[Message]:
        """The messages after stored `turns`: the context the last one was sent, its reply
        and its feedback turn as stored. For turns the loop made this equals `build(problem,
        [(t.reply, t.feedback) ...])`; an imported conversation continues as it was recorded."""
        if not turns:
            return self.initial_messages(problem)
        last = turns[-1]
        return [*last.messages, assistant_message(last.reply), {"role": "user", "content": last.feedback_message}]


@lru_cache(maxsize=32)
def style(
    answer_format: str = DEFAULT_ANSWER_FORMAT,
    feedback_wording: str = DEFAULT_FEEDBACK_WORDING,
    path: Path = PROMPTS_YAML,
) -> PromptStyle:
    """The prompt style with these names (configs/prompts.yaml); PromptError names a bad one."""
    text = prompt_catalog(path).answer_format(answer_format)
    prompt_catalog(path).feedback_wording(feedback_wording)  # PromptError for an unknown name
    prefix, suffix = feedback_wordings(path)[feedback_wording]
    return PromptStyle(answer_format, feedback_wording, text, prefix, suffix)


def wording_for(loop: LoopSettings | None, model: str | None = None, path: Path = PROMPTS_YAML) -> str:
    """The feedback wording a session of `model` (a built-in model's name) uses:
    `loop.feedback_wording` when set, else the model's own (configs/prompts.yaml
    `model_wordings`), else the default."""
    if loop is not None and loop.feedback_wording:
        return loop.feedback_wording
    return prompt_catalog(path).model_wordings.get(model or "", DEFAULT_FEEDBACK_WORDING)


def style_for(loop: LoopSettings | None, model: str | None = None) -> PromptStyle:
    """The style the configured loop uses for `model` (`loop.answer_format`, `wording_for`); the
    default answer format without a loop."""
    answer = loop.answer_format if loop is not None else DEFAULT_ANSWER_FORMAT
    return style(answer, wording_for(loop, model))


def system_message() -> Message:
    return {"role": "system", "content": SYSTEM_PROMPT}


def assistant_message(reply: str) -> Message:
    """A reply as it stays in the context: only the text after `</think>`."""
    return {"role": "assistant", "content": after_thinking(reply)}


def feedback_of(content: str) -> str:
    """The feedback text inside a feedback turn of any configured wording: after the marker,
    without the wording's suffix (the whole text if it has no marker)."""
    if MARKER not in content:
        return content
    text = content.split(MARKER, 1)[1].lstrip("\n")
    for _prefix, suffix in feedback_wordings().values():
        if suffix and text.endswith(suffix):
            return text[: -len(suffix)]
    return text
