r"""Estimated marginal means with R emmeans' semantics, on any fit with the margins protocol.

**Reference grid** (emmeans' ``ref_grid``): every level of every factor
predictor, each numeric predictor at the mean of its estimation rows (or the
values given in ``at=``, or ``cov_reduce`` of the column), in all
combinations; the first variable varies fastest.  As R's ``ref_grid``, a
factor the formula reads only as a number (``as.integer(f)``) is a covariate
of the grid: the mean of its codes ``1, ..., K``, with the formula evaluated
there (``as.integer(3.39)`` is 3, as in R).  Fits read in chunks get the
levels, means and cell counts from one pass over their rows
(:mod:`~ordstats.results.margins.grid_rows`).  Each cell's weight is the
number of rows of R's model frame in it: the estimation rows and the complete
rows of zero weight, which R's clm and polr keep in their model frame (a fit
read in chunks, on Dask or on Spark streams them in its pass too).  Prior weights are
not counted, as emmeans does for a plain weighted clm or polr; where R's
``recover_data`` evaluates the model frame again (a formula with function
calls such as ``log(x)``, or nominal or scale effects) emmeans sums the prior
weights instead, which ordstats does not follow: the same model would get
other weights for writing ``x`` as ``I(x)``.

**Modes** (emmeans' ``mode=`` for clm, polr and clmm fits), per grid cell:

``"latent"``
    ``x'beta`` minus the mean cut-point.  With nominal effects the cut-points
    differ between cells; as emmeans, every cell subtracts the mean of the
    cells' mean cut-points over the whole grid (one number, so nominal
    variables do not move latent means).  ``latent_cuts="cell"`` subtracts each
    cell's own mean cut-point instead (the margins verbs' ``"latent"`` type),
    which emmeans does not offer.  With a scale model, divided by the scale at
    the grid's mean scale design, as emmeans.
``"linear.predictor"``
    the ``K - 1`` cumulative linear predictors ``(theta_j - x'beta)/s``
    (one per cut, variable ``cut``).
``"cum.prob"``, ``"exc.prob"``
    ``P(Y <= j)`` and ``P(Y > j)``, one per cut (variable ``cut``).
``"prob"``
    ``P(Y = k)``, one per level (variable named as the response).
``"mean.class"``
    ``sum_k k P(Y = k)`` with scores ``1, ..., K``.

**Marginal means** average the cells' values over the variables not in
``specs``/``by`` with emmeans' weights: ``"equal"`` (default), ``"proportional"``
(the joint frequencies of the averaged-over variables), ``"outer"`` (the
product of their marginal frequencies), ``"cells"`` (each cell's own
frequency) and ``"flat"`` (equal over non-empty cells).  Estimates are linear
in the cells' values, so their Jacobian in the parameters is the same
average of the cells' analytic Jacobians and ``SE = sqrt(J V J')``.
Inference is z-based (``df = Inf``), as emmeans for these models.

**Nesting** (emmeans' ``nesting``): a factor whose every level occurs with one
level of another among the cells with rows is nested in it
(:mod:`~ordstats.results.margins.nesting`); it is averaged within each level
of its nesting factors over the levels that occur there, and the means of a
nested factor are listed with its nesting factors, only where they occur.
"""

from __future__ import annotations

import itertools
import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

import numpy as np
import pandas as pd
from scipy import stats

from ordstats._typing import FloatArray, IntArray
from ordstats.core.threads import numeric_threads
from ordstats.design.newdata import distributed_newdata_hint
from ordstats.design.response import format_level
from ordstats.errors import (
    MissingDataWarning,
    NotFittedError,
    OrdstatsError,
    StandardErrorWarning,
    check_flag,
    is_real_number,
    user_stacklevel,
)
from ordstats.results.margins.adjust import (
    Family,
    adjusted_p_values,
    check_adjust,
    critical_values,
)
from ordstats.results.margins.grid import coded_covariates, coded_factors
from ordstats.results.margins.grid_rows import (
    RowSummary,
    frame_summary,
    streamed_columns,
    streamed_summary,
)
from ordstats.results.margins.nesting import (
    AUTO,
    Nesting,
    find_nesting,
    format_nesting,
    implied_nesting,
    parse_nesting,
)
from ordstats.results.margins.protocol import OFFSET_COLUMN, MarginsFit
from ordstats.results.margins.stream import StreamingFit
from ordstats.results.margins.table import check_conf_level

__all__ = [
    "EMM_MODES",
    "EMM_WEIGHTS",
    "LATENT_CUTS",
    "EmmGrid",
    "EmmeansMethods",
    "emmeans",
    "emtrends",
    "joint_tests",
]

#: emmeans' modes for ordinal models and the protocol type each is computed from
EMM_MODES = {
    "latent": "latent",
    "linear.predictor": "linear",
    "cum.prob": "cumprob",
    "exc.prob": "exceedance",
    "prob": "prob",
    "mean.class": "prob",
    "scale": "latent",
}
#: emmeans' averaging weights
EMM_WEIGHTS = ("equal", "proportional", "outer", "cells", "flat")
#: the mean cut-points latent means subtract: the grid's (emmeans) or each cell's own
LATENT_CUTS = ("grid", "cell")
_ESTIMATE_NAMES = {
    "latent": "emmean",
    "linear.predictor": "emmean",
    "cum.prob": "cumprob",
    "exc.prob": "exc.prob",
    "prob": "prob",
    "mean.class": "mean.class",
    "scale": "emmean",
}
#: modes whose estimates are not linear in the location parameters
_NONLINEAR_MODES = ("cum.prob", "exc.prob", "prob", "mean.class")
_INFERENCE = ["SE", "df", "asymp.LCL", "asymp.UCL", "z.ratio", "p.value"]


# -- the reference grid ----------------------------------------------------------------


@dataclass(frozen=True)
class _Dimension:
    name: str
    levels: list[Any]


@dataclass(frozen=True)
class _Grid:
    """The full reference grid: dimensions (first fastest), values, Jacobian, cell weights."""

    dims: list[_Dimension]
    values: FloatArray  # (n,)
    jacobian: FloatArray  # (n, k)
    weights: FloatArray  # (n,) estimation rows per cell
    #: with a scale model: ``log s`` of every cell and its Jacobian (latent/linear modes)
    log_scale: tuple[FloatArray, FloatArray] | None = None
    #: a rank-deficient fit: each cell's location row over every column, and the basis
    #: of what the fit cannot estimate (:func:`ordstats.design.newdata.estimability`)
    estimability: tuple[FloatArray, FloatArray] | None = None

    @property
    def sizes(self) -> list[int]:
        return [len(d.levels) for d in self.dims]

    def index(self) -> IntArray:
        """``(n, n_dims)`` level positions of every cell, the first dimension fastest."""
        sizes = self.sizes
        positions = np.unravel_index(np.arange(int(np.prod(sizes))), sizes[::-1])
        return np.column_stack(positions[::-1]) if sizes else np.zeros((1, 0), dtype=np.intp)


def _response_name(fit: MarginsFit) -> str:
    """The response's name (the variable of ``mode="prob"``), "response" if the fit has none."""
    model = getattr(fit, "model", None)
    fixed = getattr(getattr(model, "design", None), "fixed", None)
    for name in (getattr(model, "endog_names", None), getattr(fixed, "response_name", None)):
        if isinstance(name, str):
            return name
    return "response"


def _ordered_variables(fit: MarginsFit, available: Sequence[str]) -> list[str]:
    """The predictors in the order the model's coefficients first name them (R's grid order)."""
    variables = [v for v in fit.margins_variables() if v in available]
    params = getattr(fit, "params", None)
    names = [str(n) for n in params.index] if isinstance(params, pd.Series) else []

    def uses(name: str, variable: str) -> bool:
        if re.search(rf"(?<![\w.]){re.escape(variable)}(?![\w])", name):
            return True
        # a sum or Helmert coding's column: the name and a number ("Infl1"), unless
        # that token is another variable's name
        coded = re.finditer(rf"(?<![\w.]){re.escape(variable)}\d+(?![\w.])", name)
        return any(match.group() not in variables for match in coded)

    def first_use(variable: str) -> int:
        hits = [i for i, name in enumerate(names) if uses(name, variable)]
        return min(hits) if hits else len(names)

    return sorted(variables, key=lambda v: (first_use(v), variables.index(v)))


def _offset_variables(fit: MarginsFit, available: Sequence[str] | None = None) -> list[str]:
    """The columns (of ``available``; None: any) that the fit's offsets read."""
    hook = getattr(fit, "_margins_offset_variables", None)
    names: list[str] = [] if hook is None else hook(available)
    return names


def _grid_variables(fit: MarginsFit, available: Sequence[str] | None) -> list[str]:
    """The grid's variables: the predictors (R's order), then the columns offsets read.

    As R's ``ref_grid``, an offset's variables are covariates of the grid (at
    their mean, or ``at=``): a scale offset is evaluated on it, the location
    offset is the rows' mean offset (:class:`_GridRows`).  ``available``: the
    columns of the rows (None: rows read in chunks, which have them all).
    """
    predictors = fit.margins_variables()
    variables = _ordered_variables(fit, predictors if available is None else available)
    offsets = _offset_variables(fit, None if available is None else list(available))
    return variables + [v for v in offsets if v not in variables]


def _check_names(names: Sequence[str], known: Sequence[str], what: str) -> None:
    unknown = [n for n in names if n not in known]
    if unknown:
        raise OrdstatsError(
            f"{what} {', '.join(map(repr, unknown))} is not a variable of the reference grid; "
            f"use one of {', '.join(map(repr, known))}"
        )


def _covariate_values(
    rows: _GridRows, name: str, at: Mapping[str, Any], cov_reduce: Any
) -> list[float]:
    if name in at:
        values = _chosen_values(at, name)
        # True is a slip, not 1, and '1' is text (as datagrid refuses them)
        numbers = [float(v) if is_real_number(v) else np.nan for v in values]
        if not np.all(np.isfinite(numbers)):
            raise OrdstatsError(
                f"at={{{name!r}: ...}} must be finite numbers, since {name!r} is a numeric "
                f"predictor; got {values!r:.80}"
            )
        return numbers
    if cov_reduce == "mean":
        return [rows.summary.mean(name)]
    if cov_reduce == "meanint":  # joint_tests: mean -/+ 1
        centre = rows.summary.mean(name)
        return [centre - 1.0, centre + 1.0]
    if cov_reduce == "median":
        return [float(np.median(rows.column(name)))]
    _check_cov_reduce(cov_reduce)  # a function, now
    reduced = np.atleast_1d(np.asarray(cov_reduce(rows.column(name)), dtype=object))
    try:
        values = [float(v) for v in reduced]
    except (TypeError, ValueError):
        values = []
    if not values or not np.all(np.isfinite(values)):
        raise OrdstatsError(
            f"cov_reduce must return one or more finite numbers for the numeric predictor "
            f"{name!r} (as np.mean or lambda x: np.quantile(x, [0.25, 0.75])); it returned "
            f"{reduced.tolist()!r:.80}"
        )
    return values


