#!/usr/bin/env python3
"""HTA 0.5.0's own `TraceDiff.compare_traces` on the `trace_diff` fixture pair, written as the
reference of `tests/trace_diff.rs` (gpu-traces.md §5). Not run in CI (needs HTA):

    VENV/bin/python tests/reference/hta_trace_diff.py > tests/reference/hta_trace_diff.json

(VENV: a venv outside the project with HolisticTraceAnalysis==0.5.0.)

Tables: `first_step` = HTA's defaults (first rank, first iteration, DeviceType.ALL, full names);
`third_step` = `control_iteration=1011, test_iteration=1011` (proflens `--step 3`). The full
tables are 432 and 430 rows of long kernel names (150 KB), so each is kept as: its row count,
the column sums, the rows new on B / gone from A, the FNV-1a 64 digest of the whole table
(rows `name\tcontrol_counts\ttest_counts\tcontrol_total_duration\ttest_total_duration\n`
sorted by name, UTF-8; times in µs) and its 12 rows with the largest |Δ duration| (ties by
name), in full.
"""
import json
import logging
import os
import sys

logging.disable(logging.WARNING)
from hta.trace_diff import LabeledTrace, TraceDiff  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PAIR = os.path.join(HERE, "../../../shared/fixtures/ascend/facebookresearch__HolisticTraceAnalysis/tests/data/trace_diff")


def table(comp):
    rows = [[str(n), int(r["control_counts"]), int(r["test_counts"]),
             int(r["control_total_duration"]), int(r["test_total_duration"])]
            for n, r in comp.iterrows()]
    return sorted(rows)


def fnv1a64(text):
    h = 0xCBF29CE484222325
    for b in text.encode("utf-8"):
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def summary(rows):
    return {
        "rows": len(rows),
        "sums": [sum(r[i] for r in rows) for i in range(1, 5)],
        "new": sum(1 for r in rows if r[1] == 0),
        "gone": sum(1 for r in rows if r[2] == 0),
        "fnv1a64": fnv1a64("".join("\t".join(map(str, r)) + "\n" for r in rows)),
        "largest_changes": sorted(rows, key=lambda r: (-abs(r[4] - r[3]), r[0]))[:12],
    }


def main():
    c = LabeledTrace("control", trace_dir=os.path.join(PAIR, "control"))
    t = LabeledTrace("test", trace_dir=os.path.join(PAIR, "test"))
    out = {
        "hta": "0.5.0",
        "command": "VENV/bin/python tests/reference/hta_trace_diff.py",
        "ranks": [c.ranks(), t.ranks()],
        "iterations": [c.iterations(), t.iterations()],
        "first_step": table(TraceDiff.compare_traces(c, t)),
        "third_step": table(TraceDiff.compare_traces(c, t, control_iteration=1011, test_iteration=1011)),
    }
    for k in ["first_step", "third_step"]:
        out[k] = summary(out[k])
    json.dump(out, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
