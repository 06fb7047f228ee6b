r"""Predictions of a cumulative link mixed model and their derivatives.

Every prediction of a clmm is a function of the cumulative probabilities
:math:`G(c_{ij}, s_i)` at the cut-points :math:`c_{ij} = \theta_j - \lambda_i`:

* ``re_form=0``: :math:`\lambda_i = x_i'\beta + o_i`, :math:`s_i = 0`, ``G = F``;
* ``re_form=None`` (conditional on the modes): :math:`\lambda_i = x_i'\beta + o_i +
  \sum_t z_{ti}' L_t \hat u_{t,l(i)}`, ``s_i = 0``, the spherical modes :math:`\hat u`
  being functions of every parameter (:func:`~ordstats.families.mixed.mode_sensitivities`);
* ``re_form="marginal"``: :math:`\lambda_i = x_i'\beta + o_i`, :math:`s_i^2 = \sum_t
  \lVert L_t' z_{ti} \rVert^2` and :math:`G(c, s) = \int F(c - s z)\phi(z)\,dz`
  (:func:`~ordstats.families.mixed.marginal_integrals`, adaptive quadrature).

With ``phi`` all parameters (thresholds, fixed effects, log-Cholesky variance
parameters), :math:`\nabla G = G_c \nabla c + G_s \nabla s`.  Along a direction of the
design (:math:`\dot x, \dot o, \dot z_t`: the derivative of the design in one
variable), :math:`\dot c = -\dot\lambda` (``lambda`` is linear in the design) and
:math:`\dot s = \sum_t (L_t'z_t)\cdot(L_t'\dot z_t)/s`, so

.. math::

    \dot G = G_c \dot c + G_s \dot s, \qquad
    \nabla \dot G = (G_{cc}\dot c + G_{cs}\dot s)\nabla c
        + (G_{cs}\dot c + G_{ss}\dot s)\nabla s + G_c \nabla\dot c + G_s \nabla\dot s,

with :math:`\nabla\dot s = (\nabla q - \dot s\,\nabla s)/s`, :math:`q = s\dot s`.  All
analytic: no difference is taken in the parameters or in the data.
"""

from __future__ import annotations

import warnings
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from ordstats._typing import FloatArray
from ordstats.design.newdata import (
    fitted_rows,
    missing_predictor_rows,
    newdata_columns,
    newdata_offset,
    refuse_offset_without_newdata,
    terms_for_newdata,
)
from ordstats.design.random import NewTermRows, RandomTerm, random_columns, term_matrices_for
from ordstats.errors import PredictionError, PredictionWarning, user_stacklevel
from ordstats.families.mixed import (
    cholesky_derivatives,
    cholesky_factors,
    marginal_integrals,
    mode_sensitivities,
)

__all__ = [
    "Location",
    "MixedPredictor",
    "MixedRows",
    "check_re_form",
    "prediction_rows",
]


class MixedRows(NamedTuple):
    """The rows to predict for (or a direction of them: derivatives of these arrays).

    Attributes
    ----------
    X : ndarray, shape (m, p)
        Fixed-effects design.
    offset : ndarray, shape (m,)
        NaN on rows with a missing value the prediction reads.
    index : pandas.Index
    re_parts : list of NewTermRows
        Each random term's ``z_t`` rows and group codes (empty for ``re_form=0``).
    """

    X: FloatArray
    offset: FloatArray
    index: pd.Index
    re_parts: list[NewTermRows]


class Location(NamedTuple):
    """``lambda`` (m,) and ``s`` (m,) of the rows, with gradients (m, k) in the parameters."""

    value: FloatArray
    gradient: FloatArray
    sd: FloatArray
    sd_gradient: FloatArray


def check_re_form(re_form: object) -> None:
    """Refuse a ``re_form`` other than None, 0 or ``"marginal"``.

    Parameters
    ----------
    re_form : object

    Raises
    ------
    PredictionError
    """
    is_zero = (
        isinstance(re_form, int | float | np.integer | np.floating)
        and not isinstance(re_form, bool)
        and re_form == 0
    )
    if not (re_form is None or is_zero or (isinstance(re_form, str) and re_form == "marginal")):
        raise PredictionError(
            f"re_form must be None, 0 or 'marginal'; got {re_form!r}. None predicts "
            "conditional on the groups' modes, 0 with the random effects at zero, 'marginal' "
            "averaged over the random effects' distribution"
        )


