"""Turn a user's response column into ordered category codes and level labels."""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ordstats._typing import FloatArray, IntArray
from ordstats.errors import LevelsWarning, ResponseError, is_real_number, user_stacklevel

__all__ = [
    "EncodedResponse",
    "check_declared_order",
    "encode_response",
    "format_level",
    "orders_itself",
]

#: More distinct levels than this usually means a continuous variable was passed
#: by mistake; ``many_levels=True`` accepts it.
MAX_LEVELS_DEFAULT = 50


@dataclass(frozen=True)
class EncodedResponse:
    """An ordinal response as codes.

    Attributes
    ----------
    codes : ndarray of int, shape (n,)
        ``0, ..., K - 1``; ``-1`` marks a missing value.
    levels : list of str
        Labels of the observed levels in order.
    values : list
        The original values of the levels (numbers for a numeric response).
    dropped_levels : list of str
        Declared levels without observations, dropped.
    lower_codes : ndarray of int, shape (n,), optional
        For a censored response (:mod:`ordstats.design.censored`): the lowest
        level each row may be in (``codes`` is the highest); None when every
        value is exact.
    censoring : object, optional
        For a censored response, its
        :class:`~ordstats.design.censored.CensoredLevels` (to code rows read later).
    bounds : tuple of ndarray, optional
        For a censored response: each row's ``(lower, upper]`` (to code the rows
        with other levels).
    """

    codes: IntArray
    levels: list[str]
    values: list[Any]
    dropped_levels: list[str]
    lower_codes: IntArray | None = None
    censoring: Any = None
    bounds: tuple[FloatArray, FloatArray] | None = None

    @property
    def n_levels(self) -> int:
        """Number of observed levels ``K``."""
        return len(self.levels)


def format_level(value: Any) -> str:
    """Format a level value as R prints factor labels (``2.0`` -> ``"2"``)."""
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value)


def _unordered_message(name: str, values: Sequence[Any], categorical: bool = False) -> str:
    shown = ", ".join(repr(format_level(v)) for v in list(values)[:4])
    more = ", ..." if len(values) > 4 else ""
    if categorical:  # the categories have an order, but nothing says it is the outcome's
        return (
            f"the response {name!r} is an unordered Categorical (categories {shown}{more}), "
            "so ordstats cannot tell whether the categories' order is the outcome's order "
            "(pandas sorts categories alphabetically unless told otherwise). If it is, use "
            f"data[{name!r}] = data[{name!r}].cat.as_ordered(); otherwise pass levels=[...] "
            "with the labels from lowest to highest"
        )
    return (
        f"the response {name!r} holds unordered labels ({shown}{more}), so ordstats cannot "
        f"tell their order. Pass levels=[...] with the labels from lowest to highest, or "
        f"make the column ordered: data[{name!r}] = pd.Categorical(data[{name!r}], "
        f"categories=[...], ordered=True)"
    )


def check_declared_order(values: pd.Series, labels: list[str], name: str) -> None:
    """Refuse ``levels=`` that reorders an ordered Categorical's own levels."""
    if not (isinstance(values.dtype, pd.CategoricalDtype) and values.cat.ordered):
        return
    own = [format_level(v) for v in values.cat.categories]
    common = [label for label in labels if label in own]
    if common != [label for label in own if label in labels]:
        raise ResponseError(
            f"levels={labels} contradicts the order of the ordered Categorical {name!r} "
            f"({own}); drop levels= to use the Categorical's order, or reorder the column"
        )


def _as_categorical(values: pd.Series, levels: Sequence[Any] | None, name: str) -> pd.Categorical:
    """Return ``values`` as an ordered Categorical, or raise saying what to do."""
    if levels is not None:
        if isinstance(levels, (str, bytes)) or not isinstance(levels, Iterable):
            raise ResponseError(
                f"levels must be a list of the response's levels from lowest to highest, "
                f"e.g. levels=['low', 'mid', 'high']; got {levels!r}"
            )
        labels = [format_level(v) for v in levels]
        if len(set(labels)) != len(labels):
            raise ResponseError(f"levels for {name!r} contain duplicates: {list(levels)}")
        check_declared_order(values, labels, name)
        value_labels = values.map(format_level, na_action="ignore")
        unknown = pd.unique(value_labels[value_labels.notna() & ~value_labels.isin(labels)])
        if len(unknown):
            raise ResponseError(
                f"the response {name!r} has values not among levels={labels}: "
                f"{', '.join(map(repr, unknown[:5]))}"
            )
        return pd.Categorical(value_labels, categories=labels, ordered=True)
    categorical = isinstance(values.dtype, pd.CategoricalDtype)
    if not orders_itself(values):
        shown = values.cat.categories if categorical else pd.unique(values.dropna())
        raise ResponseError(_unordered_message(name, list(shown), categorical))
    if categorical:
        cats = values.cat.categories
        order = cats if values.cat.ordered else cats.sort_values()
        return pd.Categorical(values, categories=order, ordered=True)
    if pd.api.types.is_bool_dtype(values) or pd.api.types.is_numeric_dtype(values):
        observed = np.sort(pd.unique(values.dropna()))
        return pd.Categorical(values, categories=observed, ordered=True)
    # numbers that no numeric dtype holds (Python ints beyond int64, Decimals):
    # ordered as Python compares them, exactly
    return pd.Categorical(values, categories=sorted(pd.unique(values.dropna())), ordered=True)


