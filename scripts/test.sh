#!/usr/bin/env bash
# The test command (README): installs what the tests need (idempotent, fast when present),
# then runs every test layer and prints a final "N passed, N failed" line.
# `.ci/run` calls this script.
#
# Layers: cargo test (unit, golden, tidy) → fuzz smoke (deterministic, every target) → Python
# package (pip install . with maturin into target/pyenv, then tests/python: the cluster driver on a
# local Ray cluster and on --local) → wasm32 check of the core → wasm-bindgen-test
# (File → worker streaming path, in Chromium) → release build (scripts/build-release.sh:
# trunk build --release + scripts/postbuild.py) → Playwright end-to-end tests on dist/ in
# Debian's Chromium.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/toolchain.sh
set -e
ensure_native_tools
ensure_web_toolchain
ensure_browser_test_tools
ensure_python_env
set +e

PASSED=0
FAILED=0
FAILED_LAYERS=()
FAILED_LOGS=()
LOG_DIR=target/test-logs
mkdir -p "$LOG_DIR"

# count_cargo LOG: adds the "test result:" counts of a cargo test log.
count_cargo() {
  local p f
  p=$(awk '/^test result:/ { for (i = 1; i <= NF; i++) if ($i ~ /^passed;?$/) s += $(i-1) } END { print s + 0 }' "$1")
  f=$(awk '/^test result:/ { for (i = 1; i <= NF; i++) if ($i ~ /^failed;?$/) s += $(i-1) } END { print s + 0 }' "$1")
  PASSED=$((PASSED + p)); FAILED=$((FAILED + f))
}

# free_disk: the free space of the file system that holds target/, for the log (a full disk makes
# rustc fail with exit 101 in whatever layer builds next; CI shows only the tail of this output).
free_disk() { df -h --output=avail . 2>/dev/null | tail -1 | tr -d ' '; }

# layer NAME CMD...: runs one layer, logs it, records a failure of the layer itself.
layer() {
  local name="$1"; shift
  log "$name (disk free: $(free_disk))"
  local logf="$LOG_DIR/$(echo "$name" | tr ' /' '__').log"
  "$@" 2>&1 | tee "$logf"
  local rc=${PIPESTATUS[0]}
  if [ "$rc" -ne 0 ]; then FAILED_LAYERS+=("$name (exit $rc, log $logf)"); FAILED_LOGS+=("$logf"); fi
  LAST_LOG="$logf"
  return "$rc"
}

layer "cargo test" cargo test --locked --all-targets
count_cargo "$LAST_LOG"

# Deterministic fuzz smoke run of every target (fixed seed and executions on a fresh seed
# corpus: the same commit explores the same inputs everywhere; scripts/fuzz-smoke.sh).
layer "fuzz smoke (every target, deterministic)" bash scripts/fuzz-smoke.sh
count_summary() {
  local line
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$1" | tail -1)
  if [ -z "$line" ]; then FAILED=$((FAILED + 1)); return; fi
  PASSED=$((PASSED + $(echo "$line" | awk '{print $1}')))
  FAILED=$((FAILED + $(echo "$line" | awk '{print $3}')))
}
count_summary "$LAST_LOG"

# The Python package (pyproject.toml: maturin "bin" bindings) built from this tree into the venv,
# then its tests (tests/python/run.py prints "N passed, N failed"; Ray started and stopped there).
if layer "python package install (pip install ., maturin)" install_python_package; then
  PASSED=$((PASSED + 1))
  layer "python tests (cluster summary: Ray and --local)" "$PY_VENV/bin/python" tests/python/run.py
  count_summary "$LAST_LOG"
else
  FAILED=$((FAILED + 1))
fi

if layer "wasm32 check of the core" cargo check --locked --target wasm32-unknown-unknown --lib; then
  PASSED=$((PASSED + 1)); else FAILED=$((FAILED + 1)); fi

# wasm-bindgen-test in a dedicated worker of headless Chromium (webdriver.json: flags).
export CHROMEDRIVER="${CHROMEDRIVER:-$(command -v chromedriver || echo /usr/bin/chromedriver)}"
layer "browser wasm tests (wasm-bindgen-test)" env \
  CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner WASM_BINDGEN_TEST_TIMEOUT=300 \
  cargo test --locked --target wasm32-unknown-unknown --test wasm_worker
count_cargo "$LAST_LOG"
if ! grep -q '^test result:' "$LAST_LOG"; then FAILED=$((FAILED + 1)); fi

# The Ascend DB reader in the browser: SQLite built for wasm32 (feature `db`).
ensure_wasm_c_toolchain
layer "browser wasm tests of the DB reader (wasm-bindgen-test, feature db)" env \
  CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner WASM_BINDGEN_TEST_TIMEOUT=300 \
  cargo test --locked --target wasm32-unknown-unknown --features db --test wasm_db
count_cargo "$LAST_LOG"
if ! grep -q '^test result:' "$LAST_LOG"; then FAILED=$((FAILED + 1)); fi

if layer "release build (trunk --release + postbuild: service worker, CSP, proflens.html)" bash scripts/build-release.sh; then
  PASSED=$((PASSED + 1))
  layer "browser e2e (Playwright, Chromium)" node --test --test-reporter=tap tests/e2e/
  p=$(grep -E '^# pass ' "$LAST_LOG" | awk '{print $3}'); f=$(grep -E '^# fail ' "$LAST_LOG" | awk '{print $3}')
  PASSED=$((PASSED + ${p:-0})); FAILED=$((FAILED + ${f:-0}))
  if [ -z "$p" ]; then FAILED=$((FAILED + 1)); fi
else
  FAILED=$((FAILED + 1))
fi

echo
# What made each failed layer fail, here at the end where a CI excerpt shows it: its error lines.
for f in "${FAILED_LOGS[@]}"; do
  echo "---- errors in $f"
  grep -E -m 12 '^error|error:|No space left|panicked|FAILED|not ok|Killed|out of memory' "$f" | cut -c1-300
done
echo "disk free at the end: $(free_disk)"
for l in "${FAILED_LAYERS[@]}"; do echo "FAILED layer: $l"; done
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ] && [ ${#FAILED_LAYERS[@]} -eq 0 ]
