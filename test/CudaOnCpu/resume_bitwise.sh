#!/usr/bin/env bash
# The CUDA backend's sharded checkpoint on the CPU (test/CudaOnCpu): a ZeRO-3 train.bin at 2 ranks
# (the MPI transport, --cuda-graphs off), killed with SIGKILL in the middle of step 3, resumes from
# its step-2 checkpoint and ends with the uninterrupted run's weights, byte for byte.
# usage: resume_bitwise.sh ZCC LINK-TRAIN-BIN MODEL.mlir DATA
set -euo pipefail
zcc=$1 link=$2 model=$3 data=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 OMP_NUM_THREADS=1
"$zcc" "$model" --target=cuda --emit=obj --world-size 2 --zero-stage 3 -o "$work/z3.o"
"$link" "$work/z3.o" "$work/z3.bin"
run() { mpirun -np 2 "$work/z3.bin" --data "$data" --steps 4 --log-every 1 --cuda-graphs off "$@"; }
run --export-weights "$work/full.f32" >/dev/null
if ZCC_FAULT=kill-in-step:3 run --ckpt-dir "$work/ck" --ckpt-every 2 >/dev/null 2>&1; then
  echo "FAIL: the run was not killed"
  exit 1
fi
[ -f "$work/ck/step-00000002/manifest.json" ] || { echo "FAIL: no step-2 checkpoint before the kill"; exit 1; }
run --ckpt-dir "$work/ck" --ckpt-every 2 --resume --export-weights "$work/resumed.f32" >/dev/null
if ! cmp -s "$work/full.f32" "$work/resumed.f32"; then
  echo "FAIL: the resumed run's weights differ from the uninterrupted run's"
  exit 1
fi
echo "PASS: killed in step 3, resumed from step 2: the uninterrupted run's weights, byte for byte"
