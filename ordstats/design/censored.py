r"""Censored responses: ``Censored(lower, upper)`` and its encoding as ranges of levels.

A censored value is known to lie in the interval ``(lower, upper]``: ``lower = -inf``
for left censoring (``Y <= upper``, e.g. below a detection limit), ``upper = +inf``
for right censoring (``Y > lower``, e.g. survival past the end of follow-up), both
finite for interval censoring, and ``lower == upper`` for an exact value.  These are
the conventions of R's ``Surv(lower, upper, type = "interval2")`` and of rms 8's
``Ocens`` (whose right-censoring intervals are open at the finite end too).

The response levels are Turnbull's innermost intervals (Turnbull 1976): the intervals
between the ends of the observations in which no other end lies, where the
nonparametric maximum likelihood estimate puts its mass.  Every exact value is one;
a censoring bound that no exact value matches creates no level of its own (a row
right-censored between two exact values is "above the lower one"), except beyond
the exact values, where the outermost censored rows make one level of their own,
as in rms's ``Ocens``.  That level is the innermost interval ``(c, inf)`` with ``c``
the highest of those bounds, valued at ``c + eps`` (``eps`` as ``Ocens``: 0.001 for
integer data, ``1e-8`` otherwise); ``Ocens`` values it at the *lowest* such bound
plus ``eps``.  The likelihood is the same; ``P(Y > t)`` then stays at its last
value up to ``c``, as Kaplan-Meier's does up to the last follow-up time.
Each row then lies in a range of
consecutive levels ``y_low, ..., y`` (``y_low == y`` for an exact value); see
:mod:`ordstats.families.cumulative.censoring` for the likelihood.

An innermost interval that only censored rows cover can get no probability at the
maximum: nothing in the likelihood then keeps its probability from going negative,
and a fit's thresholds stop increasing.  The intervals to which Turnbull's estimate
(without predictors, rows weighted by their weights) gives no probability are
therefore not levels, as ``Ocens`` merges intervals of equal survival; a row
covers the levels left in its range.  The predictors can move which intervals get
probability: ``OrdinalModel.fit`` then ties or frees their thresholds (an active
set over :meth:`CensoredLevels.with_cells`) until the fit is the maximum over
ordered thresholds, and its results' ``model.levels`` are the levels it kept.
"""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from ordstats._typing import BoolArray, FloatArray, IntArray
from ordstats.design.response import MAX_LEVELS_DEFAULT, EncodedResponse, format_level
from ordstats.errors import (
    DataError,
    FormulaError,
    LevelsWarning,
    ResponseError,
    SpecificationError,
    user_stacklevel,
)
from ordstats.families.cumulative.censoring import empty_levels

__all__ = [
    "Censored",
    "CensoredLevels",
    "censored_response",
    "censored_stand_in",
    "check_censored_options",
    "encode_censored",
    "grid_positions",
    "levels_labels",
    "parse_censored",
    "recode_censored",
    "refuse_censored",
]

#: Shift of an open interval's end for the value of its level, as rms's ``Ocens``.
_EPS_INTEGER = 1e-3
_EPS_REAL = 1e-8


