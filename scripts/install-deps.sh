#!/usr/bin/env bash
# Installs the Debian packages Turbine builds, tests and demos with.
# Idempotent: does nothing when everything is already installed.
set -euo pipefail
PKGS=(
  cmake make ninja-build g++ ccache pkg-config
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools clang-22 lld-22
  libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata
  nlohmann-json3-dev libfmt-dev libcli11-dev libxxhash-dev
  libgtest-dev libgmock-dev libbenchmark-dev libopenblas-dev
  libtorch-dev python3-torch python3-torchvision python3-numpy python3-onnx python3-pytest
  pybind11-dev python3-dev python3-venv
)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
