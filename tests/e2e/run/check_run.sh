#!/bin/sh
# check_run.sh EXPECTED_EXIT REGEX COMMAND...
# Runs COMMAND, prints its output, and fails unless the exit code is
# EXPECTED_EXIT ("nonzero" accepts any failure that is not a crash/signal) and
# the combined stdout+stderr matches the extended regex REGEX.
expected=$1
regex=$2
shift 2
output=$("$@" 2>&1)
rc=$?
printf '%s\n' "$output"
echo "[exit code $rc]"
if [ "$rc" -eq 126 ] || [ "$rc" -eq 127 ]; then
  echo "FAIL: command could not be run (exit $rc)"; exit 1
fi
if [ "$rc" -ge 128 ]; then
  echo "FAIL: command crashed (exit $rc)"; exit 1
fi
if [ "$expected" = nonzero ]; then
  [ "$rc" -ne 0 ] || { echo "FAIL: expected a non-zero exit"; exit 1; }
else
  [ "$rc" -eq "$expected" ] || { echo "FAIL: expected exit $expected"; exit 1; }
fi
# Lines are joined with spaces so REGEX can span them.
printf '%s\n' "$output" | tr '\n' ' ' | grep -E -q -- "$regex" || { echo "FAIL: output does not match /$regex/"; exit 1; }
exit 0
