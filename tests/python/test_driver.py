"""The driver's own logic (splitting, a dying process, lost tasks, the reduce call, exit codes,
Ray missing) against tests/python/fake_proflens.py, whose answers are known. The real binary's
numbers are checked in test_cluster.py."""
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

import proflens
from proflens import cluster

HERE = os.path.dirname(os.path.abspath(__file__))
FAKE = os.path.join(HERE, "fake_proflens.py")


def make_root(names):
    """A temp root with one empty folder per name; returns (root, absolute folder paths)."""
    root = tempfile.mkdtemp(prefix="proflens-fake-")
    paths = []
    for n in names:
        p = os.path.join(root, "role", n)
        os.makedirs(p)
        paths.append(p)
    return root, paths


def target(p, i=0, root=None):
    t = {"target": p, "kind": "ascend", "rank_id": i, "role": None, "paths": [p], "bytes": 1000}
    if root:
        t["root"] = root
    return t


def lines(data):
    return [json.loads(l) for l in data.splitlines()]


class FakeBinary(unittest.TestCase):
    def setUp(self):
        patcher = mock.patch.dict(os.environ, {proflens.BINARY_ENV: FAKE})
        patcher.start()
        self.addCleanup(patcher.stop)


class Split(unittest.TestCase):
    def test_chunks_of_n_in_the_given_order(self):
        ts = [target(f"/r/{i}_ascend_pt", i) for i in range(40)]
        tasks = cluster.split(ts, 16)
        self.assertEqual([len(t) for t in tasks], [16, 16, 8])
        self.assertEqual([t for task in tasks for t in task], ts)
        self.assertEqual(len(cluster.split(ts, 1)), 40)
        self.assertEqual(cluster.split(ts, 64), [ts])
        self.assertEqual(cluster.split([], 4), [])

    def test_a_task_never_mixes_two_roots(self):
        ts = [target(f"/a/{i}", i, "/a") for i in range(5)] + [target(f"/b/{i}", i, "/b") for i in range(3)]
        tasks = cluster.split(ts, 4)
        self.assertEqual([[t["target"] for t in task] for task in tasks],
                         [["/a/0", "/a/1", "/a/2", "/a/3"], ["/a/4"], ["/b/0", "/b/1", "/b/2"]])

    def test_zero_per_task_is_refused(self):
        with self.assertRaises(ValueError):
            cluster.split([target("/r/a")], 0)


class Binary(unittest.TestCase):
    def test_installed_binary_is_next_to_the_interpreter(self):
        with mock.patch.dict(os.environ, {}, clear=False):
            os.environ.pop(proflens.BINARY_ENV, None)
            b = proflens.binary()
        import sysconfig

        self.assertEqual(os.path.dirname(b), sysconfig.get_path("scripts"))
        out = subprocess.run([b, "--version"], stdout=subprocess.PIPE, check=True).stdout.decode()
        self.assertEqual(out.strip(), f"proflens {proflens.__version__}")

    def test_override_that_is_not_executable_is_refused(self):
        with mock.patch.dict(os.environ, {proflens.BINARY_ENV: "/nonexistent/proflens"}):
            with self.assertRaisesRegex(proflens.ProflensError, "PROFLENS_BIN=/nonexistent/proflens is not an executable"):
                proflens.binary()

    def test_python_m_proflens_forwards_args_and_exit_code(self):
        p = subprocess.run([sys.executable, "-m", "proflens", "no-such-command"], stderr=subprocess.PIPE)
        self.assertEqual(p.returncode, 2)
        self.assertIn(b"no-such-command", p.stderr)


