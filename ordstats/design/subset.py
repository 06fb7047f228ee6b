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

import ast
import io
import keyword
import re
import tokenize
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ordstats.design.core import align_to_index
from ordstats.errors import DataError, SpecificationError

__all__ = ["RowQuery", "SelectedRows", "select_rows", "subset_mask", "subset_source"]

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


def _is_text(column: pd.Series) -> bool:
    """Whether ``column`` holds text labels (plain or as a categorical's categories)."""
    values = column.cat.categories if isinstance(column.dtype, pd.CategoricalDtype) else column
    return pd.api.types.infer_dtype(values, skipna=True) == "string"


def _numbers(node: ast.expr) -> list[Any]:
    """The numbers a comparison operand spells (``1``, ``[1, 2]``), or none."""
    items = node.elts if isinstance(node, (ast.List, ast.Tuple, ast.Set)) else [node]
    return [
        item.value
        for item in items
        if isinstance(item, ast.Constant)
        and isinstance(item.value, (int, float))
        and not isinstance(item.value, bool)
    ]


def _check_text_against_numbers(query: str, frame: pd.DataFrame) -> None:
    """Refuse a query comparing a column of text labels with a number (``judge != 1``).

    pandas finds the text ``'1'`` unequal to the number ``1``, so ``!=``
    silently keeps every row and ``==`` none, where R compares a factor with a
    number as text.  A query that Python cannot parse (backticks, ``@name``)
    is left to pandas.
    """
    try:  # pandas reads & and | as "and" and "or", below the comparisons
        tokens = tokenize.generate_tokens(io.StringIO(query).readline)
        spelled = " ".join({"&": "and", "|": "or"}.get(tok.string, tok.string) for tok in tokens)
        tree = ast.parse(spelled.strip(), mode="eval")
    except (SyntaxError, tokenize.TokenError):
        return
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        names = [o.id for o in operands if isinstance(o, ast.Name) and o.id in frame.columns]
        numbers = [n for o in operands for n in _numbers(o)]
        text = [name for name in names if _is_text(frame[name])]
        if text and numbers:
            shown = ", ".join(map(repr, sorted(map(str, frame[text[0]].dropna().unique()))[:4]))
            raise DataError(
                f"subset={query!r} compares the column {text[0]!r}, which holds text "
                f"({shown}, ...), with the number {numbers[0]!r}, which pandas never finds "
                f"equal to text (R compares a factor with a number as text): quote the "
                f"value, e.g. {text[0]} == '{numbers[0]}'"
            )


def _query_mask(query: str, frame: pd.DataFrame, context: Any) -> Any:
    """Evaluate ``query`` on ``frame`` as :meth:`pandas.DataFrame.query` does.

    As R evaluates ``subset = Smoke != "Never"`` (``NA != "Never"`` is ``NA``,
    which selects nothing), a row missing a column the query names is not
    selected -- unless the query reads missing values itself (``.isna()``).
    """
    _check_text_against_numbers(query, frame)
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
        that are not True/False, a query naming a column the data lack or
        comparing a column of text with a number (``judge != 1``, which
        pandas would find true on every row), or a selection that keeps no row.
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


# -- data read in chunks: a selection of each row by its own values -------------------------

#: the calls a query may make and still select each row from its own values
_ROW_WISE_CALLS = frozenset({"isna", "isnull", "notna", "notnull"})

#: what a query on data read in chunks may be
_ROW_WISE = (
    "a query string that selects each row from its own values ('x > 1 and g == \"a\"'; "
    ".isna()/.notna() allowed)"
)
#: the selections each kind of data read in chunks takes, by how that kind is named
_CHUNK_SELECTIONS = {
    "Dask": "a Dask DataFrame is subset partition by partition, so subset= must be a Dask "
    f"boolean Series of it (ddf.x > 1) or {_ROW_WISE}",
    "files": f"files are subset chunk by chunk, so subset= must be {_ROW_WISE}",
    "Spark": "a Spark DataFrame is subset batch by batch, so subset= must be a boolean "
    f"Spark Column of it (sdf.x > 1) or {_ROW_WISE}",
}


def _row_wise_query(subset: Any, kind: str = "Dask") -> str:
    """``subset`` when it is a query that selects each row from that row's values alone.

    Data read in chunks are selected chunk by chunk, which gives the rows the
    whole data would only for such a query; a function, an array, or a query
    with other calls (``x > x.mean()``) may need every row at once.  ``kind``
    names the data in the message (a key of :data:`_CHUNK_SELECTIONS`).
    """
    what = _CHUNK_SELECTIONS[kind]
    if not isinstance(subset, str):
        raise SpecificationError(f"{what}; got {type(subset).__name__}")
    text = re.sub(r"`[^`]+`|'[^']*'|\"[^\"]*\"", " ", subset)
    found = re.findall(r"([A-Za-z_][\w.]*)\s*\(", text)
    calls = {name.rsplit(".", 1)[-1] for name in found if not keyword.iskeyword(name)}
    if calls - _ROW_WISE_CALLS:
        raise SpecificationError(
            f"{what}: subset={subset!r} calls {', '.join(sorted(calls - _ROW_WISE_CALLS))}, "
            "which may read all rows at once; compute the selection as a column first"
        )
    return subset


