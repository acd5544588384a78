"""``python -m proflens ARGS``: runs the native ``proflens`` CLI with ARGS."""

import sys

from proflens import main

sys.exit(main())
