#!/usr/bin/env bash
# Builds and runs the runtime benchmarks, then prints zrt / bare-library ratios
# (targets: matmul >= 0.9x the best library on each shape, elementwise >= 0.5x memcpy,
# collectives >= 0.9x MPI at 2 ranks), with the machine's roofline (zrt-roofline) first.
# One compute thread (OMP_NUM_THREADS=1 unless set), as a rank of the peers' benchmark runs.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
scripts/build.sh >/dev/null
build=${ZCC_BUILD_DIR:-build}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
out=$(mktemp -d)
"$build/bench/zrt-roofline" | tee "$out/roofline.txt"
peak=$("$build/bench/zrt-roofline" --json)
"$build/bench/zrt-kernel-bench" --benchmark_format=json --benchmark_min_time=0.3 > "$out/kernels.json"
python3 - "$out/kernels.json" "$peak" <<'PY'
import json, sys
rows = {b["name"]: b for b in json.load(open(sys.argv[1]))["benchmarks"]}
peak = json.loads(sys.argv[2])["fma_gflops_per_core"] * int(__import__("os").environ["OMP_NUM_THREADS"])
def rate(name, key):
    return rows[name][key]
def flops(name):
    r = rows.get(name)
    return r["flops"] if r and "error_occurred" not in r and "flops" in r else 0.0
print(f"{'matmul':<6}{'shape':<24}{'zrt GF/s':>9}{'% peak':>8}{'best lib':>22}{'lib GF/s':>9}{'ratio':>7}")
libraries = {"f32": ("BM_zrt_matmul_f32", ["BM_blas_sgemm", "BM_onednn_f32_primitive"]),
             "bf16": ("BM_zrt_matmul_bf16", ["BM_onednn_bf16"])}
for dtype, (ours, libs) in libraries.items():
    i = 0
    while f"{ours}/{i}" in rows:
        a = rows[f"{ours}/{i}"]
        lib = max(libs, key=lambda l: flops(f"{l}/{i}"))
        best = flops(f"{lib}/{i}")
        print(f"{dtype:<6}{a['label']:<24}{a['flops']/1e9:>9.1f}{100*a['flops']/1e9/peak:>7.0f}%{lib[3:]:>22}"
              f"{best/1e9:>9.1f}{a['flops']/best if best else float('nan'):>7.2f}")
        i += 1
# Every path a matmul plan chooses among, per shape, against the roofline's f32 FMA and bf16
# dot-product peaks (AMX tiles, where oneDNN drives them, run above both).
roof = json.loads(sys.argv[2])
threads = int(__import__("os").environ["OMP_NUM_THREADS"])
f32_peak, bf16_peak = roof["fma_gflops_per_core"] * threads, roof["bf16_dot_gflops_per_core"] * threads
print(f"\n{'shape':<22}{'path':<11}{'GF/s':>8}{'% f32 peak':>12}{'% bf16 peak':>13}  fastest")
paths = ["sgemm", "primitive", "blas", "native", "widen"]
i = 0
while f"BM_matmul_path/{i}/0" in rows:
    for group in (range(0, 3), range(3, 5)):
        rates = {paths[p]: flops(f"BM_matmul_path/{i}/{p}") for p in group}
        best = max(rates, key=rates.get)
        for name, r in rates.items():
            shape = rows[f"BM_matmul_path/{i}/{paths.index(name)}"].get("label", "").split(" ", 2)[-1]
            bf16_col = f"{100*r/1e9/bf16_peak:>12.0f}%" if group.start == 3 and bf16_peak else f"{'':>13}"
            print(f"{shape:<22}{name:<11}{r/1e9:>8.1f}{100*r/1e9/f32_peak:>11.0f}%{bf16_col}  "
                  f"{'<-' if name == best and r else ''}")
    i += 1
memcpy = rate("BM_memcpy", "bytes_per_second")
print(f"\n{'elementwise':<14}{'GB/s':>12}{'memcpy GB/s':>12}{'ratio':>8}")
for name in ("BM_zrt_add_f32", "BM_zrt_gelu_f32", "BM_zrt_adamw_f32"):
    r = rate(name, "bytes_per_second")
    print(f"{name[7:]:<14}{r/1e9:>12.2f}{memcpy/1e9:>12.2f}{r/memcpy:>8.2f}")
PY
echo
echo "collectives with the per-call agreement check (the default):"
mpirun -np 2 "$build/bench/zrt-collective-bench"
echo
echo "collectives with ZRT_COLLECTIVE_CHECKS=0:"
mpirun -np 2 -x ZRT_COLLECTIVE_CHECKS=0 "$build/bench/zrt-collective-bench"
