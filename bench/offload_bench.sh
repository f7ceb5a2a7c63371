#!/usr/bin/env bash
# NVMe offload on the CPU backend: the step time with the optimizer state (and, where built, the
# parameters) on the NVMe store against the same model without offload, the swaps' achieved
# read and write bandwidth against what fio measures on the same directory (the device's
# limit for this access pattern: 1 MiB requests, O_DIRECT, io_uring), and each run's peak RSS
# beside the arena the compiler planned.
#
#   bench/offload_bench.sh [NVME_DIR=/tmp] [RANKS=2] [STEPS=8] [GEN_GPT_FLAGS...]
#
# The model: examples/gen_gpt.py (default: 8 layers, d=768, 12 heads, context 128, global batch
# 8, byte vocabulary: 57M parameters), bf16 mixed precision at ZeRO-3 (so the optimizer state
# per rank is 12 bytes per value: fp32 master and both moments). The step time is the median
# over the steps after the first two; bandwidth is the swap bytes over the update's time.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-/tmp}; ranks=${2:-2}; steps=${3:-8}
shift $(( $# < 3 ? $# : 3 ))
gen=("$@")
[ ${#gen[@]} -gt 0 ] || gen=(--layers 8 --dim 768 --heads 12 --context 128 --batch 8)
zcc=${ZCC:-build/bin/zcc}
work=$(mktemp -d)
store=$(mktemp -d "$dir/zcc-offload-bench.XXXXXX")
trap 'rm -rf "$work" "$store"' EXIT
python3 examples/gen_gpt.py "${gen[@]}" > "$work/model.mlir"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}

fio_bw() { # read|write -> bytes/s
  fio --name=zcc-bench --directory="$store" --rw="$1" --bs=1M --size=1G --direct=1 --ioengine=io_uring \
    --iodepth=16 --numjobs=1 --output-format=json 2>/dev/null |
    python3 -c "import json,sys; print(json.load(sys.stdin)['jobs'][0]['$1']['bw_bytes'])"
  rm -f "$store"/zcc-bench.*
}
read_limit=$(fio_bw read); write_limit=$(fio_bw write)

echo "model: gen_gpt.py ${gen[*]}; $ranks ranks (ZeRO-3, bf16) on $(nproc --all) cores; store in $dir"
echo "fio on $dir: read $(python3 -c "print(f'{$read_limit/1e9:.2f}')") GB/s, write $(python3 -c "print(f'{$write_limit/1e9:.2f}')") GB/s (1 MiB, O_DIRECT, io_uring, depth 16)"
echo "| run | step ms (median) | vs none | update ms | swap read GB/s (of fio's) | swap write GB/s (of fio's) | swap wait ms | arena MB | peak RSS MB | optimizer state on NVMe MB/rank |"
echo "|---|---|---|---|---|---|---|---|---|---|"
reference=""
run() { # name zcc-flags...
  local name=$1; shift
  "$zcc" "$work/model.mlir" -o "$work/$name.bin" --world-size "$ranks" --zero-stage 3 --precision bf16 \
    --nvme-path "$store" "$@" --report=json 2>/dev/null
  mpirun -np "$ranks" "$work/$name.bin" --synthetic --steps "$steps" --log-every 1 --log-json "$work/$name.jsonl" \
    > "$work/$name.out" 2>&1
  python3 - "$work/$name.jsonl" "$work/$name.bin.report.json" "$name" "${reference:-0}" "$read_limit" "$write_limit" <<'PY'
import json, statistics, sys
log, report, name, reference, rlim, wlim = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6])
rows = [json.loads(l) for l in open(log)][2:]
ms = statistics.median(r["step_ms"] for r in rows)
upd = statistics.median(r["update_ms"] for r in rows)
rd = statistics.median(r["swap_read_bytes"] for r in rows); wr = statistics.median(r["swap_write_bytes"] for r in rows)
wait = statistics.median(r["swap_wait_s"] for r in rows) * 1e3
rep = json.load(open(report))
# Reads and writes share the update's time: each direction's rate is its bytes over the time
# the update spent on them together, split by the fio-measured cost of each.
t = upd / 1e3
share_r = (rd / rlim) / max(rd / rlim + wr / wlim, 1e-12)
rbw = rd / (t * share_r) if rd else 0; wbw = wr / (t * (1 - share_r)) if wr else 0
nvme = rep.get("tiers", {}).get("nvme_bytes", 0)
print(f"| {name} | {ms:.1f} | {ms / (reference or ms):.2f}x | {upd:.1f} | "
      + (f"{rbw/1e9:.2f} ({rbw/rlim:.0%}) | {wbw/1e9:.2f} ({wbw/wlim:.0%}) | {wait:.1f}" if rd else "- | - | -")
      + f" | {rep['arena_bytes']/1e6:.0f} | {max(r['peak_rss_bytes'] for r in rows)/1e6:.0f} | {nvme/1e6:.0f} |")
print(ms, file=open(log + ".ms", "w"))
PY
  [ -n "$reference" ] || reference=$(cat "$work/$name.jsonl.ms")
}
run none
run optimizer-nvme --offload-optimizer nvme
run optimizer-nvme-8slots --offload-optimizer nvme --offload-buffer-count 8
run optimizer-cpu --offload-optimizer cpu
