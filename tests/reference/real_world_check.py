#!/usr/bin/env python3
"""Independent readings of the real-world sets (`../shared/fixtures/real_world/`) whose numbers
`tests/real_world.rs` asserts: Python's json / csv / decimal only, exact decimal µs, no proflens.
Run by hand; the numbers it prints are copied into the tests with a comment.

Usage:
  real_world_check.py run148 RANK_DIR          overrun tails and device-side windows (anomaly.md §3.2.1)
"""
import csv
import glob
import json
import statistics
import sys
from decimal import Decimal as D


def run148(rank_dir):
    out = glob.glob(rank_dir.rstrip("/") + "/ASCEND_PROFILER_OUTPUT/")[0]
    ev = json.loads(open(out + "trace_view.json").read(), parse_float=D)
    ev = ev["traceEvents"] if isinstance(ev, dict) else ev
    marks = sorted((D(str(e["ts"])), e["name"]) for e in ev
                   if str(e.get("name", "")).startswith("ProfilerStep#"))
    rows = list(csv.DictReader(open(out + "kernel_details.csv", encoding="utf-8-sig")))
    ks = sorted((D(r["Start Time(us)"].strip()), D(r["Duration(us)"].strip()), int(r["Step Id"]))
                for r in rows)
    H = [m[0] for m in marks]
    n = len(H)
    num = {int(m[1].split("#")[1]): j for j, m in enumerate(marks)}
    print("markers", [str(h) for h in H])

    def window_of(t):
        return sum(1 for h in H if h <= t) - 1

    # Kernel time per host window: kernels starting in it, plus overrun tails of kernels
    # launched (Step Id) in an earlier step, clipped to the window.
    tot, lag, tail = [D(0)] * n, [D(0)] * n, [D(0)] * n
    for s, d, tag in ks:
        j, l, e = window_of(s), num[tag], s + d
        tot[j] += d
        if l < j:
            lag[j] += d
        for w in range(j + 1, n):
            if H[w] >= e:
                break
            hi = min(e, H[w + 1]) if w + 1 < n else e
            if l < w:
                tot[w] += hi - H[w]
                lag[w] += hi - H[w]
                tail[w] += hi - H[w]
    print("tails_us", [str(t) for t in tail])
    print("shares", [float(lag[j] / tot[j]) if tot[j] else 0.0 for j in range(n)])
    # Device-side windows: S_i = max(H_i, E_{i-1}), E_i = last end of the kernels of step i.
    ext = {}
    for s, d, tag in ks:
        a, b = ext.get(num[tag], (s, s + d))
        ext[num[tag]] = (min(a, s), max(b, s + d))
    S, E, prev = [], [], None
    for j in range(n):
        s = H[j] if prev is None else max(H[j], prev)
        S.append(s)
        E.append(max(ext[j][1], s))
        prev = E[-1]
    print("S", [str(x) for x in S])
    print("E", [str(x) for x in E])
    first = [min(s for s, _, _ in ks if S[j] <= s < (S[j + 1] if j + 1 < n else D("1e30")))
             for j in range(n)]
    pre = [first[j] - S[j] for j in range(n)]
    print("prelaunch_us", [str(x) for x in pre])
    print("overrun_us", [str(S[j] - H[j]) for j in range(n)])
    lags = [ext[j][0] - H[j] for j in range(n)]
    print("lag_us", [str(x) for x in lags], "median", str(statistics.median(lags)))
    for r in csv.DictReader(open(out + "step_trace_time.csv", encoding="utf-8-sig")):
        j = num[int(r["Step"])]
        ours = pre[j] + (S[j] - H[j])
        print("step", r["Step"], "Preparing", r["Preparing"], "ours", ours,
              "diff", abs(D(r["Preparing"]) - ours))


if __name__ == "__main__":
    {"run148": run148}[sys.argv[1]](*sys.argv[2:])
