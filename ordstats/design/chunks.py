"""Formula helpers for data read in chunks (fixed levels, exact row counts)."""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
from formulaic.errors import DataMismatchWarning, FormulaicError
from formulaic.transforms import TRANSFORMS
from formulaic.utils.layered_mapping import LayeredMapping

from ordstats._typing import CollinearAction, FloatArray
from ordstats.core.memory import held_empty
from ordstats.design.core import (
    TermsDesign,
    _bad_rows,
    _drop_aliased,
    _drop_nominal_aliases,
    _vector,
    missing_vector_values,
    non_finite_flags,
)
from ordstats.design.formula import (
    _check_required,
    _materialize,
    _side_formula,
    _terms_from_matrix,
    _with_intercept,
    refuse_response_in_terms,
    required_variables,
    split_formula,
)
from ordstats.design.monotonic import formula_context
from ordstats.design.newdata import _plain_numeric_columns
from ordstats.errors import (
    DataError,
    FormulaError,
    SpecificationError,
)

# ---------------------------------------------------------------------------
# formulas for data read in chunks


def formula_variables(formula: str) -> tuple[str, set[str]]:
    """Return the response name and every name the right-hand side of ``formula`` may use.

    formulaic's ``required_variables`` misses the arguments of stateful
    transforms, so every identifier of the formula is included as well.
    """
    lhs, rhs = split_formula(formula)
    return lhs, _rhs_variables(lhs, rhs, "location")


