#!/usr/bin/env bash
# scripts/gpu-check.sh for a GPU machine that cannot build zcc (no LLVM/MLIR 22, no Open MPI, no
# package registry: the workplace's lent machines). Everything is built here, on x86-64, into one
# folder to carry there (about 22 MB; bin/,
# lib/ and ompi/ packed in payload.tar.xz, unpacked by env.sh):
#   bin/   zrt-cuda-conformance, zrt-cuda-kernel-bench, and the GPU train.bin of each model
#   lib/   every shared library they link but the C/C++ runtime's and CUDA's (those come from the
#          machine: its toolkit or PyTorch's nvidia wheels)
#   ompi/  Open MPI's components and help files (MPI_Init loads them)
#   ref/   the CPU backend's losses on the same first steps, computed here
#   env.sh sourced to run one binary by hand (libraries, Open MPI as an isolated singleton)
#   run.sh what to run there: conformance, the kernel bench, each model with CUDA graphs on and
#          off, then the report table (scripts/gpu_report.py) into $OUT or ./out (`run.sh checks`);
#          ranks sharing the GPU on the meshes of the CUDA tests, against the CPU backend's same
#          mesh, with compute-sanitizer where the machine has it (`run.sh share`, issue 56 part 3);
#          then zcc against PyTorch compiled on the same card (bench/gpu_bench.py, `run.sh bench`,
#          about 5 minutes). `run.sh` alone does all three: more than one device call's 10
#          minutes; a short lease runs them as separate calls.
#
#   scripts/gpu-bundle.sh DIR [--steps N] [--cpu-steps K] [--batch B]   (ZCC_BUILD_DIR: a CUDA build)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out=${1:?usage: scripts/gpu-bundle.sh DIR [--steps N] [--cpu-steps K] [--batch B]}
shift
steps=20 cpu_steps=2 batch=8 share_steps=4
while [ $# -gt 0 ]; do
  case "$1" in
    --steps) steps=$2; shift 2 ;;
    --cpu-steps) cpu_steps=$2; shift 2 ;;
    --batch) batch=$2; shift 2 ;;
    *) echo "gpu-bundle: unknown argument $1" >&2; exit 2 ;;
  esac
done
build=${ZCC_BUILD_DIR:-build}
bin=$root/$build/bin
if [ ! -x "$build/test/Cuda/zrt-cuda-conformance" ]; then
  echo "gpu-bundle: $build has no CUDA backend (configure with -DZCC_ENABLE_CUDA=ON)" >&2
  exit 1
