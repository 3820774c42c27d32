#!/bin/sh
# ===- torch_compile_and_run.sh - e2e check of one TorchScript model ------=== #
#
# Usage: torch_compile_and_run.sh TURBINE MODEL_DIR KIND OUT.tmod BATCH...
# Compiles MODEL_DIR/KIND.pt (KIND: traced or scripted) with `turbine compile`
# at the input shape in MODEL_DIR/input_shape.txt with dim 0 of input 0
# dynamic, then runs the one artifact on MODEL_DIR/input_<b>.npy for every
# BATCH and compares with torch eager's MODEL_DIR/expected_<b>.npy.
# Tolerances: atol 1e-4, rtol 1e-3.
# ===---------------------------------------------------------------------=== #
set -eu
turbine=$1
model_dir=$2
kind=$3
artifact=$4
shift 4
"$turbine" compile "$model_dir/$kind.pt" -o "$artifact" \
  --input-shape="$(cat "$model_dir/input_shape.txt")" --dynamic-dim=0:0
for batch in "$@"; do
  "$turbine" run "$artifact" \
    --input=@"$model_dir/input_$batch.npy" \
    --expected_output=@"$model_dir/expected_$batch.npy" \
    --atol=1e-4 --rtol=1e-3 --output=@"$artifact.b$batch.npy"
done
