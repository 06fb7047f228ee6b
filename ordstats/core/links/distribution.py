"""A link from any frozen scipy continuous distribution (statsmodels' ``distr=``)."""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from ordstats._typing import FloatArray
from ordstats.core.links.standard import Link
from ordstats.errors import SpecificationError

__all__ = ["DistributionLink", "FrozenDistribution"]

#: Relative step of the central difference for ``(log f)'``: ``eps^(1/3)``
#: balances truncation (``h^2``) and rounding (``eps / h``) errors.
_STEP = float(np.finfo(float).eps ** (1.0 / 3.0))


class FrozenDistribution(Protocol):
    """What :class:`DistributionLink` reads from a frozen ``scipy.stats`` distribution."""

    def cdf(self, x: FloatArray) -> FloatArray: ...  # noqa: D102
    def sf(self, x: FloatArray) -> FloatArray: ...  # noqa: D102
    def logcdf(self, x: FloatArray) -> FloatArray: ...  # noqa: D102
    def logsf(self, x: FloatArray) -> FloatArray: ...  # noqa: D102
    def logpdf(self, x: FloatArray) -> FloatArray: ...  # noqa: D102
    def ppf(self, q: FloatArray) -> FloatArray: ...  # noqa: D102
    def isf(self, q: FloatArray) -> FloatArray: ...  # noqa: D102


class DistributionLink(Link):
    r"""The inverse link ``F`` given by a frozen scipy continuous distribution.

    As statsmodels' ``OrderedModel(distr=scipy.stats.t(df=5))``: ``F`` is
    ``dist.cdf`` and the log-scale quantities are scipy's ``logcdf``,
    ``logsf`` and ``logpdf``.  scipy gives no derivative of the density, so
    :math:`(\log f)'(x)` is the central difference

    .. math::

        (\log f)'(x) \approx \frac{\log f(x + h) - \log f(x - h)}{2h},
        \qquad h = \epsilon^{1/3} \max(1, |x|),

    accurate to about ``1e-10`` for smooth densities; the Hessian of the
    likelihood, and so the standard errors, carry that error.

    Parameters
    ----------
    dist : frozen scipy.stats continuous distribution
        E.g. ``scipy.stats.t(df=5)`` or ``scipy.stats.logistic()``.
    """

    name = "distribution"
    log_concave = False  # not known in general

    def __init__(self, dist: FrozenDistribution) -> None:
        self.dist = dist

    def cdf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        return np.asarray(self.dist.cdf(x), dtype=float)

    def sf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        return np.asarray(self.dist.sf(x), dtype=float)

    def log_cdf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        with np.errstate(divide="ignore"):
            return np.asarray(self.dist.logcdf(x), dtype=float)

    def log_sf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        with np.errstate(divide="ignore"):
            return np.asarray(self.dist.logsf(x), dtype=float)

    def log_pdf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        with np.errstate(divide="ignore"):
            return np.asarray(self.dist.logpdf(x), dtype=float)

    def dlog_pdf(self, x: FloatArray) -> FloatArray:  # noqa: D102
        x = np.asarray(x, dtype=float)
        h = _STEP * np.maximum(1.0, np.abs(x))
        with np.errstate(invalid="ignore"):
            return (self.log_pdf(x + h) - self.log_pdf(x - h)) / (2.0 * h)

    def ppf(self, q: FloatArray) -> FloatArray:  # noqa: D102
        return np.asarray(self.dist.ppf(q), dtype=float)

    def isf(self, s: FloatArray) -> FloatArray:  # noqa: D102
        return np.asarray(self.dist.isf(s), dtype=float)

    def _key(self) -> tuple[object, ...]:
        dist = self.dist
        inner = getattr(dist, "dist", None)
        args = getattr(dist, "args", ())
        kwds = getattr(dist, "kwds", {})
        return (getattr(inner, "name", id(dist)), tuple(args), tuple(sorted(kwds.items())))

    def __repr__(self) -> str:
        name, args, kwds = self._key()
        shown = ", ".join([repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwds])  # type: ignore[attr-defined]
        return f"DistributionLink({name}({shown}))"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DistributionLink) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(("distribution", repr(self._key())))


def as_distribution_link(value: object) -> DistributionLink | None:
    """A :class:`DistributionLink` if ``value`` is a frozen scipy distribution, else None.

    An unfrozen continuous distribution without shape parameters
    (``scipy.stats.norm``) is taken at loc 0 and scale 1.

    Raises
    ------
    SpecificationError
        For a frozen *discrete* distribution, or an unfrozen one that needs
        shape parameters.
    """
    from scipy import stats

    if isinstance(value, stats.rv_continuous):
        value = _frozen_without_shapes(value)
    inner = getattr(value, "dist", None)
    if inner is None or not hasattr(value, "cdf"):
        return None
    if isinstance(inner, stats.rv_discrete):
        raise SpecificationError(
            f"link must be a continuous distribution; {inner.name!r} is discrete"
        )
    if not isinstance(inner, stats.rv_continuous):
        return None
    return DistributionLink(value)  # type: ignore[arg-type]


def _frozen_without_shapes(dist: Any) -> Any:
    """``scipy.stats.norm`` given unfrozen, as statsmodels accepts it: frozen at loc 0, scale 1.

    A distribution with shape parameters (``scipy.stats.t``) cannot be frozen
    without them, so it is refused with the spelling that works.
    """
    if dist.shapes:
        raise SpecificationError(
            f"the distribution {dist.name!r} needs its shape parameters "
            f"({dist.shapes}): pass it frozen, e.g. scipy.stats.{dist.name}({dist.shapes}=...)"
        )
    return dist()
