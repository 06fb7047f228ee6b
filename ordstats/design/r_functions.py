"""R's functions and spellings in formulas: ``factor(x)``, ``cut(age, 3)``, ``ns(x, 3)``, ...

R users write model formulas with R's base functions (``factor``, ``as.numeric``,
``relevel``, ``cut``, ``ifelse``, ``pmin``, ``sqrt``, ``abs``, ``log(x, base = 10)``),
the ``splines`` package's ``ns``, R's literals (``TRUE``, ``FALSE``, ``NULL``,
``c(...)``), dotted argument names (``include.lowest = TRUE``) and R's operators
(``a %in% b``, ``C(f, sum)``).  formulaic evaluates a term as Python, where these
are unknown names or syntax errors, and reads ``b %in% a`` as ``a/b`` (with the
main effect of ``a``: a different model from R's ``a:b``, silently).

:func:`r_spelling` rewrites the text of a formula's terms into what formulaic
evaluates, and :data:`R_FUNCTIONS` are the functions, evaluated as R does.  They sit
below the caller's own names in a formula's evaluation context (a function of the
caller named ``cut`` is the caller's), above formulaic's transforms (R's ``log`` has
``base``).  Stateful ones learn from the fitted rows and reuse what they learnt for
new data: ``cut(x, 3)`` its breaks, ``ns(x, 3)`` its knots, and ``factor(x)`` its
levels (formulaic keeps a factor's levels).  Terms are named by the rewritten text
(``as_numeric(parity)``, ``factor(induced)[T.1]``), as formulaic names other terms.
"""

from __future__ import annotations

import itertools
import re
import warnings
from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd
from formulaic.materializers.types import FactorValues
from formulaic.transforms import stateful_transform
from formulaic.transforms.poly import poly as _formulaic_poly
from scipy.interpolate import BSpline

from ordstats.errors import (
    FormulaError,
    PredictionWarning,
    SpecificationError,
    check_flag,
    is_real_number,
    user_stacklevel,
)

__all__ = [
    "NEW_ROWS_R_FUNCTIONS",
    "R_FUNCTIONS",
    "callers_names",
    "dot_as",
    "dotted_names",
    "evaluate_offset",
    "evaluate_response",
    "expand_dot",
    "has_dot",
    "is_call",
    "is_offset",
    "offset_terms",
    "offset_variables",
    "quote_dotted_columns",
    "r_dotted_calls",
    "r_spelling",
    "replace_outside_quotes",
    "shadows_r_function",
    "update_formula",
    "update_one_sided",
]

# ---------------------------------------------------------------------------
# spellings

_DOTTED_FUNCTIONS = (
    "as.numeric",
    "as.double",
    "as.integer",
    "as.logical",
    "as.character",
    "as.factor",
    "as.ordered",
)
_PACKAGES = ("base", "stats", "splines")
_LITERALS = {"TRUE": "True", "FALSE": "False", "NULL": "None"}
_CONTRAST_SHORT_NAMES = ("poly", "helmert", "sum", "treatment", "SAS")


def _outside_quotes(text: str, rewrite: Callable[[str], str]) -> str:
    """Apply ``rewrite`` to the parts of ``text`` outside quotes and backticks."""
    parts = re.split(r"(`[^`]*`|'[^']*'|\"[^\"]*\")", text)
    return "".join(p if i % 2 else rewrite(p) for i, p in enumerate(parts))


def _plain_spellings(text: str) -> str:
    text = re.sub(rf"\b(?:{'|'.join(_PACKAGES)})::(?=\w)", "", text)
    text = _respell_calls(text, {name: name.replace(".", "_") for name in _DOTTED_FUNCTIONS})
    for r_name, python in _LITERALS.items():
        text = re.sub(rf"(?<![\w.]){r_name}(?![\w.])", python, text)
    # argument names with dots (include.lowest = TRUE): never Python, so never ambiguous
    return re.sub(r"(?<![\w.])([A-Za-z]\w*(?:\.\w+)+)(?=\s*=(?!=))", _underscored, text)


def _respell_calls(text: str, spellings: Mapping[str, str]) -> str:
    """``text`` with each call ``old(`` of ``spellings`` written ``new(``."""
    for old, new in spellings.items():
        text = re.sub(rf"(?<![\w.]){re.escape(old)}(?=\s*\()", new, text)
    return text


def r_dotted_calls(text: str) -> str:
    """R's spelling of the dotted calls in a name: ``as_integer(x)`` as ``as.integer(x)``.

    The inverse, for labels, of the renaming :func:`r_spelling` does so that
    formulaic can evaluate ``as.integer(x)``; quoted text is left alone.
    """
    spellings = {name.replace(".", "_"): name for name in _DOTTED_FUNCTIONS}
    return _outside_quotes(text, lambda part: _respell_calls(part, spellings))


def _underscored(match: re.Match[str]) -> str:
    return match.group(1).replace(".", "_")


def _short_contrasts(text: str) -> str:
    """R's ``C(f, sum)``: ``C`` reads a bare ``poly``/``helmert``/``sum``/... as ``contr.*``."""
    names = "|".join(_CONTRAST_SHORT_NAMES)
    return re.sub(rf"(\bC\s*\(.*?,\s*)({names})(\s*[,)])", r"\1contr.\2\3", text)


def _nesting_at_top_level(text: str) -> str:
    """R's ``b %in% a`` outside any call as the term ``a:b`` (R's nesting).

    formulaic reads it as ``a/b``, with ``a``'s main effect.  Inside a call ``%in%``
    is left alone.
    """
    return replace_outside_quotes(text, "%in%", ":", in_parentheses=False)


def replace_outside_quotes(text: str, old: str, new: str, *, in_parentheses: bool) -> str:
    """``old`` replaced by ``new`` outside quotes, inside parentheses or outside them all.

    Parameters
    ----------
    text : str
    old, new : str
    in_parentheses : bool
        Replace only within parentheses (True) or only outside every one (False).

    Returns
    -------
    str
    """
    out, depth, k = [], 0, 0
    while k < len(text):
        char = text[k]
        if char in "`'\"":
            end = text.index(char, k + 1) if char in text[k + 1 :] else len(text) - 1
            out.append(text[k : end + 1])
            k = end + 1
            continue
        depth += {"(": 1, ")": -1}.get(char, 0)
        if (depth > 0) == in_parentheses and text.startswith(old, k):
            out.append(new)
            k += len(old)
            continue
        out.append(char)
        k += 1
    return "".join(out)


