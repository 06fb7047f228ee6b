r"""The margins protocol for :class:`~ordstats.OrdinalResults` (every clm-type fit).

Both kinds of family are functions of ``K - 1`` predictors per row:

* cumulative: the standardised cut-points :math:`u_j = (\theta_j(w) - \eta)/s`
  with :math:`\eta = x'\beta + o`, :math:`s = \exp(z'\zeta)` and
  :math:`\theta_j(w) = D_j(w)\,a + c_j` (threshold structure ``J``, nominal
  effects, fixed cut-points ``c``), and :math:`P(Y \le j) = F(u_j)`;
* sequential and adjacent: the step predictors :math:`\eta_j = D_j(w)\,a +
  x'b + o`, with :math:`\log P(Y = k)` and its first and second derivatives
  in :math:`\eta` from the family (``row_derivatives``).

**Slopes.** Along a direction ``d = (dx, dw, dz, do)`` of the design (the
derivative of the design columns in one variable),

.. math:: \dot u_j = \frac{D^0_j(dw)\,a - dx'\beta - do}{s} - u_j\, dz'\zeta,

with :math:`D^0_j` the nominal part of :math:`D_j` (no intercept).  Then
:math:`\dot F_j = f(u_j)\,\dot u_j` and its gradient in the parameters is

.. math:: \nabla \dot F_j = f(u_j)\big[(\log f)'(u_j)\,\dot u_j\,\nabla u_j
          + \nabla \dot u_j\big] + f(u_j)\,\partial_\lambda \log f(u_j)\,\dot u_j\,e_\lambda,

the last term for a flexible link only, where

.. math:: \nabla_a \dot u_j = (D^0_j(dw) - \dot s\, D_j(w))/s,\quad
          \nabla_\beta \dot u_j = (\dot s\, x - dx)/s,\quad
          \nabla_\zeta \dot u_j = -\frac{D^0_j(dw)a - dx'\beta - do}{s} z
          + \dot s\, u_j z - u_j\, dz,

with :math:`\dot s = dz'\zeta`.  For the step families, with ``g_k`` and
``H_k`` the gradient and Hessian of :math:`\log P_k` in :math:`\eta`,
:math:`\dot P_k = P_k\, g_k'\dot\eta` and

.. math:: \nabla \dot P_k = P_k\big[(g_k'\dot\eta)\, g_k'\nabla\eta
          + \dot\eta' H_k \nabla\eta + g_k'\nabla\dot\eta\big].

Everything is analytic; no difference is taken in the parameters.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd

from ordstats._typing import FloatArray
from ordstats.core.thresholds import cut_point_design
from ordstats.design import newdata_matrices
from ordstats.design.core import select_fitted_rows
from ordstats.design.formula import column_labels, expression_variables
from ordstats.design.newdata import (
    estimability,
    fitted_rows,
    newdata_columns,
    newdata_offset,
    newdata_scale_offset,
)
from ordstats.errors import OrdstatsError
from ordstats.families.cumulative.prediction import cumulative_probabilities
from ordstats.families.problem import row_scales
from ordstats.results.margins.grid import (
    coded_factors,
    fitted_row_columns,
    offset_columns,
    set_column,
)
from ordstats.results.margins.jacobian import RowTerm, RowTerms
from ordstats.results.margins.protocol import (
    OFFSET_COLUMN,
    PREDICTION_TYPES,
    DesignRows,
    Predicted,
    check_type,
)
from ordstats.results.persistence import rows_removed_error
from ordstats.results.prediction_se import NewRows, cut_gradients, probability_gradients
from ordstats.results.state import FittedState
from ordstats.results.values import after_selection, warn_after_selection

if TYPE_CHECKING:
    from ordstats.core.links import Link

__all__ = ["OrdinalMarginsFit"]

#: the column of ``margins_data`` holding an offset that was given as values
_OFFSET = OFFSET_COLUMN
#: the design rows' key of the scale formula's offset (R's ``offset()`` term)
_SCALE_OFFSET = "scale_offset"
#: rows per block of the averages' elementwise work (:func:`_blockwise`)
_BLOCK_ROWS = 8192


class OrdinalMarginsFit(FittedState):
    """:class:`~ordstats.results.margins.protocol.MarginsFit` for clm-type fits."""

    if TYPE_CHECKING:

        def _scores(self) -> FloatArray: ...

    # -- what the fit is ----------------------------------------------------------

    def margins_params(self) -> FloatArray:
        """The estimates, in the likelihood's order."""
        return np.asarray(self.params.to_numpy(), dtype=float)

    def margins_covariance(self) -> FloatArray:
        """The covariance in use (robust if the fit is), or a clear error if singular.

        A fit without standard errors by design (an L1 or elastic-net penalty,
        which selects) gives its NaN covariance, with a warning saying why:
        estimates without standard errors.
        """
        matrix = np.asarray(self.covariance.matrix, dtype=float)
        if after_selection(self.covariance.kind):
            warn_after_selection(self.covariance.kind, "margins")
            return matrix
        if not np.all(np.isfinite(matrix)):
            raise OrdstatsError(
                "the covariance of the estimates is not available (singular Hessian), so the "
                "margins have no standard errors; refit with fewer parameters or a penalty"
            )
        return matrix

    def margins_levels(self) -> list[str]:
        """The response level labels."""
        return [str(level) for level in self.model.levels]

    def margins_types(self) -> tuple[str, ...]:
        """The prediction types this fit has a meaning for."""
        if self.model.family_spec.capabilities.latent_variable:
            return PREDICTION_TYPES
        return tuple(t for t in PREDICTION_TYPES if t != "latent")

    def margins_variables(self) -> list[str]:
        """The data columns the location, nominal and scale formulas read."""
        design = self.model.design
        names: list[str] = []
        for terms in (design.location, design.nominal, design.scale):
            if terms is None or terms.spec is None:
                continue
            for name in newdata_columns(terms, self.model.formula_context)[0]:
                if name not in names:
                    names.append(name)
        if not names and design.location.spec is None:  # built from arrays
            names = list(self.model.exog_names)
        return names

    def _margins_scale_variables(self) -> list[str]:
        """The data columns the scale formula reads (``emmeans(mode="scale")``'s grid)."""
        scale = self.model.design.scale
        if scale is None or scale.spec is None:
            return []
        return list(newdata_columns(scale, self.model.formula_context)[0])

    def margins_term_codings(self) -> list[list[tuple[str, bool]]]:
        """The location formula's terms and their variables' codings (emmeans' nesting)."""
        return self.model.design.location.term_codings(set(self.margins_variables()))

    def margins_data(self) -> pd.DataFrame:
        """The estimation rows: the predictor columns of the fitted rows.

        With the offset and weights columns the model read, and an offset given
        as values as the column ``"(offset)"`` (so that counterfactual copies
        of the rows keep their offsets).
        """
        if self.data_removed:
            raise rows_removed_error("predictions, comparisons and slopes without newdata")
        model = self.model
        design = model.design
        source = getattr(model, "_formula_source", None)
        if source is not None and isinstance(source.data, pd.DataFrame):
            present = self._margins_grid_columns(list(source.data.columns))
            data = select_fitted_rows(source.data[present], design)
            if model.has_offset and design.offset_name is None:
                data = data.assign(**{_OFFSET: design.offset})
            return coded_factors(self, data)
        return self._margins_unkept_rows()

    def _margins_reference_rows(self) -> pd.DataFrame:
        """The rows of R's model frame, which emmeans' reference grid is built from.

        The estimation rows and, after them, the complete rows left out only
        for a zero weight (R's clm and polr keep them in the model frame, so
        ``ref_grid`` counts them in its cells and covariate means).
        """
        data = self.margins_data()
        weightless = self.model.design.weightless_positions
        source = getattr(self.model, "_formula_source", None)
        if weightless is None or not weightless.size or source is None or _OFFSET in data:
            return data  # an offset given as values has none for the zero-weight rows
        present = self._margins_grid_columns(list(source.data.columns))
        rows = source.data.iloc[weightless][present]
        return pd.concat([data, coded_factors(self, rows)])

    def _margins_unkept_rows(self) -> pd.DataFrame:
        """The estimation rows of a fit whose DataFrame is not kept, or an error."""
        model = self.model
        design = model.design
        if not model.evaluator.keeps_rows:
            raise OrdstatsError(
                "the fitted rows of a model read in chunks (files, Dask, chunksize=) are not in "
                "memory: the avg_ verbs stream over them; otherwise pass the rows as newdata "
                "(a DataFrame, or datagrid(newdata=..., column=values) of your own values)"
            )
        if design.location.spec is None:  # a model built from arrays
            return pd.DataFrame(model.data.X, index=design.row_index, columns=model.exog_names)
        raise OrdstatsError(
            "the DataFrame this model was fitted on is not kept (the model was pickled or built "
            "from a design): pass the rows as newdata (a DataFrame)"
        )

    def _margins_grid_columns(self, available: Sequence[str] | None = None) -> list[str]:
        """The columns of :meth:`margins_data`: predictors, offsets' and weights' columns.

        ``available``: the data's columns (default: those of the source read in chunks).
        """
        if available is None:
            source = getattr(self.model.evaluator, "source", None)
            available = list(getattr(source, "columns", []))
        columns = list(self.margins_variables())
        columns += self._margins_offset_variables(list(available))
        weights = getattr(getattr(self.model, "_formula_source", None), "weights", None)
        if isinstance(weights, str):
            columns.append(weights)
        return list(dict.fromkeys(c for c in columns if c in available))

    def _margins_offset_variables(self, columns: Sequence[str] | None = None) -> list[str]:
        """The ``columns`` (default: any) the location and scale offsets read (emmeans' grid)."""
        design = self.model.design
        return offset_columns([design.offset_name, design.scale_offset_name], columns)

    def _margins_data_columns(self, names: list[str]) -> pd.DataFrame:
        """Columns of the fitted DataFrame the model does not use, on the estimation rows."""
        source = getattr(self.model, "_formula_source", None)
        data = None if source is None else source.data
        return fitted_row_columns(data, self.model.design, names)

    # -- streaming over rows read in chunks (results/margins/stream.py) -----------------

    def _margins_in_memory(self) -> bool:
        """Whether the estimation rows are in memory (or removed), else read in chunks."""
        return bool(self.data_removed or self.model.evaluator.keeps_rows)

    def _margins_factor_levels(self) -> dict[str, list[Any]]:
        """The levels of each factor column, as the fitted formulas encode them.

        Keyed by the formulas' factor expressions; a numeric column that the
        formulas encode only as a factor (``C(k)``, ``factor(k)``) is keyed by
        its name too, so that the verbs treat it as the factor the model sees
        (its levels, not ``k +- 1/2``).
        """
        levels: dict[str, list[Any]] = {}
        numeric: set[str] = set()  # columns some numeric expression reads
        for expr, categorical, state in _encoded_expressions(self.model.design):
            if not categorical:
                numeric |= expression_variables(expr)
            elif expr not in levels:
                levels[expr] = list(state.get("categories", []))
        columns = set(self.margins_variables())
        for expr, categories in list(levels.items()):
            read = expression_variables(expr) & columns
            if len(read) == 1 and expr not in read:
                (name,) = read
                if name not in numeric:
                    levels.setdefault(name, categories)
        return levels

    def _margins_factor_covariates(self) -> list[str]:
        """Columns the formulas read only through numeric expressions (``as.integer(f)``).

        R's ``ref_grid`` makes such a factor a covariate of the grid, at the
        mean of its codes (``.find.coerced``).
        """
        read: dict[bool, set[str]] = {True: set(), False: set()}  # by categorical or not
        for expr, categorical, _ in _encoded_expressions(self.model.design):
            read[categorical] |= expression_variables(expr)
        return [n for n in self.margins_variables() if n in read[False] - read[True]]

    def _margins_stream(
        self, func: Callable[..., Any], *args: Any, columns: tuple[str, ...] = ()
    ) -> Any:
        """``func(rows, *args)`` summed over the chunks of used rows (one pass)."""
        return self.model.evaluator.reduce_frames(func, *args, columns=columns)  # type: ignore[attr-defined]

    def _margins_reference_stream(self, func: Callable[..., Any], *args: Any) -> Any:
        """:meth:`_margins_stream` over R's model frame: with the complete zero-weight rows.

        The streamed counterpart of :meth:`_margins_reference_rows` (emmeans'
        reference grid).
        """
        evaluator = self.model.evaluator
        return evaluator.reduce_frames(func, *args, model_frame=True)  # type: ignore[attr-defined]

    def margins_rows(self, data: pd.DataFrame) -> DesignRows:
        """The location, nominal and scale designs and the offset of ``data``."""
        model = self.model
        X, W, Z, index = newdata_matrices(model.design, data, model.formula_context)
        arrays = {"X": X, "W": W, "Z": Z, "offset": self._margins_offset(data, index)}
        scale_offset = newdata_scale_offset(model.design, data)
        if scale_offset is not None:  # R's offset() of the scale formula
            arrays[_SCALE_OFFSET] = scale_offset
        return DesignRows(arrays, index)

    def _margins_offset(self, data: pd.DataFrame, index: pd.Index) -> FloatArray:
        """The rows' offset: its column (``"(offset)"`` for one given as values), else 0."""
        model = self.model
        design = model.design
        if model.has_offset and _OFFSET in data.columns:
            return np.asarray(data[_OFFSET], dtype=float)
        return newdata_offset(
            None,
            data,
            index,
            column=design.offset_name,
            fitted_with_offset=model.has_offset,
        )

    # -- shortcuts of the verbs (optional hooks, asked for with getattr) -----------------

    def _margins_row_offsets(self, data: pd.DataFrame) -> FloatArray:
        """The location offset of each row of ``data`` (emmeans' grid takes their mean)."""
        return self._margins_offset(data, data.index)

    def _margins_estimability(
        self, data: pd.DataFrame, part: str | None = None
    ) -> tuple[FloatArray, FloatArray] | None:
        """The design rows of ``data`` over every column and the non-estimable basis.

        Every part of the design (location, nominal, scale), or only ``part``
        (``"scale"``: what ``emmeans(mode="scale")`` estimates).  None unless
        one of them dropped aliased columns
        (:func:`ordstats.design.newdata.estimability`).
        """
        model = self.model
        design = model.design
        parts = {"location": design.location, "nominal": design.nominal, "scale": design.scale}
        chosen = list(parts.values()) if part is None else [parts[part]]
        return estimability(chosen, data, model.formula_context, fitted_rows(design))

    def _margins_linear_columns(self, rows: DesignRows) -> tuple[DesignRows, dict[str, int]]:
        """A unit shift of the linear predictor at ``rows``, and the predictors that only shift it.

        A numeric predictor that enters the location design as its own column
        and nothing else (no transform, interaction, nominal or scale effect,
        offset) moves the predictions only through ``eta = ... + b x``, so its
        slope is ``b`` times the slope along this direction (the verbs form
        one slope for all such predictors).

        Returns
        -------
        direction : DesignRows
            Zero designs and a unit offset.
        positions : dict of str to int
            Each such predictor's coefficient's position in the parameters.
        """
        arrays = {name: np.zeros_like(a) for name, a in rows.arrays.items()}
        arrays["offset"] = np.ones(rows.n_rows)
        direction = DesignRows(arrays, rows.index, rows.extra)
        beta = np.arange(self.model.problem.layout.n_params)[self.model.problem.layout.beta]
        positions = {}
        for name in self.margins_variables():
            plan = self._margins_own_columns(name)
            if plan is None or plan["W"][0] or plan["Z"][0]:
                continue
            columns, bare = plan["X"]
            if bare and len(columns) == 1:
                positions[name] = int(beta[columns[0]])
        return direction, positions

    def _margins_fitted_rows(self) -> DesignRows | None:
        """The design rows of ``margins_data()`` as fitted, without rebuilding them.

        None when the fit does not keep them (rows read in chunks, removed data).
        """
        model = self.model
        design = model.design
        if self.data_removed or not model.evaluator.keeps_rows:
            return None
        X = np.asarray(design.location.matrix, dtype=float)
        if X.shape[0] != len(design.row_index):
            return None
        empty = np.empty((X.shape[0], 0))
        W, Z = (
            empty if terms is None else np.asarray(terms.matrix, dtype=float)
            for terms in (design.nominal, design.scale)
        )
        offset = np.asarray(design.offset, dtype=float) if model.has_offset else np.zeros(len(X))
        arrays = {"X": X, "W": W, "Z": Z, "offset": offset}
        if design.scale_offset is not None:
            arrays[_SCALE_OFFSET] = np.asarray(design.scale_offset, dtype=float)
        # the fitted rows have no missing values (the fit dropped such rows)
        return DesignRows(arrays, design.row_index, {"finite": True})

    def _margins_rows_set(
        self, rows: DesignRows, data: pd.DataFrame, name: str, values: Any
    ) -> DesignRows | None:
        """The design of ``data`` with column ``name`` set to ``values``, from its design ``rows``.

        Only the columns of formula terms that read ``name`` alone change: a
        single value (a level, a number) is built on one row and repeated;
        per-row numbers are copied into a column that is ``name`` itself.
        None when that is not the rebuilt design: ``name`` is read together
        with other columns (an interaction) or by the offset, a design has no
        formula, ``rows`` has missing values or the new columns would.

        Parameters
        ----------
        rows : DesignRows
            ``margins_rows(data)``.
        data : pandas.DataFrame
        name : str
        values : scalar or ndarray, shape (n_rows,)

        Returns
        -------
        DesignRows or None
        """
        plan = self._margins_own_columns(name)
        if plan is None or not all(np.isfinite(a).all() for a in rows.arrays.values()):
            return None
        if np.ndim(values) == 0:
            fill = _value_columns(self, rows, data, name, values, plan)
        elif all(bare or not columns for columns, bare in plan.values()):
            fill = {key: np.asarray(values, dtype=float)[:, None] for key in plan}
        else:
            return None
        arrays = dict(rows.arrays)
        for key, (columns, _) in plan.items():
            if columns:
                if not np.isfinite(fill[key]).all():
                    return None
                arrays[key] = arrays[key].copy()
                arrays[key][:, columns] = fill[key]
        return replace(rows, arrays=arrays)

    def _margins_own_columns(self, name: str) -> dict[str, tuple[list[int], bool]] | None:
        """Per design (``X``, ``W``, ``Z``): the columns of the terms reading ``name``.

        With whether they are the one column ``name`` itself; None if a term
        reads it together with another column, or the offset reads it.
        """
        design = self.model.design
        offsets = f"{design.offset_name or ''} {design.scale_offset_name or ''}"
        if name in offsets:
            return None
        known = set(self.margins_variables())
        plan: dict[str, tuple[list[int], bool]] = {}
        for key, terms in (("X", design.location), ("W", design.nominal), ("Z", design.scale)):
            if terms is None or not terms.names:
                plan[key] = ([], False)
                continue
            found = _own_columns(terms, name, known)
            if found is None:
                return None
            plan[key] = found
        return plan

    # -- predictions ----------------------------------------------------------------

    def margins_predict(self, params: FloatArray, rows: DesignRows, type: str) -> Predicted:
        """Values of ``type`` at ``rows`` and their analytic Jacobian in ``params``."""
        type = check_type(type, self.margins_types(), self._family_phrase())
        if self.model.family_spec.capabilities.latent_variable:
            return _CumulativeMargins(self, params, rows).predict(type)
        return _StepMargins(self, params, rows).predict(type)

    def margins_slope(
        self, params: FloatArray, rows: DesignRows, direction: DesignRows, type: str
    ) -> Predicted:
        """Derivative of ``type`` along ``direction`` and its analytic Jacobian."""
        type = check_type(type, self.margins_types(), self._family_phrase())
        if type == "class":
            raise OrdstatsError(
                "type='class' (the most probable level) has no derivative; use type='prob'"
            )
        if self.model.family_spec.capabilities.latent_variable:
            return _CumulativeMargins(self, params, rows).slope(direction, type)
        return _StepMargins(self, params, rows).slope(direction, type)

    def _margins_row_terms(
        self, params: FloatArray, rows: DesignRows, type: str, direction: DesignRows | None = None
    ) -> Predicted | None:
        """``margins_predict`` (or ``margins_slope`` along ``direction``) for averages.

        The same values, with the Jacobian kept as row terms
        (:class:`~ordstats.results.margins.jacobian.RowTerms`), so that its
        averages need no ``(m, g, k)`` array.  None where only the general
        methods serve: families without a latent scale, types ``"latent"``
        and ``"class"``.
        """
        type = check_type(type, self.margins_types(), self._family_phrase())
        if not self.model.family_spec.capabilities.latent_variable:
            return None
        margins = _CumulativeMargins(self, params, rows)
        return (
            margins.predict_terms(type)
            if direction is None
            else margins.slope_terms(direction, type)
        )

    def _margins_set_terms(
        self,
        params: FloatArray,
        rows: DesignRows,
        data: pd.DataFrame,
        name: str,
        value: Any,
        type: str,
    ) -> Predicted | None:
        """``_margins_row_terms`` with ``name`` set to one ``value`` in every row, without a copy.

        For averages of a counterfactual copy of the rows (a factor level, a
        number): when ``name`` enters the location design only, through terms
        of its own, a copy differs from ``rows`` in those columns only, so
        ``eta`` changes by ``(c - x_own)' beta_own`` with ``c`` the columns at
        ``value``, and the Jacobian's location block reads ``c`` in them
        (:class:`~ordstats.results.margins.jacobian.RowTerm` ``fixed``).  The
        same numbers as ``_margins_row_terms(params, _margins_rows_set(...))``
        up to rounding; None where that does not hold (nominal or scale
        effects of ``name``, an interaction, missing values, other families).
        """
        if np.ndim(value) != 0 or not self.model.family_spec.capabilities.latent_variable:
            return None
        plan = self._margins_own_columns(name)
        if plan is None or plan["W"][0] or plan["Z"][0] or not plan["X"][0]:
            return None
        columns = np.asarray(plan["X"][0], dtype=np.intp)
        X = rows.arrays["X"]
        finite = rows.extra.get("finite") or np.isfinite(X @ np.ones(X.shape[1])).all()
        if not finite:  # missing values: the general path
            return None
        fill = _value_columns(self, rows, data, name, value, plan)["X"]
        if not np.isfinite(fill).all():
            return None
        type = check_type(type, self.margins_types(), self._family_phrase())
        return _CumulativeMargins(self, params, rows, (columns, fill)).predict_terms(type)

    def _margins_log_scale(self, params: FloatArray, rows: DesignRows) -> Predicted | None:
        """``log s = z'zeta`` at ``rows`` and its Jacobian; None without a scale model.

        An optional part of the protocol that emmeans' ``mode="scale"`` and its
        scale-model ``"latent"``/``"linear.predictor"`` means read.
        """
        lay = self.model.problem.layout
        if not lay.n_zeta:
            return None
        Z = np.asarray(rows.arrays["Z"], dtype=float)
        jac = np.zeros((Z.shape[0], 1, lay.n_params))
        jac[:, 0, lay.zeta] = Z
        log_scale = Z @ np.asarray(params, dtype=float)[lay.zeta]
        if _SCALE_OFFSET in rows.arrays:
            log_scale = log_scale + np.asarray(rows.arrays[_SCALE_OFFSET], dtype=float)
        return Predicted(log_scale[:, None], jac, [""])

    def _margins_mean_cut(self, params: FloatArray, rows: DesignRows) -> Predicted | None:
        """The mean cut-point of each row and its Jacobian; None if it is the same for all.

        An optional part of the protocol: with nominal effects every row has its
        own cut-points, and emmeans' ``mode="latent"`` subtracts their mean over
        the whole reference grid rather than each cell's own (the ``"latent"``
        type).  None without nominal effects or without a latent scale.
        """
        if not self.model.family_spec.capabilities.latent_variable:
            return None
        if not self.model.problem.layout.n_nominal_cols:
            return None
        values, grad = _CumulativeMargins(self, params, rows).mean_cut()
        return Predicted(values[:, None], grad[:, None, :], [""])

    def _family_phrase(self) -> str:
        return f"the {self.model.family_spec.name!r} family"


