#!/usr/bin/env bash
# Builds and runs the runtime benchmarks, then prints zrt / bare-library ratios
# (targets: matmul >= 0.9x, elementwise >= 0.5x memcpy, collectives >= 0.9x MPI at 2 ranks).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
scripts/build.sh >/dev/null
build=${ZCC_BUILD_DIR:-build}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$(mktemp -d)
"$build/bench/zrt-kernel-bench" --benchmark_format=json --benchmark_min_time=0.3 > "$out/kernels.json"
python3 - "$out/kernels.json" <<'PY'
import json, sys
rows = {b["name"]: b for b in json.load(open(sys.argv[1]))["benchmarks"]}
def rate(name, key):
    return rows[name][key]
print(f"{'matmul':<14}{'shape':<16}{'zrt GFLOP/s':>12}{'lib GFLOP/s':>12}{'ratio':>8}")
for dtype, ours, lib in (("f32", "BM_zrt_matmul_f32", "BM_blas_sgemm"), ("bf16", "BM_zrt_matmul_bf16", "BM_onednn_bf16")):
    for i in range(5):
        a, b = rows[f"{ours}/{i}"], rows[f"{lib}/{i}"]
        print(f"{dtype:<14}{a['label']:<16}{a['flops']/1e9:>12.1f}{b['flops']/1e9:>12.1f}{a['flops']/b['flops']:>8.2f}")
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