def _check_cov_reduce(cov_reduce: Any) -> None:
    """Refuse a ``cov_reduce`` that is not "mean", "median" or a function (R's cov.reduce)."""
    if callable(cov_reduce) or (
        isinstance(cov_reduce, str) and cov_reduce in ("mean", "median", "meanint")
    ):
        return
    hint = "; for R's cov.reduce = range pass lambda x: [x.min(), x.max()]"
    raise OrdstatsError(
        f"cov_reduce must be 'mean', 'median' or a function of the column; got {cov_reduce!r}"
        + (hint if cov_reduce == "range" else "")
    )


def _chosen_values(at: Mapping[str, Any], name: str) -> list[Any]:
    """The values ``at`` gives ``name`` (at least one)."""
    chosen = list(np.atleast_1d(np.asarray(at[name], dtype=object)))
    if not chosen:
        raise OrdstatsError(
            f"at={{{name!r}: ...}} gives no value; give one or more, or leave {name!r} out "
            "of at= for its default"
        )
    return chosen


def _factor_values(levels: list[Any], name: str, at: Mapping[str, Any]) -> list[Any]:
    if name not in at:
        return levels
    chosen = _chosen_values(at, name)
    missing = [v for v in chosen if v not in levels]
    if missing:
        raise OrdstatsError(
            f"at={{{name!r}: ...}} names levels {missing!r} that {name!r} does not have; "
            f"its levels are {levels!r}"
        )
    return chosen


@dataclass(frozen=True)
class _GridRows:
    """What the reference grid reads from its rows: their summary and numeric columns."""

    variables: list[str]
    summary: RowSummary
    column: Callable[[str], FloatArray]
    #: the mean of the rows' location offsets (None: the fit says nothing of offsets)
    offset: Callable[[], float | None] = lambda: None


def _checked_data(fit: MarginsFit, data: Any) -> pd.DataFrame:
    if not isinstance(data, pd.DataFrame):
        raise OrdstatsError(
            distributed_newdata_hint(data, "data")
            or f"data must be a pandas DataFrame; got {type(data).__name__}"
        )
    variables = fit.margins_variables()
    missing = [v for v in variables if v not in data.columns]
    if missing:
        raise OrdstatsError(f"data lacks the predictor column(s) {', '.join(map(repr, missing))}")
    missing = [v for v in _offset_variables(fit) if v not in data.columns]
    if missing:  # R's ref_grid reads them too: the grid's offset is their rows' mean offset
        raise OrdstatsError(
            f"data lacks the column(s) {', '.join(map(repr, missing))} that the model's offset "
            "reads (the reference grid's offset is the mean offset of its rows)"
        )
    if data.columns.duplicated().any():
        repeated = sorted({str(c) for c in data.columns[data.columns.duplicated()]})
        raise OrdstatsError(f"data has repeated column names ({', '.join(map(repr, repeated))})")
    # R's ref_grid reads data through model.frame, which leaves out incomplete rows
    incomplete = data[variables].isna().any(axis=1).to_numpy() if variables else None
    if incomplete is not None and incomplete.any():
        warnings.warn(
            f"emmeans: {int(incomplete.sum())} row(s) of data have missing values in the "
            "model's predictors and were left out of the reference grid (as R's ref_grid "
            "leaves them out)",
            MissingDataWarning,
            stacklevel=user_stacklevel(),
        )
        data = data.loc[~incomplete]
    if data.empty:
        raise OrdstatsError(
            "data has no rows (with every predictor of the model) to build the grid"
        )
    return data


def _frame_rows(fit: MarginsFit, data: pd.DataFrame) -> _GridRows:
    data = coded_factors(fit, data)  # C(k) of a numeric column: a factor of the grid
    data = coded_covariates(fit, data)  # as.integer(f) of a factor: a covariate
    variables = _grid_variables(fit, list(data.columns))

    def column(name: str) -> FloatArray:
        return np.asarray(data[name].to_numpy(), dtype=float)

    def offset() -> float | None:
        hook = getattr(fit, "_margins_row_offsets", None)
        return None if hook is None else float(np.mean(hook(data)))

    return _GridRows(variables, frame_summary(data, variables), column, offset)


def _streamed_rows(fit: StreamingFit) -> _GridRows:
    """The grid's rows of a fit read in chunks: one pass for the summary, kept on the fit."""
    margins_fit = cast(MarginsFit, fit)
    variables = _grid_variables(margins_fit, None)
    cache: dict[tuple[str, ...], RowSummary] = fit.__dict__.setdefault("_grid_row_summaries", {})
    key = tuple(variables)
    if key not in cache:
        cache[key] = streamed_summary(fit, variables)

    summary = cache[key]
    read: dict[str, FloatArray] = {}

    def column(name: str) -> FloatArray:
        if not read:  # every numeric predictor in the one pass
            read.update(streamed_columns(fit, list(summary.sums)))
        return read[name]

    def offset() -> float | None:
        # a chunked fit's offset is a column (offset terms need the rows in memory): the
        # mean offset is the offset of the column's mean
        hook = getattr(fit, "_margins_row_offsets", None)
        if hook is None:
            return None
        names = _offset_variables(margins_fit)
        means = pd.DataFrame({name: [summary.mean(name)] for name in names}, index=[0])
        return float(hook(means)[0])

    return _GridRows(variables, summary, column, offset)


def _grid_rows(fit: MarginsFit, data: Any) -> _GridRows:
    """The rows the reference grid is built from: ``data``, else the fit's estimation rows.

    A fit read in chunks (files, Dask, Spark) has its levels, means and cell
    counts from one streaming pass over its rows (kept for later calls).
    """
    if data is not None:
        return _frame_rows(fit, _checked_data(fit, data))
    if isinstance(fit, StreamingFit) and not fit._margins_in_memory():
        try:
            return _streamed_rows(fit)
        except NotFittedError as error:
            raise OrdstatsError(
                "this fit reads its estimation rows from its data source, which it no longer "
                "has (it was pickled before its reference grid was first built): pass the rows "
                "as data=<DataFrame>"
            ) from error
    try:
        hook = getattr(fit, "_margins_reference_rows", None)
        return _frame_rows(fit, fit.margins_data() if hook is None else hook())
    except OrdstatsError as error:
        raise OrdstatsError(
            "this fit no longer holds its estimation rows (pickled, or remove_data() was "
            "called), which emmeans builds its reference grid from: pass them as "
            "data=<DataFrame>"
        ) from error


def _predictor_cells(
    fit: MarginsFit, at: Mapping[str, Any], cov_reduce: Any, data: Any = None
) -> tuple[list[_Dimension], pd.DataFrame, FloatArray]:
    """The predictor dimensions, the grid as a DataFrame and each cell's row count."""
    rows = _grid_rows(fit, data)
    summary = rows.summary
    _check_names(list(at), rows.variables, "at=")
    dims = []
    for name in rows.variables:
        if summary.is_factor(name):
            dims.append(_Dimension(name, _factor_values(summary.levels(name), name, at)))
        else:
            dims.append(_Dimension(name, _covariate_values(rows, name, at, cov_reduce)))
    combos = list(itertools.product(*[d.levels for d in reversed(dims)]))
    frame = pd.DataFrame(
        [combo[::-1] for combo in combos], columns=[d.name for d in dims]
    ).reset_index(drop=True)
    offset = rows.offset()
    if offset is not None:  # as R's ref_grid: the mean offset of the rows, whatever at= says
        frame[OFFSET_COLUMN] = offset
    for d in dims:
        if d.name in summary.categorical:
            frame[d.name] = pd.Categorical(frame[d.name], dtype=summary.categorical[d.name])
        elif not summary.is_factor(d.name):
            frame[d.name] = frame[d.name].astype(float)
    factors = [d.name for d in dims if summary.is_factor(d.name)]
    if factors:
        counts = summary.cell_counts(factors, frame)
    else:
        counts = np.full(len(frame), float(summary.n))
    return dims, frame, counts


def _reference_grid(
    fit: MarginsFit,
    mode: str,
    at: Mapping[str, Any],
    cov_reduce: Any,
    params: FloatArray,
    data: Any = None,
    latent_cuts: str = "grid",
) -> _Grid:
    dims, frame, counts = _predictor_cells(fit, at, cov_reduce, data)
    rows = fit.margins_rows(frame)
    scale = _log_scale(fit, params, rows)
    checks = getattr(fit, "_margins_estimability", None)
    if mode == "scale":
        if scale is None:
            raise OrdstatsError(
                "mode='scale' is for models with a scale part (scale='~ ...'); this one has none"
            )
        estimable = None if checks is None else checks(frame, part="scale")
        return _Grid(dims, scale[0], scale[1], counts, estimability=estimable)
    estimable = None if checks is None else checks(frame)
    predicted = fit.margins_predict(params, rows, EMM_MODES[mode])
    values, jac = predicted.values, predicted.jacobian
    if jac is None:  # pragma: no cover - every type emmeans uses has a Jacobian
        raise OrdstatsError(f"mode={mode!r} has no standard errors for this fit")
    if mode == "mean.class":  # scores 1..K, as emmeans
        scores = np.arange(1.0, values.shape[1] + 1.0)
        values, jac = values @ scores, np.einsum("mgk,g->mk", jac, scores)
        return _Grid(dims, values, jac, counts, estimability=estimable)
    if mode == "latent":
        values, jac = values[:, 0], jac[:, 0, :]
        if latent_cuts == "grid":
            values, jac = _subtract_grid_mean_cut(fit, params, rows, values, jac)
        return _Grid(dims, values, jac, counts, scale, estimable)
    # one more dimension, first (fastest), as emmeans puts the response/cut first
    if mode == "prob":
        extra = _Dimension(_response_name(fit), list(predicted.groups))
    else:
        extra = _Dimension("cut", _cut_names(fit, params, rows))
    n_groups = values.shape[1]
    if mode == "linear.predictor" and scale is not None:
        # emmeans averages theta_j - x'beta and log s separately: keep u_j s = theta_j - x'beta
        s = np.exp(scale[0])
        jac = s[:, None, None] * (jac + values[:, :, None] * scale[1][:, None, :])
        values = values * s[:, None]
        scale = (np.repeat(scale[0], n_groups), np.repeat(scale[1], n_groups, axis=0))
    if estimable is not None:  # every group of a cell has the cell's row
        estimable = (np.repeat(estimable[0], n_groups, axis=0), estimable[1])
    return _Grid(
        [extra, *dims],
        values.reshape(-1),
        jac.reshape(-1, jac.shape[2]),
        np.repeat(counts, n_groups),
        scale if mode == "linear.predictor" else None,
        estimable,
    )