def _blockwise(function: Callable[[FloatArray], FloatArray], u: FloatArray) -> FloatArray:
    """``function(u)`` for a row-wise ``function``, a block of rows at a time.

    The temporaries of a block stay in the processor's cache, which for
    millions of rows makes the elementwise work several times faster.
    """
    if len(u) <= _BLOCK_ROWS:
        return function(u)
    first = function(u[:_BLOCK_ROWS])
    out = np.empty((len(u), *first.shape[1:]))
    out[:_BLOCK_ROWS] = first
    for start in range(_BLOCK_ROWS, len(u), _BLOCK_ROWS):
        out[start : start + _BLOCK_ROWS] = function(u[start : start + _BLOCK_ROWS])
    return out


def _category_probabilities(link: Link, u: FloatArray) -> FloatArray:
    """``P(Y = k) = F(u_k) - F(u_(k-1))`` as a difference of tail probabilities.

    Of ``F`` where ``F(u_(k-1)) <= 1/2``, else of ``S = 1 - F``
    (``S(u_(k-1)) - S(u_k)``): both terms are then at most about 1/2 on the
    side they are computed for, so neither tail cancels (the log-scale
    :func:`~ordstats.families.cumulative.prediction.category_probabilities`
    agrees to rounding, at a third of the cost).
    """
    cdf, sf = link.cdf(u), link.sf(u)
    out = np.empty((u.shape[0], u.shape[1] + 1))
    out[:, 0] = cdf[:, 0]  # F(u_1) - 0
    with np.errstate(invalid="ignore"):
        upper = ~(cdf <= 0.5)  # the rows and cuts whose lower neighbour is taken from S
        np.subtract(cdf[:, 1:], cdf[:, :-1], out=out[:, 1:-1])
        np.subtract(sf[:, :-1], sf[:, 1:], out=out[:, 1:-1], where=upper[:, :-1])
        np.subtract(1.0, cdf[:, -1], out=out[:, -1])
        np.copyto(out[:, -1], sf[:, -1], where=upper[:, -1])  # S(u_(K-1)) - 0
    return out


