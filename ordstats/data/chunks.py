"""Exact Newton fits of data read in chunks (files larger than memory, Dask frames).

The log-likelihood, its gradient and its Hessian are sums over rows, so one
Newton iteration is one pass over the data: each chunk is turned into arrays
with the same formula spec (factor levels fixed beforehand) and evaluated by
:func:`ordstats.families.cumulative.likelihood.evaluate`; the chunk totals are added.  The fit is
therefore the in-memory fit, up to the order of floating-point additions.

Before the Newton passes, two passes fix the model:

1. *levels*: the observed values of the response and of every factor (rows
   complete in the used columns), so every chunk gets the same columns;
2. *summary*: rows used, weighted response counts (starting values, null
   model), missing values (warned about once, as in memory) and the Gram
   matrix of ``[1, X]`` (aliased columns are dropped, as in memory).

:func:`chunk_totals` is the one pure function evaluated per chunk, locally or
on Dask workers.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from ordstats._typing import FloatArray, IntArray
from ordstats.core.linalg import ShiftedColumns
from ordstats.core.links import Link
from ordstats.design import (
    Design,
    TermsDesign,
    chunk_weights,
    drop_aliased_by_gram,
    drop_nominal_aliases_by_gram,
    fixed_level_terms,
    gram_with_intercept,
    numeric_column_flags,
    plain_numeric_terms,
    report_missing_counts,
    rows_to_drop,
    stack_columns,
    terms_for_newdata,
)
from ordstats.design.censored import censored_stand_in, check_censored_options, encode_censored
from ordstats.design.core import NO_ROWS, sorted_levels
from ordstats.design.formula import unused_levels
from ordstats.design.response import EncodedResponse, encode_response, format_level
from ordstats.errors import (
    DataError,
    LevelsWarning,
    PredictionError,
    ResponseError,
    SpecificationError,
    user_stacklevel,
)
from ordstats.families.cumulative.banded import BandedHessian
from ordstats.families.cumulative.censoring import spread_counts
from ordstats.families.cumulative.likelihood import CLMData, evaluate, prepare
from ordstats.families.cumulative.sparse_block import SparseBlockHessian

__all__ = [
    "ChunkArrays",
    "ChunkSpec",
    "ColumnPlan",
    "PassTotals",
    "chunk_arrays",
    "chunk_totals",
    "fix_levels",
    "on_arrays",
    "reduce_arrays",
    "scan_levels",
    "summarize_chunk",
    "terms_without_levels",
]


@dataclass(frozen=True)
class ColumnPlan:
    """Which raw columns a chunked fit reads and what they are.

    Attributes
    ----------
    response : str
    columns : list of str
        Response and the formula's variables that are columns.
    factors : list of str
        Columns the formula encodes as factors.
    weights, offset : str or None
        Column names.
    """

    response: str
    columns: list[str]
    factors: list[str]
    weights: str | None = None
    offset: str | None = None
    #: columns a pass reads besides the model's (cluster labels), not checked for missing values
    extra: tuple[str, ...] = ()
    #: the columns of the bounds of a response ``Censored(lower, upper)``; the response
    #: is then a column made for each chunk (:func:`with_response_stand_in`)
    censored: tuple[str, str] | None = None

    @property
    def read_columns(self) -> list[str]:
        """Every column a pass reads."""
        extra = [c for c in (self.weights, self.offset) if c is not None]
        if self.censored is None:
            return list(dict.fromkeys(self.columns + extra + list(self.extra)))
        model = [c for c in self.columns if c != self.response] + list(self.censored)
        return list(dict.fromkeys(model + extra + list(self.extra)))


def with_response_stand_in(frame: pd.DataFrame, plan: ColumnPlan) -> pd.DataFrame:
    """``frame`` with the stand-in column of a censored response (unchanged otherwise)."""
    if plan.censored is None or plan.response in frame.columns:
        return frame
    return censored_stand_in(frame, plan.response, *plan.censored)


@dataclass
class MissingCounts:
    """Rows read, rows with a missing value, and missing values per column, of some chunks."""

    n_rows: int
    n_bad: int
    per_column: pd.Series

    def __add__(self, other: MissingCounts | None) -> MissingCounts:
        if other is None:
            return self
        per_column = self.per_column.add(other.per_column, fill_value=0)
        return MissingCounts(self.n_rows + other.n_rows, self.n_bad + other.n_bad, per_column)

    __radd__ = __add__


def count_missing(frame: pd.DataFrame, plan: ColumnPlan) -> MissingCounts:
    """:class:`MissingCounts` of one chunk (the columns, weights and offset of ``plan``)."""
    bad = rows_to_drop(with_response_stand_in(frame, plan), plan.columns, plan.weights, plan.offset)
    return MissingCounts(len(frame), int(bad.any(axis=1).sum()), bad.sum())


def refuse_no_complete_row(counts: MissingCounts) -> None:
    """Raise the in-memory design's error naming the columns when no row is complete."""
    if counts.n_rows and counts.n_bad == counts.n_rows:
        report_missing_counts(counts.n_bad, counts.n_rows, counts.per_column, "raise")


# ---------------------------------------------------------------------------
# pass 1: levels


