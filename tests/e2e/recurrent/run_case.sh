#!/bin/sh
# run_case.sh TURBINE DIR CASE: compiles DIR/CASE.onnx and runs it on
# DIR/CASE_in*.npy, requiring every result to match DIR/CASE_out*.npy.
turbine=$1 dir=$2 case=$3
"$turbine" compile "$dir/$case.onnx" -o "$dir/$case.tmod" || exit 1
set --
for f in "$dir/${case}"_in*.npy; do set -- "$@" "--input=@$f"; done
for f in "$dir/${case}"_out*.npy; do set -- "$@" "--expected_output=@$f"; done
"$turbine" run "$dir/$case.tmod" "$@"
