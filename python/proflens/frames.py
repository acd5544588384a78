"""Result tables as DataFrames, straight from the Rust core (docs/frames.md).

Each function runs the native ``proflens`` binary with ``--format arrow``: the table crosses
as one Arrow IPC stream on a pipe (no file, no text round trip), is read by ``pyarrow`` and
handed over as a pandas DataFrame (default when pandas is installed), a polars DataFrame
(``backend="polars"``) or the ``pyarrow.Table`` itself (``backend="arrow"``). No rule is
re-implemented here: the numbers are the CLI's, cell by cell.

Types: integer columns stay ``int64`` (pandas' nullable ``Int64`` where a column has nulls),
exact times are integer **ns** columns named ``*_ns`` (``release_time_ns``, ``start_ns``, …:
never a float round trip of an epoch time), text columns are categoricals, lists (call stack
frames, tags, labels) are lists of strings.

Problems: every problem the analysis reports arrives as a :class:`ProflensWarning` (category,
file, line / byte, message) and, on a pandas result, as ``df.attrs["problems"]`` (a list of
dicts); :func:`last_problems` gives the last call's problems as a table. When nothing could be
analysed, :class:`proflens.ProflensError` is raised with the CLI's words.

    >>> import proflens
    >>> ev = proflens.memory_events("run/", parity=True)        # RL-Insight's MemoryEventRow columns
    >>> ev = proflens.memory_events("run/")                     # + user frames, release times, …
    >>> top = ev.groupby("user_frame", observed=True)["size_kb"].sum().nlargest(10)
    >>> st = proflens.steps("run/")                              # anomaly.md §6.3, one row per step
"""

from __future__ import annotations

import json
import os
import subprocess
import warnings
from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

from . import EXIT_NOTHING, ProflensError, binary

__all__ = [
    "ProflensWarning",
    "memory_events",
    "steps",
    "bubbles",
    "kernels",
    "gpu_breakdown",
    "structure",
    "diff",
    "Diff",
    "GpuBreakdown",
    "memory_curves",
    "cluster_ranks",
    "comm",
    "Comm",
    "snapshot",
    "Snapshot",
    "last_problems",
]

Paths = Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]]

#: The environment variable that makes the CLI write its problems as JSON Lines.
PROBLEMS_ENV = "PROFLENS_PROBLEMS"

_last: List[Dict[str, Any]] = []


class ProflensWarning(UserWarning):
    """A problem the analysis reported (``severity``, ``code``, ``file``, ``line``, ``byte``,
    ``column``, ``message`` are attributes of the warning's message object)."""


class Problem(str):
    """A warning's text with the problem's fields as attributes."""

    def __new__(cls, fields: Dict[str, Any]) -> "Problem":
        where = fields.get("file") or ""
        if fields.get("line") is not None:
            where += f", line {fields['line']}"
        if fields.get("byte") is not None:
            where += f", byte {fields['byte']}"
        text = f"{fields.get('severity')} {fields.get('code')}: {where}: {fields.get('message')}"
        obj = super().__new__(cls, text)
        for k, v in fields.items():
            setattr(obj, k, v)
        return obj


def _paths(paths: Paths) -> List[str]:
    if isinstance(paths, (str, os.PathLike)):
        return [os.fspath(paths)]
    out = [os.fspath(p) for p in paths]
    if not out:
        raise ProflensError("no path given")
    return out


def _pyarrow():
    try:
        import pyarrow  # noqa: F401
        import pyarrow.ipc  # noqa: F401
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ProflensError(
            "proflens DataFrames need pyarrow: pip install 'proflens[pandas]' (or [polars], or pyarrow)"
        ) from e
    return pyarrow