def prediction_rows(
    model: Any,
    newdata: object,
    offset: object,
    re_form: str | int | None,
) -> MixedRows:
    """Fixed design, offset, index and random-term rows to predict for.

    Rows with a missing value in a column the prediction reads get a NaN
    offset (and one warning naming the columns); conditional predictions warn
    about rows of groups the fit did not see (their random effects are zero).

    Parameters
    ----------
    model : OrdinalMixedModel
    newdata : pandas.DataFrame or None
        None: the rows of the fit.
    offset : object
        As ``MixedResults.predict``.
    re_form : None, 0 or "marginal"

    Returns
    -------
    MixedRows
    """
    fixed = model.design.fixed
    if newdata is None:
        refuse_offset_without_newdata(offset)
        index = fixed.row_index
        parts = [
            NewTermRows(t.matrix, t.codes, pd.Series(np.asarray(t.levels, object)[t.codes], index))
            for t in model.terms
        ]
        return MixedRows(fixed.location.matrix, fixed.offset, index, parts)
    if not isinstance(newdata, pd.DataFrame):
        raise PredictionError("newdata must be a pandas DataFrame")
    n_rows = fitted_rows(fixed)
    X = terms_for_newdata(fixed.location, newdata, model.formula_context, n_rows=n_rows)
    index = newdata.index
    eta_offset = newdata_offset(
        offset,
        newdata,
        index,
        column=fixed.offset_name,
        fitted_with_offset=model.has_offset,
    )
    groups = re_form is None
    parts = term_matrices_for(model.terms, newdata, groups=groups) if re_form != 0 else []
    columns = newdata_columns(fixed.location, model.formula_context, n_rows)[0]
    arrays = [(fixed.location.names, X)]
    for term, part in zip(model.terms, parts, strict=False):
        columns += random_columns(term, groups=groups)
        arrays.append((term.columns, part.matrix))
    missing = missing_predictor_rows(newdata, columns, arrays, index)
    if groups:
        for term, part in zip(model.terms, parts, strict=True):
            _warn_unseen_groups(term, part, ~missing)
    return MixedRows(X, np.where(missing, np.nan, eta_offset), index, parts)


def _warn_unseen_groups(term: RandomTerm, part: NewTermRows, usable: np.ndarray) -> None:
    """Warn, naming the levels, when rows belong to groups the fit did not see."""
    unseen = (part.codes < 0) & part.labels.notna().to_numpy() & usable
    if not unseen.any():
        return
    levels = pd.unique(part.labels[unseen])
    shown = ", ".join(map(repr, levels[:5])) + (", ..." if len(levels) > 5 else "")
    warnings.warn(
        f"{int(unseen.sum())} row(s) of newdata belong to level(s) {shown} of the grouping "
        f"factor {term.group!r}, not seen in the fit; their random effects "
        f"({term.expr}|{term.group}) are set to zero (the population prediction, re_form=0)",
        PredictionWarning,
        stacklevel=user_stacklevel(),
    )


