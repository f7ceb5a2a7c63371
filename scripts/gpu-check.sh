#!/usr/bin/env bash
# One command for a machine with NVIDIA GPUs: builds zcc with the CUDA backend, runs the CUDA tests
# (ctest -L cuda: kernel conformance against the CPU backend, NCCL collectives, end-to-end parity),
# trains the GPT-2 124M preset (bf16; with and without CUDA graphs) and the Llama example on one GPU
# and, with ZeRO-3, on every GPU present, and prints a table: tokens/s, MFU, step time, planned arena against the device memory
# each GPU held, and the losses against the CPU backend's on the same first steps
# (scripts/gpu_report.py). Exit 77 without a GPU, 1 when a test or a loss comparison fails.
#
#   scripts/gpu-check.sh [--steps N] [--cpu-steps K] [--batch B]
#   ZCC_BUILD_DIR (default build-cuda)   ZCC_SKIP_SETUP=1: no apt-get (a machine without registries:
#                                        LLVM/MLIR 22, Open MPI and NCCL must be there already)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
steps=20 cpu_steps=3 batch=8
while [ $# -gt 0 ]; do
  case "$1" in
    --steps) steps=$2; shift 2 ;;
    --cpu-steps) cpu_steps=$2; shift 2 ;;
    --batch) batch=$2; shift 2 ;;
    *) echo "gpu-check: unknown argument $1 (--steps N --cpu-steps K --batch B)" >&2; exit 2 ;;
  esac
done

gpus=$(nvidia-smi -L 2>/dev/null | grep -c "^GPU" || true)
if [ "${gpus:-0}" -lt 1 ]; then
  echo "gpu-check: no NVIDIA GPU (nvidia-smi -L lists none): nothing to check" >&2
  exit 77
fi
device=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "gpu-check: $gpus x $device"

if [ "${ZCC_SKIP_SETUP:-0}" != 1 ]; then
  ZCC_SKIP_PYTHON=1 scripts/setup.sh
fi
export ZCC_BUILD_DIR=${ZCC_BUILD_DIR:-build-cuda}
if [ ! -f "$ZCC_BUILD_DIR/build.ninja" ]; then
  cmake -G Ninja -S . -B "$ZCC_BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DZCC_ENABLE_CUDA=ON \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit
fi
cmake --build "$ZCC_BUILD_DIR"
bin=$root/$ZCC_BUILD_DIR/bin

status=0
echo "gpu-check: ctest -L cuda"
ctest --test-dir "$ZCC_BUILD_DIR" -L cuda --output-on-failure || status=1
echo "gpu-check: kernels against the device's copy bandwidth (bench/runtime/CudaKernelBench.cpp)"
"$bin/zrt-cuda-kernel-bench" || status=1

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
cat README.md docs/*.md > "$work/data.txt"
# The GPT-2 124M preset (bench/peers_bench.py's gpt2-124m shape) at `--batch` sequences per GPU.
python3 examples/gen_gpt.py --layers 12 --dim 768 --heads 12 --context 1024 --vocab 50304 \
  --batch $((batch * gpus)) > "$work/gpt2-124m-all.mlir"
python3 examples/gen_gpt.py --layers 12 --dim 768 --heads 12 --context 1024 --vocab 50304 \
  --batch "$batch" > "$work/gpt2-124m-one.mlir"
cp examples/llama.mlir "$work/llama-one.mlir"  # imported from examples/llama-config.json

# The largest memory nvidia-smi sees the command's GPU processes hold, in MiB per GPU.
watch_memory() {
  local out=$1; shift
  "$@" &
  local pid=$! peak=0
  while kill -0 "$pid" 2>/dev/null; do
    local used
    used=$(nvidia-smi --query-compute-apps=used_memory --format=csv,noheader,nounits 2>/dev/null | sort -n | tail -1)
    if [ -n "$used" ] && [ "$used" -gt "$peak" ]; then peak=$used; fi
    sleep 0.2
  done
  wait "$pid"
  local rc=$?
  echo "$peak" > "$out"
  return $rc
}

runs="["
add_run() {  # name model gpus zero precision [train.bin flags...]
  local name=$1 model=$2 n=$3 zero=$4 precision=$5
  shift 5
  local extra=("$@")
  local exe="$work/$name.bin" cpu="$work/$name-cpu.bin"
  "$bin/zcc" "$model" --target=cuda --world-size "$n" --zero-stage "$zero" --precision "$precision" -o "$exe"
  "$bin/zcc" "$model" --world-size 1 --precision "$precision" -o "$cpu"
  local launch=()
  if [ "$n" -gt 1 ]; then launch=(mpirun -np "$n"); fi
  echo "gpu-check: $name: $n GPU(s), ZeRO-$zero, $precision, $steps steps"
  if ! watch_memory "$work/$name.mib" "${launch[@]}" "$exe" --data "$work/data.txt" --steps "$steps" \
      --log-every 1 --log-json "$work/$name.jsonl" "${extra[@]}" > "$work/$name.out" 2>&1; then
    tail -20 "$work/$name.out"
    status=1
    return
  fi
  tail -2 "$work/$name.out"
  # The CPU backend on the same first steps (one rank: the losses do not depend on the world size).
  OMP_NUM_THREADS=$(nproc) "$cpu" --data "$work/data.txt" --steps "$cpu_steps" --log-every 1 \
    --log-json "$work/$name-cpu.jsonl" > /dev/null
  runs+="{\"name\": \"$name\", \"model\": \"$model\", \"gpus\": $n, \"zero\": $zero, \"precision\": \"$precision\",
          \"gpu_log\": \"$work/$name.jsonl\", \"cpu_log\": \"$work/$name-cpu.jsonl\", \"device\": \"$device\",
          \"device_mib\": $(cat "$work/$name.mib"), \"warmup\": 3},"
}
add_run gpt2-124m "$work/gpt2-124m-one.mlir" 1 0 bf16
# The same without CUDA graphs: every kernel launched from the host (the graphs' gain).
add_run gpt2-124m-no-graphs "$work/gpt2-124m-one.mlir" 1 0 bf16 --cuda-graphs off
add_run llama "$work/llama-one.mlir" 1 0 fp32
if [ "$gpus" -gt 1 ]; then
  add_run gpt2-124m-zero3 "$work/gpt2-124m-all.mlir" "$gpus" 3 bf16
  # The Llama example's batch (8) is the global batch: split over the GPUs when it divides.
  if [ $((8 % gpus)) -eq 0 ]; then
    add_run llama-zero3 "$work/llama-one.mlir" "$gpus" 3 fp32
  else
    echo "gpu-check: llama-zero3 skipped: the example's batch of 8 does not split over $gpus GPUs"
  fi
fi
runs="${runs%,}]"
echo "$runs" > "$work/runs.json"
python3 scripts/gpu_report.py "$work/runs.json" || status=1
exit $status
