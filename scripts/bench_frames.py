#!/usr/bin/env python3
"""Memory events into a DataFrame vs the CLI's CSV vs RL-Insight's parser, side by side
(docs/perf/README.md, "DataFrames"). Alternates the contenders run by run (A B A B …) and
prints one JSON line per run and the median ratios.

    target/pyenv/bin/python scripts/bench_frames.py FOLDER [--runs 3]
        [--rl-insight REPO --rl-insight-python VENV/bin/python]

FOLDER: a run root or rank folder (e.g. from ../shared/bench/gen_ascend.py --trace-mb 200).
The DataFrame is timed inside this process with pandas / pyarrow already imported, as in a
notebook; the CSV as the whole `proflens memory --format csv --out FILE` process.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import pandas  # noqa: F401  (imported before timing, as a notebook has it)
import pyarrow  # noqa: F401

import proflens


def csv_run(folder, out):
    t = time.perf_counter()
    subprocess.run([proflens.binary(), "memory", folder, "--format", "csv", "--quiet",
                    "--out", out], check=True, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def frame_run(folder):
    t = time.perf_counter()
    df = proflens.memory_events(folder)
    return time.perf_counter() - t, len(df)


def rl_insight_run(py, repo, folder):
    here = os.path.dirname(os.path.abspath(__file__))
    script = os.path.join(here, "..", "..", "shared", "bench", "bench_rl_insight.py")
    p = subprocess.run([py, script, "--repo", repo, folder], check=True,
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return json.loads(p.stdout.decode().strip().splitlines()[-1])["wall_s"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("folder")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--rl-insight")
    ap.add_argument("--rl-insight-python")
    a = ap.parse_args()
    out = os.path.join(tempfile.mkdtemp(prefix="proflens-bench-"), "events.csv")
    csv_t, df_t, rli_t = [], [], []
    for i in range(a.runs):
        c = csv_run(a.folder, out)
        d, rows = frame_run(a.folder)
        line = {"run": i, "csv_s": round(c, 3), "dataframe_s": round(d, 3), "rows": rows}
        csv_t.append(c)
        df_t.append(d)
        if a.rl_insight:
            r = rl_insight_run(a.rl_insight_python or sys.executable, a.rl_insight, a.folder)
            rli_t.append(r)
            line["rl_insight_s"] = r
        print(json.dumps(line), flush=True)
    summary = {
        "csv_s": round(statistics.median(csv_t), 3),
        "dataframe_s": round(statistics.median(df_t), 3),
        "dataframe_over_csv": round(statistics.median(df_t) / statistics.median(csv_t), 3),
    }
    if rli_t:
        summary["rl_insight_s"] = round(statistics.median(rli_t), 3)
        summary["dataframe_over_rl_insight"] = round(statistics.median(df_t) / statistics.median(rli_t), 3)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
