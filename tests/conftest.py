"""Test-wide settings: reproducible property tests under CI."""

from __future__ import annotations

import os

from hypothesis import settings

# Developers get fresh random examples on every run (that is how property tests
# find bugs); CI (.ci/run sets CI=1) uses a fixed seed so a red build is
# reproducible and never depends on luck.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
