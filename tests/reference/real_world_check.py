#!/usr/bin/env python3
"""Independent readings of the real-world sets (`../shared/fixtures/real_world/`) whose numbers
`tests/real_world.rs` asserts: Python's json / csv / decimal only, exact decimal µs, no proflens.
Run by hand; the numbers it prints are copied into the tests with a comment.

Usage:
  real_world_check.py run148 RANK_DIR          overrun tails and device-side windows (anomaly.md §3.2.1)
  real_world_check.py capabilities TRACE       capture options held / stated, kernel shapes (§1.1.1)
  real_world_check.py annotations TRACE        step-annotation families (§3.1.1)
  real_world_check.py gpu TRACE...             device-op counts, kernel categories, busy union,
                                               gaps, ProfilerStep markers, [memory] peaks (exact ns)
  real_world_check.py ascend RANK_DIR          kernel_details / step_trace_time / trace_view rows
  real_world_check.py snapshot PICKLE          segments, block states, actions, baselines and maxima
                                               of the allocated / active / reserved curves
  real_world_check.py collectives TRACE        kernels the anomaly rules take as collectives
                                               (gpu-traces.md §1): count, names, exact Σ duration
"""
import collections
import csv
import glob
import gzip
import json
import re
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



NCCL_KERNEL = re.compile(r"^nccl.*Kernel")
MEMORY_KERNEL = re.compile(r"(^Memcpy)|(^Memset)|(^dma)")


def ns_exact(v):
    """µs (a JSON number read as Decimal) to ns, exactly (round half even below 1 ns)."""
    return int((D(str(v)) * 1000).to_integral_value(rounding="ROUND_HALF_EVEN"))


def union(iv):
    """(length, merged groups) of a list of (start, end); touching intervals merge."""
    out = []
    for s, e in sorted(iv):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return sum(e - s for s, e in out), out


def category(cat, name):
    """gpu-traces.md §2 kernel categories: memory (memcpy / memset event or HTA memory name),
    communication (HTA: `^nccl.*Kernel` on the first line), compute (the rest)."""
    first = name.split("\n", 1)[0]
    if cat in ("gpu_memcpy", "Memcpy", "gpu_memset", "Memset") or MEMORY_KERNEL.match(first):
        return "memory"
    if NCCL_KERNEL.match(first):
        return "communication"
    return "compute"


def gpu_one(path):
    d = load_trace(path)
    ev = d["traceEvents"]
    dev = [(ns_exact(e["ts"]), ns_exact(e["ts"]) + ns_exact(e.get("dur", 0)), e.get("cat"), e.get("name", ""))
           for e in ev if e.get("ph") == "X" and e.get("cat") in DEVICE]
    kinds = collections.Counter({"kernel": 0, "memcpy": 0, "memset": 0})
    for _, _, c, _ in dev:
        kinds[{"kernel": "kernel", "Kernel": "kernel", "gpu_memcpy": "memcpy", "Memcpy": "memcpy"}.get(c, "memset")] += 1
    cats = {}
    for c in ("compute", "communication", "memory"):
        iv = [(s, e) for s, e, cat, n in dev if category(cat, n) == c]
        cats[c] = {"count": len(iv), "sum_ns": sum(e - s for s, e in iv), "busy_ns": union(iv)[0]}
    busy, groups = union([(s, e) for s, e, _, _ in dev])
    gaps = [groups[i + 1][0] - groups[i][1] for i in range(len(groups) - 1)]
    # A zero-length op occupies no device time; inside a gap it would split the gap in two.
    # anomaly.md §5.5 gaps lie between the merged segments of the ops with a duration.
    _, timed = union([(s, e) for s, e, _, _ in dev if e > s])
    timed_gaps = [timed[i + 1][0] - timed[i][1] for i in range(len(timed) - 1)]
    comm = collections.Counter(n for _, _, c, n in dev if category(c, n) == "communication")
    steps = sorted((ns_exact(e["ts"]), ns_exact(e["ts"]) + ns_exact(e.get("dur", 0)), e["name"]) for e in ev
                   if e.get("ph") == "X" and e.get("cat") in ("user_annotation", "cpu_op", "Operator")
                   and str(e.get("name", "")).startswith("ProfilerStep#"))
    # Device ops per marker window, by start (the last window runs to the last op end).
    per_step = []
    for i, (s, e, n) in enumerate(steps):
        hi = steps[i + 1][0] if i + 1 < len(steps) else None
        mine = [(a, b, c, nm) for a, b, c, nm in dev if a >= s and (hi is None or a < hi)]
        per_step.append({"name": n, "marker": [s, e], "ops": len(mine),
                         "categories": {c: sum(1 for a, b, cat, nm in mine if category(cat, nm) == c)
                                        for c in ("compute", "communication", "memory")}})
    # [memory] instant events: per (Device Type, Device Id), samples, peak Total Allocated and
    # Total Reserved, each with the first ts reaching it.
    mem = {}
    first_sample = min((ns_exact(e["ts"]) for e in ev
                        if e.get("ph") in ("i", "I") and e.get("name") == "[memory]"), default=None)
    for e in ev:
        if e.get("ph") in ("i", "I") and e.get("name") == "[memory]":
            a = e.get("args") or {}
            k = (int(a.get("Device Type", -1)), int(a.get("Device Id", -1)))
            m = mem.setdefault(k, {"samples": 0, "peak_allocated": None, "peak_allocated_ts_ns": None,
                                   "peak_reserved": None, "peak_reserved_ts_ns": None})
            m["samples"] += 1
            for key, field in (("Total Allocated", "peak_allocated"), ("Total Reserved", "peak_reserved")):
                if key in a and (m[field] is None or int(a[key]) > m[field]):
                    m[field], m[field + "_ts_ns"] = int(a[key]), ns_exact(e["ts"])
    return {
        "device_ops": len(dev), "kinds": dict(kinds), "categories": cats,
        "busy_union_ns": busy, "first_start_ns": groups[0][0] if groups else None,
        "last_end_ns": groups[-1][1] if groups else None,
        "span_ns": groups[-1][1] - groups[0][0] if groups else 0,
        "gap_count": len(timed_gaps), "gap_total_ns": sum(timed_gaps), "largest_gap_ns": max(timed_gaps, default=0),
        "zero_length_ops": sum(1 for s, e, _, _ in dev if e == s),
        "gap_count_with_zero_length_ops": len(gaps), "device_side": device_side(ev, dev, steps),
        "comm_kernels": dict(comm), "steps": per_step,
        "memory": {"%d/%d" % k: v for k, v in sorted(mem.items())}, "first_memory_sample_ns": first_sample,
        "rank": (d.get("distributedInfo") or {}).get("rank"),
    }


