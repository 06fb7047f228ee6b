r"""Random-effect terms of a mixed formula: ``(expr | group)`` as in lme4 and R's ``clmm``.

A mixed formula is a clm formula plus bar terms, ``rating ~ temp + contact + (1|judge)``.
:func:`split_random` takes the bars out of the right-hand side (the rest goes through
formulaic as for a clm); :func:`random_terms` builds, for each bar, the term's model matrix
``X_t`` (``n x q_t``, by formulaic, so ``1 + contact`` and ``0 + contact`` code as in R) and
the grouping factor's codes.  The random part of the linear predictor is

.. math::

    \eta_i \mathrel{+}= \sum_t x_{ti}^\top b_{t,g_t(i)}, \qquad
    b_{t,l} \sim N(0, \Sigma_t) \text{ independently over terms and levels.}

Grouping syntax: ``(1|g)``; ``(1|a:b)`` groups by the observed combinations of ``a`` and
``b``; ``(1|a/b)`` expands to ``(1|a) + (1|b:a)`` (lme4's nesting, named ``"b:a"``);
``(0 + x|g)`` a slope without intercept (uncorrelated with a separate ``(1|g)``).
"""

from __future__ import annotations

import difflib
import numbers
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from formulaic import model_matrix

from ordstats._typing import FloatArray, IntArray
from ordstats.design.censored import refuse_censored
from ordstats.design.contrasts import RDefaultsMaterializer
from ordstats.design.core import (
    DEFAULT_DESIGN_OPTIONS,
    Design,
    DesignOptions,
    _bad_rows,
    align_to_index,
    refuse_repeated_columns,
    report_missing_counts,
)
from ordstats.design.formula import (
    _as_frame,
    _expand,
    design_from_formula,
    refuse_response_in_terms,
    refuse_values_of_used_rows,
    required_variables,
    split_formula,
    terms_without_columns,
    with_row_context,
)
from ordstats.design.newdata import _unseen_levels_error
from ordstats.design.subset import subset_mask
from ordstats.errors import (
    FormulaError,
    PredictionError,
    SpecificationError,
    SpecificationWarning,
    user_stacklevel,
)

__all__ = [
    "MixedDesign",
    "NewTermRows",
    "RandomTerm",
    "check_random_columns",
    "formula_parts",
    "group_ids",
    "has_random_terms",
    "mixed_design_from_formula",
    "random_columns",
    "random_terms",
    "random_variables",
    "split_random",
    "term_matrices_for",
]


@dataclass(frozen=True, eq=False)
class RandomTerm:
    """One random-effect term ``(expr | group)`` on the rows of a design.

    Attributes
    ----------
    expr : str
        Left of the bar (``"1"``, ``"1 + contact"``, ``"0 + x"``).
    group : str
        Grouping factor name (``"judge"``, ``"DAY:RESP"``).
    group_columns : tuple of str
        Data columns whose combination defines the groups.
    columns : list of str
        Names of the term's columns (``"(Intercept)"``, ``"contact[T.yes]"``).
    matrix : ndarray, shape (n, q)
        ``X_t``.
    codes : ndarray of int, shape (n,)
        Level index of each row, ``0 .. n_levels - 1``.
    levels : list of str
        Level labels of the grouping factor (observed levels only).
    spec : object
        formulaic ``ModelSpec`` that rebuilds ``X_t`` on new data.
    """

    expr: str
    group: str
    group_columns: tuple[str, ...]
    columns: list[str]
    matrix: FloatArray
    codes: IntArray
    levels: list[str]
    spec: object

    @property
    def q(self) -> int:
        """Number of random effects per level."""
        return int(self.matrix.shape[1])

    @property
    def n_levels(self) -> int:
        """Number of levels of the grouping factor."""
        return len(self.levels)


def _depths(text: str) -> list[int]:
    """The parenthesis depth at each character of ``text`` (an opening one counts inside)."""
    depth, out = 0, []
    for char in text:
        if char == "(":
            depth += 1
        out.append(depth)
        if char == ")":
            depth -= 1
    return out


