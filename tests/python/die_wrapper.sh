#!/usr/bin/env bash
# The real proflens ($PROFLENS_REAL_BIN), except that `summarize` given a folder holding a file
# named DIE_HERE kills itself (SIGKILL) before writing anything: how test_cluster.py makes the
# process of one task die while the real binary analyses every other task.
if [ "${1:-}" = summarize ]; then
  for p in "${@:2}"; do
    if [ -e "$p/DIE_HERE" ]; then kill -KILL $$; fi
  done
fi
exec "$PROFLENS_REAL_BIN" "$@"
