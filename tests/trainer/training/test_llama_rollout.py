"""GRPO completions through llama.cpp (trainer/training/llama_rollout.py), with real parts: SmolLM2's
tokenizer for the stop rule, and for the run the llama-server built at set-up serving SmolLM2's
GGUF with the step's LoRA converted by llama.cpp's script, the real sandbox as the reward.

The stop rule must end a completion at the token where transformers generation (`FenceStop`) ends
it, or the two engines would train on different completions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assistant.messages.repetition import RepeatStop
from assistant.serving import llama_build, models
from tests.trainer.trainer_fakes import RIGHT_SUM, WRONG_SUM, sum_problem
from tests.trainer.training.tiny_grpo import one_session_dataset
from trainer.train_settings import load_train_settings
from trainer.training import grpo
from trainer.training.fence_stop import FenceStop
from trainer.training.llama_rollout import Done, LlamaRollouts, cut

REPLIES = (
    "Here is the fix:\n```python\ndef f(x):\n    return x + 1\n```\nIt adds one, as the test expects.",
    "```text\nnot code\n```\nand then\n```python\nprint(2)\n```\ntrailing words",
    "```python\n```\n```python\nprint(3)\n```",  # an empty block first: the answer is the second
    "no code at all, just words " * 3,
    "abc" + "loop forever and ever " * 40,
)


@pytest.fixture(scope="module")
def smol(test_config: Any) -> Any:
    from transformers import AutoTokenizer

    models.prepare("smollm2", test_config.paths, progress=lambda _: None)
    return AutoTokenizer.from_pretrained(str(models.resolve("smollm2", test_config.paths)))


def _fence_stop_length(tokenizer: Any, ids: list[int], repeat: RepeatStop) -> int | None:
    """Where transformers' FenceStop ends these tokens, fed one at a time as `generate` does."""
    import torch

    stop = FenceStop(tokenizer, 0, repeat)
    for n in range(1, len(ids) + 1):
        if bool(stop(torch.tensor([ids[:n]]))[0]):
            return n
    return None


@pytest.mark.parametrize("reply", REPLIES)
def test_the_cut_is_where_transformers_generation_stops(smol: Any, reply: str) -> None:
    ids = smol(reply, add_special_tokens=False)["input_ids"]
    repeat = RepeatStop(32, 8)

    def decode(tokens: list[int]) -> str:
        return smol.decode(tokens, skip_special_tokens=True)

    assert cut(ids, decode, repeat, fence=True) == _fence_stop_length(smol, ids, repeat)


def test_a_stop_at_another_blocks_fence_is_continued(smol: Any) -> None:
    """The server's stop string also fires at a fence that closes a non-python block: that row is
    continued from its tokens until the answer's own fence (the transformers path never stops there)."""
    first = smol("```text\nnot code\n```\n", add_special_tokens=False)["input_ids"]
    rest = smol("```python\nprint(2)\n```\nwords", add_special_tokens=False)["input_ids"]
    rollouts = LlamaRollouts.__new__(LlamaRollouts)
    rollouts.tokenizer, rollouts.fence, rollouts.repeat = smol, True, RepeatStop(32, 8)
    rollouts.stop_ids, rollouts.counts = {smol.eos_token_id}, {"continued": 0, "tokens": 0}
    asked: list[list[int]] = []

    def request(prompt: list[int], n: int, params: dict[str, Any]) -> list[dict[str, Any]]:
        asked.append(prompt)
        return [{"tokens": rest, "stop_type": "word"}]

    rollouts._request = request  # the server's reply to the continuation, scripted
    done = rollouts._finish([1, 2], {"tokens": first, "stop_type": "word"}, {}, limit=200)
    assert asked == [[1, 2, *first]]
    assert smol.decode(done.tokens).endswith("print(2)\n```") and done.ended


