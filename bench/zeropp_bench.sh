#!/usr/bin/env bash
# ZeRO++ against plain ZeRO-3 at nanoGPT's shakespeare-char shape (6 layers, d 384, 6 heads,
# context 256, batch 8 per rank; 10.7M parameters), np=4 declared as 2 nodes of 2 ranks:
# cross-node and in-node bytes per step (train.bin's link counters, summed over ranks), step
# time, and the loss after the same steps on the same data.
#
#   bench/zeropp_bench.sh [STEPS] [DATA]     (default 200 steps, test/Inputs/corpus.txt)
#
# DeepSpeed's ZeRO++ is not run here: its quantizer (op_builder.QuantizerBuilder) and the
# all-to-all quantized reduction are CUDA kernels, so on a CPU-only machine DeepSpeed cannot
# enable zero_quantized_weights or zero_quantized_gradients. The peer comparison waits for a
# GPU machine (scripts/gpu-check.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
steps=${1:-200}
data=${2:-$here/test/Inputs/corpus.txt}
zcc=${ZCC:-$here/build/bin/zcc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
python3 "$here/examples/gen_gpt.py" --layers 6 --dim 384 --heads 6 --context 256 --batch 8 --vocab 256 > "$work/model.mlir"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(getconf _NPROCESSORS_ONLN) cores; np=4, OMP_NUM_THREADS=$OMP_NUM_THREADS"
for config in plain zeropp; do # both compiled first: a rebuild during the runs changes neither
  flags=()
  [ "$config" = zeropp ] && flags=(--zero-quantized-weights --zero-hpz-partition-size 2 --zero-quantized-gradients)
  "$zcc" "$work/model.mlir" -o "$work/$config.bin" --world-size 4 --zero-stage 3 --ranks-per-node 2 "${flags[@]}"
done
for config in plain zeropp; do
  mpirun -np 4 "$work/$config.bin" --data "$data" --steps "$steps" --log-every "$steps" --ranks-per-node 2 \
    > "$work/$config.out"
  python3 - "$config" "$work/$config.out" "$steps" <<'PY'
import re, sys
name, path, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
out = open(path).read()
links = re.findall(r"link bytes over \d+ steps: in node (\d+), across nodes (\d+)", out)
inn = sum(int(a) for a, _ in links) / steps
cross = sum(int(b) for _, b in links) / steps
ms = float(re.search(r"\(([0-9.]+) ms/step\)", out).group(1))
loss = float(re.search(r"final loss ([0-9.]+)", out).group(1))
print(f"{name:7s} cross-node {cross / 1e6:8.2f} MB/step  in-node {inn / 1e6:8.2f} MB/step  "
      f"{ms:8.1f} ms/step  loss after {steps} steps {loss:.6f}")
PY
done
