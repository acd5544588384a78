"""The DataFrame functions (docs/frames.md) against the CLI's CSV of the same analysis, cell by
cell: every column's dtype, every text, every float bit for bit, every exact time as integer ns
equal to the CSV's decimal text scaled (stdlib csv + decimal read the CSV; no proflens code)."""
import csv
import gzip
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import warnings
from decimal import Decimal

import pandas as pd
import polars as pl
import pyarrow as pa

import proflens

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FIX = os.path.join(ROOT, "..", "shared", "fixtures")
SAMPLE = os.path.join(ROOT, "fixtures", "sample", "sample_run")
RLI_MEMORY = os.path.join(FIX, "rl_insight", "data", "recipe", "memory_data")
MI300 = os.path.join(FIX, "real_world", "AMD-AGI__TraceLens", "tests", "traces", "mi300",
                     "resnet_act_checkpoint.json.gz")
# The time columns whose CSV text is exact (ns / 10^scale) and whose frame column is int ns.
EXACT = {"matched_op_ts_us": 3, "release_time_ms": 6, "active_release_time_ms": 6,
         "start_us": 3, "end_us": 3, "total_us": 3, "mean_us": 3, "max_us": 3}
LISTS = {"tags", "labels", "candidate_labels", "streams", "annotations", "chain",
         "dominant_anomaly_tags"}
# Integer list columns: the CSV holds the JSON array text (`[0,1]`).
INT_LISTS = {"ranks", "missing"}
SNAP = os.path.join(FIX, "torch_snapshots", "bcrafton_assignment2-systems__memory_snapshot.pickle")
MSINSIGHT = os.path.join(FIX, "ascend", "Ascend__msinsight", "test", "data", "pytorch", "text")
SNAP2 = os.path.join(FIX, "torch_snapshots", "silmont2000_assignment2-systems__mem_snapshot.pickle")
HTA = os.path.join(FIX, "ascend", "facebookresearch__HolisticTraceAnalysis", "tests", "data")


