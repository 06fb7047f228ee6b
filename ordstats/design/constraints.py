"""Linear constraints on the parameters, written as formulas (parsed by formulaic).

A constraint is a linear equation in the parameter names, e.g. ``"x1 + x2 = 0"``,
``"x1 = -2 * x2"`` or ``"`1|2` = -1"`` (names that are not identifiers in
backticks); several are separated by commas or given as a list.  As patsy (and
so statsmodels' ``wald_test``/``t_test``/``f_test``), signs may follow any
operator (``"x1 = -x2"``, ``"x1 - -x2"``, ``"x1 = +x2"``) and numbers may be
written in scientific notation (``"x1 = 1e-3"``); formulaic's parser reads
neither, so both are rewritten for it first (``(-1)*`` for a sign, the plain
decimal for a number).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

import numpy as np
from formulaic.errors import FormulaicError
from formulaic.utils.constraints import LinearConstraints

from ordstats._typing import FloatArray
from ordstats.design.parameter_names import r_name_aliases
from ordstats.errors import SpecificationError

__all__ = ["parse_constraints"]

#: what to write, for messages about constraints that cannot be read
CONSTRAINT_SYNTAX = (
    "write each constraint as a linear equation of the parameter names, e.g. 'x1 + x2 = 0', "
    "'x1 = -2 * x2' or 'x1 = 1' (several separated by commas; names that are not plain "
    "identifiers, like '1|2', in backticks)"
)
#: characters after which a sign is unary (and the start of the text)
_SIGN_CONTEXT = frozenset("=,(+-*/")
_BACKTICKED = re.compile(r"(`[^`]*`)")
_SCIENTIFIC = re.compile(r"(?<![\w.])(?:\d+\.?\d*|\.\d+)[eE][+-]?\d+(?![\w.])")


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
        of columns, numbers that are not finite (or beyond the float range), or
        linearly dependent (redundant or inconsistent) constraints.

    Examples
    --------
    >>> R, q, labels = parse_constraints("b = 2 * a", ["a", "b"])
    >>> R.tolist(), q.tolist()
    ([[-2.0, 1.0]], [0.0])
    """
    try:
        parsed = LinearConstraints.from_spec(
            _for_formulaic(constraints, names), variable_names=list(names)
        )
    except OverflowError:  # a number written beyond the float range, e.g. 1e400 * x1
        raise _not_finite(constraints) from None
    except KeyError as exc:
        raise SpecificationError(
            f"the constraint names {exc.args[0]!r}, which is not a parameter; parameters "
            f"are {', '.join(map(repr, names))}, or R's names of them ('tempwarm' for "
            "'temp[T.warm]'; put names with '|' in backticks)"
        ) from None
    except (FormulaicError, ValueError, TypeError) as exc:
        reason = _first_line(exc)
        raise SpecificationError(
            f"cannot read the constraints {constraints!r}"
            f"{f' ({reason})' if reason else ''}: {CONSTRAINT_SYNTAX}"
        ) from None
    try:
        matrix = np.atleast_2d(np.asarray(parsed.constraint_matrix, dtype=float))
        values = np.asarray(parsed.constraint_values, dtype=float).reshape(-1)
    except (ValueError, TypeError) as exc:  # a matrix of text
        raise SpecificationError(
            f"a constraint matrix must hold numbers, one column per parameter ({len(names)}); "
            f"got {constraints!r:.80} ({_first_line(exc)})"
        ) from None
    except OverflowError:  # a number written beyond the float range, e.g. x1 = 1e500
        raise _not_finite(constraints) from None
    if not (np.isfinite(matrix).all() and np.isfinite(values).all()):
        raise _not_finite(constraints)
    rank = np.linalg.matrix_rank(matrix)
    if rank < matrix.shape[0]:
        if np.linalg.matrix_rank(np.column_stack([matrix, values])) > rank:
            raise SpecificationError(
                "the constraints are inconsistent (they contradict each other, e.g. "
                "'x1 = 0' and 'x1 = 1'): no parameter values satisfy them all; test "
                "each on its own or drop the contradictory ones"
            )
        raise SpecificationError(
            "the constraints are linearly dependent (one follows from the others); drop "
            "the redundant ones"
        )
    return (
        matrix,
        values,
        [_label(row, value, names) for row, value in zip(matrix, values, strict=True)],
    )


def _not_finite(constraints: Any) -> SpecificationError:
    """The error for constraints with a number that is not finite as a float."""
    return SpecificationError(
        f"the constraints {constraints!r:.80} hold a number that is not finite or too "
        "large for a float (beyond about 1.8e308); give finite numbers"
    )


def _for_formulaic(constraints: Any, names: Sequence[str]) -> Any:
    """Strings (alone, in a list or as dict keys) rewritten as formulaic reads them.

    R's names of the parameters become ordstats' (:func:`_own_names`), then
    signs are made explicit (:func:`_explicit_signs`).
    """
    aliases = r_name_aliases(names)

    def rewrite(text: str) -> str:
        return _explicit_signs(_own_names(text, aliases))

    if isinstance(constraints, str):
        return rewrite(constraints)
    if isinstance(constraints, list) and all(isinstance(c, str) for c in constraints):
        return [rewrite(c) for c in constraints]
    if isinstance(constraints, Mapping) and all(isinstance(k, str) for k in constraints):
        return {rewrite(k): v for k, v in constraints.items()}
    return constraints


#: a bare name in a constraint: R's names of parameters are such (``tempwarm``)
_BARE_NAME = re.compile(r"(?<![\w.`])[A-Za-z_.][\w.]*(?![\w.`(])")


def _own_names(text: str, aliases: Mapping[str, str]) -> str:
    """``text`` with R's parameter names (bare or in backticks) as ordstats' backticked names."""
    if not aliases:
        return text
    parts = []
    for part in _BACKTICKED.split(text):
        if len(part) >= 2 and part[0] == part[-1] == "`":
            inner = part[1:-1]
            parts.append(f"`{aliases[inner]}`" if inner in aliases else part)
        else:
            parts.append(
                _BARE_NAME.sub(lambda m: f"`{aliases[m[0]]}`" if m[0] in aliases else m[0], part)
            )
    return "".join(parts)


def _explicit_signs(text: str) -> str:
    """``text`` with unary signs and scientific notation written as formulaic reads them.

    formulaic's tokenizer joins adjacent operators (``"= -"`` becomes the unknown
    operator ``"=-"``), so a ``-`` after an operator, a comma, an opening
    parenthesis or at the start becomes ``(-1)*`` and such a ``+`` is dropped;
    ``1e-3`` becomes ``0.001``.  Names in backticks are left as they are.
    """
    out: list[str] = []
    previous = ""  # the last character written outside whitespace
    for part in _BACKTICKED.split(text):
        if len(part) >= 2 and part[0] == part[-1] == "`":
            out.append(part)
            previous = "`"
            continue
        part = _SCIENTIFIC.sub(lambda number: format(Decimal(number.group(0)), "f"), part)
        for char in part:
            unary = previous == "" or previous in _SIGN_CONTEXT
            if char == "-" and unary:
                out.append("(-1)*")
                previous = "*"
            elif char == "+" and unary:
                continue
            else:
                out.append(char)
                previous = previous if char.isspace() else char
    return "".join(out)


def _first_line(exc: Exception) -> str:
    """The parser's reason, its first line without terminal colour codes."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc)).strip()
    return text.splitlines()[0].strip().rstrip(".") if text else ""


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
