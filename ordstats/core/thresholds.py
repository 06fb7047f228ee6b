"""Threshold structures as a Jacobian, with R's parameter names.

The ``K - 1`` thresholds are a linear function of a smaller set of free
parameters, ``theta = J @ alpha`` (Christensen 2019, "Cumulative link models for
ordinal regression with the R package ordinal", sec. 2.3).  The likelihood only
ever sees ``J``, so every structure shares one code path.

``flexible``
    ``J = I``: one free threshold per cut-point (``"1|2"``, ``"2|3"``, ...).
``equidistant``
    ``theta_j = threshold.1 + (j - 1) * spacing``.
``symmetric``
    Thresholds symmetric about one (odd ``K - 1``) or two (even ``K - 1``) central
    values: ``central``/``central.1``, ``central.2`` and ``spacing.1``, ...
``symmetric2``
    Thresholds symmetric about zero: ``spacing.1``, ``spacing.2``, ...
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any, get_args

import numpy as np
import scipy.sparse as sp

from ordstats._typing import FloatArray, ThresholdName
from ordstats.errors import SpecificationError

__all__ = [
    "THRESHOLD_STRUCTURES",
    "cut_point_design",
    "threshold_jacobian",
    "threshold_names",
    "threshold_parameter_names",
]

THRESHOLD_STRUCTURES: tuple[str, ...] = get_args(ThresholdName)


def threshold_names(levels: Sequence[str]) -> list[str]:
    """Return R's names of the cut-points between consecutive levels.

    Parameters
    ----------
    levels : sequence of str
        Response level labels in their order.

    Returns
    -------
    list of str
        ``"<level_j>|<level_j+1>"`` for ``j = 1, ..., K - 1``.

    Examples
    --------
    >>> threshold_names(["Low", "Medium", "High"])
    ['Low|Medium', 'Medium|High']
    """
    return [f"{lo}|{hi}" for lo, hi in itertools.pairwise(levels)]


#: A threshold structure: a name, or fixed cut-point values (``threshold=[...]``).
Structure = str | tuple[float, ...]


def fixed_thresholds(values: object) -> tuple[float, ...]:
    """Validate user-given cut-points: finite and strictly increasing numbers.

    Parameters
    ----------
    values : sequence of float
        ``theta_1 < ... < theta_{K-1}``.

    Returns
    -------
    tuple of float

    Raises
    ------
    SpecificationError
        Not a one-dimensional sequence of numbers, non-finite, or not increasing.
    """
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise SpecificationError(
            f"threshold must be a structure name or a list of fixed cut-points; got {values!r}"
        ) from exc
    if array.ndim != 1 or array.size == 0:
        raise SpecificationError(
            "fixed thresholds must be a non-empty one-dimensional list of K - 1 numbers, "
            f"e.g. threshold=[0.5, 1.5, 2.5]; got shape {array.shape}"
        )
    if not np.all(np.isfinite(array)):
        raise SpecificationError(f"fixed thresholds must be finite numbers; got {array.tolist()}")
    steps = np.diff(array)
    if np.any(steps <= 0):
        j = int(np.flatnonzero(steps <= 0)[0])
        raise SpecificationError(
            "fixed thresholds must increase strictly; cut-point "
            f"{j + 2} ({array[j + 1]:g}) is not above cut-point {j + 1} ({array[j]:g})"
        )
    return tuple(float(v) for v in array)


def _check_structure(structure: Structure, n_thresholds: int) -> None:
    if isinstance(structure, tuple):
        if len(structure) != n_thresholds:
            raise SpecificationError(
                f"threshold= gives {len(structure)} fixed cut-points but the response has "
                f"{n_thresholds + 1} levels, so it needs {n_thresholds}"
            )
        return
    if structure not in THRESHOLD_STRUCTURES:
        raise SpecificationError(
            f"unknown threshold structure {structure!r}; choose one of "
            f"{', '.join(map(repr, THRESHOLD_STRUCTURES))}"
        )
    minimum = {"flexible": 1, "equidistant": 2, "symmetric": 2, "symmetric2": 2}[structure]
    if n_thresholds < minimum:
        raise SpecificationError(
            f"threshold={structure!r} needs a response with at least {minimum + 1} "
            f"levels; this one has {n_thresholds + 1}"
        )


def _symmetric_jacobian(n_thresholds: int) -> FloatArray:
    """``J`` for thresholds symmetric about one or two central values."""
    half, odd = divmod(n_thresholds, 2)
    if odd:
        # columns: central, spacing.1..spacing.half; theta_{half+1} is central.
        jac = np.zeros((n_thresholds, 1 + half))
        jac[:, 0] = 1.0
        for k in range(1, half + 1):
            jac[half - k, k] = -1.0
            jac[half + k, k] = 1.0
        return jac
    # columns: central.1, central.2, spacing.1..spacing.(half-1).
    jac = np.zeros((n_thresholds, 2 + half - 1))
    jac[:half, 0] = 1.0
    jac[half:, 1] = 1.0
    for k in range(1, half):
        jac[half - 1 - k, 1 + k] = -1.0
        jac[half + k, 1 + k] = 1.0
    return jac


def _symmetric2_jacobian(n_thresholds: int) -> FloatArray:
    """``J`` for thresholds symmetric about zero."""
    half, odd = divmod(n_thresholds, 2)
    jac = np.zeros((n_thresholds, half))
    centre = half + odd  # index of the first threshold above zero
    for k in range(1, half + 1):
        jac[half - k, k - 1] = -1.0
        jac[centre + k - 1, k - 1] = 1.0
    return jac


def threshold_jacobian(structure: Structure, n_thresholds: int) -> FloatArray:
    """Return the Jacobian ``J`` with ``theta = J @ alpha + c`` for a threshold structure.

    For fixed cut-points ``c`` (a tuple) the one free parameter is the location
    intercept ``alpha_0`` of ``P(Y <= j) = F(c_j - alpha_0 - x'beta)``, so
    ``J`` is a column of ``-1``; ``c`` is :func:`threshold_offset`.

    Parameters
    ----------
    structure : {"flexible", "equidistant", "symmetric", "symmetric2"} or tuple
        Threshold structure, as R's ``clm(threshold = ...)``, or fixed cut-points.
    n_thresholds : int
        Number of cut-points, ``K - 1``.

    Returns
    -------
    ndarray, shape (n_thresholds, n_free)

    Examples
    --------
    >>> threshold_jacobian("equidistant", 3)
    array([[1., 0.],
           [1., 1.],
           [1., 2.]])
    """
    _check_structure(structure, n_thresholds)
    if isinstance(structure, tuple):
        return -np.ones((n_thresholds, 1))
    if structure == "flexible":
        return np.eye(n_thresholds)
    if structure == "equidistant":
        return np.column_stack([np.ones(n_thresholds), np.arange(n_thresholds, dtype=float)])
    if structure == "symmetric":
        return _symmetric_jacobian(n_thresholds)
    return _symmetric2_jacobian(n_thresholds)


def describe_threshold(structure: Structure) -> str:
    """``"flexible"``, ... or ``"fixed at -1.34, 1.25, 3.47"`` for reports.

    Parameters
    ----------
    structure : str or tuple

    Returns
    -------
    str
    """
    if isinstance(structure, tuple):
        return "fixed at " + ", ".join(f"{v:.4g}" for v in structure)
    return structure


def threshold_offset(structure: Structure, n_thresholds: int) -> FloatArray:
    """The constant ``c`` of ``theta = J alpha + c``: fixed cut-points, else zeros.

    Parameters
    ----------
    structure : str or tuple
    n_thresholds : int

    Returns
    -------
    ndarray, shape (n_thresholds,)
    """
    _check_structure(structure, n_thresholds)
    if isinstance(structure, tuple):
        return np.asarray(structure, dtype=float)
    return np.zeros(n_thresholds)


def threshold_parameter_names(structure: Structure, levels: Sequence[str]) -> list[str]:
    """Return R's names of the free threshold parameters of a structure.

    Parameters
    ----------
    structure : {"flexible", "equidistant", "symmetric", "symmetric2"}
        Threshold structure.
    levels : sequence of str
        Response level labels in order.

    Returns
    -------
    list of str
        ``"1|2", ...`` (flexible); ``"threshold.1", "spacing"`` (equidistant);
        ``"central.1", "central.2", "spacing.1", ...`` or ``"central", "spacing.1",
        ...`` (symmetric); ``"spacing.1", ...`` (symmetric2).
    """
    n_thresholds = len(levels) - 1
    _check_structure(structure, n_thresholds)
    if isinstance(structure, tuple):
        return ["(Intercept)"]
    half, odd = divmod(n_thresholds, 2)
    if structure == "flexible":
        return threshold_names(levels)
    if structure == "equidistant":
        return ["threshold.1", "spacing"]
    if structure == "symmetric":
        central = ["central"] if odd else ["central.1", "central.2"]
        n_spacings = half if odd else half - 1
        return central + [f"spacing.{k}" for k in range(1, n_spacings + 1)]
    return [f"spacing.{k}" for k in range(1, half + 1)]


def cut_point_design(jacobian: Any, nominal: FloatArray, cut: int) -> FloatArray:
    """Rows mapping the threshold parameters to cut-point ``cut`` of each observation.

    With nominal effects ``theta_cut(w_i) = ([1, w_i] kron J[cut]) a`` for the
    threshold block ``a = (a_0, a_1, ..., a_r)`` (the likelihood's order).

    Parameters
    ----------
    jacobian : ndarray, shape (K - 1, q)
    nominal : ndarray, shape (n, r)
        Nominal design without intercept (``r`` may be 0).
    cut : int
        Cut-point index ``0, ..., K - 2``.

    Returns
    -------
    ndarray, shape (n, q * (1 + r))

    Examples
    --------
    >>> cut_point_design(np.eye(2), np.array([[0.0], [2.0]]), 1).tolist()
    [[0.0, 1.0, 0.0, 0.0], [0.0, 1.0, 0.0, 2.0]]
    """
    n = nominal.shape[0]
    w1 = np.hstack([np.ones((n, 1)), nominal])
    row = jacobian_row(jacobian, cut)
    return (w1[:, :, None] * row[None, None, :]).reshape(n, w1.shape[1] * row.size)


def jacobian_row(jacobian: Any, cut: int) -> FloatArray:
    """Row ``cut`` of a threshold Jacobian, dense or sparse (many-levels fits), as a 1-d array.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> jacobian_row(sp.csr_array(np.eye(3)), 1).tolist()
    [0.0, 1.0, 0.0]
    """
    if sp.issparse(jacobian):
        dense_row = sp.csr_array(jacobian)[[cut]].toarray()  # type: ignore[call-overload]
        return np.asarray(dense_row[0], dtype=np.float64)
    return np.asarray(jacobian[cut], dtype=np.float64)
