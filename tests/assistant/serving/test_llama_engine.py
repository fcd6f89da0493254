"""llama.cpp as the serving engine, with real parts: the llama-server built for this CPU at set-up,
SmolLM2-135M's GGUF file, litellm as the client, a PEFT adapter converted by llama.cpp's own script.

The agreement test compares the adapter served by llama.cpp (Q4_1 base + GGUF LoRA, activations
quantized by llama.cpp) with PyTorch (PEFT on the dequantized float32 base): greedy tokens and the
log-probs of those tokens, within tolerances measured on this model (see the constants).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Iterator

import pytest

from assistant.serving import hot_load, llama_build, llama_server, models, server
from assistant.serving.connect import resolve_client
from assistant.settings import PathsSettings
from tests.conftest import free_port, make_random_adapter

PROMPTS = (
    "<|im_start|>user\nWrite a Python function that returns the sum of a list.<|im_end|>\n<|im_start|>assistant\n",
    "import numpy as np\nimport pandas as",
)
TOKENS = 12
# The tolerances, measured here (SmolLM2, random rank-8 adapters of std 0.03 on q/v/o, 4 prompts x 12
# tokens): |log-prob(llama.cpp) - log-prob(PyTorch)| of each token llama.cpp chose, teacher-forced,
# was at most 0.28 nats (the base alone: 0.16); where the greedy picks differed, PyTorch's own pick led
# by at most 0.22 nats (a near tie). SmolLM2's Q4_1 weights are the same numbers in both; the rest is
# llama.cpp's 8-bit activation quantization. Larger random adapters (std 0.08) part by nats: the
# perturbed model amplifies that rounding, so the test keeps adapters of the size training makes.
LOGPROB_TOLERANCE = 0.35
NEAR_TIE = 0.25
ADAPTER_STD = 0.03


def _llama_settings(test_config: Any, home: Path) -> Any:
    section = test_config.server.model_copy(
        update={"engine": "llama.cpp", "llama": test_config.server.llama.model_copy(update={"parallel": 2})}
    )
    paths = PathsSettings(data_dir=home, cache_dir=test_config.paths.cache_dir)
    return test_config.model_copy(update={"server": section, "paths": paths})


@pytest.fixture(scope="module")
def llama_cfg(tmp_path_factory: pytest.TempPathFactory, test_config: Any) -> Iterator[Any]:
    cfg = _llama_settings(test_config, tmp_path_factory.mktemp("llama-home"))
    if llama_build.installed(cfg.paths.cache_dir) is None:
        pytest.fail("llama.cpp is not built: `make test` builds it (`cobalt engine build`)")
    models.prepare("smollm2", cfg.paths, progress=lambda _: None)
    yield cfg
    server.stop(cfg.paths)


def test_variants_follow_the_cpu_flags() -> None:
    avx512 = {"avx2", "fma", "f16c", "bmi2", "avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512cd", "avx512_vnni"}
    chosen = llama_build.choose_variant(avx512, "x86_64")
    assert chosen.name == "avx512-vnni" and "-DGGML_AVX512_VNNI=ON" in chosen.flags
    assert "-DGGML_AVX512_BF16=ON" not in chosen.flags  # never asked of a CPU without it
    assert llama_build.choose_variant({"avx2", "fma", "f16c", "bmi2"}, "x86_64").name == "avx2"
    assert llama_build.choose_variant({"avx2", "fma", "f16c"}, "x86_64").name == "generic"  # it builds with -mbmi2
    generic = llama_build.choose_variant({"sse4_2"}, "x86_64")
    assert generic.name == "generic" and {"-DGGML_SSE42=OFF", "-DGGML_BMI2=OFF"} <= set(generic.flags)
    assert llama_build.choose_variant(avx512, "aarch64").name == "generic"
    assert all("NATIVE=ON" not in f and "AMX" not in f.replace("AMX_", "") for f in llama_build.BASE_FLAGS)


def test_a_build_is_staged_under_its_lock_and_a_second_finds_it_done(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The build's own steps (configure, compile) replaced by ones that write the tools: what is
    checked is the staging, the marker and the lock, which a fresh machine's `make` runs once."""

    def fake_run(argv: list[str], log: Path, what: str, env: Any = None) -> None:
        if what == "compile":
            work = Path(argv[argv.index("--build") + 1])
            (work / "bin").mkdir(parents=True)
            for tool in llama_build.TARGETS:
                (work / "bin" / tool).write_text("#!/bin/sh\n")

    monkeypatch.setattr(llama_build, "_fetch_sdist", lambda cache, progress: tmp_path / "sdist.tar.gz")
    monkeypatch.setattr(llama_build, "_extract_tree", lambda sdist, out: out / "src")
    monkeypatch.setattr(llama_build, "_run", fake_run)
    cache = tmp_path / "cache"
    said: list[str] = []
    final = llama_build.build(cache, said.append)
    assert llama_build.installed(cache) == final
    assert sorted(p.name for p in (final / "bin").iterdir()) == sorted(llama_build.TARGETS)
    assert not (final / "build").exists() and not list(final.parent.glob("*.partial-*"))
    assert llama_build.build(cache, said.append) == final and "already built" in said[-1]


