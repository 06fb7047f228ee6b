r"""Newton steps and covariances when the threshold block of the Hessian is sparse, not banded.

An interval-censored row known to lie in levels ``lo..hi`` touches the two cut-points
``theta_{lo-1}`` and ``theta_hi``, which may be far apart, so the threshold block ``A``
of the Hessian (:mod:`ordstats.families.cumulative.banded`) is no longer
tridiagonal: it has the tridiagonal pattern of the exact rows plus one entry pair
per distinct censoring interval.  :class:`SparseBlockHessian` keeps ``A`` as a
sparse matrix and factors it by a sparse LU decomposition with a fill-reducing
ordering and no pivoting across the diagonal (SuperLU's symmetric mode), which for
a symmetric matrix is ``L D L'``: ``A`` is positive definite exactly when every
pivot is positive.  The Schur-complement algebra of the banded module is
unchanged; ``diag(A^{-1})`` comes from solves with blocks of unit vectors.

Left- and right-censored rows touch one cut-point only, so without interval
censoring the block stays tridiagonal and :func:`block_hessian` returns the
banded Hessian itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import splu

from ordstats._typing import FloatArray
from ordstats.families.cumulative.banded import BandedEvaluation, BandedFactor, BandedHessian
from ordstats.families.cumulative.likelihood import Evaluation

__all__ = ["SparseBlockEvaluation", "SparseBlockFactor", "SparseBlockHessian", "block_hessian"]

#: Unit vectors per solve when the diagonal of ``A^{-1}`` is computed.
_INVERSE_BATCH = 256


def block_hessian(evaluation: Evaluation) -> BandedHessian:
    """The Hessian of ``evaluation`` as a :class:`BandedHessian`, sparse if it must be.

    Parameters
    ----------
    evaluation : ordstats.families.cumulative.likelihood.Evaluation
        Of a model with flexible thresholds and no nominal effects.

    Returns
    -------
    BandedHessian or SparseBlockHessian
        The banded form where the threshold block is tridiagonal.
    """
    block, border = evaluation.hessian_blocks
    coo = block.tocoo()
    if not np.any(np.abs(coo.row - coo.col) > 1):
        return BandedHessian.from_evaluation(evaluation)
    return SparseBlockHessian.from_blocks(block, border)


@dataclass(frozen=True)
class SparseBlockHessian(BandedHessian):
    """A symmetric matrix ``[[A, B], [B', C]]`` with ``A`` sparse (see the module).

    ``diagonal`` and ``off_diagonal`` are those of ``A`` (for reports); ``block``
    is ``A`` itself.
    """

    block: Any = None

    @classmethod
    def from_blocks(cls, block: Any, border: FloatArray) -> SparseBlockHessian:
        """Build from the sparse threshold block and the dense border columns.

        Parameters
        ----------
        block : scipy.sparse array, shape (q, q)
        border : ndarray, shape (q + m, m)
        """
        a = sp.csc_array(block)
        q = a.shape[0]
        return cls(
            diagonal=np.asarray(a.diagonal(0), dtype=float),
            off_diagonal=np.asarray(a.diagonal(1), dtype=float) if q > 1 else np.empty(0),
            cross=np.ascontiguousarray(border[:q]),
            rest=np.ascontiguousarray(border[q:]),
            block=a,
        )

    def __add__(self, other: BandedHessian) -> SparseBlockHessian:
        return SparseBlockHessian.from_blocks(
            _sparse_block(self) + _sparse_block(other),
            np.vstack([self.cross + other.cross, self.rest + other.rest]),
        )

    def __radd__(self, other: BandedHessian) -> SparseBlockHessian:
        return self.__add__(other)

    def is_finite(self) -> bool:
        """Whether every entry is finite."""
        return bool(np.all(np.isfinite(self.block.data))) and super().is_finite()

    def shifted(self, shift: float) -> SparseBlockHessian:
        """``H + shift * I``."""
        q = self.n_thresholds
        return SparseBlockHessian.from_blocks(
            self.block + shift * sp.eye_array(q, format="csc"),
            np.vstack([self.cross, self.rest + shift * np.eye(self.rest.shape[0])]),
        )

    def matvec(self, v: FloatArray) -> FloatArray:
        """``H @ v``."""
        q = self.n_thresholds
        v1, v2 = v[:q], v[q:]
        top = self.block @ v1 + self.cross @ v2
        return np.concatenate([top, self.cross.T @ v1 + self.rest @ v2])

    def toarray(self) -> FloatArray:
        """Return the dense matrix (for small problems and tests)."""
        q = self.n_thresholds
        out = super().toarray()
        out[:q, :q] = self.block.toarray()
        return out

    def factor(self) -> SparseBlockFactor:
        """Factors of ``A`` and of the Schur complement.

        Raises
        ------
        numpy.linalg.LinAlgError
            If the matrix is not positive definite.
        """
        return SparseBlockFactor(self)


def _sparse_block(hessian: BandedHessian) -> sp.csc_array:
    """The threshold block of either kind of Hessian as a sparse matrix."""
    if isinstance(hessian, SparseBlockHessian):
        return sp.csc_array(hessian.block)
    q = hessian.n_thresholds
    rows = np.concatenate([np.arange(q), np.arange(q - 1), np.arange(1, q)])
    cols = np.concatenate([np.arange(q), np.arange(1, q), np.arange(q - 1)])
    values = np.concatenate([hessian.diagonal, hessian.off_diagonal, hessian.off_diagonal])
    return sp.csc_array((values, (rows, cols)), shape=(q, q))


class SparseBlockFactor(BandedFactor):
    """:class:`~ordstats.families.cumulative.banded.BandedFactor` with a sparse ``A``.

    Parameters
    ----------
    hessian : SparseBlockHessian

    Raises
    ------
    numpy.linalg.LinAlgError
        If ``A`` or the Schur complement is not positive definite.
    """

    hessian: SparseBlockHessian

    def _factor_a(self) -> None:
        """Factor the threshold block ``A`` (sparse ``L D L'``, see the module)."""
        self._lu = _symmetric_factor(self.hessian.block)

    def __getstate__(self) -> dict[str, Any]:
        # SuperLU's factor cannot be pickled (a results object sent to Dask's workers,
        # or saved): it is made again from the block when unpickled
        return {key: value for key, value in self.__dict__.items() if key != "_lu"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._factor_a()

    def solve_a(self, rhs: FloatArray) -> FloatArray:
        """``A^{-1} rhs``."""
        rhs = np.asarray(rhs, dtype=float)
        if rhs.ndim == 2 and rhs.shape[1] == 0:
            return np.empty_like(rhs)
        return np.asarray(self._lu.solve(rhs), dtype=float)

    def inverse_diagonal_a(self) -> FloatArray:
        """``diag(A^{-1})`` from solves with blocks of unit vectors."""
        q = self.hessian.n_thresholds
        out = np.empty(q)
        for start in range(0, q, _INVERSE_BATCH):
            stop = min(q, start + _INVERSE_BATCH)
            unit = np.zeros((q, stop - start))
            unit[np.arange(start, stop), np.arange(stop - start)] = 1.0
            out[start:stop] = self.solve_a(unit)[np.arange(start, stop), np.arange(stop - start)]
        return out


def _symmetric_factor(block: Any) -> Any:
    """SuperLU ``L U`` of a symmetric ``A`` (diagonal pivots only); raise unless it is PD."""
    a = sp.csc_array(block)
    try:
        lu = splu(
            a,
            permc_spec="MMD_AT_PLUS_A",
            diag_pivot_thresh=0.0,
            options={"SymmetricMode": True},
        )
    except RuntimeError as exc:  # exactly singular
        raise np.linalg.LinAlgError(str(exc)) from exc
    pivots = lu.U.diagonal()
    if not (np.array_equal(lu.perm_r, lu.perm_c) and np.all(pivots > 0)):
        raise np.linalg.LinAlgError("the threshold block is not positive definite")
    return lu


class SparseBlockEvaluation(BandedEvaluation):
    """A banded evaluation whose threshold block may be sparse (see :func:`block_hessian`).

    For censored rows: the wrapped evaluation's Hessian is a
    :class:`~ordstats.families.cumulative.banded.BandedHessian` where it can be.
    """

    @property
    def hessian(self) -> BandedHessian:
        """Hessian of the negative log-likelihood (banded where it can be)."""
        cached = self.__dict__.get("_block_hessian")
        if cached is None:
            cached = block_hessian(self.evaluation)
            self.__dict__["_block_hessian"] = cached
        return cached
