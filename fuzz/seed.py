#!/usr/bin/env python3
"""Builds the seed corpora of the fuzz targets (fuzz/corpus/<target>/) at run time.

Seeds are small slices of the real fixtures (../shared/fixtures beside the project: the
first lines of a CSV, the first events of a trace re-closed as a valid array, whole small
side files and pickles) plus synthetic inputs made here (snapshot-shaped pickles with
extreme integers). Nothing of this is committed: fuzz/corpus is .gitignored.

Usage: fuzz/seed.py [FIXTURES_DIR] (default: <project>/../shared/fixtures); the output folder is
$FUZZ_CORPUS when set, else fuzz/corpus. Idempotent:
seeds are named by content hash, so rerunning adds nothing new. A missing fixture folder
only costs the real-data seeds; the synthetic ones are always written.
"""
import gzip
import hashlib
import json
import os
import pickle
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIX = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "shared", "fixtures")
# FUZZ_CORPUS: another output folder (the deterministic smoke run seeds a fresh one each time).
CORPUS = os.environ.get("FUZZ_CORPUS") or os.path.join(HERE, "corpus")
MSI = "ascend/Ascend__msinsight"
# Largest trace seed (bytes): small inputs run fast; the fuzzer grows them where it pays.
MAX_TRACE = 6000
RANKS = [
    f"{MSI}/test/data/pytorch/text/level0/rank0_ascend_pt",
    f"{MSI}/test/data/pytorch/text/level1/rank1_ascend_pt",
    f"{MSI}/server/src/test/test_data/test_rank_0",
    "rl_insight/data/recipe/memory_data/20260526_085155_ascend_pt",
]


