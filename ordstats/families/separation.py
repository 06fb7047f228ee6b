"""Detect (quasi-)complete separation in cumulative link models by linear programming.

The maximum-likelihood estimate does not exist when there is a direction
``d = (d_theta, d_beta)`` in parameter space along which no observation's
probability decreases and at least one increases: then the log-likelihood keeps
growing as the parameters move along ``d`` (Albert & Anderson 1984; for ordinal
responses, So 1995; the LP formulation follows Konis 2007).  With
``P_i = F(theta_{y_i} - x_i'beta) - F(theta_{y_i - 1} - x_i'beta)`` that means

    d_theta[y_i] - x_i'd_beta >= 0        (upper cut-point does not fall)
    d_theta[y_i - 1] - x_i'd_beta <= 0    (lower cut-point does not rise)
    d_theta non-decreasing                (thresholds stay ordered)

for every observation.  We maximise the sum of these margins over ``|d| <= 1``;
a positive optimum proves separation and its support names the parameters that
diverge.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize

from ordstats._typing import FloatArray, IntArray

__all__ = ["SeparationResult", "detect_separation", "separation_from_constraints"]

_MARGIN_TOL = 1e-7
_SUPPORT_TOL = 1e-6


@dataclass(frozen=True)
class SeparationResult:
    """Outcome of :func:`detect_separation`.

    Attributes
    ----------
    separated : bool
        Whether a direction of unbounded likelihood increase exists.
    direction : ndarray, shape (K - 1 + p,)
        The direction found (thresholds first), zero if none.
    diverging : ndarray of int
        Indices of parameters that move along ``direction``.
    """

    separated: bool
    direction: FloatArray
    diverging: IntArray


def _constraint_rows(y: IntArray, y_low: IntArray, X: FloatArray, n_levels: int) -> FloatArray:
    """Rows ``a`` with ``a @ d >= 0`` required for every observation bound.

    A row in levels ``y_low, ..., y`` (one level when exact) is bounded above by
    the cut-point ``theta_y`` and below by ``theta_{y_low - 1}``.
    """
    n_thr = n_levels - 1
    upper = y < n_thr
    lower = y_low > 0
    up = np.zeros((int(upper.sum()), n_thr + X.shape[1]))
    up[np.arange(up.shape[0]), y[upper]] = 1.0
    up[:, n_thr:] = -X[upper]
    lo = np.zeros((int(lower.sum()), n_thr + X.shape[1]))
    lo[np.arange(lo.shape[0]), y_low[lower] - 1] = -1.0
    lo[:, n_thr:] = X[lower]
    order = np.zeros((max(n_thr - 1, 0), n_thr + X.shape[1]))
    order[np.arange(n_thr - 1), np.arange(1, n_thr)] = 1.0
    order[np.arange(n_thr - 1), np.arange(n_thr - 1)] = -1.0
    return np.vstack([up, lo, order])


def detect_separation(
    y: IntArray, X: FloatArray, n_levels: int, y_low: IntArray | None = None
) -> SeparationResult:
    """Check a cumulative link model's data for (quasi-)complete separation.

    The check is on distinct ``(y_low, y, x)`` rows and does not depend on the link.

    Parameters
    ----------
    y : ndarray of int, shape (n,)
        Category codes ``0..K-1`` (rows with positive weight); for a censored
        response the highest level each row may be in.
    X : ndarray, shape (n, p)
        Location design without intercept.
    n_levels : int
        ``K``.
    y_low : ndarray of int, shape (n,), optional
        A censored response's lowest level of each row (default ``y``: exact rows).

    Returns
    -------
    SeparationResult

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> detect_separation(np.array([0, 0, 1, 1]), x, 2).separated
    True
    """
    n_par = n_levels - 1 + X.shape[1]
    if X.shape[1] == 0:
        return SeparationResult(False, np.zeros(n_par), np.zeros(0, dtype=np.intp))
    rows = np.unique(np.column_stack([y, y if y_low is None else y_low, X]), axis=0)
    codes = rows[:, :2].astype(np.intp)
    return separation_from_constraints(
        _constraint_rows(codes[:, 0], codes[:, 1], rows[:, 2:], n_levels)
    )


def separation_from_constraints(A: FloatArray) -> SeparationResult:
    """Find a direction ``d`` with ``A @ d >= 0`` and a positive total margin.

    Each row of ``A`` says how one log-probability (or one bound on it) moves
    along ``d``; a direction on which none falls and some rise proves that the
    likelihood has no maximum.  Columns are scaled to a maximum of one so that
    the box ``|d| <= 1`` treats the parameters alike.

    Parameters
    ----------
    A : ndarray, shape (m, n_params)

    Returns
    -------
    SeparationResult
        ``diverging`` indexes the columns of ``A``.
    """
    n_par = A.shape[1]
    none = SeparationResult(False, np.zeros(n_par), np.zeros(0, dtype=np.intp))
    if A.shape[0] == 0:
        return none
    scale = np.maximum(np.abs(A).max(axis=0), 1e-300)
    scaled = A / scale
    res = optimize.linprog(
        c=-scaled.sum(axis=0),
        A_ub=-scaled,
        b_ub=np.zeros(A.shape[0]),
        bounds=[(-1.0, 1.0)] * n_par,
        method="highs",
    )
    if res.status != 0 or res.fun is None or res.x is None:
        return none
    if -res.fun <= _MARGIN_TOL * max(1.0, A.shape[0] ** 0.5):
        return none
    support = np.flatnonzero(np.abs(res.x) > _SUPPORT_TOL)
    return SeparationResult(True, res.x / scale, support)