@dataclass
class LevelScan:
    """Values seen in the complete rows of some chunks (first-seen order).

    Attributes
    ----------
    n_rows : int
        Rows read.
    values : dict
        Column -> ordered set (dict) of observed values.
    categories : dict
        Column -> (categories, ordered) of categorical columns.
    bound_weights : dict
        A censored response's distinct ``(lower, upper)`` pairs -> their summed
        weight (Turnbull's estimate behind the levels needs it).
    bound_rows : dict
        The same pairs -> how many rows have them (for the encoding's messages).
    """

    n_rows: int
    values: dict[str, dict[Any, None]]
    categories: dict[str, tuple[tuple[Any, ...], bool]]
    bound_weights: dict[tuple[float, float], float] = field(default_factory=dict)
    bound_rows: dict[tuple[float, float], int] = field(default_factory=dict)

    def __add__(self, other: LevelScan | None) -> LevelScan:
        if other is None:
            return self
        values = {c: {**v, **other.values.get(c, {})} for c, v in self.values.items()}
        bound_weights, bound_rows = dict(self.bound_weights), dict(self.bound_rows)
        for pair, weight in other.bound_weights.items():
            bound_weights[pair] = bound_weights.get(pair, 0.0) + weight
        for pair, count in other.bound_rows.items():
            bound_rows[pair] = bound_rows.get(pair, 0) + count
        categories = dict(self.categories)
        for col, (cats, ordered) in other.categories.items():
            if col not in categories:
                categories[col] = (cats, ordered)
                continue
            mine, my_order = categories[col]
            if ordered and my_order and tuple(mine) != tuple(cats):
                raise DataError(
                    f"the ordered categorical column {col!r} has different categories in "
                    f"different chunks ({list(mine)[:5]} vs {list(cats)[:5]}); store it with "
                    "one set of categories"
                )
            categories[col] = (tuple(dict.fromkeys(mine + tuple(cats))), my_order and ordered)
        return LevelScan(self.n_rows + other.n_rows, values, categories, bound_weights, bound_rows)

    __radd__ = __add__


def _complete_rows(frame: pd.DataFrame, plan: ColumnPlan) -> np.ndarray:
    bad = rows_to_drop(frame, plan.columns, plan.weights, plan.offset).any(axis=1).to_numpy()
    w = chunk_weights(frame, plan.weights)
    with np.errstate(invalid="ignore"):
        return ~bad & (w > 0)


def scan_levels(
    frame: pd.DataFrame, plan: ColumnPlan, complete: np.ndarray | None = None
) -> LevelScan:
    """Pass 1 on one chunk: values of the response and factors in complete rows.

    Parameters
    ----------
    frame : pandas.DataFrame
    plan : ColumnPlan
    complete : ndarray of bool, optional
        The chunk's complete rows, if known.

    Returns
    -------
    LevelScan
    """
    frame = with_response_stand_in(frame, plan)
    if complete is None:
        complete = _complete_rows(frame, plan)
    every = bool(complete.all())  # then the columns are read as they are, not copied
    values: dict[str, dict[Any, None]] = {}
    categories: dict[str, tuple[tuple[Any, ...], bool]] = {}
    bound_weights: dict[tuple[float, float], float] = {}
    bound_rows: dict[tuple[float, float], int] = {}
    if plan.censored is not None:  # the distinct (lower, upper) pairs, their weights and rows
        bound_weights, bound_rows = _bound_sums(frame, plan, complete)
        values[plan.response] = dict.fromkeys(bound_weights)
    for col in [plan.response, *plan.factors]:
        if col in values:
            continue
        series = frame[col] if every else frame[col][complete]
        # a chunk without rows (a file of none) says nothing of the categories:
        # Parquet stores an empty dictionary for it
        if isinstance(series.dtype, pd.CategoricalDtype) and len(frame):
            categories[col] = (tuple(series.cat.categories), bool(series.cat.ordered))
            observed = pd.unique(series.to_numpy())
        else:
            observed = pd.unique(series)
        values[col] = dict.fromkeys(np.asarray(observed, dtype=object).tolist())
    return LevelScan(len(frame), values, categories, bound_weights, bound_rows)


def _bound_sums(
    frame: pd.DataFrame, plan: ColumnPlan, complete: np.ndarray
) -> tuple[dict[tuple[float, float], float], dict[tuple[float, float], int]]:
    """A censored response's distinct ``(lower, upper)`` pairs in complete rows: weights, rows."""
    assert plan.censored is not None
    bounds = frame[list(plan.censored)].astype(float)[complete]
    weights = pd.Series(chunk_weights(frame, plan.weights)[complete], index=bounds.index)
    grouped = weights.groupby([bounds.iloc[:, 0], bounds.iloc[:, 1]], sort=False, dropna=False)
    summed, counts = grouped.sum(), grouped.size()
    pairs = [(float(lo), float(up)) for lo, up in summed.index]
    return (
        dict(zip(pairs, map(float, summed), strict=True)),
        dict(zip(pairs, map(int, counts.reindex(summed.index)), strict=True)),
    )


def _response_prototype(scan: LevelScan, response: str) -> pd.Series:
    observed = list(scan.values[response])
    if response in scan.categories:
        cats, ordered = scan.categories[response]
        return pd.Series(pd.Categorical(observed, categories=list(cats), ordered=ordered))
    inferred = pd.Series(observed)
    return inferred.infer_objects() if inferred.dtype == object else inferred


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, np.number)) and not isinstance(value, (bool, np.bool_))


def _factor_prototype(scan: LevelScan, plan: ColumnPlan) -> pd.DataFrame:
    """One frame whose factors carry the final levels (numbers are placeholders)."""
    levels: dict[str, tuple[list[Any], bool]] = {}
    for col in plan.factors:
        if col in scan.categories:
            cats, ordered = scan.categories[col]
            if ordered:  # coded with contr.poly over the levels the rows take, as in R
                cats = tuple(c for c in cats if c in scan.values[col])
            levels[col] = (list(cats), ordered)
        else:
            levels[col] = (sorted_levels(scan.values[col]), False)
    n = max([len(v) for v, _ in levels.values()] + [1])
    data: dict[str, Any] = {}
    for col in plan.columns:
        if col == plan.response:
            continue
        if col in levels:
            labels, is_ordered = levels[col]
            if col not in scan.categories and labels and all(map(_is_number, labels)):
                # numbers that the formula makes a factor (C(x)) stay numbers, so that
                # a plain x in the same formula is the number (C(x)'s levels: the values)
                data[col] = np.resize(np.array(labels), n)
                continue
            filled = np.resize(np.array(labels, dtype=object), n) if labels else np.full(n, None)
            data[col] = pd.Categorical(filled, categories=labels, ordered=is_ordered)
        else:
            data[col] = np.ones(n)
    return pd.DataFrame(data, index=pd.RangeIndex(n))


