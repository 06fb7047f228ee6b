r"""The fitted rows as ``get_margeff`` reads them: in memory, or pass by pass over chunks.

``get_margeff`` needs three things of the rows it was fitted on, and each is a
sum over rows, so a fit read in chunks (files, Dask, ``chunksize=``) gets them
in passes over its data, with the numbers of a fit in memory (which runs the
same functions once, on all its rows):

* a summary of every design column (:class:`ColumnSummary`, one pass): which
  columns are 0/1 or counts, their range and weighted means, and whether the
  indicator columns of a formula term are exclusive (a factor);
* the weighted median of every column (:func:`weighted_medians`, for
  ``at="median"``): exact, by narrowing a bracket around the median with a
  weighted histogram each pass until the rows inside it are few enough to
  collect (two or three passes at :math:`10^7` rows);
* sums of the rows' weighted effects and their Jacobians (in
  :mod:`ordstats.results.marginal_effects`), divided by the summed weight.

The columns are those of the location, nominal and scale designs side by side,
then the offset.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from ordstats._typing import FloatArray
from ordstats.errors import OrdstatsError

__all__ = [
    "ColumnSummary",
    "EffectRows",
    "bracket_pass",
    "column_summary",
    "rows_of",
    "value_at",
    "values_by_passes",
    "weighted_medians",
]

#: bins of the weighted histogram that narrows a median's bracket in one pass
_BINS = 1024
#: rows inside a bracket few enough to collect their values
_COLLECT = 1 << 16
#: weights within this fraction of the total count as equal (ties at one half)
_TIE = 1e-12


@dataclass(frozen=True)
class EffectRows:
    """Rows at which effects are evaluated: the three designs, offsets and frequency weights."""

    X: FloatArray
    W: FloatArray
    Z: FloatArray
    offset: FloatArray
    weights: FloatArray

    def designs(self) -> tuple[FloatArray, FloatArray, FloatArray]:
        """The location, nominal and scale designs."""
        return self.X, self.W, self.Z

    def stacked(self) -> FloatArray:
        """The designs side by side, then the offset (the summaries' columns)."""
        return np.column_stack([self.X, self.W, self.Z, self.offset])

    @classmethod
    def from_stacked(cls, matrix: FloatArray, sizes: tuple[int, int, int]) -> EffectRows:
        """Rows of unit weight whose designs and offset are the columns of ``matrix``.

        ``sizes`` are the numbers of location, nominal and scale columns (the
        layout of :meth:`stacked`).
        """
        p, r, s = sizes
        return cls(
            matrix[:, :p],
            matrix[:, p : p + r],
            matrix[:, p + r : p + r + s],
            matrix[:, p + r + s],
            np.ones(matrix.shape[0]),
        )


def rows_of(data: Any) -> EffectRows:
    """The rows of a fit's likelihood arrays (all rows in memory, or one chunk)."""
    n = len(data.X)
    nominal = np.asarray(data.nominal, dtype=float) if data.nominal.size else np.zeros((n, 0))
    scale = np.asarray(data.scale, dtype=float) if data.scale.size else np.zeros((n, 0))
    return EffectRows(
        np.asarray(data.X, dtype=float),
        nominal,
        scale,
        np.asarray(data.offset, dtype=float),
        np.asarray(data.weights, dtype=float),
    )


# -- what each column is ------------------------------------------------------------------


@dataclass
class ColumnSummary:
    """What ``get_margeff`` needs to know of each column, summed over chunks.

    Attributes
    ----------
    binary : ndarray of bool
        Every value is 0 or 1.
    counts : ndarray of bool
        Every value is a non-negative integer.
    low, high : ndarray
        The smallest and largest values.
    weighted : ndarray
        The weighted sum of each column.
    total : float
        The summed weight.
    exclusive : ndarray of bool
        Per block of columns (a formula term's): no row has two of them at 1.
    """

    binary: np.ndarray
    counts: np.ndarray
    low: FloatArray
    high: FloatArray
    weighted: FloatArray
    total: float
    exclusive: np.ndarray

    def __add__(self, other: ColumnSummary | None) -> ColumnSummary:
        if other is None:
            return self
        return ColumnSummary(
            self.binary & other.binary,
            self.counts & other.counts,
            np.minimum(self.low, other.low),
            np.maximum(self.high, other.high),
            self.weighted + other.weighted,
            self.total + other.total,
            self.exclusive & other.exclusive,
        )

    __radd__ = __add__

    def is_dummy(self, column: int) -> bool:
        """A 0/1 column with both values (statsmodels' test)."""
        return bool(self.binary[column] and self.low[column] == 0.0 and self.high[column] == 1.0)

    def is_count(self, column: int) -> bool:
        """A column of non-negative integers that varies and is not 0/1."""
        varies = self.low[column] < self.high[column]
        return bool(self.counts[column] and varies) and not self.is_dummy(column)

    def means(self) -> FloatArray:
        """The weighted mean of each column."""
        return self.weighted / self.total


def column_summary(data: Any, blocks: list[list[int]]) -> ColumnSummary:
    """The :class:`ColumnSummary` of some rows (a chunk's, or all in memory).

    Parameters
    ----------
    data : CLMData
        The likelihood arrays of the rows.
    blocks : list of list of int
        Column positions (in :meth:`EffectRows.stacked`) of each formula
        term whose exclusiveness is wanted.

    Returns
    -------
    ColumnSummary
    """
    rows = rows_of(data)
    matrix = rows.stacked()
    exclusive = np.array(
        [bool(np.all(matrix[:, block].sum(axis=1) <= 1.0)) for block in blocks], dtype=bool
    )
    return ColumnSummary(
        np.all((matrix == 0.0) | (matrix == 1.0), axis=0),
        np.all((matrix % 1.0 == 0.0) & (matrix >= 0.0), axis=0),
        matrix.min(axis=0),
        matrix.max(axis=0),
        rows.weights @ matrix,
        float(rows.weights.sum()),
        exclusive,
    )


# -- weighted medians ------------------------------------------------------------------


def median_of(
    values: FloatArray,
    weights: FloatArray,
    below: float = 0.0,
    total: float | None = None,
    above: float = np.inf,
) -> float:
    """The weighted median of some values, given the weight below them and the next value above.

    The median is the first value at which the cumulative weight reaches one
    half of ``total``; where it reaches exactly one half, the mean of that
    value and the next one with positive weight (as ``np.median`` for an even
    number of equal weights).

    Parameters
    ----------
    values, weights : ndarray
        Values (in any order) and their frequency weights.
    below : float
        The weight of all values smaller than these (other rows).
    total : float, optional
        The weight of all rows (default: ``below + weights.sum()``).
    above : float
        The smallest value with positive weight above these (other rows).

    Returns
    -------
    float
    """
    total = below + float(np.sum(weights)) if total is None else total
    return value_at(values, weights, 0.5 * total, below, total, above, halves=True)


def value_at(
    values: FloatArray,
    weights: FloatArray,
    target: float,
    below: float,
    total: float,
    above: float = np.inf,
    halves: bool = False,
) -> float:
    """The first value at which the cumulative weight (from ``below``) reaches ``target``.

    With ``halves`` (a median), where it reaches ``target`` exactly, the mean
    of that value and the next one with positive weight (``above`` if none
    is among ``values``).  With unit weights and ``target = k`` this is the
    ``k``-th smallest value (an order statistic).

    Parameters
    ----------
    values, weights : ndarray
        Values (in any order) and their frequency weights.
    target : float
    below : float
        The weight of all values smaller than these (other rows).
    total : float
        The weight of all rows (the scale of the tie tolerance).
    above : float
        The smallest value with positive weight above these (other rows).
    halves : bool

    Returns
    -------
    float
    """
    order = np.argsort(values, kind="stable")
    ordered, ordered_weights = values[order], weights[order]
    cumulative = below + np.cumsum(ordered_weights)
    k = min(int(np.searchsorted(cumulative, target * (1.0 - _TIE))), len(ordered) - 1)
    if halves and abs(cumulative[k] - target) <= _TIE * total:
        following = ordered[k + 1 :][ordered_weights[k + 1 :] > 0]
        next_value = following[0] if following.size else above
        if np.isfinite(next_value):
            return float(0.5 * (ordered[k] + next_value))
    return float(ordered[k])


@dataclass
class _MedianPass:
    """One pass's sums for the columns' median brackets ``[lo, hi]``."""

    below: FloatArray  # weight of values < lo
    inside_low: FloatArray  # smallest value in the bracket (inf: none)
    inside_high: FloatArray  # largest value in the bracket (-inf: none)
    inside_weight: FloatArray
    above: FloatArray  # smallest value > hi with positive weight (inf: none)
    histogram: FloatArray  # (columns, bins): weight of each bin of the bracket
    collected: list[tuple[FloatArray, FloatArray] | None]  # values, weights (None: too many)

    def __add__(self, other: _MedianPass | None) -> _MedianPass:
        if other is None:
            return self
        collected: list[tuple[FloatArray, FloatArray] | None] = []
        for mine, theirs in zip(self.collected, other.collected, strict=True):
            if mine is None or theirs is None or len(mine[0]) + len(theirs[0]) > _COLLECT:
                collected.append(None)
            else:
                collected.append(
                    (np.concatenate([mine[0], theirs[0]]), np.concatenate([mine[1], theirs[1]]))
                )
        return _MedianPass(
            self.below + other.below,
            np.minimum(self.inside_low, other.inside_low),
            np.maximum(self.inside_high, other.inside_high),
            self.inside_weight + other.inside_weight,
            np.minimum(self.above, other.above),
            self.histogram + other.histogram,
            collected,
        )

    __radd__ = __add__


def _bins(values: FloatArray, lo: float, hi: float) -> np.ndarray:
    """The histogram bin of each value in ``[lo, hi]`` (the same arithmetic in every chunk)."""
    if hi <= lo:
        return np.zeros(values.shape, dtype=np.intp)
    position = np.floor((values - lo) / (hi - lo) * _BINS)
    return np.clip(position, 0, _BINS - 1).astype(np.intp)


def median_pass(data: Any, columns: list[int], lo: FloatArray, hi: FloatArray) -> _MedianPass:
    """The sums of one chunk for the brackets ``[lo, hi]`` of the given columns."""
    rows = rows_of(data)
    return bracket_pass(rows.stacked()[:, columns], rows.weights, lo, hi)


def bracket_pass(
    matrix: FloatArray, weights: FloatArray, lo: FloatArray, hi: FloatArray
) -> _MedianPass:
    """The sums of some rows for the brackets ``[lo[c], hi[c]]`` of the columns of ``matrix``.

    What :func:`values_by_passes` adds up over chunks: the weight below each
    bracket, a histogram of the weights inside it, its extreme values, the
    next value above it, and the values inside it when they are few.
    """
    n = matrix.shape[1]
    out = _MedianPass(
        np.zeros(n),
        np.full(n, np.inf),
        np.full(n, -np.inf),
        np.zeros(n),
        np.full(n, np.inf),
        np.zeros((n, _BINS)),
        [],
    )
    for c in range(n):
        values = matrix[:, c]
        inside = (values >= lo[c]) & (values <= hi[c])
        out.below[c] = weights[values < lo[c]].sum()
        beyond = values[(values > hi[c]) & (weights > 0)]
        out.above[c] = beyond.min() if beyond.size else np.inf
        chosen, chosen_weights = values[inside], weights[inside]
        if chosen.size:
            out.inside_low[c], out.inside_high[c] = chosen.min(), chosen.max()
        out.inside_weight[c] = chosen_weights.sum()
        out.histogram[c] = np.bincount(
            _bins(chosen, lo[c], hi[c]), weights=chosen_weights, minlength=_BINS
        )
        out.collected.append((chosen, chosen_weights) if chosen.size <= _COLLECT else None)
    return out


def _narrowed(
    sums: _MedianPass, c: int, lo: float, hi: float, target: float
) -> tuple[float, float]:
    """A bracket three bins wide around the bin where the cumulative weight reaches ``target``."""
    cumulative = sums.below[c] + np.cumsum(sums.histogram[c])
    b = min(int(np.searchsorted(cumulative, target * (1.0 - _TIE))), _BINS - 1)
    width = (hi - lo) / _BINS
    new_lo = max(lo + (b - 1) * width, sums.inside_low[c])
    new_hi = min(lo + (b + 2) * width, sums.inside_high[c])
    return float(new_lo), float(new_hi)


def weighted_medians(
    reduce_rows: Any, columns: list[int], summary: ColumnSummary, max_passes: int = 64
) -> dict[int, float]:
    """The exact weighted median of each of ``columns``, in passes over the rows.

    Parameters
    ----------
    reduce_rows : callable
        The evaluator's ``reduce_rows(func, *args)``: ``func`` summed over the
        chunks of rows (once over all rows in memory).
    columns : list of int
        Positions in :meth:`EffectRows.stacked`.
    summary : ColumnSummary
        From :func:`column_summary` (the columns' ranges and the total weight).
    max_passes : int
        A guard: each pass narrows a bracket to three of 1024 bins.

    Returns
    -------
    dict
        Column position to its median.
    """

    def run(chosen: list[int], lo: FloatArray, hi: FloatArray) -> _MedianPass:
        return cast(_MedianPass, reduce_rows(median_pass, [columns[c] for c in chosen], lo, hi))

    total = summary.total
    found = values_by_passes(
        run,
        np.asarray(summary.low, dtype=float)[columns],
        np.asarray(summary.high, dtype=float)[columns],
        np.full(len(columns), 0.5 * total),
        total,
        halves=True,
        max_passes=max_passes,
        what="weighted medians",
        instead="use at='mean' or atexog= with your own values",
    )
    return dict(zip(columns, found.tolist(), strict=True))


def values_by_passes(
    run_pass: Callable[[list[int], FloatArray, FloatArray], _MedianPass],
    low: FloatArray,
    high: FloatArray,
    targets: FloatArray,
    total: float,
    *,
    halves: bool = False,
    max_passes: int = 64,
    what: str = "exact quantiles",
    instead: str = "",
) -> FloatArray:
    """For each column, the first value at which its cumulative weight reaches its target.

    Exact, in passes over the rows: each pass narrows a bracket around the
    value with a weighted histogram (:func:`bracket_pass`) until the bracket
    holds one value or few enough rows to collect (:func:`value_at`).

    Parameters
    ----------
    run_pass : callable
        ``run_pass(chosen, lo, hi)``: the :func:`bracket_pass` sums over all
        rows of the columns ``chosen`` (positions ``0, ..., c - 1``) for the
        brackets ``[lo, hi]``.
    low, high : ndarray, shape (c,)
        The columns' smallest and largest values.
    targets : ndarray, shape (c,)
        Cumulative weights (``k`` for the ``k``-th smallest of unit weights,
        half the total for a median).
    total : float
        The weight of all rows.
    halves : bool
        Medians: a target reached exactly gives the mean with the next value.
    max_passes : int
        A guard: each pass narrows a bracket to three of 1024 bins.
    what, instead : str
        What the values are and what to do if they do not settle (for the message).

    Returns
    -------
    ndarray, shape (c,)
    """
    pending = {c: (float(low[c]), float(high[c])) for c in range(len(targets))}
    found = np.full(len(targets), np.nan)
    for _ in range(max_passes):
        if not pending:
            return found
        chosen = list(pending)
        lo = np.array([pending[c][0] for c in chosen])
        hi = np.array([pending[c][1] for c in chosen])
        sums = run_pass(chosen, lo, hi)
        for k, c in enumerate(chosen):
            below, above = float(sums.below[k]), float(sums.above[k])
            collected = sums.collected[k]
            if sums.inside_low[k] == sums.inside_high[k]:  # one value in the bracket
                value, weights = np.array([sums.inside_low[k]]), sums.inside_weight[k : k + 1]
            elif collected is not None:
                value, weights = collected
            else:
                pending[c] = _narrowed(sums, k, lo[k], hi[k], float(targets[c]))
                continue
            found[c] = value_at(value, weights, float(targets[c]), below, total, above, halves)
            del pending[c]
    raise OrdstatsError(
        f"the {what} did not settle in {max_passes} passes over the data; {instead}"
    )
