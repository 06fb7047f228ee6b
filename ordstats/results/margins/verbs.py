r"""marginaleffects' verbs on any fit: predictions, comparisons, slopes, hypotheses.

Every verb reads the fit through :class:`~ordstats.results.margins.protocol.MarginsFit`
(its parameters ``theta``, covariance ``V``, design rows and the prediction
function with its analytic Jacobian), so the same code serves every results
class.  Each estimate is a weighted mean of per-row terms,

.. math:: \hat b_g = \frac{\sum_{i \in g} w_i\, v_i(\theta)}{\sum_{i \in g} w_i},\qquad
          \nabla \hat b_g = \frac{\sum_{i \in g} w_i\, \nabla v_i(\theta)}{\sum_{i \in g} w_i},

(a single row when nothing is averaged), so averages are sums of per-row
values and Jacobians; the standard error is the delta method
:math:`\sqrt{\nabla \hat b^\top V \nabla \hat b}`.

* ``predictions``: the fit's predictions of ``type`` at ``newdata`` (or the
  estimation rows), per row or averaged ``by`` columns.
* ``comparisons``: a function (``comparison``) of the predictions at two
  values ``hi`` and ``lo`` of a predictor, the others as observed: for a
  factor its levels (``"reference"``, ``"sequential"``, ``"pairwise"`` or two
  given levels), for a numeric predictor ``x +- gap/2`` (a number, default 1),
  ``"sd"`` (``x +- sd/2``), ``"2sd"``, ``"iqr"`` (Q1 to Q3), ``"minmax"``, or
  two given values.  With ``by`` (the ``avg_`` verbs) the built-in
  comparisons compare the averages (``mean(hi) / mean(lo)`` for ``"ratio"``,
  marginaleffects' ``"ratioavg"``); a user function is applied to each row's
  pair and then averaged.
* ``slopes``: the derivative of the predictions in a numeric predictor,
  analytic through the link (:meth:`MarginsFit.margins_slope`), as
  ``"dydx"``, ``"eyex"`` (``dy/dx x/y``), ``"eydx"`` (``dy/dx / y``) or
  ``"dyex"`` (``dy/dx x``); a factor gets its contrasts with the reference
  level.  The design's derivative in the predictor is the central difference
  of its columns, exact for columns linear or quadratic in it (interactions,
  ``I(x**2)``).
* ``hypotheses``: functions of the parameters themselves.

Every verb takes ``hypothesis=`` (:mod:`~ordstats.results.margins.hypothesis`),
``conf_level`` and ``conf_type`` (:mod:`~ordstats.results.margins.table`).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import pandas as pd

from ordstats._typing import FloatArray
from ordstats.core.threads import numeric_threads
from ordstats.design.newdata import distributed_newdata_hint, newdata_warned_once
from ordstats.errors import (
    OrdstatsError,
    is_real_number,
    not_numbers,
    refuse_unknown_options,
)
from ordstats.results.margins.emmeans import EmmeansMethods, estimable_rows
from ordstats.results.margins.grid import (
    coded_factors,
    datagrid,
    factor_levels,
    is_factor,
    set_column,
)
from ordstats.results.margins.hypothesis import apply_hypothesis
from ordstats.results.margins.jacobian import RowTerms
from ordstats.results.margins.protocol import (
    PREDICTION_TYPES,
    PROBABILITY_TYPES,
    DesignRows,
    MarginsFit,
    Predicted,
    check_type,
)
from ordstats.results.margins.stream import (
    AVERAGER,
    DOUBTFUL,
    WeightTally,
    block_sums,
    means,
    newdata_fit,
    stream_average,
    streams,
    warn_doubtful,
)
from ordstats.results.margins.table import Estimates, MarginsTable, wald_table

__all__ = [
    "MarginsMethods",
    "comparisons",
    "hypotheses",
    "predictions",
    "relative_slope",
    "slopes",
]

_COMPARISONS = ("difference", "ratio", "lnratio", "lnor")
_LABELS = {
    "difference": "{hi} - {lo}",
    "ratio": "{hi} / {lo}",
    "lnratio": "ln({hi} / {lo})",
    "lnor": "ln(odds({hi}) / odds({lo}))",
}
_SLOPES = {"dydx": "dY/dX", "eyex": "eY/eX", "eydx": "eY/dX", "dyex": "dY/eX"}
_FACTOR_CONTRASTS = ("reference", "sequential", "pairwise")
_NUMERIC_CONTRASTS = ("sd", "2sd", "iqr", "minmax")
#: relative step of the design's central difference in a numeric predictor
_DESIGN_STEP = 1e-4


# -- the rows ---------------------------------------------------------------------------


@dataclass
class _Rows:
    """The rows a verb evaluates: the data, the weights, the averaging keys."""

    fit: MarginsFit
    data: pd.DataFrame
    weights: FloatArray
    by: list[str] | None  # None: no averaging; []: one average

    @property
    def rowid(self) -> pd.Index:
        if "rowidcf" in self.data.columns:
            return pd.Index(self.data["rowidcf"])
        return self.data.index


def _resolve_newdata(fit: MarginsFit, newdata: Any) -> pd.DataFrame:
    if newdata is None:
        return fit.margins_data()
    if isinstance(newdata, str) and newdata == "mean":
        return datagrid(fit)
    if not isinstance(newdata, pd.DataFrame):
        raise OrdstatsError(
            distributed_newdata_hint(newdata)
            or "newdata must be a pandas DataFrame (e.g. from datagrid()), 'mean', or None for "
            f"the estimation rows; got {type(newdata).__name__}"
        )
    if newdata.empty:
        raise OrdstatsError("newdata has no rows")
    return coded_factors(fit, _numeric_booleans(fit, newdata))


def _numeric_booleans(fit: MarginsFit, newdata: pd.DataFrame) -> pd.DataFrame:
    """``newdata`` with its boolean columns of variables the fit reads as numbers as 0/1.

    The design reads them so (as predict does), but the verbs tell factors by
    the column: a boolean ``x`` of a numeric fit was compared level by level
    against each of the fit's distinct values of ``x``.
    """
    flags = [c for c in newdata.columns if pd.api.types.is_bool_dtype(newdata[c].dtype)]
    if not flags:
        return newdata
    reference = _reference_data(fit, newdata)
    numeric = {
        c: newdata[c].to_numpy(dtype=float, na_value=np.nan)
        for c in flags
        if c in reference.columns and not is_factor(reference[c])
    }
    return newdata.assign(**numeric) if numeric else newdata


def _resolve_weights(data: pd.DataFrame, wts: Any) -> FloatArray:
    if wts is None:
        return np.ones(len(data))
    if isinstance(wts, str):
        if wts not in data.columns:
            raise OrdstatsError(
                f"wts={wts!r} is not a column of the data; give a column name or one weight per row"
            )
        values = data[wts]
    elif isinstance(wts, pd.Series):
        if not wts.index.is_unique:
            raise OrdstatsError(
                "wts (a Series) is paired with the rows by index label, and its index repeats "
                "labels; give one weight per row label, or an array (paired by position)"
            )
        if not data.index.isin(wts.index).all():
            raise OrdstatsError(
                "wts (a Series) is paired with the rows by index label, and some rows of the "
                "data have no weight: give a weight for every row label"
            )
        values = wts.loc[data.index]
    else:
        values = pd.Series(np.asarray(wts).ravel() if np.ndim(wts) else [wts])
        if len(values) != len(data):
            raise OrdstatsError(
                f"wts has {len(values)} values for {len(data)} rows; give one weight per row"
            )
    _check_weight_kind(values)
    try:
        weights = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise OrdstatsError("wts must be numbers") from None
    _check_weights(
        weights, f"wts={wts!r} (a column of the data)" if isinstance(wts, str) else "wts"
    )
    return weights


def _check_weight_kind(values: pd.Series) -> None:
    """Refuse weights that are not numbers, as the fit's ``weights=`` does.

    Numbers as text were parsed, booleans read as 0/1, dates as nanoseconds,
    and complex numbers lost their imaginary part with numpy's warning.
    """
    kind = not_numbers(values)
    if kind is None:
        return
    hint = {
        "booleans": "; to average over the rows where a mask holds, pass newdata=data[mask]",
        "text": "; convert them first, e.g. pd.to_numeric(...)",
        "categories": "; convert them first, e.g. .astype(float)",
    }.get(kind, "")
    raise OrdstatsError(f"wts must be numbers; got {kind}{hint}")


def _check_weights(weights: FloatArray, what: str) -> None:
    """Raise an error naming ``what`` unless the weights are finite, non-negative, not all zero."""
    WeightTally.of(weights).check(what)


def _resolve_by(by: Any, data: pd.DataFrame, allowed: Sequence[str] = ()) -> list[str] | None:
    if by is None or by is False:
        return None
    if by is True:
        return []
    names = [by] if isinstance(by, str) else list(by) if isinstance(by, Iterable) else None
    if names is None or not all(isinstance(n, str) for n in names):
        raise OrdstatsError(
            f"by= takes True, False, a column name or a list of column names; got {by!r:.80}"
        )
    clash = [n for n in names if n in allowed and n in data.columns]
    if clash:
        raise OrdstatsError(_reserved_column_message(clash[0], f"by={clash[0]!r} is ambiguous"))
    unknown = [n for n in names if n not in data.columns and n not in allowed]
    if unknown:
        raise OrdstatsError(
            f"by= names {', '.join(map(repr, unknown))}, which is not a column of the data "
            f"(columns: {', '.join(map(repr, data.columns))}); add it to newdata or choose "
            "another column"
        )
    return [n for n in names if n not in allowed]


#: Columns of the margins tables and what they hold; a data column of one of these names
#: would be overwritten in the tables (marginaleffects forbids them as variable names).
_TABLE_COLUMNS = {
    "group": "the response level",
    "rowid": "the row's position",
    "term": "the variable compared",
    "contrast": "the comparison",
    "estimate": "the estimates",
    "std_error": "their standard errors",
    "statistic": "their z statistics",
    "p_value": "their p values",
    "s_value": "their S values",
    "conf_low": "their intervals",
    "conf_high": "their intervals",
}


def _reserved_column_message(name: str, what: str) -> str:
    """Why a data column named as a column of the margins tables (``"group"``) is refused."""
    return (
        f"the rows have a column named {name!r}, which the margins tables use for "
        f"{_TABLE_COLUMNS[name]} (as marginaleffects), so {what}; rename that column (in the "
        "data and the formula)"
    )


def _refuse_table_column_names(data: pd.DataFrame) -> None:
    """Refuse data columns that the tables' own columns would overwrite.

    ``group`` aside: only tables with several response levels have it
    (:meth:`_Block.long`).
    """
    clash = [name for name in _TABLE_COLUMNS if name != "group" and name in data.columns]
    if clash:
        raise OrdstatsError(
            _reserved_column_message(clash[0], "the tables would overwrite its values")
        )


def _check_variables(fit: MarginsFit, names: Sequence[str]) -> None:
    known = fit.margins_variables()
    unknown = [n for n in names if n not in known]
    if unknown:
        raise OrdstatsError(
            f"variables= names {', '.join(map(repr, unknown))}, which the model does not use; "
            f"its predictors are {', '.join(map(repr, known))}"
        )


def _verb_options(arguments: dict[str, Any]) -> dict[str, Any]:
    """A verb's keyword arguments from its ``locals()`` (to run it again on other rows)."""
    return {k: v for k, v in arguments.items() if k not in ("fit", "newdata")}


