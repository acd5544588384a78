#!/usr/bin/env python3
"""Synthetic snapshots for the fixture gaps of torch-snapshot.md §8.4, written by
CPython's own pickler, plus independent expected values.

Usage: snapshot_synth.py OUT_DIR

Writes OUT_DIR/<name>.pickle and OUT_DIR/<name>.expected.json for each case.
Expected values follow fixtures/torch_snapshots/SOURCES.md (in_window_replay,
memoryviz_like) and torch-snapshot.md §7.2-7.3 (allocated/active curves),
re-implemented here independently of the Rust code.
"""
import json
import os
import pickle
import sys


def frame(f, line, name):
    return {"filename": f, "line": line, "name": name}


def in_window(trace):
    live, total, peak, peak_idx, unmatched = {}, 0, 0, -1, 0
    for i, e in enumerate(trace):
        if e["action"] == "alloc":
            live[e["addr"]] = e["size"]
            total += e["size"]
        elif e["action"] == "free_completed":
            if e["addr"] in live:
                total -= live.pop(e["addr"])
            else:
                unmatched += 1
        if total > peak:
            peak, peak_idx = total, i
    return {"peak_bytes": peak, "peak_event_index": peak_idx, "end_bytes": total,
            "live_at_end": len(live), "unmatched_free_completed": unmatched}


def memoryviz(snap, dev, trace):
    merged, i = [], 0
    while i < len(trace):
        e = trace[i]
        if (e["action"] == "free_requested" and i + 1 < len(trace)
                and trace[i + 1]["action"] == "free_completed" and trace[i + 1]["addr"] == e["addr"]):
            merged.append(dict(e, action="free"))
            i += 2
            continue
        merged.append(e)
        i += 1
    elements, initially, actions, addr_to = [], [], [], {}
    for e in merged:
        if e["action"] == "alloc":
            elements.append(e["size"]); addr_to[e["addr"]] = len(elements) - 1; actions.append(len(elements) - 1)
        elif e["action"] in ("free", "free_completed"):
            if e["addr"] in addr_to:
                actions.append(addr_to.pop(e["addr"]))
            else:
                elements.append(e["size"]); initially.append(len(elements) - 1); actions.append(len(elements) - 1)
    for seg in snap["segments"]:
        if seg["device"] != dev:
            continue
        for b in seg["blocks"]:
            if b["state"] == "active_allocated" and b["address"] not in addr_to:
                elements.append(b["requested_size"]); initially.append(len(elements) - 1)
    n_init = len(initially)
    initially.reverse()
    if not actions and initially:
        actions.append(initially.pop())
    alive = set(initially)
    total = sum(elements[k] for k in initially)
    base, mx = total, total
    for k in actions:
        if k in alive:
            alive.discard(k); total -= elements[k]
        else:
            alive.add(k); total += elements[k]
        mx = max(mx, total)
    return {"baseline_bytes": base, "max_bytes": mx, "end_bytes": total,
            "elements": len(elements), "initially_allocated": n_init}


def curves(snap, dev, trace):
    """§7.2-7.3: PRE records from unmatched frees and unexplained end blocks; allocated drops at
    the first of free_requested/free_completed, active at free_completed."""
    live, alloc_open, pre_sizes = {}, {}, 0
    d_alloc, d_active = [0] * len(trace), [0] * len(trace)
    pending_req = {}
    for i, e in enumerate(trace):
        a, addr = e["action"], e.get("addr")
        if a == "alloc":
            if addr in live:  # lost free
                size, req = live.pop(addr)
                d_active[i] -= size
                if req is None:
                    d_alloc[i] -= size
            live[addr] = (e["size"], None)
            d_alloc[i] += e["size"]; d_active[i] += e["size"]
        elif a == "free_requested":
            if addr in live:
                size, req = live[addr]
                if req is None:
                    live[addr] = (size, i); d_alloc[i] -= size
            else:
                pending_req[addr] = i
        elif a == "free_completed":
            if addr in live:
                size, req = live.pop(addr)
                d_active[i] -= size
                if req is None:
                    d_alloc[i] -= size
            else:
                pre_sizes += e["size"]
                d_active[i] -= e["size"]
                if addr in pending_req:
                    d_alloc[pending_req.pop(addr)] -= e["size"]
                else:
                    d_alloc[i] -= e["size"]
    for seg in snap["segments"]:
        if seg["device"] != dev:
            continue
        for b in seg["blocks"]:
            if b["state"] == "active_allocated" and b["address"] not in live:
                pre_sizes += b["requested_size"]
    out = {}
    for name, d in (("allocated", d_alloc), ("active", d_active)):
        acc, mx, at = pre_sizes, None, None
        for i, x in enumerate(d):
            acc += x
            if mx is None or acc > mx:
                mx, at = acc, i
        out[name] = {"baseline": pre_sizes, "max": mx, "max_index": at, "end": acc}
    return out


def expected(snap):
    devs = []
    for d, trace in enumerate(snap.get("device_traces", [])):
        item = {"device": d, "entries": len(trace)}
        if trace:
            acts = {}
            for e in trace:
                acts[e["action"]] = acts.get(e["action"], 0) + 1
            item.update(actions=acts, streams=len({e["stream"] for e in trace}),
                        in_window_replay=in_window(trace), memoryviz_like=memoryviz(snap, d, trace),
                        curves=curves(snap, d, trace))
        devs.append(item)
    return {"devices": devs}


def block(addr, size, req, state, frames):
    return {"address": addr, "size": size, "requested_size": req, "state": state, "frames": frames}


