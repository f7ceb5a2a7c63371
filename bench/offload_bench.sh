#!/usr/bin/env bash
# NVMe offload on the CPU backend (issue 22's measurement): a GPT whose optimizer state and master
# weights are 4x --memory-budget trains at 2 ranks with the optimizer state and ZeRO-3's
# parameter shards on the NVMe store. Beside it the same model without offload, and with only the
# optimizer state offloaded (no budget: its bf16 shards and gradients alone would not fit). For
# each: the step time, the update's swaps against what fio measures on the same directory (1 MiB
# requests, O_DIRECT, io_uring, one job per rank: the device's limit for this access pattern;
# reads and writes share the device, so the limit for the update's mix is its bytes over fio's
# time for them),
# and peak RSS beside the arena and the budget.
#
#   bench/offload_bench.sh [NVME_DIR=/tmp] [STEPS=6] [GEN_GPT_FLAGS...]
#
# The model: examples/gen_gpt.py (default: 16 layers, d=1024, 16 heads, context 32, global batch
# 2: 202M parameters, whose bf16 training state is 2 + 2 + 12 bytes a value), bf16 mixed
# precision at ZeRO-3 over 2 ranks: 1.21 GB of optimizer state and master weights per rank, so
# the budget is a quarter of that. The step time is the median over the steps after the first two.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-/tmp}; steps=${2:-6}
shift $(( $# < 2 ? $# : 2 ))
gen=("$@")
[ ${#gen[@]} -gt 0 ] || gen=(--layers 16 --dim 1024 --heads 16 --context 32 --batch 2)
zcc=${ZCC:-build/bin/zcc}
ranks=2
work=$(mktemp -d)
store=$(mktemp -d "$dir/zcc-offload-bench.XXXXXX")
trap 'rm -rf "$work" "$store"' EXIT
python3 examples/gen_gpt.py "${gen[@]}" > "$work/model.mlir"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}

fio_bw() { # read|write -> bytes/s, all ranks' jobs together (every rank swaps at once)
  fio --name=zcc-bench --directory="$store" --rw="$1" --bs=1M --size=1G --direct=1 --ioengine=io_uring \
    --iodepth=16 --numjobs=$ranks --group_reporting --output-format=json 2>/dev/null |
    python3 -c "import json,sys; print(json.load(sys.stdin)['jobs'][0]['$1']['bw_bytes'])"
  rm -f "$store"/zcc-bench.*
}
read_limit=$(fio_bw read); write_limit=$(fio_bw write)

# The budget: a quarter of a rank's optimizer state and master weights (from the plan).
"$zcc" "$work/model.mlir" -o "$work/probe.bin" --world-size $ranks --zero-stage 3 --precision bf16 --emit=mlir \
  --report=json > /dev/null
budget=$(python3 -c "import json; print(json.load(open('$work/probe.bin.report.json'))['optimizer_bytes'] // 4)")

echo "model: gen_gpt.py ${gen[*]}; $ranks ranks, ZeRO-3, bf16, on $(nproc --all) cores; store in $dir"
echo "fio on $dir, $ranks jobs: read $(python3 -c "print(f'{$read_limit/1e9:.2f}')") GB/s, write $(python3 -c "print(f'{$write_limit/1e9:.2f}')") GB/s (1 MiB, O_DIRECT, io_uring, depth 16 each)"
echo "budget: $budget B per rank (a quarter of the optimizer state and master weights)"
echo "| run | step ms | vs none | update ms | update swaps, all ranks GB/s (of fio's for the mix) | gather reads MB/step/rank | swap wait ms | arena MB | peak RSS MB | RSS - arena MB |"
echo "|---|---|---|---|---|---|---|---|---|---|"
reference=""
run() { # name zcc-flags...
  local name=$1; shift
  "$zcc" "$work/model.mlir" -o "$work/$name.bin" --world-size $ranks --zero-stage 3 --precision bf16 \
    --nvme-path "$store" --report=json "$@"
  mpirun -np $ranks "$work/$name.bin" --synthetic --steps "$steps" --log-every 1 --log-json "$work/$name.jsonl" \
    > "$work/$name.out" 2>&1 || { tail -5 "$work/$name.out"; exit 1; }
  python3 - "$work/$name.jsonl" "$work/$name.bin.report.json" "$name" "${reference:-0}" "$read_limit" "$write_limit" <<'PY'
import json, statistics, sys
log, report, name, reference, rlim, wlim = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6])
rows = [json.loads(l) for l in open(log)][2:]
med = lambda key: statistics.median(r[key] for r in rows)
ms, upd = med("step_ms"), med("update_ms")
rep = json.load(open(report))
swap = rep.get("nvme_swap", {})
gather = swap.get("gather_read_bytes", 0)
rd, wr = med("swap_read_bytes") - gather, med("swap_write_bytes")
cells = ["-", "-", "-"]
if rd or wr:
    # Rank 0's bytes and update time; every rank swaps as much at the same time.
    ranks = 2
    limit = (rd + wr) / (rd / rlim + wr / wlim)
    achieved = ranks * (rd + wr) / (upd / 1e3)
    cells = [f"{achieved/1e9:.2f} ({achieved/limit:.0%} of {limit/1e9:.2f})", f"{gather/1e6:.0f}", f"{med('swap_wait_s')*1e3:.0f}"]
rss = max(r["peak_rss_bytes"] for r in rows)
print(f"| {name} | {ms:.0f} | {ms / (reference or ms):.2f}x | {upd:.0f} | " + " | ".join(cells)
      + f" | {rep['arena_bytes']/1e6:.0f} | {rss/1e6:.0f} | {(rss - rep['arena_bytes'])/1e6:.0f} |")
print(ms, file=open(log + ".ms", "w"))
PY
  [ -n "$reference" ] || reference=$(cat "$work/$name.jsonl.ms")
}
run none
run optimizer-nvme --offload-optimizer nvme
run optimizer+params-nvme --offload-optimizer nvme --offload-param nvme --offload-buffer-size 1M \
  --offload-buffer-count 3 --memory-budget "$budget"
