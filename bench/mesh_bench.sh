#!/usr/bin/env bash
# Step time of each device mesh beside ZeRO-3 on the same ranks, and the pipeline's bubble
# measured against predicted, on the CPU backend (CPU + MPI: oversubscribed where the ranks
# outnumber the cores, which the report line says).
#
#   bench/mesh_bench.sh [RANKS=4] [MICRO_BATCHES=8] [STEPS=12] [GEN_GPT_FLAGS...]
#
# The model: examples/gen_gpt.py (default: 8 layers, d=256, 8 heads, context 128, global
# batch 32, byte vocabulary). Every mesh trains the same global batch in the same number of
# micro-batches; the step time is the median over the steps after the first two.
set -euo pipefail
cd "$(dirname "$0")/.."
ranks=${1:-4}; micro=${2:-8}; steps=${3:-12}
shift $(( $# < 3 ? $# : 3 ))
gen=("$@")
[ ${#gen[@]} -gt 0 ] || gen=(--layers 8 --dim 256 --heads 8 --context 128 --batch 32)
zcc=${ZCC:-build/bin/zcc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 examples/gen_gpt.py "${gen[@]}" > "$work/model.mlir"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
echo "model: gen_gpt.py ${gen[*]}; $ranks ranks on $(nproc --all) cores, $micro micro-batches, $steps steps"
echo "| mesh (tp, pp, dp) | ZeRO | step ms (median) | vs ZeRO-3 dp$ranks | model state B/rank | bubble measured | predicted |"
echo "|---|---|---|---|---|---|---|"
reference=""
run() { # name tp pp zero
  local name=$1 tp=$2 pp=$3 zero=$4 exe="$work/$1.bin" log="$work/$1.jsonl"
  "$zcc" "$work/model.mlir" -o "$exe" --world-size "$ranks" --tp "$tp" --pp "$pp" --zero-stage "$zero" \
    --grad-accum "$micro" 2>/dev/null
  mpirun -np "$ranks" "$exe" --synthetic --steps "$steps" --log-every 1 --log-json "$log" > "$work/$1.out" 2>&1
  local ms state bubble predicted
  ms=$(python3 -c "import json,statistics,sys; s=[json.loads(l)['step_ms'] for l in open('$log')][2:]; print(f'{statistics.median(s):.1f}')")
  state=$(python3 -c "import json; l=[json.loads(x) for x in open('$log')][-1]; print(l['param_bytes']+l['grad_bytes']+l['optimizer_bytes'])")
  bubble=$(sed -n 's/.*bubble \([0-9.]*\) measured.*, \([0-9.]*\) predicted/\1 \2/p' "$work/$1.out")
  [ -n "$reference" ] || reference=$ms
  printf "| (%s, %s, %s) | %s | %s | %.2fx | %s | %s | %s |\n" "$tp" "$pp" "$((ranks / tp / pp))" "$zero" "$ms" \
    "$(python3 -c "print($ms / $reference)")" "$state" "${bubble% *}" "${bubble#* }"
}
run zero3 1 1 3
run tp2-zero3 2 1 3
run tp$ranks "$ranks" 1 0
run pp2-zero1 1 2 1
run pp$ranks 1 "$ranks" 0
run tp2-pp2 2 2 0
