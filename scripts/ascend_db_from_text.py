#!/usr/bin/env python3
"""Writes the DB export of a torch_npu rank folder from its text export, by the inverse of the
rules in docs/rules/ascend-db.md: `ascend_pytorch_profiler_<rank>.db` with the tables proflens
reads (STRING_IDS, ENUM_API_TYPE, OP_MEMORY, PYTORCH_API, PYTORCH_CALLCHAINS, STEP_TIME, TASK,
COMPUTE_TASK_INFO, COMMUNICATION_OP), in the 2025 torch_npu column order. For benchmarks: the
generators (examples/memory_gen, examples/anomaly_gen) write text rank folders; this gives the
DB export of the same content, so the two paths can be timed on the same run.

    python3 scripts/ascend_db_from_text.py SRC_RANK_DIR DST_RANK_DIR

Reads SRC/ASCEND_PROFILER_OUTPUT/{operator_memory.csv, trace_view.json, kernel_details.csv}
(each optional) and copies the profiler_*.json files. Python standard library only; the
trace is read whole (json), so it needs memory of a few times its size.
"""
import csv
import glob
import json
import os
import re
import shutil
import sqlite3
import sys
from decimal import Decimal

OP = 50001


def us_to_ns(cell):
    """A µs text (`"1736408883709301.270\\t"`, `117.22`, `12.345`) as exact integer ns."""
    cell = str(cell).strip()
    if cell in ("", "N/A", "None"):
        return None
    return int((Decimal(cell) * 1000).to_integral_value())


class Strings:
    def __init__(self, start):
        self.ids, self.next = {}, start

    def id(self, s):
        if s is None or s == "":
            return None
        if s not in self.ids:
            self.ids[s] = self.next
            self.next += 1
        return self.ids[s]


SCHEMA = """
CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY, value TEXT);
CREATE TABLE ENUM_API_TYPE (id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE OP_MEMORY (name INTEGER, size INTEGER, allocationTime INTEGER, releaseTime INTEGER,
  activeReleaseTime INTEGER, duration INTEGER, activeDuration INTEGER,
  allocationTotalAllocated INTEGER, allocationTotalReserved INTEGER, allocationTotalActive INTEGER,
  releaseTotalAllocated INTEGER, releaseTotalReserved INTEGER, releaseTotalActive INTEGER,
  streamPtr INTEGER, deviceId INTEGER);
CREATE TABLE PYTORCH_API (startNs TEXT, endNs TEXT, globalTid INTEGER, connectionId INTEGER,
  name INTEGER, sequenceNumber INTEGER, fwdThreadId INTEGER, inputDtypes INTEGER,
  inputShapes INTEGER, callchainId INTEGER, type INTEGER);
CREATE TABLE PYTORCH_CALLCHAINS (id INTEGER, stack INTEGER, stackDepth INTEGER);
CREATE TABLE STEP_TIME (id INTEGER, startNs INTEGER, endNs INTEGER);
CREATE TABLE TASK (startNs INTEGER, endNs INTEGER, deviceId INTEGER, connectionId INTEGER,
  globalTaskId INTEGER, globalPid INTEGER, taskType INTEGER, contextId INTEGER, streamId INTEGER,
  taskId INTEGER, modelId INTEGER);
CREATE TABLE COMPUTE_TASK_INFO (name INTEGER, globalTaskId INTEGER PRIMARY KEY, blockDim INTEGER,
  mixBlockDim INTEGER, taskType INTEGER, opType INTEGER, inputFormats INTEGER,
  inputDataTypes INTEGER, inputShapes INTEGER, outputFormats INTEGER, outputDataTypes INTEGER,
  outputShapes INTEGER, attrInfo INTEGER);
CREATE TABLE COMMUNICATION_OP (opName INTEGER, startNs INTEGER, endNs INTEGER,
  connectionId INTEGER, groupName INTEGER, opId INTEGER PRIMARY KEY, relay INTEGER,
  retry INTEGER, dataType INTEGER, algType INTEGER, count NUMERIC, opType INTEGER);
"""


def mb_to_bytes(v):
    v = (v or "").strip()
    return None if v == "" else int(round(float(v) * 1048576))


def operator_memory(path, db, s):
    rows = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            name = r["Name"]
            # GE (CANN) rows: the `cann::` prefix the text adds, and no stream pointer.
            ge = name.startswith("cann::") and not r.get("Stream Ptr", "").strip()
            dev = r.get("Device Type", "").strip()
            rows.append((
                s.id(name[6:] if ge else name),
                int(round(float(r["Size(KB)"]) * 1024)),
                us_to_ns(r["Allocation Time(us)"]), us_to_ns(r.get("Release Time(us)", "")),
                None if ge else us_to_ns(r.get("Active Release Time(us)", "")),
                us_to_ns(r.get("Duration(us)", "")),
                None if ge else us_to_ns(r.get("Active Duration(us)", "")),
                mb_to_bytes(r.get("Allocation Total Allocated(MB)")),
                mb_to_bytes(r.get("Allocation Total Reserved(MB)")),
                None if ge else mb_to_bytes(r.get("Allocation Total Active(MB)")),
                mb_to_bytes(r.get("Release Total Allocated(MB)")),
                mb_to_bytes(r.get("Release Total Reserved(MB)")),
                None if ge else mb_to_bytes(r.get("Release Total Active(MB)")),
                None if ge or not r.get("Stream Ptr", "").strip() else int(r["Stream Ptr"]),
                int(dev[4:]) if dev.startswith("NPU:") else None))
    db.executemany("INSERT INTO OP_MEMORY VALUES (%s)" % ",".join("?" * 15), rows)


