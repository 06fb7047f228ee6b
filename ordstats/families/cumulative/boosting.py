r"""The cumulative-link likelihood as a gradient-boosting objective, on arrays.

A booster learns a latent score :math:`\eta(x)` and the model keeps ``K - 1``
ordered thresholds,

.. math::

    P(Y \le j \mid x) = F(\theta_j - \eta(x)), \qquad
    \ell_i = -\log\{F(\theta_{y_i} - \eta_i) - F(\theta_{y_i - 1} - \eta_i)\},  \tag{1}

(``theta_0 = -inf``, ``theta_K = +inf``).  With ``u_i = theta_{y_i} - eta_i``,
``l_i = theta_{y_i - 1} - eta_i`` and the interval derivatives ``g_u, g_l, h_uu,
h_ul, h_ll`` of ``log P`` in ``(u, l)``
(:func:`ordstats.families.cumulative.likelihood.interval_derivatives`, tail-safe
for every link),

.. math::

    \frac{\partial \ell_i}{\partial \eta_i} = g_u + g_l, \qquad
    \frac{\partial^2 \ell_i}{\partial \eta_i^2} = -(h_{uu} + 2 h_{ul} + h_{ll}).  \tag{2}

For a log-concave ``F`` (logit, probit, cloglog, loglog) the second derivative is
non-negative.  The Cauchy distribution is not log-concave: in its tails (2) is
negative, and a booster's leaf value ``-sum g / sum h`` would point uphill or
divide by zero.  There, and wherever (2) falls below a tiny floor, the row's
*expected* (Fisher) information in ``eta``,

.. math::

    \mathcal I_i = \sum_{k=1}^{K} \frac{\{f(\theta_k - \eta_i) - f(\theta_{k-1} - \eta_i)\}^2}
                                       {P(Y = k \mid \eta_i)} > 0,                      \tag{3}

is used instead (a Fisher-scoring step for that row); the gradient is always
exact.

**Thresholds.**  Given the scores, the thresholds are those of a cumulative
link model without slopes and with offset ``eta``.  Between boosting rounds
:func:`threshold_step` takes one exact Newton step of that model from the same
pass over the rows that gives the booster its gradient
(:func:`round_derivatives`; the threshold Hessian is tridiagonal), halving the
step until the NLL does not rise; so within a round the thresholds and the new
tree both start from the same point (a Jacobi-type block update: the tree is
fitted to the gradient at the thresholds the round started with).  After the
last round :func:`update_thresholds` solves the thresholds given the final
scores to convergence with the package's solver
(:func:`ordstats.core.solver.newton`).  :func:`null_thresholds` gives the start,
the null model's closed form ``theta_j = F^{-1}(share of rows at or below level j)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from ordstats._typing import FloatArray, IntArray
from ordstats.core.links import Link, get_link
from ordstats.core.links.standard import Logit
from ordstats.core.solver import NewtonOptions, newton
from ordstats.families.cumulative.likelihood import (
    IntervalDerivatives,
    evaluate,
    interval_derivatives,
    log_interval_probabilities,
    prepare,
)
from ordstats.families.problem import CLMData

__all__ = [
    "RoundDerivatives",
    "ThresholdUpdate",
    "expected_information",
    "null_thresholds",
    "ordinal_nll",
    "round_derivatives",
    "score_derivatives",
    "threshold_step",
    "update_thresholds",
]

#: Smallest second derivative handed to a booster (below it: eq. 3).
HESSIAN_FLOOR = 1e-12


def _bounds(eta: FloatArray, y: IntArray, thresholds: FloatArray) -> tuple[FloatArray, FloatArray]:
    """``u_i = theta_{y_i} - eta_i`` and ``l_i = theta_{y_i - 1} - eta_i`` (``+-inf`` at ends)."""
    cuts = np.concatenate([[-np.inf], np.asarray(thresholds, dtype=float), [np.inf]])
    return cuts[y + 1] - eta, cuts[y] - eta


def _check_thresholds(thresholds: FloatArray) -> FloatArray:
    theta = np.asarray(thresholds, dtype=float)
    if theta.ndim != 1 or not np.all(np.isfinite(theta)) or np.any(np.diff(theta) <= 0):
        raise ValueError("thresholds must be a finite, strictly increasing vector")
    return theta


def ordinal_nll(
    eta: FloatArray,
    y: IntArray,
    thresholds: FloatArray,
    link: Link,
    weights: FloatArray | None = None,
) -> float:
    """Weighted negative log-likelihood (1), summed over rows.

    Parameters
    ----------
    eta : ndarray, shape (n,)
        Scores.
    y : ndarray of int, shape (n,)
        Level codes ``0, ..., K - 1``.
    thresholds : ndarray, shape (K - 1,)
        Increasing cut-points.
    link : Link
    weights : ndarray, shape (n,), optional

    Returns
    -------
    float
    """
    upper, lower = _bounds(np.asarray(eta, dtype=float), np.asarray(y), thresholds)
    log_p = _logit_log_prob(upper, lower) if isinstance(link, Logit) else None
    if log_p is None:
        log_p = log_interval_probabilities(link, upper, lower)
    if weights is None:
        return float(-np.sum(log_p))
    return float(-np.sum(np.asarray(weights, dtype=float) * log_p))


def _logit_log_prob(upper: FloatArray, lower: FloatArray) -> FloatArray:
    """``log P`` of the logistic link from ``P = F(u) S(l) (1 - e^{l - u})`` (general in tails)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        prob = special.expit(upper) * special.expit(-lower) * -np.expm1(lower - upper)
        log_p = np.log(prob)
    bad = ~(prob > _LOGIT_SAFE)
    if bad.any():
        log_p[bad] = log_interval_probabilities(get_link("logit"), upper[bad], lower[bad])
    return log_p


