r"""Quantiles, means and exceedance probabilities of a fit with numeric response levels.

A cumulative link model with one threshold per distinct value of a continuous
response (``many_levels=True``; Harrell's cumulative probability models, R's
``rms::orm``) gives each row a whole conditional distribution: with the sorted
level values :math:`v_1 < \dots < v_K`, the cut-points :math:`\theta_j` and the
standardised cut-points :math:`u_j = (\theta_j - \eta)/s`,

.. math:: P(Y \le v_j) = F(u_j), \qquad S_j = P(Y \ge v_{j+1}) = 1 - F(u_j),
          \quad j = 1, \dots, K - 1 .

Everything here is written on the cut-points and the level values, so it
applies to any fit that provides them (a censored fit too).

* **Exceedance** :math:`P(Y \ge y)` is the step function :math:`S_j` for
  :math:`v_j < y \le v_{j+1}`, 1 at or below :math:`v_1` and 0 above
  :math:`v_K` (``rms::ExProb``).  Its interval is formed on the link scale,
  :math:`1 - F(u_j \pm z\,\mathrm{se}(u_j))`, as ``ExProb`` forms it (there
  ``se`` is that of :math:`\alpha_j + x'\beta`, the same number).
* **Mean** :math:`\sum_j v_j P(Y = v_j) = v_1 + \sum_j (v_{j+1} - v_j) S_j`
  (``rms::Mean``), with the delta-method interval :math:`m \pm z\,\mathrm{se}`.
* **Quantile** by ``rms::Quantile``'s interpolation: the knots
  :math:`(1, v_1)`, :math:`(S_j, y_j)`, :math:`(0, v_K)` with
  :math:`y_j = (1 - w_j) v_j + w_j v_{j+1}` and
  :math:`w_j = (S_j - S_1)/(S_{K-1} - S_1)` are joined by straight lines in
  their order and read at :math:`S = 1 - q`.  Knots with equal :math:`S` (a run
  of :math:`S_j` rounded to the same number) are a vertical step there, the
  limit as they separate; R's ``approx`` merges them into one at the mean of
  their :math:`y` instead, which only rounding makes differ.  Its interval, as
  ``Quantile`` forms it, reads the same curve with the knots moved to the
  pointwise link-scale limits of :math:`S_j`; ``interval="delta"`` gives
  :math:`Q \pm z\,\mathrm{se}` instead.  The standard error is the delta
  method's, from the derivative of the piecewise-linear curve in the
  :math:`S_j` (which ``rms`` does not report).  Where every :math:`S_j` is
  exactly 1 (or 0), as at a linear predictor so extreme that they round to it,
  the row is a point mass at :math:`v_K` (:math:`v_1`): every quantile, and
  its limits, is that value with standard error 0, the limit of the curve as
  the linear predictor grows (a limit whose moved knots are all 1, or 0, is
  likewise :math:`v_K`, or :math:`v_1`).  ``rms::Quantile`` there gets 0/0 weights,
  ``approx`` drops those knots and reads the line from :math:`(1, v_1)` to
  :math:`(0, v_K)`, a median between :math:`v_1` and :math:`v_K` for a row
  whose mean is :math:`v_K`.

Gradients: :math:`\nabla F(u_j) = f(u_j)\,\nabla u_j` (plus
:math:`\partial F/\partial\lambda` for a flexible link), with
:math:`\nabla u_j = (J_j/s,\; -x/s,\; -u_j z)`.  Variances are quadratic forms
in the covariance of the estimates; for a many-levels fit (banded Hessian) they
are solved through its banded factor, never forming the ``K x K`` covariance.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ordstats._typing import FloatArray, IntArray
from ordstats.core.links import Link
from ordstats.data.prediction import refuse_offset_values, tables_of_fitted_rows
from ordstats.errors import OrdstatsError, SpecificationError, is_real_number
from ordstats.families.cumulative.banded import BandedCovariance
from ordstats.families.problem import row_scales
from ordstats.results.arguments import normal_quantile
from ordstats.results.persistence import rows_removed_error
from ordstats.results.prediction_se import warn_rank_deficient
from ordstats.results.state import FittedState
from ordstats.results.values import Covariance

__all__ = [
    "ContinuousQuantityMethods",
    "CutDistribution",
    "exceedance_cut",
    "interpolated_quantiles",
    "numeric_level_values",
]

_INTERVALS = ("cdf", "delta")


# -- arguments ----------------------------------------------------------------


def numeric_level_values(levels: Sequence[Any], what: str) -> FloatArray:
    """The response levels as increasing numbers, or a clear error saying why not.

    Parameters
    ----------
    levels : sequence
        The response's levels, lowest first.
    what : str
        The quantity asked for (for the message).

    Returns
    -------
    ndarray, shape (K,)

    Raises
    ------
    OrdstatsError
        If a level is not a number (or numeric text), or the levels do not increase.
    """
    try:
        values = np.asarray([float(v) for v in levels], dtype=float)
    except (TypeError, ValueError):
        shown = ", ".join(repr(v) for v in list(levels)[:4]) + (", ..." if len(levels) > 4 else "")
        raise OrdstatsError(
            f"{what} needs numeric response levels, as for a continuous response fitted "
            f"with many_levels=True; this fit's levels are {shown}. Fit the response as "
            "numbers to get its quantiles, mean and exceedance probabilities"
        ) from None
    if not (np.all(np.isfinite(values)) and np.all(np.diff(values) > 0)):
        raise OrdstatsError(
            f"{what} needs response levels that are finite numbers in increasing order; "
            "this fit's levels are not (declare levels= in increasing numeric order)"
        )
    return values


def _probabilities(q: Any) -> tuple[FloatArray, bool]:
    """``q`` as an array of numbers strictly inside (0, 1); and whether it was one number."""
    scalar = is_real_number(q)
    try:
        values = np.atleast_1d(np.asarray(q, dtype=float))
    except (TypeError, ValueError):
        values = np.array([np.nan])
    bad = (
        values.ndim != 1
        or values.size == 0
        or isinstance(q, (bool, np.bool_, str))
        or not np.all((values > 0) & (values < 1))
    )
    if bad:
        raise SpecificationError(
            "q must be a probability strictly between 0 and 1 (0.5 for the median, 0.9 "
            f"for the 90th percentile), or a list of them; got {q!r}"
        )
    return values, scalar


def _response_values(y: Any) -> tuple[FloatArray, bool]:
    """``y`` as an array of finite numbers; and whether it was one number."""
    scalar = is_real_number(y)
    bad = isinstance(y, (bool, np.bool_, str))
    try:
        values = np.atleast_1d(np.asarray(y, dtype=float))
    except (TypeError, ValueError):
        bad = True
        values = np.array([np.nan])
    if bad or values.ndim != 1 or values.size == 0 or not np.all(np.isfinite(values)):
        raise SpecificationError(
            "y must be a finite number on the response's scale, or a list of them, "
            f"for P(Y >= y); got {y!r}"
        )
    return values, scalar


# -- the distribution of each row --------------------------------------------


@dataclass(frozen=True)
class CutDistribution:
    """Each row's distribution at the cut-points, with what its gradients need.

    Attributes
    ----------
    values : ndarray, shape (K,)
        Level values ``v_1 < ... < v_K``.
    u : ndarray, shape (m, K - 1)
        Standardised cut-points ``(theta_j - eta)/s``.
    exceed : ndarray, shape (m, K - 1)
        ``S_j = P(Y >= v_{j+1}) = 1 - F(u_j)``, from the link's survival function.
    density : ndarray, shape (m, K - 1)
        ``f(u_j)``.
    inverse_scale : ndarray, shape (m,)
        ``1/s``: the derivative of ``u_j`` in the cut-point ``theta_j``.
    rest : ndarray, shape (m, K - 1, r)
        Derivatives of ``u_j`` in the parameters after the thresholds
        (``-x/s``, ``-u_j z``, 0 for a link parameter).
    link_parameter : ndarray, shape (m, K - 1) or None
        ``dF(u_j)/d lambda`` of a flexible link (its column is the last of ``rest``).
    """

    values: FloatArray
    u: FloatArray
    exceed: FloatArray
    density: FloatArray
    inverse_scale: FloatArray
    rest: FloatArray
    link_parameter: FloatArray | None

    def u_gradient(self) -> tuple[FloatArray, FloatArray]:
        """``u_j``'s gradient: cut-point coefficients (m, K-1) and the rest (m, K-1, r)."""
        scale = np.broadcast_to(self.inverse_scale[:, None], self.u.shape)
        return scale, self.rest

    def cdf_gradient(self) -> tuple[FloatArray, FloatArray]:
        """``F(u_j)``'s gradient, in the same two parts as :meth:`u_gradient`."""
        scale, rest = self.u_gradient()
        rest = self.density[:, :, None] * rest
        if self.link_parameter is not None:
            rest = rest.copy()
            rest[:, :, -1] = self.link_parameter
        return self.density * scale, rest


