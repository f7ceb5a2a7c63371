#!/usr/bin/env bash
# train.bin started with a world size other than the compiled one: every rank prints one clear
# error, the job exits non-zero, and no training step runs (no step line, no log file).
# usage: world_size_mismatch.sh ZCC MODEL.mlir
set -uo pipefail
zcc=$1 model=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

"$zcc" "$model" -o "$work/train.bin" --world-size 2 || { echo "FAIL: zcc"; exit 1; }
fail=0
for np in 1 3; do
  timeout 120 mpirun -np $np "$work/train.bin" --synthetic --steps 5 --log-json "$work/log-$np.jsonl" \
    >"$work/out-$np" 2>&1
  rc=$?
  errors=$(grep -c "compiled for 2 ranks but started with $np" "$work/out-$np")
  if [ $rc -eq 0 ] || [ $rc -eq 124 ]; then echo "FAIL: np=$np exited $rc"; fail=1; fi
  if [ "$errors" -ne $np ]; then echo "FAIL: np=$np printed $errors errors, expected one per rank"; fail=1; fi
  if grep -q "^step" "$work/out-$np" || [ -e "$work/log-$np.jsonl" ]; then
    echo "FAIL: np=$np trained before failing"; fail=1
  fi
  [ $fail -eq 0 ] || { cat "$work/out-$np"; exit 1; }
done
echo "PASS: np=1 and np=3 against a 2-rank build: one error per rank, non-zero exit, no step"
