#!/usr/bin/env bash
# The Python environment of zcc-import and of the benchmark peers, from PyPI, outside the
# repository: PyTorch 2.x (torch.export), transformers (models built from a config.json) and
# safetensors. zcc and train.bin do not use it. Idempotent: installs only what is missing.
#   ZCC_VENV (default ~/.cache/zcc-venv): where it lives; build/bin/zcc-import uses the same.
#   ZCC_PYTHON (default python3): the interpreter the environment is made from.
set -euo pipefail
venv=${ZCC_VENV:-$HOME/.cache/zcc-venv}
python=${ZCC_PYTHON:-python3}
# Pinned: the versions the importer's tests pass with (torch.export's graph changes between releases).
REQUIREMENTS=("torch==2.15.0" "transformers==5.23.0" "safetensors==0.8.0" "numpy")

if ! "$python" -c "import venv, ensurepip" >/dev/null 2>&1; then
  # Debian splits venv and pip out of python3.
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends python3-venv python3-pip
fi
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
# What is installed is read from the packages' metadata: importing torch, transformers and DeepSpeed
# to ask took 15 s, twice in every run of the README's test command.
installed() { # every distribution named is in the environment
  "$venv/bin/python" -c 'import sys; from importlib import metadata
for name in sys.argv[1:]: metadata.version(name)' "$@" >/dev/null 2>&1
}
if ! installed torch transformers safetensors numpy ||
   ! "$venv/bin/python" -c "from importlib import metadata; assert metadata.version('torch').startswith('2.15.')" \
    >/dev/null 2>&1; then
  echo "setup-python: installing ${REQUIREMENTS[*]} into $venv (PyPI)"
  "$venv/bin/pip" install --quiet --upgrade pip
  "$venv/bin/pip" install --quiet "${REQUIREMENTS[@]}"
fi
# DeepSpeed's compression library (init_compression), the reference of zcc --compression: 0.19.6 is
# its last release (0.19.7 removed it). Beside the environment, not in it, so the benchmark peers
# keep the current DeepSpeed (bench/setup_peers.sh); its own dependencies go into the environment.
# No ops are built (DS_BUILD_OPS=0): the compression library is PyTorch only.
ds_compression="$venv/deepspeed-0.19.6"
ds_dependencies=(einops hjson msgpack ninja "packaging>=20.0" psutil py-cpuinfo "pydantic>=2.0.0" tqdm)
if [ ! -f "$ds_compression/deepspeed/compression/compress.py" ] || [ ! -d "$ds_compression/deepspeed-0.19.6.dist-info" ] ||
   ! installed "${ds_dependencies[@]%%[<>=]*}"; then
  echo "setup-python: installing deepspeed==0.19.6 (compression training's reference) into $ds_compression (PyPI)"
  "$venv/bin/pip" install --quiet "${ds_dependencies[@]}"
  DS_BUILD_OPS=0 "$venv/bin/pip" install --quiet --no-deps --target "$ds_compression" "deepspeed==0.19.6"
fi
"$venv/bin/python" -c "from importlib.metadata import version as v; print('setup-python:', '$venv:', 'torch', v('torch'), 'transformers', v('transformers'), 'safetensors', v('safetensors'))"
