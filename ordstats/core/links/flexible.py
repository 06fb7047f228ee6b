r"""Flexible link families with an estimated shape parameter ``lambda``.

**Aranda-Ordaz** (Aranda-Ordaz 1981), ``lambda > 0``:

.. math:: F(x; \lambda) = 1 - (1 + \lambda e^x)^{-1/\lambda},

the logit at ``lambda = 1`` and the complementary log-log as ``lambda -> 0``.

**Log-gamma** (Genter & Farewell 1985; Prentice 1975), ``lambda`` real: with
``a = lambda^{-2}`` and ``v = a e^{lambda x}``, ``F = P(a, v)`` (regularised
lower incomplete gamma) for ``lambda > 0`` and ``F = Q(a, v)`` for ``lambda < 0``;
the probit at ``lambda = 0``, complementary log-log at 1 and log-log at -1.

Its log-density is written without cancellation for every ``lambda``,

.. math:: \log f(x; \lambda) = -\tfrac12 \log 2\pi - C(\lambda^{-2}) - x^2 h(\lambda x),

where ``C(a) = log Gamma(a) - (a - 1/2) log a + a - log(2 pi)/2`` is the Stirling
remainder and ``h(t) = (e^t - 1 - t) / t^2``; its ``lambda``-derivatives are
closed-form.  The ``lambda``-derivatives of ``F`` are integrals of those of ``f``
(``F_lambda(x) = int_{-inf}^x f s_lambda``, ``s_lambda = d log f / d lambda``),
evaluated by exp-sinh quadrature over the smaller tail, so that no numerical
differentiation enters the fit.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import ClassVar

import numpy as np
from scipy import special

from ordstats._typing import FloatArray
from ordstats.core.links.standard import Link, log1mexp, log1mexp_exp

__all__ = ["ArandaOrdaz", "FlexibleLink", "LogGamma"]

_LOG_SQRT_2PI = 0.5 * np.log(2.0 * np.pi)


class FlexibleLink(Link):
    """A link family ``F(x; lambda)``, evaluated at a fixed ``lambda``.

    Besides the :class:`~ordstats.core.links.Link` methods at ``lambda``, it gives
    the derivatives with respect to ``lambda`` that the likelihood needs.
    """

    #: Starting value of ``lambda``: where the family equals ``nested_link``.
    default_lambda: ClassVar[float]
    nested_link: ClassVar[str]
    log_concave = False
    #: The lower edge of ``lambda``'s domain (excluded; the family's limit there).
    lambda_lower: ClassVar[float] = -np.inf

    def __init__(self, lam: float | None = None) -> None:
        self.lam = float(self.default_lambda if lam is None else lam)

    def with_lambda(self, lam: float) -> FlexibleLink:
        """The same family at another ``lambda``."""
        return type(self)(lam)

    @staticmethod
    def in_domain(lam: float) -> bool:
        """Whether ``lambda`` is an admissible value."""
        return bool(np.isfinite(lam))

    @abstractmethod
    def dcdf_dlam(self, x: FloatArray, log_divisor: FloatArray | None = None) -> FloatArray:
        """``dF(x; lambda) / d lambda``, divided by ``exp(log_divisor)`` if given.

        The division happens inside the computation, so that the ratio stays
        finite in the far tails where the derivative and the divisor (an
        interval probability) both underflow.
        """

    @abstractmethod
    def d2cdf_dlam2(self, x: FloatArray, log_divisor: FloatArray | None = None) -> FloatArray:
        """``d^2 F(x; lambda) / d lambda^2``, divided by ``exp(log_divisor)`` if given."""

    @abstractmethod
    def dlog_pdf_dlam(self, x: FloatArray) -> FloatArray:
        """``d log f(x; lambda) / d lambda``."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(lam={self.lam:g})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FlexibleLink) or type(self) is not type(other):
            return False
        return self.lam == other.lam

    def __hash__(self) -> int:
        return hash((type(self), self.lam))


