"""`cobalt debug` as a loop session: each turn shows the file as it stands (the implicated code in
full, the rest as an outline) with the first failing test, the model answers with an edit, the edit
is applied to the current file and the project's whole test command runs in the sandbox. An edit
that does not apply is the next turn's feedback, with the current code. The turn stores the
messages the model saw, its reply, and the whole edited file as its program, so a debug session
is a trajectory like any other.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any, Sequence

from assistant.debug import edit_search, line_marks
from assistant.debug import failures as fails
from assistant.debug.edit_prompt import Budget, DoesNotFit, TurnView, build
from assistant.debug.edits import BLOCK, FORMATS, SEARCH_REPLACE, apply_reply, syntax_error
from assistant.debug.fix_file import best_turn
from assistant.debug.localize import Span, implicated, spans, spans_if_parsed
from assistant.debug.spectrum import ranked, ranked_by_lines, ranked_lines, scored_lines
from assistant.debug.test_code import test_source
from assistant.debug.turn_pace import PaceBook
from assistant.interfaces import ChatModel, Message, Runner
from assistant.loop.candidates import passed_count
from assistant.loop.session import Session, TurnStarted
from assistant.messages.shapes import ChatResult
from assistant.problems.schema import Problem
from assistant.settings import DebugSettings, LoopSettings
from assistant.store.trajectory import Turn
from sandbox.api import Limits, RunResult
from sandbox.pyast import source_lines

EDIT_FAILED = "Your previous edit could not be applied: {why}. The file is unchanged; here it is again."
STILL_FAILS = "Your previous edit was applied and {passed} tests pass now ({before} before), but a test still fails."
HINTS = (
    "Trying small edits of this code with the test command found none that fixes every test, but these raised the "
    "number of passing tests ({before} pass as the file stands):\n{edits}\nThey may be part of the fix, or point at "
    "where the bug is."
)
SEARCHED = "A small edit found by trying {tried} small edits of the implicated code with the test command: {what}."
MIN_REPLY_TOKENS = 256  # a reply cap never below this (a short function's fix may add lines)
UNDONE = (
    "Your previous edit changed {names} but the tests did not improve ({passed} passed before, {after} after), so "
    "it was undone. The bug is probably in other code: read the failing test and the code below again."
)


def changed_functions(before: str, after: str) -> list[str]:
    """Qualnames of the functions and methods whose code differs between two versions of a file."""
    try:
        old, new = spans(before), spans(after)
    except SyntaxError:
        return []
    old_lines, new_lines = source_lines(before), source_lines(after)
    old_code = {s.qualname: old_lines[s.start - 1 : s.end] for s in old if s.kind != "class"}
    return [s.qualname for s in new if s.kind != "class" and old_code.get(s.qualname) != new_lines[s.start - 1 : s.end]]


class DebugSession(Session):
    """A session on a pytest-kind problem whose target file is edited turn by turn. The file it
    shows and edits is the best one so far (most tests passing): an edit that does not raise the
    number of passing tests is undone, and the functions it changed are shown last from then on."""

    def __init__(
        self,
        problem: Problem,
        client: ChatModel,
        sandbox: Runner,
        settings: LoopSettings,
        debug: DebugSettings,
        budget: Budget,
        first_run: RunResult,
        pace: PaceBook | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(problem, client, sandbox, settings, **kwargs)
        self.debug = debug
        self.budget = budget
        self.first_run = first_run
        self.pace = pace  # the served model's measured speed (a turn's prompt fits the time left)
        self._reply_cap: int | None = None  # set by each prompt: the longest reply its functions need
        self.meta.setdefault("edit_format", debug.edit_format)
        self.meta.setdefault("baseline_pass_rate", first_run.pass_rate)  # the user's file (dataset build)
        self._shown: dict[int, list[str]] = {}  # turn -> the functions its prompt showed in full
        self._began = time.monotonic()  # reset by each run(): `debug.deadline_s` counts from there
        self._model_turn_s: list[float] = []  # the wall seconds of each model turn of this run
        self._as_typed: str | None = None  # the person's whole file while their turn runs
        self._prompt_optional = False  # during a turn no model takes (the search's, the person's)
        self._search_ends: float | None = None  # while the search runs: when its time budget ends

    # --- the file as it stands ------------------------------------------------------

    def _usable(self, run: RunResult | None) -> bool:
        return run is not None and fails.run_error(run, str(self.problem.test_command)) is None

    def best(self, turns: int | None = None) -> tuple[str, RunResult]:
        """The file with the most passing tests after the first `turns` turns (all: None), and its
        run; the user's file until an edit does better (`fix_file.best_turn`)."""
        turn = self.best_turn(turns)
        if turn is None or turn.program is None or turn.public is None:
            return self.problem.starter_code, self.first_run
        return turn.program, turn.public

    def best_turn(self, turns: int | None = None) -> Turn | None:
        return best_turn(self.turns[:turns], self.first_run, str(self.problem.test_command))

    def current_source(self) -> str:
        """The file the next edit applies to: the best one so far."""
        return self.best()[0]

    def last_run(self) -> RunResult:
        return self.best()[1]

    def tried(self) -> frozenset[str]:
        """The functions changed by edits that were undone, and the first function shown to a turn
        whose edit did not apply (so that the next greedy answer sees a different prompt)."""
        names: set[str] = set()
        for i, turn in enumerate(self.turns):
            source = self.best(i)[0]
            if turn.program is not None and self.best(i + 1)[0] is source:
                names.update(changed_functions(source, turn.program))
            elif turn.program is None and self._shown.get(i):
                names.add(self._shown[i][0])
        return frozenset(names)

    def _note(self) -> str:
        """What the prompt says before the failure: how the last edit went, and the search's hints."""
        return "\n\n".join(part for part in (self._outcome(), self._hints()) if part)

    def _outcome(self) -> str:
        if not self.turns:
            return ""
        last = self.turns[-1]
        if last.program is None:
            return EDIT_FAILED.format(why=last.feedback)
        before_source, before = self.best(len(self.turns) - 1)
        now_source, now = self.best()
        if now_source is last.program:
            return STILL_FAILS.format(passed=passed_count(now), before=passed_count(before))
        names = ", ".join(f"`{n}`" for n in changed_functions(before_source, last.program)) or "the file"
        after = passed_count(last.public) if self._usable(last.public) else 0
        return UNDONE.format(names=names, passed=passed_count(before), after=after)

    def _hints(self) -> str:
        """The search's partial fixes, while the file is still the user's (they are edits of it)."""
        partial = (self.meta.get("search") or {}).get("partial") or []
        if not partial or self.current_source() is not self.problem.starter_code:
            return ""
        edits = "\n".join(f"- {p['edit']}: {p['passed']} pass" for p in partial)
        return HINTS.format(before=passed_count(self.first_run), edits=edits)

    # --- hooks of Session -----------------------------------------------------------

    def _implicated(self, limit: int, prompt: bool = False) -> tuple[str, RunResult, list[fails.Failure], list[Span]]:
        """The best file so far, its run, its failures and up to `limit` implicated spans (computed
        once per turn, limit and use: the prompt and the TUI's first view read them with `prompt`,
        led by the line spectrum's functions when `debug.localize` is `lines`; the search without)."""
        cache = self._turn_cache()
        key = ("implicated", limit, prompt)
        if key not in cache:
            source, run = self.best()
            failed = fails.failures(run)
            all_spans = spans_if_parsed(source)
            suspects = ranked(all_spans, run.tests)
            leading = ranked_by_lines(all_spans, run.tests) if prompt and self.debug.localize == "lines" else None
            found = implicated(source, str(self.problem.target_file), failed, limit, suspects, self.tried(), leading)
            cache[key] = (source, run, failed, found)
        return cache[key]

    def edit_format_for(self, source: str) -> str:
        """`debug.edit_format`, but SEARCH/REPLACE blocks for a file that does not parse: the
        `functions` formats place whole functions by the file's syntax tree."""
        if FORMATS[self.debug.edit_format].whole_functions and syntax_error(source):
            return SEARCH_REPLACE
        return self.debug.edit_format

    def implicated_spans(self) -> list[Span]:
        """The functions the next prompt shows in full (`debug.max_spans` of them at most)."""
        return self._implicated(self.debug.max_spans, prompt=True)[3]

    def marked_lines(self, most: int | None = None) -> tuple[int, ...]:
        """The lines the next prompt marks as the most suspicious: those sharing the line spectrum's
        top score inside the functions shown in full, when at most `debug.mark_lines` (or `most`) do."""
        source, run, _, found = self._implicated(self.debug.max_spans, prompt=True)
        most = self.debug.mark_lines if most is None else most
        return line_marks.pick(scored_lines(spans_if_parsed(source), run.tests), found, source, most) if most else ()

    def context(self) -> list[Message]:
        """The model's prompt for the next turn. A turn the model does not take (the search's, the
        person's) is stored without one when the file does not fit the model's context: the search
        and the person's own test run need no model."""
        try:
            return self._prompt()
        except DoesNotFit:
            if self._prompt_optional:
                return []
            raise

    def _prompt(self) -> list[Message]:
        source, run, failed, found = self._implicated(self.debug.max_spans, prompt=True)
        target = str(self.problem.target_file)
        first = failed[0] if failed else None
        view = TurnView(
            source,
            target,
            str(self.problem.test_command),
            first,
            fails.summary(run),
            self._note(),
            self._test_code(first),
            self.marked_lines(),
        )
        self._shown[len(self.turns)] = [s.qualname for s in found]
        edit_format = self.edit_format_for(source)  # parses the file: once per prompt
        self._reply_cap = self._reply_limit(source, found, edit_format)
        budget = self.budget if self._prompt_optional else replace(self.budget, cap=self._time_cap())
        return build(view, found, budget, edit_format, self.debug.failure_chars)

    def _reply_limit(self, source: str, found: list[Span], edit_format: str) -> int | None:
        """`debug.reply_scale` times the tokens of the functions the prompt may show in full (all
        `found`, though a cut prompt shows fewer: a looser cap never cuts a fix), twice that for
        SEARCH/REPLACE blocks (they hold the code twice), plus the format's `prose_tokens`, and never under
        MIN_REPLY_TOKENS."""
        if not self.debug.reply_scale or not found:
            return None
        lines = source_lines(source, keepends=True)
        shown = sum(self.budget.count("".join(lines[s.start - 1 : s.end])) for s in found)
        blocks = 2 if edit_format == SEARCH_REPLACE else 1
        prose = FORMATS[edit_format].prose_tokens
        return max(MIN_REPLY_TOKENS, int(self.debug.reply_scale * blocks * shown) + prose)

    def reply_tokens(self) -> int | None:
        most = super().reply_tokens()
        return most if self._reply_cap is None else min(self._reply_cap, most or self._reply_cap)

    def _time_cap(self) -> int | None:
        """The prompt tokens the model reads before `debug.deadline_s` while leaving time for a
        reply and one run of the test command; None without a deadline or a measured pace."""
        if not (self.debug.paced and self.debug.deadline_s and self.pace is not None):
            return None
        # the test runs after the replies, each with its start-up (as edit_search.run_timeout counts it)
        testing = (sum(t.duration_s for t in self.first_run.tests) + 2.0) * self._batch()
        left = self.debug.deadline_s - (time.monotonic() - self._began) - testing
        cap = self.pace.prompt_cap(left, self.reply_tokens() or self.budget.answer_tokens)
        if cap is not None:
            paced = {"turn": len(self.turns), "cap": cap, "left_s": round(left, 1)}
            self.meta.setdefault("prompt_caps", []).append(paced)
        return cap

    def _batch(self) -> int:
        """The replies a model turn asks for at once (`debug.candidates`, or `loop.candidates`)."""
        return max(self.debug.candidates, self.settings.candidates)

    def _sample(self, index: int, messages: list[Message], attempt: int, temperature: float) -> ChatResult:
        result = super()._sample(index, messages, attempt, temperature)
        if self.pace is not None and attempt == 0 and self._batch() == 1:  # alone, on a fresh prompt
            self.pace.observe(result, 0 if result.prompt_tokens else self.budget.tokens(messages))
        return result

    def _test_code(self, failure: fails.Failure | None) -> str:
        if failure is None or not self.debug.test_lines:
            return ""
        file = failure.test.split("::", 1)[0]
        line = next((f.line for f in reversed(failure.frames) if f.path == file), None)
        return test_source(self.problem.project_dir, failure.test, self.debug.test_lines, line)

    def run(self, max_turns: int | None = None, stop_on_pass: bool = True) -> str:
        self._began, self._model_turn_s = time.monotonic(), []
        self.meta.pop("deadline", None)
        return super().run(max_turns, stop_on_pass)

    def may_take_turn(self) -> bool:
        """Within `debug.deadline_s`: the first model turn of a run always starts (the search has
        its own budget); a later one only when the longest so far would still end in time. When
        one does not, meta["deadline"] says so."""
        deadline = self.debug.deadline_s
        if not deadline or not self._model_turn_s:
            return True
        elapsed = time.monotonic() - self._began
        if elapsed + max(self._model_turn_s) <= deadline:
            return True
        self.meta["deadline"] = {"seconds": deadline, "elapsed": round(elapsed, 1), "turns": len(self._model_turn_s)}
        return False

    def model_turn(self) -> Turn:
        """One turn; first of all the small-edit search (`debug.search`), a turn only when it
        fixes the file; with `debug.candidates` > 1, several edits tried side by side and the one
        passing the most tests kept (`assistant.loop.candidates`)."""
        if self.debug.search.enabled and not self.turns and "search" not in self.meta:
            found = self.search_turn()
            if found is not None:
                return found
        start = time.monotonic()
        if self.debug.candidates <= 1:
            turn = super().model_turn()
        else:
            turn = self.candidate_turn(self.debug.candidates, self.debug.candidate_temperature)
        self._model_turn_s.append(time.monotonic() - start)
        return turn

    def search_turn(self) -> Turn | None:
        """The small-edit search (assistant/debug/edit_search.py) over the implicated functions:
        a turn by `search` holding the fix as a SEARCH/REPLACE reply, or None when no small edit
        makes every test pass. Its outcome is in meta["search"] either way (so it runs once)."""
        self._prompt_optional = True
        try:
            sid, index, messages = self._start(), len(self.turns), self.context()
        finally:
            self._prompt_optional = False
        source, run, failed, found = self._implicated(self.debug.search.spans)
        suspects = ranked_lines(spans_if_parsed(source), run.tests)
        lines = edit_search.search_lines(found, failed, str(self.problem.target_file), suspects)
        self._emit(edit_search.SearchStarted(sid, [s.qualname for s in found], len(lines)))
        attempt = edit_search.failing_first(self._run_file, run) if self.debug.search.failing_first else self._run_file
        self._search_ends = time.monotonic() + self.debug.search.max_seconds
        try:
            result = edit_search.search(source, lines, attempt, run, self.debug.search)
        finally:
            self._search_ends = None
        self.meta["search"] = result.summary()
        what = result.edit.describe() if result.edit else None
        self._emit(edit_search.SearchFinished(sid, result.tried, result.seconds, what))
        if result.edit is None:
            return None
        self._emit(TurnStarted(sid, index, 0, None, author="search"))
        reply = SEARCHED.format(tried=result.tried, what=what) + "\n\n" + edit_search.block_of(source, result.edit)
        return self._record(self._execute(index, messages, reply, author="search"))

    def _run_file(self, program: str, only: Sequence[str] = ()) -> RunResult:
        """The test command on an edited file (only the tests `only` names, when given), within the
        search's run timeout (`run_timeout`) and each test within `test_timeout`."""
        limits = getattr(self.sandbox, "limits", None)
        if isinstance(limits, Limits):
            most = limits.timeout_s
            if self._search_ends is not None:  # a run started late in the search ends with its budget
                most = min(most, max(1.0, self._search_ends - time.monotonic()))
            limits = replace(limits, timeout_s=edit_search.run_timeout(self.first_run, self.debug.search, most))
        project = self.problem.project()
        if project is not None and only:
            project = replace(project, only=tuple(only))
        if project is not None and self.debug.per_test_timeout_s:
            project = replace(
                project, test_timeout_s=edit_search.test_timeout(self.first_run, self.debug.per_test_timeout_s)
            )
        return self.sandbox.run(program, [], "pytest", limits=limits, project=project)  # type: ignore[call-arg]

    def score(self, turn: Turn) -> int:
        """The tests of the command a candidate edit passes; -1 without an edit or when the
        command itself failed to run (`_usable`)."""
        return super().score(turn) if self._usable(turn.public) else -1

    def human_turn(self, text: str) -> Turn:
        """The person's turn (the TUI's ctrl+t): the editor holds the whole file as they left it,
        which is tested as it stands, not applied as an edit (that would keep only its functions and
        drop a changed constant or import, or fail on a file that does not parse)."""
        self._as_typed, self._prompt_optional = text, True
        try:
            return super().human_turn(text)
        finally:
            self._as_typed, self._prompt_optional = None, False

    def program_of(self, reply: str) -> tuple[str | None, str]:
        if self._as_typed is not None:
            return self._as_typed, ""
        shown = tuple(self._shown.get(len(self.turns), ()))
        # a search turn's reply (or a model's) in SEARCH/REPLACE blocks applies as such in any format
        source = self.current_source()
        edit_format = SEARCH_REPLACE if BLOCK.search(reply) else self.edit_format_for(source)
        edited = apply_reply(source, reply, edit_format, shown)
        return edited.source, edited.error or ""

    def feedback_for(self, public: RunResult) -> str:
        error = fails.run_error(public, str(self.problem.test_command))
        if error is not None:
            return error
        failed = fails.failures(public)
        if not failed:
            return f"All tests pass ({fails.summary(public)})."
        return fails.render(failed[0], self.debug.failure_chars)
