#!/usr/bin/env python3
"""HTA 0.5.0's own readings of the real-world GPU traces (`../shared/fixtures/real_world/`), per
rank, for `tests/real_world_exact.rs`: the temporal breakdown, the idle-time breakdown by stream,
the kernel-type breakdown (HTA's exclusive labels, `COMPUTATION overlapping COMMUNICATION` …,
and from them the union per type) and the communication / computation overlap.

Needs HolisticTraceAnalysis==0.5.0 (and pandas 2.2; HTA 0.5.0 fails on pandas 3) in a venv
outside the project:
    python3 -m venv VENV && VENV/bin/pip install HolisticTraceAnalysis==0.5.0 pandas==2.2.3
    VENV/bin/python tests/reference/real_world_hta.py TRACE.json[.gz] | FOLDER
A folder is read as HTA reads it (one trace per rank, the rank from `distributedInfo`); a file
is linked alone into a temporary folder. Run by hand; the numbers are copied into the tests.
"""
import json
import logging
import os
import sys
import tempfile
import warnings

logging.disable(logging.WARNING)
warnings.simplefilter("ignore")
from hta.analyzers.breakdown_analysis import BreakdownAnalysis  # noqa: E402
from hta.trace_analysis import TraceAnalysis  # noqa: E402
from hta.utils.utils import get_kernel_type  # noqa: E402


def main(path):
    if os.path.isdir(path):
        d = path
    else:
        d = tempfile.mkdtemp()
        os.symlink(os.path.abspath(path), os.path.join(d, os.path.basename(path)))
    ta = TraceAnalysis(trace_dir=d)
    tb = ta.get_temporal_breakdown(visualize=False)
    idle, _ = ta.get_idle_time_breakdown(ranks=sorted(ta.t.get_ranks()), visualize=False)
    try:
        overlap = ta.get_comm_comp_overlap(visualize=False)
    except Exception as e:  # no communication kernel: HTA divides by an empty sum
        overlap = None
        print("comm_comp_overlap raised", type(e).__name__, e, file=sys.stderr)
    sym = ta.t.symbol_table.get_sym_table()
    types = ["COMPUTATION", "COMMUNICATION", "MEMORY"]
    for rank in sorted(ta.t.get_ranks()):
        row = tb[tb["rank"] == rank].iloc[0]
        out = {"rank": int(rank), "gpu_time_breakdown": {
            "span_us": int(row["kernel_time(us)"]), "idle_us": int(row["idle_time(us)"]),
            "compute_us": int(row["compute_time(us)"]), "non_compute_us": int(row["non_compute_time(us)"])}}
        streams = {}
        for _, r in idle[idle["rank"] == rank].iterrows():
            s = streams.setdefault(int(r["stream"]), {"stream": int(r["stream"]), "host_wait_us": None,
                                                       "kernel_wait_us": None, "other_us": 0})
            s[r["idle_category"] + "_us"] = int(r["idle_time"])
        out["idle_by_stream"] = [streams[k] for k in sorted(streams)]
        df = ta.t.get_trace(rank)
        k = df[df["stream"].ne(-1)].copy()
        k["kernel_type"] = k["name"].apply(lambda x: get_kernel_type(sym[x]))
        out["kernel_type_counts"] = {t: int((k["kernel_type"] == t).sum()) for t in types + ["OTHER"]}
        out["kernel_type_sum_us"] = {t: int(k.loc[k["kernel_type"] == t, "dur"].sum()) for t in types}
        labels = BreakdownAnalysis._get_gpu_kernel_type_time(k, types)
        out["kernel_type_labels_us"] = {r["kernel_type"]: int(r["sum"]) for _, r in labels.iterrows()}
        out["kernel_type_union_us"] = {t: sum(v for lab, v in out["kernel_type_labels_us"].items()
                                              if t in lab.split(" overlapping ")) for t in types}
        if overlap is not None:
            o = overlap[overlap["rank"] == rank].iloc[0]
            out["comp_comm_overlap_pctg"] = float(o["comp_comm_overlap_pctg"])
        print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1])