# ---------------------------------------------------------------------------
# Aranda-Ordaz


def _log1p_minus_ratio(z: FloatArray) -> FloatArray:
    """``log(1 + z) - z / (1 + z)`` for ``z >= 0``, by series for small ``z``."""
    z = np.asarray(z, dtype=float)
    small = z < 0.1
    zs = np.where(small, z, 0.0)
    series = np.zeros_like(zs)
    for k in range(20, 1, -1):  # sum_{k>=2} (-1)^k (k-1)/k z^k, Horner-free but short
        series += (-1.0) ** k * (k - 1) / k * zs**k
    with np.errstate(over="ignore", invalid="ignore"):
        direct = np.log1p(z) - z / (1.0 + z)
    return np.where(small, series, direct)


class ArandaOrdaz(FlexibleLink):
    """Aranda-Ordaz family: logit at ``lambda = 1``, cloglog as ``lambda -> 0``."""

    name = "aranda-ordaz"
    default_lambda = 1.0
    nested_link = "logit"
    log_concave = True
    lambda_lower = 0.0

    @staticmethod
    def in_domain(lam: float) -> bool:  # noqa: D102
        return bool(np.isfinite(lam) and lam > 0)

    def _log1p_lex(self, x: FloatArray) -> FloatArray:
        """``log(1 + lambda e^x)`` without overflow."""
        t = np.asarray(x, dtype=float) + np.log(self.lam)
        return np.logaddexp(0.0, t)

    def _p(self, x: FloatArray) -> FloatArray:
        """``lambda e^x / (1 + lambda e^x)``."""
        return special.expit(np.asarray(x, dtype=float) + np.log(self.lam))

    def log_sf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        return -self._log1p_lex(x) / self.lam

    def log_cdf(self, x: FloatArray) -> FloatArray:
        r"""``log F = log(1 - e^{-t})``, ``t = log(1 + lambda e^x) / lambda``, in log space.

        ``log t = log(log1p(z)) - log(lambda)`` with ``z = lambda e^x``, and
        ``log(log1p(z)) = log z - z / 2 + O(z^2)`` below ``z = e^{-30}``: finite
        and exact where ``z`` and ``t`` underflow (``log F -> x``).
        """
        log_z = np.asarray(x, dtype=float) + np.log(self.lam)
        with np.errstate(divide="ignore", over="ignore", under="ignore", invalid="ignore"):
            log_l = np.where(
                log_z < -30.0, log_z - 0.5 * np.exp(log_z), np.log(np.logaddexp(0.0, log_z))
            )
        return log1mexp_exp(log_l - np.log(self.lam))

    def cdf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        return -np.expm1(self.log_sf(x))

    def sf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        return np.exp(self.log_sf(x))

    def log_pdf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        x = np.asarray(x, dtype=float)
        with np.errstate(invalid="ignore"):
            out = x - (1.0 + 1.0 / self.lam) * self._log1p_lex(x)
        return np.where(np.isinf(x), -np.inf, out)

    def dlog_pdf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        return 1.0 - (1.0 + 1.0 / self.lam) * self._p(x)

    def ppf(self, q: FloatArray) -> FloatArray:  # noqa: D102
        q = np.asarray(q, dtype=float)
        with np.errstate(divide="ignore"):
            return np.log(np.expm1(-self.lam * np.log1p(-q)) / self.lam)

    def isf(self, s: FloatArray) -> FloatArray:  # noqa: D102
        s = np.asarray(s, dtype=float)
        with np.errstate(divide="ignore"):  # 1 - F(x) = (1 + lam e^x)^(-1/lam)
            return np.log(np.expm1(-self.lam * np.log(s)) / self.lam)

    def _dlog_sf(self, x: FloatArray) -> tuple[FloatArray, FloatArray]:
        """First and second ``lambda``-derivatives of ``log(1 - F)``.

        With ``L = log(1 + lambda e^x)`` and ``p = lambda e^x / (1 + lambda e^x)``:
        ``(L - p) / lambda^2`` and ``(p^2 - 2 (L - p)) / lambda^3``.
        """
        lam = self.lam
        log_z = np.asarray(x, dtype=float) + np.log(lam)
        p = self._p(x)
        # the series for small z; L - p with L = log(1 + z) from its log for a large
        # one (capping z at e^700 made L - p = 699 for every x + log(lambda) > 700)
        z_small = np.exp(np.minimum(log_z, 0.0))
        l_minus_p = np.where(log_z < 0.0, _log1p_minus_ratio(z_small), self._log1p_lex(x) - p)
        return l_minus_p / lam**2, (p * p - 2.0 * l_minus_p) / lam**3

    def _scaled_sf_times(
        self, x: FloatArray, factor: FloatArray, log_divisor: FloatArray | None
    ) -> FloatArray:
        """``(1 - F) * factor / exp(log_divisor)``, multiplied in log space.

        Far in the lower tail ``1 - F / F`` overflows (``x < -745``) while
        ``factor`` underflows: their product is finite (it tends to 0).
        """
        if log_divisor is None:
            return self.sf(x) * factor
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            log_abs = self.log_sf(x) - log_divisor + np.log(np.abs(factor))
            return np.sign(factor) * np.exp(log_abs)

    def dcdf_dlam(  # noqa: D102
        self, x: FloatArray, log_divisor: FloatArray | None = None
    ) -> FloatArray:
        d1, _ = self._dlog_sf(x)
        return np.where(np.isfinite(x), -self._scaled_sf_times(x, d1, log_divisor), 0.0)

    def d2cdf_dlam2(  # noqa: D102
        self, x: FloatArray, log_divisor: FloatArray | None = None
    ) -> FloatArray:
        d1, d2 = self._dlog_sf(x)
        return np.where(np.isfinite(x), -self._scaled_sf_times(x, d1 * d1 + d2, log_divisor), 0.0)

    def dlog_pdf_dlam(self, x: FloatArray) -> FloatArray:  # noqa: D102
        d1, _ = self._dlog_sf(x)
        # log f = x - (1 + 1/lambda) L = x + log(1 - F) - L: d/dlam = d1 - p / lambda
        return d1 - self._p(x) / self.lam


