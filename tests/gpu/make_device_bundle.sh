#!/usr/bin/env bash
# make_device_bundle.sh - everything a lent GPU machine needs to check and
# time the cuda target, built here (no GPU needed), run there with the
# runtime alone (tests/gpu/README.md).
#
#   tests/gpu/make_device_bundle.sh [BUILD_DIR] [BUNDLE_DIR]
#
# BUILD_DIR (default build) must hold a build with bin/turbine and
# bin/turbine-runtime; BUNDLE_DIR (default BUILD_DIR/gpu-bundle) is
# replaced. CUDA_ARCH (default sm_90: the H100/H200 lent here) picks the
# cubins; the PTX goes along too. JOBS (default nproc) parallel compiles.
# The bundle: bin/turbine-runtime + lib/libturbine_runtime.so (no LLVM,
# MLIR, libtorch or ONNX), the ONNX node suite compiled for cuda with its
# data (`turbine conformance --save-artifacts`) and the list of tests that
# pass on the CPU, the test models compiled for cuda with the CPU backend's
# outputs, GEMM artifacts, and the scripts that run it all
# (run_device_checks.sh). The node suite's artifacts travel as one .tar.xz.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-build}" && pwd)
BUNDLE=${2:-$BUILD/gpu-bundle}
ARCH=${CUDA_ARCH:-sm_90}
JOBS=${JOBS:-$(nproc)}
TURBINE=$BUILD/bin/turbine
PY=/usr/bin/python3
for f in "$TURBINE" "$BUILD/bin/turbine-runtime" "$BUILD/lib/libturbine_runtime.so"; do
  [ -e "$f" ] || { echo "make_device_bundle: missing $f (build first)" >&2; exit 2; }
done
rm -rf "$BUNDLE"
mkdir -p "$BUNDLE/bin" "$BUNDLE/lib" "$BUNDLE/models"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

echo "== runtime"
cp "$BUILD/bin/turbine-runtime" "$BUNDLE/bin/"
cp "$BUILD/lib/libturbine_runtime.so" "$BUNDLE/lib/"
cp "$ROOT/tests/conformance/run_saved_tests.py" "$ROOT/tests/gpu/run_device_checks.sh" \
   "$ROOT/tests/gpu/torch_reference.py" "$BUNDLE/"
git -C "$ROOT" rev-parse HEAD > "$BUNDLE/COMMIT" 2>/dev/null || echo unknown > "$BUNDLE/COMMIT"

echo "== ONNX node suite for cuda ($ARCH), and on the CPU for the list of passing tests"
"$TURBINE" conformance --suite=node -j "$JOBS" --target=cuda --cuda-arch="$ARCH" --compile-only \
  --save-artifacts="$WORK/node" > "$BUNDLE/node-cuda-compile.txt" || true
"$TURBINE" conformance --suite=node -j "$JOBS" > "$BUNDLE/node-cpu.txt" || true
tail -1 "$BUNDLE/node-cuda-compile.txt"; tail -1 "$BUNDLE/node-cpu.txt"
tar -C "$WORK" -cf - node | xz -T"$JOBS" -6 > "$BUNDLE/node.tar.xz"

echo "== test models (cuda artifacts, CPU outputs)"
"$PY" "$ROOT/tests/models/export_models.py" "$WORK/models" > /dev/null
for dir in "$WORK"/models/*/; do
  m=$(basename "$dir")
  mkdir -p "$BUNDLE/models/$m"
  for input in "$dir"/input_*.npy; do
    b=$(basename "$input" .npy); b=${b#input_}
    cp "$input" "$BUNDLE/models/$m/input_$b.npy"
  done
  "$TURBINE" compile "$dir/model.onnx" -o "$BUNDLE/models/$m/model.tmod" --target=cuda --cuda-arch="$ARCH"
  "$TURBINE" compile "$dir/model.onnx" -o "$WORK/$m-cpu.tmod"
  for input in "$BUNDLE/models/$m"/input_*.npy; do
    b=$(basename "$input" .npy); b=${b#input_}
    "$TURBINE" run "$WORK/$m-cpu.tmod" --device=local-sync --input=@"$input" \
      --output=@"$BUNDLE/models/$m/cpu_output_$b.npy" > /dev/null
  done
done

echo "== GEMM artifacts"
"$PY" - "$WORK/gemm" <<'PYEOF'
import os, sys
import onnx
from onnx import TensorProto, helper
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
# name: (M, K, N, dtype). 4096^3 (issue 15's yardstick) and LLM shapes:
# decode GEMV and prefill of a 4096-wide model.
shapes = {"gemm_4096_f32": (4096, 4096, 4096, TensorProto.FLOAT),
          "gemm_4096_f16": (4096, 4096, 4096, TensorProto.FLOAT16),
          "gemv_4096x11008_f16": (1, 4096, 11008, TensorProto.FLOAT16),
          "gemm_512x4096x11008_f16": (512, 4096, 11008, TensorProto.FLOAT16)}
for name, (m, k, n, t) in shapes.items():
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["a", "b"], ["c"])], name,
        [helper.make_tensor_value_info("a", t, [m, k]), helper.make_tensor_value_info("b", t, [k, n])],
        [helper.make_tensor_value_info("c", t, [m, n])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, os.path.join(out, name + ".onnx"))
PYEOF
mkdir -p "$BUNDLE/gemm"
for f in "$WORK"/gemm/*.onnx; do
  "$TURBINE" compile "$f" -o "$BUNDLE/gemm/$(basename "$f" .onnx).tmod" --target=cuda --cuda-arch="$ARCH"
done

size=$(du -sb "$BUNDLE" | cut -f1)
echo "bundle: $BUNDLE ($((size / 1048576)) MiB)"
if [ "$size" -gt $((56 * 1048576)) ]; then
  echo "make_device_bundle: the bundle is over 56 MiB; the device tool carries at most 64 MiB with the tree" >&2
  exit 1
fi
