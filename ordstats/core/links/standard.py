"""Link functions of cumulative link models as distribution functions.

A cumulative link model writes ``P(Y <= j | x) = F(eta_j)``; the link is ``F^{-1}``.
Each :class:`Link` here is the distribution ``F`` itself, with every quantity the
likelihood needs evaluated without cancellation in either tail:

- ``cdf``/``sf`` and their logarithms ``log_cdf``/``log_sf``,
- the density through ``log_pdf`` and its log-derivative ``dlog_pdf = f'/f``,
- ``ppf``, the quantile function (the link proper), used for starting values.

Working with ``log_pdf`` and ``f'/f`` instead of ``f`` and ``f'`` keeps ratios such
as ``f(u) / P`` finite where both underflow (probit at ``u = -50``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

import numpy as np
from scipy import special

from ordstats._typing import FloatArray

__all__ = [
    "Cauchit",
    "Cloglog",
    "Link",
    "Logit",
    "Loglog",
    "Probit",
    "log1mexp",
    "log1mexp_exp",
]

_LOG_SQRT_2PI = 0.5 * np.log(2.0 * np.pi)
_LOG_PI = np.log(np.pi)
_LOG_2 = np.log(2.0)


def log1mexp(t: FloatArray) -> FloatArray:
    """Return ``log(1 - exp(-t))`` for ``t >= 0`` without loss of precision.

    Uses ``log(-expm1(-t))`` for small ``t`` and ``log1p(-exp(-t))`` otherwise
    (Maechler 2012, "Accurately computing ``log(1 - exp(-|a|))``").

    Parameters
    ----------
    t : ndarray
        Non-negative values.

    Returns
    -------
    ndarray
        ``log(1 - exp(-t))``, ``-inf`` at ``t = 0``.
    """
    t = np.asarray(t, dtype=float)
    small = t < _LOG_2
    out = np.empty(t.shape)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        # each branch only where it is used (half the transcendental calls)
        out[small] = np.log(-np.expm1(-t[small]))
        large = ~small
        out[large] = np.log1p(-np.exp(-t[large]))
    return out[()] if out.ndim == 0 else out


def log1mexp_exp(x: FloatArray) -> FloatArray:
    """``log(1 - exp(-e^x))``, the log cdf of cloglog: accurate where ``e^x`` underflows.

    With ``t = e^x``, ``log(1 - e^{-t}) = x - t/2 + t^2/24 + O(t^4)``: below
    ``x = -30`` (``t < 1e-13``) the first two terms are exact in double
    precision, also where ``t`` is subnormal or zero (``x < -708``), which
    :func:`log1mexp` of ``t`` would turn into digits lost or ``-inf``.
    """
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        t = np.exp(x)
        return np.where(x < -30.0, x - 0.5 * t, log1mexp(t))


def _log_expit(x: FloatArray) -> FloatArray:
    """``log(1 / (1 + exp(-x)))`` as ``min(x, 0) - log1p(exp(-|x|))``."""
    x = np.asarray(x, dtype=float)
    return np.minimum(x, 0.0) - np.log1p(np.exp(-np.abs(x)))


def _infinite_to(values: FloatArray, x: FloatArray, fill: float) -> FloatArray:
    """Replace ``values`` where ``x`` is infinite by ``fill``."""
    return np.where(np.isinf(x), fill, values)


class Link(ABC):
    """A continuous distribution ``F`` used as the inverse link of an ordinal model.

    Subclasses implement the log-scale quantities; ``pdf`` and ``dpdf`` follow.
    All methods are vectorised over numpy arrays and accept ``+-inf``.
    """

    name: ClassVar[str]
    #: Whether ``F(-x) = 1 - F(x)``, so that upper-tail quantities are lower-tail
    #: ones at ``-x``.
    symmetric: ClassVar[bool] = False
    #: Whether the density is log-concave (then the negative log-likelihood of a
    #: location model is convex, Pratt 1981).
    log_concave: ClassVar[bool] = True

    @abstractmethod
    def cdf(self, x: FloatArray) -> FloatArray:
        """Distribution function ``F(x)``."""

    @abstractmethod
    def sf(self, x: FloatArray) -> FloatArray:
        """Survival function ``1 - F(x)``, accurate in the upper tail."""

    @abstractmethod
    def log_cdf(self, x: FloatArray) -> FloatArray:
        """``log F(x)``, accurate in the lower tail."""

    @abstractmethod
    def log_sf(self, x: FloatArray) -> FloatArray:
        """``log(1 - F(x))``, accurate in the upper tail."""

    @abstractmethod
    def log_pdf(self, x: FloatArray) -> FloatArray:
        """``log f(x)``; ``-inf`` at ``x = +-inf``."""

    @abstractmethod
    def dlog_pdf(self, x: FloatArray) -> FloatArray:
        """``d log f(x) / dx = f'(x) / f(x)`` (finite ``x`` only)."""

    @abstractmethod
    def ppf(self, q: FloatArray) -> FloatArray:
        """Quantile function ``F^{-1}(q)``, i.e. the link function."""

    def isf(self, s: FloatArray) -> FloatArray:
        """Inverse survival function ``x`` with ``1 - F(x) = s``, accurate in the upper tail.

        ``-F^{-1}(s)`` for a symmetric ``F``; links with an upper-tail closed
        form override it; otherwise ``F^{-1}(1 - s)``, exact while ``1 - s``
        is (``s`` above about 1e-16).
        """
        s = np.asarray(s, dtype=float)
        return -self.ppf(s) if self.symmetric else self.ppf(1.0 - s)

    def d2log_pdf(self, x: FloatArray) -> FloatArray | None:
        """``d^2 log f(x) / dx^2`` (finite ``x``), or ``None`` if the link does not give it.

        The third derivatives of the log-likelihood that the mixed models'
        analytic gradient needs follow from it; without it they are taken by
        central differences.
        """
        return None

    def pdf(self, x: FloatArray) -> FloatArray:
        """Density ``f(x)``."""
        return np.exp(self.log_pdf(x))

    def log_hazard_terms(self, x: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        """``log(1 - F)``, the log hazard ``log lambda`` and ``(log lambda)'`` at ``x``.

        ``lambda = f / (1 - F)``; ``d log(1 - F) / dx = -lambda`` and
        ``d^2 log(1 - F) / dx^2 = -lambda (log lambda)'``, where
        ``(log lambda)' = f'/f + lambda``.  Links whose hazard grows like
        ``exp(x)`` (cloglog) override this: the generic sum cancels there.
        """
        log_s = self.log_sf(x)
        log_rate = self.log_pdf(x) - log_s
        return log_s, log_rate, self.dlog_pdf(x) + np.exp(log_rate)

    def log_rhazard_terms(self, x: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        """``log F``, the log reversed hazard ``log r`` and ``(log r)'`` at ``x``.

        ``r = f / F``; ``d log F / dx = r`` and ``d^2 log F / dx^2 = r (log r)'``,
        where ``(log r)' = f'/f - r``.  Overridden where ``r`` grows like
        ``exp(-x)`` (loglog).
        """
        log_c = self.log_cdf(x)
        log_rate = self.log_pdf(x) - log_c
        return log_c, log_rate, self.dlog_pdf(x) - np.exp(log_rate)

    def log_interval(self, upper: FloatArray, lower: FloatArray) -> FloatArray:
        """``log(F(upper) - F(lower))`` for ``upper >= lower``, accurate in both tails.

        With ``a`` and ``b`` the logs of the larger and smaller term -- ``log F``
        of the bounds where ``lower <= 0``, ``log(1 - F)`` of them otherwise (R's
        ``get_fitted.c``) -- the result is ``a + log(1 - exp(b - a))``.
        """
        left = lower <= 0
        if self.symmetric:
            # 1 - F(x) = F(-x): both branches are differences of log F
            big = self.log_cdf(np.where(left, upper, -lower))
            small = self.log_cdf(np.where(left, lower, -upper))
        else:
            big = np.where(left, self.log_cdf(upper), self.log_sf(lower))
            small = np.where(left, self.log_cdf(lower), self.log_sf(upper))
        with np.errstate(invalid="ignore"):
            out = big + log1mexp(big - small)
        # a double-exponential tail beyond the double range (e^x overflows): log P is
        # below -1.8e308, -inf, not the NaN of -inf - (-inf)
        return np.where(big == -np.inf, -np.inf, out)

    def dpdf(self, x: FloatArray) -> FloatArray:
        """Derivative of the density, ``f'(x)``."""
        x = np.asarray(x, dtype=float)
        finite = np.isfinite(x)
        xf = np.where(finite, x, 0.0)
        return np.where(finite, self.dlog_pdf(xf) * self.pdf(xf), 0.0)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self))


