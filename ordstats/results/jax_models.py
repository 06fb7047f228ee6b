r"""The log posteriors of ordinal models written in JAX, for NUTS (the ``bayes`` extra).

NUTS needs the log density and its gradient thousands of times; compiled JAX code makes
each evaluation cost microseconds, where a call back into Python costs milliseconds.
This module writes the same log posterior as ordstats' NumPy families
(:mod:`ordstats.families`) and priors (:mod:`ordstats.core.priors`) in JAX, from the
arrays a :class:`~ordstats.results.posterior.PosteriorTarget` hands over
(``native_arrays()``):

* cumulative: ``P(Y <= j) = F((theta_j + w'gamma_j - x'beta - o) / exp(z'zeta))``;
* sratio, cratio: ``eta_j = alpha_j + w'gamma_j + x'b + o``, a chain of binary steps;
  acat: ``eta_j = log P(Y = j + 1) / P(Y = j)`` (``reverse=True`` runs the steps from
  the top);
* the links logit, probit, cloglog, loglog and cauchit;
* random terms of a clmm, scalar or correlated, as the *full* model: NUTS samples the
  random effects ``u_g = L z_g``, ``z_g ~ N(0, I)`` (non-centred; ``L = diag(s) W`` the
  term's Cholesky factor from its log SDs and ``atanh`` partial correlations,
  :class:`ordstats.estimation.bayes_language.CorrelationMap`), next to the other
  parameters, as brms does, so that its posterior of the fixed and variance parameters
  is the exact one, not the Laplace-approximated marginal;
* monotonic predictors ``mo(x)``: the sampled ``(b, log-ratios)`` become the linear
  steps ``c = b D softmax((y, 0))`` before the likelihood
  (:mod:`ordstats.estimation.bayes_language`), and the joint priors (Dirichlet on the
  simplex, LKJ on the partial correlations of a correlated term) are those of
  :mod:`ordstats.core.block_priors`;
* group-specific thresholds ``thres(gr = g)``: the sampled groups' thresholds become
  the nominal model's parameters by the affine map ``x = A t + c`` (``linear_map``,
  ``linear_offset``: a group with fewer thresholds gets its absent ones far above its
  last, :mod:`ordstats.estimation.bayes_thresholds`); the priors are on ``t``.

The tests check every log density against ordstats' NumPy value at random points.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["log_posterior"]


#: The JAX kernels this module writes, keyed by the family each one implements:
#: acat's log-probabilities are cumulative sums of eta (a softmax); in sratio the
#: step stops at j with probability F(eta_j), in cratio it goes on with it.
_ADJACENT_CATEGORIES = frozenset({"acat"})
_STOP_WITH_CDF = frozenset({"sratio"})


def _cdf(jnp: Any, jsp: Any, name: str) -> Callable[[Any], Any]:
    if name == "logit":
        return lambda x: 1.0 / (1.0 + jnp.exp(-x))
    if name == "probit":
        return jsp.special.ndtr
    if name == "cloglog":
        return lambda x: -jnp.expm1(-jnp.exp(x))
    if name == "loglog":
        return lambda x: jnp.exp(-jnp.exp(-x))
    if name == "cauchit":
        return lambda x: 0.5 + jnp.arctan(x) / jnp.pi
    raise KeyError(name)


def _log_cdf_pair(jnp: Any, jsp: Any, name: str) -> Callable[[Any], tuple[Any, Any]]:
    """``(log F(x), log(1 - F(x)))`` without cancellation where it matters."""
    if name == "logit":
        return lambda x: (-jnp.logaddexp(0.0, -x), -jnp.logaddexp(0.0, x))
    if name == "probit":
        return lambda x: (jsp.special.log_ndtr(x), jsp.special.log_ndtr(-x))
    if name == "cloglog":
        return lambda x: (jnp.log(-jnp.expm1(-jnp.exp(x))), -jnp.exp(x))
    if name == "loglog":
        return lambda x: (-jnp.exp(-x), jnp.log(-jnp.expm1(-jnp.exp(-x))))
    cdf = _cdf(jnp, jsp, name)
    return lambda x: (jnp.log(cdf(x)), jnp.log(cdf(-x)))  # cauchit: symmetric


def _log_density_terms(jnp: Any, density: tuple[str, tuple[float, ...]], u: Any) -> Any:
    name, a = density
    if name == "normal":
        return -0.5 * ((u - a[0]) / a[1]) ** 2
    if name in {"student_t", "cauchy"}:
        nu, mu, s = a if name == "student_t" else (1.0, *a)
        return -0.5 * (nu + 1.0) * jnp.log1p(((u - mu) / s) ** 2 / nu)
    if name == "double_exponential":
        return -jnp.abs(u - a[0]) / a[1]
    if name == "exponential":
        return jnp.where(u > 0, -a[0] * u, -jnp.inf)
    return 0.0 * u  # flat


def _log_prior(jnp: Any, terms: list[tuple[Any, tuple[str, tuple[float, ...]], bool]]) -> Any:
    def value(x: Any) -> Any:
        total = 0.0
        for row, density, log_scale in terms:
            u = jnp.dot(row, x)
            if log_scale:
                total = total + _log_density_terms(jnp, density, jnp.exp(u)) + u
            else:
                total = total + _log_density_terms(jnp, density, u)
        return total

    return value


def _block_prior(jnp: Any, jsp: Any, blocks: list[tuple[Any, ...]]) -> Callable[[Any], Any]:
    """The joint priors of :mod:`ordstats.core.block_priors` in JAX."""
    from ordstats.core.block_priors import lkj_shapes

    def simplex(x: Any, positions: list[int], alpha: tuple[float, ...]) -> Any:
        full = jnp.concatenate([x[jnp.asarray(positions)], jnp.zeros(1)])
        return jnp.dot(jnp.asarray(alpha), full - jsp.special.logsumexp(full))

    def lkj(x: Any, positions: list[int], q: int, eta: float) -> Any:
        y = x[jnp.asarray(positions)]
        log_cosh = jnp.logaddexp(y, -y) - jnp.log(2.0)
        return -2.0 * jnp.dot(jnp.asarray(lkj_shapes(q, eta)), log_cosh)

    def value(x: Any) -> Any:
        total = 0.0
        for kind, *spec in blocks:
            total = total + (simplex(x, *spec) if kind == "simplex" else lkj(x, *spec))
        return total

    return value


def _cholesky_factor(jnp: Any, theta: Any, q: int, layout: tuple[Any, Any]) -> Any:
    """``L = diag(exp(t)) W`` from a term's log SDs ``t`` and ``atanh`` partial correlations."""
    rows, cols = layout
    pairs = zip(rows[q:], cols[q:], strict=True)
    index = {(int(r), int(c)): q + p for p, (r, c) in enumerate(pairs)}
    out = []
    for i in range(q):
        entries, log_rest = [], 0.0
        for j in range(i):
            y = theta[index[(i, j)]]
            entries.append(jnp.tanh(y) * jnp.exp(log_rest))
            log_rest = log_rest - (jnp.logaddexp(y, -y) - jnp.log(2.0))
        entries.append(jnp.exp(log_rest))
        row = jnp.stack(entries + [jnp.zeros(())] * (q - i - 1))
        out.append(jnp.exp(theta[i]) * row)
    return jnp.stack(out)


