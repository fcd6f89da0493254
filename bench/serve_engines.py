"""The measuring parts of `cobalt bench serve --engines`: streamed requests timed per token
(time to first token, decode tok/s, aggregate tok/s), the peak resident memory of a server's
process tree (polled from /proc), `llama-bench` run on the same GGUF and its JSON read into
pp/tg tok/s, the server's one-stream decode and llama-bench's tg measured back to back in
rounds (so a machine whose speed drifts between minutes drifts under both), the CPU every figure
was measured on, and the three engine ratios with their targets. Starts no server; `bench.serve`
runs the engines one at a time."""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from assistant.serving import llama_build

BENCH_PROMPT, BENCH_GEN = 512, 128  # llama-bench -p / -n
BENCH_TIMEOUT_S = 900
# (name, (column, figure) over (column, figure), target); a column is an engine or "llama-bench".
TARGETS = (
    ("llama.cpp single / vLLM single", ("llama.cpp", "single_decode_tok_s"), ("vllm", "single_decode_tok_s"), 2.0),
    # measured back to back in rounds (`paired_rounds`), the medians of the two columns
    (
        "llama.cpp single / llama-bench tg",
        ("llama.cpp", "paired_decode_tok_s"),
        ("llama.cpp", "paired_bench_tg_tok_s"),
        0.9,
    ),
    ("llama.cpp aggregate / vLLM aggregate", ("llama.cpp", "aggregate_tok_s"), ("vllm", "aggregate_tok_s"), 0.9),
)


@dataclass
class Sample:
    """One streamed request: tokens generated, and seconds from sending to the first token and to the end."""

    tokens: int
    ttft_s: float
    total_s: float

    @property
    def decode_tok_s(self) -> float:
        """Tokens after the first over the time after the first (the decode rate, prefill left out)."""
        return (self.tokens - 1) / max(self.total_s - self.ttft_s, 1e-9)


async def _stream(client: Any, model: str, prompt: str, tokens: int) -> Sample:
    start = time.perf_counter()
    first: float | None = None
    chunks, usage = 0, None
    stream = await client.chat.completions.create(
        model=model,
        messages=[{"role": "user", "content": prompt}],
        max_tokens=tokens,
        temperature=0.0,
        stream=True,
        stream_options={"include_usage": True},
        extra_body={"ignore_eos": True, "min_tokens": tokens},
    )
    async for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage.completion_tokens
        if chunk.choices:
            delta = chunk.choices[0].delta
            if delta.content or getattr(delta, "reasoning_content", None):
                first = first if first is not None else time.perf_counter()
                chunks += 1
    end = time.perf_counter()
    return Sample(usage if usage else chunks, (first or end) - start, end - start)


async def _requests(api_base: str, model: str, prompts: list[str], tokens: int, in_flight: int) -> list[Sample]:
    from openai import AsyncOpenAI  # heavy third-party: imported when a server is measured

    client = AsyncOpenAI(base_url=api_base, api_key="EMPTY", timeout=1800)
    gate = asyncio.Semaphore(in_flight)

    async def one(prompt: str) -> Sample:
        async with gate:
            return await _stream(client, model, prompt, tokens)

    async with client:  # closed inside this event loop (asyncio.run closes the loop after)
        return list(await asyncio.gather(*(one(p) for p in prompts)))


def single_decode(api_base: str, model: str, prompts: list[str], tokens: int) -> float:
    """The mean decode tok/s of `prompts` sent one at a time."""
    alone = asyncio.run(_requests(api_base, model, prompts, tokens, 1))
    return round(sum(s.decode_tok_s for s in alone) / len(alone), 3)


def paired_rounds(server: Callable[[], float], bench: Callable[[], float | None], rounds: int) -> dict[str, Any]:
    """`rounds` times: the server's one-stream decode, then llama-bench's tg, back to back; the
    medians of each and the rounds themselves. A failed llama-bench (None) ends the rounds."""
    done: list[dict[str, float]] = []
    for _ in range(rounds):
        decode = server()
        tg = bench()
        if not tg:
            break
        done.append({"server_decode_tok_s": decode, "bench_tg_tok_s": tg, "ratio": round(decode / tg, 3)})
    if not done:
        return {"paired_rounds": []}
    return {
        "paired_decode_tok_s": round(statistics.median(r["server_decode_tok_s"] for r in done), 3),
        "paired_bench_tg_tok_s": round(statistics.median(r["bench_tg_tok_s"] for r in done), 3),
        "paired_rounds": done,
    }


