#!/usr/bin/env bash
# The one-command start (README): installs whatever is missing (wasm target, trunk,
# wasm-bindgen-cli, wasm-opt from npm binaryen), builds the page and serves it on localhost.
# Usage: scripts/dev.sh [--port N] [--release]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/toolchain.sh

PORT=8080
MODE=()
while [ $# -gt 0 ]; do
  case "$1" in
    --port) PORT="$2"; shift 2 ;;
    --release) MODE=(--release); shift ;;
    *) echo "usage: scripts/dev.sh [--port N] [--release]" >&2; exit 2 ;;
  esac
done

ensure_web_toolchain
log "building and serving; open http://127.0.0.1:$PORT/ (Ctrl+C stops)"
echo "proflens: http://127.0.0.1:$PORT/"
exec trunk serve "${MODE[@]}" --address 127.0.0.1 --port "$PORT"