def expected_information(eta: FloatArray, thresholds: FloatArray, link: Link) -> FloatArray:
    """Per-row expected information in ``eta``, eq. (3), shape ``(n,)``.

    Parameters
    ----------
    eta : ndarray, shape (n,)
    thresholds : ndarray, shape (K - 1,)
    link : Link

    Returns
    -------
    ndarray
        Positive where the link's density is positive.
    """
    eta = np.asarray(eta, dtype=float)
    cuts = np.concatenate([[-np.inf], np.asarray(thresholds, dtype=float), [np.inf]])
    z = cuts[None, :] - eta[:, None]  # (n, K + 1)
    finite = np.isfinite(z)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        density = np.where(finite, np.exp(link.log_pdf(np.where(finite, z, 0.0))), 0.0)
        log_p = log_interval_probabilities(link, z[:, 1:], z[:, :-1])
        terms = np.diff(density, axis=1) ** 2 * np.exp(-log_p)
    return np.asarray(np.sum(np.where(np.isfinite(terms), terms, 0.0), axis=1))


def _logit_derivatives(
    upper: FloatArray, lower: FloatArray
) -> tuple[IntervalDerivatives, FloatArray, FloatArray]:
    r"""Eq. (2) and the interval derivatives in closed form for the logistic link.

    With ``F = expit``, ``S = 1 - F = expit(-x)`` and ``f = F S``, the identity
    ``P = F(u) S(l) (1 - e^{l - u})`` (no difference of probabilities) gives
    ``g_u = S(u) / (S(l) E)``, ``g_l = -F(l) / (F(u) E)`` with
    ``E = -expm1(l - u)``, ``f'/f = S - F``, and in the score
    ``d l_i / d eta = 1 - F(u) - F(l)``, ``d^2 l_i / d eta^2 = f(u) + f(l)``
    (exact, never negative).  Rows where ``F(u)``, ``S(l)`` or ``P`` underflow
    (scores hundreds of units beyond the thresholds) are computed by
    :func:`interval_derivatives`.  About three times faster than the general path.
    """
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        F_u, S_u = special.expit(upper), special.expit(-upper)
        F_l, S_l = special.expit(lower), special.expit(-lower)
        E = -np.expm1(lower - upper)
        prob = F_u * S_l * E
        g_u = S_u / (S_l * E)
        g_l = -F_l / (F_u * E)
        log_prob = np.log(prob)
    gradient = 1.0 - F_u - F_l
    hessian = F_u * S_u + F_l * S_l
    bad = ~((prob > _LOGIT_SAFE) & np.isfinite(g_u) & np.isfinite(g_l))
    h_uu = (S_u - F_u) * g_u - g_u * g_u
    h_ll = (S_l - F_l) * g_l - g_l * g_l
    if bad.any():
        general = interval_derivatives(get_link("logit"), upper[bad], lower[bad])
        log_prob[bad], g_u[bad], g_l[bad] = general.log_prob, general.d_upper, general.d_lower
        h_uu[bad], h_ll[bad] = general.d2_upper, general.d2_lower
    fin_u, fin_l = np.isfinite(upper), np.isfinite(lower)
    d = IntervalDerivatives(
        log_prob,
        np.where(fin_u, upper, 0.0),
        np.where(fin_l, lower, 0.0),
        g_u,
        g_l,
        h_uu,
        -g_u * g_l,
        h_ll,
    )
    return d, gradient, hessian


