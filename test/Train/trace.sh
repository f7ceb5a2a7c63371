#!/usr/bin/env bash
# ZeRO-3 at 4 ranks with the schedule: train.bin --trace writes a Chrome trace per rank, and in
# rank 0's the next gather group's all-gather is in flight while kernels of the current layer
# run. Without the schedule (--no-overlap) no all-gather overlaps compute.
# usage: trace.sh ZCC MODEL.mlir DATA
set -euo pipefail
zcc=$1 model=$2 data=$3
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 OMP_NUM_THREADS=1
"$zcc" "$model" -o "$work/overlap.bin" --world-size 4 --zero-stage 3 --param-persistence-threshold 0
mpirun -np 4 "$work/overlap.bin" --data "$data" --steps 6 --log-every 100 --trace "$work/trace.json" >/dev/null
for r in 1 2 3; do test -s "$work/trace.json.rank$r"; done
python3 "$here/trace_overlap.py" "$work/trace.json" --require-overlap
"$zcc" "$model" -o "$work/blocking.bin" --world-size 4 --zero-stage 3 --param-persistence-threshold 0 --no-overlap
mpirun -np 4 "$work/blocking.bin" --data "$data" --steps 3 --log-every 100 --trace "$work/blocking.json" >/dev/null
if python3 "$here/trace_overlap.py" "$work/blocking.json" --require-overlap; then
  echo "FAIL: blocking collectives overlapped compute"; exit 1
fi
echo PASS
