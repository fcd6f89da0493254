"""The chat prompts (DESIGN.md §5), one builder for inference, dataset building and
evaluation: a prompt that differs between training and serving is a bug.

    messages = build(problem, [(reply_0, feedback_0), (reply_1, feedback_1), ...])

gives the context for the next turn: system, first user turn, then for each earlier turn
the assistant reply (only the text after `</think>`) and the feedback turn. The loop
(`continued`, from its stored turns), the exported records, the dataset builder (`build`)
and the multi-turn rollout (`extend`) all go through these functions, so they send the
same messages for the same history. This module formats text only; it does not run
programs or call models.
"""

from __future__ import annotations

from typing import Sequence

from assistant.extract import after_thinking
from assistant.problems import Problem
from assistant.trajectory import Message, Turn

SYSTEM_PROMPT = """You are a careful Python programming assistant who helps the user solve coding problems.

Your code runs in a sandbox and must follow these rules:
R1. Stay within the time and memory limits; avoid deep recursion and heavy memory use.
R2. Do not start processes, send signals, or run shell commands.
R3. Do not touch the filesystem outside the current working directory; there is no network.
R4. Use only the Python standard library.""".strip()

ANSWER_FORMAT = ("First reason step by step about the problem and your approach. Then write "
                 "exactly one fenced ```python code block holding the complete program; do not "
                 "split the program over several blocks and do not leave parts for the user to fill in.")

FEEDBACK_PREFIX = """Think step by step and fix any issues in your previous Python code so that it is correct.
Use the feedback below to trace the execution of your previous code, point to the parts of it that caused the problem, and explain how you will change them.
Then write one complete, corrected program in a single ```python code block. Do NOT give partial changes or an outline.

Here is the execution feedback:
"""

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


def system_message() -> Message:
    return {"role": "system", "content": SYSTEM_PROMPT}


def first_user_content(problem: Problem) -> str:
    """The first user turn: how the program is run, the answer format, the statement."""
    how = RUN_DESCRIPTION[problem.kind].format(
        entry_point=problem.entry_point, target_file=problem.target_file,
        test_command=problem.test_command)
    parts = [f"Solve the following problem in Python. {how}", ANSWER_FORMAT,
             "Here is the problem you need to solve:", problem.statement.strip()]
    starter = problem.starter_code.strip()
    if starter and starter not in problem.statement:
        label = "Current content of the file" if problem.kind == "pytest" else "Starter code"
        parts.append(f"{label}:\n```python\n{starter}\n```")
    return "\n\n".join(parts)


def initial_messages(problem: Problem) -> list[Message]:
    return [system_message(), {"role": "user", "content": first_user_content(problem)}]


def feedback_content(feedback_text: str) -> str:
    """The user turn that carries execution feedback back to the model."""
    return FEEDBACK_PREFIX + feedback_text


def feedback_message(feedback_text: str) -> Message:
    return {"role": "user", "content": feedback_content(feedback_text)}


def assistant_message(reply: str) -> Message:
    """A reply as it stays in the context: only the text after `</think>`."""
    return {"role": "assistant", "content": after_thinking(reply)}


def extend(messages: list[Message], reply: str, feedback_text: str) -> list[Message]:
    """`messages` followed by one more turn: its reply and the feedback turn after it."""
    return [*messages, assistant_message(reply), feedback_message(feedback_text)]


def build(problem: Problem, history: Sequence[tuple[str, str]]) -> list[Message]:
    """The messages for the next turn, given earlier (reply, feedback text) pairs."""
    messages = initial_messages(problem)
    for reply, feedback_text in history:
        messages = extend(messages, reply, feedback_text)
    return messages


def continued(problem: Problem, turns: Sequence[Turn]) -> list[Message]:
    """The messages after stored `turns`: the context the last one was sent, its reply and
    its feedback turn as stored. For turns the loop made this equals `build(problem,
    [(t.reply, t.feedback) ...])`; an imported conversation continues as it was recorded."""
    if not turns:
        return initial_messages(problem)
    last = turns[-1]
    return [*last.messages, assistant_message(last.reply), {"role": "user", "content": last.feedback_message}]


def feedback_of(content: str) -> str:
    """The feedback text inside a feedback turn (the whole text if it has no prefix)."""
    marker = "Here is the execution feedback:"
    return content.split(marker, 1)[1].lstrip("\n") if marker in content else content