def fixed_side_terms(
    scan: LevelScan, plan: ColumnPlan, sides: dict[str, str], context: dict[str, Any]
) -> dict[str, TermsDesign]:
    """Build the nominal and scale terms (right-hand sides ``sides``) with fixed factor levels."""
    prototype = _factor_prototype(scan, plan)
    return {
        part: _with_empty_levels(
            fixed_level_terms(f"{plan.response} ~ {rhs}", prototype, context, part)[1], scan
        )
        for part, rhs in sides.items()
    }


def _with_empty_levels(terms: TermsDesign, scan: LevelScan) -> TermsDesign:
    """``terms`` recording the declared levels of Categorical columns that no row had.

    As the in-memory design records them: new rows of such a level are not
    predicted (their column was dropped as all zeros), but NaN, with a warning.
    """
    empty = unused_levels(
        terms.spec,
        lambda expr: scan.values.get(expr, {}) if expr in scan.categories else None,
    )
    return replace(terms, empty_levels=empty) if empty else terms


def terms_without_levels(
    plan: ColumnPlan, formula: str, sides: dict[str, str], context: dict[str, Any]
) -> dict[str, TermsDesign]:
    """The location terms and the nominal and scale terms of a plan without factors.

    They need no level scan: these are the terms :func:`fix_levels` and
    :func:`fixed_side_terms` build after it.
    """
    no_levels = LevelScan(0, {}, {})
    location = fixed_level_terms(formula, _factor_prototype(no_levels, plan), context)[1]
    return {"location": location, **fixed_side_terms(no_levels, plan, sides, context)}


def fix_levels(
    scan: LevelScan,
    plan: ColumnPlan,
    formula: str,
    context: dict[str, Any],
    *,
    levels: Any = None,
    many_levels: bool = False,
) -> tuple[EncodedResponse, str, TermsDesign]:
    """Encode the response levels and build the location terms with fixed factor levels.

    Returns
    -------
    response : EncodedResponse
        Levels and values (no codes).
    formula : str
        As fitted.
    terms : TermsDesign
        Spec and column names (no rows).
    """
    if not scan.n_rows:
        raise DataError(NO_ROWS)
    if not scan.values[plan.response]:
        raise DataError(
            "no row can be used: every row has a missing value in a used column or a zero weight"
        )
    if plan.censored is not None:
        check_censored_options(levels)
        bounds = np.array(list(scan.bound_weights), dtype=float).reshape(-1, 2)
        response = encode_censored(
            bounds[:, 0],
            bounds[:, 1],
            name=plan.response,
            many_levels=many_levels,
            weights=np.fromiter(scan.bound_weights.values(), dtype=float),
            rows=np.array([scan.bound_rows.get(pair, 1) for pair in scan.bound_weights]),
        )
    else:
        response = encode_response(
            _response_prototype(scan, plan.response),
            name=plan.response,
            levels=levels,
            many_levels=many_levels,
        )
    fitted_formula, terms = fixed_level_terms(formula, _factor_prototype(scan, plan), context)
    return response, fitted_formula, _with_empty_levels(terms, scan)


# ---------------------------------------------------------------------------
# per-chunk arrays and the pure per-chunk function


@dataclass(frozen=True)
class ChunkSpec:
    """Everything needed to turn any chunk into likelihood arrays (picklable).

    Attributes
    ----------
    plan : ColumnPlan
    terms : TermsDesign
        Location spec with fixed levels and the kept column names.
    level_codes : dict
        Response label -> code.
    link : Link
    jacobian : ndarray or sparse matrix
        Threshold Jacobian.
    context : dict
        Names the formula needs besides columns.
    nominal, scale : TermsDesign or None
        Nominal and log-scale specs with fixed levels, when the model has them.
    threshold_offset : ndarray or None
        Fixed cut-points ``c`` of ``theta = J a + c``.
    binary_cut : int or None
        Code ``j``: the response is ``Y > j`` (0/1), for the binary models of
        Brant's test.
    censoring : CensoredLevels or None
        Codes the bounds of a censored response.
    shifted : ShiftedColumns or None
        Location columns evaluated in a shifted basis (the chunked fit's
        internal parameters; see ``ChunkedEvaluator``).
    """

    plan: ColumnPlan
    terms: TermsDesign
    level_codes: dict[str, int]
    link: Link
    jacobian: Any
    context: dict[str, Any] = field(default_factory=dict)
    nominal: TermsDesign | None = None
    scale: TermsDesign | None = None
    threshold_offset: FloatArray | None = None
    binary_cut: int | None = None
    #: the levels of a censored response (:class:`~ordstats.design.censored.CensoredLevels`)
    censoring: Any = None
    #: location columns evaluated in a shifted basis (the fit's internal parameters)
    shifted: ShiftedColumns | None = None

    @property
    def n_levels(self) -> int:
        """Number of response levels ``K`` (2 for a binary model ``Y > j``)."""
        return len(self.level_codes) if self.binary_cut is None else 2

    @property
    def parts(self) -> dict[str, TermsDesign]:
        """The location spec and the nominal and scale specs the model has, in that order."""
        sides = {"nominal": self.nominal, "scale": self.scale}
        return {"location": self.terms, **{k: v for k, v in sides.items() if v is not None}}

    @property
    def column_labels(self) -> list[str]:
        """Every design column, side columns prefixed as in the missing-value report."""
        return [
            name if part == "location" else f"{part}: {name}"
            for part, terms in self.parts.items()
            for name in terms.names
        ]


