"""The pure parts of the TUI: text formatting and problem files (no app, no Docker)."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant.problems.resolve import load_problem
from assistant.problems.schema import ProblemError
from assistant.store.trajectory import Turn
from assistant.tui import problem_files, views
from assistant.tui.controller import describe_error
from sandbox.api import RunResult, SandboxError, TestResult


def _turn(public: RunResult, program: str | None = "print(1)\n", author: str = "model") -> Turn:
    return Turn(
        index=1,
        messages=[],
        reply="r",
        program=program,
        feedback="",
        feedback_message="",
        public_pass_rate=public.pass_rate,
        public=public,
        hidden=public,
        author=author,
    )


def test_one_line_flattens_and_cuts() -> None:
    assert views.one_line("a\nb\n") == "a⏎b"
    assert views.one_line("x" * 10, 5) == "xxxx…"
    assert views.one_line(None) == ""


def test_result_rows_show_input_expected_actual_status() -> None:
    result = RunResult(
        tests=[
            TestResult("passed", expected="5\n", actual="5\n", input="2 3\n"),
            TestResult("failed", expected="6\n", actual="14\n", input="10 -4\n"),
            TestResult("error", stderr="Traceback...\nZeroDivisionError: division by zero\n", code="assert f(0) == 1"),
            TestResult("timeout", input="1\n", detail="no answer within 5 s"),
        ]
    )
    rows = views.result_rows(result)
    assert [(r.input, r.expected, r.actual) for r in rows] == [
        ("2 3", "5", "5"),
        ("10 -4", "6", "14"),
        ("assert f(0) == 1", "", "ZeroDivisionError: division by zero"),
        ("1", "", "no answer within 5 s"),
    ]
    assert [r.status.plain for r in rows] == ["✔ passed", "✘ failed", "! error", "⏱ timeout"]
    compile_only = views.result_rows(RunResult(compile_error="  File x\nSyntaxError: bad\n"))
    assert compile_only[0].actual == "SyntaxError: bad"


def test_turn_labels_count_public_and_hidden() -> None:
    result = RunResult(tests=[TestResult("passed"), TestResult("failed")])
    assert views.turn_label(_turn(result), 2, 2).plain == "✘  2 model pub 1/2 · hid 1/2"
    assert views.turn_label(_turn(result, program=None), 2, 2).plain == "∅  2 model no code block"
    assert views.turn_label(_turn(result, author="human"), 2, 2).plain.endswith("✎")


def test_status_line_names_everything() -> None:
    info = views.StatusInfo(
        model="qwen-coder",
        adapter="qwen-coder-v3",
        server="ready",
        tokens_per_s=8.46,
        turn=2,
        turns=4,
        phase="generating",
    )
    assert views.status_line(info).plain == (
        "model qwen-coder · adapter qwen-coder-v3 · server ready · 8.5 tok/s · turn 2/4 · generating"
    )
    info.tokens, info.elapsed_s = 120, 24.2  # the turn in flight: the CLI's live figures
    assert "· 120 tok @ 5.0/s, 24 s · turn 2/4" in views.status_line(info).plain


def test_unified_diff() -> None:
    diff = views.unified_diff("a = 1\nprint(a)\n", "a = 2\nprint(a)\n", "turn 1", "turn 2")
    assert "--- turn 1" in diff and "-a = 1" in diff and "+a = 2" in diff
    assert "same program" in views.unified_diff("x\n", "x\n", "turn 1", "turn 2")


def test_errors_say_what_to_do() -> None:
    title, message = describe_error(SandboxError("cannot reach the Docker engine at unix:///x (refused)"))
    assert title == "Sandbox unavailable" and "Docker" in message
    title, message = describe_error(ProblemError("x.yaml: the problem has no tests"))
    assert title == "Bad problem file" and "ctrl+o" in message
    assert describe_error(RuntimeError("boom"))[0] == "Unexpected error"


def test_stdio_form_tests_parse_and_round_trip(tmp_path: Path) -> None:
    text = "2 3\n---\n5\n===\n10 -4\n---\n6\n"
    assert problem_files.parse_tests(text, "stdio") == [
        {"input": "2 3\n", "output": "5\n"},
        {"input": "10 -4\n", "output": "6\n"},
    ]
    problem, data = problem_files.build_problem(
        {
            "id": "add-two",
            "title": "Add",
            "kind": "stdio",
            "statement": "Add two numbers.\nPrint the sum.",
            "public": text,
        }
    )
    saved = problem_files.save_problem(data, tmp_path / "add-two.yaml")
    loaded = load_problem(str(saved))
    assert loaded.public_tests == problem.public_tests == loaded.hidden_tests
    assert loaded.statement == "Add two numbers.\nPrint the sum.\n"
    again = problem_files.format_tests(loaded)
    assert problem_files.parse_tests(again, "stdio") == problem_files.parse_tests(text, "stdio")
    with pytest.raises(ProblemError, match="already exists"):
        problem_files.save_problem(data, saved)


def test_function_form_and_its_mistakes() -> None:
    problem, _ = problem_files.build_problem(
        {
            "id": "add",
            "kind": "function",
            "entry_point": "add",
            "statement": "Write add.",
            "public": "assert add(1, 2) == 3\n\n",
        }
    )
    assert [t.code for t in problem.public_tests] == ["assert add(1, 2) == 3"]
    with pytest.raises(ProblemError, match="entry_point"):
        problem_files.build_problem({"id": "add", "kind": "function", "statement": "x", "public": "assert 1"})
    with pytest.raises(ProblemError, match="no tests"):
        problem_files.build_problem({"id": "add", "kind": "stdio", "statement": "x", "public": ""})
    with pytest.raises(ProblemError, match="---"):
        problem_files.parse_tests("2 3\n5\n", "stdio")


def test_examples_are_found() -> None:
    found = problem_files.examples()
    assert found and all(e.path.suffix in (".yaml", ".yml", ".json") for e in found)
    assert "sum-two" in {e.id for e in found}


def test_results_table_shows_program_output_literally() -> None:
    """Program output like `[1, 2]` or `[bold]` is data, not markup."""
    import asyncio

    from textual.app import App, ComposeResult

    from assistant.tui.widgets import ResultsTable

    class One(App[None]):
        def compose(self) -> ComposeResult:
            yield ResultsTable()

    result = RunResult(tests=[TestResult("failed", expected="[1, 2]\n", actual="[bold]x[/bold]\n", input="[2]\n")])

    async def scenario() -> str:
        async with One().run_test(size=(80, 10)) as pilot:
            pilot.app.query_one(ResultsTable).show(_turn(result), None)
            await pilot.pause()
            return pilot.app.export_screenshot().replace("&#160;", " ")

    screen = asyncio.run(scenario())
    assert "[1, 2]" in screen and "[bold]x[/bold]" in screen and "[2]" in screen