def cut_distribution(
    link: Link,
    theta: FloatArray,
    X: FloatArray,
    location: FloatArray,
    scale: FloatArray | None,
    Z: FloatArray,
    values: FloatArray,
    n_lambda: int,
) -> CutDistribution:
    """Each row's :class:`CutDistribution` from cut-points and linear predictors.

    Parameters
    ----------
    link : Link
        At the estimated link parameter for a flexible link.
    theta : ndarray, shape (K - 1,)
        Cut-points.
    X : ndarray, shape (m, p)
    location : ndarray, shape (m,)
        ``eta = x'beta + offset``.
    scale : ndarray, shape (m,) or None
        ``s = exp(z'zeta)``, None without scale effects.
    Z : ndarray, shape (m, t)
        Scale design (``t = 0`` without scale effects).
    values : ndarray, shape (K,)
    n_lambda : int
        1 for a flexible link.
    """
    m = X.shape[0]
    s = np.ones(m) if scale is None else scale
    u = (theta[None, :] - location[:, None]) / s[:, None]
    parts = [np.broadcast_to(-(X / s[:, None])[:, None, :], (*u.shape, X.shape[1]))]
    if Z.shape[1]:
        parts.append(-u[:, :, None] * Z[:, None, :])
    if n_lambda:
        parts.append(np.zeros((*u.shape, 1)))
    rest = np.concatenate(parts, axis=2) if parts else np.zeros((*u.shape, 0))
    dlam = link.dcdf_dlam(u) if n_lambda else None  # type: ignore[attr-defined]
    return CutDistribution(
        values=values,
        u=u,
        exceed=link.sf(u),
        density=link.pdf(u),
        inverse_scale=1.0 / s,
        rest=rest,
        link_parameter=dlam,
    )


