r"""Predicted probabilities with delta-method standard errors and intervals.

For a row with location ``eta = x'beta + o``, scale ``s = exp(z'zeta)`` and
standardised cut-points :math:`u_j = (\theta_j(w) - \eta)/s`, the category
probabilities :math:`P_j = F(u_j) - F(u_{j-1})` have gradients

.. math:: \nabla P_j = f(u_j)\,\nabla u_j - f(u_{j-1})\,\nabla u_{j-1},\qquad
          \nabla u_j = \big(([1, w] \otimes J_j)/s,\; -x/s,\; -u_j z\big),

and delta-method standard errors :math:`\sqrt{\nabla P^\top V \nabla P}` with
``V`` the covariance of the estimates (robust if the model was fitted so).
For a flexible link the gradient includes :math:`\partial F/\partial\lambda`, so
the uncertainty of ``lambda`` counts (R's ``predict.clm`` leaves it out).
As R's ``predict.clm``, the ``1 - alpha`` interval is formed on the logit scale
and mapped back, :math:`\operatorname{expit}\{\operatorname{logit} P \pm z\,
\mathrm{se}/(P(1-P))\}`, so it stays inside ``(0, 1)``.  Cumulative
probabilities :math:`F(u_j)` get the same treatment (R's ``cum.prob`` intervals
are ``P +- z se`` on the probability scale instead, which can leave ``[0, 1]``).

Linear predictors have gradients that are linear in the estimates, so their
delta-method standard errors are exact: ``which="linear"`` is statsmodels'
``x'beta + o`` (gradient ``x`` in ``beta``), ``which="linear.predictor"`` R's
``predict.clm(type = "linear.predictor")``: ``eta1 = u_y`` and
``eta2 = u_{y-1}`` at each row's level ``y`` (gradients ``\nabla u``), with
``+-inf`` beyond the end cut-points where R puts ``+-1e5``.  Their intervals
are ``eta +- z se``, as R's.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from ordstats._typing import FloatArray, IntArray
from ordstats.core.links import Link
from ordstats.core.thresholds import cut_point_design
from ordstats.data.prediction import predict_in_chunks
from ordstats.data.rows import UsedRows
from ordstats.data.spark import SparkSource
from ordstats.errors import (
    MissingDataWarning,
    OrdstatsError,
    PredictionError,
    PredictionWarning,
    user_stacklevel,
)
from ordstats.families.cumulative.likelihood import ParamLayout
from ordstats.families.cumulative.prediction import (
    category_probabilities,
    cumulative_probabilities,
    level_cut_positions,
    level_intervals,
)
from ordstats.families.problem import row_scales
from ordstats.results.arguments import normal_quantile
from ordstats.results.persistence import rows_removed_error
from ordstats.results.state import FittedState
from ordstats.results.values import warn_after_selection

__all__ = [
    "LINEAR_KINDS",
    "PredictionResults",
    "PredictionSEMethods",
    "complementary_probabilities",
    "cut_gradients",
    "probability_gradients",
    "warn_rank_deficient",
]


#: ``which`` of :meth:`PredictionSEMethods.get_prediction` for linear predictors:
#: statsmodels' ``x'beta + o`` and R's ``predict.clm`` ``eta1``/``eta2``
LINEAR_KINDS = ("linear", "linear.predictor")


@dataclass(frozen=True)
class NewRows:
    """Design arrays of the rows to predict for.

    Attributes
    ----------
    X : ndarray, shape (m, p)
    offset : ndarray, shape (m,)
    nominal : ndarray, shape (m, r)
    scale : ndarray, shape (m, s)
    scale_offset : ndarray, shape (m,), or None
        The known part of the log scale (R's ``offset()`` of the scale formula).
    """

    X: FloatArray
    offset: FloatArray
    nominal: FloatArray
    scale: FloatArray
    scale_offset: FloatArray | None = None

    def log_scale(self, zeta: FloatArray) -> FloatArray:
        """Each row's log scale ``z'zeta + q``."""
        linear: FloatArray = self.scale @ zeta
        return linear if self.scale_offset is None else linear + self.scale_offset


def cut_gradients(
    params: FloatArray,
    layout: ParamLayout,
    jacobian: FloatArray,
    rows: NewRows,
    threshold_offset: FloatArray | None = None,
) -> tuple[FloatArray, FloatArray]:
    """Standardised cut-points ``u`` (m, K-1) and their gradients (m, K-1, k)."""
    m = rows.X.shape[0]
    n_cuts = jacobian.shape[0]
    eta = rows.X @ params[layout.beta] + rows.offset
    scales = row_scales(rows, params[layout.zeta])
    s = np.ones(m) if scales is None else scales
    u = np.empty((m, n_cuts))
    grad = np.zeros((m, n_cuts, layout.n_params))
    for cut in range(n_cuts):
        design = cut_point_design(jacobian, rows.nominal, cut)
        fixed = 0.0 if threshold_offset is None else threshold_offset[cut]
        u[:, cut] = (design @ params[layout.thresholds] + fixed - eta) / s
        grad[:, cut, layout.thresholds] = design / s[:, None]
        grad[:, cut, layout.beta] = -rows.X / s[:, None]
        if layout.n_zeta:
            grad[:, cut, layout.zeta] = -u[:, cut, None] * rows.scale
    return u, grad


def probability_gradients(
    link: Link,
    params: FloatArray,
    layout: ParamLayout,
    jacobian: FloatArray,
    rows: NewRows,
    cumulative: bool = False,
    threshold_offset: FloatArray | None = None,
) -> tuple[FloatArray, FloatArray]:
    """Probabilities and their gradients with respect to the parameters.

    Parameters
    ----------
    link : Link
    params : ndarray
        Estimates in the likelihood's order.
    layout : ParamLayout
    jacobian : ndarray
        Threshold Jacobian ``J``.
    rows : NewRows
    cumulative : bool
        ``P(Y <= j)`` for ``j < K`` instead of ``P(Y = j)``.
    threshold_offset : ndarray, shape (K - 1,), optional
        Fixed cut-points ``c`` of ``theta = J a + c``.

    Returns
    -------
    prob : ndarray, shape (m, K) or (m, K - 1)
    gradient : ndarray, shape (m, K, k) or (m, K - 1, k)
    """
    u, grad_u = cut_gradients(params, layout, jacobian, rows, threshold_offset)
    no_shift = np.zeros(u.shape[0])  # u is already standardised
    density = link.pdf(u)[:, :, None] * grad_u  # gradient of F(u_j)
    if layout.n_lambda:  # a flexible link: F depends on lambda directly too
        density[:, :, layout.lam] += link.dcdf_dlam(u)[:, :, None]  # type: ignore[attr-defined]
    if cumulative:
        return cumulative_probabilities(link, u, no_shift), density
    m, _, k = density.shape
    padded = np.concatenate([np.zeros((m, 1, k)), density, np.zeros((m, 1, k))], axis=1)
    prob = category_probabilities(link, u, no_shift)
    return prob, padded[:, 1:] - padded[:, :-1]


def complementary_probabilities(categories: FloatArray, cumulative: bool = False) -> FloatArray:
    """``1 - P`` without cancellation, from the category probabilities.

    Parameters
    ----------
    categories : ndarray, shape (m, K)
        ``P(Y = k)``.
    cumulative : bool
        Complements of ``P(Y <= j)``, ``j < K`` (that is ``P(Y > j)``), instead
        of those of ``P(Y = j)``.

    Returns
    -------
    ndarray, shape (m, K) or (m, K - 1)
        Sums of the other categories' probabilities, accurate when ``P`` is
        within rounding of 1.

    Examples
    --------
    >>> q = complementary_probabilities(np.array([[1e-30, 1.0, 2e-30]]))
    >>> bool(np.isclose(q[0, 1], 3e-30, rtol=1e-12, atol=0.0))  # where 1 - 1.0 gives 0
    True
    """
    m = categories.shape[0]
    zero = np.zeros((m, 1))
    before = np.hstack([zero, np.cumsum(categories[:, :-1], axis=1)])
    after = np.hstack([np.cumsum(categories[:, :0:-1], axis=1)[:, ::-1], zero])
    return after[:, :-1] if cumulative else before + after


class PredictionResults:
    """Predicted probabilities with standard errors and confidence intervals.

    Not created directly: ``OrdinalResults.get_prediction`` returns it.

    Attributes
    ----------
    predicted : pandas.DataFrame
        Probabilities, one row per new row and one column per level.
    se : pandas.DataFrame
        Delta-method standard errors, same shape.
    which : str
        ``"prob"``, ``"cumprob"``, ``"linear"`` or ``"linear.predictor"``.
    """

    def __init__(
        self,
        prob: FloatArray,
        complement: FloatArray,
        gradient: FloatArray,
        covariance: FloatArray,
        index: pd.Index,
        columns: list[str],
        which: str,
    ) -> None:
        variance = np.einsum("mjk,kl,mjl->mj", gradient, covariance, gradient)
        self.which = which
        self._complement = complement
        self.predicted = pd.DataFrame(prob, index=index, columns=columns)
        self.se = pd.DataFrame(np.sqrt(np.maximum(variance, 0.0)), index=index, columns=columns)

    #: the parts of :meth:`wide` (rows predicted chunk by chunk are stacked in this form)
    _PARTS = ("predicted", "se", "complement")

    def wide(self) -> pd.DataFrame:
        """Probabilities, SEs and complements side by side: columns ``(part, level)``."""
        complement = pd.DataFrame(
            self._complement, index=self.predicted.index, columns=self.predicted.columns
        )
        return pd.concat([self.predicted, self.se, complement], axis=1, keys=list(self._PARTS))

    @classmethod
    def from_wide(cls, wide: pd.DataFrame, which: str) -> PredictionResults:
        """The results whose :meth:`wide` form is ``wide`` (e.g. stacked over chunks)."""
        out = cls.__new__(cls)
        out.which = which
        out.predicted = wide["predicted"].copy()
        out.se = wide["se"].copy()
        out._complement = wide["complement"].to_numpy(dtype=float)
        return out

    def conf_int(self, alpha: float = 0.05) -> tuple[pd.DataFrame, pd.DataFrame]:
        """Lower and upper ``1 - alpha`` limits, formed on the logit scale.

        Parameters
        ----------
        alpha : float

        Returns
        -------
        lower, upper : pandas.DataFrame
        """
        z = normal_quantile(alpha)
        p, q, se = self.predicted.to_numpy(), self._complement, self.se.to_numpy()
        if self.which in LINEAR_KINDS:  # R's eta +- z se (an infinite end stays infinite)
            return self._frame(p - z * se), self._frame(p + z * se)
        with np.errstate(divide="ignore", invalid="ignore"):
            # logit(p) = log p - log(1 - p), with 1 - p summed from the other levels
            half = z * se / (p * q)
            centre = np.log(p) - np.log(q)
            lower, upper = special.expit(centre - half), special.expit(centre + half)
        # probabilities that underflow to 0 or 1 carry no uncertainty at this precision; a
        # NaN standard error (no covariance: an L1 penalty) gives NaN limits
        lower = np.where(se == 0, p, lower)
        upper = np.where(se == 0, p, upper)
        return self._frame(lower), self._frame(upper)

    def _frame(self, values: FloatArray) -> pd.DataFrame:
        """``values`` labelled as :attr:`predicted`."""
        return pd.DataFrame(values, index=self.predicted.index, columns=self.predicted.columns)

    def summary_frame(self, alpha: float = 0.05) -> pd.DataFrame:
        """One row per (new row, level): ``prob``, ``se``, ``ci_lower``, ``ci_upper``.

        For linear predictors the first column is ``linear`` and the second
        index level ``quantity`` (``linear``; ``eta1``/``eta2``, or the cut-points'
        levels for new rows without the response).

        Parameters
        ----------
        alpha : float
            One minus the confidence level of the intervals.

        Returns
        -------
        pandas.DataFrame
            Indexed by ``(row, level)``: the rows' index (its own names, or
            ``"row"`` for an unnamed one; every level of a MultiIndex) and the
            response level.
        """
        lower, upper = self.conf_int(alpha)
        linear = self.which in LINEAR_KINDS
        value = "linear" if linear else "prob"
        parts = {value: self.predicted, "se": self.se, "ci_lower": lower, "ci_upper": upper}
        long = {name: frame.stack() for name, frame in parts.items()}
        table = pd.DataFrame(long)
        # the rows' own index names (one per level of a MultiIndex), else "row"
        row_names = [
            name if name is not None else ("row" if len(self.predicted.index.names) == 1 else None)
            for name in self.predicted.index.names
        ]
        table.index.names = [*row_names, "quantity" if linear else "level"]
        return table

    def __repr__(self) -> str:
        rows, cols = self.predicted.shape
        kind = "columns" if self.which in LINEAR_KINDS else "levels"
        return f"<PredictionResults: {self.which} for {rows} rows x {cols} {kind}>"


def check_prediction_which(which: object, linear: bool = True) -> None:
    """Refuse a ``which`` that ``get_prediction`` has no standard errors for, saying what to use.

    Parameters
    ----------
    which : object
    linear : bool
        Whether the fit has standard errors of linear predictors (``"linear"``,
        ``"linear.predictor"``).

    Raises
    ------
    PredictionError
        Unless ``which`` is one of those the fit has.
    """
    known = ("prob", "cumprob", *LINEAR_KINDS) if linear else ("prob", "cumprob")
    if which in known:
        return
    hint = {
        "class": (
            "; classes have no standard errors (R's predict.clm drops se.fit for "
            "type = 'class' too): use predict(newdata, which='class')"
        ),
        "linear": (
            "; standard errors of the linear predictor are not available for this fit: use "
            "predict(newdata, which='linear') for its values"
        ),
    }.get(which if isinstance(which, str) else "", "")
    names = ", ".join(map(repr, known[:-1])) + f" or {known[-1]!r}"
    raise PredictionError(f"which must be {names}; got {which!r}{hint}")


def _warn_missing_rows(wide: pd.DataFrame, kind: str = "Dask") -> None:
    """One warning for the rows of a Dask or Spark result without predictions."""
    missing = int(wide["predicted"].isna().any(axis=1).sum())
    if missing:
        warnings.warn(
            f"{missing} row(s) of the {kind} DataFrame have missing or non-finite predictor "
            "values; their predictions are NaN",
            MissingDataWarning,
            stacklevel=user_stacklevel(),
        )


def _aliased_columns(design: Any) -> list[str]:
    """The columns a fit dropped as aliased (location, nominal and scale parts).

    Left out: columns of a declared factor level without rows (new rows with
    such a level are predicted as NaN, with a warning of their own, and the
    other rows do not depend on them), and location columns that are nominal
    effects too (the nominal effect holds their location shift).
    """
    nominal = set(design.nominal.names) if design.nominal else set()
    parts = [part for part in (design.location, design.nominal, design.scale) if part]
    return [
        name
        for part in parts
        for name in part.aliased
        if not _of_empty_level(name, part.empty_levels)
        and not (part is design.location and name in nominal)
    ]


def _of_empty_level(name: str, empty_levels: dict[str, list[Any]]) -> bool:
    """Whether a column name codes a level without rows (``temp[T.hot]``, ``temp[hot]``)."""
    for column, levels in empty_levels.items():
        for piece in name.split(":"):
            if not (piece.startswith(f"{column}[") and piece.endswith("]")):
                continue
            coded = piece[len(column) + 1 : -1]
            if any(coded == str(lv) or coded.endswith(f".{lv}") for lv in levels):
                return True
    return False


def warn_rank_deficient(design: Any, newdata: Any) -> None:
    """Warn, as R's ``predict.clm`` does, when new rows meet a fit that dropped aliased columns.

    The fit estimated no effect for a dropped column: its rows could not tell
    it from the columns it is a combination of.  New rows where it is another
    combination are predicted as if it were not there.  Silent without new
    rows (``newdata`` None: the fitted rows), as R is.
    """
    if newdata is None:
        return
    dropped = _aliased_columns(design)
    if dropped:
        names = ", ".join(map(repr, dropped))
        warnings.warn(
            "predictions from a column rank-deficient fit may be misleading: the fit dropped "
            f"{names} as a linear combination of other columns, so new rows are predicted "
            "without an effect of it; where it is another combination in the new rows, drop "
            "it from the formula or fit data where it varies",
            PredictionWarning,
            stacklevel=user_stacklevel(),
        )


class PredictionSEMethods(FittedState):
    """Predicted probabilities with delta-method standard errors."""

    def _new_rows(self, newdata: Any, offset: Any) -> tuple[Any, pd.Index]:
        from ordstats.design import (
            newdata_matrices,
            newdata_scale_offset,
            refuse_offset_without_newdata,
        )

        model = self.model
        lay = model.problem.layout
        if newdata is None:
            refuse_offset_without_newdata(offset)
            if self.data_removed:
                raise rows_removed_error("get_prediction() without newdata")
            if not model.evaluator.keeps_rows:  # get_prediction(), mean() ... stream them
                raise OrdstatsError(
                    "this method needs the fitted rows in memory, and a model read in chunks "
                    "does not keep them: pass the rows as newdata (a DataFrame)"
                )
            data = model.data
            empty = np.empty((data.n_obs, 0))
            rows = NewRows(
                data.X,
                data.offset,
                data.nominal if lay.n_nominal_cols else empty,
                data.scale if lay.n_zeta else empty,
                data.scale_offset,
            )
            return rows, model.design.row_index
        X, W, Z, index = newdata_matrices(model.design, newdata, model.formula_context)
        offsets = self._new_offset(newdata, offset, index)  # type: ignore[attr-defined]
        return NewRows(X, offsets, W, Z, newdata_scale_offset(model.design, newdata)), index

    def _family_probability_gradients(self, rows: Any) -> tuple[np.ndarray, np.ndarray]:
        """Probabilities and gradients of new rows under a sequential/adjacent family."""
        template = self.model.problem.data  # the link, levels, thresholds: kept without rows
        n = rows.X.shape[0]
        new = replace(
            template,
            y=np.zeros(n, dtype=np.intp),
            X=rows.X,
            weights=np.ones(n),
            offset=rows.offset,
            nominal=rows.nominal,
            scale=rows.scale,
            scale_offset=rows.scale_offset,
        )
        return self.model.family_spec.probability_gradients(self.params.to_numpy(), new)

    def _prediction_in_chunks(self, which: str, offset: Any) -> PredictionResults:
        """``get_prediction`` of the fitted rows of data read in chunks, chunk by chunk.

        The rows and index of ``predict()`` on such a fit (rows in file order,
        numbered from 0 with the rows the fit left out keeping their numbers,
        for files; the frame's index for a DataFrame; a Dask result is
        computed): each chunk's fitted rows are predicted as newdata.  A Spark
        fit's rows are predicted in the cluster and collected
        (:meth:`_spark_prediction`).
        """
        source, fitted = self.model.source, self.model.evaluator.fitted_rows()
        if isinstance(source, SparkSource):
            return self._spark_prediction(source, fitted, which)

        def chunk(rows: pd.DataFrame) -> pd.DataFrame:
            return self._prediction_of(rows, which, None).wide()

        wide = predict_in_chunks(chunk, source, offset, rows=fitted)
        if hasattr(wide, "compute"):  # a Dask DataFrame: computed, as the results are arrays
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MissingDataWarning)  # said once, below
                wide = wide.compute()
            _warn_missing_rows(wide)
        return PredictionResults.from_wide(wide, which)

    def _spark_prediction(
        self, source: SparkSource, fitted: UsedRows, which: str
    ) -> PredictionResults:
        """:meth:`_prediction_in_chunks` of a Spark fit: its rows predicted in the cluster.

        Each partition's fitted rows are predicted where they are, and the
        probabilities and standard errors collected on the driver, as a Dask
        fit's are computed.  Each row is labelled by its position in the
        Spark DataFrame's own order (that of ``toPandas()``), the rows the fit
        left out counted: the labels of an in-memory fit of ``toPandas()``,
        and of a fit of the same Parquet file read in chunks.
        """

        def chunk(rows: pd.DataFrame) -> pd.DataFrame:
            return self._prediction_of(rows, which, None).wide()

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MissingDataWarning)  # said once, below
            wide = source.collect_numbered(chunk, fitted, source.first_chunk())
        _warn_missing_rows(wide, "Spark")
        return PredictionResults.from_wide(wide, which)

    def get_prediction(
        self, newdata: Any = None, which: str = "prob", *, offset: Any = None
    ) -> PredictionResults:
        """Predicted probabilities with delta-method standard errors and intervals.

        Parameters
        ----------
        newdata : pandas.DataFrame or array-like, optional
            Rows to predict for (default: the fitted rows; for a model read in
            chunks, from files or Dask, as :meth:`~ordstats.OrdinalResults.predict`
            gives them; a Spark fit's rows are predicted in the cluster and
            collected, each labelled by its position in the Spark DataFrame's
            order, as ``toPandas()`` gives it, counting the rows the fit left
            out).
        which : {"prob", "cumprob", "linear", "linear.predictor"}
            ``"prob"``: ``P(Y = j)`` for every level; ``"cumprob"``:
            ``P(Y <= j)`` for the first ``K - 1``; ``"linear"``: the linear
            predictor ``x'beta + offset`` (statsmodels' ``which="linear"``, as
            :meth:`~ordstats.OrdinalResults.predict` gives it), one column
            ``linear``; ``"linear.predictor"``: R's
            ``predict.clm(type = "linear.predictor")``, columns ``eta1`` and
            ``eta2``, ``(theta_y - x'beta - o)/s`` and ``(theta_{y-1} - x'beta - o)/s``
            at each row's response level ``y`` (``theta`` with the row's nominal
            effects, ``s`` its scale; ``+inf``/``-inf`` beyond the end
            cut-points, with standard error 0, where R gives ``+-1e5``).  The
            fitted rows and ``newdata`` with the response column have it; for
            ``newdata`` without it there is one column per cut-point (labelled
            by the level below it), ``(theta_j - x'beta - o)/s``: R's ``eta1``
            matrix without its last column (``eta2`` is it shifted one level).
        offset : float or array-like, optional
            Offset for ``newdata`` when the model has one that is not a column
            (as for :meth:`~ordstats.OrdinalResults.predict`: a pandas Series
            is paired with the rows of ``newdata`` by index label).

        Returns
        -------
        PredictionResults
            ``predicted``, ``se``, ``conf_int(alpha)`` and ``summary_frame(alpha)``
            (intervals on the logit scale: as R's ``predict.clm`` for
            probabilities; R's cumulative-probability intervals are
            ``P +- z se`` instead; ``estimate +- z se`` for linear predictors,
            as R's).
        """
        check_prediction_which(which, linear=self.model.family_spec.capabilities.latent_variable)
        warn_after_selection(self.covariance.kind, "predictions")
        if newdata is None and self.model.source is not None and not self.data_removed:
            return self._prediction_in_chunks(which, offset)
        warn_rank_deficient(self.model.design, newdata)
        return self._prediction_of(newdata, which, offset)

    def _prediction_of(self, newdata: Any, which: str, offset: Any) -> PredictionResults:
        """:meth:`get_prediction` of ``newdata`` (a DataFrame, or None: the fitted rows)."""
        rows, index = self._new_rows(newdata, offset)
        model = self.model
        if which in LINEAR_KINDS:
            return self._linear_prediction(rows, index, newdata, which)
        cumulative = which == "cumprob"
        if model.family_spec.capabilities.latent_variable:
            link = self._evaluation.link  # type: ignore[attr-defined]  # at lambda-hat
            args = (
                link,
                self.params.to_numpy(),
                model.problem.layout,
                model.threshold_jacobian,
                rows,
            )
            fixed = model.threshold_offset
            categories, gradient = probability_gradients(*args, threshold_offset=fixed)
            prob, gradient = (
                probability_gradients(*args, cumulative=True, threshold_offset=fixed)
                if cumulative
                else (categories, gradient)
            )
        else:
            categories, gradient = self._family_probability_gradients(rows)
            prob = categories
            if cumulative:  # P(Y <= j) and its gradient are sums over the levels up to j
                prob = np.cumsum(categories, axis=1)[:, :-1]
                gradient = np.cumsum(gradient, axis=1)[:, :-1]
        complement = complementary_probabilities(categories, cumulative)
        columns = model.levels[:-1] if cumulative else model.levels
        return PredictionResults(
            prob, complement, gradient, self.covariance.matrix, index, columns, which
        )

    def _linear_prediction(
        self, rows: NewRows, index: pd.Index, newdata: Any, which: str
    ) -> PredictionResults:
        """:meth:`get_prediction` of a linear predictor (``x'beta + o`` or R's eta1/eta2)."""
        model, params = self.model, self.params.to_numpy()
        layout = model.problem.layout
        if which == "linear":
            gradient = np.zeros((rows.X.shape[0], 1, layout.n_params))
            gradient[:, 0, layout.beta] = rows.X
            values = (rows.X @ params[layout.beta] + rows.offset)[:, None]
            columns = ["linear"]
        else:
            args = (params, layout, model.threshold_jacobian, rows, model.threshold_offset)
            values, gradient = cut_gradients(*args)
            codes = self._observed_levels(newdata)
            columns = list(model.levels[:-1])  # no response: every cut-point
            if codes is not None:
                values, gradient = observed_cuts(values, gradient, codes)
                columns = ["eta1", "eta2"]
        # no complements: the intervals of linear predictors are symmetric (zeros, not NaN,
        # which would mark the rows as missing when predicted chunk by chunk)
        unused = np.zeros(values.shape)
        cov = self.covariance.matrix
        return PredictionResults(values, unused, gradient, cov, index, columns, which)

    def _observed_levels(self, newdata: Any) -> IntArray | None:
        """Each row's response level (-1: missing), or None for new rows without the response."""
        if newdata is None:
            return np.asarray(self.model.data.y, dtype=np.intp)
        if not isinstance(newdata, pd.DataFrame) or self.model.endog_name not in newdata.columns:
            return None
        codes: IntArray = self._response_codes(  # type: ignore[attr-defined]
            newdata, "which='linear.predictor' gives eta1/eta2 at each row's own level"
        )
        return codes


def observed_cuts(
    cuts: FloatArray, gradient: FloatArray, codes: IntArray
) -> tuple[FloatArray, FloatArray]:
    """R's ``eta1``/``eta2``: the standardised cut-points above and below each row's level.

    Parameters
    ----------
    cuts : ndarray, shape (m, K - 1)
        Standardised cut-points ``u_j``.
    gradient : ndarray, shape (m, K - 1, k)
    codes : ndarray of int, shape (m,)
        Each row's level ``0, ..., K - 1`` (-1: missing, giving NaN).

    Returns
    -------
    values : ndarray, shape (m, 2)
        ``u_y`` and ``u_{y-1}``, ``+inf``/``-inf`` beyond the ends.
    gradient : ndarray, shape (m, 2, k)
        Zero beyond the ends (an end is no estimate).
    """
    m, n_cuts = cuts.shape
    zero = np.zeros((m, 1, gradient.shape[2]))
    padded_grad = np.concatenate([zero, gradient, zero], axis=1)
    picks = level_cut_positions(codes, n_cuts)  # u_y, u_{y-1} among the padded columns
    return level_intervals(cuts, codes), padded_grad[np.arange(m)[:, None], picks]
