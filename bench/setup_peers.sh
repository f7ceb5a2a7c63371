#!/usr/bin/env bash
# Installs the benchmark peers into a virtual environment outside the repository:
# PyTorch 2.x (DDP and FSDP2's fully_shard) and DeepSpeed (ZeRO 0-3 on the CPU through
# gloo, with a torch optimizer: no custom ops), from PyPI. Idempotent.
#   ZCC_BENCH_VENV (default ~/.cache/zcc-bench-venv)
set -euo pipefail
venv=${ZCC_BENCH_VENV:-$HOME/.cache/zcc-bench-venv}
python=${ZCC_BENCH_PYTHON:-python3}
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
if ! "$venv/bin/python" -c "import torch, deepspeed" >/dev/null 2>&1; then
  "$venv/bin/pip" install --quiet --upgrade pip
  # The CPU is all the peers use here; DeepSpeed builds no ops (DS_BUILD_OPS=0).
  DS_BUILD_OPS=0 "$venv/bin/pip" install --quiet "torch==2.15.0" "deepspeed==0.19.8" numpy psutil
fi
"$venv/bin/python" -c "import torch, deepspeed; print('peers:', 'torch', torch.__version__, 'deepspeed', deepspeed.__version__)"
echo "$venv"
