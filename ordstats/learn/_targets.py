"""The classes of ``y`` and their codes: one rule for every ordstats estimator.

:class:`~ordstats.learn.OrdinalClassifier`, :class:`~ordstats.learn.OrdinalLGBMClassifier`
and :class:`~ordstats.learn.OrdinalXGBClassifier` order and encode their target
here, so that they accept and refuse the same ``y``.  The order is the one
:class:`~ordstats.OrdinalModel` uses (:func:`ordstats.design.response.orders_itself`):

* ``classes=`` when given (any values, any number of classes);
* the categories of an ordered pandas Categorical;
* the sorted values of numbers or booleans (integers, half steps such as
  ``1.0, 1.5, 2.0``, ``False < True``), also as the categories of an
  unordered Categorical;
* text, or values of different types (``[1, "a"]``, ``[True, 2]``), have no
  order of their own: they need ``classes=`` (or an ordered Categorical).
  Sorting them would make ``"low"/"mid"/"high"`` into high < low < mid.

Without ``classes=``, more than :data:`~ordstats.design.response.MAX_LEVELS_DEFAULT`
distinct values are refused as a continuous target (list them in
``classes=`` to fit one threshold per class).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ordstats._typing import IntArray
from ordstats.design.response import MAX_LEVELS_DEFAULT, orders_itself
from ordstats.errors import DataError, ResponseError, SpecificationError

__all__ = ["TargetCodes", "encode_classes", "encode_target", "is_categorical", "refuse_missing"]

#: Integer spans of y counted directly (a lookup table instead of hashing every value).
_COUNTED_SPAN = 1 << 16


def is_categorical(y: object) -> bool:
    """Whether ``y`` is a pandas Categorical (or a Series of one)."""
    return isinstance(getattr(y, "dtype", None), pd.CategoricalDtype)


def refuse_missing(y: object) -> None:
    """A :class:`~ordstats.errors.DataError` if ``y`` has missing values (NaN, None, NA)."""
    if pd.isna(pd.Series(np.asarray(y, dtype=object).reshape(-1))).any():
        raise DataError("y has missing values (NaN); drop those rows or impute them first")


@dataclass(frozen=True)
class TargetCodes:
    """An encoded target.

    Attributes
    ----------
    classes : ndarray
        The classes, lowest first.
    codes : ndarray of int, shape (n,)
        Index of each row's class in ``classes``.
    """

    classes: np.ndarray
    codes: IntArray


def encode_target(
    y: object,
    checked: object,
    classes: Sequence[object] | None,
    weights: np.ndarray,
    *,
    estimator: str,
) -> TargetCodes:
    """Order and encode the training target of an ordinal estimator (module rules).

    Parameters
    ----------
    y : array-like
        The target as the caller passed it (its value types decide the order).
    checked : array-like
        ``y`` after scikit-learn's checks (1-D); a Categorical ``y`` is used as it is.
    classes : sequence, optional
        The estimator's ``classes=``.
    weights : ndarray, shape (n,)
        Sample weights: every class needs a row of positive weight.
    estimator : str
        How messages name the estimator ("an ordinal classifier").

    Returns
    -------
    TargetCodes

    Raises
    ------
    ResponseError
        Labels without an order of their own and no ``classes=``, a continuous
        target, a value outside ``classes``, fewer than two classes, or a class
        without rows.
    """
    values = y if is_categorical(y) else checked
    if classes is None:
        _check_own_order(y)
    ordered = _declared_classes(classes) if classes is not None else _observed_classes(values)
    codes = encode_classes(values, ordered)
    declared_by = "classes=" if classes is not None else "categories" if is_categorical(y) else ""
    _check_every_class_present(ordered, codes, weights, estimator, declared_by)
    return TargetCodes(ordered, codes)


def encode_classes(
    y: object,
    classes: np.ndarray,
    name: str = "y",
    remedy: str = "add it to classes= or remove those rows",
) -> IntArray:
    """Index of each value of ``y`` in ``classes`` (an error names a value outside them).

    Parameters
    ----------
    y : array-like, shape (n,)
    classes : ndarray
    name : str
        What ``y`` is called in the error.
    remedy : str
        What the error tells the user to do.

    Returns
    -------
    ndarray of int, shape (n,)
    """
    values = np.asarray(y).reshape(-1)
    codes = _integer_codes(values, classes)
    if codes is None:
        codes = pd.Index(classes).get_indexer(values)  # -1 for a value not in classes
    if np.any(codes < 0):
        unknown = values[np.flatnonzero(codes < 0)[0]]
        unknown = unknown.item() if isinstance(unknown, np.generic) else unknown
        raise ResponseError(
            f"{name} has the value {unknown!r}, which is not among classes "
            f"{classes.tolist()}; {remedy}"
        )
    return np.asarray(codes, dtype=np.intp)


def _as_series(y: object) -> pd.Series:
    """``y`` as a Series that keeps its values' types (a list is not coerced to one dtype)."""
    if isinstance(y, pd.Series):
        return y
    if is_categorical(y) or isinstance(y, (np.ndarray, pd.Index)):
        return pd.Series(np.ravel(y) if isinstance(y, np.ndarray) else y)
    return pd.Series(np.ravel(np.asarray(y, dtype=object))).infer_objects()


