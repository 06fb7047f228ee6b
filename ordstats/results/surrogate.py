r"""Surrogate residuals of latent-variable ordinal models (Liu & Zhang 2018, R's ``sure``).

A cumulative model is a continuous latent response :math:`Y^* = \eta + \sigma
\varepsilon`, :math:`\varepsilon \sim F`, cut at the thresholds: :math:`Y = j`
when :math:`\theta_{j-1} < Y^* \le \theta_j`.  The surrogate residual of a row
draws :math:`\varepsilon` from its conditional distribution given the observed
level, :math:`F` truncated to

.. math::

    (l_i, u_i] = \bigl((\theta_{y_i - 1} - \eta_i) / \sigma_i,\;
                      (\theta_{y_i} - \eta_i) / \sigma_i\bigr].

Under the fitted model the residuals are independent draws of :math:`F` itself,
so the usual residual plots apply: a Q-Q plot against :math:`F` (a wrong link),
residuals against the fitted :math:`\eta` or a covariate (a missing trend or a
scale that varies).  R's ``sure::resids`` gives the same residuals on the
location scale (``S - f(x)``); their values are random, so two draws, or R and
ordstats, agree only in distribution.

A draw is :math:`F^{-1}(F(l) + U (F(u) - F(l)))` for :math:`U \sim U(0, 1)`, taken
through the survival function where the interval lies in the upper tail, so
that neither end loses its digits to :math:`1 - F`.
"""

from __future__ import annotations

from typing import Any, NoReturn

import numpy as np
import pandas as pd

from ordstats._typing import FloatArray, IntArray
from ordstats.core.links import Link
from ordstats.errors import OrdstatsError, check_seed
from ordstats.families.cumulative.prediction import level_intervals, standardised_cuts

__all__ = ["latent_bounds", "truncated_draws"]


def truncated_draws(
    lower: FloatArray, upper: FloatArray, link: Link, uniforms: FloatArray
) -> FloatArray:
    """Draws of ``F`` (the link's distribution) truncated to ``(lower, upper]``, row by row.

    Parameters
    ----------
    lower, upper : ndarray, shape (n,)
        The standardised interval of each row (``-inf`` and ``+inf`` at the ends).
    link : Link
    uniforms : ndarray, shape (n,)
        ``U(0, 1)`` values, one per row; the draw is increasing in them.

    Returns
    -------
    ndarray, shape (n,)
        Within ``[lower, upper]``.
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        f_low, f_up = link.cdf(lower), link.cdf(upper)
        s_low, s_up = link.sf(lower), link.sf(upper)
        upper_tail = f_low > 0.5  # then 1 - F loses digits: use the survival function
        from_below = link.ppf(f_low + uniforms * (f_up - f_low))
        from_above = link.isf(s_up + (1.0 - uniforms) * (s_low - s_up))
    draws = np.where(upper_tail, from_above, from_below)
    lost = ~np.isfinite(draws)  # the tail probabilities underflow: solve on the log scale
    if lost.any():
        draws[lost] = _log_scale_draws(
            lower[lost], upper[lost], link, uniforms[lost], upper_tail[lost]
        )
    return np.clip(draws, lower, upper)


def _log_scale_draws(
    lower: FloatArray, upper: FloatArray, link: Link, uniforms: FloatArray, upper_tail: np.ndarray
) -> FloatArray:
    """The draws of rows whose tail probabilities underflow, by bisection of ``log F``.

    In the upper tail ``log S(x) = log S(l) + log((1 - U) + U S(u) / S(l))``; in the
    lower ``log F(x) = log F(u) + log(U + (1 - U) F(l) / F(u))``: both sides are
    accurate where ``S`` and ``F`` themselves are 0 in floating point.
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        above = link.log_sf(lower) + np.log1p(
            -uniforms * -np.expm1(link.log_sf(upper) - link.log_sf(lower))
        )
        below = link.log_cdf(upper) + np.log1p(
            -(1.0 - uniforms) * -np.expm1(link.log_cdf(lower) - link.log_cdf(upper))
        )

    def excess(x: FloatArray) -> FloatArray:
        """Positive where ``x`` is above the draw."""
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return np.where(upper_tail, above - link.log_sf(x), link.log_cdf(x) - below)

    finite_end = np.where(upper_tail, lower, upper)  # the end the tail probabilities reach
    lo = np.where(np.isfinite(lower), lower, finite_end)
    hi = np.where(np.isfinite(upper), upper, finite_end)
    step = np.ones_like(lo)
    for _ in range(64):  # open ends: step out until the draw is bracketed
        open_hi, open_lo = ~(excess(hi) >= 0), excess(lo) > 0
        if not (open_hi.any() or open_lo.any()):
            break
        hi = np.where(open_hi, hi + step, hi)
        lo = np.where(open_lo, lo - step, lo)
        step *= 2.0
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        right = excess(mid) >= 0
        lo, hi = np.where(right, lo, mid), np.where(right, mid, hi)
    return 0.5 * (lo + hi)


def latent_bounds(
    theta: FloatArray, eta: FloatArray, scale: FloatArray | None, codes: IntArray
) -> tuple[FloatArray, FloatArray]:
    """Each row's standardised interval ``((theta_{y-1} - eta) / s, (theta_y - eta) / s]``.

    Parameters
    ----------
    theta : ndarray, shape (n, K - 1) or (1, K - 1)
        Cut-points (per row with nominal effects).
    eta : ndarray, shape (n,)
    scale : ndarray, shape (n,), or None
    codes : ndarray of int, shape (n,)
        The observed level of each row, ``0 .. K - 1`` (-1: missing, giving NaN).
    """
    interval = level_intervals(standardised_cuts(theta, eta, scale), codes)
    return interval[:, 1], interval[:, 0]


def surrogate_series(
    lower: FloatArray, upper: FloatArray, link: Link, index: pd.Index, seed: Any
) -> pd.Series:
    """The residuals of rows with standardised intervals, as a Series named ``resid_surrogate``.

    Rows without an interval (NaN ends: a missing response or predictor) are NaN.
    """
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(check_seed(seed))
    uniforms = rng.random(len(index))
    usable = ~(np.isnan(lower) | np.isnan(upper))
    values = np.full(len(index), np.nan)
    values[usable] = truncated_draws(lower[usable], upper[usable], link, uniforms[usable])
    out = pd.Series(values, index=index, name="resid_surrogate")
    out.attrs["link"] = link  # the reference distribution of a Q-Q plot
    return out


def refuse_without_latent_variable(family_name: str) -> NoReturn:
    """The error for families that are not a cut latent variable (sequential, adjacent)."""
    raise OrdstatsError(
        f"surrogate residuals draw the latent variable of a cumulative model; the "
        f"{family_name!r} family has none: use resid_prob (probability-scale residuals), "
        "which every family has"
    )
