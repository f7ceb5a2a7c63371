#!/usr/bin/env bash
# Two ranks sharing the one device (the MPI transport): their arenas together are checked against
# the card's memory before the first step (runtime/cuda/DeviceShare.h). With a card
# (ZRT_CUDA_ON_CPU_DEVICE_BYTES) that holds one arena and a half, train.bin stops at start naming the
# sum; with room for both, the start-up line says the device is shared and the step runs.
# usage: device_share.sh ZCC LINK-TRAIN-BIN MODEL.mlir DATA
set -euo pipefail
zcc=$1 link=$2 model=$3 data=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 OMP_NUM_THREADS=1
"$zcc" "$model" --target=cuda --emit=obj --world-size 2 -o "$work/dp.o"
"$link" "$work/dp.o" "$work/dp.bin"
run() { mpirun -np 2 "$work/dp.bin" --data "$data" --steps 1 --cuda-graphs off; }
# The arena's size, from the start-up line of a run on the host's memory.
run >"$work/host.log" 2>&1 || { echo "FAIL: the run on the host's memory failed"; tail -20 "$work/host.log"; exit 1; }
arena=$(sed -n 's/.*arena \([0-9]*\) bytes per rank.*/\1/p' "$work/host.log" | head -1)
[ -n "$arena" ] || { echo "FAIL: train.bin did not say the arena's size"; tail "$work/host.log"; exit 1; }
if ZRT_CUDA_ON_CPU_DEVICE_BYTES=$((arena * 3 / 2)) run >"$work/small.log" 2>&1; then
  echo "FAIL: two arenas of $arena bytes ran on a card of $((arena * 3 / 2))"
  exit 1
fi
want="2 rank(s) share device 0 and their arenas need $((2 * arena)) bytes together (this rank's $arena), more than its $((arena * 3 / 2)) bytes"
grep -qF "$want" "$work/small.log" || { echo "FAIL: expected '$want' in:"; tail -20 "$work/small.log"; exit 1; }
ZRT_CUDA_ON_CPU_DEVICE_BYTES=$((arena * 5 / 2)) run >"$work/room.log" 2>&1 ||
  { echo "FAIL: two arenas did not run on a card of $((arena * 5 / 2))"; tail -20 "$work/room.log"; exit 1; }
grep -q "2 ranks share device 0: " "$work/room.log" ||
  { echo "FAIL: the start-up line does not say the device is shared"; tail "$work/room.log"; exit 1; }
echo "PASS: $((2 * arena)) bytes of arenas refused on a card of $((arena * 3 / 2)), run on $((arena * 5 / 2))"
