"""Design matrices of new data for prediction, built from a fitted design."""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
from formulaic import ModelSpec
from formulaic.errors import FormulaicError
from scipy import linalg

from ordstats._typing import FloatArray
from ordstats.design.core import (
    Design,
    TermsDesign,
    _bad_rows,
    align_to_index,
    complex_values_message,
    refuse_repeated_columns,
    unusable_dtype,
    with_text_column_names,
)
from ordstats.design.formula import (
    _context_value,
    _plain_strings,
    column_labels,
    design_columns,
    is_row_data,
    spec_variables,
    term_label,
)
from ordstats.design.monotonic import FORMULA_TRANSFORMS, formula_context
from ordstats.design.r_functions import R_FUNCTIONS, evaluate_offset, is_offset
from ordstats.errors import (
    FormulaError,
    MissingDataWarning,
    OrdstatsWarning,
    PredictionError,
    PredictionWarning,
    not_numbers,
    user_stacklevel,
)

# ---------------------------------------------------------------------------
# new data


def _unseen_levels_error(caught: list[warnings.WarningMessage]) -> PredictionError | None:
    for item in caught:
        if type(item.message).__name__ == "DataMismatchWarning":
            text = str(item.message)
            match = re.search(r"\{(.*?)\}", text)
            levels = match.group(1) if match else text
            if match and set(levels.split(", ")) <= {"nan", "None", "<NA>"}:
                continue  # a factor an expression left missing (cut outside its breaks): NaN
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


def _is_text_like(dtype: Any) -> bool:
    """Whether formulaic encodes a column of this dtype as a factor."""
    return isinstance(dtype, (pd.CategoricalDtype, pd.StringDtype)) or pd.api.types.is_object_dtype(
        dtype
    )