def _monotonic(jnp: Any, jsp: Any, positions: list[list[int]]) -> Callable[[Any], Any]:
    """``c = b D softmax((y, 0))`` in place of each ``mo()`` term's ``(b, y)``."""

    def expand(x: Any) -> Any:
        x = jnp.asarray(x)
        for pos in positions:
            idx = jnp.asarray(pos)
            full = jnp.concatenate([x[idx[1:]], jnp.zeros(1)])
            zeta = jnp.exp(full - jsp.special.logsumexp(full))
            x = x.at[idx].set(x[idx[0]] * len(pos) * zeta)
        return x

    return expand


def _cumulative(jnp: Any, jsp: Any, a: dict[str, Any]) -> Callable[[Any, Any], Any]:
    n_alpha, r, p, s = a["layout"]
    J = jnp.asarray(a["J"])
    X, W, Z = (jnp.asarray(a[k]) for k in ("X", "nominal", "scale"))
    y = np.asarray(a["y"])
    cdf = _cdf(jnp, jsp, a["link"])
    n = y.size

    def loglik_rows(x: Any, extra: Any) -> Any:
        alpha = x[:n_alpha]
        gammas = x[n_alpha : n_alpha * (1 + r)].reshape(r, n_alpha)
        beta = x[n_alpha * (1 + r) : n_alpha * (1 + r) + p]
        zeta = x[n_alpha * (1 + r) + p : n_alpha * (1 + r) + p + s]
        theta = (alpha[None, :] + (W @ gammas if r else 0.0)) @ J.T  # (n, K-1)
        eta = (X @ beta if p else 0.0) + a["offset"] + extra
        scale = jnp.exp(Z @ zeta) if s else 1.0
        cum = cdf(
            (theta - jnp.reshape(eta, (-1, 1)) * jnp.ones((n, 1))) / jnp.reshape(scale, (-1, 1))
        )
        padded = jnp.hstack([jnp.zeros((n, 1)), cum, jnp.ones((n, 1))])
        rows = jnp.arange(n)
        return jnp.log(padded[rows, y + 1] - padded[rows, y])

    return loglik_rows


