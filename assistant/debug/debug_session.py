"""`cobalt debug` as a loop session: each turn shows the file as it stands (the implicated code in
full, the rest as an outline) with the first failing test, the model answers with an edit, the edit
is applied to the current file and the project's whole test command runs in the sandbox. An edit
that does not apply is the next turn's feedback, with the current code. The turn stores the
messages the model saw, its reply, and the whole edited file as its program, so a debug session
is a trajectory like any other.
"""

from __future__ import annotations

from typing import Any

from assistant.debug import failures as fails
from assistant.debug.edit_prompt import Budget, TurnView, build
from assistant.debug.edits import apply_reply
from assistant.debug.localize import implicated
from assistant.errors import UserError
from assistant.interfaces import ChatModel, Message, Runner
from assistant.loop.session import Session
from assistant.problems.schema import Problem
from assistant.settings import DebugSettings, LoopSettings
from sandbox.api import Limits, RunResult

EDIT_FAILED = "Your previous edit could not be applied: {why}. The file is unchanged; here it is again."
STILL_FAILS = "Your previous edit was applied and the file parses, but a test still fails."


class DebugSession(Session):
    """A session on a pytest-kind problem whose target file is edited turn by turn."""

    def __init__(
        self,
        problem: Problem,
        client: ChatModel,
        sandbox: Runner,
        settings: LoopSettings,
        debug: DebugSettings,
        budget: Budget,
        first_run: RunResult,
        **kwargs: Any,
    ) -> None:
        super().__init__(problem, client, sandbox, settings, **kwargs)
        self.debug = debug
        self.budget = budget
        self.first_run = first_run
        self.meta.setdefault("edit_format", debug.edit_format)
        self._edit_error: str | None = None

    # --- the file as it stands ------------------------------------------------------

    def current_source(self) -> str:
        """The file after the last edit that applied (the user's file before any)."""
        return next((t.program for t in reversed(self.turns) if t.program is not None), self.problem.starter_code)

    def last_run(self) -> RunResult:
        return next((t.public for t in reversed(self.turns) if t.public is not None), self.first_run)

    # --- hooks of Session -----------------------------------------------------------

    def context(self) -> list[Message]:
        run = self.last_run()
        failed = fails.failures(run)
        note = ""
        if self.turns and self.turns[-1].program is None:
            note = EDIT_FAILED.format(why=self.turns[-1].feedback)
        elif self.turns:
            note = STILL_FAILS
        source, target = self.current_source(), str(self.problem.target_file)
        view = TurnView(
            source, target, str(self.problem.test_command), failed[0] if failed else None, fails.summary(run), note
        )
        spans = implicated(source, target, failed, self.debug.max_spans)
        return build(view, spans, self.budget, self.debug.edit_format, self.debug.failure_chars)

    def program_of(self, reply: str) -> tuple[str | None, str]:
        edited = apply_reply(self.current_source(), reply, self.debug.edit_format)
        return edited.source, edited.error or ""

    def feedback_for(self, public: RunResult) -> str:
        error = fails.run_error(public, str(self.problem.test_command))
        if error is not None:
            return error
        failed = fails.failures(public)
        if not failed:
            return f"All tests pass ({fails.summary(public)})."
        return fails.render(failed[0], self.debug.failure_chars)


class LimitedRunner:
    """A sandbox whose every run has the debug command's whole-run limits (debug.test_timeout_s)."""

    def __init__(self, sandbox: Runner, limits: Limits) -> None:
        self.sandbox, self.limits = sandbox, limits

    @classmethod
    def of(cls, sandbox: Runner, limits: Limits, debug: DebugSettings) -> "LimitedRunner":
        return cls(sandbox, Limits(**{**vars(limits), "timeout_s": debug.test_timeout_s}))

    def run(self, program: str, tests: list, kind: str, limits: Any = None, project: Any = None) -> RunResult:
        return self.sandbox.run(program, tests, kind, limits=self.limits, project=project)  # type: ignore[call-arg]


def baseline_run(runner: Runner, problem: Problem) -> RunResult:
    """The project's test command on the file as given; UserError (one sentence) when it tests nothing."""
    result = runner.run(problem.starter_code, [], "pytest", project=problem.project())  # type: ignore[call-arg]
    error = fails.run_error(result, str(problem.test_command))
    if error is not None:
        raise UserError(error)
    return result