_CLASS_AVERAGED = "type='class' (the most probable level) cannot be averaged; use 'prob'"


def _streamed(verb: Callable[..., MarginsTable], fit: MarginsFit, options: dict[str, Any]) -> Any:
    """``stream_average`` of ``verb``, after the checks that every chunk's rows would fail.

    An unknown ``type``, an average of ``"class"`` or ``variables`` the model
    does not use are refused before the pass, with the in-memory message
    (not from inside a Dask or Spark task, after reading rows).
    """
    type = options.get("type", "prob")
    if type not in PREDICTION_TYPES:
        check_type(type, fit.margins_types(), "this fit")
    if type == "class" and verb is predictions:  # the stream always averages
        raise OrdstatsError(_CLASS_AVERAGED)
    if options.get("variables") is not None:
        _variable_specs(fit, options["variables"])
    return stream_average(verb, fit, options)


class _Estimability:
    """The rows a verb evaluates that a rank-deficient fit cannot estimate.

    A fit that dropped aliased location columns (a cell of an interaction
    without rows, say) predicts a row whose design needs them as if their
    effects were 0: a number that depends on which column was dropped.  R's
    ``predict.lm`` warns of such "doubtful cases" and emmeans prints them as
    ``nonEst`` (:class:`~ordstats.results.margins.emmeans.EmmGrid`); the verbs
    warn once, naming them.  A fit without the ``_margins_estimability`` hook,
    or with every column estimated, costs nothing.
    """

    def __init__(self, fit: MarginsFit) -> None:
        self.checks = getattr(fit, "_margins_estimability", None)
        #: the row labels found, once each, in the order found
        self.labels: dict[Any, None] = {}

    def check(self, data: pd.DataFrame) -> None:
        """Record the rows of ``data`` whose linear predictor the fit cannot estimate."""
        if self.checks is None or not len(data):
            return
        found = self.checks(data)
        if found is None:  # no column was dropped: nothing to check, now or later
            self.checks = None
            return
        rows, basis = found
        self.labels.update(dict.fromkeys(data.index[~estimable_rows(rows, basis)]))

    def check_set(self, data: pd.DataFrame, name: str, values: Any) -> None:
        """:meth:`check` of ``data`` with column ``name`` set to ``values``."""
        if self.checks is not None:
            self.check(set_column(data, name, values))

    def warn(self, verb: str) -> None:
        """One warning naming the rows found (none if every row was estimable).

        On one chunk of a streamed average the count goes to the stream
        (:data:`~ordstats.results.margins.stream.DOUBTFUL`), which warns once.
        """
        if not self.labels:
            return
        collected = DOUBTFUL.get()
        if collected is not None:
            collected.append(len(self.labels))
            return
        first = list(itertools.islice(self.labels, 5))
        shown = ", ".join(map(str, first)) + (", ..." if len(self.labels) > 5 else "")
        warn_doubtful(verb, len(self.labels), shown)


