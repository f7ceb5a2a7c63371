#!/usr/bin/env bash
# Context parallelism: the longest context that fits a per-rank --memory-budget at cp 1, 2 and 4
# (one sequence per step, both attention modes), and its step time on the CPU backend.
#
#   bench/long_context_bench.sh [BUDGET=256M] [STEPS=3] [GEN_GPT_FLAGS...]
#
# The model: examples/gen_gpt.py (default: 2 layers, d=256, 4 heads, byte vocabulary), its
# context doubled from 1024 until zcc's memory plan no longer fits the budget (the plan is the
# arena train.bin allocates: what a rank needs). Each fitting maximum then trains STEPS steps of
# --synthetic tokens; the step time is the median of the steps after the first. Ranks beyond
# the cores are oversubscribed (the table says how many cores), so compare step times within a
# row's machine only. No peer row: PyTorch's torch.distributed.tensor.experimental.context_parallel
# (torch 2.15, gloo) stops on the CPU with "Operator aten._scaled_dot_product_flash_attention_for_cpu
# .default does not have a sharding strategy registered": its ring dispatches the CUDA SDPA
# kernels only.
set -euo pipefail
cd "$(dirname "$0")/.."
budget=${1:-256M}; steps=${2:-3}
shift $(( $# < 2 ? $# : 2 ))
gen=("$@")
[ ${#gen[@]} -gt 0 ] || gen=(--layers 2 --dim 256 --heads 4)
zcc=${ZCC:-build/bin/zcc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
cpu=$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)
echo "model: gen_gpt.py ${gen[*]} --batch 1; per-rank budget $budget; $(nproc --all) cores ($cpu); $steps steps"
echo "| cp | mode | longest context | arena B/rank | activation peak B/rank | step s (median) | tokens/s |"
echo "|---|---|---|---|---|---|---|"
for cp in 1 2 4; do
  for mode in ulysses ring; do
    if [ "$cp" = 1 ] && [ "$mode" = ring ]; then continue; fi
    best=0
    for context in 1024 2048 4096 8192 16384 32768 65536; do
      python3 examples/gen_gpt.py "${gen[@]}" --context "$context" --batch 1 > "$work/model.mlir"
      if "$zcc" "$work/model.mlir" -o "$work/c$context.bin" --world-size "$cp" --cp "$cp" --cp-mode "$mode" \
           --memory-budget "$budget" --report=json > /dev/null 2>&1; then
        best=$context
      else
        break
      fi
    done
    if [ "$best" = 0 ]; then
      echo "| $cp | $mode | none fits | | | | |"
      continue
    fi
    exe="$work/c$best.bin" log="$work/log.jsonl"
    rm -f "$log"
    launch=()
    if [ "$cp" -gt 1 ]; then launch=(mpirun -np "$cp"); fi
    "${launch[@]}" "$exe" --synthetic --steps "$steps" --log-every 1 --log-json "$log" > "$work/out.txt" 2>&1
    python3 - "$exe.report.json" "$log" "$cp" "$mode" "$best" <<'EOF'
import json, statistics, sys
report, log, cp, mode, context = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
r = json.load(open(report))
steps = [json.loads(line) for line in open(log)]
seconds = statistics.median(s["step_ms"] for s in steps[1:]) / 1e3 if len(steps) > 1 else steps[0]["step_ms"] / 1e3
print(f"| {cp} | {mode if int(cp) > 1 else '-'} | {context} | {r['arena_bytes']} | {r['activation_peak_bytes']} | "
      f"{seconds:.2f} | {context / seconds:.0f} |")
EOF
  done
done
