#!/usr/bin/env python3
"""A stand-in `proflens` for the driver's unit tests (test_driver.py), speaking the CLI
contract of CLUSTER-CONTRACT.md with known answers and no analysis:

- `targets ROOT... --json`: every directory under the roots whose name ends in `_ascend_pt`,
  sorted per root, as `{"target": <abs path>, "kind": "ascend", "rank_id": <index>, "role":
  null, "paths": [<abs path>], "bytes": 1000, "root": <abs root>}`; exit 2 and an empty array
  when there is none.
- `summarize [--threads N] [--root R] PATH...`: one line `{"target": PATH, "status": "ok",
  "fake_argv": [the options]...}` per path, in order.
  A path whose name contains `die` makes the process write half a line and kill itself
  (SIGKILL); `crash` makes it exit 101 (a Rust panic) after the earlier lines; `killworker`
  kills the process that started it (the pool worker running the task), then itself.
- `reduce - --out F ARGS...`: writes `{"args": ARGS, "lines": [parsed stdin lines]}` to F;
  exit 0 when any line has status ok, else 2.
"""
import json
import os
import signal
import sys


def main(argv):
    cmd = argv[0]
    if cmd == "targets":
        roots = [a for a in argv[1:] if a != "--json"]
        found = []
        for root in roots:
            here = []
            for dirpath, dirnames, _ in os.walk(root):
                for d in dirnames:
                    if d.endswith("_ascend_pt"):
                        here.append(os.path.abspath(os.path.join(dirpath, d)))
            found += [(os.path.abspath(root), p) for p in sorted(here)]
        out = [{"target": p, "kind": "ascend", "rank_id": i, "role": None, "paths": [p], "bytes": 1000, "root": r}
               for i, (r, p) in enumerate(found)]
        print(json.dumps(out))
        return 0 if out else 2
    if cmd == "summarize":
        args, opts = argv[1:], []
        while args and args[0] in ("--threads", "--root"):
            opts += args[:2]
            args = args[2:]
        for p in args:
            name = os.path.basename(p)
            if "die" in name:
                sys.stdout.write('{"target": "' + p[:5])
                sys.stdout.flush()
                os.kill(os.getpid(), signal.SIGKILL)
            if "killworker" in name:
                os.kill(os.getppid(), signal.SIGKILL)
                os.kill(os.getpid(), signal.SIGKILL)
            if "crash" in name:
                sys.stderr.write("thread 'main' panicked at src/x.rs:1:1:\nboom\n")
                return 101
            line = {"target": p, "kind": "ascend", "rank_id": None, "role": None, "rank_dir": p, "status": "ok", "fake_argv": opts}
            sys.stdout.write(json.dumps(line) + "\n")
            sys.stdout.flush()
        return 0
    if cmd == "reduce":
        out = argv[argv.index("--out") + 1]
        lines = [json.loads(l) for l in sys.stdin.buffer.read().splitlines() if l.strip()]
        with open(out, "w") as f:
            json.dump({"args": argv[1:], "lines": lines}, f)
        return 0 if any(l["status"] == "ok" for l in lines) else 2
    sys.stderr.write(f"fake proflens: unknown command {cmd}\n")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
