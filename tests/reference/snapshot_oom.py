#!/usr/bin/env python3
"""A snapshot with a known OOM, written by CPython's pickler.

Usage: snapshot_oom.py OUT.pickle

Trace (stream 0, device 0): segment_alloc of 10 MiB at 0x7f0000000000; ten 1 MiB allocs
filling it; the odd ones freed (free_requested + free_completed); then an `oom` asking
3 MiB with device_free 0. End state: the segment with five 1 MiB blocks allocated, each
followed by 1 MiB inactive. At the OOM: 5 MiB free in the segment, largest 1 MiB, the driver
has nothing: the verdict is fragmentation.
"""
import pickle
import sys

MIB = 1 << 20
BASE = 0x7F0000000000


def frames(line):
    return [{"name": "forward", "filename": "/home/u/proj/model.py", "line": line},
            {"name": "<module>", "filename": "/home/u/proj/train.py", "line": 3}]


def main(out):
    t = 1_700_000_000_000_000
    trace = [{"action": "segment_alloc", "addr": BASE, "size": 10 * MIB, "stream": 0,
              "time_us": t, "frames": frames(1)}]
    for k in range(10):
        t += 10
        trace.append({"action": "alloc", "addr": BASE + k * MIB, "size": MIB, "stream": 0,
                      "time_us": t, "frames": frames(10 + k)})
    for k in range(1, 10, 2):
        for action in ("free_requested", "free_completed"):
            t += 10
            trace.append({"action": action, "addr": BASE + k * MIB, "size": MIB, "stream": 0,
                          "time_us": t, "frames": frames(40)})
    t += 10
    trace.append({"action": "oom", "device_free": 0, "size": 3 * MIB, "stream": 0,
                  "time_us": t, "frames": frames(50)})
    blocks = []
    for k in range(10):
        if k % 2 == 0:
            blocks.append({"address": BASE + k * MIB, "size": MIB, "requested_size": MIB,
                           "state": "active_allocated", "frames": frames(10 + k)})
        else:
            blocks.append({"address": BASE + k * MIB, "size": MIB, "requested_size": 0,
                           "state": "inactive", "frames": []})
    seg = {"device": 0, "address": BASE, "total_size": 10 * MIB, "allocated_size": 5 * MIB,
           "active_size": 5 * MIB, "requested_size": 5 * MIB, "stream": 0,
           "segment_type": "large", "segment_pool_id": (0, 0), "is_expandable": False,
           "frames": frames(1), "blocks": blocks}
    with open(out, "wb") as f:
        pickle.dump({"segments": [seg], "device_traces": [trace]}, f, protocol=4)


if __name__ == "__main__":
    main(sys.argv[1])
