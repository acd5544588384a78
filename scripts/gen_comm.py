#!/usr/bin/env python3
"""Generates the communication files of an N-rank torch_npu capture (benchmarks and tests of
`proflens comm`; docs/rules/communication.md §1): one `rank_<r>_ascend_pt` folder per rank with
`profiler_info_<r>.json`, `profiler_metadata.json` (`parallel_group_info`) and, in
`ASCEND_PROFILER_OUTPUT/`, `communication.json` and `communication_matrix.json` in the 2025+
layout.

Groups: the world group (every rank, `hcom_allReduce`), tensor-parallel groups of `--tp` ranks
(`hcom_allGather`) and p2p pipeline pairs (rank r with r + tp, `hcom_batchSendRecv`). Each
matrix kind has the self link and the ring link of the rank. Times are deterministic (no
randomness): every rank's elapse differs slightly; `--slow-rank R` makes rank R's world ops the
shortest by far (the others wait for it: msprof-analyze's slow-rank vote), `--partial` leaves
the last tensor-parallel op out of the last rank (an op present on some ranks only).

`--sizes` adds a `trace_view.json` per rank holding each op's HCCL event with `count` and
`data_type` (the slow-link rule's data size: FP32, 2,097,152 elements = 8,388,608 bytes).

    python3 scripts/gen_comm.py DIR --ranks 1024 [--steps 2] [--ops 8] [--tp 8]
                                    [--slow-rank R] [--partial] [--sizes]

`--dense PEERS` writes instead a run whose ranks hold only `communication_matrix.json`: one
group spanning every rank, one step, `allreduce-total` links from each rank to PEERS ranks after
it (local rank = global rank), rank 1 left out (a missing rank on the axis); bandwidth falls with
the ring distance and every 97th link is slow. It checks the Communication tab's heatmap at
scale and prints the run's folder (`DIR/dense`):

    python3 scripts/gen_comm.py DIR --ranks 1024 --dense 1024

Standard library only; deterministic (no randomness); never part of the product's logic.
"""
import argparse
import json
import os

TRANSPORTS = ["RDMA", "HCCS", "PCIE", "SDMA", "SIO"]


def double_hash(s):
    """msprof-analyze's group hash (communication.md §1.6)."""
    h0 = h1 = 0
    for c in s:
        h0 = (h0 * 29 + ord(c)) & 0xFFFFFFFF
        h1 = (h1 * 131 + ord(c)) & 0xFFFFFFFF
    return (h0 << 32) | h1


def op_entry(start_us, elapse, transit, wait, sync, size_mb):
    idle = elapse - transit - wait
    bw = {}
    for t in TRANSPORTS:
        if t in ("HCCS", "SDMA"):
            bw[t] = {"Transit Size(MB)": size_mb, "Transit Time(ms)": transit,
                     "Bandwidth(GB/s)": round(size_mb / transit, 4), "Large Packet Ratio": 0.0,
                     "Size Distribution": {} if t == "SDMA" else {str(size_mb): [1, transit]}}
        else:
            bw[t] = {"Transit Size(MB)": 0, "Transit Time(ms)": 0, "Bandwidth(GB/s)": 0,
                     "Large Packet Ratio": 0, "Size Distribution": {}}
    return {
        "Communication Time Info": {
            "Start Timestamp(us)": start_us, "Elapse Time(ms)": elapse,
            "Transit Time(ms)": transit, "Wait Time(ms)": wait,
            "Synchronization Time(ms)": sync, "Idle Time(ms)": idle,
            "Wait Time Ratio": round(wait / (wait + transit), 4),
            "Synchronization Time Ratio": round(sync / (sync + transit), 4),
        },
        "Communication Bandwidth Info": bw,
    }


def link(transport, size, time, op):
    return {"Transport Type": transport, "Transit Size(MB)": size, "Transit Time(ms)": time,
            "Bandwidth(GB/s)": round(size / time, 4), "Op Name": op}


