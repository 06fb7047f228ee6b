"""Exceptions and warnings raised by ordstats.

Every error that ordstats raises on purpose derives from :class:`OrdstatsError`
(itself a :class:`ValueError`), and every warning from :class:`OrdstatsWarning`,
so callers can catch or filter them without matching message text.
"""

from __future__ import annotations

import contextlib
import decimal
import difflib
import inspect
import numbers
import os
import sys
from collections.abc import Callable, Iterable
from typing import Any, TypeGuard

import numpy as np

__all__ = [
    "CollinearityWarning",
    "ConvergenceWarning",
    "DataError",
    "FormulaError",
    "LevelsWarning",
    "MissingDataWarning",
    "NotFittedError",
    "OrdstatsError",
    "OrdstatsWarning",
    "PredictionError",
    "PredictionWarning",
    "ResponseError",
    "SeparationWarning",
    "SpecificationError",
    "SpecificationWarning",
    "StandardErrorWarning",
]

#: The package's directory: frames of files below it are ordstats' own.
_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep
#: contextlib's frames between a ``with`` block of ordstats and a warning its exit raises.
_CONTEXTLIB = os.path.abspath(contextlib.__file__)


def _is_internal(filename: str) -> bool:
    """Whether a frame of ``filename`` is ordstats' own (or contextlib's inside it)."""
    path = os.path.abspath(filename)
    return path.startswith(_PACKAGE) or path == _CONTEXTLIB


def user_stacklevel() -> int:
    """The ``stacklevel`` of a warning that points at the first caller outside ordstats.

    Internal (not in ``__all__``): the modules that warn import it from here.

    For a warning raised at several depths (a design check reached from a
    formula, from arrays, from chunks): ``warnings.warn(..., stacklevel=user_stacklevel())``
    in the function that warns names the user's line whichever way it was
    reached.  contextlib's frames are passed over too: a warning raised as a
    ``with`` block of ordstats exits names the user's line as well.

    Returns
    -------
    int
        1 for the function that calls this one, 2 for its caller, and so on.
    """
    frame = sys._getframe(1)
    level = 1
    while frame.f_back is not None and _is_internal(frame.f_code.co_filename):
        frame, level = frame.f_back, level + 1
    return level


class OrdstatsError(ValueError):
    """Base class of the errors ordstats raises on bad input or failed fits."""


class DataError(OrdstatsError):
    """Data that cannot be used as given: non-finite values, bad weights, shapes."""


class ResponseError(DataError):
    """A response that is not an ordered outcome with at least two observed levels."""


class FormulaError(OrdstatsError):
    """A formula that cannot be parsed or names variables absent from the data."""


class SpecificationError(OrdstatsError):
    """A model specification that cannot be estimated (e.g. an aliased design)."""


class PredictionError(OrdstatsError):
    """New data that the fitted model cannot predict for (e.g. unseen factor levels)."""


class NotFittedError(OrdstatsError):
    """A quantity that needs a fit which has not been (or could not be) computed."""


class OrdstatsWarning(UserWarning):
    """Base class of the warnings ordstats issues."""


class ConvergenceWarning(OrdstatsWarning):
    """The optimiser stopped before meeting its convergence criteria."""


class SeparationWarning(ConvergenceWarning):
    """(Quasi-)complete separation: some estimates diverge and have no finite MLE."""


class MissingDataWarning(OrdstatsWarning):
    """Rows were dropped because of missing or non-finite values."""


class LevelsWarning(OrdstatsWarning):
    """Response levels without observations were dropped."""


class CollinearityWarning(OrdstatsWarning):
    """Aliased (collinear) design columns were dropped."""


class PredictionWarning(OrdstatsWarning):
    """Some predictions are undefined (returned as NaN)."""


class SpecificationWarning(OrdstatsWarning):
    """A model specification was adjusted to one that can be estimated."""


class StandardErrorWarning(OrdstatsWarning):
    """Estimates are given without standard errors (NaN), for the reason the message says."""


