# Shared install helpers for scripts/dev.sh and scripts/test.sh.
# Every function is idempotent: it checks first and installs only what is missing.

ensure_native_tools() {
  command -v cargo >/dev/null || { echo "cargo not found: install Rust (rustup) first" >&2; exit 2; }
}
