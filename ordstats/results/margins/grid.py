"""Data grids for the margins verbs (marginaleffects' ``datagrid``) and the kinds of predictors.

A predictor is a *factor* (discrete contrasts) when its column is
categorical, text or boolean, and *numeric* (derivatives) otherwise.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ordstats._typing import FloatArray
from ordstats.design.core import Design, select_fitted_rows, sorted_levels
from ordstats.design.newdata import distributed_newdata_hint
from ordstats.design.r_functions import is_offset, offset_variables
from ordstats.errors import OrdstatsError, is_real_number
from ordstats.results.margins.protocol import MarginsFit
from ordstats.results.margins.stream import streams

__all__ = [
    "coded_covariates",
    "coded_factors",
    "datagrid",
    "factor_levels",
    "fitted_row_columns",
    "is_factor",
    "offset_columns",
    "set_column",
    "streamed_factor_levels",
    "with_factor_codes",
    "with_factor_levels",
]

_GRID_TYPES = ("mean_or_mode", "counterfactual")


def is_factor(column: pd.Series) -> bool:
    """Whether a predictor column is discrete (categorical, text, boolean)."""
    return not pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column)


def coded_factors(fit: Any, data: pd.DataFrame) -> pd.DataFrame:
    """``data`` with the numeric columns the fit encodes as factors (``C(k)``) as Categoricals.

    The verbs tell factors from numbers by the column (:func:`is_factor`);
    a column of numbers that the formula reads only through ``C(k)`` or
    ``factor(k)`` is a factor to the model, so its contrasts are between its
    levels (the fit's, then any new value, which the design refuses as R's
    predict does).  The fit says which (``_margins_factor_levels``).
    """
    hook = getattr(fit, "_margins_factor_levels", None)
    return data if hook is None else with_factor_levels(data, hook())


def coded_covariates(fit: Any, data: pd.DataFrame) -> pd.DataFrame:
    """``data`` with the factors the fit reads only as numbers (``as.integer(f)``) as codes.

    R's ``ref_grid`` puts such a factor in the grid as a covariate: its codes
    ``1, ..., K`` (R's ``as.numeric`` of a factor), reduced to their mean, and
    the formula evaluated there (``as.integer(3.39)`` is 3).  The fit says which
    (``_margins_factor_covariates``).
    """
    hook = getattr(fit, "_margins_factor_covariates", None)
    return with_factor_codes(data, [] if hook is None else hook())


def with_factor_codes(data: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """:func:`coded_covariates` given the columns: categorical ones become their codes 1..K."""
    changed = {
        name: np.where(data[name].cat.codes < 0, np.nan, data[name].cat.codes + 1.0)
        for name in names
        if name in data.columns and isinstance(data[name].dtype, pd.CategoricalDtype)
    }
    return data.assign(**changed) if changed else data


def with_factor_levels(data: pd.DataFrame, levels: dict[str, list[Any]]) -> pd.DataFrame:
    """:func:`coded_factors` given the fit's levels (``name -> levels``; other keys ignored).

    Only columns of numbers change: a column that already is a factor keeps its own.
    """
    changed = {}
    for name, categories in levels.items():
        if name not in data.columns or is_factor(data[name]):
            continue
        extra = sorted(set(pd.unique(data[name].dropna())) - set(categories))
        changed[name] = pd.Categorical(data[name], categories=[*categories, *extra])
    return data.assign(**changed) if changed else data


def factor_levels(column: pd.Series) -> list[Any]:
    """The levels of a factor column: its categories, else its sorted distinct values.

    A boolean column has both levels, False and True, whichever its rows take
    (as a logical's comparison is TRUE - FALSE in R): a chunk of rows that
    all take one gives the table of the whole data's.
    """
    if isinstance(column.dtype, pd.CategoricalDtype):
        return list(column.cat.categories)
    if pd.api.types.is_bool_dtype(column.dtype):
        return [False, True]
    return sorted_levels(column.dropna().unique())


def set_column(data: pd.DataFrame, name: str, values: Any) -> pd.DataFrame:
    """``data`` with column ``name`` set to ``values`` (a categorical keeps its categories)."""
    column = data[name]
    n = len(data)
    if isinstance(column.dtype, pd.CategoricalDtype):
        filled = np.broadcast_to(np.asarray(values, dtype=object), (n,))
        new = pd.Categorical(filled, dtype=column.dtype)
    elif pd.api.types.is_bool_dtype(column):
        new = np.broadcast_to(np.asarray(values, dtype=bool), (n,))
    elif is_factor(column):
        new = np.broadcast_to(np.asarray(values, dtype=object), (n,))
    else:
        new = np.broadcast_to(np.asarray(values, dtype=float), (n,))
    out = data.copy()
    out[name] = pd.Series(np.array(new), index=data.index).astype(
        column.dtype if isinstance(column.dtype, pd.CategoricalDtype) else new.dtype
    )
    return out


def offset_columns(offsets: list[Any], columns: Any = None) -> list[Any]:
    """The ``columns`` the model's offsets read.

    ``offsets`` are the location and scale offsets as the design names them: a
    column's name, R's ``offset(...)`` terms (``"offset(log(t))"``), or None
    (none, or one given as values).  Without ``columns``: every name the
    offsets read (a term's names that are not called as functions).
    """
    names: list[Any] = []
    for offset in offsets:
        if not isinstance(offset, str):
            continue
        if is_offset(offset):
            read = re.findall(r"[A-Za-z_]\w*(?!\w|\s*\()", offset)
            names += offset_variables(offset, read if columns is None else columns)
        elif columns is None or offset in columns:
            names.append(offset)
    return list(dict.fromkeys(names))


def fitted_row_columns(source: Any, design: Design, names: list[str]) -> pd.DataFrame:
    """The columns ``names`` of the fitted data frame ``source`` on the fitted rows.

    For the margins verbs' ``by=`` (and ``wts=``) columns that the model does not
    use: the rows the fit kept (after dropping rows with missing values), in
    their order, as marginaleffects reads the original data.  Names that are
    not columns of ``source`` are left out (the verbs then say so).
    """
    if not isinstance(source, pd.DataFrame):
        return pd.DataFrame(index=design.row_index)
    present = [name for name in names if name in source.columns]
    return select_fitted_rows(source[present], design)


def _typical(column: pd.Series) -> Any:
    """The mean of a numeric column, the mode (most frequent level) of a factor."""
    if is_factor(column):
        counts = column.value_counts(sort=True)
        return counts.index[0]
    mean = column.mean()  # pd.NA for a nullable column without values
    return float("nan") if pd.isna(mean) else float(mean)


def _check_values(data: pd.DataFrame, name: str, values: Any) -> list[Any]:
    if callable(values):  # marginaleffects: a function of the column (np.mean, np.unique, ...)
        try:
            values = values(data[name])
        except Exception as exc:  # whatever the user's function raises
            raise OrdstatsError(
                f"datagrid: {name}={getattr(values, '__name__', values)!r} failed on the column "
                f"{name!r}: {exc}"
            ) from exc
    if isinstance(values, pd.Series):
        values = values.to_numpy()
    listed = list(values) if isinstance(values, (list, tuple, np.ndarray, pd.Index)) else [values]
    if not listed:
        raise OrdstatsError(f"datagrid: {name}= has no values")
    column = data[name]
    if is_factor(column):
        known = factor_levels(column)
        unknown = [v for v in listed if v not in known]
        if unknown:
            raise OrdstatsError(
                f"datagrid: {name!r} has no level(s) {unknown}; its levels are {known}"
            )
    else:
        # True is a slip, not 1; '1' is text; NaN or inf would give NaN predictions
        if not all(is_real_number(v) and np.isfinite(float(v)) for v in listed):
            raise OrdstatsError(
                f"datagrid: {name!r} is numeric; give finite numbers, got {listed!r}"
            )
        listed = [float(v) for v in listed]
    return listed


def datagrid(
    fit: MarginsFit | None = None,
    newdata: pd.DataFrame | None = None,
    grid_type: str = "mean_or_mode",
    **values: Any,
) -> pd.DataFrame:
    """A grid of predictor values for ``newdata=`` of the margins verbs (marginaleffects' name).

    Parameters
    ----------
    fit : results, optional
        A fitted model; its estimation rows (predictors, and any offset and
        weights columns) are used when ``newdata`` is not given.  For a fit
        read in chunks (files, Dask, ``chunksize=``) the means and modes come
        from one pass over them (``grid_type="counterfactual"`` and values
        given as functions of a column need the rows in memory).
    newdata : pandas.DataFrame, optional
        The rows to summarise (default: the fit's estimation rows).
    grid_type : {"mean_or_mode", "counterfactual"}
        ``"mean_or_mode"``: one row per combination of the given values, every
        other predictor at its mean (numeric) or mode (factor).
        ``"counterfactual"``: the whole data repeated for every combination of
        the given values, with a ``rowidcf`` column holding each copy's
        original index label.
    **values
        ``column=value``, ``column=[values]`` or ``column=function`` (applied to
        the column, e.g. ``np.mean``, ``np.unique`` or
        ``lambda x: x.quantile([0.25, 0.75])``, as marginaleffects does).

    Returns
    -------
    pandas.DataFrame
        Factor columns keep their dtype (a categorical keeps its categories).

    Examples
    --------
    >>> grid = datagrid(newdata=pd.DataFrame({"x": [1.0, 3.0], "g": ["a", "b"]}), g=["a", "b"])
    >>> grid.to_dict("list")
    {'x': [2.0, 2.0], 'g': ['a', 'b']}
    """
    if grid_type not in _GRID_TYPES:
        raise OrdstatsError(
            f"grid_type must be one of {', '.join(map(repr, _GRID_TYPES))}; got {grid_type!r}"
        )
    if fit is not None and not isinstance(fit, MarginsFit):
        if isinstance(fit, pd.DataFrame):
            raise OrdstatsError("datagrid's first argument is a fit; pass a DataFrame as newdata=")
        raise OrdstatsError(
            f"datagrid's first argument must be a fitted ordstats model (from .fit()); got "
            f"{type(fit).__name__}"
        )
    typical = None  # the typical values of rows read in chunks (else of ``data``'s columns)
    if newdata is None:
        if fit is None:
            raise OrdstatsError("datagrid needs a fitted model (fit=) or a DataFrame (newdata=)")
        if streams(fit, None):
            data, typical = _streamed_columns(fit, grid_type, values)
        else:
            data = fit.margins_data()
    elif isinstance(newdata, pd.DataFrame):
        data = newdata
    else:
        raise OrdstatsError(
            distributed_newdata_hint(newdata, "newdata")
            or f"newdata must be a pandas DataFrame; got {type(newdata).__name__}"
        )
    if not len(data):
        raise OrdstatsError("datagrid: the data have no rows to take typical values from")
    if data.columns.duplicated().any():
        repeated = sorted({str(c) for c in data.columns[data.columns.duplicated()]})
        raise OrdstatsError(
            f"datagrid: the data have repeated column names ({', '.join(map(repr, repeated))}); "
            "give each column one name"
        )
    unknown = [name for name in values if name not in data.columns]
    if unknown:
        raise OrdstatsError(
            f"datagrid: {', '.join(map(repr, unknown))} is not a column of the data; columns "
            f"are {', '.join(map(repr, data.columns))}"
        )
    given = {name: _check_values(data, name, v) for name, v in values.items()}
    combinations = list(itertools.product(*given.values()))
    if grid_type == "counterfactual":
        copies = []
        for combination in combinations:
            copy = data
            for name, value in zip(given, combination, strict=True):
                copy = set_column(copy, name, value)
            copies.append(copy.assign(rowidcf=data.index))
        return pd.concat(copies, ignore_index=True)
    base = data.iloc[[0] * len(combinations)].reset_index(drop=True)
    for name in data.columns:
        if name in given:
            base = set_column(base, name, [c[list(given).index(name)] for c in combinations])
        else:
            value = _typical(data[name]) if typical is None else typical[name]
            base = set_column(base, name, value)
    return base


@dataclass
class _ColumnTally:
    """Sums and counts of numeric columns, and level counts of factors, over chunks in order.

    ``levels`` maps each factor column to ``{level: count}`` in the order the
    levels are first seen (chunks add up in their order), so that a tie of the
    mode goes to the level seen first, as ``value_counts`` of the whole column.
    """

    rows: pd.DataFrame  # the first used row (the columns' types)
    sums: dict[str, FloatArray]  # numeric column -> [sum, count of values]
    levels: dict[str, dict[Any, int]]

    def __add__(self, other: _ColumnTally | None) -> _ColumnTally:
        if other is None:
            return self
        levels = {name: dict(counts) for name, counts in self.levels.items()}
        for name, counts in other.levels.items():
            for level, count in counts.items():
                levels[name][level] = levels[name].get(level, 0) + count
        sums = {name: total + other.sums[name] for name, total in self.sums.items()}
        return _ColumnTally(self.rows, sums, levels)


def _tally_pass(rows: pd.DataFrame, columns: list[str], levels: dict) -> _ColumnTally:
    """One chunk's :class:`_ColumnTally` of the fitted rows' ``columns``."""
    data = with_factor_levels(rows[columns], levels)
    sums, counts = {}, {}
    for name in columns:
        column = data[name]
        if is_factor(column):
            codes, uniques = pd.factorize(column)  # in order of appearance
            tallies = np.bincount(codes[codes >= 0], minlength=len(uniques))
            counts[name] = {u: int(t) for u, t in zip(uniques, tallies, strict=True)}
        else:
            values = column.to_numpy(dtype=float, na_value=np.nan)
            sums[name] = np.array([np.nansum(values), np.sum(~np.isnan(values))])
    return _ColumnTally(data.iloc[:1], sums, counts)


def streamed_factor_levels(fit: Any, names: list[str]) -> dict[str, list[Any]]:
    """The levels of the factors among ``names`` over the rows of a fit read in chunks.

    One pass; the levels are those :func:`factor_levels` gives the column in
    memory (categories, both booleans, or the sorted values seen).  Numeric
    columns are left out.
    """
    tally: _ColumnTally = fit._margins_stream(_tally_pass, names, fit._margins_factor_levels())
    return {
        name: factor_levels(pd.Series(list(counts), dtype=tally.rows[name].dtype))
        for name, counts in tally.levels.items()
    }


def _tally_mode(column: pd.Series, counts: dict[Any, int]) -> Any:
    """The most frequent level; ties to the first category, or else the level seen first."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        counts = {level: counts.get(level, 0) for level in column.cat.categories}
    return max(counts, key=counts.__getitem__)  # the first of equal counts


def _streamed_columns(
    fit: Any, grid_type: str, values: dict[str, Any]
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Stand-in columns and typical values of the estimation rows of a fit read in chunks.

    One pass over the chunks gives each numeric column's mean and each
    factor's level counts (the mean or mode :func:`datagrid` takes).  The
    stand-in holds each column's type and levels (for checking given values).
    """
    if grid_type == "counterfactual":
        raise OrdstatsError(
            "datagrid(grid_type='counterfactual') copies every estimation row, which a fit "
            "read in chunks (files, Dask, chunksize=) does not hold in memory: average over "
            "them with the avg_ verbs (variables= sets the counterfactual values)"
        )
    functions = [name for name, v in values.items() if callable(v)]
    if functions:
        raise OrdstatsError(
            f"datagrid: {', '.join(map(repr, functions))} given as a function would read the "
            "whole column, which a fit read in chunks (files, Dask, chunksize=) does not hold "
            "in memory: give the values themselves"
        )
    columns = fit._margins_grid_columns()
    levels = fit._margins_factor_levels()
    tally: _ColumnTally = fit._margins_stream(_tally_pass, columns, levels)
    typical: dict[str, Any] = {}
    stand_in = {}
    for name in columns:
        column = tally.rows[name]
        if name in tally.levels:
            seen = list(tally.levels[name])
            typical[name] = _tally_mode(column, tally.levels[name])
        else:
            total, n = tally.sums[name]
            typical[name] = total / n if n else float("nan")
            seen = [typical[name]]
        stand_in[name] = pd.Series(seen, dtype=column.dtype)
    return pd.DataFrame(stand_in), typical