def _rows(fit: MarginsFit, newdata: Any, wts: Any, by: Any) -> _Rows:
    data = _resolve_newdata(fit, newdata)
    if newdata is None:
        data = _with_data_columns(fit, data, by, wts)
    _refuse_table_column_names(data)
    return _Rows(fit, data, _resolve_weights(data, wts), _resolve_by(by, data, ("group",)))


def _with_data_columns(fit: MarginsFit, data: pd.DataFrame, by: Any, wts: Any) -> pd.DataFrame:
    """The estimation rows with the ``by=``/``wts=`` columns the model does not use.

    marginaleffects reads them from the original data: here, from the fitted
    DataFrame on the rows the fit kept (a fit that offers them).
    """
    names = [by] if isinstance(by, str) else list(by) if isinstance(by, (list, tuple)) else []
    names += [wts] if isinstance(wts, str) else []
    wanted = [n for n in dict.fromkeys(names) if n not in data.columns and n != "group"]
    hook = getattr(fit, "_margins_data_columns", None)
    if not wanted or hook is None:
        return data
    extra = hook(wanted)
    if not len(extra.columns):
        return data
    # .array keeps a Categorical column (to_numpy would make it objects), by position
    return data.assign(**{name: extra[name].array for name in extra.columns})


# -- long tables and averages -----------------------------------------------------------


@dataclass
class _Block:
    """Per-row estimates of one (term, contrast): labels, values (m, g), Jacobian (m, g, k)."""

    labels: pd.DataFrame  # m rows
    values: FloatArray
    jacobian: FloatArray | None
    groups: list[str]

    def long(self) -> tuple[pd.DataFrame, FloatArray, FloatArray | None]:
        """One row per (group, row), group-major, with a ``group`` column when g > 1."""
        m, g = self.values.shape
        labels = pd.concat([self.labels] * g, ignore_index=True)
        if g > 1:
            if "group" in labels.columns:
                raise OrdstatsError(
                    _reserved_column_message("group", "the table would hold two of them")
                )
            labels.insert(0, "group", pd.Categorical(np.repeat(self.groups, m), self.groups))
        values = self.values.T.reshape(-1)
        jac = None
        if self.jacobian is not None:
            dense = self.jacobian
            if isinstance(dense, RowTerms):
                dense = dense.dense()
            jac = dense.transpose(1, 0, 2).reshape(m * g, -1)
        return labels, values, jac

    def table(self, rows: _Rows) -> tuple[pd.DataFrame, FloatArray, FloatArray | None]:
        """Per-row estimates in long form, or their weighted means ``by`` (when averaging)."""
        if rows.by is None:
            return self.long()
        averager = AVERAGER.get()  # set while streaming over chunks (stream.py)
        if averager is not None:
            return cast(tuple[pd.DataFrame, FloatArray, FloatArray | None], averager(self, rows))
        return _average(self, rows.weights, rows.by)


def _average(
    block: _Block, weights: FloatArray, by: list[str]
) -> tuple[pd.DataFrame, FloatArray, FloatArray | None]:
    """Weighted means within the ``by`` values of per-row values and Jacobians.

    A sum over the rows of ``w_i v_i`` and ``w_i J_i`` per ``by`` value and
    group, divided by the sum of the weights (rows whose value is NaN are left
    out of their group's sums).  The result is in long form, group-major.
    """
    return means(*block_sums(block, weights, by))


def _row_labels(rows: _Rows, columns: dict[str, Any]) -> pd.DataFrame:
    """Per-row labels: the given columns, ``rowid`` and the data's columns (for ``by``).

    For an average (which reads only its ``by`` columns and one row of the
    others) the given columns are one-category categoricals, not a string per row.
    """
    m = len(rows.data)
    if rows.by is None or m == 0:
        frame = pd.DataFrame(columns, index=range(m))
    else:
        codes = np.zeros(m, dtype=np.int8)
        frame = pd.DataFrame(
            {k: pd.Categorical.from_codes(codes, [v]) for k, v in columns.items()},
            index=range(m),
        )
    if rows.by is None or "rowid" in rows.by:
        frame["rowid"] = np.asarray(rows.rowid)
    data = rows.data
    extra = [c for c in data.columns if c not in frame.columns and c != "rowidcf"]
    if rows.by is not None:  # an average reads only its by columns
        extra = [c for c in extra if c in rows.by]
    return pd.concat([frame, data[extra].reset_index(drop=True)], axis=1)


def _finish(
    blocks: list[tuple[pd.DataFrame, FloatArray, FloatArray | None, bool]],
    rows: _Rows,
    hypothesis: Any,
    conf_level: float,
    conf_type: str,
    info: dict[str, Any],
) -> MarginsTable:
    labels = pd.concat([b[0] for b in blocks], ignore_index=True)
    values = np.concatenate([b[1] for b in blocks])
    jacs = [b[2] for b in blocks]
    jac = None if any(j is None for j in jacs) else np.vstack(cast(list[FloatArray], jacs))
    probability = np.concatenate([np.full(b[1].size, b[3]) for b in blocks])
    estimates = Estimates(labels, values, jac, probability)
    if hypothesis is not None:
        estimates = apply_hypothesis(estimates, hypothesis, _hypothesis_labels(labels))
    return wald_table(estimates, rows.fit.margins_covariance(), conf_level, conf_type, info)


def _hypothesis_labels(labels: pd.DataFrame) -> list[str]:
    """Names of the estimates in pairwise hypotheses: their descriptive values, else b-index."""
    skip = {"group", "rowid"}
    columns = [c for c in labels.columns if c not in skip]
    if len(labels) and columns and len(labels.columns) <= 6:
        text = labels[columns].astype(str).agg(", ".join, axis=1)
        if text.is_unique or ("group" in labels and (text + labels["group"].astype(str)).is_unique):
            return [f"({t})" if "," in t else t for t in text]
    return [f"b{i + 1}" for i in range(len(labels))]


