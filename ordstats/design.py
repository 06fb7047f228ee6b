"""The formula layer: data frames and formulas in, checked arrays and names out.

This is the only module that knows about formulaic.  Every input check that can
be made before fitting happens here, so the numerical core can assume clean
arrays: finite values, positive weights, an encoded response with at least two
observed levels, and a design of full column rank.
"""

from __future__ import annotations

import difflib
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from formulaic import Formula, ModelSpec
from formulaic.errors import FormulaicError

from ordstats._linalg import weighted_gram
from ordstats._typing import CollinearAction, FloatArray, IntArray, MissingAction
from ordstats.errors import (
    CollinearityWarning,
    DataError,
    FormulaError,
    MissingDataWarning,
    PredictionError,
    SpecificationError,
    SpecificationWarning,
)
from ordstats.response import EncodedResponse, encode_response

__all__ = [
    "Design",
    "TermsDesign",
    "aliased_columns",
    "check_choice",
    "gram_with_intercept",
    "newdata_matrices",
    "design_from_arrays",
    "design_from_formula",
    "term_columns",
    "terms_for_newdata",
]

_ALIAS_TOL = 1e-7  # R's drop.coef / qr() tolerance on column norms


@dataclass(frozen=True)
class TermsDesign:
    """One design matrix (no intercept column) and how to rebuild it.

    Attributes
    ----------
    matrix : ndarray, shape (n, p)
    names : list of str
        Column names as formulaic makes them (``"temp[T.warm]"``).
    spec : formulaic.ModelSpec or None
        Rebuilds the columns for new data (None for the array interface).
    aliased : list of str
        Columns dropped because they were linear combinations of earlier ones.
    source_names : list of str
        All columns as given, before aliased ones were dropped (array interface).
    formula : str or None
        The right-hand side it was built from (formula interface).
    """

    matrix: FloatArray
    names: list[str]
    spec: ModelSpec | None = None
    aliased: list[str] = field(default_factory=list)
    source_names: list[str] = field(default_factory=list)
    formula: str | None = None

    def describe(self) -> str:
        """``"~ <formula>"`` or the column names, for reports."""
        return "~ " + (self.formula if self.formula else " + ".join(self.names))


@dataclass(frozen=True)
class Design:
    """Everything the model needs from the data, checked.

    Attributes
    ----------
    response : EncodedResponse
        Codes of the rows used.
    response_name : str
    location : TermsDesign
        The location design ``X``.
    weights, offset : ndarray, shape (n,)
    row_index : pandas.Index
        Labels of the rows used (after dropping missing values).
    n_dropped : int
        Rows dropped for missing or non-finite values or zero weight.
    formula : str or None
    offset_name : str or None
        Column that held the offset (to find it in new data).
    nominal, scale : TermsDesign or None
        Designs of the nominal (category-specific) and log-scale effects.
    """

    response: EncodedResponse
    response_name: str
    location: TermsDesign
    weights: FloatArray
    offset: FloatArray
    row_index: pd.Index
    n_dropped: int = 0
    formula: str | None = None
    offset_name: str | None = None
    nominal: TermsDesign | None = None
    scale: TermsDesign | None = None


# ---------------------------------------------------------------------------
# small checks


def gram_with_intercept(matrix: FloatArray) -> FloatArray:
    """Gram matrix of ``[1, matrix]`` without forming the augmented matrix."""
    n, p = matrix.shape
    gram = np.empty((p + 1, p + 1))
    gram[0, 0] = n
    gram[0, 1:] = gram[1:, 0] = matrix.sum(axis=0)
    gram[1:, 1:] = weighted_gram(matrix)
    return gram


def aliased_columns(gram: FloatArray, tol: float = _ALIAS_TOL) -> list[int]:
    """Return the columns that are (numerically) combinations of earlier ones.

    Columns are taken in order, as R's ``qr()`` (LINPACK ``dqrdc2``) does, so the
    later of two collinear columns is the one reported.  Column ``j`` is aliased
    when its squared residual norm after projection on the kept earlier columns,
    relative to its own squared norm, is below ``tol^2``; both come from the Gram
    matrix of unit-norm columns, ``1 - g_K' G_KK^{-1} g_K``.

    Parameters
    ----------
    gram : ndarray, shape (p, p)
        ``X'X`` of the design (see :func:`gram_with_intercept`).
    tol : float
        Relative tolerance on column norms.

    Returns
    -------
    list of int
    """
    norms = np.sqrt(np.diag(gram))
    zero = norms <= np.sqrt(np.finfo(float).tiny)
    safe = np.where(zero, 1.0, norms)
    scaled = gram / np.outer(safe, safe)
    kept: list[int] = []
    aliased: list[int] = []
    for j in range(gram.shape[0]):
        if zero[j]:
            aliased.append(j)
            continue
        if kept:
            g = scaled[kept, j]
            resid = scaled[j, j] - g @ np.linalg.solve(scaled[np.ix_(kept, kept)], g)
        else:
            resid = scaled[j, j]
        (aliased if resid < tol * tol else kept).append(j)
    return aliased


