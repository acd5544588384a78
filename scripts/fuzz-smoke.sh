#!/usr/bin/env bash
# Smoke run of every fuzz target (fuzz/README.md): installs cargo-fuzz
# (pinned, idempotent), builds fuzz/ (libFuzzer; optimised with debug assertions and overflow
# checks, no sanitizer: the only unsafe code is the SQLite VFS's FFI, fuzzed by the ascend_db target), then fuzzes each target at low priority.
# Any crash, panic, hang (> 10 s on one input) or blow-up (> 2 GiB RSS) fails the target; the
# input is kept under fuzz/artifacts/<target>/. Ends with an "N passed, N failed" line (one per
# target). Args: target names (default all).
#
# Two modes:
# * default, deterministic (the scripts/test.sh layer): a fresh seed corpus per run
#   (fuzz/seed.py into target/fuzz-smoke/corpus, never the accumulated fuzz/corpus), libFuzzer
#   -seed=1, -reload=0 and a fixed number of executions per target (runs_of below, ~5-20 s
#   each on this machine), so wall time plays no part and the whole layer costs the same on
#   every machine. It is not bit-for-bit reproducible: the code under test keeps std HashMaps
#   whose per-process random hash seeds shift coverage slightly (two runs of trace_splitter:
#   cov 797 and 826), so two runs explore nearly, not exactly, the same inputs. A finding is
#   still a real bug, and its input is kept under fuzz/artifacts/<target>/.
#   FUZZ_RUNS_SCALE=N multiplies every count.
# * FUZZ_SECONDS=S: time-limited exploration on the accumulated fuzz/corpus (grows it; not
#   reproducible, for long runs). FUZZ_FORK=1 adds libFuzzer -fork=1 -ignore_crashes=1 …: the
#   run goes on after a finding; every input that crashed, hung or ran out of memory is kept,
#   and the target counts as failed.
# * FUZZ_CPU_SECONDS=S: like FUZZ_SECONDS, but the limit is CPU time, not wall time: the run
#   (libFuzzer -fork=1, so it goes on after findings) stops once its process tree has used S
#   CPU-seconds (user + system of the parent, its live children and the reaped ones). On a loaded
#   machine this is what "one CPU-hour per target" means.
# Fuzzing runs at nice ${FUZZ_NICE:-19} (the build at nice 10).
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/toolchain.sh
set -e
ensure_fuzz_tools
set +e
export RUSTC_BOOTSTRAP=1
SECS="${FUZZ_SECONDS:-}"
CPU_SECS="${FUZZ_CPU_SECONDS:-}"
if [ -n "$CPU_SECS" ]; then SECS=999999999; FUZZ_FORK=1; fi
SCALE="${FUZZ_RUNS_SCALE:-1}"
TRIPLE="$(rustc -vV | sed -n 's/^host: //p')"
BIN="fuzz/target/$TRIPLE/release"

log "fuzz build (cargo fuzz build -s none)"
(cd fuzz && nice -n 10 cargo fuzz build -s none) || { echo "0 passed, 1 failed"; exit 1; }
if [ -n "$SECS" ]; then
  CORPUS=fuzz/corpus
else
  CORPUS=target/fuzz-smoke/corpus
  rm -rf "$CORPUS"
fi
FUZZ_CORPUS="$PWD/$CORPUS" python3 fuzz/seed.py || { echo "0 passed, 1 failed"; exit 1; }

