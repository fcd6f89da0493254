"""Fixtures of the generation tests (greedy and guided groups): a tiny-model GRPOTrainer per test
module, and generation that never stops early (every row runs all 16 tokens)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.trainer.training.tiny_grpo import tiny_trainer


@pytest.fixture(scope="module")
def generating_trainer(test_config: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    return tiny_trainer(test_config, tmp_path_factory.mktemp("generation"))


@pytest.fixture
def no_eos(generating_trainer: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(generating_trainer.generation_config, "max_new_tokens", 16)
    monkeypatch.setattr(generating_trainer, "eos_token_ids", [-1])  # every row runs all 16 tokens