def _subtract_grid_mean_cut(
    fit: MarginsFit, params: FloatArray, rows: Any, values: FloatArray, jac: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Latent values relative to the grid's mean cut-point instead of each cell's own.

    ``x'beta - c_i`` becomes ``x'beta - mean(c)`` with ``c_i`` the cells' mean
    cut-points and the mean taken over the grid's cells unweighted, as emmeans
    (its latent basis subtracts the column means of the grid's cut-point design).
    Fits whose cut-points are the same in every cell have nothing to change.
    """
    method = getattr(fit, "_margins_mean_cut", None)
    predicted = None if method is None else method(params, rows)
    if predicted is None or predicted.jacobian is None:
        return values, jac
    cut, cut_jac = predicted.values[:, 0], predicted.jacobian[:, 0, :]
    return values + (cut - cut.mean()), jac + (cut_jac - cut_jac.mean(axis=0))


def _check_latent_cuts(latent_cuts: object) -> str:
    if isinstance(latent_cuts, str) and latent_cuts in LATENT_CUTS:
        return latent_cuts
    raise OrdstatsError(
        "latent_cuts must be 'grid' (as emmeans: the mean cut-point over the whole reference "
        f"grid) or 'cell' (each cell's own mean cut-point); got {latent_cuts!r}"
    )


def _scale_grid(fit: MarginsFit, grid: _Grid, names: list[str]) -> _Grid:
    """The grid of ``mode="scale"``: the scale formula's variables only, as emmeans.

    R's ``emmeans(fit, specs, mode = "scale")`` builds its reference grid from
    the scale formula, so a variable only in the location formula is "not in
    the reference grid" there; here the full grid's other dimensions are
    averaged out (``log s`` does not vary along them) and such a variable in
    ``specs`` or ``by`` is refused.
    """
    hook = getattr(fit, "_margins_scale_variables", None)
    scale_vars = None if hook is None else hook()
    if scale_vars is None:
        return grid
    outside = [name for name in names if name not in scale_vars]
    if outside:
        raise OrdstatsError(
            f"mode='scale' gives means of the scale part, whose reference grid holds only the "
            f"scale formula's variables ({', '.join(scale_vars) or 'none'}); "
            f'{", ".join(repr(name) for name in outside)} is not among them (R: "No variable '
            "named ... in the reference grid\"). Ask for the scale variables' means, or use "
            "another mode for the location variables"
        )
    keep = [k for k, d in enumerate(grid.dims) if d.name in scale_vars]
    if len(keep) == len(grid.dims):
        return grid
    return _grid_margin(grid, keep)


def _grid_margin(grid: _Grid, keep: list[int]) -> _Grid:
    """The grid over the dimensions ``keep`` whose values do not vary along the others.

    Each kept cell takes the values of the full grid's cell with the other
    dimensions at their first level, and the sum of the weights over them.
    """
    index = grid.index()
    dropped = [k for k in range(len(grid.dims)) if k not in keep]
    first = np.flatnonzero(np.all(index[:, dropped] == 0, axis=1))
    sizes = [grid.sizes[k] for k in keep]
    kept_cells = np.ravel_multi_index(tuple(index[:, keep].T[::-1]), sizes[::-1])
    weights = np.bincount(kept_cells, grid.weights, minlength=int(np.prod(sizes))).astype(float)
    estimability = grid.estimability
    if estimability is not None:
        estimability = (estimability[0][first], estimability[1])
    return _Grid(
        [grid.dims[k] for k in keep],
        grid.values[first],
        grid.jacobian[first],
        weights,
        estimability=estimability,
    )


def _log_scale(
    fit: MarginsFit, params: FloatArray, rows: Any
) -> tuple[FloatArray, FloatArray] | None:
    """``log s`` of the rows and its Jacobian for a fit with a scale model, else None."""
    method = getattr(fit, "_margins_log_scale", None)
    predicted = None if method is None else method(params, rows)
    if predicted is None or predicted.jacobian is None:
        return None
    return predicted.values[:, 0], predicted.jacobian[:, 0, :]


def _scale_parts(
    grid: _Grid, mode: str, matrix: FloatArray, values: FloatArray, jac: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray] | None:
    """The scale-model means of emmeans: the averaged numerator times ``exp(-mean log s)``.

    ``"latent"`` divides by the scale at the mean of the whole grid's scale
    design (one number for every mean), ``"linear.predictor"`` by the scale at
    the mean of each mean's own cells (as emmeans' ``.clm.hook``).
    ``matrix`` averages the cells into the means.
    Returns the parts ``(a, da, b, db)`` of ``a exp(-b)``: emmeans' contrasts
    combine the numerators and the log scales separately (so contrasts of latent
    means, whose ``b`` is common, are differences of the numerators).
    """
    if grid.log_scale is None:
        return None
    log_values, log_jac = grid.log_scale
    if mode == "latent":
        b = np.full(values.shape, np.mean(log_values))
        jb = np.broadcast_to(np.mean(log_jac, axis=0), jac.shape)
    else:  # the same average of the cells' log scales
        b, jb = _weighted(matrix, log_values), _weighted(matrix, log_jac)
    return values, jac, b, np.array(jb)


def _combine(
    parts: tuple[FloatArray, FloatArray, FloatArray, FloatArray],
) -> tuple[FloatArray, FloatArray]:
    """``a exp(-b)`` and its Jacobian from the numerator ``a`` and log scale ``b`` parts."""
    a, ja, b, jb = parts
    factor = np.exp(-b)
    return a * factor, factor[:, None] * (ja - a[:, None] * jb)


def _cut_names(fit: MarginsFit, params: FloatArray, rows: Any) -> list[str]:
    """The cut labels ("1|2", ...), as the fit names its linear predictors."""
    return list(fit.margins_predict(params, rows.take([0]), "linear").groups)


# -- averaging with emmeans' weights ---------------------------------------------------------


def _check_weights(weights: object) -> str:
    if isinstance(weights, str) and weights in EMM_WEIGHTS:
        return weights
    raise OrdstatsError(
        f"weights must be one of {', '.join(map(repr, EMM_WEIGHTS))}; got {weights!r}"
    )


def _cell_weights(grid: _Grid, index: IntArray, kept: list[int], weights: str) -> FloatArray:
    """Each cell's weight in its marginal mean (before normalising within the mean)."""
    count = grid.weights if np.any(grid.weights > 0) else grid.weights + 1.0
    averaged = [d for d, size in enumerate(grid.sizes) if d not in kept and size > 1]
    if weights == "equal" or not averaged:
        return np.ones(len(count))
    if weights == "cells":
        return count
    if weights == "flat":
        return (count > 0).astype(float)
    sizes = [grid.sizes[d] for d in averaged]
    key = np.ravel_multi_index(tuple(index[:, d] for d in averaged), sizes)
    if weights == "proportional":
        totals = np.bincount(key, weights=count, minlength=int(np.prod(sizes)))
        return np.asarray(totals[key], dtype=float)
    total = count.sum()  # outer: product of the marginal frequencies
    out = np.full(len(count), total)
    for d in averaged:
        marginal = np.bincount(index[:, d], weights=count, minlength=grid.sizes[d])
        out = out * marginal[index[:, d]] / total
    return out


#: emmeans' tolerance of estimability (``estimability::is.estble``)
ESTIMABILITY_TOL = 1e-8


def estimable_rows(functions: FloatArray, basis: FloatArray) -> np.ndarray:
    """Which linear functions (rows) lie in the fitted row space: ``|N'l|^2 < tol |l|^2``.

    As R's ``estimability::is.estble``: ``basis`` is an orthonormal basis ``N``
    of the non-estimable combinations, a missing entry counts as 0, and a
    function of squared norm below the tolerance is judged against 1.
    """
    rows = np.nan_to_num(np.atleast_2d(functions))
    check = rows @ basis
    size = np.sum(rows * rows, axis=1)
    size = np.where(size < ESTIMABILITY_TOL, 1.0, size)
    return np.asarray(np.sum(check * check, axis=1) < ESTIMABILITY_TOL * size)


def _average(
    grid: _Grid, names: list[str], weights: str
) -> tuple[pd.DataFrame, FloatArray, FloatArray, FloatArray | None]:
    """Marginal means over the variables not in ``names``.

    Returns their labels, values, Jacobian, and (a rank-deficient fit) their
    linear functions: the averages of the cells' rows.
    """
    labels, matrix = _averaging(grid, names, weights)
    return _averaged(grid, labels, matrix)


def _averaged(
    grid: _Grid, labels: pd.DataFrame, matrix: FloatArray
) -> tuple[pd.DataFrame, FloatArray, FloatArray, FloatArray | None]:
    """The means that the rows of ``matrix`` take of the grid's cells (see :func:`_average`)."""
    functions = None
    if grid.estimability is not None:
        functions = np.nan_to_num(matrix) @ grid.estimability[0]
        functions[np.isnan(matrix).any(axis=1)] = np.nan
    return labels, _weighted(matrix, grid.values), _weighted(matrix, grid.jacobian), functions


def _averaging(grid: _Grid, names: list[str], weights: str) -> tuple[pd.DataFrame, FloatArray]:
    """The labels of the means over ``names`` and the matrix that averages the cells into them.

    A mean without cells of positive weight is a row of NaN.
    """
    position = {d.name: i for i, d in enumerate(grid.dims)}
    kept = [position[n] for n in names]
    index = grid.index()
    cell_w = _cell_weights(grid, index, kept, weights)
    sizes = [grid.sizes[d] for d in kept]
    n_means = int(np.prod(sizes)) if kept else 1
    target = (
        np.ravel_multi_index(tuple(index[:, d] for d in kept[::-1]), sizes[::-1]) if kept else 0
    )
    matrix = np.zeros((n_means, len(cell_w)))
    matrix[target, np.arange(len(cell_w))] = cell_w
    totals = matrix.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        matrix = matrix / np.where(totals > 0, totals, np.nan)
    combos = itertools.product(*[grid.dims[d].levels for d in kept[::-1]])
    return pd.DataFrame([c[::-1] for c in combos], columns=names), matrix


def _nested_averaging(
    grid: _Grid, names: list[str], weights: str, nesting: Nesting
) -> tuple[pd.DataFrame, FloatArray]:
    """:func:`_averaging` where a nested factor is averaged within its nesting groups.

    As emmeans' nested means: the averaged-over factor nested in the most
    factors is averaged first, separately within each combination of its
    nesting factors (and of the other nested factors averaged over), over its
    levels that have rows there; those means (weighing their cells' rows)
    are then averaged as a grid of their own, in which the remaining nested
    factors are treated the same way.
    """
    averaged = [d.name for d in grid.dims if d.name not in names]
    nested = [name for name in nesting if name in averaged]
    if not nested:
        return _averaging(grid, names, weights)
    most = max(len(nesting[name]) for name in nested)
    inner = [name for name in nested if len(nesting[name]) == most][-1]
    groups = list(dict.fromkeys([*nesting[inner], *(n for n in nested if n != inner)]))
    kept = list(dict.fromkeys([*names, *groups]))
    position = {d.name: i for i, d in enumerate(grid.dims)}
    index = grid.index()
    group_sizes = [grid.sizes[position[g]] for g in groups]
    group_of = np.ravel_multi_index(tuple(index[:, position[g]] for g in groups), group_sizes)
    levels_of = index[:, position[inner]]
    kept_sizes = [grid.sizes[position[k]] for k in kept]
    n_means = int(np.prod(kept_sizes))
    first = np.full((n_means, len(index)), np.nan)
    for group in np.unique(group_of):
        in_group = group_of == group
        present = np.unique(levels_of[in_group & (grid.weights > 0)])
        cells = np.flatnonzero(in_group & np.isin(levels_of, present))
        if not cells.size:
            continue
        dims = [
            _Dimension(d.name, [d.levels[i] for i in np.unique(index[cells, k])])
            for k, d in enumerate(grid.dims)
        ]
        part = _Grid(dims, np.zeros(cells.size), np.zeros((cells.size, 0)), grid.weights[cells])
        _, matrix = _averaging(part, kept, weights)
        rows = np.ravel_multi_index(
            tuple(index[cells][:, position[k]] for k in kept[::-1]), kept_sizes[::-1]
        )
        means = np.unique(rows)  # the part's means, in the same order as the whole grid's
        first[means] = 0.0
        first[np.ix_(means, cells)] = matrix
    counts = np.where(np.isnan(first), 0.0, first != 0) @ grid.weights
    between = _Grid(
        [grid.dims[position[k]] for k in kept],
        np.zeros(n_means),
        np.zeros((n_means, 0)),
        counts,
    )
    remaining = {
        name: [g for g in within if g in kept] for name, within in nesting.items() if name in kept
    }
    labels, second = _nested_averaging(between, names, weights, remaining)
    missing = np.isnan(first).any(axis=1)
    out = np.nan_to_num(second) @ np.where(np.isnan(first), 0.0, first)
    spoiled = np.isnan(second).any(axis=1) | ((second != 0) & missing[None, :]).any(axis=1)
    out[spoiled] = np.nan
    return labels, out


def _weighted(matrix: FloatArray, values: FloatArray) -> FloatArray:
    """``matrix @ values``, where a cell without a value (NaN) spoils only what weighs it.

    A cell of a factor level without fitted rows is predicted as NaN; the means
    that give it no weight must not become NaN through ``0 * NaN``.
    """
    missing = np.isnan(values)
    if not missing.any():
        return matrix @ values
    flat = missing.reshape(missing.shape[0], -1)
    out = matrix @ np.where(missing, 0.0, values)
    spoiled = (matrix != 0) @ flat.astype(float) > 0
    out.reshape(out.shape[0], -1)[spoiled] = np.nan
    return out


# -- the result -----------------------------------------------------------------------------


@dataclass
class EmmGrid:
    """Estimated marginal means or contrasts of them, with emmeans' summary.

    Attributes
    ----------
    labels : pandas.DataFrame
        One row per estimate: the ``specs`` and ``by`` variables (``contrast``
        and ``by`` for contrasts).
    values : ndarray, shape (n,)
    jacobian : ndarray, shape (n, k)
        Derivatives of the estimates in the fit's parameters.
    covariance : ndarray, shape (k, k)
        The parameters' covariance.
    estimate_name : str
        emmeans' name of the estimate column (``"emmean"``, ``"prob"``, ...).
    primary : list of str
        The variables compared by ``pairs()``/``contrast()``.
    by : list of str
    adjust : str
        The default multiplicity adjustment of the summary.
    families : list
        How the estimates are adjusted together (by groups).
    notes : list of str
    scale_parts : tuple or None
        Scale models, latent and linear modes: the numerators, log scales and
        their Jacobians whose ``a exp(-b)`` the estimates are (contrasts combine
        each part, as emmeans).
    inverse_link : tuple or None
        ``(function, derivative, estimate name)`` that ``regrid()`` applies: the
        link's CDF for linear predictors, exp for the log scale.
    linear_functions, nonest_basis : ndarray or None
        A rank-deficient fit: each estimate's linear function of the location
        columns and the basis of what the fit cannot estimate.
    nonlinear_estimable : ndarray of bool or None
        Estimates that are not linear in the location (probabilities, mean
        classes, regridded means) of a rank-deficient fit: which are estimable.
        A contrast of them is estimable only where every mean it combines is
        (as emmeans: the difference of two ``nonEst`` probabilities is
        ``nonEst`` even when their linear predictors' difference is estimable).
    nested : bool
        Means of a nested factor (with its nesting factors): their contrasts'
        tables list the ``by`` variables before ``contrast``, as emmeans lists
        nested contrasts.
    """

    labels: pd.DataFrame
    values: FloatArray
    jacobian: FloatArray
    covariance: FloatArray
    estimate_name: str
    primary: list[str]
    by: list[str]
    adjust: str = "none"
    families: list[Family] | None = None
    notes: list[str] | None = None
    inverse_link: Any = None
    scale_parts: tuple[FloatArray, FloatArray, FloatArray, FloatArray] | None = None
    linear_functions: FloatArray | None = None
    nonest_basis: FloatArray | None = None
    nonlinear_estimable: np.ndarray | None = None
    nested: bool = False

    # -- inference ---------------------------------------------------------------------

    def estimable(self) -> np.ndarray:
        """Which estimates the fit can estimate (emmeans prints the others as ``nonEst``).

        All of them unless the fit dropped aliased columns: then an estimate
        whose linear function has a component the fit cannot tell apart (a
        cell of a factorial without rows, say) is not estimable.  Probabilities
        and mean classes are judged mean by mean: a contrast is estimable where
        every mean it combines is.
        """
        if self.nonlinear_estimable is not None:
            return self.nonlinear_estimable.copy()
        if self.linear_functions is None or self.nonest_basis is None:
            return np.ones(len(self.values), dtype=bool)
        return estimable_rows(self.linear_functions, self.nonest_basis)

    def vcov(self) -> FloatArray:
        """Covariance of the estimates, ``J V J'``."""
        return self.jacobian @ self.covariance @ self.jacobian.T

    def _families(self) -> list[Family]:
        if self.families is not None:
            return self.families
        return [Family(list(rows)) for rows in _by_groups(self.labels, self.by)]

    def summary_frame(self, adjust: str | None = None, conf_level: float = 0.95) -> pd.DataFrame:
        """The emmeans table: labels, estimate, ``SE``, ``df``, intervals, ``z.ratio``, ``p.value``.

        Parameters
        ----------
        adjust : str, optional
            Multiplicity adjustment of p-values and intervals (default: the
            object's, ``"none"`` for means, as emmeans).  One of ``"none"``,
            ``"tukey"``, ``"holm"``, ``"bonferroni"``, ``"fdr"``, ``"sidak"``,
            ``"dunnettx"``, ``"mvt"``.
        conf_level : float

        Returns
        -------
        pandas.DataFrame
        """
        conf_level = check_conf_level(conf_level)
        adjust = check_adjust(self.adjust if adjust is None else adjust)
        estimable = self.estimable()
        values = np.where(estimable, self.values, np.nan)  # emmeans' nonEst
        cov = self.vcov()
        se = np.where(estimable, np.sqrt(np.maximum(np.diag(cov), 0.0)), np.nan)
        # an estimate that is identically zero (a contrast the model cannot have, e.g. a
        # quadratic trend of two levels in an additive model) has no test, as in emmeans
        magnitude = np.abs(values)
        largest = max(1.0, float(np.max(magnitude, where=estimable, initial=0.0)))
        degenerate = (se <= 1e-10 * magnitude) | (se <= 1e-15 * largest)
        se = np.where(degenerate, 0.0, se)
        zero = magnitude <= 1e-12 * largest
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(degenerate & zero, np.nan, np.where(degenerate, 0.0, values) / se)
            z = np.where(degenerate & ~zero, np.sign(values) * np.inf, z)
        families = self._families()
        p, used_p = adjusted_p_values(z, families, adjust, cov)
        crit, used_ci = critical_values(conf_level, families, adjust, cov)
        table = self.labels.copy().reset_index(drop=True)
        table[self.estimate_name] = values
        table["SE"] = se
        table["df"] = np.where(estimable, np.inf, np.nan)
        table["asymp.LCL"] = values - crit * se
        table["asymp.UCL"] = values + crit * se
        table["z.ratio"] = z
        table["p.value"] = p
        table.attrs["adjust"] = used_p
        table.attrs["conf_adjust"] = used_ci
        table.attrs["conf_level"] = conf_level
        # plain Python values, which pandas can compare when it concatenates or casts
        table.attrs["nonEst"] = tuple(bool(bad) for bad in ~estimable)
        return table

    def summary(self, adjust: str | None = None, conf_level: float = 0.95) -> EmmSummary:
        """A printable table with emmeans' notes (averaging, adjustment, confidence level)."""
        frame = self.summary_frame(adjust=adjust, conf_level=conf_level)
        notes = list(self.notes or [])
        notes.append(f"Confidence level used: {conf_level:g} (z intervals, df = Inf)")
        if frame.attrs["conf_adjust"] != "none":
            notes.append(f"Conf-level adjustment: {frame.attrs['conf_adjust']} method")
        if frame.attrs["adjust"] != "none":
            notes.append(f"P value adjustment: {frame.attrs['adjust']} method")
        if any(frame.attrs["nonEst"]):
            notes.append(
                "nonEst: not estimable from this fit (its design dropped aliased columns, "
                "e.g. a combination of factor levels without rows), as R's emmeans"
            )
        return EmmSummary(frame, notes)

    def __repr__(self) -> str:
        return str(self.summary())

    # -- contrasts -------------------------------------------------------------------------

    def contrast(
        self,
        method: str | Mapping[str, Sequence[float]] = "eff",
        adjust: str | None = None,
        by: Sequence[str] | str | None = None,
        ref: Any = 0,
    ) -> EmmGrid:
        """Contrasts of the means within each ``by`` group (emmeans' ``contrast()``).

        Parameters
        ----------
        method : str or mapping
            ``"pairwise"``, ``"revpairwise"``, ``"trt.vs.ctrl"``, ``"eff"``,
            ``"del.eff"``, ``"consec"``, ``"poly"``, or ``{name: coefficients}``.
        adjust : str, optional
            Default adjustment of the result's summary.  When omitted: ``"tukey"``
            for pairwise (as emmeans), ``"mvt"`` for ``"consec"`` (as emmeans),
            ``"none"`` for ``"poly"`` and custom contrasts (as emmeans),
            ``"dunnettx"`` for ``"trt.vs.ctrl"`` and ``"fdr"`` for the effects
            (as emmeans).
        by : str or list of str, optional
            The grouping; default: the means' ``by`` variables.
        ref : int or level label
            The control of ``"trt.vs.ctrl"`` (position, 0-based, or label).

        Returns
        -------
        EmmGrid
        """
        by_vars = self.by if by is None else _as_list(by)
        _check_names(by_vars, list(self.labels.columns), "by=")
        primary = [c for c in self.labels.columns if c not in by_vars]
        if not primary:
            # every variable groups the means (a factor in the means whose nested factor
            # is in by= joins the grouping): each group is one mean, as emmeans refuses
            raise OrdstatsError(
                f"no variable is left to contrast: the means are grouped by {by_vars} "
                "(a nested factor in by= brings the factors it is nested in); "
                "take the nested factor out of by= or contrast within fewer variables"
            )
        groups = _by_groups(self.labels, by_vars)
        # the labels of every mean at once (a nested factor's groups have different levels)
        all_labels = _level_labels(self.labels, primary)
        all_plain = _plain_labels(self.labels, primary)
        # contrasts of contrasts by the earlier ones: "contrast1", as R names the new column
        column = next(
            f"contrast{k or ''}" for k in itertools.count() if f"contrast{k or ''}" not in by_vars
        )
        rows_labels, values, jacobians, families, parts = [], [], [], [], []
        functions, judged = [], []
        estimable = self.estimable()
        start = 0
        for rows in groups:
            level_labels = [all_labels[i] for i in rows]
            control = ref
            if method == "trt.vs.ctrl":  # the control by its level as well as its label
                control = _reference_position(ref, level_labels, [all_plain[i] for i in rows])
            coefficients, names, pairwise, default_adjust = _contrast_matrix(
                method, level_labels, control
            )
            values.append(coefficients @ self.values[rows])
            jacobians.append(coefficients @ self.jacobian[rows])
            if self.linear_functions is not None:
                functions.append(coefficients @ self.linear_functions[rows])
            if self.nonlinear_estimable is not None:
                spoiled = (coefficients != 0) & ~estimable[rows]
                judged.append(~spoiled.any(axis=1))
            if self.scale_parts is not None:
                parts.append([coefficients @ part[rows] for part in self.scale_parts])
            frame = pd.DataFrame({column: names})
            for name in by_vars:
                frame[name] = self.labels.iloc[rows[0]][name]
            if self.nested:  # emmeans' nested contrasts: the groups first
                frame = frame[[*by_vars, column]]
            rows_labels.append(frame)
            families.append(
                Family(range(start, start + len(names)), len(level_labels) if pairwise else None)
            )
            start += len(names)
        scale_parts = None
        if parts:
            a, da, b, db = (np.concatenate(p) for p in zip(*parts, strict=True))
            scale_parts = (a, da, b, db)
            combined = _combine(scale_parts)
            values, jacobians = [combined[0]], [combined[1]]
        return EmmGrid(
            labels=pd.concat(rows_labels, ignore_index=True),
            values=np.concatenate(values),
            jacobian=np.vstack(jacobians),
            covariance=self.covariance,
            estimate_name="estimate",
            primary=[column],
            by=list(by_vars),
            adjust=check_adjust(default_adjust if adjust is None else adjust),
            families=families,
            notes=list(self.notes or []),
            scale_parts=scale_parts,
            linear_functions=np.vstack(functions) if functions else None,
            nonest_basis=self.nonest_basis,
            nonlinear_estimable=np.concatenate(judged) if judged else None,
        )

    def pairs(
        self, adjust: str = "tukey", reverse: bool = False, by: Sequence[str] | str | None = None
    ) -> EmmGrid:
        """All pairwise differences (earlier minus later level; ``reverse=True`` the opposite).

        Parameters
        ----------
        adjust : str
            Default ``"tukey"`` (as emmeans); ``"holm"``, ``"bonferroni"``,
            ``"fdr"``, ``"sidak"``, ``"dunnettx"``, ``"mvt"`` or ``"none"``.
        reverse : bool
        by : str or list of str, optional

        Returns
        -------
        EmmGrid
        """
        method = "revpairwise" if check_flag("reverse", reverse) else "pairwise"
        return self.contrast(method, adjust=adjust, by=by)

    def regrid(self) -> EmmGrid:
        """Means moved to the response scale (``F`` of linear predictors, ``exp`` of log scales).

        The Jacobian is multiplied by the derivative (the delta method), as
        emmeans' ``regrid()``; estimates without a transformation (latent means,
        probabilities) are returned unchanged.

        Returns
        -------
        EmmGrid
        """
        if self.inverse_link is None:
            return replace(self)
        cdf, pdf, name = self.inverse_link
        return replace(
            self,
            values=cdf(self.values),
            jacobian=pdf(self.values)[:, None] * self.jacobian,
            estimate_name=name,
            inverse_link=None,
            scale_parts=None,
            nonlinear_estimable=None if self.nonest_basis is None else self.estimable(),
        )


@dataclass
class EmmSummary:
    """An emmeans table with its notes (printable, HTML)."""

    table: pd.DataFrame
    notes: list[str]

    def __str__(self) -> str:
        body = self._shown().to_string(index=False, float_format=lambda v: f"{v:.5g}")
        return "\n".join([body, "", *self.notes])

    def _shown(self) -> pd.DataFrame:
        """The table as printed: the estimates the fit cannot estimate read ``nonEst``."""
        nonest = self.table.attrs.get("nonEst")
        if nonest is None or not np.any(nonest):
            return self.table
        shown = self.table.copy()
        column = shown.columns[list(shown.columns).index("SE") - 1]
        shown[column] = [
            "nonEst" if bad else f"{v:.5g}" for v, bad in zip(shown[column], nonest, strict=True)
        ]
        return shown

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        table = self._shown().to_html(index=False, float_format=lambda v: f"{v:.5g}")
        return table + "".join(f"<p>{line}</p>" for line in self.notes)


def _as_list(value: Sequence[str] | str | None) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]