def refuse_unknown_options(
    method: str, target: Callable[..., Any], options: Iterable[str], extra: Iterable[str] = ()
) -> None:
    """Raise a :class:`SpecificationError` for ``options`` that ``target`` does not take.

    Internal (not in ``__all__``): for methods whose ``**options`` go on to a
    function, so that a mistyped keyword is named with the method's name and
    the closest keywords it takes (Python's :class:`TypeError` names the
    function it reached).  ``extra``: the method's own keywords.  The
    function's first parameter (the fit the method passes) is not one.
    """
    parameters = list(inspect.signature(target).parameters.values())[1:]
    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    taken = sorted({*extra, *(p.name for p in parameters if p.kind in named)})
    unknown = [name for name in options if name not in taken]
    if not unknown:
        return
    notes = []
    for name in unknown:
        close = difflib.get_close_matches(name, taken, n=3, cutoff=0.6)
        hint = f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""
        notes.append(repr(name) + hint)
    raise SpecificationError(
        f"{method}() got unknown argument(s) {', '.join(notes)}; it takes {', '.join(taken)}"
    )


def check_flag(name: str, value: object) -> bool:
    """``value`` as a ``bool``; anything but ``True``/``False``/``0``/``1`` raises an error.

    Internal (not in ``__all__``): every layer's argument checks use it.

    A string such as ``"no"`` is truthy, so accepting it would do the opposite
    of what it says. The integers 0 and 1 are taken as False and True, as
    statsmodels users write ``fit(disp=0)``.

    Parameters
    ----------
    name : str
        The argument's name, for the message.
    value : object

    Returns
    -------
    bool

    Raises
    ------
    SpecificationError
        For anything but a Python or NumPy boolean or the integers 0 and 1.

    Examples
    --------
    >>> check_flag("condvar", True)
    True
    >>> check_flag("disp", 0)
    False
    """
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Integral) and value in (0, 1):
        return bool(value)
    raise SpecificationError(f"{name} must be True or False, not {value!r}")


def is_real_number(value: object) -> TypeGuard[numbers.Real | decimal.Decimal]:
    """Whether ``value`` is one real number, and not a boolean.

    Internal (not in ``__all__``): the argument checks of every layer use it.
    Python's and NumPy's integers and floats count, and so do
    :class:`fractions.Fraction` and :class:`decimal.Decimal`; ``True`` and
    ``False`` (Python's or NumPy's) do not, although Python counts them as
    integers: ``alpha=True`` is a slip, not ``alpha=1``.

    Examples
    --------
    >>> is_real_number(0.05), is_real_number(np.int64(3)), is_real_number(True)
    (True, True, False)
    """
    if isinstance(value, (bool, np.bool_)):
        return False
    return isinstance(value, (numbers.Real, decimal.Decimal))


#: the kinds of values (``pandas.api.types.infer_dtype``) that are real numbers
_NUMBER_KINDS = frozenset({"integer", "floating", "mixed-integer-float", "decimal", "empty"})

#: kinds that numpy would read as numbers, silently, though they are not
_NOT_NUMBER_KINDS = {
    "boolean": "booleans",
    "complex": "complex numbers, whose imaginary part would be dropped",
    "string": "text",
    "categorical": "categories",
    "datetime64": "dates",
    "datetime": "dates",
    "date": "dates",
    "timedelta64": "durations",
    "timedelta": "durations",
}


def not_numbers(values: object) -> str | None:
    """What ``values`` hold when they are not all real numbers (None when they are).

    Internal (not in ``__all__``): the checks of weights of every layer use it,
    for values that numpy's ``asarray(..., dtype=float)`` would take silently:
    booleans as 0/1, numbers as text parsed, dates as nanoseconds, complex
    numbers with only a ``ComplexWarning``.  Missing values are skipped (the
    callers count them).

    Examples
    --------
    >>> not_numbers([1.0, 2]), not_numbers([True, False]), not_numbers(np.array(["1"]))
    (None, 'booleans', 'text')
    """
    import pandas as pd

    series = values if isinstance(values, pd.Series) else pd.Series(np.ravel(np.asarray(values)))
    kind = pd.api.types.infer_dtype(series, skipna=True)
    if kind in _NUMBER_KINDS:
        return None
    return _NOT_NUMBER_KINDS.get(kind, f"{kind} values")


def check_seed(value: object) -> int | None:
    """A random seed: None or a non-negative whole number (else a :class:`SpecificationError`).

    Internal (not in ``__all__``): the posterior draws and the penalised fits'
    cross-validation folds check their ``seed=`` with it.
    """
    whole = isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
    if value is not None and not (whole and int(value) >= 0):  # type: ignore[call-overload]
        raise SpecificationError(f"seed must be None or a non-negative whole number; got {value!r}")
    return None if value is None else int(value)  # type: ignore[call-overload]
