#!/usr/bin/env bash
# End to end on the GPU: the GPT example trained by the CUDA backend (1 GPU with the step replayed
# as a CUDA graph and launched op by op, with the optimizer offloaded to the CPU, with its state on
# NVMe and the activations in host memory, and ZeRO-3 over every GPU present when there are
# several, with and without optimizer and shards in host memory or on NVMe)
# gives the CPU backend's losses within 1e-3 relative over 10 steps; prints tokens/s. Skipped (77)
# without a GPU.
set -euo pipefail
zcc=$1 model=$2 data=$3
gpus=$(nvidia-smi -L 2>/dev/null | wc -l || true)
if [ "${gpus:-0}" -lt 1 ]; then
  echo "no GPU: skipped"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
"$zcc" "$model" -o "$work/cpu.bin"
"$zcc" "$model" --target=cuda -o "$work/gpu.bin"
"$work/cpu.bin" --data "$data" --steps 10 --log-every 1 --log-json "$work/cpu.jsonl" >/dev/null
"$work/gpu.bin" --data "$data" --steps 10 --log-every 1 --log-json "$work/gpu.jsonl" | tail -2
"$work/gpu.bin" --data "$data" --steps 10 --log-every 1 --log-json "$work/gpu-eager.jsonl" --cuda-graphs off | tail -2
# ZeRO-Offload: the optimizer state in page-locked host memory, updated by the CPU beside the GPU
# (the update's CUDA graph falls back to eager runs by itself).
"$zcc" "$model" --target=cuda --offload-optimizer cpu -o "$work/gpu-offload.bin"
"$work/gpu-offload.bin" --data "$data" --steps 10 --log-every 1 --log-json "$work/gpu-offload.jsonl" | tail -2
# ZeRO-Infinity: the state on the NVMe store (here the test's directory), swapped into device slots;
# activations in host memory between the passes.
"$zcc" "$model" --target=cuda --offload-optimizer nvme --nvme-path "$work" --offload-activations cpu \
  -o "$work/gpu-nvme.bin"
"$work/gpu-nvme.bin" --data "$data" --steps 10 --log-every 1 --log-json "$work/gpu-nvme.jsonl" | tail -2
runs=("gpu.jsonl" "gpu-eager.jsonl" "gpu-offload.jsonl" "gpu-nvme.jsonl")
if [ "$gpus" -gt 1 ]; then
  "$zcc" "$model" --target=cuda --world-size "$gpus" --zero-stage 3 -o "$work/gpu-z3.bin"
  mpirun -np "$gpus" "$work/gpu-z3.bin" --data "$data" --steps 10 --log-every 1 --log-json "$work/gpu-z3.jsonl" | tail -2
  "$zcc" "$model" --target=cuda --world-size "$gpus" --zero-stage 3 --offload-optimizer cpu --offload-param cpu \
    -o "$work/gpu-z3-offload.bin"
  mpirun -np "$gpus" "$work/gpu-z3-offload.bin" --data "$data" --steps 10 --log-every 1 \
    --log-json "$work/gpu-z3-offload.jsonl" | tail -2
  "$zcc" "$model" --target=cuda --world-size "$gpus" --zero-stage 3 --offload-optimizer nvme --offload-param nvme \
    --nvme-path "$work" -o "$work/gpu-z3-nvme.bin"
  mpirun -np "$gpus" "$work/gpu-z3-nvme.bin" --data "$data" --steps 10 --log-every 1 \
    --log-json "$work/gpu-z3-nvme.jsonl" | tail -2
  runs+=("gpu-z3.jsonl" "gpu-z3-offload.jsonl" "gpu-z3-nvme.jsonl")
fi
python3 - "$work" "${runs[@]}" <<'PY'
import json, sys
work, runs = sys.argv[1], sys.argv[2:]
cpu = [json.loads(l)["loss"] for l in open(f"{work}/cpu.jsonl")]
for run in runs:
    gpu = [json.loads(l)["loss"] for l in open(f"{work}/{run}")]
    worst = max(abs(a - b) / abs(a) for a, b in zip(cpu, gpu))
    print(f"{run}: worst relative loss difference to the CPU backend {worst:.2e}")
    if len(gpu) != len(cpu) or worst > 1e-3:
        sys.exit(f"FAIL: {run}")
print("PASS")
PY
