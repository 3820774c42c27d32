#!/usr/bin/env bash
# run_device_checks.sh - runs on the lent GPU machine, inside a bundle made
# by make_device_bundle.sh (tests/gpu/README.md): probes the machine, runs
# the ONNX node suite and the test models on --device=cuda with the runtime
# alone, compares with the CPU backend, and times models and GEMMs next to
# torch (cuBLAS) on the same GPU. Results go to $OUT (the device tool's
# folder that comes back; ./device-out elsewhere) and a summary to stdout.
#
#   bash BUNDLE/run_device_checks.sh [--quick]
#
# --quick: the probe, 50 node tests and the models (a first look that
# costs under a minute of device time).
set -uo pipefail
B=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT"
QUICK=${1:-}
RT=$B/bin/turbine-runtime
export TURBINE_CUDA_DRIVER=${TURBINE_CUDA_DRIVER:-}
[ -z "$TURBINE_CUDA_DRIVER" ] && unset TURBINE_CUDA_DRIVER
log() { echo "$@" | tee -a "$OUT/summary.txt"; }
: > "$OUT/summary.txt"

log "== probe (bundle of $(cat "$B/COMMIT"))"
{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv 2>&1
  ldconfig -p 2>/dev/null | grep -E 'libcuda\.so|libcublas\.so|libcudnn\.so' | head -5
  uname -r; nproc
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))' 2>&1
} > "$OUT/probe.txt" 2>&1
cat "$OUT/probe.txt" | tee -a "$OUT/summary.txt"
"$RT" run --help > /dev/null || { log "turbine-runtime does not start here"; exit 1; }

log "== ONNX node suite on cuda"
mkdir -p /tmp/tb-node && tar -C /tmp/tb-node -xJf "$B/node.tar.xz"
filter=""
[ "$QUICK" = --quick ] && filter="^test_(a|m)"
python3 "$B/run_saved_tests.py" /tmp/tb-node/node --runtime="$RT" --device=cuda -j "$(nproc)" \
  --filter="$filter" --timeout=120 --json="$OUT/node-cuda.json" > "$OUT/node-cuda.txt"
tail -1 "$OUT/node-cuda.txt" | tee -a "$OUT/summary.txt"
# Tests that pass on the CPU (bundle's node-cpu.txt) but not on cuda.
python3 - "$B/node-cpu.txt" "$OUT/node-cuda.json" <<'PYEOF' | tee -a "$OUT/summary.txt"
import json, sys
cpu = {l.split()[1].rstrip(":") for l in open(sys.argv[1]) if l.startswith("PASS ")}
cuda = json.load(open(sys.argv[2]))["results"]
worse = sorted(t for t in cpu if t in cuda and cuda[t] is not None)
missing = sorted(t for t in cpu if t not in cuda)
print("passing on CPU: %d; run on cuda: %d; of those failing on cuda: %d; not compiled/saved for cuda: %d"
      % (len(cpu), sum(t in cuda for t in cpu), len(worse), len(missing)))
for t in worse[:40]:
    print("  FAIL on cuda only: %s: %s" % (t, cuda[t][:200]))
PYEOF

log "== test models on cuda vs the CPU backend (atol 1e-3, rtol 1e-3)"
for dir in "$B"/models/*; do
  m=$(basename "$dir")
  for input in "$dir"/input_*.npy; do
    b=$(basename "$input" .npy); b=${b#input_}
    if out=$("$RT" run "$dir/model.tmod" --device=cuda --input=@"$input" \
         --expected_output=@"$dir/cpu_output_$b.npy" --atol=1e-3 --rtol=1e-3 \
         --print_max_element_count=0 2>&1); then
      log "PASS $m batch $b"
    else
      log "FAIL $m batch $b: $(echo "$out" | grep -m1 error)"
    fi
  done
  "$RT" bench "$dir/model.tmod" --device=cuda --input=@"$dir/input_1.npy" --repetitions=50 \
    --warmup=5 > "$OUT/bench-$m.txt" 2>&1
  log "  $m batch 1 cuda median ms/call: $(grep -m1 'median' "$OUT/bench-$m.txt" | awk '{print $NF}')"
done
[ "$QUICK" = --quick ] && exit 0

log "== GEMM on cuda vs torch (cuBLAS), same GPU"
for art in "$B"/gemm/*.tmod; do
  name=$(basename "$art" .tmod)
  IFS=_ read -r _ dims dtype <<< "$name"
  if [[ $dims == *x*x* ]]; then IFS=x read -r M K N <<< "$dims";
  elif [[ $dims == *x* ]]; then M=1; IFS=x read -r K N <<< "$dims";
  else M=$dims; K=$dims; N=$dims; fi
  "$RT" bench "$art" --device=cuda --input="${M}x${K}x${dtype}=0.5" --input="${K}x${N}x${dtype}=0.25" \
    --repetitions=10 --warmup=2 > "$OUT/bench-$name.txt" 2>&1
  ms=$(grep -m1 'median' "$OUT/bench-$name.txt" | awk '{print $NF}')
  ref=$(python3 "$B/torch_reference.py" gemm "$M" "$K" "$N" "$dtype" 2>&1 | tail -1)
  log "$name: turbine ${ms:-failed} ms; torch $ref"
done

log "== per-call overhead: the smallest node test artifact, 1000 calls"
art=/tmp/tb-node/node/test_abs/model.tmod
"$RT" bench "$art" --device=cuda --input=@/tmp/tb-node/node/test_abs/test_data_set_0/input_0.npy \
  --repetitions=1000 --warmup=20 > "$OUT/bench-overhead.txt" 2>&1
log "  abs 3x4x5 median ms/call: $(grep -m1 'median' "$OUT/bench-overhead.txt" | awk '{print $NF}')"
