"""``hypothesis=``: functions of estimates, with their exact derivatives.

A hypothesis turns a vector of estimates ``b`` (with Jacobian ``J`` in the
parameters) into new estimates ``h(b)`` with Jacobian ``(dh/db) J``:

* a string ``"b1 - b2 = 0"`` (or ``"b1 / b2 = 1"``, any expression of
  ``b1, b2, ...`` and, for :meth:`hypotheses` on the parameters, their
  names, with ``+ - * / **``, ``exp``, ``log``, ``sqrt``; ``lhs = rhs`` means
  ``lhs - rhs``).  Its derivatives are computed exactly by forward-mode
  differentiation (dual numbers);
* ``"pairwise"`` (every ``b_i - b_j``, ``i < j``), ``"reference"``
  (``b_i - b_1``) or ``"sequential"`` (``b_{i+1} - b_i``), within each
  response level when the estimates have several;
* a matrix with one row per estimate and one column per hypothesis
  (its columns' linear combinations).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ordstats._typing import FloatArray, IntArray
from ordstats.design.parameter_names import r_name_aliases
from ordstats.errors import OrdstatsError, not_numbers
from ordstats.results.margins.table import Estimates

__all__ = ["apply_hypothesis"]

_KEYWORDS = ("pairwise", "reference", "sequential")


@dataclass(frozen=True)
class _Dual:
    """A value and its gradient in the estimates ``b``."""

    value: float
    grad: FloatArray

    def __add__(self, other: Any) -> _Dual:
        o = _lift(other, self.grad.size)
        return _Dual(self.value + o.value, self.grad + o.grad)

    __radd__ = __add__

    def __sub__(self, other: Any) -> _Dual:
        o = _lift(other, self.grad.size)
        return _Dual(self.value - o.value, self.grad - o.grad)

    def __rsub__(self, other: Any) -> _Dual:
        return _lift(other, self.grad.size) - self

    def __mul__(self, other: Any) -> _Dual:
        o = _lift(other, self.grad.size)
        return _Dual(self.value * o.value, self.grad * o.value + o.grad * self.value)

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> _Dual:
        o = _lift(other, self.grad.size)
        return _Dual(self.value / o.value, (self.grad * o.value - o.grad * self.value) / o.value**2)

    def __rtruediv__(self, other: Any) -> _Dual:
        return _lift(other, self.grad.size) / self

    def __pow__(self, other: Any) -> _Dual:
        o = _lift(other, self.grad.size)
        value = self.value**o.value
        grad = o.value * self.value ** (o.value - 1.0) * self.grad
        if np.any(o.grad):
            grad = grad + value * np.log(self.value) * o.grad
        return _Dual(value, grad)

    def __neg__(self) -> _Dual:
        return _Dual(-self.value, -self.grad)

    def __pos__(self) -> _Dual:
        return self


def _lift(value: Any, size: int) -> _Dual:
    if isinstance(value, _Dual):
        return value
    return _Dual(float(value), np.zeros(size))


def _exp(x: _Dual) -> _Dual:
    value = float(np.exp(x.value))
    return _Dual(value, value * x.grad)


def _log(x: _Dual) -> _Dual:
    return _Dual(float(np.log(x.value)), x.grad / x.value)


def _sqrt(x: _Dual) -> _Dual:
    value = float(np.sqrt(x.value))
    return _Dual(value, x.grad / (2.0 * value))


_FUNCTIONS = {"exp": _exp, "log": _log, "sqrt": _sqrt}
_BINARY = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.Pow: lambda a, b: a**b,
}


def _evaluate(node: ast.AST, names: dict[str, _Dual], text: str) -> Any:
    """Evaluate a parsed expression of the estimates (only arithmetic and exp/log/sqrt)."""
    if isinstance(node, ast.Expression):
        return _evaluate(node.body, names, text)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return float(node.value)
    if isinstance(node, ast.Name):
        if node.id not in names:
            raise OrdstatsError(
                f"hypothesis {text!r} names {node.id!r}, which is not an estimate: use "
                f"b1, ..., b{len(names)}"
            )
        return names[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left, names, text), _evaluate(node.right, names, text)
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = _evaluate(node.operand, names, text)
        return -operand if isinstance(node.op, ast.USub) else operand
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCTIONS
        and len(node.args) == 1
        and not node.keywords
    ):
        argument = _lift(_evaluate(node.args[0], names, text), _size(names))
        return _FUNCTIONS[node.func.id](argument)
    raise OrdstatsError(
        f"hypothesis {text!r} is not an expression of the estimates b1, b2, ... with "
        "+ - * / ** and exp, log, sqrt"
    )


def _backticked(
    expression: str, aliases: list[str], text: str, r_names: dict[str, str] | None = None
) -> str:
    """``expression`` with each backticked parameter name (`temp[T.warm]`, as in t_test) as b-i.

    ``r_names`` maps R's names of parameters (`1|2.contactyes`) to theirs.
    """

    def position(match: re.Match[str]) -> str:
        name = match.group(1)
        name = (r_names or {}).get(name, name) if name not in aliases else name
        if name not in aliases:
            shown = ", ".join(map(repr, aliases[:6])) + (", ..." if len(aliases) > 6 else "")
            raise OrdstatsError(
                f"hypothesis {text!r} names `{name}`, which is not a parameter"
                + (f"; the parameters are {shown}" if aliases else "; use b1, b2, ...")
            )
        return f"b{aliases.index(name) + 1}"

    return re.sub(r"`([^`]*)`", position, expression)


def _size(names: dict[str, _Dual]) -> int:
    return next(iter(names.values())).grad.size


def _string_hypothesis(
    text: str, values: FloatArray, aliases: Sequence[str] = ()
) -> tuple[float, FloatArray, str]:
    """Value and gradient (in the estimates) of one hypothesis string, and its label."""
    n = values.size
    expression = text
    if expression.count("=") > 1:
        raise OrdstatsError(f"hypothesis {text!r} has more than one '='")
    if "=" in expression:
        lhs, rhs = expression.split("=")
        expression = f"({lhs.strip()}) - ({rhs.strip()})"
    names = {f"b{i + 1}": _Dual(float(values[i]), np.eye(n)[i]) for i in range(n)}
    r_names = r_name_aliases(aliases)  # R's names of the parameters: tempwarm
    expression = _backticked(expression, [*aliases], text, r_names)
    # parameter names that are not identifiers (temp[T.warm]) are replaced by b-indices
    positions: dict[str, int] = {}
    for k, alias in enumerate(aliases):
        positions.setdefault(alias, k)  # a repeated name is the first parameter of it
    spelled = [
        *((alias, k) for alias, k in positions.items()),
        *((r_name, positions[own]) for r_name, own in r_names.items()),
    ]
    for alias, position in sorted(spelled, key=lambda item: -len(item[0])):
        if alias:  # whole names only: "x" must not match inside "exp"
            pattern = rf"(?<![\w.\[\]]){re.escape(alias)}(?![\w.\[\]])"
            expression = re.sub(pattern, f"b{position + 1}", expression)
    used = {m for m in re.findall(r"[A-Za-z_][A-Za-z_0-9]*", expression) if m not in _FUNCTIONS}
    if not used:
        raise OrdstatsError(
            f"hypothesis {text!r} names no estimate: write it in terms of b1, ..., b{n}"
            + (" or the parameter names" if aliases else "")
            + ', e.g. "b1 - b2 = 0"'
        )
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError:
        raise OrdstatsError(
            f'hypothesis {text!r} is not a valid expression; write e.g. "b1 - b2 = 0"'
        ) from None
    result = _evaluate(tree, names, text)
    if not isinstance(result, _Dual):
        raise OrdstatsError(f"hypothesis {text!r} names no estimate: write it in terms of b1, ...")
    return result.value, result.grad, text.strip()


def _keyword_matrix(
    keyword: str, blocks: list[IntArray], labels: list[str]
) -> tuple[FloatArray, list[str], list[int]]:
    """Contrast columns of ``keyword`` within each block of estimate positions."""
    n = sum(len(b) for b in blocks)
    columns, names, block_of = [], [], []
    for number, positions in enumerate(blocks):
        pairs: list[tuple[int, int]]
        if keyword == "pairwise":
            # earlier minus later, as marginaleffects and emmeans' pairs()
            pairs = [(i, j) for i in range(len(positions)) for j in range(i + 1, len(positions))]
        elif keyword == "reference":
            pairs = [(i, 0) for i in range(1, len(positions))]
        else:
            pairs = [(i + 1, i) for i in range(len(positions) - 1)]
        for hi, lo in pairs:
            column = np.zeros(n)
            column[positions[hi]] += 1.0
            column[positions[lo]] -= 1.0
            columns.append(column)
            names.append(f"{labels[positions[hi]]} - {labels[positions[lo]]}")
            block_of.append(number)
    if not columns:
        raise OrdstatsError(
            f"hypothesis={keyword!r} needs at least two estimates (per response level) to compare"
        )
    return np.column_stack(columns), names, block_of


def _rows_by_label(hypothesis: pd.DataFrame, row_labels: Sequence[str]) -> pd.DataFrame:
    """A hypothesis matrix whose row labels name the estimates, in the estimates' order.

    Labels that are the estimates' (all or some: the others get zeros) pair
    rows by name, as pandas does; the default index 0, 1, ... pairs them by
    position; other labels are refused rather than read by position.
    """
    index = hypothesis.index
    if isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1:
        return hypothesis
    labels = [str(label) for label in index]
    known = set(map(str, row_labels))
    if len(set(labels)) == len(labels) and set(labels) <= known:
        return hypothesis.set_axis(labels, axis=0).reindex(list(map(str, row_labels)), fill_value=0)
    unknown = [label for label in labels if label not in known][:3]
    raise OrdstatsError(
        f"the hypothesis matrix's row labels ({', '.join(map(repr, unknown))}, ...) are not "
        f"the estimates' ({', '.join(map(repr, list(row_labels)[:4]))}, ...): label its rows "
        "with those names (rows are then paired by name), or give it the default index "
        "0, 1, ... to pair them by position"
    )


def _describe(value: Any) -> str:
    shape = np.shape(value) if isinstance(value, (np.ndarray, pd.DataFrame)) else None
    return f"an array of shape {shape}" if shape is not None else repr(value)


def apply_hypothesis(
    estimates: Estimates,
    hypothesis: Any,
    row_labels: list[str],
    group_column: str | None = "group",
    aliases: Sequence[str] = (),
) -> Estimates:
    """New estimates ``h(b)`` with Jacobian ``(dh/db) J``.

    Parameters
    ----------
    estimates : Estimates
    hypothesis : str, sequence of str, or 2-D array
        See the module docstring.
    row_labels : list of str
        A label per estimate, used to name pairwise differences.
    group_column : str, optional
        The column of ``estimates.labels`` whose values split the estimates
        into blocks for the keywords (the response level).
    aliases : sequence of str
        Names that stand for ``b1, b2, ...`` in strings (parameter names).

    Returns
    -------
    Estimates
    """
    values, jac = estimates.values, estimates.jacobian
    if jac is None:
        raise OrdstatsError(
            "these estimates have no Jacobian (type='class'), so hypotheses cannot be tested"
        )
    n = values.size
    labels = estimates.labels
    if isinstance(hypothesis, str) and hypothesis in _KEYWORDS:
        has_groups = group_column is not None and group_column in labels
        if has_groups:
            codes, uniques = pd.factorize(labels[group_column])
            blocks = [np.flatnonzero(codes == g) for g in range(len(uniques))]
        else:
            blocks = [np.arange(n)]
        matrix, names, block_of = _keyword_matrix(hypothesis, blocks, row_labels)
        frame = pd.DataFrame({"term": names})
        if has_groups:
            frame.insert(0, "group", [uniques[b] for b in block_of])
        return Estimates(frame, matrix.T @ values, matrix.T @ jac)
    if isinstance(hypothesis, str) or (
        isinstance(hypothesis, (list, tuple))
        and hypothesis
        and all(isinstance(h, str) for h in hypothesis)
    ):
        texts = [hypothesis] if isinstance(hypothesis, str) else list(hypothesis)
        results = [_string_hypothesis(t, values, aliases) for t in texts]
        grads = np.vstack([g for _, g, _ in results])
        frame = pd.DataFrame({"term": [label for _, _, label in results]})
        return Estimates(frame, np.array([v for v, _, _ in results]), grads @ jac)
    if isinstance(hypothesis, pd.DataFrame):
        hypothesis = _rows_by_label(hypothesis, row_labels)
    kind = not_numbers(hypothesis)  # a boolean matrix would be read as 0/1
    try:
        matrix = np.asarray(hypothesis, dtype=float) if kind is None else np.empty(0)
    except (TypeError, ValueError):
        matrix = np.empty(0)
    if matrix.ndim == 1 and matrix.size == n:
        matrix = matrix[:, None]
    if matrix.ndim != 2 or matrix.shape[0] != n or not np.all(np.isfinite(matrix)):
        what = _describe(hypothesis)
        if kind is not None:
            what += f" of {kind}"
        elif matrix.size and not np.all(np.isfinite(matrix)) and hypothesis is not None:
            what += " with missing or infinite values"
        raise OrdstatsError(
            "hypothesis must be a string such as \"b1 - b2 = 0\", 'pairwise', 'reference', "
            f"'sequential', or a matrix of finite numbers with one row per estimate ({n}) and "
            f"one column per hypothesis; got {what}"
        )
    names = (
        list(map(str, hypothesis.columns))
        if isinstance(hypothesis, pd.DataFrame)
        else [f"H{j + 1}" for j in range(matrix.shape[1])]
    )
    frame = pd.DataFrame({"term": names})
    return Estimates(frame, matrix.T @ values, matrix.T @ jac)
