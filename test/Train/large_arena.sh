#!/usr/bin/env bash
# A model whose arena passes 4 GiB trains: 2^28 + 2^24 parameters (1.06 GiB) with their
# gradients and AdamW moments put offsets past 2^32 (the lowering once wrapped every offset from
# 256 MiB up: MLIR's constant GEP indices keep 29 bits). A regression on 16 features (so the
# synthetic teacher stays small), through a 2^24-wide hidden layer. Two steps on one rank: the
# loss is finite, the first step's update changes it (w2 starts at zero, its gradient does not),
# and the step writes up to the planned end of the arena.
# usage: large_arena.sh ZCC
set -euo pipefail
zcc=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/wide.mlir" <<'MODEL'
zc.param @w1 : tensor<16x16777216xf32> = #zc.ones
zc.param @w2 : tensor<16777216x1xf32> = #zc.zeros
zc.forward @wide(%x: tensor<4x16xf32>, %y: tensor<4x1xf32>) -> tensor<f32> {
  %w1 = zc.param_ref @w1 : tensor<16x16777216xf32>
  %w2 = zc.param_ref @w2 : tensor<16777216x1xf32>
  %h = zc.matmul %x, %w1 : tensor<4x16xf32>, tensor<16x16777216xf32> -> tensor<4x16777216xf32>
  %p = zc.matmul %h, %w2 : tensor<4x16777216xf32>, tensor<16777216x1xf32> -> tensor<4x1xf32>
  %l = zc.mse %p, %y : tensor<4x1xf32> -> tensor<f32>
  zc.return %l : tensor<f32>
}
MODEL
"$zcc" "$work/wide.mlir" -o "$work/train.bin" --world-size 1 --report=json
arena=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['arena_bytes'])" "$work/train.bin.report.json")
if [ "$arena" -le $((4 << 30)) ]; then echo "FAIL: arena $arena B is not above 4 GiB"; exit 1; fi
OMP_NUM_THREADS=2 "$work/train.bin" --synthetic --steps 2 --log-every 1 --lr 1e-6 >"$work/out"
cat "$work/out"
python3 - "$work/out" "$arena" <<'CHECK'
import re, sys
text = open(sys.argv[1]).read()
losses = [float(x) for x in re.findall(r"^step +\d+ \| loss ([0-9.eE+-]+|nan|inf)", text, re.M)]
written = int(re.search(r"arena per rank: \d+ B planned, (\d+) B written", text).group(1))
if len(losses) != 2 or any(l != l or l in (float("inf"), float("-inf")) for l in losses):
    sys.exit(f"FAIL: losses {losses}")
if losses[1] == losses[0]:
    sys.exit(f"FAIL: the update did not change the loss ({losses})")
if written != int(sys.argv[2]):
    sys.exit(f"FAIL: the step wrote {written} B of the {sys.argv[2]} B arena")
print(f"PASS: arena {int(sys.argv[2]) / 2**30:.2f} GiB, losses {losses[0]:.6f} -> {losses[1]:.6f}")
CHECK