class Censored:
    """A censored response: each value known to lie in ``(lower, upper]``.

    Pass it as the response of :class:`~ordstats.OrdinalModel`
    (``OrdinalModel(Censored(lower, upper), X, many_levels=True)``) or write it in
    a formula (``"Censored(lower, upper) ~ x"``).

    Parameters
    ----------
    lower, upper : array-like or pandas.Series
        The ends of each interval: ``lower == upper`` for an exact value,
        ``lower = -inf`` for a left-censored one (``Y <= upper``), ``upper = inf``
        for a right-censored one (``Y > lower``). A row with both ends missing
        (NaN) is a missing response. pandas Series align on their index.
    name : str, optional
        Name of the response in reports (default ``"Censored(lower, upper)"``
        with the Series' names).

    Raises
    ------
    DataError
        Bounds of different lengths, not one-dimensional or not numeric.

    Examples
    --------
    >>> import numpy as np
    >>> time, status = np.array([5.0, 8.0, 3.0]), np.array([1, 0, 1])
    >>> y = Censored(time, np.where(status == 1, time, np.inf))
    >>> y.n_censored
    1
    """

    def __init__(self, lower: Any, upper: Any, name: str | None = None) -> None:
        low, high = _bound_series(lower, "lower"), _bound_series(upper, "upper")
        if len(low) != len(high):
            raise DataError(
                f"Censored(lower, upper): lower has {len(low)} values but upper {len(high)}; "
                "give one lower and one upper bound per row"
            )
        if isinstance(upper, pd.Series) and not isinstance(lower, pd.Series):
            low.index = high.index
        elif isinstance(lower, pd.Series) and not isinstance(upper, pd.Series):
            high.index = low.index
        elif not low.index.equals(high.index):
            same = low.index.is_unique and high.index.is_unique
            if not (same and len(low.index.symmetric_difference(high.index)) == 0):
                raise DataError(
                    "Censored(lower, upper): lower and upper are pandas Series paired by row "
                    "label, but their labels differ (or repeat); give both the same index, "
                    "or pass arrays (e.g. upper.to_numpy()) to pair them by position"
                )
            high = high.reindex(low.index)
        self.lower, self.upper = low, high
        #: whether the bounds came with their own row labels (pandas)
        self.labelled = isinstance(lower, pd.Series) or isinstance(upper, pd.Series)
        self.name = name or f"Censored({low.name or 'lower'}, {high.name or 'upper'})"

    def __len__(self) -> int:
        return len(self.lower)

    def __repr__(self) -> str:
        return f"<{self.name}: {len(self)} rows, {self.n_censored} censored>"

    @property
    def index(self) -> pd.Index:
        """Row labels."""
        return self.lower.index

    @property
    def n_censored(self) -> int:
        """Rows whose value is known only to lie in an interval."""
        low, high = self.lower.to_numpy(), self.upper.to_numpy()
        return int(np.sum(~(low == high) & ~(np.isnan(low) & np.isnan(high))))

    def positions(self) -> pd.Series:
        """Row positions (NaN for a missing response), the stand-in column of the design."""
        pos = np.arange(len(self), dtype=float)
        missing = self.lower.isna().to_numpy() & self.upper.isna().to_numpy()
        pos[missing] = np.nan
        return pd.Series(pos, index=self.index, name=self.name)

    def take(self, positions: Any) -> tuple[FloatArray, FloatArray]:
        """The bounds of the rows at ``positions`` (floats, from :meth:`positions`)."""
        rows = np.asarray(positions, dtype=float).astype(np.intp)
        return self.lower.to_numpy()[rows], self.upper.to_numpy()[rows]


def _bound_series(values: Any, which: str) -> pd.Series:
    """One bound as a float Series, or raise saying what is wrong."""
    if not isinstance(values, pd.Series) and np.ndim(values) != 1:
        raise DataError(f"Censored(lower, upper): {which} must be one value per row (1-d)")
    series = values if isinstance(values, pd.Series) else pd.Series(np.asarray(values))
    numbers = pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)
    if not numbers or pd.api.types.is_complex_dtype(series):
        raise DataError(
            f"Censored(lower, upper): {which} must be numeric (got dtype {series.dtype}); "
            "censored responses are numbers, with -inf / inf for open ends"
        )
    return series.astype(float)


def censored_stand_in(frame: pd.DataFrame, name: str, lower: str, upper: str) -> pd.DataFrame:
    """``frame`` with a column ``name`` standing in for the response ``Censored(lower, upper)``.

    The column is 0 where the row has bounds and NaN where both are missing, so
    that the missing-value rules of a design treat it as the response (infinite
    bounds are not missing values).  Used for rows read in chunks.

    Raises
    ------
    ResponseError
        A row with one bound missing.
    """
    low = frame[lower].to_numpy(dtype=float, na_value=np.nan)
    high = frame[upper].to_numpy(dtype=float, na_value=np.nan)
    _check_bounds_missing(low, high, name)
    return frame.assign(**{name: np.where(np.isnan(low), np.nan, 0.0)})


def check_censored_options(levels: Any) -> None:
    """Refuse options that do not apply to a censored response.

    Raises
    ------
    ResponseError
        With ``levels=`` (the levels of a censored response are its values).
    """
    if levels is not None:
        raise ResponseError(
            "levels= does not apply to a censored response: its levels are the exact values "
            "and censoring intervals, ordered as numbers; drop levels="
        )


# ---------------------------------------------------------------------------
# the formula's left-hand side

