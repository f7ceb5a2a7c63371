#!/usr/bin/env bash
# The README's test command: installs what is missing, builds zcc, runs the whole test suite,
# then the second build: the compiler and runtime under ASan + UBSan, and the suite again on it
# (scripts/test-sanitizers.sh; ZCC_SKIP_SANITIZERS=1 skips it).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
# Two at a time, as the sanitizer run: 9.2 min here against 12.3 serially (the multi-rank tests
# oversubscribe the two cores either way; train-large-arena claims both: PROCESSORS 2).
ctest --test-dir "${ZCC_BUILD_DIR:-build}" --output-on-failure -j2
if [ "${ZCC_SKIP_SANITIZERS:-0}" != 1 ]; then
  scripts/test-sanitizers.sh
fi
