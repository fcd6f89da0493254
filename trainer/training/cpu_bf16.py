"""Whether this CPU multiplies bfloat16 natively (AMX or AVX512-BF16 instructions).

Where it does, the frozen base model in bf16 is the faster training path (configs/train.yaml
`cpu-small`: 2.3-3.8x over float32 on an AMX CPU). Where it does not, PyTorch's bf16 matrix
products fall back to a scalar loop: on a 2-core AVX2 AMD EPYC, a 2048x896 @ 896x4864 product
took 18.7 s in bf16 against 0.16 s in float32, and a GRPO step of the 0.5B model went from
minutes to over 20. `train.cpu_bf16: auto` therefore keeps float32 on such a CPU.
"""

from __future__ import annotations

from pathlib import Path

NATIVE_FLAGS = ("amx_bf16", "avx512_bf16")
PROBES = ("_is_amx_tile_supported", "_is_avx512_bf16_supported")


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> set[str]:
    """The CPU's feature flags as the kernel lists them (empty where there is no such file)."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return set()
    return {flag for line in text.splitlines() if line.startswith("flags") for flag in line.split(":", 1)[1].split()}


def native_bf16() -> bool:
    """True when PyTorch's own CPU probes, or else the kernel's flags, show AMX or AVX512-BF16."""
    import torch

    probes = [getattr(torch.cpu, name, None) for name in PROBES]
    if all(callable(p) for p in probes):
        return any(p() for p in probes)  # type: ignore[misc]
    return bool(set(NATIVE_FLAGS) & cpu_flags())
