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

**An LKJ(eta) correlation of a random term** ``(1 + x | g)`` in the coordinates of
:mod:`ordstats.estimation.bayes_language`: the Cholesky factor ``W`` of the
``q x q`` correlation matrix is written with the canonical partial correlations
``z_ij = tanh(y_ij)``, ``i > j`` (Lewandowski, Kurowicka and Joe 2009; Stan's
"Cholesky factors of correlation matrices"): ``W_ij = z_ij (prod_{k<j} (1 - z_ik^2))^{1/2}``
and ``W_ii = (prod_{k<i} (1 - z_ik^2))^{1/2}``.  Under LKJ(``eta``) the partial
correlations are independent, ``(z_ij + 1) / 2 ~ Beta(a_j, a_j)`` with
``a_j = eta + (q - 2 - j) / 2`` (columns ``j`` counted from 0), and
``dz = (1 - z^2) dy``, so the density in ``y`` is

.. math::

    \log p(y) = \sum_{i>j} a_j \log(1 - \tanh^2 y_{ij})
              = -2 \sum_{i>j} a_j \log\cosh y_{ij},\quad
    \partial_y = -2 a_j \tanh y,\quad \partial^2_y = -2 a_j (1 - \tanh^2 y):

separable and concave.  (For ``q = 2``: ``eta log(1 - r^2)`` in ``y = atanh r``.)  The
standard deviations are separate parameters ``log s_i`` with the scalar priors of
:mod:`ordstats.core.priors` (density ``p_s(s) s`` in ``log s``, which goes to 0 as
``s -> 0``, so the posterior mode exists).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

from ordstats._typing import FloatArray

__all__ = [
    "LkjPrior",
    "SimplexPrior",
    "cholesky_layout",
    "lkj_shapes",
    "log_cosh",
    "softmax_last_zero",
]


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


def log_cosh(y: FloatArray) -> FloatArray:
    """``log cosh y`` without overflow."""
    a = np.abs(np.asarray(y, dtype=float))
    return np.asarray(a + np.log1p(np.exp(-2.0 * a)) - np.log(2.0))


def lkj_shapes(q: int, eta: float) -> FloatArray:
    """``a_j`` of each partial correlation of a ``q x q`` term, in :func:`cholesky_layout` order."""
    cols = cholesky_layout(q)[1]
    return np.asarray(eta + (q - 2 - cols[q:]) / 2.0, dtype=float)


@dataclass(frozen=True)
class LkjPrior:
    """LKJ(``eta``) on a random term's correlation, in ``y = atanh`` of its partial correlations.

    Attributes
    ----------
    positions : tuple of int
        The term's ``q(q-1)/2`` parameters ``y_ij`` (column by column) in the vector.
    q : int
        Dimension of the term.
    eta : float
        The LKJ shape (1: uniform over correlation matrices).
    k : int
        Length of the parameter vector.
    """

    positions: tuple[int, ...]
    q: int
    eta: float
    k: int

    def batch_value(self, X: FloatArray) -> FloatArray:
        """``-2 sum a_j log cosh y_ij`` at each row of ``X``."""
        Y = np.asarray(X, dtype=float)[:, list(self.positions)]
        return np.asarray(-2.0 * log_cosh(Y) @ lkj_shapes(self.q, self.eta))

    def value(self, x: FloatArray) -> float:
        """``log p`` at ``x``."""
        return float(self.batch_value(np.asarray(x, dtype=float)[None, :])[0])

    def gradient(self, x: FloatArray) -> FloatArray:
        """``-2 a_j tanh y_ij`` at the partial correlations, 0 elsewhere."""
        y = np.asarray(x, dtype=float)[list(self.positions)]
        out = np.zeros(self.k)
        out[list(self.positions)] = -2.0 * lkj_shapes(self.q, self.eta) * np.tanh(y)
        return out

    def hessian(self, x: FloatArray) -> FloatArray:
        """``-2 a_j (1 - tanh^2 y_ij)`` on the diagonal."""
        y = np.asarray(x, dtype=float)[list(self.positions)]
        out = np.zeros((self.k, self.k))
        idx = np.asarray(self.positions, dtype=int)
        out[idx, idx] = -2.0 * lkj_shapes(self.q, self.eta) / np.cosh(y) ** 2
        return out
