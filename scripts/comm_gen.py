#!/usr/bin/env python3
"""Generates a run of N Ascend rank folders holding only communication_matrix.json (one group
spanning every rank, one step, `allreduce-total` links from each rank to `--peers` ranks
after it, local rank = global rank), to check the Communication tab's heatmap at scale:

    python3 scripts/comm_gen.py DIR --ranks 1024 --peers 1024

DIR/comm_gen/rank_<r>_ascend_pt/ASCEND_PROFILER_OUTPUT/communication_matrix.json (+ a
profiler_info_<r>.json). Rank 1 is left out, so the axis has a missing rank. Standard library
only; the numbers are deterministic (bandwidth falls with the ring distance; every 97th link is
slow)."""
import argparse
import json
import os

GROUP = "10000000000000000001"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--ranks", type=int, default=1024)
    ap.add_argument("--peers", type=int, default=1024)
    a = ap.parse_args()
    root = os.path.join(a.out, "comm_gen")
    n = a.ranks
    for r in range(n):
        if r == 1:
            continue
        d = os.path.join(root, f"rank_{r}_ascend_pt")
        out = os.path.join(d, "ASCEND_PROFILER_OUTPUT")
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(d, f"profiler_info_{r}.json"), "w") as f:
            json.dump({"config": {"common_config": {}}, "rank_id": r}, f)
        links = {}
        for k in range(min(a.peers, n)):
            dst = (r + k) % n
            size = 16.0 if k else 64.0
            bw = 90.0 if k == 0 else (4.0 if (r * n + dst) % 97 == 0 else 20.0 - (k % 64) / 8)
            links[f"{r}-{dst}"] = {
                "Transport Type": "LOCAL" if k == 0 else "HCCS",
                "Transit Size(MB)": size,
                "Transit Time(ms)": round(size / bw, 6),
                "Bandwidth(GB/s)": bw,
            }
        doc = {"step1": {"collective": {f"allreduce-total@{GROUP}": links}}}
        with open(os.path.join(out, "communication_matrix.json"), "w") as f:
            json.dump(doc, f, separators=(",", ":"))
    print(root)


if __name__ == "__main__":
    main()
