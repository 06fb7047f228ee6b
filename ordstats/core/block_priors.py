r"""Priors on several parameters jointly, in unconstrained coordinates, with exact derivatives.

**A Dirichlet prior on a simplex** (the shares ``zeta`` of a monotonic predictor,
:mod:`ordstats.design.monotonic`).  The simplex ``zeta in S^{D-1}`` is parametrised by
its log-ratios ``y_j = log(zeta_j / zeta_D)``, ``j < D`` (the additive log-ratio, whose
inverse is the softmax of ``(y, 0)``).  The Jacobian of ``y -> (zeta_1..zeta_{D-1})`` is
``prod_{i<=D} zeta_i``, so the Dirichlet(``alpha``) density in ``y`` is

.. math::

    \log p(y) = \sum_{i=1}^{D} \alpha_i \log \zeta_i,\quad
    \nabla_y = \alpha_{1:D-1} - A\,\zeta_{1:D-1},\quad
    \nabla^2_y = -A\,(\mathrm{diag}\,\zeta_{1:D-1} - \zeta_{1:D-1}\zeta_{1:D-1}'),

``A = sum alpha``: concave, so the mode exists and is unique in ``y``.

**Standard deviations and an LKJ correlation of a random term** ``(1 + x | g)``.  The
mixed model's parameters are the log-Cholesky ones (:mod:`ordstats.families.mixed`):
``L`` lower triangular with ``L_ii = exp(v_ii)`` and free entries below the diagonal;
``Sigma = L L'``.  Row ``i`` of ``L`` is ``s_i w_i`` with ``s_i = |L_i|`` the standard
deviation and ``w_i`` the row of the correlation's Cholesky factor (a unit vector with
``w_ii > 0``).  brms puts a density ``p_s`` on each ``s_i`` and Stan's
``lkj_corr_cholesky(eta)`` on ``w``:
``sum_{i>=1} (q - i + 2 eta - 3) log w_ii`` (rows counted from 0).  Polar coordinates
of each row (``dL_i = s_i^i ds_i dw / w_ii``) and ``dL_ii = L_ii dv_ii`` give the
density in ``v``:

.. math::

    \log p(v) = \sum_i \Big[\log p_s(s_i) - (i + 1 + c_i) \log s_i
                + (2 + c_i) \log L_{ii}\Big],\qquad c_i = q - i + 2\eta - 3,

(for ``q = 1``: ``log p_s(s) + log s``, the scalar case of :mod:`ordstats.core.priors`).
With ``phi(s) = (log p_s)'(s) / s - (i + 1 + c_i) / s^2`` the row's gradient in ``L`` is
``phi(s) L_i + (2 + c_i) / L_ii e_i`` and its Hessian
``phi'(s) L_i L_i' / s + phi(s) I - (2 + c_i) / L_ii^2 e_i e_i'``; the chain rule
through ``L_ii = exp(v_ii)`` gives the derivatives in ``v``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

from ordstats._typing import FloatArray
from ordstats.core.priors import Density

__all__ = ["CholeskyPrior", "SimplexPrior", "cholesky_layout", "softmax_last_zero"]


def softmax_last_zero(Y: FloatArray) -> FloatArray:
    """``zeta = softmax((y, 0))`` for each row of ``Y`` (draws x (D-1)): draws x D."""
    Y = np.atleast_2d(np.asarray(Y, dtype=float))
    full = np.hstack([Y, np.zeros((Y.shape[0], 1))])
    return np.asarray(np.exp(full - logsumexp(full, axis=1, keepdims=True)))


@dataclass(frozen=True)
class SimplexPrior:
    """Dirichlet(``alpha``) on ``softmax((x[positions], 0))`` with its Jacobian.

    Attributes
    ----------
    positions : tuple of int
        The ``D - 1`` log-ratios in the parameter vector.
    alpha : tuple of float
        The ``D`` concentrations.
    k : int
        Length of the parameter vector.
    """

    positions: tuple[int, ...]
    alpha: tuple[float, ...]
    k: int

    def batch_value(self, X: FloatArray) -> FloatArray:
        """``sum_i alpha_i log zeta_i`` at each row of ``X``."""
        Y = np.asarray(X, dtype=float)[:, list(self.positions)]
        full = np.hstack([Y, np.zeros((Y.shape[0], 1))])
        log_zeta = full - logsumexp(full, axis=1, keepdims=True)
        return np.asarray(log_zeta @ np.asarray(self.alpha))

    def value(self, x: FloatArray) -> float:
        """``log p`` at ``x``."""
        return float(self.batch_value(np.asarray(x, dtype=float)[None, :])[0])

    def gradient(self, x: FloatArray) -> FloatArray:
        """``alpha_j - A zeta_j`` at the log-ratios, 0 elsewhere."""
        zeta = softmax_last_zero(np.asarray(x)[list(self.positions)])[0, :-1]
        alpha = np.asarray(self.alpha)
        out = np.zeros(self.k)
        out[list(self.positions)] = alpha[:-1] - alpha.sum() * zeta
        return out

    def hessian(self, x: FloatArray) -> FloatArray:
        """``-A (diag zeta - zeta zeta')`` on the log-ratios."""
        zeta = softmax_last_zero(np.asarray(x)[list(self.positions)])[0, :-1]
        out = np.zeros((self.k, self.k))
        idx = np.asarray(self.positions)
        out[np.ix_(idx, idx)] = -sum(self.alpha) * (np.diag(zeta) - np.outer(zeta, zeta))
        return out


def cholesky_layout(q: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows and columns of ``L`` held by a term's ``q(q+1)/2`` log-Cholesky parameters.

    The ``q`` diagonal entries first, then the strictly lower ones column by column
    (the order of :func:`ordstats.families.mixed.cholesky_factors`).
    """
    rows, cols = np.tril_indices(q, -1)
    order = np.lexsort((rows, cols))
    diag = np.arange(q)
    return np.concatenate([diag, rows[order]]), np.concatenate([diag, cols[order]])


@dataclass(frozen=True)
class CholeskyPrior:
    """Priors on the SDs ``s_i`` and an LKJ(``eta``) correlation of one random term.

    Attributes
    ----------
    positions : tuple of int
        The term's ``q(q+1)/2`` log-Cholesky parameters in the parameter vector.
    sd : tuple of Density
        The density of each standard deviation (on ``s > 0``).
    eta : float
        The LKJ shape (1: uniform over correlation matrices).
    k : int
        Length of the parameter vector.
    """

    positions: tuple[int, ...]
    sd: tuple[Density, ...]
    eta: float
    k: int

    @property
    def q(self) -> int:
        """Dimension of the term."""
        return len(self.sd)

    def _factor(self, v: FloatArray) -> FloatArray:
        rows, cols = cholesky_layout(self.q)
        L = np.zeros((self.q, self.q))
        L[rows, cols] = v
        d = np.arange(self.q)
        L[d, d] = np.exp(v[: self.q])
        return L

    def _row_constants(self) -> tuple[FloatArray, FloatArray]:
        """``m_i = i + 1 + c_i`` (power of ``1 / s_i``) and ``2 + c_i`` (of ``L_ii``)."""
        i = np.arange(self.q, dtype=float)
        c = self.q - i + 2.0 * self.eta - 3.0
        c[0] = 0.0  # w_00 = 1: the LKJ term of the first row is 0
        return i + 1.0 + c, 2.0 + c

    def value(self, x: FloatArray) -> float:
        """``log p`` at ``x`` (module docstring)."""
        v = np.asarray(x, dtype=float)[list(self.positions)]
        L = self._factor(v)
        s = np.sqrt(np.sum(L * L, axis=1))
        m, a = self._row_constants()
        total = -np.sum(m * np.log(s)) + np.sum(a * v[: self.q])
        for i, density in enumerate(self.sd):
            total += float(density.logpdf(s[i : i + 1])[0])
        return float(total)

    def batch_value(self, X: FloatArray) -> FloatArray:
        """``log p`` at each row of ``X``."""
        return np.array([self.value(x) for x in np.asarray(X, dtype=float)])

    def _derivatives_in_L(self, v: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Gradient (q, q) and Hessian blocks (q, q, q) of ``log p`` in the entries of ``L``.

        The ``L_ii`` terms ``(2 + c_i) log L_ii`` are left to the caller (they are
        ``(2 + c_i) v_ii`` in ``v``).
        """
        L = self._factor(v)
        s = np.sqrt(np.sum(L * L, axis=1))
        m, _ = self._row_constants()
        grad = np.zeros((self.q, self.q))
        hess = np.zeros((self.q, self.q, self.q))
        for i, density in enumerate(self.sd):
            _, g, h = density.derivatives(s[i : i + 1])
            si, gi, hi = s[i], float(g[0]), float(h[0])
            phi = gi / si - m[i] / si**2
            dphi = hi / si - gi / si**2 + 2.0 * m[i] / si**3
            row = L[i, : i + 1]
            grad[i, : i + 1] = phi * row
            hess[i, : i + 1, : i + 1] = dphi * np.outer(row, row) / si + phi * np.eye(i + 1)
        return L, grad, hess

    def _derivatives_in_v(self, x: FloatArray) -> tuple[FloatArray, FloatArray]:
        v = np.asarray(x, dtype=float)[list(self.positions)]
        L, grad_L, hess_L = self._derivatives_in_L(v)
        rows, cols = cholesky_layout(self.q)
        n = rows.size
        # dL_rc / dv_p: L_ii for a diagonal entry, 1 below the diagonal
        scale = np.where(rows == cols, L[rows, cols], 1.0)
        _, a = self._row_constants()
        grad = grad_L[rows, cols] * scale
        grad[: self.q] += a
        hess = np.zeros((n, n))
        for p in range(n):
            for r in range(n):
                if rows[p] == rows[r]:
                    hess[p, r] = hess_L[rows[p], cols[p], cols[r]] * scale[p] * scale[r]
        hess[np.arange(self.q), np.arange(self.q)] += (
            grad_L[np.arange(self.q), np.arange(self.q)] * scale[: self.q]
        )
        return grad, hess

    def gradient(self, x: FloatArray) -> FloatArray:
        """Gradient of ``log p`` in the log-Cholesky parameters."""
        out = np.zeros(self.k)
        out[list(self.positions)] = self._derivatives_in_v(x)[0]
        return out

    def hessian(self, x: FloatArray) -> FloatArray:
        """Hessian of ``log p`` in the log-Cholesky parameters."""
        out = np.zeros((self.k, self.k))
        idx = np.asarray(self.positions)
        out[np.ix_(idx, idx)] = self._derivatives_in_v(x)[1]
        return out
