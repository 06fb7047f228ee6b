r"""Negative log-likelihood of cumulative link models with analytic derivatives.

The model (Christensen 2019, eqs. 1-4; McCullagh 1980) for observation ``i`` in
category ``y_i`` of ``K`` ordered levels is

.. math::

    P(Y_i \le j) = F\!\left(\frac{\theta_j(w_i) - x_i^\top\beta - o_i}{s_i}\right),
    \qquad \theta(w) = J\Big(a_0 + \sum_t w_t a_t\Big), \qquad s_i = e^{z_i^\top\zeta},

with threshold Jacobian ``J`` (see :mod:`ordstats.core.thresholds`), nominal effects
``a_t`` for the columns ``w_t`` of the nominal design, location effects ``beta``
and log-scale effects ``zeta``.  The sign convention is R's ``clm``: a positive
``beta`` moves probability to higher categories.

With ``u_i`` and ``l_i`` the standardised upper and lower cut-points of the
observed category (``u = +inf`` for the top, ``l = -inf`` for the bottom one),
the log-likelihood is :math:`\ell = \sum_i w_i \log\{F(u_i) - F(l_i)\}`.  Writing
``U = s u`` and ``L = s l``, both are linear in ``phi = (a, beta)`` through
sparse "threshold designs" ``T1``, ``T2``: ``U = T1 a - X beta - o``.
Derivatives follow from the chain rule with

.. math::

    g_u = f(u)/P,\quad g_l = -f(l)/P,\quad
    h_{uu} = \tfrac{f'(u)}{f(u)} g_u - g_u^2,\quad
    h_{ll} = \tfrac{f'(l)}{f(l)} g_l - g_l^2,\quad h_{ul} = -g_u g_l .

The parameter vector is ordered ``[a_0, a_1..a_r, beta, zeta]`` (R's order).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from ordstats._typing import FloatArray, IntArray
from ordstats.core.cached import cached_property
from ordstats.core.linalg import weighted_gram, weighted_gram_with_sums
from ordstats.core.links import Link, log1mexp
from ordstats.core.links.flexible import FlexibleLink
from ordstats.core.links.standard import Logit
from ordstats.families.pointwise import DiagonalCurvature, RowDerivatives
from ordstats.families.problem import CLMData, ParamLayout, row_scales

__all__ = [
    "LOGISTIC_SAFE",
    "CLMData",
    "CLMProblem",
    "CumulativeRowDerivatives",
    "Evaluation",
    "IntervalDerivatives",
    "LogisticHalves",
    "ParamLayout",
    "evaluate",
    "interval_derivatives",
    "interval_probabilities",
    "log_interval_probabilities",
    "logistic_derivatives",
    "logistic_gradients",
    "prepare",
    "row_derivatives",
]


@dataclass(frozen=True, eq=False)
class CLMProblem:
    """A :class:`CLMData` with the sparse threshold designs precomputed.

    ``T_upper`` and ``T_lower`` (shape ``(n, q * (1 + r))``) map the threshold
    parameters to each observation's upper and lower cut-point; rows of the top
    (bottom) category are zero in ``T_upper`` (``T_lower``).
    """

    data: CLMData
    layout: ParamLayout
    has_upper: np.ndarray
    has_lower: np.ndarray
    #: the fixed part ``c`` of each row's upper / lower cut-point (``theta = J a + c``)
    upper_shift: FloatArray | None = None
    lower_shift: FloatArray | None = None
    #: evaluated once (a chunk's pass): the Hessian gathers the rows grouped by level
    #: block by block instead of keeping a grouped copy of ``X`` (the same numbers)
    single_use: bool = False

    @cached_property
    def unit_weights(self) -> bool:
        """Whether every weight is one (the likelihood then skips multiplying by them)."""
        return bool(np.all(self.data.weights == 1.0))

    @cached_property
    def has_offset(self) -> bool:
        """Whether any offset is non-zero."""
        return bool(np.any(self.data.offset != 0.0))

    @cached_property
    def _threshold_designs(self) -> tuple[sp.csr_array, sp.csr_array]:
        data = self.data
        jac = sp.csr_array(data.threshold_jacobian)
        zero_row = sp.csr_array((1, jac.shape[1]))
        upper = _gather_rows(sp.csr_array(sp.vstack([jac, zero_row], format="csr")), data.y)
        lower = _gather_rows(
            sp.csr_array(sp.vstack([zero_row, jac], format="csr")), data.lower_codes
        )
        nominal = data.nominal if data.nominal.size else np.empty((data.n_obs, 0))
        return _threshold_design(upper, nominal), _threshold_design(lower, nominal)

    @property
    def T_upper(self) -> sp.csr_array:
        """Sparse ``(n, q (1 + r))`` map of the threshold parameters to upper cut-points.

        Built on first use: models without nominal effects and with at most
        50 levels use :attr:`level_designs` instead.
        """
        return self._threshold_designs[0]

    @property
    def T_lower(self) -> sp.csr_array:
        """Sparse map of the threshold parameters to lower cut-points (see :attr:`T_upper`)."""
        return self._threshold_designs[1]

    def cutpoints(self, a: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Each row's upper and lower cut-point ``T_upper a``, ``T_lower a`` (shifts excluded)."""
        levels = self.level_designs
        if levels is None:
            return self.T_upper @ a, self.T_lower @ a
        J1, J2 = levels
        return (J1 @ a)[self.data.y], (J2 @ a)[self.data.y]

    @cached_property
    def _nnz_rows(self) -> tuple[IntArray, IntArray]:
        """Row index of every stored entry of ``T_upper`` and ``T_lower``."""
        return tuple(  # type: ignore[return-value]
            np.repeat(np.arange(self.data.n_obs), np.diff(T.indptr))
            for T in (self.T_upper, self.T_lower)
        )

    @cached_property
    def level_designs(self) -> tuple[FloatArray, FloatArray] | None:
        """Without nominal effects: ``(J_upper, J_lower)`` with ``T_upper = S' J_upper``.

        A row of ``T_upper`` (``T_lower``) then depends on the observation's level
        only: ``J_upper = [J; 0]`` and ``J_lower = [0; J]`` (shape ``(K, q)``);
        with ``S`` the ``(K, n)`` indicator of the levels,
        ``T_a' diag(d) T_b = J_a' diag(S d) J_b`` and ``T_a' diag(d) X = J_a' S
        diag(d) X`` (:meth:`level_sums`, :meth:`level_row_sums`): sums over the
        levels instead of sparse products with ``n``-row matrices.  ``None``
        with nominal effects (rows then depend on ``w_i``) or more than 50 levels.
        """
        data = self.data
        if self.layout.n_nominal_cols or data.n_levels > _DENSE_MAX_LEVELS or data.censored:
            # censored rows: the two cut-points of a row belong to different levels
            return None
        jac = np.asarray(data.threshold_jacobian, dtype=float)
        zero = np.zeros((1, jac.shape[1]))
        return np.vstack([jac, zero]), np.vstack([zero, jac])

    @cached_property
    def one_threshold_per_cut(self) -> bool:
        """Many levels with flexible thresholds and no nominal effects (identity Jacobian).

        Then ``T_upper = S' [I; 0]`` and ``T_lower = S' [0; I]``: every sum the
        likelihood needs is a sum over the rows of each level
        (:meth:`level_sums`), ``O(n + K)`` without the sparse ``(n, q)`` designs.
        Models with at most 50 levels use :attr:`level_designs` instead.
        """
        data = self.data
        if self.layout.n_nominal_cols or self.level_designs is not None or data.censored:
            # censored rows: the two cut-points of a row belong to different levels
            return False
        jac = data.threshold_jacobian
        q = data.n_levels - 1
        if jac.shape != (q, q):
            return False
        if not sp.issparse(jac):
            return bool(np.array_equal(jac, np.eye(q)))
        csr = sp.csr_array(jac)
        csr.sum_duplicates()
        return bool(
            csr.nnz == q
            and np.array_equal(csr.indptr, np.arange(q + 1))
            and np.array_equal(csr.indices, np.arange(q))
            and np.all(csr.data == 1.0)
        )

    def level_cutpoints(self, a: FloatArray) -> tuple[FloatArray, FloatArray] | None:
        """Upper and lower cut-point of each level (``+-inf`` at the open ends), or None.

        Available with :attr:`level_designs` or :attr:`one_threshold_per_cut`.
        """
        levels = self.level_designs
        if levels is not None:
            upper, lower = levels[0] @ a, levels[1] @ a
        elif self.one_threshold_per_cut:
            upper, lower = np.append(a, 0.0), np.insert(a, 0, 0.0)
        else:
            return None
        upper[-1], lower[0] = np.inf, -np.inf
        return upper, lower

    def level_sums(self, values: FloatArray) -> FloatArray:
        """``S values``: sums of ``values`` (a vector) over the rows of each level."""
        sums = np.bincount(self.data.y, weights=values, minlength=self.data.n_levels)
        return np.asarray(sums, dtype=np.float64)

    def level_row_sums(self, matrix: FloatArray, *weights: FloatArray) -> list[FloatArray]:
        """``S diag(c) matrix`` for each weight vector ``c``: weighted row sums per level.

        One dense product ``matrix' [D_1, D_2, ...]`` with ``D_c`` the ``(n, K)``
        level indicator scaled by ``c``.  For the location design the Hessian
        uses :meth:`location_blocks` instead.

        Returns
        -------
        list of ndarray, shape (K, p)
        """
        n_levels, y = self.data.n_levels, self.data.y
        scaled = np.zeros((y.shape[0], n_levels * len(weights)))
        for k, c in enumerate(weights):
            scaled[self._rows, y + k * n_levels] = c
        sums = np.dot(matrix.T, scaled).T  # numpy.dot releases the GIL; matmul holds it
        return [sums[k * n_levels : (k + 1) * n_levels] for k in range(len(weights))]

    def location_blocks(
        self, c_upper: FloatArray, c_lower: FloatArray
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """The location design's Hessian blocks from two row weights.

        Returns ``S diag(c_upper) X``, ``S diag(c_lower) X`` (shape ``(K, p)``)
        and ``X' diag(c) X`` with ``c = -(c_upper + c_lower)``: with
        ``c_upper = d_uu + d_ul`` and ``c_lower = d_ul + d_ll`` these are the
        threshold-slope sums and minus the location block, whose weight
        ``-(d_uu + 2 d_ul + d_ll)`` is non-negative for log-concave ``F``.

        Where the rows are kept grouped by level (:attr:`_rows_by_level`) the
        two weights are gathered into that order once, and each level's sums
        are products with contiguous blocks of rows of the same copy whose
        Gram matrix is a rank-k update: both from one pass over it
        (:func:`~ordstats.core.linalg.weighted_gram_with_sums`) where the
        Gram weights are positive, as they are for log-concave ``F``.
        """
        X = self.data.X
        grouping = self._level_order
        if grouping is None:
            upper, lower = self.level_row_sums(X, c_upper, c_lower)
            return upper, lower, weighted_gram(X, -(c_upper + c_lower))
        order, bounds = grouping
        sorted_weights = np.empty((2, X.shape[0]))  # rows: the two weights in level order
        # "clip" skips the bounds checks of "raise" (order is a permutation): twice as fast
        np.take(c_upper, order, out=sorted_weights[0], mode="clip")
        np.take(c_lower, order, out=sorted_weights[1], mode="clip")
        gram_weights = np.add(sorted_weights[0], sorted_weights[1])
        np.negative(gram_weights, out=gram_weights)
        if self.single_use and "_rows_by_level" not in self.__dict__:
            fused = weighted_gram_with_sums(X, gram_weights, bounds, sorted_weights, order)
        else:
            fused = weighted_gram_with_sums(self._grouped_X, gram_weights, bounds, sorted_weights)
        if fused is not None:
            gram, level_sums = fused
            return level_sums[0], level_sums[1], gram
        sorted_matrix = self._grouped_X
        sums = np.empty((2, self.data.n_levels, X.shape[1]))
        for k in range(self.data.n_levels):
            block = slice(bounds[k], bounds[k + 1])
            sums[:, k] = sorted_weights[:, block] @ sorted_matrix[block]
        return sums[0], sums[1], weighted_gram(sorted_matrix, gram_weights)

    @cached_property
    def _level_order(self) -> tuple[IntArray, IntArray] | None:
        """``(order, bounds)``: level ``k``'s rows of ``X[order]`` at ``bounds[k]:bounds[k+1]``.

        ``None`` without the dense level sums (:attr:`level_designs`), without
        columns, or when a copy of ``X`` would exceed :data:`_GROUPED_COPY_BYTES`.
        """
        X = self.data.X
        if self.level_designs is None or X.nbytes > _GROUPED_COPY_BYTES or X.shape[1] == 0:
            return None
        order = np.argsort(self.data.y.astype(np.uint8), kind="stable")  # radix sort: K <= 50
        counts = np.bincount(self.data.y, minlength=self.data.n_levels)
        return order, np.concatenate([[0], np.cumsum(counts)])

    @cached_property
    def _rows_by_level(self) -> tuple[IntArray, IntArray, FloatArray] | None:
        """``(order, bounds, X[order])`` of :attr:`_level_order` (None where that is None).

        ``X[order]`` is a row-major copy (a gather of whole rows, the cheapest
        copy; its row blocks are what the rank-k update reads), kept for the
        Hessians of a fit that evaluates the same rows many times.
        """
        grouping = self._level_order
        if grouping is None:
            return None
        order, bounds = grouping
        # "clip" skips the bounds checks (order is a permutation): 40% faster than "raise"
        return order, bounds, np.take(self.data.X, order, axis=0, mode="clip")

    def with_weights(self, weights: FloatArray) -> CLMProblem:
        """The same problem with other row weights (zeros allowed), e.g. replicate weights.

        The threshold designs and the rows grouped by level built so far are
        shared: they depend on the rows and designs only.
        """
        new = replace(self, data=replace(self.data, weights=weights))
        for name in _WEIGHT_FREE_CACHES:
            if name in self.__dict__:
                new.__dict__[name] = self.__dict__[name]
        return new

    @property
    def _grouped_X(self) -> FloatArray:
        """``X[order]`` of :attr:`_rows_by_level` (where :attr:`_level_order` is not None)."""
        grouped = self._rows_by_level
        assert grouped is not None
        return grouped[2]

    def release_workspace(self) -> None:
        """Drop the copy of ``X`` grouped by level (:attr:`_rows_by_level`).

        It only speeds up the Hessians of a fit; a fitted model need not keep
        a second copy of its design.  It is made again if another Hessian is
        computed.
        """
        self.__dict__.pop("_rows_by_level", None)

    @cached_property
    def _rows(self) -> IntArray:
        return np.arange(self.data.n_obs)

    def scaled_upper(self, factor: FloatArray) -> sp.csr_array:
        """``diag(factor) @ T_upper``."""
        return _scale_rows(self.T_upper, factor, self._nnz_rows[0])

    def scaled_lower(self, factor: FloatArray) -> sp.csr_array:
        """``diag(factor) @ T_lower``."""
        return _scale_rows(self.T_lower, factor, self._nnz_rows[1])


#: Cached values of a :class:`CLMProblem` that do not depend on the weights.
_WEIGHT_FREE_CACHES = (
    "has_offset",
    "_threshold_designs",
    "_nnz_rows",
    "level_designs",
    "one_threshold_per_cut",
    "_level_order",
    "_rows_by_level",
    "_rows",
)
#: Most levels for which :attr:`CLMProblem.level_designs` uses dense level sums.
_DENSE_MAX_LEVELS = 50
#: Largest location design copied with its rows grouped by level (bytes).
_GROUPED_COPY_BYTES = 256 * 2**20


def _gather_rows(matrix: sp.csr_array, rows: np.ndarray) -> sp.csr_array:
    """``matrix[rows]`` for a CSR matrix, in O(nnz of the result)."""
    starts = matrix.indptr[rows]
    counts = matrix.indptr[rows + 1] - starts
    indptr = np.concatenate([[0], np.cumsum(counts)])
    positions = np.arange(indptr[-1]) + np.repeat(starts - indptr[:-1], counts)
    return sp.csr_array(
        (matrix.data[positions], matrix.indices[positions], indptr),
        shape=(rows.shape[0], matrix.shape[1]),
    )


def _threshold_design(jacobian_rows: sp.csr_array, nominal: FloatArray) -> sp.csr_array:
    """Row-wise Kronecker product ``[1, w_i] (x) J[y_i]`` as a sparse matrix."""
    if nominal.shape[1] == 0:
        return jacobian_rows
    blocks = [jacobian_rows]
    for t in range(nominal.shape[1]):
        blocks.append(_scale_rows(jacobian_rows, nominal[:, t]))
    return sp.csr_array(sp.hstack(blocks, format="csr"))


def prepare(data: CLMData, *, single_use: bool = False) -> CLMProblem:
    """Set up a model's likelihood: parameter layout, bound masks, fixed cut-point shifts.

    Parameters
    ----------
    data : CLMData
    single_use : bool
        The problem is evaluated once (a chunk in one pass of a fit read in
        chunks): no workspace is kept for later Hessians (the same numbers).

    Returns
    -------
    CLMProblem
    """
    n_thresholds = data.n_levels - 1
    layout = ParamLayout(
        n_alpha=np.shape(data.threshold_jacobian)[1],
        # the columns, not the size: data without rows (chunked) keep their layout
        n_nominal_cols=data.nominal.shape[1] if data.nominal.ndim == 2 else 0,
        n_beta=data.X.shape[1],
        n_zeta=data.scale.shape[1] if data.scale.ndim == 2 else 0,
        n_lambda=int(isinstance(data.link, FlexibleLink)),
    )
    shifts: tuple[FloatArray | None, FloatArray | None] = (None, None)
    if data.threshold_offset is not None and np.any(data.threshold_offset):
        padded = np.concatenate([[0.0], np.asarray(data.threshold_offset, dtype=float), [0.0]])
        shifts = (padded[data.y + 1], padded[data.lower_codes])
    return CLMProblem(
        data=data,
        layout=layout,
        has_upper=data.y < n_thresholds,
        has_lower=data.lower_codes > 0,
        upper_shift=shifts[0],
        lower_shift=shifts[1],
        single_use=single_use,
    )


def _scale_rows(
    matrix: sp.csr_array, factor: FloatArray, nnz_rows: IntArray | None = None
) -> sp.csr_array:
    """Return ``diag(factor) @ matrix`` for a CSR matrix, sharing its structure."""
    if nnz_rows is None:
        nnz_rows = np.repeat(np.arange(matrix.shape[0]), np.diff(matrix.indptr))
    return sp.csr_array(
        (matrix.data * factor[nnz_rows], matrix.indices, matrix.indptr), shape=matrix.shape
    )


def log_interval_probabilities(link: Link, upper: FloatArray, lower: FloatArray) -> FloatArray:
    """Return ``log(F(upper) - F(lower))`` without cancellation in either tail.

    Delegates to :meth:`ordstats.core.links.Link.log_interval`: the difference of
    ``log F`` values where ``lower <= 0``, of ``log(1 - F)`` values otherwise (as
    R's ``get_fitted.c``), or an exact identity where the link has one.
    Disordered bounds (``upper < lower``) give NaN.

    Parameters
    ----------
    link : Link
    upper, lower : ndarray
        Standardised cut-points, ``upper >= lower``; ``+-inf`` allowed.

    Returns
    -------
    ndarray
    """
    upper, lower = np.broadcast_arrays(
        np.asarray(upper, dtype=float), np.asarray(lower, dtype=float)
    )
    return link.log_interval(upper, lower)


def interval_probabilities(link: Link, upper: FloatArray, lower: FloatArray) -> FloatArray:
    """Return ``F(upper) - F(lower)`` computed as in :func:`log_interval_probabilities`."""
    return np.exp(log_interval_probabilities(link, upper, lower))


@dataclass(frozen=True)
class IntervalDerivatives:
    r"""``log P = log{F(u) - F(l)}`` and its derivatives in the standardised bounds.

    The pointwise quantities of the module equations,

    .. math::

        g_u = f(u)/P,\quad g_l = -f(l)/P,\quad
        h_{uu} = \tfrac{f'(u)}{f(u)} g_u - g_u^2,\quad
        h_{ll} = \tfrac{f'(l)}{f(l)} g_l - g_l^2,\quad h_{ul} = -g_u g_l ,

    computed so that nothing under- or overflows where ``F(u) - F(l)`` would and
    nothing cancels where the hazard is huge.  Rows with ``P > e^{-10}`` use
    the formulas as written (``f/P = exp(log f - log P)``, ``f'/f`` the link's
    ``dlog_pdf``); improbable rows, where ``g^2`` and ``(f'/f) g`` can cancel
    to all digits (the tails of cloglog and loglog), are rearranged.  As in
    :meth:`~ordstats.core.links.Link.log_interval`, a row with ``l <= 0`` is
    written with the reversed hazard ``r = f/F``, :math:`P = F(u) - F(l)`:

    .. math::

        g_u = r(u)\,\frac{F(u)}{P},\quad
        \frac{h_{uu}}{g_u} = (\log r)'(u) - r(u)\,\frac{F(l)}{P},\quad
        g_l = -r(l)\,\frac{F(l)}{P},\quad
        \frac{h_{ll}}{g_l} = (\log r)'(l) + r(l)\,\frac{F(u)}{P},

    and a row with ``l > 0`` with the hazard ``lambda = f/(1 - F)`` and
    :math:`P = S(l) - S(u)`, ``S = 1 - F``:

    .. math::

        g_u = \lambda(u)\,\frac{S(u)}{P},\quad
        \frac{h_{uu}}{g_u} = (\log\lambda)'(u) - \lambda(u)\,\frac{S(l)}{P},\quad
        g_l = -\lambda(l)\,\frac{S(l)}{P},\quad
        \frac{h_{ll}}{g_l} = (\log\lambda)'(l) + \lambda(l)\,\frac{S(u)}{P},

    the same quantities rearranged (``f'/f = (log r)' + r = (log lambda)' - lambda``);
    the ratios come from ``log(P / F(u)) = log(1 - exp(log F(l) - log F(u)))``
    and its survival analogue.  An infinite bound (top or bottom level)
    contributes zero derivatives.

    Attributes
    ----------
    log_prob : ndarray, shape (n,)
    upper, lower : ndarray, shape (n,)
        ``u`` and ``l`` with infinite bounds replaced by 0 (so that products
        such as ``g_u * u`` vanish there).
    d_upper, d_lower : ndarray, shape (n,)
        ``g_u``, ``g_l``.
    d2_upper, d2_cross, d2_lower : ndarray, shape (n,)
        ``h_uu``, ``h_ul``, ``h_ll``.
    """

    log_prob: FloatArray
    upper: FloatArray
    lower: FloatArray
    d_upper: FloatArray
    d_lower: FloatArray
    d2_upper: FloatArray
    d2_cross: FloatArray
    d2_lower: FloatArray

    def first_order(self) -> IntervalGradients:
        """The first-order part, as :func:`interval_gradients` gives it (no tail rows)."""
        return IntervalGradients(
            self.log_prob,
            self.upper,
            self.lower,
            self.d_upper,
            self.d_lower,
            np.zeros(0, dtype=bool),
        )


@dataclass(frozen=True)
class IntervalGradients:
    """``log P`` and its first derivatives ``g_u``, ``g_l`` (see :class:`IntervalDerivatives`).

    What a gradient needs; :func:`interval_derivatives` adds the second
    derivatives from it when a Hessian is wanted.
    """

    log_prob: FloatArray
    upper: FloatArray
    lower: FloatArray
    d_upper: FloatArray
    d_lower: FloatArray
    #: rows computed through the hazards (``P <= e^{-10}``)
    tail: npt.NDArray[np.bool_]


def interval_gradients(
    link: Link, upper: FloatArray, lower: FloatArray, log_prob: FloatArray | None = None
) -> IntervalGradients:
    """Compute ``log P``, ``g_u`` and ``g_l`` at the standardised bounds ``upper >= lower``.

    The first-order part of :func:`interval_derivatives` (same numbers), at
    about half its cost; the logistic link uses its closed forms
    (:func:`logistic_gradients`, whose ``tail`` marks the rows computed
    generally).

    Parameters
    ----------
    link : Link
    upper, lower : ndarray, shape (n,)
        ``u_i`` and ``l_i``; ``+inf`` / ``-inf`` for the top / bottom level.
    log_prob : ndarray, shape (n,), optional
        ``log{F(u) - F(l)}`` if already known.

    Returns
    -------
    IntervalGradients
    """
    upper, lower = np.broadcast_arrays(
        np.asarray(upper, dtype=float), np.asarray(lower, dtype=float)
    )
    if type(link) is Logit:
        return logistic_gradients(link, upper, lower, log_prob=log_prob)
    return _general_interval_gradients(link, upper, lower, log_prob)


def _general_interval_gradients(
    link: Link, upper: FloatArray, lower: FloatArray, log_prob: FloatArray | None
) -> IntervalGradients:
    """:func:`interval_gradients` from the link's log-densities, for every link."""
    if log_prob is None:
        log_prob = log_interval_probabilities(link, upper, lower)
    fin_u, fin_l = np.isfinite(upper), np.isfinite(lower)
    u = np.where(fin_u, upper, 0.0)
    l = np.where(fin_l, lower, 0.0)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        # the direct formulas (exp(-inf) = 0 for a missing bound)
        g_u = np.exp(np.where(fin_u, link.log_pdf(u) - log_prob, -np.inf))
        g_l = -np.exp(np.where(fin_l, link.log_pdf(l) - log_prob, -np.inf))
        # improbable rows: through the hazards, where the direct ones cancel
        tail = ~(log_prob > _TAIL_LOG_PROB)
        if tail.any():
            g_u[tail], g_l[tail], *_ = _tail_derivatives(link, upper[tail], lower[tail])
    g_u = np.where(fin_u, g_u, 0.0)
    g_l = np.where(fin_l, g_l, 0.0)
    return IntervalGradients(log_prob, u, l, g_u, g_l, tail)


def interval_derivatives(
    link: Link,
    upper: FloatArray,
    lower: FloatArray,
    log_prob: FloatArray | None = None,
    gradients: IntervalGradients | None = None,
) -> IntervalDerivatives:
    """Compute :class:`IntervalDerivatives` at the standardised bounds ``upper >= lower``.

    The logistic link uses its closed forms (:func:`logistic_derivatives`),
    every other link the general formulas of :class:`IntervalDerivatives`.

    Parameters
    ----------
    link : Link
        At fixed parameter (a flexible link at its current ``lambda``).
    upper, lower : ndarray, shape (n,)
        ``u_i`` and ``l_i``; ``+inf`` / ``-inf`` for the top / bottom level.
    log_prob : ndarray, shape (n,), optional
        ``log{F(u) - F(l)}`` if already known (:func:`log_interval_probabilities`).
    gradients : IntervalGradients, optional
        :func:`interval_gradients` at the same bounds if already known.

    Returns
    -------
    IntervalDerivatives
    """
    upper, lower = np.broadcast_arrays(
        np.asarray(upper, dtype=float), np.asarray(lower, dtype=float)
    )
    if type(link) is Logit:
        return logistic_derivatives(link, upper, lower, log_prob=log_prob)
    return _general_interval_derivatives(link, upper, lower, log_prob, gradients)


def _general_interval_derivatives(
    link: Link,
    upper: FloatArray,
    lower: FloatArray,
    log_prob: FloatArray | None = None,
    gradients: IntervalGradients | None = None,
) -> IntervalDerivatives:
    """:func:`interval_derivatives` from the link's log-densities, for every link."""
    first = (
        _general_interval_gradients(link, upper, lower, log_prob)
        if gradients is None
        else gradients
    )
    u, l, g_u, g_l = first.upper, first.lower, first.d_upper, first.d_lower
    fin_u, fin_l = np.isfinite(upper), np.isfinite(lower)
    with np.errstate(over="ignore", invalid="ignore"):
        h_uu = _vanishing_product(g_u, link.dlog_pdf(u)) - g_u * g_u
        h_ll = _vanishing_product(g_l, link.dlog_pdf(l)) - g_l * g_l
        if first.tail.any():
            tail = first.tail
            _, _, h_uu[tail], h_ll[tail] = _tail_derivatives(link, upper[tail], lower[tail])
    h_uu = np.where(fin_u, h_uu, 0.0)
    h_ll = np.where(fin_l, h_ll, 0.0)
    h_ul = -g_u * g_l
    return IntervalDerivatives(first.log_prob, u, l, g_u, g_l, h_uu, h_ul, h_ll)


_TAIL_LOG_PROB = -10.0


def _vanishing_product(g: FloatArray, factor: FloatArray) -> FloatArray:
    r"""``g * factor`` for ``g = f/P`` and a slope of ``log f``: ``0`` where ``g`` is ``0``.

    Far in a double-exponential tail (cloglog above ``x ~ 710``, loglog below
    ``-710``, where separated data send the bounds) ``f'/f = 1 - e^x``
    overflows to ``-inf`` while ``g`` underflows to ``0``, and the product is
    ``NaN``.  In logs, ``log|g f'/f| = log g + log|f'/f| = (x - e^x - log P) +
    x + O(1)``: the double exponential wins, so the product is ``0`` wherever
    ``g`` underflows (its magnitude is below ``e^{-745}`` times a slope that
    grows only like ``e^{|x|}``).
    """
    with np.errstate(invalid="ignore", over="ignore"):
        return np.where(g == 0.0, 0.0, g * factor)


@dataclass(frozen=True)
class LogisticHalves:
    """``F`` and ``S = 1 - F`` of the logistic link at both bounds, and ``E = 1 - e^{l - u}``.

    With ``t = e^{-u}``, ``F(u) = 1 / (1 + t)`` and ``S(u) = t F(u)``; with
    ``t = e^{l}``, ``S(l) = 1 / (1 + t)`` and ``F(l) = t S(l)``: one ``exp``
    per bound, no cancellation, and the infinite bounds of the end levels give
    ``S(u) = 0`` and ``F(l) = 0`` exactly.  A bound beyond about 709 units on
    its far side overflows ``t`` (``NaN`` here); :func:`logistic_derivatives`
    hands those rows to the general formulas.
    """

    F_u: FloatArray
    S_u: FloatArray
    F_l: FloatArray
    S_l: FloatArray
    width: FloatArray
    #: ``P = F(u) S(l) E``, the interval probability
    prob: FloatArray

    @classmethod
    def at(cls, upper: FloatArray, lower: FloatArray) -> LogisticHalves:
        """The halves at standardised bounds ``upper >= lower`` (``+-inf`` allowed)."""
        with np.errstate(over="ignore", invalid="ignore"):
            t_u = np.negative(upper)
            np.exp(t_u, out=t_u)
            F_u = np.add(t_u, 1.0)
            np.divide(1.0, F_u, out=F_u)
            S_u = np.multiply(t_u, F_u, out=t_u)
            t_l = np.exp(lower)
            S_l = np.add(t_l, 1.0)
            np.divide(1.0, S_l, out=S_l)
            F_l = np.multiply(t_l, S_l, out=t_l)
            width = np.subtract(lower, upper)
            np.expm1(width, out=width)
            np.negative(width, out=width)
            prob = F_u * S_l
            prob *= width
        return cls(F_u, S_u, F_l, S_l, width, prob)

    def log_prob(self, link: Link, upper: FloatArray, lower: FloatArray) -> FloatArray:
        """``log P``; rows where ``P`` underflows (or is ``NaN``) through ``link.log_interval``.

        ``log(P)`` where ``P <= 1/2``, ``log1p(-(F(l) + S(u)))`` above, since
        ``1 - P = F(l) + S(u)``: accurate to the last digit where ``P`` is
        near 1 and ``log P`` near 0.
        """
        with np.errstate(divide="ignore", invalid="ignore"):
            rest = self.F_l + self.S_u
            near_one = rest < 0.5
            np.negative(rest, out=rest)
            np.log1p(rest, out=rest)
            log_p = np.log(self.prob)
            np.copyto(log_p, rest, where=near_one)
        bad = ~(self.prob > LOGISTIC_SAFE)
        if bad.any():
            log_p[bad] = link.log_interval(upper[bad], lower[bad])
        return log_p


def logistic_gradients(
    link: Link,
    upper: FloatArray,
    lower: FloatArray,
    halves: LogisticHalves | None = None,
    log_prob: FloatArray | None = None,
) -> IntervalGradients:
    r"""The first-order part of :func:`logistic_derivatives`: ``log P``, ``g_u`` and ``g_l``.

    ``g_u = S(u) / (S(l) E)`` and ``g_l = -F(l) / (F(u) E)`` (:class:`LogisticHalves`),
    what a gradient needs; :func:`logistic_derivatives` adds the second
    derivatives from them when a Hessian is wanted.  Rows where ``P``
    underflows or a bound overflows its ``exp`` (``P`` not above
    :data:`LOGISTIC_SAFE`, which bounds both ratios by ``1 / LOGISTIC_SAFE``)
    use the general formulas; ``tail`` marks them.

    Parameters
    ----------
    link : Link
        The logistic link (used for the rows computed generally).
    upper, lower : ndarray, shape (n,)
        Standardised bounds; ``+inf`` / ``-inf`` for the top / bottom level.
    halves : LogisticHalves, optional
        :meth:`LogisticHalves.at` the same bounds, if already computed.
    log_prob : ndarray, optional
        ``log P`` if already known.

    Returns
    -------
    IntervalGradients
    """
    h = LogisticHalves.at(upper, lower) if halves is None else halves
    if log_prob is None:
        log_prob = h.log_prob(link, upper, lower)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        g_u = np.multiply(h.S_l, h.width)
        np.divide(h.S_u, g_u, out=g_u)
        g_l = np.multiply(h.F_u, h.width)
        np.divide(h.F_l, g_l, out=g_l)
        np.negative(g_l, out=g_l)
    general = ~(h.prob > LOGISTIC_SAFE)
    if general.any():
        rows = _general_interval_gradients(link, upper[general], lower[general], log_prob[general])
        g_u[general], g_l[general] = rows.d_upper, rows.d_lower
    return IntervalGradients(
        log_prob,
        np.where(np.isfinite(upper), upper, 0.0),
        np.where(np.isfinite(lower), lower, 0.0),
        g_u,
        g_l,
        general,
    )


def logistic_derivatives(
    link: Link,
    upper: FloatArray,
    lower: FloatArray,
    halves: LogisticHalves | None = None,
    log_prob: FloatArray | None = None,
    gradients: IntervalGradients | None = None,
) -> IntervalDerivatives:
    r""":class:`IntervalDerivatives` of the logistic link in closed form.

    From ``P = F(u) S(l) E`` (:class:`LogisticHalves`), ``f = F S`` and
    ``f'/f = S - F``, with ``r = e^{l - u} = 1 - E``:

    .. math::

        g_u = \frac{S(u)}{S(l) E},\quad -g_l = G = \frac{F(l)}{F(u) E},\quad
        h_{uu} = -g_u\{F(u) + g_u (F(l) + S(l) r)\},\quad
        h_{ll} = -G\{S(l) + G (S(u) + F(u) r)\},

    the module's ``h = (f'/f) g - g^2`` rearranged into sums of positive
    terms, so that nothing cancels in either tail (where ``g ~ f'/f``).
    The first derivatives come from :func:`logistic_gradients`.  Rows where
    ``P`` underflows, a bound overflows its ``exp`` or a second derivative
    overflows go through :func:`interval_derivatives` with the general
    formulas (the first derivatives of the last kind keep their closed forms,
    which are finite there).

    Parameters
    ----------
    link : Link
        The logistic link (used for the rows computed generally).
    upper, lower : ndarray, shape (n,)
        Standardised bounds; ``+inf`` / ``-inf`` for the top / bottom level.
    halves : LogisticHalves, optional
        :meth:`LogisticHalves.at` the same bounds, if already computed.
    log_prob : ndarray, optional
        ``log P`` if already known.
    gradients : IntervalGradients, optional
        :func:`logistic_gradients` at the same bounds, if already computed.

    Returns
    -------
    IntervalDerivatives
    """
    h = LogisticHalves.at(upper, lower) if halves is None else halves
    first = logistic_gradients(link, upper, lower, h, log_prob) if gradients is None else gradients
    g_u, g_l = first.d_upper, first.d_lower  # g_l = -G
    with np.errstate(invalid="ignore", over="ignore"):
        r = np.subtract(1.0, h.width)
        h_uu = np.multiply(h.S_l, r)
        h_uu += h.F_l
        h_uu *= g_u
        h_uu += h.F_u
        h_uu *= g_u
        np.negative(h_uu, out=h_uu)
        # -G {S(l) + G (S(u) + F(u) r)} written with g_l = -G (sign changes are exact)
        h_ll = np.multiply(h.F_u, r, out=r)
        h_ll += h.S_u
        h_ll *= g_l
        h_ll -= h.S_l
        h_ll *= g_l
        np.negative(h_ll, out=h_ll)
        h_ul = np.multiply(g_u, g_l)
        np.negative(h_ul, out=h_ul)
        # both second derivatives are <= 0: their sum is finite exactly when both are
        finite = bool(np.isfinite(np.add(h_uu, h_ll)).all())
    general = first.tail
    if not finite:
        general = general | ~(np.isfinite(h_uu) & np.isfinite(h_ll))
    if general.any():
        rows = _general_interval_derivatives(
            link, upper[general], lower[general], first.log_prob[general]
        )
        h_uu[general], h_ul[general], h_ll[general] = rows.d2_upper, rows.d2_cross, rows.d2_lower
    return IntervalDerivatives(first.log_prob, first.upper, first.lower, g_u, g_l, h_uu, h_ul, h_ll)


#: Smallest interval probability the closed-form logistic derivatives are used for.
LOGISTIC_SAFE = 1e-250


def _tail_derivatives(
    link: Link, upper: FloatArray, lower: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """``g_u, g_l, h_uu, h_ll`` through the (reversed) hazards (class docstring)."""
    out = tuple(np.zeros(upper.shape) for _ in range(4))
    left = lower <= 0
    for rows, terms in ((left, link.log_rhazard_terms), (~left, link.log_hazard_terms)):
        if not rows.any():
            continue
        # log F or log(1 - F) of the bounds, log (reversed) hazard, its derivative
        t_u, log_rate_u, slope_u = terms(upper[rows])
        t_l, log_rate_l, slope_l = terms(lower[rows])
        d = t_u - t_l if rows is left else t_l - t_u  # log(big / small) >= 0
        log_p_big = log1mexp(d)  # log(P / big)
        big, small = np.exp(-log_p_big), np.exp(-d - log_p_big)
        # left: F(u)/P and F(l)/P; right: S(u)/P and S(l)/P (S = 1 - F)
        at_u, at_l = (big, small) if rows is left else (small, big)
        rate_u, rate_l = np.exp(log_rate_u), np.exp(log_rate_l)
        g_u, g_l = rate_u * at_u, -rate_l * at_l
        h_uu = _vanishing_product(g_u, slope_u - rate_u * at_l)
        h_ll = _vanishing_product(g_l, slope_l + rate_l * at_u)
        for array, value in zip(out, (g_u, g_l, h_uu, h_ll), strict=True):
            array[rows] = value
    return out  # type: ignore[return-value]


@dataclass(frozen=True)
class CumulativeRowDerivatives(RowDerivatives):
    r"""Row derivatives of the cumulative model in the location and the cut-points.

    With :math:`u_i = (\theta_{y_i} - \eta_i)/s_i` and
    :math:`l_i = (\theta_{y_i - 1} - \eta_i)/s_i` (module equations, at fixed
    scale ``s_i`` and link parameter):

    .. math::

        \frac{\partial \ell_i}{\partial \eta_i} = -\frac{g_u + g_l}{s_i},\qquad
        \frac{\partial^2 \ell_i}{\partial \eta_i^2} =
            \frac{h_{uu} + 2 h_{ul} + h_{ll}}{s_i^2},

    (``gradient`` and ``curvature``, ``m = 1``) and, in the two cut-points of
    the observed level :math:`(\theta_{y_i}, \theta_{y_i - 1})`,

    .. math::

        \nabla_\theta \ell_i = \frac{1}{s_i}(g_u, g_l),\qquad
        \nabla^2_\theta \ell_i = \frac{1}{s_i^2}
            \begin{pmatrix} h_{uu} & h_{ul} \\ h_{ul} & h_{ll} \end{pmatrix}.

    ``log P`` depends on ``theta - eta`` only, so the mixed derivatives
    :math:`\partial^2 \ell_i / \partial \eta_i \partial \theta` are minus the
    row sums of ``cutpoint_hessian``.  A bound that does not exist (the top
    level has no ``theta_{y_i}``, the bottom one no ``theta_{y_i - 1}``) has
    zero derivatives.

    Attributes
    ----------
    cutpoint_gradient : ndarray, shape (n, 2)
        Derivatives in ``(theta_{y_i}, theta_{y_i - 1})``.
    cutpoint_hessian : ndarray, shape (n, 2, 2)
    """

    cutpoint_gradient: FloatArray
    cutpoint_hessian: FloatArray


def row_derivatives(
    link: Link,
    eta: FloatArray,
    y: IntArray,
    cutpoints: FloatArray,
    scale: FloatArray | None = None,
) -> CumulativeRowDerivatives:
    """Per-row ``log P(Y_i = y_i)`` and derivatives in the location and the cut-points.

    Parameters
    ----------
    link : Link
        At fixed parameter.
    eta : ndarray, shape (n,)
        Location ``x_i'beta + o_i``.
    y : ndarray of int, shape (n,)
        Levels ``0, ..., K - 1``.
    cutpoints : ndarray, shape (K - 1,) or (n, K - 1)
        Thresholds ``theta`` (per row with nominal effects).
    scale : ndarray, shape (n,), optional
        ``s_i = exp(z_i'zeta)`` (default 1).

    Returns
    -------
    CumulativeRowDerivatives
    """
    eta = np.asarray(eta, dtype=float)
    y = np.asarray(y, dtype=np.intp)
    n = eta.shape[0]
    theta = np.broadcast_to(np.asarray(cutpoints, dtype=float), (n, np.shape(cutpoints)[-1]))
    bounds = np.column_stack([np.full(n, -np.inf), theta, np.full(n, np.inf)])
    s = np.ones(n) if scale is None else np.asarray(scale, dtype=float)
    rows = np.arange(n)
    with np.errstate(invalid="ignore", over="ignore"):
        upper = (bounds[rows, y + 1] - eta) / s
        lower = (bounds[rows, y] - eta) / s
    d = interval_derivatives(link, upper, lower)
    d_eta = -(d.d_upper + d.d_lower) / s
    d2_eta = (d.d2_upper + 2.0 * d.d2_cross + d.d2_lower) / s**2
    cut_hessian = (
        np.stack(
            [np.column_stack([d.d2_upper, d.d2_cross]), np.column_stack([d.d2_cross, d.d2_lower])],
            axis=1,
        )
        / (s**2)[:, None, None]
    )
    return CumulativeRowDerivatives(
        log_prob=d.log_prob,
        gradient=d_eta[:, None],
        curvature=DiagonalCurvature(d2_eta[:, None]),
        cutpoint_gradient=np.column_stack([d.d_upper, d.d_lower]) / s[:, None],
        cutpoint_hessian=cut_hessian,
    )


class Evaluation:
    """The negative log-likelihood at one parameter vector, with lazy derivatives.

    ``nll`` is computed on construction; ``gradient`` and ``hessian`` (of the
    *negative* log-likelihood) only when first used, re-using the pointwise terms.
    The Newton solver only needs this interface.

    Parameters
    ----------
    problem : CLMProblem
    params : ndarray, shape (n_params,)
    """

    def __init__(self, problem: CLMProblem, params: FloatArray) -> None:
        self.problem = problem
        self.params = np.asarray(params, dtype=float)
        data, lay = problem.data, problem.layout
        self.link = data.link
        if lay.n_lambda:
            lam = float(self.params[lay.lam][0])
            if not data.link.in_domain(lam):  # type: ignore[attr-defined]
                self.nll = np.inf
                return
            self.link = data.link.with_lambda(lam)  # type: ignore[attr-defined]
        a = self.params[lay.thresholds]
        xb = data.X @ self.params[lay.beta]
        if problem.has_offset:
            xb += data.offset
        #: ``exp(Z zeta + q)``; ``None`` without scale effects (:attr:`scale` is then ones)
        self._scale = row_scales(data, self.params[lay.zeta])
        self.upper, self.lower = self._bounds(a, xb)
        #: the logistic link's closed forms (:func:`logistic_derivatives`)
        self._is_logistic = type(self.link) is Logit
        self._halves = LogisticHalves.at(self.upper, self.lower) if self._is_logistic else None
        if self._halves is not None:
            self.log_prob = self._halves.log_prob(self.link, self.upper, self.lower)
        else:
            self.log_prob = log_interval_probabilities(self.link, self.upper, self.lower)
        total = float(data.weights @ self.log_prob)
        self.nll = -total if np.isfinite(total) else np.inf

    def _bounds(self, a: FloatArray, xb: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Each row's standardised bounds ``(theta_y - x'b) / s``, ``+-inf`` at the ends."""
        problem = self.problem
        cuts = problem.level_cutpoints(a)
        if (
            cuts is not None
            and problem.upper_shift is None
            and self._scale is None
            and np.isfinite(xb).all()
        ):
            # one cut-point per level, +-inf for the open ends, gathered by level
            upper_cuts, lower_cuts = cuts
            y = problem.data.y
            # codes are 0..K-1, one per cut-point: "clip" skips the bounds checks
            upper, lower = np.take(upper_cuts, y, mode="clip"), np.take(lower_cuts, y, mode="clip")
            return np.subtract(upper, xb, out=upper), np.subtract(lower, xb, out=lower)
        theta_upper, theta_lower = problem.cutpoints(a)
        if problem.upper_shift is not None and problem.lower_shift is not None:  # fixed
            theta_upper = theta_upper + problem.upper_shift
            theta_lower = theta_lower + problem.lower_shift
        with np.errstate(invalid="ignore", over="ignore"):
            upper = np.where(problem.has_upper, (theta_upper - xb) / self.scale, np.inf)
            lower = np.where(problem.has_lower, (theta_lower - xb) / self.scale, -np.inf)
        return upper, lower

    @cached_property
    def scale(self) -> FloatArray:
        """Each row's scale ``s_i = exp(z_i'zeta)``: ones without scale effects."""
        return self._scale if self._scale is not None else np.ones(self.problem.data.n_obs)

    def _row_weights(self, power: int) -> FloatArray | None:
        """``weights / scale^power``, or ``None`` when every weight and scale is one."""
        if self.problem.unit_weights and self._scale is None:
            return None
        return np.asarray(self.problem.data.weights / self.scale**power)

    @property
    def fitted(self) -> FloatArray:
        """Probability of each observation's own category."""
        return np.exp(self.log_prob)

    def release_row_terms(self) -> None:
        """Drop the per-row derivative terms kept for the gradient and Hessian.

        ``nll``, the bounds, ``log_prob`` and an already computed gradient and
        Hessian stay; the row terms are computed again if anything asks for
        them (scores for a sandwich covariance, the ``lambda`` terms).  A fit
        calls this on its final evaluation, which its results keep.
        """
        self._halves = None
        for name in ("_first_order", "_pointwise", "_lambda_terms"):
            self.__dict__.pop(name, None)

    @cached_property
    def _first_order(self) -> IntervalGradients:
        """``u, l, g_u, g_l`` (see :func:`interval_gradients`)."""
        if self._is_logistic:  # the closed forms, second derivatives only if asked for
            return logistic_gradients(
                self.link, self.upper, self.lower, self._halves, self.log_prob
            )
        return interval_gradients(self.link, self.upper, self.lower, self.log_prob)

    @cached_property
    def _pointwise(self) -> tuple[FloatArray, ...]:
        """``u, l, g_u, g_l, h_uu, h_ul, h_ll`` (see :func:`interval_derivatives`)."""
        if self._is_logistic:
            d = logistic_derivatives(
                self.link,
                self.upper,
                self.lower,
                self._halves,
                self.log_prob,
                gradients=self._first_order,
            )
        else:
            d = interval_derivatives(
                self.link, self.upper, self.lower, self.log_prob, gradients=self._first_order
            )
        return d.upper, d.lower, d.d_upper, d.d_lower, d.d2_upper, d.d2_cross, d.d2_lower

    @cached_property
    def gradient(self) -> FloatArray:
        """Gradient of the negative log-likelihood, shape ``(n_params,)``."""
        pb, data, lay = self.problem, self.problem.data, self.problem.layout
        first = self._first_order
        u, l, g_u, g_l = first.upper, first.lower, first.d_upper, first.d_lower
        w_s = self._row_weights(1)
        s_u, s_l = (g_u, g_l) if w_s is None else (w_s * g_u, w_s * g_l)
        grad = np.empty(lay.n_params)
        levels = pb.level_designs
        if levels is not None:
            J1, J2 = levels
            grad[lay.thresholds] = J1.T @ pb.level_sums(s_u) + J2.T @ pb.level_sums(s_l)
        elif pb.one_threshold_per_cut:  # J1 = [I; 0], J2 = [0; I]
            grad[lay.thresholds] = pb.level_sums(s_u)[:-1] + pb.level_sums(s_l)[1:]
        else:
            grad[lay.thresholds] = pb.T_upper.T @ s_u + pb.T_lower.T @ s_l
        grad[lay.beta] = -np.dot(data.X.T, s_u + s_l)  # GIL released (see level_row_sums)
        if lay.n_zeta:
            grad[lay.zeta] = -np.dot(data.scale.T, data.weights * (g_u * u + g_l * l))
        if lay.n_lambda:
            grad[lay.lam] = data.weights @ self._lambda_terms[0]
        return -grad

    @cached_property
    def hessian(self) -> FloatArray:
        """Hessian of the negative log-likelihood, shape ``(n_params, n_params)``."""
        lay = self.problem.layout
        threshold_block, border = self._hessian_parts
        th, rest = lay.thresholds, slice(lay.n_threshold_block, lay.n_params)
        hess = np.empty((lay.n_params, lay.n_params))
        hess[th, th] = (
            threshold_block.toarray() if sp.issparse(threshold_block) else threshold_block
        )
        hess[:, rest] = border
        hess[rest, th] = border[th].T
        return hess

    @cached_property
    def _hessian_parts(self) -> tuple[sp.csr_array | FloatArray, FloatArray]:
        """:attr:`hessian_blocks` with a dense threshold block when few levels allow it."""
        pb, data, lay = self.problem, self.problem.data, self.problem.layout
        u, l, g_u, g_l, h_uu, h_ul, h_ll = self._pointwise
        w_s2 = self._row_weights(2)
        d_uu, d_ul, d_ll = (
            (h_uu, h_ul, h_ll) if w_s2 is None else (w_s2 * h_uu, w_s2 * h_ul, w_s2 * h_ll)
        )
        X = data.X
        # columns of the log-likelihood Hessian for beta, zeta, lambda; rows of all params
        border = np.empty((lay.n_params, lay.n_params - lay.n_threshold_block))
        th, be = lay.thresholds, lay.beta
        loc = slice(0, lay.n_beta)
        levels = pb.level_designs
        if levels is not None:  # dense sums over the levels (same numbers, no sparse overhead)
            J1, J2 = levels
            c_uu, c_ul, c_ll = (pb.level_sums(d) for d in (d_uu, d_ul, d_ll))
            cross = J1.T @ (c_ul[:, None] * J2)
            threshold_block = (
                J1.T @ (c_uu[:, None] * J1) + cross + cross.T + J2.T @ (c_ll[:, None] * J2)
            )
            upper_sums, lower_sums, gram = pb.location_blocks(d_uu + d_ul, d_ul + d_ll)
            border[th, loc] = -(J1.T @ upper_sums + J2.T @ lower_sums)
            # minus the location block is X' diag(c) X with c >= 0 for log-concave F
            border[be, loc] = -gram
        elif pb.one_threshold_per_cut:  # the same sums with J1 = [I; 0], J2 = [0; I]
            c_uu, c_ul, c_ll = (pb.level_sums(d) for d in (d_uu, d_ul, d_ll))
            threshold_block = sp.diags_array(
                [c_ul[1:-1], c_uu[:-1] + c_ll[1:], c_ul[1:-1]], offsets=[-1, 0, 1], format="csr"
            )
            c_upper, c_lower = d_uu + d_ul, d_ul + d_ll
            for col in range(X.shape[1]):
                upper_sums = pb.level_sums(c_upper * X[:, col])
                lower_sums = pb.level_sums(c_lower * X[:, col])
                border[th, col] = -(upper_sums[:-1] + lower_sums[1:])
            border[be, loc] = -weighted_gram(X, -(c_upper + c_lower))
        else:
            T1, T2 = pb.T_upper, pb.T_lower
            cross_ul = pb.scaled_upper(d_ul).T @ T2
            threshold_block = (
                pb.scaled_upper(d_uu).T @ T1 + cross_ul + cross_ul.T + pb.scaled_lower(d_ll).T @ T2
            )
            border[th, loc] = -(
                pb.scaled_upper(d_uu + d_ul).T @ X + pb.scaled_lower(d_ul + d_ll).T @ X
            )
            border[be, loc] = -weighted_gram(X, -(d_uu + 2.0 * d_ul + d_ll))
        if lay.n_zeta:
            self._fill_scale_blocks(border, u, l, g_u, g_l, h_uu, h_ul, h_ll)
        if lay.n_lambda:
            self._fill_lambda_blocks(border, u, l)
        return -threshold_block, -border

    @cached_property
    def hessian_blocks(self) -> tuple[sp.csr_array, FloatArray]:
        """The Hessian of the negative log-likelihood in two blocks, never dense in ``q``.

        Returns the sparse threshold block (parameters in
        :attr:`ParamLayout.thresholds`) and the dense columns of all other
        parameters (``beta``, ``zeta``, ``lambda``), shape ``(n_params, n_params - q)``. For
        flexible thresholds without nominal effects the threshold block is
        tridiagonal (see :mod:`ordstats.families.cumulative.banded`).
        """
        threshold_block, border = self._hessian_parts
        return sp.csr_array(threshold_block), border

    @cached_property
    def _lambda_terms(self) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        """Derivatives of ``log P_i`` involving the link parameter ``lambda``.

        ``k = d log P / d lambda = (F_lam(u) - F_lam(l)) / P``;
        ``d2 log P / d lambda2 = (F_lamlam(u) - F_lamlam(l)) / P - k^2``;
        ``d2 log P / du dlambda = g_u (s(u) - k)`` and likewise for ``l``, with
        ``s = d log f / d lambda``.
        """
        link = self.link
        first = self._first_order
        u, l, g_u, g_l = first.upper, first.lower, first.d_upper, first.d_lower
        fin_u, fin_l = np.isfinite(self.upper), np.isfinite(self.lower)
        # F_lam and F_lamlam divided by P inside the links: finite where both underflow
        log_p = self.log_prob
        d_u = np.where(fin_u, link.dcdf_dlam(u, log_p), 0.0)  # type: ignore[attr-defined]
        d_l = np.where(fin_l, link.dcdf_dlam(l, log_p), 0.0)  # type: ignore[attr-defined]
        k = d_u - d_l
        dd_u = np.where(fin_u, link.d2cdf_dlam2(u, log_p), 0.0)  # type: ignore[attr-defined]
        dd_l = np.where(fin_l, link.d2cdf_dlam2(l, log_p), 0.0)  # type: ignore[attr-defined]
        k2 = dd_u - dd_l - k * k
        c_u = np.where(fin_u, g_u * (link.dlog_pdf_dlam(u) - k), 0.0)  # type: ignore[attr-defined]
        c_l = np.where(fin_l, g_l * (link.dlog_pdf_dlam(l) - k), 0.0)  # type: ignore[attr-defined]
        return k, k2, c_u, c_l

    def _fill_lambda_blocks(self, border: FloatArray, u: FloatArray, l: FloatArray) -> None:
        """Fill the log-likelihood Hessian row and column of ``lambda``.

        ``border`` holds the columns of ``(beta, zeta, lambda)``.
        """
        pb, data, lay = self.problem, self.problem.data, self.problem.layout
        _, k2, c_u, c_l = self._lambda_terms
        w = data.weights
        th, be, ze, la = lay.thresholds, lay.beta, lay.zeta, lay.lam
        row = np.empty(lay.n_params)
        row[th] = pb.T_upper.T @ (w * c_u / self.scale) + pb.T_lower.T @ (w * c_l / self.scale)
        row[be] = -(data.X.T @ (w * (c_u + c_l) / self.scale))
        if lay.n_zeta:
            row[ze] = -(data.scale.T @ (w * (c_u * u + c_l * l)))
        row[la] = w @ k2
        first = lay.n_threshold_block
        border[:, la.start - first : la.stop - first] = row[:, None]
        border[la, :] = row[first:]

    def _fill_scale_blocks(
        self,
        border: FloatArray,
        u: FloatArray,
        l: FloatArray,
        g_u: FloatArray,
        g_l: FloatArray,
        h_uu: FloatArray,
        h_ul: FloatArray,
        h_ll: FloatArray,
    ) -> None:
        """Fill the log-likelihood Hessian blocks that involve ``zeta``.

        With ``du/dzeta = -u z``: ``d2l/dphi dzeta = (B1' a1 + B2' a2) Z`` where
        ``a1 = -(h_uu u + h_ul l + g_u)/s`` and ``a2 = -(h_ul u + h_ll l + g_l)/s``,
        and ``d2l/dzeta2 = Z' diag(h_uu u^2 + 2 h_ul u l + h_ll l^2 + g_u u + g_l l) Z``.
        ``border`` holds the columns of ``(beta, zeta, lambda)``.
        """
        pb, data, lay = self.problem, self.problem.data, self.problem.layout
        Z, w = data.scale, data.weights
        a1 = -w * (h_uu * u + h_ul * l + g_u) / self.scale
        a2 = -w * (h_ul * u + h_ll * l + g_l) / self.scale
        th, be, ze = lay.thresholds, lay.beta, lay.zeta
        loc, sca = slice(0, lay.n_beta), slice(lay.n_beta, lay.n_beta + lay.n_zeta)
        border[th, sca] = pb.scaled_upper(a1).T @ Z + pb.scaled_lower(a2).T @ Z
        border[be, sca] = -weighted_gram(data.X, a1 + a2, Z)
        border[ze, loc] = border[be, sca].T
        c_z = h_uu * u * u + 2.0 * h_ul * u * l + h_ll * l * l + g_u * u + g_l * l
        border[ze, sca] = weighted_gram(Z, w * c_z)

    def observation_scores(self) -> FloatArray:
        """Per-row gradients of ``log P_i`` (unweighted), shape ``(n, n_params)``.

        The sum of ``weights[:, None] * scores`` is minus :attr:`gradient`; these
        are the ingredients of sandwich covariances.
        """
        pb, data, lay = self.problem, self.problem.data, self.problem.layout
        first = self._first_order
        u, l, g_u, g_l = first.upper, first.lower, first.d_upper, first.d_lower
        scores = np.empty((data.n_obs, lay.n_params))
        scores[:, lay.thresholds] = (
            pb.scaled_upper(g_u / self.scale) + pb.scaled_lower(g_l / self.scale)
        ).toarray()
        scores[:, lay.beta] = -data.X * ((g_u + g_l) / self.scale)[:, None]
        if lay.n_zeta:
            scores[:, lay.zeta] = -data.scale * (g_u * u + g_l * l)[:, None]
        if lay.n_lambda:
            scores[:, lay.lam] = self._lambda_terms[0][:, None]
        return scores


def evaluate(problem: CLMProblem, params: FloatArray) -> Evaluation:
    """Evaluate the negative log-likelihood of ``problem`` at ``params``.

    Parameters
    ----------
    problem : CLMProblem
    params : ndarray, shape (n_params,)

    Returns
    -------
    Evaluation
        ``nll`` now; ``gradient`` and ``hessian`` on first access.
    """
    return Evaluation(problem, params)