def orders_itself(values: pd.Series) -> bool:
    """Whether ``values`` carry their own order, so that no ``levels=`` is needed.

    An ordered Categorical (its categories' order), numbers or booleans (their
    sorted order, also as the categories of an unordered Categorical; also
    Python integers beyond int64 and Decimals held as objects) do; text labels
    do not (sorting them alphabetically would put ``"high"`` before ``"low"``).

    Parameters
    ----------
    values : pandas.Series

    Returns
    -------
    bool
    """
    dtype = values.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return bool(dtype.ordered) or pd.api.types.is_numeric_dtype(dtype.categories)
    if pd.api.types.is_bool_dtype(values) or pd.api.types.is_numeric_dtype(values):
        return True
    return _all_real_numbers(pd.unique(values.dropna()))


def _all_real_numbers(values: Sequence[Any]) -> bool:
    """Whether every value is a real number (``int``, ``Decimal``, numpy; not a boolean)."""
    return len(values) > 0 and all(is_real_number(v) for v in values)


def encode_response(
    values: Any,
    *,
    name: str = "y",
    levels: Sequence[Any] | None = None,
    many_levels: bool = False,
) -> EncodedResponse:
    """Encode an ordinal response as codes ``0..K-1`` in the order of its levels.

    Parameters
    ----------
    values : array-like
        An ordered pandas Categorical (its order is used), numbers or booleans
        (sorted order), or labels with ``levels`` giving their order.
    name : str
        Name used in messages.
    levels : sequence, optional
        The levels from lowest to highest; required for unordered labels.
    many_levels : bool
        Accept more than 50 distinct levels.

    Returns
    -------
    EncodedResponse

    Raises
    ------
    ResponseError
        Unordered labels without ``levels``, values outside ``levels``, fewer than
        two observed levels, or too many levels without ``many_levels=True``.

    Examples
    --------
    >>> enc = encode_response(["lo", "hi", "mid"], levels=["lo", "mid", "hi"])
    >>> enc.codes.tolist(), enc.levels
    ([0, 2, 1], ['lo', 'mid', 'hi'])
    """
    series = values if isinstance(values, pd.Series) else pd.Series(values)
    cat = _as_categorical(series.reset_index(drop=True), levels, name)
    codes = np.asarray(cat.codes, dtype=np.intp)
    counts = np.bincount(codes[codes >= 0], minlength=len(cat.categories))
    keep = counts > 0
    dropped = [format_level(v) for v, k in zip(cat.categories, keep, strict=True) if not k]
    if dropped:
        warnings.warn(
            f"response {name!r}: level(s) {', '.join(map(repr, dropped))} have no "
            "observations and were dropped (as R's clm does)",
            LevelsWarning,
            stacklevel=user_stacklevel(),
        )
    remap = np.full(len(cat.categories) + 1, -1, dtype=np.intp)
    remap[np.flatnonzero(keep)] = np.arange(int(keep.sum()))
    new_codes = np.where(codes >= 0, remap[codes], -1)
    kept_values = list(cat.categories[keep])
    if len(kept_values) < 2:
        only = f" (only {format_level(kept_values[0])!r})" if kept_values else ""
        raise ResponseError(
            f"the response {name!r} has {len(kept_values)} observed level{only}; an ordinal "
            "model needs at least two"
        )
    if len(kept_values) > MAX_LEVELS_DEFAULT and not many_levels:
        raise ResponseError(
            f"the response {name!r} has {len(kept_values)} distinct levels; this is usually "
            "a continuous variable passed by mistake. Bin it first, or pass "
            "many_levels=True to fit one threshold per distinct value"
        )
    return EncodedResponse(
        codes=new_codes,
        levels=[format_level(v) for v in kept_values],
        values=kept_values,
        dropped_levels=dropped,
    )
