r"""brms' model language beyond linear terms: monotonic predictors and correlated random terms.

**Monotonic predictors** ``mo(x)`` (:mod:`ordstats.design.monotonic`).  The design holds
the step indicators ``1[x >= i]`` with coefficients ``c_i``; the Bayesian fit samples
``b`` (brms' ``bsp_mox``) and the log-ratios ``y_j = log(zeta_j / zeta_D)`` of the
simplex ``zeta`` (brms' ``simo_mox1``), in the positions of ``c_1 .. c_D``, and maps them
by ``c = b D softmax((y, 0))``.  The log-likelihood's derivatives follow by the chain
rule: with ``g`` the gradient in ``c`` and ``G = g'zeta``, the Jacobian columns are
``dc/db = D zeta`` and ``dc/dy_j = b D zeta (e_j - zeta_j)``, and the second-order term
``sum_i g_i d^2 c_i`` is ``D zeta_j (g_j - G)`` in ``(b, y_j)`` and
``b D [delta_jk zeta_j (g_j - G) - zeta_j zeta_k (g_j + g_k - 2G)]`` in ``(y_j, y_k)``.
The Dirichlet prior with its Jacobian is :class:`ordstats.core.block_priors.SimplexPrior`;
the ``Intercept`` prior's centring leaves the ``mo()`` terms out, as brms (whose
monotonic effects are 0 at the lowest level).

Maximum-likelihood fits refuse ``mo()``: the maximum of ``b`` and ``zeta`` lies on the
simplex's boundary whenever the unconstrained steps ``c_i`` differ in sign, where the
log-ratios diverge and the usual standard errors do not exist.  The unconstrained steps
are the ML fit of the ordered factor's successive-difference coding.

**Correlated random terms** ``(1 + x | g)``: the Bayesian fit samples each term's log
standard deviations ``t_i = log s_i`` and ``y_ij = atanh z_ij`` of the canonical partial
correlations (:class:`CorrelationMap`; ``q = 1``: the log SD only, the mixed model's own
parameter).  The correlation's Cholesky factor is ``W_ij = z_ij prod_{k<j} sech y_ik``,
``W_ii = prod_{k<i} sech y_ik``, and the mixed model's log-Cholesky parameters of
``L = diag(s) W`` are ``v_ii = t_i - sum_{k<i} log cosh y_ik`` and ``v_ij = L_ij``
(``i > j``), whose derivatives are ``dv_ii/dt_i = 1``, ``dv_ii/dy_ik = -tanh y_ik``,
``dv_ij/dt_i = L_ij``, ``dv_ij/dy_ij = s_i sech^2 y_ij prod_{k<j} sech y_ik`` and
``dv_ij/dy_ik = -L_ij tanh y_ik`` (``k < j``).  The Laplace marginal likelihood's
gradient follows by the chain rule; its Hessian, as for scalar terms, by central
differences of that gradient: they give the mode and the proposal.  The draws are then
weighed by the adaptive Gauss-Hermite product rule over each group's ``q`` random
effects (:mod:`ordstats.estimation.vector_quadrature`), since the Laplace value's error
moves the SDs' posterior means by 0.1 posterior SD at 15 rows per group; with several
random terms (crossed levels, no product over groups) by the Laplace value.

The SDs take the scalar priors with the Jacobian of the log (a density ``p_s(s) s`` in
``t``, which vanishes as ``s -> 0``: the mode exists, unlike in the log-Cholesky
coordinates, where the density is flat along ``L_i -> 0``); the LKJ prior is
:class:`ordstats.core.block_priors.LkjPrior`.

:func:`brms_draws` turns posterior draws into brms' parameters (``bsp_``, ``simo_``,
``sd_``, ``cor_``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from ordstats._typing import FloatArray
from ordstats.core.block_priors import cholesky_layout, log_cosh, softmax_last_zero
from ordstats.core.psis import weighted_quantiles
from ordstats.design.monotonic import MonotonicBlock, monotonic_blocks
from ordstats.errors import SpecificationError

__all__ = [
    "ChainedEvaluation",
    "CorrelationMap",
    "MonotonicMap",
    "brms_draws",
    "brms_summary",
    "correlation_factors",
    "correlation_map",
    "monotonic_map",
]


@dataclass(frozen=True)
class MonotonicMap:
    """``(b, y) -> c = b D softmax((y, 0))`` at the positions of each ``mo()`` term.

    Attributes
    ----------
    blocks : tuple of MonotonicBlock
    positions : tuple of tuple of int
        Each term's ``D`` positions in the parameter vector: ``b`` then the log-ratios.
    """

    blocks: tuple[MonotonicBlock, ...]
    positions: tuple[tuple[int, ...], ...]

    def expand(self, theta: FloatArray) -> FloatArray:
        """The linear coefficients ``c`` in place of ``(b, y)`` (rows of a 2-D array, or one)."""
        theta = np.asarray(theta, dtype=float)
        out = np.array(theta, dtype=float, ndmin=2, copy=True)
        for pos in self.positions:
            idx = list(pos)
            b = out[:, idx[0]]
            zeta = softmax_last_zero(out[:, idx[1:]])
            out[:, idx] = (b * len(idx))[:, None] * zeta
        return out if theta.ndim == 2 else out[0]

    def chain(
        self, theta: FloatArray, grad: FloatArray, hess: FloatArray | None
    ) -> tuple[FloatArray, FloatArray | None]:
        """Gradient and Hessian in ``theta`` from those in ``c`` (module docstring)."""
        k = theta.size
        jac = np.eye(k)
        second = np.zeros((k, k))
        for pos in self.positions:
            idx = np.asarray(pos)
            D = idx.size
            b = theta[idx[0]]
            zeta = softmax_last_zero(theta[idx[1:]])[0]
            g = grad[idx]
            G = float(g @ zeta)
            block = np.zeros((D, D))
            block[:, 0] = D * zeta
            for j in range(D - 1):
                block[:, j + 1] = b * D * zeta * ((np.arange(D) == j) - zeta[j])
            jac[np.ix_(idx, idx)] = block
            z, d = zeta[:-1], g[:-1] - G
            cross = D * z * d
            yy = b * D * (np.diag(z * d) - np.outer(z, z) * (d[:, None] + d[None, :]))
            inner = np.zeros((D, D))
            inner[0, 1:] = inner[1:, 0] = cross
            inner[1:, 1:] = yy
            second[np.ix_(idx, idx)] = inner
        g_theta = jac.T @ grad
        if hess is None:
            return g_theta, None
        return g_theta, jac.T @ hess @ jac + second

    def contract(self, c: FloatArray) -> FloatArray:
        """``(b, y)`` whose steps are closest in sign to the linear coefficients ``c``.

        ``b = sum(c) / D``; steps of the other sign (outside the simplex) count as 1% of
        the mean step, so that the start lies inside.
        """
        out = np.array(c, dtype=float)
        for pos in self.positions:
            idx = list(pos)
            steps = out[idx]
            total = float(np.sum(steps))
            b = total / len(idx) if total != 0 else 1e-3
            share = np.maximum(steps * np.sign(b), 0.01 * abs(b))
            out[idx[0]] = b
            out[idx[1:]] = np.log(share[:-1] / share[-1])
        return out

    def names(self) -> dict[int, tuple[str, ...]]:
        """The sampled parameters' names (ordstats', brms') by position."""
        out: dict[int, tuple[str, ...]] = {}
        for block, pos in zip(self.blocks, self.positions, strict=True):
            var, brms = block.variable, block.brms_name
            out[pos[0]] = (f"mo({var})", brms, f"bsp_{brms}")
            D = len(pos)
            for j, p in enumerate(pos[1:], start=1):
                out[p] = (f"mo({var}):log(zeta{j}/zeta{D})",)
        return out