def _close_matches(name: str, choices: Sequence[str]) -> str:
    found = difflib.get_close_matches(name, [str(c) for c in choices], n=3)
    return f" Did you mean {', '.join(map(repr, found))}?" if found else ""


def _column(data: pd.DataFrame, name: str, role: str) -> pd.Series:
    if name not in data.columns:
        raise FormulaError(
            f"the {role} {name!r} is not a column of the data." + _close_matches(name, data.columns)
        )
    return data[name]


def _vector(value: Any, data: pd.DataFrame | None, n: int, role: str) -> pd.Series | None:
    """A weights/offset argument (column name or array) as a Series, or None."""
    if value is None:
        return None
    if isinstance(value, str):
        if data is None:
            raise DataError(f"{role}={value!r} names a column, but no data frame was given")
        series = _column(data, value, f"{role} column")
    else:
        arr = np.asarray(value)
        if arr.ndim != 1 or arr.shape[0] != n:
            raise DataError(f"{role} must be one value per row ({n}); got shape {arr.shape}")
        index = data.index if data is not None else pd.RangeIndex(n)
        series = pd.Series(arr, index=index)
    if not pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
        raise DataError(f"{role} must be numeric; got dtype {series.dtype}")
    return series.astype(float)


def _bad_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """Boolean frame: missing, or non-finite where numeric."""
    if len(frame.columns) and all(
        isinstance(d, np.dtype) and d.kind in "fiub" for d in frame.dtypes
    ):
        # plain numpy numbers only: one vectorised check
        values = frame.to_numpy(dtype=float)
        return pd.DataFrame(~np.isfinite(values), index=frame.index, columns=frame.columns)
    bad = frame.isna()
    for col in frame.columns:
        s = frame[col]
        if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
            bad[col] |= ~np.isfinite(s.to_numpy(dtype=float, na_value=np.nan))
    return bad


def _report_missing(bad: pd.DataFrame, missing: MissingAction) -> pd.Series:
    """Apply the missing-value policy; return the mask of rows to drop."""
    drop = bad.any(axis=1)
    report_missing_counts(int(drop.sum()), len(bad), bad.sum(), missing, stacklevel=5)
    return drop


def report_missing_counts(
    n_bad: int, n_rows: int, per_column: pd.Series, missing: MissingAction, stacklevel: int = 4
) -> None:
    """Warn (``missing="drop"``) or raise (``"raise"``) about ``n_bad`` of ``n_rows`` bad rows.

    Parameters
    ----------
    n_bad, n_rows : int
    per_column : pandas.Series
        Bad values per column.
    missing : {"drop", "raise"}
    stacklevel : int
        Of the warning.
    """
    if not n_bad:
        return
    per_col = ", ".join(f"{c!r} ({int(k)})" for c, k in per_column.items() if k)
    text = f"{n_bad} of {n_rows} rows have missing or non-finite values in {per_col}"
    if missing == "raise":
        raise DataError(text + "; drop them first or pass missing='drop'")
    warnings.warn(text + "; these rows were dropped", MissingDataWarning, stacklevel=stacklevel)


def check_choice(name: str, value: Any, choices: Sequence[str]) -> None:
    """Raise a :class:`SpecificationError` naming the allowed values of an option."""
    if value not in choices:
        raise SpecificationError(
            f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}"
        )


def _check_options(missing: Any, collinear: Any) -> None:
    check_choice("missing", missing, ("drop", "raise"))
    check_choice("collinear", collinear, ("drop", "raise"))


def _check_weights(weights: pd.Series | None, n: int) -> tuple[FloatArray, np.ndarray]:
    """Validate frequency weights; return them and the mask of zero-weight rows."""
    if weights is None:
        return np.ones(n), np.zeros(n, dtype=bool)
    w = weights.to_numpy(dtype=float)
    if np.any(w < 0):
        raise DataError(
            f"weights must be non-negative frequency weights; {int((w < 0).sum())} are negative"
        )
    if not np.any(w > 0):
        raise DataError("all weights are zero: there is nothing to fit")
    return w, w == 0