@dataclass(frozen=True)
class ChunkArrays:
    """The used rows of one chunk as arrays, and what was dropped."""

    y: IntArray
    X: FloatArray
    weights: FloatArray
    offset: FloatArray
    bad: pd.Series
    n_bad: int
    n_rows: int
    #: nominal and scale designs (no columns when the model has none)
    nominal: FloatArray = field(default_factory=lambda: np.empty((0, 0)))
    scale: FloatArray = field(default_factory=lambda: np.empty((0, 0)))
    #: which rows of the chunk are used (boolean, one per row of the chunk)
    kept: Any = None
    #: rows dropped for a missing or non-finite value (the others are R's model frame:
    #: the used rows and those of zero weight)
    dropped: Any = None
    #: the lowest level of each row of a censored response (None: exact rows)
    y_low: IntArray | None = None


def _response_codes(series: pd.Series, level_codes: dict[str, int], name: str) -> IntArray:
    codes, uniques = pd.factorize(series)
    table = np.array(
        [level_codes.get(format_level(u), -1) for u in np.asarray(uniques, dtype=object)],
        dtype=np.intp,
    )
    out = table[codes] if len(codes) else np.empty(0, dtype=np.intp)
    if np.any(out < 0):
        labels = np.asarray(uniques, dtype=object)
        unseen = [format_level(u) for u, t in zip(labels, table, strict=True) if t < 0]
        raise DataError(
            f"the response {name!r} has value(s) {', '.join(map(repr, unseen[:5]))} that the "
            "first pass over the data did not see; did the data change during the fit?"
        )
    return out


def chunk_arrays(frame: pd.DataFrame, spec: ChunkSpec, *, held: bool = False) -> ChunkArrays:
    """Build the used rows of one chunk, with the rules of the in-memory design.

    Rows with missing or non-finite values in used columns, weights, offset or
    formula terms are dropped, and so are rows of zero weight.  ``held``: the
    arrays will be kept for the fit's life (a numeric design is then stacked in
    memory of its own, see :func:`ordstats.design.stack_columns`).

    Raises
    ------
    DataError
        Unseen factor or response levels, negative weights, missing columns.
    """
    plan = spec.plan
    frame = with_response_stand_in(frame, plan)
    plain = _plain_chunk_arrays(frame, spec, held=held)
    if plain is not None:
        return plain
    bad = rows_to_drop(frame, plan.columns, plan.weights, plan.offset)
    complete = ~bad.any(axis=1).to_numpy()
    blocks = [_part_matrix(terms, frame.loc[complete], spec) for terms in spec.parts.values()]
    X_complete = blocks[0] if len(blocks) == 1 else np.column_stack(blocks)
    # non-finite transforms (e.g. log(0)) of otherwise complete rows, per column
    finite_cells = np.isfinite(X_complete)
    finite_terms = finite_cells.all(axis=1)
    term_bad = np.zeros(len(frame), dtype=bool)
    term_bad[np.flatnonzero(complete)[~finite_terms]] = True
    labels = spec.column_labels
    names = labels if len(labels) == X_complete.shape[1] else None
    for j in np.flatnonzero(~finite_cells.all(axis=0)):
        column_bad = np.zeros(len(frame), dtype=bool)
        column_bad[np.flatnonzero(complete)[~finite_cells[:, j]]] = True
        bad[names[j] if names else f"formula column {j + 1}"] = column_bad
    drop = ~complete | term_bad
    w = chunk_weights(frame, plan.weights)
    with np.errstate(invalid="ignore"):
        keep = ~drop & (w > 0)
    used = X_complete[finite_terms & (w[complete] > 0)]
    X, *sides = np.split(used, np.cumsum([b.shape[1] for b in blocks])[:-1], axis=1)
    side = dict(zip([p for p in spec.parts if p != "location"], sides, strict=True))
    offset = (
        frame[plan.offset].to_numpy(dtype=float)[keep]
        if plan.offset is not None
        else np.zeros(int(keep.sum()))
    )
    y_low = None
    if plan.censored is not None:
        lower, upper = (frame[c].to_numpy(dtype=float)[keep] for c in plan.censored)
        y_low, y = spec.censoring.codes(lower, upper)
    else:
        y = _response_codes(frame[plan.response][keep], spec.level_codes, plan.response)
    return ChunkArrays(
        y=y if spec.binary_cut is None else (y > spec.binary_cut).astype(np.intp),
        y_low=y_low,
        X=np.ascontiguousarray(X),
        weights=w[keep],
        offset=offset,
        bad=bad.sum(),
        n_bad=int(drop.sum()),
        n_rows=len(frame),
        nominal=np.ascontiguousarray(side.get("nominal", np.empty((len(X), 0)))),
        scale=np.ascontiguousarray(side.get("scale", np.empty((len(X), 0)))),
        kept=keep,
        dropped=drop,
    )


