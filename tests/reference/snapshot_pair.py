#!/usr/bin/env python3
"""Two snapshots whose differences are known by construction (issue 13, `proflens diff`),
written by CPython's own pickler.

Usage: snapshot_pair.py OUT_DIR  → OUT_DIR/a.pickle, OUT_DIR/b.pickle

Side A, device 0: alloc 1 MiB at train.py:10 (weights), 2 MiB at :20 (activations), 4 MiB at
:30 (a buffer B no longer makes), free the activations. Global peak 7 MiB (entry 2), end 5 MiB.
Side B: 1 MiB at :10, 3 MiB at :20 (resized), 8 MiB at :40 (new), free the activations.
Global peak 12 MiB (entry 2), end 9 MiB. Device 1 exists on side B only (one 1 MiB tensor).
"""
import os
import pickle
import sys

MIB = 1 << 20


def frames(line, name):
    return [{"filename": "/work/proj/train.py", "line": line, "name": name},
            {"filename": "/work/proj/main.py", "line": 5, "name": "<module>"}]


def alloc(addr, size, line, name):
    return {"action": "alloc", "addr": addr, "size": size, "stream": 0, "frames": frames(line, name)}


def free(addr, size, line, name):
    return {"action": "free_completed", "addr": addr, "size": size, "stream": 0,
            "frames": frames(line, name)}


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


if __name__ == "__main__":
    main(sys.argv[1])
