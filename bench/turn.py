"""`cobalt bench turn`: what a graded turn costs, with each latency change on and off side
by side in one run (issue 13). Changes: `fence` (end the reply at its closing fence),
`prompt` (the configured prompt style, `--prompt-on`, instead of the paper's, `--prompt-off`), `repeat`
(end a reply that loops), `nodoc` (ban triple-quote tokens), `spec` (n-gram speculative
decoding), `prefix` (prefix caching), `preload` (tcmalloc and Intel OpenMP in LD_PRELOAD).
Configurations (`bench.turn_configs`): `baseline` (all off), `all`, `default` (what
the settings serve), `no-<change>` (all on but one) and expressions such as `default+nodoc`.

Tasks: the example problems and the first N HumanEval test-split tasks. Each runs as a real
session (model, sandbox, feedback; greedy by default, so configurations are paired) on a
server started for its configuration. Per turn: tokens, time to first token, time from the
request to a graded result; per configuration: their median and p90, tok/s, the share of
generated tokens that came from accepted speculation (vLLM's /metrics), the prefix-cache
hit rate, and the Pass@1 of the first turn (all hidden tests pass). Nothing is stored.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import httpx

from assistant.console import positive_int
from assistant.errors import UserError
from assistant.loop import prompts
from assistant.loop.session import Session, TokenStreamed, TurnFinished, TurnStarted
from assistant.problems.resolve import read_problem_file
from assistant.problems.schema import Problem
from assistant.problems.sources import humaneval
from assistant.problems.splits import select
from assistant.runtime import open_sandbox
from assistant.serving import llama_server, models, server
from assistant.serving.chat import ChatClient
from assistant.serving.device import on_gpu
from assistant.serving.token_bias import triple_quote_ban
from assistant.settings import PathsSettings
from bench.turn_configs import NAMED, SERVER_CHANGES, resolve

if TYPE_CHECKING:
    from assistant.settings import LoopSettings, ServerSettings, Settings

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "problems"
METRICS = (
    "vllm:generation_tokens_total",
    "vllm:spec_decode_num_accepted_tokens_total",
    "vllm:spec_decode_num_draft_tokens_total",
    "vllm:prefix_cache_hits_total",
    "vllm:prefix_cache_queries_total",
)
Progress = Callable[[str], None]
HELP = (
    "seconds per graded turn with each latency change (fence stop, prompt style, repetition stop, "
    "docstring ban, ngram, prefix cache, preload) on and off"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default=None, help="model to serve (default: config model.name)")
    parser.add_argument(
        "--configs",
        default="baseline,default,all",
        help=f"comma-separated configurations: {', '.join(NAMED)}, or an expression such as "
        "default+nodoc (default: baseline,default,all)",
    )
    parser.add_argument("--humaneval", type=int, default=10, help="first N HumanEval tasks of --split")
    parser.add_argument(
        "--split",
        default="val",
        choices=("train", "val", "test"),
        help="HumanEval split (default: val; test is for reports)",
    )
    parser.add_argument("--no-examples", action="store_true", help="leave out examples/problems")
    parser.add_argument("--tasks", type=int, default=0, help="use only the first N tasks (0: all)")
    parser.add_argument("--turns", type=positive_int, default=2, help="most turns per session")
    parser.add_argument("--temperature", type=float, default=0.0, help="sampling temperature (0: greedy, paired)")
    parser.add_argument(
        "--prompt-on",
        default=None,
        help="ANSWER_FORMAT:FEEDBACK_WORDING of configs/prompts.yaml with `prompt` on "
        "(default: the configured loop.answer_format:loop.feedback_wording)",
    )
    parser.add_argument(
        "--prompt-off",
        default="reason_first:default",
        help="ANSWER_FORMAT:FEEDBACK_WORDING with `prompt` off (default: the paper's prompt)",
    )


def tasks(settings: Settings, humaneval_n: int, examples: bool, limit: int, split: str = "val") -> list[Problem]:
    found = [p for path in sorted(EXAMPLES.glob("*.yaml")) for p in read_problem_file(path)] if examples else []
    if humaneval_n:
        found += select(humaneval(), split, settings.eval.split, limit=humaneval_n)
    return found[:limit] if limit else found


def server_variant(section: ServerSettings, on: frozenset[str]) -> ServerSettings:
    """The server settings with the server-side changes switched as `on` says."""
    spec = section.speculative.model_copy(update={"enabled": "spec" in on})
    return section.model_copy(
        update={
            "speculative": spec,
            "prefix_caching": "prefix" in on,
            "preload": section.preload if "preload" in on else [],
        }
    )


def metric(api_base: str, name: str) -> float:
    """One counter or gauge of the server's /metrics, summed over its labels."""
    text = httpx.get(api_base.removesuffix("/v1") + "/metrics", timeout=10).text
    return sum(float(v) for v in re.findall(rf"^{re.escape(name)}\{{[^}}]*\}} (\S+)$", text, re.MULTILINE))