def _remove_columns(
    terms: TermsDesign, aliased: list[int], collinear: CollinearAction, reason: str, fix: str
) -> TermsDesign:
    """Drop aliased columns with a warning, or raise, per ``collinear``."""
    if not aliased:
        return terms
    names = [terms.names[j] for j in aliased]
    text = reason.format(names=", ".join(map(repr, names)))
    if collinear == "raise":
        raise SpecificationError(f"{text}; {fix} or pass collinear='drop'")
    warnings.warn(f"{text}; it was dropped (as R's clm does)", CollinearityWarning, stacklevel=5)
    keep = [j for j in range(len(terms.names)) if j not in set(aliased)]
    return replace(
        terms,
        matrix=terms.matrix[:, keep],
        names=[terms.names[j] for j in keep],
        aliased=terms.aliased + names,
    )


def _drop_aliased(
    terms: TermsDesign, collinear: CollinearAction, what: str, gram: FloatArray | None = None
) -> TermsDesign:
    """Drop columns aliased with the intercept or earlier columns (R's drop.coef).

    ``gram`` is the Gram matrix of ``[1, X]`` when the rows are not in ``terms``
    (chunked data).
    """
    if gram is None:
        gram = gram_with_intercept(terms.matrix)
    aliased = [j - 1 for j in aliased_columns(gram) if j > 0]
    reason = (f"the {what} design is rank deficient: {{names}} is a linear combination of the "
              "thresholds (intercept) or earlier columns")
    return _remove_columns(terms, aliased, collinear, reason, "remove it")


# ---------------------------------------------------------------------------
# formulas


def _split_formula(formula: str) -> tuple[str, str]:
    if not isinstance(formula, str) or "~" not in formula:
        raise FormulaError(
            f"formula must be a string like 'rating ~ temp + contact'; got {formula!r}"
        )
    lhs, rhs = formula.split("~", 1)
    lhs = lhs.strip().strip("`").strip()
    if not lhs:
        raise FormulaError(f"formula {formula!r} has no response on the left of '~'")
    return lhs, rhs.strip() or "1"


def _formulaic_error(exc: Exception, data: pd.DataFrame, rhs: str) -> FormulaError:
    text = str(exc)
    match = re.search(r"`([^`]+)` is not present in the dataset", text)
    if match:
        name = match.group(1)
        return FormulaError(
            f"the formula term {name!r} is not a column of the data."
            + _close_matches(name, data.columns)
        )
    return FormulaError(f"cannot build the design for '{rhs}': {text}")


def _check_required(rhs: str, data: pd.DataFrame, context: Any) -> None:
    try:
        required = Formula(rhs).required_variables
    except FormulaicError as exc:
        raise FormulaError(f"cannot parse the formula '{rhs}': {exc}") from exc
    known = set(map(str, data.columns)) | set(context or {})
    missing = sorted(v for v in required if v not in known)
    if missing:
        name = missing[0]
        raise FormulaError(
            f"the formula names {name!r}, which is not a column of the data."
            + _close_matches(name, data.columns)
        )


def _plain_strings(frame: pd.DataFrame) -> pd.DataFrame:
    """Convert string columns of extension types (``string[pyarrow]``, as Dask makes) to objects.

    formulaic encodes object, ``str`` and categorical columns as factors, but
    not the ``pd.NA``-valued string types.
    """
    convert = {
        col: frame[col].astype(object)
        for col in frame.columns
        if isinstance(frame[col].dtype, pd.StringDtype) and frame[col].dtype.na_value is pd.NA
    }
    return frame.assign(**convert) if convert else frame


def _materialize(rhs: str, data: pd.DataFrame, context: Any) -> pd.DataFrame:
    data = _plain_strings(data)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            return Formula(rhs).get_model_matrix(
                data, ensure_full_rank=True, na_action="ignore", context=context
            )
    except FormulaicError as exc:
        raise _formulaic_error(exc, data, rhs) from exc


def _with_intercept(rhs: str, data: pd.DataFrame, context: Any, what: str) -> tuple[str, Any]:
    """Materialise ``rhs``, re-adding the intercept that full-rank contrasts need."""
    matrix = _materialize(rhs, data, context)
    if "Intercept" not in matrix.columns:
        warnings.warn(
            f"the {what} formula removes the intercept, but the thresholds act as "
            "intercepts; it was kept so that factor contrasts match R's clm",
            SpecificationWarning,
            stacklevel=5,
        )
        rhs = f"{rhs} + 1"
        matrix = _materialize(rhs, data, context)
    return rhs, matrix


