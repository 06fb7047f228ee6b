"""Linear constraints on the parameters, written as formulas (parsed by formulaic)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from formulaic.errors import FormulaicError
from formulaic.utils.constraints import LinearConstraints

from ordstats._typing import FloatArray
from ordstats.errors import SpecificationError

__all__ = ["parse_constraints"]


def parse_constraints(
    constraints: Any, names: Sequence[str]
) -> tuple[FloatArray, FloatArray, list[str]]:
    """Turn a constraint specification into ``(R, q, labels)``.

    Parameters
    ----------
    constraints : str, list of str, dict, ndarray or tuple
        See the module docstring.
    names : sequence of str
        Parameter names, in order.

    Returns
    -------
    R : ndarray, shape (m, k)
    q : ndarray, shape (m,)
    labels : list of str
        A readable form of each constraint.

    Raises
    ------
    SpecificationError
        Unknown parameter names, syntax errors, a matrix with the wrong number
        of columns or linearly dependent constraints.

    Examples
    --------
    >>> R, q, labels = parse_constraints("b = 2 * a", ["a", "b"])
    >>> R.tolist(), q.tolist()
    ([[-2.0, 1.0]], [0.0])
    """
    try:
        parsed = LinearConstraints.from_spec(constraints, variable_names=list(names))
    except KeyError as exc:
        raise SpecificationError(
            f"the constraint names {exc.args[0]!r}, which is not a parameter; parameters "
            f"are {', '.join(map(repr, names))} (put names with '|' in backticks)"
        ) from None
    except (FormulaicError, ValueError, TypeError) as exc:
        raise SpecificationError(f"cannot read the constraints {constraints!r}: {exc}") from exc
    matrix = np.atleast_2d(np.asarray(parsed.constraint_matrix, dtype=float))
    values = np.asarray(parsed.constraint_values, dtype=float).reshape(-1)
    if np.linalg.matrix_rank(matrix) < matrix.shape[0]:
        raise SpecificationError(
            "the constraints are linearly dependent (one follows from the others); drop "
            "the redundant ones"
        )
    return (
        matrix,
        values,
        [_label(row, value, names) for row, value in zip(matrix, values, strict=True)],
    )


def _label(row: FloatArray, value: float, names: Sequence[str]) -> str:
    """Write a constraint row as ``"a - 2 * b = 1"``."""
    text = ""
    for coef, name in zip(row, names, strict=True):
        if coef == 0:
            continue
        size = "" if abs(coef) == 1 else f"{abs(coef):g} * "
        if not text:
            text = ("-" if coef < 0 else "") + size + name
        else:
            text += (" - " if coef < 0 else " + ") + size + name
    return f"{text} = {value:g}"