_CALL = re.compile(r"^\s*Censored\s*\((.*)\)\s*$", re.DOTALL)
#: a backticked name (a column whose name is not an identifier) and its stand-in
_BACKTICKED = re.compile(r"`([^`]*)`")
_PLACEHOLDER = re.compile(r"_quoted_(\d+)_")


def parse_censored(lhs: str) -> tuple[str, str] | None:
    """The two argument expressions of ``Censored(lower, upper)``, or None for another response.

    Raises
    ------
    FormulaError
        ``Censored(...)`` without exactly two arguments.
    """
    found = _CALL.match(lhs)
    if found is None:
        return None
    quoted: list[str] = []  # backticked names, which Python cannot parse, as placeholders

    def placeholder(match: re.Match[str]) -> str:
        quoted.append(match.group(0))
        return f"_quoted_{len(quoted) - 1}_"

    def restored(expr: str) -> str:
        return _PLACEHOLDER.sub(lambda m: quoted[int(m.group(1))], expr)

    try:
        call = ast.parse(f"f({_BACKTICKED.sub(placeholder, found.group(1))})", mode="eval").body
    except SyntaxError as exc:
        raise FormulaError(
            f"the response {lhs!r} is not valid Python ({exc.msg}); write it as "
            "'Censored(lower, upper) ~ ...' with two columns or expressions"
        ) from exc
    assert isinstance(call, ast.Call)
    if len(call.args) != 2 or call.keywords:
        raise FormulaError(
            f"the response {lhs!r} must have two arguments, Censored(lower, upper): the "
            "lower and upper end of each value's interval (-inf / inf for open ends)"
        )
    return restored(ast.unparse(call.args[0])), restored(ast.unparse(call.args[1]))


def censored_response(
    lhs: str, frame: pd.DataFrame, context: Mapping[str, Any] | None
) -> Censored | None:
    """Evaluate a formula's ``Censored(lower, upper)`` response on ``frame``.

    Each argument is a column name (backticks allowed) or a Python expression
    of the columns, the names in ``context`` and numpy as ``np`` (with ``inf``).

    Returns
    -------
    Censored or None
        None when the response is not ``Censored(...)``.
    """
    args = parse_censored(lhs)
    if args is None:
        return None
    bounds = [_evaluate_bound(arg, frame, context) for arg in args]
    return Censored(bounds[0], bounds[1], name=lhs.strip())


def _evaluate_bound(expr: str, frame: pd.DataFrame, context: Mapping[str, Any] | None) -> Any:
    name = expr.strip().strip("`")
    if name in frame.columns:
        return frame[name].reset_index(drop=True).set_axis(frame.index)
    namespace: dict[str, Any] = {"np": np, "inf": np.inf}
    namespace.update(context or {})
    namespace.update({str(c): frame[c] for c in frame.columns if str(c).isidentifier()})
    columns = {str(c): c for c in frame.columns}

    def bound_column(match: re.Match[str]) -> str:  # a backticked name in an expression
        if match.group(1) not in columns:
            raise FormulaError(
                f"the bound {expr!r} of Censored(lower, upper) names {match.group(1)!r}, "
                "which is not a column of the data"
            )
        key = f"_column_{len(namespace)}"
        namespace[key] = frame[columns[match.group(1)]]
        return key

    source = _BACKTICKED.sub(bound_column, expr)
    try:
        value = eval(compile(source, "<Censored bound>", "eval"), {"__builtins__": {}}, namespace)
    except Exception as exc:
        raise FormulaError(
            f"cannot evaluate the bound {expr!r} of Censored(lower, upper) on the data "
            f"({type(exc).__name__}: {exc}); use column names or expressions of them"
        ) from exc
    value = pd.Series(np.broadcast_to(np.asarray(value, dtype=float), (len(frame),)))
    return value.set_axis(frame.index)


# ---------------------------------------------------------------------------
# encoding


def _check_bounds_missing(lower: FloatArray, upper: FloatArray, name: str) -> None:
    one_missing = np.isnan(lower) != np.isnan(upper)
    if one_missing.any():
        raise ResponseError(
            f"the response {name!r} has {int(one_missing.sum())} row(s) with one bound missing "
            f"(first at position {int(np.flatnonzero(one_missing)[0])}). Use -inf for the lower "
            "bound of a left-censored value and inf for the upper bound of a right-censored "
            "one; a row with both bounds missing is a missing response"
        )


