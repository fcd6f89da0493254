"""`cobalt bench serve --engines`: the pure parts, without a server: llama-bench's JSON read into
pp/tg tok/s, the three engine ratios and their verdicts, the CPU line, the engine list, the table."""

from __future__ import annotations

import json
import os

import pytest

from assistant.errors import UserError
from bench.serve import engines, table
from bench.serve_engines import Sample, cpu, paired_rounds, parse_llama_bench, ratios, tree_rss_mb

BENCH_ROWS = [
    {"model_filename": "m.gguf", "n_threads": 2, "n_prompt": 512, "n_gen": 0, "avg_ts": 61.2345, "stddev_ts": 1.1},
    {"model_filename": "m.gguf", "n_threads": 2, "n_prompt": 0, "n_gen": 128, "avg_ts": 10.5, "stddev_ts": 0.2},
]


def test_llama_bench_json_gives_pp_and_tg() -> None:
    assert parse_llama_bench(json.dumps(BENCH_ROWS)) == {"pp512": 61.234, "tg128": 10.5}
    # a line printed before the JSON list is skipped
    assert parse_llama_bench("build: 1234\n" + json.dumps(BENCH_ROWS, indent=2))["tg128"] == 10.5


def test_llama_bench_output_without_json_is_an_error() -> None:
    with pytest.raises(ValueError):
        parse_llama_bench("error: failed to load model")


def test_ratios_and_verdicts() -> None:
    figures = {
        "llama.cpp": {
            "single_decode_tok_s": 9.6,
            "aggregate_tok_s": 30.0,
            "paired_decode_tok_s": 9.6,
            "paired_bench_tg_tok_s": 10.0,
        },
        "vllm": {"single_decode_tok_s": 4.0, "aggregate_tok_s": 35.0},
        "llama-bench": {"pp512": 60.0, "tg128": 10.0},
    }
    found = {r["name"]: r for r in ratios(figures)}
    assert found["llama.cpp single / vLLM single"] == {
        "name": "llama.cpp single / vLLM single",
        "value": 2.4,
        "target": 2.0,
        "met": True,
    }
    assert found["llama.cpp single / llama-bench tg"]["value"] == 0.96
    assert found["llama.cpp single / llama-bench tg"]["met"]
    assert found["llama.cpp aggregate / vLLM aggregate"]["value"] == pytest.approx(0.857, abs=1e-3)
    assert not found["llama.cpp aggregate / vLLM aggregate"]["met"]


def test_a_failed_engine_leaves_its_ratios_unmeasured() -> None:
    found = ratios({"llama.cpp": {"single_decode_tok_s": 9.0, "aggregate_tok_s": 30.0}, "vllm": {"error": "no"}})
    assert [r["value"] for r in found] == [None, None, None] and not any(r["met"] for r in found)


def test_paired_rounds_alternate_and_take_medians() -> None:
    calls: list[str] = []
    server_rates, bench_rates = iter([10.0, 8.0, 9.0]), iter([10.0, 9.0, 12.0])

    def server() -> float:
        calls.append("server")
        return next(server_rates)

    def bench() -> float:
        calls.append("bench")
        return next(bench_rates)

    found = paired_rounds(server, bench, 3)
    assert calls == ["server", "bench"] * 3
    assert found["paired_decode_tok_s"] == 9.0 and found["paired_bench_tg_tok_s"] == 10.0
    assert [r["ratio"] for r in found["paired_rounds"]] == [1.0, 0.889, 0.75]


def test_paired_rounds_stop_when_llama_bench_fails() -> None:
    assert paired_rounds(lambda: 9.0, lambda: None, 3) == {"paired_rounds": []}


def test_decode_rate_leaves_the_first_token_out() -> None:
    sample = Sample(tokens=129, ttft_s=2.0, total_s=18.0)
    assert sample.decode_tok_s == 8.0


def test_cpu_name_and_avx512() -> None:
    info = "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Gold\nflags\t\t: fpu avx2 avx512f avx512bw\n"
    assert cpu(info)["model"] == "Intel(R) Xeon(R) Gold" and cpu(info)["avx512"]
    assert cpu("flags\t: avx2\n") | {"cores": 0} == {"model": "unknown", "avx512": False, "cores": 0}


def test_this_process_has_resident_memory() -> None:
    assert tree_rss_mb(os.getpid()) > 1


def test_engine_list() -> None:
    assert engines(" vllm, llama.cpp,vllm ") == ["vllm", "llama.cpp"]
    with pytest.raises(UserError, match="unknown engine 'sglang'"):
        engines("llama.cpp,sglang")


def test_table_shows_a_failed_engine_and_the_verdicts() -> None:
    report = {
        "model": "tiny",
        "tokens_per_request": 128,
        "concurrency": 8,
        "device": "cpu",
        "cpu": {"model": "Some CPU", "avx512": True, "cores": 2},
        "engines": {
            "llama.cpp": {
                "single_decode_tok_s": 9.6,
                "ttft_s": 0.3,
                "aggregate_tok_s": 30.0,
                "peak_rss_mb": 900,
                **paired_rounds(lambda: 9.6, lambda: 10.0, 1),
            },
            "vllm": {"error": "the vLLM server exited during start-up (code 1): boom"},
        },
        "llama_bench": {"pp512": 60.0, "tg128": 10.0, "threads": 2, "gguf": "m.gguf"},
    }
    report["ratios"] = ratios({**report["engines"], "llama-bench": report["llama_bench"]})
    text = "\n".join(table(report))
    assert "Some CPU (AVX-512: yes)" in text and "vllm failed: the vLLM server exited" in text
    assert "pp512 60.00 tok/s, tg128 10.00 tok/s" in text
    assert "0.96x  (target >= 0.9x: met)" in text and "(target >= 2x: not measured)" in text
    assert "round 1: llama.cpp one stream 9.60 tok/s, then llama-bench tg 10.00 tok/s (0.96x)" in text
