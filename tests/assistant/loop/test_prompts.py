"""prompts: one builder for serving and training; thinking is stripped from context."""

from pathlib import Path

from assistant.loop import prompts
from assistant.problems.schema import Problem
from tests.assistant.loop_fakes import add_problem, sum_problem


def test_first_turn_says_how_the_program_runs_and_the_answer_format() -> None:
    system, user = prompts.style().initial_messages(sum_problem())
    assert system == {"role": "system", "content": prompts.SYSTEM_PROMPT}
    assert "sandbox" in system["content"]
    text = user["content"]
    assert user["role"] == "user"
    assert "standard input" in text and "standard output" in text
    assert "exactly one fenced ```python code block" in text
    assert text.endswith("Read two integers and print their sum.")
    fn_text = prompts.style().first_user_content(add_problem())
    assert "`add`" in fn_text and "standard input" not in fn_text


def test_starter_code_is_shown_once(tmp_path: Path) -> None:
    problem = add_problem()
    problem.starter_code = "def add(a, b):\n    ...\n"
    assert prompts.style().first_user_content(problem).count("def add(a, b):") == 1
    problem.statement = "Complete:\n```python\ndef add(a, b):\n    ...\n```"
    assert prompts.style().first_user_content(problem).count("def add(a, b):") == 1
    (tmp_path / "m.py").write_text("x = 1\n")
    project = Problem(
        id="p",
        statement="fix it",
        kind="pytest",
        public_tests=[],
        hidden_tests=[],
        starter_code="x = 1\n",
        project_dir=str(tmp_path),
        target_file="m.py",
        test_command="python -m pytest -q",
    )
    text = prompts.style().first_user_content(project)
    assert "`m.py`" in text and "`python -m pytest -q`" in text and "Current content of the file" in text


def test_build_alternates_reply_and_feedback_and_strips_thinking() -> None:
    history = [
        ("<think>long musing</think>\nAnswer 1\n```python\nprint(1)\n```", "Input:\n1\nError:\nboom"),
        ("Answer 2", "feedback 2"),
    ]
    messages = prompts.style("reason_first", "default").build(sum_problem(), history)  # the paper's words
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert messages[2]["content"] == "Answer 1\n```python\nprint(1)\n```"
    assert (
        messages[3]["content"] == prompts.style("reason_first", "default").feedback_prefix + "Input:\n1\nError:\nboom"
    )
    assert "trace the execution of your previous code" in messages[3]["content"]
    assert "single ```python code block" in messages[3]["content"]
    assert messages[5]["content"].endswith("Here is the execution feedback:\nfeedback 2")
    assert prompts.feedback_of(messages[5]["content"]) == "feedback 2"
    assert prompts.style().build(sum_problem(), []) == prompts.style().initial_messages(sum_problem())
    served = prompts.style().build(sum_problem(), history)  # the configured wording: feedback first, then the ask
    assert served[3]["content"].startswith(
        "Here is the execution feedback:\nInput:\n1\nError:\nboom\n\nFix your previous"
    )


def test_every_named_style_keeps_the_format_and_the_feedback_recoverable() -> None:
    feedback = "Input:\nadd(1, 2)\nProgram's Output:\n-1\nExpected Output:\n3"
    names = [(a, w) for a in prompts.answer_formats() for w in prompts.feedback_wordings()]
    assert ("code_first", "code_first") in names and ("reason_first", "default") in names
    texts = set()
    for answer, wording in names:
        style = prompts.style(answer, wording)
        first = style.first_user_content(add_problem())
        assert "```python code block" in first and prompts.answer_formats()[answer] in first
        turn = style.feedback_content(feedback)
        assert prompts.feedback_of(turn) == feedback
        texts.add((first, turn))
    assert len(texts) == len(names)  # every pair of names is a different prompt


def test_the_loop_settings_choose_the_style_and_refuse_unknown_names() -> None:
    import pytest

    from assistant.settings import LoopSettings

    style = prompts.style_for(LoopSettings(answer_format="code_first", feedback_wording="brief"))
    assert "write nothing before it" in style.first_user_content(sum_problem())
    assert style.feedback_content("x").startswith("Your previous program failed the test below.")
    with pytest.raises(ValueError, match="unknown answer format 'nope'; use one of reason_first, code_first"):
        LoopSettings(answer_format="nope")
    with pytest.raises(ValueError, match="unknown feedback wording 'nope'; use one of default"):
        LoopSettings(feedback_wording="nope")


def test_a_model_gets_its_own_wording_unless_the_loop_names_one(tmp_path: Path) -> None:
    import pytest

    from assistant.errors import ConfigError
    from assistant.settings import LoopSettings

    catalog = tmp_path / "prompts.yaml"
    wordings = "feedback_wordings: {brief: {prefix: 'Wrong.\n\nHere is the execution feedback:\n'}}\n"
    catalog.write_text("answer_formats: {a: Answer.}\n" + wordings + "model_wordings: {big: brief}\n")
    unset = LoopSettings(feedback_wording=None)
    assert prompts.wording_for(unset, "big", path=catalog) == "brief"
    assert prompts.wording_for(unset, "small", path=catalog) == prompts.DEFAULT_FEEDBACK_WORDING
    assert prompts.wording_for(unset, None, path=catalog) == prompts.DEFAULT_FEEDBACK_WORDING
    assert prompts.wording_for(LoopSettings(feedback_wording="default"), "big", path=catalog) == "default"
    bad = tmp_path / "bad.yaml"
    bad.write_text("answer_formats: {a: Answer.}\n" + wordings + "model_wordings: {big: nope}\n")
    with pytest.raises(ConfigError, match="bad.yaml: .*unknown feedback wording 'nope'"):
        prompts.wording_for(unset, "big", path=bad)


def test_a_wording_without_the_marker_is_refused(tmp_path: Path) -> None:
    import pytest

    bad = tmp_path / "prompts.yaml"
    bad.write_text("answer_formats: {a: Answer.}\nfeedback_wordings: {odd: {prefix: Fix it.}}\n")
    with pytest.raises(prompts.PromptError, match="must end its prefix with 'Here is the execution feedback:'"):
        prompts.style("a", "odd", path=bad)
