#!/usr/bin/env bash
# Configures (once) and builds zcc with Ninja into ${ZCC_BUILD_DIR:-build}.
# Prefers clang-22 + lld-22 (faster, half the memory of g++); falls back to the default compiler.
# ZCC_CMAKE_ARGS: more -D settings, applied to a configured build folder too (scripts/test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${ZCC_BUILD_DIR:-build}
read -r -a extra <<< "${ZCC_CMAKE_ARGS:-}"

if [ ! -f "$build_dir/build.ninja" ]; then
  args=(-G Ninja -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release
        -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir
        -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit)
  if command -v clang++-22 >/dev/null && command -v ld.lld-22 >/dev/null; then
    args+=(-DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 -DLLVM_USE_LINKER=lld)
  fi
  cmake "${args[@]}" "${extra[@]}"
elif [ ${#extra[@]} -gt 0 ]; then
  cmake -B "$build_dir" "${extra[@]}" >/dev/null
fi
cmake --build "$build_dir"