if [ $# -gt 0 ]; then TARGETS=("$@"); else mapfile -t TARGETS < <(cd fuzz && cargo fuzz list); fi
PASSED=0
FAILED=0
FORK=()
if [ "${FUZZ_FORK:-0}" = 1 ]; then FORK=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1); fi
# cpu_seconds_of PID: CPU seconds used by PID, its live children and its reaped children.
cpu_seconds_of() {
  local tck total=0 p f
  tck=$(getconf CLK_TCK)
  f=($(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null)) || { echo 0; return; }
  # after the comm field: state=0 … utime=11 stime=12 cutime=13 cstime=14 (0-based)
  total=$(( ${f[11]:-0} + ${f[12]:-0} + ${f[13]:-0} + ${f[14]:-0} ))
  for p in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
    f=($(sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null)) || continue
    total=$(( total + ${f[11]:-0} + ${f[12]:-0} ))
  done
  echo $(( total / tck ))
}
# stop_tree PID: ends a -fork run (libFuzzer's fork parent does not stop on SIGINT): its job
# processes first, then the parent.
stop_tree() {
  local c
  for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do stop_tree "$c"; done
  kill -TERM "$1" 2>/dev/null
}
findings() { find "fuzz/artifacts/$1" -maxdepth 1 -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' | wc -l; }
# dict_of TARGET: the libFuzzer dictionary of a target (fuzz/dict/), by input format.
dict_of() {
  case "$1" in
    trace_*|side_json|rank_*|kineto_*|cluster_*) echo "-dict=fuzz/dict/json.dict" ;;
    csv_*) echo "-dict=fuzz/dict/csv.dict" ;;
    pickle_*|snapshot_*) echo "-dict=fuzz/dict/pickle.dict" ;;
  esac
}
# runs_of TARGET: executions of the deterministic smoke run (seed corpus included), sized from
# the executions per second each target reaches on fresh seeds (fuzz/README.md).
runs_of() {
  local n
  case "$1" in
    rank_anomaly|ascend_db) n=300 ;;
    rank_memory|kineto_rank) n=1000 ;;
    inventory_paths) n=3000 ;;
    csv_operator_memory|trace_host_ops) n=4000 ;;
    snapshot_report) n=6000 ;;
    csv_kernel_details|trace_splitter) n=8000 ;;
    *) n=15000 ;;
  esac
  echo $((n * SCALE))
}
for t in "${TARGETS[@]}"; do
  mkdir -p "fuzz/artifacts/$t" "$CORPUS/$t"
  # Long runs log apart, so a smoke run of the same target (the test command) cannot overwrite
  # their counters.
  if [ -n "$SECS" ]; then out="fuzz/artifacts/$t/long.log"; else out="fuzz/artifacts/$t/smoke.log"; fi
  before=$(findings "$t")
  if [ -n "$SECS" ]; then LIMIT=(-max_total_time="$SECS"); else LIMIT=(-seed=1 -reload=0 -runs="$(runs_of "$t")"); fi
  start=$(date +%s)
  nice -n "${FUZZ_NICE:-19}" "$BIN/$t" "$CORPUS/$t" "${LIMIT[@]}" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="fuzz/artifacts/$t/" -print_final_stats=1 $(dict_of "$t") "${FORK[@]}" >"$out" 2>&1 &
  pid=$!
  if [ -n "$CPU_SECS" ]; then
    used=0
    while kill -0 "$pid" 2>/dev/null; do
      used=$(cpu_seconds_of "$pid")
      if [ "$used" -ge "$CPU_SECS" ]; then stop_tree "$pid"; break; fi
      sleep 10
    done
  fi
  wait "$pid"
  rc=$?
  if [ -n "$CPU_SECS" ]; then
    # SIGINT ends a -fork run with libFuzzer's exit code; the limit was ours, so it is a pass
    # unless there were findings.
    [ "$rc" -ne 0 ] && [ "$used" -ge "$CPU_SECS" ] && rc=0
    echo "fuzz $t: $used CPU-s" >>"$out"
  fi
  new=$(( $(findings "$t") - before ))
  stats="$(grep -E '^#[0-9]+' "$out" | tail -1 | sed -E 's/ +/ /g'), $(( $(date +%s) - start )) s"
  if [ "$rc" -eq 0 ] && [ "$new" -eq 0 ]; then
    PASSED=$((PASSED + 1)); echo "fuzz $t: ok ($stats)"
  else
    FAILED=$((FAILED + 1)); echo "fuzz $t: FAILED (exit $rc, $new new findings in fuzz/artifacts/$t, log $out)"
    grep -E "panicked at|^==[0-9]+== ERROR|^SUMMARY|Test unit written" -A2 "$out" | head -12
  fi
done
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
