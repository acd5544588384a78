#!/usr/bin/env bash
# Builds the release page into dist/ (relative asset URLs: works under any sub-path and from any
# static server), adds the offline service worker and the Content Security Policy, and writes the
# single-file build dist/proflens.html (works when double-clicked, file://, no server).
# Installs what it needs first (idempotent). Used by the Pages workflow and by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/toolchain.sh

ensure_web_toolchain
trunk_build --release
python3 scripts/postbuild.py dist --single dist/proflens.html
ls -l dist/*.wasm dist/proflens.html | awk '{printf "%10d  %s\n", $5, $9}'
