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

Everything is computed from ``log P`` and the links' log-densities and
(reversed) hazards, so rows far in a tail keep their digits: on the
single-exponential side of cloglog and loglog (and in both tails of logit,
probit and cauchit) ``-log P`` grows like ``|eta - theta|`` and the gradient
tends to ``+-1`` (or ``|x|``), exact to ``|eta - theta| = 1000`` and beyond; on
the double-exponential side ``-log P = e^{|x|}`` overflows past ``|x| ~ 709.8``,
and the NLL, the gradient and the Hessian are then ``+inf``, ``-+inf`` and
``+inf`` (the exact values rounded), never NaN.

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

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ordstats._typing import FloatArray, IntArray
from ordstats.core.links import Link, get_link
from ordstats.core.links.standard import Logit
from ordstats.core.solver import NewtonOptions, newton
from ordstats.families.cumulative.likelihood import (
    LOGISTIC_SAFE,
    IntervalDerivatives,
    LogisticHalves,
    evaluate,
    interval_derivatives,
    log_interval_probabilities,
    logistic_derivatives,
    prepare,
)
from ordstats.families.problem import CLMData

__all__ = [
    "RoundDerivatives",
    "ScoreDerivatives",
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
    return LogisticHalves.at(upper, lower).log_prob(_LOGIT, upper, lower)


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

    The interval derivatives are the likelihood's
    (:func:`~ordstats.families.cumulative.likelihood.logistic_derivatives`); from
    the same :class:`~ordstats.families.cumulative.likelihood.LogisticHalves`
    the score's ``d l_i / d eta = 1 - F(u) - F(l)`` and
    ``d^2 l_i / d eta^2 = f(u) + f(l)`` (exact, never negative) follow, with
    ``f = F S``; :func:`_logit_score_derivatives` where a bound overflowed.
    """
    halves = LogisticHalves.at(upper, lower)
    d = logistic_derivatives(_LOGIT, upper, lower, halves)
    with np.errstate(invalid="ignore"):
        gradient = 1.0 - halves.F_u - halves.F_l
        hessian = halves.F_u * halves.S_u + halves.F_l * halves.S_l
    bad = ~(np.isfinite(gradient) & np.isfinite(hessian))
    if bad.any():
        gradient[bad], hessian[bad] = _logit_score_derivatives(upper[bad], lower[bad])
    return d, gradient, hessian


_LOGIT = get_link("logit")
# |x| clip of ScoreDerivatives: exp(700) ~ 1e304 and exp(-700) ~ 1e-304 stay normal
_LOGIT_CLIP = 700.0


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
        _far_tail_limits(d, lower)
        gradient = d.d_upper + d.d_lower
        hessian = -(d.d2_upper + 2.0 * d.d2_cross + d.d2_lower)
    gradient = w * gradient
    flat = ~(hessian > HESSIAN_FLOOR)
    if flat.any():
        hessian[flat] = np.maximum(expected_information(eta[flat], theta, link), HESSIAN_FLOOR)

    g_u, g_l, h_uu, h_ul, h_ll = (
        _level_sums(y, v, w, n_levels)
        for v in (d.d_upper, d.d_lower, d.d2_upper, d.d2_cross, d.d2_lower)
    )
    nll = float(-(w @ d.log_prob))
    return _round_derivatives(gradient, hessian * w, g_u, g_l, h_uu, h_ul, h_ll, nll)


def _far_tail_limits(d: IntervalDerivatives, lower: FloatArray) -> None:
    r"""The interval derivatives of rows far in a double-exponential tail (in place).

    In a double-exponential tail (cloglog's upper, loglog's lower) a bound at
    ``|x| > 709.8`` has a hazard ``e^{|x|}`` that overflows.  Two cases give
    ``inf * 0`` or ``inf - inf`` in the general formulas:

    * the farther bound of a row whose ``P`` is finite: its share of ``P``
      (``S(l)/P`` or ``F(u)/P``) is smaller than ``exp(-e^{|x|})``, so its
      terms are 0 (the double exponential beats the hazard);
    * a row whose ``P`` itself is beyond the double range (``-log P ~ e^{|x|}``
      at the nearer bound, ``log P = -inf``): the exact values, rounded, are
      ``-inf`` for ``g`` and ``h`` at the nearer bound (``l`` when the class lies
      above the score, ``l > 0``; ``u`` when below) with the sign of ``g`` that
      moves the score towards the class, and 0 at the farther bound.

    So eq. (2) gives a finite gradient, or ``-+inf`` with the Hessian ``+inf``,
    and the threshold sums finite numbers or infinities, never NaN.
    """
    finite = np.isfinite(d.log_prob)
    for g, h in ((d.d_upper, d.d2_upper), (d.d_lower, d.d2_lower)):
        vanishing = finite & np.isnan(g)
        if vanishing.any():
            g[vanishing] = h[vanishing] = d.d2_cross[vanishing] = 0.0
    beyond = (d.log_prob == -np.inf) & ~np.isfinite(d.d_upper + d.d_lower)
    if beyond.any():
        above = lower[beyond] > 0
        d.d_upper[beyond] = np.where(above, 0.0, np.inf)
        d.d_lower[beyond] = np.where(above, -np.inf, 0.0)
        d.d2_upper[beyond] = np.where(above, 0.0, -np.inf)
        d.d2_lower[beyond] = np.where(above, -np.inf, 0.0)
        d.d2_cross[beyond] = 0.0


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


class ScoreDerivatives:
    """The objective of a booster over fixed rows, evaluated round after round.

    Gives the numbers of :func:`score_derivatives`, :func:`round_derivatives` and
    :func:`ordinal_nll`.  For the logistic link it keeps each row's cut points
    (gathered again only when the thresholds change) and computes into arrays
    allocated once: at ``10^5`` rows and more, a fresh temporary per operation
    costs more in page faults than the arithmetic.  Other links use the
    functions as they are.

    Parameters
    ----------
    y : ndarray of int, shape (n,)
        Levels ``0 .. K-1``.
    link : Link
    weights : ndarray, shape (n,), optional

    Notes
    -----
    With ``t = exp(-x)`` the logistic ``F(x) = 1 / (1 + t)`` and
    ``S(x) = 1 - F(x) = t F(x)`` come without cancellation for every ``x`` (one
    ``exp`` per bound), and ``f = F S``; then ``P = F(u) S(l) E`` with
    ``E = -expm1(l - u)``, which depends on the thresholds only, as in
    :func:`_logit_derivatives`.  ``x`` is clipped to ``[-700, 700]`` (``t`` and
    ``1 / t`` stay finite normal numbers): that keeps ``exp`` on its vectorised
    path at infinite cut points and moves ``F``, ``S`` and ``f`` by at most
    ``1e-304``.  The arrays a
    call returns are overwritten by the next call: a booster copies them before
    the next round; other callers copy what they keep.
    """

    def __init__(self, y: IntArray, link: Link, weights: FloatArray | None = None) -> None:
        self.y = np.asarray(y, dtype=np.intp)
        self.link = link
        w = None if weights is None else np.asarray(weights, dtype=float)
        self.weights = None if w is None or np.all(w == 1.0) else w  # unit weights: no products
        self._theta: FloatArray | None = None
        self._logistic = isinstance(link, Logit)
        if self._logistic:
            n = self.y.size
            self._cuts = np.empty((2, n))  # upper, lower
            self._width = np.empty(n)  # E
            self._work = np.empty((4, n))
            self._halves = np.empty((4, n))  # F(u), S(u), F(l), S(l)
            self._out = np.empty((2, n))
            self._interval: np.ndarray | None = None  # g_u, g_l, h_uu, h_ll, h_ul, log P

    def __call__(self, eta: FloatArray, thresholds: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Gradient and Hessian of (1) in each score (as :func:`score_derivatives`)."""
        if not self._logistic:
            return score_derivatives(eta, self.y, thresholds, self.link, self.weights)
        F_u, S_u, F_l, S_l = self._fill_halves(eta, thresholds, both=True)
        gradient, hessian = self._score_parts(F_u, S_u, F_l, S_l)
        if self.weights is not None:
            gradient *= self.weights
            hessian *= self.weights
        return gradient, hessian

    def nll(self, eta: FloatArray, thresholds: FloatArray) -> float:
        """The weighted NLL (1) (as :func:`ordinal_nll`)."""
        if not self._logistic:
            return ordinal_nll(eta, self.y, thresholds, self.link, self.weights)
        F_u, _, _, S_l = self._fill_halves(eta, thresholds, both=False)
        log_p = self._work[0]
        self._log_probability(F_u, S_l, np.asarray(eta, dtype=float).reshape(-1), log_p)
        if self.weights is None:
            return float(-np.sum(log_p))
        return float(-(self.weights @ log_p))

    def round(self, eta: FloatArray, thresholds: FloatArray) -> RoundDerivatives:
        """Score and threshold derivatives and the NLL (as :func:`round_derivatives`)."""
        if not self._logistic:
            return round_derivatives(eta, self.y, thresholds, self.link, self.weights)
        eta = np.asarray(eta, dtype=float).reshape(-1)
        F_u, S_u, F_l, S_l = self._fill_halves(eta, thresholds, both=True)
        if self._interval is None:
            self._interval = np.empty((6, self.y.size))
        g_u, g_l, h_uu, h_ll, h_ul, log_p = self._interval
        x = self._work[0]
        with np.errstate(divide="ignore", invalid="ignore"):
            # g_u = S(u) / (S(l) E), g_l = -F(l) / (F(u) E)
            np.multiply(S_l, self._width, out=x)
            np.divide(S_u, x, out=g_u)
            np.multiply(F_u, self._width, out=x)
            np.divide(F_l, x, out=g_l)
            np.negative(g_l, out=g_l)
            # h = (S - F) g - g^2 on each bound (f'/f = S - F); h_ul = -g_u g_l
            for g, F, S, h in ((g_u, F_u, S_u, h_uu), (g_l, F_l, S_l, h_ll)):
                np.subtract(S, F, out=h)
                h -= g
                h *= g
            np.multiply(g_u, g_l, out=h_ul)
            np.negative(h_ul, out=h_ul)
            bad = self._log_probability(F_u, S_l, eta, log_p)
            bad |= ~np.isfinite(g_u)
            bad |= ~np.isfinite(g_l)
        if bad.any():
            cut_u, cut_l = self._cuts
            general = interval_derivatives(self.link, cut_u[bad] - eta[bad], cut_l[bad] - eta[bad])
            g_u[bad], g_l[bad] = general.d_upper, general.d_lower
            h_uu[bad], h_ll[bad], h_ul[bad] = general.d2_upper, general.d2_lower, general.d2_cross
            log_p[bad] = general.log_prob
        gradient, hessian = self._score_parts(F_u, S_u, F_l, S_l)
        w = self.weights
        if w is not None:
            gradient *= w
            hessian *= w
        n_levels = np.asarray(thresholds).size + 1
        s_u, s_l, s_uu, s_ul, s_ll = (
            _level_sums(self.y, v, w, n_levels) for v in (g_u, g_l, h_uu, h_ul, h_ll)
        )
        nll = float(-np.sum(log_p)) if w is None else float(-(w @ log_p))
        return _round_derivatives(gradient, hessian, s_u, s_l, s_uu, s_ul, s_ll, nll)

    def _score_parts(
        self, F_u: FloatArray, S_u: FloatArray, F_l: FloatArray, S_l: FloatArray
    ) -> tuple[FloatArray, FloatArray]:
        """Eq. (2) for the logistic link: ``1 - F(u) - F(l)`` and ``f(u) + f(l)``."""
        gradient, hessian = self._out
        np.subtract(1.0, F_u, out=gradient)
        gradient -= F_l
        np.multiply(F_u, S_u, out=hessian)
        x = self._work[0]
        np.multiply(F_l, S_l, out=x)
        hessian += x
        np.maximum(hessian, HESSIAN_FLOOR, out=hessian)  # f > 0: only underflow is floored
        return gradient, hessian

    def _log_probability(
        self, F_u: FloatArray, S_l: FloatArray, eta: FloatArray, out: FloatArray
    ) -> np.ndarray:
        """``log P`` into ``out``; returns the rows where ``P`` underflowed (done generally)."""
        np.multiply(F_u, S_l, out=out)
        out *= self._width
        bad = ~(out > LOGISTIC_SAFE)
        with np.errstate(divide="ignore"):
            np.log(out, out=out)
        if bad.any():
            cut_u, cut_l = self._cuts
            out[bad] = log_interval_probabilities(
                self.link, cut_u[bad] - eta[bad], cut_l[bad] - eta[bad]
            )
        return bad

    def _fill_halves(
        self, eta: FloatArray, thresholds: FloatArray, *, both: bool
    ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        """``F`` and ``S`` of ``u = theta_y - eta`` and ``l = theta_{y-1} - eta`` (see Notes)."""
        self._gather_cuts(thresholds)
        eta = np.asarray(eta, dtype=float).reshape(-1)
        F_u, S_u, F_l, S_l = self._halves
        self._logistic_halves(self._cuts[0], eta, F_u, S_u if both else None)
        self._logistic_halves(self._cuts[1], eta, F_l if both else None, S_l)
        return F_u, S_u, F_l, S_l

    def _logistic_halves(
        self, cut: FloatArray, eta: FloatArray, F: FloatArray | None, S: FloatArray | None
    ) -> None:
        x, t = self._work[0], self._work[1]
        F = self._work[2] if F is None else F
        np.subtract(eta, cut, out=x)  # -x in the Notes
        np.maximum(x, -_LOGIT_CLIP, out=x)
        np.minimum(x, _LOGIT_CLIP, out=x)
        np.exp(x, out=t)
        np.add(t, 1.0, out=F)
        np.divide(1.0, F, out=F)
        if S is not None:
            np.multiply(t, F, out=S)

    def _gather_cuts(self, thresholds: FloatArray) -> None:
        theta = np.asarray(thresholds, dtype=float)
        if self._theta is not None and np.array_equal(theta, self._theta):
            return
        cuts = np.concatenate([[-np.inf], theta, [np.inf]])
        np.take(cuts, self.y + 1, out=self._cuts[0])
        np.take(cuts, self.y, out=self._cuts[1])
        # E = -expm1(l - u) = -expm1(theta_{y-1} - theta_y): 1 at the two end levels
        with np.errstate(invalid="ignore"):
            width = -np.expm1(-np.diff(cuts))
        np.take(np.where(np.isfinite(width), width, 1.0), self.y, out=self._width)
        self._theta = theta.copy()


def _level_sums(y: IntArray, values: FloatArray, w: FloatArray | None, n_levels: int) -> FloatArray:
    weighted = values if w is None else w * values
    return np.bincount(y, weights=weighted, minlength=n_levels).astype(np.float64)


def _round_derivatives(
    gradient: FloatArray,
    hessian: FloatArray,
    g_u: FloatArray,
    g_l: FloatArray,
    h_uu: FloatArray,
    h_ul: FloatArray,
    h_ll: FloatArray,
    nll: float,
) -> RoundDerivatives:
    """Assemble :class:`RoundDerivatives` from level sums of the interval derivatives."""
    t = g_u.size - 1
    threshold_gradient = -(g_u[:-1] + g_l[1:])
    threshold_hessian = np.diag(-(h_uu[:-1] + h_ll[1:]))
    off = -h_ul[1:-1]
    threshold_hessian[np.arange(t - 1), np.arange(1, t)] = off
    threshold_hessian[np.arange(1, t), np.arange(t - 1)] = off
    return RoundDerivatives(gradient, hessian, threshold_gradient, threshold_hessian, nll)


def threshold_step(
    eta: FloatArray,
    y: IntArray,
    thresholds: FloatArray,
    link: Link,
    derivatives: RoundDerivatives,
    weights: FloatArray | None = None,
    max_halvings: int = 30,
    nll: Callable[[FloatArray], float] | None = None,
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
    nll : callable, optional
        The NLL at given thresholds (and these scores); default
        :func:`ordinal_nll` (a :meth:`ScoreDerivatives.nll` is faster on many rows).

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
            after = ordinal_nll(eta, y, trial, link, weights) if nll is None else nll(trial)
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
