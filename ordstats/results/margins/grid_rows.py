"""What emmeans' reference grid reads from the estimation rows, in memory or in one pass.

R's ``ref_grid`` needs from the data only the levels of each factor
predictor, the mean of each numeric one (``cov.reduce = mean``) and, for
weights other than ``"equal"``, the number of rows in each combination of the
factors.  :class:`RowSummary` holds exactly these; summaries of parts of the
rows add up (``+``), so a fit read in chunks (files, Dask, Spark) gets the
summary of its estimation rows in one streaming pass (:func:`streamed_summary`)
and a DataFrame gets it as one part (:func:`frame_summary`).

The means are the correctly rounded sum divided by the count: each part keeps
its sum *exactly*, as a few doubles whose exact sum it is
(:func:`exact_sum_parts`), and :func:`math.fsum` rounds the total once.  So
the streamed means are the in-memory ones bit for bit, whatever the chunks.

Only ``cov_reduce="median"`` or a function of the column reads the numeric
columns' values (:func:`streamed_columns`, one pass, ``n`` floats each).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ordstats._typing import FloatArray
from ordstats.design.core import sorted_levels
from ordstats.errors import OrdstatsError
from ordstats.results.margins.grid import is_factor, with_factor_codes, with_factor_levels

__all__ = [
    "RowSummary",
    "exact_sum_parts",
    "frame_summary",
    "streamed_columns",
    "streamed_summary",
]

#: more parts than an exact sum of doubles can need (each leaves a remainder 2^-53 smaller)
_MAX_REFINEMENTS = 64


def exact_sum_parts(values: FloatArray) -> list[float]:
    """Doubles whose exact sum is the exact sum of ``values`` (a few, largest first).

    :func:`math.fsum` gives the sum correctly rounded; the remainder left by
    the rounding is summed again, until nothing is left.  Each step leaves a
    remainder below half an ulp of the last part, so the parts are few (one or
    two for ordinary data).  Non-finite sums are returned as they are.
    """
    numbers = np.asarray(values, dtype=float).ravel()
    parts: list[float] = []
    for _ in range(_MAX_REFINEMENTS):
        part = math.fsum(np.concatenate([numbers, -np.asarray(parts, dtype=float)]))
        if part == 0.0 or not math.isfinite(part):
            if not math.isfinite(part):
                parts = [part]
            break
        parts.append(part)
    return parts


@dataclass
class RowSummary:
    """Levels, exact sums and factor-combination counts of predictor columns over rows.

    Attributes
    ----------
    n : int
        Rows summarised.
    factors : dict of str to list
        Each factor column's levels (categories, else distinct values).
    categorical : dict of str to pandas.CategoricalDtype
        The dtype of factor columns that are categorical.
    sums : dict of str to list of float
        Each numeric column's exact sum, as parts (:func:`exact_sum_parts`).
    counts : pandas.Series
        Rows per combination of the factors' values (in the order of ``factors``).
    """

    n: int
    factors: dict[str, list[Any]]
    categorical: dict[str, pd.CategoricalDtype]
    sums: dict[str, list[float]]
    counts: pd.Series = field(repr=False)

    def __add__(self, other: RowSummary | None) -> RowSummary:
        if other is None:
            return self
        if list(other.factors) != list(self.factors) or list(other.sums) != list(self.sums):
            raise OrdstatsError(
                "a predictor is a factor (text or categorical) in some chunks of the data and "
                "numeric in others; store it with one type everywhere"
            )
        factors = {
            name: _merged_levels(levels, other.factors[name], name in self.categorical)
            for name, levels in self.factors.items()
        }
        categorical = dict(self.categorical)
        for name, dtype in other.categorical.items():
            categorical[name] = pd.CategoricalDtype(factors[name], ordered=dtype.ordered)
        sums = {name: parts + other.sums[name] for name, parts in self.sums.items()}
        with warnings.catch_warnings():  # levels of numbers and text: no order, none needed
            warnings.filterwarnings("ignore", "The values in the array are unorderable")
            counts = self.counts.add(other.counts, fill_value=0)
        return RowSummary(self.n + other.n, factors, categorical, sums, counts)

    __radd__ = __add__

    def is_factor(self, name: str) -> bool:
        """Whether column ``name`` is a factor (categorical, text or boolean)."""
        return name in self.factors

    def levels(self, name: str) -> list[Any]:
        """A factor's levels as :func:`~ordstats.results.margins.grid.factor_levels` orders them."""
        levels = self.factors[name]
        return list(levels) if name in self.categorical else sorted_levels(levels)

    def mean(self, name: str) -> float:
        """The mean of a numeric column: its correctly rounded sum over the count."""
        return math.fsum(self.sums[name]) / self.n if self.n else float("nan")

    def cell_counts(self, names: list[str], cells: pd.DataFrame) -> FloatArray:
        """Rows in each cell of ``cells`` (one row per combination of the factors ``names``)."""
        observed = self.counts
        keys = cells[names].astype(object).itertuples(index=False, name=None)
        return np.array([float(observed.get(tuple(k), 0.0)) for k in keys])