def _plain_chunk_arrays(
    frame: pd.DataFrame,
    spec: ChunkSpec,
    code_response: Callable[[pd.Series], IntArray] | None = None,
    *,
    held: bool = False,
) -> ChunkArrays | None:
    """:func:`chunk_arrays` of a model whose design columns are numeric columns used as is.

    The design is stacked straight from the columns (one copy, no formula
    evaluation); the rows used and the missing-value counts are those of the
    general path.  None when the model or the chunk is not of that kind.
    ``code_response`` codes the used rows' responses (default: by the spec's
    level codes).  ``held``: the matrices will be kept for the fit's life
    (see :func:`ordstats.design.stack_columns`).
    """
    plan = spec.plan
    if plan.censored is not None or not all(
        plain_numeric_terms(terms, frame) for terms in spec.parts.values()
    ):
        return None
    predictors = [c for c in plan.columns if c != plan.response]
    numeric = numeric_column_flags(frame, predictors)
    if numeric is None:
        return None
    # in the order of the general path's report: the columns, then weights and offset
    # (None: no missing or non-finite value)
    flags = {
        name: numeric[name][1] if name in numeric else None for name in dict.fromkeys(plan.columns)
    }
    response = numeric_column_flags(frame, [plan.response])
    if response is not None and plan.weights is None and plan.offset is None:
        flags[plan.response] = response[plan.response][1]
    else:
        bad = rows_to_drop(frame, [plan.response], plan.weights, plan.offset)
        flags[plan.response] = bad[plan.response].to_numpy()
        flags.update({role: bad[role].to_numpy() for role in bad.columns if role != plan.response})
    raised = [f for f in flags.values() if f is not None]
    drop = np.logical_or.reduce(raised) if raised else np.zeros(len(frame), dtype=bool)
    w = chunk_weights(frame, plan.weights)
    with np.errstate(invalid="ignore"):
        keep = ~drop & (w > 0)
    every = bool(keep.all())

    n_used = len(keep) if every else int(keep.sum())

    def stacked(terms: TermsDesign) -> FloatArray:
        columns = [numeric[name][0] for name in terms.names]
        return stack_columns(columns if every else [c[keep] for c in columns], n_used, held=held)

    X = stacked(spec.terms)
    offset = (
        frame[plan.offset].to_numpy(dtype=float)[keep]
        if plan.offset is not None
        else np.zeros(len(X))
    )
    response = frame[plan.response] if every else frame[plan.response][keep]
    if code_response is None:
        y = _response_codes(response, spec.level_codes, plan.response)
    else:
        y = code_response(response)
    return ChunkArrays(
        y=y if spec.binary_cut is None else (y > spec.binary_cut).astype(np.intp),
        X=X,
        weights=w if every else w[keep],
        offset=offset,
        bad=pd.Series(
            {name: 0 if f is None else int(f.sum()) for name, f in flags.items()}, dtype=np.int64
        ),
        n_bad=int(drop.sum()),
        n_rows=len(frame),
        nominal=stacked(spec.nominal) if spec.nominal is not None else np.empty((len(X), 0)),
        scale=stacked(spec.scale) if spec.scale is not None else np.empty((len(X), 0)),
        kept=keep,
        dropped=drop,
    )


def _part_matrix(terms: TermsDesign, rows: pd.DataFrame, spec: ChunkSpec) -> FloatArray:
    """One part's design columns for the complete rows of a chunk."""
    try:
        return terms_for_newdata(terms, rows, spec.context, thread_safe=True)
    except PredictionError as exc:
        found = re.search(r"factor level\(s\) (.*?) that", str(exc))
        what = f"factor level(s) {found.group(1)}" if found else f"values it cannot encode ({exc})"
        raise DataError(
            f"a chunk has {what} that the first pass over the data did not see; did the "
            "data change during the fit?"
        ) from exc


def _clm_data(arrays: ChunkArrays, spec: ChunkSpec) -> CLMData:
    return CLMData(
        y=arrays.y,
        n_levels=spec.n_levels,
        X=arrays.X if spec.shifted is None else spec.shifted.apply(arrays.X),
        weights=arrays.weights,
        offset=arrays.offset,
        link=spec.link,
        threshold_jacobian=spec.jacobian,
        nominal=arrays.nominal,
        scale=arrays.scale,
        threshold_offset=spec.threshold_offset,
        y_low=arrays.y_low,
    )


def reduce_chunk(frame: pd.DataFrame, spec: ChunkSpec, func: Callable[..., Any], *args: Any) -> Any:
    """``func(arrays, *args)`` on one chunk's likelihood arrays (None for no usable rows).

    ``func`` must be a module-level function (it travels to Dask workers) whose
    results add up over chunks.
    """
    return reduce_arrays(chunk_arrays(frame, spec), spec, func, *args)


def reduce_arrays(
    arrays: ChunkArrays, spec: ChunkSpec, func: Callable[..., Any], *args: Any
) -> Any:
    """:func:`reduce_chunk` of a chunk's arrays."""
    if arrays.y.size == 0:
        return None
    return func(_clm_data(arrays, spec), *args)


def on_arrays(frame: pd.DataFrame, spec: ChunkSpec, func: Callable[..., Any], *args: Any) -> Any:
    """``func(arrays, spec, *args)`` of one chunk's arrays (:func:`chunk_arrays`).

    The pass function that runs a function of a chunk's arrays (such as
    :func:`arrays_totals`) on a source's raw chunks.
    """
    return func(chunk_arrays(frame, spec), spec, *args)


@dataclass
class PassTotals:
    """Sums over chunks of the negative log-likelihood and its derivatives.

    ``hessian`` is a dense array or a :class:`~ordstats.families.cumulative.banded.BandedHessian`,
    or None for a pass that evaluated the gradient alone.
    """

    nll: float
    gradient: FloatArray
    hessian: Any
    n_rows: int

    def __add__(self, other: PassTotals | None) -> PassTotals:
        if other is None:
            return self
        return PassTotals(
            self.nll + other.nll,
            self.gradient + other.gradient,
            None if self.hessian is None else self.hessian + other.hessian,
            self.n_rows + other.n_rows,
        )

    __radd__ = __add__


