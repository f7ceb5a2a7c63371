#!/usr/bin/env bash
# The pipeline schedules side by side on the CPU backend (CPU + MPI): the step time of each
# (median over the steps after the first two, as a ratio to 1F1B's in the same run), its bubble
# measured against predicted, and what each stage keeps for its micro-batches in flight (the
# plan's input slots, --report; interleaved and ZB-V: each rank's chunks summed).
#
#   bench/pipeline_schedule_bench.sh [STAGES=2] [MICRO_BATCHES=8] [STEPS=12] [GEN_GPT_FLAGS...]
#
# interleaved-1f1b runs INTERLEAVE (default 2) chunks of layers per rank (the model needs
# STAGES x INTERLEAVE cuts; MICRO_BATCHES a multiple of STAGES).
# One rank per stage: with more stages than cores the ranks share them, a waiting stage lends
# its core to the others and the bubble costs nothing (the line says so). The model:
# examples/gen_gpt.py (default: 8 layers, d=256, 8 heads, context 128, global batch 32).
set -euo pipefail
cd "$(dirname "$0")/.."
stages=${1:-2}; micro=${2:-8}; steps=${3:-12}
shift $(( $# < 3 ? $# : 3 ))
gen=("$@")
[ ${#gen[@]} -gt 0 ] || gen=(--layers 8 --dim 256 --heads 8 --context 128 --batch 32)
zcc=${ZCC:-build/bin/zcc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 examples/gen_gpt.py "${gen[@]}" > "$work/model.mlir"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
cores=$(nproc --all)
echo "model: gen_gpt.py ${gen[*]}; pp $stages on $cores cores$([ "$stages" -gt "$cores" ] && echo ' (oversubscribed: bubbles cost little)'), $micro micro-batches, $steps steps"
echo "| schedule | step ms (median) | vs 1f1b | bubble measured | predicted | kept per stage (B, --report) |"
echo "|---|---|---|---|---|---|"
reference=""
interleave=${INTERLEAVE:-2}
for schedule in 1f1b zb-h1 interleaved-1f1b zbv; do
  exe="$work/$schedule.bin" log="$work/$schedule.jsonl"
  chunks=1; [ "$schedule" != interleaved-1f1b ] || chunks=$interleave; [ "$schedule" != zbv ] || chunks=2
  "$zcc" "$work/model.mlir" -o "$exe" --world-size "$stages" --pp "$stages" --grad-accum "$micro" \
    --pp-schedule "$schedule" $([ "$chunks" -gt 1 ] && echo --pp-interleave "$chunks") --report=json > /dev/null
  mpirun -np "$stages" "$exe" --synthetic --steps "$steps" --log-every 1 --log-json "$log" > "$work/$schedule.out" 2>&1
  ms=$(python3 -c "import json,statistics; s=[json.loads(l)['step_ms'] for l in open('$log')][2:]; print(f'{statistics.median(s):.1f}')")
  bubble=$(sed -n 's/.*bubble \([0-9.]*\) measured.*, \([0-9.]*\) predicted/\1 \2/p' "$work/$schedule.out")
  # Rank s's chunks: stages c P + s, or in ZB-V's V s and 2P - 1 - s.
  kept=$(python3 -c "import json; P=$stages; vee='$schedule' == 'zbv'; print(' / '.join(str(sum(json.load(open(f'$exe.stage{(2 * P - 1 - s) if c and vee else c * P + s}.report.json'))['pipeline']['in_flight_input_bytes'] for c in range($chunks))) for s in range(P)))")
  [ -n "$reference" ] || reference=$ms
  printf "| %s | %s | %.3fx | %s | %s | %s |\n" "$schedule" "$ms" "$(python3 -c "print($ms / $reference)")" \
    "${bubble% *}" "${bubble#* }" "$kept"
done
