"""The cluster summary of a many-rank run, on Ray or on a local process pool.

    python -m proflens.cluster ROOT... --out SUMMARY.json [--address ADDR]
        [--ranks-per-task N] [--local [--workers N]] [--gzip] [--strict]

Data flow (every rule lives in the Rust core; this module only moves bytes):

1. ``proflens targets ROOT... --json``: the analysis targets (rank folders, Kineto traces per
   rank, snapshot pickles) by the page's inventory rules, in a stable order.
2. The list is cut into tasks of N consecutive targets (:func:`split`).
3. Each task (:func:`run_task`) runs ``proflens summarize --root ROOT PATHS...`` where it is scheduled
   (on a Ray worker, or a pool process with ``--local``), reading its ranks where they lie,
   and returns the JSON Lines it printed as bytes (≤ ~64 KB a rank), never parsed objects.
   A target the process did not write a line for (it died: signal, panic, out of memory), or
   a task that Ray lost, becomes a ``status: "failed"`` line (:func:`failed_line`), so the
   reduce reports it per rank while the other tasks finish.
4. The driver appends each finished task's bytes to a temporary file (its memory holds one
   task's result at a time) and prints one progress line per task on stderr.
5. ``proflens reduce - --out SUMMARY.json --run-mode ray|local --tasks K --wall-s S --root ROOT`` reads
   the parts on stdin and writes the ``ClusterSummary`` (docs/cluster-summary.md).

Exit code: the reduce's (0 when anything was analysed, 2 when nothing; 1 with ``--strict``
and problems), or 2 when no target was found or the binary or Ray is missing.
Nothing here reaches the network: a local Ray cluster is started on this machine when no
``--address`` is given.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from typing import IO, Callable, Dict, List, Optional, Sequence, Tuple

import proflens

__all__ = ["failed_line", "main", "run_task", "split", "TaskResult"]

#: What one task returns: the JSON Lines bytes (one RankSummary a line, each ending in
#: ``\\n``) and a small dict for the progress line: ``targets``, ``ok``, ``partial``,
#: ``failed``, ``seconds``, ``host``.
TaskResult = Tuple[bytes, Dict[str, object]]


def split(targets: Sequence[dict], ranks_per_task: int) -> List[List[dict]]:
    """Consecutive chunks of at most ``ranks_per_task`` targets, in the stable order
    ``proflens targets`` printed, a chunk never mixing two roots (``summarize --root`` takes
    one): ``split(t, 16)`` of 40 targets of one root is 16, 16, 8."""
    if ranks_per_task < 1:
        raise ValueError("ranks per task must be at least 1")
    tasks: List[List[dict]] = []
    for t in targets:
        last = tasks[-1] if tasks else None
        if last is None or len(last) == ranks_per_task or last[0].get("root") != t.get("root"):
            tasks.append([t])
        else:
            last.append(t)
    return tasks


def _rank_dir(target: dict) -> str:
    paths = target.get("paths") or [target.get("target", "")]
    return paths[0] if len(paths) == 1 else os.path.commonpath(paths)


def failed_line(target: dict, code: str, message: str) -> bytes:
    """A ``status: "failed"`` RankSummary line (docs/cluster-summary.md) for ``target`` (an
    entry of ``proflens targets --json``), with one error problem ``code``/``message``:
    what a target becomes when the process that should have summarised it died."""
    rank_dir = _rank_dir(target)
    line = {
        "target": target["target"],
        "kind": target["kind"],
        "rank_id": target.get("rank_id"),
        "role": target.get("role"),
        "rank_dir": rank_dir,
        "status": "failed",
        "bytes_read": 0,
        "analysis_s": 0.0,
        "steps": [],
        "steps_dropped": 0,
        "anomaly": None,
        "top_bubbles": [],
        "top_bubbles_dropped": 0,
        "memory": None,
        "snapshots": [],
        "snapshots_dropped": 0,
        "problems": [
            {"severity": "error", "code": code, "file": rank_dir, "location": "", "message": message}
        ],
        "problems_dropped": 0,
        "problem_counts": {"errors": 1, "warnings": 0},
    }
    return json.dumps(line, separators=(",", ":")).encode() + b"\n"


def _death(returncode: int) -> str:
    if returncode < 0:
        try:
            import signal

            return f"was killed by signal {signal.Signals(-returncode).name}"
        except (ValueError, AttributeError):
            return f"was killed by signal {-returncode}"
    return f"exited with code {returncode}"


def run_task(task: Sequence[dict], threads: int = 1) -> TaskResult:
    """Summarises one task's targets: ``proflens summarize --threads T [--root ROOT]
    PATHS...`` on this host (``--root``: the targets' root, so rank ids and roles are decided
    as ``targets`` decided them), its stdout returned as bytes. Lines for targets outside the task are dropped; a target
    without a line (the process died before writing it) gets a :func:`failed_line` that
    says how the process ended and the last words of its stderr."""
    t0 = time.monotonic()
    paths = [p for t in task for p in t["paths"]]
    try:
        bin_path = proflens.binary()
        root = task[0].get("root") if task else None
        cmd = [bin_path, "summarize", "--threads", str(threads), *(["--root", root] if root else []), *paths]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, rc, err = p.stdout, p.returncode, p.stderr
    except (OSError, proflens.ProflensError) as e:
        out, rc, err = b"", None, str(e).encode()
    wanted = {t["target"]: t for t in task}
    seen = set()
    kept: List[bytes] = []
    counts = {"ok": 0, "partial": 0, "failed": 0}
    for raw in out.splitlines():
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
            target, status = line["target"], line["status"]
        except (ValueError, KeyError, TypeError):
            continue  # a line cut short by a dying process: its target is reported below
        if target not in wanted or target in seen:
            continue
        seen.add(target)
        counts[status] = counts.get(status, 0) + 1
        kept.append(raw + b"\n")
    missing = [t for t in task if t["target"] not in seen]
    if missing:
        tail = err.decode("utf-8", "replace").strip().splitlines()[-3:]
        how = f"proflens summarize {_death(rc)}" if rc is not None else "proflens summarize could not start"
        msg = f"{how} before summarising this target" + (": " + " | ".join(tail) if tail else "")
        for t in missing:
            kept.append(failed_line(t, "task-failed", msg[:300]))
        counts["failed"] += len(missing)
    meta: Dict[str, object] = {
        "targets": len(task),
        "seconds": time.monotonic() - t0,
        "host": os.uname().nodename if hasattr(os, "uname") else "",
        **counts,
    }
    return b"".join(kept), meta


def _lost_task(task: Sequence[dict], why: str) -> TaskResult:
    """The result of a task whose worker was lost (Ray error, broken pool): every target failed."""
    msg = f"the task running this target was lost: {why}"[:300]
    return (
        b"".join(failed_line(t, "task-lost", msg) for t in task),
        {"targets": len(task), "ok": 0, "partial": 0, "failed": len(task), "seconds": 0.0, "host": ""},
    )


class _Progress:
    """One stderr line per finished task: ``[k/K] task i: n targets (ok a, partial b,
    failed c) in s s on host``, then a per-rank line for each failed target."""

    def __init__(self, tasks: Sequence[Sequence[dict]], sink: IO[bytes], quiet: bool = False):
        self.tasks, self.sink, self.quiet = tasks, sink, quiet
        self.done = 0
        self.totals = {"ok": 0, "partial": 0, "failed": 0}

    def finished(self, index: int, result: TaskResult) -> None:
        data, meta = result
        self.sink.write(data)
        self.done += 1
        for k in self.totals:
            self.totals[k] += int(meta.get(k, 0))
        if self.quiet:
            return
        host = f" on {meta['host']}" if meta.get("host") else ""
        sys.stderr.write(
            f"[{self.done}/{len(self.tasks)}] task {index}: {meta['targets']} targets "
            f"(ok {meta.get('ok', 0)}, partial {meta.get('partial', 0)}, failed {meta.get('failed', 0)}) "
            f"in {float(meta['seconds']):.2f} s{host}\n"
        )
        if meta.get("failed"):
            for raw in data.splitlines():
                line = json.loads(raw)
                if line.get("status") == "failed":
                    why = (line.get("problems") or [{}])[0].get("message", "")
                    sys.stderr.write(f"    failed: rank {line.get('rank_id')} {line.get('rank_dir')}: {why}\n")
        sys.stderr.flush()


def _run_alone(task: Sequence[dict], threads: int) -> TaskResult:
    """One task in a pool process of its own: if that process dies, only this task is lost."""
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=1) as pool:
        try:
            return pool.submit(run_task, task, threads).result()
        except Exception as e:  # BrokenProcessPool: the pool process died
            return _lost_task(task, f"{type(e).__name__}: {e}")


def run_local(
    tasks: Sequence[Sequence[dict]], workers: Optional[int], progress: _Progress, threads: int = 1
) -> None:
    """The tasks on a ``concurrent.futures.ProcessPoolExecutor`` of ``workers`` processes
    (default: the CPU count), each summarising on ``threads`` threads; results handed to
    ``progress`` as they finish. A pool process that dies (killed from outside: the
    ``summarize`` it runs dying is handled in :func:`run_task`) breaks the whole pool, without
    saying which task killed it: the tasks not finished then run again each in a pool process
    of its own (``workers`` at a time), so only the killing task's targets are reported lost."""
    from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    n = workers or os.cpu_count() or 1
    unfinished = set(range(len(tasks)))
    with ProcessPoolExecutor(max_workers=n) as pool:
        futures = {pool.submit(run_task, t, threads): i for i, t in enumerate(tasks)}
        for f in as_completed(futures):
            i = futures[f]
            try:
                result = f.result()
            except BrokenProcessPool:
                continue  # run again alone, below
            except Exception as e:  # the task function raised: its targets are lost
                result = _lost_task(tasks[i], f"{type(e).__name__}: {e}")
            unfinished.discard(i)
            progress.finished(i, result)
    if unfinished:
        if not progress.quiet:
            sys.stderr.write(
                f"proflens.cluster: a pool process died; running the {len(unfinished)} unfinished tasks "
                "again, each in a process of its own\n"
            )
        with ThreadPoolExecutor(max_workers=n) as alone:
            futures = {alone.submit(_run_alone, tasks[i], threads): i for i in sorted(unfinished)}
            for f in as_completed(futures):
                progress.finished(futures[f], f.result())


