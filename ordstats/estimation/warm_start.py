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

The subsample fit stops one evaluation early: once its next Newton step is
small and predicts a decrease of at most :data:`SUBSAMPLE_DECREMENT` (a
millionth of a log-likelihood unit, where one standard error is worth 1/2), the
start is that step's point, the one a last iteration would reach, without
evaluating the subsample there.  The subsample's Hessian at the last point it
evaluated, at most ``sqrt(2e-6) = 1.4e-3`` standard errors away, stands for
the one at the start.  Usually the start is the converged subsample estimate
itself; where the pending step was not yet the last one, it is as far from it
as the square of that step.

For a plain random subsample (no level topped up) the Hessian, scaled by the
ratio of the total weights, estimates the full data's Hessian there to
``O(m^{-1/2})`` relative error (``m`` subsample rows), so the first full-data
step is taken with it instead of a full-data Hessian: a quasi-Newton step whose
error, ``O(m^{-1/2})`` times the start's, is of the same order as the exact
step's ``O(start error^2)``.  The later steps use the full data's Hessian (near
the tolerance a chord step reuses the previous step's, see
:mod:`ordstats.core.solver`), and every convergence check reads it.

Data read in chunks or from Dask keep their subsample during the first pass
over the rows (:mod:`ordstats.data.reservoir`: the rows of smallest hash key,
overall and per response level, so the same rows whichever way the data are
split), at most :data:`RESERVOIR_ROWS` rows.  The subsample is fitted before
the second (summary) pass, which then also evaluates the full data's
likelihood, gradient and Hessian at its estimates: the first Newton step costs
no pass of its own (unless the summary drops an aliased column or an empty
level, which changes the parameters).  Each later Newton evaluation is a pass
that computes the full data's Hessian with the gradient, so the subsample's
Hessian is not used there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from ordstats._typing import FloatArray, IntArray
from ordstats.core.solver import NewtonOptions, newton
from ordstats.data.reservoir import MIN_SUBSAMPLE, SUBSAMPLE_FRACTION
from ordstats.families.base import Family
from ordstats.families.problem import CLMData

__all__ = [
    "MIN_ROWS",
    "RESERVOIR_ROWS",
    "SUBSAMPLE_FRACTION",
    "WarmStart",
    "start_from_subsample",
    "subsample_rows",
    "subsample_size",
    "subsample_start",
]

#: Fewest rows for which ``warm_start=None`` (automatic) fits a subsample first.
MIN_ROWS = 20_000
#: Rows kept of every response level (all of them when a level has fewer).
MIN_ROWS_PER_LEVEL = 50
#: Largest subsample of data read in chunks (kept in memory during the first pass).
RESERVOIR_ROWS = 200_000
#: The subsample fit ends once its next Newton step (small, from an exact
#: Hessian) predicts a decrease of the negative log-likelihood of at most this:
#: the start is that step's point, not evaluated on the subsample
#: (``NewtonOptions.decrement_tol``).
SUBSAMPLE_DECREMENT = 1e-6


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
    return _draw_rows(y, n_levels, seed)[0]


def _draw_rows(y: IntArray, n_levels: int, seed: int) -> tuple[IntArray, bool]:
    """:func:`subsample_rows` and whether any level was topped up."""
    n = y.shape[0]
    size = subsample_size(n)
    rng = np.random.default_rng(seed)
    chosen = rng.random(n) < size / n
    counts = np.bincount(y[chosen], minlength=n_levels)
    short = np.flatnonzero(counts < MIN_ROWS_PER_LEVEL)
    for level in short:
        rows = np.flatnonzero(y == level)
        chosen[rows[:MIN_ROWS_PER_LEVEL]] = True
    return np.flatnonzero(chosen), bool(short.size)


@dataclass(frozen=True)
class WarmStart:
    """Where a subsample fit starts the full fit.

    Attributes
    ----------
    params : ndarray
        The starting values (the default ones when the subsample was not used).
    n_rows : int
        Rows in the subsample; 0 when it was not used.
    hessian : ndarray or None
        The subsample's Hessian at ``params`` scaled to the full data, for the
        first Newton step; ``None`` when levels were topped up (the scaling
        would then misweigh their thresholds) or the subsample was not used.
    """

    params: FloatArray
    n_rows: int = 0
    hessian: FloatArray | None = None


def subsample_start(
    family: Family,
    data: CLMData,
    start: FloatArray,
    options: NewtonOptions,
    full_objective: Callable[[FloatArray], float] | None = None,
) -> WarmStart:
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
    WarmStart
        The subsample estimates (and Hessian), or ``start`` alone when their
        fit did not converge or the full data's objective is not finite there.
    """
    rows, topped_up = _draw_rows(data.y, data.n_levels, seed=0)
    if rows.size >= data.n_obs:
        return WarmStart(start)
    return start_from_subsample(
        family,
        data.take(rows),
        float(np.sum(data.weights)),
        start,
        options,
        full_objective,
        with_hessian=not topped_up,
    )


def subsample_size(n_rows: int) -> int:
    """Rows of the subsample of ``n_rows`` rows (before levels are topped up)."""
    return max(MIN_SUBSAMPLE, int(SUBSAMPLE_FRACTION * n_rows))


def start_from_subsample(
    family: Family,
    subsample: CLMData,
    total_weight: float,
    start: FloatArray,
    options: NewtonOptions,
    full_objective: Callable[[FloatArray], float] | None = None,
    *,
    with_hessian: bool = True,
) -> WarmStart:
    """The estimates on ``subsample``, to start the full fit at.

    Parameters
    ----------
    family : Family
    subsample : CLMData
        The subsample's rows.
    total_weight : float
        The full data's sum of weights (to scale the subsample's Hessian).
    start, options, full_objective
        As in :func:`subsample_start`.
    with_hessian : bool
        Return the scaled Hessian (False for a subsample whose levels were
        topped up, or where the full data's Hessian comes at no extra cost).

    Returns
    -------
    WarmStart
    """
    problem = family.prepare(subsample)
    options = replace(options, decrement_tol=SUBSAMPLE_DECREMENT)
    try:
        with np.errstate(all="ignore"):
            result = newton(lambda x: family.evaluate(problem, x), start, options)
    except (ArithmeticError, ValueError, np.linalg.LinAlgError):  # OrdstatsError included
        return WarmStart(start)
    params = result.x if result.pending_step is None else result.x - result.pending_step
    if not result.converged or not np.all(np.isfinite(params)):
        return WarmStart(start)
    if full_objective is not None and not np.isfinite(full_objective(params)):
        return WarmStart(start)
    hessian = None
    sub_total = float(np.sum(subsample.weights))
    if with_hessian and sub_total > 0:  # the last step computed it: no extra pass
        scaled = np.asarray(result.evaluation.hessian, dtype=float) * (total_weight / sub_total)
        hessian = scaled if np.all(np.isfinite(scaled)) else None
    return WarmStart(params, int(subsample.n_obs), hessian)