def speeds(
    api_base: str, model: str, prompts: list[str], tokens: int, single: int, progress: Callable[[str], None]
) -> dict[str, float]:
    """Warm up with one short request, then `single` requests one at a time and all of `prompts` in flight."""
    asyncio.run(_requests(api_base, model, prompts[:1], 8, 1))
    progress(f"  {single} requests one at a time ...")
    alone = asyncio.run(_requests(api_base, model, prompts[:single], tokens, 1))
    progress(f"  {len(prompts)} requests in flight ...")
    start = time.perf_counter()
    together = asyncio.run(_requests(api_base, model, prompts, tokens, len(prompts)))
    wall = time.perf_counter() - start

    def mean(values: list[float]) -> float:
        return round(sum(values) / len(values), 3)

    return {
        "single_decode_tok_s": mean([s.decode_tok_s for s in alone]),
        "single_e2e_tok_s": mean([s.tokens / s.total_s for s in alone]),
        "ttft_s": mean([s.ttft_s for s in alone]),
        "aggregate_tok_s": round(sum(s.tokens for s in together) / wall, 3),
        "aggregate_ttft_s": mean([s.ttft_s for s in together]),
        "tokens_per_request": mean([float(s.tokens) for s in alone + together]),
    }


def _tree(root: int) -> list[int]:
    """`root` and every descendant, found by scanning /proc for parent pids."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat[stat.rfind(")") + 2 :].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, [])
    return found


def tree_rss_mb(root: int) -> float:
    """The summed VmRSS of a process and its descendants, in MB (shared pages counted once per process)."""
    total_kb = 0
    for pid in _tree(root):
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total_kb += int(line.split()[1])
        except (OSError, ValueError):
            continue
    return total_kb / 1024


class PeakRss:
    """`with PeakRss(pid) as peak:` polls the tree's RSS in a thread; `peak.mb` is the largest seen."""

    def __init__(self, pid: int, every_s: float = 0.2) -> None:
        self.pid, self.every_s, self.mb = pid, every_s, 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def _poll(self) -> None:
        while not self._stop.is_set():
            self.mb = max(self.mb, tree_rss_mb(self.pid))
            self._stop.wait(self.every_s)

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


def parse_llama_bench(output: str) -> dict[str, float]:
    """llama-bench's `-o json` output (a list of test rows) as {"pp512": tok/s, "tg128": tok/s}."""
    rows = json.loads(output[output.index("[") :])
    found: dict[str, float] = {}
    for row in rows:
        n_prompt, n_gen = int(row.get("n_prompt", 0)), int(row.get("n_gen", 0))
        name = f"pp{n_prompt}" if n_gen == 0 else f"tg{n_gen}" if n_prompt == 0 else f"pp{n_prompt}+tg{n_gen}"
        found[name] = round(float(row["avg_ts"]), 3)
    return found


def llama_bench(cache_dir: Path, gguf: Path, threads: int, prompt: int = BENCH_PROMPT) -> dict[str, Any]:
    """pp/tg tok/s of `llama-bench` on `gguf` (`prompt` 0: tg only), or {"error": one sentence};
    run while no server computes."""
    try:
        argv = [str(llama_build.binary(cache_dir, "llama-bench")), "-m", str(gguf), "-t", str(threads)]
    except llama_build.EngineBuildError as exc:
        return {"error": str(exc)}
    argv += ["-p", str(prompt), "-n", str(BENCH_GEN), "-r", "3", "-o", "json"]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=BENCH_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {"error": f"llama-bench did not finish within {BENCH_TIMEOUT_S} s"}
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"llama-bench exited with code {proc.returncode}: {last}"}
    try:
        return {**parse_llama_bench(proc.stdout), "threads": threads, "gguf": str(gguf)}
    except (ValueError, KeyError, TypeError) as exc:
        return {"error": f"llama-bench's JSON output could not be read: {exc}"}


def ratios(figures: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The three targets over `figures` (engine or "llama-bench" -> its figures); a ratio whose
    two figures were not both measured has value None and is not met."""
    out = []
    for name, (top_engine, top_key), (bottom_engine, bottom_key), target in TARGETS:
        top = figures.get(top_engine, {}).get(top_key)
        bottom = figures.get(bottom_engine, {}).get(bottom_key)
        value = round(top / bottom, 3) if top and bottom else None
        out.append({"name": name, "value": value, "target": target, "met": value is not None and value >= target})
    return out


def cpu(cpuinfo: str | None = None) -> dict[str, Any]:
    """The CPU's model name, whether it has AVX-512 (avx512f), and the cores this process sees."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text()
        except OSError:
            cpuinfo = ""
    name = next((line.split(":", 1)[1].strip() for line in cpuinfo.splitlines() if line.startswith("model name")), "")
    return {
        "model": name or "unknown",
        "avx512": "avx512f" in llama_build.cpu_flags(cpuinfo),
        "cores": len(os.sched_getaffinity(0)),
    }