def segment(device, addr, blocks, stream=0, pool=(0, 0), expandable=False):
    total = sum(b["size"] for b in blocks)
    alloc = sum(b["size"] for b in blocks if b["state"] == "active_allocated")
    return {"device": device, "address": addr, "total_size": total, "allocated_size": alloc,
            "active_size": alloc, "requested_size": alloc, "stream": stream, "segment_type": "large",
            "segment_pool_id": pool, "is_expandable": expandable, "frames": [], "blocks": blocks}


def multi():
    """Two populated devices, two streams with record_stream-style delayed frees, a private pool,
    an OOM, compile_context / user_metadata, FX frames, forward_frames, annotations, big ints."""
    f_user = frame("/home/u/proj/train.py", 42, "step")
    f_model = frame("/home/u/proj/model.py", 7, "forward")
    f_fx = dict(frame("/home/u/proj/model.py", 9, "forward"), fx_node_op="call_function",
                fx_node_name="mm_1", fx_node_target="aten.mm", fx_original_trace="File model.py, line 9")
    f_torch = frame("/opt/conda/lib/python3.11/site-packages/torch/nn/modules/module.py", 1500, "_call_impl")
    s1 = [f_torch, f_model, f_user]   # shared list object
    s2 = [f_fx, f_user]
    big = 2 ** 63 + 4096                # needs a 9-byte LONG1
    t0 = 1_700_000_000_000_000
    def e(action, addr, size, stream=0, frames=s1, t=0, **kw):
        d = {"action": action, "addr": addr, "size": size, "stream": stream, "time_us": t0 + t,
             "frames": frames, "compile_context": "region_a", "user_metadata": "step=3"}
        d.update(kw)
        return d
    dev0 = [
        e("segment_alloc", 0x7000, 8 << 20, t=1),
        e("alloc", 0x7000, 1000, t=2),
        e("alloc", big, 3000, stream=7, frames=s2, t=3, forward_frames=["model.py:9 forward"]),
        e("free_requested", 0x7000, 1000, t=4),
        e("alloc", 0x9000, 5000, t=5),
        e("free_completed", 0x7000, 1000, t=6),
        e("free_requested", big, 3000, stream=7, frames=s2, t=7),
        e("alloc", 0xa000, 2000, stream=7, frames=s2, t=8),
        {"action": "oom", "size": 1 << 40, "stream": 0, "device_free": 1 << 20, "time_us": t0 + 9, "frames": s1},
        e("free_completed", big, 3000, stream=7, frames=s2, t=10),
        e("free_requested", 0x9000, 5000, t=11),
        e("free_completed", 0x9000, 5000, t=12),
        e("free_completed", 0x5000, 700, t=13),   # alloc before the window
    ]
    dev1 = [
        e("alloc", 0x100, 64, t=1, frames=[]),
        e("alloc", 0x200, 128, t=2),
        e("free_requested", 0x100, 64, t=3, frames=[]),
        e("free_completed", 0x100, 64, t=4, frames=[]),
    ]
    snap = {
        "segments": [
            segment(0, 0x7000, [block(0x7000, 2048, 0, "inactive", []), block(0x7800, 2048, 2000, "active_allocated", s2),
                                block(0x8000, 4096, 4000, "active_allocated", s1)], stream=7, pool=(1, 2)),
            segment(1, 0x100, [block(0x100, 512, 0, "inactive", []), block(0x200, 512, 128, "active_allocated", s1)]),
        ],
        "device_traces": [dev0, dev1, []],
        "allocator_settings": {"expandable_segments": False, "max_split_size": -1,
                               "garbage_collection_threshold": 0.0, "roundup_power2_divisions": {"1": 0, "2": 0}},
        "external_annotations": [
            {"name": "ProfilerStep#1", "stage": "START", "device": 0, "time_us": t0 + 0},
            {"name": "Optimizer.step#AdamW.step", "stage": "START", "device": 0, "time_us": t0 + 4},
            {"name": "Optimizer.step#AdamW.step", "stage": "END", "device": 0, "time_us": t0 + 6},
            {"name": "ProfilerStep#1", "stage": "END", "device": 0, "time_us": t0 + 20},
        ],
        "custom_fork_key": {"note": "kept under other fields"},
    }
    return snap


def legacy_list():
    """≤ 1.12: a top-level list of segments whose blocks have only size/state."""
    return [{"device": 0, "address": 4096, "total_size": 2048, "allocated_size": 1024, "active_size": 1024,
             "stream": 0, "segment_type": "small",
             "blocks": [{"size": 1024, "state": "active_allocated"}, {"size": 1024, "state": "inactive"}]}]


def workspace():
    """torch_npu: a leading workspace_snapshot / segment_alloc / alloc triple."""
    fr = [frame("/home/u/proj/npu.py", 3, "run")]
    tr = [
        {"action": "workspace_snapshot", "addr": 0, "size": 0, "stream": 5, "frames": fr},
        {"action": "segment_alloc", "addr": 0x1000, "size": 4096, "stream": 5, "frames": fr},
        {"action": "alloc", "addr": 0x1000, "size": 4096, "stream": 5, "frames": fr},
        {"action": "alloc", "addr": 0x3000, "size": 100, "stream": 5, "frames": fr},
        {"action": "mystery_action", "addr": 0, "size": 0, "stream": 5, "frames": fr},
    ]
    return {"segments": [], "device_traces": [tr]}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    cases = {"multi": (multi(), 4), "multi_p5": (multi(), 5), "multi_p2": (multi(), 2),
             "legacy_list": (legacy_list(), 4), "workspace": (workspace(), 4)}
    for name, (snap, proto) in cases.items():
        with open(os.path.join(out, name + ".pickle"), "wb") as f:
            pickle.dump(snap, f, protocol=proto)
        if isinstance(snap, dict):
            with open(os.path.join(out, name + ".expected.json"), "w") as f:
                json.dump(expected(snap), f)


if __name__ == "__main__":
    main()
