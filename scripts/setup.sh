#!/usr/bin/env bash
# Installs, from Debian's packages, everything zcc's build and tests need. Idempotent: skips what is present.
set -euo pipefail

PACKAGES=(
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools clang-22 lld-22 libomp-22-dev libclang-rt-22-dev
  ninja-build cmake pkg-config
  openmpi-bin libopenmpi-dev
  libopenblas-dev libdnnl-dev
  nlohmann-json3-dev libgtest-dev libbenchmark-dev
  python3
  python3-torch python3-numpy   # the numerical reference of the training tests
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "setup: installing ${missing[*]}"
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
