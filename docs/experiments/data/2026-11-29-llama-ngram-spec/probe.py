"""Probe: llama-server's n-gram speculation on stored feedback turns of the 1.5B (greedy).

Run from the repository root with the project's venv; reads prompts.json beside this file and
writes result-<variants>.json there. One fresh server per variant on port 8099.
"""

import json
import subprocess
import sys
import time
from pathlib import Path

import httpx

HERE = Path(__file__).parent
CACHE = Path.home() / ".cache/cobalt"
BIN = CACHE / "llama.cpp/0.3.36-avx512-vnni-vbmi-bf16/bin/llama-server"
MODEL = CACHE / "models/qwen-coder-1.5b/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
URL = "http://127.0.0.1:8099"
VARIANTS = {
    "none": [],
    "ngram-simple-16": ["--spec-type", "ngram-simple", "--spec-draft-n-max", "16"],
    "ngram-mod": [
        *("--spec-type", "ngram-mod", "--spec-ngram-mod-n-match", "8"),
        *("--spec-ngram-mod-n-min", "4", "--spec-ngram-mod-n-max", "32"),
    ],
}


def wait_ready() -> None:
    for _ in range(120):
        try:
            if httpx.get(f"{URL}/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)


def one(messages: list[dict]) -> dict:
    started = time.perf_counter()
    body = {"messages": messages, "temperature": 0, "max_tokens": 600, "cache_prompt": False}
    r = httpx.post(f"{URL}/v1/chat/completions", json=body, timeout=600).json()
    tm = r.get("timings", {})
    return {
        "wall": round(time.perf_counter() - started, 2),
        "out": r["usage"]["completion_tokens"],
        "prompt": r["usage"]["prompt_tokens"],
        "pred_tps": round(tm.get("predicted_per_second", 0), 2),
        "prompt_tps": round(tm.get("prompt_per_second", 0), 1),
        "draft_n": tm.get("draft_n"),
        "draft_acc": tm.get("draft_n_accepted"),
        "text": r["choices"][0]["message"]["content"],
    }


def main(names: list[str]) -> None:
    prompts = json.loads((HERE / "prompts.json").read_text())
    res: dict[str, list[dict]] = {}
    for name in names:
        argv = [str(BIN), "--model", str(MODEL), "--port", "8099", "--threads", "2", "--parallel", "1"]
        argv += ["--ctx-size", "4096", "--no-webui", *VARIANTS[name]]
        with open(HERE / f"server-{name}.log", "w") as log:
            server = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        wait_ready()
        rows = []
        for p in prompts:
            rows.append({"sid": p["sid"], **one(p["messages"])})
            print(name, {k: v for k, v in rows[-1].items() if k != "text"}, flush=True)
        server.terminate()
        server.wait()
        res[name] = rows
        (HERE / f"result-{'-'.join(names)}.json").write_text(json.dumps(res, indent=1))
    base = res.get("none")
    for name, rows in res.items():
        tokens, wall = sum(r["out"] for r in rows), sum(r["wall"] for r in rows)
        same = sum(a["text"] == b["text"] for a, b in zip(rows, base)) if base else None
        print(f"{name}: {tokens} tokens in {wall:.1f} s ({tokens / wall:.2f} tok/s end to end), same as none: {same}")


if __name__ == "__main__":
    main(sys.argv[1:] or list(VARIANTS))