fi
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/ref" "$out/models"
cp "$build/test/Cuda/zrt-cuda-conformance" "$bin/zrt-cuda-kernel-bench" "$out/bin/"
cp scripts/gpu_report.py "$out/"
cat README.md docs/*.md > "$out/data.txt"

python3 examples/gen_gpt.py --layers 12 --dim 768 --heads 12 --context 1024 --vocab 50304 --batch "$batch" \
  > "$out/models/gpt2-124m.mlir"
cp examples/llama.mlir "$out/models/llama.mlir"
# Mixture of experts on the GPU (runtime/cuda/Moe.cu, GroupedMatmul.cu, MoeLoss.cu): the small Mixtral
# (8 experts, top 2, balancing and z losses) against the CPU backend.
cp test/Train/Inputs/mixtral.mlir "$out/models/mixtral.mlir"
cp test/Train/Inputs/mixtral-shared.mlir "$out/models/mixtral-shared.mlir"
# bench/gpu_bench.py's cases (zcc against PyTorch compiled on the same card): GPT-2 124M at batch 8 and
# 16, and the Llama-3.2-1B shape, bf16, T 1024 and 2048.
python3 examples/gen_gpt.py --layers 12 --dim 768 --heads 12 --context 1024 --vocab 50304 --batch 8 \
  > "$out/models/gpt2-b8.mlir"
python3 examples/gen_gpt.py --layers 12 --dim 768 --heads 12 --context 1024 --vocab 50304 --batch 16 \
  > "$out/models/gpt2-b16.mlir"
python3 examples/gen_llama.py --layers 16 --dim 2048 --heads 32 --kv-heads 8 --ffn 8192 --context 2048 \
  --vocab 128256 --batch 4 --theta 500000 > "$out/models/llama1b-b4.mlir"
for case in gpt2-b8 gpt2-b16 llama1b-b4; do
  "$bin/zcc" "$out/models/$case.mlir" --target=cuda --precision bf16 -o "$out/bin/$case.bin"
done
cp bench/gpu_bench.py "$out/"
models=("gpt2-124m bf16" "llama fp32" "mixtral fp32")
export OMP_NUM_THREADS=$(nproc)
for spec in "${models[@]}"; do
  set -- $spec
  name=$1 precision=$2
  "$bin/zcc" "$out/models/$name.mlir" --target=cuda --precision "$precision" -o "$out/bin/$name.bin"
  "$bin/zcc" "$out/models/$name.mlir" --precision "$precision" -o "$out/ref/$name-cpu.bin"
  echo "gpu-bundle: the CPU backend's first $cpu_steps steps of $name"
  "$out/ref/$name-cpu.bin" --data "$out/data.txt" --steps "$cpu_steps" --log-every 1 \
    --log-json "$out/ref/$name.jsonl" > /dev/null
  rm "$out/ref/$name-cpu.bin"
done

# Issue 56 part 3: several ranks sharing the one GPU (NCCL refuses two ranks on a device, so
# --comm auto takes the MPI transport over pinned host buffers and steps run uncaptured): the GPT
# example on the meshes the CPU tests run (test/CudaOnCpu's train-cuda-on-cpu-*), each against the
# CPU backend's run of the same mesh, computed here under mpirun. Open MPI's launcher travels for
# them (one node: mpirun starts its ranks itself, no orted).
# (persistence threshold 0: the example's parameters are small, and ZeRO-3 would otherwise keep them whole)
z3="--zero-stage 3 --param-persistence-threshold 0"
share_cases=("zero3-np2 2 gpt $z3" "zero3-np4 4 gpt $z3" "zero2-np2 2 gpt --zero-stage 2"
             "tp2 2 gpt --tp 2" "pp2 2 gpt --pp 2 --grad-accum 2"
             "pp2-interleaved 2 gpt --pp 2 --pp-interleave 2 --grad-accum 2"
             "pp2-zbv 2 gpt --pp 2 --pp-schedule zbv --grad-accum 4"
             "cp2-ring 2 gpt --cp 2 --cp-mode ring"
             "cp2-ulysses 2 gpt --cp 2 --cp-mode ulysses" "tp2-dp2-zero3 4 gpt --tp 2 $z3"
             "offload-zero3-np2 2 gpt $z3 --offload-optimizer cpu --offload-param cpu"
             "mixtral-ep2 2 mixtral --ep 2" "mixtral-ep2-zero3 2 mixtral --ep 2 $z3"
             "mixtral-ep2-tp2-zero3 4 mixtral --ep 2 --tp 2 $z3" "mixtral-shared-ep2 2 mixtral-shared --ep 2")
# The share cases' models (gpt: the GPT example; mixtral: the small Mixtral, expert parallelism;
# mixtral-shared: with a shared expert, which the exchanges overlap).
declare -A share_models=([gpt]=examples/gpt.mlir [mixtral]=test/Train/Inputs/mixtral.mlir
                         [mixtral-shared]=test/Train/Inputs/mixtral-shared.mlir)
: > "$out/share-cases.txt"
for spec in "${share_cases[@]}"; do
  set -- $spec
  name=$1 np=$2 model=$3
  shift 3
  "$bin/zcc" "${share_models[$model]}" --target=cuda --world-size "$np" "$@" -o "$out/bin/share-$name.bin"
  "$bin/zcc" "${share_models[$model]}" --world-size "$np" "$@" -o "$out/ref/share-$name-cpu.bin"
  echo "gpu-bundle: the CPU backend's first $share_steps steps of $model, $name"
  OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
    mpirun -np "$np" "$out/ref/share-$name-cpu.bin" --data test/Inputs/corpus.txt --steps "$share_steps" \
    --log-every 1 --log-json "$out/ref/share-$name.jsonl" > /dev/null
  rm "$out/ref/share-$name-cpu.bin"
  zero=$(echo "$*" | sed -n 's/.*--zero-stage \([0-9]\).*/\1/p')
  echo "$name $np ${zero:-0} $model" >> "$out/share-cases.txt"
done
cp test/Inputs/corpus.txt "$out/corpus.txt"
cp examples/gpt.mlir "$out/models/gpt.mlir"
cp "$(readlink -f "$(command -v mpirun)")" "$out/bin/mpirun"

