#!/usr/bin/env bash
# run_fuzz.sh - run the fuzz targets for a while each and report (fuzz/README.md).
#
#   fuzz/run_fuzz.sh FUZZ_BUILD SECONDS MODE [TARGET...]
#
# MODE `fuzz`  (make fuzz): corpora accumulate in FUZZ_BUILD/corpus/<target>,
#              started from the committed corpus (fuzz/corpus/<target>) and the
#              generated seeds (FUZZ_BUILD/seeds/<target>, make_seeds.py);
#              targets run one at a time, niced.
# MODE `smoke` (make test): each target from its committed corpus only, in a
#              scratch copy, FUZZ_JOBS (default 2) targets at a time.
# FUZZ_RUNS=N stops each target after N executions (plain mode only).
# Findings go to FUZZ_BUILD/findings/<target>/ (crash-*, leak-*, timeout-*,
# oom-*). Each is replayed and classified by the first stack frame outside
# the sanitizer runtime and the C/C++ libraries: a frame in libtorch/libc10
# (torchscript target) or libonnx/libprotobuf (onnx target) makes it a
# finding in that library, reported separately from Turbine's own; a finding
# of Turbine's own makes the script exit 1.
# One line per target goes to FUZZ_BUILD/fuzz-summary.txt: seconds, runs,
# coverage (edges: libFuzzer's `cov`), features, corpus size, findings.
set -uo pipefail
BUILD=$(cd "$1" && pwd)
SECONDS_PER_TARGET=$2
MODE=$3
shift 3
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then
  TARGETS=(npy input_spec irpa safetensors gguf tmod kernel_cache onnx torchscript)
fi
SUMMARY=$BUILD/fuzz-summary.txt
FUZZ_RUNS=${FUZZ_RUNS:-}
# Per process: two runs of different targets may run at once.
SUMMARY_TMP=$SUMMARY.tmp.$$
: > "$SUMMARY_TMP"

# Sanitizer settings for every run: stack traces symbolized, UBSan fatal.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:symbolize=1:handle_abort=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# Leaks inside libraries Turbine calls (each with its reason in the file).
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$ROOT/tests/sanitizers/lsan.supp:print_suppressions=0}
export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-/usr/lib/llvm-22/bin/llvm-symbolizer}
# The fuzz build's own libraries and TorchScript loader module.
export LD_LIBRARY_PATH=$BUILD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export TURBINE_TORCHSCRIPT_LOADER=$BUILD/lib/libturbine_torchscript_loader.so

