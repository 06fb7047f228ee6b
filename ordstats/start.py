"""Starting values for the Newton iterations."""

from __future__ import annotations

import numpy as np

from ordstats._typing import FloatArray
from ordstats.likelihood import CLMProblem

__all__ = ["initial_params", "marginal_thresholds"]


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
    counts = np.bincount(data.y, weights=data.weights, minlength=data.n_levels)
    cumulative = np.cumsum(counts)[:-1] / counts.sum()
    return np.asarray(data.link.ppf(cumulative), dtype=float)


def initial_params(problem: CLMProblem) -> FloatArray:
    """Return starting values: marginal thresholds, other effects zero.

    A flexible link's ``lambda`` starts at the value of the standard link it
    nests (logit for Aranda-Ordaz, probit for log-gamma).

    For structured thresholds the free parameters are the least-squares fit
    ``J a ~= theta_marginal``.

    Parameters
    ----------
    problem : CLMProblem

    Returns
    -------
    ndarray, shape (n_params,)
    """
    start = np.zeros(problem.layout.n_params)
    theta = marginal_thresholds(problem)
    jac = problem.data.threshold_jacobian
    start[problem.layout.alpha] = np.linalg.lstsq(jac, theta, rcond=None)[0]
    if problem.layout.n_lambda:  # a flexible link starts at the standard link it nests
        start[problem.layout.lam] = problem.data.link.lam  # type: ignore[attr-defined]
    return start