def _terms_from_matrix(matrix: pd.DataFrame) -> TermsDesign:
    cols = [c for c in matrix.columns if c != "Intercept"]
    values = np.asarray(matrix[cols], dtype=float) if cols else np.empty((len(matrix), 0))
    return TermsDesign(matrix=np.ascontiguousarray(values), names=list(cols), spec=matrix.model_spec)


def _as_frame(data: Any) -> pd.DataFrame:
    if isinstance(data, pd.DataFrame):
        return data
    try:
        return pd.DataFrame(data)
    except (TypeError, ValueError) as exc:
        raise DataError(
            f"data must be a pandas DataFrame or a mapping of columns; got {type(data).__name__}"
        ) from exc


def _side_formula(value: Any, part: str) -> str | None:
    """A one-sided formula (``"~ contact"`` or ``"contact"``) as its right-hand side."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise FormulaError(f"{part} must be a one-sided formula like '~ contact'; got {value!r}")
    text = value.strip()
    if "~" in text:
        lhs, text = text.split("~", 1)
        if lhs.strip():
            raise FormulaError(
                f"the {part} formula {value!r} must be one-sided (no response): '~ {text.strip()}'"
            )
    return text.strip() or "1"


def _drop_nominal_aliases(
    location: TermsDesign, nominal: TermsDesign, collinear: CollinearAction
) -> TermsDesign:
    """Drop location columns that a nominal effect already contains.

    A nominal effect ``w'gamma_j`` includes the location shift ``gamma_j = c`` for
    all ``j``, so a location column in the span of ``[1, W]`` is not identified.
    """
    if not location.names or not nominal.names:
        return location
    combined = np.column_stack([nominal.matrix, location.matrix])
    r = nominal.matrix.shape[1]
    aliased = [j - 1 - r for j in aliased_columns(gram_with_intercept(combined)) if j > r]
    reason = ("{names} in the location formula is also a nominal effect, which already "
              "contains its location shift")
    return _remove_columns(location, aliased, collinear, reason, "remove it from one formula")


def design_from_formula(
    formula: str,
    data: Any,
    *,
    nominal: str | None = None,
    scale: str | None = None,
    weights: Any = None,
    offset: Any = None,
    levels: Sequence[Any] | None = None,
    missing: MissingAction = "drop",
    collinear: CollinearAction = "drop",
    many_levels: bool = False,
    context: Any = None,
) -> Design:
    """Build a checked :class:`Design` from an R-style formula and a data frame.

    Parameters
    ----------
    formula : str
        ``"response ~ terms"``; the response must be a column of ``data``.
    data : pandas.DataFrame or mapping of columns
    nominal, scale : str, optional
        One-sided formulas (``"~ contact"``) of the nominal (category-specific)
        and log-scale effects.
    weights, offset : str or array-like, optional
        Column names or one value per row.
    levels : sequence, optional
        Order of the response levels (required for unordered labels).
    missing : {"drop", "raise"}
        Rows with missing or non-finite values in used columns are dropped with a
        warning, or raise.
    collinear : {"drop", "raise"}
        Aliased design columns are dropped with a warning, or raise.
    many_levels : bool
        Allow more than 50 response levels.
    context : mapping, optional
        Names available to formula expressions (formulaic's evaluation context).

    Returns
    -------
    Design
    """
    _check_options(missing, collinear)
    frame = _as_frame(data)
    response_name, rhs = _split_formula(formula)
    _column(frame, response_name, "response")
    sides = {"location": rhs, "nominal": _side_formula(nominal, "nominal"),
             "scale": _side_formula(scale, "scale")}
    sides = {part: text for part, text in sides.items() if text is not None}
    used = [response_name]
    for text in sides.values():
        _check_required(text, frame, context)
        used += sorted(v for v in Formula(text).required_variables if v in frame.columns)
    w_series = _vector(weights, frame, len(frame), "weights")
    o_series = _vector(offset, frame, len(frame), "offset")
    bad = _bad_rows(frame[list(dict.fromkeys(used))])
    for role, series in (("weights", w_series), ("offset", o_series)):
        if series is not None:
            bad[role] = ~np.isfinite(series.to_numpy(dtype=float, na_value=np.nan))
    matrices = {}
    for part, text in sides.items():
        sides[part], matrices[part] = _with_intercept(text, frame, context, part)
        values = matrices[part].drop(columns="Intercept").to_numpy(dtype=float, na_value=np.nan)
        label = "(formula terms)" if part == "location" else f"({part} terms)"
        bad[label] = ~np.isfinite(values).all(axis=1)
    drop = _report_missing(bad, missing).to_numpy()
    w, zero_w = _check_weights(w_series[~drop] if w_series is not None else None, int((~drop).sum()))
    keep_rows = np.flatnonzero(~drop)[~zero_w]
    clean = frame.iloc[keep_rows]
    if len(keep_rows) < len(frame):
        # re-materialise so stateful transforms and factor levels see only used rows
        matrices = {part: _materialize(sides[part], clean, context) for part in sides}
    terms = {
        part: _drop_aliased(
            replace(_terms_from_matrix(matrix), formula=sides[part]), collinear, part
        )
        for part, matrix in matrices.items()
    }
    if "nominal" in terms:
        terms["location"] = _drop_nominal_aliases(terms["location"], terms["nominal"], collinear)
    response = encode_response(
        clean[response_name], name=response_name, levels=levels, many_levels=many_levels
    )
    return Design(
        response=response,
        response_name=response_name,
        location=terms["location"],
        weights=w[~zero_w],
        offset=(
            o_series.to_numpy(dtype=float)[keep_rows]
            if o_series is not None
            else np.zeros(len(keep_rows))
        ),
        row_index=clean.index,
        n_dropped=len(frame) - len(keep_rows),
        formula=f"{response_name} ~ {sides['location']}",
        offset_name=offset if isinstance(offset, str) else None,
        nominal=terms.get("nominal"),
        scale=terms.get("scale"),
    )


# ---------------------------------------------------------------------------
# formulas for data read in chunks


def formula_variables(formula: str) -> tuple[str, set[str]]:
    """Return the response name and every name the right-hand side of ``formula`` may use.

    formulaic's ``required_variables`` misses the arguments of stateful
    transforms, so every identifier of the formula is included as well.
    """
    lhs, rhs = _split_formula(formula)
    try:
        required = set(Formula(rhs).required_variables)
    except FormulaicError as exc:
        raise FormulaError(f"cannot parse the formula '{rhs}': {exc}") from exc
    names = set(re.findall(r"`([^`]+)`", rhs))
    names |= set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", re.sub(r"`[^`]+`", " ", rhs)))
    return lhs, required | names


def categorical_variables(formula: str, sample: pd.DataFrame, context: Any) -> set[str]:
    """Columns of ``sample`` that ``formula`` encodes as factors (whose levels must be fixed)."""
    _, rhs = _split_formula(formula)
    _check_required(rhs, sample, context)
    spec = _materialize(rhs, sample, context).model_spec
    found: set[str] = set()
    for expr, (kind, _state) in spec.encoder_state.items():
        if str(getattr(kind, "value", kind)) == "categorical":
            found |= set(Formula(expr).required_variables) & set(map(str, sample.columns))
    return found


def fixed_level_terms(
    formula: str, prototype: pd.DataFrame, context: Any
) -> tuple[str, TermsDesign]:
    """Build the location terms of ``formula`` with factor levels fixed by ``prototype``.

    ``prototype`` holds every factor as a Categorical with its final levels, so
    chunks that lack some level still get every column, and a chunk with an
    unknown level is refused (:func:`terms_for_newdata`).

    Returns
    -------
    formula : str
        ``"response ~ rhs"`` as fitted (with the intercept re-added if removed).
    terms : TermsDesign
        Its ``matrix`` is the prototype's, not data.

    Raises
    ------
    SpecificationError
        For stateful transforms (``center``, ``scale``, ``poly``, splines, ...),
        which would learn their state from one chunk instead of all rows.
    """
    lhs, rhs = _split_formula(formula)
    rhs, matrix = _with_intercept(rhs, prototype, context, "location")
    terms = _terms_from_matrix(matrix)
    if terms.spec is not None and terms.spec.transform_state:
        names = ", ".join(map(repr, terms.spec.transform_state))
        raise SpecificationError(
            f"the formula uses stateful transforms ({names}) that learn from all rows at "
            "once; with data read in chunks, compute these columns beforehand"
        )
    return f"{lhs} ~ {rhs}", terms


def drop_aliased_by_gram(
    terms: TermsDesign, gram: FloatArray, collinear: CollinearAction
) -> TermsDesign:
    """Drop aliased columns of chunked data given the Gram matrix of ``[1, X]``."""
    return _drop_aliased(terms, collinear, "location", gram=gram)


def rows_to_drop(
    frame: pd.DataFrame, columns: Sequence[str], weights: str | None, offset: str | None
) -> pd.DataFrame:
    """Missing or non-finite values per row in the raw columns, weights and offset."""
    bad = _bad_rows(frame[list(dict.fromkeys(columns))])
    for role, name in (("weights", weights), ("offset", offset)):
        if name is not None:
            series = _vector(name, frame, len(frame), role)
            assert series is not None
            bad[role] = ~np.isfinite(series.to_numpy(dtype=float, na_value=np.nan))
    return bad


def chunk_weights(frame: pd.DataFrame, name: str | None) -> FloatArray:
    """Frequency weights of a chunk (ones without a weights column); checked."""
    if name is None:
        return np.ones(len(frame))
    series = _vector(name, frame, len(frame), "weights")
    assert series is not None
    w = series.to_numpy(dtype=float, na_value=np.nan)
    if np.any(w < 0):
        raise DataError(
            f"weights must be non-negative frequency weights; {int((w < 0).sum())} are negative"
        )
    return w


# ---------------------------------------------------------------------------
# arrays


def _exog_matrix(exog: Any, n: int) -> tuple[FloatArray, list[str]]:
    """Exogenous regressors as a C-ordered float matrix with column names."""
    if exog is None:
        return np.empty((n, 0)), []
    if isinstance(exog, pd.Series):
        exog = exog.to_frame(name=exog.name if exog.name is not None else "x1")
    if isinstance(exog, pd.DataFrame):
        non_numeric = [
            str(c)
            for c in exog.columns
            if not pd.api.types.is_numeric_dtype(exog[c]) or pd.api.types.is_bool_dtype(exog[c])
        ]
        names = [str(c) for c in exog.columns]
        values = exog.to_numpy(dtype=float, na_value=np.nan) if not non_numeric else None
    else:
        arr = np.asarray(exog)
        arr = arr[:, None] if arr.ndim == 1 else arr
        if arr.ndim != 2:
            raise DataError(f"exog must be 1- or 2-dimensional; got shape {arr.shape}")
        names = [f"x{j + 1}" for j in range(arr.shape[1])]
        non_numeric = names if arr.dtype.kind not in "iuf" else []
        values = arr if not non_numeric else None
    if non_numeric or values is None:
        raise DataError(
            f"exog columns {', '.join(map(repr, non_numeric))} are not numeric; encode them "
            "first or use OrdinalModel.from_formula, which builds factor contrasts"
        )
    if values.shape[0] != n:
        raise DataError(f"endog has {n} rows but exog has {values.shape[0]}")
    return np.ascontiguousarray(values, dtype=float), names


def _bad_array_rows(
    y: pd.Series, name: str, matrices: list[tuple[FloatArray, list[str]]]
) -> pd.DataFrame:
    """Missing response or non-finite regressor values, per column (only bad columns)."""
    bad = {name: y.isna().to_numpy()}
    for X, names in matrices:
        nonfinite = ~np.isfinite(X)
        for j in np.flatnonzero(nonfinite.any(axis=0)):
            bad[names[j]] = nonfinite[:, j]
    return pd.DataFrame(bad, index=y.index)


def _reject_constant(terms: TermsDesign, what: str = "exog") -> None:
    spread = np.ptp(terms.matrix, axis=0) if terms.matrix.shape[0] else np.zeros(0)
    constant = [name for name, s in zip(terms.names, spread, strict=True) if s == 0]
    if constant:
        raise SpecificationError(
            f"{what} column(s) {', '.join(map(repr, constant))} are constant. The thresholds "
            "(and the unit scale) already act as intercepts, so a constant column is not "
            "identified: remove it (no add_constant is needed for ordinal models)"
        )


def _array_terms(
    matrix: FloatArray, names: list[str], keep_rows: IntArray, n: int, what: str,
    collinear: CollinearAction,
) -> TermsDesign:
    terms = TermsDesign(
        matrix=matrix if len(keep_rows) == n else matrix[keep_rows],
        names=names,
        source_names=names,
    )
    _reject_constant(terms, what)
    return _drop_aliased(terms, collinear, what)


def design_from_arrays(
    endog: Any,
    exog: Any = None,
    *,
    nominal: Any = None,
    scale: Any = None,
    weights: Any = None,
    offset: Any = None,
    levels: Sequence[Any] | None = None,
    missing: MissingAction = "drop",
    collinear: CollinearAction = "drop",
    many_levels: bool = False,
) -> Design:
    """Build a checked :class:`Design` from a response and a regressor matrix.

    Parameters
    ----------
    endog : array-like or pandas.Series
        The ordinal response (see :func:`ordstats.response.encode_response`).
    exog : array-like or pandas.DataFrame, optional
        Numeric regressors without a constant column; ``None`` fits thresholds only.
    nominal, scale : array-like or pandas.DataFrame, optional
        Numeric regressors of nominal (category-specific) and log-scale effects.
    weights, offset : array-like, optional
    levels, missing, collinear, many_levels
        As in :func:`design_from_formula`.

    Returns
    -------
    Design
    """
    _check_options(missing, collinear)
    if isinstance(endog, pd.Series):
        y = endog
    elif isinstance(endog, pd.Categorical):
        y = pd.Series(endog)
    else:
        values = np.asarray(endog)
        if values.ndim != 1:
            raise DataError(f"endog must be one-dimensional; got shape {values.shape}")
        y = pd.Series(values)
    name = str(y.name) if y.name is not None else "y"
    n = len(y)
    X, names = _exog_matrix(exog, n)
    extra = {part: _exog_matrix(value, n) for part, value in (("nominal", nominal),
                                                              ("scale", scale))
             if value is not None}
    w_series = _vector(weights, None, n, "weights")
    o_series = _vector(offset, None, n, "offset")
    bad = _bad_array_rows(y, name, [(X, names), *extra.values()])
    for role, series in (("weights", w_series), ("offset", o_series)):
        if series is not None:
            bad[role] = ~np.isfinite(series.to_numpy(dtype=float))
    drop = _report_missing(bad, missing).to_numpy()
    w, zero_w = _check_weights(w_series[~drop] if w_series is not None else None, int((~drop).sum()))
    keep_rows = np.flatnonzero(~drop)[~zero_w]
    terms = {
        part: _array_terms(matrix, cols, keep_rows, n, part, collinear)
        for part, (matrix, cols) in {"exog": (X, names), **extra}.items()
    }
    if "nominal" in terms:
        terms["exog"] = _drop_nominal_aliases(terms["exog"], terms["nominal"], collinear)
    return Design(
        response=encode_response(
            y.iloc[keep_rows], name=name, levels=levels, many_levels=many_levels
        ),
        response_name=name,
        location=terms["exog"],
        weights=w[~zero_w],
        offset=(
            o_series.to_numpy(dtype=float)[keep_rows]
            if o_series is not None
            else np.zeros(len(keep_rows))
        ),
        row_index=y.index[keep_rows],
        n_dropped=n - len(keep_rows),
        nominal=terms.get("nominal"),
        scale=terms.get("scale"),
    )


# ---------------------------------------------------------------------------
# new data


def _unseen_levels_error(caught: list[warnings.WarningMessage]) -> PredictionError | None:
    for item in caught:
        if type(item.message).__name__ == "DataMismatchWarning":
            text = str(item.message)
            match = re.search(r"\{(.*?)\}", text)
            levels = match.group(1) if match else text
            return PredictionError(
                f"newdata has factor level(s) {levels} that the model was not fitted on; "
                "their effects are unknown. Remove those rows or refit with data that "
                "contains the level"
            )
    return None


def _unseen_column_levels(spec: ModelSpec, frame: pd.DataFrame) -> PredictionError | None:
    """Levels of factor columns that ``spec`` does not know, checked directly."""
    for expr, (kind, state) in spec.encoder_state.items():
        if str(getattr(kind, "value", kind)) != "categorical" or expr not in frame.columns:
            continue
        values = frame[expr]
        unseen = pd.unique(values[values.notna() & ~values.isin(state.get("categories", []))])
        if len(unseen):
            return PredictionError(
                f"newdata has factor level(s) {', '.join(map(repr, unseen[:5]))} that the model "
                "was not fitted on; their effects are unknown. Remove those rows or refit with "
                "data that contains the level"
            )
    return None


def _plain_numeric_columns(terms: TermsDesign, frame: pd.DataFrame) -> bool:
    """Whether every design column is a numeric column of ``frame`` used as is."""
    state = terms.spec.encoder_state if terms.spec is not None else {}
    return bool(terms.names) and all(
        name in state
        and str(getattr(state[name][0], "value", state[name][0])) == "numerical"
        and name in frame.columns
        and isinstance(frame[name].dtype, np.dtype)
        and frame[name].dtype.kind in "fiub"
        for name in terms.names
    )


def terms_for_newdata(
    terms: TermsDesign, newdata: Any, context: Any = None, *, thread_safe: bool = False
) -> FloatArray:
    """Rebuild a fitted design's columns for new data.

    Parameters
    ----------
    terms : TermsDesign
        A fitted design (formula or array interface).
    newdata : pandas.DataFrame, mapping or array-like
    context : mapping, optional
        Evaluation context for formula expressions.
    thread_safe : bool
        Check the levels of factor columns directly instead of catching
        formulaic's warnings (``warnings.catch_warnings`` is not thread-safe;
        chunks may be built in worker threads).  Unseen levels of factor
        *expressions* such as ``C(x)`` then only warn.

    Returns
    -------
    ndarray, shape (m, p)
        Rows with missing values are NaN.

    Raises
    ------
    PredictionError
        Unseen factor levels, missing columns or a wrong number of columns.
    """
    if terms.spec is None:
        return _array_newdata(terms, newdata)
    frame = newdata if isinstance(newdata, pd.DataFrame) else pd.DataFrame(newdata)
    needed = sorted(v for v in terms.spec.required_variables if v not in set(context or {}))
    absent = [v for v in needed if v not in frame.columns]
    if absent:
        raise PredictionError(
            f"newdata lacks the column(s) {', '.join(map(repr, absent))} used by the model"
        )
    # missing values are not levels: build complete rows only, the others are NaN
    complete = ~frame[needed].isna().any(axis=1).to_numpy() if needed else np.ones(len(frame), bool)
    out = np.full((len(frame), len(terms.names)), np.nan)
    if not terms.names or not complete.any():
        return out
    rows = _plain_strings(frame if complete.all() else frame.loc[complete])
    if _plain_numeric_columns(terms, rows):
        out[complete] = rows[terms.names].to_numpy(dtype=float)
        return out
    if thread_safe:
        error = _unseen_column_levels(terms.spec, rows)
        if error is not None:
            raise error
        try:
            matrix = terms.spec.get_model_matrix(rows, na_action="ignore", context=context)
        except FormulaicError as exc:
            raise PredictionError(f"cannot build the design for newdata: {exc}") from exc
        out[complete] = np.asarray(matrix[terms.names], dtype=float)
        return out
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            matrix = terms.spec.get_model_matrix(rows, na_action="ignore", context=context)
        except FormulaicError as exc:
            raise PredictionError(f"cannot build the design for newdata: {exc}") from exc
    error = _unseen_levels_error(caught)
    if error is not None:
        raise error
    out[complete] = np.asarray(matrix[terms.names], dtype=float)
    return out


def newdata_matrices(
    design: Design, newdata: Any, context: Any = None
) -> tuple[FloatArray, FloatArray, FloatArray, pd.Index]:
    """Location, nominal and scale designs of new data (NaN rows where values are missing).

    Warns once, naming the rows, when some rows have missing values.

    Returns
    -------
    X, W, Z : ndarray
        ``W`` and ``Z`` have no columns when the model has no such effects.
    index : pandas.Index
    """
    X = terms_for_newdata(design.location, newdata, context)
    empty = np.empty((len(X), 0))
    W = terms_for_newdata(design.nominal, newdata, context) if design.nominal else empty
    Z = terms_for_newdata(design.scale, newdata, context) if design.scale else empty
    index = newdata.index if isinstance(newdata, pd.DataFrame) else pd.RangeIndex(len(X))
    missing = np.flatnonzero(~np.isfinite(np.column_stack([X, W, Z])).all(axis=1))
    if missing.size:
        shown = ", ".join(map(str, list(index[missing[:5]]))) + (", ..." if missing.size > 5 else "")
        warnings.warn(
            f"{missing.size} row(s) of newdata ({shown}) have missing or non-finite predictor "
            "values; their predictions are NaN",
            MissingDataWarning,
            stacklevel=4,
        )
    return X, W, Z, index


def _array_newdata(terms: TermsDesign, newdata: Any) -> FloatArray:
    all_names = terms.source_names
    if isinstance(newdata, pd.DataFrame) and set(terms.names) <= set(map(str, newdata.columns)):
        return newdata[terms.names].to_numpy(dtype=float)
    arr = np.asarray(newdata, dtype=float)
    arr = arr[:, None] if arr.ndim == 1 else arr
    if arr.ndim != 2 or arr.shape[1] != len(all_names):
        raise PredictionError(
            f"newdata must have the {len(all_names)} exog columns the model was given "
            f"({', '.join(all_names)}); got shape {arr.shape}"
        )
    order = {name: j for j, name in enumerate(all_names)}
    return arr[:, [order[name] for name in terms.names]]


def term_columns(terms: TermsDesign) -> dict[str, list[str]]:
    """Return the design columns of each formula term (one per column for arrays).

    Parameters
    ----------
    terms : TermsDesign

    Returns
    -------
    dict
        Term label (``"Infl"``, ``"temp:contact"``) to the names of its kept
        columns, in design order; terms whose columns were all dropped as
        aliased are left out.
    """
    if terms.spec is None:
        return {name: [name] for name in terms.names}
    kept = set(terms.names)
    grouped: dict[str, list[str]] = {}
    for term, indices in terms.spec.term_indices.items():
        columns = [terms.spec.column_names[i] for i in indices]
        columns = [c for c in columns if c in kept]
        if columns:
            grouped[str(term)] = columns
    return grouped
