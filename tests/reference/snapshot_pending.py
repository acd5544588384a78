#!/usr/bin/env python3
"""A state-only snapshot shaped like a real RL one (allocator state, no history;
68 private pools; 9 `active_pending_free` blocks holding 597 MB), written by CPython's
pickler, with its expected levels computed here.

Usage: snapshot_pending.py OUT_DIR → OUT_DIR/rl_state.pickle, OUT_DIR/rl_state.expected.json

Each private pool (1, k) has one 64 MiB segment on stream 7 (a side stream, like an RL
rollout's CUDA graph pools): an allocated block, and for k < 9 a pending-free block (freed
by the model, waiting on the stream's events, `record_stream`), the rest inactive. The
default pool has one 20 MiB segment with a 2 MiB allocated block.
"""
import json
import os
import pickle
import sys

MIB = 1 << 20


def frames(line):
    return [{"name": "generate", "filename": "/home/u/rl/rollout.py", "line": line},
            {"name": "<module>", "filename": "/home/u/rl/main.py", "line": 3}]


def main(out):
    os.makedirs(out, exist_ok=True)
    segs = []
    allocated = active = requested_active = requested_alloc = 0
    pending_bytes = pending_blocks = 0
    base = 0x7e0000000000
    # 9 pending blocks summing to 597 MB (597,000,000 bytes requested, rounded to 512).
    pend_req = [66_333_333] * 8 + [597_000_000 - 8 * 66_333_333]
    for k in range(68):
        addr = base + k * 64 * MIB
        a_size = (k + 1) * 65536
        blocks = [{"address": addr, "size": a_size, "requested_size": a_size - 100,
                   "state": "active_allocated", "frames": frames(10 + k)}]
        used = a_size
        alloc_size = a_size
        act = a_size
        if k < 9:
            req = pend_req[k]
            size = -(-req // 512) * 512
            blocks.append({"address": addr + used, "size": size, "requested_size": req,
                           "state": "active_pending_free", "frames": frames(200 + k)})
            used += size
            act += size
            pending_bytes += req
            pending_blocks += 1
            requested_active += req
        blocks.append({"address": addr + used, "size": 64 * MIB - used, "requested_size": 0,
                       "state": "inactive", "frames": []})
        requested_alloc += a_size - 100
        requested_active += a_size - 100
        allocated += alloc_size
        active += act
        segs.append({"device": 0, "address": addr, "total_size": 64 * MIB,
                     "allocated_size": alloc_size, "active_size": act,
                     "requested_size": sum(b["requested_size"] for b in blocks),
                     "stream": 7, "segment_type": "large", "segment_pool_id": (1, k),
                     "is_expandable": False, "frames": [], "blocks": blocks})
    addr = base + 68 * 64 * MIB
    segs.append({"device": 0, "address": addr, "total_size": 20 * MIB,
                 "allocated_size": 2 * MIB, "active_size": 2 * MIB, "requested_size": 2 * MIB,
                 "stream": 0, "segment_type": "large", "segment_pool_id": (0, 0),
                 "is_expandable": False, "frames": [],
                 "blocks": [{"address": addr, "size": 2 * MIB, "requested_size": 2 * MIB,
                             "state": "active_allocated", "frames": frames(5)},
                            {"address": addr + 2 * MIB, "size": 18 * MIB, "requested_size": 0,
                             "state": "inactive", "frames": []}]})
    requested_alloc += 2 * MIB
    requested_active += 2 * MIB
    snap = {"segments": segs, "device_traces": [[]],
            "allocator_settings": {"expandable_segments": False}}
    with open(os.path.join(out, "rl_state.pickle"), "wb") as f:
        pickle.dump(snap, f, protocol=4)
    exp = {"allocated_requested": requested_alloc, "active_requested": requested_active,
           "pending_requested": pending_bytes, "pending_blocks": pending_blocks,
           "private_pools": 68, "reserved": sum(s["total_size"] for s in segs)}
    with open(os.path.join(out, "rl_state.expected.json"), "w") as f:
        json.dump(exp, f)


if __name__ == "__main__":
    main(sys.argv[1])
