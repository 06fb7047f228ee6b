"""Run the command-line tool as ``python -m ordstats`` (see :mod:`ordstats.cli`)."""

from __future__ import annotations

import sys

from ordstats.cli import main

if __name__ == "__main__":
    sys.exit(main())
