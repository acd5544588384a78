#!/usr/bin/env bash
# The real proflens ($PROFLENS_REAL_BIN), except that `summarize` given a folder holding a file
# named DIE_HERE kills itself (SIGKILL) before writing anything, and one holding KILL_WORKER
# kills the process that started it (the Ray worker or pool process running the task) and
# itself: how test_cluster.py makes one task die while the real binary analyses every other.
if [ "${1:-}" = summarize ]; then
  for p in "${@:2}"; do
    if [ -e "$p/DIE_HERE" ]; then kill -KILL $$; fi
    if [ -e "$p/KILL_WORKER" ]; then kill -KILL "$PPID"; kill -KILL $$; fi
  done
fi
exec "$PROFLENS_REAL_BIN" "$@"
