# Shared install helpers for scripts/dev.sh and scripts/test.sh.
# Every function is idempotent: it checks first and installs only what is missing,
# so a second run costs a few hundred milliseconds.
#
# Pinned versions (must match Cargo.toml's `wasm-bindgen = "=…"` and Trunk.toml [tools]).
TRUNK_VERSION="0.21.14"
WASM_BINDGEN_VERSION="0.2.108"
CARGO_FUZZ_VERSION="0.13.2"

log() { echo "== $*" >&2; }

# Runs a command as root (directly, or through sudo when available).
as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    echo "need root to run: $*" >&2; return 1; fi
}

ensure_native_tools() {
  if ! command -v cargo >/dev/null && [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
  fi
  command -v cargo >/dev/null || { echo "cargo not found: install Rust (https://rustup.rs) first" >&2; exit 2; }
  case ":$PATH:" in *":$HOME/.cargo/bin:"*) ;; *) export PATH="$HOME/.cargo/bin:$PATH" ;; esac
}

# ensure_apt PKG... : installs the Debian packages that are not installed yet.
_APT_UPDATED=""
ensure_apt() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  command -v apt-get >/dev/null || { echo "missing OS packages (${missing[*]}) and no apt-get: install them by hand" >&2; return 1; }
  log "installing OS packages: ${missing[*]}"
  if [ -z "$_APT_UPDATED" ]; then as_root apt-get update -qq; _APT_UPDATED=1; fi
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${missing[@]}" >/dev/null
}

# SQLite for wasm32 (the DB worker, feature `db`): clang with the WebAssembly backend and
# llvm-ar (Debian's clang 14 is enough with CFLAGS_wasm32_unknown_unknown=-std=gnu2x, set in
# .cargo/config.toml).
ensure_wasm_c_toolchain() {
  ensure_apt clang llvm
}

ensure_wasm_target() {
  ensure_native_tools
  if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
    log "adding rust target wasm32-unknown-unknown"
    rustup target add wasm32-unknown-unknown
  fi
}

# ensure_cargo_bin BIN CRATE VERSION : `cargo install CRATE@VERSION` unless BIN --version reports it.
ensure_cargo_bin() {
  local bin="$1" crate="$2" version="$3"
  if command -v "$bin" >/dev/null && "$bin" --version 2>/dev/null | grep -q " $version"; then return 0; fi
  log "installing $crate $version (cargo install, takes minutes once)"
  # trunk builds with --locked; wasm-bindgen-cli's own lock file does not build on this
  # toolchain, so it resolves its dependencies afresh (checked on these machines).
  if [ "$crate" = trunk ] || [ "$crate" = cargo-fuzz ]; then
    cargo install "$crate" --version "$version" --locked
  else
    cargo install "$crate" --version "$version"
  fi
}

# Everything `trunk build` needs, offline afterwards: wasm target, trunk, wasm-bindgen-cli, wasm-opt.
ensure_web_toolchain() {
  ensure_wasm_target
  ensure_apt pkg-config
  ensure_cargo_bin wasm-bindgen wasm-bindgen-cli "$WASM_BINDGEN_VERSION"
  ensure_cargo_bin trunk trunk "$TRUNK_VERSION"
  ensure_wasm_opt
  fetch_crates
}

# Fuzzing (scripts/fuzz-smoke.sh): cargo-fuzz drives libFuzzer, which needs nightly
# compiler flags; RUSTC_BOOTSTRAP=1 (set by the caller) allows them on this stable toolchain.
ensure_fuzz_tools() {
  ensure_native_tools
  ensure_apt python3 g++   # g++ builds libFuzzer's C++ sources (libfuzzer-sys)
  ensure_cargo_bin cargo-fuzz cargo-fuzz "$CARGO_FUZZ_VERSION"
}

