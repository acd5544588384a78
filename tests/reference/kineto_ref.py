#!/usr/bin/env python3
"""Independent check of the Kineto reader: counts, step bounds and the device busy
union of one trace, with Python's json/gzip and exact decimal arithmetic (no f64 on epoch µs).

Usage: kineto_ref.py TRACE.json[.gz] -> one JSON object on stdout.
"""
import gzip, json, sys
from decimal import Decimal

DEVICE = {"kernel": 0, "Kernel": 0, "gpu_memcpy": 1, "Memcpy": 1, "gpu_memset": 2, "Memset": 2}
FLOW = {"ac2g": 0, "async_cpu_to_gpu": 1, "async": 1}


def ns(v):
    return int((Decimal(str(v)) * 1000).to_integral_value(rounding="ROUND_HALF_EVEN"))


def main(path):
    raw = open(path, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    # parse_float=Decimal keeps every digit of the float ts
    d = json.loads(raw, parse_float=Decimal)
    ev = d["traceEvents"] if isinstance(d, dict) else d
    kinds = [0, 0, 0]
    host = 0
    steps = {}
    ops = []
    dev = []  # (start, end, stream, correlation) of every device op
    launch = {}  # correlation -> start of the runtime call
    starts, ends = {}, {}
    flows = 0
    mem = 0
    for e in ev:
        ph, cat, name = e.get("ph"), e.get("cat"), e.get("name", "")
        if ph == "X":
            ts, dur = ns(e["ts"]), ns(e.get("dur", 0))
            if cat in ("cuda_runtime", "Runtime", "cuda_driver"):
                c = e.get("args", {}).get("correlation")
                if c is not None and c not in launch:
                    launch[c] = ts
            if cat in DEVICE:
                kinds[DEVICE[cat]] += 1
                ops.append((ts, ts + dur))
                a = e.get("args", {})
                dev.append((ts, a.get("stream", -1), ts + dur, a.get("correlation", -1)))
            elif cat == "gpu_user_annotation":
                pass
            elif cat not in FLOW:
                host += 1
                if cat in ("user_annotation", "cpu_op", "Operator") and name.startswith("ProfilerStep#"):
                    k = (ts, name)
                    steps.setdefault(k, (ts, dur, name))
        elif ph in ("s", "f", "t") and cat in FLOW:
            key = (FLOW[cat], e.get("id"))
            mine, other = (starts, ends) if ph == "s" else (ends, starts)
            if key in other:
                del other[key]
                flows += 1
            else:
                mine[key] = ns(e["ts"])
        elif ph in ("i", "I") and name == "[memory]":
            mem += 1
    ops.sort()
    busy = 0
    cur = None
    for s, t in ops:
        if cur is None or s > cur[1]:
            if cur:
                busy += cur[1] - cur[0]
            cur = [s, t]
        else:
            cur[1] = max(cur[1], t)
    if cur:
        busy += cur[1] - cur[0]
    # Global device gaps (union of all streams), the 5 longest, each with the launch lead of
    # the first op starting at or after its end: launch start - gap start (ns).
    gaps = []
    cur_end = None
    for s, t in ops:
        if cur_end is not None and s > cur_end:
            gaps.append((cur_end, s))
        cur_end = t if cur_end is None else max(cur_end, t)
    dev.sort()
    top = sorted(gaps, key=lambda g: (-(g[1] - g[0]), g[0]))[:5]
    leads = []
    for g0, g1 in top:
        nxt = min((d for d in dev if d[0] >= g1), default=None)
        lead = launch[nxt[3]] - g0 if nxt and nxt[3] in launch else None
        leads.append([g0, g1, lead])
    st = sorted(steps.values())
    print(json.dumps({
        "kernels": kinds[0], "memcpy": kinds[1], "memset": kinds[2], "host_ops": host,
        "steps": [[n, s, dur] for s, dur, n in st], "flows": flows,
        "unpaired_flows": len(starts) + len(ends), "memory": mem,
        "busy_union_ns": busy, "top_gaps": leads,
        "first_op_ns": ops[0][0] if ops else None, "last_end_ns": max(t for _, t in ops) if ops else None,
        "base": d.get("baseTimeNanoseconds") if isinstance(d, dict) else None,
        "rank": (d.get("distributedInfo") or {}).get("rank") if isinstance(d, dict) else None,
    }))


main(sys.argv[1])
