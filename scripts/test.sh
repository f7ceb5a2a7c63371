#!/usr/bin/env bash
# The README's test command: installs what is missing, builds zcc (Release), then runs every test
# once: the tests labelled large, harness or reference (scripts/test-labels.sh) on that build, and all
# the others on the second build, the compiler and runtime under ASan + UBSan (scripts/test-sanitizers.sh),
# which checks what the plain run would and memory and undefined behaviour besides.
# ZCC_SKIP_SANITIZERS=1: no sanitizer build; the whole suite on the Release build instead.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/test-labels.sh
source scripts/test-env.sh
scripts/setup.sh
# The CUDA kernels on the CPU (a third of the sanitizer build's compile work) are built and run by the
# sanitizer build alone.
if [ "${ZCC_SKIP_SANITIZERS:-0}" = 1 ]; then
  ZCC_CMAKE_ARGS="-DZCC_CUDA_ON_CPU=ON" scripts/build.sh
else
  ZCC_CMAKE_ARGS="-DZCC_CUDA_ON_CPU=OFF" scripts/build.sh
fi
# Two at a time, as the sanitizer run: 9.2 min here against 12.3 serially (the multi-rank tests
# oversubscribe the two cores either way; train-large-arena claims both: PROCESSORS 2).
if [ "${ZCC_SKIP_SANITIZERS:-0}" = 1 ]; then
  ctest --test-dir "${ZCC_BUILD_DIR:-build}" --output-on-failure -j2
else
  ctest --test-dir "${ZCC_BUILD_DIR:-build}" --output-on-failure -j2 -L "$ZCC_PLAIN_ONLY_LABELS"
  scripts/test-sanitizers.sh
fi