def device_side(ev, dev, steps):
    """anomaly.md §3.2: each op's launch step (the marker window [H_i, H_{i+1}) holding the start
    of the runtime call with its correlation), and the device-side windows S_i = max(H_i,
    E_{i-1}), E_i = the last end of the ops launched in step i; then the ops by start in
    [S_i, S_{i+1}) (the last: S_last ≤ start), their count and Σ duration."""
    if not steps:
        return None
    launch = {}
    for e in ev:
        a = e.get("args") if isinstance(e.get("args"), dict) else {}
        if e.get("ph") == "X" and e.get("cat") in RUNTIME and "correlation" in a:
            launch.setdefault(a["correlation"], ns_exact(e["ts"]))
    corr = [(ns_exact(e["ts"]), (e.get("args") or {}).get("correlation")) for e in ev
            if e.get("ph") == "X" and e.get("cat") in DEVICE]
    H = [s for s, _, _ in steps]
    ends = [None] * len(H)
    for (s, c), (a, b, _, _) in zip(corr, dev):
        t = launch.get(c)
        if t is None or t < H[0]:
            continue
        i = sum(1 for h in H if h <= t) - 1
        ends[i] = b if ends[i] is None else max(ends[i], b)
    S, E, prev = [], [], None
    for i, h in enumerate(H):
        s = h if prev is None else max(h, prev)
        S.append(s)
        E.append(max(ends[i], s) if ends[i] is not None else s)
        prev = E[-1]
    out = []
    for i in range(len(H)):
        mine = [(a, b) for a, b, _, _ in dev if a >= S[i] and (i + 1 == len(H) or a < S[i + 1])]
        cats = collections.Counter(category(c, n) for a, b, c, n in dev
                                   if a >= S[i] and (i + 1 == len(H) or a < S[i + 1]))
        # Idle inside the window (anomaly.md §5.4): prelaunch = window start → first busy
        # instant, tail = last busy instant → window end, internal = the gaps between.
        w1 = S[i + 1] if i + 1 < len(H) else E[i]
        _, segs = union([(max(a, S[i]), min(b, w1)) for a, b, _, _ in dev if b > S[i] and a < w1 and b > a])
        inner = [segs[j + 1][0] - segs[j][1] for j in range(len(segs) - 1)]
        idle_part = {"service_ns": w1 - S[i], "prelaunch_ns": segs[0][0] - S[i] if segs else w1 - S[i],
                     "tail_ns": w1 - segs[-1][1] if segs else 0, "internal_ns": sum(inner),
                     "internal_gaps": len(inner), "largest_internal_ns": max(inner, default=0)}
        # Communication / compute overlap inside the window (gpu-traces.md §2).
        def cu(c):
            return union([(max(a, S[i]), min(b, w1)) for a, b, cat, n in dev
                          if category(cat, n) == c and b > S[i] and a < w1 and b > a])[1]
        comm_u, comp_u = cu("communication"), cu("compute")
        ov = sum(max(0, min(e1, e2) - max(s1, s2)) for s1, e1 in comm_u for s2, e2 in comp_u)
        idle_part["comm_compute_overlap_ns"] = ov
        idle_part["exposed_comm_ns"] = sum(e - s for s, e in comm_u) - ov
        out.append({"S": S[i], "E": E[i] if i + 1 == len(H) else S[i + 1], "ops": len(mine),
                    "categories": dict(cats), **idle_part,
                    "sum_ns": sum(b - a for a, b in mine), "busy_in_window_ns": union(
                        [(max(a, S[i]), min(b, S[i + 1] if i + 1 < len(H) else E[i]))
                         for a, b, _, _ in dev if b > S[i] and (i + 1 == len(H) or a < S[i + 1])])[0]})
    return out


