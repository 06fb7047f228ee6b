"""The cumulative link model (R's ``clm``): likelihood, banded Newton, start, prediction.

:class:`Cumulative` is the family object; the modules hold its numerics:
:mod:`~ordstats.families.cumulative.likelihood` (negative log-likelihood, gradient
and Hessian), :mod:`~ordstats.families.cumulative.banded` (many thresholds),
:mod:`~ordstats.families.cumulative.start` (starting values) and
:mod:`~ordstats.families.cumulative.prediction` (probabilities).
"""

from __future__ import annotations

from ordstats.families.cumulative.family import Cumulative

__all__ = ["Cumulative"]