# ---------------------------------------------------------------------------
# log-gamma

#: exp-sinh nodes and weights for integrals over [0, inf)
_ES_T = np.arange(-4.5, 3.2 + 1e-12, 0.05)
_ES_X = np.exp(0.5 * np.pi * np.sinh(_ES_T))
_ES_W = 0.05 * 0.5 * np.pi * np.cosh(_ES_T) * _ES_X
#: Below this |lambda| (shape a > 10^6) the incomplete gamma function loses
#: accuracy, and F itself is integrated from the density.
_QUADRATURE_LAMBDA = 1e-3
_TAYLOR_H = np.array([1.0 / special.factorial(k + 2) for k in range(24)])


def _h_series(t: FloatArray, order: int) -> FloatArray:
    """``d^order/dt^order h(t)`` by its Taylor series, ``h(t) = sum t^k / (k+2)!``."""
    out = np.zeros_like(t)
    for k in range(len(_TAYLOR_H) - 1, order - 1, -1):
        coef = _TAYLOR_H[k] * special.poch(k - order + 1, order)
        out = out * t + coef
    return out


def _h(t: FloatArray, order: int = 0) -> FloatArray:
    """``h(t) = (e^t - 1 - t) / t^2`` and its first two derivatives, stably."""
    t = np.asarray(t, dtype=float)
    small = np.abs(t) < 1.0
    ts = np.where(small, t, 0.0)
    tl = np.where(small, 1.0, t)
    with np.errstate(over="ignore", invalid="ignore"):
        em1 = np.expm1(tl)
        if order == 0:
            direct = (em1 - tl) / tl**2
        elif order == 1:
            direct = (tl * em1 - 2.0 * (em1 - tl)) / tl**3
        else:
            direct = ((em1 + 1.0) * (tl * tl - 4.0 * tl + 6.0) - 2.0 * tl - 6.0) / tl**4
    return np.where(small, _h_series(ts, order), direct)