def chunk_totals(
    frame: pd.DataFrame, spec: ChunkSpec, params: FloatArray, banded: bool = False
) -> PassTotals | None:
    """Evaluate ``nll``, gradient and Hessian of one chunk at ``params`` (the pure per-chunk step).

    Parameters
    ----------
    frame : pandas.DataFrame
        One chunk of the raw data.
    spec : ChunkSpec
    params : ndarray
    banded : bool
        Return the Hessian as a :class:`~ordstats.families.cumulative.banded.BandedHessian`.

    Returns
    -------
    PassTotals or None
        None for a chunk without usable rows.
    """
    return arrays_totals(chunk_arrays(frame, spec), spec, params, banded)


def arrays_totals(
    arrays: ChunkArrays,
    spec: ChunkSpec,
    params: FloatArray,
    banded: bool = False,
    with_hessian: bool = True,
) -> PassTotals | None:
    """:func:`chunk_totals` of a chunk's arrays (None for no usable rows).

    ``with_hessian=False``: the negative log-likelihood and gradient alone
    (about 40% of the cost for a design of 20 columns), the Hessian None.
    """
    if arrays.y.size == 0:
        return None
    problem = prepare(_clm_data(arrays, spec), single_use=True)  # one evaluation per pass
    lam = params[problem.layout.lam]
    if lam.size and not spec.link.in_domain(float(lam[0])):  # type: ignore[attr-defined]
        # a flexible link's lambda outside its domain: the solver rejects the trial on nll
        return _rejected_totals(len(params), int(arrays.y.size), with_hessian)
    ev = evaluate(problem, params)
    if not (banded or np.isfinite(ev.nll)):
        # a row of probability 0 (a trial point far out): the solver rejects it on nll,
        # and its derivatives (0/0 in the tails) are not computed, as in memory
        return _rejected_totals(len(params), int(arrays.y.size), with_hessian)
    if not with_hessian:
        return PassTotals(ev.nll, ev.gradient, None, int(arrays.y.size))
    if banded and arrays.y_low is not None:  # censored: every chunk's block sparse, to add up
        hessian: Any = SparseBlockHessian.from_blocks(*ev.hessian_blocks)
    else:
        hessian = BandedHessian.from_evaluation(ev) if banded else ev.hessian
    return PassTotals(ev.nll, ev.gradient, hessian, int(arrays.y.size))


def _rejected_totals(k: int, n_rows: int, with_hessian: bool) -> PassTotals:
    """A chunk's sums at a point the solver rejects on its infinite ``nll``."""
    return PassTotals(np.inf, np.zeros(k), np.zeros((k, k)) if with_hessian else None, n_rows)


# ---------------------------------------------------------------------------
# pass 2: summary


@dataclass
class ChunkSummary:
    """Sizes, response counts, dropped rows and the column moments of some chunks.

    The design ``[X, W, Z]`` (location, nominal and scale columns) is kept as
    its column means and centred cross products (:class:`CentredMoments`), so
    that a column far from zero (``x + 1e7``) keeps its variation, which the
    sums of squares would lose to rounding (:attr:`gram`, :attr:`centred_gram`).
    """

    n_rows: int
    n_used: int
    n_bad: int
    sum_weights: float
    counts: FloatArray
    bad: pd.Series
    moments: CentredMoments
    any_offset: bool
    non_unit_weights: bool
    #: largest ``|x|`` of each design column
    column_max: FloatArray
    #: the weighted sum of the offsets (their mean shifts the starting thresholds)
    offset_sum: float = 0.0

    def __add__(self, other: ChunkSummary | None) -> ChunkSummary:
        if other is None:
            return self
        return ChunkSummary(
            self.n_rows + other.n_rows,
            self.n_used + other.n_used,
            self.n_bad + other.n_bad,
            self.sum_weights + other.sum_weights,
            self.counts + other.counts,
            self.bad.add(other.bad, fill_value=0),
            self.moments + other.moments,
            self.any_offset or other.any_offset,
            self.non_unit_weights or other.non_unit_weights,
            np.maximum(self.column_max, other.column_max),
            self.offset_sum + other.offset_sum,
        )

    __radd__ = __add__

    @property
    def gram(self) -> FloatArray:
        """The Gram matrix of ``[1, X, W, Z]`` in the data's units."""
        return self.moments.gram()

    @property
    def relative_spread(self) -> FloatArray:
        """Each design column's standard deviation divided by its largest ``|x|``."""
        moments = self.moments
        sd = np.sqrt(np.maximum(np.diag(moments.m2), 0.0) / max(moments.n, 1.0))
        with np.errstate(all="ignore"):
            return np.where(self.column_max > 0, sd / self.column_max, 0.0)

    @property
    def centred_gram(self) -> FloatArray:
        """The Gram matrix of ``[1, X - 1m', ...]``: the same span, without the shifts."""
        return self.moments.gram(centred=True)


