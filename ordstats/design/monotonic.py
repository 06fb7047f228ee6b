r"""Monotonic predictors ``mo(x)`` (Buerkner and Charpentier 2020, as brms' ``mo()``).

An ordinal predictor ``x`` with levels ``0, 1, ..., D`` enters the linear predictor as

.. math::

    b\,D \sum_{i=1}^{x} \zeta_i, \qquad \zeta \in \text{simplex}(D),

a monotone effect whose total size (from the lowest to the highest level) is ``b D``
and whose steps are the shares ``zeta_i``.  With ``c_i = b D zeta_i`` the term is the
linear term ``sum_i c_i 1[x >= i]``: :func:`mo` writes the ``D`` step indicators
``1[x >= i]`` as the columns ``mo(x)[1] ... mo(x)[D]``, and the Bayesian fit
(:mod:`ordstats.estimation.bayes_language`) puts the non-linear map
``(b, zeta) -> c`` between its parameters and these columns.

The levels are an ordered categorical's categories in their order, or the integers
``0 .. max(x)`` of a numeric column of whole numbers ``>= 0`` (as brms).  :func:`mo` is a
formulaic stateful transform: it learns the levels from the fitted rows, so new data
are coded the same way.  ``mo`` is available in ordstats' formulas only: it is passed
to formulaic in the evaluation context (:func:`formula_context`), never registered in
formulaic's global transforms, so other formulaic code does not see it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd
from formulaic.transforms import stateful_transform
from formulaic.utils.layered_mapping import LayeredMapping

from ordstats.design.r_functions import NEW_ROWS_R_FUNCTIONS, R_FUNCTIONS, callers_names
from ordstats.errors import DataError

__all__ = ["FORMULA_TRANSFORMS", "MonotonicBlock", "formula_context", "mo", "monotonic_blocks"]

_COLUMN = re.compile(r"^mo\((.+)\)\[(\d+)\]$")


def _ordered_codes(values: pd.Series, levels: list[Any] | None) -> tuple[np.ndarray, list[Any]]:
    """Codes 0..D of an ordered categorical and its categories (learnt or given)."""
    categories = list(values.cat.categories) if levels is None else levels
    codes = pd.Categorical(values, categories=categories, ordered=True).codes
    unknown = (codes < 0) & values.notna().to_numpy()
    if unknown.any():
        raise DataError(
            f"mo(): values {sorted(set(values[unknown].astype(str)))[:5]} are not levels of the "
            f"fitted predictor ({', '.join(map(str, categories))})"
        )
    out = codes.astype(float)
    out[codes < 0] = np.nan
    return out, categories


def _integer_codes(values: pd.Series, levels: list[Any] | None) -> tuple[np.ndarray, list[Any]]:
    """Codes of a numeric column of whole numbers ``>= 0``: the levels are ``0 .. max``."""
    x = values.to_numpy(dtype=float, na_value=np.nan)
    seen = x[np.isfinite(x)]
    if np.any(seen != np.round(seen)) or np.any(seen < 0):
        bad = seen[(seen != np.round(seen)) | (seen < 0)][:3]
        raise DataError(
            f"mo() needs an ordinal predictor: an ordered categorical "
            f"(pd.Categorical(x, categories=[...], ordered=True)) or whole numbers 0, 1, ..., D; "
            f"the column has {', '.join(f'{v:g}' for v in bad)}"
        )
    if levels is None:
        levels = list(range(int(seen.max()) + 1)) if seen.size else [0]
    if seen.size and seen.max() > levels[-1]:
        raise DataError(
            f"mo(): value {seen.max():g} is above the fitted predictor's highest level {levels[-1]}"
        )
    return x, levels


def _codes(data: Any, levels: list[Any] | None) -> tuple[np.ndarray, list[Any]]:
    values = pd.Series(data) if not isinstance(data, pd.Series) else data
    if isinstance(values.dtype, pd.CategoricalDtype):
        if not values.cat.ordered:
            raise DataError(
                "mo() needs an ordinal predictor; this column is an unordered categorical: "
                "give its order with pd.Categorical(x, categories=[...], ordered=True)"
            )
        return _ordered_codes(values, levels)
    if pd.api.types.is_bool_dtype(values.dtype) or not pd.api.types.is_numeric_dtype(values.dtype):
        raise DataError(
            f"mo() needs an ordinal predictor: an ordered categorical or whole numbers "
            f"0, 1, ..., D; got a column of {values.dtype} values"
        )
    return _integer_codes(values, levels)


@stateful_transform
def mo(data: Any, _state: Any = None, _metadata: Any = None, _spec: Any = None) -> dict[str, Any]:
    """The step indicators ``1[x >= i]``, ``i = 1 .. D``, of a monotonic predictor.

    Parameters
    ----------
    data : array-like
        An ordered categorical or whole numbers ``>= 0``.

    Returns
    -------
    dict of str to ndarray
        Columns ``"1" .. "D"`` (formulaic names them ``mo(x)[1]`` ...).

    Raises
    ------
    DataError
        For an unordered or non-ordinal column, or fewer than two levels.
    """
    state = {} if _state is None else _state
    codes, levels = _codes(data, state.get("levels"))
    if len(levels) < 2:
        raise DataError(
            f"mo() needs a predictor with at least two levels; got {len(levels)} ({levels})"
        )
    state["levels"] = levels
    return {str(i): np.where(np.isnan(codes), np.nan, codes >= i) for i in range(1, len(levels))}


FORMULA_TRANSFORMS: Mapping[str, Any] = MappingProxyType({"mo": mo})
"""The functions of ordstats' formula language beyond formulaic's (brms' ``mo()``)."""


def formula_context(
    context: Mapping[str, Any] | None, *, new_rows: bool = False
) -> Mapping[str, Any]:
    """The evaluation context of an ordstats formula: its transforms, then ``context``.

    Parameters
    ----------
    context : mapping or None
        The caller's names (formulaic's evaluation context).
    new_rows : bool
        For rows encoded by a fitted design (chunks, new data), which may
        lack levels the fit saw: ``relevel`` then keeps a reference level that
        no row has (:data:`~ordstats.design.r_functions.NEW_ROWS_R_FUNCTIONS`).

    Returns
    -------
    mapping
        :data:`FORMULA_TRANSFORMS` first (``mo`` is the monotonic term in an
        ordstats formula whatever the caller's scope holds), then ``context``,
        then R's functions (:data:`~ordstats.design.r_functions.R_FUNCTIONS`: a
        caller's own function ``cut`` is the caller's, a caller's value ``c``
        does not hide R's ``c``).
    """
    # lookups only: no layer is changed
    r_functions = NEW_ROWS_R_FUNCTIONS if new_rows else R_FUNCTIONS
    return LayeredMapping(FORMULA_TRANSFORMS, callers_names(context), r_functions)


@dataclass(frozen=True)
class MonotonicBlock:
    """The columns of one ``mo(x)`` term in a location design.

    Attributes
    ----------
    variable : str
        ``x`` of ``mo(x)``.
    positions : tuple of int
        Positions of ``mo(x)[1] .. mo(x)[D]`` among the design's columns.
    """

    variable: str
    positions: tuple[int, ...]

    @property
    def n_steps(self) -> int:
        """``D``: the number of levels minus one."""
        return len(self.positions)

    @property
    def brms_name(self) -> str:
        """The brms spelling of the term: ``mo(x)`` -> ``mox``."""
        return "mo" + re.sub(r"[^A-Za-z0-9._]", "", self.variable)


def monotonic_blocks(columns: list[str], aliased: list[str] | None = None) -> list[MonotonicBlock]:
    """The ``mo()`` terms among a design's column names (``aliased``: the dropped ones).

    Raises
    ------
    DataError
        For ``mo()`` in an interaction (``mo(x):z``), which is not available.
    """
    blocks: dict[str, list[int]] = {}
    for j, name in enumerate(columns):
        match = _COLUMN.match(name)
        if match:
            blocks.setdefault(match.group(1), []).append(j)
        elif "mo(" in name and re.search(r"(^|[:(\s])mo\(", name):
            raise DataError(
                f"mo() is available as a main effect only; {name!r} is an interaction: "
                "write the monotonic predictor on its own (y ~ mo(x) + z)"
            )
    dropped = [name for name in aliased or [] if _COLUMN.match(name)]
    if dropped:
        raise DataError(
            f"the mo() steps {', '.join(dropped)} were dropped as aliased (a level without "
            "rows, or collinear with other terms); mo() needs rows at every level: drop "
            "unused levels (x.cat.remove_unused_categories()) or recode the predictor"
        )
    return [MonotonicBlock(v, tuple(p)) for v, p in blocks.items()]