def _split_top(text: str) -> list[str]:
    """Split ``text`` at ``+`` signs outside parentheses."""
    parts: list[str] = []
    current: list[str] = []
    for char, depth in zip(text, _depths(text), strict=True):
        if char == "+" and depth == 0:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    parts.append("".join(current).strip())
    return [p for p in parts if p]


def has_random_terms(formula: str) -> bool:
    """Whether a formula has a bar term ``(expr | group)`` (a bar inside parentheses).

    A bare bar (``y ~ a | b``) is not a random term: the formula layer refuses it
    as a multi-part formula.  The left of the bar may hold calls,
    ``(1 + np.log(x)|g)``.
    """
    if not isinstance(formula, str):
        return False
    return any(c == "|" and d > 0 for c, d in zip(formula, _depths(formula), strict=True))


def _bar_parts(part: str) -> tuple[str, str] | None:
    """``(expr, group)`` of ``(expr | group)``; None unless it is one bar in parentheses."""
    text = part.strip()
    depths = _depths(text)
    # the opening parenthesis must close at the very end: one parenthesised term
    if not (text.startswith("(") and text.endswith(")")) or 0 in depths[1:-1]:
        return None
    bars = [k for k, (c, d) in enumerate(zip(text, depths, strict=True)) if c == "|" and d == 1]
    if len(bars) != 1:
        return None
    return text[1 : bars[0]].strip(), text[bars[0] + 1 : -1].replace(" ", "")


def split_random(rhs: str) -> tuple[str, list[tuple[str, str]]]:
    """Split a right-hand side into its fixed part and its ``(expr, group)`` bar terms.

    Parameters
    ----------
    rhs : str
        ``"temp + contact + (1|judge)"``.

    Returns
    -------
    fixed : str
        ``"temp + contact"`` (``"1"`` if nothing is left).
    bars : list of (str, str)
        ``[("1", "judge")]``, with ``a/b`` expanded to ``a`` and ``b:a``.

    Raises
    ------
    FormulaError
        For a bar outside parentheses, ``||`` (not supported), or nothing left of the
        bar.  (An ``offset(...)`` term stays in the fixed part, where the formula layer
        refuses it.)
    """
    fixed, bars = [], []
    for part in _split_top(rhs):
        if "|" not in part:
            fixed.append(part)
            continue
        if "||" in part:
            raise FormulaError(
                f"double-bar terms {part!r} are not supported; write uncorrelated terms "
                "separately, e.g. '(1|g) + (0 + x|g)'"
            )
        parsed = _bar_parts(part)
        if parsed is None:
            raise FormulaError(
                f"cannot read the random term {part!r}; write it as '(expr | group)', "
                "e.g. '(1|judge)' or '(1 + contact|judge)'"
            )
        expr, group = parsed
        if not expr:
            raise FormulaError(
                f"the random term {part!r} has nothing left of the bar; write '(1|{group})' "
                "for a random intercept"
            )
        if not group or not re.fullmatch(r"[^()|]+", group):
            raise FormulaError(
                f"the grouping factor {group!r} of {part!r} must be a column name or "
                "columns joined by ':' or '/', e.g. '(1|judge)' or '(1|judge:bottle)'"
            )
        expr = " ".join(expr.split())
        if "/" in group:
            names = group.split("/")
            if any(not n for n in names):
                raise FormulaError(f"cannot read the nested grouping {group!r} in {part!r}")
            for k in range(1, len(names) + 1):
                bars.append((expr, ":".join(reversed(names[:k]))))
        else:
            bars.append((expr, group))
    return (" + ".join(fixed) if fixed else "1"), bars


def formula_parts(formula: str) -> list[str]:
    """The fixed formula ``"y ~ fixed"`` and one ``"~ expr"`` per bar term of a mixed formula.

    These are plain formulas, for what reads formulas without bars (such as the names
    a model must keep from the caller's namespace).
    """
    response, rhs = split_formula(formula, random_terms=True)
    fixed, bars = split_random(rhs)
    return [f"{response} ~ {fixed}"] + [f"~ {expr}" for expr, _ in bars]


