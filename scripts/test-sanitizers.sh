#!/usr/bin/env bash
# The second CI build: the compiler and the runtime under AddressSanitizer and
# UndefinedBehaviorSanitizer (into ${ZCC_ASAN_BUILD_DIR:-build-asan}), then the subset of
# the suite that exercises them without MPI's own leaks drowning the reports: the runtime's
# unit tests, the dialect/pass/driver lit tests, a ZeRO-3 training run and the fuzz smoke.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
build=${ZCC_ASAN_BUILD_DIR:-build-asan}
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DZCC_SANITIZE=address,undefined \
    -DZCC_ENABLE_CUDA=OFF -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 -DLLVM_USE_LINKER=lld
fi
cmake --build "$build"
# Open MPI and OpenMP keep allocations until exit: leaks are not what this build looks for.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cd "$build"
ctest --output-on-failure -j2 -R '^(zrt-|lit-Dialect|lit-Passes|lit-Driver|lit-Robustness|train-mlp-zero-stages|zcc-fuzz)'
