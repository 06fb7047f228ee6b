"""R's ``subset=``: the rows of the data a formula model is fitted to.

R's ``model.frame`` evaluates the formula's variables on every row of the
data, *then* keeps the rows ``subset`` selects (a missing value in the
selection counts as not selected), then drops rows with missing values.  So a
stateful transform (``scale(x)``, ``poly(x, 2)``) learns its centre, scale or
basis from all rows, not from the subset: ``clm(y ~ scale(x), subset = s)``
has other coefficients than ``clm(y ~ scale(x), data = d[s, ])``, for the
same fitted probabilities.  :func:`subset_mask` turns the pandas spellings of
a selection into a boolean mask over the rows of the data.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from ordstats.design.core import align_to_index
from ordstats.errors import DataError

__all__ = ["subset_mask"]

_HINT = (
    "give a boolean Series on the data's index (data['x'] > 1), a boolean array with one "
    "value per row, a query string ('x > 1 and g == \"a\"', as DataFrame.query), or a "
    "function of the data returning one of these"
)


#: pandas calls that read missing values themselves (R's is.na()): no NA rule then
_NA_AWARE = re.compile(r"\b(isna|isnull|notna|notnull|fillna)\b")


def _query_columns(query: str, frame: pd.DataFrame) -> list[Any]:
    """The columns of ``frame`` that ``query`` names (plainly or in backticks)."""
    quoted = set(re.findall(r"`([^`]+)`", query))
    bare = set(
        re.findall(r"(?<![@.\w])([A-Za-z_]\w*)", re.sub(r"`[^`]+`|'[^']*'|\"[^\"]*\"", " ", query))
    )
    return [c for c in frame.columns if isinstance(c, str) and (c in quoted or c in bare)]


def _undefined_hint(frame: pd.DataFrame) -> str:
    dotted = [c for c in frame.columns if isinstance(c, str) and not c.isidentifier()]
    shown = ", ".join(map(str, frame.columns[:12])) + (", ..." if frame.shape[1] > 12 else "")
    quote = f"; a name that is not a Python name needs backticks (`{dotted[0]}`)" if dotted else ""
    return (
        f"the query may use the data's columns ({shown}) and the caller's variables as @name{quote}"
    )


def _query_mask(query: str, frame: pd.DataFrame, context: Any) -> Any:
    """Evaluate ``query`` on ``frame`` as :meth:`pandas.DataFrame.query` does.

    As R evaluates ``subset = Smoke != "Never"`` (``NA != "Never"`` is ``NA``,
    which selects nothing), a row missing a column the query names is not
    selected -- unless the query reads missing values itself (``.isna()``).
    """
    local = dict(context) if isinstance(context, Mapping) else {}
    try:
        mask = frame.eval(query, local_dict=local, engine="python")
    except pd.errors.UndefinedVariableError as exc:
        raise DataError(f"subset={query!r}: {exc}; {_undefined_hint(frame)}") from exc
    except (SyntaxError, ValueError, TypeError, KeyError, AttributeError) as exc:
        raise DataError(f"subset={query!r} cannot be evaluated on the data: {exc}") from exc
    if not isinstance(mask, pd.Series) or _NA_AWARE.search(query):
        return mask
    named = _query_columns(query, frame)
    missing = frame[named].isna().any(axis=1) if named else None
    if missing is None or not missing.any():
        return mask
    return mask.astype("boolean").mask(missing, pd.NA)


def _as_boolean(values: Any, what: str) -> np.ndarray:
    """``values`` as a numpy bool array, a missing value counting as False (as R)."""
    series = values if isinstance(values, pd.Series) else pd.Series(np.asarray(values))
    if series.ndim != 1 or not pd.api.types.is_bool_dtype(series.dtype):
        if pd.api.types.is_object_dtype(series.dtype):
            present = series.dropna()
            if present.map(lambda v: isinstance(v, (bool, np.bool_))).all():
                return series.fillna(False).to_numpy(dtype=bool)
        raise DataError(
            f"subset must select rows with True/False values; {what} has dtype "
            f"{series.dtype}. To select rows by position or label, subset the data "
            f"first (data.iloc[...] or data.loc[...]); otherwise {_HINT}"
        )
    return series.fillna(False).to_numpy(dtype=bool)


def subset_mask(subset: Any, frame: pd.DataFrame, context: Any = None) -> np.ndarray | None:
    """The rows of ``frame`` that ``subset`` selects, as a boolean mask (None: all rows).

    Parameters
    ----------
    subset : None, str, pandas.Series, array-like of bool or callable
        A query evaluated on ``frame`` as :meth:`pandas.DataFrame.query`
        (``'contact == "yes"'``; ``@name`` reads ``context``), a boolean Series
        paired with the rows by index label, a boolean array in the rows'
        order, or a function of ``frame`` returning one of these.  A missing
        value selects nothing, as in R.
    frame : pandas.DataFrame
    context : mapping, optional
        The caller's variables, for ``@name`` in a query.

    Returns
    -------
    numpy.ndarray of bool or None

    Raises
    ------
    DataError
        A selection of another length or other labels than ``frame``, values
        that are not True/False, a query naming a column the data lack, or a
        selection that keeps no row.
    """
    if subset is None:
        return None
    chosen: Any = subset
    if callable(chosen) and not isinstance(chosen, (pd.Series, np.ndarray)):
        chosen = _call_subset(chosen, frame)
    if isinstance(chosen, str):
        chosen = _query_mask(chosen, frame, context)
    if isinstance(chosen, pd.DataFrame):
        raise DataError(f"subset must give one True/False value per row, not a table; {_HINT}")
    if isinstance(chosen, pd.Series):
        chosen = align_to_index(chosen, frame.index, "subset", "the data")
        mask = _as_boolean(chosen, "the Series")
    else:
        if np.ndim(chosen) != 1:
            raise DataError(f"subset must be one True/False value per row; {_HINT}")
        if len(chosen) != len(frame):
            raise DataError(
                f"subset has {len(chosen)} values but the data have {len(frame)} rows; {_HINT}"
            )
        mask = _as_boolean(chosen, "the array")
    if not mask.any():
        raise DataError("subset selects no row of the data: there is nothing to fit")
    return mask


def _call_subset(function: Callable[[pd.DataFrame], Any], frame: pd.DataFrame) -> Any:
    try:
        return function(frame)
    except (KeyError, AttributeError, TypeError, ValueError) as exc:
        raise DataError(f"subset: the function given failed on the data: {exc!r}") from exc
