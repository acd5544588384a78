#!/usr/bin/env python3
"""Independent check of `h2d_flow_count` on GPU ranks (the GPU rule: docs/rules/anomaly.md §5.6
and docs/rules/gpu-traces.md): per device gap, the number of device ops
(kernel, memcpy, memset) whose launch -- the earliest runtime/driver call with the op's
`correlation`, the link Kineto draws as the `ac2g` flow -- starts inside the gap; read with
Python's json/gzip and exact decimal ns (no f64 on epoch us).

Output (one JSON object):
  launches: the sorted launch starts of the device ops that have one, ns;
  f_ends_in_gaps: how many flow `f` ends (`ac2g`, `async_cpu_to_gpu`, `async`) lie inside some
    gap, paired with an `s` by (category, id) or lone -- the Ascend-style rule the GPU rule
    replaces (kept for the record);
  gaps: every global gap of the device busy union (all device ops of all streams), in time
    order, as [start_ns, end_ns, launches with start <= ts < end].

Usage: gpu_flow_count_ref.py TRACE.json[.gz]
"""
import bisect, gzip, json, sys
from decimal import Decimal

DEVICE = ("kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset")
FLOW = {"ac2g": 0, "async_cpu_to_gpu": 1, "async": 1}


def ns(v):
    return int((Decimal(str(v)) * 1000).to_integral_value(rounding="ROUND_HALF_EVEN"))


def main(path):
    raw = open(path, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    d = json.loads(raw, parse_float=Decimal)
    ev = d["traceEvents"] if isinstance(d, dict) else d
    ops = []
    corr = []  # correlation of each device op
    launch = {}  # correlation -> earliest start of a runtime / driver call
    starts, ends = {}, {}  # open ends by (category class, id): ts
    paired_f = []
    for e in ev:
        ph, cat = e.get("ph"), e.get("cat")
        if ph == "X" and cat in DEVICE:
            ts = ns(e["ts"])
            ops.append((ts, ts + ns(e.get("dur", 0))))
            corr.append(e.get("args", {}).get("correlation"))
        elif ph == "X" and cat in ("cuda_runtime", "Runtime", "cuda_driver"):
            c = e.get("args", {}).get("correlation")
            if isinstance(c, int) and c >= 0:
                ts = ns(e["ts"])
                launch[c] = min(ts, launch.get(c, ts))
        elif ph in ("s", "f", "t") and cat in FLOW:
            key = (FLOW[cat], e.get("id"))
            ts = ns(e["ts"])
            if ph == "s":
                if key in ends:
                    paired_f.append(ends.pop(key))
                else:
                    starts[key] = ts  # a later s of the same id replaces an open one
            else:
                if key in starts:
                    del starts[key]
                    paired_f.append(ts)
                else:
                    ends[key] = ts
    lone_f = list(ends.values())
    launches = [launch[c] for c in corr if isinstance(c, int) and c in launch]
    ops.sort()
    gaps = []
    cur_end = None
    for s, t in ops:
        if cur_end is not None and s > cur_end:
            gaps.append((cur_end, s))
        cur_end = t if cur_end is None else max(cur_end, t)
    launches.sort()

    def inside(points, a, b):
        return bisect.bisect_left(points, b) - bisect.bisect_left(points, a)

    def in_any_gap(points):
        points = sorted(points)
        return sum(inside(points, a, b) for a, b in gaps)

    print(json.dumps({
        "launches": launches,
        "f_ends_in_gaps": {"paired": in_any_gap(paired_f), "lone": in_any_gap(lone_f)},
        "gaps": [[a, b, inside(launches, a, b)] for a, b in gaps],
    }))


main(sys.argv[1])