def test_rows_become_what_generate_returns(smol: Any) -> None:
    import torch

    rollouts = LlamaRollouts.__new__(LlamaRollouts)
    rollouts.tokenizer, rollouts.eos = smol, int(smol.eos_token_id)
    prompts = torch.tensor([[0, 5, 6], [7, 8, 9]])
    out = rollouts._sequences(prompts, [Done([11, 12], True), Done([13, 14, 15], False)])
    eos = rollouts.eos
    assert out[0].tolist()[:6] == [0, 5, 6, 11, 12, eos]  # ended: EOS after its tokens
    assert out[1].tolist() == [7, 8, 9, 13, 14, 15]  # ran out of tokens: no EOS


@pytest.mark.docker
def test_a_grpo_run_generates_through_llama_cpp_with_each_steps_lora(
    tmp_path: Path, sandbox: Any, test_config: Any
) -> None:
    cfg = test_config
    if llama_build.installed(cfg.paths.cache_dir) is None:
        pytest.fail("llama.cpp is not built: `make test` builds it (`cobalt engine build`)")
    models.prepare("smollm2", cfg.paths, progress=lambda _: None)
    settings = load_train_settings(cfg.train, "test")
    settings.grpo.update(max_completion_length=48, num_generations=4, per_device_train_batch_size=4)
    settings = settings.model_copy(
        update={"rollouts": settings.rollouts.model_copy(update={"engine": "llama.cpp"}), "greedy_anchor": True}
    )
    dataset = one_session_dataset(tmp_path / "ds", cfg, settings, sum_problem(), WRONG_SUM, RIGHT_SUM)

    # a server left behind by a run that was killed (its state file in the run's rollouts dir)
    from assistant.serving import private_server

    orphan, orphan_proc = private_server.start_private_llama(
        cfg.server,
        cfg.paths,
        models.gguf_file(models.resolve("smollm2", cfg.paths)),
        "policy",
        tmp_path / "run" / "rollouts" / "server",
        progress=lambda _: None,
    )
    said: list[str] = []
    result = grpo.train(
        settings,
        model="smollm2",
        dataset=dataset,
        out=tmp_path / "run",
        paths=cfg.paths,
        sandbox=sandbox,
        max_steps=2,
        progress=said.append,
    )
    assert orphan_proc.wait(timeout=30) is not None  # stopped by the new run, not left running
    assert any("completions by llama.cpp" in line for line in said)

    rollouts = result.meta["rollouts"]
    assert rollouts["engine"] == "llama.cpp"
    assert rollouts["restarts"] == 2  # the server took each step's weights
    assert rollouts["requests"] >= 4 and rollouts["tokens"] > 0  # a greedy and a sampled request per step
    rows = grpo.read_metrics(tmp_path / "run")
    assert [r["step"] for r in rows] == [1, 2] and all(r["completions/mean_length"] > 0 for r in rows)
    assert result.meta["metrics"]["sandbox"]["programs_run"] > 0 or result.meta["metrics"]["sandbox"]["scored"] > 0
    assert not list((tmp_path / "run" / "rollouts" / "server").glob("server.json"))  # stopped and unrecorded


def test_auto_takes_llama_cpp_where_the_model_has_a_gguf_and_the_engine_is_built(test_config: Any) -> None:
    from assistant.errors import UserError
    from trainer.training.llama_rollout import wanted

    paths = test_config.paths
    models.prepare("smollm2", paths, progress=lambda _: None)
    models.prepare("tiny", paths, progress=lambda _: None)
    smol, tiny = models.resolve("smollm2", paths), models.resolve("tiny", paths)
    built = llama_build.installed(paths.cache_dir) is not None
    assert wanted("auto", smol, paths, use_vllm=False) is built  # no CUDA here
    assert wanted("auto", tiny, paths, use_vllm=False) is False  # no GGUF file: transformers
    assert wanted("auto", smol, paths, use_vllm=True) is False
    assert wanted("transformers", smol, paths, use_vllm=False) is False
    assert wanted("llama.cpp", tiny, paths, use_vllm=False) is True  # asked for: install() says what is missing
    with pytest.raises(UserError, match="exclude each other"):
        wanted("llama.cpp", smol, paths, use_vllm=True)
