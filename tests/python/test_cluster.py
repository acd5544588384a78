"""The cluster summary end to end with the real binary, on a local Ray cluster (2 CPUs, one
session for the module, stopped at the end) and on `--local`.

Inputs (generated, deterministic: ../shared/bench/gen_ascend.py, 4 steps of 2 layers a rank):
- the good run: 16 ranks of one role; rank 5 is generated again with `--kernel-scale 3`
  (kernels 10x longer than the others' 0.3: its steps take ~5x longer), the planted straggler.
- the bad run: 8 ranks, tasks of 2 (ranks 0-1, 2-3, 4-5, 6-7): rank 1's trace_view.json cut in
  the middle of an event; rank 2 without its kernel_details.csv and trace_view.json; rank 3's
  kernel_details.csv random bytes and its trace cut after 21 bytes; the `summarize` of the task
  of rank 4 dies (its folder holds DIE_HERE: tests/python/die_wrapper.sh kills it), and the
  process running the task of rank 6 dies (KILL_WORKER: the wrapper kills the Ray worker or
  pool process). Every binary call goes through that wrapper, which otherwise execs the
  installed binary.
"""
import io
import json
import logging
import os
import random
import shutil
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

import proflens
from proflens import cluster

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT = os.path.dirname(os.path.dirname(HERE))
GEN = os.path.join(PROJECT, "..", "shared", "bench", "gen_ascend.py")
WRAPPER = os.path.join(HERE, "die_wrapper.sh")
RANKS = 16
STRAGGLER = 5
PER_TASK = 4

TMP = None
REAL_BIN = None
SAVED_BIN = None
ray = None


def gen(out, ranks, *extra):
    subprocess.run(
        [sys.executable, GEN, "--out", out, "--ranks", str(ranks), "--layers", "2", "--steps", "4", "--quiet", *extra],
        check=True,
    )
    role = os.path.join(out, "actor_update")
    return sorted(os.path.join(role, d) for d in os.listdir(role))


def rank_folder(folders, rank):
    """The folder whose profiler_info_<rank>.json says it is `rank`."""
    (hit,) = [f for f in folders if os.path.exists(os.path.join(f, f"profiler_info_{rank}.json"))]
    return hit


def setUpModule():
    global TMP, REAL_BIN, ray, SAVED_BIN
    SAVED_BIN = os.environ.get(proflens.BINARY_ENV)
    REAL_BIN = proflens.binary()  # the installed one (or $PROFLENS_BIN when the caller set it)
    TMP = tempfile.mkdtemp(prefix="proflens-cluster-test-")
    good = gen(os.path.join(TMP, "good"), RANKS)
    slow = gen(os.path.join(TMP, "slow"), RANKS, "--kernel-scale", "3")
    dst = rank_folder(good, STRAGGLER)  # same folder name in both runs (rank and seed decide it)
    shutil.rmtree(dst)
    shutil.copytree(rank_folder(slow, STRAGGLER), dst)
    shutil.rmtree(os.path.join(TMP, "slow"))
    bad = gen(os.path.join(TMP, "bad"), 8)
    out = lambda rank, name: os.path.join(rank_folder(bad, rank), "ASCEND_PROFILER_OUTPUT", name)
    with open(out(1, "trace_view.json"), "r+b") as f:
        f.truncate(os.path.getsize(out(1, "trace_view.json")) // 2)
    for name in ("kernel_details.csv", "trace_view.json"):
        os.remove(out(2, name))
    with open(out(3, "kernel_details.csv"), "wb") as f:
        f.write(bytes(random.Random(3).randrange(256) for _ in range(3000)))
    with open(out(3, "trace_view.json"), "w") as f:
        f.write('[{"ph":"X", "name": \n')
    open(os.path.join(rank_folder(bad, 4), "DIE_HERE"), "w").close()
    open(os.path.join(rank_folder(bad, 6), "KILL_WORKER"), "w").close()
    # Set before Ray starts: its workers inherit the driver's environment.
    os.environ[proflens.BINARY_ENV] = WRAPPER
    os.environ["PROFLENS_REAL_BIN"] = REAL_BIN
    import ray as _ray

    ray = _ray
    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False)


def tearDownModule():
    if ray is not None:
        ray.shutdown()
    os.environ.pop(proflens.BINARY_ENV, None)
    if SAVED_BIN:
        os.environ[proflens.BINARY_ENV] = SAVED_BIN
    os.environ.pop("PROFLENS_REAL_BIN", None)
    if TMP:
        shutil.rmtree(TMP, ignore_errors=True)