def gpu(*paths):
    for p in paths:
        print(json.dumps({"file": p.rsplit("/", 1)[-1], **gpu_one(p)}))


def ascend(rank_dir):
    """run358-style rank folder: step_trace_time rows as written (Step, Preparing kept as text),
    kernel_details rows (count, Σ Duration, first / last start), ProfilerStep markers of
    trace_view.json (ts, dur in exact µs)."""
    out = glob.glob(rank_dir.rstrip("/") + "/ASCEND_PROFILER_OUTPUT/")[0]
    for r in csv.DictReader(open(out + "step_trace_time.csv", encoding="utf-8-sig")):
        print("step_trace_time", {k: v for k, v in r.items()})
    rows = list(csv.DictReader(open(out + "kernel_details.csv", encoding="utf-8-sig")))
    st = sorted(D(r["Start Time(us)"].strip()) for r in rows)
    du = [D(r["Duration(us)"].strip()) for r in rows]
    ends = sorted(D(r["Start Time(us)"].strip()) + D(r["Duration(us)"].strip()) for r in rows)
    print("kernels", len(rows), "sum_dur_us", sum(du), "first_start", st[0], "last_end", ends[-1])
    busy, groups = union([(D(r["Start Time(us)"].strip()), D(r["Start Time(us)"].strip()) + D(r["Duration(us)"].strip()))
                          for r in rows])
    gaps = [groups[i + 1][0] - groups[i][1] for i in range(len(groups) - 1)]
    print("busy_union_us", busy, "groups", len(groups), "gaps", len(gaps), "largest", max(gaps, default=0),
          "span", groups[-1][1] - groups[0][0])
    ev = json.loads(open(out + "trace_view.json").read(), parse_float=D)
    ev = ev["traceEvents"] if isinstance(ev, dict) else ev
    for e in sorted((e for e in ev if str(e.get("name", "")).startswith("ProfilerStep#")), key=lambda e: D(str(e["ts"]))):
        print("marker", e["name"], D(str(e["ts"])), D(str(e.get("dur", 0))), "end", D(str(e["ts"])) + D(str(e.get("dur", 0))))
    marks = sorted(D(str(e["ts"])) for e in ev if str(e.get("name", "")).startswith("ProfilerStep#"))
    before = sum(1 for s in st if s < marks[0])
    # Marker windows [H_i, H_{i+1}), the last ending at the end of the last kernel starting in
    # it (anomaly.md §3.2); per window: kernels by start, their Σ duration, the busy union of all
    # kernels clipped to the window.
    iv = [(D(r["Start Time(us)"].strip()), D(r["Start Time(us)"].strip()) + D(r["Duration(us)"].strip())) for r in rows]
    for i, h in enumerate(marks):
        hi = marks[i + 1] if i + 1 < len(marks) else max(e for s, e in iv if s >= h)
        mine = [(s, e) for s, e in iv if h <= s < hi or (i + 1 == len(marks) and s >= h)]
        clip = union([(max(s, h), min(e, hi)) for s, e in iv if e > h and s < hi])[0]
        print("window", i + 1, h, hi, "service", hi - h, "kernels", len(mine),
              "sum_dur", sum(e - s for s, e in mine), "busy_clipped", clip)
    print("kernels before the first marker", before,
          "per marker window", [sum(1 for s in st if marks[i] <= s < (marks[i + 1] if i + 1 < len(marks) else D("1e30")))
                                for i in range(len(marks))])