def test_auto_engine_is_llama_cpp_without_cuda(test_config: Any) -> None:
    section = test_config.server.model_copy(update={"engine": "auto"})
    assert llama_server.engine(section) == "llama.cpp"  # this machine has no GPU
    assert llama_server.engine(section.model_copy(update={"engine": "vllm"})) == "vllm"


def test_two_starts_at_once_make_one_server_that_answers_through_litellm(llama_cfg: Any) -> None:
    cfg = llama_cfg.model_copy(update={"server": llama_cfg.server.model_copy(update={"port": free_port()})})
    found: list[server.ServerInfo] = []

    def start() -> None:
        found.append(server.ensure(cfg.server, cfg.paths, "smollm2", progress=lambda _: None))

    threads = [threading.Thread(target=start) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(found) == 2 and found[0].pid == found[1].pid and found[0].engine == "llama.cpp"
    assert server.running(cfg.paths).pid == found[0].pid
    assert found[0].model_path.endswith("smollm2") and "--model" in found[0].argv
    client = resolve_client(cfg.model, "smollm2", server=cfg.server, paths=cfg.paths, progress=lambda _: None)
    reply = client.chat([{"role": "user", "content": "Write a Python function that adds two numbers."}])
    assert reply.text.strip() and reply.completion_tokens > 0
    assert hot_load.served_models(found[0].api_base) == ["smollm2"]


def _llama_greedy(api_base: str, prompt_ids: list[int], lora: dict[str, Any] | None) -> list[tuple[int, float]]:
    """(token id, log-prob) of llama-server's greedy continuation of the token ids."""
    import httpx

    body = {"prompt": prompt_ids, "n_predict": TOKENS, "temperature": 0.0, "n_probs": 1, "cache_prompt": False}
    body.update(lora or {})
    response = httpx.post(api_base.removesuffix("/v1") + "/completion", json=body, timeout=120)
    response.raise_for_status()
    probs = response.json()["completion_probabilities"]
    return [(int(p["id"]), float(p["logprob"])) for p in probs]


def _disagreements(model: Any, prompt_ids: list[int], greedy: list[tuple[int, float]]) -> list[str]:
    """Where PyTorch, teacher-forced on llama.cpp's greedy tokens, disagrees beyond the tolerances."""
    import torch

    tokens = [t for t, _ in greedy]
    ids = torch.tensor([prompt_ids + tokens])
    with torch.no_grad():
        logp = model(ids).logits[0, len(prompt_ids) - 1 : -1].float().log_softmax(-1)
    found = []
    for i, (token, served_logp) in enumerate(greedy):
        margin = float(logp[i].max() - logp[i][token])
        drift = abs(float(logp[i][token]) - served_logp)
        if margin > NEAR_TIE or drift > LOGPROB_TOLERANCE:
            found.append(f"token {i}: PyTorch's pick leads by {margin:.2f}, log-probs differ by {drift:.2f}")
    return found


def test_served_adapter_agrees_with_peft_and_is_chosen_per_request(llama_cfg: Any, tmp_path: Path) -> None:
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    cfg = llama_cfg.model_copy(update={"server": llama_cfg.server.model_copy(update={"port": free_port()})})
    base_dir = models.resolve("smollm2", cfg.paths)
    adapters = {
        name: make_random_adapter(base_dir, tmp_path / name, rank=8, seed=seed, std=ADAPTER_STD)
        for name, seed in (("smol-a", 1), ("smol-b", 2))
    }
    info = server.ensure(cfg.server, cfg.paths, "smollm2", progress=lambda _: None)
    # two commands loading at once (llama.cpp: each converted, then a restart with it): the
    # restarts take turns, so neither drops the other's adapter
    loaders = [
        threading.Thread(target=hot_load.load_adapter, args=(info.api_base, name, path))
        for name, path in adapters.items()
    ]
    for loader in loaders:
        loader.start()
    for loader in loaders:
        loader.join(600)
    info = server.running(cfg.paths)
    assert info is not None and sorted(info.loras) == ["smol-a", "smol-b"]
    assert hot_load.served_models(info.api_base) == ["smollm2", *info.loras]
    with pytest.raises(server.ServerError, match="already loaded"):
        hot_load.load_adapter(info.api_base, "smol-a", adapters["smol-a"])

    tokenizer = AutoTokenizer.from_pretrained(base_dir)
    base = AutoModelForCausalLM.from_pretrained(base_dir, dtype=torch.float32).eval()
    for prompt in PROMPTS:
        prompt_ids = tokenizer(prompt)["input_ids"]
        served = {
            name: _llama_greedy(info.api_base, prompt_ids, llama_server.lora_request(info.loras, name))
            for name in ("smollm2", "smol-a", "smol-b")
        }
        assert len({tuple(v) for v in served.values()}) == 3  # each request got its own weights
        for name, greedy in served.items():
            model = base if name == "smollm2" else PeftModel.from_pretrained(base, adapters[name]).eval()
            found = _disagreements(model, prompt_ids, greedy)
            if name != "smollm2":
                model.unload()  # PeftModel wraps `base` in place; take the adapter out for the next one
            assert not found, f"{name} on {prompt[:30]!r}: " + "; ".join(found)


def test_speculative_decoding_drafts_from_the_text_it_copies(llama_cfg: Any, tmp_path: Path) -> None:
    """`server.llama.speculative: ngram-simple` starts llama-server with draftless n-gram drafts: a
    greedy reply that repeats its prompt is drafted from it and the drafts are accepted. Off by
    default: in a 4-slot evaluation it was slower and changed greedy replies (docs/serving.md)."""
    import httpx

    llama = llama_cfg.server.llama.model_copy(update={"speculative": "ngram-simple", "parallel": 1})
    section = llama_cfg.server.model_copy(update={"port": free_port(), "llama": llama})
    paths = PathsSettings(data_dir=tmp_path, cache_dir=llama_cfg.paths.cache_dir)
    info = server.ensure(section, paths, "smollm2", progress=lambda _: None)
    try:
        assert info.argv[info.argv.index("--spec-type") + 1] == "ngram-simple"
        count = ", ".join(str(i) for i in range(1, 61))
        body = {"prompt": f"{count}\n{count[:40]}", "n_predict": 40, "temperature": 0.0}
        reply = httpx.post(info.api_base.removesuffix("/v1") + "/completion", json=body, timeout=120).json()
        assert reply["content"][:40] == count[40:80]  # the greedy continuation: the count, copied
        timings = reply["timings"]
        assert timings.get("draft_n", 0) > 0 and timings.get("draft_n_accepted", 0) > 0, (reply["content"], timings)
    finally:
        server.stop(paths)
    assert (
        "--spec-type"
        not in llama_server.command(Path("m.gguf"), "m", llama_cfg.server, 8000, llama_cfg.paths.cache_dir)[0]
    )  # the default: off


def test_a_damaged_source_download_is_removed_with_one_sentence(tmp_path: Path) -> None:
    """A download cut short (a kill, a full disk) was trusted by every later build, each ending in
    a tarfile traceback; it is now removed, so the next build fetches it again."""
    sdist = tmp_path / "llama_cpp_python-0.3.36.tar.gz"
    sdist.write_bytes(b"\x1f\x8b\x08\x00" + b"\x00" * 40)  # a gzip header, then nothing
    with pytest.raises(llama_build.EngineBuildError, match="is damaged .*run the build again"):
        llama_build._extract_tree(sdist, tmp_path / "out")
    assert not sdist.exists()