def select_rows(frame: pd.DataFrame, query: str, context: Any = None) -> pd.DataFrame:
    """The rows of ``frame`` (one chunk) that a row-wise ``query`` selects (none is fine).

    The rules of :func:`subset_mask` (a missing value selects nothing).
    """
    return frame[_row_mask(query, frame, context)]


def _row_mask(query: str, frame: pd.DataFrame, context: Any) -> np.ndarray:
    """Which rows of ``frame`` a row-wise ``query`` selects (a query of constants: all or none)."""
    mask = _query_mask(query, frame, context)
    if not isinstance(mask, pd.Series):
        mask = pd.Series(np.broadcast_to(np.asarray(mask), (len(frame),)), index=frame.index)
    return _as_boolean(mask, "the query")


def _is_dask_frame(data: Any) -> bool:
    return type(data).__module__.startswith("dask") and hasattr(data, "map_partitions")


@dataclass(frozen=True)
class RowQuery:
    """A row-wise ``subset=`` query and the caller's values it reads (``@name``).

    It selects the rows of any chunk of the data by their own values, so the
    chunks' selections together are the whole data's.

    Attributes
    ----------
    query : str
    local : dict
        The caller's values of the query's ``@name``.
    """

    query: str
    local: dict[str, Any] = field(default_factory=dict)

    def select(self, frame: pd.DataFrame) -> pd.DataFrame:
        """The rows of ``frame`` (a chunk) that the query selects."""
        return select_rows(frame, self.query, self.local)

    def mask(self, frame: pd.DataFrame) -> np.ndarray:
        """Which rows of ``frame`` the query selects (a missing value selects nothing)."""
        return _row_mask(self.query, frame, self.local)

    def columns(self, names: Sequence[str]) -> list[str]:
        """Those of the columns ``names`` that the query reads."""
        return _query_columns(self.query, pd.DataFrame(columns=list(names)))


@dataclass(frozen=True)
class SelectedRows:
    """Files or a Spark DataFrame of which a :class:`RowQuery` selects the rows to fit.

    :func:`ordstats.data.sources.open_source` reads it as a source whose
    chunks are the selected rows of the data's chunks.
    """

    data: Any
    rows: RowQuery


def _query_of(subset: Any, context: Any, kind: str) -> RowQuery:
    """The :class:`RowQuery` of a row-wise ``subset`` (with the caller's ``@`` values)."""
    query = _row_wise_query(subset, kind)
    names = re.findall(r"@([A-Za-z_]\w*)", query)
    local = {n: context[n] for n in names if isinstance(context, Mapping) and n in context}
    return RowQuery(query, local)


def _is_spark_frame(data: Any) -> bool:
    return type(data).__module__.startswith("pyspark") and hasattr(data, "mapInPandas")


def subset_source(subset: Any, data: Any, context: Any = None) -> Any:
    """The data a model read in chunks is fitted to: ``data`` with R's ``subset=`` applied.

    A pandas DataFrame (read in chunks of ``chunksize`` rows) is subset as in
    memory (:func:`subset_mask`); a Dask DataFrame by a Dask boolean Series
    or, partition by partition, by a query that selects each row from its own
    values; a Spark DataFrame by a boolean Spark Column or such a query, batch
    by batch; files by such a query, chunk by chunk.

    Parameters
    ----------
    subset : str, pandas, Dask or Spark boolean Series or Column, array-like or callable
    data : pandas.DataFrame, Dask DataFrame, Spark DataFrame, or files
    context : mapping, optional
        The caller's variables, for ``@name`` in a query.

    Returns
    -------
    pandas.DataFrame, Dask DataFrame, Spark DataFrame or SelectedRows
        :class:`SelectedRows` for files and for a Spark DataFrame subset by a
        query.

    Raises
    ------
    SpecificationError
        A selection that needs every row at once, or data it cannot subset.
    DataError
        A selection of a DataFrame that :func:`subset_mask` refuses.
    """
    if isinstance(data, pd.DataFrame):
        mask = subset_mask(subset, data, context)
        return data if mask is None else data[mask]
    if _is_spark_frame(data):
        if type(subset).__module__.startswith("pyspark"):
            return data.filter(subset)  # a boolean Column: NULL selects nothing, as NA in R
        return SelectedRows(data, _query_of(subset, context, "Spark"))
    if not _is_dask_frame(data):
        return SelectedRows(data, _query_of(subset, context, "files"))
    if _is_dask_frame(subset) or type(subset).__module__.startswith("dask"):
        return data[subset]  # a Dask boolean Series of the same partitions
    rows = _query_of(subset, context, "Dask")
    return data.map_partitions(select_rows, rows.query, rows.local, meta=data._meta)
