"""proflens from Python: the native ``proflens`` CLI (the Rust core) and its cluster driver.

``pip install .`` (maturin "bin" bindings) puts the native ``proflens`` binary in the
environment's scripts directory, next to ``python``; this package finds it there and runs
it. Nothing here re-implements an analysis rule: every number comes from the binary.

    >>> import proflens
    >>> proflens.binary()                      # path of the native CLI
    >>> proflens.targets(["/data/run"])        # `proflens targets ROOT --json`, parsed
    >>> proflens.run(["anomaly", "/data/run/rank0_ascend_pt", "--out", "a.json"])

The cluster summary of many ranks (Ray, or a process pool with ``--local``):
``python -m proflens.cluster ROOT --out SUMMARY.json`` (see :mod:`proflens.cluster`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from typing import List, Optional, Sequence

__all__ = [
    "BINARY_ENV", "ProflensError", "ProflensWarning", "binary", "run", "targets", "__version__",
    "memory_events", "steps", "bubbles", "last_problems",
]

#: Environment variable naming the ``proflens`` binary to run (overrides the installed one).
BINARY_ENV = "PROFLENS_BIN"

#: Exit codes of every command (``proflens --help``): something analysed / only with
#: ``--strict``: analysed with problems / nothing analysed or bad usage.
EXIT_CLEAN, EXIT_PROBLEMS, EXIT_NOTHING = 0, 1, 2

try:
    from importlib.metadata import PackageNotFoundError, version as _dist_version

    try:
        __version__ = _dist_version("proflens")
    except PackageNotFoundError:  # running from a source tree, not installed
        __version__ = "0+source"
except ImportError:  # pragma: no cover - Python < 3.8
    __version__ = "0+source"


class ProflensError(RuntimeError):
    """The native binary is missing, or a command failed in a way the caller cannot use."""


def _exe_name() -> str:
    return "proflens.exe" if os.name == "nt" else "proflens"


def _candidates() -> List[str]:
    """Where ``pip install`` puts the binary: this interpreter's scripts directory (a venv's
    ``bin/``), the user scheme's (``pip install --user``), then the directory of
    ``sys.executable`` (some layouts put scripts there)."""
    dirs: List[str] = []
    for scheme in (None, f"{os.name}_user"):
        try:
            d = sysconfig.get_path("scripts", scheme) if scheme else sysconfig.get_path("scripts")
        except KeyError:
            continue
        if d:
            dirs.append(d)
    dirs.append(os.path.dirname(os.path.abspath(sys.executable)))
    seen = set()
    out = []
    for d in dirs:
        p = os.path.join(d, _exe_name())
        if p not in seen:
            seen.add(p)
            out.append(p)
    return out


def binary() -> str:
    """Path of the native ``proflens`` binary.

    Order: ``$PROFLENS_BIN`` (must exist), the scripts directories of this interpreter
    (where the wheel installs it), then ``proflens`` on ``PATH``. Raises
    :class:`ProflensError` naming the places looked at when none has it.
    """
    override = os.environ.get(BINARY_ENV)
    if override:
        if os.path.isfile(override) and os.access(override, os.X_OK):
            return override
        raise ProflensError(f"{BINARY_ENV}={override} is not an executable file")
    for p in _candidates():
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    found = shutil.which(_exe_name())
    if found:
        return found
    raise ProflensError(
        "the native proflens binary was not found (looked in "
        + ", ".join(_candidates())
        + " and on PATH): reinstall the package (pip install .) or set "
        + BINARY_ENV
    )


def run(args: Sequence[str], **kwargs) -> subprocess.CompletedProcess:
    """Runs ``proflens ARGS...`` (``subprocess.run`` keyword arguments pass through);
    returns the completed process, whatever its exit code."""
    return subprocess.run([binary(), *args], **kwargs)


def targets(roots: Sequence[str]) -> List[dict]:
    """The analysis targets under ``roots`` by the page's inventory rules:
    ``proflens targets ROOT... --json``, parsed (a list of
    ``{"target", "kind", "rank_id", "role", "paths", "bytes"}``, in a stable order).
    An empty list when nothing was found; :class:`ProflensError` on any other failure."""
    p = run(["targets", *roots, "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode not in (EXIT_CLEAN, EXIT_NOTHING) or (p.returncode and not p.stdout.strip()):
        if p.returncode == EXIT_NOTHING:
            sys.stderr.write(p.stderr.decode("utf-8", "replace"))
            return []
        raise ProflensError(
            f"proflens targets exited with {p.returncode}: "
            + p.stderr.decode("utf-8", "replace").strip()
        )
    listed = json.loads(p.stdout)
    if not isinstance(listed, list):
        raise ProflensError("proflens targets --json did not print a JSON array")
    return listed


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m proflens ARGS``: the native CLI with the same arguments and exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        return run(args).returncode
    except ProflensError as e:
        sys.stderr.write(f"proflens: {e}\n")
        return EXIT_NOTHING


# The DataFrame functions (docs/frames.md); imported last: they use the names above.
from .frames import (  # noqa: E402
    Comm,
    Diff,
    GpuBreakdown,
    ProflensWarning,
    Snapshot,
    bubbles,
    cluster_ranks,
    comm,
    diff,
    gpu_breakdown,
    kernels,
    last_problems,
    memory_curves,
    memory_events,
    snapshot,
    steps,
    structure,
)
