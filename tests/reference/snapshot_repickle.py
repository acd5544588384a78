#!/usr/bin/env python3
"""Re-pickle every snapshot fixture with another protocol (torch-snapshot.md §8.4).

Usage: snapshot_repickle.py PROTOCOL SRC_DIR OUT_DIR

The fixtures are plain dict/list/tuple/str/int/float/bool data, so they load
with a restricted unpickler that refuses every global (no torch needed) and
dump unchanged. CPython's pickler keeps the memo sharing of the original
objects (shared frame dicts and frame lists stay shared).
"""
import os
import pickle
import sys


class NoGlobals(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"global {module}.{name} refused")

    def persistent_load(self, pid):
        raise pickle.UnpicklingError("persistent id refused")


def main():
    proto, src, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    os.makedirs(out, exist_ok=True)
    for name in sorted(os.listdir(src)):
        if not (name.endswith(".pkl") or name.endswith(".pickle")):
            continue
        with open(os.path.join(src, name), "rb") as f:
            data = NoGlobals(f).load()
        with open(os.path.join(out, name), "wb") as f:
            pickle.dump(data, f, protocol=proto)


if __name__ == "__main__":
    main()