class Logit(Link):
    """Logistic distribution, ``F(x) = 1 / (1 + exp(-x))``: the proportional-odds model."""

    name = "logit"
    symmetric = True

    def cdf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        return special.expit(x)

    def sf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        return special.expit(-np.asarray(x, dtype=float))

    def log_cdf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        return _log_expit(x)

    def log_sf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        return _log_expit(-np.asarray(x, dtype=float))

    def log_interval(self, upper: FloatArray, lower: FloatArray) -> FloatArray:
        """``log(F(u) - F(l))`` from ``F(u) - F(l) = F(u) (1 - F(l)) (1 - e^{l - u})``.

        The identity holds exactly for the logistic distribution and has no
        subtraction of probabilities, so no tail needs a separate branch.
        """
        with np.errstate(invalid="ignore"):
            return _log_expit(upper) + _log_expit(-lower) + log1mexp(upper - lower)

    def log_pdf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        # log f(x) = -|x| - 2 log(1 + exp(-|x|)), symmetric and overflow-free
        ax = np.abs(np.asarray(x, dtype=float))
        return -ax - 2.0 * np.log1p(np.exp(-ax))

    def dlog_pdf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        return -np.tanh(0.5 * np.asarray(x, dtype=float))

    def d2log_pdf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        # d/dx of -tanh(x/2) is -(1 - tanh^2(x/2)) / 2
        t = np.tanh(0.5 * np.asarray(x, dtype=float))
        return -0.5 * (1.0 - t * t)

    def ppf(self, q: FloatArray) -> FloatArray:  # noqa: D102
        return special.logit(q)


