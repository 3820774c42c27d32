#!/usr/bin/env bash
#===- run_dispatch_benchmark.sh - Runtime cost per dispatch --------------===#
#
# Usage: bash benchmarks/run_dispatch_benchmark.sh [BUILD_DIR]
#
# Compiles x + y (f32) at 64 elements (one workgroup: local-task runs it
# inline on the caller) and at 4096 (16 workgroups, shared with the pool's
# workers), then times a chain of DISPATCH_CHAIN (1000) dispatches of that
# kernel on local-sync and on local-task with 2 workers
# (dispatch_overhead_benchmark.cpp explains the chain).
#===----------------------------------------------------------------------===#
set -euo pipefail
build_dir=${1:-build}
chain=${DISPATCH_CHAIN:-1000}
repetitions=${DISPATCH_REPETITIONS:-200}
turbine=$build_dir/bin/turbine
benchmark=$build_dir/bin/dispatch_overhead_benchmark
dir=$build_dir/benchmarks/dispatch
mkdir -p "$dir"
echo "Per-dispatch runtime overhead: chain of $chain dispatches of one elementwise kernel,"
echo "median of $repetitions calls, divided by $chain"
for n in 64 4096; do
  cat > "$dir/add_$n.mlir" <<MLIR
func.func @main(%x: tensor<${n}xf32>, %y: tensor<${n}xf32>) -> tensor<${n}xf32> {
  %e = tensor.empty() : tensor<${n}xf32>
  %r = linalg.add ins(%x, %y : tensor<${n}xf32>, tensor<${n}xf32>) outs(%e : tensor<${n}xf32>) -> tensor<${n}xf32>
  return %r : tensor<${n}xf32>
}
MLIR
  timeout 300 "$turbine" compile "$dir/add_$n.mlir" -o "$dir/add_$n.tmod"
  "$benchmark" "$dir/add_$n.tmod" --dispatches="$chain" --repetitions="$repetitions" \
    --device=local-sync
  "$benchmark" "$dir/add_$n.tmod" --dispatches="$chain" --repetitions="$repetitions" \
    --device=local-task --task_workers=2
done