def _evaluate(
    fit: MarginsFit,
    design: DesignRows,
    type: str,
    averaged: bool,
    direction: DesignRows | None = None,
) -> Predicted:
    """The fit's predictions (or slope along ``direction``) at ``design``.

    For averages, with the Jacobian as row terms where the fit has them
    (``_margins_row_terms``; the same numbers without an ``(m, g, k)`` array).
    """
    params = fit.margins_params()
    hook = getattr(fit, "_margins_row_terms", None) if averaged else None
    if hook is not None:
        found = hook(params, design, type, direction)
        if found is not None:
            return cast(Predicted, found)
    if direction is None:
        return fit.margins_predict(params, design, type)
    return fit.margins_slope(params, design, direction, type)


# -- predictions ------------------------------------------------------------------------


def _counterfactual(fit: MarginsFit, data: pd.DataFrame, variables: Any) -> pd.DataFrame:
    """The data repeated over the values of ``variables`` (marginaleffects' predictions)."""
    if variables is None:
        return data
    values = {}
    for name, chosen in _variable_specs(fit, variables).items():
        if name not in data.columns:
            raise OrdstatsError(f"variables= names {name!r}, which is not a column of newdata")
        column = data[name]
        if chosen is not None:
            values[name] = chosen
        elif is_factor(column):
            values[name] = factor_levels(column)
        else:  # Tukey's five numbers, as marginaleffects
            values[name] = sorted(set(np.nanquantile(column, [0, 0.25, 0.5, 0.75, 1.0])))
    return datagrid(newdata=data, grid_type="counterfactual", **values)


def predictions(
    fit: MarginsFit,
    newdata: Any = None,
    *,
    variables: Any = None,
    type: str = "prob",
    by: Any = False,
    wts: Any = None,
    hypothesis: Any = None,
    conf_level: float = 0.95,
    conf_type: str = "auto",
) -> MarginsTable:
    """Predictions of ``type`` per row of ``newdata`` or averaged ``by`` columns.

    Parameters
    ----------
    fit : MarginsFit
        A fitted model.
    newdata : pandas.DataFrame, "mean" or None
        The rows (default: the estimation rows; ``"mean"``: one row with
        every predictor at its mean or mode).  Rows keep their index labels
        (``rowid``).
    variables : str, list or dict, optional
        Predictors to set, over every row, to each of their values (a factor's
        levels, a numeric predictor's five-number summary, or the given ones).
    type : str
        One of the fit's prediction types (``"prob"``, ``"cumprob"``,
        ``"exceedance"``, ``"expected"``, ``"class"``, ``"linear"``,
        ``"latent"``).  ``"class"`` gives the most probable level's label (an
        ordered categorical ``estimate``, as R's ``predict(type = "class")``).
    by : bool, str or list of str
        ``True``: average over all rows; column names: average within their
        values (``"group"`` is always kept).
    wts : str, array-like or pandas.Series, optional
        Weights of the rows in averages (a column name, one per row, or a
        Series paired by index label).
    hypothesis : str, sequence of str or array, optional
        See :mod:`~ordstats.results.margins.hypothesis`.
    conf_level : float
    conf_type : {"auto", "wald", "logit"}
        ``"auto"``: logit-scale intervals for probabilities, Wald otherwise.

    Returns
    -------
    MarginsTable
    """
    if streams(fit, newdata):
        return _streamed(predictions, fit, dict(_verb_options(locals()), _counterfactual=True))
    rows = _rows(fit, newdata, wts, by)
    rows.data = _counterfactual(fit, rows.data, variables)
    if len(rows.weights) != len(rows.data):  # repeated by the counterfactual grid
        rows.weights = np.resize(rows.weights, len(rows.data))
    if type == "class" and rows.by is not None:
        raise OrdstatsError(_CLASS_AVERAGED)
    averaged = rows.by is not None
    if newdata is not None or variables is not None:  # the fitted rows are estimable
        estimability = _Estimability(fit)
        estimability.check(rows.data)
        estimability.warn("predictions")
    predicted = _evaluate(fit, fit.margins_rows(rows.data), type, averaged)
    block = _Block(_row_labels(rows, {}), predicted.values, predicted.jacobian, predicted.groups)
    labels, values, jac = block.table(rows)
    info = {"title": "Predictions" if rows.by is None else "Average predictions", "type": type}
    table = _finish(
        [(labels, values, jac, type in PROBABILITY_TYPES)],
        rows,
        hypothesis,
        conf_level,
        conf_type,
        info,
    )
    if type == "class" and hypothesis is None:
        table["estimate"] = _level_labels(fit, table["estimate"])
    return table


def _level_labels(fit: MarginsFit, positions: pd.Series) -> pd.Categorical:
    """The most probable levels' labels (as R's ``predict(type = "class")``), ordered."""
    codes = np.asarray(positions, dtype=float)
    if not np.all(np.isfinite(codes)):  # a row without a prediction stays missing
        codes = np.where(np.isfinite(codes), codes, -1)
    return pd.Categorical.from_codes(
        codes.astype(int), categories=fit.margins_levels(), ordered=True
    )


# -- comparisons --------------------------------------------------------------------------


@dataclass
class _Contrast:
    """One contrast of one predictor: its label and its two values (scalars or per row)."""

    term: str
    label: str
    lo: Any
    hi: Any


def _factor_pairs(levels: list[Any], spec: Any, name: str) -> list[tuple[Any, Any]]:
    if spec is None or spec == "reference":
        return [(levels[0], level) for level in levels[1:]]
    if spec == "sequential":
        return list(itertools.pairwise(levels))
    if spec == "pairwise":
        return [
            (levels[i], levels[j]) for i in range(len(levels)) for j in range(i + 1, len(levels))
        ]
    if isinstance(spec, (list, tuple)) and len(spec) == 2:
        unknown = [v for v in spec if v not in levels]
        if unknown:
            raise OrdstatsError(
                f"variables: {name!r} has no level(s) {unknown}; its levels are {levels}"
            )
        return [(spec[0], spec[1])]
    raise OrdstatsError(
        f"variables: the contrast of factor {name!r} must be one of "
        f"{', '.join(map(repr, _FACTOR_CONTRASTS))} or two of its levels [lo, hi]; got {spec!r}"
    )


def numeric_summary(column: pd.Series) -> dict[str, float]:
    """A numeric column's summary: what the numeric contrasts and condition plots read.

    The in-memory twin of :func:`~ordstats.results.margins.stream.column_summaries`.

    Parameters
    ----------
    column : pandas.Series

    Returns
    -------
    dict
        ``"mean"``, ``"sd"`` (``ddof=1``), ``"q1"``, ``"median"``, ``"q3"``
        (linear interpolation, as ``numpy.quantile``), ``"min"``, ``"max"``;
        NaN for a column without values.
    """
    values = np.asarray(column, dtype=float)
    quartiles = np.full(3, np.nan)
    if not np.isnan(values).all():
        quartiles = np.nanquantile(values, [0.25, 0.5, 0.75])
    return {
        "mean": float(column.mean()),
        "sd": float(column.std()),
        "q1": float(quartiles[0]),
        "median": float(quartiles[1]),
        "q3": float(quartiles[2]),
        "min": float(column.min()),
        "max": float(column.max()),
    }