_INTEGER_OPERATORS = {"%/%": "//", "%%": "%"}
_TERM_OPERATORS = "+-*/:~|,%"


def _top_level_spans(text: str) -> list[tuple[int, str]]:
    """Positions and spellings of R's ``%/%`` and ``%%`` outside calls and quotes."""
    found, depth, k = [], 0, 0
    while k < len(text):
        char = text[k]
        if char in "`'\"":
            end = text.find(char, k + 1)
            k = len(text) if end < 0 else end + 1
            continue
        depth += {"(": 1, ")": -1}.get(char, 0)
        operator = next((op for op in _INTEGER_OPERATORS if text.startswith(op, k)), None)
        if operator is not None:
            if depth == 0:
                found.append((k, operator))
            k += len(operator)
            continue
        k += 1
    return found


def _operand_end(text: str, start: int, step: int) -> int:
    """Where the operand that starts at ``start`` ends, reading in direction ``step``."""
    depth, k = 0, start
    while 0 <= k < len(text):
        char = text[k]
        if char in "([":
            depth += step
        elif char in ")]":
            depth -= step
        if depth < 0 or (depth == 0 and char in _TERM_OPERATORS):
            break
        k += step
    return k


def _integer_arithmetic(text: str) -> str:
    """R's integer division ``a %/% b`` and modulo ``a %% b`` as Python's ``//`` and ``%``.

    R's ``%op%`` binds more tightly than the formula's operators, so a top-level
    ``age %/% 5`` is the term ``I(age // 5)``; inside calls only the spelling changes.
    """
    while spans := _top_level_spans(text):
        at, operator = spans[0]
        left = _operand_end(text, at - 1, -1) + 1
        right = _operand_end(text, at + len(operator), 1)
        operand = text[left:right]
        lead, trail = len(operand) - len(operand.lstrip()), len(operand.rstrip())
        wrapped = f"{operand[:lead]}I({operand[lead:trail]}){operand[trail:]}"
        text = text[:left] + wrapped + text[right:]
    return _outside_quotes(text, _python_integer_operators)


def _python_integer_operators(text: str) -> str:
    for r_operator, python in _INTEGER_OPERATORS.items():
        text = text.replace(r_operator, python)
    return text


def r_spelling(rhs: str) -> str:
    """The terms ``rhs`` with R's spellings rewritten into what formulaic evaluates.

    ``pkg::f`` (base, stats, splines) -> ``f``; ``as.numeric(`` and R's other dotted
    conversion functions -> ``as_numeric(``; ``TRUE``/``FALSE``/``NULL`` -> Python's;
    dotted argument names -> underscores (``include.lowest`` -> ``include_lowest``);
    ``C(f, sum)`` -> ``C(f, contr.sum)``; ``b %in% a`` outside calls -> ``b:a``;
    ``a %/% b`` and ``a %% b`` -> ``I(a // b)`` and ``I(a % b)`` (inside calls
    ``a // b``, ``a % b``).  Quoted names and strings are left as they are.

    Parameters
    ----------
    rhs : str
        The right-hand side of a formula.

    Returns
    -------
    str
    """
    text = _outside_quotes(rhs, _plain_spellings)
    text = _nesting_at_top_level(_outside_quotes(text, _short_contrasts))
    return _integer_arithmetic(text)


_DOT = re.compile(r"(?<![\w.])\.(?![\w.])")


def has_dot(formula: Any) -> bool:
    """Whether the terms of ``formula`` (text with a ``~``) use R's ``.`` (all other columns)."""
    if not isinstance(formula, str) or "~" not in formula:
        return False
    found = False

    def look(part: str) -> str:
        nonlocal found
        found = found or bool(_DOT.search(part))
        return part

    _outside_quotes(formula.split("~", 1)[1], look)
    return found


#: A dotted name as R writes one bare (``Solar.R``, ``exposure.time``), not in quotes.
_DOTTED_NAME = re.compile(r"(?<![\w.])[A-Za-z][\w]*(?:\.[\w]+)+(?![\w.])(?!\s*\()")


def dotted_names(formula: Any) -> set[str]:
    """The bare dotted names (``Solar.R``) that ``formula``'s text uses outside quotes.

    Calls (``np.log(``) are left out; attribute uses such as ``np.pi`` are not,
    and only those that are data columns are quoted (:func:`quote_dotted_columns`).
    """
    found: set[str] = set()
    if not isinstance(formula, str):
        return found

    def look(part: str) -> str:
        found.update(_DOTTED_NAME.findall(part))
        return part

    _outside_quotes(formula, look)
    return found


def quote_dotted_columns(formula: Any, columns: Any) -> Any:
    """``formula`` with each bare dotted column name (R's ``Solar.R``) in backticks.

    R reads ``y ~ Solar.R`` as the column ``Solar.R``; formulaic reads an
    attribute of ``Solar``.  Names that are columns of the data are quoted,
    so that the formula reads them as R does; other dotted names (``np.pi``)
    are left as they are.  Text that is not a formula comes back unchanged.

    Parameters
    ----------
    formula : str or None
    columns : iterable
        The data's column names.

    Returns
    -------
    str or None
    """
    used = dotted_names(formula)
    quoted = used & {str(c) for c in columns}
    if not quoted:
        return formula
    pattern = re.compile(
        r"(?<![\w.])("
        + "|".join(re.escape(name) for name in sorted(quoted, key=len, reverse=True))
        + r")(?![\w.])(?!\s*\()"
    )
    return _outside_quotes(formula, lambda part: pattern.sub(r"`\1`", part))


