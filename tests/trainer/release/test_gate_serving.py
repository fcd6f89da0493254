"""The gate's clients: each arm's sessions are worded as the product serves that model. The
1.5B's own feedback wording (configs/prompts.yaml model_wordings) must reach the gate's sessions
of the base model and of its adapters, not only those of `cobalt solve` and `cobalt eval`."""

from __future__ import annotations

from pathlib import Path

from assistant.loop.session import Session
from assistant.settings_loader import load_settings
from tests.assistant.loop_fakes import sum_problem
from trainer.release.gate_serving import GateServing

NOWHERE = "http://127.0.0.1:9/v1"  # nothing answers: neither llama.cpp nor vLLM fields are added


class Served(GateServing):
    def __init__(self, model: str) -> None:
        self.config = load_settings(None).model_copy(deep=True)
        self.config.model.suppress_docstrings = False  # no tokenizer read
        self.model, self.api_base, self.progress = model, NOWHERE, print


def wording(model: str, served_as: str) -> str:
    client = Served(model)._client(NOWHERE, served_as)
    return Session(sum_problem(), client, sandbox=None).prompts.feedback_wording_name  # type: ignore[arg-type]


def test_every_arm_of_the_gate_uses_the_models_own_wording(cobalt_home: Path) -> None:
    assert wording("qwen-coder-1.5b", "qwen-coder-1.5b") == "code_first"  # the base arm
    assert wording("qwen-coder-1.5b", "qwen-coder-1.5b-v3") == "code_first"  # an adapter's arm
    assert wording("qwen-coder", "qwen-coder-v1") == "instruction_last"  # the 0.5B keeps its own
