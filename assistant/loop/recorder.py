"""The store as a subscriber of a session's events: `record(session, store)` writes every
finished turn in its own transaction (a crash loses at most the turn in flight) and the
status the session ends with. The session row is written with the first finished turn, so
a session that fails before any turn (a bad model name, a dead sandbox) stores nothing.

`resume(store, id, ...)` continues a stored session and records its further turns. The
loop itself (`assistant.loop.session`) knows no store; this module runs no turns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assistant.interfaces import ChatModel, Runner
from assistant.loop.session import Event, Session, SessionEnded, TurnFinished
from assistant.store.trajectory import RUNNING
from assistant.store.trajectory_db import Store, StoreError

if TYPE_CHECKING:
    from assistant.settings import LoopSettings


HUMAN = "human"  # the model of a session whose turns so far are all the person's


class Recorder:
    """Writes one session's events to the store."""

    def __init__(self, store: Store, session: Session) -> None:
        self.store = store
        self.session = session
        self._model: str | None = None  # the model the stored row names, once known

    def _stored_model(self, session_id: str) -> str | None:
        if self._model is None:
            self._model = self.store.model_of(session_id)
        return self._model

    def __call__(self, event: Event) -> None:
        if isinstance(event, TurnFinished):
            s = self.session
            model = getattr(s.client, "display_name", None)
            stored = self._stored_model(event.session_id)
            if stored is None:
                self._model = model or HUMAN
                self.store.start_session(
                    s.problem,
                    self._model,
                    s.source,
                    session_id=event.session_id,
                    adapter_version=s.adapter_version,
                    meta=s.meta or None,
                )
            elif stored == HUMAN and model is not None and event.turn.author == "model":
                # the person tested their own program first (the TUI), then asked the model
                self.store.set_model(event.session_id, model, s.adapter_version)
                self._model = model
            self.store.append_turn(event.session_id, event.turn)
        elif isinstance(event, SessionEnded) and self._stored_model(event.session_id) is not None:
            self.store.set_status(event.session_id, event.status, event.error)


def record(session: Session, store: Store) -> Session:
    """Subscribe a `Recorder` ahead of the session's other subscribers; returns the session."""
    session.subscribe(Recorder(store, session), first=True)
    return session


def resume(
    store: Store,
    session_id: str,
    client: ChatModel,
    sandbox: Runner,
    settings: LoopSettings | None = None,
    **kwargs: Any,
) -> Session:
    """Continue a stored session (any status, an id prefix will do) from its last turn,
    marked `running` again, its further turns recorded."""
    stored = store.session(session_id)
    if stored.problem is None:
        raise StoreError(f"the problem of session {stored.id} is missing from the store")
    session = Session.resume(stored, client, sandbox, settings, **kwargs)
    store.set_status(stored.id, RUNNING)
    return record(session, store)
