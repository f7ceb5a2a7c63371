#!/usr/bin/env bash
# zcc-fuzz for a bounded time in the suite: every input of test/Fuzz/corpus (the examples,
# lit inputs and the regressions of crashes found so far) is replayed, then mutated for
# $2 seconds. Exits non-zero on a crash (libFuzzer keeps the input as crash-*).
# usage: fuzz_smoke.sh ZCC-FUZZ SECONDS
set -euo pipefail
fuzz=$1 seconds=$2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# New inputs go to $work, never into the repository's corpus.
"$fuzz" "$work" "$here/corpus" -max_total_time="$seconds" -max_len=16384 -rss_limit_mb=4096 \
  -artifact_prefix="$work/" -print_final_stats=1 2>&1 | tail -5
