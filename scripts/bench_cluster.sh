#!/usr/bin/env bash
# Cluster summary throughput (docs/perf/2026-12-01-cluster.md: Ray, --local, the paper plan).
#
#   bash scripts/bench_cluster.sh [RANKS] [TRACE_MB]      (defaults: 32 ranks of ~10 MB traces)
#
# On a generated run (../shared/bench/gen_ascend.py, 8 steps a rank, written once to /tmp and
# reused), through the package installed in target/pyenv (scripts/lib/toolchain.sh):
#   1. the single-process CLI: `proflens summarize ROOT` (all ranks, one process), then
#      `proflens reduce` of its JSON Lines alone (the reduce's cost);
#   2. `python -m proflens.cluster --local` with 1 and 2 workers (the scaling 1 → 2);
#   3. the same on a local Ray cluster of 1 and 2 CPUs, tasks of 4 ranks;
#   4. Ray's scheduling cost: tasks of 1 rank vs 16 ranks (2 CPUs); the difference of the map
#      times over the difference of the task counts is the cost of one task.
# Each row: wall s, CPU s (user+sys of the process and the children it waited for: for Ray, the
# raylet's workers are not among them, so Ray rows give wall time only), max RSS of the driver,
# ranks/s and MB/s (input bytes as `proflens targets` counts them) by wall time; then the
# summary bytes per rank (JSON Lines and the reduced file). Prefix: nice -n 10 (shared machine).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/toolchain.sh
ensure_python_env
install_python_package
PY="$PY_VENV/bin/python"
BIN="${PROFLENS_BIN:-$PY_VENV/bin/proflens}"  # the driver honours PROFLENS_BIN too
RANKS="${1:-32}"
MB="${2:-10}"
DATA="/tmp/proflens-bench-cluster-${RANKS}r-${MB}mb"
OUT="$(mktemp -d /tmp/proflens-bench-cluster-out.XXXXXX)"
trap 'rm -rf "$OUT"' EXIT

if [ ! -d "$DATA" ]; then
  log "generating $RANKS ranks of ~$MB MB into $DATA (once)"
  nice -n 10 python3 ../shared/bench/gen_ascend.py --out "$DATA" --ranks "$RANKS" --trace-mb "$MB" --steps 8 --quiet
fi
BYTES=$("$BIN" targets "$DATA" --json | "$PY" -c 'import json,sys; print(sum(t["bytes"] for t in json.load(sys.stdin)))')
log "$RANKS ranks, $BYTES bytes under $DATA; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

printf '%-44s %8s %8s %9s %8s %8s\n' "run" "wall_s" "cpu_s" "rss_MB" "ranks/s" "MB/s"
# row NAME CMD...: runs CMD under /usr/bin/time, prints one row (ranks and bytes: $ROW_RANKS and
# $ROW_BYTES when set, else the run's); its stdout and stderr go to $OUT/<key NAME>.out and .err.
key() { echo "$1" | tr -c 'A-Za-z0-9\n' '_'; }
row() {
  local name="$1"; shift
  local f="$OUT/$(key "$name")"
  /usr/bin/time -f '%e %U %S %M' -o "$OUT/time" nice -n 10 "$@" 2> "$f.err" > "$f.out" || {
    echo "$name failed:" >&2; tail -5 "$f.err" >&2; return 1; }
  read -r wall user sys rss < "$OUT/time"
  awk -v n="$name" -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" -v k="${ROW_RANKS:-$RANKS}" -v b="${ROW_BYTES:-$BYTES}" \
    'BEGIN { printf "%-44s %8.2f %8.2f %9.1f %8.2f %8.1f\n", n, w, u + s, r / 1024, k / w, b / 1e6 / w }'
}
# map_s NAME: the driver's "map X s" (targets + Ray start + every task, before the reduce).
map_s() { sed -n 's/.* map \([0-9.]*\) s,.*/\1/p' "$OUT/$(key "$1").err" | tail -1; }
# tasks_s NAME: a Ray run's map time after its Ray start ("Ray: ... in X s").
tasks_s() {
  local start
  start=$(sed -n 's/.*Ray: .* in \([0-9.]*\) s$/\1/p' "$OUT/$(key "$1").err")
  awk -v m="$(map_s "$1")" -v s="$start" 'BEGIN { printf "%.3f", m - s }'
}

