r"""Multiplicity adjustments of z tests and intervals, as R's emmeans applies them.

A *family* is the set of estimates adjusted together (one ``by`` group).
With ``z_i`` the Wald statistics, ``p_i = 2\,\bar\Phi(|z_i|)`` the unadjusted
two-sided p-values and ``n`` the family's size:

``"bonferroni"``
    ``min(1, n p_i)``; intervals with ``z_{1 - (1 - c)/(2n)}``.
``"holm"``
    the step-down Bonferroni p-values (R's ``p.adjust``); intervals as
    ``"bonferroni"`` (a step-down method has no simultaneous intervals).
``"fdr"``
    Benjamini and Hochberg's false discovery rate (R's ``p.adjust(method = "fdr")``):
    ``min_{k >= i} n p_(k) / k`` over the ordered p-values; intervals as
    ``"bonferroni"`` (as emmeans: a step-up method has no simultaneous intervals).
``"sidak"``
    ``1 - (1 - p_i)^n``; intervals with ``z_{1 - (1 - c^{1/n})/2}``.
``"dunnettx"``
    emmeans' approximation to Dunnett's many-to-one test (its default for
    ``trt.vs.ctrl`` contrasts): ``P(max |Z_j| < x)`` is taken as
    ``w T(x) + (1 - w) S(x)``, with ``w = (n - 1)/n``,
    ``T(x) = P(Q_{m,\infty} < \sqrt2 x)`` for ``m = (1 + \sqrt{1 + 8n})/2``
    (the studentized range of as many means as give ``n`` pairs) and
    ``S(x) = (2\Phi(x) - 1)^n`` (Sidak's).  Intervals use its ``c`` quantile,
    found here to ``1e-10``; emmeans' root search stops within ``5e-4``, so its
    intervals may differ from these in the fourth decimal of the multiplier.
``"tukey"``
    for a full set of pairwise comparisons of ``m`` estimates only:
    ``P(Q_{m,\infty} > \sqrt2 |z_i|)`` with ``Q`` the studentized range
    (infinite degrees of freedom, as the z tests); intervals with
    ``q_{m,\infty}(c)/\sqrt2``.  For other contrasts emmeans changes it to
    ``"sidak"``, and so does this module.
``"mvt"``
    ``P(\max_j |Z_j| \ge |z_i|)`` for ``Z`` normal with the estimates'
    correlation (the exact simultaneous test); intervals with the ``c``
    quantile of ``\max_j |Z_j|``.  Computed by the spherical-radial
    decomposition on the correlation's rank (exact in one and two dimensions,
    a seeded randomised quasi-Monte-Carlo rule beyond, absolute error about
    5e-5 in the p-values); R's emmeans uses mvtnorm's Monte-Carlo rule at
    ``abseps = 0.001``.

A family of one estimate is not adjusted (as emmeans).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import optimize, stats

from ordstats._typing import FloatArray
from ordstats.errors import OrdstatsError

__all__ = ["ADJUSTMENTS", "Family", "adjusted_p_values", "check_adjust", "critical_values"]

#: the adjustments emmeans offers that this module computes
ADJUSTMENTS = ("none", "tukey", "holm", "bonferroni", "fdr", "sidak", "dunnettx", "mvt")

_MVT_SEED = 20231123


class Family:
    """Estimates adjusted together: their positions and, for pairwise sets, the number compared.

    Parameters
    ----------
    rows : sequence of int
        Positions of the family's estimates.
    compared : int or None
        For a complete set of pairwise comparisons, the number of estimates
        compared (Tukey's family size); None for any other contrasts.
    """

    def __init__(self, rows: Sequence[int], compared: int | None = None) -> None:
        self.rows = np.asarray(rows, dtype=np.intp)
        self.compared = compared


def check_adjust(adjust: object) -> str:
    """``adjust`` if it is one of :data:`ADJUSTMENTS`, else a clear error."""
    if isinstance(adjust, str) and adjust.lower() in ADJUSTMENTS:
        return adjust.lower()
    raise OrdstatsError(
        f"adjust must be one of {', '.join(map(repr, ADJUSTMENTS))}; got {adjust!r}"
    )


def effective_adjust(adjust: str, families: Sequence[Family]) -> str:
    """The adjustment emmeans applies: "tukey" only for pairwise sets, none for single tests.

    Parameters
    ----------
    adjust : str
    families : sequence of Family

    Returns
    -------
    str
    """
    if adjust == "tukey" and any(f.compared is None for f in families):
        adjust = "sidak"
    if all(f.rows.size <= 1 for f in families):
        return "none"
    return adjust


def _holm(p: FloatArray) -> FloatArray:
    n = p.size
    order = np.argsort(p, kind="stable")
    stepped = np.maximum.accumulate((n - np.arange(n)) * p[order])
    out = np.empty(n)
    out[order] = np.minimum(stepped, 1.0)
    return out


def _fdr(p: FloatArray) -> FloatArray:
    n = p.size
    order = np.argsort(p, kind="stable")[::-1]  # largest first: a running minimum steps up
    stepped = np.minimum.accumulate(n / np.arange(n, 0, -1) * p[order])
    out = np.empty(n)
    out[order] = np.minimum(stepped, 1.0)
    return out


def _dunnettx_cdf(x: FloatArray | float, n: int) -> FloatArray:
    """The approximation of ``P(max_j |Z_j| < x)`` of emmeans' ``.pdunnx(x, n, Inf)``.

    Its p-values are ``1 -`` this, as emmeans': scipy's studentized range, as R's
    ``ptukey``, has no upper tail below ~1e-16, so neither does this mixture.
    """
    x = np.asarray(x, dtype=float)
    means = (1.0 + np.sqrt(1.0 + 8.0 * n)) / 2.0
    tukey = stats.studentized_range.cdf(np.sqrt(2.0) * x, means, np.inf)
    sidak = stats.chi2.cdf(np.square(x), 1) ** n
    weight = (n - 1.0) / n
    return np.asarray(weight * tukey + (1.0 - weight) * sidak)


def _dunnettx_quantile(level: float, n: int) -> float:
    """The ``level`` quantile of :func:`_dunnettx_cdf`, between Sidak's and Bonferroni's."""
    low = stats.norm.isf((1.0 - level) / 2.0)
    high = stats.norm.isf((1.0 - level) / n / 2.0) + 1e-3
    return float(
        optimize.brentq(lambda c: float(_dunnettx_cdf(c, n)) - level, low, high, xtol=1e-10)
    )


def _max_abs_normal_cdf(limit: float, corr: FloatArray) -> float:
    """``P(max_j |Z_j| < limit)`` for ``Z ~ N(0, corr)`` (``corr`` may be singular).

    ``Z = L W`` with ``W`` standard normal in ``r = rank(corr)`` dimensions, and
    the event is the symmetric polytope ``|L_j' W| < limit``.  Along a unit
    direction ``u`` it ends at radius ``limit / max_j |L_j' u|``, so (the
    spherical-radial decomposition) the probability is the average over ``u`` of
    the chi-squared(r) CDF at that radius squared: exact for ``r = 1``, Gauss-Legendre
    between the angles where the nearest face changes for ``r = 2`` (accurate to
    rounding), a seeded scrambled Sobol' rule on the sphere (2^17 directions) for
    ``r >= 3``.
    """
    eigval, eigvec = np.linalg.eigh(corr)
    keep = eigval > 1e-10 * max(float(eigval.max()), 0.0)
    faces = eigvec[:, keep] * np.sqrt(eigval[keep])  # (k, r)
    rank = faces.shape[1]
    if rank == 0:
        return 1.0

    def inside(directions: FloatArray) -> FloatArray:
        reach = np.max(np.abs(directions @ faces.T), axis=1)
        with np.errstate(divide="ignore"):
            return np.asarray(stats.chi2.cdf((limit / reach) ** 2, rank))

    if rank == 1:
        return float(inside(np.ones((1, 1)))[0])
    if rank == 2:
        return _average_over_angles(inside, faces)
    sobol = stats.qmc.Sobol(rank, scramble=True, seed=_MVT_SEED)
    normal = stats.norm.ppf(np.clip(sobol.random_base2(17), 1e-16, 1 - 1e-16))
    directions = normal / np.linalg.norm(normal, axis=1, keepdims=True)
    return float(np.mean(inside(directions)))


def _average_over_angles(inside: Any, faces: FloatArray) -> float:
    """The mean of ``inside(u)`` over unit vectors of the plane, piecewise Gauss-Legendre."""
    breaks = [0.0, np.pi]
    for a, b in itertools.combinations(faces, 2):
        for normal in (a - b, a + b):  # |a'u| = |b'u| where (a -/+ b)'u = 0
            if np.linalg.norm(normal) > 0:
                breaks.append(float(np.mod(np.arctan2(normal[1], normal[0]) + np.pi / 2, np.pi)))
    for a in faces:  # where a face is parallel to u: a kink of |a'u|
        breaks.append(float(np.mod(np.arctan2(a[1], a[0]) + np.pi / 2, np.pi)))
    edges = np.unique(np.clip(breaks, 0.0, np.pi))
    nodes, weights = np.polynomial.legendre.leggauss(24)
    total = 0.0
    for lo, hi in itertools.pairwise(edges):
        if hi - lo <= 0:
            continue
        angles = lo + (hi - lo) * (nodes + 1.0) / 2.0
        directions = np.column_stack([np.cos(angles), np.sin(angles)])
        total += (hi - lo) / 2.0 * float(weights @ inside(directions))
    return total / np.pi


def _correlation(cov: FloatArray) -> FloatArray:
    sd = np.sqrt(np.diag(cov))
    with np.errstate(divide="ignore", invalid="ignore"):
        corr = cov / np.outer(sd, sd)
    return np.where(np.isfinite(corr), corr, 0.0)


def adjusted_p_values(
    z: FloatArray, families: Sequence[Family], adjust: str, cov: FloatArray
) -> tuple[FloatArray, str]:
    """Two-sided p-values of ``z``, adjusted within each family.

    Parameters
    ----------
    z : ndarray, shape (n,)
        Wald statistics.
    families : sequence of Family
    adjust : str
        One of :data:`ADJUSTMENTS`.
    cov : ndarray, shape (n, n)
        Covariance of the estimates (``"mvt"`` uses their correlation).

    Returns
    -------
    p_values : ndarray, shape (n,)
    adjust : str
        The adjustment applied (see :func:`effective_adjust`).
    """
    adjust = effective_adjust(check_adjust(adjust), families)
    z = np.asarray(z, dtype=float)
    raw = 2.0 * stats.norm.sf(np.abs(z))
    out = raw.copy()
    if adjust == "none":
        return out, adjust
    for family in _multiple(families):
        rows, n = family.rows, family.rows.size
        p = raw[rows]
        if adjust == "bonferroni":
            out[rows] = np.minimum(n * p, 1.0)
        elif adjust == "holm":
            out[rows] = _holm(p)
        elif adjust == "fdr":
            out[rows] = _fdr(p)
        elif adjust == "dunnettx":
            out[rows] = 1.0 - _dunnettx_cdf(np.abs(z[rows]), n)
        elif adjust == "sidak":  # 1 - (1 - p)^n without cancellation for small p
            out[rows] = -np.expm1(n * np.log1p(-p))
        elif adjust == "tukey":
            q = np.sqrt(2.0) * np.abs(z[rows])
            out[rows] = stats.studentized_range.sf(q, float(family.compared or n), np.inf)
        else:  # mvt
            corr = _correlation(cov[np.ix_(rows, rows)])
            out[rows] = [1.0 - _max_abs_normal_cdf(abs(v), corr) for v in z[rows]]
    return out, adjust


def critical_values(
    conf_level: float, families: Sequence[Family], adjust: str, cov: FloatArray
) -> tuple[FloatArray, str]:
    """Multipliers of the standard errors for (simultaneous) intervals.

    Parameters
    ----------
    conf_level : float
    families : sequence of Family
    adjust : str
        One of :data:`ADJUSTMENTS`; ``"holm"`` and ``"fdr"`` give Bonferroni intervals.
    cov : ndarray, shape (n, n)

    Returns
    -------
    critical : ndarray, shape (n,)
    adjust : str
        The adjustment the intervals use.
    """
    adjust = effective_adjust(check_adjust(adjust), families)
    if adjust in ("holm", "fdr"):
        adjust = "bonferroni"
    n_total = sum(f.rows.size for f in families)
    out = np.full(n_total, stats.norm.isf((1.0 - conf_level) / 2.0))
    if adjust == "none":
        return out, adjust
    for family in _multiple(families):
        rows, n = family.rows, family.rows.size
        if adjust == "bonferroni":
            out[rows] = stats.norm.isf((1.0 - conf_level) / n / 2.0)
        elif adjust == "sidak":
            out[rows] = stats.norm.isf(-np.expm1(np.log(conf_level) / n) / 2.0)
        elif adjust == "dunnettx":
            out[rows] = _dunnettx_quantile(conf_level, n)
        elif adjust == "tukey":
            quantile = stats.studentized_range.ppf(conf_level, float(family.compared or n), np.inf)
            out[rows] = quantile / np.sqrt(2.0)
        else:  # mvt: the conf_level quantile of max |Z_j|
            out[rows] = _max_abs_quantile(conf_level, _correlation(cov[np.ix_(rows, rows)]))
    return out, adjust


def _multiple(families: Sequence[Family]) -> list[Family]:
    """The families of more than one estimate (the only ones adjusted)."""
    return [f for f in families if f.rows.size > 1]


def _max_abs_quantile(level: float, corr: FloatArray) -> float:
    """The ``level`` quantile of ``max_j |Z_j|``, between the unadjusted and Bonferroni ones."""
    n = corr.shape[0]
    low = stats.norm.isf((1.0 - level) / 2.0)
    high = stats.norm.isf((1.0 - level) / n / 2.0) + 1e-6
    return float(
        optimize.brentq(lambda c: _max_abs_normal_cdf(c, corr) - level, low, high, xtol=1e-8)
    )
