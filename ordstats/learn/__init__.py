"""scikit-learn-facing ordinal regression: estimators and ordinal metrics.

:class:`OrdinalClassifier` and :class:`OrdinalClassifierCV` (they need the
``ordstats[sklearn]`` extra) are imported on first use, so
``import ordstats.learn`` works without scikit-learn; so are the ordinal
boosters :class:`OrdinalLGBMClassifier` and :class:`OrdinalXGBClassifier`
(``ordstats[lightgbm]``, ``ordstats[xgboost]``).  The ordinal metrics live
in :mod:`ordstats.metrics` (NumPy only); ``learn.metrics`` is the same module.

The estimators check ``X``, ``y`` and ``sample_weight`` with scikit-learn's
own validation, so bad input there raises scikit-learn's ``ValueError`` (and
an unfitted estimator its ``NotFittedError``), as every scikit-learn
estimator does; pipelines and ``check_estimator`` rely on those types.
numpy inputs pair rows by position, as in scikit-learn; a pandas ``y``,
``sample_weight`` or ``groups`` is paired with a pandas ``X`` by index label, as
everywhere in ordstats (the same labels in another order are reordered to ``X``;
other labels raise a ``DataError``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import ordstats.metrics as metrics

if TYPE_CHECKING:
    from ordstats.learn.boosting import OrdinalLGBMClassifier, OrdinalXGBClassifier
    from ordstats.learn.estimator import OrdinalClassifier, OrdinalClassifierCV

__all__ = [
    "OrdinalClassifier",
    "OrdinalClassifierCV",
    "OrdinalLGBMClassifier",
    "OrdinalXGBClassifier",
    "metrics",
]


def __getattr__(name: str) -> object:
    if name in ("OrdinalClassifier", "OrdinalClassifierCV"):
        from ordstats.learn import estimator

        return getattr(estimator, name)
    if name in ("OrdinalLGBMClassifier", "OrdinalXGBClassifier"):
        from ordstats.learn import boosting

        return getattr(boosting, name)
    raise AttributeError(f"module 'ordstats.learn' has no attribute {name!r}")