class Probit(Link):
    """Standard normal distribution: the ordered probit model."""

    name = "probit"
    symmetric = True

    def cdf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        return special.ndtr(x)

    def sf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        return special.ndtr(-np.asarray(x, dtype=float))

    def log_cdf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        return special.log_ndtr(x)

    def log_sf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        return special.log_ndtr(-np.asarray(x, dtype=float))

    def log_pdf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        x = np.asarray(x, dtype=float)
        return -0.5 * x * x - _LOG_SQRT_2PI

    def dlog_pdf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        return -np.asarray(x, dtype=float)

    def d2log_pdf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        return np.full(np.shape(x), -1.0)

    def ppf(self, q: FloatArray) -> FloatArray:  # noqa: D102
        return special.ndtri(q)


class Cloglog(Link):
    """Gumbel distribution of the minimum, ``F(x) = 1 - exp(-exp(x))``.

    The grouped proportional-hazards model (McCullagh 1980).
    """

    name = "cloglog"

    def cdf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        with np.errstate(over="ignore"):
            return -np.expm1(-np.exp(x))

    def sf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        with np.errstate(over="ignore"):
            return np.exp(-np.exp(x))

    def log_cdf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        return log1mexp_exp(np.asarray(x, dtype=float))

    def log_sf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        with np.errstate(over="ignore"):
            return -np.exp(x)

    def log_pdf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        x = np.asarray(x, dtype=float)
        with np.errstate(over="ignore", invalid="ignore"):
            return _infinite_to(x - np.exp(x), x, -np.inf)

    def dlog_pdf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        with np.errstate(over="ignore"):
            return 1.0 - np.exp(x)

    def d2log_pdf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        with np.errstate(over="ignore"):
            return -np.exp(np.asarray(x, dtype=float))

    def log_hazard_terms(  # noqa: D102
        self, x: FloatArray
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        x = np.asarray(x, dtype=float)  # 1 - F = exp(-exp(x)): hazard exp(x)
        return self.log_sf(x), x, np.ones_like(x)

    def ppf(self, q: FloatArray) -> FloatArray:  # noqa: D102
        with np.errstate(divide="ignore"):
            return np.log(-np.log1p(-np.asarray(q, dtype=float)))

    def isf(self, s: FloatArray) -> FloatArray:  # noqa: D102
        with np.errstate(divide="ignore"):  # 1 - F(x) = exp(-exp(x))
            return np.log(-np.log(np.asarray(s, dtype=float)))


class Loglog(Link):
    """Gumbel distribution of the maximum, ``F(x) = exp(-exp(-x))``."""

    name = "loglog"

    def cdf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        with np.errstate(over="ignore"):
            return np.exp(-np.exp(-np.asarray(x, dtype=float)))

    def sf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        with np.errstate(over="ignore"):
            return -np.expm1(-np.exp(-np.asarray(x, dtype=float)))

    def log_cdf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        with np.errstate(over="ignore"):
            return -np.exp(-np.asarray(x, dtype=float))

    def log_sf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        return log1mexp_exp(-np.asarray(x, dtype=float))

    def log_pdf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        x = np.asarray(x, dtype=float)
        with np.errstate(over="ignore", invalid="ignore"):
            return _infinite_to(-x - np.exp(-x), x, -np.inf)

    def dlog_pdf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        with np.errstate(over="ignore"):
            return np.exp(-np.asarray(x, dtype=float)) - 1.0

    def d2log_pdf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        with np.errstate(over="ignore"):
            return -np.exp(-np.asarray(x, dtype=float))

    def log_rhazard_terms(  # noqa: D102
        self, x: FloatArray
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        x = np.asarray(x, dtype=float)  # F = exp(-exp(-x)): reversed hazard exp(-x)
        return self.log_cdf(x), -x, -np.ones_like(x)

    def ppf(self, q: FloatArray) -> FloatArray:  # noqa: D102
        with np.errstate(divide="ignore"):
            return -np.log(-np.log(np.asarray(q, dtype=float)))

    def isf(self, s: FloatArray) -> FloatArray:  # noqa: D102
        with np.errstate(divide="ignore"):  # 1 - F(x) = 1 - exp(-exp(-x))
            return -np.log(-np.log1p(-np.asarray(s, dtype=float)))


class Cauchit(Link):
    """Standard Cauchy distribution, ``F(x) = 1/2 + arctan(x) / pi``.

    The tails are computed as ``arctan2(1, -x) / pi`` so that ``F(x)`` keeps full
    relative precision for large ``|x|`` (R's ``clm`` instead clamps the outer
    thresholds at ``+-1e5``, which biases its log-likelihood slightly).
    """

    name = "cauchit"
    symmetric = True
    log_concave = False

    def cdf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        return np.arctan2(1.0, -np.asarray(x, dtype=float)) / np.pi

    def sf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        return np.arctan2(1.0, np.asarray(x, dtype=float)) / np.pi

    def log_cdf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        with np.errstate(divide="ignore"):
            return np.log(self.cdf(x))

    def log_sf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        with np.errstate(divide="ignore"):
            return np.log(self.sf(x))

    def log_pdf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        ax = np.abs(np.asarray(x, dtype=float))
        with np.errstate(over="ignore", divide="ignore"):
            # log(1 + x^2) = 2 log|x| + log1p(1/x^2) avoids overflow of x^2.
            big = ax > 1e8
            log1px2 = np.where(big, 2.0 * np.log(np.where(big, ax, 1.0)), np.log1p(ax * ax))
        return -_LOG_PI - log1px2

    def dlog_pdf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        x = np.asarray(x, dtype=float)
        return -2.0 * x / (1.0 + x * x)

    def d2log_pdf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        # -2 (1 - x^2) / (1 + x^2)^2, written to avoid overflow of x^4
        x = np.asarray(x, dtype=float)
        r = 1.0 / (1.0 + x * x)
        return -2.0 * r * (r - x * x * r)

    def ppf(self, q: FloatArray) -> FloatArray:  # noqa: D102
        return np.tan(np.pi * (np.asarray(q, dtype=float) - 0.5))