def _summary_of(fit: MarginsFit, name: str, reference: pd.Series) -> dict[str, float]:
    """The fit's summary of column ``name`` (rows read in chunks), else ``reference``'s."""
    kept = getattr(fit, "_margins_column_summary", None)
    found = None if kept is None else kept(name)
    return numeric_summary(reference) if found is None else cast(dict[str, float], found)


def _numeric_contrast(
    name: str, spec: Any, x: pd.Series, summary: Callable[[], dict[str, float]]
) -> tuple[Any, Any, str]:
    """``lo``, ``hi`` (arrays or numbers) and the label parts of a numeric contrast."""
    if spec is None:
        spec = 1.0
    if isinstance(spec, (int, float, np.integer, np.floating)) and not isinstance(spec, bool):
        gap = float(spec)
        if not np.isfinite(gap):
            raise OrdstatsError(
                f"variables: the gap of numeric {name!r} must be a finite number; got {spec!r}"
            )
        return x - gap / 2, x + gap / 2, f"+{spec:g}"
    if isinstance(spec, str) and spec in _NUMERIC_CONTRASTS:
        stats = summary()
        sd = stats["sd"]
        if spec == "sd":
            return x - sd / 2, x + sd / 2, "{hi} - {lo}".format(hi="(x+sd/2)", lo="(x-sd/2)")
        if spec == "2sd":
            return x - sd, x + sd, "(x+sd) - (x-sd)"
        if spec == "iqr":
            return stats["q1"], stats["q3"], "Q3 - Q1"
        return stats["min"], stats["max"], "Max - Min"
    if isinstance(spec, (list, tuple)) and len(spec) == 2:
        try:
            if not (is_real_number(spec[0]) and is_real_number(spec[1])):
                raise TypeError  # [True, False] is a slip, not [1, 0]
            lo, hi = float(spec[0]), float(spec[1])
        except (TypeError, ValueError):
            raise OrdstatsError(
                f"variables: {name!r} is numeric, so its contrast is two numbers [lo, hi], a "
                f"gap, or one of {', '.join(map(repr, _NUMERIC_CONTRASTS))}; it has no levels "
                f"{list(spec)!r}"
            ) from None
        if not (np.isfinite(lo) and np.isfinite(hi)):
            raise OrdstatsError(
                f"variables: the values [lo, hi] of numeric {name!r} must be finite numbers; "
                f"got {list(spec)!r}"
            )
        return lo, hi, f"{hi:g} - {lo:g}"
    raise OrdstatsError(
        f"variables: the contrast of numeric {name!r} must be a number (a gap), two numbers "
        f"[lo, hi] or one of {', '.join(map(repr, _NUMERIC_CONTRASTS))}; got {spec!r}"
    )


def _variable_specs(fit: MarginsFit, variables: Any) -> dict[str, Any]:
    if variables is None:
        return {name: None for name in fit.margins_variables()}
    if isinstance(variables, str):
        spec = {variables: None}
    elif isinstance(variables, dict):
        spec = dict(variables)
    elif isinstance(variables, Iterable) and all(isinstance(n, str) for n in variables):
        spec = {name: None for name in variables}
    else:
        raise OrdstatsError(
            "variables= takes a column name, a list of names or a dict {name: contrast}; "
            f"got {variables!r:.80}"
        )
    _check_variables(fit, list(spec))
    return spec


def _reference_data(fit: MarginsFit, data: pd.DataFrame, fitted: bool = False) -> pd.DataFrame:
    """The estimation rows when available (levels, SD, quantiles), else ``data``.

    ``fitted``: ``data`` is the estimation rows already.
    """
    if fitted:
        return data
    try:
        return fit.margins_data()
    except OrdstatsError:
        return data


def _contrasts(
    fit: MarginsFit, data: pd.DataFrame, variables: Any, comparison: Any, fitted: bool = False
) -> list[_Contrast]:
    template = _LABELS.get(comparison, "{hi} - {lo}") if isinstance(comparison, str) else None
    reference = _reference_data(fit, data, fitted)
    out = []
    for name, spec in _variable_specs(fit, variables).items():
        if name not in data.columns:
            raise OrdstatsError(f"variables= names {name!r}, which is not a column of newdata")
        source = reference[name] if name in reference.columns else data[name]
        if is_factor(data[name]):
            for lo, hi in _factor_pairs(factor_levels(source), spec, name):
                label = template.format(hi=hi, lo=lo) if template else "custom"
                out.append(_contrast(data, name, label, lo, hi))
            continue
        lo, hi, label = _numeric_contrast(
            name, spec, data[name].astype(float), functools.partial(_summary_of, fit, name, source)
        )
        if template and not label.startswith("+"):
            label = template.format(hi=label.split(" - ")[0], lo=label.split(" - ")[1])
        elif not template:
            label = "custom"
        out.append(_contrast(data, name, label, lo, hi))
    return out


def _contrast(data: pd.DataFrame, name: str, label: str, lo: Any, hi: Any) -> _Contrast:
    lo, hi = (v.to_numpy() if isinstance(v, pd.Series) else v for v in (lo, hi))
    return _Contrast(name, label, lo, hi)


def _value_key(name: str, value: Any) -> tuple[str, Any] | None:
    """``(name, value)`` as a dict key for one value; None for per-row values."""
    if np.ndim(value) != 0:
        return None
    try:
        hash(value)
    except TypeError:
        return None
    return (name, value)


