#!/bin/sh
# ===- check_corrupted.sh - bisect finds a deliberately miscompiled kernel --=== #
#
# check_corrupted.sh TURBINE MODEL KERNEL ARGS...
# Runs `turbine bisect MODEL --test-corrupt-kernel=KERNEL ARGS...` (KERNEL: a
# symbol name or #N) and requires: exit 1, the kernel it corrupted reported
# as the first divergent dispatch, and no other dispatch diverging (each
# kernel is checked on reference inputs, so the error must not spread).
# ===---------------------------------------------------------------------=== #
turbine=$1
model=$2
kernel=$3
shift 3
output=$("$turbine" bisect "$model" --test-corrupt-kernel="$kernel" "$@" 2>&1)
rc=$?
printf '%s\n' "$output"
echo "[exit code $rc]"
[ "$rc" -eq 1 ] || { echo "FAIL: expected exit 1 (a divergent dispatch)"; exit 1; }
corrupted=$(printf '%s\n' "$output" | sed -n 's/^turbine bisect: test: kernel \([^ ]*\) corrupted.*/\1/p')
[ -n "$corrupted" ] || { echo "FAIL: no kernel was corrupted"; exit 1; }
reported=$(printf '%s\n' "$output" | sed -n '/dispatches diverge; the first:/{n;s/^dispatch #[0-9]* \([^ ]*\) .*/\1/p;}')
[ "$reported" = "$corrupted" ] ||
  { echo "FAIL: bisect reported '$reported', the corrupted kernel is '$corrupted'"; exit 1; }
printf '%s\n' "$output" | grep -E -q '^turbine bisect: 1 of [0-9]+ dispatches diverge' ||
  { echo "FAIL: more than the corrupted dispatch diverges"; exit 1; }
printf '%s\n' "$output" | grep -E -q 'output 0: .*max abs err 1 .*<- diverges' ||
  { echo "FAIL: the error statistics do not show the +1"; exit 1; }
echo "PASS: bisect found $corrupted"