def _check_bounds(lower: FloatArray, upper: FloatArray, name: str) -> None:
    _check_bounds_missing(lower, upper, name)
    with np.errstate(invalid="ignore"):
        disordered = lower > upper
        open_both = np.isinf(lower) & np.isinf(upper) & ~disordered
        wrong_side = (lower == np.inf) | (upper == -np.inf)
    if disordered.any():
        i = int(np.flatnonzero(disordered)[0])
        raise ResponseError(
            f"the response {name!r} has {int(disordered.sum())} row(s) whose lower bound is "
            f"above the upper bound (first at position {i}: lower {lower[i]}, upper "
            f"{upper[i]}). Censored(lower, upper) needs lower <= upper; swap the bounds"
        )
    if (open_both | wrong_side).any():
        raise ResponseError(
            f"the response {name!r} has {int((open_both | wrong_side).sum())} row(s) with no "
            "finite bound (or lower = inf / upper = -inf): such a row says nothing about "
            "the response; drop it or give a finite bound"
        )
    if not np.any(lower == upper):
        raise ResponseError(
            f"every value of the response {name!r} is censored: the thresholds are anchored "
            "at exact values (rows with lower == upper), so at least one is needed (as in "
            "rms::orm)"
        )


def _open_shift(values: FloatArray) -> float:
    """Rms's ``eps``: 0.001 for integer data, ``1e-8`` otherwise."""
    return _EPS_INTEGER if np.all(values == np.round(values)) else _EPS_REAL


def _innermost(starts: IntArray, ends: IntArray) -> tuple[IntArray, IntArray]:
    """Turnbull's innermost intervals ``[l, r]`` of integer intervals ``[starts, ends]``.

    ``l`` is a start, ``r`` the first end at or after it, and no other start lies
    in ``(l, r]``.
    """
    lefts, rights = np.unique(starts), np.unique(ends)
    first_end = rights[np.minimum(np.searchsorted(rights, lefts), len(rights) - 1)]
    next_start = np.append(lefts[1:], np.iinfo(np.intp).max)
    valid = (first_end >= lefts) & (first_end < next_start)
    return lefts[valid], first_end[valid]


