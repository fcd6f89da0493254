"""A loop session that starts after a failed first turn: the buggy program stands as the
model's earlier reply (`scripted`), graded and turned into feedback exactly as the loop does, and the
model then takes its further turns (`assistant.loop.session.Session`, unchanged otherwise).

`feedback_turn` writes the user turn that follows each graded program from the feedback
text: by default the loop's own turn (its prompt style's feedback wording, which
`loop.feedback_wording` names), or the blind control's fixed re-ask. It is used for every turn of
the session, so a session is consistently "with feedback" or "blind". This module runs one
session; `trainer.repair.repair_run` runs many and scores them.
"""

from __future__ import annotations

from typing import Any, Callable

from assistant.loop.session import Session, TurnStarted
from assistant.messages import extract
from assistant.messages.shapes import Message
from assistant.store.trajectory import Turn

FeedbackTurn = Callable[[str], str]


class RepairSession(Session):
    """`Session` whose turns may be given programs and whose feedback turns use `feedback_turn`."""

    def __init__(self, *args: Any, feedback_turn: FeedbackTurn | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # meta: which repair item and arm
        self.feedback_turn = feedback_turn or self.prompts.feedback_content

    def _execute(self, index: int, messages: list[Message], reply: str, author: str, emit: bool = True) -> Turn:
        turn = super()._execute(index, messages, reply, author, emit)
        turn.feedback_message = self.feedback_turn(turn.feedback)
        return turn

    def scripted(self, program: str, author: str = "model") -> Turn:
        """The next turn with `program` as the reply (one python block), graded in the
        sandbox as the loop grades; turn 0 of a repair session is the buggy program.
        Raises SandboxError when the sandbox itself fails."""
        sid = self._start()
        index = len(self.turns)
        self._emit(TurnStarted(sid, index, 0, None, author=author))
        return self._record(self._execute(index, self.context(), extract.fence(program), author=author))