class RunTask(FakeBinary):
    def test_one_line_per_target_in_order(self):
        _, ps = make_root(["a_ascend_pt", "b_ascend_pt", "c_ascend_pt"])
        data, meta = cluster.run_task([target(p, i, "/the/root") for i, p in enumerate(ps)], threads=3)
        got = lines(data)
        self.assertEqual([l["target"] for l in got], ps)
        self.assertEqual(got[0]["fake_argv"], ["--threads", "3", "--root", "/the/root"])
        self.assertEqual((meta["targets"], meta["ok"], meta["failed"]), (3, 3, 0))

    def test_a_killed_process_fails_the_targets_it_did_not_write(self):
        _, ps = make_root(["a_ascend_pt", "b_die_ascend_pt", "c_ascend_pt"])
        data, meta = cluster.run_task([target(p, i) for i, p in enumerate(ps)])
        got = lines(data)  # the half-written line of b is not among them: every line parses
        self.assertEqual([(l["target"], l["status"]) for l in got], [(ps[0], "ok"), (ps[1], "failed"), (ps[2], "failed")])
        for l in got[1:]:
            self.assertEqual(l["problems"][0]["code"], "task-failed")
            self.assertEqual(l["problems"][0]["severity"], "error")
            self.assertTrue(
                l["problems"][0]["message"].startswith("proflens summarize was killed by signal SIGKILL before summarising this target"),
                l["problems"][0]["message"],
            )
            self.assertEqual(l["problem_counts"], {"errors": 1, "warnings": 0})
        self.assertEqual(got[1]["rank_id"], 1)
        self.assertEqual(got[1]["rank_dir"], ps[1])
        self.assertEqual((meta["ok"], meta["failed"]), (1, 2))

    def test_a_panic_says_the_exit_code_and_the_last_stderr_lines(self):
        _, ps = make_root(["a_ascend_pt", "b_crash_ascend_pt"])
        data, meta = cluster.run_task([target(p, i) for i, p in enumerate(ps)])
        got = lines(data)
        self.assertEqual([l["status"] for l in got], ["ok", "failed"])
        self.assertEqual(
            got[1]["problems"][0]["message"],
            "proflens summarize exited with code 101 before summarising this target: "
            "thread 'main' panicked at src/x.rs:1:1: | boom",
        )

    def test_lines_of_other_targets_are_dropped(self):
        _, ps = make_root(["a_ascend_pt", "b_ascend_pt"])
        # the task claims only a; the fake prints what it is given, so give it b too via paths
        t = target(ps[0])
        t["paths"] = [ps[0], ps[1]]
        data, meta = cluster.run_task([t])
        self.assertEqual([l["target"] for l in lines(data)], [ps[0]])
        self.assertEqual(meta["ok"], 1)

    def test_a_missing_binary_fails_every_target(self):
        _, ps = make_root(["a_ascend_pt"])
        with mock.patch.dict(os.environ, {proflens.BINARY_ENV: "/nonexistent/proflens"}):
            data, meta = cluster.run_task([target(ps[0])])
        (l,) = lines(data)
        self.assertEqual(l["status"], "failed")
        self.assertIn("proflens summarize could not start", l["problems"][0]["message"])
        self.assertEqual(meta["failed"], 1)

    def test_failed_line_of_a_multi_file_target_names_their_folder(self):
        t = {"target": "/r/traces#rank3", "kind": "kineto", "rank_id": 3, "role": None,
             "paths": ["/r/traces/a.pt.trace.json", "/r/traces/b.pt.trace.json"], "bytes": 5}
        (l,) = lines(cluster.failed_line(t, "task-lost", "gone"))
        self.assertEqual((l["rank_dir"], l["kind"], l["rank_id"], l["problems"][0]["file"]), ("/r/traces", "kineto", 3, "/r/traces"))


