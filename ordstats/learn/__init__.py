"""scikit-learn-facing ordinal regression: an estimator and ordinal metrics.

:class:`OrdinalClassifier` (needs the ``ordstats[sklearn]`` extra) is imported on
first use, so ``import ordstats.learn`` and :mod:`ordstats.learn.metrics`
(NumPy only) work without scikit-learn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ordstats.learn import metrics

if TYPE_CHECKING:
    from ordstats.learn.estimator import OrdinalClassifier

__all__ = ["OrdinalClassifier", "metrics"]


def __getattr__(name: str) -> object:
    if name == "OrdinalClassifier":
        from ordstats.learn.estimator import OrdinalClassifier

        return OrdinalClassifier
    raise AttributeError(f"module 'ordstats.learn' has no attribute {name!r}")