def _value_columns(
    fit: OrdinalMarginsFit,
    rows: DesignRows,
    data: pd.DataFrame,
    name: str,
    value: Any,
    plan: dict[str, tuple[list[int], bool]],
) -> dict[str, FloatArray]:
    """The columns of ``name``'s own terms at ``value``: a row of ``rows`` that has it, else built.

    The columns are functions of ``name`` alone, so any row with that value gives them.
    """
    try:
        equal = np.asarray(data[name] == value, dtype=bool)
    except (TypeError, ValueError):  # a value the column cannot hold
        equal = np.zeros(len(data), dtype=bool)
    if equal.any():
        source, position = rows.arrays, int(np.argmax(equal))
    else:
        source, position = fit.margins_rows(set_column(data.iloc[:1], name, value)).arrays, 0
    return {key: source[key][position, columns] for key, (columns, _) in plan.items()}


def _own_columns(terms: Any, name: str, known: set[str]) -> tuple[list[int], bool] | None:
    """The columns of the terms of ``terms`` that read the data column ``name``.

    With whether they are the one column ``name`` as is (a numeric column
    without transform).  None when a term reads ``name`` together with
    another column, or when the terms cannot say (built from arrays).
    """
    spec = terms.spec
    if spec is None:
        return None
    try:
        term_columns = spec.term_indices
        term_reads = spec.term_variables
        spec_names = column_labels(spec)
        encoders = spec.encoder_state
    except (AttributeError, TypeError):  # a spec without its structure
        return None
    where = {column: i for i, column in enumerate(terms.names)}
    columns: list[int] = []
    bare = True
    for term, indices in term_columns.items():
        reads = {str(v) for v in term_reads.get(term, ())} & known
        if name not in reads:
            continue
        if reads != {name}:
            return None
        columns += [where[c] for c in (spec_names[i] for i in indices) if c in where]
        factors = list(getattr(term, "factors", ()))
        kind = encoders.get(name, (None,))[0]
        bare &= (
            len(factors) == 1
            and str(factors[0].expr) == name
            and str(getattr(kind, "value", kind)) == "numerical"
        )
    return columns, bare and len(columns) == 1