class _Designs:
    """The design rows of the verb's rows, built once, and of their counterfactual copies.

    A copy with one column changed takes the fit's shortcut
    (``_margins_rows_set``: only the columns of that variable's own terms are
    rebuilt) where the fit has one and it applies, else the copy's own design.
    """

    def __init__(self, fit: MarginsFit, data: pd.DataFrame, fitted: bool = False) -> None:
        self.fit = fit
        self.data = data
        self.fitted = fitted  # data is the estimation rows (margins_data())
        self._base: DesignRows | None = None
        self._values: dict[tuple[str, Any], DesignRows] = {}
        #: the rows of the changed copies that the fit cannot estimate
        self.estimability = _Estimability(fit)
        if not fitted:
            self.estimability.check(data)

    @property
    def base(self) -> DesignRows:
        """The design of the rows (the fitted one, where the fit keeps it, for its own rows)."""
        if self._base is None:
            hook = getattr(self.fit, "_margins_fitted_rows", None) if self.fitted else None
            self._base = None if hook is None else hook()
            if self._base is None:
                self._base = self.fit.margins_rows(self.data)
        return self._base

    def changed(self, name: str, values: Any) -> DesignRows:
        """The design of the rows with column ``name`` set to ``values`` (kept for one value)."""
        key = _value_key(name, values)
        if key is not None and key in self._values:
            return self._values[key]
        self.estimability.check_set(self.data, name, values)
        shortcut = getattr(self.fit, "_margins_rows_set", None)
        rows = None if shortcut is None else shortcut(self.base, self.data, name, values)
        if rows is None:
            rows = self.fit.margins_rows(set_column(self.data, name, values))
        if key is not None:
            self._values[key] = rows
        return cast(DesignRows, rows)

    def averaged_at(self, name: str, value: Any, type: str) -> Predicted:
        """The predictions for averages with ``name`` set to ``value`` in every row.

        From the fit's shortcut (``_margins_set_terms``: no copy of the design)
        where it applies, else of :meth:`changed`.
        """
        shortcut = getattr(self.fit, "_margins_set_terms", None)
        params = self.fit.margins_params()
        found = None
        if shortcut is not None:
            found = shortcut(params, self.base, self.data, name, value, type)
        if found is None:  # changed() checks the rows' estimability
            return _evaluate(self.fit, self.changed(name, value), type, True)
        self.estimability.check_set(self.data, name, value)
        return cast(Predicted, found)


def _single(values: FloatArray, jacobian: FloatArray | None) -> Predicted:
    """Averaged estimates (n,) and Jacobian (n, k) as one-group predictions."""
    return Predicted(values[:, None], None if jacobian is None else jacobian[:, None], [""])


def _compare(comparison: Any, hi: Predicted, lo: Predicted) -> tuple[FloatArray, FloatArray | None]:
    """``comparison(hi, lo)`` elementwise and its Jacobian by the chain rule."""
    h, l_ = hi.values, lo.values
    jh, jl = hi.jacobian, lo.jacobian
    if jh is None or jl is None:
        raise OrdstatsError(
            "type='class' (the most probable level) has no comparisons or slopes (it is "
            "not differentiable); use type='prob' or 'expected'"
        )
    with np.errstate(divide="ignore", invalid="ignore"):
        if callable(comparison):
            value, d_hi, d_lo = _user_comparison(comparison, h, l_)
        elif comparison == "difference":
            value, d_hi, d_lo = h - l_, np.ones_like(h), -np.ones_like(h)
        elif comparison == "ratio":
            value, d_hi, d_lo = h / l_, 1.0 / l_, -h / l_**2
        elif comparison == "lnratio":
            value, d_hi, d_lo = np.log(h) - np.log(l_), 1.0 / h, -1.0 / l_
        else:  # lnor
            value = np.log(h) - np.log1p(-h) - np.log(l_) + np.log1p(-l_)
            d_hi, d_lo = 1.0 / (h * (1.0 - h)), -1.0 / (l_ * (1.0 - l_))
    jac = d_hi[..., None] * jh + d_lo[..., None] * jl
    jac[~np.isfinite(value)] = np.nan  # no estimate (a ratio of a negative), no error
    return value, jac


