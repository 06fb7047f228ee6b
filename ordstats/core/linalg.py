"""Dense linear-algebra kernels shared by the likelihood and the formula layer."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg.blas import dsyrk

from ordstats._typing import FloatArray, IntArray
from ordstats.core.threads import is_large, product_threads

__all__ = [
    "ColumnMoments",
    "ShiftedBasis",
    "ShiftedColumns",
    "basis_of_moments",
    "column_moments",
    "column_reduce",
    "equilibrate",
    "shifted_basis",
    "weighted_gram",
    "weighted_gram_with_sums",
]

#: Elements per row block (32 MB of doubles): bounds temporaries to a block
#: instead of ``n x p``, while keeping each BLAS call large enough that a
#: multi-threaded BLAS does not lose to its own start-up cost on busy cores.
_BLOCK_ELEMENTS = 4_000_000


#: Rows per block of the weighted rank-k update (a block of 20 columns is 2.6 MB).
_SYRK_ROWS = 16384


def _chunk_rows(n_columns: int) -> int:
    return max(16384, _BLOCK_ELEMENTS // max(n_columns, 1))


def column_reduce(ufunc: np.ufunc, matrix: FloatArray) -> FloatArray:
    """``ufunc.reduce(matrix, axis=0)`` (``np.add``, ``np.minimum``, ...), fast for few columns.

    numpy reduces a row-major ``(n, p)`` array over its rows with an inner loop
    of length ``p``, whose overhead dominates for ``p`` of a few dozen.  The
    same memory viewed as ``(n / k, k p)`` is reduced with inner loops of length
    ``k p`` and the ``k`` partial results folded at the end: the same values
    (for ``np.add`` up to the order of the additions), several times faster.

    Parameters
    ----------
    ufunc : numpy.ufunc
        A binary, associative ufunc.
    matrix : ndarray, shape (n, p)

    Returns
    -------
    ndarray, shape (p,)
    """
    n, p = matrix.shape
    k = _FOLD_ROWS
    whole = (n // k) * k
    if not matrix.flags.c_contiguous or whole == 0 or p == 0:
        return np.asarray(ufunc.reduce(matrix, axis=0))
    folded = ufunc.reduce(ufunc.reduce(matrix[:whole].reshape(-1, k * p), axis=0).reshape(k, p))
    if whole < n:
        folded = ufunc(folded, ufunc.reduce(matrix[whole:], axis=0))
    return np.asarray(folded)


#: Rows folded into one wide row by :func:`column_reduce`.
_FOLD_ROWS = 64


def _symmetric_from_upper(upper: FloatArray) -> FloatArray:
    return np.triu(upper) + np.triu(upper, 1).T


def _gram_of(block: FloatArray) -> FloatArray:
    """``block' block``, symmetric, computed with the GIL released.

    ``numpy.dot`` of a matrix's transpose with itself calls the BLAS rank-k
    update ``dsyrk`` (half a general product) and mirrors the triangle, with
    Python's GIL released: the chunks of a pass, evaluated on a pool of
    threads, run their products side by side.  SciPy's ``dsyrk`` wrapper and
    ``numpy.matmul`` hold the GIL, so threads calling them take turns.  (For
    one caller SciPy's accumulating ``dsyrk`` is faster on wide blocks, about
    10% at 300 columns: :func:`weighted_gram`'s large products keep it.)
    """
    return np.dot(block.T, block)


def weighted_gram(
    A: FloatArray, c: FloatArray | None = None, B: FloatArray | None = None
) -> FloatArray:
    """Return ``A' diag(c) B`` (``B = A``, ``c = 1`` by default) in row blocks.

    When ``B`` is ``A`` and every weight is non-negative, the product is the
    symmetric ``(sqrt(c) A)' (sqrt(c) A)``, computed with the BLAS rank-k update
    ``dsyrk`` at half the cost of a general product.

    Parameters
    ----------
    A : ndarray, shape (n, p)
    c : ndarray, shape (n,), optional
    B : ndarray, shape (n, q), optional

    Returns
    -------
    ndarray, shape (p, q)
    """
    width = A.shape[1] if B is None else min(A.shape[1], B.shape[1])
    work = float(A.shape[0]) * A.shape[1] * (A.shape[1] if B is None else B.shape[1])
    if B is None and c is None and not is_large(work, width):
        # one thread's product (a chunk's): numpy's rank-k update releases the GIL,
        # SciPy's dsyrk of the blocks below holds it (and took 40% longer at 10^5 x 20)
        return _gram_of(A)
    with product_threads(work, width):
        return _weighted_gram(A, c, B)


def _weighted_gram(A: FloatArray, c: FloatArray | None, B: FloatArray | None) -> FloatArray:
    n = A.shape[0]
    chunk = _chunk_rows(A.shape[1])
    if B is None and (c is None or np.all(c >= 0)) and A.shape[1] > 0:
        out = np.zeros((A.shape[1], A.shape[1]), order="F")
        rows = max(min(n, _SYRK_ROWS), 1)  # no rows: the zero matrix
        # the scaled rows go to one small buffer, reused block after block: no
        # n x p temporary (whose fresh pages cost more than the products)
        buffer = np.empty((rows, A.shape[1])) if c is not None else None
        root = np.sqrt(c) if c is not None else None
        for start in range(0, n, rows):
            block = A[start : start + rows]
            if buffer is not None and root is not None:
                block = np.multiply(
                    block, root[start : start + rows, None], out=buffer[: block.shape[0]]
                )
            out = dsyrk(1.0, block.T, c=out, beta=1.0, trans=0, lower=0, overwrite_c=1)
        return _symmetric_from_upper(out)
    B = A if B is None else B
    out = np.zeros((A.shape[1], B.shape[1]))
    for start in range(0, n, chunk):
        rows = slice(start, start + chunk)
        out += A[rows].T @ (B[rows] if c is None else B[rows] * c[rows, None])
    return out


def weighted_gram_with_sums(
    A: FloatArray,
    c: FloatArray,
    bounds: IntArray,
    weights: FloatArray,
    rows: IntArray | None = None,
) -> tuple[FloatArray, FloatArray] | None:
    """``A' diag(c) A`` and segment sums ``weights[:, s] @ A[s]`` from one pass over ``A``.

    ``bounds`` splits the rows into segments ``s_k = bounds[k]:bounds[k+1]``
    (the rows of one response level).  Each block of rows is scaled by
    ``sqrt(c)`` into a small buffer once; the rank-k update and the segment
    sums, ``(weights / sqrt(c)) @ (sqrt(c) A)``, both read that buffer while
    it is in cache, instead of two passes over ``A``.  The sums differ from
    ``weights @ A`` by a few rounding errors of each term.

    Parameters
    ----------
    A : ndarray, shape (n, p)
    c : ndarray, shape (n,)
    bounds : ndarray of int, shape (K + 1,)
        Increasing, from 0 to ``n``.
    weights : ndarray, shape (m, n)
    rows : ndarray of int, shape (n,), optional
        Use ``A[rows]`` (``c`` and ``weights`` in that order) without copying
        it: each block of rows is gathered into the buffer.  The results are
        those of ``A[rows]`` bit for bit; where a product is evaluated once,
        this saves the copy (and its fresh memory).

    Returns
    -------
    (gram, sums) or None
        ``gram`` of shape ``(p, p)`` and ``sums`` of shape ``(m, K, p)``;
        ``None`` (compute the two separately) unless every ``c`` is positive
        and finite, or for a product large enough for several threads
        (:func:`ordstats.core.threads.is_large`).
    """
    n, p = A.shape
    if (
        p == 0
        or is_large(float(n) * p * p, p)
        or not bool(np.all(c > 0.0))
        or not bool(np.isfinite(c).all())
    ):
        return None
    root = np.sqrt(c)
    ratios = np.divide(weights, root)
    gram = np.zeros((p, p))
    sums = np.zeros((weights.shape[0], bounds.shape[0] - 1, p))
    size = max(_FUSED_BYTES // (8 * p), 1)
    buffer = np.empty((min(n, size), p))
    for k in range(bounds.shape[0] - 1):
        for start in range(int(bounds[k]), int(bounds[k + 1]), size):
            stop = min(start + size, int(bounds[k + 1]))
            block = buffer[: stop - start]
            if rows is None:
                np.multiply(A[start:stop], root[start:stop, None], out=block)
            else:  # "clip" skips the bounds checks (rows index A)
                np.take(A, rows[start:stop], axis=0, out=block, mode="clip")
                np.multiply(block, root[start:stop, None], out=block)
            gram += _gram_of(block)
            sums[:, k] += np.dot(ratios[:, start:stop], block)
    return gram, sums


#: Bytes per row block of :func:`weighted_gram_with_sums` (within a core's L2 cache).
_FUSED_BYTES = 2**19


def equilibrate(matrix: FloatArray) -> FloatArray:
    r"""Return ``d`` with ``D^{-1} A D^{-1}`` (``D = diag(d)``) of unit diagonal.

    Symmetric (Jacobi) equilibration, ``d_j = \sqrt{A_{jj}}`` where that is
    positive and finite, else 1.  It changes neither the solution of
    ``A x = b`` (``x = D^{-1} (D^{-1} A D^{-1})^{-1} D^{-1} b``) nor positive
    definiteness, but removes the effect of column scale on the condition
    number: a predictor multiplied by ``10^7`` multiplies its row and column of
    the Hessian by ``10^7`` and ``10^{14}`` on the diagonal, which equilibration
    undoes exactly (van der Sluis 1969: within a factor ``p`` of the best
    diagonal scaling).

    Parameters
    ----------
    matrix : ndarray, shape (p, p)
        Symmetric.

    Returns
    -------
    ndarray, shape (p,)
    """
    diag = np.diag(matrix)
    ok = np.isfinite(diag) & (diag > 0)
    return np.where(ok, np.sqrt(np.where(ok, diag, 1.0)), 1.0)


@dataclass(frozen=True)
class ShiftedBasis:
    r"""Centred and scaled predictor columns as a linear change of parameters.

    With location columns ``x_j = s_j u_j + m_j`` the linear predictor
    ``theta - x' beta`` equals ``theta_u - u' gamma`` where ``gamma_j = s_j
    beta_j`` and ``theta_u = theta - (m' beta) 1``.  When the threshold
    structure ``theta = J alpha`` reproduces a constant shift, ``J v = 1``,
    the internal parameters are ``alpha_u = alpha - v (m' beta)`` and
    ``gamma``; all others are unchanged.  So ``p = T q`` with

    .. math:: \alpha = \alpha_u + v\, m' S^{-1} \gamma, \qquad \beta = S^{-1} \gamma,

    ``S = diag(s)``.  A predictor far from zero (``x + 10^8``) makes the
    Hessian in ``p`` numerically singular although the one in ``q`` is well
    conditioned; Newton steps and the covariance are computed in ``q`` and
    mapped back: ``cov(p) = T cov(q) T'``, ``grad_p = T^{-T} grad_q``.

    Parameters
    ----------
    alpha : slice
        Positions of ``alpha`` in the parameter vector.
    beta : ndarray of int
        Positions of the ``beta`` of the centred/scaled columns.
    v : ndarray, shape (n_alpha,)
        Solves ``J v = 1``.
    shift : ndarray
        ``m`` of those columns.
    scale : ndarray
        ``s`` of those columns.
    """

    alpha: slice
    beta: IntArray
    v: FloatArray
    shift: FloatArray
    scale: FloatArray

    def transform(self, k: int) -> FloatArray:
        """The matrix ``T`` with ``p = T q`` for ``k`` parameters."""
        T = np.eye(k)
        T[self.beta, self.beta] = 1.0 / self.scale
        T[self.alpha, self.beta] = np.outer(self.v, self.shift / self.scale)
        return T

    def to_internal(self, params: FloatArray) -> FloatArray:
        """``q = T^{-1} p``."""
        q = np.array(params, dtype=float, copy=True)
        beta = q[self.beta]
        q[self.alpha] -= self.v * float(self.shift @ beta)
        q[self.beta] = beta * self.scale
        return q

    def to_external(self, internal: FloatArray) -> FloatArray:
        """``p = T q``."""
        p = np.array(internal, dtype=float, copy=True)
        beta = p[self.beta] / self.scale
        p[self.beta] = beta
        p[self.alpha] += self.v * float(self.shift @ beta)
        return p

    def gradient(self, internal_gradient: FloatArray) -> FloatArray:
        """``T^{-T} g`` for a gradient (or rows of scores, last axis) in ``q``."""
        # g_beta = s g_gamma - m (v' g_alpha), from g_q = T' g_p
        g = np.array(internal_gradient, dtype=float, copy=True)
        g_alpha = g[..., self.alpha] @ self.v
        g[..., self.beta] = g[..., self.beta] * self.scale - np.multiply.outer(g_alpha, self.shift)
        return g

    def hessian(self, internal_hessian: FloatArray) -> FloatArray:
        """``T^{-T} H T^{-1}`` for a Hessian in ``q``."""
        T_inv = self.gradient(np.eye(internal_hessian.shape[0]))  # row i: (T^{-T} e_i)'
        return T_inv.T @ internal_hessian @ T_inv

    def covariance(self, internal_covariance: FloatArray) -> FloatArray:
        """``T C T'`` for a covariance in ``q``."""
        T = self.transform(internal_covariance.shape[0])
        with np.errstate(over="ignore"):  # a variance beyond 1e308 is infinite
            return T @ internal_covariance @ T.T

    def standard_errors(self, internal_covariance: FloatArray) -> FloatArray:
        """``sqrt(diag(T C T'))`` without forming variances that overflow."""
        T = self.transform(internal_covariance.shape[0])
        # scale each row of T to unit max so the quadratic form cannot overflow
        size = np.max(np.abs(T), axis=1)
        unit = T / size[:, None]
        var = np.einsum("ij,jk,ik->i", unit, internal_covariance, unit)
        return np.sqrt(np.maximum(var, 0.0)) * size


@dataclass(frozen=True)
class ShiftedColumns:
    """Location columns evaluated as ``(x - shift) / scale``: a :class:`ShiftedBasis`'s design.

    A column far from zero (``x + 1e7``) is centred before its rows enter the
    likelihood, so that the Hessian's sums keep the column's variation (rows in
    memory once, rows read in chunks at every pass).

    Attributes
    ----------
    columns : ndarray of int
        Positions in the location design.
    shift, scale : ndarray
        The basis's ``m`` and ``s`` of those columns.
    """

    columns: IntArray
    shift: FloatArray
    scale: FloatArray

    @classmethod
    def of(cls, basis: ShiftedBasis, beta_offset: int) -> ShiftedColumns:
        """The columns of ``basis`` (whose first ``beta`` is at ``beta_offset``)."""
        return cls(basis.beta - beta_offset, basis.shift, basis.scale)

    def apply(self, X: FloatArray) -> FloatArray:
        """A copy of ``X`` with the columns shifted and scaled."""
        out = np.array(X, dtype=float, copy=True)
        out[:, self.columns] = (out[:, self.columns] - self.shift) / self.scale
        return out


@dataclass(frozen=True)
class ColumnMoments:
    """Mean and standard deviation of each column, from the column divided by its ``max|x|``.

    Dividing first keeps ``x * 1e-200`` from underflowing in its variance and
    ``x * 1e200`` from overflowing; the moments are scaled back.

    Attributes
    ----------
    mean, sd : ndarray, shape (p,)
        ``sd`` with divisor ``n`` (``numpy.std``'s).
    """

    mean: FloatArray
    sd: FloatArray

    def take(self, columns: list[int]) -> ColumnMoments:
        """The moments of the given columns."""
        return ColumnMoments(self.mean[columns], self.sd[columns])


def column_moments(X: FloatArray) -> ColumnMoments:
    """:class:`ColumnMoments` of ``X`` (columns of zero or non-finite size are not divided)."""
    with np.errstate(all="ignore"):
        size = np.max(np.abs(X), axis=0)
        size = np.where(np.isfinite(size) & (size > 0), size, 1.0)
        unit = X / size
        return ColumnMoments(unit.mean(axis=0) * size, unit.std(axis=0) * size)


def shifted_basis(
    X: FloatArray,
    jacobian: FloatArray,
    alpha: slice,
    beta_offset: int,
    moments: ColumnMoments | None = None,
) -> ShiftedBasis | None:
    """The basis that centres or rescales badly placed columns of ``X``, if any needs it.

    A column needs centring when its mean exceeds ``10^3`` standard
    deviations (the Hessian's condition number grows with the square of that
    ratio) and rescaling when its standard deviation is outside
    ``[10^-30, 10^8]``: below, Hessian entries underflow; above, the gradient
    entries of its slope are about SD times those of the unit-scale slope, so
    Newton's absolute gradient tolerance could not be met at the optimum (a
    false non-convergence from SD ~ 10^11), and beyond ~10^150 its Hessian
    entries overflow.  Constant
    columns, and threshold structures that cannot absorb a constant shift,
    are left alone.

    Parameters
    ----------
    X : ndarray, shape (n, p)
        Location design.
    jacobian : ndarray, shape (K - 1, n_alpha)
        Threshold Jacobian ``J``.
    alpha : slice
        Positions of ``alpha`` in the parameters.
    beta_offset : int
        Position of the first ``beta``.
    moments : ColumnMoments, optional
        :func:`column_moments` of ``X`` if already known (the design layer
        computes them for its aliasing check).

    Returns
    -------
    ShiftedBasis or None
        ``None`` when no column needs it.
    """
    if X.shape[1] == 0 or X.shape[0] < 2:
        return None
    if moments is None or moments.mean.shape != (X.shape[1],):
        moments = column_moments(X)
    return basis_of_moments(moments, jacobian, alpha, beta_offset)


def basis_of_moments(
    moments: ColumnMoments, jacobian: FloatArray, alpha: slice, beta_offset: int
) -> ShiftedBasis | None:
    """:func:`shifted_basis` from the columns' moments alone (data read in chunks).

    Parameters
    ----------
    moments : ColumnMoments
        Means and standard deviations of the location columns.
    jacobian : ndarray or sparse matrix, shape (K - 1, n_alpha)
        Threshold Jacobian ``J``.
    alpha : slice
        Positions of ``alpha`` in the parameters.
    beta_offset : int
        Position of the first ``beta``.

    Returns
    -------
    ShiftedBasis or None
        ``None`` when no column needs it.
    """
    mean, sd = moments.mean, moments.sd
    ok = np.isfinite(mean) & np.isfinite(sd) & (sd > 0)
    centre = ok & (np.abs(mean) > _CENTRE_RATIO * sd)
    rescale = ok & ((sd < _SCALE_RANGE[0]) | (sd > _SCALE_RANGE[1]))
    chosen = np.flatnonzero(centre | rescale)
    if chosen.size == 0:
        return None
    shift = np.where(centre, mean, 0.0)[chosen]
    if np.any(shift != 0.0):
        J = jacobian.toarray() if hasattr(jacobian, "toarray") else np.asarray(jacobian, float)
        if J.size == 0:
            return None
        v = np.linalg.lstsq(J, np.ones(J.shape[0]), rcond=None)[0]
        if not np.allclose(J @ v, 1.0, rtol=0.0, atol=1e-10):
            return None
    else:
        v = np.zeros(alpha.stop - alpha.start)
    return ShiftedBasis(
        alpha=alpha,
        beta=chosen + beta_offset,
        v=v,
        shift=shift,
        scale=np.where(rescale, sd, 1.0)[chosen],
    )


#: A column whose mean exceeds this many standard deviations is centred.
_CENTRE_RATIO = 1e3
#: A column whose standard deviation is outside this range is rescaled.
_SCALE_RANGE = (1e-30, 1e8)