def _expr_variables(expr: str) -> list[str]:
    return sorted(required_variables(expr))


def random_variables(bars: Sequence[tuple[str, str]]) -> list[str]:
    """Data columns that the random terms use (slope variables and grouping columns)."""
    names: list[str] = []
    for expr, group in bars:
        names += _expr_variables(expr) + group.split(":")
    return list(dict.fromkeys(names))


def check_random_columns(bars: Sequence[tuple[str, str]], data: pd.DataFrame) -> None:
    """Raise a clear :class:`FormulaError` for a column the random terms need but lack.

    Parameters
    ----------
    bars : sequence of (str, str)
    data : pandas.DataFrame
    """
    used: list[str] = []
    for expr, group in bars:
        used += [*group.split(":"), *_expr_variables(expr)]
        for name in group.split(":"):
            if name not in data.columns:
                raise FormulaError(
                    f"grouping factor {name!r} of the random term ({expr}|{group}) is not a "
                    f"column of the data{_hint(name, data.columns)}"
                )
        for name in _expr_variables(expr):
            if name not in data.columns:
                raise FormulaError(
                    f"the random term ({expr}|{group}) uses {name!r}, which is not a column "
                    f"of the data{_hint(name, data.columns)}"
                )
    refuse_repeated_columns(data.columns, used)


