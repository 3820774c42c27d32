# env.sh - the sanitizers' options for a test run (sourced by run_ctest.sh and
# run_subset.sh): every report fails the process it happens in, and this
# folder's suppression files apply. Usage: source env.sh KIND (thread, or a
# list with address and/or undefined). Sets SKIP to the skip-list file.
SAN_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
case $1 in
  thread)
    export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:history_size=4:suppressions=$SAN_HERE/tsan.supp${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
    SKIP=$SAN_HERE/skip-thread.txt ;;
  *)
    export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
    export LSAN_OPTIONS="suppressions=$SAN_HERE/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
    export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=$SAN_HERE/ubsan.supp${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
    SKIP=$SAN_HERE/skip-address.txt ;;
esac