def _by_groups(labels: pd.DataFrame, by: list[str]) -> list[IntArray]:
    if not by:
        return [np.arange(len(labels))]
    keys = labels[by].astype(str).agg("\x1f".join, axis=1)
    return [np.flatnonzero(keys.to_numpy() == k) for k in dict.fromkeys(keys)]


def _level_labels(labels: pd.DataFrame, primary: list[str]) -> list[str]:
    """Labels of the compared means, as emmeans writes them in contrast names.

    A variable whose levels all look like numbers is prefixed by its name
    ("k1", "DAY1 Male"), and a label with an operator sign (``- + / *``) is
    put in parentheses ("(m-1)", "(a-b x)"): emmeans' ``enhance.levels`` and
    ``parens`` defaults.
    """
    texts = {name: [_level_text(v) for v in labels[name]] for name in primary}
    prefix = {name: name if all(map(_looks_numeric, texts[name])) else "" for name in primary}
    joined = [
        " ".join(prefix[name] + text for name, text in zip(primary, row, strict=True))
        for row in zip(*texts.values(), strict=True)
    ]
    return [f"({label})" if _OPERATOR.search(label) else label for label in joined]


def _plain_labels(labels: pd.DataFrame, primary: list[str]) -> list[str]:
    """The compared means' levels as they are, joined by spaces ("2", "1a x")."""
    columns = [[_level_text(v) for v in labels[name]] for name in primary]
    return [" ".join(row) for row in zip(*columns, strict=True)]