def monotonic_map(model: Any) -> MonotonicMap | None:
    """The ``mo()`` terms of a clm's location design (None without any).

    Raises
    ------
    SpecificationError
        For ``mo()`` among the nominal or scale effects.
    """
    design = getattr(model, "design", None)
    if design is None:
        return None
    for part in ("nominal", "scale"):
        terms = getattr(design, part, None)
        if terms is not None and monotonic_blocks(list(terms.names)):
            raise SpecificationError(
                f"mo() is available in the location formula only, not among the {part} effects"
            )
    blocks = monotonic_blocks(list(design.location.names), list(design.location.aliased))
    if not blocks:
        return None
    start = model.problem.layout.beta.start
    positions = tuple(tuple(start + p for p in b.positions) for b in blocks)
    return MonotonicMap(tuple(blocks), positions)


def has_monotonic_terms(design: Any) -> bool:
    """Whether a design's location part has ``mo()`` columns."""
    return bool(monotonic_blocks(list(design.location.names)))


@dataclass(frozen=True)
class ChainedEvaluation:
    """The negative log-likelihood of the linear model at ``c = m(theta)``, in ``theta``."""

    inner: Any
    theta: FloatArray
    mono: MonotonicMap

    @property
    def nll(self) -> float:
        """The negative log-likelihood."""
        return float(self.inner.nll)

    @cached_property
    def _gradient(self) -> FloatArray:
        return self.mono.chain(self.theta, np.asarray(self.inner.gradient), None)[0]

    @property
    def gradient(self) -> FloatArray:
        """Its gradient in ``theta``."""
        return self._gradient

    @cached_property
    def hessian(self) -> FloatArray:
        """Its Hessian in ``theta``."""
        inner = np.asarray(self.inner.hessian)
        grad = np.asarray(self.inner.gradient)
        hess = self.mono.chain(self.theta, grad, inner)[1]
        assert hess is not None
        return hess


