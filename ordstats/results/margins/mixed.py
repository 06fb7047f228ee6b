r"""The margins protocol for clmm fits (:class:`~ordstats.MixedResults`).

A mixed model predicts in three ways (``re_form``, as ``MixedResults.predict``):
conditional on the groups' modes (``None``, the default), with the random effects
at zero (``0``, what emmeans reports for a clmm) or averaged over their
distribution (``"marginal"``, population averaged, by adaptive quadrature).
:meth:`MixedMarginsFit.margins_options` returns the same fit predicting the way
asked for; the verbs pass their fit options (``re_form=...``) to it.

The parameters are all of them: thresholds, fixed effects and the log-Cholesky
variance parameters (the conditional modes and the marginal SD depend on the
latter), with :meth:`~ordstats.MixedResults.cov_params` as covariance
(parameters held on the boundary count as known).  Values, Jacobians and slopes
along the design are analytic (:mod:`ordstats.results.mixed_prediction`).

Types: ``"prob"``, ``"cumprob"``, ``"exceedance"``, ``"expected"``, ``"class"``
and, except for marginal predictions (which are not a link function of one
linear predictor), ``"linear"`` (the cut-points ``theta_j - lambda``) and
``"latent"`` (``lambda`` minus the mean cut-point, ``lambda`` including the
random part ``z'b^`` for conditional predictions).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd

from ordstats._typing import FloatArray
from ordstats.design.newdata import (
    estimability,
    fitted_rows,
    newdata_columns,
    newdata_offset,
    newdata_warned_once,
)
from ordstats.design.random import NewTermRows, random_columns
from ordstats.errors import OrdstatsError, refuse_unknown_options
from ordstats.results.fitted import level_scores
from ordstats.results.margins.grid import fitted_row_columns, offset_columns
from ordstats.results.margins.protocol import (
    OFFSET_COLUMN,
    PREDICTION_TYPES,
    ROW_VERBS,
    DesignRows,
    MarginsFit,
    Predicted,
    check_type,
)
from ordstats.results.margins.table import MarginsTable
from ordstats.results.margins.verbs import (
    MarginsMethods,
    comparisons,
    hypotheses,
    predictions,
    slopes,
)
from ordstats.results.mixed_prediction import (
    MixedPredictor,
    MixedRows,
    check_re_form,
    prediction_rows,
)

__all__ = ["MixedMarginsFit", "MixedMarginsMethods"]

#: the options a mixed model's margins take (``margins_options``)
_OPTIONS = ("re_form",)
#: the column of ``margins_data`` holding an offset that was given as values (as for a clm)
_OFFSET = OFFSET_COLUMN
_MARGINAL_TYPES = tuple(t for t in PREDICTION_TYPES if t not in ("linear", "latent"))


class MixedMarginsFit:
    """:class:`~ordstats.results.margins.protocol.MarginsFit` for clmm fits."""

    #: how the fit predicts for the margins verbs (:meth:`margins_options`)
    margins_re_form: str | int | None = None

    if TYPE_CHECKING:
        model: Any
        params_all: FloatArray
        k_fixed: int

        def _prediction_covariance(self) -> FloatArray: ...

    def margins_options(self, **options: Any) -> MixedMarginsFit:
        """The same fit predicting as ``options`` say (``re_form=None | 0 | "marginal"``).

        Parameters
        ----------
        **options
            ``re_form``: None (conditional on the groups' modes), 0 (random
            effects at zero) or ``"marginal"`` (averaged over the random effects).

        Returns
        -------
        MixedMarginsFit
            A shallow copy; the fit itself is unchanged.

        Raises
        ------
        OrdstatsError
            For an option other than ``re_form``, or a ``re_form`` not listed.
        """
        unknown = [name for name in options if name not in _OPTIONS]
        if unknown:
            raise OrdstatsError(
                f"unknown option(s) {', '.join(map(repr, unknown))} for a mixed model; "
                "the one option is re_form (None: conditional on the groups' modes, 0: random "
                "effects at zero, 'marginal': averaged over the random effects)"
            )
        view = copy.copy(self)
        if "re_form" in options:
            check_re_form(options["re_form"])
            view.margins_re_form = options["re_form"]
        return view

    # -- what the fit is ----------------------------------------------------------

    def margins_params(self) -> FloatArray:
        """Thresholds, fixed effects and log-Cholesky variance parameters."""
        return np.array(self.params_all, dtype=float)

    def margins_covariance(self) -> FloatArray:
        """:meth:`cov_params` (boundary parameters as known), or a clear error if singular."""
        matrix = self._prediction_covariance()
        if not np.all(np.isfinite(matrix)):
            raise OrdstatsError(
                "the covariance of the estimates is not available (the Hessian of the "
                "approximate log-likelihood is not positive definite), so the margins have no "
                "standard errors; check that the fit converged"
            )
        return matrix

    def margins_levels(self) -> list[str]:
        """The response level labels."""
        return [str(level) for level in self.model.levels]

    def margins_types(self) -> tuple[str, ...]:
        """All types; marginal predictions have no ``"linear"`` or ``"latent"``."""
        return _MARGINAL_TYPES if self._marginal else PREDICTION_TYPES

    @property
    def _marginal(self) -> bool:
        re_form = self.margins_re_form
        return isinstance(re_form, str) and re_form == "marginal"

    def margins_variables(self) -> list[str]:
        """The columns the fixed formula and the random terms' effects read (no groups)."""
        fixed = self.model.design.fixed
        names = list(newdata_columns(fixed.location, self.model.formula_context)[0])
        for term in self.model.terms:
            names += [c for c in random_columns(term, groups=False) if c not in names]
        return names

    def margins_term_codings(self) -> list[list[tuple[str, bool]]]:
        """The fixed formula's terms and their variables' codings (emmeans' nesting)."""
        location = self.model.design.fixed.location
        return location.term_codings(set(self.margins_variables()))

    def _group_columns(self) -> list[str]:
        columns: list[str] = []
        for term in self.model.terms:
            columns += [c for c in term.group_columns if c not in columns]
        return columns

    def margins_data(self) -> pd.DataFrame:
        """The estimation rows: predictor and grouping columns of the fitted rows.

        With the offset and weights columns the model read, and an offset given
        as values as the column ``"(offset)"`` (so that counterfactual copies of
        the rows keep their offsets).
        """
        model = self.model
        data = getattr(model, "source_data", None)
        if not isinstance(data, pd.DataFrame):
            raise OrdstatsError(
                "the DataFrame this mixed model was fitted on is not kept (the model was "
                "pickled or copied): pass the rows as newdata (a DataFrame)"
            )
        fixed = model.design.fixed
        if not data.index.is_unique:
            raise OrdstatsError(
                "the data this mixed model was fitted on has repeated index labels, so its "
                "rows cannot be recovered by label: pass the rows as newdata (a DataFrame)"
            )
        columns = self.margins_variables() + self._group_columns()
        columns += self._margins_offset_variables(list(data.columns))
        columns += [model.source_weights] if isinstance(model.source_weights, str) else []
        present = [c for c in dict.fromkeys(columns) if c in data.columns]
        rows = data.loc[fixed.row_index, present]
        if model.has_offset and fixed.offset_name is None:
            rows = rows.assign(**{_OFFSET: fixed.offset})
        return rows

    def _margins_offset_variables(self, columns: Sequence[str] | None = None) -> list[str]:
        """The ``columns`` (default: any) the offset reads (emmeans' grid has them)."""
        return offset_columns([self.model.design.fixed.offset_name], columns)

    def _margins_row_offsets(self, data: pd.DataFrame) -> FloatArray:
        """The offset of each row of ``data`` (emmeans' grid takes their mean)."""
        model = self.model
        if model.has_offset and _OFFSET in data.columns:
            return np.asarray(data[_OFFSET], dtype=float)
        column = model.design.fixed.offset_name
        return newdata_offset(
            None, data, data.index, column=column, fitted_with_offset=model.has_offset
        )

    def _margins_data_columns(self, names: list[str]) -> pd.DataFrame:
        """Columns of the fitted DataFrame the model does not use, on the estimation rows."""
        model = self.model
        data = getattr(model, "source_data", None)
        return fitted_row_columns(data, model.design.fixed, names)

    def _margins_estimability(
        self, data: pd.DataFrame, part: str | None = None
    ) -> tuple[FloatArray, FloatArray] | None:
        """The fixed design's rows of ``data`` over every column and the non-estimable basis.

        Every part of the fixed design, or only ``part`` (``"scale"``).  None
        unless one of them dropped aliased columns
        (:func:`ordstats.design.newdata.estimability`).
        """
        model = self.model
        fixed = model.design.fixed
        parts = {name: getattr(fixed, name, None) for name in ("location", "nominal", "scale")}
        chosen = list(parts.values()) if part is None else [parts[part]]
        return estimability(chosen, data, model.formula_context, fitted_rows(fixed))

    def margins_rows(self, data: pd.DataFrame) -> DesignRows:
        """The fixed design, offset and random terms' columns (and group codes) of ``data``."""
        offset = None
        if self.model.has_offset and _OFFSET in data.columns:
            offset = np.asarray(data[_OFFSET], dtype=float)
        rows = prediction_rows(self.model, data, offset, self.margins_re_form)
        arrays = {"X": rows.X, "offset": rows.offset}
        for t, part in enumerate(rows.re_parts):
            arrays[f"Z{t}"] = part.matrix
        extra = {
            "codes": [p.codes for p in rows.re_parts],
            "labels": [p.labels for p in rows.re_parts],
        }
        return DesignRows(arrays, rows.index, extra)

    @staticmethod
    def _mixed_rows(rows: DesignRows) -> MixedRows:
        parts = [
            NewTermRows(rows.arrays[f"Z{t}"], codes, labels)
            for t, (codes, labels) in enumerate(
                zip(rows.extra["codes"], rows.extra["labels"], strict=True)
            )
        ]
        return MixedRows(rows.arrays["X"], rows.arrays["offset"], rows.index, parts)

    # -- predictions ----------------------------------------------------------------

    def margins_predict(self, params: FloatArray, rows: DesignRows, type: str) -> Predicted:
        """Values of ``type`` at ``rows`` and their analytic Jacobian in ``params``."""
        type = check_type(type, self.margins_types(), self._phrase())
        predictor = MixedPredictor(self.model, params, self.margins_re_form)
        new = self._mixed_rows(rows)
        if type in ("linear", "latent"):
            at = predictor.location(new)
            return self._linear(predictor, at.value, at.gradient, type, slope=False)
        if type == "exceedance":
            return Predicted(*predictor.cumulative(new, complement=True), self.margins_levels()[1:])
        return self._from_cumulative(*predictor.cumulative(new), type, slope=False)

    def margins_slope(
        self, params: FloatArray, rows: DesignRows, direction: DesignRows, type: str
    ) -> Predicted:
        """Derivative of ``type`` along ``direction`` in the design, and its Jacobian."""
        type = check_type(type, self.margins_types(), self._phrase())
        if type == "class":
            raise OrdstatsError(
                "type='class' (the most probable level) has no derivative; use type='prob'"
            )
        predictor = MixedPredictor(self.model, params, self.margins_re_form)
        new, moved = self._mixed_rows(rows), self._mixed_rows(direction)
        if type in ("linear", "latent"):
            along = predictor.location(moved, codes_from=new)
            return self._linear(predictor, along.value, along.gradient, type, slope=True)
        values, gradient = predictor.cumulative_slope(new, moved)
        if type == "exceedance":
            return Predicted(-values, -gradient, self.margins_levels()[1:])
        return self._from_cumulative(values, gradient, type, slope=True)

    def _phrase(self) -> str:
        if self._marginal:
            return "population-averaged (re_form='marginal') predictions of a mixed model"
        return "a mixed model"

    def _from_cumulative(
        self, cum: FloatArray, gradient: FloatArray, type: str, slope: bool
    ) -> Predicted:
        """``P(Y <= j)`` (or its slope) and gradient mapped to ``type``."""
        levels = self.margins_levels()
        if type == "cumprob":
            return Predicted(cum, gradient, levels[:-1])
        m, k = gradient.shape[0], gradient.shape[2]
        first, last = np.zeros((m, 1)), np.full((m, 1), 0.0 if slope else 1.0)
        prob = np.diff(np.hstack([first, cum, last]), axis=1)
        prob[np.isnan(cum).any(axis=1)] = np.nan
        edge = np.zeros((m, 1, k))
        prob_gradient = np.diff(np.concatenate([edge, gradient, edge], axis=1), axis=1)
        if type == "prob":
            return Predicted(prob, prob_gradient, levels)
        if type == "expected":
            scores = level_scores(self.model.design.fixed.response.values)
            values = (prob @ scores)[:, None]
            return Predicted(values, np.einsum("mkp,k->mp", prob_gradient, scores)[:, None], [""])
        # "class": the most probable level's position
        valid = np.all(np.isfinite(prob), axis=1)
        position = np.argmax(np.where(valid[:, None], prob, 0.0), axis=1)
        return Predicted(np.where(valid, position, np.nan)[:, None], None, [""])

    def _linear(
        self,
        predictor: MixedPredictor,
        value: FloatArray,
        gradient: FloatArray,
        type: str,
        slope: bool,
    ) -> Predicted:
        """``"linear"``: ``theta_j - lambda``; ``"latent"``: ``lambda - mean(theta)``."""
        jacobian = predictor.problem.jacobian
        n_alpha = predictor.n_alpha
        if type == "latent":
            latent_gradient = gradient.copy()
            if not slope:
                value = value - float(np.mean(predictor.theta))
                latent_gradient[:, :n_alpha] -= jacobian.mean(axis=0)
            return Predicted(value[:, None], latent_gradient[:, None, :], [""])
        names = list(self.model.options.family_object().cutpoint_names(self.model.levels))
        if slope:
            cut_gradient = -np.repeat(gradient[:, None, :], jacobian.shape[0], axis=1)
            return Predicted(
                -np.repeat(value[:, None], jacobian.shape[0], axis=1), cut_gradient, names
            )
        cuts = predictor.theta[None, :] - value[:, None]
        cut_gradient = -np.repeat(gradient[:, None, :], jacobian.shape[0], axis=1)
        cut_gradient[:, :, :n_alpha] += jacobian[None, :, :]
        return Predicted(cuts, cut_gradient, names)