#: Signs that make emmeans put a level label in parentheses within a contrast's name.
_OPERATOR = re.compile(r"[-+/*]")


def _level_text(value: Any) -> str:
    """A level as R writes it (``2.0`` -> ``"2"``, 15 significant digits)."""
    if isinstance(value, (float, np.floating)) and np.isfinite(value):
        return f"{float(value):.15g}"
    return format_level(value)


def _looks_numeric(text: str) -> bool:
    """Whether R's ``as.numeric`` reads ``text`` as a number (not NA)."""
    if "_" in text:  # Python reads "1_0"; R does not
        return False
    try:
        float(text)
    except ValueError:
        return False
    return text.strip().lower() not in ("nan", "+nan", "-nan")


def _poly_coefficients(n: int) -> tuple[FloatArray, list[str]]:
    """Orthogonal polynomial contrasts scaled to integers (emmeans' ``poly``)."""
    x = np.arange(1.0, n + 1.0)
    basis = np.vander((x - x.mean()) / n, n, increasing=True)
    q, _ = np.linalg.qr(basis)
    rows = []
    for j in range(1, min(n, 7)):  # degrees 1..6 at most, as emmeans
        column = q[:, j]
        column = column / np.min(np.abs(column[np.abs(column) > 1e-10]))
        if column[-1] < 0:
            column = -column
        rows.append(_smallest_integer_multiple(column))
    words = ["linear", "quadratic", "cubic", "quartic"]
    names = [words[j - 1] if j <= 4 else f"degree {j}" for j in range(1, len(rows) + 1)]
    return np.array(rows), names


def _smallest_integer_multiple(column: FloatArray) -> FloatArray:
    """``m * column`` for the smallest integer ``m`` that makes it integers (the tables' form)."""
    for multiple in range(1, 10_001):
        scaled = multiple * column
        rounded = np.round(scaled)
        if np.allclose(scaled, rounded, rtol=0.0, atol=1e-7 * max(1.0, np.abs(scaled).max())):
            return rounded
    return column


#: The contrast methods by name (emmeans' ``*.emmc`` functions that ordstats offers).
_METHODS = ("pairwise", "revpairwise", "trt.vs.ctrl", "eff", "del.eff", "consec", "poly")


def _contrast_matrix(
    method: Any, levels: list[str], ref: Any
) -> tuple[FloatArray, list[str], bool, str]:
    """Coefficients, names, whether they are all pairwise differences, emmeans' default adjust."""
    n = len(levels)
    eye = np.eye(n)
    if isinstance(method, Mapping):
        names = [str(k) for k in method]
        try:
            rows = [np.atleast_1d(np.asarray(v, dtype=float)) for v in method.values()]
        except (TypeError, ValueError):
            rows = [np.array([np.nan])]
        if not all(np.isfinite(row).all() for row in rows):
            raise OrdstatsError(
                "custom contrasts are {name: coefficients} with finite numbers; got "
                f"{method!r:.80}"
            )
        wrong = {name: row.size for name, row in zip(names, rows, strict=True) if row.shape != (n,)}
        if wrong or not rows:
            got = ", ".join(f"{name!r}: {size}" for name, size in wrong.items()) or "none"
            raise OrdstatsError(
                f"each custom contrast needs {n} coefficients (one per mean: {levels}); got {got}"
            )
        return np.array(rows), names, False, "none"
    if n < 2 and method in _METHODS:
        raise OrdstatsError(
            f"{method!r} contrasts compare means, and each group here has one ({levels[0]}); "
            "leave that variable out of by= or give the means of more levels"
        )
    if method in ("pairwise", "revpairwise"):
        pairs = list(itertools.combinations(range(n), 2))
        if method == "revpairwise":  # later minus earlier, emmeans' order
            pairs = [(j, i) for i, j in sorted(pairs, key=lambda p: (p[1], p[0]))]
        return (
            np.array([eye[a] - eye[b] for a, b in pairs]).reshape(-1, n),
            [f"{levels[a]} - {levels[b]}" for a, b in pairs],
            True,
            "tukey",
        )
    if method == "trt.vs.ctrl":
        control = _reference_position(ref, levels, levels)
        others = [i for i in range(n) if i != control]
        return (
            np.array([eye[i] - eye[control] for i in others]).reshape(-1, n),
            [f"{levels[i]} - {levels[control]}" for i in others],
            False,
            "dunnettx",
        )
    if method == "consec":
        return (
            np.array([eye[i + 1] - eye[i] for i in range(n - 1)]).reshape(-1, n),
            [f"{levels[i + 1]} - {levels[i]}" for i in range(n - 1)],
            False,
            "mvt",
        )
    if method in ("eff", "del.eff"):
        coefficients = eye - 1.0 / n
        if method == "del.eff":
            coefficients = coefficients * n / (n - 1.0)
        return coefficients, [f"{level} effect" for level in levels], False, "fdr"
    if method == "poly":
        coefficients, names = _poly_coefficients(n)
        return coefficients, names, False, "none"
    raise OrdstatsError(
        "method must be 'pairwise', 'revpairwise', 'trt.vs.ctrl', 'eff', 'del.eff', 'consec', "
        f"'poly' or a dict of coefficients; got {method!r}"
    )


