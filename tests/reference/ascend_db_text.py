#!/usr/bin/env python3
"""Rebuilds the text export of a torch_npu rank folder from its DB export, by the rules of the
DB spec (docs/rules/ascend-db.md; the DB spec's section 2), independently of proflens: Python's
sqlite3, every DB opened read-only with `immutable=1`.

    python3 ascend_db_text.py SRC_RANK_DIR DST_RANK_DIR

SRC_RANK_DIR holds ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler[_N].db (and analysis.db);
DST_RANK_DIR gets the profiler_info/metadata JSON copied and ASCEND_PROFILER_OUTPUT/ with
operator_memory.csv, trace_view.json (the cpu_op events with their call stacks, which is what
the DB holds of the host ops), kernel_details.csv, and from analysis.db step_trace_time.csv and
communication.json. Used by tests/ascend_db.rs: proflens must give the same memory rows and step
metrics on the DB folder and on this rebuilt text folder.
"""
import csv
import glob
import json
import os
import re
import shutil
import sqlite3
import sys

NONE_ID = 4294967295


def connect(path):
    return sqlite3.connect("file:%s?immutable=1" % path, uri=True)


def ns2us(ns):
    """torch_npu's convert_ns2us_str: the ns with a '.' before the last 3 digits."""
    ns = int(ns)
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    return "%s%d.%03d" % (sign, ns // 1000, ns % 1000)


def strings(c):
    return {i: v for i, v in c.execute("SELECT id, value FROM STRING_IDS")}


def s(m, i):
    if i is None or i == NONE_ID:
        return ""
    return m.get(i, "")


def columns(c, table):
    return [r[1] for r in c.execute("PRAGMA table_info(%s)" % table)]


def operator_memory(c, m, out):
    cols = columns(c, "OP_MEMORY")
    rows = c.execute("SELECT %s FROM OP_MEMORY ORDER BY rowid" % ", ".join(cols)).fetchall()
    hdr = ["Name", "Size(KB)", "Allocation Time(us)", "Release Time(us)", "Active Release Time(us)",
           "Duration(us)", "Active Duration(us)", "Allocation Total Allocated(MB)",
           "Allocation Total Reserved(MB)", "Allocation Total Active(MB)",
           "Release Total Allocated(MB)", "Release Total Reserved(MB)", "Release Total Active(MB)",
           "Stream Ptr", "Device Type"]
    with open(out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(hdr)
        for r in rows:
            d = dict(zip(cols, r))
            ge = d["allocationTotalActive"] is None and d["streamPtr"] is None
            t = lambda v: "" if v is None else ns2us(v) + "\t"
            if ge:
                mb = lambda b: "" if b is None else repr(round(b / 1024, 3) / 1024)
                w.writerow(["cann::" + s(m, d["name"]), repr(round(d["size"] / 1024, 3)),
                            t(d["allocationTime"]), t(d["releaseTime"]), "",
                            "" if d["duration"] is None else repr(d["duration"] / 1000), "",
                            mb(d["allocationTotalAllocated"]), mb(d["allocationTotalReserved"]), "",
                            mb(d["releaseTotalAllocated"]), mb(d["releaseTotalReserved"]), "",
                            "", "NPU:%d" % d["deviceId"]])
            else:
                mb = lambda b: "" if b is None else repr(b / 1024.0 ** 2)
                w.writerow([s(m, d["name"]), repr(d["size"] / 1024.0), t(d["allocationTime"]),
                            t(d["releaseTime"]), t(d["activeReleaseTime"]), t(d["duration"]),
                            t(d["activeDuration"]), mb(d["allocationTotalAllocated"]),
                            mb(d["allocationTotalReserved"]), mb(d["allocationTotalActive"]),
                            mb(d["releaseTotalAllocated"]), mb(d["releaseTotalReserved"]),
                            mb(d["releaseTotalActive"]), str(d["streamPtr"]),
                            "NPU:%d" % d["deviceId"]])


def swapped(c, m, op):
    """torch_npu <= 6.0.x wrote the dtypes into inputShapes: most non-empty values have letters
    and no digit."""
    vals = [s(m, r[0]) for r in c.execute(
        "SELECT inputShapes FROM PYTORCH_API WHERE type = ? AND inputShapes IS NOT NULL", (op,))]
    vals = [v for v in vals if v]
    if not vals:
        return False
    wordy = sum(1 for v in vals if re.search(r"[A-Za-z]", v) and not re.search(r"\d", v))
    return wordy >= 0.9 * len(vals)


def trace_view(c, m, out):
    op = c.execute("SELECT id FROM ENUM_API_TYPE WHERE name = 'op'").fetchone()
    op = op[0] if op else 50001
    chains = {}
    for cid, depth, st in c.execute(
            "SELECT id, stackDepth, stack FROM PYTORCH_CALLCHAINS ORDER BY id, stackDepth, rowid"):
        chains.setdefault(cid, []).append(s(m, st))
    swap = swapped(c, m, op)
    events = []
    pids = []
    for (start, end, gtid, name, seq, fwd, shapes, dtypes, chain) in c.execute(
            "SELECT startNs, endNs, globalTid, name, sequenceNumber, fwdThreadId, inputShapes, "
            "inputDtypes, callchainId FROM PYTORCH_API WHERE type = ? ORDER BY rowid", (op,)):
        start, end = int(start), int(end)
        pid, tid = gtid >> 32, gtid & 0xFFFFFFFF
        if pid not in pids:
            pids.append(pid)
        args = {"Sequence number": -1 if seq is None else seq,
                "Fwd thread id": 0 if fwd is None else fwd}
        dims, types = (dtypes, shapes) if swap else (shapes, dtypes)
        if dims is not None:
            args["Input Dims"] = s(m, dims)
        if types is not None:
            args["Input type"] = s(m, types)
        if chain is not None and chain in chains:
            args["Call stack"] = ";\r\n".join(chains[chain])
        events.append({"ph": "X", "name": s(m, name), "pid": pid, "tid": tid, "ts": ns2us(start),
                       "dur": (end - start) / 1000, "cat": "cpu_op", "args": args})
    meta = [{"ph": "M", "name": "process_name", "pid": p, "tid": 0, "args": {"name": "Python"}}
            for p in pids]
    with open(out, "w") as f:
        json.dump(meta + events, f)


def kernel_details(c, m, out):
    cti = columns(c, "COMPUTE_TASK_INFO")
    block = "blockNum" if "blockNum" in cti else "blockDim"
    mix = "mixBlockNum" if "mixBlockNum" in cti else "mixBlockDim"
    pmu = {}
    if "TASK_PMU_INFO" in [r[0] for r in c.execute("SELECT name FROM sqlite_master")]:
        for gid, name, val in c.execute("SELECT globalTaskId, name, value FROM TASK_PMU_INFO"):
            pmu.setdefault(gid, {})[s(m, name)] = val
    rows = []
    for r in c.execute(
            "SELECT c.name, c.opType, c.taskType, t.startNs, t.endNs, t.deviceId, t.modelId, "
            "t.taskId, t.streamId, t.contextId, c.%s, c.%s, c.inputShapes, c.globalTaskId "
            "FROM COMPUTE_TASK_INFO c JOIN TASK t ON t.globalTaskId = c.globalTaskId" % (block, mix)):
        name, core = s(m, r[0]), s(m, r[2])
        if core in ("WRITE_BACK", "INVALID", "HCCL_AI_CPU") or (
                core == "COMMUNICATION" and not name.endswith("AivKernel")):
            continue
        p = pmu.get(r[13], {})
        rows.append(dict(name=name, type=s(m, r[1]), core=core, start=r[3], end=r[4], dev=r[5],
                         model=r[6], task=r[7], stream=r[8],
                         ctx="N/A" if r[9] in (None, NONE_ID) else r[9], block=r[10], mix=r[11],
                         shapes=s(m, r[12]), mac=p.get("aic_mac_ratio"),
                         mte2=p.get("aic_mte2_ratio")))
    dev0 = min((r["dev"] for r in rows), default=0)
    for r in c.execute("SELECT opName, opType, startNs, endNs FROM COMMUNICATION_OP"):
        rows.append(dict(name=s(m, r[0]), type=s(m, r[1]), core="HCCL", start=r[2], end=r[3],
                         dev=dev0, model="N/A", task="N/A", stream="N/A", ctx="N/A", block=0,
                         mix="N/A", shapes="N/A", mac=None, mte2=None))
    rows.sort(key=lambda r: (r["dev"], r["start"]))
    # Step Id: STEP_TIME ranges widened to the tasks of the node launches inside them.
    node = c.execute("SELECT id FROM ENUM_API_TYPE WHERE name = 'node'").fetchone()
    node = node[0] if node else 10000
    steps = []
    for sid, a, b in c.execute("SELECT id, startNs, endNs FROM STEP_TIME ORDER BY rowid").fetchall():
        lo, hi = c.execute(
            "SELECT min(k.startNs), max(k.endNs) FROM CANN_API a JOIN TASK k ON "
            "k.connectionId = a.connectionId WHERE a.type = ? AND a.startNs >= ? AND a.endNs <= ?",
            (node, a, b)).fetchone()
        steps.append((sid, a if lo is None else lo, b if hi is None else max(hi, b)))
    prev = {}
    with open(out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["Step Id", "Model ID", "Task ID", "Stream ID", "Name", "Type",
                    "Accelerator Core", "Start Time(us)", "Duration(us)", "Wait Time(us)",
                    "Block Dim", "Mix Block Dim", "Input Shapes", "Context ID", "aic_mac_ratio",
                    "aic_mte2_ratio"])
        for r in rows:
            p = prev.get(r["dev"])
            wait = 0 if p is None else max(0, r["start"] - p[0] - p[1])
            prev[r["dev"]] = (r["start"], r["end"] - r["start"])
            step = next((sid for sid, lo, hi in steps if lo <= r["start"] <= hi), "")
            pm = lambda v: "N/A" if v is None else repr(v)
            w.writerow([step, r["model"], r["task"], r["stream"], r["name"], r["type"], r["core"],
                        ns2us(r["start"]) + "\t", ns2us(r["end"] - r["start"]), ns2us(wait),
                        r["block"], r["mix"], r["shapes"], r["ctx"], pm(r["mac"]), pm(r["mte2"])])


def analysis(src, dst):
    c = connect(src)
    tables = [r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    if "StepTraceTime" in tables:
        cols = columns(c, "StepTraceTime")
        names = [("step", "Step"), ("computing", "Computing"),
                 ("communication_not_overlapped", "Communication(Not Overlapped)"),
                 ("overlapped", "Overlapped"), ("communication", "Communication"), ("free", "Free"),
                 ("stage", "Stage"), ("bubble", "Bubble"),
                 ("communication_not_overlapped_and_exclude_receive",
                  "Communication(Not Overlapped and Exclude Receive)"), ("preparing", "Preparing")]
        names = [n for n in names if n[0] in cols]
        with open(os.path.join(dst, "step_trace_time.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow([n[1] for n in names])
            for r in c.execute("SELECT %s FROM StepTraceTime ORDER BY rowid"
                               % ", ".join('"%s"' % n[0] for n in names)):
                w.writerow([v if isinstance(v, str) else repr(v) for v in r])
    if "CommAnalyzerTime" in tables:
        bw = {}
        if "CommAnalyzerBandwidth" in tables:
            for r in c.execute("SELECT hccl_op_name, group_name, step, type, transport_type, "
                               "transit_size, transit_time, bandwidth, large_packet_ratio "
                               "FROM CommAnalyzerBandwidth ORDER BY rowid"):
                d = bw.setdefault(r[:4], {})
                d.setdefault(r[4], {"Transit Size(MB)": r[5], "Transit Time(ms)": r[6],
                                    "Bandwidth(GB/s)": r[7], "Large Packet Ratio": r[8],
                                    "Size Distribution": {}})
        out = {}
        for r in c.execute("SELECT hccl_op_name, group_name, step, type, start_timestamp, "
                           "elapse_time, transit_time, wait_time, synchronization_time, idle_time "
                           "FROM CommAnalyzerTime ORDER BY rowid"):
            tr, wt, sy = r[6], r[7], r[8]
            ratio = lambda x: 0 if x + tr == 0 else round(x / (x + tr), 4)
            info = {"Start Timestamp(us)": r[4], "Elapse Time(ms)": r[5], "Transit Time(ms)": tr,
                    "Wait Time(ms)": wt, "Synchronization Time(ms)": sy, "Idle Time(ms)": r[9],
                    "Wait Time Ratio": ratio(wt), "Synchronization Time Ratio": ratio(sy)}
            b = {k: {"Transit Size(MB)": 0, "Transit Time(ms)": 0, "Bandwidth(GB/s)": 0,
                     "Large Packet Ratio": 0, "Size Distribution": {}}
                 for k in ("RDMA", "HCCS", "PCIE", "SDMA", "SIO")}
            b.update(bw.get(r[:4], {}))
            out.setdefault(r[2], {}).setdefault(r[3], {})["%s@%s" % (r[0], r[1])] = {
                "Communication Time Info": info, "Communication Bandwidth Info": b}
        with open(os.path.join(dst, "communication.json"), "w") as f:
            json.dump(out, f)


def main(src, dst):
    out_dir = os.path.join(dst, "ASCEND_PROFILER_OUTPUT")
    os.makedirs(out_dir, exist_ok=True)
    for p in glob.glob(os.path.join(src, "profiler_*.json")):
        shutil.copy(p, dst)
    db = [p for p in glob.glob(os.path.join(src, "ASCEND_PROFILER_OUTPUT", "*.db"))
          if re.fullmatch(r"ascend_pytorch_profiler(_\d+)?\.db", os.path.basename(p))][0]
    c = connect(db)
    m = strings(c)
    operator_memory(c, m, os.path.join(out_dir, "operator_memory.csv"))
    trace_view(c, m, os.path.join(out_dir, "trace_view.json"))
    kernel_details(c, m, os.path.join(out_dir, "kernel_details.csv"))
    a = os.path.join(src, "ASCEND_PROFILER_OUTPUT", "analysis.db")
    if os.path.exists(a):
        analysis(a, out_dir)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
