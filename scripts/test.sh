#!/usr/bin/env bash
# The README's test command: installs what is missing, builds zcc, runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
ctest --test-dir "${ZCC_BUILD_DIR:-build}" --output-on-failure
