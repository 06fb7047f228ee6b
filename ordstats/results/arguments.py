"""Checks of the arguments that several results methods share (one place for each).

Every method that takes a confidence level ``alpha`` (``conf_int``, ``odds_ratios``,
``summary``, ``profile``, prediction and marginal-effect intervals, the mixed
model's intervals) reads it through :func:`check_alpha`, so that a string, a
boolean or a value outside (0, 1) gets the same clear error everywhere.  Every method
that takes a parameter by name (``slice``, ``profile``, ``conf_int(method="profile")``)
reads it through :func:`parameter_index`, which takes R's names too.
"""

from __future__ import annotations

from collections.abc import Sequence

from scipy import stats

from ordstats.design.parameter_names import r_parameter_names
from ordstats.errors import SpecificationError, check_flag, is_real_number

__all__ = ["check_alpha", "check_flag", "normal_quantile", "parameter_index"]


def check_alpha(alpha: object) -> float:
    """Return ``alpha`` as a float after checking that it is a number in (0, 1).

    Parameters
    ----------
    alpha : float
        One minus the confidence level (0.05 for 95% intervals).

    Returns
    -------
    float

    Raises
    ------
    SpecificationError
        For anything but a real number strictly between 0 and 1 (a string such
        as ``"0.05"``, a boolean, NaN, 0, 1, 2, ...).

    Examples
    --------
    >>> check_alpha(0.1)
    0.1
    """
    if not is_real_number(alpha):
        raise SpecificationError(
            "alpha must be a number strictly between 0 and 1 (0.05 for 95% intervals); "
            f"got {alpha!r} of type {type(alpha).__name__}"
        )
    value = float(alpha)
    if not 0.0 < value < 1.0:
        raise SpecificationError(
            "alpha must be a number strictly between 0 and 1 (0.05 for 95% intervals); "
            f"got {alpha!r}"
        )
    return value


def normal_quantile(alpha: object) -> float:
    """``z_{1 - alpha/2}``, the half-width of a two-sided normal interval in SEs.

    ``alpha`` is checked by :func:`check_alpha`.

    Examples
    --------
    >>> round(normal_quantile(0.05), 4)
    1.96
    """
    return float(stats.norm.ppf(1.0 - check_alpha(alpha) / 2.0))


def parameter_index(name: str, names: Sequence[str]) -> int:
    """The position among ``names`` of the parameter ``name`` (ordstats' name, or R's).

    Parameters
    ----------
    name : str
        A name of ``names``, or R ``ordinal``'s name of one of them
        (:func:`r_parameter_names`).
    names : sequence of str
        The fit's parameter names.

    Raises
    ------
    SpecificationError
        For a name of no parameter, or an R name that two parameters share (a
        location and a scale effect of one column): both list the names to use.
    """
    names = list(names)
    if name in names:
        return names.index(name)
    matches = [i for i, own in enumerate(names) if name in r_parameter_names(own)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        shared = " and ".join(repr(names[i]) for i in matches)
        raise SpecificationError(f"{name!r} is R's name of {shared}; give one of these names")
    raise SpecificationError(
        f"{name!r} is not a parameter of the model; choose from {', '.join(map(repr, names))} "
        "(or R's names of them: 'xb' for 'x[T.b]')"
    )