# wasm-opt for trunk's release build: the npm `binaryen` package pinned in
# scripts/wasm-opt/package-lock.json (JS + wasm, runs on node; Debian's binaryen 108 breaks
# wasm-bindgen's externref table). Installed with `npm ci` when the lock file changed, then put
# first on PATH, where trunk finds it (Trunk.toml [tools] wasm_opt must name its version).
ensure_wasm_opt() {
  local dir
  dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/../wasm-opt" && pwd)"
  command -v npm >/dev/null || ensure_apt nodejs npm
  local stamp="$dir/node_modules/.lock-stamp"
  if [ ! -f "$stamp" ] || ! cmp -s "$dir/package-lock.json" "$stamp"; then
    log "installing wasm-opt (npm ci: binaryen $(sed -n 's/.*"binaryen": "\(.*\)".*/\1/p' "$dir/package.json"))"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
    cp "$dir/package-lock.json" "$stamp"
  fi
  case ":$PATH:" in *":$dir/node_modules/.bin:"*) ;; *) export PATH="$dir/node_modules/.bin:$PATH" ;; esac
}

# Browser test needs: Debian's Chromium (driven by playwright-core), node + npm, the e2e npm deps.
ensure_browser_test_tools() {
  ensure_apt chromium chromium-driver python3
  command -v npm >/dev/null || ensure_apt nodejs npm
  local dir=tests/e2e
  local stamp="$dir/node_modules/.lock-stamp"
  if [ ! -f "$stamp" ] || ! cmp -s "$dir/package-lock.json" "$stamp"; then
    log "installing e2e npm deps (npm ci)"
    (cd "$dir" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
    cp "$dir/package-lock.json" "$stamp"
  fi
}

# Downloads every crate of Cargo.lock for all targets (trunk runs cargo with --offline).
fetch_crates() {
  cargo fetch --locked >/dev/null 2>&1 || cargo fetch --locked
}

# trunk_build [--release] : builds dist/ offline (Trunk.toml pins every tool).
trunk_build() {
  log "trunk build $*"
  trunk build "$@"
}

# The Python test environment: a venv under target/ (created once) holding the build backend
# pinned in pyproject.toml ([build-system] requires) and the `ray` extra's pin; pip runs only
# when one of them is missing or at another version. python3-venv comes from Debian when the
# interpreter has no venv module.
PY_VENV=target/pyenv
# pyarrow / pandas / polars of the DataFrame tests (tests/python/test_frames.py).
PY_FRAMES="pyarrow==26.0.1 pandas==3.1.1 polars==2.1.0"
ensure_python_env() {
  command -v python3 >/dev/null || ensure_apt python3
  if [ ! -x "$PY_VENV/bin/python" ]; then
    log "creating the Python venv $PY_VENV"
    python3 -m venv "$PY_VENV" 2>/dev/null || { ensure_apt python3-venv; rm -rf "$PY_VENV"; python3 -m venv "$PY_VENV"; }
  fi
  local maturin ray
  maturin=$(sed -n 's/^requires = \["maturin==\([^"]*\)"\]/\1/p' pyproject.toml)
  ray=$(sed -n 's/^ray = \["ray==\([^"]*\)"\]/\1/p' pyproject.toml)
  if ! "$PY_VENV/bin/python" - "$maturin" "$ray" <<'PY' 2>/dev/null; then
import fnmatch, sys
from importlib.metadata import version
sys.exit(0 if version("maturin") == sys.argv[1] and fnmatch.fnmatch(version("ray"), sys.argv[2]) else 1)
PY
    log "installing maturin==$maturin and ray==$ray into $PY_VENV (pip, once)"
    "$PY_VENV/bin/pip" install -q "maturin==$maturin" "ray==$ray"
  fi
  # The DataFrame extras' libraries at the versions the tests were written against.
  if ! "$PY_VENV/bin/python" - "$PY_FRAMES" <<'PY' 2>/dev/null; then
import sys
from importlib.metadata import version
want = dict(p.split("==") for p in sys.argv[1].split())
sys.exit(0 if all(version(k) == v for k, v in want.items()) else 1)
PY
    log "installing $PY_FRAMES into $PY_VENV (pip, once)"
    # shellcheck disable=SC2086
    "$PY_VENV/bin/pip" install -q $PY_FRAMES
  fi
}

# install_python_package: `pip install .` of the current tree into $PY_VENV with the venv's
# maturin (no build isolation: offline once ensure_python_env ran) and the project's cargo
# cache (CARGO_TARGET_DIR=target: a warm run only relinks nothing and repacks, ~3 s).
install_python_package() {
  PATH="$PWD/$PY_VENV/bin:$PATH" CARGO_TARGET_DIR="$PWD/target" \
    "$PY_VENV/bin/pip" install -q --no-build-isolation --no-deps .
}