# -- covariance blocks ----------------------------------------------------------


@dataclass(frozen=True)
class _CutCovariance:
    """The covariance of the estimates as the cut-points and the other parameters see it.

    ``cut_diagonal`` is ``diag(J V_aa J')``, ``cut_rest`` is ``J V_ar`` and
    ``rest`` is ``V_rr``; ``quadratic(G)`` is ``diag(G V G')`` for gradients
    ``G`` (m, k) in all parameters.
    """

    jacobian: FloatArray | None  # None: the identity (one free parameter per cut-point)
    cut_diagonal: FloatArray
    cut_rest: FloatArray
    rest: FloatArray
    quadratic: Callable[[FloatArray], FloatArray]

    def to_parameters(self, cut_part: FloatArray) -> FloatArray:
        """Gradients in the cut-points (m, K-1) as gradients in the threshold parameters."""
        return cut_part if self.jacobian is None else cut_part @ self.jacobian


def _is_identity(jacobian: Any) -> bool:
    rows, columns = jacobian.shape
    if rows != columns:
        return False
    if hasattr(jacobian, "toarray"):  # a sparse matrix
        difference = sp.csr_array(jacobian) - sp.eye_array(rows, format="csr")
        return bool(difference.count_nonzero() == 0)
    return bool(np.array_equal(jacobian, np.eye(rows)))


def _dense(matrix: Any) -> FloatArray:
    dense = matrix.toarray() if hasattr(matrix, "toarray") else matrix
    return np.asarray(dense, dtype=np.float64)


