#!/usr/bin/env bash
# Side-by-side GPU trace benchmark: proflens native vs HTA 0.5.0 on the same
# generated Kineto trace, CPU time (user+sys) and peak RSS from /usr/bin/time -v.
#   scripts/bench_kineto.sh [KERNELS=100000] [OUT_DIR=/tmp/proflens-kineto]
# HTA needs a venv outside the project, named by HTA_PY (without it only proflens runs):
#   python3 -m venv VENV && VENV/bin/pip install HolisticTraceAnalysis==0.5.0
#   HTA_PY=VENV/bin/python scripts/bench_kineto.sh 100000
# Both sides print the same JSON (gpu_time_breakdown, idle_by_stream); the script checks that
# they agree. Outputs are never committed; delete OUT_DIR when done.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-100000}
OUT=${2:-/tmp/proflens-kineto}
HTA_PY=${HTA_PY:-}
mkdir -p "$OUT"
cargo build --release --example kineto_gen --example kineto_bench
T="$OUT/bench_${N}.pt.trace.json"
[ -f "$T.gz" ] || nice -n 10 target/release/examples/kineto_gen "$T" --kernels "$N" --steps 100 --gzip
ls -l "$T" "$T.gz"
measure() { # label, command...
  local label=$1; shift
  nice -n 10 /usr/bin/time -v "$@" > "$OUT/$label.json" 2> "$OUT/$label.time"
  local u s r
  u=$(awk -F': ' '/User time/{print $2}' "$OUT/$label.time")
  s=$(awk -F': ' '/System time/{print $2}' "$OUT/$label.time")
  r=$(awk -F': ' '/Maximum resident/{print $2}' "$OUT/$label.time")
  printf '%-22s cpu %8.2f s (user %s + sys %s)  peak RSS %8.1f MB\n' "$label" "$(echo "$u + $s" | bc)" "$u" "$s" "$(echo "$r / 1024" | bc -l)"
}
measure proflens_plain target/release/examples/kineto_bench "$T"
measure proflens_gzip target/release/examples/kineto_bench "$T.gz"
if [ -z "$HTA_PY" ]; then
  echo "HTA side skipped: set HTA_PY to the python of a venv with HolisticTraceAnalysis==0.5.0"
elif [ -x "$HTA_PY" ] && [ "${SKIP_HTA:-0}" != 1 ]; then
  measure hta_gzip "$HTA_PY" scripts/hta_reference.py "$T.gz"
  if cmp -s "$OUT/proflens_gzip.json" "$OUT/hta_gzip.json"; then echo "same numbers: yes"; else echo "same numbers: NO"; diff "$OUT/proflens_gzip.json" "$OUT/hta_gzip.json" || true; fi
fi
