"""The `tiny` test model: a 2-layer random Qwen2 with a byte-level BPE tokenizer trained here
on local Python sources, and a ChatML chat template. It writes garbage; it exists so that
tests can exercise serving, LoRA loading and training mechanics in seconds, offline. Its shape
is the `tiny:` entry of configs/models.yaml (`TinySpec`)."""

from __future__ import annotations

import random
import sysconfig
from pathlib import Path

from pydantic import Field

from assistant.settings import Section

CHATML = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


def _corpus(limit_files: int = 200, seed: int = 0) -> list[str]:
    """Python sources from the standard library: code-shaped text available offline."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in stdlib.glob("*.py"))
    random.Random(seed).shuffle(files)
    texts = []
    for path in files[:limit_files]:
        try:
            texts.append(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, OSError):
            continue
    return texts


def build_tokenizer(vocab_size: int, seed: int = 0):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=SPECIALS, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(_corpus(seed=seed), trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>", bos_token=None, unk_token=None
    )
    fast.chat_template = CHATML
    return fast


class TinySpec(Section):
    """The `tiny:` entry of a built-in model in configs/models.yaml: the random model's shape."""

    vocab_size: int = Field(ge=1, description="Tokens of the byte-level BPE tokenizer trained here.")
    hidden_size: int = Field(ge=1, description="Qwen2Config hidden_size.")
    intermediate_size: int = Field(ge=1, description="Qwen2Config intermediate_size.")
    num_hidden_layers: int = Field(ge=1, description="Qwen2Config num_hidden_layers.")
    num_attention_heads: int = Field(ge=1, description="Qwen2Config num_attention_heads.")
    num_key_value_heads: int = Field(ge=1, description="Qwen2Config num_key_value_heads.")
    max_position_embeddings: int = Field(ge=1, description="Qwen2Config max_position_embeddings.")
    seed: int = Field(0, description="Seeds the tokenizer's corpus and the random weights.")

    def qwen2_shape(self) -> dict[str, int]:
        """The fields named after Qwen2Config's: all but the vocabulary size (the trained
        tokenizer's length is the model's) and the seed."""
        return self.model_dump(exclude={"vocab_size", "seed"})


def build_tiny(spec: TinySpec, out: Path) -> None:
    import torch
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM

    seed = spec.seed
    tokenizer = build_tokenizer(spec.vocab_size, seed)
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        **spec.qwen2_shape(),
        tie_word_embeddings=False,
        eos_token_id=tokenizer.convert_tokens_to_ids("<|im_end|>"),
        pad_token_id=tokenizer.convert_tokens_to_ids("<|endoftext|>"),
        bos_token_id=None,
    )
    torch.manual_seed(seed)
    model = Qwen2ForCausalLM(config).to(torch.float32)
    model.generation_config = GenerationConfig(eos_token_id=config.eos_token_id, pad_token_id=config.pad_token_id)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