# Every shared library the binaries resolve here except the C/C++ runtime's (the GPU machine's own,
# newer ones serve) and CUDA's (its toolkit's or PyTorch's wheels'): Open MPI, OpenMP, liburing,
# oneDNN, OpenBLAS and what they pull in. Open MPI also loads its components (MCA plugins) at
# MPI_Init: they travel too, and run.sh points Open MPI at them and runs one rank as an isolated
# singleton (no orted to fork there).
for lib in $(ldd "$out"/bin/* | awk '/=>/ {print $3}' | sort -u); do
  case "$(basename "$lib")" in
    libc.so* | libm.so* | libdl.so* | libpthread.so* | librt.so* | ld-linux* | libstdc++* | libgcc_s*) ;;
    libcuda.so* | libcudart* | libcublas* | libnccl*) ;;
    *) cp -L "$lib" "$out/lib/" ;;
  esac
done
libmpi=$(ldd "$out/bin/gpt2-124m.bin" | awk '/libmpi.so/ {print $3; exit}')
ompi_components=$(dirname "$(readlink -f "$libmpi")")/openmpi/lib/openmpi3  # Debian's layout
mkdir -p "$out/ompi"
cp "$ompi_components"/mca_*.so "$out/ompi/"
cp -r /usr/share/openmpi "$out/ompi/share"

cat > "$out/env.sh" <<'EOF'
# Sourced (by run.sh, or by hand for one binary): unpacks the payload once, finds CUDA's libraries
# (the machine's toolkit, else PyTorch's nvidia wheels) and points Open MPI at its travelling
# components, one rank an isolated singleton.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ -d "$here/lib" ] || tar xJf "$here/payload.tar.xz" -C "$here" 2>/dev/null ||
  python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$here/payload.tar.xz" "$here"
nv=$(python3 -c "import glob, os, nvidia; print(':'.join(sorted(glob.glob(os.path.join(list(nvidia.__path__)[0], '*', 'lib')))))" 2>/dev/null || true)
export LD_LIBRARY_PATH="$here/lib:/usr/local/cuda/lib64:$nv:${LD_LIBRARY_PATH:-}"
export OMPI_MCA_mca_base_component_path="$here/ompi" OMPI_MCA_mca_base_component_show_load_errors=0
export OPAL_PKGDATADIR="$here/ompi/share" OMPI_MCA_ess_singleton_isolated=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
EOF
cat > "$out/run.sh" <<EOF
#!/usr/bin/env bash
# Run on the GPU machine from this folder. Results and logs go to \${OUT:-./out}.
set -uo pipefail
. "\$(dirname "\$0")/env.sh"
out=\${OUT:-\$here/out}
mkdir -p "\$out"
echo "libraries not found:"; ldd "\$here"/bin/* | grep "not found" | sort -u
if ! nvidia-smi -L 2>/dev/null | grep -q "^GPU"; then
  echo "run.sh: no NVIDIA GPU here (nvidia-smi -L lists none)" >&2
  exit 77
fi
status=0
what=\${1:-all}
# The largest memory (MiB) nvidia-smi sees one compute process hold while process \$1 runs.
watch_peak() {
  local peak=0 used
  while kill -0 "\$1" 2>/dev/null; do
    used=\$(nvidia-smi --query-compute-apps=used_memory --format=csv,noheader,nounits 2>/dev/null | sort -n | tail -1)
    if [ -n "\$used" ] && [ "\$used" -gt "\$peak" ]; then peak=\$used; fi
    sleep 0.2
  done
  echo \$peak
}
device=\$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "device: \$device"
# Time limits, so that one hang still leaves the rest of a short lease its say.
if [ "\$what" != bench ] && [ "\$what" != share ]; then
timeout 240 "\$here/bin/zrt-cuda-conformance" 2>&1 | tee "\$out/conformance.txt" || status=1
timeout 120 "\$here/bin/zrt-cuda-kernel-bench" 2>&1 | tee "\$out/kernel-bench.txt" || status=1
runs="["
for spec in "gpt2-124m bf16 on" "gpt2-124m bf16 off" "llama fp32 on" "llama fp32 off" "mixtral fp32 on" \
            "mixtral fp32 off"; do
  set -- \$spec
  name=\$1 precision=\$2 graphs=\$3 tag=\$1-graphs-\$3
  timeout 120 "\$here/bin/\$name.bin" --data "\$here/data.txt" --steps $steps --log-every 1 --log-json "\$out/\$tag.jsonl" \
    --cuda-graphs \$graphs > "\$out/\$tag.out" 2>&1 &
  pid=\$!
  peak=\$(watch_peak \$pid)
  if ! wait \$pid; then
    echo "FAIL: \$tag"; tail -20 "\$out/\$tag.out"; status=1; continue
  fi
  tail -2 "\$out/\$tag.out"
  runs+="{\"name\": \"\$tag\", \"model\": \"\$here/models/\$name.mlir\", \"gpus\": 1, \"zero\": 0, \"precision\": \"\$precision\", \"gpu_log\": \"\$out/\$tag.jsonl\", \"cpu_log\": \"\$here/ref/\$name.jsonl\", \"device\": \"\$device\", \"device_mib\": \$peak, \"warmup\": 3},"
done
echo "\${runs%,}]" > "\$out/runs.json"
python3 "\$here/gpu_report.py" "\$out/runs.json" | tee "\$out/table.txt" || status=1
fi
# Ranks sharing this GPU (issue 56 part 3): each mesh of share-cases.txt under the travelling mpirun,
# --comm auto (the MPI transport: one device), against the CPU backend's same mesh; per-rank device
# memory from nvidia-smi beside the planned and measured arena (each run's --log-json); then
# compute-sanitizer's memcheck and racecheck on one ZeRO-3 step at np 2 where the machine has it.
if [ "\$what" = share ] || [ "\$what" = all ]; then
  runs="["
  while read -r name np zero model; do
    tag=share-\$name
    timeout 150 "\$here/bin/mpirun" -np \$np --oversubscribe "\$here/bin/\$tag.bin" --data "\$here/corpus.txt" \
      --steps $share_steps --log-every 1 --log-json "\$out/\$tag.jsonl" < /dev/null > "\$out/\$tag.out" 2>&1 &
    pid=\$!
    peak=\$(watch_peak \$pid)
    if ! wait \$pid; then
      echo "FAIL: \$tag"; tail -20 "\$out/\$tag.out"; status=1; continue
    fi
    grep -m1 "^zcc: backend cuda: " "\$out/\$tag.out"  # the device, its sharing and the transport chosen
    echo "\$tag: largest process \$peak MiB (nvidia-smi); arena planned/measured per rank: \$(tail -1 "\$out/\$tag.jsonl" | python3 -c 'import json,sys; r=json.loads(sys.stdin.read()); print(r["planned_arena_bytes"], r["measured_arena_bytes"])')"
    runs+="{\"name\": \"\$tag\", \"model\": \"\$here/models/\$model.mlir\", \"gpus\": 1, \"zero\": \$zero, \"precision\": \"fp32\", \"gpu_log\": \"\$out/\$tag.jsonl\", \"cpu_log\": \"\$here/ref/\$tag.jsonl\", \"device\": \"\$device\", \"device_mib\": \$peak, \"warmup\": 1},"
  done < "\$here/share-cases.txt"
  echo "\${runs%,}]" > "\$out/share-runs.json"
  python3 "\$here/gpu_report.py" "\$out/share-runs.json" | tee "\$out/share-table.txt" || status=1
  sanitizer=\$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer 2>/dev/null | head -1 || true)
  if [ -n "\$sanitizer" ]; then
    for tool in memcheck racecheck; do
      timeout 240 "\$here/bin/mpirun" -np 2 --oversubscribe "\$sanitizer" --tool \$tool --error-exitcode 9 \
        "\$here/bin/share-zero3-np2.bin" --data "\$here/corpus.txt" --steps 1 --cuda-graphs off \
        > "\$out/sanitizer-\$tool.out" 2>&1 || { echo "FAIL: compute-sanitizer \$tool"; status=1; }
      grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "\$out/sanitizer-\$tool.out" | sort | uniq -c
    done
  else
    echo "compute-sanitizer: not on this machine (no toolkit); memcheck and racecheck not run"
  fi
fi
# zcc against PyTorch compiled, same card (the machine's own torch; about 5 minutes).
if [ "\$what" != checks ] && [ "\$what" != share ]; then
  timeout 480 python3 "\$here/gpu_bench.py" --zcc "\$here" --out "\$out" 2>&1 | tee "\$out/gpu-bench.txt" || status=1
fi
exit \$status
EOF
chmod +x "$out/run.sh"
# Packed: oneDNN's and OpenBLAS's libraries alone are over 70 MB, and each train.bin holds the same
# ~11 MB of runtime and kernels (the device tool carries 64 MiB). xz -9's 64 MiB window finds the
# copies: 21 MB against gzip's 89 (about 3 minutes here).
tar cf - -C "$out" bin lib ompi | xz -9 > "$out/payload.tar.xz"
rm -rf "$out/bin" "$out/lib" "$out/ompi"
du -sh "$out"
echo "gpu-bundle: carry $out; on the GPU machine run $out/run.sh"