def _stirling_remainder(lam: float) -> tuple[float, float, float]:
    """``D(lambda) = -C(lambda^-2)`` and its first two derivatives in ``lambda``.

    Series in ``lambda`` for ``|lambda| < 0.3`` (Stirling: ``C(a) = 1/(12a) -
    1/(360a^3) + 1/(1260a^5) - 1/(1680a^7) + ...``); exact otherwise.
    """
    if lam == 0.0:
        return 0.0, 0.0, -1.0 / 6.0
    if abs(lam) < 0.3:
        l2 = lam * lam
        d0 = -l2 / 12 + l2**3 / 360 - l2**5 / 1260 + l2**7 / 1680
        d1 = -lam / 6 + lam**5 / 60 - lam**9 / 126 + lam**13 / 120
        d2 = -1 / 6 + lam**4 / 12 - lam**8 / 14 + 13 * lam**12 / 120
        return d0, d1, d2
    a = lam**-2
    c0 = special.gammaln(a) - (a - 0.5) * np.log(a) + a - _LOG_SQRT_2PI
    c1 = special.digamma(a) - np.log(a) + 0.5 / a
    c2 = special.polygamma(1, a) - 1.0 / a - 0.5 / a**2
    da, d2a = -2.0 * lam**-3, 6.0 * lam**-4
    return float(-c0), float(-c1 * da), float(-c2 * da * da - c1 * d2a)


#: Most terms of the series and continued fraction behind :func:`_log_gamma_tail`.
_TAIL_MAX_TERMS = 5000


def _log_lower_gamma_sum(a: float, v: FloatArray) -> FloatArray:
    r"""``log S(a, v)`` of the series ``P(a, v) = v^a e^{-v} S(a, v) / Gamma(a + 1)``.

    .. math:: S(a, v) = \sum_{k \ge 0} \frac{v^k}{(a + 1) \cdots (a + k)}

    (DLMF 8.7.1), for ``0 <= v < a + 1``: the terms fall at least geometrically
    (ratio ``v / (a + k) < 1``), and ``S = 1`` where ``v`` underflows.

    Parameters
    ----------
    a : float
        Shape, positive.
    v : ndarray
        Arguments, ``0 <= v < a + 1``.

    Returns
    -------
    ndarray
        ``log S(a, v)``.
    """
    total, term = np.ones_like(v), np.ones_like(v)
    for k in range(1, _TAIL_MAX_TERMS):
        term = term * v / (a + k)
        total += term
        if np.all(term <= 1e-17 * total):
            break
    return np.asarray(np.log(total), dtype=np.float64)


def _log_upper_gamma_fraction(a: float, v: FloatArray) -> FloatArray:
    r"""``log H(a, v)`` of Legendre's continued fraction ``Gamma(a, v) = v^a e^{-v} H(a, v)``.

    .. math:: H(a, v) = \cfrac{1}{v + 1 - a - \cfrac{1 (1 - a)}
              {v + 3 - a - \cfrac{2 (2 - a)}{v + 5 - a - \cdots}}}

    (DLMF 8.9.2), evaluated by the modified Lentz method; for ``v > a``.

    Parameters
    ----------
    a : float
        Shape, positive.
    v : ndarray
        Finite arguments, ``v > a``.

    Returns
    -------
    ndarray
        ``log H(a, v)``.
    """
    tiny = 1e-300
    b = v + 1.0 - a
    c = np.full_like(v, 1.0 / tiny)
    d = 1.0 / b
    h = d.copy()
    for k in range(1, _TAIL_MAX_TERMS):
        an = -k * (k - a)
        b = b + 2.0
        d = an * d + b
        d = np.where(np.abs(d) < tiny, tiny, d)
        c = b + an / c
        c = np.where(np.abs(c) < tiny, tiny, c)
        d = 1.0 / d
        delta = d * c
        h = h * delta
        if np.all(np.abs(delta - 1.0) <= 1e-15):  # a few ulps: 1e-16 may never be reached
            break
    return np.asarray(np.log(h), dtype=np.float64)