#: Smallest probability the closed-form logistic derivatives are used for.
_LOGIT_SAFE = 1e-250


@dataclass(frozen=True)
class RoundDerivatives:
    """Everything one boosting round needs at ``(thresholds, eta)``, from one pass over the rows.

    Attributes
    ----------
    gradient, hessian : ndarray, shape (n,)
        Eq. (2) in each row's score (weighted; ``hessian >= HESSIAN_FLOOR``, eq. 3
        where needed).
    threshold_gradient : ndarray, shape (K - 1,)
        Gradient of the summed NLL in the thresholds.
    threshold_hessian : ndarray, shape (K - 1, K - 1)
        Its (tridiagonal) Hessian.
    nll : float
        The summed, weighted NLL (1).
    """

    gradient: FloatArray
    hessian: FloatArray
    threshold_gradient: FloatArray
    threshold_hessian: FloatArray
    nll: float


def round_derivatives(
    eta: FloatArray,
    y: IntArray,
    thresholds: FloatArray,
    link: Link,
    weights: FloatArray | None = None,
) -> RoundDerivatives:
    r"""Derivatives of the NLL (1) in the scores and in the thresholds, one pass.

    With ``w_i`` the weights, the threshold gradient is
    ``-sum_{y_i = j} w_i g_u - sum_{y_i = j + 1} w_i g_l`` and the Hessian has
    ``-sum_{y_i = j} w_i h_uu - sum_{y_i = j + 1} w_i h_ll`` on the diagonal and
    ``-sum_{y_i = j + 1} w_i h_ul`` beside it (rows of level ``j + 1`` are the
    only ones whose likelihood involves both ``theta_j`` and ``theta_{j+1}``).

    Parameters
    ----------
    eta : ndarray, shape (n,)
    y : ndarray of int, shape (n,)
    thresholds : ndarray, shape (K - 1,)
    link : Link
    weights : ndarray, shape (n,), optional

    Returns
    -------
    RoundDerivatives
    """
    eta = np.asarray(eta, dtype=float)
    y = np.asarray(y, dtype=np.intp)
    theta = np.asarray(thresholds, dtype=float)
    n_levels = theta.size + 1
    w = np.ones(eta.shape) if weights is None else np.asarray(weights, dtype=float)
    upper, lower = _bounds(eta, y, theta)
    if isinstance(link, Logit):
        d, gradient, hessian = _logit_derivatives(upper, lower)
    else:
        d = interval_derivatives(link, upper, lower)
        gradient = d.d_upper + d.d_lower
        hessian = -(d.d2_upper + 2.0 * d.d2_cross + d.d2_lower)
    gradient = w * gradient
    flat = ~(hessian > HESSIAN_FLOOR)
    if flat.any():
        hessian[flat] = np.maximum(expected_information(eta[flat], theta, link), HESSIAN_FLOOR)

    def level_sums(values: FloatArray) -> FloatArray:
        return np.bincount(y, weights=w * values, minlength=n_levels).astype(np.float64)

    g_u, g_l = level_sums(d.d_upper), level_sums(d.d_lower)
    h_uu, h_ul, h_ll = level_sums(d.d2_upper), level_sums(d.d2_cross), level_sums(d.d2_lower)
    threshold_gradient = -(g_u[:-1] + g_l[1:])
    threshold_hessian = np.diag(-(h_uu[:-1] + h_ll[1:]))
    off = -h_ul[1:-1]
    threshold_hessian[np.arange(theta.size - 1), np.arange(1, theta.size)] = off
    threshold_hessian[np.arange(1, theta.size), np.arange(theta.size - 1)] = off
    nll = float(-(w @ d.log_prob))
    return RoundDerivatives(gradient, hessian * w, threshold_gradient, threshold_hessian, nll)