def _reference_position(ref: Any, labels: list[str], plain: list[str]) -> int:
    """The control's position: ``ref`` as a position, a contrast label ("k2") or a level ("2")."""
    if isinstance(ref, (int, np.integer)) and not isinstance(ref, bool):
        if 0 <= int(ref) < len(labels):
            return int(ref)
    else:
        for names in (labels, plain):
            if _level_text(ref) in names:
                return names.index(_level_text(ref))
    raise OrdstatsError(
        f"ref must be a position 0..{len(labels) - 1} or one of the levels {plain}; got {ref!r}"
    )


# -- the verbs -----------------------------------------------------------------------------------


def _parse_specs(specs: Any, by: Any, known: Sequence[str] = ()) -> tuple[list[str], list[str]]:
    """``specs`` ("a", ["a", "b"], "~ a * b | c") and ``by`` as variable lists.

    In a text, a variable of the reference grid (``known``) is read whole even
    if its name has an operator in it (``"t:1"``), as is a name in backticks
    (``"~ `t:1` | c"``, as R's emmeans reads a formula).
    """
    by_vars = _as_list(by)
    if isinstance(specs, str):
        tokens = _spec_tokens(specs.strip().lstrip("~").strip(), known, specs)
        cut = next(
            (i for i, (kind, value) in enumerate(tokens) if (kind, value) == ("op", "|")), None
        )
        if cut is not None:
            by_vars = [*by_vars, *_side_names(tokens[cut + 1 :], specs)]
            tokens = tokens[:cut]
        primary = _side_names(tokens, specs) if tokens else []
    elif isinstance(specs, Sequence) and all(isinstance(s, str) for s in specs):
        primary = [str(s) for s in specs]
    else:
        raise OrdstatsError(
            f"specs must be a variable name, a list of names or a formula like '~ temp | contact'; "
            f"got {specs!r}"
        )
    if not primary:
        raise OrdstatsError("specs names no variable; e.g. specs='temp' or '~ temp | contact'")
    primary = list(dict.fromkeys(primary))  # a variable named twice is one (R's emmeans)
    return primary, [b for b in dict.fromkeys(by_vars) if b not in primary]


#: The operators of a ``specs`` text: ``*``, ``:`` and ``+`` join variables, ``|`` starts ``by``.
_SPEC_OPERATORS = "*:+|"


def _spec_tokens(text: str, known: Sequence[str], specs: str) -> list[tuple[str, str]]:
    """``text`` as ``("name", ...)`` and ``("op", ...)`` tokens.

    A name in backticks is taken as written; otherwise the longest variable of
    ``known`` that starts here and ends at an operator or the end of the text
    is one name, even with operators in it; else a name runs to the next operator.
    """
    tokens: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        char = text[pos]
        if char.isspace():
            pos += 1
        elif char in _SPEC_OPERATORS:
            tokens.append(("op", char))
            pos += 1
        elif char == "`":
            end = text.find("`", pos + 1)
            if end < 0:
                raise OrdstatsError(f"specs {specs!r} opens a backtick that it does not close")
            tokens.append(("name", text[pos + 1 : end]))
            pos = end + 1
        else:
            name = _known_name_at(text, pos, known) or _plain_name_at(text, pos)
            tokens.append(("name", name))
            pos += len(name)
    return tokens


def _known_name_at(text: str, pos: int, known: Sequence[str]) -> str | None:
    """The longest name of ``known`` at ``text[pos:]`` followed by an operator or the end."""
    fits = [
        name
        for name in known
        if name
        and text.startswith(name, pos)
        and (text[pos + len(name) :].lstrip()[:1] or _SPEC_OPERATORS[0]) in _SPEC_OPERATORS
    ]
    return max(fits, key=len) if fits else None


def _plain_name_at(text: str, pos: int) -> str:
    """The name at ``text[pos:]`` up to the next operator or backtick, without end spaces."""
    match = re.compile(r"[^*:+|`]+").match(text, pos)
    assert match is not None  # text[pos] is neither an operator, a backtick nor a space
    return match.group().rstrip()


def _side_names(tokens: list[tuple[str, str]], specs: str) -> list[str]:
    """The variables of one side of ``specs``: names joined by ``*``, ``:`` or ``+``."""
    names, operators = tokens[::2], tokens[1::2]
    if (
        len(tokens) % 2 == 0  # "~ temp +", "~ temp | ": a variable is missing
        or any(kind != "name" for kind, _ in names)  # "a * * b"
        or any(kind != "op" for kind, _ in operators)
    ):
        raise OrdstatsError(
            f"specs {specs!r} has an operator without a variable on each side; "
            "e.g. '~ temp * contact' or '~ temp | contact'"
        )
    if any(value == "|" for _, value in operators):
        raise OrdstatsError(
            f"specs {specs!r} has more than one '|'; name the by variables after one: "
            "'~ temp | contact * judge'"
        )
    return [value for _, value in names]


def _check_mode(fit: MarginsFit, mode: object) -> str:
    if not isinstance(mode, str) or mode not in EMM_MODES:
        raise OrdstatsError(f"mode must be one of {', '.join(map(repr, EMM_MODES))}; got {mode!r}")
    available = [name for name in EMM_MODES if _needed_type(name) in fit.margins_types()]
    if mode not in available:
        default = " (the default)" if mode == "latent" else ""
        raise OrdstatsError(
            f"mode={mode!r}{default} has no meaning for this model (it has no latent variable "
            f"with cut-points); pass one of this model's modes: "
            f"mode={', '.join(map(repr, available))}"
        )
    return mode


def _needed_type(mode: str) -> str:
    """The prediction type ``mode`` is computed from (the latent modes need cut-points)."""
    return "latent" if mode in ("latent", "linear.predictor", "scale") else EMM_MODES[mode]


def _predicting(fit: MarginsFit, re_form: Any) -> MarginsFit:
    """The fit predicting with ``re_form`` (mixed models); other fits take only the default."""
    options = getattr(fit, "margins_options", None)
    if options is not None:
        return cast(MarginsFit, options(re_form=re_form))
    if not (isinstance(re_form, int) and re_form == 0):
        raise OrdstatsError("re_form is for mixed models (random effects); leave it out here")
    return fit


def _back_transform(fit: MarginsFit, mode: str) -> Any:
    """What ``regrid()`` applies: the link's CDF (linear predictors), exp (log scale)."""
    if mode == "scale":  # R's regrid keeps the name "emmean" (summary(type=) says "response")
        return (np.exp, np.exp, "emmean")
    if mode == "linear.predictor":
        link = _inverse_link(fit)
        return None if link is None else (*link, "cumprob")
    return None


def _inverse_link(fit: MarginsFit) -> Any:
    """``(cdf, pdf)`` of the fit's link, for ``regrid()``; None if the fit names no link."""
    model = getattr(fit, "model", None)
    link = getattr(model, "link", None) or getattr(getattr(model, "problem", None), "link", None)
    if link is None or not hasattr(link, "cdf") or not hasattr(link, "pdf"):
        return None
    return (link.cdf, link.pdf)


def _estimates_at(
    fit: MarginsFit, params: FloatArray | None, cov: FloatArray | None
) -> tuple[FloatArray, FloatArray]:
    theta = fit.margins_params() if params is None else np.asarray(params, dtype=float)
    covariance = fit.margins_covariance() if cov is None else np.asarray(cov, dtype=float)
    k = fit.margins_params().size
    if theta.shape != (k,) or covariance.shape != (k, k):
        raise OrdstatsError(f"params must have {k} values and cov shape ({k}, {k})")
    return theta, covariance


#: the modes whose grid has the response's levels or the cuts as its first variable
_EXTRA_VARIABLE_MODES = ("linear.predictor", "cum.prob", "exc.prob", "prob")


def _nesting_of(fit: MarginsFit, grid: _Grid, mode: str, nesting: Any) -> tuple[Nesting, bool]:
    """The nesting structure to use and whether it was found (not given).

    Found as emmeans finds it: in the grid's cells with rows, and in the
    model's terms (a factor without a main effect, :func:`implied_nesting`).
    """
    columns = slice(1, None) if mode in _EXTRA_VARIABLE_MODES else slice(None)
    predictors = grid.dims[columns]
    names = [d.name for d in predictors]
    given = parse_nesting(nesting)
    if given is not None:
        named = [*given, *(g for groups in given.values() for g in groups)]
        _check_names(list(dict.fromkeys(named)), names, "nesting=")
        return given, False
    sizes = [len(d.levels) for d in predictors]
    factors = [name for name, size in zip(names, sizes, strict=True) if size > 1]
    implied = implied_nesting(fit.margins_term_codings(), factors) if len(factors) > 1 else {}
    found = find_nesting(names, sizes, grid.index()[:, columns], grid.weights, implied)
    return found, bool(found)


def _with_nesting_groups(
    primary: list[str], by_vars: list[str], nesting: Nesting
) -> tuple[list[str], list[str]]:
    """``specs``/``by`` with the factors a nested one of them is nested in (as emmeans).

    A nested factor's means are those of its levels within each level of its
    nesting factors: ``~ bottle`` gives bottle and temp, ``~ bottle | temp``
    bottle within temp.  A nested factor in ``by`` keeps its nesting factors
    in ``by`` too.
    """
    nested = [name for name in [*primary, *by_vars] if name in nesting]
    if not nested:
        return primary, by_vars
    groups = [g for name in nested for g in nesting[name]]
    by_groups = [g for name in by_vars if name in nesting for g in nesting[name]]
    by_out = list(dict.fromkeys([*by_groups, *by_vars]))
    primary_out = [
        name for name in dict.fromkeys([*nested, *groups, *primary]) if name not in by_out
    ]
    return primary_out, by_out


def _occurring(grid: _Grid, labels: pd.DataFrame, nesting: Nesting) -> np.ndarray:
    """Which means' combinations of a nested factor and its nesting factors have rows."""
    keep = np.ones(len(labels), dtype=bool)
    index = grid.index()
    position = {d.name: i for i, d in enumerate(grid.dims)}
    for name in [n for n in labels.columns if n in nesting]:
        together = [name, *nesting[name]]
        sizes = [grid.sizes[position[v]] for v in together]
        cell_key = np.ravel_multi_index(tuple(index[:, position[v]] for v in together), sizes)
        rows = np.bincount(cell_key, weights=grid.weights, minlength=int(np.prod(sizes)))
        label_key = np.ravel_multi_index(
            tuple(
                np.array([grid.dims[position[v]].levels.index(x) for x in labels[v]])
                for v in together
            ),
            sizes,
        )
        keep &= rows[label_key] > 0
    return keep


