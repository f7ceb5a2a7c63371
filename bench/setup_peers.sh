#!/usr/bin/env bash
# Installs the benchmark peers into zcc's Python environment (scripts/setup-python.sh: PyTorch 2.x,
# whose DDP and FSDP2's fully_shard are two of the peers) and adds DeepSpeed (ZeRO 0-3 on the CPU
# through gloo, with a torch optimizer: no custom ops), from PyPI. Idempotent. Prints the environment.
#   ZCC_VENV (default ~/.cache/zcc-venv)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv=${ZCC_VENV:-$HOME/.cache/zcc-venv}
ZCC_VENV=$venv "$here/../scripts/setup-python.sh" >&2
if ! "$venv/bin/python" -c "import deepspeed, psutil" >/dev/null 2>&1; then
  # The CPU is all the peers use here; DeepSpeed builds no ops (DS_BUILD_OPS=0).
  DS_BUILD_OPS=0 "$venv/bin/pip" install --quiet "deepspeed==0.19.8" psutil
fi
"$venv/bin/python" -c "import torch, deepspeed; print('peers:', 'torch', torch.__version__, 'deepspeed', deepspeed.__version__)" >&2
echo "$venv"