@dataclass(frozen=True)
class CentredMoments:
    """Row count, column means and centred cross products of a design's rows.

    Chunks combine by the pairwise update of Chan, Golub and LeVeque (1979):
    ``M = M_a + M_b + d d' n_a n_b / n`` with ``d`` the difference of the means.
    """

    n: float
    means: FloatArray
    m2: FloatArray

    @classmethod
    def of(cls, design: FloatArray) -> CentredMoments:
        """The moments of ``design``'s rows, from its Gram matrix where that keeps digits.

        A column whose squares overflow (beyond about 1e154) gives infinite or
        ``NaN`` moments without numpy's warnings: the design's check refuses it.
        """
        with np.errstate(over="ignore", invalid="ignore"):
            gram = gram_with_intercept(design)
            n = float(gram[0, 0])
            if n == 0:
                return cls(0.0, np.zeros(design.shape[1]), np.zeros(gram[1:, 1:].shape))
            means = gram[0, 1:] / n
            m2 = gram[1:, 1:] - n * np.outer(means, means)
            # a column far from zero loses its variation in the sums of squares: centre it
            if np.any(np.diag(m2) < _CENTRED_SHARE * np.diag(gram)[1:]):
                centred = design - means
                m2 = centred.T @ centred
        return cls(n, means, m2)

    def __add__(self, other: CentredMoments) -> CentredMoments:
        if other.n == 0:
            return self
        if self.n == 0:
            return other
        n = self.n + other.n
        delta = other.means - self.means
        means = self.means + delta * (other.n / n)
        with np.errstate(over="ignore", invalid="ignore"):  # overflowing columns: see of()
            m2 = self.m2 + other.m2 + np.outer(delta, delta) * (self.n * other.n / n)
        return CentredMoments(n, means, m2)

    def gram(self, centred: bool = False) -> FloatArray:
        """The Gram matrix of ``[1, X]`` (``centred``: of ``[1, X - 1m']``).

        In the centred one, a column whose centred norm is at most ``1e-10`` of
        its norm (``x + 1e10``: constant to rounding) is a column of zeros,
        aliased with the intercept, as the in-memory check
        (:func:`~ordstats.design.core.aliasing_gram`) counts it.
        """
        p = self.means.size
        gram = np.empty((p + 1, p + 1))
        gram[0, 0] = self.n
        shift = np.zeros(p) if centred else self.means
        gram[0, 1:] = gram[1:, 0] = self.n * shift
        gram[1:, 1:] = self.m2 + self.n * np.outer(shift, shift)
        if centred:
            with np.errstate(over="ignore"):
                squares = np.maximum(np.diag(self.m2), 0.0)
                constant = np.sqrt(squares) <= _CONSTANT_SHARE * np.sqrt(
                    squares + self.n * self.means * self.means
                )
            inner = gram[1:, 1:]
            inner[constant, :] = inner[:, constant] = 0.0
        return gram


#: A column whose centred norm is at most this share of its norm is constant to rounding.
_CONSTANT_SHARE = 1e-10
#: Share of a column's sum of squares below which its centred sum is recomputed from
#: the centred column (``1e-6``: six of the sixteen digits lost to its shift).
_CENTRED_SHARE = 1e-6


def _level_counts(arrays: ChunkArrays, n_levels: int) -> FloatArray:
    """Weighted counts per level; a censored row's weight spread over its levels."""
    if arrays.y_low is not None:
        return spread_counts(arrays.y, arrays.y_low, arrays.weights, n_levels)
    return np.bincount(arrays.y, weights=arrays.weights, minlength=n_levels).astype(float)


def summarize_chunk(frame: pd.DataFrame, spec: ChunkSpec) -> ChunkSummary:
    """Pass 2 on one chunk: what the fit will use of it.

    Parameters
    ----------
    frame : pandas.DataFrame
    spec : ChunkSpec

    Returns
    -------
    ChunkSummary
    """
    return arrays_summary(chunk_arrays(frame, spec), spec)


def arrays_summary(arrays: ChunkArrays, spec: ChunkSpec) -> ChunkSummary:
    """:func:`summarize_chunk` of a chunk's arrays."""
    sides = [m for m in (arrays.nominal, arrays.scale) if m.shape[1]]
    # the location design alone is used as it is (no copy)
    design = np.hstack([arrays.X, *sides]) if sides else arrays.X
    any_offset = bool(np.any(arrays.offset))
    return ChunkSummary(
        n_rows=arrays.n_rows,
        n_used=int(arrays.y.size),
        n_bad=arrays.n_bad,
        sum_weights=float(arrays.weights.sum()),
        counts=_level_counts(arrays, spec.n_levels),
        bad=arrays.bad,
        moments=CentredMoments.of(design),
        any_offset=any_offset,
        non_unit_weights=bool(np.any(arrays.weights != 1.0)),
        column_max=_largest_magnitudes(design),
        offset_sum=float(arrays.weights @ arrays.offset) if any_offset else 0.0,
    )


#: Rows of a C-ordered design taken side by side by :func:`_largest_magnitudes`.
_WIDE_ROWS = 64


