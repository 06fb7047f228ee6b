"""scikit-learn-facing ordinal regression: an estimator and ordinal metrics.

:class:`OrdinalClassifier` (needs the ``ordstats[sklearn]`` extra) is imported on
first use, so ``import ordstats.learn`` works without scikit-learn.  The
ordinal metrics live in :mod:`ordstats.metrics` (NumPy only); ``learn.metrics``
is the same module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import ordstats.metrics as metrics

if TYPE_CHECKING:
    from ordstats.learn.estimator import OrdinalClassifier

__all__ = ["OrdinalClassifier", "metrics"]


def __getattr__(name: str) -> object:
    if name == "OrdinalClassifier":
        from ordstats.learn.estimator import OrdinalClassifier

        return OrdinalClassifier
    raise AttributeError(f"module 'ordstats.learn' has no attribute {name!r}")