def _nominal_part(jacobian: FloatArray, dW: FloatArray, cut: int) -> FloatArray:
    """``D^0_cut(dW)``: the rows of ``cut_point_design`` without the intercept block."""
    full = cut_point_design(jacobian, dW, cut)
    full[:, : jacobian.shape[1]] = 0.0
    return full


class _Shared:
    """What both kinds of family read: the fit, its parameters, the rows, the derived types."""

    def __init__(self, fit: OrdinalMarginsFit, params: FloatArray, rows: DesignRows) -> None:
        self.fit = fit
        self.model: Any = fit.model
        self.params = np.asarray(params, dtype=float)
        self.rows = rows
        self.layout = self.model.problem.layout
        self.levels = fit.margins_levels()
        self.cuts = list(self.model.family_spec.cutpoint_names(self.model.levels))

    def from_categories(self, prob: FloatArray, grad: FloatArray | None, type: str) -> Predicted:
        """``prob`` (or its slope) and gradient mapped to ``type`` (linear in ``P``)."""
        levels = self.levels
        if type == "prob":
            return Predicted(prob, grad, levels)
        if type == "cumprob":
            return Predicted(
                np.cumsum(prob, axis=1)[:, :-1],
                None if grad is None else np.cumsum(grad, axis=1)[:, :-1],
                levels[:-1],
            )
        if type == "exceedance":  # tail sums: no cancellation near 1
            return Predicted(
                np.cumsum(prob[:, ::-1], axis=1)[:, ::-1][:, 1:],
                None if grad is None else np.cumsum(grad[:, ::-1], axis=1)[:, ::-1][:, 1:],
                levels[1:],
            )
        if type == "expected":
            scores = self.fit._scores()
            values = (prob @ scores)[:, None]
            jac = None if grad is None else np.einsum("mkp,k->mp", grad, scores)[:, None, :]
            return Predicted(values, jac, [""])
        # "class": the most probable level's position
        valid = np.all(np.isfinite(prob), axis=1)
        position = np.where(valid, np.argmax(np.where(valid[:, None], prob, 0.0), axis=1), -1)
        return Predicted(np.where(valid, position, np.nan)[:, None].astype(float), None, [""])

    def design(self, name: str, rows: DesignRows | None = None) -> FloatArray:
        return np.asarray((rows or self.rows).arrays[name], dtype=float)