def _largest_magnitudes(design: FloatArray) -> FloatArray:
    """The largest ``|x|`` of each column (0 for no rows), without an array of ``|x|``.

    A C-ordered design's rows are reduced ``_WIDE_ROWS`` at a time, side by
    side (a reduction along the columns of a tall C-ordered array runs a
    short loop per row; this is about three times faster, and maxima do not
    depend on the order).
    """
    n, p = design.shape
    if not n:
        return np.zeros(p)
    head = n - n % _WIDE_ROWS if design.flags.c_contiguous else 0
    tops, bottoms = [], []
    if head:
        wide = design[:head].reshape(head // _WIDE_ROWS, _WIDE_ROWS * p)
        tops.append(wide.max(axis=0).reshape(_WIDE_ROWS, p).max(axis=0))
        bottoms.append(wide.min(axis=0).reshape(_WIDE_ROWS, p).min(axis=0))
    if head < n:
        tops.append(design[head:].max(axis=0))
        bottoms.append(design[head:].min(axis=0))
    return np.maximum(np.max(tops, axis=0), -np.min(bottoms, axis=0))


#: Design columns of data read in chunks must have their largest ``|x|`` in this range:
#: their squares, in the Gram matrix and the Hessian, neither overflow nor vanish.
#: (In memory, columns outside it are rescaled; see ``ordstats.core.linalg.ShiftedBasis``.)
_CHUNKED_SCALE = (1e-140, 1e140)


def _refuse_badly_scaled(names: list[str], column_max: FloatArray) -> None:
    """Raise a :class:`SpecificationError` for columns too large or small to fit in chunks."""
    low, high = _CHUNKED_SCALE
    bad = [
        f"{name!r} (|x| up to {size:.3g})"
        for name, size in zip(names, column_max, strict=True)
        if size > high or 0.0 < size < low
    ]
    if bad:
        raise SpecificationError(
            f"the column(s) {', '.join(bad)} are too large or too small for a fit of data "
            f"read in chunks (|x| must reach between {low:.0e} and {high:.0e}): rescale them "
            "in the formula, e.g. I(x * 1e-200), or load the data into memory, where "
            "ordstats rescales such columns itself"
        )


def apply_summary(
    summary: ChunkSummary,
    spec: ChunkSpec,
    response: EncodedResponse,
    *,
    missing: Any,
    collinear: Any,
) -> tuple[ChunkSpec, EncodedResponse]:
    """Apply the missing-value, aliasing and empty-level rules of the in-memory design.

    Returns the final spec (aliased columns and unobserved levels dropped) and
    response levels.
    """
    report_missing_counts(summary.n_bad, summary.n_rows, summary.bad, missing)
    if summary.n_used == 0:
        raise DataError(
            f"none of the {summary.n_rows} rows can be used (missing values or zero weights)"
        )
    _refuse_badly_scaled(spec.column_labels, summary.column_max)
    parts = _drop_aliased_parts(
        spec, summary.centred_gram, collinear, summary.gram, summary.relative_spread
    )
    observed = summary.counts > 0
    if not np.all(observed):
        dropped = [lab for lab, o in zip(response.levels, observed, strict=True) if not o]
        warnings.warn(
            f"response {spec.plan.response!r}: level(s) {', '.join(map(repr, dropped))} have "
            "no observations in the rows used and were dropped (as R's clm does)",
            LevelsWarning,
            stacklevel=user_stacklevel(),
        )
        kept = [v for v, o in zip(response.values, observed, strict=True) if o]
        if len(kept) < 2:
            raise ResponseError(
                f"the response {spec.plan.response!r} has {len(kept)} observed level(s); an "
                "ordinal model needs at least two"
            )
        response = replace(
            response,
            levels=[lab for lab, o in zip(response.levels, observed, strict=True) if o],
            values=kept,
            dropped_levels=response.dropped_levels + dropped,
        )
    codes = {label: j for j, label in enumerate(response.levels)}
    spec = replace(
        spec,
        terms=parts["location"],
        nominal=parts.get("nominal"),
        scale=parts.get("scale"),
        level_codes=codes,
    )
    return spec, response


def _drop_aliased_parts(
    spec: ChunkSpec,
    gram: FloatArray,
    collinear: Any,
    raw: FloatArray | None = None,
    spread: FloatArray | None = None,
) -> dict[str, TermsDesign]:
    """Each part without its aliased columns, as the in-memory design drops them.

    ``gram`` is the Gram matrix of ``[1, X, W, Z]`` (its columns may be centred:
    the same span); each check reads the rows and columns of the kept columns
    it involves.  ``raw``, that of the uncentred columns where ``gram`` is
    centred, gives the aliased columns as combinations in the data's units;
    ``spread`` (one per column of ``[X, W, Z]``) names columns constant to rounding.
    """
    start, where = 1, {}
    for part, terms in spec.parts.items():
        where[part] = dict(zip(terms.names, range(start, start + len(terms.names)), strict=True))
        start += len(terms.names)

    def block(*chosen: tuple[str, TermsDesign], of: FloatArray = gram) -> FloatArray:
        index = [0] + [where[part][name] for part, terms in chosen for name in terms.names]
        return of[np.ix_(index, index)]

    parts = {
        part: drop_aliased_by_gram(
            terms,
            block((part, terms)),
            collinear,
            part,
            raw=None if raw is None else block((part, terms), of=raw),
            spread=None
            if spread is None
            else spread[[where[part][name] - 1 for name in terms.names]],
        )
        for part, terms in spec.parts.items()
    }
    if "nominal" in parts:
        nominal, location = parts["nominal"], parts["location"]
        parts["location"] = drop_nominal_aliases_by_gram(
            location, nominal, block(("nominal", nominal), ("location", location)), collinear
        )
    return parts


def skeleton_design(
    response: EncodedResponse,
    spec: ChunkSpec,
    formula: str,
    summary: ChunkSummary,
) -> Design:
    """Describe chunked data as a :class:`Design` without holding its rows."""
    empty = {
        part: replace(terms, matrix=np.empty((0, len(terms.names))))
        for part, terms in spec.parts.items()
    }
    return Design(
        # a censored response's distinct bounds stay behind: the spec codes the rows
        response=replace(response, codes=np.empty(0, dtype=np.intp), bounds=None),
        response_name=spec.plan.response,
        location=empty["location"],
        weights=np.empty(0),
        offset=np.empty(0),
        row_index=pd.RangeIndex(0),
        n_dropped=summary.n_rows - summary.n_used,
        formula=formula,
        offset_name=spec.plan.offset,
        nominal=empty.get("nominal"),
        scale=empty.get("scale"),
    )


def empty_data(spec: ChunkSpec) -> CLMData:
    """Likelihood arrays with no rows (for the parameter layout)."""
    return CLMData(
        y=np.empty(0, dtype=np.intp),
        n_levels=spec.n_levels,
        X=np.empty((0, len(spec.terms.names))),
        weights=np.empty(0),
        offset=np.empty(0),
        link=spec.link,
        threshold_jacobian=spec.jacobian,
        nominal=np.empty((0, len(spec.nominal.names) if spec.nominal else 0)),
        scale=np.empty((0, len(spec.scale.names) if spec.scale else 0)),
        threshold_offset=spec.threshold_offset,
        y_low=None if spec.censoring is None else np.empty(0, dtype=np.intp),
    )