def _run(args: List[str], what: str):
    """``proflens ARGS`` with problems as JSON Lines: the Arrow table on stdout, the problems."""
    pa = _pyarrow()
    env = dict(os.environ)
    env[PROBLEMS_ENV] = "jsonl"
    p = subprocess.run([binary(), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    problems: List[Dict[str, Any]] = []
    other: List[str] = []
    for line in p.stderr.decode("utf-8", "replace").splitlines():
        if line.startswith("{"):
            try:
                problems.append(json.loads(line))
                continue
            except ValueError:
                pass
        other.append(line)
    if p.returncode == EXIT_NOTHING or not p.stdout:
        raise ProflensError(
            f"{what}: nothing analysed: "
            + "; ".join([*other, *(Problem(x) for x in problems)]).strip()
        )
    table = pa.ipc.open_stream(pa.py_buffer(p.stdout)).read_all()
    return table, problems


def _hand_over(tables, problems: List[Dict[str, Any]], backend: Optional[str]):
    pa = _pyarrow()
    global _last
    _last = problems
    for x in problems:
        warnings.warn(ProflensWarning(Problem(x)), stacklevel=3)
    table = tables[0] if len(tables) == 1 else pa.concat_tables(tables).unify_dictionaries()
    if backend is None:
        try:
            import pandas  # noqa: F401

            backend = "pandas"
        except ImportError:
            backend = "arrow"
    if backend == "arrow":
        return table
    if backend == "polars":
        try:
            import polars as pl
        except ImportError as e:
            raise ProflensError("backend='polars' needs polars: pip install 'proflens[polars]'") from e
        return pl.from_arrow(table)
    if backend != "pandas":
        raise ProflensError(f"unknown backend {backend!r}: 'pandas', 'polars' or 'arrow'")
    import pandas as pd

    df = table.to_pandas()
    nullable = {pa.int64(): pd.Int64Dtype(), pa.bool_(): pd.BooleanDtype()}
    for f in table.schema:
        # an int64 / bool column with nulls stays integer / boolean (pandas' nullable Int64 /
        # boolean), not float64 / object
        if f.type in nullable and table[f.name].null_count:
            df[f.name] = table[f.name].to_pandas(types_mapper=nullable.get)
    df.attrs["problems"] = problems
    return df


def _collect(paths: Paths, argv: List[str], what: str, backend: Optional[str]):
    tables, problems = [], []
    for p in _paths(paths):
        t, pr = _run([argv[0], p, *argv[1:]], what)
        tables.append(t)
        problems.extend(pr)
    return _hand_over(tables, problems, backend)


def memory_events(
    paths: Paths,
    *,
    parity: bool = False,
    strategy: Optional[str] = None,
    max_match_lag_us: Optional[float] = None,
    ranks: Optional[str] = None,
    roles: Optional[Iterable[str]] = None,
    sources: Optional[Iterable[int]] = None,
    backend: Optional[str] = None,
):
    """Ascend memory events matched to call stacks: ``proflens memory PATH --format arrow``
    (ascend-memory.md; docs/frames.md §3.1), one row per ``operator_memory.csv`` row in
    output order, for every rank folder under each path (a run root works like ``analyze``).

    Columns: with ``parity=True`` exactly RL-Insight's ``MemoryEventRow``: ``name, role,
    rank_id, call_stack, call_stack_top, size_kb, start_time_ms, duration_ms,
    total_allocated_mb, total_reserved_mb, total_active_mb, device_type`` (KB, ms and MB as
    floats, as the parser's DataFrame has them). Otherwise those, then ``user_frame``,
    ``user_frame_status``, ``match_quality``, ``match_lag_us``, ``matched_op_ts_ns`` (int ns),
    ``stack_origin``, ``call_stack_frames`` (list of frames, outermost first as written),
    ``released``, ``release_time_ns`` / ``active_release_time_ns`` (int ns, null when never
    released), ``active_duration_ms``, ``release_total_*_mb``, ``stream_ptr``, ``component``,
    ``phase``, ``source_dir``, ``source_index``, ``source_line``, ``start_time_ns`` (int ns).

    Options are the CLI's: ``strategy`` ("nearest-before" / "enclosing-first"),
    ``max_match_lag_us``, ``ranks`` ("all", "0,2,4-7"), ``roles``, ``sources``.
    """
    argv = ["memory", "--format", "arrow", "--quiet"]
    if parity:
        argv.append("--parity")
    if strategy:
        argv += ["--strategy", strategy]
    if max_match_lag_us is not None:
        argv += ["--max-match-lag-us", repr(float(max_match_lag_us))]
    if ranks:
        argv += ["--ranks", ranks]
    if roles:
        argv += ["--roles", ",".join(roles)]
    if sources:
        argv += ["--sources", ",".join(str(s) for s in sources)]
    return _collect(paths, argv, "memory_events", backend)


def memory_curves(
    paths: Paths,
    *,
    ranks: Optional[str] = None,
    roles: Optional[Iterable[str]] = None,
    sources: Optional[Iterable[int]] = None,
    backend: Optional[str] = None,
):
    """The allocator curves per pool of every Ascend rank: ``proflens memory PATH --table
    curves --format arrow`` (ascend-memory.md §9.5, pools §8.2 ``component``; docs/frames.md
    §3.5). One row per allocator sample: at every ``operator_memory.csv`` row's allocation and
    at every released row's release, the totals the allocator wrote there. PTA (``aten::`` /
    ``npu::``), GE (``cann::``) and OTHER rows are different allocators and have separate
    curves, never mixed.

    Columns: ``rank_id`` (int), ``role``, ``source_dir``, ``pool`` (``PTA`` / ``GE`` /
    ``OTHER``), ``time_ns`` (int ns), ``kind`` (``alloc`` / ``release``; at equal times allocs
    first), ``source_line`` (the CSV line of the row), ``allocated_mb``, ``reserved_mb``,
    ``active_mb`` (MiB as written, float; null where the file has no such total). Ranks in
    (role, rank, source) order, then pools, then samples by (time, kind, line).

    Options are the CLI's: ``ranks`` ("all", "0,2,4-7"), ``roles``, ``sources``.
    """
    argv = ["memory", "--table", "curves", "--format", "arrow", "--quiet"]
    if ranks:
        argv += ["--ranks", ranks]
    if roles:
        argv += ["--roles", ",".join(roles)]
    if sources:
        argv += ["--sources", ",".join(str(s) for s in sources)]
    return _collect(paths, argv, "memory_curves", backend)


def _anomaly(paths: Paths, table: str, script_compatible: bool, backend: Optional[str]):
    argv = ["anomaly", "--table", table, "--format", "arrow"]
    if script_compatible:
        argv.append("--script-compatible")
    return _collect(paths, argv, table, backend)


def steps(paths: Paths, *, script_compatible: bool = False, backend: Optional[str] = None):
    """One row per step of every rank: ``proflens anomaly PATH --table steps --format arrow``
    (anomaly.md §6.3; docs/frames.md §3.2). Rank folders (Ascend) and PyTorch profiler traces.

    Columns: ``rank_id`` (Int64, null when unknown), ``rank_dir``, ``step_id``, ``group_id``,
    ``start_ns`` / ``end_ns`` (int ns, the step window), then in ms (float): ``service_ms``,
    ``device_busy_union_ms``, ``underfeed_ms``, ``underfeed_ratio`` (0–1),
    ``prelaunch_gap_ms``, ``tail_gap_ms``, ``internal_bubble_total_ms``,
    ``largest_internal_bubble_ms``; counts (int): ``bubble_count``, ``total_kernel_count``,
    ``ai_core_count``, ``ai_cpu_count``, ``hccl_count``, ``other_count``;
    ``kernel_duration_sum_ms``, ``kernel_wait_sum_ms``, ``stream_count``, ``main_stream``,
    ``wall_ms``, ``busy_union_ms``, ``kernel_sum_ms``, ``total_cost_ms``, ``small_op_count``,
    ``small_op_verdict``, ``truncated`` (bool), ``tags`` and ``labels`` (lists).
    """
    return _anomaly(paths, "steps", script_compatible, backend)


def bubbles(paths: Paths, *, script_compatible: bool = False, backend: Optional[str] = None):
    """One row per emitted bubble window of every rank: ``proflens anomaly PATH --table
    bubbles --format arrow`` (anomaly.md §6.4; docs/frames.md §3.2).

    Columns: ``rank_id``, ``rank_dir``, ``bubble_id``, ``scope``, ``step_id`` ("global" for
    bubbles outside steps), ``group_id``, ``start_ns`` / ``end_ns`` (int ns),
    ``duration_ms``, ``host_visible_coverage_ratio``, ``sync_marker_overlap_ratio``,
    ``comm_marker_overlap_ratio`` (0–1, null when not measured), ``candidate_labels`` (list),
    ``significant`` (bool), ``structure_id``, ``between_structures`` (bool), ``tags`` (list),
    ``before_kernel``, ``after_kernel``.
    """
    return _anomaly(paths, "bubbles", script_compatible, backend)


def kernels(paths: Paths, *, backend: Optional[str] = None):
    """The kernel table per name of every GPU rank: ``proflens anomaly PATH --table kernels
    --format arrow`` (docs/frames.md §3.3; the ``kernels_*.csv`` of ``--report-dir`` with the
    rank in front). One row per (kernel name, category) of each PyTorch profiler trace, by Σ
    duration descending; Ascend ranks have no such table (no rows).

    Columns: ``rank_id`` (Int64, null when unknown), ``rank_dir``, ``name``, ``category``
    (``compute`` / ``communication`` / ``memory``), ``streams`` (list of the streams the name ran
    on, ascending; ``device:stream`` when the rank used several devices), ``count`` (int),
    ``total_ns``, ``mean_ns`` (Σ / count rounded to the nearest ns), ``max_ns`` (int ns; the
    CSV's ``*_us`` with 3 decimals), ``share_of_span`` (Σ duration / the rank's device span, first
    device-op start to last end; above 1 when the name runs on several streams at once; null when
    the span is 0).
    """
    return _collect(paths, ["anomaly", "--table", "kernels", "--format", "arrow"], "kernels", backend)


def structure(paths: Paths, *, script_compatible: bool = False, backend: Optional[str] = None):
    """The structure breakdown of every rank: ``proflens anomaly PATH --table structures
    --format arrow`` (anomaly.md §4.2, §4.4; docs/frames.md §3.8): one row per structure
    (repeated kernel block) of every step, the scalar fields of the anomaly JSON's
    ``structures[]`` in its order. Rank folders (Ascend) and PyTorch profiler traces.

    Columns: ``rank_id`` (Int64, null when unknown), ``rank_dir``, ``step_id``,
    ``structure_id``, ``structure_type``, ``kernel_count``, ``start_ns`` / ``end_ns`` (int ns,
    the structure's span; the JSON's exact ``start_us`` / ``end_us``), in ms (float):
    ``wall_ms``, ``device_busy_union_ms``, ``busy_union_ms``, ``kernel_sum_ms``,
    ``total_cost_ms``; ``ai_core_pct``, ``ai_cpu_pct``, ``hccl_pct`` (shares 0–1 of its
    kernels), ``structure_share`` (wall / the step's service time), ``prelaunch_gap_ms``,
    ``tail_gap_ms``, ``internal_bubble_total_ms``, ``largest_internal_bubble_ms``,
    ``bubble_count``, ``inter_structure_gap_ms``, ``opens_with_gap`` (bool); the block and the
    side part (§4.2) as ``block_*`` / ``side_*``: ``kernel_count``, ``dominant_task_type``,
    ``dominant_stream``, ``wait_heavy_count``, ``wall_ms``, ``busy_union_ms``,
    ``kernel_sum_ms``, ``total_cost_ms``, ``internal_bubble_total_ms``,
    ``largest_internal_bubble_ms``, ``bubble_count``; ``block_side_gap_ms``,
    ``comm_overlap_ratio`` (null when not measured). The parts' kernel lists stay in the JSON.
    """
    return _anomaly(paths, "structures", script_compatible, backend)


class _Tables:
    """Named tables computed at their first use and kept: the lazy part of
    :class:`GpuBreakdown`, :class:`Snapshot` and :class:`Diff` (each says in ``_load`` how one
    table is made)."""

    def __init__(self):
        self._tables: Dict[str, Any] = {}

    def _load(self, name: str):  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def _table(self, name: str):
        if name not in self._tables:
            self._tables[name] = self._load(name)
        return self._tables[name]


def _lazy(name: str, doc: str) -> property:
    """A read-only attribute that is the table ``name`` of a :class:`_Tables`."""
    return property(lambda self: self._table(name), doc=doc)


class GpuBreakdown(_Tables):
    """HTA's breakdown tables of every GPU rank (gpu-traces.md §2–§3; docs/frames.md §3.7): the
    values of each rank's ``gpu`` block of ``proflens anomaly --out``, one DataFrame per HTA
    table, each ``proflens anomaly PATH --table gpu-… --format arrow`` computed at its first
    use and kept. Ascend ranks have no rows. Every table starts with ``rank_id`` (Int64, null
    when unknown) and ``rank_dir``.

    ``temporal`` (HTA ``get_temporal_breakdown``; one row per rank): ``window``
    (``hta_parity``: ≥ 2 ProfilerSteps, GPU events launched at or after the last step's start
    dropped, as HTA; ``full_capture`` otherwise), ``profiler_steps``, ``last_step_start_us``
    (Int64 µs, null for ``full_capture``), ``gpu_events_kept``, ``gpu_events_dropped``,
    ``span_us`` (HTA's ``kernel_time``), ``idle_us``, ``compute_us``, ``non_compute_us``
    (integral µs as HTA; null when no kept event has a stream). HTA's percentages are these
    over ``span_us``.

    ``idle_by_stream`` (HTA ``get_idle_time_breakdown``, one row per (rank, stream), the
    categories side by side): ``stream``, ``host_wait_us``, ``kernel_wait_us``, ``other_us``
    (integral µs; null where the category is absent).

    ``kernel_types`` (HTA ``get_gpu_kernel_breakdown``'s kernel-type table, whole capture; one
    row per (rank, category)): ``category`` (``compute`` / ``communication`` / ``memory``,
    gpu-traces.md §1), ``count``, ``sum_ms`` (Σ duration), ``busy_ms`` (union of their
    intervals).

    ``steps`` (one row per (rank, step), the anomaly steps' windows): ``step_id``, then
    ``compute_*``, ``communication_*``, ``memory_*`` (``count``, ``sum_ms``, ``busy_ms``),
    ``comm_compute_overlap_ms``, ``exposed_comm_ms``.
    """

    _TABLES = {"temporal": "gpu-time", "idle_by_stream": "gpu-idle",
               "kernel_types": "gpu-kernel-types", "steps": "gpu-steps"}

    def __init__(self, paths: Paths, backend: Optional[str]):
        self.paths = _paths(paths)
        self._backend = backend
        super().__init__()

    def _load(self, name: str):
        argv = ["anomaly", "--table", self._TABLES[name], "--format", "arrow"]
        return _collect(self.paths, argv, f"gpu_breakdown {name}", self._backend)

    temporal = _lazy("temporal", "Idle / compute / non-compute time per rank (see the class).")

    idle_by_stream = _lazy("idle_by_stream", "Idle time per (rank, stream) by category (see the class).")

    kernel_types = _lazy("kernel_types", "Count, Σ duration and busy time per (rank, kernel category) (see the class).")

    steps = _lazy("steps", "Kernel categories and overlap per (rank, step) (see the class).")


def gpu_breakdown(paths: Paths, *, backend: Optional[str] = None) -> GpuBreakdown:
    """HTA's breakdowns of every GPU rank under ``paths`` (PyTorch profiler traces, a folder
    of them, a run root) as a :class:`GpuBreakdown` with one DataFrame per HTA table:
    ``.temporal``, ``.idle_by_stream``, ``.kernel_types``, ``.steps`` (each computed at its
    first use)."""
    return GpuBreakdown(paths, backend)


def _options(opts: Dict[str, Any]) -> List[str]:
    """The CLI flags of keyword options: ``top_n=3`` → ``--top-n 3``; lists repeat the flag;
    a dict (``map``) gives ``KEY=VALUE`` items; ``True`` is a bare flag, ``False``/``None`` none."""
    argv: List[str] = []
    for key, value in opts.items():
        flag = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            argv.append(flag)
        elif isinstance(value, dict):
            for k, v in value.items():
                argv += [flag, f"{k}={v}"]
        elif isinstance(value, (list, tuple)):
            for v in value:
                argv += [flag, str(v)]
        else:
            argv += [flag, str(value)]
    return argv


class Snapshot(_Tables):
    """The tables of one memory snapshot (``torch.cuda.memory._dump_snapshot()`` pickle):
    ``proflens snapshot PATH --table peaks|curves --format arrow`` (torch-snapshot.md §7;
    docs/frames.md §3.4). Each table is computed at its first use and kept.

    ``peaks``: one row per reported point of every device (the scalar fields ``proflens
    snapshot --json`` writes for ``devices[].points[]``): ``device``, ``kind`` (``global_peak``,
    ``peak``, ``oom``, ``end``), ``index`` (trace entry), ``time_us`` (Int64 µs as recorded, null
    without ``time_us``), ``height_bytes`` (the analysed curve's level), ``allocated_bytes``,
    ``active_bytes``, ``reserved_bytes``, ``fragmentation_bytes`` (reserved − active),
    ``prominence_bytes``, ``recurring_count`` / ``recurring_min_bytes`` /
    ``recurring_median_bytes`` / ``recurring_max_bytes`` (the recurring-peak cluster, §7.4),
    ``annotations`` (list), ``compile_context``, ``user_metadata``, ``live_bytes``,
    ``live_tensors``, ``top_site`` / ``top_site_bytes`` (the largest contributor),
    ``more_sites`` / ``more_sites_bytes`` (contributors beyond ``top_contributors``),
    ``largest_inactive_block_bytes``, ``oom_requested_bytes``, ``oom_device_free_bytes``,
    ``oom_cause``. Bytes are int64.

    ``curves``: one row per trace entry of every analysed device (§7.3): ``device``, ``entry``,
    ``time_us`` (Int64, null when the entry has no time), ``allocated_bytes``, ``active_bytes``,
    ``reserved_bytes`` (int64, the levels after the entry).

    ``live_at(entry, device=None)`` and ``contributors(entry, device=None)``: the live set after
    one trace entry (§7.6, active semantics: a block is live until ``free_completed``) of one
    device (default: the first analysed), as the page's live view has it — every live tensor,
    and every site they come from (§7.5), largest first. See the methods for the columns.

    A list of paths (even of one) gives one ``Snapshot`` over all of them: every table is the
    files' tables concatenated in the order given, with a ``file`` column first (the path as
    given, categorical), so ``snap.peaks.groupby("file")`` compares them; ``live_at`` and
    ``contributors`` then take ``file=`` (trace entries are numbered per file). One path gives
    the tables without the ``file`` column.
    """

    def __init__(self, path, options: Dict[str, Any], backend: Optional[str]):
        #: True when a list of paths was given: every table has a ``file`` column first.
        self.many = not isinstance(path, (str, os.PathLike))
        self.paths = _paths(path)
        self.path = self.paths[0]
        self._argv = _options(options)
        self._backend = backend
        super().__init__()

    def _files(self, argv: List[str], what: str, paths: List[str]):
        if not self.many:
            return _collect(paths, argv, what, self._backend)
        pa = _pyarrow()
        tables, problems = [], []
        for p in paths:
            t, pr = _run([argv[0], p, *argv[1:]], what)
            col = pa.array([p] * t.num_rows, pa.string()).dictionary_encode()
            tables.append(t.add_column(0, "file", col))
            problems.extend(pr)
        return _hand_over(tables, problems, self._backend)

    def _load(self, name: str):
        argv = ["snapshot", "--table", name, "--format", "arrow", *self._argv]
        return self._files(argv, f"snapshot {name}", self.paths)

    peaks = _lazy("peaks", "One row per reported point (see the class).")

    curves = _lazy("curves", "Allocated / active / reserved bytes after every trace entry (see the class).")

    def _at(self, name: str, entry: int, device: Optional[int], file):
        extra = ["--entry", str(int(entry))]
        if device is not None:
            extra += ["--device", str(int(device))]
        argv = ["snapshot", "--table", name, "--format", "arrow", *extra, *self._argv]
        if file is None:
            if len(self.paths) > 1:
                raise ProflensError(f"snapshot {name}: say which file (file=...): "
                                    "trace entries are numbered per file")
            paths = self.paths
        else:
            paths = [os.fspath(file)]
            if paths[0] not in self.paths:
                raise ProflensError(f"snapshot {name}: {paths[0]} is not one of {self.paths}")
        return self._files(argv, f"snapshot {name}", paths)

    def live_at(self, entry: int, device: Optional[int] = None, file=None):
        """Every tensor live after trace entry ``entry``, largest first (``proflens snapshot
        PATH --table live --entry N``): ``device``, ``entry``, ``record`` (lifetime record id),
        ``bytes`` (int64, requested), ``addr`` (``0x…``), ``memoryviz_name`` (``b'<hex>_<v>'``),
        ``alloc_index`` (Int64, null when allocated before the recording), ``site``, ``link``,
        ``stack_kind`` (``alloc`` / ``free_site`` / ``block`` / ``none``). With several files,
        ``file`` says which (trace entries are numbered per file)."""
        return self._at("live", entry, device, file)

    def contributors(self, entry: int, device: Optional[int] = None, file=None):
        """Every site of the tensors live after trace entry ``entry``, largest first
        (``proflens snapshot PATH --table contributors --entry N``; the report's contributors
        at a peak, but all of them): ``device``, ``entry``, ``site``, ``site_kind``, ``origin``,
        ``bytes`` (int64), ``percent`` (of the analysed curve's level at the entry), ``tensors``,
        ``first_alloc_index`` (Int64), ``link``, ``chain`` (list of frame labels, innermost
        first). With several files, ``file`` says which."""
        return self._at("contributors", entry, device, file)


def snapshot(path, *, backend: Optional[str] = None, **options) -> Snapshot:
    """The analysis of one memory snapshot as tables (:class:`Snapshot`: ``.peaks``,
    ``.curves``, ``.live_at(entry)``, ``.contributors(entry)``); a list of paths gives one
    :class:`Snapshot` whose tables hold every file's rows with a ``file`` column first.
    ``options`` are ``proflens snapshot``'s: ``top_n``, ``top_contributors``, ``dedup_pct``,
    ``min_sep_ms``, ``min_prominence_pct``, ``curve`` ("allocated" / "active" /
    "reserved"), ``frame_depth``, ``project_root``, ``include_prefix`` / ``exclude_prefix``
    (lists), ``link_style``, ``repo_url``, ``commit``, ``map`` ({recorded: local})."""
    return Snapshot(path, options, backend)


class Diff(_Tables):
    """The delta tables of ``proflens diff A B`` (docs/frames.md §3.9): the rows of the ``--json``
    document, one DataFrame per table, each ``proflens diff A B --table T --format arrow``
    computed at its first use and kept. Asking for a table of the other kind of input raises
    :class:`ProflensError` with the CLI's words.

    Traces (PyTorch profiler ``*.json[.gz]``), rank folders and runs:

    ``ops`` (the JSON's ``ops``; HTA's ``TraceDiff.compare_traces`` when both sides are GPU
    traces, ``ops_rule``), one row per op or kernel name of either side, largest |Δ time| first:
    ``name``, ``a_count``, ``b_count``, ``delta_count`` (int), ``a_time_us``, ``b_time_us``,
    ``delta_time_us`` (Σ duration in µs, float as the JSON), ``change`` (``new`` / ``gone`` /
    ``changed`` / ``same``). ``step=N`` / ``all_steps=True`` choose the steps it covers (default
    the first), ``rank=N`` the rank of a run.

    ``steps`` (the JSON's ``steps``), one row per step pair: ``step_id``, ``b_step_id`` (B's id
    when the steps were matched by order), then ``a_*``, ``b_*``, ``delta_*`` (B − A; null where
    a side has no such step) of ``service_ms``, ``device_busy_union_ms``, ``underfeed_ms``,
    ``bubble_count`` (Int64), ``bubble_total_ms``.

    Two snapshot pickles (or two devices, ``a_device`` / ``b_device``):

    ``sites`` (the JSON's ``devices[].sites_at_peak`` then ``sites_at_end``), one row per site:
    ``device``, ``b_device`` (Int64, null unless the sides compare different devices), ``at``
    (``peak`` / ``end``), ``site``, ``link`` (null without one), ``a_bytes``, ``b_bytes``,
    ``delta_bytes`` (int64), ``change``. ``curve``, ``frame_depth``, ``project_root``,
    ``link_style`` as for ``proflens diff``.
    """

    def __init__(self, a, b, options: Dict[str, Any], backend: Optional[str]):
        self.a, self.b = os.fspath(a), os.fspath(b)
        self._argv = _options(options)
        self._backend = backend
        super().__init__()

    def _load(self, name: str):
        argv = ["diff", self.a, self.b, "--table", name, "--format", "arrow", *self._argv]
        t, problems = _run(argv, f"diff {name}")
        return _hand_over([t], problems, self._backend)

    ops = _lazy("ops", "Count and Σ time per op or kernel name on both sides (see the class).")

    steps = _lazy("steps", "Service, busy, underfeed and bubbles per step pair (see the class).")

    sites = _lazy("sites", "Live bytes per site at each device's peak and end on both sides (see the class).")


def diff(a, b, *, backend: Optional[str] = None, **options) -> Diff:
    """``proflens diff A B``'s delta tables as a :class:`Diff`: ``.ops`` and ``.steps`` for two
    traces, rank folders or runs, ``.sites`` for two snapshots (each computed at its first
    use). ``options`` are the CLI's: ``step=2`` → ``--step 2``, ``all_steps=True``, ``rank``,
    ``curve``, ``frame_depth``, ``project_root``, ``link_style``, ``a_device``, ``b_device``."""
    return Diff(a, b, options, backend)


class Comm(_Tables):
    """Communication across ranks (docs/rules/communication.md; docs/frames.md §3.10): the tables
    of ``proflens comm PATH --json``, one DataFrame per table, each ``proflens comm PATH --table
    T --format arrow`` computed at its first use and kept. Units: decimal MB, ms, GB/s (= MB/ms)
    for the Ascend tables; MiB, µs, GiB/s for ``collectives``. Floats are the CSV's, bit for bit.

    ``time`` (``time_summary``, msprof-analyze's ``Total Op Info@group``), one row per (step,
    group, rank): ``step``, ``group`` (the group hash), ``rank``, ``n_ops``, ``elapse_ms``,
    ``transit_ms``, ``wait_ms``, ``sync_ms``, ``idle_ms``, ``wait_ratio``, ``sync_ratio``.

    ``bandwidth`` (``bandwidth_summary``), one row per (step, group, rank, transport):
    ``transport``, ``size_mb``, ``time_ms``, ``bandwidth_gbps``, ``large_packet_ratio`` (null
    for ``SDMA``).

    ``matrix`` (the ``Total Op Info`` links across ranks, global ranks) and ``matrix_by_kind``
    (per op kind, plus ``kind``, ``op_name``): ``step``, ``group``, ``src``, ``dst``,
    ``transport``, ``size_mb``, ``time_ms``, ``bandwidth_gbps``, ``mapped_from_metadata``.

    ``dropped_links`` (links whose local rank could not be mapped; all of them with
    ``parity=True``): ``step``, ``group``, ``kind``, ``src_local``, ``dst_local``, ``rank``,
    ``size_mb``, ``time_ms``, ``reason``.

    ``slow_links`` (one row per slow-link group): ``name``, ``count``, ``mean_ns``, ``std_ns``,
    ``min_ns``, ``q1_ns``, ``median_ns``, ``q3_ns``, ``max_ns``, ``sum_ns``, ``offset_ratio``,
    ``ops``. ``slow_ranks`` (one row per vote): ``rank``, ``group``, ``op``, ``n``, ``test``
    (``dixon`` / ``3sigma``), ``statistic``, ``threshold``, ``time_us``, ``mean_us``,
    ``start_us``. ``msi_slow_ranks`` (MindStudio Insight's slow rank list, one row per
    (step, group, slow rank)): ``step``, ``group``, ``fast_rank``, ``fast_us``, ``rank``,
    ``time_us``, ``diff_us``, ``threshold_us``, ``ops`` (``name:diff_us`` joined by ``;``).
    ``partial_ops``: ``step``, ``group``, ``op``, ``ranks``, ``missing`` (lists of ranks).

    ``collectives`` (GPU: TraceLens' NCCL collectives): ``collective_id``, ``collective``,
    ``group_size``, ``full_msg_mb``, ``comm_latency_us``, ``skew_start_us``, ``skew_end_us``,
    ``algo_bw_gbps``, ``bus_bw_gbps``.
    """

    _TABLES = {"time": "time", "bandwidth": "bandwidth", "matrix": "matrix",
               "matrix_by_kind": "matrix-by-kind", "dropped_links": "dropped",
               "slow_links": "slow-links", "slow_ranks": "slow-ranks",
               "msi_slow_ranks": "msi-slow-ranks", "partial_ops": "partial-ops",
               "collectives": "collectives"}

    def __init__(self, paths: Paths, parity: bool, step, backend: Optional[str]):
        self.paths = _paths(paths)
        self._argv = (["--parity"] if parity else []) + ([] if step is None else ["--step", str(step)])
        self._backend = backend
        super().__init__()

    def _load(self, name: str):
        argv = ["comm", *self.paths, "--table", self._TABLES[name], "--format", "arrow", *self._argv]
        t, problems = _run(argv, f"comm {name}")
        return _hand_over([t], problems, self._backend)

    time = _lazy("time", "Time summary per (step, group, rank) (see the class).")

    bandwidth = _lazy("bandwidth", "Bandwidth per (step, group, rank, transport) (see the class).")

    matrix = _lazy("matrix", "Links across ranks, Total Op Info (see the class).")

    matrix_by_kind = _lazy("matrix_by_kind", "Links across ranks per op kind (see the class).")

    dropped_links = _lazy("dropped_links", "Links not mapped to global ranks (see the class).")

    slow_links = _lazy("slow_links", "Slow-link groups (see the class).")

    slow_ranks = _lazy("slow_ranks", "Slow-rank votes (see the class).")

    msi_slow_ranks = _lazy("msi_slow_ranks", "MindStudio Insight's slow rank list (see the class).")

    partial_ops = _lazy("partial_ops", "Ops some ranks of their group lack (see the class).")

    collectives = _lazy("collectives", "GPU collectives (see the class).")


def comm(path: Paths, parity: bool = False, step=None, *, backend: Optional[str] = None) -> Comm:
    """``proflens comm``'s tables of the ranks under ``path`` (a run root, rank folders, or a
    list of them, all in one analysis: the ranks are compared with each other) as a
    :class:`Comm`: ``.time``, ``.bandwidth``, ``.matrix``, ``.matrix_by_kind``,
    ``.dropped_links``, ``.slow_links``, ``.slow_ranks``, ``.msi_slow_ranks``, ``.partial_ops``,
    ``.collectives``
    (each computed at its first use). ``parity=True`` drops the links msprof-analyze drops;
    ``step=13`` keeps one step."""
    return Comm(path, parity, step, backend)


def cluster_ranks(summaries: Paths, *, backend: Optional[str] = None):
    """The per-rank table of a cluster summary (the ``SUMMARY.json[.gz]`` that ``proflens
    reduce`` / ``proflens.cluster`` write): ``proflens cluster-ranks SUMMARY --format arrow``
    (docs/cluster-summary.md §2, §4.1; docs/frames.md §3.6). One row per ``ranks[i]``, the
    values as the summary holds them (nothing recomputed).

    Columns: ``rank_index`` (i), ``target``, ``kind`` (``ascend`` / ``kineto`` / ``snapshot``),
    ``rank_id`` (Int64), ``role``, ``rank_dir``, ``status`` (``ok`` / ``partial`` / ``failed``),
    ``bytes_read``, ``analysis_s``; the Anomaly summary (null without one): ``step_count``,
    ``service_ms_avg``, ``busy_union_ms_avg``, ``underfeed_ratio_avg``, ``comm_total_ms``,
    ``comm_wait_ratio_weighted``, ``bubble_count_avg``, ``dominant_idle_pattern``,
    ``dominant_anomaly_tags`` (list); the rank's ``cross_rank`` row: ``robust_z`` (null when
    infinite or not compared), ``slow`` (boolean, null when not compared); the Memory summary:
    ``memory_component``, ``peak_allocated_mb``, ``peak_time_ns`` (int ns),
    ``reserved_at_peak_mb``, ``max_reserved_mb``, ``live_kb``; ``snapshots`` (listed),
    ``errors``, ``warnings`` (problem counts).
    """
    return _collect(summaries, ["cluster-ranks", "--format", "arrow"], "cluster_ranks", backend)


def last_problems(backend: Optional[str] = None):
    """The problems of the last call, one row each: ``severity, code, file, line, byte,
    column, message`` (a pandas DataFrame by default, else a list of dicts when pandas is
    missing and ``backend`` is not given)."""
    if backend in (None, "pandas"):
        try:
            import pandas as pd

            cols = ["severity", "code", "file", "line", "byte", "column", "message"]
            return pd.DataFrame(_last, columns=cols)
        except ImportError:
            if backend == "pandas":
                raise ProflensError("last_problems(backend='pandas') needs pandas") from None
    return list(_last)
