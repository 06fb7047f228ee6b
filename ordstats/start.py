"""Starting values for the Newton iterations."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

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
    """Return starting values: marginal thresholds, all other parameters zero.

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
    if sp.issparse(jac):  # many flexible thresholds: the normal equations are sparse
        start[problem.layout.alpha] = spla.spsolve(sp.csc_array(jac.T @ jac), jac.T @ theta)
    else:
        start[problem.layout.alpha] = np.linalg.lstsq(jac, theta, rcond=None)[0]
    return start