def put(target, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def read(rel):
    p = os.path.join(FIX, rel)
    try:
        with open(p, "rb") as f:
            return f.read()
    except OSError:
        return None


def head_lines(data, n):
    return b"".join(data.splitlines(keepends=True)[:n])


def first_events(data, n, wrapped=False):
    """The first n events of a trace as a complete, valid trace (bare array or wrapper)."""
    try:
        doc = json.loads(data)
    except ValueError:
        return data[:4096]
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    # Prefer a mix: metadata, cpu_op with call stacks, flows, kernels.
    candidates = events[:n // 2] + [e for e in events if e.get("cat") in ("cpu_op", "fwdbwd")][: n // 2]
    picked, size = [], 0
    for e in candidates:
        size += len(json.dumps(e))
        if size > MAX_TRACE and picked:
            break
        picked.append(e)
    body = {"traceEvents": picked} if wrapped else picked
    return json.dumps(body, separators=(",", ":")).encode()


def rank_file(rank, name):
    return read(f"{rank}/ASCEND_PROFILER_OUTPUT/{name}") or read(f"{rank}/{name}")


def info_file(rank):
    d = os.path.join(FIX, rank)
    if os.path.isdir(d):
        for n in sorted(os.listdir(d)):
            if n.startswith("profiler_info") and n.endswith(".json"):
                return read(f"{rank}/{n}")
    return None


def traces():
    out = []
    for rank in RANKS:
        t = rank_file(rank, "trace_view.json")
        if t is None:
            continue
        out.append(t if len(t) <= 8192 else first_events(t, 40))
        out.append(first_events(t, 12, wrapped=True))
    return out


def csv_seeds(name, lines=25):
    out = []
    for rank in RANKS:
        c = rank_file(rank, name)
        if c:
            out.append(head_lines(c, lines))
    return out


def synthetic_pickles():
    """Snapshot-shaped dicts (torch-snapshot.md §3) with ordinary and extreme integers."""
    out = []
    for big in (1 << 20, (1 << 63) - 1, (1 << 64) - 1, -1):
        frame = {"filename": "train.py", "line": 12, "name": "forward"}
        block = {"size": 512, "requested_size": 500, "address": 4096, "state": "active_allocated",
                 "frames": [frame]}
        seg = {"device": 0, "address": 4096, "total_size": 2 << 20, "allocated_size": 512,
               "active_size": 512, "requested_size": 500, "stream": 0, "segment_type": "small",
               "blocks": [block, {"size": big, "address": 4608, "state": "inactive"}]}
        trace = [
            {"action": "segment_alloc", "addr": 4096, "size": 2 << 20, "stream": 0, "time_us": 1},
            {"action": "alloc", "addr": 4096, "size": 512, "stream": 0, "time_us": 2, "frames": [frame]},
            {"action": "alloc", "addr": 4608, "size": big, "stream": big, "time_us": big, "frames": [frame]},
            {"action": "free_requested", "addr": 4096, "size": 512, "stream": 0, "time_us": 3},
            {"action": "free_completed", "addr": 4096, "size": 512, "stream": 0, "time_us": 4},
        ]
        snap = {"segments": [seg], "device_traces": [trace, trace], "allocator_settings": {"x": 1}}
        for proto in (2, 4):
            out.append(pickle.dumps(snap, protocol=proto))
    return out


HTA = "ascend/facebookresearch__HolisticTraceAnalysis/tests/data"
KINETO = [
    f"{HTA}/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    f"{HTA}/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz",
    f"{HTA}/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz",
    f"{HTA}/cupti_profiler/benchmark_result_924719_1679055439_trace.json.gz",
    f"{HTA}/nccl_parser_config/nccl_data.json.gz",
    f"{HTA}/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
    "rl_insight/data/recipe/torch_data/torch_profile/actor_update/prof_rank-0_031847.json.gz",
]


def kineto_slice(data):
    """A small but complete Kineto trace from a real one: every top-level member but the
    events, and a mix of events (metadata, steps, cpu ops, runtime launches, kernels, memcpy,
    flows, memory counters), so seeds reach every part of the GPU analysis."""
    try:
        doc = json.loads(gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data)
    except (ValueError, OSError, EOFError):
        return None
    events = doc.get("traceEvents", []) if isinstance(doc, dict) else doc
    want = {}
    for e in events:
        key = e.get("ph") if e.get("ph") in ("M", "i", "s", "f") else e.get("cat")
        if len(want.setdefault(key, [])) < 6:
            want[key].append(e)
    picked = [e for group in want.values() for e in group]
    picked.sort(key=lambda e: (e.get("ts") or 0) if isinstance(e.get("ts"), (int, float)) else 0)
    out = {k: v for k, v in doc.items() if k != "traceEvents"} if isinstance(doc, dict) else {}
    out["traceEvents"] = picked
    return json.dumps(out, separators=(",", ":")).encode()


def main():
    for t in traces():
        for chunk in (b"\x00", b"\x07"):
            put("trace_splitter", chunk + t)
            put("trace_host_ops", chunk + t)
        put("trace_timeline", t)
    for c in csv_seeds("operator_memory.csv"):
        put("csv_operator_memory", c)
    kd = csv_seeds("kernel_details.csv")
    op_sum = read(f"ascend/neo-pan__ascend-msprof-skill/tests/fixtures/tilelang_design_feedback/"
                  f"candidate_comparability/missing_raw_index_candidate/reports/app/"
                  f"PROF_000001_20260605161708478_FRJKORBPFMHQMGLA/mindstudio_profiler_output/"
                  f"op_summary_20260605161737.csv")
    if op_sum:
        kd.append(head_lines(op_sum, 25))
    for c in kd:
        put("csv_kernel_details", c)
    for c in csv_seeds("step_trace_time.csv", 100):
        put("csv_step_trace_time", c)
    for rank in RANKS:
        for b in (info_file(rank), read(f"{rank}/profiler_metadata.json")):
            if b:
                put("side_json", b)
        c = rank_file(rank, "communication.json")
        if c and len(c) <= 8192:
            put("side_json", c)
    # Inventory: the relative paths of real fixture trees (names only, no content).
    for tree in (f"{MSI}/test/data/pytorch/text", f"{MSI}/server/src/test/test_data",
                 "rl_insight/data", "ascend/a550580874__rl-insight/data/mstx_data"):
        root = os.path.join(FIX, tree)
        paths = []
        for d, _, files in os.walk(root):
            for n in files:
                paths.append(os.path.relpath(os.path.join(d, n), os.path.dirname(root)))
        if paths:
            put("inventory_paths", ("all\n" + "\n".join(sorted(paths))).encode())
    pickles = synthetic_pickles()
    snaps = os.path.join(FIX, "torch_snapshots")
    if os.path.isdir(snaps):
        for n in sorted(os.listdir(snaps)):
            b = read(f"torch_snapshots/{n}")
            if b and len(b) <= 80_000:
                pickles.append(b)
    for p in pickles:
        put("pickle_decode", p)
        put("snapshot_report", p)
    # Whole rank folders, files joined by NUL (fuzz/src/lib.rs split_files).
    for rank in RANKS:
        tv = rank_file(rank, "trace_view.json")
        tv = first_events(tv, 40) if tv and len(tv) > 8192 else (tv or b"")
        om = head_lines(rank_file(rank, "operator_memory.csv") or b"", 30)
        kd = head_lines(rank_file(rank, "kernel_details.csv") or b"", 30)
        st = rank_file(rank, "step_trace_time.csv") or b""
        cm = rank_file(rank, "communication.json") or b""
        cm = cm if len(cm) <= 8192 else b""
        info = info_file(rank) or b""
        meta = read(f"{rank}/profiler_metadata.json") or b""
        if om:
            mem = b"\x00".join([om, tv, info, meta])
            put("rank_memory", mem)
            put("rank_memory", mem + b"\x00" + mem)
        if kd or tv:
            an = b"\x00".join([kd, tv, st, cm, info])
            put("rank_anomaly", an)
            put("rank_anomaly", an + b"\x00" + an)
    # Ascend DB exports: the profiler DBs of the DB fixtures, whole (≤ 1 MB each).
    dbroot = os.path.join(FIX, "ascend/Ascend__msinsight/test/data/pytorch/db")
    for dirpath, _, names in sorted(os.walk(dbroot)):
        for n in sorted(names):
            if n.startswith("ascend_pytorch_profiler") and n.endswith(".db"):
                with open(os.path.join(dirpath, n), "rb") as f:
                    put("ascend_db", f.read())
    # GPU traces: sliced plain JSON, the same gzipped, whole small gzip files, and pairs.
    kin = []
    for rel in KINETO:
        raw = read(rel)
        if not raw:
            continue
        sl = kineto_slice(raw)
        if sl:
            kin.append(sl)
            put("kineto_rank", gzip.compress(sl, mtime=0))
        if len(raw) <= 30_000:
            put("kineto_rank", raw)
    for k, t in enumerate(kin):
        put("kineto_rank", t)
        put("kineto_rank", t + b"\x00" + kin[(k + 1) % len(kin)])
    # Cluster summaries: our own small one (fixtures/cluster), plain and gzipped.
    summ = os.path.join(HERE, "..", "fixtures", "cluster", "level1.summary.json")
    if os.path.exists(summ):
        with open(summ, "rb") as f:
            b = f.read()
        put("cluster_summary", b)
        put("cluster_summary", gzip.compress(b, mtime=0))
    # Every target gets at least one seed.
    for t in ("trace_splitter", "trace_host_ops", "trace_timeline", "csv_operator_memory",
              "csv_kernel_details", "csv_step_trace_time", "side_json", "inventory_paths",
              "pickle_decode", "snapshot_report", "rank_memory", "rank_anomaly", "kineto_rank",
              "cluster_summary", "ascend_db"):
        put(t, b"")
    counts = {t: len(os.listdir(os.path.join(CORPUS, t))) for t in sorted(os.listdir(CORPUS))}
    print("seed corpora:", ", ".join(f"{t} {n}" for t, n in counts.items()))


if __name__ == "__main__":
    main()
