#!/usr/bin/env python3
"""Independent reference of anomaly.md formulas (§3.1-3.2, §5.1-5.5, §5.10.1,
§5.11.2, §5.12, §1.4 wait ratio) for one rank folder. Exact decimal arithmetic
(µs as Decimal). Written from the spec text, not from the Rust code.

Usage: anomaly_ref.py <rank_folder> [rulebook|script]  -> JSON on stdout.
"""
import csv
import json
import os
import re
import sys
from decimal import Decimal as D


def load_kernels(path):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    ks = []
    for r in rows:
        r = {k.strip(): (v or "").strip() for k, v in r.items()}
        s, d = r.get("Start Time(us)", ""), r.get("Duration(us)", "")
        try:
            s, d = D(s), D(d)
        except Exception:
            continue
        if d < 0:
            continue
        w = r.get("Wait Time(us)", "")
        try:
            w = D(w) if w not in ("", "N/A") else D(0)
        except Exception:
            w = D(0)
        st = r.get("Step Id", "")
        ks.append({"name": r.get("Name", ""), "start": s, "dur": d, "wait": w,
                   "step": int(st) if re.fullmatch(r"-?\d+", st or "") else None})
    ks.sort(key=lambda k: k["start"])
    return ks


def load_markers(out_dir):
    path = os.path.join(out_dir, "trace_view.json")
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        ev = json.load(f)
    if isinstance(ev, dict):
        ev = ev.get("traceEvents", [])
    best = {}
    for e in ev:
        m = re.match(r"^ProfilerStep#(\d+)$", str(e.get("name", "")))
        if not m or e.get("ph") != "X":
            continue
        ts, dur = D(str(e["ts"])), D(str(e.get("dur", 0)))
        n = int(m.group(1))
        if n not in best or (ts, -dur) < (best[n]["ts"], -best[n]["dur"]):
            best[n] = {"name": e["name"], "ts": ts, "dur": dur}
    return sorted(best.values(), key=lambda m: m["ts"])


def merge(iv):
    iv = sorted((s, e) for s, e in iv if e > s)
    out = []
    for s, e in iv:
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def window(ks, S, E):
    clipped = []
    for k in ks:
        s, e = k["start"], k["start"] + k["dur"]
        if s < E and e > S:
            clipped.append((max(S, s), min(E, e)))
    M = merge(clipped)
    service = max(D(0), E - S)
    if not M:
        return dict(service=service, busy=D(0), prelaunch=service, tail=D(0), bubbles=[])
    busy = sum(e - s for s, e in M)
    bubbles = [(M[i][1], M[i + 1][0]) for i in range(len(M) - 1) if M[i + 1][0] > M[i][1]]
    return dict(service=service, busy=busy, prelaunch=max(D(0), M[0][0] - S), tail=max(D(0), E - M[-1][1]), bubbles=bubbles)


def context(ks, gap):
    """§5.6 raw kernel context of a gap: before = greatest end <= start (ties: greater start),
    after = smallest start >= end (ties: smaller end)."""
    s, e = gap
    before = max((k for k in ks if k["start"] + k["dur"] <= s),
                 key=lambda k: (k["start"] + k["dur"], k["start"]), default=None)
    after = min((k for k in ks if k["start"] >= e),
                key=lambda k: (k["start"], k["start"] + k["dur"]), default=None)
    return dict(start_us=str(s), end_us=str(e),
                before=before["name"] if before else None, after=after["name"] if after else None)


