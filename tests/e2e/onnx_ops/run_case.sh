#!/bin/sh
# run_case.sh TURBINE DIR MODEL CASE [RUN_ARGS...]: compiles DIR/MODEL.onnx
# and runs it on DIR/CASE_in*.npy, requiring every result to match
# DIR/CASE_out*.npy (RUN_ARGS, e.g. --atol, go to `turbine run`).
turbine=$1 dir=$2 model=$3 case=$4
shift 4
extra="$*"
"$turbine" compile "$dir/$model.onnx" -o "$dir/$case.tmod" || exit 1
set --
for f in "$dir/${case}"_in*.npy; do [ -e "$f" ] && set -- "$@" "--input=@$f"; done
for f in "$dir/${case}"_out*.npy; do set -- "$@" "--expected_output=@$f"; done
# shellcheck disable=SC2086
"$turbine" run "$dir/$case.tmod" "$@" $extra