def _user_comparison(
    function: Callable[..., Any], hi: FloatArray, lo: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """A user's ``function(hi, lo)`` and its partial derivatives in ``hi`` and ``lo``.

    The predictions' Jacobians stay analytic; only the user's function of two
    numbers is differentiated by central differences (step ``1e-6 max(1, |v|)``).
    """

    def call(a: FloatArray, b: FloatArray) -> FloatArray:
        try:
            result = np.asarray(function(a, b), dtype=float)
        except Exception as error:  # the user's code may raise anything
            raise OrdstatsError(
                f"comparison function raised {type(error).__name__}: {error}"
            ) from error
        if result.shape != a.shape:
            raise OrdstatsError(
                "a comparison function must return one value per row: f(hi, lo) elementwise "
                f"(got shape {result.shape} for inputs of shape {a.shape})"
            )
        return result

    value = call(hi, lo)
    step_hi, step_lo = 1e-6 * np.maximum(1.0, np.abs(hi)), 1e-6 * np.maximum(1.0, np.abs(lo))
    d_hi = (call(hi + step_hi, lo) - call(hi - step_hi, lo)) / (2 * step_hi)
    d_lo = (call(hi, lo + step_lo) - call(hi, lo - step_lo)) / (2 * step_lo)
    return value, d_hi, d_lo


def _check_comparison(comparison: Any, type: str) -> Any:
    if comparison == "lnor" and type not in PROBABILITY_TYPES:
        raise OrdstatsError(
            f"comparison='lnor' is the log odds ratio of two probabilities; type={type!r} "
            f"gives no probabilities: use type='prob' (or {', '.join(PROBABILITY_TYPES[1:])}), "
            "or comparison='difference'"
        )
    if callable(comparison) or comparison in _COMPARISONS:
        return comparison
    raise OrdstatsError(
        f"comparison must be one of {', '.join(map(repr, _COMPARISONS))} or a function "
        f"f(hi, lo); got {comparison!r}"
    )


_Blocks = list[tuple[pd.DataFrame, FloatArray, FloatArray | None, bool]]


def _comparison_blocks(
    fit: MarginsFit,
    rows: _Rows,
    variables: Any,
    comparison: Any,
    type: str,
    designs: _Designs | None = None,
) -> _Blocks:
    """The estimates of every contrast: per row, averaged, or comparisons of averages."""
    blocks: _Blocks = []
    compare_averages = rows.by is not None and not callable(comparison)
    designs = designs or _Designs(fit, rows.data)
    averages: dict[tuple[str, Any], tuple[pd.DataFrame, FloatArray, FloatArray | None]] = {}

    def average(term: str, value: Any, labels: pd.DataFrame) -> tuple[Any, ...]:
        """The average of the predictions with ``term`` at ``value`` (once per value)."""
        key = _value_key(term, value)
        if key is None or key not in averages:
            p = designs.averaged_at(term, value, type)
            found = _Block(labels, p.values, p.jacobian, p.groups).table(rows)
            if key is None:
                return found
            averages[key] = found
        out_labels, values, jac = averages[key]
        return out_labels.assign(contrast=labels["contrast"].iloc[0]), values, jac

    for contrast in _contrasts(fit, rows.data, variables, comparison, designs.fitted):
        labels = _row_labels(rows, {"term": contrast.term, "contrast": contrast.label})
        if compare_averages:
            out_labels, hv, hj = average(contrast.term, contrast.hi, labels)
            _, lv, lj = average(contrast.term, contrast.lo, labels)
            value, jac = _compare(comparison, _single(hv, hj), _single(lv, lj))
            blocks.append((out_labels, value[:, 0], None if jac is None else jac[:, 0], False))
            continue
        hi = _evaluate(fit, designs.changed(contrast.term, contrast.hi), type, False)
        lo = _evaluate(fit, designs.changed(contrast.term, contrast.lo), type, False)
        value, jac = _compare(comparison, hi, lo)
        blocks.append((*_Block(labels, value, jac, hi.groups).table(rows), False))
    return blocks


def comparisons(
    fit: MarginsFit,
    newdata: Any = None,
    *,
    variables: Any = None,
    comparison: Any = "difference",
    type: str = "prob",
    by: Any = False,
    wts: Any = None,
    hypothesis: Any = None,
    conf_level: float = 0.95,
    conf_type: str = "auto",
) -> MarginsTable:
    """Comparisons of the predictions at two values of each predictor.

    Parameters
    ----------
    fit : MarginsFit
    newdata, type, by, wts, hypothesis, conf_level, conf_type
        As for :func:`predictions`.
    variables : str, list or dict, optional
        The predictors to change (default: all), with their contrasts as a
        dict: for a factor ``"reference"`` (default), ``"sequential"``,
        ``"pairwise"`` or ``[lo, hi]`` levels; for a numeric predictor a gap
        (default 1: ``x +- 1/2``), ``"sd"``, ``"2sd"``, ``"iqr"``,
        ``"minmax"`` or ``[lo, hi]`` values.
    comparison : {"difference", "ratio", "lnratio", "lnor"} or callable
        ``hi - lo``, ``hi / lo``, ``log(hi / lo)``, the log odds ratio, or a
        function ``f(hi, lo)`` applied elementwise.  When averaging, the
        built-in ones compare the averages of ``hi`` and ``lo``.

    Returns
    -------
    MarginsTable
    """
    comparison = _check_comparison(comparison, type)
    if streams(fit, newdata):
        return _streamed(comparisons, fit, _verb_options(locals()))
    fit = newdata_fit(fit, newdata, {"variables": variables})
    rows = _rows(fit, newdata, wts, by)
    designs = _Designs(fit, rows.data, fitted=newdata is None)
    blocks = _comparison_blocks(fit, rows, variables, comparison, type, designs)
    if not blocks:
        raise OrdstatsError("the model has no predictors to compare")
    designs.estimability.warn("comparisons")
    title = "Comparisons" if rows.by is None else "Average comparisons"
    info = {"title": title, "type": type}
    return _finish(blocks, rows, hypothesis, conf_level, conf_type, info)


# -- slopes ------------------------------------------------------------------------------


def _numeric_slope(
    fit: MarginsFit,
    rows: _Rows,
    name: str,
    slope: str,
    type: str,
    designs: _Designs,
    reference: pd.DataFrame,
) -> tuple[FloatArray, FloatArray | None, list[str]]:
    """Per-row slope of ``type`` in predictor ``name`` and its Jacobian (m, g, k)."""
    data = rows.data
    x = data[name].astype(float)
    spread = float(reference[name].std()) if name in reference.columns else float(x.std())
    step = _DESIGN_STEP * (spread if np.isfinite(spread) and spread > 0 else 1.0)
    params = fit.margins_params()
    design = designs.base
    up, down = (designs.changed(name, (x + s).to_numpy()) for s in (step, -step))
    averaged = rows.by is not None and slope == "dydx"
    derivative = _evaluate(fit, design, type, averaged, up.direction(down, step))
    values, jac = derivative.values, derivative.jacobian
    if slope == "dydx" or jac is None:
        return values, jac, derivative.groups
    xs = x.to_numpy()[:, None]
    if slope == "dyex":
        return values * xs, jac * xs[:, :, None], derivative.groups
    level = fit.margins_predict(params, design, type)
    assert level.jacobian is not None
    values, jac = relative_slope(values, jac, level.values, level.jacobian)
    if slope == "eyex":
        values, jac = values * xs, jac * xs[:, :, None]
    return values, jac, derivative.groups


class _LinearSlopes:
    r"""Slopes of the predictors that only shift the linear predictor, from one slope.

    A numeric predictor ``x`` that enters the design as its own column only
    (the fit's ``_margins_linear_columns`` says which, with the position of
    its coefficient ``b``) moves every prediction ``y`` through
    :math:`\eta` alone, so :math:`dy/dx = b\, dy/d\eta` with the Jacobian
    :math:`b\, \nabla(dy/d\eta) + (dy/d\eta)\, e_b`.  Both are linear in
    the per-row slope along :math:`\eta`, so they hold for its averages
    too: one slope (and one average) serves every such predictor.
    """

    def __init__(self, fit: MarginsFit, rows: _Rows, designs: _Designs, type: str) -> None:
        self.fit, self.rows, self.designs, self.type = fit, rows, designs, type
        self.params = fit.margins_params()
        self.hook = getattr(fit, "_margins_linear_columns", None)
        self._found: tuple[DesignRows, dict[str, int]] | None = None
        self._along: tuple[pd.DataFrame, FloatArray, FloatArray | None] | None = None

    def _positions(self) -> dict[str, int]:
        if self.hook is None:
            return {}
        if self._found is None:
            self._found = self.hook(self.designs.base)
        return self._found[1]

    def block(self, name: str) -> tuple[pd.DataFrame, FloatArray, FloatArray | None, bool] | None:
        """The slopes of ``name`` (per row or averaged), or None if it is not such a predictor."""
        position = self._positions().get(name)
        if position is None:
            return None
        if self._along is None:
            assert self._found is not None
            averaged = self.rows.by is not None
            along = _evaluate(self.fit, self.designs.base, self.type, averaged, self._found[0])
            labels = _row_labels(self.rows, {"term": name, "contrast": _SLOPES["dydx"]})
            self._along = _Block(labels, along.values, along.jacobian, along.groups).table(
                self.rows
            )
        labels, values, jac = self._along
        coefficient = self.params[position]
        if jac is not None:
            jac = coefficient * jac
            jac[:, position] += values
        return labels.assign(term=name), coefficient * values, jac, False


def relative_slope(
    slope: FloatArray, slope_jacobian: FloatArray, level: FloatArray, level_jacobian: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """``slope / level`` and its Jacobian, ``(J_s - (slope / level) J_y) / level``.

    Parameters
    ----------
    slope, level : ndarray, shape (m, g)
        ``dy/dx`` and ``y``.
    slope_jacobian, level_jacobian : ndarray, shape (m, g, k)

    Returns
    -------
    values : ndarray, shape (m, g)
    jacobian : ndarray, shape (m, g, k)
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = slope / level
        jacobian = (slope_jacobian - ratio[:, :, None] * level_jacobian) / level[:, :, None]
    return ratio, jacobian


def slopes(
    fit: MarginsFit,
    newdata: Any = None,
    *,
    variables: Any = None,
    slope: str = "dydx",
    type: str = "prob",
    by: Any = False,
    wts: Any = None,
    hypothesis: Any = None,
    conf_level: float = 0.95,
    conf_type: str = "auto",
) -> MarginsTable:
    """Derivatives of the predictions in numeric predictors (contrasts for factors).

    Parameters
    ----------
    fit : MarginsFit
    newdata, type, by, wts, hypothesis, conf_level, conf_type
        As for :func:`predictions`.
    variables : str or list of str, optional
        The predictors (default: all).
    slope : {"dydx", "eyex", "eydx", "dyex"}
        The derivative, the elasticity ``dy/dx x/y``, or the semi-elasticities
        ``dy/dx / y`` and ``dy/dx x``.

    Returns
    -------
    MarginsTable
    """
    if slope not in _SLOPES:
        raise OrdstatsError(f"slope must be one of {', '.join(map(repr, _SLOPES))}; got {slope!r}")
    if streams(fit, newdata):
        return _streamed(slopes, fit, _verb_options(locals()))
    fit = newdata_fit(fit, newdata, {})
    rows = _rows(fit, newdata, wts, by)
    names = list(_variable_specs(fit, variables))
    designs = _Designs(fit, rows.data, fitted=newdata is None)
    linear = _LinearSlopes(fit, rows, designs, type) if slope == "dydx" else None
    reference: pd.DataFrame | None = None
    blocks = []
    for name in names:
        if name not in rows.data.columns:
            raise OrdstatsError(f"variables= names {name!r}, which is not a column of newdata")
        if is_factor(rows.data[name]):
            blocks += _comparison_blocks(
                fit, rows, {name: "reference"}, "difference", type, designs
            )
            continue
        block = None if linear is None else linear.block(name)
        if block is not None:
            blocks.append(block)
            continue
        if reference is None:
            reference = _reference_data(fit, rows.data, designs.fitted)
        values, jac, groups = _numeric_slope(fit, rows, name, slope, type, designs, reference)
        labels = _row_labels(rows, {"term": name, "contrast": _SLOPES[slope]})
        blocks.append((*_Block(labels, values, jac, groups).table(rows), False))
    if not blocks:
        raise OrdstatsError("the model has no predictors to differentiate")
    designs.estimability.warn("slopes")
    title = "Slopes" if rows.by is None else "Average slopes"
    return _finish(blocks, rows, hypothesis, conf_level, conf_type, {"title": title, "type": type})


# -- hypotheses on the parameters -------------------------------------------------------------


def hypotheses(
    fit: MarginsFit,
    hypothesis: Any,
    *,
    names: Sequence[str] = (),
    conf_level: float = 0.95,
) -> MarginsTable:
    """Wald tests of functions of the parameters (marginaleffects' ``hypotheses``).

    Parameters
    ----------
    fit : MarginsFit
    hypothesis : str, sequence of str or array
        E.g. ``"b3 - b4 = 0"`` (``b1`` the first parameter), an expression of
        the parameter names (``"temp[T.warm] = 2 * contact[T.yes]"``),
        ``"pairwise"``, or a matrix with one row per parameter.
    names : sequence of str
        The parameters' names (usable in the strings).
    conf_level : float

    Returns
    -------
    MarginsTable
    """
    params = fit.margins_params()
    labels = pd.DataFrame({"term": list(names) or [f"b{i + 1}" for i in range(params.size)]})
    estimates = Estimates(labels, params, np.eye(params.size))
    estimates = apply_hypothesis(
        estimates, hypothesis, list(labels["term"]), group_column=None, aliases=names
    )
    rows = _Rows(fit, pd.DataFrame(), np.ones(0), None)
    return wald_table(
        estimates, rows.fit.margins_covariance(), conf_level, "wald", {"title": "Hypotheses"}
    )


# -- the mixin -----------------------------------------------------------------------------


@contextmanager
def _verb_call() -> Iterator[None]:
    """A verb's call: BLAS threads as in the fit, each missing-value warning once.

    The products are thin, as in the fit; the counterfactual copies of a row
    with a missing value would each warn of it (:func:`newdata_warned_once`).
    """
    with numeric_threads(), newdata_warned_once():
        yield


class MarginsMethods(EmmeansMethods):
    """The margins verbs (and emmeans') as methods of a results class with ``MarginsFit``."""

    def predictions(self, newdata: Any = None, **options: Any) -> MarginsTable:
        """Predictions per row (see :func:`ordstats.results.margins.verbs.predictions`)."""
        refuse_unknown_options("predictions", predictions, options)
        with _verb_call():
            return predictions(cast(MarginsFit, self), newdata, **options)

    def avg_predictions(
        self, newdata: Any = None, *, by: Any = True, **options: Any
    ) -> MarginsTable:
        """Average predictions, by default over all rows (``by=True``)."""
        refuse_unknown_options("avg_predictions", predictions, options)
        with _verb_call():
            return predictions(cast(MarginsFit, self), newdata, by=by, **options)

    def comparisons(self, newdata: Any = None, **options: Any) -> MarginsTable:
        """Comparisons per row (see :func:`ordstats.results.margins.verbs.comparisons`)."""
        refuse_unknown_options("comparisons", comparisons, options)
        with _verb_call():
            return comparisons(cast(MarginsFit, self), newdata, **options)

    def avg_comparisons(
        self, newdata: Any = None, *, by: Any = True, **options: Any
    ) -> MarginsTable:
        """Average comparisons, by default over all rows (``by=True``)."""
        refuse_unknown_options("avg_comparisons", comparisons, options)
        with _verb_call():
            return comparisons(cast(MarginsFit, self), newdata, by=by, **options)

    def slopes(self, newdata: Any = None, **options: Any) -> MarginsTable:
        """Slopes per row (see :func:`ordstats.results.margins.verbs.slopes`)."""
        refuse_unknown_options("slopes", slopes, options)
        with _verb_call():
            return slopes(cast(MarginsFit, self), newdata, **options)

    def avg_slopes(self, newdata: Any = None, *, by: Any = True, **options: Any) -> MarginsTable:
        """Average slopes, by default over all rows (``by=True``)."""
        refuse_unknown_options("avg_slopes", slopes, options)
        with _verb_call():
            return slopes(cast(MarginsFit, self), newdata, by=by, **options)

    def hypotheses(self, hypothesis: Any, *, conf_level: float = 0.95) -> MarginsTable:
        """Wald tests of functions of the parameters (``"b1 - b2 = 0"``, names, a matrix)."""
        with _verb_call():
            fit = cast(MarginsFit, self)
            params = getattr(self, "params", None)
            names = list(params.index) if isinstance(params, pd.Series) else []
            return hypotheses(fit, hypothesis, names=names, conf_level=conf_level)