def _as_fitted_kinds(spec: ModelSpec, frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with each column the formula reads in the kind the fit read it in.

    formulaic picks a column's kind (factor or number) from its dtype, so a
    factor given as numbers (``judge`` 1, 2, 3 for levels ``'1'``, ``'2'``,
    ``'3'``) or numbers given as text would be encoded differently from the fit:
    silently wrong columns, or an error about generated columns.  Numbers that are
    all levels of the factor become that factor; booleans of a numeric column
    become 0/1 as at the fit; anything else is refused with what to do.
    """
    out = frame
    for expr, (kind, state) in spec.encoder_state.items():
        kind_name = str(getattr(kind, "value", kind))
        if expr not in frame.columns:
            wrapped = _wrapped_factor_column(expr)
            if kind_name == "categorical" and wrapped is not None and wrapped in frame.columns:
                _refuse_other_kind(wrapped, frame[wrapped], list(state.get("categories", [])), expr)
            continue
        values = frame[expr]
        if kind_name == "categorical" and not _is_text_like(values.dtype):
            categories = list(state.get("categories", []))
            if not values[values.notna()].isin(categories).all():
                raise _factor_kind_error(expr, values, categories)
            converted = pd.Series(pd.Categorical(values, categories=categories), index=values.index)
        elif kind_name == "numerical" and _is_text_like(values.dtype):
            raise PredictionError(
                f"newdata column {expr!r} holds text or categories ({values.dtype}), but the "
                f"model was fitted with {expr!r} as numbers; convert it first, e.g. "
                f"pd.to_numeric(newdata[{expr!r}])"
            )
        elif kind_name == "numerical" and values.dtype.kind == "b":
            converted = values.astype(float)
        elif kind_name == "categorical" and _only_unused_categories_differ(values, state):
            # a Categorical whose extra categories have no rows (an unused level the fit
            # dropped): its values are the fit's levels; pandas 3 deprecates the implicit
            # recoding formulaic would do (and warned of it once per chunk)
            categories = list(state.get("categories", []))
            recoded = pd.Categorical(
                values.astype(object), categories=categories, ordered=values.cat.ordered
            )
            converted = pd.Series(recoded, index=values.index)
        else:
            continue
        if out is frame:
            out = frame.copy(deep=False)
        out[expr] = converted
    return out


#: a factor made from one column by a call: ``C(judge, contr.sum)``, ``relevel(judge, ...)``
_FACTOR_CALL = re.compile(
    r"^\s*(?:C|relevel|ordered|factor|as\.factor|as\.ordered)\(\s*([A-Za-z_][\w.]*)\s*[,)]"
)


def _wrapped_factor_column(expr: str) -> str | None:
    """The column a factor call such as ``C(judge, contr.sum)`` reads, or None."""
    match = _FACTOR_CALL.match(expr)
    return match.group(1) if match else None


def _refuse_other_kind(column: str, values: pd.Series, categories: list[Any], expr: str) -> None:
    """Refuse numbers for a factor call fitted on text levels (or text for number levels).

    The call makes the factor from the column, so a CSV file that reads ``judge``
    as int64 would otherwise meet "level 1 was not fitted on" for a fit whose
    levels are ``'1'``, ``'2'``, ...
    """
    present = values[values.notna()]
    text_levels = all(isinstance(level, str) for level in categories)
    if _is_text_like(values.dtype) != text_levels and not present.isin(categories).all():
        raise _factor_kind_error(column, values, categories, expr)


def _factor_kind_error(
    column: str, values: pd.Series, categories: list[Any], expr: str | None = None
) -> PredictionError:
    """The error for a ``column`` of newdata of another kind than the factor's fitted levels."""
    present = values[values.notna()]
    shown = ", ".join(map(repr, categories[:5])) + (", ..." if len(categories) > 5 else "")
    if _is_text_like(values.dtype):
        converted = pd.to_numeric(present.astype(object), errors="coerce")
        fix = f"pd.to_numeric(newdata[{column!r}])"
    else:
        converted, fix = present.astype(str), f"newdata[{column!r}].astype(str)"
    used = f" (in {expr!r})" if expr is not None else ""
    return PredictionError(
        f"newdata column {column!r}{used} holds {values.dtype} values "
        f"({', '.join(map(repr, pd.unique(present)[:3].tolist()))}), but the model was "
        f"fitted with {column!r} as a factor with levels {shown}; give those levels"
        + (f", e.g. {fix}" if converted.isin(categories).all() else "")
    )


def _only_unused_categories_differ(values: pd.Series, state: Mapping[str, Any]) -> bool:
    """Whether ``values`` is a Categorical of other categories, all its values among the fit's."""
    if not isinstance(values.dtype, pd.CategoricalDtype):
        return False
    categories = list(state.get("categories", []))
    if list(values.cat.categories) == categories:
        return False
    present = values[values.notna()]
    return bool(present.astype(object).isin(categories).all())


def _context_roots(spec: ModelSpec) -> set[str]:
    """Names (roots: ``np`` of ``np.log``) the fitted formula took from the caller's context.

    ordstats' own transforms (``mo``) are in every evaluation context, not the caller's.
    """
    try:
        by_source = spec.variables_by_source
    except (AttributeError, TypeError):  # a spec without its materialisation record
        return set()
    roots = {str(getattr(v, "root", v)) for v in by_source.get("context", ())}
    return roots - set(FORMULA_TRANSFORMS)


def newdata_columns(
    terms: TermsDesign, context: Any = None, n_rows: int | None = None
) -> tuple[list[str], dict[str, Any]]:
    """The columns new data must hold for ``terms``, and the context to build them with.

    A formula reads names from the data and from its context (the caller's
    variables).  Functions and modules of the context (``np.log``, a user's
    function) are used again; per-row values it took from the context
    (``xx`` in ``"y ~ temp + xx"``, also inside ``np.log(xx)`` or
    ``xx:temp``) belonged to the fitted rows, so new data must hold them as
    columns, and they are left out of the context so that a fit-time value
    is never reused.

    Parameters
    ----------
    terms : TermsDesign
        A fitted formula design.
    context : mapping, optional
        The model's formula context.  When it records which of its names were
        per-row data (``row_names``, set at fit time), that record decides;
        otherwise :func:`is_row_data` with ``n_rows``.
    n_rows : int, optional
        Rows of the data the model was built on, when known.

    Returns
    -------
    needed : list of str
        Sorted column names.
    context : dict
        The context without the per-row names.
    """
    context = context if context is not None else {}
    recorded = getattr(context, "row_names", None)
    spec = terms.spec
    assert spec is not None
    from_rows = set()
    for name in _context_roots(spec):
        if name in R_FUNCTIONS and name not in context:
            continue  # R's function (cut, factor, ...), in every evaluation context
        if name not in context:
            from_rows.add(name)  # dropped at saving, or gone from the caller's scope
        elif recorded is not None:
            if name in recorded:
                from_rows.add(name)
        elif is_row_data(context[name], n_rows):
            from_rows.add(name)
    from_data = {v for v in spec_variables(spec) if not _context_value(context.get(v, ...))}
    usable = {k: v for k, v in context.items() if k not in from_rows}
    return sorted(from_data | from_rows), usable


def _refuse_dates(frame: pd.DataFrame, needed: list[str]) -> None:
    """A :class:`PredictionError` for columns that fits refuse too (dates, periods, complex)."""
    for name in needed:
        dtype = frame[name].dtype
        if unusable_dtype(str(name), dtype) is not None:
            what = (
                "complex numbers"
                if pd.api.types.is_complex_dtype(dtype)
                else "periods"
                if isinstance(dtype, pd.PeriodDtype)
                else "dates or durations"
            )
            raise PredictionError(
                f"newdata's column {name!r} holds {what} ({dtype}); give it as "
                "the fitted data held it (numbers or categories)"
            )


def terms_for_newdata(
    terms: TermsDesign,
    newdata: Any,
    context: Any = None,
    *,
    thread_safe: bool = False,
    n_rows: int | None = None,
) -> FloatArray:
    """Rebuild a fitted design's columns for new data.

    Parameters
    ----------
    terms : TermsDesign
        A fitted design (formula or array interface).
    newdata : pandas.DataFrame, mapping or array-like
    context : mapping, optional
        Evaluation context for formula expressions; its per-row values are
        not used (:func:`newdata_columns`): new data must hold them.
    thread_safe : bool
        Check the levels of factor columns directly instead of catching
        formulaic's warnings (``warnings.catch_warnings`` is not thread-safe;
        chunks may be built in worker threads).  Unseen levels of factor
        *expressions* such as ``C(x)`` then only warn.
    n_rows : int, optional
        Rows of the data the model was built on (see :func:`newdata_columns`).

    Returns
    -------
    ndarray, shape (m, p)
        Rows with missing values are NaN.

    Raises
    ------
    PredictionError
        Unseen factor levels, missing columns, a wrong number of columns, or
        ``newdata`` that is not a table (or, for arrays, not numbers).
    DataError
        A column the terms read that appears twice in ``newdata``.
    """
    if terms.spec is None:
        return _array_newdata(terms, newdata)
    frame = _newdata_frame(newdata)
    needed, context = newdata_columns(terms, context, n_rows)
    absent = [v for v in needed if v not in frame.columns]
    if absent:
        row = isinstance(newdata, pd.Series) and set(absent) <= set(map(str, newdata.index))
        raise PredictionError(
            f"newdata lacks the column(s) {', '.join(map(repr, absent))} used by the model; "
            + (
                "newdata is a Series, read as one column: for one row, pass "
                "pd.DataFrame([series]) (or data.iloc[[i]])"
                if row
                else "add them to newdata (predictions use the columns of newdata only, never "
                "variables of the calling scope)"
            )
        )
    refuse_repeated_columns(frame.columns, needed, what="newdata")
    _refuse_dates(frame, needed)
    # missing values are not levels: build complete rows only, the others are NaN;
    # so are levels without rows in the fit, whose effects were not estimated
    complete = ~frame[needed].isna().any(axis=1).to_numpy() if needed else np.ones(len(frame), bool)
    complete &= ~empty_level_rows(terms, frame)[0]
    out = np.full((len(frame), len(terms.names)), np.nan)
    if not terms.names or not complete.any():
        return out
    rows = _plain_strings(frame if complete.all() else frame.loc[complete])
    rows = _as_fitted_kinds(terms.spec, rows)
    if _plain_numeric_columns(terms, rows):
        out[complete] = rows[terms.names].to_numpy(dtype=float)
        return out
    if thread_safe:
        error = _unseen_column_levels(terms.spec, rows)
        if error is not None:
            raise error
        try:
            with np.errstate(all="ignore"):  # non-finite transforms are reported as missing
                matrix = terms.spec.get_model_matrix(
                    rows, na_action="ignore", context=formula_context(context, new_rows=True)
                )
        except FormulaicError as exc:
            raise PredictionError(f"cannot build the design for newdata: {exc}") from exc
        out[complete] = _named_columns(terms, matrix)
        return out
    with warnings.catch_warnings(record=True) as caught, np.errstate(all="ignore"):
        warnings.simplefilter("always")
        try:
            matrix = terms.spec.get_model_matrix(
                rows, na_action="ignore", context=formula_context(context, new_rows=True)
            )
        except FormulaicError as exc:
            raise PredictionError(f"cannot build the design for newdata: {exc}") from exc
    error = _unseen_levels_error(caught)
    if error is not None:
        raise error
    for caught_warning in caught:  # ordstats' own, such as bs() beyond its knots, are passed on
        if issubclass(caught_warning.category, OrdstatsWarning):
            warnings.warn(caught_warning.message, stacklevel=user_stacklevel())
    out[complete] = _named_columns(terms, matrix)
    return out


def _named_columns(terms: TermsDesign, matrix: Any) -> FloatArray:
    """The columns ``terms.names`` of a model matrix built from ``terms.spec``."""
    assert terms.spec is not None
    positions, names = design_columns(terms.spec)
    where = dict(zip(names, positions, strict=True))
    if isinstance(matrix, pd.DataFrame):  # a spec from before numpy output
        matrix = matrix.to_numpy(dtype=float)
    return np.asarray(matrix, dtype=float)[:, [where[name] for name in terms.names]]


def empty_level_rows(terms: TermsDesign | None, frame: Any) -> tuple[np.ndarray, list[str]]:
    """Rows of ``frame`` with factor levels that had no rows in the fit, and those levels.

    Returns
    -------
    mask : ndarray of bool
    found : list of str
        ``"'hot' of 'temp'"`` for each such level present.
    """
    if isinstance(frame, dict):
        frame = pd.DataFrame(frame)
    n = len(frame) if isinstance(frame, pd.DataFrame) else 0
    mask = np.zeros(n, dtype=bool)
    found: list[str] = []
    if terms is None or not terms.empty_levels or not isinstance(frame, pd.DataFrame):
        return mask, found
    for column, levels in terms.empty_levels.items():
        if column not in frame.columns:
            continue
        values = frame[column]
        if isinstance(values.dtype, pd.CategoricalDtype):
            values = values.astype(object)
        hit = values.isin(levels).to_numpy()
        if hit.any():
            mask |= hit
            present = [lv for lv in levels if (values == lv).any()]
            found += [f"{lv!r} of {column!r}" for lv in present]
    return mask, found


def fitted_rows(design: Design) -> int | None:
    """Rows of the data ``design`` was built on (``None`` once its rows were removed)."""
    kept = len(design.row_index)
    return kept + design.n_dropped if kept else None


def estimability(
    terms: TermsDesign | Sequence[TermsDesign | None],
    newdata: Any,
    context: Any = None,
    n_rows: int | None = None,
) -> tuple[FloatArray, FloatArray] | None:
    """What a rank-deficient fit can estimate at the rows of ``newdata`` (emmeans' check).

    A row's linear function ``z = [1, x]`` over every column of the formula,
    the aliased ones included, is estimable when it lies in the row space of
    the fitted ``[1, X]``: ``N'z = 0`` for a basis ``N`` of the combinations
    the fit cannot tell apart (R's ``estimability::nonest.basis``).  For
    several parts of the design (location, nominal, scale), the parts that
    dropped columns are put side by side: ``z`` is the concatenation of their
    rows and ``N`` block-diagonal, so a row is estimable when every part of it
    is.

    Parameters
    ----------
    terms : TermsDesign or sequence of TermsDesign
        One part of the design, or several (None entries are skipped).
    newdata, context, n_rows
        As for :func:`terms_for_newdata`.

    Returns
    -------
    (rows, basis) or None
        ``rows`` of shape ``(m, q)`` (each part's intercept, kept columns,
        aliased columns) and an orthonormal ``basis`` of shape ``(q, a)``, ``a``
        the aliased columns of all parts; None when no part dropped a column
        (or the combinations are unknown).
    """
    parts = [terms] if isinstance(terms, TermsDesign) else [t for t in terms if t is not None]
    found = [
        _part_estimability(part, newdata, context, n_rows)
        for part in parts
        if part.aliased and part.aliased_by is not None
    ]
    if not found:
        return None
    if len(found) == 1:
        return found[0]
    return np.hstack([rows for rows, _ in found]), linalg.block_diag(*(b for _, b in found))


def _part_estimability(
    terms: TermsDesign, newdata: Any, context: Any, n_rows: int | None
) -> tuple[FloatArray, FloatArray]:
    """:func:`estimability` of one part of the design that dropped columns."""
    assert terms.aliased_by is not None
    every = replace(terms, names=[*terms.names, *terms.aliased])
    full = terms_for_newdata(every, newdata, context, n_rows=n_rows)
    rows = np.column_stack([np.ones(len(full)), full])
    # column a of N: e_a on the aliased column minus its combination of [1, kept]
    null = np.vstack([-terms.aliased_by.T, np.eye(len(terms.aliased))])
    return rows, np.linalg.qr(null)[0]


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
    n_rows = fitted_rows(design)
    X = terms_for_newdata(design.location, newdata, context, n_rows=n_rows)
    empty = np.empty((len(X), 0))
    W, Z = (
        terms_for_newdata(terms, newdata, context, n_rows=n_rows) if terms else empty
        for terms in (design.nominal, design.scale)
    )
    index = newdata.index if isinstance(newdata, pd.DataFrame) else pd.RangeIndex(len(X))
    unfitted = np.zeros(len(X), dtype=bool)
    levels: list[str] = []
    for terms in (design.location, design.nominal, design.scale):
        mask, found = empty_level_rows(terms, newdata)
        if mask.size:
            unfitted |= mask
        levels += [f for f in found if f not in levels]
    if unfitted.any():
        rows = np.flatnonzero(unfitted)
        shown = ", ".join(map(str, list(index[rows[:5]]))) + (", ..." if rows.size > 5 else "")
        warnings.warn(
            f"{rows.size} row(s) of newdata ({shown}) have the factor level(s) "
            f"{', '.join(levels)}, which had no rows in the fitted data, so their effects were "
            "not estimated; their predictions are NaN",
            PredictionWarning,
            stacklevel=user_stacklevel(),
        )
    columns = [
        name
        for terms in (design.location, design.nominal, design.scale)
        if terms is not None and terms.spec is not None
        for name in newdata_columns(terms, context, n_rows)[0]
    ]
    parts = [
        (terms.names, M)
        for terms, M in zip((design.location, design.nominal, design.scale), (X, W, Z), strict=True)
        if terms is not None
    ]
    missing = missing_predictor_rows(newdata, columns, parts, index, skip=unfitted)
    nonfinite = missing | ~np.isfinite(np.column_stack([X, W, Z])).all(axis=1)
    if nonfinite.any():  # +-inf too: their probabilities are not defined
        X, W, Z = (np.where(nonfinite[:, None], np.nan, M) for M in (X, W, Z))
    return X, W, Z, index


class _MissingRows:
    """Rows of newdata found missing, by the column or design column that was missing."""

    def __init__(self, index: pd.Index) -> None:
        self.index = index
        self.by_column: dict[str, np.ndarray] = {}

    def add(self, name: str, hit: np.ndarray) -> None:
        """Record the rows ``hit`` (bool) as missing in ``name``."""
        seen = self.by_column.get(name)
        self.by_column[name] = hit.copy() if seen is None else seen | hit

    def merge(self, other: _MissingRows) -> None:
        """Add the rows that ``other`` (the same rows of newdata) found."""
        for name, hit in other.by_column.items():
            self.add(name, hit)

    def message(self, what: str) -> str | None:
        """The warning naming the rows (None if there are none)."""
        if not self.by_column:
            return None
        found = np.flatnonzero(np.logical_or.reduce(list(self.by_column.values())))
        shown = ", ".join(map(str, list(self.index[found[:5]])))
        shown += ", ..." if found.size > 5 else ""
        if what == "offset":
            return (
                f"{found.size} row(s) of newdata ({shown}) have missing or non-finite offset "
                "values; their predictions are NaN"
            )
        where = ", ".join(f"{name} ({int(hit.sum())})" for name, hit in self.by_column.items())
        return (
            f"{found.size} row(s) of newdata ({shown}) have missing or non-finite predictor "
            f"values (in {where}); their predictions are NaN"
        )


#: The missing rows found inside :func:`newdata_warned_once`, by kind (None outside it).
_COLLECTED: ContextVar[dict[str, _MissingRows] | None] = ContextVar("_COLLECTED", default=None)


@contextmanager
def newdata_warned_once() -> Iterator[None]:
    """Warn once, at the end of the block, of the rows of newdata with missing values.

    A margins verb builds the design of its rows and of their counterfactual
    copies (one per value a predictor is set to); a row with a missing value
    in a predictor that a copy does not change is missing in each of them.
    Inside the block the designs' findings are collected, and one warning
    (one more for offsets) names every row and column found.  Every design
    built inside the block must be of the same rows.
    """
    if _COLLECTED.get() is not None:  # an outer block collects them
        yield
        return
    collected: dict[str, _MissingRows] = {}
    token = _COLLECTED.set(collected)
    try:
        yield
    finally:
        _COLLECTED.reset(token)
    for what, found in collected.items():
        message = found.message(what)
        if message is not None:
            warnings.warn(message, MissingDataWarning, stacklevel=user_stacklevel())


def _report_missing(what: str, found: _MissingRows) -> None:
    """Warn of ``found`` now, or leave it to the enclosing :func:`newdata_warned_once`."""
    collected = _COLLECTED.get()
    if collected is not None and what not in collected:
        collected[what] = found
    elif collected is not None and len(collected[what].index) == len(found.index):
        collected[what].merge(found)
    else:  # outside a block, or other rows than the block's (nothing to merge with)
        message = found.message(what)
        if message is not None:
            warnings.warn(message, MissingDataWarning, stacklevel=user_stacklevel())


def missing_predictor_rows(
    newdata: Any,
    columns: Sequence[str],
    parts: Sequence[tuple[Sequence[str], FloatArray]],
    index: pd.Index,
    *,
    skip: np.ndarray | None = None,
) -> np.ndarray:
    """Rows of new data whose predictions are NaN for missing values; one warning names them.

    Parameters
    ----------
    newdata : pandas.DataFrame, mapping or array-like
    columns : sequence of str
        The columns of ``newdata`` the predictions read.
    parts : sequence of (names, ndarray)
        The design columns built from them (non-finite where a value was
        missing or a transform such as ``np.log(0)`` was not finite).
    index : pandas.Index
        The rows of ``newdata``.
    skip : ndarray of bool, optional
        Rows already reported as NaN for another reason.

    Returns
    -------
    ndarray of bool
        Rows with a missing or non-finite value in ``columns`` or ``parts``.
    """
    skip = np.zeros(len(index), dtype=bool) if skip is None else skip
    found = _MissingRows(index)
    rows = np.zeros(len(index), dtype=bool)
    if isinstance(newdata, Mapping):
        newdata = pd.DataFrame(newdata)
    used = [c for c in dict.fromkeys(columns) if c in getattr(newdata, "columns", ())]
    if used:
        bad = _bad_rows(newdata[used])
        for name in used:
            hit = bad[name].to_numpy(dtype=bool) & ~skip
            if hit.any():
                found.add(repr(name), hit)
                rows |= hit
    raw = rows.copy()
    for names, matrix in parts:
        nonfinite = ~np.isfinite(matrix)
        for j in np.flatnonzero(nonfinite.any(axis=0)):
            hit = nonfinite[:, j] & ~raw & ~skip
            if hit.any():
                found.add(repr(str(names[int(j)])), hit)
                rows |= hit
    _report_missing("predictor", found)
    return rows


def check_newdata_offset(offset: FloatArray, newdata: Any) -> FloatArray:
    """Offsets for new data with missing or non-finite values as NaN, with a warning."""
    bad = ~np.isfinite(offset)
    if not bad.any():
        return offset
    index = newdata.index if isinstance(newdata, pd.DataFrame) else pd.RangeIndex(len(offset))
    found = _MissingRows(index)
    found.add("offset", bad)
    _report_missing("offset", found)
    return np.where(bad, np.nan, offset)


def refuse_offset_without_newdata(offset: Any) -> None:
    """Raise when ``offset=`` is given for the fitted rows, which keep the model's own offset.

    Raises
    ------
    PredictionError
        If ``offset`` is not ``None``.
    """
    if offset is not None:
        raise PredictionError(
            "offset= is the offset of newdata; without newdata the fitted rows use the "
            "model's own offset. Pass the rows as newdata to predict them with another offset"
        )


def newdata_offset(
    offset: Any,
    newdata: Any,
    index: pd.Index,
    *,
    column: str | None,
    fitted_with_offset: bool,
) -> FloatArray:
    """The offset of new data: ``offset=``, else the model's offset column, else 0.

    Without either, a model fitted with an offset predicts with offset 0 and a
    :class:`~ordstats.errors.PredictionWarning` (statsmodels' ``OrderedModel``
    default).

    Parameters
    ----------
    offset : float, pandas.Series, array-like or None
        What the caller gave (:func:`given_offset`).
    newdata : pandas.DataFrame, mapping or array-like
    index : pandas.Index
        The rows of ``newdata``.
    column : str or None
        The offset column the model was fitted with, if it was given by name.
    fitted_with_offset : bool
        Whether the model has a non-zero offset.

    Returns
    -------
    ndarray, shape (len(index),)
    """
    if offset is not None:
        return given_offset(offset, newdata, index)
    if isinstance(newdata, Mapping):  # a mapping of columns holds the offset column too
        newdata = _newdata_frame(newdata)
    if (
        column is not None
        and isinstance(newdata, pd.DataFrame)
        and column not in newdata.columns
        and is_offset(column)
    ):  # R's offset(log(t)) term, evaluated on the new rows as R's predict does
        values = _offset_terms(newdata, column)
        return check_newdata_offset(values, newdata)
    if column is not None and isinstance(newdata, pd.DataFrame) and column in newdata.columns:
        values = _offset_column(newdata, column)
        return check_newdata_offset(values, newdata)
    if fitted_with_offset:
        name = f"give newdata a column {column!r} or " if column else ""
        warnings.warn(
            "the model was fitted with an offset but none was given for newdata, so the "
            f"predictions use offset 0 (as statsmodels does); {name}pass offset= "
            "(a number or one value per row) to use another",
            PredictionWarning,
            stacklevel=user_stacklevel(),
        )
    return np.zeros(len(index))


def newdata_scale_offset(design: Design, newdata: Any) -> FloatArray | None:
    """The model's scale offset (R's ``offset()`` term of the scale formula) on ``newdata``.

    Evaluated on the new rows as R's ``predict`` does; NaN (with a warning) where
    it is missing.  None for a model without one.

    Raises
    ------
    PredictionError
        ``newdata`` lacks a variable of the offset.
    """
    terms = design.scale_offset_name
    if terms is None:
        return None
    frame = _newdata_frame(newdata)
    try:
        values = evaluate_offset(terms, frame).to_numpy(dtype=float)
    except FormulaError as exc:
        raise PredictionError(
            f"newdata must hold the variables of the scale formula's offset {terms!r} ({exc})"
        ) from exc
    return check_newdata_offset(values, frame)


def _offset_terms(newdata: pd.DataFrame, terms: str) -> FloatArray:
    """The formula's offset terms evaluated on ``newdata`` (its variables must be there)."""
    try:
        return evaluate_offset(terms, newdata).to_numpy(dtype=float)
    except FormulaError as exc:
        raise PredictionError(
            f"newdata must hold the variables of the model's offset {terms!r} ({exc}); or "
            "pass offset= (a number or one value per row)"
        ) from exc


def _offset_column(newdata: pd.DataFrame, column: str) -> FloatArray:
    """The model's offset column in ``newdata`` as floats, checked as at fit (NaN: missing)."""
    refuse_repeated_columns(newdata.columns, [column], what="newdata")
    series = newdata[column]
    if series.isna().all():
        return np.full(len(series), np.nan)
    if not pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
        raise PredictionError(
            f"the offset column {column!r} of newdata must be numeric, as at fit; got dtype "
            f"{series.dtype}"
        )
    return series.to_numpy(dtype=float, na_value=np.nan)


def given_offset(offset: Any, newdata: Any, index: pd.Index) -> FloatArray:
    """The ``offset=`` given for new data, one value per row of ``index``.

    A number applies to every row.  A pandas Series is paired with the rows by
    index label, as the model's weights and offset are
    (:func:`~ordstats.design.core.align_to_index`); other array-likes pair by
    position.  Missing or non-finite values give NaN predictions, with a warning.

    Parameters
    ----------
    offset : float, pandas.Series or array-like
    newdata : pandas.DataFrame, mapping or array-like
    index : pandas.Index
        The rows of ``newdata``.

    Returns
    -------
    ndarray, shape (len(index),)

    Raises
    ------
    PredictionError
        Not numbers, or an array of another length.
    DataError
        A Series whose labels are not those of ``newdata``'s index.
    """
    n = len(index)
    offset = align_to_index(offset, index, "offset", "newdata")
    given = np.asarray(offset)
    if np.iscomplexobj(given):  # numpy would drop the imaginary part
        raise PredictionError(complex_values_message("offset", given.dtype))
    kind = not_numbers(offset)
    if kind is not None:  # numpy reads booleans as 0/1 and parses text, as the fit does not
        raise PredictionError(
            f"offset must be a number or one number per row of newdata ({n}); got {kind}"
        )
    try:
        values = np.asarray(offset, dtype=float)
    except (TypeError, ValueError):
        raise PredictionError(
            f"offset must be a number or one number per row of newdata ({n})"
        ) from None
    if values.ndim == 0:  # one offset for every row
        return np.full(n, float(values))
    values = values.reshape(-1)
    if values.shape != (n,):
        raise PredictionError(
            f"offset must be a number or one value per row of newdata ({n}); "
            f"got {values.shape[0]} values"
        )
    return check_newdata_offset(values, newdata)


def distributed_newdata_hint(newdata: Any, name: str = "newdata") -> str:
    """For a Dask or Spark DataFrame given where rows in memory are needed: what to do.

    ``name``: the argument's name.  An empty string for anything else.
    """
    module = type(newdata).__module__.split(".")[0]
    kind = {"dask": "a Dask DataFrame", "pyspark": "a Spark DataFrame"}.get(module)
    if kind is None or not hasattr(newdata, "columns"):
        return ""
    collect = f"{name}.compute()" if module == "dask" else f"{name}.toPandas()"
    return (
        f"{name} is {kind}: this method needs its rows in memory (a pandas DataFrame), so "
        f"pass {collect} if they fit; predict(newdata) scores {kind} where it is and "
        f"returns one"
    )


def _newdata_frame(newdata: Any) -> pd.DataFrame:
    """``newdata`` of a formula model as a DataFrame; a clear error if it is not a table."""
    if isinstance(newdata, pd.DataFrame):
        return with_text_column_names(newdata)
    hint = distributed_newdata_hint(newdata)
    if hint:
        raise PredictionError(hint)
    try:
        return pd.DataFrame(newdata)
    except (TypeError, ValueError) as exc:
        scalars = isinstance(newdata, Mapping) and all(np.ndim(v) == 0 for v in newdata.values())
        hint = (
            "its columns must hold one value per row: for one row, pass "
            "pd.DataFrame([{...}]) or lists of one value"
            if scalars
            else f"got {type(newdata).__name__} ({exc})"
        )
        raise PredictionError(
            f"newdata must be a pandas DataFrame or a mapping of columns; {hint}"
        ) from exc


def _not_numbers(all_names: list[str], got: str) -> PredictionError:
    """The error for array-model newdata that are not numbers (``got``: what was given)."""
    return PredictionError(
        f"newdata must be numbers: one row of the {len(all_names)} exog columns the model "
        f"was given ({', '.join(all_names)}) per prediction; got {got}"
    )


def _named_array_newdata(terms: TermsDesign, newdata: pd.DataFrame) -> FloatArray:
    """The model's columns of a DataFrame that names them (labels compared as text).

    Column labels that are not text (``pd.DataFrame(ndarray)``'s ``0``, ``1``) are
    those the model took as its names (``"0"``, ``"1"``).  A frame that holds some
    of the names but not all is refused: reading it by position would pair its
    columns with the wrong coefficients.
    """
    all_names = terms.source_names
    labels = [str(c) for c in newdata.columns]
    missing = [name for name in terms.names if name not in labels]
    if missing:
        unknown = [label for label in labels if label not in all_names]
        others = f"; its column(s) {', '.join(map(repr, unknown))} are not among them"
        raise PredictionError(
            f"newdata lacks the column(s) {', '.join(map(repr, missing))} of the exog columns "
            f"the model was given ({', '.join(all_names)}){others if unknown else ''}. Name "
            "newdata's columns as the model's, or pass an array (newdata.to_numpy()) to read "
            "its columns by position, in the model's order"
        )
    refuse_repeated_columns(newdata.columns, terms.names, what="newdata")
    frame = newdata.iloc[:, [labels.index(name) for name in terms.names]]
    frame = frame.set_axis(terms.names, axis=1)
    _refuse_dates(frame, terms.names)
    # numbers as text or categories were parsed, though the fit refuses such exog columns
    text = [name for name in terms.names if _is_text_like(frame[name].dtype)]
    if text:
        raise _not_numbers(
            all_names, f"DataFrame column(s) {', '.join(map(repr, text))} that are not numbers"
        )
    try:
        return frame.to_numpy(dtype=float, na_value=np.nan)
    except (TypeError, ValueError):
        text = [name for name in terms.names if not pd.api.types.is_numeric_dtype(frame[name])]
        raise _not_numbers(
            all_names, f"DataFrame column(s) {', '.join(map(repr, text))} that are not numbers"
        ) from None


def _warn_read_by_position(columns: pd.Index, all_names: list[str]) -> None:
    """Warn that a DataFrame naming none of the model's columns is read by position."""
    if list(columns) == list(range(len(columns))):  # pd.DataFrame(array): no names to match
        return
    shown = ", ".join(map(repr, list(map(str, columns))[:6])) + (
        ", ..." if len(columns) > 6 else ""
    )
    warnings.warn(
        f"newdata's columns ({shown}) match none of the exog columns the model was given "
        f"({', '.join(all_names)}), so they are read by position, in the model's order (as "
        "statsmodels does). Name newdata's columns as the model's to read them by name, or "
        "pass an array (newdata.to_numpy()) to read them by position without this warning",
        PredictionWarning,
        stacklevel=user_stacklevel(),
    )


def _array_newdata(terms: TermsDesign, newdata: Any) -> FloatArray:
    """Rebuild the columns of a model built from arrays for new data.

    A DataFrame is read by column name when any of its column labels (as text)
    is one of the model's names, and then must hold every name the model uses;
    otherwise, as any array, by position, in the order the model was given (as
    statsmodels' ``predict`` reads any DataFrame), with a warning when its
    columns have names of their own (not ``pd.DataFrame(array)``'s 0, 1, ...).
    """
    all_names = terms.source_names
    if isinstance(newdata, pd.DataFrame):
        if not all_names or not set(all_names).isdisjoint(map(str, newdata.columns)):
            return _named_array_newdata(terms, newdata)
        _warn_read_by_position(newdata.columns, all_names)
    try:
        arr = np.asarray(newdata, dtype=float)
    except (TypeError, ValueError):
        raise _not_numbers(all_names, type(newdata).__name__) from None
    given = arr.shape
    arr = arr[:, None] if arr.ndim == 1 else arr  # a vector is one column, one value per row
    if arr.ndim != 2 or arr.shape[1] != len(all_names):
        one_row = (
            f" (a 1-d array is read as {given[0]} row(s) of one column): for one row pass a "
            "2-d array, x[None, :] or x.reshape(1, -1)"
            if len(given) == 1
            else ""
        )
        raise PredictionError(
            f"newdata must have the {len(all_names)} exog columns the model was given "
            f"({', '.join(all_names)}); got shape {given}{one_row}"
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
    kept, labels = set(terms.names), column_labels(terms.spec)
    grouped: dict[str, list[str]] = {}
    for term, indices in terms.spec.term_indices.items():
        if getattr(term, "degree", None) == 0:
            continue  # the implicit intercept
        columns = [labels[i] for i in indices]
        columns = [c for c in columns if c in kept]
        if columns:
            grouped[term_label(term)] = columns
    return grouped