def _import_ray():
    try:
        import ray  # noqa: F401  (optional dependency, imported only for Ray runs)
    except ImportError:
        raise proflens.ProflensError(
            "Ray is not installed: install it with `pip install 'proflens[ray]'` "
            "(or your own Ray), or run on a local process pool with --local"
        )
    return ray


def run_ray(
    tasks: Sequence[Sequence[dict]],
    address: Optional[str],
    workers: Optional[int],
    progress: _Progress,
    max_in_flight: Optional[int] = None,
    retries: int = 1,
    threads: int = 1,
) -> None:
    """The tasks as Ray tasks (``threads`` CPUs each, summarising on as many threads) on the Ray session this process already has
    (``ray.is_initialized()``: left running), else ``ray.init(address=ADDR)``, else a local
    cluster of ``workers`` CPUs (default: all) without dashboard; a session started here is
    shut down at the end. At most
    ``max_in_flight`` tasks are submitted at once (default: 2 × the cluster's CPUs), so the
    object store and the driver hold a bounded number of results; each result is fetched as
    soon as it is ready and dropped after it is written. A task Ray loses (worker or node
    died, after ``retries`` retries) becomes failed lines for its targets."""
    ray = _import_ray()
    import logging

    t0 = time.monotonic()
    own = not ray.is_initialized()
    if not own:
        pass
    elif address:
        ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
    else:
        ray.init(
            num_cpus=workers,
            include_dashboard=False,
            logging_level=logging.WARNING,
            log_to_driver=False,
        )
    try:
        remote = ray.remote(num_cpus=threads, max_retries=retries)(run_task)
        cpus = int(ray.cluster_resources().get("CPU", 1)) or 1
        if not progress.quiet:
            how = "joined" if not own else ("connected to " + address if address else "started a local cluster")
            sys.stderr.write(f"proflens.cluster: Ray: {how}, {cpus} CPUs, in {time.monotonic() - t0:.2f} s\n")
        window = max_in_flight or max(2 * cpus // threads, 2)
        pending: Dict[object, int] = {}
        next_task = 0
        while next_task < len(tasks) or pending:
            while next_task < len(tasks) and len(pending) < window:
                pending[remote.remote(tasks[next_task], threads)] = next_task
                next_task += 1
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                i = pending.pop(ref)
                try:
                    result = ray.get(ref)
                except ray.exceptions.RayError as e:
                    first = str(e).strip().splitlines()[0] if str(e).strip() else ""
                    result = _lost_task(tasks[i], f"{type(e).__name__}: {first}")
                progress.finished(i, result)
                del ref
    finally:
        if own:
            ray.shutdown()


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m proflens.cluster",
        description="Summarise every rank under ROOT on Ray (or a local process pool) into one "
        "cluster summary file (docs/cluster-summary.md) that the page opens.",
        epilog="Exit codes: 0 something was analysed; 1 only with --strict: with problems; "
        "2 nothing could be analysed (no target, missing binary or Ray, bad usage).",
    )
    p.add_argument("roots", nargs="+", metavar="ROOT", help="profiling folder(s) to summarise")
    p.add_argument("--out", required=True, help="the summary file to write")
    p.add_argument("--address", help="Ray cluster address (ray.init(address=...)); default: start a local cluster")
    p.add_argument("--ranks-per-task", type=int, default=16, metavar="N", help="targets per task (default 16)")
    p.add_argument("--local", action="store_true", help="run on a local process pool instead of Ray")
    p.add_argument("--workers", type=int, metavar="N", help="processes (--local) or CPUs of the local Ray cluster; default: all cores")
    p.add_argument("--threads-per-task", type=int, default=1, metavar="T", help="threads of each summarize (and CPUs of each Ray task); default 1")
    p.add_argument("--max-in-flight", type=int, metavar="N", help="Ray tasks submitted at once (default 2 x cluster CPUs)")
    p.add_argument("--retries", type=int, default=1, help="Ray retries of a task whose worker died (default 1)")
    p.add_argument("--gzip", action="store_true", help="gzip the summary (proflens reduce --gzip)")
    p.add_argument("--strict", action="store_true", help="exit 1 when anything was analysed with problems")
    p.add_argument("--quiet", action="store_true", help="no per-task progress lines")
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Runs the command line above; returns the exit code."""
    args = _parser().parse_args(argv)
    if args.ranks_per_task < 1 or args.threads_per_task < 1:
        sys.stderr.write("proflens.cluster: --ranks-per-task and --threads-per-task must be at least 1\n")
        return proflens.EXIT_NOTHING
    t0 = time.monotonic()
    try:
        bin_path = proflens.binary()
        found = proflens.targets(args.roots)
    except proflens.ProflensError as e:
        sys.stderr.write(f"proflens.cluster: {e}\n")
        return proflens.EXIT_NOTHING
    if not found:
        sys.stderr.write(f"proflens.cluster: no analysis target under {', '.join(args.roots)}\n")
        return proflens.EXIT_NOTHING
    tasks = split(found, args.ranks_per_task)
    mode = "local" if args.local else "ray"
    if not args.quiet:
        sys.stderr.write(
            f"proflens.cluster: {len(found)} targets, {sum(int(t.get('bytes', 0)) for t in found)} bytes, "
            f"{len(tasks)} tasks of up to {args.ranks_per_task} ({mode})\n"
        )
    with tempfile.TemporaryFile(prefix="proflens-parts-") as parts:
        progress = _Progress(tasks, parts, args.quiet)
        try:
            if args.local:
                run_local(tasks, args.workers, progress, args.threads_per_task)
            else:
                run_ray(
                    tasks, args.address, args.workers, progress, args.max_in_flight, args.retries, args.threads_per_task
                )
        except proflens.ProflensError as e:
            sys.stderr.write(f"proflens.cluster: {e}\n")
            return proflens.EXIT_NOTHING
        wall_s = time.monotonic() - t0
        parts.flush()
        parts.seek(0)
        cmd = [
            bin_path, "reduce", "-", "--out", args.out, "--run-mode", mode,
            "--tasks", str(len(tasks)), "--wall-s", f"{wall_s:.3f}",
            *[x for r in args.roots for x in ("--root", r)],
        ]
        if args.gzip:
            cmd.append("--gzip")
        if args.strict:
            cmd.append("--strict")
        rc = subprocess.run(cmd, stdin=parts).returncode
    if not args.quiet:
        t = progress.totals
        sys.stderr.write(
            f"proflens.cluster: {len(found)} targets (ok {t['ok']}, partial {t['partial']}, failed {t['failed']}) "
            f"in {len(tasks)} tasks, map {wall_s:.2f} s, summary {args.out} (reduce exit {rc})\n"
        )
    return rc


if __name__ == "__main__":
    sys.exit(main())
