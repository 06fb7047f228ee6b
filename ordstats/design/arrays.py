"""The array interface: a response and regressor matrices in, a checked Design out."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from ordstats._typing import CollinearAction, FloatArray, IntArray
from ordstats.core.linalg import ColumnMoments
from ordstats.design.censored import Censored, check_censored_options, encode_censored
from ordstats.design.core import (
    DEFAULT_DESIGN_OPTIONS,
    ColumnSummary,
    Design,
    DesignOptions,
    TermsDesign,
    _bad_rows,
    _check_options,
    _drop_aliased,
    _drop_nominal_aliases,
    _vector,
    aliasing_gram,
    align_to_index,
    column_summary,
    missing_vector_values,
    refuse_repeated_columns,
    rows_to_keep,
    sampled_full_rank,
    unusable_dtype,
)
from ordstats.design.response import encode_response
from ordstats.errors import (
    DataError,
    SpecificationError,
)

# ---------------------------------------------------------------------------
# arrays


def _exog_matrix(exog: Any, n: int) -> tuple[FloatArray, list[str]]:
    """Exogenous regressors as a C-ordered float matrix with column names."""
    if exog is None:
        return np.empty((n, 0)), []
    if isinstance(exog, pd.Series):
        exog = exog.to_frame(name=exog.name if exog.name is not None else "x1")
    if isinstance(exog, pd.DataFrame):
        refuse_repeated_columns(exog.columns, map(str, exog.columns), what="exog")
        for column in exog.columns:
            reason = unusable_dtype(str(column), exog[column].dtype)
            if reason is not None:
                raise DataError(reason.replace("data[", "exog["))
        # booleans (pandas' get_dummies) are indicators: 0 and 1, as numpy reads them
        non_numeric = [
            str(c)
            for c in exog.columns
            if not (pd.api.types.is_numeric_dtype(exog[c]) or pd.api.types.is_bool_dtype(exog[c]))
        ]
        names = [str(c) for c in exog.columns]
        values = exog.to_numpy(dtype=float, na_value=np.nan) if not non_numeric else None
    else:
        try:
            arr = np.asarray(exog)
        except ValueError as exc:  # rows of different lengths
            raise DataError(
                f"exog must be a table of numbers with one row per observation and the same "
                f"number of columns in every row ({exc})"
            ) from exc
        arr = arr[:, None] if arr.ndim == 1 else arr
        if arr.ndim != 2:
            raise DataError(f"exog must be 1- or 2-dimensional; got shape {arr.shape}")
        names = [f"x{j + 1}" for j in range(arr.shape[1])]
        non_numeric = names if arr.dtype.kind not in "biuf" else []
        values = arr if not non_numeric else None
    if non_numeric or values is None:
        raise DataError(
            f"exog columns {', '.join(map(repr, non_numeric))} are not numeric; encode them "
            "first or use OrdinalModel.from_formula, which builds factor contrasts"
        )
    if values.shape[0] != n:
        raise DataError(f"endog has {n} rows but exog has {values.shape[0]}")
    return np.ascontiguousarray(values, dtype=float), names


def _response_series(endog: Any) -> pd.Series:
    """A one-dimensional response that is not pandas, as a Series that keeps every label.

    numpy turns a list (or tuple) of Python integers beyond ``int64`` that are
    not all ``uint64`` (``[0, 2**63 + 1, 2**63 + 5]``) into floats, where labels
    closer than the floats' spacing (2048 there) merge; such a list is kept as
    integers (pandas' ``uint64``, or Python ints).  Arrays of other libraries
    (pyarrow, Dask) are read through numpy as they are.
    """
    values = np.asarray(endog)
    if values.ndim == 0:
        raise DataError(
            "endog must hold one response value per row (a 1-d array, list or Series); got "
            f"{type(endog).__name__}"
        )
    if values.ndim != 1:
        raise DataError(f"endog must be one-dimensional; got shape {values.shape}")
    if values.dtype.kind == "f" and isinstance(endog, (list, tuple)):
        exact = pd.Series(list(endog))
        if exact.dtype.kind in "iuO":
            return exact
    return pd.Series(values)


def _bad_array_rows(
    y: pd.Series,
    name: str,
    matrices: list[tuple[FloatArray, list[str], ColumnSummary]],
    vectors: dict[str, pd.Series | None],
) -> pd.DataFrame:
    """Missing response, non-finite regressor/weight/offset values (only bad columns).

    Only the columns whose :class:`ColumnSummary` extremes are not finite are
    checked value by value.
    """
    bad = {name: _bad_rows(y.to_frame(name))[name].to_numpy()}  # as from_formula: NaN, inf
    for X, names, summary in matrices:
        for j in np.flatnonzero(~summary.finite):
            bad[names[j]] = ~np.isfinite(X[:, j])
    for role, series in vectors.items():
        if series is not None:
            nonfinite = missing_vector_values(role, series)
            if nonfinite.any():
                bad[role] = nonfinite
    return pd.DataFrame(bad, index=y.index)


def _reject_constant(terms: TermsDesign, moments: ColumnMoments, what: str = "exog") -> None:
    # a constant column has a centred norm of exactly zero (aliasing_gram): only
    # those candidates are checked value by value
    if terms.matrix.shape[0] == 0:  # no rows: reported where the rows are counted
        return
    candidates = np.flatnonzero(moments.sd == 0)
    spread = np.ptp(terms.matrix[:, candidates], axis=0)
    constant = [terms.names[j] for k, j in enumerate(candidates) if spread[k] == 0]
    if constant:
        raise SpecificationError(
            f"{what} column(s) {', '.join(map(repr, constant))} are constant. The thresholds "
            "(and the unit scale) already act as intercepts, so a constant column is not "
            "identified: remove it (no add_constant is needed for ordinal models)"
        )


def _array_terms(
    matrix: FloatArray,
    names: list[str],
    summary: ColumnSummary,
    keep_rows: IntArray,
    n: int,
    what: str,
    collinear: CollinearAction,
) -> TermsDesign:
    every_row = len(keep_rows) == n
    terms = TermsDesign(
        matrix=matrix if every_row else matrix[keep_rows],
        names=names,
        source_names=names,
    )
    known = summary if every_row else None
    proven = sampled_full_rank(terms.matrix, known)
    if proven is not None:  # no column constant or aliased
        return replace(terms, moments=proven)
    gram, moments = aliasing_gram(terms.matrix, known)
    _reject_constant(terms, moments, what)
    return _drop_aliased(terms, collinear, what, gram=gram, moments=moments)


def design_from_arrays(
    endog: Any,
    exog: Any = None,
    *,
    nominal: Any = None,
    scale: Any = None,
    weights: Any = None,
    offset: Any = None,
    options: DesignOptions = DEFAULT_DESIGN_OPTIONS,
) -> Design:
    """Build a checked :class:`Design` from a response and a regressor matrix.

    Parameters
    ----------
    endog : array-like or pandas.Series
        The ordinal response (see :func:`ordstats.design.response.encode_response`).
    exog : array-like or pandas.DataFrame, optional
        Numeric regressors without a constant column; ``None`` fits thresholds only.
    nominal, scale : array-like or pandas.DataFrame, optional
        Numeric regressors of nominal (category-specific) and log-scale effects.
    weights, offset : array-like, optional
    options : DesignOptions
        Response levels, missing-value and aliasing policies (see
        :class:`~ordstats.design.core.DesignOptions`).

    Returns
    -------
    Design
    """
    levels, missing, collinear = options.levels, options.missing, options.collinear
    many_levels = options.many_levels
    _check_options(missing, collinear)
    censored = endog if isinstance(endog, Censored) else None
    if censored is not None:  # its row positions stand in for the response
        check_censored_options(levels)
        y = censored.positions()
    elif isinstance(endog, pd.Series):
        y = endog
    elif isinstance(endog, pd.Categorical):
        y = pd.Series(endog)
    else:
        y = _response_series(endog)
    name = str(y.name) if y.name is not None else "y"
    reason = unusable_dtype(name, y.dtype)  # dates, periods, complex: refused as from_formula does
    if reason is not None:
        raise DataError(reason.replace(f"data[{name!r}]", "endog"))
    others = {
        "exog": exog,
        "nominal": nominal,
        "scale": scale,
        "weights": weights,
        "offset": offset,
    }
    if not (isinstance(endog, pd.Series) or (censored is not None and censored.labelled)):
        # a numpy response takes the labels of the first pandas input
        first = next((v for v in others.values() if isinstance(v, (pd.Series, pd.DataFrame))), None)
        if first is not None and len(first) == len(y):
            y.index = first.index
    labelled = isinstance(endog, pd.Series) or (censored is not None and censored.labelled)
    reference = f"endog {name!r}" if labelled else "the first pandas input"
    exog, nominal, scale, weights, offset = (
        align_to_index(value, y.index, role, reference) for role, value in others.items()
    )
    n = len(y)
    # each matrix is read once for its extremes and sums: the finiteness check
    # and the aliasing check start from them
    matrices = {
        part: (matrix, cols, column_summary(matrix))
        for part, (matrix, cols) in {
            "exog": _exog_matrix(exog, n),
            **{
                part: _exog_matrix(value, n)
                for part, value in (("nominal", nominal), ("scale", scale))
                if value is not None
            },
        }.items()
    }
    w_series = _vector(weights, None, n, "weights")
    o_series = _vector(offset, None, n, "offset")
    bad = _bad_array_rows(
        y, name, list(matrices.values()), {"weights": w_series, "offset": o_series}
    )
    keep_rows, w, offsets = rows_to_keep(bad, missing, w_series, o_series)
    # the response first: with one level or one row every column is also constant
    if censored is not None:
        low, high = censored.take(y.iloc[keep_rows])
        response = encode_censored(low, high, name=name, many_levels=many_levels, weights=w)
    else:
        response = encode_response(
            y.iloc[keep_rows], name=name, levels=levels, many_levels=many_levels
        )
    terms = {
        part: _array_terms(matrix, cols, summary, keep_rows, n, part, collinear)
        for part, (matrix, cols, summary) in matrices.items()
    }
    if "nominal" in terms:
        terms["exog"] = _drop_nominal_aliases(terms["exog"], terms["nominal"], collinear)
    return Design(
        response=response,
        response_name=name,
        location=terms["exog"],
        weights=w,
        offset=offsets,
        row_index=y.index[keep_rows],
        n_dropped=n - len(keep_rows),
        row_positions=np.asarray(keep_rows, dtype=np.intp),
        nominal=terms.get("nominal"),
        scale=terms.get("scale"),
    )
