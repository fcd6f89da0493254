"""Pure formatting for the TUI: what a turn, a test, a result row, the status line and a
diff look like as text. No widgets and no state here, so every line can be unit-tested;
the widgets only place what these functions return.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text

from assistant.debug.fix_file import text_diff
from assistant.problems.schema import Problem
from assistant.store.trajectory import Turn
from assistant.tui.keys import APPLY_FIX_KEY
from sandbox.api import RunResult, TestCase, TestResult

ICONS = {"passed": "✔", "failed": "✘", "no_code": "∅", "running": "…", "human": "✎"}
STATUS_ICONS = {
    "passed": "✔",
    "failed": "✘",
    "error": "!",
    "timeout": "⏱",
    "memory": "M",
    "output_limit": "≫",
    "tampered": "⚠",
}
STATUS_STYLES = {"passed": "green", "failed": "red", "no_code": "yellow", "running": "cyan"}


def one_line(text: str | None, limit: int = 60) -> str:
    """`text` on one line (newlines shown as ⏎), cut to `limit` characters with an ellipsis."""
    flat = (text or "").rstrip("\n").replace("\r", "").replace("\n", "⏎")
    return flat if len(flat) <= limit else flat[: max(limit - 1, 0)] + "…"


def counts(result: RunResult | None, total: int) -> str:
    """`passed/total` of a run (0/total when nothing ran)."""
    if result is None or not result.tests:
        return f"0/{total}"
    return f"{sum(t.passed for t in result.tests)}/{len(result.tests)}"


AUTHORS = {"human": "you", "search": "search"}  # who wrote a turn; anything else is the model


def author_label(author: str) -> str:
    """`you`, `search` (the small-edit search of cobalt debug) or `model`, five characters wide."""
    return f"{AUTHORS.get(author, 'model'):<5}"[:6]


def turn_label(turn: Turn, public_total: int, hidden_total: int) -> Text:
    """One timeline row: icon, number, author, public and hidden pass counts."""
    status = turn.status
    icon = ICONS[status]
    who = author_label(turn.author)
    text = Text.assemble((f"{icon} ", STATUS_STYLES[status]), f"{turn.index + 1:>2} {who} ")
    if turn.program is None:
        text.append("no code block", style="yellow")
    else:
        text.append(f"pub {counts(turn.public, public_total)}", style=STATUS_STYLES[status])
        text.append(f" · hid {counts(turn.hidden, hidden_total)}", style="dim")
    if turn.author == "human":
        text.append(" ✎", style="magenta")
    return text


def pending_label(index: int, author: str, phase: str) -> Text:
    """The timeline row of the turn in flight."""
    who = author_label(author)
    return Text.assemble(("… ", "cyan"), f"{index + 1:>2} {who} ", (phase, "cyan italic"))


def test_lines(problem: Problem, limit: int = 200) -> Text:
    """The tests pane: every public test, and only the number of hidden ones."""
    text = Text()
    text.append(f"{len(problem.public_tests)} public", style="bold")
    text.append(f" · {len(problem.hidden_tests)} hidden (not shown)\n", style="dim")
    for i, test in enumerate(problem.public_tests, 1):
        text.append(f"{i:>2}. ", style="dim")
        text.append_text(describe_test(test, limit))
        text.append("\n")
    if problem.kind == "pytest":
        text.append(f"command: {problem.test_command}\n", style="dim")
    text.rstrip()
    return text


def describe_test(test: TestCase, limit: int = 200) -> Text:
    if test.code is not None:
        return Text(one_line(test.code, limit), style="cyan")
    if test.input is not None:
        half = max(limit // 2 - 4, 8)
        return Text.assemble(
            ("in ", "dim"), one_line(test.input, half), ("  → ", "dim"), (one_line(test.output, half), "green")
        )
    return Text(one_line(test.name, limit))


@dataclass
class ResultRow:
    input: str
    expected: str
    actual: str
    status: Text


def _actual(test: TestResult) -> str:
    if test.status in ("passed", "failed") and test.actual is not None:
        return test.actual
    if test.status in ("timeout", "memory", "output_limit"):
        return test.detail or test.status.replace("_", " ")
    lines = [line for line in (test.stderr or "").strip().splitlines() if line.strip()]
    return lines[-1] if lines else (test.detail or test.actual or test.stdout or "")


def result_rows(result: RunResult | None, limit: int = 40) -> list[ResultRow]:
    """The results table of one turn's *public* run (a compile error is one row)."""
    if result is None:
        return []
    rows = []
    if result.compile_error and not result.tests:
        rows.append(
            ResultRow(
                "(program)",
                "",
                one_line(result.compile_error.strip().splitlines()[-1], limit),
                Text("✘ error", style="red"),
            )
        )
    for test in result.tests:
        name = (test.name or "").split("::", 1)[-1]  # a pytest node id without its file: the test's own name
        subject = test.input if test.input is not None else (test.code or name)
        style = "green" if test.passed else "red"
        status = Text(f"{STATUS_ICONS.get(test.status, '?')} {test.status}", style=style)
        rows.append(
            ResultRow(one_line(subject, limit), one_line(test.expected, limit), one_line(_actual(test), limit), status)
        )
    return rows


