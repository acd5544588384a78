#!/usr/bin/env python3
"""The Python test layer of scripts/test.sh: every `test_*.py` here (stdlib unittest) against
the installed package (`pip install .` in the test venv), then the closing line
"N passed, N failed" that scripts/test.sh adds to its totals (a skipped test counts as failed:
nothing here may be skipped silently). Exit 0 only when all passed.

    target/pyenv/bin/python tests/python/run.py [-k PATTERN]
"""
import os
import sys
import unittest


def main() -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    loader = unittest.TestLoader()
    if len(sys.argv) > 2 and sys.argv[1] == "-k":
        loader.testNamePatterns = [f"*{sys.argv[2]}*"]
    suite = loader.discover(here, pattern="test_*.py", top_level_dir=here)
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    # a test with failing subtests is one failed test (its subtests are listed above)
    failed = {getattr(t, "test_case", t).id() for t, _ in result.failures + result.errors + result.skipped}
    failed |= {t.id() for t in result.unexpectedSuccesses}
    bad = len(failed)
    passed = result.testsRun - bad
    print(f"{passed} passed, {bad} failed")
    return 0 if bad == 0 and result.testsRun > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
