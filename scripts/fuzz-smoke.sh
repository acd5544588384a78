#!/usr/bin/env bash
# Smoke run of every fuzz target (issue 11; ARCHITECTURE.md "Fuzzing"): installs cargo-fuzz
# (pinned, idempotent), builds fuzz/ (libFuzzer; optimised with debug assertions and overflow
# checks, no sanitizer: the crate has no unsafe code), seeds the corpora from the fixtures
# (fuzz/seed.py, into the .gitignored fuzz/corpus), then runs each target for
# FUZZ_SECONDS (default 30) at low priority. Any crash, panic, hang (> 10 s on one input) or
# blow-up (> 2 GiB RSS) fails the target; the input is kept under fuzz/artifacts/<target>/.
# Ends with an "N passed, N failed" line (one per target). Args: target names (default all).
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/toolchain.sh
set -e
ensure_fuzz_tools
set +e
export RUSTC_BOOTSTRAP=1
SECS="${FUZZ_SECONDS:-30}"
TRIPLE="$(rustc -vV | sed -n 's/^host: //p')"
BIN="fuzz/target/$TRIPLE/release"

log "fuzz build (cargo fuzz build -s none)"
(cd fuzz && nice -n 10 cargo fuzz build -s none) || { echo "0 passed, 1 failed"; exit 1; }
python3 fuzz/seed.py || { echo "0 passed, 1 failed"; exit 1; }

if [ $# -gt 0 ]; then TARGETS=("$@"); else mapfile -t TARGETS < <(cd fuzz && cargo fuzz list); fi
PASSED=0
FAILED=0
for t in "${TARGETS[@]}"; do
  mkdir -p "fuzz/artifacts/$t" "fuzz/corpus/$t"
  out="fuzz/artifacts/$t/smoke.log"
  nice -n 19 "$BIN/$t" "fuzz/corpus/$t" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="fuzz/artifacts/$t/" -print_final_stats=1 >"$out" 2>&1
  rc=$?
  stats=$(grep -E '^#[0-9]+' "$out" | tail -1 | sed -E 's/ +/ /g')
  if [ "$rc" -eq 0 ]; then
    PASSED=$((PASSED + 1)); echo "fuzz $t: ok ($stats)"
  else
    FAILED=$((FAILED + 1)); echo "fuzz $t: FAILED (exit $rc, log $out)"
    grep -E "panicked at|^==[0-9]+== ERROR|^SUMMARY|Test unit written" -A2 "$out" | head -12
  fi
done
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