def main():
    folder = sys.argv[1]
    mode = sys.argv[2] if len(sys.argv) > 2 else "rulebook"
    if folder.endswith(".csv"):
        out_dir, kpath = os.path.dirname(folder), folder
    else:
        out_dir = os.path.join(folder, "ASCEND_PROFILER_OUTPUT")
        kpath = os.path.join(out_dir, "kernel_details.csv")
    ks = load_kernels(kpath)
    markers = load_markers(out_dir)
    # Windows: markers (§3.2), else Step Id (+ step_trace_time.csv), else one pseudo-step (§3.1).
    wins = []
    if markers:
        for i, m in enumerate(markers):
            S = m["ts"]
            if i + 1 < len(markers):
                E = markers[i + 1]["ts"]
            else:
                ends = [k["start"] + k["dur"] for k in ks if k["start"] >= S]
                E = max(ends) if ends else S + m["dur"]
            wins.append((m["name"], S, E))
    elif any(k["step"] is not None for k in ks):
        trace = {}
        tpath = os.path.join(out_dir, "step_trace_time.csv")
        if os.path.exists(tpath):
            with open(tpath, newline="", encoding="utf-8") as f:
                for r in csv.DictReader(f):
                    r = {k.strip(): (v or "").strip() for k, v in r.items()}
                    if r.get("Preparing") and r.get("Stage"):
                        trace[r["Step"]] = (D(r["Preparing"]), D(r["Stage"]))
        order = []
        for k in ks:
            if k["step"] is not None and k["step"] not in order:
                order.append(k["step"])
        for sid in order:
            mine = [k for k in ks if k["step"] == sid]
            first = min(k["start"] for k in mine)
            if str(sid) in trace:
                prep, stage = trace[str(sid)]
                wins.append(("step_%d" % sid, first - prep, first + stage))
            else:
                wins.append(("step_%d" % sid, first, max(k["start"] + k["dur"] for k in mine)))
        wins.sort(key=lambda w: w[1])
    elif ks:
        wins.append(("pseudo_step_0", ks[0]["start"], max(k["start"] + k["dur"] for k in ks)))
    markers = [{"name": n, "ts": S} for n, S, _ in wins]
    steps = []
    for i, (name, S, E) in enumerate(wins):
        m = {"name": name}
        w = window(ks, S, E)
        ms = lambda x: float(x / 1000)
        service = ms(w["service"])
        under = float((w["service"] - w["busy"]) / w["service"]) if w["service"] > 0 else 0.0
        largest = ms(max((e - s for s, e in w["bubbles"]), default=D(0)))
        G = max(1.0, 0.10 * service)
        pre, tail = ms(w["prelaunch"]), ms(w["tail"])
        internal = ms(sum((e - s for s, e in w["bubbles"]), D(0)))
        heavy = {"PRE": pre >= G, "TAIL": tail >= G, "INT": largest >= G}
        idle = under >= 0.30 if mode == "script" else (under >= 0.30 or any(heavy.values()))
        tags = [t for t, on in [("DEVICE_IDLE_GAP_HEAVY", idle), ("PRELAUNCH_GAP_HEAVY", heavy["PRE"]),
                                ("TAIL_GAP_HEAVY", heavy["TAIL"]), ("INTERNAL_BUBBLE_HEAVY", heavy["INT"])] if on]
        vals = {"prelaunch": pre, "tail": tail, "internal_bubble": internal}
        order = ["prelaunch", "tail", "internal_bubble"]
        best = max(order, key=lambda k: (vals[k], -order.index(k)))
        if mode == "script":
            pattern = "none" if vals[best] <= 0 else best
        else:
            srt = sorted(vals.values(), reverse=True)
            if vals[best] < 0.1 or vals[best] < 0.01 * service:
                pattern = "none"
            elif srt[1] >= 0.7 * srt[0]:
                pattern = "mixed"
            else:
                pattern = best
        mine = [k for k in ks if k["start"] >= S and (i + 1 == len(wins) or k["start"] < wins[i + 1][1])]
        # §5.6 emission of internal bubbles (>= 50 us, at most 50 per step) and §4.5 perspectives.
        emitted = min(50, sum(1 for s0, e0 in w["bubbles"] if e0 - s0 >= 50))
        persp = None
        if mine:
            persp = dict(wall_ms=ms(max(k["start"] + k["dur"] for k in mine) - min(k["start"] for k in mine)),
                         busy_union_ms=ms(sum((e0 - s0 for s0, e0 in merge([(k["start"], k["start"] + k["dur"]) for k in mine])), D(0))),
                         kernel_sum_ms=ms(sum((k["dur"] for k in mine), D(0))),
                         total_cost_ms=ms(sum((k["dur"] + k["wait"] for k in mine), D(0))))
        top_int = max(w["bubbles"], key=lambda b: (b[1] - b[0], -b[0]), default=None)
        steps.append(dict(emitted_internal_bubbles=emitted, four_perspectives=persp,
                          largest_internal_bubble=context(ks, top_int) if top_int else None,
                          step_id=m["name"], service_ms=service, device_busy_union_ms=ms(w["busy"]),
                          underfeed_ratio=under, prelaunch_gap_ms=pre, tail_gap_ms=tail,
                          internal_bubble_total_ms=internal, largest_internal_bubble_ms=largest,
                          bubble_count=len(w["bubbles"]), tags=tags, dominant_idle_pattern=pattern,
                          kernel_count=sum(1 for k in ks if k["start"] >= S and (i + 1 == len(wins) or k["start"] < wins[i + 1][1]))))
    # Global gaps (§5.5).
    G = merge([(k["start"], k["start"] + k["dur"]) for k in ks])
    gaps = [(G[i][1], G[i + 1][0]) for i in range(len(G) - 1)]
    top = sorted(gaps, key=lambda g: (-(g[1] - g[0]), g[0]))[:5]
    span = G[-1][1] - G[0][0] if G else D(0)
    busy = sum((e - s for s, e in G), D(0))
    glob = dict(capture_span_ms=float(span / 1000), device_busy_union_ms=float(busy / 1000),
                device_gap_ratio=float((span - busy) / span) if span else 0.0,
                largest_gap_ms=float(max((e - s for s, e in gaps), default=D(0)) / 1000),
                top_gap_ms=[float((e - s) / 1000) for s, e in top],
                top_gap=context(ks, top[0]) if top else None)
    # Wait anchors (§5.12), scope = kernels of the (single) dominant step, or all.
    scope = [k for k in ks if markers and k["start"] >= markers[0]["ts"]] if markers else ks
    ops = {}
    for k in scope:
        o = ops.setdefault(k["name"], {"n": 0, "dur": D(0), "wait": D(0)})
        o["n"] += 1
        o["dur"] += k["dur"]
        o["wait"] += k["wait"]
    rows = []
    for name, o in ops.items():
        da, wa = float(o["dur"]) / o["n"], float(o["wait"]) / o["n"]
        c = da + wa
        rows.append(dict(op_name=name, call_count=o["n"], duration_us_avg=da, wait_us_avg=wa,
                         total_cost_us_avg=c, wait_ratio=(wa / c if c > 0 else 0.0)))
    rows.sort(key=lambda r: (-r["total_cost_us_avg"], -r["call_count"], r["op_name"]))
    for i, r in enumerate(rows):
        r["total_cost_rank"] = i + 1
        r["is_false_hotspot_risk"] = r["wait_ratio"] > 0.95 and r["duration_us_avg"] < 10.0 and i + 1 <= 10
    # communication.json elapse-weighted wait ratio (§1.4, COMM_SYNC_RISK rule b).
    cpath = os.path.join(out_dir, "communication.json")
    wr = None
    if os.path.exists(cpath):
        with open(cpath, encoding="utf-8") as f:
            cj = json.load(f)
        el = ew = 0.0
        for step in cj.values():
            for grp in ("collective", "p2p"):
                g = step.get(grp) or {}
                if isinstance(g, list):
                    continue
                for key, op in g.items():
                    if key == "Total Op Info":
                        continue
                    t = op.get("Communication Time Info", {})
                    el += t.get("Elapse Time(ms)", 0.0)
                    ew += t.get("Elapse Time(ms)", 0.0) * t.get("Wait Time Ratio", 0.0)
        wr = ew / el if el > 0 else None
    json.dump(dict(steps=steps, global_gaps=glob, wait_anchor_top10=rows[:10], comm_wait_ratio_weighted=wr), sys.stdout)


if __name__ == "__main__":
    main()
