#!/usr/bin/env python3
"""Independent reading of HTA 0.5.0's temporal and idle-time breakdowns (gpu-traces.md §1-§3)
straight from a Kineto trace, without HTA or pandas: the cross-check for traces where HTA
itself fails (its idle breakdown raises on the `trace_diff` pair).

Usage: hta_breakdown_ref.py TRACE.json[.gz]   → one JSON object on stdout:
  {"gpu_time_breakdown": {span_us, idle_us, compute_us, non_compute_us} | null,
   "idle_by_stream": [{stream, host_wait_us, kernel_wait_us, other_us}]}
"""
import collections
import gzip
import json
import math
import re
import sys

NCCL = re.compile(r"^nccl.*Kernel")
MEMORY = re.compile(r"(^Memcpy)|(^Memset)|(^dma)")
NOT_COMPUTE = re.compile(r"(^nccl.*Kernel)|(.*(Memcpy)|(Memset))|(.*Sync)")
KERNEL_CATS = {"kernel", "Kernel", "gpu_memset", "Memset", "gpu_memcpy", "Memcpy", "mtia_ccp_events"}
CONSECUTIVE_KERNEL_DELAY = 30


def is_compute(name):
    return not NCCL.match(name) and not MEMORY.match(name) and not NOT_COMPUTE.match(name)


def stream_of(args):
    try:
        return int(args.get("stream", -1))
    except (TypeError, ValueError):
        return -1


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f)
    rows = []
    for e in doc.get("traceEvents", []):
        if "dur" not in e or e.get("cat") is None or e.get("cat") == "Trace":
            continue
        args = e.get("args") if isinstance(e.get("args"), dict) else {}
        ts, dur = e["ts"], e["dur"]
        rows.append({
            "name": e.get("name", ""), "cat": e["cat"],
            "ts": math.ceil(ts), "end": math.floor(ts + dur),
            "stream": stream_of(args), "corr": args.get("correlation", -1),
        })
    return rows


def merged(intervals):
    groups, running = [], None
    for s, e in sorted(intervals):
        if groups and s <= running:
            groups[-1][1] = max(groups[-1][1], e)
        else:
            groups.append([s, e])
        running = e if running is None else max(running, e)
    return groups


def breakdowns(rows):
    def is_gpu(r):
        return (r["stream"] >= 0 and r["corr"] >= 0) or r["name"] in ("Event Sync", "Context Sync")

    steps = {r["name"] for r in rows if "ProfilerStep" in r["name"]}
    if len(steps) >= 2:
        last = max(r["ts"] for r in rows if not is_gpu(r) and r["name"] in steps)
        cpu = [r for r in rows if not is_gpu(r) and r["ts"] < last]
        corr = {r["corr"] for r in cpu}
        rows = [r for r in rows if is_gpu(r) and r["corr"] in corr] + cpu
    on_stream = [r for r in rows if r["stream"] != -1]
    time = None
    if on_stream:
        m = merged([(r["ts"], r["end"]) for r in on_stream])
        span = m[-1][1] - m[0][0]
        idle = span - sum(e - s for s, e in m)
        comp = sum(e - s for s, e in merged([(r["ts"], r["end"]) for r in on_stream if is_compute(r["name"])]))
        time = {"span_us": span, "idle_us": idle, "compute_us": comp, "non_compute_us": span - comp - idle}
    launch = {r["corr"]: r["ts"] for r in rows if not is_gpu(r) and r["corr"] >= 0}
    ops = [r for r in on_stream if r["cat"] in KERNEL_CATS]
    out = []
    for s in sorted({r["stream"] for r in ops}):
        k = sorted((r for r in ops if r["stream"] == s), key=lambda r: (r["ts"], r["end"]))
        cat = collections.Counter()
        for prev, cur in zip(k, k[1:]):
            gap = cur["ts"] - prev["end"]
            t = launch.get(cur["corr"])
            key = "host_wait_us" if t is not None and t > prev["end"] else (
                "kernel_wait_us" if gap < CONSECUTIVE_KERNEL_DELAY else "other_us")
            cat[key] += gap
        out.append({"stream": s, "host_wait_us": cat.get("host_wait_us"),
                    "kernel_wait_us": cat.get("kernel_wait_us"), "other_us": cat.get("other_us", 0)})
    return {"gpu_time_breakdown": time, "idle_by_stream": out}


if __name__ == "__main__":
    print(json.dumps(breakdowns(load(sys.argv[1]))))
