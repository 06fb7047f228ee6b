"""Exceptions and warnings raised by ordstats.

Every error that ordstats raises on purpose derives from :class:`OrdstatsError`
(itself a :class:`ValueError`), and every warning from :class:`OrdstatsWarning`,
so callers can catch or filter them without matching message text.
"""

from __future__ import annotations

__all__ = [
    "CollinearityWarning",
    "ConvergenceWarning",
    "DataError",
    "FormulaError",
    "LevelsWarning",
    "MissingDataWarning",
    "NotFittedError",
    "OrdstatsError",
    "OrdstatsWarning",
    "PredictionError",
    "PredictionWarning",
    "ResponseError",
    "SeparationWarning",
    "SpecificationError",
    "SpecificationWarning",
]


class OrdstatsError(ValueError):
    """Base class of the errors ordstats raises on bad input or failed fits."""


class DataError(OrdstatsError):
    """Data that cannot be used as given: non-finite values, bad weights, shapes."""


class ResponseError(DataError):
    """A response that is not an ordered outcome with at least two observed levels."""


class FormulaError(OrdstatsError):
    """A formula that cannot be parsed or names variables absent from the data."""


class SpecificationError(OrdstatsError):
    """A model specification that cannot be estimated (e.g. an aliased design)."""


class PredictionError(OrdstatsError):
    """New data that the fitted model cannot predict for (e.g. unseen factor levels)."""


class NotFittedError(OrdstatsError):
    """A quantity that needs a fit which has not been (or could not be) computed."""


class OrdstatsWarning(UserWarning):
    """Base class of the warnings ordstats issues."""


class ConvergenceWarning(OrdstatsWarning):
    """The optimiser stopped before meeting its convergence criteria."""


class SeparationWarning(ConvergenceWarning):
    """(Quasi-)complete separation: some estimates diverge and have no finite MLE."""


class MissingDataWarning(OrdstatsWarning):
    """Rows were dropped because of missing or non-finite values."""


class LevelsWarning(OrdstatsWarning):
    """Response levels without observations were dropped."""


class CollinearityWarning(OrdstatsWarning):
    """Aliased (collinear) design columns were dropped."""


class PredictionWarning(OrdstatsWarning):
    """Some predictions are undefined (returned as NaN)."""


class SpecificationWarning(OrdstatsWarning):
    """A model specification was adjusted to one that can be estimated."""
