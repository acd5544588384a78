#!/usr/bin/env python3
"""Independent reference of the timeline's level-of-detail merge (views::timeline) on a real
rank folder: reads kernel_details.csv and trace_view.json with the standard library only and
prints JSON: per device lane (stream key, `N/A` comm rows -> "hccl") the kernel count and the
merged boxes [start_ns, end_ns, count, busy_ns] for each requested window; per host thread of
the Python/CANN processes the number of `X` events with dur > 0 that are not step markers.

Rule: within a lane, kernels in start order (ties: source row); a kernel visible in [x0, x1)
(end > x0 and start < x1) joins the current box when start - box_end < (x1 - x0) / width
(one pixel), except that a box at least 4 pixels long takes no further item that does not
overlap it; busy = union length inside the box.

usage: timeline_ref.py RANK_DIR WIDTH [X0_REL_NS X1_REL_NS WIDTH ...]
Windows are relative to the origin = ts of the first ProfilerStep# marker; the first window
is always the full range [origin, max kernel end).
"""
import csv, json, sys
from decimal import Decimal, ROUND_HALF_EVEN
from pathlib import Path


def ns(text):
    return int((Decimal(text.strip()) * 1000).quantize(Decimal(1), rounding=ROUND_HALF_EVEN))


def main():
    rank = Path(sys.argv[1]) / "ASCEND_PROFILER_OUTPUT"
    args = sys.argv[2:]
    lanes = {}
    with open(rank / "kernel_details.csv", newline="", encoding="utf-8-sig") as f:
        for row_no, row in enumerate(csv.DictReader(f), start=2):
            sid = row["Stream ID"].strip()
            key = sid if sid not in ("", "N/A") else "hccl"
            s = ns(row["Start Time(us)"])
            d = max(0, ns(row["Duration(us)"]))
            lanes.setdefault(key, []).append((s, s + d, row_no))
    trace = json.load(open(rank / "trace_view.json", encoding="utf-8"))
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    procs = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    origin = min(ns(str(e["ts"])) for e in events if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#"))
    host = {}
    for e in events:
        if e.get("ph") != "X" or procs.get(e.get("pid")) not in ("Python", "Python GC", "CANN"):
            continue
        if str(e.get("name", "")).startswith("ProfilerStep#") or ns(str(e.get("dur", 0))) <= 0:
            continue
        k = f'{e["pid"]}/{e["tid"]}'
        host[k] = host.get(k, 0) + 1
    end = max(e for v in lanes.values() for (_, e, _) in v)
    windows = [(origin, end, int(args[0]))]
    rest = args[1:]
    for i in range(0, len(rest), 3):
        windows.append((origin + int(rest[i]), origin + int(rest[i + 1]), int(rest[i + 2])))
    out = {"origin_ns": origin, "host": host, "lanes": {}}
    for key, ks in lanes.items():
        ks.sort(key=lambda t: (t[0], t[2]))
        per_window = []
        for (x0, x1, width) in windows:
            px = (x1 - x0) / width
            boxes = []
            for (s, e, _) in ks:
                if not (e > x0 and s < x1):
                    continue
                full = boxes and s >= boxes[-1][1] and (boxes[-1][1] - boxes[-1][0]) >= 4 * px
                if boxes and (s - boxes[-1][1]) < px and not full:
                    b = boxes[-1]
                    b[3] += max(0, e - max(s, b[1]))
                    b[1] = max(b[1], e)
                    b[2] += 1
                else:
                    boxes.append([s, e, 1, e - s])
            per_window.append(boxes)
        out["lanes"][key] = {"total": len(ks), "windows": per_window}
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
