#!/usr/bin/env bash
# The README's test command: installs what is missing, builds zcc, runs the whole test suite,
# then the second build: the compiler and runtime under ASan + UBSan, and the suite again on it
# (scripts/test-sanitizers.sh; ZCC_SKIP_SANITIZERS=1 skips it).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
ctest --test-dir "${ZCC_BUILD_DIR:-build}" --output-on-failure
if [ "${ZCC_SKIP_SANITIZERS:-0}" != 1 ]; then
  scripts/test-sanitizers.sh
fi