def expand_dot(formula: str, columns: Any, response: str | None) -> str:
    """``formula`` with R's ``.`` as the sum of the data's ``columns`` but the response.

    R's ``y ~ .`` (also ``. - x``, ``.^2``, ``~ .`` of nominal or scale effects)
    means every column of the data other than the response, the weights column
    included, as in R.  Names that are not Python names are quoted in backticks.

    Parameters
    ----------
    formula : str
        ``"y ~ terms"`` or a one-sided ``"~ terms"``.
    columns : iterable
        The data's column names, in their order.
    response : str or None
        The response column, left out.

    Returns
    -------
    str
    """
    lhs, rhs = formula.split("~", 1)
    names = [str(c) for c in columns if str(c) != response]
    if not names:
        raise FormulaError(f"the formula {formula!r} uses '.', but the data have no other columns")
    terms = " + ".join(n if n.isidentifier() else f"`{n}`" for n in names)
    return f"{lhs}~{dot_as(rhs, terms)}"


def dot_as(rhs: str, terms: str) -> str:
    """The terms ``rhs`` with R's ``.`` (outside quotes) read as ``(terms)``."""
    return _outside_quotes(rhs, lambda part: _DOT.sub(lambda _: f"({terms})", part))


def update_formula(old: str, new: str) -> str:
    """R's ``update.formula``: ``new`` with ``.`` standing for the matching side of ``old``.

    ``"~ . - contact"`` keeps the response and drops a term; ``". ~ . + x"``
    adds one; a one-sided ``new`` keeps the response, and a response without
    ``.`` replaces it.  The terms are not simplified here: the formula layer
    reads ``(temp + contact) - contact`` as R's ``update`` does.

    Parameters
    ----------
    old : str
        ``"y ~ terms"``.
    new : str
        ``"~ terms"`` or ``"y ~ terms"``, either side may use ``.``.

    Returns
    -------
    str
    """
    if not isinstance(new, str) or "~" not in new:
        raise FormulaError(
            f"update() takes a formula with '~', such as '~ . + x' or '. ~ . - x'; got {new!r}"
        )
    old_lhs, old_rhs = (part.strip() for part in old.split("~", 1))
    new_lhs, new_rhs = (part.strip() for part in new.split("~", 1))
    if not new_rhs:
        raise FormulaError(f"update()'s formula {new!r} has no terms; '~ .' keeps them")
    lhs = _outside_quotes(new_lhs, lambda p: _DOT.sub(lambda _: old_lhs, p)) if new_lhs else old_lhs
    return f"{lhs} ~ {dot_as(new_rhs, old_rhs)}"


def update_one_sided(old: str | None, new: str | None, what: str) -> str | None:
    """A nominal or scale formula ``new`` with ``.`` standing for ``old``'s terms.

    ``None`` (or ``"~ 0"``-like text the formula layer reads) is taken as given.
    """
    if new is None or not has_dot(new):
        return new
    if old is None:
        raise FormulaError(
            f"the {what} formula {new!r} uses '.', but the model has no {what} effects for it "
            "to stand for; name the terms"
        )
    old_terms = old.split("~", 1)[1] if "~" in old else old
    return f"~ {dot_as(new.split('~', 1)[1].strip(), old_terms.strip())}"


_CALL = re.compile(r"^[A-Za-z_][\w.]*(?:::[A-Za-z_][\w.]*)?\s*\(.*\)$", re.DOTALL)


#: a backticked name, as formulas quote column names that are not identifiers
_BACKTICKED = re.compile(r"`([^`]*)`")


def _quoted_column(
    name: str, frame: pd.DataFrame, namespace: dict[str, Any], text: str, what: str
) -> str:
    """An identifier bound in ``namespace`` to the column ``name`` of a backticked name."""
    columns = {str(c): c for c in frame.columns}
    if name not in columns:
        raise FormulaError(f"the {what} {text!r} names {name!r}, which is not a column of the data")
    key = f"_column_{len(namespace)}"
    namespace[key] = frame[columns[name]]
    return key


def _evaluate(text: str, frame: pd.DataFrame, names: dict[str, Any], what: str) -> Any:
    """``text`` (R's spelling) evaluated with R's functions, ``names`` and ``frame``'s columns."""
    namespace: dict[str, Any] = {**R_FUNCTIONS, **names}
    namespace.update({str(c): frame[c] for c in frame.columns if str(c).isidentifier()})
    source = _BACKTICKED.sub(
        lambda m: _quoted_column(m.group(1), frame, namespace, text, what), text
    )
    try:
        return eval(  # the formula's own text, as formulaic evaluates terms
            compile(r_spelling(source), f"<{what}>", "eval"), {"__builtins__": {}}, namespace
        )
    except Exception as exc:
        raise FormulaError(f"cannot evaluate the {what} {text!r}: {exc}") from exc


def is_call(text: str) -> bool:
    """Whether ``text`` is a call such as ``factor(y)`` (a response given as an expression)."""
    return bool(_CALL.match(text.strip()))


def evaluate_response(
    lhs: str, frame: pd.DataFrame, context: Mapping[str, Any] | None
) -> pd.Series | None:
    """The response ``lhs`` when it is a call such as R's ``factor(y)`` or ``ordered(y)``.

    R's clm needs a factor response, so R users write ``factor(y) ~ x``; its levels,
    in their order, are the ordered categories (as clm reads any factor).  The call is
    evaluated with R's functions (:data:`R_FUNCTIONS`), the caller's names
    (``context``) and the columns of ``frame``.

    Returns
    -------
    pandas.Series or None
        On ``frame``'s index, an ordered categorical where the call gave a factor;
        None when ``lhs`` is not a call.
    """
    text = lhs.strip()
    if not is_call(text):
        return None
    value = _evaluate(text, frame, dict(callers_names(context)), "response")
    values = pd.Series(value, index=frame.index) if not isinstance(value, pd.Series) else value
    if isinstance(values.dtype, pd.CategoricalDtype) and not values.cat.ordered:
        values = values.cat.as_ordered()  # a factor's levels are clm's ordered categories
    if len(values) != len(frame):
        raise FormulaError(
            f"the response {text!r} gives {len(values)} values for {len(frame)} rows"
        )
    return values


def _call_end(text: str, open_at: int) -> int:
    """The position after the parenthesis that closes the one at ``open_at``."""
    depth = 0
    for k in range(open_at, len(text)):
        depth += {"(": 1, ")": -1}.get(text[k], 0)
        if depth == 0:
            return k + 1
    raise FormulaError(f"unbalanced parentheses in {text!r}")