class _CumulativeMargins(_Shared):
    """Cumulative link models: ``P(Y <= j) = F(u_j)``.

    ``fixed = (columns, values)`` reads the location design's ``columns`` as
    ``values`` in every row (a counterfactual copy of the rows without the
    copy); only :meth:`predict_terms` reads it.
    """

    def __init__(
        self,
        fit: OrdinalMarginsFit,
        params: FloatArray,
        rows: DesignRows,
        fixed: tuple[np.ndarray, FloatArray] | None = None,
    ) -> None:
        super().__init__(fit, params, rows)
        self.fixed = fixed
        link: Link = self.model.link
        if self.layout.n_lambda:
            link = link.with_lambda(float(self.params[self.layout.lam][0]))  # type: ignore[attr-defined]
        self.link = link
        self.new_rows = NewRows(
            self.design("X"),
            self.design("offset"),
            self.design("W"),
            self.design("Z"),
            self.design(_SCALE_OFFSET) if _SCALE_OFFSET in self.rows.arrays else None,
        )

    def _log_scale_step(self, dZ: FloatArray, direction: DesignRows) -> FloatArray:
        """``dz'zeta + dq``: the log scale's change along ``direction``."""
        step = dZ @ self.params[self.layout.zeta]
        if _SCALE_OFFSET in direction.arrays:
            step = step + self.design(_SCALE_OFFSET, direction)
        return np.asarray(step, dtype=float)

    # -- Jacobians as row terms (jacobian.py), for averages ----------------------------

    def _mixing(self, type: str) -> tuple[FloatArray, list[str]] | None:
        """``M`` (g, K - 1): the Jacobian of ``type`` is ``M`` times that of ``F(u)``."""
        n_cuts = len(self.cuts)
        if type in ("cumprob", "linear"):
            return np.eye(n_cuts), self.levels[:-1] if type == "cumprob" else self.cuts
        if type == "exceedance":
            return -np.eye(n_cuts), self.levels[1:]
        if type in ("prob", "expected"):  # P_k = F_k - F_(k-1)
            steps = np.zeros((n_cuts + 1, n_cuts))
            steps[np.arange(n_cuts), np.arange(n_cuts)] = 1.0
            steps[np.arange(n_cuts) + 1, np.arange(n_cuts)] = -1.0
            if type == "prob":
                return steps, self.levels
            return (self.fit._scores() @ steps)[None, :], [""]
        return None  # "latent", "class"

    def _cut_designs(self) -> tuple[FloatArray, FloatArray, list[FloatArray]]:
        """``u`` (m, K - 1), ``s`` (m,) and each cut's threshold rows ``D_j(w)``.

        ``D_j`` is (m, n) with nominal effects, else the one row ``(n,)`` of all rows.
        """
        lay, rows = self.layout, self.new_rows
        jac = self.model.threshold_jacobian
        m = rows.X.shape[0]
        beta = self.params[lay.beta]
        if self.fixed is None:
            eta = rows.X @ beta + rows.offset
        else:  # the fixed columns' share of eta: their values', not the rows'
            columns, values = self.fixed
            others = beta.copy()
            others[columns] = 0.0
            eta = rows.X @ others + rows.offset + values @ beta[columns]
        scales = row_scales(rows, self.params[lay.zeta])
        s = np.ones(m) if scales is None else scales
        fixed = self.model.threshold_offset
        designs, thetas = [], []
        for cut in range(jac.shape[0]):
            if lay.n_nominal_cols:
                design = cut_point_design(jac, rows.nominal, cut)
            else:
                design = cut_point_design(jac, np.zeros((1, 0)), cut)[0]
            thetas.append(
                design @ self.params[lay.thresholds] + (0.0 if fixed is None else fixed[cut])
            )
            designs.append(design)
        theta = np.column_stack(thetas) if lay.n_nominal_cols else np.array(thetas)[None, :]
        u = theta - eta[:, None]
        if scales is not None:
            u /= s[:, None]
        return u, s, designs

    def _terms(
        self,
        mixing: FloatArray,
        by_cut: list[tuple[FloatArray, Sequence[FloatArray]]],
        shared: list[tuple[FloatArray, FloatArray, slice]],
    ) -> RowTerms:
        """Row terms of ``M`` times per-cut terms: threshold rows per cut, and shared blocks."""
        lay = self.layout
        terms = [
            RowTerm(coef[:, cut : cut + 1], mixing[:, cut : cut + 1], design, lay.thresholds)
            for coef, designs in by_cut
            for cut, design in enumerate(designs)
        ]
        terms += [
            RowTerm(coef, mixing, basis, at, self.fixed if basis is self.new_rows.X else None)
            for coef, basis, at in shared
        ]
        return RowTerms(tuple(terms), lay.n_params)

    def predict_terms(self, type: str) -> Predicted | None:
        """Values of ``type`` and their Jacobian as row terms; None for other types."""
        found = self._mixing(type)
        if found is None:
            return None
        (mixing, groups), (u, s, designs) = found, self._cut_designs()
        lay, rows = self.layout, self.new_rows
        density = np.ones_like(u) if type == "linear" else _blockwise(self.link.pdf, u)
        scaled = density / s[:, None]  # s: ones where no row's scale differs from one
        shared = [(-scaled, rows.X, lay.beta)]
        if lay.n_zeta:
            shared.append((-density * u, rows.scale, lay.zeta))
        if lay.n_lambda and type != "linear":
            shared.append((self.link.dcdf_dlam(u), np.ones(1), lay.lam))  # type: ignore[attr-defined]
        terms = self._terms(mixing, [(scaled, designs)], shared)
        values = u if type == "linear" else _blockwise(lambda b: self._values(b, type), u)
        return Predicted(values, cast(Any, terms), groups)  # row terms, not an array

    def _values(self, u: FloatArray, type: str) -> FloatArray:
        """``type`` (a probability type or ``"expected"``) at the standardised cut-points ``u``."""
        if type == "cumprob":
            return cumulative_probabilities(self.link, u, np.zeros(u.shape[0]))
        if type == "exceedance":
            return self.link.sf(u)
        values = _category_probabilities(self.link, u)
        return (values @ self.fit._scores())[:, None] if type == "expected" else values

    def slope_terms(self, direction: DesignRows, type: str) -> Predicted | None:
        """The slope of ``type`` along ``direction`` and its Jacobian as row terms.

        The same derivatives as :meth:`slope` (module docstring), sorted by
        the design block they multiply.  None for other types.
        """
        found = self._mixing(type)
        if found is None:
            return None
        (mixing, groups), (u, s, designs) = found, self._cut_designs()
        lay, rows = self.layout, self.new_rows
        dX, dW, dZ = (self.design(name, direction) for name in ("X", "W", "Z"))
        m, n_cuts = u.shape
        s_dot = self._log_scale_step(dZ, direction) if lay.n_zeta else np.zeros(m)
        shift = dX @ self.params[lay.beta] + self.design("offset", direction)
        jac = self.model.threshold_jacobian
        own = [_nominal_part(jac, dW, cut) for cut in range(n_cuts)] if lay.n_nominal_cols else []
        moved = np.column_stack(
            [
                own[cut] @ self.params[lay.thresholds] - shift if own else -shift
                for cut in range(n_cuts)
            ]
        )
        u_dot = moved / s[:, None] - u * s_dot[:, None]
        if type == "linear":
            density, along = np.ones_like(u), np.zeros_like(u)
        else:
            density = self.link.pdf(u)
            finite = np.isfinite(u) & (density > 0)
            with np.errstate(invalid="ignore"):
                curvature = np.where(finite, self.link.dlog_pdf(np.where(finite, u, 0.0)), 0.0)
            along = density * curvature * u_dot
        by_cut: list[tuple[FloatArray, Sequence[FloatArray]]] = [
            ((along - density * s_dot[:, None]) / s[:, None], designs)
        ]
        if own:
            by_cut.append((density / s[:, None], own))
        shared = [
            ((density * s_dot[:, None] - along) / s[:, None], rows.X, lay.beta),
            (-density / s[:, None], dX, lay.beta),
        ]
        if lay.n_zeta:
            zeta = -along * u + density * (s_dot[:, None] * u - moved / s[:, None])
            shared += [(zeta, rows.scale, lay.zeta), (-density * u, dZ, lay.zeta)]
        if lay.n_lambda and type != "linear":
            dlog = np.where(finite, self.link.dlog_pdf_dlam(np.where(finite, u, 0.0)), 0.0)  # type: ignore[attr-defined]
            shared.append((density * dlog * u_dot, np.ones(1), lay.lam))
        terms = self._terms(mixing, by_cut, shared)
        return Predicted((density * u_dot) @ mixing.T, cast(Any, terms), groups)

    def _cuts(self) -> tuple[FloatArray, FloatArray]:
        """Standardised cut-points ``u`` (m, K - 1) and their gradients (m, K - 1, k)."""
        model = self.model
        return cut_gradients(
            self.params,
            self.layout,
            model.threshold_jacobian,
            self.new_rows,
            threshold_offset=model.threshold_offset,
        )

    def _probabilities(self, cumulative: bool) -> tuple[FloatArray, FloatArray]:
        model = self.model
        return probability_gradients(
            self.link,
            self.params,
            self.layout,
            model.threshold_jacobian,
            self.new_rows,
            cumulative=cumulative,
            threshold_offset=model.threshold_offset,
        )

    def predict(self, type: str) -> Predicted:
        if type in ("linear", "latent"):
            return self._linear(type)
        if type == "cumprob":
            return Predicted(*self._probabilities(cumulative=True), self.levels[:-1])
        if type == "exceedance":  # 1 - F(u_j) from the survival function
            _, cum_grad = self._probabilities(cumulative=True)
            return Predicted(self.link.sf(self._cuts()[0]), -cum_grad, self.levels[1:])
        return self.from_categories(*self._probabilities(cumulative=False), type)

    def _linear(self, type: str) -> Predicted:
        u, grad_u = self._cuts()
        if type == "linear":
            return Predicted(u, grad_u, self.cuts)
        lay, rows = self.layout, self.new_rows
        mean_cut, grad = self.mean_cut()
        values = rows.X @ self.params[lay.beta] + rows.offset - mean_cut
        grad = -grad
        grad[:, lay.beta] = rows.X
        return Predicted(values[:, None], grad[:, None, :], [""])

    def mean_cut(self) -> tuple[FloatArray, FloatArray]:
        """Each row's mean cut-point ``mean_j theta_j`` (m,) and its gradient (m, k)."""
        lay, rows = self.layout, self.new_rows
        jac = self.model.threshold_jacobian
        n_cuts = jac.shape[0]
        theta = np.column_stack(
            [cut_point_design(jac, rows.nominal, j) for j in range(n_cuts)]
        ).reshape(rows.X.shape[0], n_cuts, -1)
        mean_design = theta.mean(axis=1)  # (m, n_threshold_block)
        fixed = self.model.threshold_offset
        mean_fixed = 0.0 if fixed is None else float(np.mean(fixed))
        grad = np.zeros((rows.X.shape[0], lay.n_params))
        grad[:, lay.thresholds] = mean_design
        return mean_design @ self.params[lay.thresholds] + mean_fixed, grad

    def slope(self, direction: DesignRows, type: str) -> Predicted:
        lay, rows = self.layout, self.new_rows
        u, grad_u = self._cuts()
        dX, dW, dZ = (self.design(name, direction) for name in ("X", "W", "Z"))
        d_offset = self.design("offset", direction)
        jac = self.model.threshold_jacobian
        m, n_cuts = u.shape
        scales = row_scales(rows, self.params[lay.zeta])
        s = np.ones(m) if scales is None else scales
        s_dot = self._log_scale_step(dZ, direction) if lay.n_zeta else np.zeros(m)
        if type == "latent":
            return self._latent_slope(dX, dW, d_offset)
        u_dot = np.empty((m, n_cuts))
        grad_dot = np.zeros((m, n_cuts, lay.n_params))
        shift = dX @ self.params[lay.beta] + d_offset
        for cut in range(n_cuts):
            nominal = _nominal_part(jac, dW, cut) if lay.n_nominal_cols else None
            moved = -shift if nominal is None else nominal @ self.params[lay.thresholds] - shift
            u_dot[:, cut] = moved / s - u[:, cut] * s_dot
            full = cut_point_design(jac, rows.nominal, cut)
            own = 0.0 if nominal is None else nominal
            grad_dot[:, cut, lay.thresholds] = (own - s_dot[:, None] * full) / s[:, None]
            grad_dot[:, cut, lay.beta] = (s_dot[:, None] * rows.X - dX) / s[:, None]
            if lay.n_zeta:
                grad_dot[:, cut, lay.zeta] = (-moved / s + s_dot * u[:, cut])[
                    :, None
                ] * rows.scale - u[:, cut, None] * dZ
        if type == "linear":
            return Predicted(u_dot, grad_dot, self.cuts)
        density = self.link.pdf(u)
        finite = np.isfinite(u) & (density > 0)
        with np.errstate(invalid="ignore"):
            curvature = np.where(finite, self.link.dlog_pdf(np.where(finite, u, 0.0)), 0.0)
        cum_dot = density * u_dot
        cum_grad = density[:, :, None] * ((curvature * u_dot)[:, :, None] * grad_u + grad_dot)
        if lay.n_lambda:  # f depends on lambda: d f / d lambda = f d log f / d lambda
            dlog = np.where(finite, self.link.dlog_pdf_dlam(np.where(finite, u, 0.0)), 0.0)  # type: ignore[attr-defined]
            cum_grad[:, :, lay.lam] += (density * dlog * u_dot)[:, :, None]
        if type == "cumprob":
            return Predicted(cum_dot, cum_grad, self.levels[:-1])
        if type == "exceedance":
            return Predicted(-cum_dot, -cum_grad, self.levels[1:])
        zero_v, zero_g = np.zeros((m, 1)), np.zeros((m, 1, lay.n_params))
        prob_dot = np.diff(np.hstack([zero_v, cum_dot, zero_v]), axis=1)
        prob_grad = np.diff(np.concatenate([zero_g, cum_grad, zero_g], axis=1), axis=1)
        return self.from_categories(prob_dot, prob_grad, type)

    def _latent_slope(self, dX: FloatArray, dW: FloatArray, d_offset: FloatArray) -> Predicted:
        lay = self.layout
        jac = self.model.threshold_jacobian
        m = dX.shape[0]
        mean_nominal = np.zeros((m, lay.n_threshold_block))
        if lay.n_nominal_cols:
            mean_nominal = np.mean([_nominal_part(jac, dW, j) for j in range(jac.shape[0])], axis=0)
        values = dX @ self.params[lay.beta] + d_offset - mean_nominal @ self.params[lay.thresholds]
        grad = np.zeros((m, lay.n_params))
        grad[:, lay.thresholds] = -mean_nominal
        grad[:, lay.beta] = dX
        return Predicted(values[:, None], grad[:, None, :], [""])


