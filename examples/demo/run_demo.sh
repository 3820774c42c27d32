#!/usr/bin/env bash
# run_demo.sh - the `make demo` walkthrough: model -> artifact -> results -> speed.
#
#   bash examples/demo/run_demo.sh [BUILD_DIR]      (default: build)
#
# 1. make_demo_model.py writes an MLP 256-512-512-10 (ReLU, dynamic batch,
#    weights as dense constants) plus a batch-4 input and NumPy's output into
#    BUILD_DIR/demo/.
# 2. `turbine compile` turns the MLIR into one .tmod artifact.
# 3. `turbine run` executes it on local-sync and on local-task, printing the
#    results; each device's output is compared with NumPy's (max abs error is
#    printed; above the tolerance the demo fails with a non-zero exit).
# 4. Time per call on both devices with `turbine bench` (median of 200).
set -euo pipefail

BUILD_DIR=${1:-build}
SOURCE_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TURBINE="$BUILD_DIR/bin/turbine"
DEMO_DIR="$BUILD_DIR/demo"
PYTHON=/usr/bin/python3          # Debian's interpreter, which has NumPy
TOLERANCE=1e-3                   # max abs error allowed vs NumPy (f32 vs f64)
DEVICES=(local-sync local-task)

step() { printf '\n== %s\n' "$*"; }
die() { printf 'demo: error: %s\n' "$*" >&2; exit 1; }

[ -x "$TURBINE" ] || die "$TURBINE not found: build first (make build)"
[ -x "$PYTHON" ] || die "$PYTHON not found (the demo needs Python 3 with NumPy)"
"$PYTHON" -c 'import numpy' 2>/dev/null || die "NumPy is missing for $PYTHON"

step "1. Generating the model (MLP 256-512-512-10, ReLU, dynamic batch) into $DEMO_DIR"
"$PYTHON" "$SOURCE_DIR/make_demo_model.py" "$DEMO_DIR" --batch 4
ls -l "$DEMO_DIR/mlp.mlir" "$DEMO_DIR/input.npy" "$DEMO_DIR/expected.npy"

step "2. Compiling: turbine compile mlp.mlir -o mlp.tmod"
compile_start=$(date +%s.%N)
"$TURBINE" compile "$DEMO_DIR/mlp.mlir" -o "$DEMO_DIR/mlp.tmod" \
  --dump-phases="$DEMO_DIR/phases"
compile_end=$(date +%s.%N)
"$PYTHON" - "$compile_start" "$compile_end" "$DEMO_DIR/mlp.tmod" <<'EOF'
import os, sys
start, end, artifact = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
print("compiled in %.2f s -> %s (%.1f KiB); phases dumped next to it in phases/"
      % (end - start, artifact, os.path.getsize(artifact) / 1024))
EOF
grep -c 'turbine.dispatch' "$DEMO_DIR/phases/3.dispatch.mlir" \
  | sed 's/^/dispatches (kernels) in @main: /'

step "3. Running on a batch-4 input and checking against NumPy"
for device in "${DEVICES[@]}"; do
  echo "-- turbine run --device=$device"
  "$TURBINE" run "$DEMO_DIR/mlp.tmod" --device="$device" --input=@"$DEMO_DIR/input.npy"
  "$TURBINE" run "$DEMO_DIR/mlp.tmod" --device="$device" --input=@"$DEMO_DIR/input.npy" \
    --output=@"$DEMO_DIR/output_$device.npy" > /dev/null
done
"$PYTHON" - "$DEMO_DIR" "$TOLERANCE" "${DEVICES[@]}" <<'EOF'
import sys
import numpy as np
demo_dir, tolerance, devices = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
expected = np.load(demo_dir + "/expected.npy")
failed = False
for device in devices:
    actual = np.load("%s/output_%s.npy" % (demo_dir, device))
    if actual.shape != expected.shape:
        print("%-10s shape %s, NumPy has %s  MISMATCH" % (device, actual.shape, expected.shape))
        failed = True
        continue
    error = float(np.max(np.abs(actual.astype(np.float64) - expected)))
    ok = np.isfinite(error) and error <= tolerance
    failed |= not ok
    print("%-10s max abs error vs NumPy: %.3g (tolerance %g)  %s"
          % (device, error, tolerance, "OK" if ok else "MISMATCH"))
sys.exit(1 if failed else 0)
EOF

step "4. Time per call (batch 4)"
for device in "${DEVICES[@]}"; do
  echo "-- turbine bench --device=$device"
  "$TURBINE" bench "$DEMO_DIR/mlp.tmod" --device="$device" \
    --input=@"$DEMO_DIR/input.npy" --repetitions=200
done

step "Demo finished: outputs match NumPy on ${DEVICES[*]}"