def offset_terms(rhs: str) -> tuple[str, str | None]:
    """Split R's ``offset(...)`` terms off the terms ``rhs``.

    Returns
    -------
    rhs : str
        The other terms (``"1"`` if none is left).
    offset : str or None
        The offset terms joined by ``" + "`` (:func:`evaluate_offset` reads them), or
        None without any.
    """
    found: list[str] = []
    rest = rhs
    while (match := re.search(r"(?:^|(?<=[\s+]))offset\s*\(", rest)) is not None:
        if _depth_at(rest, match.start()) != 0:
            break  # inside a call: not a term of the formula
        end = _call_end(rest, match.end() - 1)
        found.append(rest[match.start() : end])
        before, after = rest[: match.start()].rstrip(), rest[end:].lstrip()
        if before.endswith("+"):
            rest = f"{before[:-1].rstrip()} {after}".strip()
        else:
            rest = after[1:].lstrip() if after.startswith("+") else f"{before} {after}".strip()
    if not found:
        return rhs, None
    return rest or "1", " + ".join(found)


def _depth_at(text: str, position: int) -> int:
    return text[:position].count("(") - text[:position].count(")")


def is_offset(text: Any) -> bool:
    """Whether ``text`` is offset terms (``"offset(log(t))"``) as :func:`offset_terms` gives."""
    return isinstance(text, str) and offset_terms(text)[1] == text.strip()


def offset_variables(text: str, columns: Any) -> list[Any]:
    """The ``columns`` that the offset terms ``text`` read."""
    names = set(re.findall(r"[A-Za-z_]\w*", text))
    return [c for c in columns if str(c) in names]


def evaluate_offset(text: str, frame: pd.DataFrame) -> pd.Series:
    """The values of offset terms ``offset(a) + offset(b)`` on ``frame`` (their sum, as R)."""
    value = _evaluate(text, frame, {"np": np, "offset": _as_floats}, "offset")
    values = np.broadcast_to(np.asarray(value, dtype=float), (len(frame),))
    return pd.Series(values, index=frame.index)


# ---------------------------------------------------------------------------
# conversions


def _values(x: Any) -> pd.Series:
    return x if isinstance(x, pd.Series) else pd.Series(np.asarray(x))


def _like(x: Any, values: Any) -> Any:
    """``values`` as a Series on ``x``'s index when ``x`` is a Series."""
    if isinstance(x, pd.Series):
        return pd.Series(values, index=x.index)
    return values


def _as_numeric(x: Any) -> Any:
    """R's ``as.numeric``: a factor's codes (1, 2, ...), numbers as floats, text parsed."""
    s = _values(x)
    if isinstance(s.dtype, pd.CategoricalDtype):
        codes = s.cat.codes.to_numpy()
        return _like(x, np.where(codes < 0, np.nan, codes + 1.0))
    if s.dtype == bool:
        return _like(x, s.to_numpy(dtype=float))
    return _like(x, pd.to_numeric(s, errors="coerce").to_numpy(dtype=float, na_value=np.nan))


def _as_integer(x: Any) -> Any:
    """R's ``as.integer``: :func:`_as_numeric` truncated towards zero."""
    return np.trunc(_as_numeric(x))


_TRUE_TEXT = {"TRUE", "true", "True", "T"}
_FALSE_TEXT = {"FALSE", "false", "False", "F"}


def _as_logical(x: Any) -> Any:
    """R's ``as.logical`` as a factor with levels False, True (missing where R has NA)."""
    s = _values(x)
    flags: np.ndarray
    if s.dtype.kind in "biuf":
        numbers = s.to_numpy(dtype=float, na_value=np.nan)
        flags = (numbers != 0).astype(object)
        flags[np.isnan(numbers)] = None
    else:
        text = s.astype(object)
        flags = np.array(
            [True if v in _TRUE_TEXT else False if v in _FALSE_TEXT else None for v in text],
            dtype=object,
        )
    out = pd.Categorical(list(flags), categories=[False, True])
    return _like(x, out)


def _as_character(x: Any) -> Any:
    """R's ``as.character``: text (a factor in a model, its levels sorted)."""
    s = _values(x)
    text = s.astype(object).where(s.notna(), None).map(lambda v: v if v is None else str(v))
    return _like(x, text.to_numpy()) if isinstance(x, pd.Series) else text.to_numpy()


def _r_text(value: Any) -> str:
    """``value`` as R's ``as.character`` writes it (2 for 2.0, 0.1 for 0.1)."""
    if isinstance(value, (float, np.floating)):
        return str(int(value)) if float(value).is_integer() else f"{value:.15g}"
    return str(value)


def _levels_of(s: pd.Series) -> list[Any]:
    if isinstance(s.dtype, pd.CategoricalDtype):
        used = set(s.dropna().unique())
        return [level for level in s.cat.categories if level in used]
    return sorted(s.dropna().unique())


def _factor(
    x: Any,
    levels: Any = None,
    labels: Any = None,
    ordered: bool = False,
) -> Any:
    """R's ``factor``: a categorical of ``x``'s sorted values (or ``levels``, as ``labels``)."""
    s = _values(x)
    categories = _levels_of(s) if levels is None else list(np.atleast_1d(levels))
    if len(set(categories)) != len(categories):
        raise FormulaError(f"factor(): levels {categories} are not unique")
    values = s.astype(object).where(s.notna(), None)
    text_values = any(isinstance(v, str) for v in values if v is not None)
    if levels is not None and text_values and not all(isinstance(c, str) for c in categories):
        # R compares as text: factor(y, levels = c(5, 4)) of labels "4", "5" has levels
        # "5", "4"
        categories = [_r_text(c) for c in categories]
    if levels is not None and all(isinstance(c, str) for c in categories):
        # R compares as text: factor(n, levels = c("2", "1")) of numbers 1, 2
        values = values.map(lambda v: v if v is None else _r_text(v))
    out = pd.Categorical(values, categories, ordered=ordered)
    if labels is not None:
        labels = list(np.atleast_1d(labels))
        if len(labels) != len(categories):
            raise FormulaError(
                f"factor(): {len(labels)} labels for {len(categories)} levels ({categories})"
            )
        out = out.rename_categories(labels)
    return _like(x, out)


def _ordered(x: Any, levels: Any = None, labels: Any = None) -> Any:
    """R's ``ordered``: :func:`_factor` with ``ordered=True`` (coded with ``contr.poly``)."""
    return _factor(x, levels, labels, ordered=True)


