#!/usr/bin/env bash
# run_subset.sh - the runtime-level subset of the suite under a sanitizer
# (`make sanitize-subset SANITIZE=...`; README.md): builds only the runtime,
# the artifact reader, the kernels' cache and interpreter, their unit tests
# and the fuzz replay drivers of the runtime-level parsers (nothing that
# needs the MLIR compiler libraries compiled with the sanitizer), then runs
# each with the options and suppressions of env.sh.
#
#   bash tests/sanitizers/run_subset.sh thread build-tsan
set -uo pipefail
KIND=$1
BUILD=$(cd "$2" && pwd)
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
source "$ROOT/tests/sanitizers/env.sh" "$KIND"
TESTS=(turbine_artifact_tests turbine_runtime_tests turbine_kernels_tests)
REPLAYS=(npy input_spec irpa safetensors gguf tmod kernel_cache)
cmake --build "$BUILD" -j "${JOBS:-2}" --target "${TESTS[@]}" turbine_test_kernels \
  $(printf 'fuzz_replay_%s ' "${REPLAYS[@]}") || exit 1
# gtest filter from the skip list (ctest regexes of Suite.Test names).
FILTER=$(grep -vE '^\s*(#|$)' "$SKIP" | sed 's/\s*#.*//' | paste -sd: -)
failed=()
for t in "${TESTS[@]}"; do
  exe=$(find "$BUILD" -name "$t" -type f -perm -u+x | head -1)
  echo "== $t"
  if ! (cd "$BUILD" && "$exe" ${FILTER:+--gtest_filter=-$FILTER}) > "$BUILD/subset-$t.log" 2>&1; then
    failed+=("$t")
    tail -n 60 "$BUILD/subset-$t.log"
  fi
  grep -E '^\[  (PASSED|FAILED)  \]|tests ran' "$BUILD/subset-$t.log"
done
for r in "${REPLAYS[@]}"; do
  echo "== fuzz_replay_$r"
  "$BUILD/fuzz/fuzz_replay_$r" "$ROOT/fuzz/corpus/$r" > "$BUILD/subset-replay-$r.log" 2>&1 ||
    { failed+=("fuzz_replay_$r"); tail -n 40 "$BUILD/subset-replay-$r.log"; }
  tail -n 1 "$BUILD/subset-replay-$r.log"
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED under $KIND: ${failed[*]}"
  exit 1
fi
echo "all passed under $KIND"
