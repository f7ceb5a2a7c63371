#!/usr/bin/env bash
# NCCL collectives on every GPU of this machine, one rank each; skipped (77) without a GPU.
set -euo pipefail
mpirun=$1 exe=$2
gpus=$(nvidia-smi -L 2>/dev/null | wc -l || true)
if [ "${gpus:-0}" -lt 1 ]; then
  echo "no GPU: skipped"
  exit 77
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
exec "$mpirun" -np "$gpus" "$exe" --collectives