def _logit_score_derivatives(upper: FloatArray, lower: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Eq. (2) for the logistic link alone: ``1 - F(u) - F(l)`` and ``f(u) + f(l)``.

    Exact for every score (no ``P`` involved), with one ``exp`` per bound:
    ``F(x) = 1 / (1 + e^{-x})`` and ``f(x) = e^{-|x|} / (1 + e^{-|x|})^2``.
    """
    with np.errstate(over="ignore"):
        e_u, e_l = np.exp(-np.abs(upper)), np.exp(-np.abs(lower))
    d_u, d_l = 1.0 + e_u, 1.0 + e_l
    F_u = np.where(upper >= 0, 1.0, e_u) / d_u
    F_l = np.where(lower >= 0, 1.0, e_l) / d_l
    return 1.0 - F_u - F_l, e_u / (d_u * d_u) + e_l / (d_l * d_l)


def score_derivatives(
    eta: FloatArray,
    y: IntArray,
    thresholds: FloatArray,
    link: Link,
    weights: FloatArray | None = None,
) -> tuple[FloatArray, FloatArray]:
    """Gradient and (positive) Hessian of the NLL (1) in each row's score, eq. (2).

    Parameters
    ----------
    eta : ndarray, shape (n,)
    y : ndarray of int, shape (n,)
    thresholds : ndarray, shape (K - 1,)
    link : Link
    weights : ndarray, shape (n,), optional
        Multiply both (a booster's sample weights).

    Returns
    -------
    gradient, hessian : ndarray, shape (n,)
        ``hessian >= HESSIAN_FLOOR``; rows where (2) is below it (the tails of
        the cauchit link) carry the expected information (3) instead.
    """
    if not isinstance(link, Logit):
        d = round_derivatives(eta, y, thresholds, link, weights)
        return d.gradient, d.hessian
    upper, lower = _bounds(np.asarray(eta, dtype=float), np.asarray(y, dtype=np.intp), thresholds)
    gradient, hessian = _logit_score_derivatives(upper, lower)
    hessian = np.maximum(hessian, HESSIAN_FLOOR)  # f > 0; only underflow reaches the floor
    if weights is not None:
        w = np.asarray(weights, dtype=float)
        gradient, hessian = gradient * w, hessian * w
    return gradient, hessian


def threshold_step(
    eta: FloatArray,
    y: IntArray,
    thresholds: FloatArray,
    link: Link,
    derivatives: RoundDerivatives,
    weights: FloatArray | None = None,
    max_halvings: int = 30,
) -> ThresholdUpdate:
    """One Newton step for the thresholds given the scores, halved until the NLL does not rise.

    Parameters
    ----------
    eta, y, thresholds, link, weights
        As :func:`round_derivatives`.
    derivatives : RoundDerivatives
        :func:`round_derivatives` at ``(thresholds, eta)`` (the booster's
        gradient comes from the same pass).
    max_halvings : int

    Returns
    -------
    ThresholdUpdate
        ``thresholds`` unchanged (and ``nll_after == nll_before``) when no
        halved step lowers the NLL.
    """
    theta = np.asarray(thresholds, dtype=float)
    before = derivatives.nll
    try:
        step = np.linalg.solve(derivatives.threshold_hessian, derivatives.threshold_gradient)
    except np.linalg.LinAlgError:
        return ThresholdUpdate(theta, before, before, False)
    factor = 1.0
    for _ in range(max_halvings + 1):
        trial = theta - factor * step
        if np.all(np.diff(trial) > 0):
            after = ordinal_nll(eta, y, trial, link, weights)
            if after <= before:
                small = np.max(np.abs(derivatives.threshold_gradient), initial=0.0) < 1e-6
                return ThresholdUpdate(trial, before, after, bool(small))
        factor /= 2.0
    return ThresholdUpdate(theta, before, before, False)


def null_thresholds(
    y: IntArray, n_levels: int, link: Link, weights: FloatArray | None = None
) -> FloatArray:
    """Thresholds of the model without slopes: ``F^{-1}`` of the cumulative shares.

    Parameters
    ----------
    y : ndarray of int, shape (n,)
    n_levels : int
        ``K``; every level must have positive weight.
    link : Link
    weights : ndarray, shape (n,), optional

    Returns
    -------
    ndarray, shape (K - 1,)
    """
    counts = np.bincount(np.asarray(y), weights=weights, minlength=n_levels).astype(float)
    shares = np.cumsum(counts)[:-1] / counts.sum()
    return np.asarray(link.ppf(shares), dtype=float)


@dataclass(frozen=True)
class ThresholdUpdate:
    """Outcome of :func:`update_thresholds`.

    Attributes
    ----------
    thresholds : ndarray, shape (K - 1,)
    nll_before, nll_after : float
        NLL (1) at the scores, before and after (``nll_after <= nll_before``).
    converged : bool
        Whether the thresholds are the conditional maximum (gradient and step
        within the solver's tolerances).
    """

    thresholds: FloatArray
    nll_before: float
    nll_after: float
    converged: bool


def update_thresholds(
    eta: FloatArray,
    y: IntArray,
    thresholds: FloatArray,
    link: Link,
    weights: FloatArray | None = None,
    max_steps: int = 1,
) -> ThresholdUpdate:
    """Newton steps for the thresholds given the scores (a slope-free model, offset ``eta``).

    Parameters
    ----------
    eta : ndarray, shape (n,)
    y : ndarray of int, shape (n,)
    thresholds : ndarray, shape (K - 1,)
        Current (increasing) thresholds: the start.
    link : Link
    weights : ndarray, shape (n,), optional
    max_steps : int
        Newton iterations (1 between boosting rounds; more to converge).

    Returns
    -------
    ThresholdUpdate
    """
    theta = _check_thresholds(thresholds)
    y = np.asarray(y, dtype=np.intp)
    n = y.shape[0]
    data = CLMData(
        y=y,
        n_levels=theta.size + 1,
        X=np.empty((n, 0)),
        weights=np.ones(n) if weights is None else np.asarray(weights, dtype=float),
        offset=np.asarray(eta, dtype=float),
        link=link,
        threshold_jacobian=np.eye(theta.size),
    )
    problem = prepare(data)
    result = newton(
        lambda a: evaluate(problem, a), theta, NewtonOptions(max_iter=max(int(max_steps), 0))
    )
    before = (
        float(result.trace[0][1]) if result.trace else ordinal_nll(eta, y, theta, link, weights)
    )
    return ThresholdUpdate(
        thresholds=np.asarray(result.x, dtype=float),
        nll_before=before,
        nll_after=float(result.evaluation.nll),
        converged=result.code == 0,
    )
