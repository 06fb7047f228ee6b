r"""Newton steps and covariances for models with many response levels.

With flexible thresholds and no nominal effects, observation ``i`` touches only
the thresholds ``theta_{y_i}`` and ``theta_{y_i - 1}``, so the threshold block
``A`` of the Hessian of the negative log-likelihood is *tridiagonal*
(``q = K - 1`` rows).  Partition the Hessian as

.. math::

    H = \begin{pmatrix} A & B \\ B^\top & C \end{pmatrix}, \qquad
    S = C - B^\top A^{-1} B ,

with ``B`` the ``q x m`` cross block and ``C`` the ``m x m`` block of the other
parameters (``beta``, ``zeta``).  Then ``H x = g`` is solved by a banded
Cholesky factorisation of ``A`` and a dense one of the Schur complement ``S``
(Golub & Van Loan 2013, sec. 4.3 and 3.2.10), in ``O(q m^2 + m^3)`` time and
``O(q m)`` memory instead of ``O((q + m)^3)`` and ``O((q + m)^2)``.  The
covariance of the location parameters is ``S^{-1}``; the variances of the
thresholds are ``diag(A^{-1}) + diag(W S^{-1} W^T)`` with ``W = A^{-1} B``,
where ``diag(A^{-1})`` comes from the Takahashi recurrence on the bidiagonal
Cholesky factor (Takahashi, Fagan & Chin 1973) in ``O(q)``.

Nothing here knows about statistics beyond the block structure; the solver
takes :func:`banded_newton_step` as its linear solve.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp
from scipy import linalg
from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigsh, onenormest

from ordstats._typing import FloatArray
from ordstats.core.cached import cached_property
from ordstats.errors import OrdstatsError
from ordstats.families.cumulative.likelihood import Evaluation

__all__ = [
    "BandedCovariance",
    "BandedEvaluation",
    "BandedFactor",
    "BandedHessian",
    "banded_applicable",
    "banded_newton_step",
]

#: Reciprocal condition number below which the Hessian counts as singular
#: (the same rule as :func:`ordstats.results.fitted.observed_covariance`).
_SINGULAR_RCOND = 1e-13
#: A 1-norm condition estimate below this (a margin of 100 for the estimate's error
#: and the norms' difference) needs no eigenvalues to rule out a singular Hessian.
_CLEARLY_REGULAR = 1e-2 / _SINGULAR_RCOND
#: Up to this many parameters, extreme eigenvalues come from a dense eigensolver.
_DENSE_EIG_MAX = 400


def banded_applicable(layout: Any, jacobian: Any) -> bool:
    """Whether a model's threshold block is tridiagonal.

    True for flexible thresholds (identity Jacobian) without nominal effects.

    Parameters
    ----------
    layout : ordstats.families.cumulative.likelihood.ParamLayout
    jacobian : ndarray or sparse matrix, shape (K - 1, q)

    Returns
    -------
    bool
    """
    if layout.n_nominal_cols or jacobian.shape[0] != jacobian.shape[1]:
        return False
    if isinstance(jacobian, np.ndarray):
        return bool(np.array_equal(jacobian, np.eye(jacobian.shape[0])))
    jac = sp.csr_array(jacobian)
    eye = sp.eye_array(jac.shape[0], format="csr")
    return bool(abs(jac - eye).max() == 0)


@dataclass(frozen=True)
class BandedHessian:
    """A symmetric matrix ``[[A, B], [B', C]]`` with ``A`` tridiagonal.

    Attributes
    ----------
    diagonal : ndarray, shape (q,)
        Diagonal of ``A``.
    off_diagonal : ndarray, shape (q - 1,)
        ``A[j, j + 1]``.
    cross : ndarray, shape (q, m)
        ``B``.
    rest : ndarray, shape (m, m)
        ``C``.
    """

    diagonal: FloatArray
    off_diagonal: FloatArray
    cross: FloatArray
    rest: FloatArray

    @classmethod
    def from_evaluation(cls, evaluation: Evaluation) -> BandedHessian:
        """Compute the Hessian of an evaluation without forming the dense threshold block.

        Parameters
        ----------
        evaluation : ordstats.families.cumulative.likelihood.Evaluation
            Of a model with flexible thresholds and no nominal effects.

        Returns
        -------
        BandedHessian
        """
        block, border = evaluation.hessian_blocks
        coo = block.tocoo()
        if np.any(np.abs(coo.row - coo.col) > 1):
            raise OrdstatsError(
                "the threshold block of this model is not tridiagonal; the banded Newton "
                "step needs flexible thresholds without nominal effects (fit with banded=False)"
            )
        q = block.shape[0]
        return cls(
            diagonal=np.asarray(block.diagonal(0), dtype=float),
            off_diagonal=np.asarray(block.diagonal(1), dtype=float) if q > 1 else np.empty(0),
            cross=np.ascontiguousarray(border[:q]),
            rest=np.ascontiguousarray(border[q:]),
        )

    def __add__(self, other: BandedHessian) -> BandedHessian:
        return BandedHessian(
            self.diagonal + other.diagonal,
            self.off_diagonal + other.off_diagonal,
            self.cross + other.cross,
            self.rest + other.rest,
        )

    @property
    def n_thresholds(self) -> int:
        """Rows ``q`` of the tridiagonal block."""
        return int(self.diagonal.shape[0])

    @property
    def shape(self) -> tuple[int, int]:
        """Shape of the whole matrix."""
        k = self.n_thresholds + self.rest.shape[0]
        return (k, k)

    def is_finite(self) -> bool:
        """Whether every entry is finite."""
        return all(
            bool(np.all(np.isfinite(a)))
            for a in (self.diagonal, self.off_diagonal, self.cross, self.rest)
        )

    def shifted(self, shift: float) -> BandedHessian:
        """``H + shift * I``."""
        return BandedHessian(
            self.diagonal + shift,
            self.off_diagonal,
            self.cross,
            self.rest + shift * np.eye(self.rest.shape[0]),
        )

    def matvec(self, v: FloatArray) -> FloatArray:
        """``H @ v`` in ``O(q m)``."""
        q = self.n_thresholds
        v1, v2 = v[:q], v[q:]
        top = self.diagonal * v1 + self.cross @ v2
        top[:-1] += self.off_diagonal * v1[1:]
        top[1:] += self.off_diagonal * v1[:-1]
        return np.concatenate([top, self.cross.T @ v1 + self.rest @ v2])

    def toarray(self) -> FloatArray:
        """Return the dense matrix (for small problems and tests)."""
        q = self.n_thresholds
        out = np.empty(self.shape)
        out[:q, :q] = (
            np.diag(self.diagonal) + np.diag(self.off_diagonal, 1) + np.diag(self.off_diagonal, -1)
        )
        out[:q, q:] = self.cross
        out[q:, :q] = self.cross.T
        out[q:, q:] = self.rest
        return out

    def factor(self) -> BandedFactor:
        """Cholesky factors of ``A`` and of the Schur complement.

        Raises
        ------
        numpy.linalg.LinAlgError
            If the matrix is not positive definite.
        """
        return BandedFactor(self)

    def extreme_eigenvalues(self, factor: BandedFactor | None = None) -> tuple[float, float]:
        """Smallest and largest eigenvalue.

        Dense for small matrices; otherwise Lanczos iterations on ``H`` (largest)
        and on ``H^{-1}`` through ``factor`` (smallest), or on ``H`` itself when no
        factor is given (an indefinite matrix).
        """
        k = self.shape[0]
        if k <= _DENSE_EIG_MAX:
            eig = np.linalg.eigvalsh(self.toarray())
            return float(eig[0]), float(eig[-1])
        op = LinearOperator((k, k), matvec=self.matvec, dtype=float)
        largest = _lanczos(op, "LA")
        if factor is None:
            return _lanczos(op, "SA"), largest
        inverse = LinearOperator((k, k), matvec=factor.solve, dtype=float)
        return 1.0 / _lanczos(inverse, "LA"), largest


def _lanczos(op: LinearOperator, which: Literal["LA", "SA"]) -> float:
    """One extreme eigenvalue of a symmetric operator by ARPACK."""
    start = np.ones(op.shape[0])
    try:
        values = eigsh(
            op,
            k=1,
            which=which,
            v0=start,
            tol=1e-12,
            maxiter=20 * op.shape[0],
            return_eigenvectors=False,
        )
    except ArpackNoConvergence as exc:  # pragma: no cover - very rare
        values = np.real(exc.eigenvalues)
        if not len(values):
            return float("nan")
    return float(values[0])


class BandedFactor:
    """Cholesky factorisation of a :class:`BandedHessian` via the Schur complement.

    Parameters
    ----------
    hessian : BandedHessian

    Raises
    ------
    numpy.linalg.LinAlgError
        If ``A`` or the Schur complement is not positive definite.
    """

    def __init__(self, hessian: BandedHessian) -> None:
        self.hessian = hessian
        if not hessian.is_finite():
            raise np.linalg.LinAlgError("the matrix has non-finite entries")
        self._factor_a()
        self.w = self.solve_a(hessian.cross)  # W = A^{-1} B
        schur = hessian.rest - hessian.cross.T @ self.w
        self.schur = 0.5 * (schur + schur.T)
        self.s_factor = linalg.cho_factor(self.schur, check_finite=False) if schur.size else None

    def _factor_a(self) -> None:
        """Factor the threshold block ``A`` (banded Cholesky)."""
        hessian = self.hessian
        upper = np.zeros((2, hessian.n_thresholds))
        upper[0, 1:] = hessian.off_diagonal
        upper[1] = hessian.diagonal
        self.a_factor = linalg.cholesky_banded(upper, lower=False, check_finite=False)

    def solve_a(self, rhs: FloatArray) -> FloatArray:
        """``A^{-1} rhs``."""
        return linalg.cho_solve_banded((self.a_factor, False), rhs, check_finite=False)

    def solve_schur(self, rhs: FloatArray) -> FloatArray:
        """``S^{-1} rhs``."""
        if self.s_factor is None:
            return np.asarray(rhs, dtype=float)
        return linalg.cho_solve(self.s_factor, rhs, check_finite=False)

    def solve(self, rhs: FloatArray) -> FloatArray:
        """``H^{-1} rhs`` for a vector ``rhs`` (block elimination)."""
        q = self.hessian.n_thresholds
        a_inv_g1 = self.solve_a(rhs[:q])
        x2 = self.solve_schur(rhs[q:] - self.hessian.cross.T @ a_inv_g1)
        return np.concatenate([a_inv_g1 - self.w @ x2, x2])

    def inverse_diagonal_a(self) -> FloatArray:
        """``diag(A^{-1})`` by the Takahashi recurrence on the Cholesky factor.

        With ``A = U'U`` (``U`` upper bidiagonal, ``U[j, j] = c_j``,
        ``U[j, j+1] = e_j``) and ``r_j = e_j / c_j``:
        ``Sigma_jj = 1 / c_j^2 + r_j^2 Sigma_{j+1,j+1}``.
        """
        diag, sup = self.a_factor[1], self.a_factor[0, 1:]
        q = diag.shape[0]
        ratio2 = (sup / diag[:-1]) ** 2
        inv_c2 = 1.0 / diag**2
        out = np.empty(q)
        out[-1] = inv_c2[-1]
        for j in range(q - 2, -1, -1):
            out[j] = inv_c2[j] + ratio2[j] * out[j + 1]
        return out


def banded_newton_step(hessian: BandedHessian, gradient: FloatArray) -> tuple[FloatArray, bool]:
    """Solve ``H step = g`` for a :class:`BandedHessian`, as the dense Newton step.

    If ``H`` is not positive definite, ``(|min eigenvalue| + 1)`` is added to its
    diagonal (R's ``clm_fit_NR`` rule).  Returns the step and whether ``H`` was
    modified.

    Parameters
    ----------
    hessian : BandedHessian
    gradient : ndarray

    Returns
    -------
    step : ndarray
    modified : bool
    """
    try:
        return hessian.factor().solve(gradient), False
    except np.linalg.LinAlgError:
        pass
    if not hessian.is_finite():
        raise OrdstatsError("the Hessian has non-finite entries; the fit cannot continue")
    min_eig, _ = hessian.extreme_eigenvalues()
    return hessian.shifted(abs(min_eig) + 1.0).factor().solve(gradient), True


class BandedCovariance:
    """Inverse of a positive-definite :class:`BandedHessian`, computed on request.

    Has the attributes of :class:`ordstats.results.fitted.Covariance` (``matrix``,
    ``cond``, ``singular``, ``kind``); ``matrix`` is only formed when read
    (``O(k^2)`` memory), while :meth:`variances` and :attr:`location_block`
    never form it.

    Parameters
    ----------
    hessian : BandedHessian
    """

    kind = "nonrobust"

    def __init__(self, hessian: BandedHessian) -> None:
        self.hessian = hessian
        k = hessian.shape[0]
        self._factor: BandedFactor | None = None
        try:
            self._factor = hessian.factor()
        except np.linalg.LinAlgError:
            pass
        if self._factor is None:
            self.__dict__["cond"] = float("inf")
            self.singular = True
        elif self._condition_estimate() < _CLEARLY_REGULAR:
            self.singular = False  # cond(H) is at most the 1-norm one: far from singular
        else:
            self.singular = not 1.0 / self.cond > _SINGULAR_RCOND
        self._k = k

    @cached_property
    def cond(self) -> float:
        """Condition number ``max/min eigenvalue`` of the Hessian (R's ``cond.H``).

        Computed on first use: Lanczos iterations cost far more than the fit
        when there are many thresholds.
        """
        if self._factor is None:
            return float("inf")
        smallest, largest = self.hessian.extreme_eigenvalues(self._factor)
        return float(largest / smallest) if smallest > 0 else float("inf")

    def _condition_estimate(self) -> float:
        """``||H||_1 ||H^{-1}||_1`` with the inverse's norm estimated (Higham's method).

        A bound on the 2-norm condition number of the symmetric ``H`` up to the
        estimate's error (a lower bound on ``||H^{-1}||_1``, rarely off by more
        than a factor of 3); ``O(k m)`` per solve and a handful of solves.
        """
        assert self._factor is not None
        h = self.hessian
        q = h.n_thresholds
        threshold_columns = np.abs(h.diagonal) + np.abs(h.cross).sum(axis=1)
        threshold_columns[:-1] += np.abs(h.off_diagonal)
        threshold_columns[1:] += np.abs(h.off_diagonal)
        other_columns = np.abs(h.cross).sum(axis=0) + np.abs(h.rest).sum(axis=0)
        norm = float(max(threshold_columns.max(initial=0.0), other_columns.max(initial=0.0)))
        k = q + h.rest.shape[0]
        solve = self._factor.solve
        inverse = LinearOperator((k, k), matvec=solve, rmatvec=solve, dtype=float)
        return norm * float(onenormest(inverse))

    @cached_property
    def location_block(self) -> FloatArray:
        """Covariance of the non-threshold parameters: the inverse Schur complement."""
        m = self.hessian.rest.shape[0]
        if self.singular or self._factor is None:
            return np.full((m, m), np.nan)
        return self._factor.solve_schur(np.eye(m))

    def variances(self) -> FloatArray:
        """Return the diagonal of the covariance without forming the matrix."""
        if self.singular or self._factor is None:
            return np.full(self._k, np.nan)
        f = self._factor
        ws = f.w @ self.location_block  # W S^{-1}
        thresholds = f.inverse_diagonal_a() + np.einsum("ij,ij->i", ws, f.w)
        return np.concatenate([thresholds, np.diag(self.location_block)])

    def standard_errors(self) -> FloatArray:
        """Square roots of :meth:`variances`."""
        return np.sqrt(self.variances())

    @cached_property
    def matrix(self) -> FloatArray:
        """The full covariance matrix (dense: ``k^2`` values)."""
        k, q = self._k, self.hessian.n_thresholds
        if self.singular or self._factor is None:
            return np.full((k, k), np.nan)
        f = self._factor
        ws = f.w @ self.location_block
        out = np.empty((k, k))
        out[:q, :q] = f.solve_a(np.eye(q)) + ws @ f.w.T
        out[:q, q:] = -ws
        out[q:, :q] = -ws.T
        out[q:, q:] = self.location_block
        return out


class BandedEvaluation:
    """An :class:`~ordstats.families.cumulative.likelihood.Evaluation` whose ``hessian`` is banded.

    Every other attribute is the wrapped evaluation's.

    Parameters
    ----------
    evaluation : ordstats.families.cumulative.likelihood.Evaluation
    """

    def __init__(self, evaluation: Evaluation) -> None:
        self.evaluation = evaluation
        self.nll = evaluation.nll

    @property
    def gradient(self) -> FloatArray:
        """Gradient of the negative log-likelihood."""
        return self.evaluation.gradient

    @cached_property
    def hessian(self) -> BandedHessian:
        """Hessian of the negative log-likelihood as a :class:`BandedHessian`."""
        return BandedHessian.from_evaluation(self.evaluation)

    def __getattr__(self, name: str) -> Any:
        if name == "evaluation":
            raise AttributeError(name)
        return getattr(self.evaluation, name)
