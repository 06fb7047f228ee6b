"""Starting values for the Newton iterations."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ordstats._typing import FloatArray, IntArray
from ordstats.core.links import Link
from ordstats.core.solver import NewtonOptions, newton
from ordstats.errors import OrdstatsError
from ordstats.families.cumulative.censoring import self_consistent_counts
from ordstats.families.cumulative.likelihood import CLMProblem, evaluate, prepare
from ordstats.families.problem import FamilyEvaluation, ParamLayout

#: Loose tolerances of the location-only fit that starts a scale model (R's set.start).
_SCALE_START_OPTIONS = NewtonOptions(grad_tol=1e-3, rel_tol=1e-3)

__all__ = [
    "initial_params",
    "marginal_thresholds",
    "start_without_scale",
    "thresholds_from_counts",
]


def marginal_thresholds(problem: CLMProblem) -> FloatArray:
    """Return ``F^{-1}`` of the weighted cumulative proportions of the response.

    These are the maximum-likelihood thresholds of the model without predictors
    (flexible thresholds, no offset).

    Parameters
    ----------
    problem : CLMProblem

    Returns
    -------
    ndarray, shape (K - 1,)
    """
    data = problem.data
    if data.y_low is not None:  # censored rows: Turnbull's self-consistent probabilities
        counts = self_consistent_counts(data.y, data.y_low, data.weights, data.n_levels)
    else:
        counts = np.bincount(data.y, weights=data.weights, minlength=data.n_levels).astype(float)
    return thresholds_from_counts(data.link, counts)


def thresholds_from_counts(link: Link, counts: FloatArray) -> FloatArray:
    """``F^{-1}`` of the cumulative proportions of weighted level counts."""
    cumulative = np.cumsum(counts)[:-1] / np.sum(counts)
    return np.asarray(link.ppf(cumulative), dtype=float)


def initial_params(
    problem: CLMProblem, counts: FloatArray | None = None, mean_offset: float = 0.0
) -> FloatArray:
    """Return starting values: marginal thresholds, other effects zero.

    With an offset ``o`` the thresholds are shifted by its weighted mean, so
    that ``theta_j - o`` starts near the marginal thresholds (a constant offset
    of 30 would otherwise put every row in the top category, where the
    likelihood is flat to rounding and Newton's method cannot move).

    A flexible link's ``lambda`` starts at the value of the standard link it
    nests (logit for Aranda-Ordaz, probit for log-gamma).

    For structured thresholds the free parameters are the least-squares fit
    ``J a ~= theta_marginal``.

    With scale effects, the other parameters start at the fit of the model
    without them (tolerances ``1e-3``) and the scale effects at zero, as R's
    ``ordinal:::set.start`` does: from the marginal thresholds the joint
    Hessian is often indefinite in the scale direction, and where a scale effect
    is confounded with nominal effects Newton's method would stall short of the
    maximum.

    Parameters
    ----------
    problem : CLMProblem
    counts : ndarray, shape (K,), optional
        Weighted counts of the response levels, when the rows are not in
        ``problem`` (chunked data).
    mean_offset : float
        The weighted mean offset of those rows (chunked data).

    Returns
    -------
    ndarray, shape (n_params,)
    """
    start = np.zeros(problem.layout.n_params)
    theta = (
        marginal_thresholds(problem)
        if counts is None
        else thresholds_from_counts(problem.data.link, counts)
    )
    data = problem.data
    if data.n_obs and np.any(data.offset):  # P(Y <= j) = F(theta_j - o): shift by the mean offset
        theta = theta + float(np.average(data.offset, weights=data.weights))
    elif counts is not None:
        theta = theta + mean_offset
    if data.threshold_offset is not None:  # fixed cut-points: fit the intercept to the rest
        theta = theta - data.threshold_offset
    jac = data.threshold_jacobian
    if sp.issparse(jac):  # many flexible thresholds: the normal equations are sparse
        start[problem.layout.alpha] = spla.spsolve(sp.csc_array(jac.T @ jac), jac.T @ theta)
    else:
        start[problem.layout.alpha] = np.linalg.lstsq(jac, theta, rcond=None)[0]
    if problem.layout.n_lambda:  # a flexible link starts at the standard link it nests
        start[problem.layout.lam] = problem.data.link.lam  # type: ignore[attr-defined]
    if problem.layout.n_zeta and counts is None:
        start = _start_without_scale(problem, start)
    return start


def _start_without_scale(problem: CLMProblem, start: FloatArray) -> FloatArray:
    """Fit the model without its scale effects from ``start``; scale effects start at 0."""
    data = problem.data
    inner = prepare(replace(data, scale=np.empty((data.n_obs, 0))))
    return _fit_without_scale(lambda x: evaluate(inner, x), problem.layout, start)


def start_without_scale(
    evaluate_full: Callable[[FloatArray], FamilyEvaluation], layout: ParamLayout, start: FloatArray
) -> FloatArray:
    """R's start of a scale model, from an evaluation of the whole model (chunked data).

    With the scale effects held at zero every row's scale is ``exp(0) = 1``, so
    the whole model restricted to the other parameters is the model without
    scale effects, on the same rows.

    Parameters
    ----------
    evaluate_full : callable
        ``evaluate_full(params)``: an evaluation of the whole model (``nll``,
        ``gradient``, ``hessian``).
    layout : ParamLayout
    start : ndarray, shape (n_params,)
        The plain start (:func:`initial_params`).

    Returns
    -------
    ndarray, shape (n_params,)
    """
    others = np.r_[np.arange(layout.zeta.start), np.arange(layout.n_params)[layout.lam]]

    def restricted(x: FloatArray) -> _Restricted:
        full = np.zeros(layout.n_params)
        full[others] = x
        return _Restricted(evaluate_full(full), others)

    return _fit_without_scale(restricted, layout, start)


class _Restricted:
    """An evaluation restricted to some parameters (the others held fixed)."""

    def __init__(self, evaluation: FamilyEvaluation, index: IntArray) -> None:
        self.nll = evaluation.nll
        self._evaluation, self._index = evaluation, index

    @property
    def gradient(self) -> FloatArray:
        return np.asarray(self._evaluation.gradient)[self._index]

    @property
    def hessian(self) -> FloatArray:
        return np.asarray(self._evaluation.hessian)[np.ix_(self._index, self._index)]


def _fit_without_scale(
    objective: Callable[[FloatArray], Any], layout: ParamLayout, start: FloatArray
) -> FloatArray:
    """Newton (loose tolerances) on the model without scale effects; these start at 0."""
    keep = np.r_[start[: layout.zeta.start], start[layout.lam]]
    try:
        fit = newton(objective, keep, _SCALE_START_OPTIONS)
    except OrdstatsError:  # keep the plain start; the main fit reports any failure
        return start
    if not np.all(np.isfinite(fit.x)):
        return start
    out = start.copy()
    out[: layout.zeta.start] = fit.x[: layout.zeta.start]
    out[layout.lam] = fit.x[layout.zeta.start :]
    return out