class MixedPredictor:
    """Cumulative probabilities of a clmm at given parameters, with their derivatives.

    Parameters
    ----------
    model : OrdinalMixedModel
    params : ndarray
        ``(alpha, beta, log-Cholesky variance parameters)``.
    re_form : None, 0 or "marginal"
    """

    def __init__(self, model: Any, params: FloatArray, re_form: str | int | None) -> None:
        self.model = model
        self.problem = model.problem
        self.params = np.asarray(params, dtype=float)
        self.re_form = re_form
        self.n_alpha = self.problem.n_alpha
        self.k_fixed = self.n_alpha + self.problem.n_beta
        self.theta = self.problem.jacobian @ self.params[: self.n_alpha]
        self._modes: tuple[FloatArray, FloatArray] | None = None
        self.factors = self._term_factors()

    def _term_factors(self) -> list[tuple[FloatArray, list[tuple[int, FloatArray]]]]:
        """Per term ``L_t`` and ``(index into params, dL_t/dv)`` per variance parameter."""
        qs = [t.q for t in self.model.terms]
        var = self.params[self.k_fixed :]
        out, pos = [], 0
        for q, L in zip(qs, cholesky_factors(var, qs), strict=True):
            n_t = q * (q + 1) // 2
            positions = range(self.k_fixed + pos, self.k_fixed + pos + n_t)
            derivatives = cholesky_derivatives(q, var[pos : pos + n_t])
            out.append((L, list(zip(positions, derivatives, strict=True))))
            pos += n_t
        return out

    def modes(self) -> tuple[FloatArray, FloatArray]:
        """Spherical modes ``u^`` and ``du^/dparams`` at the parameters (computed once)."""
        if self._modes is None:
            self._modes = mode_sensitivities(self.model.objective, self.params)
        return self._modes

    @property
    def _marginal(self) -> bool:
        return isinstance(self.re_form, str) and self.re_form == "marginal"

    # -- lambda and s ---------------------------------------------------------------

    def location(self, rows: MixedRows, codes_from: MixedRows | None = None) -> Location:
        """``lambda`` and ``s`` of ``rows`` and their gradients in the parameters.

        ``lambda`` is linear in the design, so for a direction (the derivative of
        the design) this gives ``lambda-dot`` and its gradient; ``s`` is then not
        meaningful (see :meth:`sd_slope`).  ``codes_from``: the rows whose group
        codes a direction uses (default: its own).
        """
        m, k = rows.X.shape[0], self.params.size
        value = rows.X @ self.params[self.n_alpha : self.k_fixed] + rows.offset
        gradient = np.zeros((m, k))
        gradient[:, self.n_alpha : self.k_fixed] = rows.X
        sd, sd_gradient = np.zeros(m), np.zeros((m, k))
        if rows.re_parts and self._marginal:
            sd, sd_gradient = self._sd(rows.re_parts)
        elif rows.re_parts and self.re_form is None:
            codes = [p.codes for p in (codes_from or rows).re_parts]
            shift, shift_gradient = self._shift(rows.re_parts, codes)
            value, gradient = value + shift, gradient + shift_gradient
        return Location(value, gradient, sd, sd_gradient)

    def _shift(
        self, parts: list[NewTermRows], codes: list[np.ndarray]
    ) -> tuple[FloatArray, FloatArray]:
        """``sum_t z_t' L_t u^_{t,l}`` per row (0 for unseen groups) and its gradient."""
        u, du = self.modes()
        m = parts[0].matrix.shape[0]
        shift, gradient = np.zeros(m), np.zeros((m, self.params.size))
        offsets = self.problem.offsets
        for term, part, group, (L, derivatives), start in zip(
            self.model.terms, parts, codes, self.factors, offsets, strict=False
        ):
            seen = np.flatnonzero(group >= 0)
            z = part.matrix[seen]
            positions = start + group[seen, None] * term.q + np.arange(term.q)
            u_rows = u[positions]  # (rows, q): each row's group's spherical modes
            shift[seen] += np.einsum("ij,ij->i", z @ L, u_rows)
            gradient[seen] += np.einsum("ij,ijk->ik", z @ L, du[positions])
            for j, dL in derivatives:
                gradient[seen, j] += np.einsum("ij,ij->i", z @ dL, u_rows)
        return shift, gradient

    def _sd(self, parts: list[NewTermRows]) -> tuple[FloatArray, FloatArray]:
        """``s`` per row and ``ds/dv = (L_t'z) . (dL_t'z) / s`` (0 where ``s = 0``)."""
        m = parts[0].matrix.shape[0]
        var, dvar = np.zeros(m), np.zeros((m, self.params.size))
        for part, (L, derivatives) in zip(parts, self.factors, strict=True):
            loading = part.matrix @ L
            var += np.sum(loading**2, axis=1)
            for j, dL in derivatives:
                dvar[:, j] += 2.0 * np.sum(loading * (part.matrix @ dL), axis=1)
        sd = np.sqrt(var)
        return sd, _divide(0.5 * dvar, sd[:, None])

    def sd_slope(self, rows: MixedRows, direction: MixedRows, at: Location) -> Location:
        """``s-dot`` along ``direction`` and its gradient, as a :class:`Location`'s ``sd``."""
        m, k = rows.X.shape[0], self.params.size
        q, dq = np.zeros(m), np.zeros((m, k))
        if self._marginal and rows.re_parts:
            for part, moved, (L, derivatives) in zip(
                rows.re_parts, direction.re_parts, self.factors, strict=True
            ):
                a, a_dot = part.matrix @ L, moved.matrix @ L
                q += np.sum(a * a_dot, axis=1)
                for j, dL in derivatives:
                    dq[:, j] += np.sum((part.matrix @ dL) * a_dot + a * (moved.matrix @ dL), axis=1)
        s_dot = _divide(q, at.sd)
        s_dot_gradient = _divide(dq - s_dot[:, None] * at.sd_gradient, at.sd[:, None])
        return Location(np.zeros(m), np.zeros((m, k)), s_dot, s_dot_gradient)

    # -- the cumulative probabilities -------------------------------------------------

    def cut_gradient(self, at: Location) -> FloatArray:
        """``d c_j / d params`` (m, K - 1, k): the threshold Jacobian minus ``d lambda``."""
        gradient = -np.repeat(at.gradient[:, None, :], self.theta.size, axis=1)
        gradient[:, :, : self.n_alpha] += self.problem.jacobian[None, :, :]
        return gradient

    def cumulative(
        self, rows: MixedRows, complement: bool = False
    ) -> tuple[FloatArray, FloatArray]:
        """``P(Y <= j)`` (or ``P(Y > j)``), ``j < K``, shape (m, K - 1), and its gradient."""
        at = self.location(rows)
        cut = self.theta[None, :] - at.value[:, None]
        g = marginal_integrals(self.problem.link, cut, at.sd, order=1, complement=complement)
        assert g.d_cut is not None and g.d_sd is not None  # order 1
        gradient = g.d_cut[:, :, None] * self.cut_gradient(at)
        gradient += g.d_sd[:, :, None] * at.sd_gradient[:, None, :]
        return g.value, -gradient if complement else gradient

    def probabilities(self, rows: MixedRows, cumulative: FloatArray) -> FloatArray:
        """``P(Y = j)``, shape (m, K), from ``cumulative`` (:meth:`cumulative`'s values).

        A level above the median is the difference of the survival functions
        ``P(Y > j - 1) - P(Y > j)``, integrated on their own: the difference
        of cumulative probabilities near 1 would leave rounding (``-1e-16`` for
        a probability of ``1e-70``).
        """
        m = cumulative.shape[0]
        below = np.column_stack([np.zeros(m), cumulative, np.ones(m)])
        prob = np.diff(below, axis=1)
        upper_half = below[:, :-1] > 0.5
        if np.any(upper_half):
            survival = self.cumulative(rows, complement=True)[0]
            above = np.column_stack([np.ones(m), survival, np.zeros(m)])
            prob = np.where(upper_half, -np.diff(above, axis=1), prob)
        return np.where(np.isnan(prob), prob, np.maximum(prob, 0.0))

    def cumulative_slope(
        self, rows: MixedRows, direction: MixedRows
    ) -> tuple[FloatArray, FloatArray]:
        """The derivative of ``P(Y <= j)`` along ``direction`` and its gradient."""
        at = self.location(rows)
        moved = self.location(direction, codes_from=rows)
        s_dot = self.sd_slope(rows, direction, at)
        cut = self.theta[None, :] - at.value[:, None]
        g = marginal_integrals(self.problem.link, cut, at.sd, order=2)
        assert g.d_cut is not None and g.d_sd is not None  # order 2
        assert g.d_cut_cut is not None and g.d_cut_sd is not None and g.d_sd_sd is not None
        c_dot = -moved.value[:, None]  # the same for every cut-point
        sd_dot = s_dot.sd[:, None]
        values = g.d_cut * c_dot + g.d_sd * sd_dot
        on_cut = g.d_cut_cut * c_dot + g.d_cut_sd * sd_dot
        on_sd = g.d_cut_sd * c_dot + g.d_sd_sd * sd_dot
        gradient = on_cut[:, :, None] * self.cut_gradient(at)
        gradient += on_sd[:, :, None] * at.sd_gradient[:, None, :]
        gradient -= g.d_cut[:, :, None] * moved.gradient[:, None, :]
        gradient += g.d_sd[:, :, None] * s_dot.sd_gradient[:, None, :]
        return values, gradient


def _divide(numerator: FloatArray, sd: FloatArray) -> FloatArray:
    """``numerator / sd``, 0 where ``sd`` is 0 (no random part: the derivative vanishes)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(sd > 0, numerator / np.where(sd > 0, sd, 1.0), 0.0)