def _hint(name: str, columns: Sequence[object]) -> str:
    close = difflib.get_close_matches(name, [str(c) for c in columns], n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def _id_text(value: object) -> str:
    """One group id as text, the same for equal values: ``3``, ``3.0`` and ``"3"`` give ``"3"``."""
    if isinstance(value, (bool, np.bool_)):
        return str(value)
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        number = float(value)
        return str(int(number)) if number.is_integer() else repr(number)
    return str(value)


def group_ids(values: pd.Series) -> pd.Series:
    """Group ids as text matched by value, whatever the column's dtype (NaN stays missing).

    A NaN in the data makes an integer id column float: ``3.0`` must still be
    group ``3`` at prediction, so numbers are written without a trailing
    ``.0`` (as R prints a factor of numbers) and text ids as they are.

    Parameters
    ----------
    values : pandas.Series

    Returns
    -------
    pandas.Series of str (object), NaN where ``values`` are missing
    """
    codes, uniques = pd.factorize(values)
    texts = np.array([_id_text(u) for u in np.asarray(uniques, dtype=object)] + [np.nan], object)
    return pd.Series(texts[codes], index=values.index, dtype=object)


def _group_labels(data: pd.DataFrame, group: str) -> pd.Series:
    """Labels of the grouping factor: one column, or observed combinations joined by ':'."""
    cols = group.split(":")
    labels = group_ids(data[cols[0]])
    for name in cols[1:]:
        labels = labels + ":" + group_ids(data[name])
    return labels


def _level_order(data: pd.DataFrame, group: str, labels: pd.Series) -> list[str]:
    """The grouping factor's levels in R's order.

    A categorical column keeps its categories; a column of text sorts as text,
    as R's ``factor()`` of strings ("1", "10", "2"); numbers and combinations
    of columns sort by their numbers ("2" before "10", as R's factor of numbers).
    """
    cols = group.split(":")
    if len(cols) == 1 and isinstance(data[cols[0]].dtype, pd.CategoricalDtype):
        observed = set(labels)
        categories = group_ids(pd.Series(data[cols[0]].cat.categories))
        return [c for c in categories if c in observed]
    unique = pd.unique(labels)
    column = data[cols[0]]
    if len(cols) == 1 and not pd.api.types.is_numeric_dtype(column):
        return [str(v) for v in sorted(unique)]
    try:
        return [str(v) for v in sorted(unique, key=_natural_key)]
    except TypeError:  # pragma: no cover - mixed label types
        return [str(v) for v in unique]


def _natural_key(label: str) -> tuple[object, ...]:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", str(label)))


def _term_matrix(expr: str, data: pd.DataFrame, context: object) -> tuple[FloatArray, list, object]:
    """``X_t`` of ``expr`` on every row of ``data`` (NaN/inf where a transform gives them)."""
    try:
        with np.errstate(all="ignore"):  # log(x) of x <= 0: reported by name as missing
            matrix = model_matrix(
                expr,
                data,
                context=context,
                na_action="ignore",
                materializer=RDefaultsMaterializer,
            )
    except Exception as exc:  # formulaic raises many types
        raise FormulaError(f"cannot build the random-term matrix of {expr!r}: {exc}") from exc
    names = ["(Intercept)" if c == "Intercept" else str(c) for c in matrix.columns]
    return matrix.to_numpy(dtype=float), names, matrix.model_spec


def _nonfinite_random_columns(
    bars: Sequence[tuple[str, str]], rows: pd.DataFrame, context: object
) -> dict[str, np.ndarray]:
    """Per random-term column with a NaN or infinite value (``np.log(x)``), its finite rows."""
    out: dict[str, np.ndarray] = {}
    for expr, _group in bars:
        matrix, names, _spec = _term_matrix(expr, rows, context)
        finite = np.isfinite(matrix)
        for j in np.flatnonzero(~finite.all(axis=0)):
            out[names[j]] = out.get(names[j], True) & finite[:, j]
    return out


def random_terms(
    bars: Sequence[tuple[str, str]], data: pd.DataFrame, context: object = None
) -> list[RandomTerm]:
    """Build the :class:`RandomTerm` of every bar on the (already cleaned) rows of ``data``.

    Parameters
    ----------
    bars : sequence of (str, str)
        From :func:`split_random`.
    data : pandas.DataFrame
        The rows the model uses, without missing values in the random columns.
    context : mapping, optional
        Names formula expressions may use.

    Returns
    -------
    list of RandomTerm

    Raises
    ------
    FormulaError
        For a column that is not in the data.
    SpecificationError
        For a grouping factor with a single level, or a term whose columns do not
        identify its variances (a factor of one level, or columns that are
        constant or a combination of the term's others).
    """
    check_random_columns(bars, data)
    terms: list[RandomTerm] = []
    for expr, group in bars:
        labels = _group_labels(data, group)
        levels = _level_order(data, group, labels)
        if len(levels) < 2:
            raise SpecificationError(
                f"the grouping factor {group!r} of ({expr}|{group}) has a single level "
                f"({levels[0]!r}) in the rows used; a variance cannot be estimated from one "
                "group: drop the term or check the data"
            )
        index = {lev: k for k, lev in enumerate(levels)}
        codes = labels.map(index).to_numpy(dtype=np.intp)
        matrix, names, spec = _term_matrix(expr, data, context)
        if matrix.shape[1] == 0:
            raise FormulaError(f"the random term ({expr}|{group}) has no columns")
        _refuse_unidentified_columns(expr, group, matrix, names, spec)
        _warn_weakly_identified(expr, group, matrix, names, codes, len(levels))
        _check_not_repeated(terms, group, names, expr)
        terms.append(
            RandomTerm(
                expr=expr,
                group=group,
                group_columns=tuple(group.split(":")),
                columns=names,
                matrix=matrix,
                codes=codes,
                levels=levels,
                spec=spec,
            )
        )
    return terms


def _refuse_unidentified_columns(
    expr: str, group: str, matrix: FloatArray, names: list[str], spec: Any
) -> None:
    """Refuse a random term whose variances are not identified by its columns.

    A factor of one level leaves its term without columns (R's clmm stops:
    "contrasts can be applied only to factors with 2 or more levels"); a column
    that is a combination of the term's others (a constant slope variable beside
    the intercept) leaves only the sum of their variances identified.
    """
    empty, single = terms_without_columns(spec)
    if empty:
        raise SpecificationError(
            f"the random term ({expr}|{group}) has term(s) {empty} without columns: their "
            f"factors take a single level in the rows used ({single}), so there is no random "
            "slope to estimate (R's clmm stops: contrasts can be applied only to factors with "
            "2 or more levels). Drop them from the random term, or check the rows (a subset, "
            "or missing values elsewhere, may have removed the other levels)"
        )
    norms = np.linalg.norm(matrix, axis=0)
    scaled = matrix / np.where(norms > 0, norms, 1.0)
    kept: list[int] = []
    aliased: list[str] = []
    for j in range(matrix.shape[1]):
        if np.linalg.matrix_rank(scaled[:, [*kept, j]]) > len(kept):
            kept.append(j)
        else:
            aliased.append(names[j])
    if aliased:
        raise SpecificationError(
            f"the column(s) {', '.join(map(repr, aliased))} of the random term "
            f"({expr}|{group}) are constant or a combination of the term's other columns "
            "(e.g. a constant slope variable repeats the random intercept), so their "
            "variances and correlations cannot be told apart: drop them from the random term"
        )


def _warn_weakly_identified(
    expr: str, group: str, matrix: FloatArray, names: list[str], codes: IntArray, n_groups: int
) -> None:
    """Warn of a vector-valued term whose covariance the groups can hardly estimate.

    With more columns than groups the ``q`` effects of the groups span fewer than ``q``
    dimensions, so the estimated covariance is singular; a slope column constant within
    every group moves each group's effect along the intercept only, so the intercept's
    and the slope's variances are told apart only through the spread of the column over
    groups (such fits run to a correlation of +-1).
    """
    q = matrix.shape[1]
    if q < 2:
        return
    if q > n_groups:
        warnings.warn(
            f"the random term ({expr}|{group}) has {q} columns but {group!r} has only "
            f"{n_groups} levels: the {q} x {q} covariance of the random effects cannot be "
            "estimated from so few groups and will be singular; use fewer columns in the "
            f"term, e.g. (1|{group}), or more groups",
            SpecificationWarning,
            stacklevel=user_stacklevel(),
        )
        return
    if names[0] != "(Intercept)":
        return
    count = np.bincount(codes, minlength=n_groups)
    for j in range(1, q):
        mean = np.bincount(codes, weights=matrix[:, j], minlength=n_groups) / count
        spread = np.abs(matrix[:, j] - mean[codes])
        if np.all(spread <= 1e-10 * max(float(np.max(np.abs(matrix[:, j]))), 1e-300)):
            warnings.warn(
                f"the random slope {names[j]!r} of ({expr}|{group}) is constant within every "
                f"level of {group!r}: its random effect only adds to the group's intercept, "
                "so the two variances are barely identified (such fits often end at a "
                f"correlation of +-1); drop {names[j]!r} from the random term and keep it as "
                "a fixed effect",
                SpecificationWarning,
                stacklevel=user_stacklevel(),
            )


class NewTermRows(NamedTuple):
    """A random term's columns and groups on new data.

    Attributes
    ----------
    matrix : ndarray, shape (m, q)
        ``X_t`` (NaN where its columns have missing values).
    codes : ndarray of int, shape (m,)
        Level index of each row; ``-1`` for a level not seen in the fit or a
        missing group id (``labels`` tells which).
    labels : pandas.Series
        The rows' group labels as the fit writes them, NaN where missing.
    """

    matrix: FloatArray
    codes: IntArray
    labels: pd.Series


def _term_rows(term: RandomTerm, data: pd.DataFrame) -> FloatArray:
    """``X_t`` of a term on new data: NaN rows where its variables are missing."""
    variables = _expr_variables(term.expr)
    complete = ~data[variables].isna().any(axis=1).to_numpy() if variables else None
    out = np.full((len(data), term.q), np.nan)
    if complete is not None and not complete.any():
        return out
    rows = data if complete is None or complete.all() else data.loc[complete]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            built = term.spec.get_model_matrix(rows, na_action="ignore")  # type: ignore[attr-defined]
        except Exception as exc:  # formulaic raises many types
            raise PredictionError(
                f"cannot build the random-term columns {term.columns} on new data: {exc}"
            ) from exc
    error = _unseen_levels_error(caught)
    if error is not None:
        raise error
    out[slice(None) if complete is None else complete] = built.to_numpy(dtype=float)
    return out


def random_columns(term: RandomTerm, groups: bool = True) -> list[str]:
    """Data columns a random term reads on new data: its slope variables and grouping columns."""
    return _expr_variables(term.expr) + (list(term.group_columns) if groups else [])


def _check_not_repeated(
    earlier: Sequence[RandomTerm], group: str, columns: Sequence[str], expr: str
) -> None:
    """Refuse a column that an earlier term already gives the same grouping factor.

    ``(1|g) + (1|g)`` (or ``(1|a/b) + (1|a)``, or ``(1|g) + (1 + x|g)``) would split one
    variance between two terms, so neither is identified.
    """
    same = set(group.split(":"))
    for term in earlier:
        if set(term.group_columns) != same:
            continue
        shared = [c for c in columns if c in term.columns]
        if shared:
            raise FormulaError(
                f"the random terms ({term.expr}|{term.group}) and ({expr}|{group}) both give "
                f"the grouping factor {group!r} the effect(s) {shared}, so their variances "
                "are not identified; write each effect once per grouping factor, e.g. "
                "'(1 + x|g)' or '(1|g) + (0 + x|g)'"
            )


def term_matrices_for(
    terms: Sequence[RandomTerm], data: pd.DataFrame, groups: bool = True
) -> list[NewTermRows]:
    """Each term's ``X_t`` and level codes on new data (code ``-1`` for an unseen level).

    Group ids are matched by value (:func:`group_ids`): ``3`` finds the group
    fitted as ``3.0``.

    Parameters
    ----------
    terms : sequence of RandomTerm
        The fitted terms.
    data : pandas.DataFrame
    groups : bool
        Whether the grouping columns are needed (conditional predictions);
        without them every code is ``-1``.

    Returns
    -------
    list of NewTermRows

    Raises
    ------
    PredictionError
        ``data`` lacks a column a term needs, or the columns cannot be built.
    DataError
        A column a term reads appears twice in ``data``.
    """
    out = []
    for term in terms:
        missing = [c for c in random_columns(term, groups) if c not in data.columns]
        if missing:
            raise PredictionError(
                f"newdata lacks the column(s) {', '.join(map(repr, missing))} of the random "
                f"term ({term.expr}|{term.group}); add them"
                + (" or predict with re_form=0 or re_form='marginal'" if groups else "")
            )
        refuse_repeated_columns(data.columns, random_columns(term, groups), what="newdata")
        matrix = _term_rows(term, data)
        if groups:
            labels = _group_labels(data, term.group)
            index = {lev: k for k, lev in enumerate(term.levels)}
            codes = labels.map(index).fillna(-1).to_numpy(dtype=np.intp)
        else:
            labels = pd.Series(np.nan, index=data.index, dtype=object)
            codes = np.full(len(data), -1, dtype=np.intp)
        out.append(NewTermRows(matrix, codes, labels))
    return out


@dataclass(frozen=True, eq=False)
class MixedDesign:
    """The fixed-part :class:`~ordstats.design.core.Design` and the random terms on its rows.

    Attributes
    ----------
    fixed : Design
    terms : list of RandomTerm
    formula : str
        The full formula as given.
    """

    fixed: Design
    terms: list[RandomTerm]
    formula: str


def mixed_design_from_formula(
    formula: str,
    data: object,
    *,
    weights: object = None,
    offset: object = None,
    context: object = None,
    options: DesignOptions = DEFAULT_DESIGN_OPTIONS,
    subset: object = None,
) -> MixedDesign:
    """Build a :class:`MixedDesign` from ``"y ~ fixed + (expr | group)"``.

    The fixed part goes through :func:`~ordstats.design.formula.design_from_formula`;
    rows with missing values in the random terms' columns, or whose random-term
    columns are not finite (``np.log(x)`` of ``x <= 0``), are dropped first (with a
    :class:`~ordstats.errors.MissingDataWarning` naming the columns, or a
    :class:`~ordstats.errors.DataError` under ``missing="raise"``).  Rows are handled by
    position, so an index with repeated labels (after ``pd.concat``) is fine; the design
    keeps the data's labels.

    Parameters
    ----------
    formula : str
    data : pandas.DataFrame or mapping of columns
    weights, offset : str or array-like, optional
        A pandas Series is paired with the rows of ``data`` by index label.
    context : mapping, optional
        Names formula expressions may use; the per-row values it records are read
        as columns of ``data`` (:func:`~ordstats.design.formula.with_row_context`).
    options : DesignOptions
        ``levels``, ``missing``, ``collinear``, ``many_levels``.
    subset : optional
        The rows to fit (R's ``subset=``, :func:`~ordstats.design.subset.subset_mask`).

    Returns
    -------
    MixedDesign

    Raises
    ------
    FormulaError
        A random term that uses the response or a column the data lack.
    DataError
        Data that are not a table, or a column a random term uses that appears twice.
    """
    frame, context = with_row_context(_as_frame(data), context)
    response, rhs = split_formula(formula, random_terms=True)
    fixed_rhs, bars = split_random(rhs)
    if not bars:
        raise FormulaError(f"the formula {formula!r} has no random term '(expr | group)'")
    check_random_columns(bars, frame)
    used = random_variables(bars)
    for expr, group in bars:
        refuse_response_in_terms(
            response, f"({expr}|{group})", "random", _expr_variables(expr) + group.split(":")
        )
    refuse_repeated_columns(frame.columns, used)
    labels = frame.index
    weights = _by_position(weights, labels, "weights")
    offset = _by_position(offset, labels, "offset")
    selected = subset_mask(subset, frame, context)
    frame = frame.set_axis(pd.RangeIndex(len(frame)), axis=0)
    bad = _bad_rows(frame[used])
    if selected is not None:  # rows outside the subset are neither used nor missing
        bad.loc[~selected] = False
    raw_ok = ~bad.to_numpy().any(axis=1)
    if raw_ok.any():  # transforms such as np.log(x) may give NaN or inf on complete rows
        for name, finite in _nonfinite_random_columns(bars, frame.loc[raw_ok], context).items():
            bad[name] = ~_expand(finite, raw_ok)
    keep = ~bad.to_numpy().any(axis=1)
    n_selected = len(frame) if selected is None else int(np.count_nonzero(selected))
    refuse_values_of_used_rows(context, len(frame), [int(keep.sum()), n_selected])
    if not keep.all():
        report_missing_counts(
            int((~keep).sum()),
            len(frame),
            bad.sum(axis=0),
            options.missing,
        )
        frame = frame.loc[keep]
        weights, offset = _subset(weights, keep), _subset(offset, keep)
        selected = None if selected is None else selected[keep]
    fixed = design_from_formula(
        f"{response} ~ {fixed_rhs}",
        frame,
        weights=weights,
        offset=offset,
        context=context,
        options=options,
        subset=selected,
    )
    refuse_censored(fixed.response, "random effects (clmm)")
    clean = frame.loc[fixed.row_index]
    terms = random_terms(bars, clean, context)
    positions = np.asarray(fixed.row_index, dtype=np.intp)  # the frame is indexed by position
    fixed = replace(fixed, row_index=labels[positions], row_positions=positions)
    return MixedDesign(fixed=fixed, terms=terms, formula=formula)


def _by_position(value: Any, labels: pd.Index, role: str) -> object:
    """A weights/offset argument with its rows in the data's order (pandas paired by label)."""
    if value is None or isinstance(value, str) or np.ndim(value) == 0:
        return value
    if isinstance(value, (pd.Series, pd.DataFrame)):
        return align_to_index(value, labels, role, "the data").to_numpy()
    return np.asarray(value)


def _subset(value: object, keep: np.ndarray) -> object:
    """The kept rows of a per-row weights/offset array (anything else as it is)."""
    if isinstance(value, np.ndarray) and value.ndim >= 1 and value.shape[0] == keep.shape[0]:
        return value[keep]
    return value