def run_cluster(root, name, *extra):
    """`python -m proflens.cluster ROOT --out TMP/name.json EXTRA...` in this process (the
    module's Ray session is reused); returns (exit code, summary or None, stderr text)."""
    out = os.path.join(TMP, name + ".json")
    err = io.StringIO()
    with mock.patch.object(sys, "stderr", err):
        rc = cluster.main([root, "--out", out, *extra])
    summary = json.load(open(out)) if os.path.exists(out) else None
    return rc, summary, err.getvalue()


def anomaly_json(rank_dir):
    out = os.path.join(TMP, "anomaly.json")
    p = subprocess.run([REAL_BIN, "anomaly", rank_dir, "--out", out], stderr=subprocess.PIPE)
    assert p.returncode == 0, p.stderr.decode()
    (rank,) = json.load(open(out))
    return rank


class GoodRun(unittest.TestCase):
    """16 ranks, one straggler: Ray and --local give the same summary, `proflens anomaly`'s numbers."""

    @classmethod
    def setUpClass(cls):
        root = os.path.join(TMP, "good")
        cls.results = {
            "ray": run_cluster(root, "good-ray", "--ranks-per-task", str(PER_TASK)),
            "local": run_cluster(root, "good-local", "--local", "--workers", "2", "--ranks-per-task", str(PER_TASK)),
        }

    def each(self):
        return [(mode, rc, summary, err) for mode, (rc, summary, err) in self.results.items()]

    def test_every_rank_present_and_ok(self):
        for mode, rc, s, err in self.each():
            with self.subTest(mode=mode):
                self.assertEqual(rc, 0, err)
                self.assertEqual(s["format"], "proflens-cluster-summary")
                self.assertEqual(s["rank_count"], RANKS)
                self.assertEqual([r["rank_id"] for r in s["ranks"]], list(range(RANKS)))
                self.assertEqual({r["status"] for r in s["ranks"]}, {"ok"})
                self.assertEqual(s["run"]["mode"], mode)
                self.assertEqual(s["run"]["tasks"], RANKS // PER_TASK)
                self.assertGreater(s["run"]["wall_s"], 0)

    def test_one_progress_line_per_task(self):
        for mode, rc, s, err in self.each():
            with self.subTest(mode=mode):
                lines = [l for l in err.splitlines() if "] task " in l]
                self.assertEqual(len(lines), RANKS // PER_TASK, err)
                self.assertEqual(sorted(l.split("]")[0] for l in lines), [f"[{k}/4" for k in range(1, 5)])
                for l in lines:
                    self.assertIn(f": {PER_TASK} targets (ok {PER_TASK}, partial 0, failed 0) in ", l)

    def test_the_straggler_is_the_one_slow_rank(self):
        for mode, rc, s, err in self.each():
            with self.subTest(mode=mode):
                self.assertEqual(s["slow_ranks"], [STRAGGLER])
                slow = [row["rank_id"] for row in s["cross_rank"] if row["slow"]]
                self.assertEqual(slow, [STRAGGLER])

    def test_per_rank_numbers_equal_proflens_anomaly(self):
        (_, s, _) = self.results["ray"]
        for r in s["ranks"]:
            with self.subTest(rank=r["rank_id"]):
                a = anomaly_json(r["rank_dir"])
                self.assertEqual(a["rank_id"], r["rank_id"])
                self.assertEqual([st["step_id"] for st in r["steps"]], [st["step_id"] for st in a["steps"]])
                self.assertEqual(len(r["steps"]), 4)
                for got, want in zip(r["steps"], a["steps"]):
                    missing = set(got) - set(want)
                    self.assertEqual(missing, set(), "summary step fields that anomaly's steps[] lacks")
                    self.assertEqual(got, {k: want[k] for k in got})

    def test_ray_and_local_agree_on_every_rank(self):
        def strip(s):
            return [{k: v for k, v in r.items() if k != "analysis_s"} for r in s["ranks"]]

        ray_s, local_s = self.results["ray"][1], self.results["local"][1]
        self.assertEqual(strip(ray_s), strip(local_s))
        for key in ("cross_rank", "slow_ranks", "matrices", "outliers", "problems_total"):
            self.assertEqual(ray_s[key], local_s[key], key)


class BadRun(unittest.TestCase):
    """8 ranks, six of them broken or lost: each reported on its own rank, the others analysed."""

    @classmethod
    def setUpClass(cls):
        root = os.path.join(TMP, "bad")
        cls.targets = proflens.targets([root])
        cls.results = {
            "ray": run_cluster(root, "bad-ray", "--ranks-per-task", "2", "--retries", "0"),
            "local": run_cluster(root, "bad-local", "--local", "--workers", "2", "--ranks-per-task", "2"),
        }

    def each(self):
        return [(mode, {r["rank_id"]: r for r in s["ranks"]}, s, err) for mode, (rc, s, err) in self.results.items()]

    def test_every_rank_present_and_exit_0(self):
        for mode, (rc, s, err) in self.results.items():
            with self.subTest(mode=mode):
                self.assertEqual(rc, 0, err)
                self.assertEqual([r["rank_id"] for r in s["ranks"]], list(range(8)), err)

    def test_targets_come_in_rank_order_so_the_tasks_are_known(self):
        self.assertEqual([t["rank_id"] for t in self.targets], list(range(8)))

    def test_healthy_ranks_are_analysed(self):
        for mode, by_rank, s, err in self.each():
            with self.subTest(mode=mode):
                self.assertEqual(by_rank[0]["status"], "ok")
                self.assertEqual(len(by_rank[0]["steps"]), 4)
                self.assertEqual(by_rank[0]["problem_counts"]["errors"], 0)

    def test_a_cut_trace_is_a_warning_at_its_byte_and_the_steps_stay(self):
        for mode, by_rank, s, err in self.each():
            with self.subTest(mode=mode):
                r = by_rank[1]
                self.assertEqual(r["status"], "ok")
                self.assertEqual(len(r["steps"]), 4)  # the steps come from kernel_details.csv
                (cut,) = [p for p in r["problems"] if p["code"] == "ANOM-TV-001"]
                self.assertEqual(cut["severity"], "warning")
                self.assertTrue(cut["file"].endswith("/ASCEND_PROFILER_OUTPUT/trace_view.json"), cut)
                self.assertRegex(cut["location"], r"^byte [0-9]+$")
                self.assertIn("trace_view.json ends early", cut["message"])

    def test_missing_device_files_leave_the_memory_analysis(self):
        for mode, by_rank, s, err in self.each():
            with self.subTest(mode=mode):
                r = by_rank[2]
                self.assertEqual((r["status"], r["steps"], r["anomaly"]), ("ok", [], None))
                self.assertIn("MEM-FILE-002", [p["code"] for p in r["problems"]])

    def test_garbage_kernel_details_is_a_located_error(self):
        for mode, by_rank, s, err in self.each():
            with self.subTest(mode=mode):
                r = by_rank[3]
                self.assertEqual((r["status"], r["steps"]), ("partial", []))
                (bad,) = [p for p in r["problems"] if p["code"] == "ANOM-FILE-001"]
                self.assertEqual((bad["severity"], bad["location"]), ("error", "line 1"))
                self.assertTrue(bad["file"].endswith("/ASCEND_PROFILER_OUTPUT/kernel_details.csv"), bad)

    def test_a_killed_summarize_fails_the_ranks_of_its_task(self):
        for mode, by_rank, s, err in self.each():
            with self.subTest(mode=mode):
                for i in (4, 5):
                    r = by_rank[i]
                    self.assertEqual((r["status"], r["steps"], r["problems"][0]["code"]), ("failed", [], "task-failed"))
                    self.assertTrue(r["problems"][0]["message"].startswith(
                        "proflens summarize was killed by signal SIGKILL before summarising this target"), r["problems"][0])
                    self.assertIn(f"    failed: rank {i} {r['rank_dir']}: proflens summarize was killed", err)

    def test_a_dead_worker_loses_only_its_task(self):
        for mode, by_rank, s, err in self.each():
            with self.subTest(mode=mode):
                for i in (6, 7):
                    r = by_rank[i]
                    self.assertEqual((r["status"], r["problems"][0]["code"]), ("failed", "task-lost"), r["problems"])
                    self.assertTrue(r["problems"][0]["message"].startswith("the task running this target was lost: "))
                want = "BrokenProcessPool" if mode == "local" else "WorkerCrashedError"
                self.assertIn(want, by_rank[6]["problems"][0]["message"])

    def test_the_summary_counts_every_error(self):
        for mode, by_rank, s, err in self.each():
            with self.subTest(mode=mode):
                self.assertEqual(s["problems_total"]["errors"], sum(r["problem_counts"]["errors"] for r in s["ranks"]))
                self.assertEqual(sum(r["status"] == "failed" for r in s["ranks"]), 4)
                self.assertIn("8 targets (ok 3, partial 1, failed 4) in 4 tasks", err)


if __name__ == "__main__":
    unittest.main()