# Which library a finding belongs to (see the header).
classify() { # target report-file
  local lib
  # Every frame, symbolized or not: libtorch's frames have no symbol names
  # (an out-of-memory inside it was filed as Turbine's when only named
  # frames were read).
  lib=$(grep -E '^ +#[0-9]+ 0x[0-9a-f]+ ' "$2" |
        grep -vE 'libclang_rt|compiler-rt|/sanitizer_common/|/asan/|/ubsan/|libc\.so|libstdc\+\+|libgcc|__libc|raise|abort|LLVMFuzzer|fuzzer::' |
        grep -vE ' in (malloc|calloc|realloc|free|posix_memalign|aligned_alloc|operator new|operator delete|__interceptor_|__asan|__lsan|__ubsan|__sanitizer)' |
        head -1)
  # A frame of Turbine's own (its sources include frontends/onnx/...).
  case "$lib" in *turbine::*) echo turbine; return ;; esac
  case "$1:$lib" in
    torchscript:*libtorch*|torchscript:*libc10*|torchscript:*/torch/*|torchscript:*/c10/*|torchscript:*caffe2*) echo libtorch ;;
    onnx:*libonnx*|onnx:*libprotobuf*|onnx:*/onnx/*|onnx:*google/protobuf*) echo libonnx ;;
    *) echo turbine ;;
  esac
}

run_target() { # target
  local t=$1 exe=$BUILD/fuzz/${1}_fuzzer corpus extra=() log
  log=$BUILD/logs/$t.log
  mkdir -p "$BUILD/logs" "$BUILD/findings/$t"
  if [ "$MODE" = smoke ]; then
    corpus=$BUILD/smoke-corpus/$t
    rm -rf "$corpus"
    mkdir -p "$corpus"
    cp "$ROOT/fuzz/corpus/$t"/* "$corpus"/ 2>/dev/null
  else
    corpus=$BUILD/corpus/$t
    mkdir -p "$corpus"
    extra=("$ROOT/fuzz/corpus/$t")
    [ -d "$BUILD/seeds/$t" ] && extra+=("$BUILD/seeds/$t")
  fi
  local flags=(-max_total_time="$SECONDS_PER_TARGET" -timeout=20 -rss_limit_mb=3072
               -max_len=65536 -print_final_stats=1 -artifact_prefix="$BUILD/findings/$t/")
  [ -f "$ROOT/fuzz/dict/$t.dict" ] && flags+=(-dict="$ROOT/fuzz/dict/$t.dict")
  # FUZZ_RUNS=N: stop after N executions (SECONDS still caps the time).
  [ -n "${FUZZ_RUNS:-}" ] && flags+=(-runs="$FUZZ_RUNS")
  # libtorch and libonnx crash on some inputs by themselves: keep fuzzing
  # past their crashes (fork mode; torchscript in `fuzz` mode: restarts,
  # below) and file them afterwards.
  case $t in torchscript|onnx) flags+=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1) ;; esac
  # libtorch's loader makes many small allocations, each of which ASan
  # records a 30-frame stack for (about a third of the torchscript target's
  # time): while fuzzing, none are recorded; every finding is replayed below
  # with the full options, so its report keeps the allocation stacks.
  local fuzz_asan=$ASAN_OPTIONS
  [ "$t" = torchscript ] && fuzz_asan=$ASAN_OPTIONS:malloc_context_size=0
  local start=$(date +%s) rc
  if [ "$MODE" = fuzz ] && [ "$t" = torchscript ]; then
    # One long process, restarted after each finding, instead of fork mode:
    # fork mode's jobs are processes that fuzz 1, 2, 3, ... seconds (up to
    # 300) counted from their start, and loading libtorch under ASan takes
    # seconds, so in the first hour most jobs did little else (61 executions
    # in 196 s at load 13, against 23/s in one process).
    : > "$log"
    local plain=() flag done_runs=0 seg=$log.segment n restarts=0 left runs_flag
    for flag in "${flags[@]}"; do
      case $flag in -fork=*|-ignore_*|-max_total_time=*|-runs=*) ;; *) plain+=("$flag") ;; esac
    done
    while :; do
      left=$(( SECONDS_PER_TARGET - ($(date +%s) - start) ))
      [ "$left" -le 0 ] && break
      runs_flag=()
      if [ -n "${FUZZ_RUNS:-}" ]; then
        [ "$done_runs" -ge "$FUZZ_RUNS" ] && break
        runs_flag=(-runs=$((FUZZ_RUNS - done_runs)))
      fi
      ASAN_OPTIONS=$fuzz_asan nice -n 10 "$exe" "${plain[@]}" -max_total_time="$left" \
        "${runs_flag[@]}" "$corpus" "${extra[@]}" > "$seg" 2>&1
      rc=$?
      n=$(grep -oE 'stat::number_of_executed_units: [0-9]+' "$seg" | tail -1 | awk '{print $2}')
      [ -z "$n" ] && n=$(grep -oE '^#[0-9]+' "$seg" | tail -1 | tr -d '#')
      done_runs=$((done_runs + ${n:-0}))
      cat "$seg" >> "$log"
      rm -f "$seg"
      [ "$rc" = 0 ] && break
      restarts=$((restarts + 1))
      [ "$restarts" -ge 1000 ] && break
      echo "== restarted after exit $rc (its finding is filed below), $done_runs executions so far" >> "$log"
    done
    echo "stat::executed_units_over_restarts: $done_runs" >> "$log"
  else
    ASAN_OPTIONS=$fuzz_asan nice -n 10 "$exe" "${flags[@]}" "$corpus" "${extra[@]}" > "$log" 2>&1
    rc=$?
  fi
  local elapsed=$(( $(date +%s) - start ))
  # Runs and coverage: the last status line ("#N ... cov: C ft: F corp: K/...").
  local status runs cov ft corp
  status=$(grep -E '^#[0-9]+' "$log" | grep 'cov:' | tail -1)
  runs=$(grep -oE 'stat::number_of_executed_units: [0-9]+' "$log" | awk '{s+=$2} END {print s+0}')
  grep -q '^stat::executed_units_over_restarts:' "$log" &&
    runs=$(grep -oE '^stat::executed_units_over_restarts: [0-9]+' "$log" | awk '{print $2}')
  [ "$runs" = 0 ] && runs=$(echo "$status" | grep -oE '^#[0-9]+' | tr -d '#')
  cov=$(echo "$status" | grep -oE 'cov: [0-9]+' | awk '{print $2}')
  ft=$(echo "$status" | grep -oE 'ft: [0-9]+' | awk '{print $2}')
  corp=$(ls "$corpus" | wc -l)
  local own=0 foreign=0 f kind
  # Slow inputs (over 10 s once) are listed, not counted: on a loaded
  # machine an ordinary input can be slow; one that hangs is a timeout.
  for f in "$BUILD/findings/$t"/slow-unit-*; do
    [ -e "$f" ] && echo "$t: slow input $f (not a finding unless it also times out)"
  done
  for f in "$BUILD/findings/$t"/{crash,leak,timeout,oom}-*; do
    [ -e "$f" ] || continue
    # Replayed every time: a finding that reproduced before and no longer
    # does was fixed. One that never reproduced alone (a leak or a crash
    # that needs the state earlier inputs left) stays open, with the run's
    # log as its report.
    local before=no
    [ -e "$f.report" ] && ! grep -q '^NOT REPRODUCIBLE' "$f.report" && before=yes
    if timeout 120 "$exe" -runs=1 -timeout=20 "$f" > "$f.replay" 2>&1; then
      if [ $before = yes ]; then
        mkdir -p "$BUILD/findings/$t/fixed"
        mv "$f" "$f.report" "$BUILD/findings/$t/fixed/"
        rm -f "$f.replay"
        continue
      fi
      # A timeout that finishes in time when replayed alone was the
      # machine's load, not a hang: listed, not counted.
      if [[ $(basename "$f") == timeout-* ]]; then
        echo "$t: $f timed out during the run but finishes when replayed alone (machine load)"
        mkdir -p "$BUILD/findings/$t/load"
        mv "$f" "$BUILD/findings/$t/load/"
        rm -f "$f.replay" "$f.report"
        continue
      fi
      [ -e "$f.report" ] || { echo "NOT REPRODUCIBLE alone; from $log:"; cat "$log"; } > "$f.report"
    else
      mv "$f.replay" "$f.report"
    fi
    rm -f "$f.replay"
    kind=$(classify "$t" "$f.report")
    if [ "$kind" = turbine ]; then own=$((own + 1)); else foreign=$((foreign + 1)); fi
    echo "$t: finding $f ($kind): $(grep -m1 -E 'ERROR|SUMMARY|invariant|timeout|out-of-memory' "$f.report")"
  done
  printf '%-13s %5ss  runs %-10s cov %-6s ft %-7s corpus %-6s own findings %s  library findings %s  (exit %s)\n' \
    "$t" "$elapsed" "${runs:-?}" "${cov:-?}" "${ft:-?}" "$corp" "$own" "$foreign" "$rc" | tee -a "$SUMMARY_TMP"
  [ "$own" = 0 ]
}
export -f run_target classify
export BUILD SECONDS_PER_TARGET MODE ROOT SUMMARY SUMMARY_TMP FUZZ_RUNS

failed=0
if [ "$MODE" = smoke ]; then
  printf '%s\n' "${TARGETS[@]}" | xargs -P "${FUZZ_JOBS:-2}" -I{} bash -c 'run_target {}' || failed=1
else
  for t in "${TARGETS[@]}"; do run_target "$t" || failed=1; done
fi
# Lines of targets this run did not touch stay from earlier runs.
touch "$SUMMARY"
for t in "${TARGETS[@]}"; do grep -v "^$t " "$SUMMARY" > "$SUMMARY.old.$$" || true; mv "$SUMMARY.old.$$" "$SUMMARY"; done
sort "$SUMMARY" "$SUMMARY_TMP" -o "$SUMMARY" && rm -f "$SUMMARY_TMP"
echo "summary: $SUMMARY"
exit $failed
