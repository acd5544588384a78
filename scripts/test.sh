#!/usr/bin/env bash
# The test command (README): installs what the tests need (idempotent), then
# runs every test layer. `.ci/run` calls this script.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/toolchain.sh

ensure_native_tools
echo "== native tests (cargo test)"
cargo test --locked --all-targets 2>&1