def _as_factor(x: Any) -> Any:
    s = _values(x)
    return x if isinstance(s.dtype, pd.CategoricalDtype) else _factor(x)


def _as_ordered(x: Any) -> Any:
    s = _values(x)
    if isinstance(s.dtype, pd.CategoricalDtype):
        return _like(x, s.cat.as_ordered().array)
    return _ordered(x)


def _relevel(x: Any, ref: Any) -> Any:
    """R's ``relevel``: the factor ``x`` with level ``ref`` first (the reference level)."""
    return _reference_first(x, ref, absent_ok=False)


def _relevel_new_rows(x: Any, ref: Any) -> Any:
    """:func:`_relevel` of rows that may lack the reference level (a chunk, new data).

    The reference is kept as the first level even when no row has it: the
    fitted model's levels then encode the rows, as R's ``predict`` gives new
    data the fit's levels.
    """
    return _reference_first(x, ref, absent_ok=True)


def _reference_first(x: Any, ref: Any, absent_ok: bool) -> Any:
    """The factor ``x`` with level ``ref`` first; a ``ref`` it lacks added (or refused)."""
    s = _values(_as_factor(x))
    categories = list(s.cat.categories)
    if _is_position(ref):
        # R's relevel reads a number as a position, which depends on the levels the
        # rows at hand have (a chunk's, new data's): refused rather than guessed
        raise FormulaError(
            f"relevel(): ref={ref!r} is a number, which R reads as the position of a level "
            f'(not the level {ref!r}); name the level as text instead: ref = "{ref}" for '
            f"the level {ref}"
        )
    level = ref
    if ref not in categories:  # R's levels are text: relevel(factor(n), ref = "2")
        level = next((c for c in categories if _r_text(c) == _r_text(ref)), None)
    if level is None and not absent_ok:
        raise FormulaError(
            f"relevel(): ref={ref!r} is not a level of the factor "
            f"({', '.join(map(str, categories))})"
        )
    if level is None:  # rows without the reference: the fit's levels encode them
        s, level = s.cat.add_categories([ref]), ref
    order = [level, *(c for c in categories if c != level)]
    return _like(x, s.cat.reorder_categories(order).array)


def _is_position(ref: Any) -> bool:
    """Whether ``ref`` is a number (R's ``relevel`` reads it as a position)."""
    return is_real_number(ref)


def _interaction(*factors: Any, sep: str = ".", lex_order: bool = False) -> Any:
    """R's ``interaction``: a factor of every combination of the factors' levels.

    Its levels are all combinations (R's ``drop = FALSE``), the first factor varying
    fastest unless ``lex_order``; a combination that no row has gives a column of
    zeros, dropped as aliased (as R's clm does).
    """
    if not factors:
        raise FormulaError("interaction() needs at least one factor")
    series = [_values(_as_factor(f)) for f in factors]
    levels = [[_r_text(c) for c in s.cat.categories] for s in series]
    if lex_order:
        combos = list(itertools.product(*levels))
    else:  # the first factor varies fastest
        combos = [tuple(reversed(c)) for c in itertools.product(*reversed(levels))]
    names = [sep.join(c) for c in combos]
    rows = zip(*(s.astype(object).to_numpy() for s in series), strict=True)
    text = [None if any(pd.isna(v) for v in row) else sep.join(map(_r_text, row)) for row in rows]
    return _like(factors[0], pd.Categorical(text, categories=names))


# ---------------------------------------------------------------------------
# arithmetic


def _log(x: Any, base: float = np.e) -> Any:
    """R's ``log(x, base = exp(1))``."""
    out = np.log(x)
    return out if base == np.e else out / np.log(base)


def _round(x: Any, digits: int = 0) -> Any:
    return np.round(x, int(digits))


def _signif(x: Any, digits: int = 6) -> Any:
    """R's ``signif``: ``x`` rounded to ``digits`` significant digits."""
    values = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        power = np.where(values == 0, 0, np.floor(np.log10(np.abs(values))))
        scale = 10.0 ** (int(digits) - 1 - power)
        return _like(x, np.round(values * scale) / scale)


def _parallel(name: str, args: tuple[Any, ...], na_rm: bool) -> Any:
    if not args:
        raise FormulaError(f"{name}() needs at least one argument")
    stacked = np.vstack([a.ravel() for a in np.broadcast_arrays(*map(_as_floats, args))])
    if na_rm:
        with warnings.catch_warnings():  # a row that is all NA stays NA
            warnings.simplefilter("ignore", RuntimeWarning)
            out = (np.nanmin if name == "pmin" else np.nanmax)(stacked, axis=0)
    else:
        out = (np.min if name == "pmin" else np.max)(stacked, axis=0)
    first = next((a for a in args if isinstance(a, pd.Series)), None)
    return out if first is None else pd.Series(out, index=first.index)


def _as_floats(x: Any) -> np.ndarray:
    if np.iscomplexobj(np.asarray(x)):  # numpy would drop the imaginary part
        raise FormulaError(
            "the values are complex numbers, whose imaginary part would be "
            "dropped; give real values (np.real or np.abs of the column, if that is meant)"
        )
    return _values(x).to_numpy(dtype=float, na_value=np.nan) if np.ndim(x) else np.asarray(x, float)


def _pmin(*args: Any, na_rm: bool = False) -> Any:
    """R's ``pmin``: the smallest of the arguments, row by row (NA if any is, unless ``na_rm``)."""
    return _parallel("pmin", args, na_rm)


def _pmax(*args: Any, na_rm: bool = False) -> Any:
    """R's ``pmax``: the largest of the arguments, row by row."""
    return _parallel("pmax", args, na_rm)


def _numbers(name: str, x: Any, na_rm: bool) -> np.ndarray:
    """``x``'s values as floats for R's summary ``name`` (missing ones left out if ``na_rm``)."""
    try:
        values = _values(x).to_numpy(dtype=float, na_value=np.nan)
    except (TypeError, ValueError) as exc:
        raise FormulaError(f"{name}() needs numbers; got {_values(x).dtype}") from exc
    return values[~np.isnan(values)] if na_rm else values