def read_metrics(api_base: str) -> dict[str, float]:
    return {name: metric(api_base, name) for name in METRICS}


class TurnClock:
    """A session subscriber that times each turn: first token and graded result."""

    def __init__(self, task: str) -> None:
        self.task = task
        self.rows: list[dict[str, Any]] = []
        self._start: float | None = None
        self._first: float | None = None

    def __call__(self, event: Any) -> None:
        now = time.perf_counter()
        if isinstance(event, TurnStarted) and event.attempt == 0:
            self._start, self._first = now, None
        elif isinstance(event, TokenStreamed) and self._first is None:
            self._first = now
        elif isinstance(event, TurnFinished) and self._start is not None:
            turn = event.turn
            self.rows.append(
                {
                    "task": self.task,
                    "turn": turn.index,
                    "tokens": turn.tokens,
                    "ttft_s": round((self._first or now) - self._start, 3),
                    "graded_s": round(now - self._start, 3),
                    "generation_s": round(turn.latency_s, 3),
                    "hidden_pass_rate": turn.hidden_pass_rate,
                    "finish_reason": turn.finish_reason,
                }
            )


def _stats(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"median": None, "p90": None}
    ordered = sorted(values)
    return {
        "median": round(statistics.median(ordered), 3),
        "p90": round(ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))], 3),
    }


def summarize(rows: list[dict[str, Any]], before: dict[str, float], after: dict[str, float]) -> dict[str, Any]:
    delta = {k: after[k] - before[k] for k in METRICS}
    generated = delta["vllm:generation_tokens_total"]
    first = [r for r in rows if r["turn"] == 0]
    gen_s = sum(r["generation_s"] for r in rows)
    return {
        "turns": len(rows),
        "tokens": _stats([r["tokens"] for r in rows]),
        "ttft_s": _stats([r["ttft_s"] for r in rows]),
        "graded_s": _stats([r["graded_s"] for r in rows]),
        "tok_s": round(sum(r["tokens"] for r in rows) / gen_s, 2) if gen_s else None,
        "generated_tokens": generated,
        "spec_accepted_share": round(delta["vllm:spec_decode_num_accepted_tokens_total"] / generated, 3)
        if generated
        else None,
        "spec_draft_acceptance": round(
            delta["vllm:spec_decode_num_accepted_tokens_total"] / delta["vllm:spec_decode_num_draft_tokens_total"], 3
        )
        if delta["vllm:spec_decode_num_draft_tokens_total"]
        else None,
        "prefix_cache_hit_rate": round(
            delta["vllm:prefix_cache_hits_total"] / delta["vllm:prefix_cache_queries_total"], 3
        )
        if delta["vllm:prefix_cache_queries_total"]
        else None,
        "first_turn_pass_at_1": round(sum(r["hidden_pass_rate"] == 1.0 for r in first) / len(first), 3)
        if first
        else None,
    }


def loop_for(on: frozenset[str], loop: LoopSettings, args: argparse.Namespace) -> LoopSettings:
    """The loop of one configuration: its turns, its temperature and, as `prompt` says, the
    `--prompt-on` style (default: the configured one) or the `--prompt-off` one."""
    loop = loop.with_turns(args.turns).merged({"temperature": [args.temperature]})
    if "prompt" in on and not args.prompt_on:
        return loop  # the configured style (a null wording: the served model's own)
    answer, _, wording = (args.prompt_on if "prompt" in on else args.prompt_off).partition(":")
    return loop.merged({"answer_format": answer, "feedback_wording": wording})


def run_config(
    on: frozenset[str],
    info: server.ServerInfo,
    problems: list[Problem],
    settings: Settings,
    args: argparse.Namespace,
    sandbox: Any,
) -> dict[str, Any]:
    options = settings.model.client_options() | {"stop_at_fence": "fence" in on}
    if "repeat" not in on:
        options["repeat_stop"] = None
    client = ChatClient(
        f"hosted_vllm/{info.model}",
        api_base=info.api_base,
        display_name=info.model,
        **options,
        logit_bias=triple_quote_ban(info.model_path) if "nodoc" in on else None,
    )
    loop = loop_for(on, settings.loop, args)
    client.chat(
        [{"role": "user", "content": "Say hi."}], max_tokens=4
    )  # warm-up: a cold server's first request is slow
    before, rows = read_metrics(info.api_base), []
    for problem in problems:
        clock = TurnClock(problem.id)
        Session(problem, client, sandbox, loop, source="bench", subscriber=clock, stream=True).run()
        rows += clock.rows
    return {
        "changes": sorted(on),
        "speculative_served": info.speculative,
        **summarize(rows, before, read_metrics(info.api_base)),
        "rows": rows,
    }


