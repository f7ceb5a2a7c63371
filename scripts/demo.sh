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

echo "== zcc $model -o $build_dir/gpt.out.mlir (the model after zcc's pipeline)"
"$zcc" "$model" -o "$build_dir/gpt.out.mlir"
echo "   wrote $build_dir/gpt.out.mlir ($(wc -l < "$build_dir/gpt.out.mlir") lines)"

cat <<'MSG'
== Not built yet, so the demo stops here:
   - autodiff, optimizer, lowering to train.bin  (issue 4)
   - the CPU + MPI runtime train.bin links with  (issue 3)
   Once they land this script runs:
     zcc examples/gpt.mlir -o train.bin --world-size 2 --zero-stage 3
     mpirun -np 2 ./train.bin --synthetic --steps 50
MSG
