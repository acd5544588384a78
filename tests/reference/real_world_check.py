#!/usr/bin/env python3
"""Independent readings of the real-world sets (`../shared/fixtures/real_world/`) whose numbers
`tests/real_world.rs` asserts: Python's json / csv / decimal only, exact decimal µs, no proflens.
Run by hand; the numbers it prints are copied into the tests with a comment.

Usage:
  real_world_check.py run148 RANK_DIR          overrun tails and device-side windows (anomaly.md §3.2.1)
  real_world_check.py capabilities TRACE       capture options held / stated, kernel shapes (§1.1.1)
  real_world_check.py annotations TRACE        step-annotation families (§3.1.1)
"""
import csv
import glob
import gzip
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


def load_trace(path):
    raw = open(path, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    d = json.loads(raw, parse_float=D)
    return d if isinstance(d, dict) else {"traceEvents": d}


DEVICE = ("kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset")
RUNTIME = ("cuda_runtime", "Runtime", "cuda_driver")


def capabilities(path):
    """What the trace's events hold and what its top-level members say (anomaly.md §1.1.1),
    and the shapes of the device ops: the Input Dims of the innermost cpu_op of the launching
    runtime call's thread that holds the call's start (brute force, no sweep)."""
    d = load_trace(path)
    ev = d["traceEvents"]
    held = {"shapes": False, "stack": False, "memory": False, "flops": False, "modules": False}
    for e in ev:
        a = e.get("args") if isinstance(e.get("args"), dict) else {}
        if e.get("ph") == "X":
            held["shapes"] |= any(k in a for k in ("Input Dims", "Input type", "Input Strides", "Concrete Inputs"))
            held["stack"] |= "Call stack" in a or e.get("cat") == "python_function"
            held["flops"] |= "flops" in a
            held["modules"] |= "Module Hierarchy" in a
        if e.get("ph") in ("i", "I") and e.get("name") == "[memory]":
            held["memory"] = True
    print("held", held)
    print("stated", {k: d[k] for k in ("record_shapes", "with_stack", "profile_memory", "with_flops", "with_modules") if k in d})

    def ns(v):
        return int(D(str(v)) * 1000)

    ops = {}
    for e in ev:
        if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "Operator"):
            ops.setdefault((str(e.get("pid")), str(e.get("tid"))), []).append(e)
    dims = {}
    for e in ev:
        a = e.get("args") if isinstance(e.get("args"), dict) else {}
        if e.get("ph") != "X" or e.get("cat") not in RUNTIME or "correlation" not in a:
            continue
        t = ns(e["ts"])
        inner = None
        for o in ops.get((str(e.get("pid")), str(e.get("tid"))), []):
            s, en = ns(o["ts"]), ns(o["ts"]) + ns(o.get("dur", 0))
            if s <= t < en and (inner is None or (s, -en) > inner[0]):
                inner = ((s, -en), o)
        if inner is not None and "Input Dims" in (inner[1].get("args") or {}):
            dims[a["correlation"]] = json.dumps(inner[1]["args"]["Input Dims"])
    dev = [e for e in ev if e.get("ph") == "X" and e.get("cat") in DEVICE]
    with_shapes = [dims[e["args"]["correlation"]] for e in dev
                   if isinstance(e.get("args"), dict) and e["args"].get("correlation") in dims]
    print("device ops", len(dev), "with shapes", len(with_shapes), "distinct", len(set(with_shapes)))
    first = sorted((ns(e["ts"]), e["name"], dims[e["args"]["correlation"]]) for e in dev
                   if isinstance(e.get("args"), dict) and e["args"].get("correlation") in dims)[:1]
    print("first with shapes", first)


def annotations(path):
    """The step-annotation families of anomaly.md §3.1.1: top-level user annotations (no other
    user annotation of the thread holds them), grouped by the name up to its first digit, with
    their count, self-overlap and the share of the device busy union they hold (the raw union
    of the device ops; proflens clips a kernel that outlives the next one on its stream, which
    changes nothing where a family holds all of it). Also the kernel names by count."""
    import collections
    import re

    def ns(v):
        return int(D(str(v)) * 1000)

    ev = load_trace(path)["traceEvents"]
    has_ps = any(str(e.get("name", "")).startswith("ProfilerStep#") for e in ev if e.get("ph") == "X")
    dev = sorted((ns(e["ts"]), ns(e["ts"]) + ns(e.get("dur", 0))) for e in ev
                 if e.get("ph") == "X" and e.get("cat") in DEVICE)
    busy = []
    for s, e in dev:
        if busy and s <= busy[-1][1]:
            busy[-1][1] = max(busy[-1][1], e)
        else:
            busy.append([s, e])
    total = sum(e - s for s, e in busy)
    ua = sorted(((ns(e["ts"]), ns(e["ts"]) + ns(e.get("dur", 0)), e["name"], (e.get("pid"), e.get("tid")))
                 for e in ev if e.get("ph") == "X" and e.get("cat") == "user_annotation"
                 and ns(e.get("dur", 0)) > 0), key=lambda a: (a[0], -a[1]))
    top = [a for i, a in enumerate(ua)
           if not any(b[3] == a[3] and b[0] <= a[0] and a[1] <= b[1] for b in ua[:i])]
    fam = collections.defaultdict(list)
    for a in top:
        m = re.search(r"[0-9]", a[2])
        fam[a[2][:m.start()] if m else a[2]].append(a)
    print("ProfilerStep" if has_ps else "no ProfilerStep", "device ops", len(dev), "busy ns", total)
    for k, v in fam.items():
        v.sort()
        over = any(v[i][1] > v[i + 1][0] for i in range(len(v) - 1))
        cov = sum(max(0, min(e, a[1]) - max(s, a[0])) for a in v for s, e in busy)
        print("family %r n=%d overlap=%s cover=%.4f" % (k, len(v), over, cov / total if total else 0))
    names = collections.Counter(e["name"] for e in ev if e.get("ph") == "X" and e.get("cat") in ("kernel", "Kernel"))
    print("kernel names by count", sorted(collections.Counter(names.values()).items()))


if __name__ == "__main__":
    {"run148": run148, "capabilities": capabilities, "annotations": annotations}[sys.argv[1]](*sys.argv[2:])
