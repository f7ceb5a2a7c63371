#!/usr/bin/env bash
# The README's main job: installs what is missing, builds zcc, compiles the GPT example and
# trains it with mpirun on the CPU backend. Steps that do not exist yet are named, not faked.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
build_dir=${ZCC_BUILD_DIR:-build}
zcc="$build_dir/bin/zcc"

model=examples/gpt.mlir
echo "== zcc $model --verify-only"
"$zcc" "$model" --verify-only
params=$(grep -c '^zc.param' "$model")
elements=$(grep -o '^zc.param @[a-z0-9_]* : tensor<[0-9x]*' "$model" |
           sed 's/.*tensor<//; s/x$//' | awk -F'x' '{p=1; for(i=1;i<=NF;i++) p*=$i; s+=p} END {print s}')
echo "   $model is a valid model: $params parameters, $elements elements"

exe="$build_dir/gpt-train.bin"
echo "== zcc $model -o $exe --world-size 2 --zero-stage 3 --precision bf16 --recompute selective --report"
time "$zcc" "$model" -o "$exe" --world-size 2 --zero-stage 3 --precision bf16 --recompute selective --report \
  --memory-svg "$build_dir/gpt-memory.svg"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ckpt="$build_dir/gpt-ckpt"
rm -rf "$ckpt"
echo "== mpirun -np 2 $exe --data docs/dialect.md --steps 200 --lr 3e-3 --ckpt-dir $ckpt --ckpt-every 100"
mpirun -np 2 "$exe" --data docs/dialect.md --steps 200 --lr 3e-3 --log-every 20 --ckpt-dir "$ckpt" --ckpt-every 100
echo "== zcc-ckpt consolidate $ckpt -o $build_dir/gpt.safetensors"
"$build_dir/bin/zcc-ckpt" consolidate "$ckpt" -o "$build_dir/gpt.safetensors"
echo "== Memory plan drawn to $build_dir/gpt-memory.svg"
echo "== --target=cuda builds the same model for GPUs (needs one to run): see README"