@dataclass(frozen=True)
class CensoredLevels:
    """The levels of a censored response: Turnbull's innermost intervals on a value grid.

    Maps any row's ``(lower, upper]`` to its range of levels, so that rows read in
    chunks are coded with the levels found in a first pass.

    Attributes
    ----------
    grid : ndarray
        The distinct finite bounds, sorted.
    lefts, rights : ndarray of int
        Each level's ends as positions on the grid (see :func:`grid_positions`).
    cell_lefts, cell_rights : ndarray of int or None
        Every innermost interval's ends, the levels among them (a fit may tie a
        level's thresholds, or free them again: :meth:`with_cells`).
    """

    grid: FloatArray
    lefts: IntArray
    rights: IntArray
    cell_lefts: IntArray | None = None
    cell_rights: IntArray | None = None

    @classmethod
    def of(
        cls, lower: FloatArray, upper: FloatArray, weights: FloatArray | None = None
    ) -> CensoredLevels:
        """The levels of the rows ``(lower, upper]`` (checked bounds) with their weights.

        Innermost intervals to which Turnbull's estimate gives no probability are
        left out (see :func:`~ordstats.families.cumulative.censoring.empty_levels`):
        a row covers the levels it contains, as before, and its probability is the
        same wherever those intervals have none.
        """
        finite = np.concatenate([lower[np.isfinite(lower)], upper[np.isfinite(upper)]])
        grid = np.unique(finite)
        starts, ends = grid_positions(grid, lower, upper)
        lefts, rights = _innermost(starts, ends)
        every = cls(grid, lefts, rights)
        w = np.ones(len(lower)) if weights is None else np.asarray(weights, dtype=float)
        low, high = every._codes_at(starts, ends)
        empty = empty_levels(high, low, w, every.n_levels)
        return cls(grid, lefts[~empty], rights[~empty], lefts, rights)

    @property
    def cells(self) -> CensoredLevels:
        """Every innermost interval as a level."""
        lefts = self.lefts if self.cell_lefts is None else self.cell_lefts
        rights = self.rights if self.cell_rights is None else self.cell_rights
        return CensoredLevels(self.grid, lefts, rights, lefts, rights)

    @property
    def kept_cells(self) -> BoolArray:
        """Which innermost intervals are levels."""
        return np.isin(self.cells.lefts, self.lefts)

    def with_cells(self, kept: BoolArray) -> CensoredLevels:
        """The innermost intervals ``kept`` as the levels."""
        cells = self.cells
        return CensoredLevels(
            self.grid, cells.lefts[kept], cells.rights[kept], cells.lefts, cells.rights
        )

    @property
    def key(self) -> tuple[bytes, bytes]:
        """What decides the codes of a row (for kept arrays)."""
        return (self.grid.tobytes() + self.lefts.tobytes(), self.rights.tobytes())

    @property
    def n_levels(self) -> int:
        """Number of levels."""
        return len(self.lefts)

    @property
    def values(self) -> FloatArray:
        """Each level's value (its exact value, or an open end moved by ``eps``)."""
        return _level_values(self.lefts, self.rights, self.grid)

    def codes(self, lower: FloatArray, upper: FloatArray) -> tuple[IntArray, IntArray]:
        """The lowest and highest level of each row ``(lower, upper]``.

        Raises
        ------
        ResponseError
            A bound that is not on the grid (data that changed after the first pass).
        """
        known = np.concatenate([self.grid, [-np.inf, np.inf]])
        if not (np.isin(lower, known).all() and np.isin(upper, known).all()):
            raise ResponseError(
                "a censoring bound was not seen by the first pass over the data; did the "
                "data change during the fit?"
            )
        return self._codes_at(*grid_positions(self.grid, lower, upper))

    def _codes_at(self, starts: IntArray, ends: IntArray) -> tuple[IntArray, IntArray]:
        """:meth:`codes` of rows given as positions on the grid (:func:`grid_positions`)."""
        low = np.searchsorted(self.lefts, starts, side="left")
        high = np.searchsorted(self.rights, ends, side="right") - 1
        return low.astype(np.intp), high.astype(np.intp)


def grid_positions(
    grid: FloatArray, lower: FloatArray, upper: FloatArray
) -> tuple[IntArray, IntArray]:
    """Each row's interval as integer positions on ``grid``.

    ``0`` is below ``grid[0]``, ``2i + 1`` is ``grid[i]`` and ``2i + 2`` the open
    interval just above it (``2m``: above the top), so ``(lower, upper]`` is
    ``[2a + 2, 2b + 1]`` and an exact value ``[2a + 1, 2a + 1]``.
    """
    m = len(grid)
    exact = lower == upper
    at_low = 2 * np.searchsorted(grid, np.where(np.isfinite(lower), lower, grid[0])) + 1
    at_high = 2 * np.searchsorted(grid, np.where(np.isfinite(upper), upper, grid[0])) + 1
    starts = np.where(exact, at_low, np.where(np.isfinite(lower), at_low + 1, 0))
    ends = np.where(np.isfinite(upper), at_high, 2 * m)
    return starts, ends


def encode_censored(
    lower: FloatArray,
    upper: FloatArray,
    *,
    name: str = "y",
    many_levels: bool = False,
    weights: FloatArray | None = None,
    rows: IntArray | None = None,
) -> EncodedResponse:
    """Encode censored values as ranges of levels (see the module).

    Parameters
    ----------
    lower, upper : ndarray, shape (n,)
        The interval ``(lower, upper]`` of each row (``lower == upper``: exact).
    name : str
        Name used in messages.
    many_levels : bool
        Accept more than 50 levels.
    weights : ndarray, shape (n,), optional
        The rows' weights (default one each): Turnbull's estimate behind the
        levels left out (see :meth:`CensoredLevels.of`) weighs the rows by them.
    rows : ndarray of int, shape (n,), optional
        How many rows each entry stands for (default one; the distinct bounds of
        data read in chunks), for the count in the warning on uninformative rows.

    Returns
    -------
    EncodedResponse
        ``codes`` the highest and ``lower_codes`` the lowest level of each row;
        ``censoring`` the :class:`CensoredLevels`.

    Raises
    ------
    ResponseError
        Disordered or missing bounds, no exact value, fewer than two levels, or
        more than 50 levels without ``many_levels=True``.
    """
    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    _check_bounds(lower, upper, name)
    levels = CensoredLevels.of(lower, upper, weights)
    n_levels = levels.n_levels
    if n_levels < 2:
        raise ResponseError(
            f"the response {name!r} has {n_levels} level after censoring; an ordinal model "
            "needs at least two"
        )
    if n_levels > MAX_LEVELS_DEFAULT and not many_levels:
        raise ResponseError(
            f"the censored response {name!r} has {n_levels} distinct levels; pass "
            "many_levels=True to fit one threshold per distinct value (as rms::orm)"
        )
    y_low, y = levels.codes(lower, upper)
    _warn_uninformative(y_low == 0, y == n_levels - 1, name, rows)
    values = levels.values
    return EncodedResponse(
        codes=y,
        levels=_labels(values),
        values=list(values),
        dropped_levels=[],
        lower_codes=y_low,
        censoring=levels,
        bounds=(lower, upper),
    )