def _steps(jnp: Any, jsp: Any, a: dict[str, Any]) -> Callable[[Any, Any], Any]:
    n_alpha, r, p, _ = a["layout"]
    X, W = jnp.asarray(a["X"]), jnp.asarray(a["nominal"])
    y = np.asarray(a["y"])
    K = n_alpha + 1
    family, reverse = a["family"], a["reverse"]
    codes = (K - 1 - y) if reverse else y
    steps = np.arange(K - 1)
    before = jnp.asarray(steps[None, :] < codes[:, None], dtype=float)  # went on at j
    at = jnp.asarray(steps[None, :] == codes[:, None], dtype=float)  # stopped at j
    log_pair = _log_cdf_pair(jnp, jsp, a["link"])

    def loglik_rows(x: Any, extra: Any) -> Any:
        alpha = x[:n_alpha]
        gammas = x[n_alpha : n_alpha * (1 + r)].reshape(r, n_alpha)
        b = x[n_alpha * (1 + r) : n_alpha * (1 + r) + p]
        eta = alpha[None, :] + (W @ gammas if r else 0.0)
        eta = eta + jnp.reshape((X @ b if p else 0.0) + a["offset"] + extra, (-1, 1))
        if reverse:
            eta = eta[:, ::-1]
        if family in _ADJACENT_CATEGORIES:
            scores = jnp.cumsum(jnp.hstack([jnp.zeros((eta.shape[0], 1)), eta]), axis=1)
            log_probs = scores - jsp.special.logsumexp(scores, axis=1, keepdims=True)
            return log_probs[jnp.arange(eta.shape[0]), codes]
        log_f, log_1mf = log_pair(eta)
        go_on, stop = (log_1mf, log_f) if family in _STOP_WITH_CDF else (log_f, log_1mf)
        return jnp.sum(before * go_on + at * stop, axis=1)

    return loglik_rows


def log_posterior(arrays: dict[str, Any]) -> tuple[Callable[[Any], Any], int]:
    """A JAX function of the sampled vector: the log posterior; and that vector's length.

    For a mixed model the vector is the parameters followed by the standardised random
    effects ``z``; the first ``k`` entries are the reported parameters.

    Raises
    ------
    KeyError
        For a link or family this module does not write (the caller falls back to a
        callback into ordstats' NumPy code).
    """
    import jax.numpy as jnp
    import jax.scipy as jsp

    from ordstats.core.block_priors import cholesky_layout

    if arrays["family"] == "cumulative":
        rows = _cumulative(jnp, jsp, arrays)
    elif arrays["family"] in {"sratio", "cratio", "acat"}:
        rows = _steps(jnp, jsp, arrays)
    else:
        raise KeyError(arrays["family"])
    _cdf(jnp, jsp, arrays["link"])  # KeyError for a link not written here
    prior = _log_prior(jnp, arrays["prior"])
    joint = _block_prior(jnp, jsp, arrays.get("blocks", []))
    expand = _monotonic(jnp, jsp, arrays.get("monotonic", []))
    linear = arrays.get("linear_map")
    A = None if linear is None else jnp.asarray(linear)
    c = jnp.asarray(arrays.get("linear_offset", 0.0))
    w = jnp.asarray(arrays["weights"])
    k = int(arrays["k"])
    groups = arrays.get("groups", [])
    n_re = sum(g[2] * g[0].shape[1] for g in groups)

    def value(v: Any) -> Any:
        x = v[:k]
        extra: Any = 0.0
        pos = k
        for matrix, codes, n_levels, positions in groups:
            q = matrix.shape[1]
            z = v[pos : pos + n_levels * q].reshape(n_levels, q)
            pos += n_levels * q
            L = _cholesky_factor(jnp, x[jnp.asarray(positions)], q, cholesky_layout(q))
            extra = extra + jnp.sum(jnp.asarray(matrix) * (z @ L.T)[codes], axis=1)
        z_all = v[k:]
        return (
            jnp.sum(w * rows(expand(x if A is None else A @ x + c), extra))
            + prior(x)
            + joint(x)
            - (0.5 * jnp.sum(z_all * z_all) if n_re else 0.0)
        )

    return value, k + n_re
