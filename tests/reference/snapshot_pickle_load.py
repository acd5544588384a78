#!/usr/bin/env python3
"""CPython's pickle.load time on a snapshot file (benchmark comparison, torch-snapshot.md §5.1).

Usage: snapshot_pickle_load.py FILE [REPEATS]
Prints the best wall time of pickle.load over REPEATS runs (default 1) and the peak RSS.
"""
import pickle
import resource
import sys
import time


def main():
    path = sys.argv[1]
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    best = None
    for _ in range(repeats):
        with open(path, "rb") as f:
            t = time.perf_counter()
            data = pickle.load(f)
            dt = time.perf_counter() - t
        del data
        best = dt if best is None else min(best, dt)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"pickle.load: {best:.3f} s; peak RSS {rss:.1f} MiB")


if __name__ == "__main__":
    main()