_RE_FORM_DOC = """

        ``re_form``: None (conditional on the groups' modes; newdata needs the
        grouping columns), 0 (random effects at zero, as emmeans) or
        ``"marginal"`` (averaged over the random effects); the other arguments
        as for a clm fit.
        """


class MixedMarginsMethods(MarginsMethods):
    """The margins verbs on a clmm fit, with ``re_form`` choosing the prediction."""

    def _as(
        self, re_form: str | int | None, verb: Callable[..., Any], method: str, options: Any
    ) -> MarginsMethods:
        """The fit predicting as ``re_form`` says, once ``options`` are known to ``verb``."""
        refuse_unknown_options(method, verb, options, ["re_form"])
        return cast(MarginsMethods, cast(Any, self).margins_options(re_form=re_form))

    def predictions(
        self, newdata: Any = None, *, re_form: str | int | None = None, **options: Any
    ) -> MarginsTable:
        """Predictions per row (see :func:`ordstats.results.margins.verbs.predictions`)."""
        fit = self._as(re_form, predictions, "predictions", options)
        with newdata_warned_once():  # warned once, at the caller
            return MarginsMethods.predictions(fit, newdata, **options)

    def avg_predictions(
        self,
        newdata: Any = None,
        *,
        by: Any = True,
        re_form: str | int | None = None,
        **options: Any,
    ) -> MarginsTable:
        """Average predictions, by default over all rows (``by=True``)."""
        fit = self._as(re_form, predictions, "avg_predictions", options)
        with newdata_warned_once():  # warned once, at the caller
            return MarginsMethods.avg_predictions(fit, newdata, by=by, **options)

    def comparisons(
        self, newdata: Any = None, *, re_form: str | int | None = None, **options: Any
    ) -> MarginsTable:
        """Comparisons per row (see :func:`ordstats.results.margins.verbs.comparisons`)."""
        fit = self._as(re_form, comparisons, "comparisons", options)
        with newdata_warned_once():  # warned once, at the caller
            return MarginsMethods.comparisons(fit, newdata, **options)

    def avg_comparisons(
        self,
        newdata: Any = None,
        *,
        by: Any = True,
        re_form: str | int | None = None,
        **options: Any,
    ) -> MarginsTable:
        """Average comparisons, by default over all rows (``by=True``)."""
        fit = self._as(re_form, comparisons, "avg_comparisons", options)
        with newdata_warned_once():  # warned once, at the caller
            return MarginsMethods.avg_comparisons(fit, newdata, by=by, **options)

    def slopes(
        self, newdata: Any = None, *, re_form: str | int | None = None, **options: Any
    ) -> MarginsTable:
        """Slopes per row (see :func:`ordstats.results.margins.verbs.slopes`)."""
        fit = self._as(re_form, slopes, "slopes", options)
        with newdata_warned_once():  # warned once, at the caller
            return MarginsMethods.slopes(fit, newdata, **options)

    def avg_slopes(
        self,
        newdata: Any = None,
        *,
        by: Any = True,
        re_form: str | int | None = None,
        **options: Any,
    ) -> MarginsTable:
        """Average slopes, by default over all rows (``by=True``)."""
        fit = self._as(re_form, slopes, "avg_slopes", options)
        with newdata_warned_once():  # warned once, at the caller
            return MarginsMethods.avg_slopes(fit, newdata, by=by, **options)

    def hypotheses(self, hypothesis: Any, *, conf_level: float = 0.95) -> MarginsTable:
        """Wald tests of functions of all parameters (variance parameters included)."""
        model = cast(Any, self).model
        names = list(model.param_names) + list(model.variance_names)
        return hypotheses(cast(MarginsFit, self), hypothesis, names=names, conf_level=conf_level)


for _name in ROW_VERBS:
    _method = getattr(MixedMarginsMethods, _name)
    _method.__doc__ = _method.__doc__.rstrip() + _RE_FORM_DOC