def emmeans(
    fit: MarginsFit,
    specs: Any,
    by: Any = None,
    mode: str = "latent",
    weights: str = "equal",
    at: Mapping[str, Any] | None = None,
    cov_reduce: Any = "mean",
    *,
    data: pd.DataFrame | None = None,
    re_form: Any = 0,
    latent_cuts: str = "grid",
    nesting: Any = AUTO,
    params: FloatArray | None = None,
    cov: FloatArray | None = None,
) -> EmmGrid:
    """Estimated marginal means of ``fit`` (R's ``emmeans(fit, specs, by, mode, weights, at)``).

    Parameters
    ----------
    fit : MarginsFit
        Any ordstats fit (it implements the margins protocol).
    specs : str or list of str
        The variables of the means, e.g. ``"temp"``, ``["temp", "contact"]``
        or a formula ``"~ temp | contact"`` (``|`` gives ``by``).  With
        ``mode="prob"`` the response's name is a variable, with the
        cut-based modes ``"cut"``.  A variable whose name has ``:``, ``*``,
        ``+`` or ``|`` in it is read whole (``"t:1"``; ``:`` joins variables
        only where the name is not a variable), or put it in backticks as in
        R (``"~ `t:1` | contact"``).
    by : str or list of str, optional
        Variables whose levels the means are computed (and compared) within.
    mode : str
        ``"latent"`` (default, as emmeans), ``"linear.predictor"``,
        ``"cum.prob"``, ``"exc.prob"``, ``"prob"``, ``"mean.class"``.
    weights : str
        ``"equal"`` (default), ``"proportional"``, ``"outer"``, ``"cells"``,
        ``"flat"``.
    at : dict, optional
        Values of predictors in the grid (numbers for covariates, levels for
        factors).  As R's ``ref_grid``, every cell has the mean of the rows'
        location offsets, whatever ``at`` gives the offset's variables; a
        scale formula's offset is evaluated on the grid.
    cov_reduce : {"mean", "median"} or callable
        How a numeric predictor not in ``at`` is reduced to one value.
    data : pandas.DataFrame, optional
        The rows the reference grid is built from (factor levels, covariate
        means, cell counts); default the fit's estimation rows.  A fit read in
        chunks (files, Dask, Spark) gets these from one pass over its rows,
        kept on the fit (``cov_reduce="median"`` or a function reads the
        numeric columns in one more pass); a fit that no longer holds its rows
        (pickled, ``remove_data()``) needs ``data``.
    re_form : {0, None, "marginal"}
        Mixed models only: the random effects at zero (default, as emmeans for
        clmm), conditional on the groups' modes (None, needs the grouping
        columns, so not for a reference grid), or averaged over their
        distribution (``"marginal"``: population-averaged probabilities).
    latent_cuts : {"grid", "cell"}
        ``mode="latent"`` with nominal effects (cut-points that differ between
        cells): subtract the mean cut-point over the whole reference grid
        (``"grid"``, default, as emmeans; nominal variables then do not move the
        means) or each cell's own mean cut-point (``"cell"``, not in emmeans:
        the means then show the nominal variables' average shift of the
        cut-points, as the margins verbs' ``type="latent"``).  Without nominal
        effects both are the same.
    nesting : {"auto", None} or str or dict
        Factors nested in others (each level of ``B`` occurs with one level of
        ``A`` only), whose means average ``B`` within each level of ``A`` over
        the levels that occur there, as R emmeans' ``nesting``.  ``"auto"``
        (default) finds them in the reference grid's cells with rows and in
        the formula's terms (``temp/b2``: ``b2`` has no main effect), as
        ``ref_grid`` does, and says so in the summary's notes; a text such as
        ``"bottle %in% temp"`` (several separated by commas, ``"c %in% (a*b)"``)
        or a dict ``{"bottle": ["temp"]}`` names them; ``None`` (R's
        ``nesting = NULL``) or ``"none"`` treats every factor as crossed, so
        means over combinations without rows are ``nonEst``.
    params, cov : ndarray, optional
        Evaluate at other estimates and covariance (e.g. R's), default the fit's.

    Returns
    -------
    EmmGrid
    """
    fit = _predicting(fit, re_form)
    mode = _check_mode(fit, mode)
    weights = _check_weights(weights)
    latent_cuts = _check_latent_cuts(latent_cuts)
    if at is not None and not isinstance(at, Mapping):
        raise OrdstatsError(f"at must be a dict of variable: value(s); got {at!r}")
    _check_cov_reduce(cov_reduce)  # also where no predictor is numeric
    theta, covariance = _estimates_at(fit, params, cov)
    grid = _reference_grid(fit, mode, dict(at or {}), cov_reduce, theta, data, latent_cuts)
    known = [d.name for d in grid.dims]
    primary, by_vars = _parse_specs(specs, by, known)
    _check_names(primary + by_vars, known, "specs/by")
    if mode == "scale":
        grid = _scale_grid(fit, grid, primary + by_vars)
    structure, detected = _nesting_of(fit, grid, mode, nesting)
    primary, by_vars = _with_nesting_groups(primary, by_vars, structure)
    names = primary + by_vars
    if structure:
        labels, matrix = _nested_averaging(grid, names, weights, structure)
        shown = _occurring(grid, labels, structure)
        labels, matrix = labels.loc[shown].reset_index(drop=True), matrix[shown]
    else:
        labels, matrix = _averaging(grid, names, weights)
    labels, values, jacobian, functions = _averaged(grid, labels, matrix)
    parts = _scale_parts(grid, mode, matrix, values, jacobian)
    if parts is not None:
        values, jacobian = _combine(parts)
    averaged = [d.name for d in grid.dims if d.name not in names and len(d.levels) > 1]
    notes = [f"Results are averaged over the levels of: {', '.join(averaged)}"] if averaged else []
    if detected:
        notes.append(
            f"A nesting structure was detected in the fitted model: {format_nesting(structure)} "
            "(nesting=None switches it off)"
        )
    basis = None if grid.estimability is None else grid.estimability[1]
    return EmmGrid(
        labels=labels,
        values=values,
        jacobian=jacobian,
        covariance=covariance,
        estimate_name=_ESTIMATE_NAMES[mode],
        primary=primary,
        by=by_vars,
        notes=notes,
        inverse_link=_back_transform(fit, mode),
        scale_parts=parts,
        linear_functions=functions,
        nonest_basis=basis,
        nonlinear_estimable=(
            estimable_rows(functions, basis)
            if functions is not None and basis is not None and mode in _NONLINEAR_MODES
            else None
        ),
        nested=any(name in structure for name in names),
    )


def emtrends(
    fit: MarginsFit,
    specs: Any,
    var: str,
    by: Any = None,
    mode: str = "latent",
    weights: str = "equal",
    at: Mapping[str, Any] | None = None,
    delta_var: float | None = None,
    *,
    data: pd.DataFrame | None = None,
) -> EmmGrid:
    """Slopes in a numeric predictor of the marginal means (R's ``emtrends(fit, specs, var)``).

    As emmeans, the derivative is a forward difference of the reference grid:
    every cell at the covariate's mean and at the mean plus ``delta_var``
    (default ``0.001`` times the covariate's range over the grid's rows),
    divided by ``delta_var``; the estimates' Jacobian is the same difference of
    the cells' Jacobians, so ``SE = sqrt(J V J')``.  In ``"latent"`` and
    ``"linear.predictor"`` modes with ``var`` entering linearly this is the
    exact slope; in the probability modes it is emmeans' number.

    Parameters
    ----------
    fit : MarginsFit
        Any ordstats fit (it implements the margins protocol).
    specs, by, mode, weights, at, data
        As :func:`emmeans` (``at`` may not set ``var``).
    var : str
        The numeric predictor to differentiate in.
    delta_var : float, optional
        The step (R's ``delta.var``).

    Returns
    -------
    EmmGrid
        The estimate column is ``"<var>.trend"``.
    """
    at = dict(at or {})
    rows = _grid_rows(fit, data)
    if var not in rows.variables or rows.summary.is_factor(var):
        raise OrdstatsError(f"var {var!r} is not a numeric predictor of the model")
    if var in at:
        raise OrdstatsError(f"at= sets {var!r}, the variable emtrends differentiates in")
    if delta_var is None:
        values = rows.column(var)
        delta_var = 0.001 * float(np.nanmax(values) - np.nanmin(values))
    if not is_real_number(delta_var) or not np.isfinite(float(delta_var)) or delta_var == 0:
        raise OrdstatsError(f"delta_var must be a nonzero number; got {delta_var!r}")
    step = float(delta_var)
    base = rows.summary.mean(var)
    grids = [
        emmeans(fit, specs, by, mode, weights, {**at, var: [x]}, data=data)
        for x in (base, base + step)
    ]
    low, high = grids
    return replace(
        low,
        labels=low.labels.drop(columns=var, errors="ignore"),
        values=(high.values - low.values) / step,
        jacobian=(high.jacobian - low.jacobian) / step,
        estimate_name=f"{var}.trend",
        inverse_link=None,
        scale_parts=None,
        linear_functions=None,
        nonest_basis=None,
        nonlinear_estimable=None,
    )


def joint_tests(
    fit: MarginsFit,
    by: Any = None,
    *,
    data: pd.DataFrame | None = None,
    nesting: Any = AUTO,
    params: FloatArray | None = None,
    cov: FloatArray | None = None,
) -> pd.DataFrame:
    """Wald tests that every contrast of each term's means is zero (R's ``joint_tests``).

    For each combination of predictors (main effects, then interactions), the
    latent-scale means over that combination (equal weights; numeric
    predictors at their mean -/+ 1, as emmeans) are contrasted with the
    interaction contrasts, and ``chi2 = b'(C V C')^+ b`` is referred to a
    chi-squared distribution on ``df1 = rank(C V C')``.  ``F.ratio`` is
    ``chi2 / df1`` with ``df2 = Inf`` (emmeans' columns).  Terms with no
    testable contrast (e.g. an interaction the model does not have) are left out.
    A nested factor (see :func:`emmeans`) is tested only in terms with its
    nesting factors, by contrasts within each of their level combinations
    (``bottle %in% temp``: ``temp`` and ``temp:bottle``, as emmeans), and the
    means average it within them.

    Parameters
    ----------
    fit : MarginsFit
    by : str or list of str, optional
        Test within each level combination of these variables.
    data : pandas.DataFrame, optional
        The rows the reference grid is built from (see :func:`emmeans`).
    nesting : {"auto", None} or str or dict
        Nested factors: found in the grid (default), named, or none (``None``);
        see :func:`emmeans`.
    params, cov : ndarray, optional

    Returns
    -------
    pandas.DataFrame
        Columns ``model term``, the ``by`` variables, ``df1``, ``df2``,
        ``F.ratio``, ``p.value``.
    """
    fit = _predicting(fit, 0)
    if "latent" not in fit.margins_types():
        raise OrdstatsError(
            "joint_tests() tests each term's means on the latent scale, which this model has "
            "not (its family has no latent variable with cut-points); test the terms with "
            "wald_test_terms() or drop1(), or compare emmeans(..., mode='prob') of a term"
        )
    mode = _check_mode(fit, "latent")
    with warnings.catch_warnings():  # refused below, with the reason, if a selection's
        warnings.simplefilter("ignore", StandardErrorWarning)
        theta, covariance = _estimates_at(fit, params, cov)
    if not np.all(np.isfinite(covariance)):
        # every Wald statistic would be NaN and every term left out: an empty table
        raise OrdstatsError(
            "joint_tests() are Wald tests, and the covariance of the estimates is not "
            "available (an L1 or elastic-net penalty gives no standard errors); refit with a "
            "ridge penalty (L1_wt=0) or without a penalty"
        )
    grid = _reference_grid(fit, mode, {}, "meanint", theta, data)
    structure, _ = _nesting_of(fit, grid, mode, nesting)
    by_vars = _as_list(by)
    names = [d.name for d in grid.dims if len(d.levels) > 1 and d.name != "cut"]
    _check_names(by_vars, names, "by=")
    candidates = [n for n in names if n not in by_vars]
    rows = []
    for size in range(1, len(candidates) + 1):
        for term in itertools.combinations(candidates, size):
            nesters = list(dict.fromkeys(g for t in term for g in structure.get(t, [])))
            if any(g not in term for g in nesters):
                continue  # a nested factor is tested within its nesting factors only, as emmeans
            labels, values, jac, functions = _term_means(grid, [*term, *by_vars], structure)
            for group in _by_groups(labels, by_vars):
                contrast = _term_contrast(labels.iloc[group], list(term), nesters)
                used = contrast
                if functions is not None and grid.estimability is not None:
                    # as emmeans: the contrasts the fit cannot estimate are left out
                    kept = estimable_rows(contrast @ functions[group], grid.estimability[1])
                    used = contrast[kept]
                b = used @ values[group]
                cjac = used @ jac[group]
                means_var = np.einsum("nk,kl,nl->n", jac[group], covariance, jac[group])
                scale = float(np.sum(used**2)) * float(np.max(means_var, initial=0.0))
                chi2, df1 = _wald(b, cjac @ covariance @ cjac.T, scale)
                if df1 == 0:
                    continue
                row: dict[str, Any] = {"model term": ":".join(term)}
                for name in by_vars:
                    row[name] = labels.iloc[group[0]][name]
                row.update(
                    {
                        "df1": df1,
                        "df2": np.inf,
                        "F.ratio": chi2 / df1,
                        "p.value": float(stats.chi2.sf(chi2, df1)),
                    }
                )
                rows.append(row)
    if grid.estimability is not None:
        rows += _confounded_rows(grid, grid.estimability[1], candidates, by_vars, rows, structure)
    columns = ["model term", *by_vars, "df1", "df2", "F.ratio", "p.value"]
    return pd.DataFrame(rows, columns=columns)