#: Below this an incomplete gamma function value (or its argument ``v``) is
#: taken from the logarithmic forms: subnormal numbers have lost digits.
_TINY = 1e-290
#: Below this ``log v`` the quantile takes ``v`` from the series' leading term,
#: whose relative error ``v / (a + 1)`` is then below the double precision.
_LOG_SMALL_V = -600.0


class LogGamma(FlexibleLink):
    """Log-gamma family: probit at 0, cloglog at 1, loglog at -1."""

    name = "log-gamma"
    default_lambda = 0.0
    nested_link = "probit"
    log_concave = True

    def _log_v(self, x: FloatArray) -> FloatArray:
        """``log v = log a + lambda x``, the log of the incomplete gamma argument."""
        return -2.0 * np.log(abs(self.lam)) + self.lam * np.asarray(x, dtype=float)

    def _incomplete_gamma(self, x: FloatArray, upper: bool) -> FloatArray:
        """``F`` (or ``1 - F`` if ``upper``) from the incomplete gamma function.

        Where ``v`` underflows (``P(a, v) = v^a / Gamma(a + 1)`` need not: ``a``
        is small for a large ``lambda``) the value comes from the logarithm.
        """
        a = self.lam**-2
        x = np.asarray(x, dtype=float)
        with np.errstate(over="ignore", under="ignore"):
            v = np.atleast_1d(np.exp(self._log_v(x)))
        lower_gamma = (self.lam > 0) != upper
        value = np.atleast_1d(
            np.asarray(
                special.gammainc(a, v) if lower_gamma else special.gammaincc(a, v),
                dtype=np.float64,
            )
        )
        small_v = v < _TINY
        if np.any(small_v):
            value[small_v] = np.exp(self._log_incomplete_gamma(np.atleast_1d(x)[small_v], upper))
        return value.reshape(np.shape(x))

    def cdf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        if self.lam == 0.0:
            return special.ndtr(x)
        if abs(self.lam) < _QUADRATURE_LAMBDA:
            return self._tail_integral(x, 0)
        return self._incomplete_gamma(x, upper=False)

    def sf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        if self.lam == 0.0:
            return special.ndtr(-np.asarray(x, dtype=float))
        if abs(self.lam) < _QUADRATURE_LAMBDA:
            return 1.0 - self._tail_integral(x, 0)
        return self._incomplete_gamma(x, upper=True)

    def _log_incomplete_gamma(self, x: FloatArray, upper: bool) -> FloatArray:
        r"""``log F`` (or ``log(1 - F)`` if ``upper``), finite in the far tails.

        ``gammainc``/``gammaincc`` are used where they are normal numbers.
        Elsewhere the logarithm is built around the log-density: with
        ``v = a e^{lambda x}``, ``v^a e^{-v} / Gamma(a + 1) = |lambda| f(x)``
        exactly, so

        .. math:: \log P(a, v) = \log f(x) + \log|\lambda| + \log S(a, v),\qquad
                  \log Q(a, v) = \log f(x) - \log|\lambda| + \log H(a, v)

        (:func:`_log_lower_gamma_sum`, :func:`_log_upper_gamma_fraction`), with
        no cancellation between ``a log v`` and ``log Gamma(a + 1)`` and no ``v``
        that underflows (``lambda x < -745``); where ``v`` underflows ``S = 1``
        and ``Q = 1 - P``.
        """
        a = self.lam**-2
        x = np.atleast_1d(np.asarray(x, dtype=float))
        lower_gamma = (self.lam > 0) != upper
        with np.errstate(over="ignore", under="ignore"):
            v = np.exp(self._log_v(x))
        value = np.asarray(
            special.gammainc(a, v) if lower_gamma else special.gammaincc(a, v), dtype=np.float64
        )
        with np.errstate(divide="ignore"):
            out = np.log(value)
        near_one = value > 0.5  # log(1 - the other tail), which keeps its digits
        if np.any(near_one):
            out[near_one] = log1mexp(-self._log_incomplete_gamma(x[near_one], not upper))
        log_lam = np.log(abs(self.lam))
        small_v = v < _TINY
        if np.any(small_v):
            log_p = np.minimum(self.log_pdf(x[small_v]) + log_lam, 0.0)
            out[small_v] = log_p if lower_gamma else log1mexp(-log_p)
        far = (value < _TINY) & ~small_v & np.isfinite(v)
        if np.any(far):
            out[far] = self.log_pdf(x[far]) + (
                log_lam + _log_lower_gamma_sum(a, v[far])
                if lower_gamma
                else _log_upper_gamma_fraction(a, v[far]) - log_lam
            )
        return out

    def log_cdf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        if self.lam == 0.0:
            return special.log_ndtr(x)
        if abs(self.lam) >= _QUADRATURE_LAMBDA:
            return self._log_incomplete_gamma(x, upper=False).reshape(np.shape(x))
        # near the probit: the quadrature of f / e^shift, then the shift added back,
        # so that the lower tail does not underflow; the shift is log Phi(x), and
        # far out (where lambda x need not be small and f / Phi overflows) the
        # tail's own scale log(f / psi), psi = -d log f / dx = (1 - e^{lambda x}) / lambda
        x = np.asarray(x, dtype=float)
        far = x < -30.0
        xf = np.where(far, x, -30.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            own = self.log_pdf(xf) - np.log(-np.expm1(self.lam * xf) / self.lam)
        shift = np.where(far, own, special.log_ndtr(x))
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            out = shift + np.log(self._tail_integral(x, 0, shift))
        return np.where(np.isnan(out), -np.inf, out)

    def log_sf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        if self.lam == 0.0:
            return special.log_ndtr(-np.asarray(x, dtype=float))
        if abs(self.lam) >= _QUADRATURE_LAMBDA:
            return self._log_incomplete_gamma(x, upper=True).reshape(np.shape(x))
        # f(x; lambda) = f(-x; -lambda), so 1 - F(x; lambda) = F(-x; -lambda)
        return LogGamma(-self.lam).log_cdf(-np.asarray(x, dtype=float))

    def log_pdf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        x = np.asarray(x, dtype=float)
        d0, _, _ = _stirling_remainder(self.lam)
        finite = np.isfinite(x)
        xf = np.where(finite, x, 0.0)
        with np.errstate(over="ignore", invalid="ignore"):
            out = -_LOG_SQRT_2PI + d0 - xf * xf * _h(self.lam * xf)
        return np.where(finite, np.nan_to_num(out, nan=-np.inf), -np.inf)

    def dlog_pdf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        # d/dx log f = -(e^{lambda x} - 1) / lambda = -x (1 + t h(t)), t = lambda x
        x = np.asarray(x, dtype=float)
        t = self.lam * x
        return -x * (1.0 + t * _h(t))

    def ppf(self, q: FloatArray) -> FloatArray:  # noqa: D102
        q = np.asarray(q, dtype=float)
        if self.lam == 0.0:
            return special.ndtri(q)
        if abs(self.lam) < _QUADRATURE_LAMBDA:
            x = special.ndtri(q)  # Newton from the probit quantile
            for _ in range(4):
                x = x - (self.cdf(x) - q) / self.pdf(x)
            return x
        # v solves P(a, v) = q (lambda > 0) or P(a, v) = 1 - q; far in the lower
        # tail of P, v underflows (a small, lambda large) but log v is the exact
        # log((p Gamma(a + 1))^(1 / a)) of the leading term of the series
        a = self.lam**-2
        lower = self.lam > 0
        v = special.gammaincinv(a, q) if lower else special.gammainccinv(a, q)
        with np.errstate(divide="ignore"):
            log_p = np.log(q) if lower else np.log1p(-q)
            log_v = np.log(v)
        leading = (log_p + special.gammaln(a + 1.0)) / a
        log_v = np.where(leading < _LOG_SMALL_V, leading, log_v)
        return (log_v - np.log(a)) / self.lam

    def dlog_pdf_dlam(self, x: FloatArray) -> FloatArray:  # noqa: D102
        x = np.asarray(x, dtype=float)
        _, d1, _ = _stirling_remainder(self.lam)
        return d1 - x**3 * _h(self.lam * x, 1)

    def _d2log_pdf_dlam2(self, x: FloatArray) -> FloatArray:
        _, _, d2 = _stirling_remainder(self.lam)
        return d2 - x**4 * _h(self.lam * x, 2)

    def _tail_integral(
        self, x: FloatArray, order: int, log_divisor: FloatArray | None = None
    ) -> FloatArray:
        """``int_{-inf}^x d^order f / d lambda^order`` by exp-sinh quadrature.

        Integrates over the tail beyond ``x`` on the side away from the mode
        ``x = 0``, over which the density is monotone: for a large ``|lambda|``
        the density falls within ``~1/|lambda|`` on the steep side of the mode,
        an edge the fixed nodes cannot resolve from a distance (from the median,
        ``dF/dlambda`` was 5% off at ``lambda = 17``);
        ``int f = 1`` and both higher full integrals vanish for every ``lambda``.
        With ``log_divisor`` the density is divided by ``exp(log_divisor)``
        before it is integrated, so the result is the integral over that.
        """
        x = np.asarray(x, dtype=float)
        shape = x.shape
        x = x.reshape(-1)
        finite = np.isfinite(x)
        xf = np.where(finite, x, 0.0)
        lower = xf <= 0.0  # the mode: each tail is monotone, without its steep edge
        sign = np.where(lower, -1.0, 1.0)  # t = x - s (lower tail) or x + s
        t = xf[:, None] + sign[:, None] * _ES_X[None, :]
        shift = 0.0 if log_divisor is None else np.reshape(log_divisor, (-1, 1))
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            dens = np.exp(self.log_pdf(t) - shift)
            if order == 0:
                integrand = dens
            elif order == 1:
                integrand = dens * self.dlog_pdf_dlam(t)
            else:
                s1 = self.dlog_pdf_dlam(t)
                integrand = dens * (s1 * s1 + self._d2log_pdf_dlam2(t))
            # NaN where the divisor is exp(-inf), a row of probability 0
            value = np.where(dens > 0, integrand, 0.0) @ _ES_W
        total: float | FloatArray = 1.0 if order == 0 else 0.0  # higher orders: 0, no scaling
        if order == 0 and log_divisor is not None:
            total = np.exp(-np.reshape(log_divisor, -1))
        inside = np.where(lower, value, total - value)
        at_infinity = np.where(x > 0, total, 0.0)
        return np.where(finite, inside, at_infinity).reshape(shape)

    def dcdf_dlam(  # noqa: D102
        self, x: FloatArray, log_divisor: FloatArray | None = None
    ) -> FloatArray:
        return self._tail_integral(x, 1, log_divisor)

    def d2cdf_dlam2(  # noqa: D102
        self, x: FloatArray, log_divisor: FloatArray | None = None
    ) -> FloatArray:
        return self._tail_integral(x, 2, log_divisor)
