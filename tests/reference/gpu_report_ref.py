#!/usr/bin/env python3
"""Independent reading of the numbers `tests/gpu_report_md.rs` asserts for the GPU section of
the anomaly report and the `kernels_*.csv` table (reporting side), with Python's
gzip/json and exact decimals (no proflens code, no f64 on times):

  python3 tests/reference/gpu_report_ref.py kernels TRACE [N]   # kernel table, first N rows
  python3 tests/reference/gpu_report_ref.py categories TRACE... # categories per trace
  python3 tests/reference/gpu_report_ref.py stragglers TRACE... # straggler rows (rank order)
  python3 tests/reference/gpu_report_ref.py robustz X...        # anomaly.md §13.4 robust z

Device ops are `ph: X` events of `cat` kernel / gpu_memcpy / gpu_memset; communication =
`re.match("nccl.*Kernel", name)`, memory = memcpy/memset events or names starting
Memcpy/Memset, compute = the rest; the span is the last device-op end - the first start.
Collectives are matched by order and name at epoch `baseTimeNanoseconds + ts`.
"""
import gzip
import json
import re
import sys
from decimal import Decimal


def load(p):
    op = gzip.open if p.endswith(".gz") else open
    with op(p, "rt") as f:
        return json.load(f, parse_float=Decimal)


def devops(d):
    return [e for e in d["traceEvents"]
            if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]


def ns(e, key):
    return Decimal(e.get(key, 0)) * 1000


def category(e):
    if e["cat"] in ("gpu_memcpy", "gpu_memset"):
        return "memory"
    if re.match(r"nccl.*Kernel", e["name"]):
        return "communication"
    if e["name"].startswith(("Memcpy", "Memset")):
        return "memory"
    return "compute"


def union(iv):
    iv.sort()
    tot, cs, ce = 0, None, None
    for s, e in iv:
        if cs is None or s > ce:
            if cs is not None:
                tot += ce - cs
            cs, ce = s, e
        else:
            ce = max(ce, e)
    return tot + (ce - cs if cs is not None else 0)


def kernels(path, n=5):
    ops = devops(load(path))
    rows, first, last = {}, None, None
    for e in ops:
        s, d = ns(e, "ts"), ns(e, "dur")
        first = s if first is None else min(first, s)
        last = s + d if last is None else max(last, s + d)
        r = rows.setdefault(e["name"], [0, Decimal(0), Decimal(0), set()])
        r[0] += 1
        r[1] += d
        r[2] = max(r[2], d)
        r[3].add(e["args"].get("stream"))
    span = last - first
    print("names", len(rows), "device ops", len(ops), "span_ns", span)
    for name, r in sorted(rows.items(), key=lambda kv: (-kv[1][1], kv[0]))[:n]:
        mean = (r[1] / r[0]).quantize(Decimal(1), rounding="ROUND_HALF_UP")
        print(repr(name[:60]), "count", r[0], "total_us", r[1] / 1000, "mean_us", mean / 1000,
              "max_us", r[2] / 1000, "streams", sorted(r[3]), "share_of_span",
              repr(float(r[1]) / float(span)))


def categories(paths):
    for p in paths:
        per = {}
        for e in devops(load(p)):
            s, d = ns(e, "ts"), ns(e, "dur")
            x = per.setdefault(category(e), [0, Decimal(0), []])
            x[0] += 1
            x[1] += d
            x[2].append((s, s + d))
        tot = sum(x[1] for x in per.values())
        for c in ("compute", "communication", "memory"):
            x = per.get(c, [0, Decimal(0), []])
            print(p.split("/")[-1], c, "count", x[0], "time_us", x[1] / 1000, "busy_us",
                  union(x[2]) / 1000, "share %.4f %%" % (float(x[1]) / float(tot) * 100))


def stragglers(paths):
    cols = []
    for p in paths:
        d = load(p)
        base = int(d.get("baseTimeNanoseconds", 0))
        cols.append(sorted((base + int(ns(e, "ts")), e["name"]) for e in devops(d)
                           if e["cat"] == "kernel" and re.match(r"nccl.*Kernel", e["name"])))
    m = 0
    while m < min(map(len, cols)) and all(c[m][1] == cols[0][m][1] for c in cols):
        m += 1
    last, dsum, dmax = [0] * len(cols), [0] * len(cols), [0] * len(cols)
    for k in range(m):
        st = [c[k][0] for c in cols]
        f = min(st)
        last[st.index(max(st))] += 1
        for i, s in enumerate(st):
            dsum[i] += s - f
            dmax[i] = max(dmax[i], s - f)
    print("matched", m, "communication kernels per rank", [len(c) for c in cols])
    for i in range(len(cols)):
        print(i, "started_last", last[i], "mean_delay_ns", dsum[i] // m if m else 0,
              "max_delay_ns", dmax[i])


def robustz(xs):
    """(x - median) / (1.4826 * MAD), percentiles of type 7 (linear interpolation)."""
    def pct(v, q):
        v = sorted(v)
        h = (len(v) - 1) * q
        lo = int(h)
        hi = min(lo + 1, len(v) - 1)
        return v[lo] + (h - lo) * (v[hi] - v[lo])
    m = pct(xs, 0.5)
    mad = pct([abs(x - m) for x in xs], 0.5)
    print("median", m, "MAD", mad)
    for x in xs:
        z = (x - m) / (1.4826 * mad) if mad > 0 else (float("inf") if x > m else 0.0)
        print(x, "z %.4f" % z, "slow", x > m * 1.05 and z > 3)


if __name__ == "__main__":
    what, args = sys.argv[1], sys.argv[2:]
    if what == "kernels":
        kernels(args[0], int(args[1]) if len(args) > 1 else 5)
    elif what == "categories":
        categories(args)
    elif what == "stragglers":
        stragglers(args)
    else:
        robustz([float(x) for x in args])
