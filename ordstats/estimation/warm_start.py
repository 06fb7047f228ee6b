"""Start Newton's method on many rows at the fit to a random subsample of them.

Newton-Raphson converges quadratically once it is close: from the default
start (marginal thresholds, zero effects) a model on ``10^5`` rows takes five
or six full-data iterations, from the estimates of a 5% subsample, whose
error is a few standard errors, two or three.  The subsample costs a twentieth
of an iteration per iteration, so large fits take about half the passes over
the rows.  The estimates are those of the full data: the convergence criteria
are checked there, as always.

The subsample is drawn with a fixed seed, so that a fit is reproducible; a
level with fewer than :data:`MIN_ROWS_PER_LEVEL` rows in it gets its first
rows added (all of them when it has fewer).  When the subsample fit does not converge (a
separated subsample, a nominal effect without rows), the usual start is used.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ordstats._typing import FloatArray, IntArray
from ordstats.core.solver import NewtonOptions, newton
from ordstats.families.base import Family
from ordstats.families.problem import CLMData

__all__ = ["MIN_ROWS", "SUBSAMPLE_FRACTION", "subsample_rows", "subsample_start"]

#: Fewest rows for which ``warm_start=None`` (automatic) fits a subsample first.
MIN_ROWS = 20_000
#: Share of the rows in the subsample (at least :data:`MIN_SUBSAMPLE` rows).
SUBSAMPLE_FRACTION = 0.05
#: Smallest subsample.
MIN_SUBSAMPLE = 5_000
#: Rows kept of every response level (all of them when a level has fewer).
MIN_ROWS_PER_LEVEL = 50


def subsample_rows(y: IntArray, n_levels: int, seed: int = 0) -> IntArray:
    """Positions of a random subsample of the rows, stratified by level.

    Parameters
    ----------
    y : ndarray of int, shape (n,)
        Response levels ``0 .. K-1``.
    n_levels : int
    seed : int

    Returns
    -------
    ndarray of int
        Sorted positions: about ``max(5000, 0.05 n)`` rows, every level with
        at least :data:`MIN_ROWS_PER_LEVEL` rows (or all of its rows).
    """
    n = y.shape[0]
    size = max(MIN_SUBSAMPLE, int(SUBSAMPLE_FRACTION * n))
    rng = np.random.default_rng(seed)
    chosen = rng.random(n) < size / n
    counts = np.bincount(y[chosen], minlength=n_levels)
    for level in np.flatnonzero(counts < MIN_ROWS_PER_LEVEL):
        rows = np.flatnonzero(y == level)
        chosen[rows[:MIN_ROWS_PER_LEVEL]] = True
    return np.flatnonzero(chosen)


def subsample_start(
    family: Family,
    data: CLMData,
    start: FloatArray,
    options: NewtonOptions,
    full_objective: Callable[[FloatArray], float] | None = None,
) -> tuple[FloatArray, int]:
    """The estimates on a subsample of ``data``'s rows, to start the full fit at.

    Parameters
    ----------
    family : Family
    data : CLMData
        The full data.
    start : ndarray
        The default starting values (also the subsample fit's start).
    options : NewtonOptions
        The full fit's options, used for the subsample fit too.
    full_objective : callable, optional
        The full data's negative log-likelihood, checked to be finite at the
        subsample estimates where it need not be (nominal and scale effects:
        cut-points that cross, or scales that overflow, on rows outside the
        subsample).

    Returns
    -------
    start : ndarray
        The subsample estimates, or ``start`` when their fit did not converge
        or the full data's objective is not finite there.
    n_rows : int
        Rows in the subsample; 0 when ``start`` is returned unchanged.
    """
    rows = subsample_rows(data.y, data.n_levels)
    if rows.size >= data.n_obs:
        return start, 0
    problem = family.prepare(data.take(rows))
    try:
        with np.errstate(all="ignore"):
            result = newton(lambda x: family.evaluate(problem, x), start, options)
    except (ArithmeticError, ValueError, np.linalg.LinAlgError):  # OrdstatsError included
        return start, 0
    if not result.converged or not np.all(np.isfinite(result.x)):
        return start, 0
    if full_objective is not None and not np.isfinite(full_objective(result.x)):
        return start, 0
    return result.x, int(rows.size)
