"""``python -m benchmarks COMMAND``: :func:`benchmarks.cli.main`."""

import sys

from benchmarks.cli import main

sys.exit(main())
