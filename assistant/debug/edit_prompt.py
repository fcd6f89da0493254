"""The prompt of one debugging turn, rebuilt each turn from the file as it stands: the failing test
(name, message, short traceback, its source), the implicated code in full and the rest of the file
as an outline, and how to answer. It is sized to the served model's context with room for the
answer: the traceback is cut, then the test's source is left out, then fewer spans are shown in
full, then the outline is thinned; a file whose implicated code cannot fit even so is refused in
one sentence (`DoesNotFit`). A budget may also carry a softer cap, the tokens the model can read
before the run's deadline (assistant/debug/turn_pace.py): the first prompt within it is taken, and
when none is, the shortest that fits the context and still shows the most suspicious function (time
never refuses a turn).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from assistant.config_files import prompt_catalog
from assistant.debug import failures as fails
from assistant.debug.file_view import KEPT_ONLY, OUTLINE, SIGNATURES, render
from assistant.debug.line_marks import MARK, mark
from assistant.debug.localize import Span
from assistant.errors import UserError
from assistant.interfaces import Message
from assistant.loop.prompts import system_message

MARGIN_TOKENS = 32  # the chat template's own tokens around the messages


class DoesNotFit(UserError):
    """Even the implicated code alone does not fit in the model's context."""


@dataclass(frozen=True)
class Budget:
    """Tokens: the model's context, the room kept for the reply, and how text is counted."""

    context_tokens: int
    answer_tokens: int
    count: Callable[[str], int]
    cap: int | None = None  # the prompt tokens the model reads in the time left (None: no such cap)

    @property
    def prompt_tokens(self) -> int:
        return self.context_tokens - self.answer_tokens - MARGIN_TOKENS

    @property
    def wanted_tokens(self) -> int:
        """The prompt's size aimed at: the context's room, or less within the time cap."""
        return self.prompt_tokens if self.cap is None else min(self.cap, self.prompt_tokens)

    def tokens(self, messages: list[Message]) -> int:
        return sum(self.count(m["content"]) + 4 for m in messages)


@dataclass(frozen=True)
class TurnView:
    """What one debugging turn shows: the file, its project path, the test command, the failure."""

    source: str
    target: str
    test_command: str
    failure: fails.Failure | None
    summary: str
    note: str = ""  # e.g. why the previous edit did not apply
    test_code: str = ""  # the failing test's source (assistant/debug/test_code.py)
    marks: tuple[int, ...] = ()  # lines of `source` marked as the most suspicious (assistant/debug/line_marks.py)


def _user(
    view: TurnView, spans: list[Span], detail: int, failure_chars: int, edit_format: str, with_test: bool = True
) -> str:
    parts = []
    if view.note:
        parts.append(view.note)
    parts.append(f"The test command `{view.test_command}` fails on the project ({view.summary}).")
    if view.failure is not None:
        parts.append(fails.render(view.failure, failure_chars))
    if view.test_code and with_test:
        parts.append(f"The failing test's code (it is right; do not change it):\n```python\n{view.test_code}```")
    where = ", ".join(f"`{s.qualname}` (lines {s.start}-{s.end})" for s in spans)
    shown = (
        f"The failing test points at {where}. Here is `{view.target}` with that code in full and the rest "
        "as an outline (`...` marks code left out):"
        if spans
        else f"Here is `{view.target}`:"
    )
    marked = [n for n in view.marks if any(s.contains(n) for s in spans)]
    if marked:
        shown += f" Lines ending in `{MARK.strip()}` are those the failing tests run most and the passing tests least."
    source = mark(view.source, tuple(marked))
    parts += [shown, f"```python\n{render(source, spans, detail) if spans else source}```"]
    focus = "the failing code"
    if spans:
        first = spans[0]
        owner = first.qualname.rsplit(".", 1)[0] if first.kind == "method" else ""
        focus = f"the method `{first.name}` of class `{owner}`" if owner else f"`{first.qualname}`"
    parts.append(prompt_catalog().debug_format(edit_format).replace("`{focus}`", focus))
    return "\n\n".join(parts)


def build(view: TurnView, spans: list[Span], budget: Budget, edit_format: str, failure_chars: int) -> list[Message]:
    """The messages of the turn, within `budget.prompt_tokens`; DoesNotFit when impossible."""
    short = failure_chars // 3
    tries = [(spans, OUTLINE, failure_chars, True), (spans, OUTLINE, short, True), (spans, OUTLINE, short, False)]
    for k in range(len(spans), 0, -1):
        tries += [(spans[:k], SIGNATURES, short, False), (spans[:k], KEPT_ONLY, short, False)]
    if not spans:  # nothing localized: the whole file
        tries = [([], OUTLINE, failure_chars, True), ([], OUTLINE, short, False)]
    alone = [([span], KEPT_ONLY, short, False) for span in spans[1:]]  # when the first cannot fit, a later one may
    messages: list[Message] = []
    for ladder in (tries, alone):
        fitting: list[tuple[int, list[Message]]] = []  # over the time cap but within the context
        for keep, detail, chars, with_test in ladder:
            content = _user(view, keep, detail, chars, edit_format, with_test)
            messages = [system_message(), {"role": "user", "content": content}]
            need = budget.tokens(messages)
            if need <= budget.wanted_tokens:
                return messages
            if need <= budget.prompt_tokens:
                fitting.append((need, messages))
        if fitting:
            return min(fitting, key=lambda found: found[0])[1]
    need = budget.tokens(messages)
    if not spans:
        raise DoesNotFit(
            f"the failing tests do not point at a function of {view.target} and the whole file does not fit in the "
            f"model's context ({need} tokens for the prompt, {budget.prompt_tokens} available)"
        )
    raise DoesNotFit(
        f"{view.target} does not fit in the model's context even as an outline around the failing code "
        f"({need} tokens for the prompt, {budget.prompt_tokens} available with {budget.answer_tokens} kept for the "
        "answer); use a model with a longer context (server.max_model_len)"
    )