def _confounded_rows(
    grid: _Grid,
    basis: FloatArray,
    candidates: list[str],
    by_vars: list[str],
    tested: list[dict[str, Any]],
    nesting: Nesting,
) -> list[dict[str, Any]]:
    """The ``(confounded)`` rows of a rank-deficient fit's joint tests, one per ``by`` group.

    The estimable differences among the cells that no term's test holds: the
    dimension of the estimable part of the cells' contrasts (``rank(D) -
    rank(D N)``, ``N`` the non-estimable ``basis``) less the terms' degrees of
    freedom.  As in emmeans, they get no test (F and p missing).
    """
    labels, _, _, functions = _term_means(grid, candidates + by_vars, nesting)
    out = []
    for group in _by_groups(labels, by_vars):
        differences = np.diff(np.asarray(functions)[group], axis=0)
        # an absolute tolerance from the differences' own size: a product that is zero but
        # for rounding (every cell estimable) has no rank, whatever its tiny singular values
        tol = 1e-8 * max(1.0, float(np.linalg.norm(differences, 2)))
        estimable = np.linalg.matrix_rank(differences) - np.linalg.matrix_rank(
            differences @ basis, tol=tol
        )
        key = {name: labels.iloc[group[0]][name] for name in by_vars}
        used = sum(r["df1"] for r in tested if all(r[n] == v for n, v in key.items()))
        if estimable > used:
            row: dict[str, Any] = {"model term": "(confounded)", **key}
            row.update({"df1": estimable - used, "df2": np.inf, "F.ratio": np.nan})
            out.append({**row, "p.value": np.nan})
    return out


def _term_means(
    grid: _Grid, names: list[str], nesting: Nesting
) -> tuple[pd.DataFrame, FloatArray, FloatArray, FloatArray | None]:
    """The equally weighted means over ``names`` that occur (nested means where nested)."""
    if not nesting:
        return _average(grid, names, "equal")
    labels, matrix = _nested_averaging(grid, names, "equal", nesting)
    shown = _occurring(grid, labels, nesting)
    return _averaged(grid, labels.loc[shown].reset_index(drop=True), matrix[shown])


def _term_contrast(labels: pd.DataFrame, term: list[str], nesters: list[str]) -> FloatArray:
    """A term's interaction contrasts of one ``by`` group's means (rows of ``labels``).

    Crossed factors: the Kronecker product of consecutive differences over the
    term's factors.  With nested factors, the same over the factors that are not
    nesting factors, separately within each combination of the nesting factors
    (block-diagonal: a nested factor's levels differ between its groups).
    """
    inner = [t for t in term if t not in nesters]
    blocks = _by_groups(labels.reset_index(drop=True), nesters)
    out = np.zeros((0, len(labels)))
    for block in blocks:
        sizes = [labels.iloc[block][t].nunique() for t in inner]
        contrast = _interaction_contrast(sizes)
        if contrast.shape[1] != len(block):  # not a crossing: consecutive differences
            contrast = np.diff(np.eye(len(block)), axis=0)
        part = np.zeros((contrast.shape[0], len(labels)))
        part[:, block] = contrast
        out = np.vstack([out, part])
    return out


def _interaction_contrast(sizes: list[int]) -> FloatArray:
    """Kronecker product of consecutive-difference contrasts (first variable fastest)."""
    out: FloatArray = np.ones((1, 1))
    for n in sizes:
        consec = np.diff(np.eye(n), axis=0)
        out = np.asarray(np.kron(consec, out), dtype=float)
    return out


def _wald(b: FloatArray, cov: FloatArray, scale: float) -> tuple[float, int]:
    """``b' cov^+ b`` and the rank of ``cov`` (eigenvalues above 1e-8 of ``scale``)."""
    eigval, eigvec = np.linalg.eigh(cov)
    keep = eigval > 1e-8 * scale
    if not keep.any():
        return 0.0, 0
    projected = eigvec[:, keep].T @ b
    return float(np.sum(projected**2 / eigval[keep])), int(keep.sum())


# -- the methods of a results class ------------------------------------------------------------


class EmmeansMethods:
    """``emmeans()``, ``emtrends()``, ``joint_tests()``: methods of a results class."""

    def emmeans(
        self,
        specs: Any,
        by: Any = None,
        mode: str = "latent",
        weights: str = "equal",
        at: Mapping[str, Any] | None = None,
        cov_reduce: Any = "mean",
        re_form: Any = 0,
        data: pd.DataFrame | None = None,
        latent_cuts: str = "grid",
        nesting: Any = AUTO,
    ) -> EmmGrid:
        """Estimated marginal means, as R's ``emmeans(fit, specs, by, mode, weights, at)``.

        Parameters
        ----------
        specs : str or list of str
            ``"temp"``, ``["temp", "contact"]`` or ``"~ temp | contact"``; with
            ``mode="prob"`` the response's name is a variable, with the cut
            modes ``"cut"``.
        by : str or list of str, optional
        mode : str
            ``"latent"`` (default), ``"linear.predictor"``, ``"cum.prob"``,
            ``"exc.prob"``, ``"prob"``, ``"mean.class"``.
        weights : str
            ``"equal"`` (default), ``"proportional"``, ``"outer"``, ``"cells"``, ``"flat"``.
        at : dict, optional
            Grid values of predictors.
        cov_reduce : {"mean", "median"} or callable
        re_form : {0, "marginal"}
            Mixed models only: random effects at zero (default, as emmeans) or
            averaged over (population-averaged).
        data : pandas.DataFrame, optional
            Rows to build the reference grid from (default the estimation rows,
            read in one pass for fits read in chunks; needed for fits that no
            longer hold their rows).
        latent_cuts : {"grid", "cell"}
            With nominal effects, ``mode="latent"`` subtracts the mean cut-point
            over the whole grid (``"grid"``, default, as emmeans) or each cell's
            own (``"cell"``); see :func:`emmeans`.
        nesting : {"auto", None} or str or dict
            Nested factors: found in the grid and the formula (``"auto"``,
            default, as emmeans), named (``"bottle %in% temp"``) or none (``None``, R's
            ``nesting = NULL``); see :func:`emmeans`.

        Returns
        -------
        EmmGrid
            ``.summary()``, ``.summary_frame()``, ``.pairs()``, ``.contrast()``,
            ``.regrid()``.

        Examples
        --------
        >>> emm = res.emmeans("~ rating | temp", mode="prob")  # doctest: +SKIP
        >>> emm.pairs(adjust="holm").summary()  # doctest: +SKIP
        """
        with numeric_threads():  # thin products, as in the fit
            return emmeans(
                cast(MarginsFit, self),
                specs,
                by=by,
                mode=mode,
                weights=weights,
                at=at,
                cov_reduce=cov_reduce,
                re_form=re_form,
                data=data,
                latent_cuts=latent_cuts,
                nesting=nesting,
            )

    def emtrends(
        self,
        specs: Any,
        var: str,
        by: Any = None,
        mode: str = "latent",
        weights: str = "equal",
        at: Mapping[str, Any] | None = None,
        delta_var: float | None = None,
        data: pd.DataFrame | None = None,
    ) -> EmmGrid:
        """Slopes in ``var`` of the marginal means, as R's ``emtrends(fit, specs, var)``.

        Parameters
        ----------
        specs, by, mode, weights, at, data
            As :meth:`emmeans`.
        var : str
            The numeric predictor to differentiate in.
        delta_var : float, optional
            The forward difference's step (R's ``delta.var``, default ``0.001``
            times the range of ``var``); see :func:`emtrends`.

        Returns
        -------
        EmmGrid
            Estimates ``"<var>.trend"``; ``.pairs()`` compares the slopes.

        Examples
        --------
        >>> res.emtrends("tobgp", var="ncases", mode="mean.class")  # doctest: +SKIP
        """
        with numeric_threads():  # thin products, as in the fit
            return emtrends(
                cast(MarginsFit, self),
                specs,
                var,
                by=by,
                mode=mode,
                weights=weights,
                at=at,
                delta_var=delta_var,
                data=data,
            )

    def joint_tests(
        self, by: Any = None, data: pd.DataFrame | None = None, nesting: Any = AUTO
    ) -> pd.DataFrame:
        """Wald tests of every model term on the latent scale, as R's ``joint_tests(fit)``.

        Parameters
        ----------
        by : str or list of str, optional
        data : pandas.DataFrame, optional
            Rows to build the reference grid from (default the estimation rows).
        nesting : {"auto", None} or str or dict
            Nested factors (found in the grid and the formula by default, as
            emmeans; ``None`` for none); see :func:`emmeans`.

        Returns
        -------
        pandas.DataFrame
            ``model term``, ``df1``, ``df2`` (Inf), ``F.ratio``, ``p.value``.
        """
        with numeric_threads():  # thin products, as in the fit
            return joint_tests(cast(MarginsFit, self), by=by, data=data, nesting=nesting)
