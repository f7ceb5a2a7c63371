#!/usr/bin/env bash
# Runs a deliberately broken build of the CUDA kernels (CMakeLists.txt's mutations) on the row
# kernels' conformance cases and passes only when the suite catches it: a mismatch against the CPU
# backend (a FAIL line), not a crash or a skip. The broken file is never sanitized
# (test/CudaOnCpu/CMakeLists.txt), so the values alone must give the defect away.
set -u
caught='^FAIL '
out=$("$1" --only rows --fail-fast 2>&1)
rc=$?
printf '%s\n' "$out" | grep -E "$caught" | head -5
if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ] && printf '%s\n' "$out" | grep -qE "$caught"; then
  echo "caught (exit $rc)"
  exit 0
fi
printf '%s\n' "$out" | tail -20
echo "the broken kernels passed the suite (exit $rc)"
exit 1