row "cli: proflens summarize (1 process)" "$BIN" summarize "$DATA" --out "$OUT/parts.jsonl"
row "cli: proflens reduce (alone)" "$BIN" reduce "$OUT/parts.jsonl" --out "$OUT/cli-summary.json"
for w in 1 2; do
  row "local: --workers $w, 4 ranks/task" "$PY" -m proflens.cluster "$DATA" --out "$OUT/local$w.json" --local --workers "$w" --ranks-per-task 4
done
for w in 1 2; do
  row "ray: $w CPUs, 4 ranks/task (incl. Ray start)" "$PY" -m proflens.cluster "$DATA" --out "$OUT/ray$w.json" --workers "$w" --ranks-per-task 4
  t=$(tasks_s "ray: $w CPUs, 4 ranks/task (incl. Ray start)")
  grep -h "Ray: " "$OUT/$(key "ray: $w CPUs, 4 ranks/task (incl. Ray start)").err" | sed 's/^/   /'
  awk -v t="$t" -v k="$RANKS" -v b="$BYTES" 'BEGIN {
    printf "    the tasks after the Ray start: %.2f s: %.2f ranks/s, %.1f MB/s\n", t, k / t, b / 1e6 / t }'
  m=$(map_s "local: --workers $w, 4 ranks/task")
  awk -v m="$m" -v k="$RANKS" -v b="$BYTES" -v w="$w" 'BEGIN {
    printf "    (local --workers %d: map %.2f s: %.2f ranks/s, %.1f MB/s)\n", w, m, k / m, b / 1e6 / m }'
done
for n in 1 16; do
  row "ray: 2 CPUs, $n ranks/task" "$PY" -m proflens.cluster "$DATA" --out "$OUT/ray-t$n.json" --workers 2 --ranks-per-task "$n"
done
m1=$(tasks_s "ray: 2 CPUs, 1 ranks/task"); m16=$(tasks_s "ray: 2 CPUs, 16 ranks/task")
t16=$(( (RANKS + 15) / 16 ))
awk -v a="$m1" -v b="$m16" -v k="$RANKS" -v t="$t16" 'BEGIN {
  printf "ray scheduling: tasks %.2f s as %d tasks of 1 rank vs %.2f s as %d tasks of 16 (after the Ray start): %.1f ms per extra task (wall, 2 CPUs)\n",
    a, k, b, t, (a - b) * 1000 / (k - t) }'
lines=$(wc -c < "$OUT/parts.jsonl"); summary=$(wc -c < "$OUT/cli-summary.json")
"$BIN" reduce "$OUT/parts.jsonl" --out "$OUT/cli-summary.json.gz" --gzip 2>/dev/null
gz=$(wc -c < "$OUT/cli-summary.json.gz")
awk -v l="$lines" -v s="$summary" -v g="$gz" -v k="$RANKS" 'BEGIN {
  printf "summary bytes per rank: %.0f (JSON Lines from summarize), %.0f (reduced file), %.0f (reduced, --gzip)\n", l / k, s / k, g / k }'

# The reduce at 10,000 ranks: the measured lines replicated with new targets and rank ids
# (the reduce's cost depends on the ranks and steps it holds, not on where they came from).
"$PY" - "$OUT/parts.jsonl" 10000 > "$OUT/parts10k.jsonl" <<'PY'
import json, sys
src = [json.loads(l) for l in open(sys.argv[1], "rb") if l.strip()]
for i in range(int(sys.argv[2])):
    r = dict(src[i % len(src)])
    r["target"] = f"{r['target']}#copy{i}"
    r["rank_dir"] = f"{r['rank_dir']}#copy{i}"
    r["rank_id"] = i
    sys.stdout.write(json.dumps(r, separators=(",", ":")) + "\n")
PY
ROW_RANKS=10000 ROW_BYTES=$(wc -c < "$OUT/parts10k.jsonl") \
  row "cli: proflens reduce, 10,000 ranks (MB/s of lines)" "$BIN" reduce "$OUT/parts10k.jsonl" --out "$OUT/summary10k.json"
awk -v l="$(wc -c < "$OUT/parts10k.jsonl")" -v s="$(wc -c < "$OUT/summary10k.json")" 'BEGIN {
  printf "10,000 ranks: %.1f MB of JSON Lines in, %.1f MB summary out\n", l / 1e6, s / 1e6 }'
