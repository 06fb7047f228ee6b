"""Design dataclasses and the input checks shared by every interface."""

from __future__ import annotations

import difflib
import warnings
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from formulaic import ModelSpec

from ordstats._typing import CollinearAction, FloatArray, IntArray, MissingAction
from ordstats.core.linalg import ColumnMoments, column_reduce, weighted_gram
from ordstats.design.r_functions import evaluate_offset, is_offset
from ordstats.design.response import EncodedResponse
from ordstats.errors import (
    CollinearityWarning,
    DataError,
    FormulaError,
    MissingDataWarning,
    SpecificationError,
    user_stacklevel,
)

_ALIAS_TOL = 1e-7  # R's drop.coef / qr() tolerance on column norms
#: Largest sum of frequency weights: the likelihood and its derivatives (sums of
#: weighted terms and their products) must stay finite.
_MAX_TOTAL_WEIGHT = 1e150


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
    empty_levels : dict
        Factor column to its declared levels without rows in the fit: their
        effects are not estimated, so new data with them is predicted as NaN.
    moments : ColumnMoments or None
        Each column's mean and standard deviation, computed with the aliasing
        check (None for data read in chunks).
    aliased_by : ndarray, shape (len(aliased), 1 + len(names)), or None
        Each aliased column as the combination of the intercept and the kept
        columns that it equals on the fitted rows (``x_a = c_0 + sum_i c_i
        x_i``): the basis of what the fit cannot estimate (R's
        ``estimability::nonest.basis``).  None when no column was dropped or
        the combination is unknown.
    """

    matrix: FloatArray
    names: list[str]
    spec: ModelSpec | None = None
    aliased: list[str] = field(default_factory=list)
    source_names: list[str] = field(default_factory=list)
    formula: str | None = None
    empty_levels: dict[str, list[Any]] = field(default_factory=dict)
    #: means and standard deviations of the columns (of the rows in memory)
    moments: ColumnMoments | None = None
    #: the aliased columns as combinations of the intercept and the kept columns
    aliased_by: FloatArray | None = None

    def describe(self) -> str:
        """``"~ <formula>"`` or the column names, for reports."""
        return "~ " + (self.formula if self.formula else " + ".join(self.names))

    def term_codings(self, columns: Collection[str]) -> list[list[tuple[str, bool]]]:
        """Each term's variables and whether contrasts code them (R's terms ``factors``).

        ``True`` where the term codes the variable by contrasts (R's ``1``),
        ``False`` by every level (R's ``2``: ``bottle`` in ``temp:bottle``
        without ``bottle``'s main effect codes ``temp`` by every level).  A
        factor of an expression (``C(temp)``) is named by the one data column
        of ``columns`` it reads.  Empty without a formula.

        Parameters
        ----------
        columns : collection of str
            The data columns the formula reads.

        Returns
        -------
        list of list of (str, bool)
        """
        if self.spec is None:
            return []
        codings = []
        for structure in self.spec.structure:
            for scoped in structure.scoped_terms:
                if scoped.factors:
                    codings.append(
                        [(_column_of(f.factor, columns), bool(f.reduced)) for f in scoped.factors]
                    )
        return codings


def _column_of(factor: Any, columns: Collection[str]) -> str:
    """The data column a formula factor reads: its expression, or its one column."""
    expr = str(factor.expr)
    if expr in columns:
        return expr
    read = [v for v in getattr(factor, "variables", ()) if v in columns]
    return read[0] if len(read) == 1 else expr


@dataclass(frozen=True)
class DesignOptions:
    """How the formula layer builds a design (the design part of ``ModelOptions``).

    Attributes
    ----------
    levels : sequence, optional
        Order of the response levels, lowest first (required for unordered labels).
    missing : {"drop", "raise"}
        Rows with missing or non-finite values in used columns are dropped with a
        warning, or raise.
    collinear : {"drop", "raise", "keep"}
        Aliased design columns are dropped with a warning (as R's ``drop.coef``),
        raise, or are kept (for penalised fits, whose penalty estimates them).
    many_levels : bool
        Allow more than 50 response levels.
    """

    levels: Sequence[Any] | None = None
    missing: MissingAction = "drop"
    collinear: CollinearAction = "drop"
    many_levels: bool = False


DEFAULT_DESIGN_OPTIONS = DesignOptions()


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
    scale_offset : ndarray, shape (n,), or None
        Known part of the log scale, R's ``offset()`` term of the scale formula.
    scale_offset_name : str or None
        That term's text (``"offset(x)"``), evaluated again on new data.
    row_positions : ndarray of int or None
        Positions of the rows used in the data the design was built from
        (None where unknown): they select the fitted rows of that data even
        when its index repeats labels (:func:`select_fitted_rows`).
    weightless_positions : ndarray of int or None
        Positions of the complete rows left out only for a zero weight: R's
        model frame keeps them, so emmeans' reference grid counts them.
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
    scale_offset: FloatArray | None = None
    scale_offset_name: str | None = None
    row_positions: IntArray | None = None
    weightless_positions: IntArray | None = None


def select_fitted_rows(frame: pd.DataFrame, design: Design) -> pd.DataFrame:
    """The rows of ``frame`` (the data ``design`` was built from) that the fit used.

    By position where the design knows them and they point at its labels, so
    that an index that repeats labels selects each used row once; else by label.
    """
    if frame.index.equals(design.row_index):  # every row used: no copy
        return frame
    positions = design.row_positions
    if (
        positions is not None
        and (len(positions) == 0 or positions.max() < len(frame))
        and frame.index[positions].equals(design.row_index)
    ):
        return frame.iloc[positions]
    return frame.loc[design.row_index]


# ---------------------------------------------------------------------------
# small checks


def gram_with_intercept(matrix: FloatArray) -> FloatArray:
    """Gram matrix of ``[1, matrix]`` without forming the augmented matrix."""
    n, p = matrix.shape
    gram = np.empty((p + 1, p + 1))
    gram[0, 0] = n
    gram[0, 1:] = gram[1:, 0] = column_reduce(np.add, matrix)
    gram[1:, 1:] = weighted_gram(matrix)
    return gram


@dataclass(frozen=True)
class ColumnSummary:
    """Each column's smallest and largest value and its sum, from one pass.

    The extremes tell finite columns apart without an ``isfinite`` pass (both
    are finite exactly when every value is: ``NaN`` propagates through them)
    and give the scale of each column; the sums give the means.
    """

    minimum: FloatArray
    maximum: FloatArray
    total: FloatArray

    @property
    def finite(self) -> np.ndarray:
        """Whether every value of each column is finite."""
        return np.isfinite(self.minimum) & np.isfinite(self.maximum)


def column_summary(matrix: FloatArray) -> ColumnSummary:
    """:class:`ColumnSummary` of ``matrix`` (reductions over wide views of the rows).

    Parameters
    ----------
    matrix : ndarray, shape (n, p)

    Returns
    -------
    ColumnSummary
    """
    p = matrix.shape[1]
    if matrix.shape[0] == 0:
        return ColumnSummary(np.full(p, np.inf), np.full(p, -np.inf), np.zeros(p))
    with np.errstate(invalid="ignore", over="ignore"):
        # np.minimum / np.maximum propagate NaN as min / max do
        return ColumnSummary(
            column_reduce(np.minimum, matrix),
            column_reduce(np.maximum, matrix),
            column_reduce(np.add, matrix),
        )


def aliasing_gram(
    matrix: FloatArray, summary: ColumnSummary | None = None
) -> tuple[FloatArray, ColumnMoments]:
    """The Gram matrix of ``[1, C]`` for the aliasing check, and the columns' moments.

    ``C`` holds the columns of ``matrix`` rescaled and centred, spanning the same
    space as ``[1, matrix]``.  The aliasing check must not depend on units: each
    column is divided by its largest absolute value (``x * 1e-155`` would
    otherwise underflow in the Gram matrix) and centred, so that a column shifted
    far from zero (``x + 1e8``) keeps its variation instead of losing it to
    rounding in ``X'X``.  A column whose centred norm is below ``1e-10`` of its
    norm is constant to rounding and counts as zero (aliased with the
    intercept).  Since ``[1, X]`` and ``[1, X - 1 m']`` span the same space, the
    columns aliased in this Gram matrix are those of ``[1, X]``, judged relative
    to each column's variation about its mean.

    The same pass gives each column's mean and standard deviation
    (:class:`~ordstats.core.linalg.ColumnMoments`, the squared centred norms
    are the Gram matrix's diagonal), which the likelihood's conditioning check
    (:func:`~ordstats.core.linalg.shifted_basis`) reads instead of another pass.

    Parameters
    ----------
    matrix : ndarray, shape (n, p)
    summary : ColumnSummary, optional
        :func:`column_summary` of ``matrix`` if already computed: its extremes
        and sums replace a first pass (unless a sum overflowed).

    Returns
    -------
    gram : ndarray, shape (p + 1, p + 1)
    moments : ColumnMoments
    """
    n, p = matrix.shape
    if matrix.size == 0:
        return gram_with_intercept(matrix), ColumnMoments(np.zeros(p), np.zeros(p))
    summary = summary if summary is not None else column_summary(matrix)
    peak = np.maximum(summary.maximum, -summary.minimum)
    size = np.where(np.isfinite(peak) & (peak > 0), peak, 1.0)
    # the centred columns' sums and Gram matrix in row blocks through one small
    # buffer instead of an n x p copy
    buffer = np.empty((min(n, _BLOCK_ROWS), p))
    gram = np.zeros((p + 1, p + 1))
    gram[0, 0] = n
    # a column whose extremes agree is constant: its mean is that value exactly, so
    # that it centres to exact zeros (a rounded sum / n would leave ~1e-17 each)
    exactly_constant = summary.minimum == summary.maximum
    raw_mean = np.where(exactly_constant, summary.minimum, summary.total / n)
    moderate = (size >= _RAW_SIZE_RANGE[0]) & (size <= _RAW_SIZE_RANGE[1])
    if np.all(np.isfinite(raw_mean)) and np.all(moderate):
        # no square can under- or overflow: centre the columns as they are and
        # divide the small Gram matrix by the sizes afterwards (same numbers)
        for start in range(0, n, buffer.shape[0]):
            part = matrix[start : start + buffer.shape[0]]
            block = np.subtract(part, raw_mean, out=buffer[: part.shape[0]])
            gram[0, 1:] += column_reduce(np.add, block)
            gram[1:, 1:] += weighted_gram(block)
        gram[0, 1:] /= size
        gram[1:, 1:] /= np.outer(size, size)
        mean = raw_mean / size
    else:
        mean = _unit_mean(matrix, size, buffer, raw_mean)
        mean = np.where(exactly_constant, summary.minimum / size, mean)
        for block in _unit_blocks(matrix, size, buffer):
            block -= mean
            gram[0, 1:] += column_reduce(np.add, block)
            gram[1:, 1:] += weighted_gram(block)
    gram[1:, 0] = gram[0, 1:]
    squares = np.diag(gram)[1:].copy()  # ||c_j||^2
    # ||u_j||^2 = ||c_j||^2 + n m_j^2 for the unit-size column u_j = c_j + m_j
    constant = np.sqrt(squares) <= 1e-10 * np.sqrt(squares + n * mean * mean)
    inner = gram[1:, 1:]
    inner[constant, :] = 0.0
    inner[:, constant] = 0.0
    gram[0, 1:][constant] = gram[1:, 0][constant] = 0.0
    return gram, ColumnMoments(mean * size, np.sqrt(squares / n) * size)


def sampled_full_rank(
    matrix: FloatArray, summary: ColumnSummary | None = None
) -> ColumnMoments | None:
    """The columns' moments when a sample of the rows proves ``[1, matrix]`` of full column rank.

    The aliasing check (:func:`aliasing_gram`, :func:`aliased_columns`) finds
    the columns whose squared residual after projection on ``1`` and the
    earlier columns is below ``tol^2`` of their own (centred) squared norm.  A
    residual over a subset of the rows is at most the residual over all of
    them (the full data's coefficients do at least as well there), so the
    Cholesky pivots of the Gram matrix of ``[1, C]`` on every ``k``-th row,
    divided by the full data's squared norms, are lower bounds of the full
    data's pivots.  Where every one is at least :data:`_PROVEN_PIVOT`
    (``10^4 tol^2``, a hundred times the level below which the check recomputes
    a residual from the data) and no column is nearly constant, the full
    check would drop nothing.  This costs one pass over the rows (the squared
    norms, for the moments' standard deviations and the pivots' scale) instead
    of the full Gram matrix of the centred columns.

    Parameters
    ----------
    matrix : ndarray, shape (n, p)
    summary : ColumnSummary, optional
        :func:`column_summary` of ``matrix`` if already computed.

    Returns
    -------
    ColumnMoments or None
        The moments of :func:`aliasing_gram` (the standard deviations from
        the raw second moments, equal to rounding); ``None`` when the sample
        does not prove full rank (few rows; a column constant, far from zero
        relative to its spread (``|mean| > 10 sd``) or with extreme values; a
        column nearly collinear with earlier ones on the sampled rows): then
        the full check decides.
    """
    n, p = matrix.shape
    step = n // max(_SAMPLE_MIN_ROWS, n // _SAMPLE_EVERY)
    if p == 0 or step < 2:
        return None
    summary = summary if summary is not None else column_summary(matrix)
    peak = np.maximum(summary.maximum, -summary.minimum)
    raw_mean = summary.total / n
    usable = (
        np.isfinite(peak)
        & (peak >= _RAW_SIZE_RANGE[0])
        & (peak <= _RAW_SIZE_RANGE[1])
        & np.isfinite(raw_mean)
        & (summary.minimum < summary.maximum)
    )
    if not np.all(usable):
        return None
    # centred squared norms from the raw ones where that loses at most two digits
    raw_squares = np.einsum("ij,ij->j", matrix, matrix)
    centred = raw_squares - summary.total * raw_mean
    if not np.all(centred >= _CANCELLATION * raw_squares):
        return None
    squares = centred / (peak * peak)
    mean = raw_mean / peak
    sample = (matrix[::step] - raw_mean) / peak
    gram = np.empty((p + 1, p + 1))
    gram[0, 0] = sample.shape[0]
    gram[0, 1:] = gram[1:, 0] = sample.sum(axis=0)
    gram[1:, 1:] = sample.T @ sample
    norms = np.sqrt(np.concatenate([[float(n)], squares]))
    try:
        factor = np.linalg.cholesky(gram / np.outer(norms, norms))
    except np.linalg.LinAlgError:
        return None
    if not np.all(np.diag(factor) ** 2 >= _PROVEN_PIVOT):
        return None
    return ColumnMoments(mean * peak, np.sqrt(squares / n) * peak)


#: Rows of the sample of :func:`sampled_full_rank`: every ``k``-th row, about
#: one in :data:`_SAMPLE_EVERY` and at least :data:`_SAMPLE_MIN_ROWS` of them.
_SAMPLE_EVERY = 20
_SAMPLE_MIN_ROWS = 2000
#: Smallest sampled pivot that proves a column is not aliased (the full check
#: recomputes residuals below ``(100 tol)^2`` from the data, and drops below ``tol^2``).
_PROVEN_PIVOT = 1e4 * _ALIAS_TOL**2
#: Smallest centred squared norm, relative to the uncentred one, of a column
#: :func:`sampled_full_rank` accepts (:func:`aliasing_gram` counts a column as
#: constant below 1e-20): columns far from zero (``|mean| > 10 sd``) go to the
#: full check, which centres them before squaring.
_CANCELLATION = 1e-2


#: Rows per block of :func:`aliasing_gram`.
_BLOCK_ROWS = 16384
#: Column sizes for which :func:`aliasing_gram` need not rescale the rows.
_RAW_SIZE_RANGE = (1e-100, 1e100)


def _unit_mean(
    matrix: FloatArray, size: FloatArray, buffer: FloatArray, raw_mean: FloatArray
) -> FloatArray:
    """The means of the unit-size columns ``matrix / size``."""
    if np.all(np.isfinite(raw_mean)):
        return raw_mean / size
    # a raw sum overflowed (values near 1e308): sum the unit-size columns
    total = np.zeros(matrix.shape[1])
    for block in _unit_blocks(matrix, size, buffer):
        total += column_reduce(np.add, block)
    return total / matrix.shape[0]


def _unit_blocks(matrix: FloatArray, size: FloatArray, buffer: FloatArray) -> Iterator[FloatArray]:
    """Row blocks of ``matrix / size``, each written into ``buffer`` (overwritten)."""
    rows = buffer.shape[0]
    for start in range(0, matrix.shape[0], rows):
        part = matrix[start : start + rows]
        yield np.divide(part, size, out=buffer[: part.shape[0]])


def aliased_columns(
    gram: FloatArray,
    tol: float = _ALIAS_TOL,
    block: int = 64,
    residual: Callable[[int, list[int]], float] | None = None,
) -> list[int]:
    """Return the columns that are (numerically) combinations of earlier ones.

    Columns are taken in order, as R's ``qr()`` (LINPACK ``dqrdc2``) does, so the
    later of two collinear columns is the one reported.  Column ``j`` is aliased
    when its squared residual norm after projection on the kept earlier columns,
    relative to its own squared norm, is below ``tol^2``; both come from the Gram
    matrix of unit-norm columns, ``1 - g_K' G_KK^{-1} g_K``.

    That residual is the pivot of a Cholesky factorisation in column order that
    skips aliased columns, computed here blockwise (left-looking, the updates by
    matrix products), so a factor with a thousand levels costs one Cholesky
    instead of one solve per column.

    Parameters
    ----------
    gram : ndarray, shape (p, p)
        ``X'X`` of the design (see :func:`gram_with_intercept`).
    tol : float
        Relative tolerance on column norms.
    block : int
        Columns per block of the factorisation.
    residual : callable, optional
        ``residual(j, kept)``: the relative residual norm of column ``j`` after
        projection on the columns ``kept``, computed from the data.  The Gram
        matrix squares the columns, so its residuals carry an absolute error of
        about ``1e-14``: a kept column whose squared residual is below
        ``(100 tol)^2`` is checked again with ``residual`` (R's ``qr`` works
        on the data too).

    Returns
    -------
    list of int
    """
    p = gram.shape[0]
    norms = np.sqrt(np.diag(gram))
    zero = norms <= np.sqrt(np.finfo(float).tiny)
    safe = np.where(zero, 1.0, norms)
    scaled = gram / np.outer(safe, safe)
    # L[:, k] is the Cholesky column of kept column k; aliased columns stay zero
    L = np.zeros((p, p))
    aliased: list[int] = []
    for j0 in range(0, p, block):
        j1 = min(j0 + block, p)
        S = scaled[j0:, j0:j1] - L[j0:, :j0] @ L[j0:j1, :j0].T
        for k in range(j1 - j0):
            j = j0 + k
            resid = S[k, k]
            if zero[j] or resid < tol * tol:
                aliased.append(j)
                continue
            if residual is not None and resid < (100 * tol) ** 2:
                done = set(aliased)
                if residual(j, [i for i in range(j) if i not in done]) < tol:
                    aliased.append(j)
                    continue
            col = S[k:, k] / np.sqrt(resid)
            L[j:, j] = col
            S[k + 1 :, k + 1 :] -= np.outer(col[1:], col[1 : j1 - j])
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


def align_to_index(value: Any, index: pd.Index, role: str, reference: str) -> Any:
    """Reorder a pandas ``value`` to ``index`` by label; other values pass as they are.

    pandas inputs are paired by index label, as in statsmodels and pandas: the
    same labels in another order are reordered to ``index``; different labels
    raise rather than pair rows by position.

    Raises
    ------
    DataError
        If the labels of ``value`` are not those of ``index``.
    """
    if not isinstance(value, (pd.Series, pd.DataFrame)) or value.index.equals(index):
        return value
    same = (
        len(value.index) == len(index)
        and index.is_unique
        and value.index.is_unique
        and bool((index.get_indexer(value.index) >= 0).all())
    )
    if same:
        return value.reindex(index)
    if index.is_unique and value.index.is_unique:
        absent = value.index.difference(index, sort=False)
        extra = index.difference(value.index, sort=False)
        shown = ", ".join(map(repr, list(absent[:3]) + list(extra[:3])))
        detail = f"{len(absent) + len(extra)} label(s) are not in both (e.g. {shown})"
    else:
        detail = "one of them has duplicated labels"
    raise DataError(
        f"the index of {role} does not hold the same labels as the index of {reference}: "
        f"{detail}. pandas inputs are paired by index label; give them the same labels "
        "(e.g. .reset_index(drop=True) on each), or pass numpy arrays (.to_numpy()) to "
        "pair rows by position"
    )


def _vector(value: Any, data: pd.DataFrame | None, n: int, role: str) -> pd.Series | None:
    """A weights/offset argument (column name or array) as a Series, or None.

    A pandas Series is aligned on the index of ``data`` (:func:`align_to_index`).
    """
    if value is None:
        return None
    if isinstance(value, str):
        if data is None:
            raise DataError(f"{role}={value!r} names a column, but no data frame was given")
        if role.endswith("offset") and value not in data.columns and is_offset(value):
            return evaluate_offset(value, data)  # R's offset(log(t)) term of the formula
        series = _column(data, value, f"{role} column")
        _check_vector_dtype(role, series.dtype, value)
    elif isinstance(value, pd.Series) and data is not None:
        series = align_to_index(value, data.index, role, "the data")
    else:
        arr = np.asarray(value)
        if arr.ndim != 1 or arr.shape[0] != n:
            raise DataError(f"{role} must be one value per row ({n}); got shape {arr.shape}")
        index = data.index if data is not None else pd.RangeIndex(n)
        series = pd.Series(arr, index=index)
        if isinstance(getattr(value, "dtype", None), pd.CategoricalDtype):
            series = series.astype(value.dtype)  # refused below, as a column named by text is
    _check_vector_dtype(role, series.dtype)
    return series.astype(float)


def _check_vector_dtype(role: str, dtype: Any, column: str | None = None) -> None:
    """Refuse weights or offsets that are not real numbers (text, booleans, categories, complex).

    ``column``: the data column that holds them, named in the message.
    """
    if not pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype):
        where = "" if column is None else f" in the column {column!r}"
        raise DataError(f"{role} must be numeric; got dtype {dtype}{where}")
    if pd.api.types.is_complex_dtype(dtype):
        raise DataError(complex_values_message(role, dtype))


def complex_values_message(role: str, dtype: Any) -> str:
    """Why complex ``role`` values (weights, an offset) are refused, and what to give instead.

    Parameters
    ----------
    role : str
        What the values are (``"weights"``, ``"offset"``).
    dtype : dtype
        Their complex type.

    Returns
    -------
    str
    """
    return (
        f"{role} must be real numbers; got complex numbers ({dtype}), whose imaginary part "
        f"would be dropped. Give real values (np.real or np.abs of the {role}, if that is "
        "what is meant)"
    )


def sorted_levels(values: Iterable[Any]) -> list[Any]:
    """A text factor's distinct values in the order of its levels.

    Sorted; values of mixed types (numbers and text), which Python cannot
    sort, in pandas' order (numbers before text), which the in-memory design's
    categories take.
    """
    values = list(values)
    try:
        return sorted(values)
    except TypeError:
        return list(pd.Categorical(pd.Series(values, dtype=object)).categories)


def with_text_column_names(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its column names as text (``0`` -> ``"0"``), which formulas use.

    A formula names a column by text (`` `0` ``); pandas would not find the
    integer column ``0`` by it.  Names that would then repeat are left alone.
    """
    names = [str(c) for c in frame.columns]
    if all(isinstance(c, str) for c in frame.columns) or len(set(names)) < len(names):
        return frame
    return frame.set_axis(names, axis=1)


def unusable_dtype(name: str, dtype: Any) -> str | None:
    """Why a column of ``dtype`` cannot enter a design as it is, or None if it can.

    Dates and durations have no product with a coefficient; complex numbers
    would lose their imaginary part in the float design (numpy casts them with
    a warning only).  The reason names the conversion to make.
    """
    if pd.api.types.is_datetime64_any_dtype(dtype) or pd.api.types.is_timedelta64_dtype(dtype):
        return (
            f"the column {name!r} holds dates or durations ({dtype}), which a formula "
            f"cannot use as they are; convert it to numbers first, e.g. "
            f"(data[{name!r}] - data[{name!r}].min()).dt.days for dates or "
            f"data[{name!r}].dt.total_seconds() for durations, or to categories"
        )
    if isinstance(dtype, pd.PeriodDtype):
        return (
            f"the column {name!r} holds periods ({dtype}), which a formula cannot use as "
            f"they are; convert it to numbers first, e.g. data[{name!r}].dt.year or "
            f"(data[{name!r}] - data[{name!r}].min()).apply(lambda d: d.n), or to categories "
            f"(data[{name!r}].astype(str))"
        )
    if pd.api.types.is_complex_dtype(dtype):
        return (
            f"the column {name!r} holds complex numbers ({dtype}); a design holds real "
            f"numbers only: give its real part, modulus or angle as columns of their own "
            f"(np.real, np.abs or np.angle of data[{name!r}])"
        )
    return None


def refuse_repeated_columns(
    columns: Iterable[Any], used: Iterable[str], what: str = "the data"
) -> None:
    """Raise a :class:`DataError` naming the used columns whose name appears more than once.

    Parameters
    ----------
    columns : iterable
        The column names of the data.
    used : iterable of str
        The names a model uses (response, terms, weights, offset).
    what : str
        How the message names the data (``"newdata"`` at prediction).
    """
    seen: set[str] = set()
    repeated: set[str] = set()
    for name in map(str, columns):
        (repeated if name in seen else seen).add(name)
    twice = [name for name in dict.fromkeys(used) if name in repeated]
    if twice:
        raise DataError(
            f"{what} has more than one column named {', '.join(map(repr, twice))}; "
            "rename or drop the duplicates (e.g. data.loc[:, ~data.columns.duplicated()])"
        )


def non_finite_flags(values: FloatArray) -> np.ndarray | None:
    """Flags of the missing or non-finite values, or None when every value is finite.

    The sum of the values is finite only when every value is (a NaN or an
    infinity makes it NaN or infinite), so a clean column costs one sum
    instead of an array of flags; a sum that overflows is checked value by
    value.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        if np.isfinite(np.add.reduce(values)):
            return None
    flags = ~np.isfinite(values)
    return flags if flags.any() else None


def _bad_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """Boolean frame: missing, or non-finite where numeric."""
    if len(frame.columns) and all(
        isinstance(d, np.dtype) and d.kind in "fiub" for d in frame.dtypes
    ):
        # plain numpy numbers only: column by column (integers and booleans are finite,
        # a float column whose sum is finite too), without copying the columns into one
        # array (pandas' interleave of 10^6 x 21 took 0.4 s, a third of a fit)
        flags = np.zeros((len(frame), len(frame.columns)), dtype=bool)
        for j, dtype in enumerate(frame.dtypes):
            found = non_finite_flags(frame.iloc[:, j].to_numpy()) if dtype.kind == "f" else None
            if found is not None:
                flags[:, j] = found
        return pd.DataFrame(flags, index=frame.index, columns=frame.columns)
    # one array, framed once: assigning column by column splits the frame into a
    # block per column, and pandas warns (PerformanceWarning) when the callers then
    # add the weights' column to a frame of more than 100 of them
    bad = frame.isna().to_numpy(dtype=bool, copy=True)
    for j in range(len(frame.columns)):
        s = frame.iloc[:, j]
        if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
            bad[:, j] |= ~np.isfinite(s.to_numpy(dtype=float, na_value=np.nan))
    return pd.DataFrame(bad, index=frame.index, columns=frame.columns)


def missing_vector_values(role: str, values: pd.Series) -> np.ndarray:
    """The rows whose weight or offset is missing (dropped, as R's ``na.omit`` drops them).

    An infinite weight or offset is not a missing value: R's ``clm`` stops on it
    ("Non-finite log-likelihood at starting value"), and so does ordstats.

    Raises
    ------
    DataError
        Infinite values.
    """
    numbers = values.to_numpy(dtype=float, na_value=np.nan)
    infinite = np.isinf(numbers)
    if infinite.any():
        labels = ", ".join(map(repr, list(values.index[infinite][:3])))
        raise DataError(
            f"{role} must be finite; {int(infinite.sum())} value(s) are infinite (rows "
            f"{labels}{', ...' if infinite.sum() > 3 else ''}), which would make the "
            "log-likelihood infinite (R's clm stops on them too). Give those rows a finite "
            "value, or drop them (a missing value is dropped with a warning)"
        )
    return np.isnan(numbers)


def _report_missing(bad: pd.DataFrame, missing: MissingAction) -> pd.Series:
    """Apply the missing-value policy; return the mask of rows to drop."""
    values = bad.to_numpy(dtype=bool)
    drop = values.any(axis=1)
    if drop.any():  # the per-column counts only when there is something to report
        per_column = pd.Series(values.sum(axis=0), index=bad.columns)
        report_missing_counts(int(drop.sum()), len(bad), per_column, missing)
    return pd.Series(drop, index=bad.index)


def report_missing_counts(
    n_bad: int, n_rows: int, per_column: pd.Series, missing: MissingAction
) -> None:
    """Warn (``missing="drop"``) or raise (``"raise"``) about ``n_bad`` of ``n_rows`` bad rows.

    Parameters
    ----------
    n_bad, n_rows : int
    per_column : pandas.Series
        Bad values per column.
    missing : {"drop", "raise"}
    """
    if not n_bad:
        return
    per_col = ", ".join(f"{c!r} ({int(k)})" for c, k in per_column.items() if k)
    text = f"{n_bad} of {n_rows} rows have missing or non-finite values in {per_col}"
    if n_bad == n_rows:
        raise DataError(
            f"every row has a missing or non-finite value: {text[text.index('in ') + 3 :]}; "
            "nothing is left to fit. Fill in or remove those columns"
        )
    if missing == "raise":
        raise DataError(text + "; drop them first or pass missing='drop'")
    warnings.warn(
        text + "; these rows were dropped", MissingDataWarning, stacklevel=user_stacklevel()
    )


def check_choice(name: str, value: Any, choices: Sequence[str]) -> None:
    """Raise a :class:`SpecificationError` naming the allowed values of an option."""
    if value not in choices:
        raise SpecificationError(
            f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}"
        )


def _check_options(missing: Any, collinear: Any) -> None:
    check_choice("missing", missing, ("drop", "raise"))
    check_choice("collinear", collinear, ("drop", "raise", "keep"))


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
    with np.errstate(over="ignore"):
        total = float(np.sum(w))
    if not total <= _MAX_TOTAL_WEIGHT:
        raise DataError(
            f"the weights sum to {total:.3g}, too large to compute the likelihood with; "
            "frequency weights count observations: rescale them to counts"
        )
    return w, w == 0


def _remove_columns(
    terms: TermsDesign, aliased: list[int], collinear: CollinearAction, reason: str, fix: str
) -> TermsDesign:
    """Drop aliased columns with a warning, or raise, per ``collinear``."""
    if not aliased or collinear == "keep":
        return terms
    names = [terms.names[j] for j in aliased]
    text = reason.format(names=", ".join(map(repr, names)))
    if collinear == "raise":
        raise SpecificationError(f"{text}; {fix} or pass collinear='drop'")
    warnings.warn(
        f"{text}; it was dropped (as R's clm does)",
        CollinearityWarning,
        stacklevel=user_stacklevel(),  # reached from formulas, arrays and chunks
    )
    keep = [j for j in range(len(terms.names)) if j not in set(aliased)]
    return replace(
        terms,
        matrix=terms.matrix[:, keep],
        names=[terms.names[j] for j in keep],
        aliased=terms.aliased + names,
        moments=None if terms.moments is None else terms.moments.take(keep),
        aliased_by=None,  # set by the caller that knows the combinations
    )


def aliased_combinations(gram: FloatArray, aliased: list[int]) -> FloatArray | None:
    """Each aliased column of ``[1, X]`` as a combination of the intercept and the others.

    Parameters
    ----------
    gram : ndarray, shape (p + 1, p + 1)
        The Gram matrix of ``[1, X]`` (the data's units).
    aliased : list of int
        Positions in ``X`` of the aliased columns.

    Returns
    -------
    ndarray, shape (len(aliased), p + 1 - len(aliased)), or None
        Row ``a``: the least-squares coefficients of column ``aliased[a]`` on
        ``[1, kept columns]``, exact for a column that is such a combination
        (the normal equations ``G_kk c = G_ka``); None if they cannot be solved.
    """
    drop = {j + 1 for j in aliased}
    kept = [j for j in range(gram.shape[0]) if j not in drop]
    lost = [j + 1 for j in aliased]
    try:
        solved = np.linalg.solve(gram[np.ix_(kept, kept)], gram[np.ix_(kept, lost)])
    except np.linalg.LinAlgError:
        return None
    return solved.T if np.isfinite(solved).all() else None


def _data_residual(matrix: FloatArray) -> Callable[[int, list[int]], float]:
    """Residuals of the columns of ``[1, matrix]`` computed from the data, by QR."""

    def column(j: int) -> FloatArray:
        x = np.ones(matrix.shape[0]) if j == 0 else matrix[:, j - 1]
        return x / np.linalg.norm(x)

    def residual(j: int, kept: list[int]) -> float:
        x = column(j)
        if not kept:
            return float(np.linalg.norm(x))
        Q = np.linalg.qr(np.column_stack([column(i) for i in kept]))[0]
        return float(np.linalg.norm(x - Q @ (Q.T @ x)))

    return residual


def _drop_aliased(
    terms: TermsDesign,
    collinear: CollinearAction,
    what: str,
    gram: FloatArray | None = None,
    moments: ColumnMoments | None = None,
    raw_gram: FloatArray | None = None,
    spread: FloatArray | None = None,
) -> TermsDesign:
    """Drop columns aliased with the intercept or earlier columns (R's drop.coef).

    ``gram`` is the Gram matrix of ``[1, X]`` when the rows are not in ``terms``
    (chunked data; its columns may be centred, with ``raw_gram`` that of the
    columns as they are, and ``spread`` each column's standard deviation
    divided by its largest ``|x|``), or :func:`aliasing_gram` with its
    ``moments`` when already computed; the moments are kept on the returned design.
    """
    residual = None
    if gram is None:
        proven = sampled_full_rank(terms.matrix)
        if proven is not None:  # nothing to drop
            return replace(terms, moments=proven)
        gram, moments = aliasing_gram(terms.matrix)
    if moments is not None:  # the rows are in memory
        terms = replace(terms, moments=moments)
        residual = _data_residual(terms.matrix)
    aliased = [j - 1 for j in aliased_columns(gram, residual=residual) if j > 0]
    reason = (
        (
            f"the {what} design is rank deficient: {{names}} is a linear combination of the "
            "thresholds (intercept) or earlier columns"
        )
        + _nearly_constant_note(terms, aliased, spread)
        + _empty_level_note(terms, aliased)
    )
    dropped = _remove_columns(terms, aliased, collinear, reason, "remove it")
    if not aliased or terms.aliased:
        return dropped
    # the combinations in the data's units (the check's Gram matrix is rescaled in memory)
    if moments is not None:  # the rows are in memory
        raw = gram_with_intercept(terms.matrix)
    else:
        raw = gram if raw_gram is None else raw_gram
    return replace(dropped, aliased_by=aliased_combinations(raw, aliased))


def _empty_level_note(terms: TermsDesign, aliased: list[int]) -> str:
    """Say which factor levels no row has, when their zero columns are among ``aliased``.

    R drops such levels before coding (``model.frame(drop.unused.levels = TRUE)``),
    so it reports no coefficient for them: the column is not collinear data.
    """
    if not aliased or not terms.empty_levels:
        return ""
    levels = ", ".join(
        f"{level!r} of {column!r}"
        for column, unused in terms.empty_levels.items()
        for level in unused
    )
    note = (
        f" (no row has the factor level(s) {levels}, whose columns are zero; R drops "
        "unused levels before coding, so it shows no coefficient for them)"
    )
    return note.replace("{", "{{").replace("}", "}}")


def _nearly_constant_note(
    terms: TermsDesign, aliased: list[int], spreads: FloatArray | None = None
) -> str:
    """Say so when an aliased column varies, but only in its last digits (``x + 1e10``).

    ``spreads``: each column's standard deviation divided by its largest
    ``|x|``, where the rows are not in ``terms`` (chunked data).
    """
    if spreads is None and terms.matrix.shape[0] < 2:
        return ""
    notes = []
    for j in aliased:
        if spreads is not None:
            spread = float(spreads[j])
        else:
            x = terms.matrix[:, j]
            size = float(np.max(np.abs(x)))
            if not np.isfinite(size) or size == 0.0:
                continue
            spread = float(np.std(x / size))
        if 0.0 < spread < 1e-6:
            notes.append(
                f"{terms.names[j]!r} varies by only {spread:.1e} of its size, so it is "
                "numerically constant; centre it (e.g. x - x.mean()) to keep it"
            )
    return (" (" + "; ".join(notes) + ")").replace("{", "{{").replace("}", "}}") if notes else ""


def _drop_nominal_aliases(
    location: TermsDesign,
    nominal: TermsDesign,
    collinear: CollinearAction,
    gram: FloatArray | None = None,
) -> TermsDesign:
    """Drop location columns that a nominal effect already contains.

    A nominal effect ``w'gamma_j`` includes the location shift ``gamma_j = c`` for
    all ``j``, so a location column in the span of ``[1, W]`` is not identified.
    ``gram`` is the Gram matrix of ``[1, W, X]`` when the rows are not in the
    designs (chunked data).
    """
    if not location.names or not nominal.names:
        return location
    r = len(nominal.names)
    residual = None
    if gram is None:
        stacked = np.column_stack([nominal.matrix, location.matrix])
        gram, _ = aliasing_gram(stacked)
        # the Gram matrix's residuals err by ~1e-14: near-aliased columns are checked
        # on the data (log(x) spanned by a:log(x) + b:log(x) left 3e-14 and was kept)
        residual = _data_residual(stacked)
    aliased = [j - 1 - r for j in aliased_columns(gram, residual=residual) if j > r]
    reason = (
        "{names} in the location formula is also a nominal effect, which already "
        "contains its location shift (not with threshold='symmetric2', whose nominal "
        "effects move only the spacings: there collinear='keep' estimates both)"
    )
    return _remove_columns(location, aliased, collinear, reason, "remove it from one formula")


#: The error for data without a single row.
NO_ROWS = "the data have no rows; an ordinal model needs rows with at least two different responses"


def weightless_rows(bad: pd.DataFrame, keep: IntArray) -> IntArray:
    """Positions of the complete rows of ``bad`` that ``keep`` leaves out (zero weights)."""
    return np.setdiff1d(np.flatnonzero(~bad.to_numpy(dtype=bool).any(axis=1)), keep)


def rows_to_keep(
    bad: pd.DataFrame,
    missing: MissingAction,
    weights: pd.Series | None,
    offset: pd.Series | None,
) -> tuple[IntArray, FloatArray, FloatArray]:
    """Apply the missing-value policy, then leave out rows of zero weight.

    Returns the positions of the rows kept with their weights and offsets.

    Raises
    ------
    DataError
        The data have no rows, or missing values leave none.
    """
    if len(bad) == 0:
        raise DataError(NO_ROWS)
    drop = _report_missing(bad, missing).to_numpy()
    w, zero_w = _check_weights(weights[~drop] if weights is not None else None, int((~drop).sum()))
    keep = np.flatnonzero(~drop)[~zero_w]
    kept_offset = offset.to_numpy(dtype=float)[keep] if offset is not None else np.zeros(len(keep))
    return keep, w[~zero_w], kept_offset
