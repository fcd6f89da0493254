"""vLLM's parallel settings (tensor/data parallel size, max_loras) reach the server's command
line, read back by vLLM's own argument parser (no server is started)."""

from __future__ import annotations

from pathlib import Path

import pydantic
import pytest

from assistant.serving import vllm_args
from assistant.settings import ServerSettings


def _parsed(argv: list[str]):
    from vllm.entrypoints.launchers.cli_args import make_arg_parser
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    assert argv[1:3] == ["-m", "vllm.entrypoints.openai.api_server"]
    return make_arg_parser(FlexibleArgumentParser()).parse_args(argv[3:])


def test_parallel_sizes_and_max_loras_reach_vllm() -> None:
    settings = ServerSettings(tensor_parallel_size=2, data_parallel_size=3, max_loras=5)
    argv, _env = vllm_args.command(Path("/models/tiny"), "tiny", settings, 8123)
    assert argv[argv.index("--tensor-parallel-size") + 1] == "2"
    assert argv[argv.index("--data-parallel-size") + 1] == "3"
    args = _parsed(argv)
    assert (args.tensor_parallel_size, args.data_parallel_size, args.max_loras) == (2, 3, 5)
    assert args.enable_lora and args.port == 8123 and args.served_model_name == ["tiny"]


def test_one_gpu_one_replica_leaves_the_flags_off() -> None:
    argv, _env = vllm_args.command(Path("/models/tiny"), "tiny", ServerSettings(), 8123)
    assert "--tensor-parallel-size" not in argv and "--data-parallel-size" not in argv
    args = _parsed(argv)
    assert (args.tensor_parallel_size, args.data_parallel_size, args.max_loras) == (1, 1, 4)


def test_sizes_below_one_are_refused() -> None:
    with pytest.raises(pydantic.ValidationError, match="tensor_parallel_size"):
        ServerSettings(tensor_parallel_size=0)
