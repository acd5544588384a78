#!/usr/bin/env python3
"""`proflens.memory_events(path, parity=True)` against RL-Insight's own DataFrame
(`MemoryClusterParser({"rank_list": "all"}).run(path)`, PyPI `rl-insight`, module
`recipe.parser`): the same columns in the same order, the same dtypes for the typed columns, the
same rows in the same order, value for value (floats bit for bit). Prints one line per folder;
exit 0 when every folder is identical (docs/frames.md §3.1).

RL-Insight is not a test dependency; run this in an environment that has it, e.g. a venv that
sees the test venv's packages plus `pip install --no-deps rl-insight ijson loguru omegaconf`:

    PYTHONPATH=python VENV/bin/python scripts/rl_insight_parity.py FOLDER [FOLDER ...]

Without folders: the fixtures (RL-Insight's memory_data, msinsight's five ranks, the sample run).
"""
import os
import sys

import pandas as pd

import proflens

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX = os.path.join(ROOT, "..", "shared", "fixtures")
DEFAULT = [
    os.path.join(FIX, "rl_insight", "data", "recipe", "memory_data"),
    os.path.join(FIX, "ascend", "Ascend__msinsight", "test", "data", "pytorch", "text"),
    os.path.join(ROOT, "fixtures", "sample", "sample_run"),
]
TYPED = ("rank_id", "size_kb", "start_time_ms", "duration_ms", "total_allocated_mb",
         "total_reserved_mb", "total_active_mb")


def rows(df):
    cell = lambda x: None if not isinstance(x, str) and pd.isna(x) else x
    return [tuple(cell(x) for x in r) for r in df.astype(object).itertuples(index=False)]


def compare(path, parser):
    theirs = parser({"rank_list": "all"}).run(path)
    ours = proflens.memory_events(path, parity=True)
    if list(ours.columns) != list(theirs.columns):
        return f"columns differ: {list(ours.columns)} vs {list(theirs.columns)}"
    for col in TYPED:
        if ours[col].dtype != theirs[col].dtype:
            return f"{col}: dtype {ours[col].dtype} vs {theirs[col].dtype}"
    a, b = rows(ours), rows(theirs)
    if len(a) != len(b):
        return f"{len(a)} rows vs {len(b)}"
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"row {i} differs:\n  proflens   {x}\n  RL-Insight {y}"
    return None, len(a)


def main():
    try:
        from recipe.parser import MemoryClusterParser
    except ImportError:
        print("rl-insight is not installed: pip install --no-deps rl-insight ijson loguru omegaconf")
        return 2
    try:
        from loguru import logger

        logger.remove()  # RL-Insight logs every rank
    except ImportError:
        pass
    bad = 0
    for path in sys.argv[1:] or DEFAULT:
        out = compare(path, MemoryClusterParser)
        if isinstance(out, tuple):
            print(f"identical: {path}: {out[1]} rows")
        else:
            bad += 1
            print(f"DIFFERENT: {path}: {out}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
