r"""Censored responses in the cumulative link model: start values for rows known in a range.

A censored row ``i`` is known only to lie in the levels ``y_low_i, ..., y_i`` (an
exact row has ``y_low_i = y_i``), so its likelihood term is

.. math::

    P(y_{low,i} \le Y_i \le y_i) = F(\theta_{y_i} - \eta_i) - F(\theta_{y_{low,i} - 1} - \eta_i),

the interval probability of :mod:`ordstats.families.cumulative.likelihood` with the
lower cut-point taken from ``y_low`` (``theta_{-1} = -inf``, ``theta_{K-1} = +inf``).
Without predictors its maximum over the level probabilities is the nonparametric
maximum likelihood estimate: Kaplan-Meier for right-censored rows, Turnbull's
estimate for interval-censored ones (Turnbull 1976).  The start values here are a
few of Turnbull's self-consistency (EM) iterations from an even spread.
"""

from __future__ import annotations

import numpy as np

from ordstats._typing import FloatArray, IntArray

__all__ = ["self_consistent_counts", "spread_counts"]

#: EM iterations of the start values (each O(n + K)); the Newton fit does the rest.
_EM_ITERATIONS = 200
#: Smallest share of a level in the start values, so that no start threshold is infinite.
_MIN_SHARE = 1e-8


def _range_sums(values: FloatArray, low: IntArray, high: IntArray, n_levels: int) -> FloatArray:
    """For each level ``j``: the sum of ``values[i]`` over rows with ``low_i <= j <= high_i``."""
    diff = np.bincount(low, weights=values, minlength=n_levels + 1)
    diff -= np.bincount(high + 1, weights=values, minlength=n_levels + 1)
    return np.asarray(np.cumsum(diff)[:n_levels], dtype=float)


def spread_counts(y: IntArray, y_low: IntArray, weights: FloatArray, n_levels: int) -> FloatArray:
    """Weighted level counts with each row's weight spread evenly over its levels.

    Parameters
    ----------
    y, y_low : ndarray of int, shape (n,)
        Highest and lowest level of each row.
    weights : ndarray, shape (n,)
    n_levels : int

    Returns
    -------
    ndarray, shape (K,)
        Sums of shares (rows read in chunks add these up).
    """
    width = (y - y_low + 1).astype(float)
    return _range_sums(weights / width, y_low, y, n_levels)


def self_consistent_counts(
    y: IntArray,
    y_low: IntArray,
    weights: FloatArray,
    n_levels: int,
    start: FloatArray | None = None,
) -> FloatArray:
    """Turnbull's self-consistency iterations for the level probabilities.

    Each iteration gives every row's weight to its levels in proportion to the
    current probabilities: ``p_j <- sum_i w_i p_j [j in row i] / P_i / sum w``.

    Parameters
    ----------
    y, y_low : ndarray of int, shape (n,)
    weights : ndarray, shape (n,)
    n_levels : int
    start : ndarray, shape (K,), optional
        Starting counts (default :func:`spread_counts`).

    Returns
    -------
    ndarray, shape (K,)
        Level probabilities times the total weight, each at least a tiny share.
    """
    counts = spread_counts(y, y_low, weights, n_levels) if start is None else start
    total = float(np.sum(weights)) if y.size else float(np.sum(counts))
    p = np.maximum(counts / np.sum(counts), _MIN_SHARE)
    if y.size:
        for _ in range(_EM_ITERATIONS):
            cum = np.concatenate([[0.0], np.cumsum(p)])
            row_mass = cum[y + 1] - cum[y_low]
            p = p * _range_sums(weights / row_mass, y_low, y, n_levels) / total
            p = np.maximum(p / p.sum(), _MIN_SHARE)
    return np.asarray(total * p / p.sum(), dtype=float)
