#!/usr/bin/env python3
"""Independent reference of the RL-Insight "Memory Parser" rule (ascend-memory.md §2.1,
§3, §4.3 parity, §5.1, §6.1, §7, §9.0), written from the spec, for cross-checking proflens.

Usage: memory_parity.py <dropped folder>
Prints the 12 MemoryEventRow columns as CSV (csv.writer, "\n" terminator, floats as repr)
for every *ascend_pt folder under the folder, ranks ordered by (role, rank_id, source
index) and all rows stable-sorted by start_time_ms: the deterministic order proflens uses.
The dropped folder's own name counts as a path segment (a browser drop keeps it).
"""
import bisect
import csv
import json
import os
import sys

COLUMNS = ["name", "role", "rank_id", "call_stack", "call_stack_top", "size_kb",
           "start_time_ms", "duration_ms", "total_allocated_mb", "total_reserved_mb",
           "total_active_mb", "device_type"]


def get_rank_id(d):
    for f in sorted(os.listdir(d)):
        if f.startswith("profiler_info_") and f.endswith(".json") and os.path.isfile(os.path.join(d, f)):
            try:
                return int(f[len("profiler_info_"):-len(".json")])
            except ValueError:
                return -1
    return -1


def get_role(d, fallback):
    p = os.path.join(d, "profiler_metadata.json")
    if os.path.isfile(p):
        with open(p, encoding="utf-8") as fh:
            meta = json.load(fh)
        if isinstance(meta, dict) and meta.get("role"):
            return meta["role"]
    return fallback


def timestamp_key(name):
    parts = name.split("_")
    if len(parts) >= 4:
        return "_".join(parts[-4:-2])
    if len(parts) == 3:
        return parts[-3]
    return name


def build_index(path):
    with open(path, encoding="utf-8") as fh:
        events = json.load(fh)
    groups = {}
    if not isinstance(events, list):
        return {}
    for ev in events:
        if not isinstance(ev, dict) or ev.get("cat") != "cpu_op":
            continue
        args = ev.get("args")
        if not isinstance(args, dict) or "Call stack" not in args:
            continue
        groups.setdefault(ev.get("name", ""), []).append((float(ev["ts"]), args["Call stack"]))
    index = {}
    for name, entries in groups.items():
        entries.sort(key=lambda e: e[0])  # stable
        index[name] = ([e[0] for e in entries], [e[1] for e in entries])
    return index


def match(name, t_us, index):
    if name not in index:
        return "", ""
    ts_list, stacks = index[name]
    i = bisect.bisect_right(ts_list, t_us) - 1
    if i < 0:
        return "", ""
    stack = stacks[i]
    return stack, (stack.split(";\r\n")[0] if stack else "")


def parse_rank(out_dir, rank_id, role):
    trace = os.path.join(out_dir, "trace_view.json")
    mem = os.path.join(out_dir, "operator_memory.csv")
    if not os.path.isfile(trace) or not os.path.isfile(mem):
        return []
    index = build_index(trace)
    rows = []
    with open(mem, encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            name = row["Name"].strip()
            t_us = float(row["Allocation Time(us)"].strip())
            dur = row.get("Duration(us)")
            dur = dur.strip() if dur is not None else ""
            stack, top = match(name, t_us, index)
            rows.append([
                name, role, rank_id, stack, top,
                float(row["Size(KB)"].strip()),
                t_us / 1000,
                float(dur) / 1000 if dur else 0.0,
                float((row.get("Allocation Total Allocated(MB)") or "").strip() or 0),
                float((row.get("Allocation Total Reserved(MB)") or "").strip() or 0),
                float((row.get("Allocation Total Active(MB)") or "").strip() or 0),
                (row.get("Device Type") or "").strip(),
            ])
    return rows


def main(root):
    root = os.path.abspath(root)
    candidates = []
    for dirpath, dirnames, _ in os.walk(root):
        dirnames.sort()
        for d in dirnames:
            if d.endswith("ascend_pt"):
                full = os.path.join(dirpath, d)
                candidates.append((full, os.path.basename(dirpath)))
    groups = {}
    for full, parent in candidates:
        r = get_rank_id(full)
        if r < 0:
            continue
        role = get_role(full, parent)
        groups.setdefault((role, r), []).append(full)
    ranks = []
    for (role, r), dirs in groups.items():
        rel = lambda d: os.path.relpath(d, os.path.dirname(root))
        dirs.sort(key=lambda d: (timestamp_key(os.path.basename(d)), rel(d)))
        for k, d in enumerate(dirs):
            ranks.append(((role, r, k), d))
    ranks.sort(key=lambda x: x[0])
    rows = []
    for (role, r, _), d in ranks:
        out_dir = os.path.join(d, "ASCEND_PROFILER_OUTPUT")
        if os.path.isdir(out_dir):
            rows.extend(parse_rank(out_dir, r, role))
    rows.sort(key=lambda x: x[6])  # stable, by start_time_ms
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(COLUMNS)
    for row in rows:
        w.writerow(row)


if __name__ == "__main__":
    main(sys.argv[1])
