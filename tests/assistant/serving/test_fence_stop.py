"""The fence stop in the client: a streamed reply ends at the closing fence of its python
block (litellm's scripted streams here; the real server in test_server.py)."""

from __future__ import annotations

from assistant.messages import extract
from tests.assistant.loop_fakes import ScriptedClient

REPLY = (
    "Read both numbers and add them.\n\n```python\na, b = map(int, input().split())\nprint(a + b)\n```\n\n"
    "### Explanation\nThis program " + "keeps talking " * 40
)


def test_the_stream_ends_at_the_closing_fence_and_keeps_the_program() -> None:
    streamed: list[str] = []
    result = ScriptedClient([REPLY]).chat([{"role": "user", "content": "sum"}], on_token=streamed.append)
    assert result.text == "".join(streamed) == extract.cut_at_answer(REPLY)
    assert result.text.endswith("print(a + b)\n```")
    assert result.finish_reason == "fence"
    assert extract.code(result.text) == extract.code(REPLY)
    assert 0 < result.completion_tokens < len(REPLY) // 4
    assert result.first_token_s is not None and result.first_token_s <= result.latency_s


def test_without_on_token_the_same_cut_applies() -> None:
    cut = extract.cut_at_answer(REPLY)
    assert ScriptedClient([REPLY]).chat([{"role": "user", "content": "sum"}]).text == cut


def test_the_stop_can_be_switched_off_and_leaves_open_answers_alone() -> None:
    client = ScriptedClient([REPLY])
    client.stop_at_fence = False
    assert client.chat([{"role": "user", "content": "sum"}]).text == REPLY
    unclosed = "Input:\n```\n1 2\n```\nthen ```python\nprint(1)\n"
    result = ScriptedClient([unclosed]).chat([{"role": "user", "content": "sum"}])
    assert result.text == unclosed and result.finish_reason != "fence"