def snapshot(path):
    """The allocator snapshot as CPython's pickle reads it (plain dicts / lists): segments,
    block states, action counts, and the allocated / active / reserved curves of
    torch-snapshot.md §3.6 / §7.2 / §7.3 with their baselines and maxima (first entry reaching
    a maximum; None when the baseline is the maximum)."""
    import pickle
    snap = pickle.load(open(path, "rb"))
    segs = snap["segments"] if isinstance(snap, dict) else snap
    traces = snap.get("device_traces", []) if isinstance(snap, dict) else []
    states = collections.Counter(b["state"] for s in segs for b in s["blocks"])
    print("segments", len(segs), "total_size", sum(s["total_size"] for s in segs),
          "allocated_size", sum(s["allocated_size"] for s in segs),
          "large/small", collections.Counter(s["segment_type"] for s in segs),
          "private_pools", sum(1 for s in segs if tuple(s.get("segment_pool_id", (0, 0))) != (0, 0)),
          "block_states", dict(states))
    for dev, tr in enumerate(traces):
        dsegs = [s for s in segs if s["device"] == dev]
        if not tr and not dsegs:
            continue
        print("device", dev, "entries", len(tr), "actions", dict(collections.Counter(e["action"] for e in tr)))
        live = {}  # addr -> [size, requested]
        pre_alloc, pre_active = 0, 0  # baseline bytes (PRE records)
        for e in tr:
            a, addr, size = e["action"], e["addr"], e["size"]
            if a == "alloc":
                live[addr] = [size, False]
            elif a == "free_requested":
                if addr in live:
                    live[addr][1] = True
                else:  # alive before the window: allocated and active until its frees
                    live[addr] = [size, True]
                    pre_alloc += size
                    pre_active += size
            elif a == "free_completed":
                if addr in live:
                    del live[addr]
                else:  # alive before the window; allocated until now
                    pre_alloc += size
                    pre_active += size
        blocks = [(s["address"] + off, b) for s in dsegs for off, b in _block_offsets(s)]
        for addr, b in blocks:
            if b["state"] == "active_allocated" and addr not in live:
                pre_alloc += b["requested_size"]
                pre_active += b["requested_size"]
            elif b["state"] == "active_pending_free" and addr not in live:
                pre_active += b["requested_size"]
        net_seg = sum(e["size"] if e["action"] in ("segment_alloc", "segment_map") else -e["size"]
                      for e in tr if e["action"] in ("segment_alloc", "segment_map", "segment_free", "segment_unmap"))
        reserved0 = sum(s["total_size"] for s in dsegs) - net_seg
        alloc, active, res = pre_alloc, pre_active, reserved0
        best = {"allocated": (alloc, None), "active": (active, None), "reserved": (res, None)}
        opened = {}  # addr -> [size, allocated-still]
        for i, e in enumerate(tr):
            a, addr, size = e["action"], e["addr"], e["size"]
            if a == "alloc":
                alloc += size
                active += size
                opened[addr] = True
            elif a == "free_requested":
                alloc -= size
                opened[addr] = False
            elif a == "free_completed":
                if opened.pop(addr, True):
                    alloc -= size
                active -= size
            elif a in ("segment_alloc", "segment_map"):
                res += size
            elif a in ("segment_free", "segment_unmap"):
                res -= size
            for k, v in (("allocated", alloc), ("active", active), ("reserved", res)):
                if v > best[k][0]:
                    best[k] = (v, i)
        print("  baseline allocated", pre_alloc, "active", pre_active, "reserved", reserved0)
        print("  max", {k: {"bytes": v[0], "index": v[1],
                            "time_us": tr[v[1]].get("time_us") if v[1] is not None else None}
                        for k, v in best.items()})
        print("  end allocated", alloc, "active", active, "reserved", res)


def _block_offsets(seg):
    off = 0
    for b in seg["blocks"]:
        yield off, b
        off += b["size"]


# The collective name words: anomaly.md §1.2.2's pattern, and the underscored spellings of the
# symmetric-memory kernels (gpu-traces.md §1).
COLLECTIVE_WORDS = ["allreduce", "allgather", "reducescatter", "reduce_scatter", "alltoall",
                    "broadcast", "batchsendrecv", "all_reduce", "all_gather", "all_to_all"]


def collectives(path):
    ev = load_trace(path)["traceEvents"]
    names, total = collections.Counter(), D(0)
    for e in ev:
        if e.get("cat") not in ("kernel", "Kernel"):
            continue
        low = str(e.get("name", "")).lower()
        if ("nccl" in low or "rccl" in low or low.startswith(("hcom", "hccl"))
                or (not low.startswith("aclnn") and any(w in low for w in COLLECTIVE_WORDS))):
            names[e["name"]] += 1
            total += D(str(e["dur"]))
    print("collectives", sum(names.values()), "sum_us", total)
    for n, c in names.most_common():
        print(f"  {c} x {n}")


if __name__ == "__main__":
    {"run148": run148, "capabilities": capabilities, "annotations": annotations, "gpu": gpu,
     "ascend": ascend, "snapshot": snapshot, "collectives": collectives}[sys.argv[1]](*sys.argv[2:])
