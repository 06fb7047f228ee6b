r"""Prior densities and a log prior with exact gradient and Hessian, on arrays only.

A prior is written as brms writes it: ``"normal(0, 2.5)"``, ``"student_t(3, 0, 2.5)"``,
``"double_exponential(0, 1)"`` (or ``"laplace(0, 1)"``), ``"cauchy(0, 1)"``,
``"exponential(1)"`` and ``""`` or ``"flat"`` (the improper uniform).  :func:`parse_density`
turns the text into a :class:`Density` with ``log p`` and its first two derivatives,
up to the normalising constant, which a posterior does not need.

:class:`LogPrior` is a sum of such terms, each on a linear combination ``u = a'x`` of the
parameter vector ``x`` (a row of ``A``): the identity rows for slopes, the centred
intercepts ``theta_j - xbar'beta`` for brms' ``Intercept`` class.  A term may instead put
its density on ``s = exp(u)`` (a standard deviation parametrised by its logarithm), and then
carries the Jacobian ``ds/du = s``:

.. math::

    \log p_U(u) = \log p_S(e^u) + u,\quad
    \frac{d}{du} = s\,(\log p_S)'(s) + 1,\quad
    \frac{d^2}{du^2} = s^2 (\log p_S)''(s) + s\,(\log p_S)'(s).

The gradient is ``A' g(u)`` and the Hessian ``A' diag(h(u)) A``.  The Laplace
(double-exponential) density is not differentiable at its location: it is kept out of
the smooth part and reported as the L1 weights of an elastic net
(:mod:`ordstats.core.penalty`), whose proximal Newton solver handles the kink exactly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ordstats._typing import FloatArray
from ordstats.errors import SpecificationError

__all__ = [
    "DISTRIBUTIONS",
    "BlockPrior",
    "Density",
    "LogPrior",
    "PriorTerm",
    "parse_density",
]

#: Distribution names and the arguments each takes, in brms' (Stan's) order.
DISTRIBUTIONS: dict[str, tuple[str, ...]] = {
    "flat": (),
    "normal": ("mu", "sigma"),
    "student_t": ("nu", "mu", "sigma"),
    "cauchy": ("mu", "sigma"),
    "double_exponential": ("mu", "sigma"),
    "exponential": ("rate",),
    "dirichlet": ("alpha",),
    "lkj": ("eta",),
}
#: Densities of several parameters at once (a simplex; a correlation matrix).
MULTIVARIATE = frozenset({"dirichlet", "lkj"})
_ALIASES = {
    "laplace": "double_exponential",
    "": "flat",
    "uniform": "flat",
    "lkj_corr_cholesky": "lkj",
}
#: Scales a density may have: their squares (and nu times them) stay normal numbers.
_SIGMA_RANGE = (1e-100, 1e100)
_CALL = re.compile(r"^\s*([A-Za-z_]\w*)\s*\((.*)\)\s*$")


@dataclass(frozen=True)
class Density:
    """One univariate prior density, up to its normalising constant.

    Attributes
    ----------
    name : str
        A key of :data:`DISTRIBUTIONS`.
    args : tuple of float
        Its arguments in brms' order.
    """

    name: str
    args: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        expected = DISTRIBUTIONS.get(self.name)
        if expected is None:
            raise SpecificationError(
                f"unknown prior distribution {self.name!r}; use one of "
                f"{', '.join(sorted(DISTRIBUTIONS))} (or laplace for double_exponential)"
            )
        if self.name == "dirichlet":
            if not self.args:
                raise SpecificationError(
                    f"{self.name}() takes one concentration for every entry, or one per entry"
                )
        elif len(self.args) != len(expected):
            raise SpecificationError(
                f"{self.name}() takes {len(expected)} argument(s) ({', '.join(expected)}); "
                f"got {len(self.args)}"
            )
        if not all(np.isfinite(self.args)):
            raise SpecificationError(f"the arguments of {self} must be finite numbers")
        for value, arg in zip(self.args, expected * len(self.args), strict=False):
            if arg in {"sigma", "nu", "rate", "alpha", "eta"} and value <= 0:
                raise SpecificationError(
                    f"{self}: {arg} must be positive (a scale, degrees of freedom or rate); "
                    f"got {value:g}"
                )
            # the densities divide by sigma squared (and nu sigma squared): it must not
            # underflow to 0 or overflow
            if arg == "sigma" and not _SIGMA_RANGE[0] <= value <= _SIGMA_RANGE[1]:
                hint = (
                    "to hold a slope at a value, put it in an offset instead"
                    if value < _SIGMA_RANGE[0]
                    else "for no information, use a flat prior ('flat')"
                )
                raise SpecificationError(
                    f"{self}: sigma must be between {_SIGMA_RANGE[0]:g} and "
                    f"{_SIGMA_RANGE[1]:g} (its square enters the density); got {value:g}: {hint}"
                )

    def __str__(self) -> str:
        if self.name == "flat":
            return "flat"
        return f"{self.name}({', '.join(f'{a:g}' for a in self.args)})"

    @property
    def smooth(self) -> bool:
        """Whether ``log p`` is twice differentiable everywhere (not the Laplace density)."""
        return self.name != "double_exponential"

    @property
    def positive_only(self) -> bool:
        """Whether the density lives on ``(0, inf)`` only (the exponential)."""
        return self.name == "exponential"

    @property
    def multivariate(self) -> bool:
        """Whether the density is on a vector (the Dirichlet), not on single parameters."""
        return self.name in MULTIVARIATE

    def logpdf(self, u: FloatArray) -> FloatArray:
        """``log p(u)`` up to a constant."""
        return self._derivatives(u)[0]

    def derivatives(self, u: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        """``log p(u)`` and its first and second derivatives (0 at the Laplace kink)."""
        return self._derivatives(u)

    def _derivatives(self, u: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        u = np.asarray(u, dtype=float)
        zero = np.zeros_like(u)
        name, a = self.name, self.args
        if self.multivariate:
            raise SpecificationError(f"{self} is a density on a simplex, not on one parameter")
        if name == "flat":
            return zero, zero, zero
        if name == "normal":
            mu, s = a
            d = u - mu
            return -0.5 * (d / s) ** 2, -d / s**2, zero - 1.0 / s**2
        if name in {"student_t", "cauchy"}:
            nu, mu, s = a if name == "student_t" else (1.0, *a)
            d = u - mu
            q = nu * s * s + d * d
            value = -0.5 * (nu + 1.0) * np.log1p(d * d / (nu * s * s))
            return value, -(nu + 1.0) * d / q, -(nu + 1.0) * (nu * s * s - d * d) / (q * q)
        if name == "double_exponential":
            mu, s = a
            return -np.abs(u - mu) / s, -np.sign(u - mu) / s, zero
        (rate,) = a  # exponential, on u > 0
        inside = u > 0
        value = np.where(inside, -rate * u, -np.inf)
        return value, zero - rate, zero


def parse_density(text: object) -> Density:
    """A :class:`Density` from brms' text, e.g. ``"student_t(3, 0, 2.5)"``.

    Parameters
    ----------
    text : str or Density
        ``"name(arg, ...)"``; ``""`` or ``"flat"`` for the flat (improper) prior.

    Returns
    -------
    Density

    Raises
    ------
    SpecificationError
        For text that is not a known distribution with valid arguments.
    """
    if isinstance(text, Density):
        return text
    if not isinstance(text, str):
        raise SpecificationError(
            f"a prior must be a text such as 'normal(0, 2.5)'; got {type(text).__name__}"
        )
    stripped = text.strip()
    if stripped.lower() in _ALIASES or stripped.lower() == "flat":
        return Density(_ALIASES.get(stripped.lower(), "flat"))
    match = _CALL.match(stripped)
    if match is None:
        raise SpecificationError(
            f"cannot read the prior {text!r}; write it as brms does, e.g. 'normal(0, 2.5)', "
            "'student_t(3, 0, 2.5)', 'double_exponential(0, 1)', 'exponential(1)' or 'flat'"
        )
    name = _ALIASES.get(match.group(1).lower(), match.group(1).lower())
    parts = [p.strip() for p in match.group(2).split(",")] if match.group(2).strip() else []
    if match.group(1).lower() == "uniform" and parts:
        raise SpecificationError(
            f"{text!r}: a bounded uniform prior needs bounds on the parameter (brms' lb and "
            "ub), which ordstats' parameters do not have; use 'flat' (the improper uniform) "
            "or a normal or student_t prior"
        )
    try:
        args = tuple(float(p) for p in parts)
    except ValueError:
        raise SpecificationError(
            f"the arguments of the prior {text!r} must be numbers; got {match.group(2)!r}"
        ) from None
    return Density(name, args)


class BlockPrior(Protocol):
    """A prior on several parameters jointly (:mod:`ordstats.core.block_priors`)."""

    def value(self, x: FloatArray) -> float:  # pragma: no cover - protocol
        """``log p`` at ``x``."""
        ...

    def gradient(self, x: FloatArray) -> FloatArray:  # pragma: no cover - protocol
        """Gradient of ``log p`` (length of ``x``)."""
        ...

    def hessian(self, x: FloatArray) -> FloatArray:  # pragma: no cover - protocol
        """Hessian of ``log p``."""
        ...

    def batch_value(self, X: FloatArray) -> FloatArray:  # pragma: no cover - protocol
        """``log p`` at each row of ``X``."""
        ...


@dataclass(frozen=True)
class PriorTerm:
    """One density on ``u = row @ x`` (or on ``exp(u)`` when ``log_scale``)."""

    row: FloatArray
    density: Density
    log_scale: bool = False
    label: str = ""


@dataclass(frozen=True)
class LogPrior:
    """``sum_t log p_t(a_t'x)`` with its gradient and Hessian (see the module docstring).

    Attributes
    ----------
    terms : tuple of PriorTerm
    k : int
        Length of the parameter vector.
    """

    terms: tuple[PriorTerm, ...]
    k: int
    blocks: tuple[BlockPrior, ...] = ()
    _A: FloatArray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        rows = [t.row for t in self.terms] or [np.zeros(self.k)]
        object.__setattr__(self, "_A", np.vstack(rows).astype(float))

    def _pieces(self, x: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        u = self._A @ np.asarray(x, dtype=float)
        value, d1, d2 = np.zeros_like(u), np.zeros_like(u), np.zeros_like(u)
        for i, term in enumerate(self.terms):
            if term.log_scale:
                s = np.exp(u[i : i + 1])
                v, g, h = term.density.derivatives(s)
                value[i], d1[i], d2[i] = v[0] + u[i], s[0] * g[0] + 1.0, (s * s * h + s * g)[0]
            else:
                v, g, h = term.density.derivatives(u[i : i + 1])
                value[i], d1[i], d2[i] = v[0], g[0], h[0]
        return value, d1, d2

    def value(self, x: FloatArray) -> float:
        """``log p(x)`` up to a constant (``-inf`` outside a density's support)."""
        blocks = sum(b.value(x) for b in self.blocks)
        if not self.terms:
            return float(blocks)
        return float(np.sum(self._pieces(x)[0]) + blocks)

    def gradient(self, x: FloatArray) -> FloatArray:
        """``A' g(u)`` plus the blocks' gradients."""
        out = np.zeros(self.k)
        for b in self.blocks:
            out += b.gradient(x)
        if not self.terms:
            return out
        return out + self._A.T @ self._pieces(x)[1]

    def hessian(self, x: FloatArray) -> FloatArray:
        """``A' diag(h(u)) A`` plus the blocks' Hessians (the Laplace terms contribute 0)."""
        out = np.zeros((self.k, self.k))
        for b in self.blocks:
            out += b.hessian(x)
        if not self.terms:
            return out
        return out + (self._A.T * self._pieces(x)[2]) @ self._A

    def batch_value(self, X: FloatArray) -> FloatArray:
        """``log p`` at each row of ``X`` (draws x parameters)."""
        total = np.zeros(X.shape[0])
        for b in self.blocks:
            total += b.batch_value(X)
        if not self.terms:
            return total
        U = X @ self._A.T
        for i, term in enumerate(self.terms):
            if term.log_scale:
                total += term.density.logpdf(np.exp(U[:, i])) + U[:, i]
            else:
                total += term.density.logpdf(U[:, i])
        return total

    def smooth_part(self) -> LogPrior:
        """The terms without the Laplace densities."""
        return LogPrior(tuple(t for t in self.terms if t.density.smooth), self.k, self.blocks)

    def l1_weights(self) -> FloatArray:
        """``1 / sigma`` of each parameter under a Laplace density (0 elsewhere).

        Raises
        ------
        SpecificationError
            For a Laplace density off zero, on a combination of parameters, or on a
            log-scale parameter: the mode's solver handles ``|x_j| / sigma`` only.
        """
        weights = np.zeros(self.k)
        for term in self.terms:
            if term.density.smooth:
                continue
            nonzero = np.flatnonzero(term.row)
            if term.log_scale or nonzero.size != 1 or term.row[nonzero[0]] != 1.0:
                raise SpecificationError(
                    f"a double_exponential (Laplace) prior is available on single slopes only "
                    f"(class 'b' or 'disc'); {term.label or 'this parameter'} is a combination "
                    "or a standard deviation: use normal or student_t there"
                )
            if term.density.args[0] != 0.0:
                raise SpecificationError(
                    f"a double_exponential prior must be centred at 0 (the lasso); got "
                    f"{term.density} on {term.label}: use normal or student_t for another centre"
                )
            weights[nonzero[0]] += 1.0 / term.density.args[1]
        return weights