def check_prompt(value: str) -> None:
    """`ANSWER_FORMAT:FEEDBACK_WORDING` names of configs/prompts.yaml, or one sentence."""
    answer, _, wording = value.partition(":")
    try:
        prompts.style(answer, wording or "?")
    except prompts.PromptError as exc:
        raise UserError(f"--prompt-on/--prompt-off {value!r}: {exc}") from None


def measure(settings: Settings, args: argparse.Namespace, progress: Progress) -> dict[str, Any]:
    import tempfile

    configs = resolve(args.configs, settings)
    for value in (args.prompt_on, args.prompt_off):
        if value is not None:
            check_prompt(value)
    model = args.model or settings.model.name
    models.resolve(model, settings.paths)  # one clear sentence if it is missing
    problems = tasks(settings, args.humaneval, not args.no_examples, args.tasks, args.split)
    engine = llama_server.engine(settings.server)
    server_side = sorted({c for on in configs.values() for c in on} & set(SERVER_CHANGES))
    if engine != "vllm" and server_side:
        raise UserError(
            f"the server-side changes {', '.join(server_side)} are vLLM's; this machine serves with {engine} "
            "(server.engine), so they would change nothing: measure the client-side ones, or set server.engine: vllm"
        )
    by_server: dict[tuple[bool, ...], list[str]] = {}
    for name, on in configs.items():  # configurations that differ only on the client side share a server
        by_server.setdefault(tuple(c in on for c in SERVER_CHANGES), []).append(name)
    results: dict[str, Any] = {}
    sandbox = open_sandbox(settings)
    try:
        with tempfile.TemporaryDirectory(prefix="cobalt-bench-turn-") as home:
            paths = PathsSettings(data_dir=Path(home), cache_dir=settings.paths.cache_dir)  # not the user's server
            for group in by_server.values():
                section = server_variant(settings.server, configs[group[0]])
                info, proc = server.start(section, paths, model, port=server.free_port(), progress=progress)
                try:
                    for name in group:
                        progress(f"{name}: {len(problems)} task(s), up to {args.turns} turn(s) each ...")
                        results[name] = run_config(configs[name], info, problems, settings, args, sandbox)
                finally:
                    server.stop_process(proc)
    finally:
        sandbox.close()
    return {
        "model": model,
        "tasks": [p.id for p in problems],
        "turns": args.turns,
        "temperature": args.temperature,
        "device": "gpu" if on_gpu() else "cpu",
        "configs": results,
        "ratios": ratios(results),
    }


def ratios(results: dict[str, Any]) -> dict[str, float | None]:
    """Median time to a graded result, baseline / each configuration (>1: faster)."""
    base = (results.get("baseline") or {}).get("graded_s", {}).get("median")
    return {
        name: (round(base / r["graded_s"]["median"], 2) if base and r["graded_s"]["median"] else None)
        for name, r in results.items()
        if name != "baseline"
    }


def main(args: argparse.Namespace, settings: Settings) -> int:
    report = measure(settings, args, (lambda _: None) if args.json else print)
    if args.json:
        print(json.dumps(report))
        return 0
    print(
        f"model {report['model']} · {len(report['tasks'])} task(s) · up to {report['turns']} turn(s) "
        f"· temperature {report['temperature']:g} ({report['device']})"
    )
    print(
        f"{'config':<12}{'turns':>6}{'tokens':>8}{'ttft s':>8}{'graded s':>10}{'p90 s':>8}{'tok/s':>7}"
        f"{'spec':>7}{'prefix':>8}{'pass@1':>8}{'speed-up':>9}"
    )
    for name, r in report["configs"].items():

        def fmt(value: Any, spec: str) -> str:
            return "-" if value is None else format(value, spec)

        print(
            f"{name:<12}{r['turns']:>6}{fmt(r['tokens']['median'], '.0f'):>8}{fmt(r['ttft_s']['median'], '.1f'):>8}"
            f"{fmt(r['graded_s']['median'], '.1f'):>10}{fmt(r['graded_s']['p90'], '.1f'):>8}{fmt(r['tok_s'], '.1f'):>7}"
            f"{fmt(r['spec_accepted_share'], '.2f'):>7}{fmt(r['prefix_cache_hit_rate'], '.2f'):>8}"
            f"{fmt(r['first_turn_pass_at_1'], '.2f'):>8}{fmt(report['ratios'].get(name), '.2f'):>9}"
        )
    return 0
