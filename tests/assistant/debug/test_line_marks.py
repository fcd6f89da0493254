"""Line marks: the most suspicious lines of the shown code end in a comment the model reads, only
where a comment cannot change the program, and a reply that copies them applies without them."""

from __future__ import annotations

import ast

from assistant.debug.edit_prompt import Budget, TurnView, build
from assistant.debug.edits import FUNCTIONS, SEARCH_REPLACE, apply_reply
from assistant.debug.line_marks import MARK, commentable, mark, pick, unmark
from assistant.debug.localize import spans

SOURCE = '''"""A module."""


def total(prices, rate):
    text = """a string
over lines"""
    value = sum(prices) \\
        * rate
    return round(value - 1, 2)


def unused(x):
    return x + 1
'''


def _line(text: str) -> int:
    return next(i for i, line in enumerate(SOURCE.splitlines(), 1) if text in line)


def test_marks_go_only_where_a_comment_ends_a_line() -> None:
    fits = commentable(SOURCE)
    assert _line("return round") in fits
    assert _line("a string") not in fits  # inside a string: a "comment" would become text
    assert _line("sum(prices)") not in fits  # before a backslash continuation
    assert _line("* rate") in fits


def test_pick_marks_the_lines_tied_at_the_top_inside_the_shown_functions() -> None:
    shown = [s for s in spans(SOURCE) if s.name == "total"]
    top, rate, other = _line("return round"), _line("* rate"), _line("return x + 1")
    scored = [(other, 1.0), (top, 0.8), (rate, 0.8), (_line("a string"), 0.5)]
    assert pick(scored, shown, SOURCE, 2) == (top, rate)  # `unused` is not shown: its line is not marked
    assert pick(scored, shown, SOURCE, 1) == ()  # more lines tie at the top than may be marked
    assert pick([(top, 0.9), (rate, 0.8)], shown, SOURCE, 1) == (top,)
    assert pick([(_line("sum(prices)"), 0.9), (top, 0.8)], shown, SOURCE, 3) == ()  # no mark fits there
    assert pick(scored, shown, SOURCE, 0) == ()


def test_a_marked_file_still_parses_and_unmarks_to_itself() -> None:
    marked = mark(SOURCE, (_line("return round"), _line("* rate")))
    assert marked.count(MARK) == 2
    assert ast.dump(ast.parse(marked)) == ast.dump(ast.parse(SOURCE))
    assert unmark(marked) == SOURCE


def test_a_reply_that_copies_the_marks_applies_without_them() -> None:
    reply_code = mark(SOURCE, (_line("return round"),)).replace("value - 1", "value")
    function = reply_code[reply_code.index("def total") : reply_code.index("def unused")].rstrip() + "\n"
    edited = apply_reply(SOURCE, f"```python\n{function}```", FUNCTIONS)
    assert not edited.error
    assert "return round(value, 2)" in edited.source and "suspicious" not in edited.source
    block = (
        f"<<<<<<< SEARCH\n    return round(value - 1, 2){MARK}\n=======\n    return round(value, 2)\n>>>>>>> REPLACE"
    )
    assert apply_reply(SOURCE, block, SEARCH_REPLACE).source == SOURCE.replace("value - 1", "value")


def test_the_prompt_marks_lines_of_the_shown_code_and_says_what_they_mean() -> None:
    shown = [s for s in spans(SOURCE) if s.name == "total"]
    budget = Budget(4096, 512, lambda text: len(text) // 3 + 1)
    line = _line("return round")
    view = TurnView(SOURCE, "m.py", "pytest -q", None, "1 failed", marks=(line, _line("return x + 1")))
    prompt = build(view, shown, budget, FUNCTIONS, 1500)[-1]["content"]
    assert f"return round(value - 1, 2){MARK}" in prompt
    assert prompt.count(MARK) == 1  # `unused` is not shown in full: its mark is dropped
    assert "failing tests run most" in prompt
    plain = build(TurnView(SOURCE, "m.py", "pytest -q", None, "1 failed"), shown, budget, FUNCTIONS, 1500)
    assert "suspicious" not in plain[-1]["content"]
