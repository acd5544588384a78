#!/usr/bin/env python3
"""Two snapshots whose differences are known by construction (`proflens diff`),
written by CPython's own pickler.

Usage: snapshot_pair.py OUT_DIR  → OUT_DIR/{a,b,c,d}.pickle

Side A, device 0: alloc 1 MiB at train.py:10 (weights), 2 MiB at :20 (activations), 4 MiB at
:30 (a buffer B no longer makes), free the activations. Global peak 7 MiB (entry 2), end 5 MiB.
Side B: 1 MiB at :10, 3 MiB at :20 (resized), 8 MiB at :40 (new), free the activations.
Global peak 12 MiB (entry 2), end 9 MiB. Device 1 exists on side B only (one 1 MiB tensor).

Pair c/d: timed entries (time_us = T0 + ms·1000) inside two annotations, "warmup" and
"step", for the matched peaks and the aligned curves. Every entry keeps 1 MiB of weights
(train.py:10) and makes one peak by allocating and freeing one tensor:
C: entries at ms 1..3 (warmup, ms 0–5): weights, +4 MiB at :60, free; at ms 6..9 (step, from
ms 5): +2 MiB at :61, free, +6 MiB at :62, free. Peaks: entry 1 (5 MiB, warmup), 3 (3 MiB,
step), 5 (7 MiB, step, global).
D: warmup lasts to ms 20: weights, +5 MiB at :60, free, a 1 KiB blip at :65 (no peak), free;
step from ms 20: +2 MiB at :61, free, +8 MiB at :62, free, +3 MiB at :63 (a new peak), free.
Peaks: entry 1 (6 MiB, warmup), 5 (3 MiB), 7 (9 MiB, global), 9 (4 MiB), all in step.
"""
import os
import pickle
import sys

MIB = 1 << 20


def frames(line, name):
    return [{"filename": "/home/u/proj/train.py", "line": line, "name": name},
            {"filename": "/home/u/proj/main.py", "line": 5, "name": "<module>"}]


T0 = 1_700_000_000_000_000


def alloc(addr, size, line, name, ms=None):
    e = {"action": "alloc", "addr": addr, "size": size, "stream": 0, "frames": frames(line, name)}
    if ms is not None:
        e["time_us"] = T0 + ms * 1000
    return e


def free(addr, size, line, name, ms=None):
    e = alloc(addr, size, line, name, ms)
    e["action"] = "free_completed"
    return e


def ann(name, stage, ms):
    return {"name": name, "stage": stage, "device": 0, "time_us": T0 + ms * 1000}


def timed(base, warmup_end, warm, step):
    """Weights at ms 1, then `warm` and `step` lists of (addr offset, size, line, name, ms)."""
    out = [alloc(base, MIB, 10, "build", 1)]
    for off, size, line, name, ms in warm + step:
        out.append(alloc(base + off, size, line, name, ms))
        out.append(free(base + off, size, line, name, ms + 1))
    anns = [ann("warmup", "START", 0), ann("warmup", "END", warmup_end),
            ann("step", "START", warmup_end), ann("step", "END", 100)]
    return {"segments": [], "device_traces": [out], "external_annotations": anns}


def main(out):
    os.makedirs(out, exist_ok=True)
    base = 0x7f0000000000
    a = [alloc(base, MIB, 10, "build"), alloc(base + MIB, 2 * MIB, 20, "forward"),
         alloc(base + 3 * MIB, 4 * MIB, 30, "scratch"), free(base + MIB, 2 * MIB, 20, "forward")]
    b = [alloc(base, MIB, 10, "build"), alloc(base + MIB, 3 * MIB, 20, "forward"),
         alloc(base + 4 * MIB, 8 * MIB, 40, "cache"), free(base + MIB, 3 * MIB, 20, "forward")]
    b1 = [alloc(base, MIB, 50, "other")]
    for name, traces in (("a", [a]), ("b", [b, b1])):
        with open(os.path.join(out, f"{name}.pickle"), "wb") as f:
            pickle.dump({"segments": [], "device_traces": traces}, f, protocol=4)
    c = timed(base, 5, [(MIB, 4 * MIB, 60, "warm", 2)],
              [(MIB, 2 * MIB, 61, "fwd", 6), (MIB, 6 * MIB, 62, "bwd", 8)])
    d = timed(base, 20, [(MIB, 5 * MIB, 60, "warm", 2), (MIB, 1024, 65, "blip", 4)],
              [(MIB, 2 * MIB, 61, "fwd", 21), (MIB, 8 * MIB, 62, "bwd", 23),
               (MIB, 3 * MIB, 63, "extra", 25)])
    for name, snap in (("c", c), ("d", d)):
        with open(os.path.join(out, f"{name}.pickle"), "wb") as f:
            pickle.dump(snap, f, protocol=4)


if __name__ == "__main__":
    main(sys.argv[1])