def _check_own_order(y: object) -> None:
    """Refuse labels without an order of their own (text, mixed types, a text Categorical)."""
    series = _as_series(y)
    if series.dtype == object:  # numbers or booleans stored as objects order themselves
        series = series.infer_objects()
    if orders_itself(series):
        return
    shown = series.cat.categories if is_categorical(series) else pd.unique(series.dropna())
    listed = ", ".join(repr(v) for v in list(shown)[:4]) + (", ..." if len(shown) > 4 else "")
    text = all(isinstance(v, str) for v in shown)
    hint = (
        f" (sorted as text they would be {' < '.join(map(repr, sorted(shown)[:4]))})"
        if text and len(shown) > 1
        else ""
    )
    raise ResponseError(
        f"y holds labels without an order of their own ({listed}), so ordstats cannot tell "
        f"which class is lowest{hint}. Pass classes=[...] with the classes from lowest to "
        "highest, or give y as an ordered pandas Categorical: "
        "pd.Categorical(y, categories=[...], ordered=True)"
    )


def _declared_classes(classes: Sequence[object]) -> np.ndarray:
    if isinstance(classes, (str, bytes)) or not hasattr(classes, "__iter__"):
        raise SpecificationError(
            f"classes must be a list of the classes from lowest to highest, e.g. "
            f"classes=['low', 'mid', 'high']; got {classes!r}"
        )
    values = np.asarray(list(classes))
    if values.ndim != 1:
        raise SpecificationError(f"classes must be a flat list of classes; got {list(classes)}")
    if len(set(values.tolist())) != len(values):
        raise SpecificationError(f"classes has repeated values: {list(classes)}")
    return values


def _observed_classes(values: object) -> np.ndarray:
    """The classes a target orders itself: an ordered Categorical's, or the sorted values."""
    if is_categorical(values):
        dtype = values.dtype  # type: ignore[attr-defined]
        categories = dtype.categories if dtype.ordered else dtype.categories.sort_values()
        return np.asarray(categories)
    array = np.asarray(values).reshape(-1)
    counted = _small_integer_counts(array)
    if counted is not None:  # counting sort: no hashing of every value
        low, counts = counted
        found = low + np.flatnonzero(counts).astype(array.dtype)
    else:
        found = np.unique(array)
    if len(found) > MAX_LEVELS_DEFAULT:
        raise ResponseError(
            f"y has {len(found)} distinct values; this looks like a continuous target, not "
            "ordered classes. Bin it first, or pass classes=[...] listing every class from "
            "lowest to highest to fit one threshold per class"
        )
    return found


#: What to do about classes without rows, by where they were declared.
_UNUSED_CLASSES = {
    "classes=": "drop them from classes= or use data that has them",
    "categories": (
        "they are categories of y: drop the unused ones (remove_unused_categories()) or use "
        "data that has them"
    ),
    "": "use data that has them",
}


def _check_every_class_present(
    classes: np.ndarray, codes: IntArray, weights: np.ndarray, estimator: str, declared_by: str
) -> None:
    """Every class needs rows of positive weight; the message says why one has none.

    ``declared_by`` is ``"classes="``, ``"categories"`` (a Categorical ``y``) or
    ``""`` (the values of ``y``: a class there has rows, all of weight 0).
    """
    present = np.bincount(codes[weights > 0], minlength=len(classes)) > 0
    if present.sum() < 2:
        raise ResponseError(
            f"y has {int(present.sum())} class with positive weight; {estimator} needs at "
            "least 2 classes"
        )
    if present.all():
        return
    has_rows = np.bincount(codes, minlength=len(classes)) > 0
    labels = classes.tolist()
    unused = [c for c, r in zip(labels, has_rows, strict=True) if not r]
    weightless = [c for c, p, r in zip(labels, present, has_rows, strict=True) if r and not p]
    problems, hints = [], []
    if unused:
        problems.append(f"classes {unused} have no rows in y")
        hints.append(_UNUSED_CLASSES[declared_by])
    if weightless:
        problems.append(f"classes {weightless} have only rows of sample_weight 0")
        hints.append("give some of those rows positive weight, or drop them")
    raise ResponseError(
        f"{' and '.join(problems)}, so their thresholds are not estimable: {'; '.join(hints)}"
    )


def _small_integer_span(values: np.ndarray) -> tuple[np.generic, int] | None:
    """``(min, max - min)`` of integers spanning few values, else None.

    The minimum stays a scalar of the values' own type, so that ``values - min``
    neither overflows nor leaves the type (uint64 labels at and above ``2**63``).
    """
    if values.dtype.kind not in "iu" or values.size == 0:
        return None
    low, high = values.min(), values.max()
    span = int(high) - int(low)
    return (low, span) if span <= max(_COUNTED_SPAN, values.size) else None


def _small_integer_counts(values: np.ndarray) -> tuple[np.generic, IntArray] | None:
    """``(min, counts of min, min + 1, ...)`` for integers spanning few values, else None."""
    found = _small_integer_span(values)
    if found is None:
        return None
    low, _ = found
    return low, np.bincount((values - low).reshape(-1).astype(np.intp, copy=False))


def _integer_codes(values: np.ndarray, classes: np.ndarray) -> IntArray | None:
    """Codes of integer ``values`` among integer ``classes`` by a lookup table (-1: absent)."""
    found = _small_integer_span(values) if classes.dtype.kind in "iu" else None
    if found is None:
        return None
    low, span = found
    # the classes within the values' span, compared as Python integers (any two types)
    inside = [
        (k, c - int(low)) for k, c in enumerate(classes.tolist()) if 0 <= c - int(low) <= span
    ]
    table = np.full(span + 1, -1, dtype=np.intp)
    for k, offset in inside:
        table[offset] = k
    return table[(values - low).astype(np.intp, copy=False)]