def _summary(name: str, reduce: Callable[[np.ndarray], Any]) -> Callable[..., float]:
    """R's summary ``name`` of one variable: NA if a value is missing, unless ``na.rm = TRUE``.

    As in R's model frames, the summary is of the rows the formula is evaluated on:
    new data's own rows when predicting.
    """

    def summary(x: Any, na_rm: bool = False) -> float:
        values = _numbers(name, x, na_rm)
        if values.size == 0 or np.isnan(values).any():
            return float("nan")
        return float(reduce(values))

    summary.__name__ = summary.__qualname__ = name
    summary.__doc__ = f"R's ``{name}`` of one variable (``na.rm`` as R's)."
    return summary


def _length(x: Any) -> int:
    """R's ``length``: the number of values, missing ones included."""
    return len(_values(x))


def _xor(x: Any, y: Any) -> Any:
    """R's ``xor``: one of ``x``, ``y`` holds and not both, row by row (NA where either is)."""
    a = _values(x).to_numpy(dtype=float, na_value=np.nan)
    b = _values(y).to_numpy(dtype=float, na_value=np.nan)
    missing = np.isnan(a) | np.isnan(b)
    flags = (np.nan_to_num(a) != 0) ^ (np.nan_to_num(b) != 0)
    return _as_logical(_like(x, np.where(missing, np.nan, flags.astype(float))))


def _ifelse(test: Any, yes: Any, no: Any) -> Any:
    """R's ``ifelse``: ``yes`` where ``test`` holds, ``no`` where not, NA where ``test`` is."""
    numbers = _values(test).to_numpy(dtype=float, na_value=np.nan)
    missing = np.isnan(numbers)
    flags = np.where(missing, 0.0, numbers) != 0
    yes_v = np.broadcast_to(np.asarray(yes, dtype=float), flags.shape)
    no_v = np.broadcast_to(np.asarray(no, dtype=float), flags.shape)
    out = np.where(flags, yes_v, no_v)
    out[missing] = np.nan
    return _like(test, out)


def _levels(x: Any) -> list[Any]:
    """R's ``levels``: a factor's levels (for ``levels = rev(levels(y))``)."""
    return list(_values(_as_factor(x)).cat.categories)


def _rev(x: Any) -> list[Any]:
    """R's ``rev`` of a list of levels."""
    return list(np.atleast_1d(x).tolist() if not isinstance(x, list) else x)[::-1]


def _c(*args: Any) -> list[Any]:
    """R's ``c``: the arguments in one list (for ``levels = c("a", "b")`` and breaks)."""
    out: list[Any] = []
    for arg in args:
        out.extend(np.atleast_1d(arg).tolist() if not isinstance(arg, str) else [arg])
    return out


# ---------------------------------------------------------------------------
# stateful: cut and ns


def _r_format(value: float, digits: int) -> str:
    """C's ``%.<digits>g``, as R's ``formatC(0 + value, digits, width = 1)``."""
    return f"{0.0 + value:.{digits}g}"


def _cut_breaks(x: np.ndarray, breaks: Any) -> np.ndarray:
    """R's breaks of ``cut(x, breaks)``: ``breaks`` intervals over the range, widened by 0.1%."""
    if np.ndim(breaks) == 0:
        n = int(breaks)
        if n < 2:
            raise FormulaError(
                f"cut(): breaks={breaks} must be at least 2 (the number of intervals)"
            )
        seen = x[np.isfinite(x)]
        if seen.size == 0:
            raise FormulaError("cut(): the variable has no finite values to take breaks from")
        low, high = float(seen.min()), float(seen.max())
        width = high - low
        if width == 0:
            width = abs(low) if low != 0 else 1.0
            return np.linspace(low - width / 1000, high + width / 1000, n + 1)
        out = np.linspace(low, high, n + 1)
        out[[0, -1]] = [low - width / 1000, high + width / 1000]
        return out
    out = np.sort(np.asarray(breaks, dtype=float))
    if np.unique(out).size != out.size:
        raise FormulaError(f"cut(): breaks {out.tolist()} are not unique")
    return out


def _cut_labels(breaks: np.ndarray, right: bool, include_lowest: bool, dig_lab: int) -> list[str]:
    """R's interval labels, ``(a,b]``, with as many digits as make them distinct."""
    for digits in range(dig_lab, max(12, dig_lab) + 1):
        text = [_r_format(b, digits) for b in breaks]
        if all(a != b for a, b in itertools.pairwise(text)):
            break
    else:
        return [f"Range_{k + 1}" for k in range(len(breaks) - 1)]
    opening, closing = ("(", "]") if right else ("[", ")")
    labels = [f"{opening}{a},{b}{closing}" for a, b in itertools.pairwise(text)]
    if include_lowest:
        if right:
            labels[0] = "[" + labels[0][1:]
        else:
            labels[-1] = labels[-1][:-1] + "]"
    return labels


@stateful_transform
def _cut(
    x: Any,
    breaks: Any,
    labels: Any = None,
    right: bool = True,
    include_lowest: bool = False,
    dig_lab: int = 3,
    ordered_result: bool = False,
    _state: dict[str, Any] | None = None,
) -> Any:
    """R's ``cut``: ``x`` as a factor of intervals; a number of breaks is learnt once."""
    state = {} if _state is None else _state
    values = _values(x).to_numpy(dtype=float, na_value=np.nan)
    if "breaks" in state:
        edges = np.asarray(state["breaks"])
    else:
        edges = _cut_breaks(values, breaks)
        if np.ndim(breaks) == 0:  # learnt from the fitted rows; given breaks are in the text
            state["breaks"] = edges.tolist()
    names = (
        _cut_labels(edges, right, include_lowest, dig_lab)
        if labels is None
        else [str(v) for v in np.atleast_1d(labels)]
    )
    if len(names) != len(edges) - 1:
        raise FormulaError(f"cut(): {len(names)} labels for {len(edges) - 1} intervals")
    # (b_i, b_i+1] when right: the first edge >= x; [b_i, b_i+1) otherwise
    code = np.searchsorted(edges, values, side="left" if right else "right") - 1
    if include_lowest:
        code[values == (edges[0] if right else edges[-1])] = 0 if right else len(names) - 1
    outside = (code < 0) | (code >= len(names)) | np.isnan(values)
    text = [None if out else names[c] for c, out in zip(code, outside, strict=True)]
    return _like(x, pd.Categorical(text, categories=names, ordered=ordered_result))