def _cut_covariance(
    covariance: Covariance | BandedCovariance, jacobian: Any, n_thresholds: int
) -> _CutCovariance:
    q = n_thresholds
    identity = _is_identity(jacobian)
    if isinstance(covariance, BandedCovariance) and identity and not covariance.singular:
        factor = covariance.hessian.factor()
        location = covariance.location_block
        return _CutCovariance(
            jacobian=None,
            cut_diagonal=covariance.variances()[:q],
            cut_rest=-(factor.w @ location),
            rest=location,
            quadratic=lambda G: np.einsum("ij,ji->i", G, factor.solve(G.T)),
        )
    V = covariance.matrix
    J = None if identity else _dense(jacobian)
    V_aa, V_ar = V[:q, :q], V[:q, q:]
    return _CutCovariance(
        jacobian=J,
        cut_diagonal=np.diag(V_aa).copy() if J is None else np.einsum("ij,jk,ik->i", J, V_aa, J),
        cut_rest=V_ar if J is None else J @ V_ar,
        rest=V[q:, q:],
        quadratic=lambda G: np.einsum("ij,jk,ik->i", G, V, G),
    )


def _cut_variances(
    cut_part: FloatArray, rest_part: FloatArray, blocks: _CutCovariance
) -> FloatArray:
    """``Var`` of each (row, cut-point) quantity with gradient ``a_ij e_j + R_ij``."""
    cross = np.einsum("jr,mjr->mj", blocks.cut_rest, rest_part)
    rest = np.einsum("mjr,rs,mjs->mj", rest_part, blocks.rest, rest_part)
    return np.maximum(cut_part**2 * blocks.cut_diagonal + 2.0 * cut_part * cross + rest, 0.0)


def _combination_variances(
    weights: FloatArray, cut_part: FloatArray, rest_part: FloatArray, blocks: _CutCovariance
) -> FloatArray:
    """``Var(sum_j weights_ij g_ij)`` per row, for quantities ``g_ij`` with those gradients."""
    thresholds = blocks.to_parameters(weights * cut_part)
    rest = np.einsum("mj,mjr->mr", weights, rest_part)
    return np.maximum(blocks.quadratic(np.hstack([thresholds, rest])), 0.0)


# -- the quantities on cut-points and level values ------------------------------


def exceedance_cut(values: FloatArray, y: FloatArray) -> IntArray:
    """For each ``y``, the cut-point ``j`` (0-based) with ``P(Y >= y) = S_j``.

    ``-1`` where ``y <= v_1`` (probability 1) and ``K - 1`` where ``y > v_K``
    (probability 0).

    Examples
    --------
    >>> exceedance_cut(np.array([1.0, 2.0, 4.0]), np.array([0.5, 1.0, 1.5, 2.0, 4.0, 5.0]))
    array([-1, -1,  0,  0,  1,  2])
    """
    return np.searchsorted(values, y, side="left") - 1


def _merged_knots(x: FloatArray, y: FloatArray) -> tuple[FloatArray, FloatArray, IntArray]:
    """Knots sorted by ``x`` with equal ``x`` merged at their mean ``y`` (R's ``approx``).

    Returns the merged ``x``, ``y`` and, for each original knot, its merged position.
    """
    order = np.argsort(x, kind="stable")
    xs = x[order]
    starts = np.flatnonzero(np.r_[True, np.diff(xs) != 0])
    counts = np.diff(np.r_[starts, xs.size])
    merged_y = np.add.reduceat(y[order], starts) / counts
    group = np.empty(x.size, dtype=np.intp)
    group[order] = np.repeat(np.arange(starts.size), counts)
    return xs[starts], merged_y, group


