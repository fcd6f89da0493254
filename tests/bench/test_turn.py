"""`cobalt bench turn` without a server: the task set, the server variants of each
configuration, the per-turn clock on a real loop (scripted model, real sandbox), and the
summary (median/p90, speculation share, Pass@1 of the first turn, speed-up ratios). The
full run is a measurement (see the module doc), not a test."""

from __future__ import annotations

from typing import Any

import pytest

from assistant.loop.session import Session
from bench import turn
from bench.turn_configs import parse
from tests.assistant.loop_fakes import RIGHT_SUM, WRONG_SUM, ScriptedClient, answer, sum_problem


def test_tasks_are_the_examples_then_the_first_humaneval_tasks_of_the_split(test_config: Any) -> None:
    """The benchmark picks defaults (prompt style, latency settings): val by default, not test."""
    from assistant.problems.sources import humaneval
    from assistant.problems.splits import select

    found = turn.tasks(test_config, 10, True, 0)
    examples = sorted(turn.EXAMPLES.glob("*.yaml"))
    assert len(found) == len(examples) + 10
    test_ids = {p.id for p in select(humaneval(), "test", test_config.eval.split)}
    assert all(p.id.startswith("HumanEval/") and p.id not in test_ids for p in found[-10:])
    assert {p.id for p in turn.tasks(test_config, 10, False, 0, "test")} <= test_ids
    assert len(turn.tasks(test_config, 10, True, 1)) == 1


def test_server_side_changes_on_llama_cpp_are_refused(test_config: Any) -> None:
    """llama.cpp reads none of speculation, prefix caching or preloading: rows labelled with them
    would measure two identical servers."""
    import argparse

    from assistant.errors import UserError

    settings = test_config.model_copy(update={"server": test_config.server.model_copy(update={"engine": "llama.cpp"})})
    args = argparse.Namespace(
        configs="baseline,all", prompt_on=None, prompt_off=None, model="tiny", humaneval=1, no_examples=True, tasks=0
    )
    args.split = "val"
    with pytest.raises(UserError, match="the server-side changes .* are vLLM's; this machine serves with llama.cpp"):
        turn.measure(settings, args, lambda _: None)


def test_each_configuration_switches_its_server_options(test_config: Any) -> None:
    off = turn.server_variant(test_config.server, parse("baseline", test_config))
    assert not off.speculative.enabled and off.prefix_caching is False and off.preload == []
    on = turn.server_variant(test_config.server, parse("no-prefix", test_config))
    assert on.speculative.enabled and on.prefix_caching is False and on.preload == test_config.server.preload


@pytest.mark.docker
def test_the_clock_times_every_turn_of_a_real_loop(sandbox: Any) -> None:
    clock = turn.TurnClock("sum")
    Session(
        sum_problem(), ScriptedClient([answer(WRONG_SUM), answer(RIGHT_SUM)]), sandbox, subscriber=clock, stream=True
    ).run()
    assert [r["turn"] for r in clock.rows] == [0, 1]
    assert all(0 <= r["ttft_s"] <= r["graded_s"] and r["tokens"] > 0 for r in clock.rows)
    assert clock.rows[0]["hidden_pass_rate"] < 1.0 == clock.rows[1]["hidden_pass_rate"]


def test_summary_and_ratios() -> None:
    rows = [
        {
            "task": "a",
            "turn": 0,
            "tokens": 100,
            "ttft_s": 1.0,
            "graded_s": 20.0,
            "generation_s": 18.0,
            "hidden_pass_rate": 1.0,
        },
        {
            "task": "b",
            "turn": 0,
            "tokens": 300,
            "ttft_s": 2.0,
            "graded_s": 60.0,
            "generation_s": 58.0,
            "hidden_pass_rate": 0.5,
        },
        {
            "task": "b",
            "turn": 1,
            "tokens": 200,
            "ttft_s": 1.5,
            "graded_s": 40.0,
            "generation_s": 38.0,
            "hidden_pass_rate": 1.0,
        },
    ]
    before = dict.fromkeys(turn.METRICS, 0.0)
    after = {
        **before,
        "vllm:generation_tokens_total": 600.0,
        "vllm:spec_decode_num_accepted_tokens_total": 150.0,
        "vllm:spec_decode_num_draft_tokens_total": 300.0,
        "vllm:prefix_cache_hits_total": 50.0,
        "vllm:prefix_cache_queries_total": 100.0,
    }
    s = turn.summarize(rows, before, after)
    assert s["graded_s"] == {"median": 40.0, "p90": 60.0} and s["tokens"]["median"] == 200
    assert s["spec_accepted_share"] == 0.25 and s["spec_draft_acceptance"] == 0.5
    assert s["prefix_cache_hit_rate"] == 0.5 and s["first_turn_pass_at_1"] == 0.5
    assert s["tok_s"] == round(600 / 114, 2)
    ratios = turn.ratios({"baseline": {"graded_s": {"median": 80.0}}, "all": {"graded_s": {"median": 20.0}}})
    assert ratios == {"all": 4.0}


def test_the_prompt_change_switches_the_style_and_shares_the_server(test_config: Any) -> None:
    import argparse

    from assistant.errors import UserError
    from assistant.loop import prompts

    args = argparse.Namespace(turns=2, temperature=0.0, prompt_on="code_first:brief", prompt_off="reason_first:default")
    on = turn.loop_for(parse("all", test_config), test_config.loop, args)
    off = turn.loop_for(parse("no-prompt", test_config), test_config.loop, args)
    args.prompt_on = None  # the configured style
    configured = turn.loop_for(parse("all", test_config), test_config.loop, args)
    assert (configured.answer_format, configured.feedback_wording) == (
        test_config.loop.answer_format,
        test_config.loop.feedback_wording,
    )
    assert (on.answer_format, on.feedback_wording, on.turns) == ("code_first", "brief", 2)
    assert (off.answer_format, off.feedback_wording) == ("reason_first", "default")
    assert prompts.style_for(on).first_user_content(sum_problem()) != prompts.style_for(off).first_user_content(
        sum_problem()
    )
    same = [turn.server_variant(test_config.server, parse(n, test_config)) for n in ("all", "no-prompt", "no-fence")]
    assert same[0] == same[1] == same[2]
    with pytest.raises(UserError, match="--prompt-on/--prompt-off 'code_first:nope': unknown feedback wording 'nope'"):
        turn.check_prompt("code_first:nope")