def cli_csv(args):
    p = subprocess.run([proflens.binary(), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       check=True)
    return list(csv.DictReader(io.StringIO(p.stdout.decode("utf-8"))))


def frame_name(col, exact=EXACT):
    if col in exact:
        return col.rsplit("_", 1)[0] + "_ns"
    return col


class FramesAgainstCsv(unittest.TestCase):
    def assert_same(self, df, rows, exact=EXACT):
        self.assertEqual(len(df), len(rows))
        self.assertGreater(len(rows), 0)
        self.assertEqual(list(df.columns), [frame_name(c, exact) for c in rows[0].keys()])
        for col in rows[0].keys():
            name = frame_name(col, exact)
            series = df[name]
            dtype = str(series.dtype)
            for i, r in enumerate(rows):
                text, got = r[col], series.iloc[i]
                where = f"{col} row {i}"
                if col in exact:
                    self.assertIn(dtype, ("int64", "Int64"), where)
                    if text == "":
                        self.assertTrue(pd.isna(got), where)
                    else:
                        self.assertEqual(int(Decimal(text) * 10 ** exact[col]), int(got), where)
                elif col == "call_stack_frames":
                    self.assertEqual(";\r\n".join(got), text, where)
                elif col in INT_LISTS:
                    self.assertEqual([int(x) for x in got], json.loads(text), where)
                elif col in LISTS:
                    got = [] if got is None else list(got)  # a null list is an empty cell
                    self.assertEqual(got, text.split(";") if text else [], where)
                elif dtype == "category":
                    self.assertEqual("" if pd.isna(got) else got, text, where)
                elif dtype in ("int64", "Int64"):
                    self.assertEqual("" if pd.isna(got) else str(int(got)), text, where)
                elif dtype == "float64":
                    if text == "":
                        self.assertTrue(pd.isna(got), where)
                    else:
                        self.assertEqual(got, float(text), where)
                elif dtype in ("bool", "boolean"):
                    self.assertEqual("" if pd.isna(got) else str(bool(got)).lower(), text, where)
                else:
                    self.fail(f"{where}: unexpected dtype {dtype}")

    def test_memory_events_parity_is_the_parity_csv(self):
        df = proflens.memory_events(RLI_MEMORY, parity=True)
        self.assertEqual(list(df.columns), [
            "name", "role", "rank_id", "call_stack", "call_stack_top", "size_kb", "start_time_ms",
            "duration_ms", "total_allocated_mb", "total_reserved_mb", "total_active_mb",
            "device_type"])
        self.assertEqual(str(df["rank_id"].dtype), "int64")
        self.assertEqual(str(df["size_kb"].dtype), "float64")
        self.assertEqual(str(df["name"].dtype), "category")
        self.assert_same(df, cli_csv(["memory", RLI_MEMORY, "--parity", "--format", "csv"]))

    def parity_rows(self, df):
        """The rows of a parity DataFrame as tuples of Python values (None for NaN)."""
        cell = lambda x: None if not isinstance(x, str) and pd.isna(x) else x
        return [tuple(cell(x) for x in r) for r in df.astype(object).itertuples(index=False)]

    def test_parity_frame_is_the_independent_reference_of_rl_insights_rule(self):
        # tests/reference/memory_parity.py: the RL-Insight rule read from the spec (stdlib only);
        # against RL-Insight's own parser: scripts/rl_insight_parity.py (needs rl-insight)
        ref = os.path.join(ROOT, "tests", "reference", "memory_parity.py")
        for path in (RLI_MEMORY, MSINSIGHT):
            p = subprocess.run([sys.executable, ref, path], stdout=subprocess.PIPE, check=True)
            want = []
            for r in csv.DictReader(io.StringIO(p.stdout.decode("utf-8"), newline="")):
                typed = {k: (int(v) if k == "rank_id" else
                             float(v) if k.endswith(("_kb", "_ms", "_mb")) else v)
                         for k, v in r.items()}
                want.append(tuple(typed.values()))
            got = self.parity_rows(proflens.memory_events(path, parity=True))
            self.assertEqual(len(got), len(want), path)
            for i, (x, y) in enumerate(zip(got, want)):
                self.assertEqual(x, y, f"{path} row {i}")

    def test_memory_events_full_columns_with_exact_ns_and_frame_lists(self):
        df = proflens.memory_events(SAMPLE)
        self.assertEqual(str(df["release_time_ns"].dtype), "Int64")
        self.assertEqual(str(df["start_time_ns"].dtype), "int64")
        frames = [f for cell in df["call_stack_frames"] for f in cell]
        self.assertGreater(len(frames), 0)
        self.assertTrue(all(isinstance(f, str) and ";\r\n" not in f for f in frames))
        self.assert_same(df, cli_csv(["memory", SAMPLE, "--format", "csv"]))

    def test_steps_and_bubbles_of_a_gpu_trace_are_the_anomaly_csvs(self):
        st = proflens.steps(MI300)
        self.assertEqual(list(st["step_id"]), ["ProfilerStep#15", "ProfilerStep#16", "ProfilerStep#17"])
        self.assertEqual(str(st["start_ns"].dtype), "int64")
        self.assert_same(st, cli_csv(["anomaly", MI300, "--table", "steps"]))
        bu = proflens.bubbles(MI300)
        self.assert_same(bu, cli_csv(["anomaly", MI300, "--table", "bubbles"]))

    def test_steps_of_ascend_rank_folders(self):
        st = proflens.steps(SAMPLE)
        self.assert_same(st, cli_csv(["anomaly", SAMPLE, "--table", "steps"]))

    def test_kernels_of_gpu_ranks_are_the_kernel_table_csv(self):
        path = os.path.join(HTA, "trace_filter")
        df = proflens.kernels(path)
        self.assertEqual(list(df.columns), [
            "rank_id", "rank_dir", "name", "category", "streams", "count", "total_ns", "mean_ns",
            "max_ns", "share_of_span"])
        self.assertEqual(str(df["total_ns"].dtype), "int64")
        self.assertEqual(str(df["count"].dtype), "int64")
        self.assertEqual(str(df["name"].dtype), "category")
        self.assertEqual(sorted(set(df["rank_id"])), [0, 1])
        rows = cli_csv(["anomaly", path, "--table", "kernels"])
        self.assert_same(df, rows)
        # the per-rank rows are the kernels_*.csv of --report-dir, line for line
        tmp = tempfile.mkdtemp(prefix="proflens-kernels-")
        try:
            subprocess.run([proflens.binary(), "anomaly", path, "--report-dir", tmp],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            with open(os.path.join(tmp, "kernels_trace_filter_rank1.csv"), encoding="utf-8") as f:
                one = list(csv.DictReader(f))
        finally:
            shutil.rmtree(tmp)
        mine = [{k: v for k, v in r.items() if k not in ("rank_id", "rank_dir")}
                for r in rows if r["rank_id"] == "1"]
        self.assertEqual(mine, one)

    def test_kernels_of_ascend_ranks_is_an_empty_table(self):
        df = proflens.kernels(SAMPLE)
        self.assertEqual(len(df), 0)
        self.assertEqual(list(df.columns)[:3], ["rank_id", "rank_dir", "name"])

    def test_gpu_breakdown_tables_are_the_json_gpu_blocks_and_htas_numbers(self):
        path = os.path.join(HTA, "ns_resolution_trace")
        gb = proflens.gpu_breakdown(path)
        tables = {"temporal": "gpu-time", "idle_by_stream": "gpu-idle",
                  "kernel_types": "gpu-kernel-types", "steps": "gpu-steps"}
        for attr, table in tables.items():
            self.assert_same(getattr(gb, attr), cli_csv(["anomaly", path, "--table", table]),
                             exact={})
        self.assertIs(gb.temporal, gb.temporal)
        t, idle, kt, st = gb.temporal, gb.idle_by_stream, gb.kernel_types, gb.steps
        for col in ("span_us", "idle_us", "compute_us", "non_compute_us", "gpu_events_kept"):
            self.assertEqual(str(t[col].dtype), "int64", col)
        self.assertEqual(str(kt["category"].dtype), "category")
        self.assertEqual(str(kt["sum_ms"].dtype), "float64")
        # HTA 0.5.0's own numbers on this trace (tests/gpu_breakdown_golden.rs)
        self.assertEqual([int(t[c].iloc[0]) for c in ("span_us", "idle_us", "compute_us",
                                                       "non_compute_us")],
                         [384634, 10113, 372150, 2371])
        self.assertEqual([int(idle[c].iloc[0]) for c in ("stream", "host_wait_us",
                                                          "kernel_wait_us", "other_us")],
                         [7, 1709, 8404, 0])
        # every cell is the anomaly JSON's gpu block
        p = subprocess.run([proflens.binary(), "anomaly", path], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, check=True)
        ranks = [r for r in json.loads(p.stdout) if "gpu" in r]
        self.assertEqual(len(t), len(ranks))
        si = sk = ss = 0
        for i, r in enumerate(ranks):
            g = r["gpu"]
            self.assertEqual(t["rank_dir"].iloc[i], r["rank_dir"])
            for k, v in g["hta_window"].items():
                self.assertEqual(t[k].iloc[i], v, k)
            for k, v in (g["gpu_time_breakdown"] or {}).items():
                self.assertEqual(t[k].iloc[i], v, k)
            for s in g["idle_by_stream"]:
                for k, v in s.items():
                    got = idle[k].iloc[si]
                    self.assertEqual(None if pd.isna(got) else got, v, k)
                si += 1
            for c in g["kernel_categories"]:
                for k, v in c.items():
                    self.assertEqual(kt[k].iloc[sk], v, k)
                sk += 1
            for s in g["steps"]:
                self.assertEqual(st["step_id"].iloc[ss], s["step_id"])
                for c in s["categories"]:
                    for k in ("count", "sum_ms", "busy_ms"):
                        self.assertEqual(st[f"{c['category']}_{k}"].iloc[ss], c[k])
                for k in ("comm_compute_overlap_ms", "exposed_comm_ms"):
                    self.assertEqual(st[k].iloc[ss], s[k], k)
                ss += 1
        self.assertEqual((si, sk, ss), (len(idle), len(kt), len(st)))
        self.assertGreater(ss, 0)

    def test_structure_is_the_json_structures_of_every_rank(self):
        df = proflens.structure([SAMPLE, MI300])
        self.assertEqual(str(df["start_ns"].dtype), "int64")
        self.assertEqual(str(df["kernel_count"].dtype), "int64")
        self.assertEqual(str(df["opens_with_gap"].dtype), "bool")
        self.assertEqual(str(df["structure_id"].dtype), "category")
        rows = []
        docs = []
        for path in (SAMPLE, MI300):
            rows += cli_csv(["anomaly", path, "--table", "structures"])
            p = subprocess.run([proflens.binary(), "anomaly", path], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, check=True)
            docs += json.loads(p.stdout, parse_float=Decimal)
        self.assert_same(df, rows)
        i = 0
        for r in docs:
            for s in r["structures"]:
                self.assertEqual(df["rank_dir"].iloc[i], r["rank_dir"])
                for k, v in s.items():
                    if k in ("block", "side"):
                        for pk, pv in v.items():
                            if not isinstance(pv, list):
                                got = df[f"{k}_{pk}"].iloc[i]
                                self.assertEqual(got, float(pv) if isinstance(pv, Decimal) else pv,
                                                 f"{k}_{pk} row {i}")
                    elif k in ("start_us", "end_us"):
                        self.assertEqual(int(df[k[:-3] + "_ns"].iloc[i]), int(v * 1000), k)
                    else:
                        got = df[k].iloc[i]
                        got = None if pd.isna(got) else got
                        self.assertEqual(got, float(v) if isinstance(v, Decimal) else v,
                                         f"{k} row {i}")
                i += 1
        self.assertEqual(i, len(df))
        self.assertGreater(i, 0)

    def test_memory_curves_are_the_curves_csv_per_pool(self):
        df = proflens.memory_curves(SAMPLE)
        self.assertEqual(list(df.columns), [
            "rank_id", "role", "source_dir", "pool", "time_ns", "kind", "source_line",
            "allocated_mb", "reserved_mb", "active_mb"])
        self.assertEqual(str(df["time_ns"].dtype), "int64")
        self.assertEqual(str(df["allocated_mb"].dtype), "float64")
        self.assertEqual(set(df["pool"]), {"PTA", "GE"})
        self.assert_same(df, cli_csv(["memory", SAMPLE, "--table", "curves"]),
                         exact={"time_us": 3})
        # an alloc sample carries the totals of its event row (the same analysis, two tables)
        ev = proflens.memory_events(SAMPLE)
        first = df[(df["rank_id"] == 0) & (df["kind"] == "alloc")].iloc[0]
        row = ev[(ev["rank_id"] == 0) & (ev["source_line"] == first["source_line"])].iloc[0]
        self.assertEqual(row["total_allocated_mb"], first["allocated_mb"])
        self.assertEqual(row["start_time_ns"], first["time_ns"])

    def test_snapshot_peaks_are_the_peaks_csv_and_the_json_points(self):
        snap = proflens.snapshot(SNAP, top_n=4)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", proflens.ProflensWarning)  # a truncated recording
            df = snap.peaks
        for col in ("index", "height_bytes", "active_bytes", "live_bytes"):
            self.assertEqual(str(df[col].dtype), "int64", col)
        self.assertEqual(str(df["prominence_bytes"].dtype), "Int64")
        self.assertEqual(str(df["kind"].dtype), "category")
        self.assert_same(df, cli_csv(["snapshot", SNAP, "--top-n", "4", "--table", "peaks"]))
        p = subprocess.run([proflens.binary(), "snapshot", SNAP, "--top-n", "4", "--json", "-"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True)
        points = [(d["device"], pt) for d in json.loads(p.stdout)["devices"] for pt in d["points"]]
        self.assertEqual(len(df), len(points))
        for i, (dev, pt) in enumerate(points):
            self.assertEqual(int(df["device"].iloc[i]), dev)
            for key in ("kind", "index", "time_us", "height_bytes", "allocated_bytes",
                        "active_bytes", "reserved_bytes", "fragmentation_bytes", "live_bytes",
                        "live_tensors", "more_sites", "more_sites_bytes"):
                self.assertEqual(df[key].iloc[i], pt[key], f"{key} row {i}")
            self.assertEqual(list(df["annotations"].iloc[i]), pt["annotations"])
            top = pt["contributors"][0] if pt["contributors"] else None
            got = df["top_site"].iloc[i]
            self.assertEqual(None if pd.isna(got) else got, top["site"] if top else None)

    def test_snapshot_live_set_and_contributors_at_an_entry(self):
        snap = proflens.snapshot(SNAP, top_contributors=3)
        p = subprocess.run([proflens.binary(), "snapshot", SNAP, "--top-contributors", "3",
                            "--json", "-"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           check=True)
        peak = json.loads(p.stdout)["devices"][0]["points"][0]
        at = str(peak["index"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", proflens.ProflensWarning)  # a truncated recording
            live = snap.live_at(peak["index"])
            by_site = snap.contributors(peak["index"], device=0)
        self.assertEqual(str(live["bytes"].dtype), "int64")
        self.assertEqual(str(live["alloc_index"].dtype), "Int64")
        self.assert_same(live, cli_csv(["snapshot", SNAP, "--table", "live", "--entry", at]))
        self.assert_same(by_site, cli_csv(["snapshot", SNAP, "--table", "contributors",
                                           "--entry", at]))
        # the live set is the peak's: its bytes, its tensors, its contributors (all, not 3)
        self.assertEqual(int(live["bytes"].sum()), peak["live_bytes"])
        self.assertEqual(len(live), peak["live_tensors"])
        self.assertEqual(int(by_site["tensors"].sum()), peak["live_tensors"])
        self.assertEqual(len(by_site), len(peak["contributors"]) + peak["more_sites"])
        for i, c in enumerate(peak["contributors"]):
            self.assertEqual(by_site["site"].iloc[i], c["site"])
            self.assertEqual(by_site["bytes"].iloc[i], c["bytes"])
            self.assertEqual(by_site["percent"].iloc[i], c["percent_of_point"])

    def test_snapshot_curves_are_the_curves_csv(self):
        snap = proflens.snapshot(SNAP)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", proflens.ProflensWarning)  # a truncated recording
            df = snap.curves
            peaks = snap.peaks
        for col in ("entry", "time_us", "allocated_bytes", "active_bytes", "reserved_bytes"):
            self.assertEqual(str(df[col].dtype), "int64", col)
        self.assertEqual(list(df["entry"][:3]), [0, 1, 2])
        self.assert_same(df, cli_csv(["snapshot", SNAP, "--table", "curves"]))
        # the peak's entry carries the peak's level
        g = peaks[peaks["kind"] == "global_peak"].iloc[0]
        self.assertEqual(df["active_bytes"].iloc[int(g["index"])], g["active_bytes"])
        self.assertIs(snap.curves, df)

    def test_snapshot_of_a_list_of_paths_is_one_table_with_a_file_column(self):
        snap = proflens.snapshot([SNAP, SNAP2], top_n=3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", proflens.ProflensWarning)  # a truncated recording
            peaks, curves = snap.peaks, snap.curves
            one = [proflens.snapshot(p, top_n=3).peaks for p in (SNAP, SNAP2)]
            live = snap.live_at(int(one[1]["index"].iloc[0]), file=SNAP2)
            alone = proflens.snapshot(SNAP2).live_at(int(one[1]["index"].iloc[0]))
        self.assertEqual(list(peaks.columns), ["file"] + list(one[0].columns))
        self.assertEqual(str(peaks["file"].dtype), "category")
        self.assertEqual(str(curves["allocated_bytes"].dtype), "int64")
        for path, df in zip((SNAP, SNAP2), one):
            mine = peaks[peaks["file"] == path].drop(columns="file").reset_index(drop=True)
            self.assertEqual(len(mine), len(df))
            self.assertGreater(len(df), 0)
            cell = lambda x: list(x) if not isinstance(x, str) and hasattr(x, "__len__") else (
                None if pd.isna(x) else x)
            for col in df.columns:
                self.assertEqual([cell(x) for x in mine[col]], [cell(x) for x in df[col]], col)
            rows = cli_csv(["snapshot", path, "--table", "curves"])
            self.assertEqual(int((curves["file"] == path).sum()), len(rows))
        self.assertEqual(set(live["file"]), {SNAP2})
        self.assertEqual(list(live["bytes"]), list(alone["bytes"]))
        with self.assertRaises(proflens.ProflensError):
            snap.live_at(0)

    def diff_json(self, a, b, *extra):
        p = subprocess.run([proflens.binary(), "diff", a, b, "--json", "-", *extra],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True)
        return json.loads(p.stdout)

    def assert_rows(self, df, objs, columns=None):
        self.assertEqual(len(df), len(objs))
        for i, o in enumerate(objs):
            for k in columns or df.columns:
                got = df[k].iloc[i]
                self.assertEqual(None if pd.isna(got) else got, o.get(k), f"{k} row {i}")

    def test_diff_of_two_traces_is_the_json_ops_and_steps(self):
        d = os.path.join(HTA, "trace_diff")
        a, b = os.path.join(d, "control", "control.json.gz"), os.path.join(d, "test", "test.json.gz")
        diff = proflens.diff(a, b, step=2)
        ops, steps = diff.ops, diff.steps
        self.assertEqual(list(ops.columns), ["name", "a_count", "b_count", "delta_count",
                                             "a_time_us", "b_time_us", "delta_time_us", "change"])
        self.assertEqual(str(ops["a_count"].dtype), "int64")
        self.assertEqual(str(ops["delta_time_us"].dtype), "float64")
        self.assertEqual(str(ops["change"].dtype), "category")
        self.assert_same(ops, cli_csv(["diff", a, b, "--step", "2", "--table", "ops"]))
        self.assert_same(steps, cli_csv(["diff", a, b, "--step", "2", "--table", "steps"]))
        doc = self.diff_json(a, b, "--step", "2")
        self.assertEqual(doc["ops_steps"]["mode"], "nth")
        self.assert_rows(ops, doc["ops"])
        self.assert_rows(steps, doc["steps"])
        self.assertGreater(len(ops), 0)
        self.assertGreater(len(steps), 0)
        with self.assertRaises(proflens.ProflensError):
            diff.sites

    def test_diff_of_two_snapshots_is_the_json_sites(self):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", proflens.ProflensWarning)  # a truncated recording
            sites = proflens.diff(SNAP, SNAP2).sites
        self.assertEqual(str(sites["delta_bytes"].dtype), "int64")
        self.assertEqual(str(sites["b_device"].dtype), "Int64")
        self.assert_same(sites, cli_csv(["diff", SNAP, SNAP2, "--table", "sites"]))
        doc = self.diff_json(SNAP, SNAP2)
        want = [dict(s, device=d["device"], b_device=d.get("b_device"), at=at)
                for d in doc["devices"]
                for at, key in (("peak", "sites_at_peak"), ("end", "sites_at_end"))
                for s in d[key]]
        self.assert_rows(sites, want)
        self.assertEqual(set(sites["at"]), {"peak", "end"})

    def test_cluster_ranks_are_the_summary_ranks(self):
        tmp = tempfile.mkdtemp(prefix="proflens-cluster-")
        try:
            run = lambda *a: subprocess.run([proflens.binary(), *a], stdout=subprocess.PIPE,
                                            stderr=subprocess.DEVNULL, check=True).stdout
            targets = json.loads(run("targets", SAMPLE, "--json"))
            part, summary = os.path.join(tmp, "part.jsonl"), os.path.join(tmp, "summary.json")
            run("summarize", "--root", targets[0]["root"],
                *[p for t in targets for p in t["paths"]], "--out", part)
            run("reduce", part, "--out", summary, "--gzip")
            df = proflens.cluster_ranks(summary)
            rows = cli_csv(["cluster-ranks", summary])
            with gzip.open(summary, "rt", encoding="utf-8") as f:
                doc = json.load(f)
        finally:
            shutil.rmtree(tmp)
        self.assertEqual(str(df["peak_time_ns"].dtype), "Int64")
        self.assertEqual(str(df["slow"].dtype), "boolean")
        self.assertEqual(str(df["status"].dtype), "category")
        self.assert_same(df, rows)
        self.assertEqual(len(df), len(doc["ranks"]))
        self.assertIn("snapshot", set(df["kind"]))
        cross = {x["rank_index"]: x for x in doc["cross_rank"]}
        for i, r in enumerate(doc["ranks"]):
            self.assertEqual(df["target"].iloc[i], r["target"])
            a, m = r["anomaly"], r["memory"]
            got = df["service_ms_avg"].iloc[i]
            self.assertEqual(None if pd.isna(got) else got, a and a["service_ms_avg"])
            got = df["peak_time_ns"].iloc[i]
            self.assertEqual(None if pd.isna(got) else int(got), m and m["peak_time_ns"])
            got = df["robust_z"].iloc[i]
            want = cross[i]["robust_z"] if i in cross else None
            self.assertEqual(None if pd.isna(got) else got, want)

    def test_comm_tables_are_the_comm_csvs(self):
        # Floats (µs included) stay float columns here: no exact-time column.
        st = os.path.join(FIX, "ascend", "Ascend__msinsight", "test", "st", "level2")
        c = proflens.comm(st)
        for attr, table in (("time", "time"), ("bandwidth", "bandwidth"), ("matrix", "matrix"),
                            ("matrix_by_kind", "matrix-by-kind")):
            self.assert_same(getattr(c, attr), cli_csv(["comm", st, "--table", table]), exact={})
        self.assertEqual(len(c.time), 17)
        self.assertEqual(str(c.time["rank"].dtype), "int64")
        self.assertEqual(str(c.time["group"].dtype), "category")
        self.assertEqual(str(c.matrix["mapped_from_metadata"].dtype), "bool")
        # communication.md §5.1: rank 1 of the default group.
        r = c.time[(c.time["rank"] == 1) & (c.time["group"] == "5862276093215481612")].iloc[0]
        self.assertEqual((r["wait_ratio"], r["sync_ratio"]), (0.9972, 0.9942))
        # communication.md §5.1: MindStudio Insight's slow rank list.
        msi = c.msi_slow_ranks
        self.assert_same(msi, cli_csv(["comm", st, "--table", "msi-slow-ranks"]), exact={})
        r = msi[msi["group"] == "5862276114690318097"].iloc[0]
        self.assertEqual((r["fast_rank"], r["rank"], r["diff_us"]), (1, 0, 11367.9))
        # A slow link, each op's data size read from trace_view.json (communication.md §5.5).
        sl = proflens.comm(os.path.join(ROOT, "fixtures", "comm_slow_link")).slow_links
        self.assertEqual(list(sl["name"]), ["hcom_allReduce_2_1024"])
        self.assertEqual((int(sl["count"].iloc[0]), sl["offset_ratio"].iloc[0]),
                         (24, 3.2467932897963596))
        parity = proflens.comm(st, parity=True, step=13)
        self.assertEqual(len(parity.dropped_links), 36)
        self.assert_same(parity.dropped_links,
                         cli_csv(["comm", st, "--parity", "--step", "13", "--table", "dropped"]),
                         exact={})
        # GPU: TraceLens' NCCL collectives (communication.md §5.6).
        nccl = os.path.join(HTA, "nccl_parser_config", "nccl_data.json.gz")
        coll = proflens.comm(nccl).collectives
        self.assertEqual(len(coll), 15)
        self.assert_same(coll, cli_csv(["comm", nccl, "--table", "collectives"]), exact={})
        # Generated: a slow rank (Dixon) and an op some ranks lack.
        tmp = tempfile.mkdtemp(prefix="proflens-comm-")
        try:
            subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen_comm.py"), tmp,
                            "--ranks", "16", "--slow-rank", "5", "--partial"], check=True)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", proflens.ProflensWarning)  # COMM-OP-001
                g = proflens.comm(tmp)
                slow, partial, links = g.slow_ranks, g.partial_ops, g.slow_links
            self.assertEqual(set(slow["rank"]), {5})
            self.assertEqual(set(slow["test"]), {"dixon"})
            self.assert_same(slow, cli_csv(["comm", tmp, "--table", "slow-ranks"]), exact={})
            self.assert_same(partial, cli_csv(["comm", tmp, "--table", "partial-ops"]), exact={})
            self.assertEqual(list(partial["missing"].iloc[0]), [15])
            # No data size in communication.json: the slow-link table is empty, typed.
            head = subprocess.run([proflens.binary(), "comm", tmp, "--table", "slow-links"],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  check=True).stdout.decode().splitlines()
            self.assertEqual(list(links.columns), head[0].split(","))
            self.assertEqual(len(links), 0)
        finally:
            shutil.rmtree(tmp)

    def test_polars_and_arrow_backends_hold_the_same_table(self):
        t = proflens.steps(MI300, backend="arrow")
        self.assertIsInstance(t, pa.Table)
        self.assertEqual(t.schema.field("start_ns").type, pa.int64())
        self.assertEqual(t.schema.field("step_id").type, pa.dictionary(pa.int32(), pa.string()))
        p = proflens.steps(MI300, backend="polars")
        self.assertIsInstance(p, pl.DataFrame)
        self.assertEqual(p.shape, (t.num_rows, t.num_columns))
        self.assertEqual(p["start_ns"].to_list(), t.column("start_ns").to_pylist())

    def test_a_list_of_paths_is_one_table(self):
        one = proflens.memory_events(RLI_MEMORY, parity=True)
        two = proflens.memory_events([RLI_MEMORY, RLI_MEMORY], parity=True)
        self.assertEqual(len(two), 2 * len(one))
        self.assertEqual(list(two["size_kb"]), list(one["size_kb"]) * 2)


class FramesProblems(unittest.TestCase):
    def test_problems_arrive_as_warnings_and_a_table(self):
        tmp = tempfile.mkdtemp(prefix="proflens-frames-")
        try:
            rank = os.path.join(tmp, "rank0_ascend_pt")
            shutil.copytree(os.path.join(SAMPLE, "rank0_ascend_pt"), rank)
            mem = os.path.join(rank, "ASCEND_PROFILER_OUTPUT", "operator_memory.csv")
            with open(mem, "a", encoding="utf-8") as f:
                f.write("broken,row\n")
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                df = proflens.memory_events(tmp)
            mine = [w for w in caught if issubclass(w.category, proflens.ProflensWarning)]
            self.assertGreater(len(mine), 0)
            first = mine[0].message.args[0]
            self.assertTrue(first.file.endswith("operator_memory.csv"), first.file)
            self.assertIsNotNone(first.line)
            self.assertEqual(df.attrs["problems"][0]["code"], first.code)
            table = proflens.last_problems()
            self.assertEqual(list(table.columns),
                             ["severity", "code", "file", "line", "byte", "column", "message"])
            self.assertEqual(len(table), len(mine))
        finally:
            shutil.rmtree(tmp)

    def test_nothing_analysed_raises_with_the_clis_words(self):
        with self.assertRaises(proflens.ProflensError) as e:
            proflens.steps(os.path.join(tempfile.gettempdir(), "proflens-no-such-folder"))
        self.assertIn("cannot read", str(e.exception))


if __name__ == "__main__":
    unittest.main()
