r"""Pareto-smoothed importance sampling and a multivariate Student-t proposal, on arrays.

Importance sampling from a proposal ``q`` to a target ``p`` known up to a constant weighs
draw ``s`` by ``r_s = p(x_s) / q(x_s)``.  Where ``q``'s tails are lighter than ``p``'s a few
weights dominate and the estimate's variance is infinite.  PSIS (Vehtari, Simpson, Gelman,
Yao and Gabry 2024, "Pareto smoothed importance sampling", JMLR 25(72)) fits a generalized
Pareto distribution to the ``M = min(0.2 S, 3 sqrt(S))`` largest weights and replaces them
by the fitted distribution's quantiles at ``(i - 1/2) / M``; the fitted shape ``k-hat``
diagnoses the fit: below 0.5 the raw weights have finite variance, up to 0.7 the smoothed
estimate is reliable in practice, above it not.

The shape is estimated as Zhang and Stephens (2009, "A new and efficient estimation
method for the generalized Pareto distribution", Technometrics 51) with the weakly
informative adjustment ``k <- (M k + 10 / 2) / (M + 10)`` of Vehtari et al. (2024, app. C).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import linalg, special

from ordstats._typing import FloatArray

__all__ = [
    "PSISResult",
    "gpd_fit",
    "mvt_draws",
    "mvt_logpdf",
    "mvt_mixture_logpdf",
    "psis",
    "sobol_uniforms",
    "weighted_quantiles",
]

#: The k-hat above which PSIS estimates are unreliable (Vehtari et al. 2024, sec. 3).
K_HAT_LIMIT = 0.7


@dataclass(frozen=True)
class PSISResult:
    """Pareto-smoothed, normalised importance weights.

    Attributes
    ----------
    log_weights : ndarray
        Smoothed log weights, normalised so that ``exp`` sums to 1.
    k_hat : float
        The generalized Pareto shape fitted to the tail (``inf`` when the tail is too
        short to fit, ``-inf`` when every weight is the same).
    ess : float
        ``1 / sum w^2`` of the smoothed weights.
    """

    log_weights: FloatArray
    k_hat: float
    ess: float

    @property
    def weights(self) -> FloatArray:
        """``exp(log_weights)``, summing to 1."""
        return np.exp(self.log_weights)


def gpd_fit(x: FloatArray) -> tuple[float, float]:
    """Shape ``k`` and scale ``sigma`` of a generalized Pareto fit to ``x > 0`` (sorted).

    Zhang and Stephens' (2009) profile-likelihood-weighted estimator with the prior
    adjustment of Vehtari et al. (2024).

    Parameters
    ----------
    x : ndarray
        Exceedances over the threshold, ascending.

    Returns
    -------
    (k, sigma) : tuple of float
    """
    n = x.size
    m = 30 + int(np.sqrt(n))
    quartile = x[max(int(n / 4 + 0.5) - 1, 0)]
    theta = 1.0 / x[-1] + (1.0 - np.sqrt(m / (np.arange(1, m + 1) - 0.5))) / (3.0 * quartile)
    k = np.mean(np.log1p(-theta[:, None] * x[None, :]), axis=1)
    profile = n * (np.log(-theta / k) - k - 1.0)
    weights = 1.0 / np.sum(np.exp(profile[None, :] - profile[:, None]), axis=1)
    theta_hat = float(np.sum(theta * weights))
    k_hat = float(np.mean(np.log1p(-theta_hat * x)))
    sigma = -k_hat / theta_hat
    k_hat = (n * k_hat + 10 * 0.5) / (n + 10)
    return k_hat, sigma


def _gpd_quantiles(p: FloatArray, k: float, sigma: float) -> FloatArray:
    if abs(k) < 1e-12:
        return -sigma * np.log1p(-p)
    return sigma * np.expm1(-k * np.log1p(-p)) / k


def psis(log_ratios: FloatArray) -> PSISResult:
    """Smooth the tail of importance ratios ``log r_s`` by a generalized Pareto fit.

    Parameters
    ----------
    log_ratios : ndarray, shape (S,)
        ``log p(x_s) - log q(x_s)`` up to a constant; ``-inf`` for a draw outside the
        target's support.

    Returns
    -------
    PSISResult
    """
    lw = np.asarray(log_ratios, dtype=float).copy()
    finite = np.isfinite(lw)
    lw[~finite] = -np.inf
    S = int(finite.sum())
    lw -= np.max(lw[finite])
    tail = int(min(np.ceil(0.2 * S), np.ceil(3.0 * np.sqrt(S))))
    k_hat = np.inf
    if np.ptp(lw[finite]) == 0:  # the proposal is the target: equal weights, no tail
        k_hat = -np.inf
    elif tail >= 5 and S > tail:
        order = np.argsort(lw)
        tail_idx = order[-tail:]
        cutoff = lw[order[-tail - 1]]
        exceed = np.exp(lw[tail_idx]) - np.exp(cutoff)
        if np.all(exceed > 0) and np.ptp(exceed) > 0:
            k_hat, sigma = gpd_fit(exceed)
            if np.isfinite(k_hat):
                p = (np.arange(1, tail + 1) - 0.5) / tail
                smoothed = np.log(_gpd_quantiles(p, k_hat, sigma) + np.exp(cutoff))
                lw[tail_idx] = np.minimum(smoothed, 0.0)  # truncated at the largest raw ratio
    lw -= special.logsumexp(lw)
    ess = float(1.0 / np.sum(np.exp(2.0 * lw)))
    return PSISResult(lw, float(k_hat), ess)


def sobol_uniforms(n: int, d: int, rng: np.random.Generator) -> FloatArray:
    """``n`` points of a scrambled Sobol' sequence in ``(0, 1)^d`` (randomised quasi-Monte Carlo).

    Owen-scrambled Sobol' points (scipy's ``qmc.Sobol``, scrambled from ``rng``) are
    each uniform on ``[0, 1)^d`` but spread more evenly than independent ones, so
    averages over them (importance-weighted means, variances, quantiles of smooth
    posteriors) have smaller errors (Owen 1997, "Scrambled net variance for integrals
    of smooth functions", Ann. Stat. 25).  The first ``n`` of ``2^m >= n`` points are
    taken; the points lie on the grid ``j / 2^30`` and are moved half a cell up, off 0.

    Parameters
    ----------
    n, d : int
    rng : numpy.random.Generator

    Returns
    -------
    ndarray, shape (n, d)
    """
    from scipy.stats import qmc

    m = max(int(np.ceil(np.log2(max(n, 2)))), 1)
    try:
        engine = qmc.Sobol(d, scramble=True, bits=_SOBOL_BITS, rng=rng)
    except TypeError:  # scipy < 1.15 calls the generator ``seed``
        engine = qmc.Sobol(d, scramble=True, bits=_SOBOL_BITS, seed=rng)
    return np.asarray(engine.random_base2(m)[:n], dtype=float) + 2.0 ** -(_SOBOL_BITS + 1)


#: Bits of scipy's Sobol' integers: the points are multiples of ``2^-30``.
_SOBOL_BITS = 30
#: The largest dimension scipy's Sobol' directions cover.
_SOBOL_MAX_DIM = 21201


def mvt_draws(
    mode: FloatArray,
    chol: FloatArray,
    df: float,
    n: int,
    rng: np.random.Generator,
    *,
    quasi: bool = True,
) -> tuple[FloatArray, FloatArray]:
    r"""Draws of a multivariate Student-t with location ``mode``, scale ``L L'``.

    ``x = mode + L z / sqrt(u)`` with ``z`` standard normal and ``u ~ chi^2_df / df``,
    both by inversion of uniforms: scrambled Sobol' points (:func:`sobol_uniforms`)
    with ``quasi=True``, independent ones otherwise.

    Returns the draws (n, k) and their log densities (:func:`mvt_logpdf`).
    """
    k = mode.size
    if quasi and k + 1 <= _SOBOL_MAX_DIM:
        U = sobol_uniforms(n, k + 1, rng)
        z = special.ndtri(U[:, :k])
        u = 2.0 * special.gammaincinv(0.5 * df, U[:, k]) / df
    else:
        z = rng.standard_normal((n, k))
        u = rng.chisquare(df, size=n) / df
    scaled = z / np.sqrt(u)[:, None]
    draws = mode + scaled @ chol.T
    quad = np.sum(scaled * scaled, axis=1)
    return draws, _mvt_log_constant(chol, df) - 0.5 * (df + k) * np.log1p(quad / df)


def _mvt_log_constant(chol: FloatArray, df: float) -> float:
    """Log normalising constant of the multivariate t with scale factor ``chol``."""
    k = chol.shape[0]
    return float(
        special.gammaln(0.5 * (df + k))
        - special.gammaln(0.5 * df)
        - 0.5 * k * np.log(df * np.pi)
        - np.sum(np.log(np.abs(np.diag(chol))))
    )


def mvt_logpdf(x: FloatArray, mode: FloatArray, chol: FloatArray, df: float) -> FloatArray:
    """The log density of :func:`mvt_draws`' proposal at rows ``x`` (normalised)."""
    z = linalg.solve_triangular(chol, (x - mode).T, lower=True).T
    quad = np.sum(z * z, axis=1)
    return _mvt_log_constant(chol, df) - 0.5 * (df + mode.size) * np.log1p(quad / df)


def mvt_mixture_logpdf(
    x: FloatArray,
    components: Sequence[tuple[FloatArray, FloatArray]],
    df: float,
    fractions: FloatArray,
) -> FloatArray:
    """Log density at rows ``x`` of a mixture of Student-t's ``(mode, chol)`` (same ``df``).

    The proposal of draws pooled from several proposals, ``fractions`` of them from
    each (the "deterministic mixture" weights of Veach and Guibas 1995 / Owen and Zhou
    2000, "Safe and effective importance sampling", JASA 95).
    """
    logs = np.column_stack([mvt_logpdf(x, m, c, df) for m, c in components])
    return np.asarray(special.logsumexp(logs, axis=1, b=np.asarray(fractions)), dtype=float)


def weighted_quantiles(values: FloatArray, weights: FloatArray, probs: FloatArray) -> FloatArray:
    """Quantiles of each column of ``values`` (S, k) under normalised ``weights`` (S,).

    The weighted empirical distribution function, interpolated between the midpoints
    of each draw's weight (with equal weights: Hazen's quantiles).

    The draws of weight zero (outside the support) take no part: a knot of theirs would
    sit inside a neighbour's step.
    """
    keep = np.asarray(weights) > 0
    values, weights = np.asarray(values, dtype=float)[keep], np.asarray(weights)[keep]
    out = np.empty((len(probs), values.shape[1]))
    for j in range(values.shape[1]):
        order = np.argsort(values[:, j])
        v, w = values[order, j], weights[order]
        cdf = np.cumsum(w) - 0.5 * w
        out[:, j] = np.interp(probs, cdf, v)
    return out
