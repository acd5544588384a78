#!/usr/bin/env python3
"""Write memory-snapshot pickles as JSON (torch-snapshot.md §2.6): what a user gets from
`json.dump(pickle.load(f), out)`.

Usage: snapshot_to_json.py [--segments-only] OUT_DIR PICKLE...

Writes OUT_DIR/<pickle file name>.json for each pickle; with --segments-only, the list of
segments alone (what `torch.cuda.memory_snapshot()` returns). The snapshots are plain
dict/list/tuple/str/int/float/bool/None data, so they load with a restricted unpickler that
refuses every global (no torch needed); tuples become JSON lists, as `json` writes them.
A value JSON cannot hold (bytes, sets, non-string keys) stops the script with its path.
"""
import json
import os
import pickle
import sys


class NoGlobals(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"global {module}.{name} refused")

    def persistent_load(self, pid):
        raise pickle.UnpicklingError("persistent id refused")


def main():
    args = sys.argv[1:]
    segments_only = args[0] == "--segments-only"
    if segments_only:
        args = args[1:]
    out = args[0]
    os.makedirs(out, exist_ok=True)
    for path in args[1:]:
        with open(path, "rb") as f:
            data = NoGlobals(f).load()
        if segments_only and isinstance(data, dict):
            data = data["segments"]
        name = os.path.basename(path) + ".json"
        with open(os.path.join(out, name), "w", encoding="utf-8") as f:
            json.dump(data, f)


if __name__ == "__main__":
    main()
