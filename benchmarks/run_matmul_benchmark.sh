#!/usr/bin/env bash
#===- run_matmul_benchmark.sh - Turbine vs OpenBLAS sgemm ----------------===#
#
# Usage: bash benchmarks/run_matmul_benchmark.sh [BUILD_DIR]   (default: build)
#
# 1. Writes func.func @main(%a: MxK, %b: KxN) -> MxN (linalg.fill +
#    linalg.matmul, f32) for each shape into BUILD_DIR/benchmarks/matmul/.
# 2. Compiles each with BUILD_DIR/bin/turbine compile (host CPU).
# 3. Runs BUILD_DIR/bin/matmul_benchmark on them at each thread count, with
#    OPENBLAS_CORETYPE=Cooperlake (OpenBLAS 0.3.21 does not know the newest
#    CPUs and may pick slow SSE3 or AVX2-only kernels; see README.md) and
#    OPENBLAS_NUM_THREADS matching Turbine's threads (local-sync for 1,
#    local-task --task_workers=N for N).
#
# Knobs (environment): MATMUL_SHAPES (MxNxK, or N for NxNxN; default: the
# squares 256..2048 and the transformer shapes 128x768x768, 128x3072x768,
# 128x768x3072), MATMUL_THREADS ("1 2"),
# MATMUL_REPETITIONS (50), MATMUL_WARMUP (5), MATMUL_ORDER (interleaved or
# blocked), MATMUL_STATISTIC (median, or min: each side's fastest call), MATMUL_OPENBLAS_CORETYPE (Cooperlake), MATMUL_OPENBLAS_THREAD_TIMEOUT
# (4: OpenBLAS's idle threads sleep after 2^4 cycles instead of spinning on
# the cores the other library's interleaved calls need). OPENBLAS_CORETYPE itself is
# overridden on purpose: an inherited value (e.g. Haswell, seen in some shells
# here) would silently benchmark OpenBLAS with narrower kernels.
#===----------------------------------------------------------------------===#
set -euo pipefail

build_dir=${1:-build}
shapes=${MATMUL_SHAPES:-256 512 1024 2048 128x768x768 128x3072x768 128x768x3072}
thread_counts=${MATMUL_THREADS:-1 2}
repetitions=${MATMUL_REPETITIONS:-50}
warmup=${MATMUL_WARMUP:-5}
order=${MATMUL_ORDER:-interleaved}
turbine=$build_dir/bin/turbine
benchmark=$build_dir/bin/matmul_benchmark
artifact_dir=$build_dir/benchmarks/matmul

for tool in "$turbine" "$benchmark"; do
  if [ ! -x "$tool" ]; then
    echo "run_matmul_benchmark.sh: error: $tool not built (is OpenBLAS installed? run 'make build')" >&2
    exit 1
  fi
done
mkdir -p "$artifact_dir"

# write_matmul_mlir M N K FILE: C (MxN) = A (MxK) * B (KxN).
write_matmul_mlir() {
  local m=$1 n=$2 k=$3 file=$4
  local a="tensor<${m}x${k}xf32>" b="tensor<${k}x${n}xf32>" c="tensor<${m}x${n}xf32>"
  cat > "$file" <<MLIR
// C = A * B, f32, M = ${m}, N = ${n}, K = ${k} (written by run_matmul_benchmark.sh)
func.func @main(%a: ${a}, %b: ${b}) -> ${c} {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : ${c}
  %init = linalg.fill ins(%zero : f32) outs(%empty : ${c}) -> ${c}
  %c = linalg.matmul ins(%a, %b : ${a}, ${b}) outs(%init : ${c}) -> ${c}
  return %c : ${c}
}
MLIR
}

names=()
for shape in $shapes; do
  case $shape in
    *x*x*) IFS=x read -r m n k <<< "$shape" ;;
    *) m=$shape n=$shape k=$shape ;;
  esac
  name=${m}x${n}x${k}
  names+=("$name")
  write_matmul_mlir "$m" "$n" "$k" "$artifact_dir/matmul_$name.mlir"
  # A compile is a second or two; the limit only guards against a hang.
  timeout 300 "$turbine" compile "$artifact_dir/matmul_$name.mlir" \
    -o "$artifact_dir/matmul_$name.tmod"
done
echo "compiled: $(cd "$artifact_dir" && ls ./*.tmod | tr '\n' ' ')"
echo

export OPENBLAS_CORETYPE=${MATMUL_OPENBLAS_CORETYPE:-Cooperlake}
shapes_csv=$(IFS=,; echo "${names[*]}")
for threads in $thread_counts; do
  OPENBLAS_NUM_THREADS=$threads OMP_NUM_THREADS=$threads \
    OPENBLAS_THREAD_TIMEOUT=${MATMUL_OPENBLAS_THREAD_TIMEOUT:-4} \
    "$benchmark" "$artifact_dir" --shapes="$shapes_csv" --threads="$threads" \
      --repetitions="$repetitions" --warmup="$warmup" --order="$order" \
      --statistic="${MATMUL_STATISTIC:-median}"
  echo
done
