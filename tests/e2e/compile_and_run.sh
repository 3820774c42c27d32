#!/bin/sh
# ===- compile_and_run.sh - e2e check of one exported ONNX model ---------=== #
#
# Usage: compile_and_run.sh TURBINE MODEL_DIR BATCH OUT.tmod
# Compiles MODEL_DIR/model.onnx with `turbine compile`, then runs it on
# MODEL_DIR/input_BATCH.npy and compares with MODEL_DIR/expected_BATCH.npy.
# ===---------------------------------------------------------------------=== #
set -eu
turbine=$1
model_dir=$2
batch=$3
artifact=$4
"$turbine" compile "$model_dir/model.onnx" -o "$artifact"
"$turbine" run "$artifact" \
  --input=@"$model_dir/input_$batch.npy" \
  --expected_output=@"$model_dir/expected_$batch.npy" \
  --atol=1e-4 --rtol=1e-3
