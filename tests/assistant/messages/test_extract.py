"""extract: the last fenced python block of the answer part, or None."""

import pytest

from assistant.messages import extract


def test_last_python_block_wins() -> None:
    reply = "first\n```python\nx = 1\n```\nthen\n```python\nx = 2\n```\nbye"
    assert extract.code(reply) == "x = 2\n"


def test_untagged_and_py_tags_count_other_languages_do_not() -> None:
    assert extract.code("```\nprint(1)\n```") == "print(1)\n"
    assert extract.code("```py\nprint(2)\n```") == "print(2)\n"
    assert extract.code("```python3\nprint(3)\n```\n```bash\nls\n```") == "print(3)\n"
    assert extract.code("```bash\nls -la\n```") is None


def test_no_block_unclosed_block_and_empty_block_mean_no_code() -> None:
    assert extract.code("I would write a loop.") is None
    assert extract.code("```python\nprint('never closed')\n") is None
    assert extract.code("```python\n\n```") is None


def test_code_inside_thinking_is_ignored() -> None:
    reply = "<think>\n```python\nprint('draft')\n```\n</think>\nFinal:\n```python\nprint('final')\n```"
    assert extract.code(reply) == "print('final')\n"
    assert extract.code("<think>```python\nprint('draft')\n```</think> no code after") is None
    assert extract.after_thinking("a</think>b</think>  c ") == "c"
    assert extract.after_thinking("no thinking") == "no thinking"


def test_inline_backticks_in_code_do_not_end_the_block() -> None:
    reply = "```python\ns = '```'\nprint(s)\n```"
    assert extract.code(reply) == "s = '```'\nprint(s)\n"


def test_normalise_ignores_whitespace_only() -> None:
    assert extract.normalise("x=1\n\n  print( x )\n") == extract.normalise("x=1\nprint( x )")
    assert extract.normalise("x = 1") != extract.normalise("x = 2")
    assert extract.blocks("```Python\nA\n```")[0] == ("python", "A\n")


def test_code_key_ignores_docstrings_comments_and_formatting() -> None:
    """A banned-docstring copy of a program is the same program (it was counted as changed)."""
    original = 'def add(a, b):\n    """Add two numbers.\n\n    >>> add(1, 2)\n    3\n    """\n    return a + b  # sum\n'
    assert extract.code_key("def add(a,b):\n    return a+b\n") == extract.code_key(original)
    assert extract.code_key("def add(a, b):\n    return a - b\n") != extract.code_key(original)
    assert extract.code_key("def add(a, b):\n    return 'a + b'\n") != extract.code_key(
        "def add(a, b):\n    return a + b\n"
    )
    # the starter code (signature and docstring) is the same code as a bare stub
    assert extract.code_key('def f(x):\n    """Doc."""\n') == extract.code_key("def f(x):\n    pass\n")
    # what does not parse falls back to whitespace-normalised text
    assert extract.code_key("def f(:\n  x") == extract.code_key("def f(:   x") != extract.code_key("def f(: y")
    # a reply without code is never a resubmission, nor is anything after one
    assert extract.same_code("def add(a,b):\n    return a+b\n", original)
    assert not extract.same_code(None, original) and not extract.same_code(original, None)


# --- where a reply's answer is complete (the fence stop) ------------------------------

FULL_REPLIES = [
    "We add the numbers.\n\n```python\na, b = map(int, input().split())\nprint(a + b)\n```\n\n"
    "### Explanation\nThe program reads two numbers and prints their sum.",
    "Example input:\n```\n1 2\n```\nSo:\n```python\nprint(sum(map(int, input().split())))\n```\nDone.",
    "<think>\n```python\nprint(0)\n```\n</think>\nAnswer:\n```py\nprint(1)\n```\nThat is all.",
    "```python\ns = '```'\ndoc = '''\n  text ``` inside\n'''\nprint(s)\n```\nTrailing words.",
]


@pytest.mark.parametrize("reply", FULL_REPLIES)
def test_a_reply_cut_at_the_closing_fence_gives_the_same_program(reply: str) -> None:
    cut = extract.cut_at_answer(reply)
    assert cut.endswith("```") and len(cut) < len(reply)
    assert extract.code(cut) == extract.code(reply) is not None
    # every prefix of the reply before the cut is still open
    assert all(extract.answer_end(reply[:n]) is None for n in range(len(cut)))
    assert extract.answer_end(cut) == len(cut)


@pytest.mark.parametrize(
    "prefix",
    [
        "```python\nx = '```'\n",  # a fence inside a string is no fence
        "Input:\n```\n1 2\n",  # an untagged ``` line opens a block
        "Input:\n```\n1 2\n```\nNow the code:\n```python\nprint(1)\n",  # untagged block closed, python open
        "```python\n\n```",  # an empty block is not the answer
        "<think>\n```python\nprint(1)\n```\n",  # still thinking
        "```text\nhello\n```\n",  # another language
    ],
)
def test_the_stop_does_not_cut_an_open_answer(prefix: str) -> None:
    assert extract.answer_end(prefix) is None
    assert extract.cut_at_answer(prefix) == prefix


def test_a_fence_indented_in_a_list_item_gives_its_code_without_that_indentation() -> None:
    reply = (
        "1. Fix the loop:\n\n   ```python\n   def f(xs):\n       for x in xs:\n           yield x\n   ```\n2. Done.\n"
    )
    assert extract.code(reply) == "def f(xs):\n    for x in xs:\n        yield x\n"
    assert extract.answer_end(reply) == reply.index("2. Done.") - 1
    flush = "```python\n    return 1\n```"  # an unindented fence keeps its code's own indentation
    assert extract.code(flush) == "    return 1\n"
