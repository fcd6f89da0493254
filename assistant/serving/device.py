"""Which accelerator this machine computes on: a CUDA GPU that torch sees, or the CPU.

The server picks its vLLM flags from it, the trainer its default profile, the benchmarks
their labels. torch is imported on the first question only; nothing is cached, so a test
that hides the GPU sees the change.
"""

from __future__ import annotations


def on_gpu() -> bool:
    """True when torch is installed and sees a CUDA device."""
    try:
        import torch

        return bool(torch.cuda.is_available())
    except ImportError:
        return False
