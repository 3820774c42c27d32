#!/usr/bin/env bash
# run_ctest.sh - the ctest suite of a sanitizer build (`make test SANITIZE=...`).
#
#   cd build-asan && bash ../tests/sanitizers/run_ctest.sh address,undefined [ctest args]
#   cd build-tsan && bash ../tests/sanitizers/run_ctest.sh thread [ctest args]
#
# Sets the sanitizers' options (every report fails its test) and this
# folder's suppression files, and leaves out the tests listed in
# skip-<kind>.txt (each with its reason: too slow under the sanitizer, or a
# process the sanitizer cannot run in). See README.md.
set -euo pipefail
KIND=$1
shift
source "$(dirname "$0")/env.sh" "$KIND"
# The skip list: one ctest regex per line, '#' comments.
EXCLUDE=$(grep -vE '^\s*(#|$)' "$SKIP" | sed 's/\s*#.*//' | paste -sd'|' -)
if [ -n "$EXCLUDE" ]; then
  exec ctest -E "$EXCLUDE" --timeout 3000 "$@"
fi
exec ctest --timeout 3000 "$@"
