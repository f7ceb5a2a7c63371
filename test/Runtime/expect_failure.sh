#!/usr/bin/env bash
# usage: expect_failure.sh SECONDS REGEX COMMAND...
# Passes when COMMAND exits non-zero within SECONDS and its output matches REGEX: the
# runtime's misuse tests, where a hang or a silent success is the failure.
set -u
limit=$1 regex=$2
shift 2
output=$(timeout "$limit" "$@" 2>&1)
status=$?
echo "$output"
if [ $status -eq 124 ]; then echo "FAIL: no exit within ${limit}s (a hang)"; exit 1; fi
if [ $status -eq 0 ]; then echo "FAIL: exited 0"; exit 1; fi
if ! grep -Eq -- "$regex" <<<"$output"; then echo "FAIL: output does not match /$regex/"; exit 1; fi
echo "PASS: exit $status, message matched"
