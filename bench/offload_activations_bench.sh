#!/usr/bin/env bash
# --offload-activations cpu on the CPU backend (ZeRO-R's CPU checkpointing): the same GPT with and
# without its activations in host memory between the passes, one rank. For each: the planned arena
# and its activation peak (zcc --report), the step time (median of the steps after the first), the
# peak RSS, and the losses, which must be equal.
#
#   bench/offload_activations_bench.sh [STEPS=5] [GEN_GPT_FLAGS...]
#
# Default model: 8 layers, d=512, 8 heads, context 256, batch 8 (fp32): 0.55 GB of activations the
# backward pass reads.
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-5}
shift $(( $# < 1 ? $# : 1 ))
gen=("$@")
[ ${#gen[@]} -gt 0 ] || gen=(--layers 8 --dim 512 --heads 8 --context 256 --batch 8)
zcc=${ZCC:-build/bin/zcc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 examples/gen_gpt.py "${gen[@]}" > "$work/model.mlir"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)}
for mode in none cpu; do
  "$zcc" "$work/model.mlir" --offload-activations "$mode" --report=json -o "$work/$mode.bin" > /dev/null
  "$work/$mode.bin" --data README.md --steps "$steps" --log-every 1 --log-json "$work/$mode.jsonl" > /dev/null
done
python3 - "$work" <<'PY'
import json, statistics, sys
work = sys.argv[1]
rows = {}
for mode in ("none", "cpu"):
    report = json.load(open(f"{work}/{mode}.bin.report.json"))
    log = [json.loads(l) for l in open(f"{work}/{mode}.jsonl")]
    rows[mode] = dict(arena=report["arena_bytes"], act=report["activation_peak_bytes"],
                      host=report["tiers"]["offloaded_activation_bytes"] if "tiers" in report else 0,
                      ms=statistics.median(r["step_ms"] for r in log[1:]),
                      rss=max(r["peak_rss_bytes"] for r in log), losses=[r["loss"] for r in log])
base = rows["none"]
print(f"{'activations':12} {'arena MB':>9} {'act peak MB':>12} {'host MB':>8} {'step ms':>8} {'vs none':>8} {'peak RSS MB':>12}")
for mode, r in rows.items():
    print(f"{mode:12} {r['arena']/1e6:9.1f} {r['act']/1e6:12.1f} {r['host']/1e6:8.1f} {r['ms']:8.1f} "
          f"{r['ms']/base['ms']:8.3f} {r['rss']/1e6:12.1f}")
if rows["cpu"]["losses"] != base["losses"]:
    sys.exit("FAIL: the losses differ with --offload-activations cpu")
print("losses: bitwise equal")
PY