def _spline_basis(knots: np.ndarray, x: np.ndarray, derivative: int = 0) -> np.ndarray:
    """The cubic B-spline basis of ``knots`` (R's ``splineDesign(knots, x, 4, derivs)``)."""
    n_basis = len(knots) - 4
    spline = BSpline(knots, np.eye(n_basis), 3, extrapolate=True)
    return np.atleast_2d((spline.derivative(derivative) if derivative else spline)(x))


def _natural_basis(
    x: np.ndarray, inner: np.ndarray, boundary: np.ndarray, intercept: bool
) -> np.ndarray:
    """R's ``splines::ns`` basis, continued linearly outside the boundary knots.

    Cubic B-splines with zero second derivatives at the boundary knots: the null space
    of those two constraints, by R's QR construction.
    """
    if boundary[0] == boundary[1]:  # one value (chunked fits' placeholder rows): no basis
        return np.full((x.size, inner.size + 1 + int(intercept)), np.nan)
    knots = np.sort(np.concatenate([np.repeat(boundary, 4), inner]))
    basis = np.zeros((x.size, len(knots) - 4))
    inside = (x >= boundary[0]) & (x <= boundary[1])
    basis[inside] = _spline_basis(knots, x[inside])
    for pivot, side in ((boundary[0], x < boundary[0]), (boundary[1], x > boundary[1])):
        if side.any():  # value and slope at the boundary knot
            at = np.array([pivot])
            value, slope = _spline_basis(knots, at), _spline_basis(knots, at, 1)
            basis[side] = value + np.outer(x[side] - pivot, slope[0])
    constraints = _spline_basis(knots, boundary, 2)
    if not intercept:
        basis, constraints = basis[:, 1:], constraints[:, 1:]
    q, _ = np.linalg.qr(constraints.T, mode="complete")
    return (basis @ q)[:, 2:]


