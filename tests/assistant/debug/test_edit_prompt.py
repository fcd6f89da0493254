"""A debugging prompt fits the model's context: the implicated code in full, the rest of the file
as an outline, thinned until it fits; a file whose implicated code alone cannot fit is refused in
one sentence. Counted with the real SmolLM2 tokenizer when the test cache has it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

import pytest

from assistant.debug.edit_prompt import Budget, DoesNotFit, TurnView, build
from assistant.debug.failures import Failure, frames
from assistant.debug.file_view import KEPT_ONLY, OUTLINE, SIGNATURES, render
from assistant.debug.localize import implicated, spans


def _big_module(functions: int = 200) -> str:
    parts = ['"""A generated module of about 2,000 lines."""', "import os", "import re", "", "LIMIT = 10", ""]
    for i in range(functions):
        parts += [
            f"def step_{i}(value, scale={i}):",
            f'    """Step {i} of the pipeline."""',
            "    total = 0",
            "    for k in range(scale):",
            "        total += k * value",
            f"    return total + {i}",
            "",
            "",
        ]
    parts += ["class Pipeline:", "    name = 'p'", "", "    def run(self, value):", "        return step_7(value)", ""]
    return "\n".join(parts) + "\n"


def _counter() -> Callable[[str], int]:
    cache = Path(os.environ.get("COBALT_CACHE", "")) / "models" / "smollm2" / "tokenizer.json"
    if cache.is_file():
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(cache))
        return lambda text: len(tokenizer.encode(text, add_special_tokens=False).ids)
    return lambda text: len(text) // 3 + 1


def _failure_text(source: str) -> str:
    lines = source.splitlines()
    run = lines.index("        return step_7(value)") + 1
    step = lines.index("def step_7(value, scale=7):") + 5
    return (
        "tests/test_pipe.py:5: in test_step\n    assert Pipeline().run(2) == 99\n"
        f"pkg/big.py:{run}: in run\n    return step_7(value)\n"
        f"pkg/big.py:{step}: in step_7\n    total += k * value\nE   TypeError: unsupported operand"
    )


def test_a_2000_line_file_fits_a_4096_token_context_with_room_for_the_answer() -> None:
    source = _big_module()
    assert len(source.splitlines()) >= 1600
    text = _failure_text(source)
    failure = Failure("tests/test_pipe.py::test_step", "failed", "TypeError", text, frames(text))
    found = implicated(source, "pkg/big.py", [failure])
    assert [s.qualname for s in found][:2] == ["step_7", "Pipeline.run"]
    budget = Budget(context_tokens=4096, answer_tokens=1024, count=_counter())
    view = TurnView(source, "pkg/big.py", "python -m pytest -q", failure, "0 passed, 1 failed of 1 tests")
    messages = build(view, found, budget, "functions", 1500)
    assert budget.tokens(messages) <= budget.prompt_tokens
    text = messages[1]["content"]
    assert 'def step_7(value, scale=7):\n    """Step 7 of the pipeline."""\n    total = 0' in text  # in full
    assert "TypeError: unsupported operand" in text and "`pkg/big.py`" in text
    assert "total += k * value\n    return total + 8" not in text  # step_8's body is left out


def test_a_file_that_cannot_fit_even_as_an_outline_is_refused_in_one_sentence() -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(3000))
    source = f"def huge():\n{body}\n    return x0\n"
    failure = Failure("t::test_huge", "failed", "boom", "pkg/h.py:2: in huge\nE   boom", frames("pkg/h.py:2: in huge"))
    found = implicated(source, "pkg/h.py", [failure])
    view = TurnView(source, "pkg/h.py", "pytest", failure, "0 passed, 1 failed of 1 tests")
    with pytest.raises(DoesNotFit, match=r"does not fit in the model's context even as an outline"):
        build(view, found, Budget(4096, 1024, lambda t: len(t) // 3 + 1), "functions", 1500)


def test_the_view_levels_keep_less_and_less_around_the_kept_code() -> None:
    source = _big_module(5)
    keep = [s for s in spans(source) if s.name == "step_1"]
    outline, signatures, kept = (render(source, keep, level) for level in (OUTLINE, SIGNATURES, KEPT_ONLY))
    assert "import os" in outline and "import os" not in signatures
    assert "def step_0(value, scale=0):\n    ...\n" in signatures and "def step_0" not in kept
    for view in (outline, signatures, kept):
        assert "        total += k * value\n    return total + 1\n" in view
    assert "class Pipeline:\n    name = 'p'\n    def run(self, value):\n        ...\n" in outline


def test_a_time_cap_takes_a_shorter_prompt_and_an_impossible_one_the_shortest_that_fits() -> None:
    source = _big_module()
    text = _failure_text(source)
    failure = Failure("tests/test_pipe.py::test_step", "failed", "TypeError", text, frames(text))
    found = implicated(source, "pkg/big.py", [failure])
    view = TurnView(source, "pkg/big.py", "python -m pytest -q", failure, "0 passed, 1 failed of 1 tests")
    count = _counter()
    roomy = Budget(context_tokens=16384, answer_tokens=1024, count=count)
    full = build(view, found, roomy, "functions", 1500)
    need = roomy.tokens(full)
    assert need > 1500  # the whole outline of a 2,000-line file
    capped = Budget(16384, 1024, count, cap=need // 2)
    shorter = build(view, found, capped, "functions", 1500)
    assert roomy.tokens(shorter) <= need // 2 and "def step_7(value, scale=7):" in shorter[1]["content"]
    smallest = build(view, found, Budget(16384, 1024, count, cap=0), "functions", 1500)
    assert roomy.tokens(smallest) < roomy.tokens(shorter)  # no prompt fits no time: the shortest is sent
    assert "total += k * value" in smallest[1]["content"]  # still the implicated code in full
    with pytest.raises(DoesNotFit):  # the context still refuses what time cannot
        build(view, found, Budget(600, 300, count, cap=0), "functions", 1500)


def test_the_traced_format_asks_for_a_trace_of_the_failure_before_the_focus_function() -> None:
    source = _big_module(20)
    text = _failure_text(source)
    failure = Failure("tests/test_pipe.py::test_step", "failed", "TypeError", text, frames(text))
    found = implicated(source, "pkg/big.py", [failure])
    budget = Budget(context_tokens=4096, answer_tokens=1024, count=_counter())
    view = TurnView(source, "pkg/big.py", "python -m pytest -q", failure, "0 passed, 1 failed of 1 tests")
    plain = build(view, found, budget, "functions", 1500)[1]["content"]
    traced = build(view, found, budget, "functions_traced", 1500)[1]["content"]
    assert "Write the code block first" in plain and "Write the code block first" not in traced
    ask = traced[traced.index("The bug is most likely in `step_7`") :]
    assert ask.index("trace the execution") < ask.index("```python code block holding `step_7`")
    assert traced[: traced.index(ask)] == plain[: plain.index("The bug is most likely in `step_7`")]  # the same view