def _quantile_knots(exceed: FloatArray, values: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Knots ``(1, S_1..S_{K-1}, 0)`` of ``rms::Quantile``, values ``(v_1, y_1..y_{K-1}, v_K)``."""
    first, last = exceed[:, :1], exceed[:, -1:]
    with np.errstate(divide="ignore", invalid="ignore"):
        w = (exceed - first) / (last - first)
    y = (1.0 - w) * values[:-1] + w * values[1:]
    m = exceed.shape[0]
    x = np.hstack([np.ones((m, 1)), exceed, np.zeros((m, 1))])
    yvals = np.hstack([np.full((m, 1), values[0]), y, np.full((m, 1), values[-1])])
    return x, yvals


def _point_masses(exceed: FloatArray, values: FloatArray) -> FloatArray:
    """``v_K`` for rows whose every ``S_j`` is 1, ``v_1`` where every one is 0, else NaN.

    There ``rms::Quantile``'s weights ``w_j`` are 0/0; the quantile's limit as the
    ``S_j`` approach 1 (0) is ``v_K`` (``v_1``) at every ``q``.
    """
    out = np.full(exceed.shape[0], np.nan)
    out[np.all(exceed == 1.0, axis=1)] = values[-1]
    out[np.all(exceed == 0.0, axis=1)] = values[0]
    return out


def interpolated_quantiles(
    exceed: FloatArray, values: FloatArray, q: float, knots: FloatArray | None = None
) -> FloatArray:
    """``rms::Quantile``'s interpolated ``q``-quantile of each row.

    Parameters
    ----------
    exceed : ndarray, shape (m, K - 1)
        ``S_j = P(Y >= v_{j+1})`` of each row (decreasing in ``j``).
    values : ndarray, shape (K,)
        Level values.
    q : float
        In (0, 1).
    knots : ndarray, shape (m, K - 1), optional
        Other positions of the knots (the limits of ``S_j``) at the same values,
        for ``Quantile``'s interval.

    Returns
    -------
    ndarray, shape (m,)
    """
    x, y = _quantile_knots(exceed, values)
    point_mass = _point_masses(exceed, values)
    if knots is not None:
        x = np.hstack([x[:, :1], knots, x[:, -1:]])
        point_mass = np.where(np.isnan(point_mass), _point_masses(knots, values), point_mass)
    out = np.empty(exceed.shape[0])
    for i in range(exceed.shape[0]):
        if not np.isnan(point_mass[i]):
            out[i] = point_mass[i]
            continue
        if not np.all(np.isfinite(x[i])):
            out[i] = np.nan
            continue
        # R's approx drops knots without a value: the inner ones when every S_j is
        # the same number strictly between 0 and 1 (w_j = 0/0)
        known = np.isfinite(y[i])
        xm, ym, _, a, b = _knot_segment(x[i][known], y[i][known], 1.0 - q)
        lam = (1.0 - q - xm[a]) / (xm[b] - xm[a])
        out[i] = ym[a] + lam * (ym[b] - ym[a])
    return out


def _knot_segment(
    x: FloatArray, y: FloatArray, t: float
) -> tuple[FloatArray, FloatArray, IntArray, int, int]:
    """The knots ``(xm, ym)`` read, each knot's place in them and the two around ``t``.

    Knots in their order (``x`` from 1 down to 0, as the ``S_j`` are) are read in
    that order: without ties this is R's ``approx``, and knots with equal ``x``
    (a run of ``S_j`` rounded to the same number, as to 1 at an extreme linear
    predictor) are a vertical step of the curve, not one knot at the mean of
    their ``y`` as ``approx`` makes them, so that the segment around ``t`` runs
    from the last knot at or above ``t`` to the first below it: the limit of the
    curve as the tied ``S_j`` separate.  Knots out of order (moved to the limits
    of an interval) are sorted and merged as ``approx`` does.
    """
    if np.all(np.diff(x) <= 0):
        b = int(np.argmax(x < t))  # x[b - 1] >= t > x[b], as 0 < t < 1
        return x, y, np.arange(x.size), b - 1, b
    xm, ym, group = _merged_knots(x, y)
    b = int(np.clip(np.searchsorted(xm, t, side="right"), 1, xm.size - 1))
    return xm, ym, group, b - 1, b


def quantile_gradient_weights(exceed: FloatArray, values: FloatArray, q: float) -> FloatArray:
    """``dQ/dS_j`` of :func:`interpolated_quantiles`, per row (m, K - 1).

    The interpolated quantile is ``Y_a + lam (Y_b - Y_a)``, ``lam = (t - X_a)/(X_b - X_a)``,
    between the knots ``a`` and ``b`` around ``t = 1 - q`` (:func:`_knot_segment`); each knot's
    ``X`` is an ``S_j`` (or a constant end) and its ``Y`` a mean of
    ``y_j = (1 - w_j) v_j + w_j v_{j+1}``, with ``w_j`` depending on ``S_j``,
    ``S_1`` and ``S_{K-1}``.
    """
    m, n = exceed.shape
    x, y = _quantile_knots(exceed, values)
    t = 1.0 - q
    out = np.zeros((m, n))
    dv = np.diff(values)
    point_mass = _point_masses(exceed, values)
    for i in range(m):
        span = exceed[i, -1] - exceed[i, 0]
        if not np.isnan(point_mass[i]):
            continue  # a constant: no derivative in the S_j
        if not (np.all(np.isfinite(x[i])) and span != 0):
            # with every S_j equal the knots' values are 0/0: no derivative
            out[i] = np.nan
            continue
        xm, ym, group, a, b = _knot_segment(x[i], y[i], t)
        width = xm[b] - xm[a]
        lam = (t - xm[a]) / width
        # knot k of the full list is cut-point k - 1 for 1 <= k <= n
        for knot_group, weight_y, weight_x in (
            (a, 1.0 - lam, -(ym[b] - ym[a]) * (1.0 - lam) / width),
            (b, lam, -(ym[b] - ym[a]) * lam / width),
        ):
            members = np.flatnonzero(group == knot_group)
            cuts = members[(members >= 1) & (members <= n)] - 1
            if cuts.size == 0:
                continue
            share = 1.0 / members.size
            # X of a merged knot: the common S of its members (mean of their derivatives)
            out[i, cuts] += weight_x * share
            # Y: the mean of y_j; dy_j = dv_j dw_j
            for j in cuts:
                coef = weight_y * share * dv[j]
                rel = (exceed[i, j] - exceed[i, 0]) / span
                out[i, j] += coef / span
                out[i, 0] += coef * (-1.0 / span + rel / span)
                out[i, -1] += coef * (-rel / span)
    return out


# -- the results methods ---------------------------------------------------------


class ContinuousQuantityMethods(FittedState):
    """Quantiles, means and exceedance probabilities of a fit with numeric levels."""

    def _cut_distribution(
        self, newdata: Any, offset: Any, what: str
    ) -> tuple[CutDistribution, pd.Index, _CutCovariance]:
        model = self.model
        lay = model.problem.layout
        if not model.family_spec.capabilities.latent_variable:
            raise OrdstatsError(
                f"{what} is defined for the cumulative family (a latent continuous "
                f"response, as rms::orm fits); this model's family is {model.family!r}"
            )
        if lay.n_nominal_cols:
            raise OrdstatsError(
                f"{what} needs cut-points shared by every row; this model has nominal "
                "effects, which move the cut-points from row to row. Refit without them"
            )
        values = numeric_level_values(model.design.response.values, what)
        if newdata is None and self.data_removed:
            raise rows_removed_error(f"{what} without newdata")
        warn_rank_deficient(model.design, newdata)
        rows, index = self._new_rows(newdata, offset)  # type: ignore[attr-defined]
        params = self.params.to_numpy()
        jacobian = model.threshold_jacobian
        theta = np.asarray(jacobian @ params[lay.thresholds]).ravel() + model.threshold_offset
        location = rows.X @ params[lay.beta] + rows.offset
        scale = row_scales(rows, params[lay.zeta])
        Z = rows.scale if lay.n_zeta else np.zeros((rows.X.shape[0], 0))
        link = self._evaluation.link  # type: ignore[attr-defined]
        dist = cut_distribution(link, theta, rows.X, location, scale, Z, values, lay.n_lambda)
        blocks = _cut_covariance(self.covariance, jacobian, lay.n_alpha)
        return dist, index, blocks

    def _fitted_rows_table(
        self, newdata: Any, offset: Any, method: Callable[[pd.DataFrame], Any], what: str
    ) -> Any:
        """``method`` of the fitted rows of data read in chunks (None: rows in memory)."""
        model = self.model
        if newdata is not None or model.evaluator.keeps_rows or self.data_removed:
            return None
        refuse_offset_values(offset)
        rows = model.evaluator.fitted_rows()
        return tables_of_fitted_rows(method, model.source, rows, what)

    def exceedance(
        self, y: Any, newdata: Any = None, *, alpha: float = 0.05, offset: Any = None
    ) -> pd.DataFrame:
        """Exceedance probabilities ``P(Y >= y)`` with standard errors and intervals.

        ``rms::ExProb`` of an ``orm`` fit: the fitted conditional distribution of
        a numeric response (``many_levels=True``) is a step function with steps
        at the level values.  The interval is formed on the link scale, as
        ``ExProb`` forms it; the standard error is the delta method's on the
        probability scale.  At or below the lowest level the probability is 1,
        above the highest 0 (no uncertainty).  At the highest level ``v_K`` the
        interval is that of ``P(Y >= v_K)`` (``ExProb`` returns ``[0, 0]`` there).

        Parameters
        ----------
        y : float or sequence of float
            Values on the response's scale.
        newdata : pandas.DataFrame, optional
            Rows (covariate patterns) to evaluate; default the fitted rows.  The
            result is indexed like ``newdata``.
        alpha : float
            One minus the confidence level.
        offset : float or array-like, optional
            As for :meth:`~ordstats.OrdinalResults.predict`.

        Returns
        -------
        pandas.DataFrame
            Columns ``estimate``, ``se``, ``lower``, ``upper``; indexed by row for
            one ``y``, by ``(row, y)`` for several.

        Raises
        ------
        OrdstatsError
            If the response levels are not numbers, or ``y`` is not a finite number.
        """
        streamed = self._fitted_rows_table(
            newdata, offset, lambda rows: self.exceedance(y, rows, alpha=alpha), "exceedance()"
        )
        if streamed is not None:
            return streamed
        ys, scalar = _response_values(y)
        z = normal_quantile(alpha)
        dist, index, blocks = self._cut_distribution(newdata, offset, "exceedance()")
        cut_var = _cut_variances(*dist.cdf_gradient(), blocks)
        u_se = np.sqrt(_cut_variances(*dist.u_gradient(), blocks))
        cuts = exceedance_cut(dist.values, ys)
        columns = []
        n_cuts = dist.u.shape[1]
        for cut in cuts:
            if cut < 0 or cut >= n_cuts:
                fill = 1.0 if cut < 0 else 0.0
                constant = np.full(len(index), fill)
                columns.append((constant, np.zeros(len(index)), constant, constant))
                continue
            u, se = dist.u[:, cut], u_se[:, cut]
            link = self._evaluation.link  # type: ignore[attr-defined]
            columns.append(
                (
                    dist.exceed[:, cut],
                    np.sqrt(cut_var[:, cut]),
                    link.sf(u + z * se),
                    link.sf(u - z * se),
                )
            )
        return _table(columns, index, ys, "y", scalar)

    def mean(self, newdata: Any = None, *, alpha: float = 0.05, offset: Any = None) -> pd.DataFrame:
        """The mean of the response given the covariates, with delta-method intervals.

        ``rms::Mean`` of an ``orm`` fit: ``sum_j v_j P(Y = v_j)`` over the
        numeric level values ``v_j`` (``many_levels=True``), with the interval
        ``mean +- z se``.  For a censored response whose largest value ``c``
        is right-censored the top level is valued just above it (``c + eps``,
        as ``Ocens``: 0.001 for integer data, 1e-8 otherwise), so the mean is
        that restricted to ``c`` (without predictors, Kaplan-Meier's restricted
        mean, ``print(survfit(...), rmean=c)``): a lower bound of the
        unrestricted mean.

        Parameters
        ----------
        newdata : pandas.DataFrame, optional
            Rows to evaluate (default the fitted rows); the result is indexed like it.
        alpha : float
            One minus the confidence level.
        offset : float or array-like, optional
            As for :meth:`~ordstats.OrdinalResults.predict`.

        Returns
        -------
        pandas.DataFrame
            Columns ``estimate``, ``se``, ``lower``, ``upper``.
        """
        streamed = self._fitted_rows_table(
            newdata, offset, lambda rows: self.mean(rows, alpha=alpha), "mean()"
        )
        if streamed is not None:
            return streamed
        z = normal_quantile(alpha)
        dist, index, blocks = self._cut_distribution(newdata, offset, "mean()")
        steps = np.diff(dist.values)
        estimate = dist.values[0] + dist.exceed @ steps
        weights = np.broadcast_to(-steps, dist.u.shape)  # dS_j = -dF(u_j)
        se = np.sqrt(_combination_variances(weights, *dist.cdf_gradient(), blocks))
        return pd.DataFrame(
            {
                "estimate": estimate,
                "se": se,
                "lower": estimate - z * se,
                "upper": estimate + z * se,
            },
            index=index,
        )

    def quantile(
        self,
        q: Any = 0.5,
        newdata: Any = None,
        *,
        alpha: float = 0.05,
        interval: str = "cdf",
        offset: Any = None,
    ) -> pd.DataFrame:
        """Quantiles of the response given the covariates (``rms::Quantile``).

        The fitted conditional distribution of a numeric response
        (``many_levels=True``) is read at ``P(Y >= y) = 1 - q`` with ``rms``'s
        linear interpolation between the level values (see
        :mod:`ordstats.results.continuous`).

        Parameters
        ----------
        q : float or sequence of float
            Probabilities strictly between 0 and 1 (0.5: the median).
        newdata : pandas.DataFrame, optional
            Rows to evaluate (default the fitted rows); the result is indexed like it.
        alpha : float
            One minus the confidence level.
        interval : {"cdf", "delta"}
            ``"cdf"`` (default, ``rms::Quantile``'s): the same interpolation with
            the knots at the pointwise link-scale limits of ``P(Y >= v_j)``;
            ``"delta"``: ``quantile +- z se``.
        offset : float or array-like, optional
            As for :meth:`~ordstats.OrdinalResults.predict`.

        Returns
        -------
        pandas.DataFrame
            Columns ``estimate``, ``se`` (delta method), ``lower``, ``upper``;
            indexed by row for one ``q``, by ``(row, q)`` for several.
        """
        streamed = self._fitted_rows_table(
            newdata,
            offset,
            lambda rows: self.quantile(q, rows, alpha=alpha, interval=interval),
            "quantile()",
        )
        if streamed is not None:
            return streamed
        probs, scalar = _probabilities(q)
        if interval not in _INTERVALS:
            raise SpecificationError(f"interval must be 'cdf' or 'delta'; got {interval!r}")
        z = normal_quantile(alpha)
        dist, index, blocks = self._cut_distribution(newdata, offset, "quantile()")
        if dist.u.shape[1] < 2:
            raise OrdstatsError(
                "a quantile needs at least three response levels (rms interpolates "
                "between them); this fit has two"
            )
        link = self._evaluation.link  # type: ignore[attr-defined]
        u_se = np.sqrt(_cut_variances(*dist.u_gradient(), blocks))
        upper_knots = link.sf(dist.u - z * u_se)
        lower_knots = link.sf(dist.u + z * u_se)
        cdf_gradient = dist.cdf_gradient()
        columns = []
        for prob in probs:
            estimate = interpolated_quantiles(dist.exceed, dist.values, prob)
            weights = -quantile_gradient_weights(dist.exceed, dist.values, prob)
            se = np.sqrt(_combination_variances(weights, *cdf_gradient, blocks))
            if interval == "cdf":
                lower = interpolated_quantiles(dist.exceed, dist.values, prob, lower_knots)
                upper = interpolated_quantiles(dist.exceed, dist.values, prob, upper_knots)
            else:
                lower, upper = estimate - z * se, estimate + z * se
            columns.append((estimate, se, lower, upper))
        return _table(columns, index, probs, "q", scalar)


def _table(
    columns: Sequence[tuple[Any, ...]],
    index: pd.Index,
    keys: FloatArray,
    key_name: str,
    scalar: bool,
) -> pd.DataFrame:
    """The quantities per key (``q`` or ``y``): indexed by row for one key, else by (row, key)."""
    names = ("estimate", "se", "lower", "upper")
    if scalar:
        return pd.DataFrame(dict(zip(names, columns[0], strict=True)), index=index)
    # rows in the order of newdata, each row's keys in the order given
    stacked = {
        name: np.column_stack([parts[k] for parts in columns]).ravel()
        for k, name in enumerate(names)
    }
    row_name = index.name if index.name is not None else "row"
    long_index = pd.MultiIndex.from_product([index, keys], names=[row_name, key_name])
    return pd.DataFrame(stacked, index=long_index)