def dense(out, n, peers):
    """The matrix-only run of `--dense` (module doc); returns its folder."""
    group = "10000000000000000001"
    root = os.path.join(out, "dense")
    for r in range(n):
        if r == 1:
            continue
        d = os.path.join(root, f"rank_{r}_ascend_pt")
        os.makedirs(os.path.join(d, "ASCEND_PROFILER_OUTPUT"), exist_ok=True)
        with open(os.path.join(d, f"profiler_info_{r}.json"), "w") as f:
            json.dump({"config": {"common_config": {}}, "rank_id": r}, f)
        links = {}
        for k in range(min(peers, n)):
            dst = (r + k) % n
            size = 16.0 if k else 64.0
            bw = 90.0 if k == 0 else (4.0 if (r * n + dst) % 97 == 0 else 20.0 - (k % 64) / 8)
            links[f"{r}-{dst}"] = {
                "Transport Type": "LOCAL" if k == 0 else "HCCS",
                "Transit Size(MB)": size,
                "Transit Time(ms)": round(size / bw, 6),
                "Bandwidth(GB/s)": bw,
            }
        doc = {"step1": {"collective": {f"allreduce-total@{group}": links}}}
        path = os.path.join(d, "ASCEND_PROFILER_OUTPUT", "communication_matrix.json")
        with open(path, "w") as f:
            json.dump(doc, f, separators=(",", ":"))
    return root


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--ops", type=int, default=8, help="world ops per step")
    ap.add_argument("--tp", type=int, default=8)
    ap.add_argument("--slow-rank", type=int, default=None)
    ap.add_argument("--partial", action="store_true")
    ap.add_argument("--sizes", action="store_true", help="a trace_view.json with each op's size")
    ap.add_argument("--dense", type=int, default=None, metavar="PEERS",
                    help="a matrix-only run for the heatmap (module doc)")
    a = ap.parse_args()
    if a.dense is not None:
        print(dense(a.out, a.ranks, a.dense))
        return
    n, tp = a.ranks, max(1, min(a.tp, a.ranks))
    world = "group_name_0"
    groups = {world: {"group_name": "default_group", "global_ranks": list(range(n))}}
    for g in range(0, n, tp):
        groups[f"group_name_tp{g // tp}"] = {"group_name": "tp",
                                               "global_ranks": list(range(g, min(g + tp, n)))}
    for r in range(n - tp):
        if (r // tp) % 2 == 0:
            groups[f"group_name_pp{r}"] = {"group_name": "pp", "global_ranks": [r, r + tp]}
    member = {r: [] for r in range(n)}
    for gid, g in groups.items():
        for r in g["global_ranks"]:
            member[r].append(gid)
    base_us = 1_764_246_877_000_000.0
    for r in range(n):
        folder = os.path.join(a.out, f"rank_{r}_ascend_pt")
        out = os.path.join(folder, "ASCEND_PROFILER_OUTPUT")
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(folder, f"profiler_info_{r}.json"), "w") as f:
            json.dump({"config": {}, "rank_id": r}, f)
        meta = {gid: dict(groups[gid], group_rank=groups[gid]["global_ranks"].index(r))
                for gid in member[r]}
        with open(os.path.join(folder, "profiler_metadata.json"), "w") as f:
            json.dump({"parallel_group_info": meta}, f)
        comm, matrix, events = {}, {}, []
        for s in range(a.steps):
            step = f"step{s + 1}"
            coll, p2p, mcoll, mp2p = {}, {}, {}, {}
            t = base_us + s * 1e6
            for gid in member[r]:
                g = groups[gid]
                h = str(double_hash(gid))
                ranks = g["global_ranks"]
                local = ranks.index(r)
                nxt = str((local + 1) % len(ranks))
                if gid == world:
                    kind, typ, count = "allreduce", "allReduce", a.ops
                elif g["group_name"] == "tp":
                    kind, typ, count = "allgather", "allGather", max(1, a.ops // 2)
                else:
                    kind, typ, count = "batchsendrecv", "batchSendRecv", 2
                sec, msec = (p2p, mp2p) if kind == "batchsendrecv" else (coll, mcoll)
                for k in range(count):
                    if kind == "allgather" and a.partial and r == n - 1 and k == count - 1:
                        continue
                    name = f"hcom_{typ}__{h[-3:]}_{s * count + k}_1"
                    elapse = 1.0 + (r % 97) * 0.001 + k * 0.01
                    if gid == world and r == a.slow_rank:
                        elapse = 0.05
                    transit = min(0.25, elapse / 2)
                    wait = max(0.0, elapse - transit - 0.05)
                    sec[f"{name}@{h}"] = op_entry(t, elapse, transit, wait, wait * 0.5, 8.388608)
                    events.append({"name": name, "pid": 1, "tid": 0, "ts": f"{t:.3f}",
                                   "dur": elapse * 1000, "ph": "X",
                                   "args": {"data_type": "FP32", "count": 2097152}})
                    t += elapse * 1000 + 10
                for kk in (f"{kind}-top1", f"{kind}-total"):
                    first = f"hcom_{typ}__{h[-3:]}_{s * count}_1"
                    links = {f"{local}-{local}": link("LOCAL", 16.777216, 0.05, first)}
                    if nxt != str(local):
                        links[f"{local}-{nxt}"] = link("HCCS", 8.388608 * count, 0.4 * count, first)
                    msec[f"{kk}@{h}"] = links
            comm[step] = {"p2p": p2p, "collective": coll}
            matrix[step] = {"p2p": mp2p, "collective": mcoll}
        with open(os.path.join(out, "communication.json"), "w") as f:
            json.dump(comm, f)
        with open(os.path.join(out, "communication_matrix.json"), "w") as f:
            json.dump(matrix, f)
        if a.sizes:
            with open(os.path.join(out, "trace_view.json"), "w") as f:
                json.dump(events, f)


if __name__ == "__main__":
    main()