def monotonic_columns(draws: pd.DataFrame, mono: MonotonicMap) -> pd.DataFrame:
    X = draws.to_numpy()
    out = {}
    for block, pos in zip(mono.blocks, mono.positions, strict=True):
        out[f"bsp_{block.brms_name}"] = X[:, pos[0]]
        zeta = softmax_last_zero(X[:, list(pos[1:])])
        for i in range(zeta.shape[1]):
            out[f"simo_{block.brms_name}1[{i + 1}]"] = zeta[:, i]
    return pd.DataFrame(out, index=draws.index)


def correlated_columns(draws: pd.DataFrame, terms: Any, offset: int) -> pd.DataFrame:
    """The brms ``sd_g__x`` and ``cor_g__x__z`` of each random term from ``(t, y)`` draws."""
    X = draws.to_numpy()
    out = {}
    pos = offset
    for t in terms:
        q = t.q
        n = q * (q + 1) // 2
        theta = X[:, pos : pos + n]
        pos += n
        W = correlation_factors(theta[:, q:], q)
        cor = W @ np.transpose(W, (0, 2, 1))
        names = ["Intercept" if c == "(Intercept)" else c for c in t.columns]
        for i in range(q):
            out[f"sd_{t.group}__{names[i]}"] = np.exp(theta[:, i])
        for j in range(q):
            for i in range(j + 1, q):
                out[f"cor_{t.group}__{names[j]}__{names[i]}"] = cor[:, i, j]
    return pd.DataFrame(out, index=draws.index)


def correlation_factors(Y: FloatArray, q: int) -> FloatArray:
    """Cholesky factors ``W`` (draws x q x q) of the correlations with ``atanh`` partials ``Y``."""
    Y = np.atleast_2d(np.asarray(Y, dtype=float))
    rows, cols = cholesky_layout(q)
    index = {(int(r), int(c)): p for p, (r, c) in enumerate(zip(rows[q:], cols[q:], strict=True))}
    W = np.zeros((Y.shape[0], q, q))
    for i in range(q):
        log_rest = np.zeros(Y.shape[0])  # log prod_{k<j} sech y_ik
        for j in range(i):
            y = Y[:, index[(i, j)]]
            W[:, i, j] = np.tanh(y) * np.exp(log_rest)
            log_rest = log_rest - log_cosh(y)
        W[:, i, i] = np.exp(log_rest)
    return W


