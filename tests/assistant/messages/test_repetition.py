"""The repetition stop: a streamed reply whose tail falls into a loop ends early with
finish_reason "repetition" (litellm's scripted streams), a reply that does not loop is left
alone, and the configured client has the stop on."""

from __future__ import annotations

from assistant.messages.repetition import RepeatStop, degenerate
from assistant.settings_loader import load_settings
from tests.assistant.loop_fakes import ScriptedClient

LINE = "    if n % 2 == 0 or n % 2 == 1:\n        return False\n"  # the is-prime turn that ran to the cap
LOOPING = "Here is the fix.\n\n```python\ndef is_prime(n: int) -> bool:\n" + LINE * 40
PROGRAM = "```python\n" + "".join(f"value_{i} = compute(value_{i - 1}) + {i}\n" for i in range(1, 60)) + "```"


def test_a_looping_stream_ends_early() -> None:
    client = ScriptedClient([LOOPING])
    client.repeat_stop = RepeatStop()
    result = client.chat([{"role": "user", "content": "is prime"}])
    assert result.finish_reason == "repetition"
    assert LOOPING.startswith(result.text) and len(result.text) < len(LOOPING) // 2
    assert degenerate(result.text) and result.text.count(LINE) >= 8


def test_without_the_stop_or_without_a_loop_the_reply_is_whole() -> None:
    assert ScriptedClient([LOOPING]).chat([{"role": "user", "content": "x"}]).text == LOOPING
    client = ScriptedClient([PROGRAM])
    client.repeat_stop = RepeatStop()
    result = client.chat([{"role": "user", "content": "x"}])
    assert result.text == PROGRAM and result.finish_reason == "fence"


def test_the_configured_client_stops_on_repetition() -> None:
    options = load_settings().model.client_options()
    assert options["repeat_stop"] == RepeatStop(32, 8)
    off = load_settings(overrides={"model": {"stop_on_repetition": False}}).model.client_options()
    assert off["repeat_stop"] is None


def test_degenerate_repetition_boundaries() -> None:
    block = "x = compute(value) + 1  # again\n"  # 32 characters
    assert len(block) == 32
    assert degenerate(block * 8) and not degenerate(block * 7)
    assert degenerate("a" * 256) and not degenerate("a" * 255)  # a short unit counts once 8 x 32 long
    assert not degenerate(("y" * 30 + "\n") * 9)  # a 31-character block repeated 9 times
    assert RepeatStop().looping("words " * 1000 + block * 8) and not RepeatStop().looping(block * 8 + PROGRAM * 20)
