#!/usr/bin/env bash
# Installs, from Debian's packages, everything zcc's build and tests need, then zcc-import's Python
# environment (scripts/setup-python.sh). Idempotent: skips what is present.
set -euo pipefail

PACKAGES=(
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools clang-22 lld-22 libomp-22-dev libclang-rt-22-dev
  ninja-build cmake pkg-config
  openmpi-bin libopenmpi-dev
  libopenblas-openmp-dev libdnnl-dev   # OpenBLAS's OpenMP build: runtime/CMakeLists.txt says why
  liburing-dev fio   # the NVMe store's io_uring engine; fio measures the disk the offload bench compares with
  nlohmann-json3-dev libgtest-dev libbenchmark-dev
  libtbb-dev   # the parallel algorithms under HIP-CPU (third_party/hip-cpu): the CUDA kernels run on the CPU in tests
  python3 python3-venv python3-pip
  python3-torch python3-numpy   # the numerical reference of the training tests
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages present"
else
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# zcc-import's Python environment (PyTorch 2.x, transformers, safetensors from PyPI), which its
# tests use too. ZCC_SKIP_PYTHON=1 skips it (the importer's tests then fail with its error).
if [ "${ZCC_SKIP_PYTHON:-0}" != 1 ]; then
  "$(dirname "$0")/setup-python.sh"
fi