@dataclass(frozen=True)
class CorrelationMap:
    """``(log s, atanh z) -> `` the mixed model's log-Cholesky parameters of each term.

    Attributes
    ----------
    offsets : tuple of int
        Where each random term's parameters start in the parameter vector.
    qs : tuple of int
        Each term's dimension.
    """

    offsets: tuple[int, ...]
    qs: tuple[int, ...]

    def _blocks(self) -> list[tuple[int, int, dict[tuple[int, int], int]]]:
        out = []
        for start, q in zip(self.offsets, self.qs, strict=True):
            rows, cols = cholesky_layout(q)
            pairs = zip(rows[q:], cols[q:], strict=True)
            index = {(int(r), int(c)): start + q + p for p, (r, c) in enumerate(pairs)}
            out.append((start, q, index))
        return out

    def expand(self, theta: FloatArray) -> FloatArray:
        """The log-Cholesky parameters in place of ``(t, y)`` (rows of a 2-D array, or one)."""
        theta = np.asarray(theta, dtype=float)
        X = np.array(theta, dtype=float, ndmin=2)
        out = X.copy()
        for start, q, index in self._blocks():
            W = correlation_factors(X[:, start + q : start + q * (q + 1) // 2], q)
            s = np.exp(X[:, start : start + q])
            for i in range(q):
                out[:, start + i] = X[:, start + i] + np.log(W[:, i, i])
                for j in range(i):
                    out[:, index[(i, j)]] = s[:, i] * W[:, i, j]
        return out if theta.ndim == 2 else out[0]

    def jacobian(self, theta: FloatArray) -> FloatArray:
        """``dv / dtheta`` (module docstring)."""
        theta = np.asarray(theta, dtype=float)
        jac = np.eye(theta.size)
        v = self.expand(theta)
        for start, q, index in self._blocks():
            s = np.exp(theta[start : start + q])
            for i in range(q):
                for k in range(i):
                    jac[start + i, index[(i, k)]] = -np.tanh(theta[index[(i, k)]])
                for j in range(i):
                    p = index[(i, j)]
                    jac[p, start + i] = v[p]
                    sech = np.exp(-sum(log_cosh(theta[index[(i, k)]]) for k in range(j)))
                    jac[p, p] = s[i] * sech / np.cosh(theta[p]) ** 2
                    for k in range(j):
                        jac[p, index[(i, k)]] = -v[p] * np.tanh(theta[index[(i, k)]])
        return jac

    def contract(self, v: FloatArray, min_sd: float = 0.05, max_cor: float = 0.95) -> FloatArray:
        """``(t, y)`` of log-Cholesky parameters ``v``, pulled inside the support.

        The SDs are at least ``min_sd`` and the partial correlations within ``+-max_cor``
        (a starting point for the mode).
        """
        out = np.array(v, dtype=float)
        for start, q, index in self._blocks():
            L = np.diag(np.exp(out[start : start + q]))
            for (i, j), p in index.items():
                L[i, j] = out[p]
            s = np.sqrt(np.sum(L * L, axis=1))
            W = L / s[:, None]
            out[start : start + q] = np.log(np.maximum(s, min_sd))
            for (i, j), p in index.items():
                rest = 1.0 - np.sum(W[i, :j] ** 2)
                z = W[i, j] / np.sqrt(max(rest, 1e-300))
                out[p] = np.arctanh(np.clip(z, -max_cor, max_cor))
        return out

    def names(self, terms: Any) -> dict[int, str]:
        """``atanh(cpc):g:x,z`` at each partial correlation's position."""
        out = {}
        for t, (_, _, index) in zip(terms, self._blocks(), strict=True):
            for (i, j), p in index.items():
                out[p] = f"atanh(cpc):{t.group}:{t.columns[i]},{t.columns[j]}"
        return out


def correlation_map(model: Any) -> CorrelationMap | None:
    """The map of a mixed model with a correlated term, else None."""
    terms = list(getattr(model, "terms", []))
    if not any(t.q > 1 for t in terms):
        return None
    p = model.problem
    offsets, pos = [], p.n_alpha + p.n_beta
    for t in terms:
        offsets.append(pos)
        pos += t.q * (t.q + 1) // 2
    return CorrelationMap(tuple(offsets), tuple(t.q for t in terms))


def brms_draws(posterior: Any) -> pd.DataFrame:
    """The draws of ``mo()`` and random-term parameters in brms' parametrisation.

    ``bsp_mox`` and ``simo_mox1[i]`` of each monotonic predictor; ``sd_g__x`` and
    ``cor_g__x__z`` of each random term.  Rows are the posterior's draws (weighted by
    ``posterior.weights`` for importance sampling).

    Parameters
    ----------
    posterior : Posterior

    Returns
    -------
    pandas.DataFrame
    """
    target = posterior.target
    frames = []
    columns = getattr(target, "brms_columns", None)
    if columns is not None:
        frames.append(columns(posterior.draws))
    if getattr(target, "mixed", False):
        p = target.model.problem
        frames.append(correlated_columns(posterior.draws, target.model.terms, p.n_alpha + p.n_beta))
    if not frames:
        raise SpecificationError(
            "the model has neither mo() terms nor random terms; its draws are already "
            "brms' parameters (posterior.draws)"
        )
    return pd.concat(frames, axis=1)


def brms_summary(posterior: Any, probs: tuple[float, ...] = (0.025, 0.5, 0.975)) -> pd.DataFrame:
    """Weighted mean, SD and quantiles of :func:`brms_draws`.

    Parameters
    ----------
    posterior : Posterior
    probs : tuple of float

    Returns
    -------
    pandas.DataFrame
    """
    draws = brms_draws(posterior)
    w = np.asarray(posterior.weights, dtype=float)
    X = draws.to_numpy()
    mean = w @ X
    table = pd.DataFrame({"mean": mean, "sd": np.sqrt(w @ (X - mean) ** 2)}, index=draws.columns)
    q = weighted_quantiles(X, w, np.asarray(probs, dtype=float))
    for value, row in zip(probs, q, strict=True):
        table[f"q{100 * value:g}"] = row
    return table
