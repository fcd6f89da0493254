"""The CPU's native-bf16 probe: flags are read from the kernel's cpuinfo format, and PyTorch's
own probes agree with the kernel's flags on this machine (the decision `train.cpu_bf16: auto`
takes: bf16 only with AMX or AVX512-BF16)."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainer.training.cpu_bf16 import NATIVE_FLAGS, cpu_flags, native_bf16

CPUINFO = (
    "processor\t: 0\nflags\t\t: fpu sse2 avx2 {extra}\nbugs\t\t: spectre_v1\n\nprocessor\t: 1\nflags\t\t: fpu avx2\n"
)


def test_flags_are_read_from_cpuinfo(tmp_path: Path) -> None:
    path = tmp_path / "cpuinfo"
    path.write_text(CPUINFO.format(extra="amx_bf16 amx_tile"))
    assert {"avx2", "amx_bf16", "amx_tile", "fpu", "sse2"} == cpu_flags(path)
    path.write_text(CPUINFO.format(extra=""))
    assert not set(NATIVE_FLAGS) & cpu_flags(path)
    assert cpu_flags(tmp_path / "missing") == set()


@pytest.mark.skipif(not Path("/proc/cpuinfo").is_file(), reason="no /proc/cpuinfo on this system")
def test_torchs_probe_agrees_with_the_kernels_flags() -> None:
    assert native_bf16() == bool(set(NATIVE_FLAGS) & cpu_flags())