@stateful_transform
def _ns(
    x: Any,
    df: int | None = None,
    knots: Any = None,
    intercept: bool = False,
    Boundary_knots: Any = None,  # R's Boundary.knots
    _state: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """R's ``splines::ns``: a natural cubic spline basis; knots are learnt from the fit."""
    state = {} if _state is None else _state
    values = _values(x).to_numpy(dtype=float, na_value=np.nan)
    seen = values[np.isfinite(values)]
    if "boundary" not in state:
        if seen.size == 0:
            raise FormulaError("ns(): the variable has no finite values")
        boundary = (
            np.array([seen.min(), seen.max()], dtype=float)
            if Boundary_knots is None
            else np.sort(np.asarray(Boundary_knots, dtype=float))
        )
        if knots is None:
            n_inner = 0 if df is None else int(df) - 1 - int(intercept)
            if n_inner < 0:
                raise FormulaError(f"ns(): df={df} is too small (at least {1 + int(intercept)})")
            probs = np.linspace(0, 1, n_inner + 2)[1:-1]
            within = seen[(seen >= boundary[0]) & (seen <= boundary[1])]
            inner = np.quantile(within, probs) if n_inner else np.empty(0)
        else:
            inner = np.sort(np.asarray(knots, dtype=float).ravel())
        state["boundary"], state["knots"] = boundary.tolist(), inner.tolist()
    finite = np.isfinite(values)
    out = np.full((values.size, len(state["knots"]) + 1 + int(intercept)), np.nan)
    out[finite] = _natural_basis(
        values[finite], np.asarray(state["knots"]), np.asarray(state["boundary"]), intercept
    )
    return {str(k + 1): _like(x, out[:, k]) for k in range(out.shape[1])}


@stateful_transform
def _bs(
    x: Any,
    df: int | None = None,
    knots: Any = None,
    degree: int = 3,
    intercept: bool = False,
    Boundary_knots: Any = None,  # R's Boundary.knots
    _state: dict[str, Any] | None = None,
) -> Any:
    """R's ``splines::bs``: a B-spline basis whose knots are learnt from the fit.

    New values outside the boundary knots continue the boundary pieces' polynomials,
    with R's warning, where formulaic's ``bs`` refuses them.
    """
    from formulaic.transforms import basis_spline

    values = _values(x).to_numpy(dtype=float, na_value=np.nan)
    lower, upper = (None, None) if Boundary_knots is None else np.sort(Boundary_knots)
    state = {} if _state is None else _state
    if "lower_bound" in state:
        lower, upper = state["lower_bound"], state["upper_bound"]
    finite = values[np.isfinite(values)]
    if lower is not None and finite.size and (finite.min() < lower or finite.max() > upper):
        warnings.warn(
            "bs(): some values are beyond the boundary knots, which may give ill-conditioned "
            "bases (as R warns); the boundary pieces' polynomials are continued",
            PredictionWarning,
            stacklevel=user_stacklevel(),
        )
    return basis_spline(
        _like(x, values),
        df=df,
        knots=None if knots is None else np.asarray(knots, dtype=float).ravel().tolist(),
        degree=degree,
        include_intercept=intercept,
        lower_bound=lower,
        upper_bound=upper,
        extrapolation="extend",
        _state=state,
    )


def _poly_options(degree: Any, raw: Any) -> tuple[int, bool]:
    """``poly()``'s ``degree`` as a whole number of at least 1 and ``raw`` as a flag.

    A string such as ``raw='no'`` is truthy, so it would give raw polynomials;
    ``degree=2.5`` or ``0`` would fail deep in the basis or give no columns.
    """
    value = float(degree) if is_real_number(degree) else np.nan
    if not (np.isfinite(value) and value % 1 == 0 and value >= 1):
        raise FormulaError(f"poly(): degree must be a whole number of at least 1; got {degree!r}")
    try:
        flag = check_flag("raw", raw)
    except SpecificationError:
        raise FormulaError(f"poly(): raw must be True or False; got {raw!r}") from None
    return int(value), flag


def _check_poly_values(x: Any, degree: int, fitting: bool) -> None:
    """Refuse a variable of ``poly()`` that is not numbers, or too few points to fit.

    Text would fail deep in numpy.  At the fit (``fitting``) of orthogonal
    polynomials, as R's ``poly`` ('degree' must be less than number of unique
    points): with no more distinct values than ``degree`` the higher columns
    would be 0/0 (NaN on every row), e.g. ``poly(b, 2)`` of a boolean ``b``.
    """
    series = _values(x)
    if not pd.api.types.is_numeric_dtype(series.dtype):
        raise FormulaError(
            f"poly() takes numeric variables; one holds {series.dtype} values (for a factor, "
            "use it as a term of its own, or interact it with the polynomial)"
        )
    if not fitting:
        return
    values = series.to_numpy(dtype=float, na_value=np.nan)
    distinct = np.unique(values[np.isfinite(values)]).size
    if distinct and distinct <= degree:
        raise FormulaError(
            f"poly(): degree={degree} needs more than {degree} distinct values of a variable, "
            f"and one has {distinct}; use a lower degree (or factor() for a variable of few "
            "values)"
        )


@stateful_transform
def _poly(
    x: Any,
    *more: Any,
    degree: int = 1,
    raw: bool = False,
    _state: dict[str, Any] | None = None,
) -> Any:
    """R's ``poly``: orthogonal (or ``raw``) polynomials of one variable or of several.

    ``poly(x, 2)`` reads the second argument as the degree, as R does when it
    is one number.  Of several variables (``poly(x, z, degree = 2)``, R's
    ``polym``), the columns are the products of each variable's polynomials
    of total degree 1 to ``degree``, named by their degrees (``1.0``, ``2.0``,
    ``0.1``, ``1.1``, ``0.2``: the first variable's degree varies fastest, as
    R's ``expand.grid``); each variable's polynomials are learnt from the
    fitted rows and kept for new data.
    """
    state = {} if _state is None else _state
    if len(more) == 1 and np.ndim(more[0]) == 0:
        degree, more = more[0], ()
    degree, raw = _poly_options(degree, raw)
    for v in (x, *more):
        # at the fit (no state yet) the orthogonal polynomials are learnt from these rows
        _check_poly_values(v, degree, fitting=not raw and not state)
    if not more:
        return _formulaic_poly(x, degree, raw, _state=state)
    bases = [
        np.column_stack(
            [
                np.ones(len(np.asarray(v))),
                # raw powers learn nothing: no state (so data read in chunks may use them)
                np.asarray(
                    _formulaic_poly(
                        v, degree, raw, _state={} if raw else state.setdefault(str(i), {})
                    )
                ),
            ]
        )
        for i, v in enumerate([x, *more])
    ]
    powers = [
        p for p in itertools.product(range(degree + 1), repeat=len(bases)) if 0 < sum(p) <= degree
    ]
    powers.sort(key=lambda p: tuple(reversed(p)))  # the first variable's degree fastest
    columns = [np.prod([b[:, k] for b, k in zip(bases, p, strict=True)], axis=0) for p in powers]
    return FactorValues(
        np.column_stack(columns),
        column_names=tuple(".".join(map(str, p)) for p in powers),
    )


R_FUNCTIONS: Mapping[str, Any] = MappingProxyType(
    {
        "factor": _factor,
        "ordered": _ordered,
        "as_factor": _as_factor,
        "as_ordered": _as_ordered,
        "relevel": _relevel,
        "interaction": _interaction,
        "as_numeric": _as_numeric,
        "as_double": _as_numeric,
        "as_integer": _as_integer,
        "as_logical": _as_logical,
        "as_character": _as_character,
        "cut": _cut,
        "ns": _ns,
        "bs": _bs,
        "poly": _poly,
        "ifelse": _ifelse,
        "pmin": _pmin,
        "pmax": _pmax,
        "c": _c,
        "levels": _levels,
        "rev": _rev,
        "log": _log,
        "log1p": np.log1p,
        "expm1": np.expm1,
        "sqrt": np.sqrt,
        "abs": np.abs,
        "sign": np.sign,
        "floor": np.floor,
        "ceiling": np.ceil,
        "trunc": np.trunc,
        "round": _round,
        "signif": _signif,
        "sin": np.sin,
        "cos": np.cos,
        "tan": np.tan,
        "asin": np.arcsin,
        "acos": np.arccos,
        "atan": np.arctan,
        "sinh": np.sinh,
        "cosh": np.cosh,
        "tanh": np.tanh,
        "mean": _summary("mean", np.mean),
        "median": _summary("median", np.median),
        "sd": _summary("sd", lambda v: np.std(v, ddof=1) if v.size > 1 else np.nan),
        "var": _summary("var", lambda v: np.var(v, ddof=1) if v.size > 1 else np.nan),
        "min": _summary("min", np.min),
        "max": _summary("max", np.max),
        "sum": _summary("sum", np.sum),
        "length": _length,
        "xor": _xor,
    }
)
"""R's functions in ordstats' formulas, by the names :func:`r_spelling` leaves."""

#: :data:`R_FUNCTIONS` for rows encoded by a fitted design (chunks, new data)
NEW_ROWS_R_FUNCTIONS: Mapping[str, Any] = MappingProxyType(
    {**R_FUNCTIONS, "relevel": _relevel_new_rows}
)


def shadows_r_function(name: str, value: Any) -> bool:
    """Whether a caller's ``name = value`` is left out of a formula's names.

    R looks a called name up among functions only: ``levels = c("a", "b")`` calls
    ``c`` even where a variable ``c`` exists.  A caller's value that is not a function,
    named like one of :data:`R_FUNCTIONS`, is therefore not seen by formulas; a
    caller's own function of that name is.
    """
    return name in R_FUNCTIONS and not callable(value)


class _CallersNames(Mapping[str, Any]):
    """The caller's names without those that :func:`shadows_r_function` leaves out."""

    def __init__(self, context: Mapping[str, Any]) -> None:
        self._context = context

    def __getitem__(self, name: str) -> Any:
        value = self._context[name]
        if shadows_r_function(name, value):
            raise KeyError(name)
        return value

    def __iter__(self) -> Iterator[str]:
        return (k for k in self._context if not shadows_r_function(k, self._context[k]))

    def __len__(self) -> int:
        return sum(1 for _ in self)


def callers_names(context: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """``context`` as a formula sees it (:func:`shadows_r_function`)."""
    return _CallersNames(context or {})