def _merged_levels(first: list[Any], second: list[Any], categorical: bool) -> list[Any]:
    """The levels of two parts, in the first part's order, then new ones in the second's."""
    if categorical and first == second:
        return list(first)
    seen = dict.fromkeys(first)
    seen.update(dict.fromkeys(second))
    return list(seen)


def frame_summary(rows: pd.DataFrame, names: list[str]) -> RowSummary:
    """The :class:`RowSummary` of the columns ``names`` of ``rows`` (one part).

    Parameters
    ----------
    rows : pandas.DataFrame
    names : list of str
        Predictor columns of ``rows``.

    Returns
    -------
    RowSummary
    """
    factors: dict[str, list[Any]] = {}
    categorical: dict[str, pd.CategoricalDtype] = {}
    sums: dict[str, list[float]] = {}
    for name in names:
        column = rows[name]
        if is_factor(column):
            if isinstance(column.dtype, pd.CategoricalDtype):
                categorical[name] = column.dtype
                factors[name] = list(column.cat.categories)
            else:
                factors[name] = list(column.dropna().unique())
        else:
            sums[name] = exact_sum_parts(np.asarray(column.to_numpy(), dtype=float))
    if factors:
        counts = rows[list(factors)].astype(object).value_counts(dropna=True, sort=False)
        counts = counts.astype(float)
    else:
        counts = pd.Series(dtype=float)
    return RowSummary(len(rows), factors, categorical, sums, counts)


def _chunk_summary(
    rows: pd.DataFrame,
    names: list[str],
    levels: dict[str, list[Any]] | None = None,
    covariates: list[str] | None = None,
) -> RowSummary:
    """One chunk's summary (module level: it travels to Dask and Spark workers).

    ``levels``: the fit's factor levels, for columns of numbers it reads as factors;
    ``covariates``: factors it reads only as numbers (``as.integer(f)``), as their codes.
    """
    rows = with_factor_codes(with_factor_levels(rows, levels or {}), covariates or [])
    return frame_summary(rows, names)


def streamed_summary(fit: Any, names: list[str]) -> RowSummary:
    """The :class:`RowSummary` of a fit's estimation rows read in chunks (one pass).

    Parameters
    ----------
    fit : StreamingFit
        A fit whose rows are read in chunks (``_margins_stream``).
    names : list of str
        Its predictor columns.

    Returns
    -------
    RowSummary
    """
    hook = getattr(fit, "_margins_factor_levels", None)
    levels = {} if hook is None else {k: v for k, v in hook().items() if k in names}
    coded = getattr(fit, "_margins_factor_covariates", None)
    covariates = [] if coded is None else coded()
    # R's model frame (zero-weight rows too) where the fit can stream it, as in memory
    stream = getattr(fit, "_margins_reference_stream", fit._margins_stream)
    total: RowSummary = stream(_chunk_summary, names, levels, covariates)
    return total


@dataclass
class _Columns:
    """The values of numeric columns over chunks, in the chunks' order."""

    values: FloatArray  # (rows, columns)

    def __add__(self, other: _Columns | None) -> _Columns:
        if other is None:
            return self
        return _Columns(np.vstack([self.values, other.values]))

    __radd__ = __add__


def _chunk_columns(rows: pd.DataFrame, names: list[str]) -> _Columns:
    return _Columns(np.column_stack([np.asarray(rows[n].to_numpy(), dtype=float) for n in names]))


def streamed_columns(fit: Any, names: list[str]) -> dict[str, FloatArray]:
    """Every value of the numeric predictors ``names`` over a fit's estimation rows (one pass).

    For ``cov_reduce="median"`` or a function of the column: ``n`` floats per column.
    """
    columns: _Columns = fit._margins_stream(_chunk_columns, names)
    return {name: columns.values[:, c] for c, name in enumerate(names)}