class _StepMargins(_Shared):
    """Sequential and adjacent families: functions of the step predictors ``eta_j``."""

    def __init__(self, fit: OrdinalMarginsFit, params: FloatArray, rows: DesignRows) -> None:
        super().__init__(fit, params, rows)
        X, W, offset = self.design("X"), self.design("W"), self.design("offset")
        lay = self.layout
        n_steps = lay.n_alpha
        identity = np.eye(n_steps)
        m = X.shape[0]
        self.eta = np.empty((m, n_steps))
        self.grad_eta = np.zeros((m, n_steps, lay.n_params))
        location = X @ self.params[lay.beta] + offset
        for step in range(n_steps):
            design = cut_point_design(identity, W if lay.n_nominal_cols else np.zeros((m, 0)), step)
            self.eta[:, step] = design @ self.params[lay.thresholds] + location
            self.grad_eta[:, step, lay.thresholds] = design
            self.grad_eta[:, step, lay.beta] = X

    def _levels(self) -> list[Any]:
        """``row_derivatives`` of every row as if it were in each level."""
        family = self.model.family_spec
        m = self.eta.shape[0]
        finite = np.all(np.isfinite(self.eta), axis=1)
        eta = np.where(finite[:, None], self.eta, 0.0)
        out = []
        for level in range(len(self.levels)):
            derivatives = family.row_derivatives(eta, np.full(m, level, dtype=np.intp))
            out.append((derivatives, finite))
        return out

    def _categories(self) -> tuple[FloatArray, FloatArray]:
        prob = np.empty((self.eta.shape[0], len(self.levels)))
        grad = np.empty((*prob.shape, self.layout.n_params))
        for level, (rd, finite) in enumerate(self._levels()):
            p = np.where(finite, np.exp(rd.log_prob), np.nan)
            prob[:, level] = p
            grad[:, level] = p[:, None] * np.einsum("mj,mjp->mp", rd.gradient, self.grad_eta)
        return prob, grad

    def predict(self, type: str) -> Predicted:
        if type == "linear":
            return Predicted(self.eta, self.grad_eta, self.cuts)
        prob, grad = self._categories()
        return self.from_categories(prob, grad, type)

    def slope(self, direction: DesignRows, type: str) -> Predicted:
        lay = self.layout
        dX, dW = self.design("X", direction), self.design("W", direction)
        d_offset = self.design("offset", direction)
        m, n_steps = self.eta.shape
        eta_dot = np.empty((m, n_steps))
        grad_eta_dot = np.zeros((m, n_steps, lay.n_params))
        shift = dX @ self.params[lay.beta] + d_offset
        identity = np.eye(n_steps)
        for step in range(n_steps):
            nominal = (
                _nominal_part(identity, dW, step)
                if lay.n_nominal_cols
                else np.zeros((m, lay.n_threshold_block))
            )
            eta_dot[:, step] = nominal @ self.params[lay.thresholds] + shift
            grad_eta_dot[:, step, lay.thresholds] = nominal
            grad_eta_dot[:, step, lay.beta] = dX
        if type == "linear":
            return Predicted(eta_dot, grad_eta_dot, self.cuts)
        prob_dot = np.empty((m, len(self.levels)))
        prob_grad = np.empty((m, len(self.levels), lay.n_params))
        for level, (rd, finite) in enumerate(self._levels()):
            p = np.where(finite, np.exp(rd.log_prob), np.nan)
            g = rd.gradient
            along = np.einsum("mj,mj->m", g, eta_dot)  # g' eta_dot
            hessian = rd.curvature.dense()
            prob_dot[:, level] = p * along
            prob_grad[:, level] = p[:, None] * (
                along[:, None] * np.einsum("mj,mjp->mp", g, self.grad_eta)
                + np.einsum("mj,mjl,mlp->mp", eta_dot, hessian, self.grad_eta)
                + np.einsum("mj,mjp->mp", g, grad_eta_dot)
            )
        return self.from_categories(prob_dot, prob_grad, type)


def _encoded_expressions(design: Any) -> Iterator[tuple[str, bool, dict[str, Any]]]:
    """Each formula expression of the designs, whether it is categorical, its encoder state."""
    for terms in (design.location, design.nominal, design.scale):
        spec = None if terms is None else terms.spec
        for expr, (kind, state) in getattr(spec, "encoder_state", {}).items():
            yield expr, str(getattr(kind, "value", kind)) == "categorical", state