def _rhs_variables(response: str, rhs: str, part: str) -> set[str]:
    try:
        required = required_variables(rhs)
    except FormulaicError as exc:
        raise FormulaError(f"cannot parse the formula '{rhs}': {exc}") from exc
    refuse_response_in_terms(response, rhs, part)
    names = set(re.findall(r"`([^`]+)`", rhs))
    names |= set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", re.sub(r"`[^`]+`", " ", rhs)))
    return required | names


def side_formulas(response: str, nominal: Any, scale: Any) -> tuple[dict[str, str], set[str]]:
    """The right-hand sides of the nominal and scale formulas given, and the names they use.

    Each is checked as in memory (one-sided, not using the response).

    Returns
    -------
    sides : dict
        ``"nominal"``/``"scale"`` -> right-hand side, for the parts given.
    variables : set of str
        Every name the sides may use (see :func:`formula_variables`).
    """
    sides = {
        part: text
        for part, text in (
            ("nominal", _side_formula(nominal, "nominal")),
            ("scale", _side_formula(scale, "scale")),
        )
        if text is not None
    }
    variables: set[str] = set()
    for part, rhs in sides.items():
        variables |= _rhs_variables(response, rhs, part)
    return sides, variables


def categorical_variables(formula: str, sample: pd.DataFrame, context: Any) -> set[str]:
    """Columns of ``sample`` that ``formula`` encodes as factors (whose levels must be fixed)."""
    _, rhs = split_formula(formula)
    _check_required(rhs, sample, context)
    # the sample may lack a level that the formula names (relevel(g, ref = "c")); the
    # probe only classifies the columns: formulaic's note that a Categorical's missing
    # values are outside its levels would reach the user of a chunked fit only
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataMismatchWarning)
        spec = _materialize(rhs, sample, context, new_rows=True).model_spec
    found: set[str] = set()
    for expr, (kind, _state) in spec.encoder_state.items():
        if str(getattr(kind, "value", kind)) == "categorical":
            columns = set(map(str, sample.columns))
            found |= {expr} & columns or required_variables(expr) & columns
    return found


def fixed_level_terms(
    formula: str, prototype: pd.DataFrame, context: Any, part: str = "location"
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

    part : str
        ``"location"``, ``"nominal"`` or ``"scale"`` (for messages).

    Raises
    ------
    SpecificationError
        For stateful transforms (``center``, ``scale``, ``poly``, splines, ...),
        which would learn their state from one chunk instead of all rows.
    """
    lhs, rhs = split_formula(formula)
    try:
        rhs, matrix = _with_intercept(rhs, prototype, context, part)
    except FormulaError:
        # the prototype (a row per level) is too few rows for poly(x, 2) to learn from
        called = _stateful_calls(rhs, context)
        if called:
            raise _stateful_transforms_error(part, called) from None
        raise
    terms = replace(_terms_from_matrix(matrix, part), formula=rhs)
    learnt = [] if terms.spec is None else [k for k, v in terms.spec.transform_state.items() if v]
    if learnt:  # cut(x, c(0, 10, 20)) learns nothing: its state is empty
        raise _stateful_transforms_error(part, learnt)
    return f"{lhs} ~ {rhs}", terms


def _stateful_transforms_error(part: str, names: Sequence[str]) -> SpecificationError:
    return SpecificationError(
        f"the {'' if part == 'location' else part + ' '}formula uses stateful transforms "
        f"({', '.join(map(repr, names))}) that learn from all rows at "
        "once; with data read in chunks, compute these columns beforehand"
    )


def _stateful_calls(rhs: str, context: Any) -> list[str]:
    """The functions called in ``rhs`` that are formulaic's stateful transforms."""
    scope = LayeredMapping(formula_context(context), TRANSFORMS)
    called = dict.fromkeys(re.findall(r"([A-Za-z_][\w.]*)\s*\(", re.sub(r"`[^`]*`", " ", rhs)))
    stateful = [n for n in called if getattr(scope.get(n), "__is_stateful_transform__", False)]
    return [f"{name}()" for name in stateful]


def drop_aliased_by_gram(
    terms: TermsDesign,
    gram: FloatArray,
    collinear: CollinearAction,
    what: str = "location",
    raw: FloatArray | None = None,
    spread: FloatArray | None = None,
) -> TermsDesign:
    """Drop aliased columns of chunked data given the Gram matrix of ``[1, X]``.

    ``gram`` may be that of the centred columns (the same span); ``raw``, that
    of the columns as they are, then gives the aliased columns' combinations.
    ``spread``: each column's standard deviation divided by its largest
    ``|x|`` (a column constant to rounding is named as such).
    """
    return _drop_aliased(terms, collinear, what, gram=gram, raw_gram=raw, spread=spread)


def drop_nominal_aliases_by_gram(
    location: TermsDesign, nominal: TermsDesign, gram: FloatArray, collinear: CollinearAction
) -> TermsDesign:
    """Drop location columns of chunked data that a nominal effect contains.

    ``gram`` is the Gram matrix of ``[1, W, X]`` (nominal columns first).
    """
    return _drop_nominal_aliases(location, nominal, collinear, gram=gram)


def rows_to_drop(
    frame: pd.DataFrame, columns: Sequence[str], weights: str | None, offset: str | None
) -> pd.DataFrame:
    """Missing or non-finite values per row in the raw columns, weights and offset."""
    bad = _bad_rows(frame[list(dict.fromkeys(columns))])
    for role, name in (("weights", weights), ("offset", offset)):
        if name is not None:
            series = _vector(name, frame, len(frame), role)
            assert series is not None
            bad[role] = missing_vector_values(role, series)
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


def plain_numeric_terms(terms: TermsDesign, frame: pd.DataFrame) -> bool:
    """Whether each design column of ``terms`` is a numeric column of ``frame`` used as is.

    A part without columns qualifies.  Such a part's design is the columns
    themselves, so a chunk's design can be taken from them without
    formulaic (:func:`ordstats.data.chunks.chunk_arrays`).
    """
    return not terms.names or _plain_numeric_columns(terms, frame)


def numeric_column_flags(
    frame: pd.DataFrame, columns: Sequence[str]
) -> dict[str, tuple[FloatArray, np.ndarray | None]] | None:
    """Each column's values and non-finite flags, if every one of ``columns`` holds numbers.

    Returns
    -------
    dict or None
        Column -> (values as float64, boolean flags of missing or non-finite
        values, the flags as :func:`rows_to_drop` sets them, or None where
        every value is finite); None when a column has another type (text,
        categories, pandas' nullable types), is absent, or has a name that
        ``frame`` holds twice.
    """
    if not frame.columns.is_unique:
        return None
    dtypes = dict(zip(map(str, frame.columns), frame.dtypes, strict=True))
    wanted = list(dict.fromkeys(columns))
    if not all(isinstance(dtypes.get(n), np.dtype) and dtypes[n].kind in "fiub" for n in wanted):
        return None
    found: dict[str, tuple[FloatArray, np.ndarray | None]] = {}
    for name in wanted:
        values = frame[name].to_numpy(dtype=float)
        found[name] = (values, non_finite_flags(values))
    return found


#: Rows copied at a time by :func:`stack_columns` (the block stays in the CPU cache).
_STACK_ROWS = 4096


def stack_columns(columns: Sequence[FloatArray], n_rows: int, *, held: bool = False) -> FloatArray:
    """The columns side by side as one C-ordered ``(n_rows, len(columns))`` array.

    Filled a block of rows at a time, which is about three times faster than
    :func:`numpy.stack` for the tall designs of a chunk.  ``held``: the array
    will be kept for the life of a fit (:func:`ordstats.core.memory.held_empty`).
    """
    shape = (n_rows, len(columns))
    out = held_empty(shape) if held else np.empty(shape)
    for start in range(0, n_rows, _STACK_ROWS):
        block = out[start : start + _STACK_ROWS]
        for j, column in enumerate(columns):
            block[:, j] = column[start : start + _STACK_ROWS]
    return out
