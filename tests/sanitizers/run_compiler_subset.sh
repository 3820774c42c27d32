#!/usr/bin/env bash
# run_compiler_subset.sh - the compiler-level subset of the suite under a
# sanitizer (`make sanitize-subset SANITIZE=... LEVEL=compiler`; README.md):
# builds the compiler libraries (turbine_compiler, turbine_kernels_compiler)
# and the runtime with the sanitizer, and one test binary,
# turbine_compiler_subset_tests (CMakeLists.txt here), holding the tests of
# the compiler's threads: ParallelCompile.* (16-way parallel codegen and
# link, a named target CPU, sessions on two threads at once),
# ConcurrentInvoke.* (a compiled module called from 6 threads) and
# CacheConcurrency.* (eager kernel caches filled by 6 threads and by two
# processes). Runs it with the options and suppressions of env.sh.
#
#   bash tests/sanitizers/run_compiler_subset.sh thread build-tsan
set -uo pipefail
KIND=$1
BUILD=$(cd "$2" && pwd)
source "$(cd "$(dirname "$0")" && pwd)/env.sh" "$KIND"
T=turbine_compiler_subset_tests
start=$(date +%s)
cmake --build "$BUILD" -j "${JOBS:-2}" --target $T || exit 1
echo "build: $(( $(date +%s) - start )) s"
FILTER=$(grep -vE '^\s*(#|$)' "$SKIP" | sed 's/\s*#.*//' | paste -sd: -)
exe=$(find "$BUILD" -name $T -type f -perm -u+x | head -1)
echo "== $T"
start=$(date +%s)
if (cd "$BUILD" && "$exe" ${FILTER:+--gtest_filter=-$FILTER}) > "$BUILD/subset-$T.log" 2>&1; then
  rc=0
else
  rc=1
  tail -n 80 "$BUILD/subset-$T.log"
fi
grep -E '^\[  (PASSED|FAILED|SKIPPED)  \]|tests ran' "$BUILD/subset-$T.log"
echo "run: $(( $(date +%s) - start )) s"
if [ $rc -ne 0 ]; then
  echo "FAILED under $KIND: $T"
  exit 1
fi
echo "all passed under $KIND"
