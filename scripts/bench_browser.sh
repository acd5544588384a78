#!/usr/bin/env bash
# Browser vs native, side by side in one run (drop → results MB/s of each input kind):
# generates the three inputs once (kept in OUT_DIR; delete it when done), then for each runs
# tests/e2e/bench.mjs with the native CLI beside it: per run one JSON line for
# `proflens analyze` (wall, CPU, peak RSS), one for Chromium (drop → every result, MB/s, wasm
# memory, the browser's CPU from /proc) and their ratio.
#   scripts/bench_browser.sh [RUNS=2] [OUT_DIR=/tmp/proflens-bench]
# Inputs: an Ascend rank (../shared/bench/gen_ascend.py, trace_view.json 148 MB + kernel and
# memory CSVs), a snapshot pickle of ~100 MB (examples/snapshot_gen, 1.33M events) and a Kineto
# trace of ~200 MB (examples/kineto_gen, 300k kernels, the generator of scripts/bench_kineto.sh).
# Needs the release page (bash scripts/build-release.sh). PROFILE=1 also writes a CDP profile
# of the first worker per input (OUT_DIR/<input>.cpuprofile) and prints its top functions.
# ONLY="kineto" (any of ascend, snapshot, kineto; default all three) generates and runs only
# those inputs; KINETO_KERNELS sets the Kineto trace's size (default 300000).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-2}
OUT=${2:-/tmp/proflens-bench}
ONLY=${ONLY:-ascend snapshot kineto}
want() { case " $ONLY " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
mkdir -p "$OUT"
cargo build --release --bin proflens --example snapshot_gen --example kineto_gen
inputs=()
ASCEND="$OUT/ascend"
if want ascend; then
  [ -d "$ASCEND" ] || nice -n 10 python3 ../shared/bench/gen_ascend.py --out "$ASCEND" --trace-mb 150 --ranks 1 >&2
  inputs+=("$ASCEND")
fi
SNAP="$OUT/snapshot.pickle"
if want snapshot; then
  [ -f "$SNAP" ] || nice -n 10 target/release/examples/snapshot_gen "$SNAP" "${SNAP_EVENTS:-1330000}" >&2
  inputs+=("$SNAP")
fi
KINETO="$OUT/kineto"
if want kineto; then
  [ -d "$KINETO" ] || { mkdir -p "$KINETO" && nice -n 10 target/release/examples/kineto_gen \
    "$KINETO/rank0.pt.trace.json" --kernels "${KINETO_KERNELS:-300000}" --steps 100 >&2; }
  inputs+=("$KINETO")
fi
[ ${#inputs[@]} -gt 0 ] || { echo "ONLY=\"$ONLY\" names no input (ascend, snapshot, kineto)" >&2; exit 2; }
echo "load average: $(cat /proc/loadavg)" >&2
for input in "${inputs[@]}"; do
  extra=()
  [ "${PROFILE:-0}" = 1 ] && extra=(--profile "$OUT/$(basename "$input").cpuprofile")
  nice -n 10 node tests/e2e/bench.mjs "$input" --runs "$RUNS" --native target/release/proflens "${extra[@]}"
done