def recode_censored(response: EncodedResponse, levels: CensoredLevels) -> EncodedResponse:
    """A censored response coded with other levels of the same innermost intervals.

    Parameters
    ----------
    response : EncodedResponse
        A censored response with its rows' bounds (:func:`encode_censored`).
    levels : CensoredLevels
        From ``response.censoring.with_cells(...)``.

    Returns
    -------
    EncodedResponse

    Raises
    ------
    ResponseError
        If a row would lie in no level, or fewer than two levels remain.
    """
    assert response.bounds is not None
    low, high = levels.codes(*response.bounds)
    if levels.n_levels < 2 or np.any(high < low):
        raise ResponseError(
            "the censored response's levels cannot be merged further: a row would lie in no level"
        )
    values = levels.values
    return replace(
        response,
        codes=high,
        lower_codes=low,
        levels=levels_labels(levels),
        values=list(values),
        censoring=levels,
    )


def _level_values(lefts: IntArray, rights: IntArray, values: FloatArray) -> FloatArray:
    """Each level's value: its exact value, an open end moved by ``eps``, or a left-open top."""
    eps = _open_shift(values)
    out = np.empty(len(lefts))
    for k, (left, right) in enumerate(zip(lefts, rights, strict=True)):
        if left % 2 == 1:  # closed at an exact value
            out[k] = values[left // 2]
        elif left == 0:  # below every value: left-censored rows; value its upper end
            out[k] = values[min(right // 2, len(values) - 1)]
        else:  # open just above values[left // 2 - 1]
            base = values[left // 2 - 1]
            out[k] = base + max(eps, 4.0 * np.spacing(abs(base)))
    return out


def levels_labels(levels: CensoredLevels) -> list[str]:
    """The labels of a censored response's levels (their values, made distinct)."""
    return _labels(levels.values)


def _labels(values: FloatArray) -> list[str]:
    labels = [format_level(float(v)) for v in values]
    seen: set[str] = set()
    for k in range(len(labels)):
        while labels[k] in seen:
            labels[k] += "+"
        seen.add(labels[k])
    return labels


def _warn_uninformative(bottom: Any, top: Any, name: str, rows: IntArray | None) -> None:
    """Rows that span every level have probability one: they inform nothing (orm drops them)."""
    every = np.asarray(bottom & top)
    if every.any():
        count = int(every.sum() if rows is None else np.asarray(rows)[every].sum())
        warnings.warn(
            f"response {name!r}: {count} row(s) are censored so that they "
            "cover every level (e.g. right-censored below the lowest exact value); their "
            "probability is one whatever the parameters, so they add nothing to the fit "
            "(rms::orm drops them)",
            LevelsWarning,
            stacklevel=user_stacklevel(),
        )


def refuse_censored(response: EncodedResponse, model: str) -> None:
    """Refuse a censored response where the model cannot fit one.

    Parameters
    ----------
    response : EncodedResponse
    model : str
        What the model is, for the message (``"family='sequential'"``, ...).

    Raises
    ------
    SpecificationError
        If ``response`` is censored.
    """
    if response.lower_codes is not None:
        raise SpecificationError(
            f"a censored response (Censored(lower, upper)) is not supported with {model}: "
            "only the cumulative link model without random effects fits censored rows "
            "(OrdinalModel with family='cumulative'). Drop the censored rows or fit that model"
        )
