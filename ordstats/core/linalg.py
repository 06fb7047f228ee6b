"""Dense linear-algebra kernels shared by the likelihood and the formula layer."""

from __future__ import annotations

import numpy as np
from scipy.linalg.blas import dsyrk

from ordstats._typing import FloatArray

__all__ = ["equilibrate", "weighted_gram"]

#: Elements per row block (32 MB of doubles): bounds temporaries to a block
#: instead of ``n x p``, while keeping each BLAS call large enough that a
#: multi-threaded BLAS does not lose to its own start-up cost on busy cores.
_BLOCK_ELEMENTS = 4_000_000


def _chunk_rows(n_columns: int) -> int:
    return max(16384, _BLOCK_ELEMENTS // max(n_columns, 1))


def _symmetric_from_upper(upper: FloatArray) -> FloatArray:
    return np.triu(upper) + np.triu(upper, 1).T


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
    n = A.shape[0]
    chunk = _chunk_rows(A.shape[1])
    if B is None and (c is None or np.all(c >= 0)) and A.shape[1] > 0:
        out = np.zeros((A.shape[1], A.shape[1]), order="F")
        for start in range(0, n, chunk):
            block = A[start : start + chunk]
            if c is not None:
                block = block * np.sqrt(c[start : start + chunk, None])
            out = dsyrk(1.0, block.T, c=out, beta=1.0, trans=0, lower=0, overwrite_c=1)
        return _symmetric_from_upper(out)
    B = A if B is None else B
    out = np.zeros((A.shape[1], B.shape[1]))
    for start in range(0, n, chunk):
        rows = slice(start, start + chunk)
        out += A[rows].T @ (B[rows] if c is None else B[rows] * c[rows, None])
    return out


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
