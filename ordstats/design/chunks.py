"""Formula helpers for data read in chunks (fixed levels, exact row counts)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from formulaic import Formula
from formulaic.errors import FormulaicError

from ordstats._typing import CollinearAction, FloatArray
from ordstats.design.core import TermsDesign, _bad_rows, _drop_aliased, _vector
from ordstats.design.formula import (
    _check_required,
    _materialize,
    _terms_from_matrix,
    _with_intercept,
    refuse_response_in_terms,
    split_formula,
)
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
    try:
        required = set(Formula(rhs).required_variables)
    except FormulaicError as exc:
        raise FormulaError(f"cannot parse the formula '{rhs}': {exc}") from exc
    refuse_response_in_terms(lhs, rhs)
    names = set(re.findall(r"`([^`]+)`", rhs))
    names |= set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", re.sub(r"`[^`]+`", " ", rhs)))
    return lhs, required | names


def categorical_variables(formula: str, sample: pd.DataFrame, context: Any) -> set[str]:
    """Columns of ``sample`` that ``formula`` encodes as factors (whose levels must be fixed)."""
    _, rhs = split_formula(formula)
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
    lhs, rhs = split_formula(formula)
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
