#!/usr/bin/env bash
# zcc-fuzz for a bounded time in the suite: every input of test/Fuzz/corpus (the examples,
# lit inputs and the regressions of crashes found so far) is replayed, then mutated for
# $2 seconds. Exits non-zero on a crash: prints the sanitizer's report and keeps the input
# (crash-*, leak-*, timeout-*, oom-*) in ${ZCC_FUZZ_ARTIFACTS:-the current directory}.
# usage: fuzz_smoke.sh ZCC-FUZZ SECONDS
set -euo pipefail
fuzz=$1 seconds=$2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# New inputs go to $work, never into the repository's corpus.
"$fuzz" "$work" "$here/corpus" -max_total_time="$seconds" -max_len=16384 -rss_limit_mb=4096 \
  -artifact_prefix="$work/" -print_final_stats=1 > "$work/log" 2>&1 || status=$?
if [ "${status:-0}" -ne 0 ]; then
  keep=${ZCC_FUZZ_ARTIFACTS:-$PWD}
  mkdir -p "$keep"
  sed -n '/==ERROR\|runtime error\|deadly signal\|Timeout\|out-of-memory/,$p' "$work/log" | head -120
  for input in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*; do
    [ -e "$input" ] && cp "$input" "$keep/" && echo "fuzz_smoke: input kept as $keep/$(basename "$input")"
  done
  exit "$status"
fi
tail -5 "$work/log"
