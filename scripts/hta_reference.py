#!/usr/bin/env python3
"""HTA 0.5.0's own temporal and idle-time breakdowns of one Kineto trace, as one JSON line
in the field names of proflens (`gpu_time_breakdown`, `idle_by_stream`; gpu-traces.md §2-§3).

Needs HolisticTraceAnalysis==0.5.0 in a venv outside the project:
    python3 -m venv VENV && VENV/bin/pip install HolisticTraceAnalysis==0.5.0
    VENV/bin/python scripts/hta_reference.py TRACE.json[.gz]

HTA reads a folder, so the trace is linked into a temporary one. Not part of CI (HTA's parse
is slow: minutes at 100k kernels). Phase times go to stderr.
"""
import json
import logging
import os
import sys
import tempfile
import time

logging.disable(logging.WARNING)
from hta.trace_analysis import TraceAnalysis  # noqa: E402


def main(path):
    d = tempfile.mkdtemp()
    os.symlink(os.path.abspath(path), os.path.join(d, os.path.basename(path)))
    t0 = time.time()
    ta = TraceAnalysis(trace_dir=d)
    t1 = time.time()
    rank = ta.t.get_ranks()[0]
    tb = ta.get_temporal_breakdown(visualize=False)
    row = tb[tb["rank"] == rank].iloc[0]
    out = {"gpu_time_breakdown": {
        "span_us": int(row["kernel_time(us)"]), "idle_us": int(row["idle_time(us)"]),
        "compute_us": int(row["compute_time(us)"]), "non_compute_us": int(row["non_compute_time(us)"])}}
    idle, _ = ta.get_idle_time_breakdown(ranks=[rank], visualize=False)
    streams = {}
    for _, r in idle.iterrows():
        s = streams.setdefault(int(r["stream"]), {"stream": int(r["stream"]), "host_wait_us": None,
                                                   "kernel_wait_us": None, "other_us": 0})
        s[r["idle_category"] + "_us"] = int(r["idle_time"])
    out["idle_by_stream"] = [streams[k] for k in sorted(streams)]
    t2 = time.time()
    print(json.dumps(out))
    print(f"HTA parse {t1 - t0:.2f} s, breakdowns {t2 - t1:.2f} s", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1])
