r"""Adaptive Gauss-Hermite quadrature over a correlated random term, at blocks of draws.

A mixed model with one random term of ``q > 1`` columns per level, ``(1 + x | g)``, has a
marginal likelihood that is a product over the levels ``l`` of ``q``-dimensional integrals

.. math::

    \int \exp h_l(u)\, du \,/\, (2\pi)^{q/2}, \qquad
    h_l(u) = \sum_{i \in l} w_i \log P_i(u) - u^\top u / 2

(:mod:`ordstats.families.mixed`, eq. 1-3).  The Laplace approximation (eq. 3) replaces
each ``h_l`` by its quadratic at the conditional mode ``u^_l``; with 15 rows per level and
two random effects its error varies with the variance parameters enough to move the
posterior means of the SDs by 0.1 posterior SD.  Here each integral is taken by the
product Gauss-Hermite rule with ``K`` nodes per dimension, moved to the mode and scaled by
the Cholesky factor ``C_l`` of the negative Hessian ``H_l = C_l C_l'`` there:
``u_{lk} = u^_l + \sqrt 2\, C_l^{-\top} z_k``, so that

.. math::

    \log \int e^{h_l} du \approx \tfrac q2 \log 2 - \log|C_l|
        + \log \sum_k \omega_k e^{z_k^\top z_k + h_l(u_{lk})},

``omega_k`` the products of the one-dimensional weights.  One node (``K = 1``) is the
Laplace value; the rule is exact when ``h_l`` is quadratic.  With :data:`NODES` per
dimension (16 nodes for ``q = 2``) the marginal log-likelihood of the tests' simulated
model is within 0.01 of a 12 x 12 rule and varies across posterior draws by 0.003 (SD).

The conditional modes are found by Newton's method with step halving for every level
and draw at once (each level's ``q x q`` system is solved on its own), as
:class:`ordstats.estimation.draw_densities.MixedDraws` does for a scalar term.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
from scipy.special import logsumexp

from ordstats._typing import FloatArray, IntArray
from ordstats.core.block_priors import cholesky_layout
from ordstats.core.links import Link, log1mexp
from ordstats.core.links.standard import Logit
from ordstats.estimation.draw_densities import (
    GENERAL_BLOCK_ELEMENTS,
    log_densities_in_blocks,
    ordered_draws,
)
from ordstats.families.cumulative.likelihood import interval_derivatives
from ordstats.families.mixed import mode_sensitivities

__all__ = ["MODE_TOL", "NODES", "CorrelatedDraws", "product_rule"]

#: Gauss-Hermite nodes per dimension of a correlated term's integral (module docstring).
NODES = 4
#: The inner Newton stops at ``max |d h_l / d u| < MODE_TOL`` (two steps from the start
#: for most draws): the log-determinant then moves the Laplace value by about 1e-6 (the
#: quadrature's by less), far below what changes an importance weight.
MODE_TOL = 1e-6


def product_rule(q: int, nodes: int) -> tuple[FloatArray, FloatArray]:
    """The product Gauss-Hermite rule in ``q`` dimensions (weight ``exp(-z'z)``).

    Parameters
    ----------
    q : int
        Dimensions.
    nodes : int
        Nodes per dimension.

    Returns
    -------
    points : ndarray, shape (nodes**q, q)
    log_factors : ndarray, shape (nodes**q,)
        ``log omega_k + z_k'z_k``: what multiplies ``exp h(u_k)`` in the sum.
    """
    x, w = np.polynomial.hermite.hermgauss(nodes)
    grids = np.meshgrid(*([x] * q), indexing="ij")
    points = np.column_stack([g.ravel() for g in grids])
    log_w = np.meshgrid(*([np.log(w)] * q), indexing="ij")
    log_factors = np.sum([g.ravel() for g in log_w], axis=0) + np.sum(points**2, axis=1)
    return points, np.asarray(log_factors, dtype=float)


class CorrelatedDraws:
    """Marginal log-likelihoods of a clmm with one correlated term at blocks of draws.

    Parameters
    ----------
    objective : MixedObjective
        The model's objective (``model.objective``); its problem has one random term
        with ``q >= 2`` columns.
    nodes : int
        Gauss-Hermite nodes per dimension (1: the Laplace approximation).
    """

    #: Limits of the inner Newton iteration and of its step halving.
    MAX_ITER = 100
    MAX_HALVINGS = 30

    def __init__(self, objective: Any, nodes: int = NODES) -> None:
        self.objective = objective
        self.problem = objective.problem
        term = self.problem.terms[0]
        self.q, self.codes, self.n_levels = term.q, term.codes, term.n_levels
        self.matrix = np.asarray(term.matrix, dtype=float)
        self.nodes = int(nodes)
        self.points, self.log_factors = product_rule(self.q, self.nodes)
        self.inner_tol = MODE_TOL
        rows, cols = cholesky_layout(self.q)
        self._lower = (rows[self.q :], cols[self.q :])

    @staticmethod
    def of(model: Any, nodes: int = NODES) -> CorrelatedDraws | None:
        """For a mixed model with exactly one random term of several columns, else ``None``."""
        objective = getattr(model, "objective", None)
        terms = list(getattr(getattr(objective, "problem", None), "terms", ()))
        if len(terms) != 1 or terms[0].q < 2:
            return None
        return CorrelatedDraws(objective, nodes)

    def loglik(self, params: FloatArray) -> FloatArray:
        """The marginal log-likelihood at each row of ``params``; ``-inf`` off the support.

        ``params`` are the mixed model's: thresholds, slopes, log-Cholesky parameters.
        """
        params = np.array(params, dtype=float, ndmin=2)
        n = max(self.problem.y.shape[0], 1)
        size = int(np.clip(GENERAL_BLOCK_ELEMENTS // (4 * n), 16, 4096))
        return log_densities_in_blocks(params, size, self._block)

    # -- one block ------------------------------------------------------------------------

    def _factors(self, var: FloatArray) -> FloatArray:
        """Each draw's Cholesky factor ``L`` of the term's covariance: (B, q, q)."""
        q, B = self.q, var.shape[0]
        L = np.zeros((B, q, q))
        idx = np.arange(q)
        L[:, idx, idx] = np.exp(var[:, :q])
        L[:, self._lower[0], self._lower[1]] = var[:, q:]
        return L

    def _block(self, block: FloatArray) -> FloatArray:
        p = self.problem
        theta_inner, beta, keep = ordered_draws(p, block)
        out = np.full(block.shape[0], -np.inf)
        if keep.size == 0:
            return out
        edge = np.full((1, keep.size), np.inf)
        theta = np.vstack([-edge, theta_inner, edge])
        eta0 = p.X @ beta.T + p.offset[:, None]
        L = self._factors(block[keep, p.n_alpha + p.n_beta :])
        # a[c] = d eta_i / d u_c of the row's level: column c of X_t L, (q, n, B)
        a = np.einsum("nd,bdc->cnb", self.matrix, L)
        u = self._start(block[keep])
        rows = _Rows.at(p.link, p.y, theta)
        u, h, chol = self._modes(rows, eta0, a, u)
        out[keep] = self._quadrature(rows, eta0, a, u, h, chol)
        return out

    def _start(self, block: FloatArray) -> FloatArray:
        """Start values: the middle draw's modes, moved linearly to each draw.

        ``u^(v) ~ u^(v_c) + (du^/dv)(v - v_c)`` with the derivatives of the modes by the
        implicit function theorem (:func:`ordstats.families.mixed.mode_sensitivities`),
        so that Newton starts within the second-order term of each draw's modes.
        """
        mid = block.shape[0] // 2
        u_mid, du = mode_sensitivities(self.objective, block[mid])
        if not (np.all(np.isfinite(u_mid)) and np.all(np.isfinite(du))):
            return np.zeros((self.q, self.n_levels, block.shape[0]))
        u0 = u_mid[:, None] + du @ (block - block[mid]).T  # (L q, B)
        u0 = np.where(np.isfinite(u0), u0, 0.0)
        return np.ascontiguousarray(np.swapaxes(u0.reshape(self.n_levels, self.q, -1), 0, 1))

    def _eta(self, eta0: FloatArray, a: FloatArray, u: FloatArray) -> FloatArray:
        """``eta0 + a_i' u_l`` of each row's level ``l``: (n, B)."""
        eta = eta0.copy()
        for c in range(self.q):
            eta += a[c] * np.take(u[c], self.codes, axis=0)
        return eta

    def _level_terms(
        self, rows: _Rows, eta0: FloatArray, a: FloatArray, u: FloatArray
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """``h_l`` (L, B), its gradient (q, L, B) and negative Hessian (L, B, q, q) at ``u``."""
        q = self.q
        w = self.problem.weights[:, None]
        lp, d1, d2 = rows.derivatives(self._eta(eta0, a, u))
        sums = self.objective.level_sums
        h = sums(w * lp) - 0.5 * np.sum(u * u, axis=0)
        wd1, wd2 = w * d1, -w * d2
        grad = np.stack([sums(wd1 * a[c]) for c in range(q)]) - u
        H = np.empty((*u.shape[1:], q, q))
        for c in range(q):
            for e in range(c + 1):
                H[:, :, c, e] = sums(wd2 * a[c] * a[e]) + (c == e)
                H[:, :, e, c] = H[:, :, c, e]
        return h, grad, H

    def _modes(
        self, rows: _Rows, eta0: FloatArray, a: FloatArray, u: FloatArray
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Conditional modes (q, L, B), ``h`` there and the Cholesky factors of ``H`` there.

        Newton with step halving per level and draw; where ``H`` is not positive
        definite (a link whose ``log P`` is not concave, away from the mode) the step
        uses ``H`` with its eigenvalues replaced by ``max(|lambda|, 1)``, as
        :meth:`ordstats.families.mixed.MixedObjective.modes` does.
        """
        h, grad, H = self._level_terms(rows, eta0, a, u)
        stuck = np.zeros(h.shape, dtype=bool)
        for _ in range(self.MAX_ITER):
            active = (np.max(np.abs(grad), axis=0) >= self.inner_tol) & ~stuck
            moving = np.flatnonzero(active.any(axis=0))
            if moving.size == 0:
                break
            sub = (rows.take(moving), eta0[:, moving], a[:, :, moving])
            u_m, h_m, g_m, H_m = u[:, :, moving], h[:, moving], grad[:, :, moving], H[:, moving]
            pending = active[:, moving]
            step = _newton_steps(H_m, g_m) * pending
            new = [u_m.copy(), h_m.copy(), g_m.copy(), H_m.copy()]
            for _half in range(self.MAX_HALVINGS):
                trial = u_m + step
                terms = self._level_terms(*sub, trial)
                good = pending & (terms[0] >= h_m - 1e-12 * np.abs(h_m))
                new[0][:, good], new[1][good] = trial[:, good], terms[0][good]
                new[2][:, good], new[3][good] = terms[1][:, good], terms[2][good]
                pending &= ~good
                if not pending.any():
                    break
                step = np.where(pending, 0.5 * step, step)
            stuck[:, moving] |= pending  # no ascent in 30 halvings: that level stops
            u[:, :, moving], h[:, moving], grad[:, :, moving], H[:, moving] = new
        with np.errstate(invalid="ignore"):
            chol = _cholesky_or_nan(H)
        return u, h, chol

    def _quadrature(
        self,
        rows: _Rows,
        eta0: FloatArray,
        a: FloatArray,
        u: FloatArray,
        h: FloatArray,
        chol: FloatArray,
    ) -> FloatArray:
        """The product rule at the modes (module docstring), summed over the levels."""
        q = self.q
        log_det = np.sum(np.log(np.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)  # (L, B)
        if self.nodes == 1:
            per_level = h - log_det
        else:
            per_node = self._node_values(rows, eta0, a, u, chol)
            per_level = logsumexp(per_node, axis=0) - log_det - 0.5 * q * np.log(np.pi)
        with np.errstate(invalid="ignore"):
            total = np.sum(per_level, axis=0)
        return np.where(np.isfinite(total), total, -np.inf)

    def _node_values(
        self, rows: _Rows, eta0: FloatArray, a: FloatArray, u: FloatArray, chol: FloatArray
    ) -> FloatArray:
        """``log omega_k + z_k'z_k + h_l(u_lk)`` at every node: (nodes, L, B).

        The node ``u_lk = u^_l + R_l z_k`` (``R_l = sqrt(2) C_l^{-T}``) moves row ``i``'s
        predictor by ``sum_c z_kc s_ic`` with ``s_ic = a_i' R_l[:, c]``.
        """
        q = self.q
        w = self.problem.weights[:, None]
        with np.errstate(invalid="ignore"):
            R = np.sqrt(2.0) * np.swapaxes(np.linalg.inv(chol), -1, -2)  # (L, B, q, q)
        R = np.where(np.isfinite(R), R, 0.0)
        s = np.zeros((q, *eta0.shape))
        for c in range(q):
            for d in range(q):
                s[c] += a[d] * np.take(R[:, :, d, c], self.codes, axis=0)
        eta_hat = self._eta(eta0, a, u)
        x = np.polynomial.hermite.hermgauss(self.nodes)[0]
        shared = None
        if rows.logistic is not None:  # e^{eta} at a node: e^{eta^} prod_c e^{x_j s_c}
            with np.errstate(over="ignore", under="ignore", invalid="ignore"):
                shared = [[np.exp(xj * s[c]) for xj in x] for c in range(q)]
                shared[0] = [np.exp(eta_hat) * f for f in shared[0]]
        out = np.empty((self.points.shape[0], *u.shape[1:]))
        for k, index in enumerate(np.ndindex(*([self.nodes] * q))):
            z = x[list(index)]
            u_k = u + np.einsum("lbcd,d->clb", R, z)
            eta = partial(_moved, eta_hat, z, s)
            E = None
            if shared is not None:
                E = shared[0][index[0]]
                for c in range(1, q):
                    E = E * shared[c][index[c]]
            lp = rows.log_prob(eta, E)
            h_k = self.objective.level_sums(w * lp) - 0.5 * np.sum(u_k * u_k, axis=0)
            out[k] = self.log_factors[k] + h_k
        return out


@dataclass(frozen=True)
class _Rows:
    r"""Each row's ``log P`` and its ``eta``-derivatives for a block of draws.

    ``theta`` (K + 1, B) holds each draw's thresholds with ``-inf``/``+inf`` at the
    ends.  For the logistic link, with ``E = e^{eta}``, ``A = e^{-theta_y}`` and
    ``D = e^{theta_{y-1}}`` (0 at the open ends) per row and draw,

    .. math::

        \log P = \log(1 - AD) - \log(1 + AD + AE + D/E), \quad
        F(u) = \frac{1}{1 + AE}, \quad F(l) = \frac{D}{D + E},

    so ``d log P / d eta = F(u) + F(l) - 1`` and its derivative
    ``-(AE F(u)^2 + DE / (D + E)^2)`` (as
    :class:`~ordstats.estimation.draw_densities.ClmDraws` for ``log P``): one ``exp``
    per row and draw, nothing that cancels; where an ``exp`` over- or underflows the
    link's own formulas take over.  Other links use those formulas throughout.
    """

    link: Link
    y: IntArray
    theta: FloatArray
    logistic: tuple[FloatArray, FloatArray, FloatArray, FloatArray] | None  # A, D, 1+AD, width

    @staticmethod
    def at(link: Link, y: IntArray, theta: FloatArray) -> _Rows:
        """The rows of response codes ``y`` at thresholds ``theta``."""
        if type(link) is not Logit:
            return _Rows(link, y, theta, None)
        upper, lower = np.take(theta, y + 1, axis=0), np.take(theta, y, axis=0)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            gap = upper - lower
            constants = (np.exp(-upper), np.exp(lower), 1.0 + np.exp(-gap), log1mexp(gap))
        return _Rows(link, y, theta, constants)

    def take(self, columns: IntArray) -> _Rows:
        """The rows at the draws ``columns`` of the block."""
        constants = None
        if self.logistic is not None:
            A, D, base, width = self.logistic
            constants = (A[:, columns], D[:, columns], base[:, columns], width[:, columns])
        return _Rows(self.link, self.y, self.theta[:, columns], constants)

    def _bounds(self, eta: FloatArray) -> tuple[FloatArray, FloatArray]:
        with np.errstate(invalid="ignore", over="ignore"):
            upper = np.take(self.theta, self.y + 1, axis=0) - eta
            lower = np.take(self.theta, self.y, axis=0) - eta
        return upper, lower

    def log_prob(
        self, eta: FloatArray | Callable[[], FloatArray], E: FloatArray | None = None
    ) -> FloatArray:
        """``log P`` at ``eta`` (or ``eta()``, evaluated only where needed).

        For the logistic link ``E = e^{eta}`` may be given.
        """
        if self.logistic is None:
            with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
                return np.asarray(self.link.log_interval(*self._bounds(_value(eta))), dtype=float)
        A, D, base, width = self.logistic
        with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
            E = np.exp(_value(eta)) if E is None else E
            V = np.divide(D, E)
            V += A * E
            V += base
            np.log(V, out=V)
            log_p = np.subtract(width, V, out=V)
        bad = ~np.isfinite(log_p)
        if bad.any():
            upper, lower = self._bounds(_value(eta))
            with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
                log_p[bad] = self.link.log_interval(upper[bad], lower[bad])
        return log_p

    def derivatives(self, eta: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        """``log P``, ``d log P / d eta`` and its derivative at ``eta``."""
        if self.logistic is None:
            d = interval_derivatives(self.link, *self._bounds(eta))
            d2 = d.d2_upper + 2.0 * d.d2_cross + d.d2_lower
            return d.log_prob, -(d.d_upper + d.d_lower), d2
        A, D = self.logistic[0], self.logistic[1]
        with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
            E = np.exp(eta)
            AE = A * E
            F_u = np.add(AE, 1.0)
            np.divide(1.0, F_u, out=F_u)
            G = np.add(D, E)
            np.divide(1.0, G, out=G)
            F_l = D * G
            d1 = F_u + F_l
            d1 -= 1.0
            d2 = AE * F_u
            d2 *= F_u
            G *= G
            G *= D
            G *= E
            d2 += G
            np.negative(d2, out=d2)
        log_p = self.log_prob(eta, E)
        bad = ~(np.isfinite(d1) & np.isfinite(d2))
        if bad.any():
            upper, lower = self._bounds(eta)
            d = interval_derivatives(self.link, upper[bad], lower[bad])
            d1[bad] = -(d.d_upper + d.d_lower)
            d2[bad] = d.d2_upper + 2.0 * d.d2_cross + d.d2_lower
        return log_p, d1, d2


def _moved(eta_hat: FloatArray, z: FloatArray, s: FloatArray) -> FloatArray:
    """The predictor at a node: ``eta^ + sum_c z_c s_c``."""
    return np.asarray(eta_hat + np.tensordot(z, s, axes=1), dtype=float)


def _value(eta: FloatArray | Callable[[], FloatArray]) -> FloatArray:
    return eta() if callable(eta) else eta


def _newton_steps(H: FloatArray, grad: FloatArray) -> FloatArray:
    """``H~^{-1} grad`` per level and draw, ``H~`` made positive definite: (q, L, B)."""
    g = np.moveaxis(grad, 0, -1)[..., None]  # (L, B, q, 1)
    try:
        np.linalg.cholesky(H)
        fixed = H
    except np.linalg.LinAlgError:
        lam, vec = np.linalg.eigh(H)
        fixed = (vec * np.maximum(np.abs(lam), 1.0)[..., None, :]) @ np.swapaxes(vec, -1, -2)
    steps = np.asarray(np.linalg.solve(fixed, g)[..., 0], dtype=float)
    return np.moveaxis(steps, -1, 0)


def _cholesky_or_nan(H: FloatArray) -> FloatArray:
    """Lower Cholesky factors of the blocks of ``H``; ``NaN`` blocks where one is not definite."""
    try:
        return np.asarray(np.linalg.cholesky(H), dtype=float)
    except np.linalg.LinAlgError:
        out = np.full(H.shape, np.nan)
        for idx in np.ndindex(*H.shape[:-2]):
            try:
                out[idx] = np.linalg.cholesky(H[idx])
            except np.linalg.LinAlgError:
                pass
        return out
