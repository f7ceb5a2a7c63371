#!/usr/bin/env bash
# zcc-import and zcc at the sizes users train: the published Llama-3-8B and -70B shapes
# (bench/configs), one sequence per rank (8192 and 4096 tokens), 64 ranks, ZeRO-3, mixed precision.
# Prints each step's wall time and peak memory, and each plan's per-rank model-state bytes against
# ZeRO's 16 Psi / N. Nothing is allocated: the importer exports on meta tensors.
#   bench/import_scale.sh [BUILD_DIR]     (default build)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(cd "${1:-$root/build}" && pwd)/bin
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ranks=64
for spec in "llama3-8b 8192" "llama3-70b 4096"; do
  set -- $spec
  name=$1 context=$2
  /usr/bin/time -f "$name zcc-import: %e s wall, %M KB peak" "$bin/zcc-import" --hf-config "$root/bench/configs/$name.json" \
    --batch $ranks --context "$context" -o "$work/$name.mlir" 2>&1 | grep -v "deprecated"
  /usr/bin/time -f "$name zcc --world-size $ranks --zero-stage 3 --precision bf16 --report: %e s wall, %M KB peak" \
    "$bin/zcc" "$work/$name.mlir" -o "$work/$name.bin" --world-size $ranks --zero-stage 3 --precision bf16 \
    --report > "$work/$name.report" 2> "$work/$name.time"
  cat "$work/$name.time"
  params=$(head -1 "$work/$name.mlir" | grep -o "[0-9,]* parameters" | tr -dc 0-9)
  state=$(awk '/model_state_bytes/ {print $2}' "$work/$name.report")
  python3 -c "p, s, n = $params, $state, $ranks; print(f'$name: {p:,} parameters; model state per rank {s:,} B, 16 Psi / {n} = {16 * p // n:,} B ({s / (16 * p / n):.4f}x)')"
  grep -E "arena_bytes|all_gather|gathered_param_peak" "$work/$name.report"
done