def trace_view(path, db, s):
    with open(path) as f:
        events = json.load(f)
    if isinstance(events, dict):
        events = events.get("traceEvents", [])
    api, chains, steps, chain_id = [], [], [], 0
    for e in events:
        if e.get("ph") != "X" or e.get("cat") != "cpu_op":
            continue
        start = us_to_ns(e["ts"])
        end = start + int(round(float(e.get("dur", 0)) * 1000))
        a = e.get("args", {})
        cid = None
        if "Call stack" in a:
            chain_id += 1
            cid = chain_id
            for d, fr in enumerate(a["Call stack"].split(";\r\n")):
                chains.append((cid, s.id(fr), d))
        gtid = (int(e.get("pid", 0)) << 32) | (int(e.get("tid", 0)) & 0xFFFFFFFF)
        api.append((str(start), str(end), gtid, None, s.id(e["name"]), a.get("Sequence number"),
                    a.get("Fwd thread id"), s.id(a.get("Input type")), s.id(a.get("Input Dims")),
                    cid, OP))
        m = re.fullmatch(r"ProfilerStep#(\d+)", e["name"])
        if m:
            steps.append((int(m.group(1)), start, end))
    db.executemany("INSERT INTO PYTORCH_API VALUES (%s)" % ",".join("?" * 11), api)
    db.executemany("INSERT INTO PYTORCH_CALLCHAINS VALUES (?,?,?)", chains)
    db.executemany("INSERT INTO STEP_TIME VALUES (?,?,?)", steps)


def kernel_details(path, db, s):
    tasks, compute, comm = [], [], []
    with open(path, newline="") as f:
        for i, r in enumerate(csv.DictReader(f)):
            start = us_to_ns(r["Start Time(us)"])
            end = start + us_to_ns(r["Duration(us)"])
            core = r.get("Accelerator Core", "").strip()
            if core in ("HCCL", "COMMUNICATION"):
                comm.append((s.id(r["Name"]), start, end, None, None, i, None, None, None, None,
                             None, s.id(r.get("Type"))))
                continue
            stream = r.get("Stream ID", "").strip()
            tasks.append((start, end, 0, None, i, None, None, None,
                          int(stream) if stream.isdigit() else None, i, None))
            compute.append((s.id(r["Name"]), i, None, None, s.id(core), s.id(r.get("Type")), None,
                            None, s.id(r.get("Input Shapes")), None, None, None, None))
    db.executemany("INSERT INTO TASK VALUES (%s)" % ",".join("?" * 11), tasks)
    db.executemany("INSERT INTO COMPUTE_TASK_INFO VALUES (%s)" % ",".join("?" * 13), compute)
    db.executemany("INSERT INTO COMMUNICATION_OP VALUES (%s)" % ",".join("?" * 12), comm)


def main(src, dst):
    out = os.path.join(dst, "ASCEND_PROFILER_OUTPUT")
    os.makedirs(out, exist_ok=True)
    rank = 0
    for p in glob.glob(os.path.join(src, "profiler_*.json")):
        shutil.copy(p, dst)
        m = re.fullmatch(r"profiler_info_(\d+)\.json", os.path.basename(p))
        if m:
            rank = int(m.group(1))
    path = os.path.join(out, "ascend_pytorch_profiler_%d.db" % rank)
    if os.path.exists(path):
        os.remove(path)
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode = OFF")
    db.executescript(SCHEMA)
    db.executemany("INSERT INTO ENUM_API_TYPE VALUES (?,?)",
                   [(5000, "runtime"), (5500, "hccl"), (10000, "node"), (15000, "model"),
                    (20000, "acl"), (50001, "op"), (50002, "queue"), (50003, "trace"),
                    (50004, "mstx")])
    s = Strings(1 << 28)
    text = os.path.join(src, "ASCEND_PROFILER_OUTPUT")
    for name, fn in (("operator_memory.csv", operator_memory), ("trace_view.json", trace_view),
                     ("kernel_details.csv", kernel_details)):
        p = os.path.join(text, name)
        if os.path.exists(p):
            fn(p, db, s)
    db.executemany("INSERT INTO STRING_IDS VALUES (?,?)", [(i, v) for v, i in s.ids.items()])
    db.commit()
    db.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