class Main(FakeBinary):
    def run_main(self, argv):
        err = io.StringIO()
        with mock.patch.object(sys, "stderr", err):
            rc = cluster.main(argv)
        return rc, err.getvalue()

    def test_local_run_hands_every_line_and_the_run_info_to_reduce(self):
        root, ps = make_root([f"r{i}_ascend_pt" for i in range(5)] + ["x_die_ascend_pt"])
        out = os.path.join(root, "summary.json")
        rc, err = self.run_main([root, "--out", out, "--local", "--workers", "2", "--ranks-per-task", "2"])
        self.assertEqual(rc, 0)
        got = json.load(open(out))
        args = got["args"]
        self.assertEqual(args[:3], ["-", "--out", out])
        self.assertEqual(args[args.index("--run-mode") + 1], "local")
        self.assertEqual(args[args.index("--tasks") + 1], "3")
        self.assertGreater(float(args[args.index("--wall-s") + 1]), 0.0)
        self.assertEqual(args[args.index("--root") + 1], root)
        self.assertEqual(got["lines"][0]["fake_argv"], ["--threads", "1", "--root", os.path.abspath(root)])
        status = {l["target"]: l["status"] for l in got["lines"]}
        # sorted targets: r0..r4, x_die; tasks (r0 r1) (r2 r3) (r4 x_die): r4 was written before x died
        self.assertEqual(status, {**{p: "ok" for p in sorted(ps)[:5]}, sorted(ps)[5]: "failed"})
        self.assertEqual(len(got["lines"]), 6)
        self.assertIn("proflens.cluster: 6 targets, 6000 bytes, 3 tasks of up to 2 (local)", err)
        self.assertEqual(err.count("] task "), 3)
        self.assertIn(f"    failed: rank 5 {sorted(ps)[5]}: proflens summarize was killed by signal SIGKILL", err)
        self.assertIn("6 targets (ok 5, partial 0, failed 1) in 3 tasks", err)

    def test_a_dead_pool_process_loses_only_its_task(self):
        names = [f"r{i}_ascend_pt" for i in range(6)] + ["s_killworker_ascend_pt"]
        root, ps = make_root(names)
        out = os.path.join(root, "summary.json")
        rc, err = self.run_main([root, "--out", out, "--local", "--workers", "2", "--ranks-per-task", "1"])
        self.assertEqual(rc, 0, err)
        got = json.load(open(out))["lines"]
        status = {l["target"]: l["status"] for l in got}
        killer = sorted(ps)[6]
        self.assertEqual(status, {**{p: "ok" for p in sorted(ps)[:6]}, killer: "failed"})
        (lost,) = [l for l in got if l["status"] == "failed"]
        self.assertEqual(lost["problems"][0]["code"], "task-lost")
        self.assertIn("the task running this target was lost: BrokenProcessPool", lost["problems"][0]["message"])
        self.assertIn("a pool process died; running the", err)
        self.assertEqual(err.count("] task "), 7)

    def test_nothing_analysed_is_exit_2(self):
        root, _ = make_root(["a_die_ascend_pt"])
        rc, _ = self.run_main([root, "--out", os.path.join(root, "s.json"), "--local", "--quiet"])
        self.assertEqual(rc, 2)

    def test_no_target_is_exit_2_with_a_message(self):
        root = tempfile.mkdtemp(prefix="proflens-empty-")
        out = os.path.join(root, "s.json")
        rc, err = self.run_main([root, "--out", out, "--local"])
        self.assertEqual(rc, 2)
        self.assertIn(f"proflens.cluster: no analysis target under {root}", err)
        self.assertFalse(os.path.exists(out))

    def test_ray_missing_is_exit_2_with_the_install_command(self):
        root, _ = make_root(["a_ascend_pt"])
        with mock.patch.dict(sys.modules, {"ray": None}):
            rc, err = self.run_main([root, "--out", os.path.join(root, "s.json")])
        self.assertEqual(rc, 2)
        self.assertIn("Ray is not installed: install it with `pip install 'proflens[ray]'`", err)
        self.assertIn("--local", err)

    def test_zero_ranks_per_task_is_exit_2(self):
        root, _ = make_root(["a_ascend_pt"])
        rc, err = self.run_main([root, "--out", "x", "--local", "--ranks-per-task", "0"])
        self.assertEqual(rc, 2)
        self.assertIn("--ranks-per-task and --threads-per-task must be at least 1", err)


if __name__ == "__main__":
    unittest.main()
