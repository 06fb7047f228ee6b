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

from ordstats._typing import BoolArray, FloatArray, IntArray

__all__ = ["empty_levels", "self_consistent_counts", "spread_counts", "turnbull_estimate"]

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


#: Convergence of :func:`turnbull_estimate`: the largest change of a level probability.
_NPMLE_TOLERANCE = 1e-13
#: Iterations of :func:`turnbull_estimate` (each two or three self-consistency steps).
_NPMLE_MAX_ITERATIONS = 5000
#: A level is empty when the first-order condition leaves it short by this much ...
_EMPTY_SHORTFALL = 1e-6
#: ... or when its probability has fallen below this share of the largest one.
_EMPTY_SHARE = 1e-10


def _self_consistency_step(
    p: FloatArray, y: IntArray, y_low: IntArray, weights: FloatArray, total: float
) -> tuple[FloatArray, FloatArray, float]:
    """One EM step; also the ratios ``d_j / sum w`` it used and the log-likelihood at ``p``."""
    cum = np.concatenate([[0.0], np.cumsum(p)])
    row_mass = cum[y + 1] - cum[y_low]
    ratio = _range_sums(weights / row_mass, y_low, y, p.size) / total
    stepped = p * ratio
    return stepped / stepped.sum(), ratio, float(weights @ np.log(row_mass))


def turnbull_estimate(
    y: IntArray, y_low: IntArray, weights: FloatArray, n_levels: int
) -> tuple[FloatArray, FloatArray]:
    r"""Turnbull's nonparametric maximum likelihood estimate of the level probabilities.

    Maximises :math:`\sum_i w_i \log \sum_{j = y_{low,i}}^{y_i} p_j` over the simplex
    by self-consistency (EM) steps accelerated by SQUAREM (Varadhan and Roland 2008),
    each step kept inside the simplex and never lowering the likelihood.

    Parameters
    ----------
    y, y_low : ndarray of int, shape (n,)
        Highest and lowest level of each row (distinct rows may be given once with
        their summed weight).
    weights : ndarray, shape (n,)
        Positive weights.
    n_levels : int

    Returns
    -------
    p : ndarray, shape (K,)
        The level probabilities.
    ratio : ndarray, shape (K,)
        :math:`d_j / \sum w` with :math:`d_j = \sum_{i \ni j} w_i / P_i`: the
        first-order (Kuhn-Tucker) condition of the maximum is ``ratio == 1`` where
        ``p > 0`` and ``ratio <= 1`` where ``p == 0``.
    """
    total = float(np.sum(weights))
    p = spread_counts(y, y_low, weights, n_levels)
    p = p / p.sum()
    for _ in range(_NPMLE_MAX_ITERATIONS):
        p1, _, _ = _self_consistency_step(p, y, y_low, weights, total)
        p2, _, ll2 = _self_consistency_step(p1, y, y_low, weights, total)
        r, v = p1 - p, p2 - 2.0 * p1 + p
        norm_v = float(np.linalg.norm(v))
        alpha = -float(np.linalg.norm(r)) / norm_v if norm_v > 0 else -1.0
        alpha = min(alpha, -1.0)
        candidate = p - 2.0 * alpha * r + alpha * alpha * v
        while alpha < -1.0 and not np.all(candidate > 0):  # back towards p2, inside
            alpha = (alpha - 1.0) / 2.0 if alpha < -1.01 else -1.0
            candidate = p - 2.0 * alpha * r + alpha * alpha * v
        new, _, ll_new = _self_consistency_step(candidate, y, y_low, weights, total)
        if not (np.all(np.isfinite(new)) and ll_new >= ll2):
            new = p2
        done = float(np.max(np.abs(new - p))) < _NPMLE_TOLERANCE
        p = new
        if done:
            break
    _, ratio, _ = _self_consistency_step(p, y, y_low, weights, total)
    return p, ratio


def empty_levels(y: IntArray, y_low: IntArray, weights: FloatArray, n_levels: int) -> BoolArray:
    """The levels to which Turnbull's estimate gives no probability.

    Such a level lies inside censored rows' ranges only; nothing in the likelihood
    keeps its probability from being negative, and a fit then gets thresholds that
    do not increase (rms's ``Ocens`` merges these intervals for the same reason). A
    level with an exact row is never empty, and every row keeps at least one level.

    Parameters
    ----------
    y, y_low : ndarray of int, shape (n,)
    weights : ndarray, shape (n,)
    n_levels : int

    Returns
    -------
    ndarray of bool, shape (K,)
    """
    exact = np.zeros(n_levels, dtype=bool)
    exact[y[y_low == y]] = True
    if exact.all():  # e.g. right-censored rows between exact values: nothing can be empty
        return np.zeros(n_levels, dtype=bool)
    # one entry per distinct range, with the summed weight: exact rows collapse to K
    keys, rows = np.unique(y_low.astype(np.int64) * n_levels + y, return_inverse=True)
    y_low, y = keys // n_levels, keys % n_levels
    summed = np.asarray(np.bincount(rows, weights=weights, minlength=keys.size), dtype=float)
    p, ratio = turnbull_estimate(y, y_low, summed, n_levels)
    empty = ((ratio < 1.0 - _EMPTY_SHORTFALL) | (p < _EMPTY_SHARE * p.max())) & ~exact
    kept_before = np.concatenate([[0], np.cumsum(~empty)])
    for row in np.flatnonzero(kept_before[y + 1] == kept_before[y_low]):  # no level left
        lo, hi = y_low[row], y[row]
        empty[lo + int(np.argmax(p[lo : hi + 1]))] = False
        kept_before = np.concatenate([[0], np.cumsum(~empty)])
    return empty