@dataclass
class StatusInfo:
    """What the status bar shows."""

    model: str = "-"
    adapter: str | None = None
    server: str = "not started"
    tokens_per_s: float | None = None
    tokens: int | None = None  # of the turn in flight (or the last one)
    elapsed_s: float | None = None
    turn: int = 0
    turns: int = 4
    phase: str = "idle"


def status_line(info: StatusInfo) -> Text:
    server_style = {"ready": "green", "error": "red"}.get(info.server.split(":")[0], "yellow")
    phase_style = {"idle": "dim", "passed": "green", "unsolved": "yellow"}.get(info.phase, "cyan")
    tps = ("-" if info.tokens_per_s is None else f"{info.tokens_per_s:.1f}") + " tok/s"
    if info.tokens is not None and info.elapsed_s is not None:
        rate = info.tokens / info.elapsed_s if info.elapsed_s > 0 else 0.0  # the CLI's live figures,
        tps = f"{info.tokens} tok @ {rate:.1f}/s, {info.elapsed_s:.0f} s"  # compact: the bar fits 100 columns
    return Text.assemble(
        ("model ", "dim"),
        (info.model, "bold"),
        (" · adapter ", "dim"),
        info.adapter or "base",
        (" · server ", "dim"),
        (info.server, server_style),
        (" · ", "dim"),
        tps,
        (" · turn ", "dim"),
        f"{info.turn}/{info.turns}",
        (" · ", "dim"),
        (info.phase, phase_style),
    )


def unified_diff(before: str, after: str, before_label: str, after_label: str) -> str:
    """A unified diff of two programs; says so when they are the same."""
    return text_diff(before, after, before_label, after_label) or (
        f"# {before_label} and {after_label} are the same program\n"
    )


def ended_notice(status: str, turns: list[Turn], problem: Problem | None) -> tuple[str, str, str] | None:
    """(severity, title, message) announcing how a session ended, or None."""
    last = turns[-1] if turns else None
    hidden = counts(last.hidden, len(problem.hidden_tests)) if last and problem else "-"
    if status == "passed":
        debugging = problem is not None and problem.source == "debug"  # the user's own file: f2 writes it
        then = f"{APPLY_FIX_KEY} writes the fix into {problem.target_file}" if debugging else "ctrl+s saves the program"
        return (
            "information",
            "Solved",
            f"All public tests pass after {len(turns)} turn(s); hidden {hidden}. {then}.",
        )
    if status == "unsolved":
        return (
            "warning",
            "Unsolved",
            f"No program passed every public test in {len(turns)} turn(s). Edit it "
            "and test (ctrl+t), or run more turns (ctrl+r).",
        )
    if status == "interrupted":
        if not turns:
            return ("warning", "Stopped", "Stopped before any turn finished; nothing was stored.")
        return ("warning", "Stopped", f"Stopped; {len(turns)} finished turn(s) are stored. ctrl+r continues.")
    return None


def save_note(program: str, turns: list[Turn], problem: Problem) -> str:
    """What the save dialog says about the program being accepted."""
    turn = next((t for t in reversed(turns) if t.program == program), None)
    if turn is None:
        return "[yellow]This program has not been tested: ctrl+t runs the tests first.[/yellow]"
    if turn.passed_public:
        return (
            f"Turn {turn.index + 1} passes every public test (hidden {counts(turn.hidden, len(problem.hidden_tests))})."
        )
    return f"[yellow]Turn {turn.index + 1} still fails public tests.[/yellow]"


def diff_choices(turns: list[Turn], editor_text: str, edited: bool) -> tuple[list[tuple[str, str]], int, int]:
    """The programs the diff screen offers (every turn with a program, then the editor) and
    the two shown first: the last two turns, or the last turn and the edited editor."""
    with_code = [t for t in turns if t.program]
    programs = [(f"turn {t.index + 1} ({author_label(t.author).strip()})", t.program or "") for t in with_code]
    programs.append(("editor", editor_text))
    after = len(programs) - 1 if edited or len(with_code) < 2 else len(with_code) - 1
    return programs, max(after - 1, 0), after
