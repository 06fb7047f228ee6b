"""The formula interface: R-style formulas and a DataFrame in, a checked Design out."""

from __future__ import annotations

import inspect
import re
import warnings
from collections.abc import Callable, Container, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
from formulaic import Formula, ModelMatrix, ModelSpec
from formulaic.errors import FormulaicError
from pandas.api.extensions import ExtensionArray

from ordstats._typing import FloatArray
from ordstats.design.censored import censored_response, check_censored_options, encode_censored
from ordstats.design.contrasts import (
    RDefaultsMaterializer,
    check_requested_contrasts,
    is_intercept,
)
from ordstats.design.core import (
    DEFAULT_DESIGN_OPTIONS,
    Design,
    DesignOptions,
    TermsDesign,
    _bad_rows,
    _check_options,
    _close_matches,
    _column,
    _drop_aliased,
    _drop_nominal_aliases,
    _vector,
    align_to_index,
    missing_vector_values,
    refuse_repeated_columns,
    rows_to_keep,
    unusable_dtype,
    weightless_rows,
    with_text_column_names,
)
from ordstats.design.monotonic import formula_context
from ordstats.design.r_functions import (
    evaluate_response,
    offset_terms,
    r_dotted_calls,
    r_spelling,
    replace_outside_quotes,
)
from ordstats.design.response import encode_response
from ordstats.design.subset import subset_mask
from ordstats.errors import (
    CollinearityWarning,
    DataError,
    FormulaError,
    OrdstatsError,
    SpecificationWarning,
    is_real_number,
    user_stacklevel,
)

# ---------------------------------------------------------------------------
# formulas


def check_formula_text(formula: Any) -> str:
    """Return ``formula`` if it is the text of a two-sided formula.

    Raises
    ------
    FormulaError
        If ``formula`` is not a string with ``~`` (a formulaic ``Formula``
        object, ``None``, a number or a list included).
    """
    if isinstance(formula, str) and "~" in formula:
        return formula
    if formula is None or isinstance(formula, str):
        got = repr(formula)
    elif type(formula).__module__.startswith("formulaic"):
        got = "a formulaic Formula object; pass the formula as text instead"
    else:
        got = f"{repr(formula)[:100]} (of type {type(formula).__name__})"
    raise FormulaError(f"formula must be a string like 'rating ~ temp + contact'; got {got}")


def split_formula(formula: str, *, random_terms: bool = False) -> tuple[str, str]:
    """Split ``"response ~ terms"`` into the response name and the right-hand side.

    Raises
    ------
    FormulaError
        If ``formula`` is not a string with ``~`` and a response.
    """
    lhs, rhs = check_formula_text(formula).split("~", 1)
    lhs = lhs.strip().strip("`").strip()
    if not lhs:
        raise FormulaError(f"formula {formula!r} has no response on the left of '~'")
    if "``" in re.sub(r"`[^`]+`", " ", rhs):
        # formulaic reads `` as no term at all: the model would lose it silently
        raise FormulaError(
            f"formula {formula!r} has backticks around no name; put a column name between "
            "them (`my column`) or drop them"
        )
    _check_one_part(rhs, formula, random_terms)
    return lhs, r_powers(r_spelling(rhs.strip())) or "1"


def r_powers(rhs: str) -> str:
    """Read R's power operator ``^`` inside a function call as Python's ``**``.

    In R, ``I(x^2)``, ``log(x^2)`` and ``poly(x^2, 2)`` raise ``x`` to a power;
    the formula's own ``(a + b)^2`` (crossing up to degree 2) is outside any
    call.  Python evaluates a call's arguments, where ``^`` is a bitwise XOR:
    ``I(hp^2)`` of an integer column gave ``hp XOR 2`` (108 for 110), silently.
    Quoted names and strings are left as they are.
    """
    out: list[str] = []
    calls: list[bool] = []  # per open parenthesis: inside a function call?
    quote = ""
    for k, char in enumerate(rhs):
        if quote:
            quote = "" if char == quote else quote
        elif char in "`'\"":
            quote = char
        elif char == "(":
            before = rhs[:k].rstrip()
            calls.append(bool(calls and calls[-1]) or bool(re.search(r"[\w.]$", before)))
        elif char == ")":
            if calls:
                calls.pop()
        elif char == "^" and calls and calls[-1]:
            out.append("**")
            continue
        out.append(char)
    return "".join(out)


def r_label(name: str) -> str:
    """A column or term name (or a formula) as R labels it: ``I(x ** 2)`` as ``I(x^2)``.

    ``as_integer(x)`` reads ``as.integer(x)`` (:func:`r_dotted_calls`).
    :func:`r_powers` hands formulaic ``**`` for R's ``^`` inside a call, and
    formulaic prints its expressions with spaces around ``**``; R deparses a
    power as ``x^2``.  Only powers inside parentheses and outside quotes are
    relabelled (a data column named ``a ** b`` keeps its name).  The expression
    formulaic evaluates (for new data too) is not changed: this is its name only.
    """
    spaced = replace_outside_quotes(name, " ** ", "^", in_parentheses=True)
    return r_dotted_calls(replace_outside_quotes(spaced, "**", "^", in_parentheses=True))


def column_labels(spec: ModelSpec) -> list[str]:
    """The names of every column of ``spec`` (intercept included), as R labels them."""
    return [r_label(name) for name in spec.column_names]


def term_label(term: Any) -> str:
    """A formulaic term's name in the tables, as R's (``MPG.city``, ``Infl:Type``, ``I(x^2)``)."""
    return ":".join(r_label(str(f.expr)) for f in term.factors)


def _check_one_part(rhs: str, formula: str, random_terms: bool = False) -> None:
    """Refuse a second ``~`` or a ``|`` (formulaic's multi-part formulas).

    With ``random_terms`` the bars of random terms ``(expr | group)`` are allowed.
    """
    bare = re.sub(r"`[^`]*`|'[^']*'|\"[^\"]*\"", " ", rhs)
    _refuse_category_specific_term(bare)
    for mark in ("~",) if random_terms else ("~", "|"):
        if mark in bare:
            raise FormulaError(
                f"formula {formula!r} has a {'second ' if mark == '~' else ''}{mark!r}: an "
                "ordstats formula is one 'response ~ terms'. Give nominal effects as "
                "nominal='~ ...' and scale effects as scale='~ ...'; random terms go in "
                "parentheses, e.g. '(1|judge)'"
            )


def formula_terms(rhs: str) -> list[Any]:
    """The terms of the right-hand side ``rhs`` (R's spelling), the intercept left out.

    Each is formulaic's ``Term``: its ``factors`` carry ``expr`` and ``eval_method``.

    Raises
    ------
    FormulaError
        For text that is not a formula.
    """
    try:
        return [t for t in Formula(r_powers(r_spelling(rhs.strip()))) if t.degree != 0]
    except (FormulaicError, SyntaxError) as exc:
        raise FormulaError(f"cannot read the terms {rhs!r}: {exc}") from exc


def _refuse_category_specific_term(rhs: str) -> None:
    """Refuse brms' ``cs(x)`` term, naming ordstats' spelling of it (``nominal='~ x'``)."""
    match = re.search(r"\bcs\s*\(([^()]*)\)", rhs)
    if match:
        inner = match.group(1).strip()
        raise FormulaError(
            f"cs({inner}) is brms' category-specific term; ordstats takes category-specific "
            f"effects as nominal='~ {inner}' (remove cs({inner}) from the formula). For the "
            "cumulative family the thresholds must then stay ordered at every row"
        )


def _formulaic_error(exc: Exception, data: pd.DataFrame, rhs: str) -> FormulaError:
    text = str(exc)
    match = re.search(r"`([^`]+)` is not present in the dataset", text)
    if match:
        name = match.group(1)
        return FormulaError(
            f"the formula term {name!r} is not a column of the data."
            + _close_matches(name, data.columns)
        )
    return FormulaError(f"cannot build the design for '{rhs}': {text}")


def _syntax_error(rhs: str, exc: SyntaxError) -> FormulaError:
    return FormulaError(
        f"a term of the formula '{rhs}' is not valid Python ({exc.msg}); check its "
        "parentheses and operators, and quote column names that are not identifiers "
        "in backticks (`my column`)"
    )


def required_variables(rhs: str) -> set[str]:
    """The variables that the terms ``rhs`` read, backtick-quoted names whole.

    formulaic reads a quoted name with a dot (`` `MPG.city` ``, ``log(`exposure.time`)``)
    as an attribute of its first part and reports ``MPG``; R users' column names
    are often dotted.  The quoted name is reported instead, and its first part
    only where the formula also uses it unquoted.

    Raises
    ------
    FormulaicError, SyntaxError
        As formulaic, for text it cannot parse.
    """
    return _with_quoted_names(rhs, {str(v) for v in Formula(rhs).required_variables})


def expression_variables(expr: str) -> set[str]:
    """The variables one of a fitted spec's expressions reads.

    formulaic keeps a backtick-quoted name without its backticks (``my temp``),
    which is not formula text of its own: such a name is read whole.
    """
    try:
        return required_variables(expr)
    except (FormulaicError, SyntaxError):
        return required_variables(f"`{expr}`")


def spec_variables(spec: ModelSpec) -> set[str]:
    """The variables that a fitted spec's terms read (:func:`required_variables` of a spec)."""
    text = " + ".join(
        f"`{factor.expr}`" if factor.eval_method.value == "lookup" else str(factor.expr)
        for term in spec.formula
        for factor in term.factors
        if factor.eval_method.value != "literal"
    )
    return _with_quoted_names(text, {str(v) for v in spec.required_variables})


def _with_quoted_names(text: str, names: set[str]) -> set[str]:
    """``names`` with the quoted names of ``text`` whole, not their first parts.

    A first part that is not a Python name (``1`` of `` `1.5` ``, ``my col`` of
    `` `my col.x` ``) cannot be written unquoted, so it is never a variable.
    """
    quoted = set(re.findall(r"`([^`]+)`", text))
    bare = re.sub(r"`[^`]*`", " ", text)
    for name in quoted:
        for root in _quoted_roots(name) - {name}:
            used_bare = root.isidentifier() and re.search(
                rf"(?<![\w.`]){re.escape(root)}(?![\w`])", bare
            )
            if not used_bare:
                names.discard(root)
    return names | quoted


def _quoted_roots(name: str) -> set[str]:
    """What formulaic reports as the variables of the quoted name `` `name` `` alone.

    It reads a dot as an attribute: `` `MPG.city` `` gives ``MPG``, `` `1.5` `` ``1``.
    """
    try:
        return {str(v) for v in Formula(f"`{name}`").required_variables}
    except (FormulaicError, SyntaxError):
        return set()


def _check_required(rhs: str, data: pd.DataFrame, context: Any) -> None:
    try:
        required = required_variables(rhs)
    except FormulaicError as exc:
        raise FormulaError(f"cannot parse the formula '{rhs}': {exc}") from exc
    except SyntaxError as exc:
        raise _syntax_error(rhs, exc) from exc
    known = set(map(str, data.columns)) | set(formula_context(context))
    missing = sorted(v for v in required if v not in known)
    call = _offset_call(rhs) if "offset" in missing else None
    if call is not None:  # R's offset(x) term; a caller's function named offset is known
        raise FormulaError(
            f"offset terms ({call!r}) are supported in the formula and the scale formula of "
            "a model fitted in memory, not in a nominal formula or with data read in chunks: "
            "store a location offset as a column and pass offset='column'; a scale offset "
            "needs the data in memory"
        )
    if missing:
        name = missing[0]
        if re.search(rf"(?<![\w.]){re.escape(name)}\s*\(", rhs):  # called: a function
            raise FormulaError(
                f"the formula calls {name!r}, which is not a function of the caller's names, "
                "of context= or of the formulas' own (np.*, R's functions such as log, poly, "
                f"cut); define or import it before fitting, or pass context={{{name!r}: {name}}}"
            )
        raise FormulaError(
            f"the formula names {name!r}, which is not a column of the data."
            + (_backtick_hint(name, rhs, data.columns) or _close_matches(name, data.columns))
        )


def _offset_call(rhs: str) -> str | None:
    """The text of the first ``offset(...)`` call in ``rhs`` (nested parentheses included)."""
    start = re.search(r"\boffset\s*\(", rhs)
    if start is None:
        return None
    depth = 0
    for end in range(start.end() - 1, len(rhs)):
        depth += {"(": 1, ")": -1}.get(rhs[end], 0)
        if depth == 0:
            return rhs[start.start() : end + 1]
    return rhs[start.start() :]


def _backtick_hint(name: str, rhs: str, columns: Any) -> str:
    """Point at a column such as ``a+b`` or ``log(x)`` that ``rhs`` wrote without backticks."""
    bare = re.sub(r"\s+", "", rhs)
    for column in map(str, columns):
        if not column.isidentifier() and name in column and column.replace(" ", "") in bare:
            return (
                f" The data have a column {column!r}: put a column name that is not a Python "
                f"name in backticks, `{column}`"
            )
    return ""


def refuse_response_in_terms(
    response: str, rhs: str, part: str = "location", used: Iterable[str] | None = None
) -> None:
    """Raise a :class:`FormulaError` if the terms ``rhs`` use the response.

    Parameters
    ----------
    response : str
    rhs : str
        A right-hand side (the terms of one side of the model), or a random
        term ``(expr|group)``.
    part : str
        Which side (``"location"``, ``"nominal"``, ``"scale"``, ``"random"``), for
        the message.
    used : iterable of str, optional
        The variables ``rhs`` uses (default: formulaic's reading of ``rhs``, which
        a random term needs given).
    """
    if used is None:
        try:
            used = required_variables(rhs)
        except (FormulaicError, SyntaxError):
            return  # reported where the formula is parsed
    if response in used:
        where = {"location": "the right-hand side", "random": "the random term"}.get(
            part, f"the {part} formula"
        )
        raise FormulaError(
            f"the response {response!r} is also used in {where} ('{rhs}'): a model cannot "
            "explain the response by itself; remove it from the terms"
        )


def _data_variables(rhs: str, data: pd.DataFrame) -> list[str]:
    """Columns of ``data`` that ``rhs`` uses, also inside stateful transforms.

    formulaic's ``required_variables`` misses the arguments of stateful
    transforms (``center(x)``), so the identifiers of the formula count too.
    """
    names = required_variables(rhs)
    names |= set(re.findall(r"[A-Za-z_][A-Za-z0-9_.]*", re.sub(r"`[^`]+`", " ", rhs)))
    names |= set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", re.sub(r"`[^`]+`", " ", rhs)))
    return sorted(str(c) for c in data.columns if str(c) in names)


def _expand(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``values`` at the rows where ``mask`` holds, True elsewhere."""
    out = np.ones(len(mask), dtype=bool)
    out[mask] = values
    return out


def _plain_strings(frame: pd.DataFrame) -> pd.DataFrame:
    """Convert string columns of extension types (``string[pyarrow]``, as Dask makes) to objects.

    formulaic encodes object, ``str`` and categorical columns as factors, but
    not the ``pd.NA``-valued string types.
    """
    # by position: a repeated column name selects a DataFrame, not a column
    convert = [j for j, dtype in enumerate(frame.dtypes) if _text_extension(dtype)]
    if not convert:
        return frame
    out = frame.copy(deep=False)
    for j in convert:
        column = frame.iloc[:, j].astype(object)
        # pd.NA (of nullable strings) as NaN, which the design's missing-value rules read
        out.isetitem(j, column.where(column.notna(), np.nan))
    return out


def _text_extension(dtype: Any) -> bool:
    """Whether ``dtype`` holds text with ``pd.NA``: ``string``, or Arrow's strings.

    Arrow's ``string``, ``large_string`` and dictionary-encoded strings
    (``convert_dtypes(dtype_backend="pyarrow")``, Parquet read by pandas) too.
    """
    if isinstance(dtype, pd.StringDtype):
        return dtype.na_value is pd.NA
    if isinstance(dtype, pd.ArrowDtype):
        import pyarrow as pa

        kind = dtype.pyarrow_dtype
        if pa.types.is_dictionary(kind):
            kind = kind.value_type
        return bool(pa.types.is_string(kind) or pa.types.is_large_string(kind))
    return False


def _context_value(value: Any) -> bool:
    """Whether a name of the formula's context may be used for new data as it is.

    Modules, functions and scalars (``np``, ``log``, a constant) may; data
    (arrays, Series) may not: they belong to the rows they came with, so new
    data must hold such a column itself.
    """
    if value is ...:
        return False
    return (
        inspect.ismodule(value)
        or callable(value)
        or isinstance(value, (int, float, complex, str, bytes, np.generic))
    )


def is_row_data(value: Any, n_rows: int | None = None) -> bool:
    """Whether a value of a formula's context holds one value per row of the data.

    Such a value (an array or Series the caller's formula read, ``xx`` in
    ``"y ~ temp + xx"``) is a column of the rows it came with: new data must
    hold that column.  Modules, functions, scalars, mappings and parameters
    of other lengths (a list of factor levels, spline knots) are not.

    Parameters
    ----------
    value : object
    n_rows : int, optional
        Rows of the data the formula was built on.  Without it, only numpy
        arrays and pandas objects with at least one dimension count.

    Returns
    -------
    bool
    """
    if _context_value(value) or isinstance(value, Mapping) or value is ...:
        return False
    try:
        if np.ndim(value) < 1:
            return False
        length = len(value)
    except (TypeError, ValueError):  # ragged or unsized objects are not columns
        return False
    if n_rows is None:
        return isinstance(value, (np.ndarray, pd.Series, pd.Index, pd.DataFrame))
    return length == n_rows


def _materialize(
    rhs: str,
    data: pd.DataFrame,
    context: Any,
    transform_state: Any = None,
    *,
    new_rows: bool = False,
) -> ModelMatrix:
    """Build the model matrix of ``rhs`` as a numpy :class:`~formulaic.ModelMatrix`.

    numpy output keeps every column, also a data column named ``Intercept``
    next to the formula's intercept (pandas output would merge the two).
    ``transform_state`` (formulaic's, per transform expression) is used instead
    of learning the stateful transforms from ``data``.  ``new_rows``: ``data``
    are some of the rows (a chunk), which may lack levels
    (:func:`~ordstats.design.monotonic.formula_context`).
    """
    learned = {} if transform_state is None else {"transform_state": dict(transform_state)}
    data = _plain_strings(data)
    try:
        # a transform such as log(x) of x <= 0 gives NaN/inf: those rows are
        # reported by name as missing values, not as numpy RuntimeWarnings
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", FutureWarning)
            return Formula(rhs).get_model_matrix(
                data,
                ensure_full_rank=True,
                na_action="ignore",
                context=formula_context(context, new_rows=new_rows),
                output="numpy",
                materializer=RDefaultsMaterializer,
                **learned,
            )
    except FormulaicError as exc:
        raise _formulaic_error(exc, data, rhs) from exc
    except SyntaxError as exc:
        raise _syntax_error(rhs, exc) from exc
    except ValueError as exc:
        if isinstance(exc, OrdstatsError):
            raise
        raise FormulaError(
            f"cannot build the design for '{rhs}': {exc}" + _caller_arrays_hint(rhs, data, context)
        ) from exc


def _caller_arrays_hint(rhs: str, data: pd.DataFrame, context: Any) -> str:
    """Name the arrays of the calling scope that ``rhs`` reads with a length not ``len(data)``.

    Such an array cannot be paired with the rows (numpy: "all input arrays must have
    the same shape"); data read in chunks never are the caller's rows.
    """
    try:
        used = required_variables(rhs)
    except (FormulaicError, SyntaxError):
        return ""
    arrays = [
        f"{name!r} ({len(value)} values)"
        for name in sorted(used)
        if name not in data.columns
        and isinstance(value := (context or {}).get(name), (np.ndarray, pd.Series, pd.Index, list))
        and np.ndim(value) == 1
        and len(value) != len(data)
    ]
    if not arrays:
        return ""
    it = "it" if len(arrays) == 1 else "them"
    return (
        f". The formula reads {', '.join(arrays)} from the calling scope, not from the data; "
        f"per-row values must be columns of the data: add {it} to the data as a column"
    )


def with_row_context(frame: pd.DataFrame, context: Any) -> tuple[pd.DataFrame, Any]:
    """``frame`` with the caller's per-row values that its formulas read, as columns.

    A formula may read a variable of the calling scope with one value per row
    (``xx`` in ``"y ~ temp + xx"``; the model's formula context records these as
    ``row_names``).  As a column of the data it shares the rows' fate, as in R's
    ``model.frame``: a row dropped for a missing value is dropped with its value,
    stateful transforms learn from the rows kept, and a pandas Series is paired
    with the rows by index label (:func:`~ordstats.design.core.align_to_index`).

    Parameters
    ----------
    frame : pandas.DataFrame
    context : mapping or None
        The formula context.

    Returns
    -------
    frame : pandas.DataFrame
    context : mapping or None
        Without the names that became columns.

    Raises
    ------
    DataError
        A pandas variable whose index labels are not those of ``frame``.
    """
    names = [
        name
        for name in sorted(getattr(context, "row_names", None) or ())
        if name in context and name not in frame.columns and np.ndim(context[name]) == 1
    ]
    if not names:
        return frame, context
    columns = {}
    for name in names:
        value = align_to_index(
            context[name], frame.index, f"the formula variable {name!r}", "the data"
        )
        if isinstance(value, (pd.Series, pd.Index)):
            value = value.array
        # a Categorical keeps its categories' order
        columns[name] = value if isinstance(value, ExtensionArray) else np.asarray(value)
    rest = {key: value for key, value in context.items() if key not in columns}
    return frame.assign(**columns), rest


def refuse_values_of_used_rows(context: Any, n_data: int, used: Iterable[int]) -> None:
    """Refuse the caller's values that have one value per row *used*, not per row of the data.

    formulaic pairs an array of the calling scope with the rows it builds the
    design on, by position.  After ``subset=`` or rows dropped for missing
    values those are not the data's rows: an array of their length would be
    paired with rows it was not made for, and a labelled Series read out of
    its order.  R's ``model.frame`` reads such variables before it subsets,
    and stops ("variable lengths differ").

    Parameters
    ----------
    context : mapping or None
        The names the formula reads from the calling scope (not data columns).
    n_data : int
        Rows of the data.
    used : iterable of int
        Counts of the rows the design is built on.

    Raises
    ------
    DataError
        Naming each such value.
    """
    lengths = {n for n in used if n != n_data}
    if context is None or not lengths:
        return
    found = [
        f"{name!r} ({len(value)} values)"
        for name, value in dict(context).items()
        if _one_value_per_row(value) and len(value) in lengths
    ]
    if found:
        raise DataError(
            f"the formula reads {', '.join(found)} from the calling scope: one value per row "
            f"used, not per row of the data ({n_data} rows). subset= and rows with missing "
            "values are taken out after the formula's variables are read, as in R's "
            "model.frame, which stops here (variable lengths differ). Give one value per row "
            "of the data, or add the values to the data as a column (data.assign(name=values) "
            "pairs a pandas Series by index label)"
        )


def _one_value_per_row(value: Any) -> bool:
    """Whether ``value`` looks like a column of values (a 1-d array, Series or list)."""
    if _context_value(value) or isinstance(value, (Mapping, str)):
        return False
    sized = (np.ndarray, pd.Series, pd.Index, ExtensionArray, list, tuple)
    return isinstance(value, sized) and np.ndim(value) == 1


def has_intercept(spec: ModelSpec) -> bool:
    """Whether the formula of ``spec`` has its implicit intercept (the term ``1``)."""
    return any(is_intercept(term) for term in spec.terms)


def design_columns(spec: ModelSpec) -> tuple[list[int], list[str]]:
    """Positions and names of the columns of ``spec`` other than the implicit intercept.

    Only the formula's own intercept term is left out: a data column named
    ``Intercept`` stays.
    """
    intercept = {i for term, idx in spec.term_indices.items() if is_intercept(term) for i in idx}
    positions = [i for i in range(len(spec.column_names)) if i not in intercept]
    labels = column_labels(spec)
    return positions, [labels[i] for i in positions]


@dataclass(frozen=True)
class _Built:
    """A materialised side of a formula: its columns without the intercept, and its spec."""

    values: FloatArray
    model_spec: ModelSpec


#: Rows from which the spec of a formula of plain numeric columns is learned.
_SPEC_ROWS = 100


def _plain_numeric(spec: ModelSpec, data: pd.DataFrame) -> list[str] | None:
    """The columns of ``data`` that ``spec`` uses as they are, if it uses nothing else."""
    state = spec.encoder_state
    kinds = {str(getattr(kind, "value", kind)) for kind, _ in state.values()}
    if spec.transform_state or kinds - {"numerical"}:
        return None  # factors: a few rows need not show every level
    _, names = design_columns(spec)
    plain = all(
        name in state
        and str(getattr(state[name][0], "value", state[name][0])) == "numerical"
        and name in data.columns
        and isinstance(data[name].dtype, np.dtype)
        and data[name].dtype.kind in "fiub"
        for name in names
    )
    return names if plain and len(set(names)) == len(names) else None


def _build(rhs: str, data: pd.DataFrame, context: Any, transform_state: Any = None) -> _Built:
    """Materialise ``rhs`` on ``data`` as float columns without the implicit intercept.

    A formula of plain numeric columns learns its spec from a few rows and takes
    the columns straight from ``data``: formulaic would copy every column twice.
    ``transform_state``: see :func:`_materialize`.
    """
    if transform_state:
        matrix = _materialize(rhs, data, context, transform_state)
        return _Built(np.ascontiguousarray(_matrix_values(matrix)), matrix.model_spec)
    if len(data) > 10 * _SPEC_ROWS:
        try:
            head = _materialize(rhs, data.iloc[:_SPEC_ROWS], context)
        except FormulaError:  # the first rows may lack a level (relevel(g, ref = "c"))
            head = None
        names = None if head is None else _plain_numeric(head.model_spec, data)
        if names is not None:
            values = data[names].to_numpy(dtype=float) if names else np.empty((len(data), 0))
            return _Built(np.ascontiguousarray(values), head.model_spec)
    matrix = _materialize(rhs, data, context)
    return _Built(np.ascontiguousarray(_matrix_values(matrix)), matrix.model_spec)


def _matrix_values(matrix: Any) -> np.ndarray:
    """The columns of ``matrix`` other than the implicit intercept, as floats."""
    if isinstance(matrix, _Built):
        return matrix.values
    positions, _ = design_columns(matrix.model_spec)
    values = np.asarray(matrix)
    if len(positions) == values.shape[1]:
        return np.asarray(values, dtype=float)
    if positions == list(range(positions[0], positions[-1] + 1)) if positions else False:
        return np.asarray(values[:, positions[0] : positions[-1] + 1], dtype=float)
    return np.asarray(values[:, positions], dtype=float)


def _nonfinite_columns(matrix: Any, part: str) -> dict[str, np.ndarray]:
    """Per design column with a NaN or infinite value, the mask of finite rows.

    Keys name the column (``'np.log(x)'``; ``'scale: log(x)'`` for the scale
    side) so the missing-value report says which term made a row unusable.
    """
    values = _matrix_values(matrix)
    finite = np.isfinite(values)
    if finite.all():
        return {}
    _, names = design_columns(matrix.model_spec)
    prefix = "" if part == "location" else f"{part}: "
    return {f"{prefix}{names[j]}": finite[:, j] for j in np.flatnonzero(~finite.all(axis=0))}


def _with_intercept(rhs: str, data: pd.DataFrame, context: Any, what: str) -> tuple[str, Any]:
    """Materialise ``rhs``; warn when it removes the intercept (as R's clm does).

    Without the intercept, factors get full dummy coding as in R's
    ``model.matrix``; the column aliased with the thresholds is then dropped
    as aliased (R's ``drop.coef``), so names and estimates match R's ``clm``.
    """
    matrix = _build(rhs, data, context)
    if not has_intercept(matrix.model_spec):
        warnings.warn(
            f"the {what} formula removes the intercept, but the thresholds act as "
            "intercepts: an intercept is needed and assumed (as in R's clm), so a factor "
            "with full dummy coding has a column aliased with it, which is dropped",
            SpecificationWarning,
            stacklevel=user_stacklevel(),
        )
    return rhs, matrix


def _transforms_learned_as_in_r(
    rhs: str, frame: pd.DataFrame, built: Any, context: Any
) -> dict[str, Any] | None:
    """The state of each stateful transform of ``rhs`` (``scale(x)``, ``poly(x, 2)``) as R has it.

    R's model.frame evaluates the transforms on every row given, before
    ``na.omit`` drops the rows missing other variables; a transform skips the
    rows where its own variables are missing (``scale()`` removes NAs).  So each
    transform learns from the rows of ``frame`` where the columns it reads are
    present and finite.  None when ``rhs`` has no stateful transform.
    """
    fitted = built.model_spec.transform_state
    if not fitted:
        return None
    learned = {}
    for expr, state in fitted.items():
        used = _data_variables(expr, frame)
        present = ~_bad_rows(frame[used]).any(axis=1).to_numpy() if used else None
        rows = frame if present is None or present.all() else frame.loc[present]
        try:
            learned[expr] = _materialize(expr, rows, context).model_spec.transform_state[expr]
        except (OrdstatsError, KeyError):  # not a formula of its own: keep what was learned
            learned[expr] = state
    return learned


def _terms_from_matrix(matrix: Any, part: str = "location") -> TermsDesign:
    _, cols = design_columns(matrix.model_spec)
    warn_terms_without_columns(matrix.model_spec, part)
    return TermsDesign(
        matrix=np.ascontiguousarray(_matrix_values(matrix)), names=cols, spec=matrix.model_spec
    )


def warn_terms_without_columns(spec: ModelSpec, part: str = "location") -> None:
    """Warn of terms left without columns: their factors take one level in the rows used.

    A factor of one level has no contrasts, so its terms (and interactions)
    vanish from the design; R's ``model.matrix`` stops there ("contrasts can
    be applied only to factors with 2 or more levels").
    """
    empty, single = terms_without_columns(spec)
    if not empty:
        return
    where = "" if part == "location" else f"{part} "
    warnings.warn(
        f"the {where}term(s) {empty} have no columns and are "
        f"left out of the model: their factors take a single level in the rows used "
        f"({single}). R's clm stops here (contrasts can be "
        "applied only to factors with 2 or more levels): drop the term, or check the rows "
        "(a subset, or missing values elsewhere, may have removed the other levels)",
        CollinearityWarning,
        stacklevel=user_stacklevel(),
    )


def terms_without_columns(spec: ModelSpec) -> tuple[str, str]:
    """The terms of ``spec`` without columns and its factors of one level, as text.

    Returns
    -------
    empty : str
        The terms that have no columns, quoted (``""`` when every term has some).
    single : str
        Each factor of at most one level with its level, or ``"see the data"``.
    """
    empty = [
        repr(str(term))
        for term, columns in spec.term_slices.items()
        if columns.start == columns.stop and str(term) not in ("1", "0")
    ]
    single = []
    for expr, (kind, state) in spec.encoder_state.items():
        categories = state.get("categories", []) if isinstance(state, dict) else []
        if str(getattr(kind, "value", kind)) == "categorical" and len(categories) <= 1:
            single.append(f"{expr!r} ({', '.join(map(repr, categories)) or 'no level'})")
    return ", ".join(empty), "; ".join(single) or "see the data"


def _empty_levels(spec: ModelSpec, rows: pd.DataFrame) -> dict[str, list[Any]]:
    """Declared levels of factor columns that no row of ``rows`` has."""
    return unused_levels(
        spec,
        lambda expr: set(pd.unique(rows[expr].dropna())) if expr in rows.columns else None,
    )


def unused_levels(
    spec: ModelSpec, observed: Callable[[str], Container[Any] | None]
) -> dict[str, list[Any]]:
    """Declared levels of the spec's factors that no fitted row had, by factor expression.

    ``observed(expr)`` gives the values the rows took (None: a factor not to
    check).  Such levels' columns are zeros, dropped as aliased; new rows of
    them are predicted as NaN, with a warning.
    """
    empty = {}
    for expr, (kind, state) in getattr(spec, "encoder_state", {}).items():
        if str(getattr(kind, "value", kind)) != "categorical":
            continue
        seen = observed(expr)
        if seen is None:
            continue
        unused = [level for level in state.get("categories", []) if level not in seen]
        if unused:
            empty[expr] = unused
    return empty


def _as_frame(data: Any) -> pd.DataFrame:
    if isinstance(data, pd.DataFrame):
        return with_text_column_names(data)
    hint = {
        pd.Series: ": turn it into one with series.to_frame() or pd.concat([...], axis=1)",
        np.ndarray: ": give the columns names (pd.DataFrame(array, columns=[...])), or fit "
        "arrays with OrdinalModel(endog, exog)",
    }
    unusable = data is None or isinstance(data, (str, bytes, int, float, pd.Series))
    # a numpy array names its columns only as a record (structured) array
    unusable |= isinstance(data, np.ndarray) and data.dtype.names is None
    if not unusable and not (isinstance(data, (list, tuple)) and not data):
        try:
            frame = pd.DataFrame(data)
        except (TypeError, ValueError):
            pass
        else:  # a list of records names its columns; a list of values does not
            if not (isinstance(data, (list, tuple)) and isinstance(frame.columns, pd.RangeIndex)):
                return frame
            hint[type(data)] = (
                ": its values have no column names; pass a DataFrame, a dict of columns or a "
                "list of records (dicts)"
            )
    what = next((text for kind, text in hint.items() if isinstance(data, kind)), "")
    got = "None" if data is None else type(data).__name__
    empty = "an empty " if isinstance(data, (list, tuple)) and not data else ""
    raise DataError(
        f"data must be a pandas DataFrame or a mapping of columns; got {empty}{got}{what}"
    )


def _formula_offset(rhs: str, offset: Any) -> tuple[str, Any]:
    """The location terms without R's ``offset(...)`` terms, and the model's offset.

    R adds the formula's offset terms to the linear predictor, as ``offset=``.  A
    refit passes the terms again as ``offset=`` (the model's offset name): the same
    text is the same offset.
    """
    rhs, terms = _one_offset_term(rhs, "formula")
    if terms is None:
        return rhs, offset
    if offset is not None and not (isinstance(offset, str) and offset == terms):
        raise FormulaError(
            f"the offset is given twice, in the formula ({terms!r}) and as offset=; give it "
            "once (R would add the two: add them in one offset(...) term)"
        )
    return rhs, terms


def _one_offset_term(rhs: str, where: str) -> tuple[str, str | None]:
    """:func:`offset_terms` of ``rhs``, refusing more than one offset term."""
    rhs, terms = offset_terms(rhs)
    if terms is not None and " + offset" in terms:
        raise FormulaError(
            f"the {where} has more than one offset term ({terms}); as in R's clm, give one: "
            "offset(a + b)"
        )
    return rhs, terms


def _scale_offset(rhs: str | None) -> tuple[str | None, str | None]:
    """The scale terms without R's ``offset(...)`` term, and that term (log-scale offset)."""
    if rhs is None:
        return None, None
    terms, found = _one_offset_term(rhs, "scale formula")
    return (rhs, None) if found is None else (terms, found)  # '~ offset(q)' alone: terms '1'


def _with_offset_term(terms: TermsDesign | None, offset: str | None) -> TermsDesign | None:
    """``terms`` whose formula keeps its ``offset(...)`` term, so that refits keep it."""
    if terms is None or offset is None:
        return terms
    alone = terms.formula is None or terms.formula.strip() == "1"  # R prints scale: ~offset(q)
    formula = offset if alone else f"{terms.formula} + {offset}"
    return replace(terms, formula=formula)


def _check_columns(frame: pd.DataFrame, used: list[str]) -> None:
    """Refuse repeated column names, and date, duration or complex columns, among the used ones."""
    refuse_repeated_columns(frame.columns, used)
    for name in dict.fromkeys(used):
        if name not in frame.columns:
            continue  # reported where it is looked up
        reason = unusable_dtype(str(name), frame[name].dtype)
        if reason is not None:
            raise DataError(reason)


def _warn_numbers_stored_as_objects(frame: pd.DataFrame, names: list[str]) -> None:
    """Warn when a text or object predictor looks like numbers gone astray.

    formulaic encodes an object or text column as a factor, one level per
    distinct value.  That is wrong, silently, for a measurement that
    (1) is stored as objects and holds fractional numbers (a float column that
    took a ``None``), or (2) holds numbers with a few stray texts (``"oops"``, a
    CSV column with one typo); and confusing where (3) values of different
    types print alike (``1`` and ``"1"``: two levels shown as one).  Whole
    numbers alone are left alone: they may be codes meant as a factor.  A
    column of lists or dicts (which no formula can use) raises a
    :class:`DataError`.
    """
    text_or_objects = {
        name: frame[name].dropna()
        for name in dict.fromkeys(names)
        if name in frame.columns
        and not isinstance(frame[name].dtype, pd.CategoricalDtype)
        and (
            pd.api.types.is_object_dtype(frame[name].dtype)
            or pd.api.types.is_string_dtype(frame[name].dtype)
        )
    }
    warn_numbers_gone_astray(text_or_objects)


def warn_numbers_gone_astray(columns: Mapping[str, pd.Series]) -> None:
    """The warnings of :func:`_warn_numbers_stored_as_objects` for columns' values.

    Also for data read in chunks, whose first pass collects each factor column's
    distinct values: a numeric column with a stray text arrives there as text.
    """
    for name, values in columns.items():
        message = _astray_numbers(name, values)
        if message is not None:
            warnings.warn(message, SpecificationWarning, stacklevel=user_stacklevel())


#: Most distinct texts (and at most a tenth of the distinct values) among numbers for
#: which a column counts as numbers gone astray.
_STRAY_TEXTS = 5


def _booleans_among_numbers(values: pd.Series) -> bool:
    """Whether an object column mixes booleans with numbers (``True`` with ``1``)."""
    if pd.api.types.infer_dtype(values, skipna=True) not in ("mixed", "mixed-integer"):
        return False  # all booleans, all numbers or all text: no bool hides among numbers
    flags = values.map(lambda v: isinstance(v, (bool, np.bool_)))
    return bool(flags.any() and values[~flags].map(is_real_number).any())


def _astray_numbers(name: str, values: pd.Series) -> str | None:
    """The warning of :func:`_warn_numbers_stored_as_objects` for a column's values, or None."""
    try:
        distinct = pd.unique(values.to_numpy(dtype=object))
    except TypeError as exc:  # lists, dicts, sets: values a formula cannot use
        raise DataError(
            f"the column {name!r} holds values that are not numbers or labels ({exc}); give "
            "each row one value (e.g. one column per element of a list)"
        ) from exc
    as_factor = f"so the formula uses it as a factor with {len(distinct)} levels"
    if _booleans_among_numbers(values):
        return (
            f"the column {name!r} holds booleans among numbers; True equals 1 and False 0, "
            f"so they merge into one level ({as_factor}); make it one type first, e.g. "
            f"data[{name!r}] = data[{name!r}].astype(str), or .astype(float) for 0/1"
        )
    if len({str(v) for v in distinct}) < len(distinct):
        return (
            f"the column {name!r} holds values of different types that print alike (such as "
            f"1 and '1'), {as_factor}, some of them shown twice; make it one type first, "
            f"e.g. data[{name!r}] = data[{name!r}].astype(str)"
        )
    # Python's and numpy's numbers, and others such as decimal.Decimal and fractions.Fraction
    is_number = np.array([is_real_number(v) for v in distinct])
    if is_number.all():
        as_float = distinct.astype(float)
        if np.all(as_float == np.round(as_float)):
            return None
        return (
            f"the column {name!r} holds numbers stored as objects (dtype object), {as_factor}; "
            f"to use it as a number convert it first (data[{name!r}] = "
            f"pd.to_numeric(data[{name!r}])), or make it a category (.astype('category')) to "
            "keep it a factor"
        )
    parsed = pd.to_numeric(pd.Series(distinct, dtype=object), errors="coerce").notna()
    texts = [str(v) for v, ok in zip(distinct, parsed, strict=True) if not ok]
    if not 0 < len(texts) <= _STRAY_TEXTS or len(texts) * 10 > len(distinct):
        return None
    shown = ", ".join(map(repr, texts))
    return (
        f"the column {name!r} holds numbers and {len(texts)} text value(s) ({shown}), "
        f"{as_factor}; if it is a measurement, convert it first: data[{name!r}] = "
        f"pd.to_numeric(data[{name!r}], errors='coerce') (the text becomes missing)"
    )


def _without_duplicated_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` without its columns of repeated names (:func:`_check_columns` refused used ones).

    A name that appears twice selects a DataFrame, not a column, wherever the
    design looks columns up by name; a column the formulas do not use must not
    matter.
    """
    repeated = frame.columns.duplicated(keep=False)
    return frame.loc[:, ~repeated] if repeated.any() else frame


def _side_formula(value: Any, part: str) -> str | None:
    """A one-sided formula (``"~ contact"`` or ``"contact"``) as its right-hand side."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise FormulaError(f"{part} must be a one-sided formula like '~ contact'; got {value!r}")
    text = value.strip()
    if "~" in text:
        lhs, text = text.split("~", 1)
        if lhs.strip():
            raise FormulaError(
                f"the {part} formula {value!r} must be one-sided (no response): '~ {text.strip()}'"
            )
    _check_one_part(text, value)
    return r_powers(r_spelling(text.strip())) or "1"


def design_from_formula(
    formula: str,
    data: Any,
    *,
    nominal: str | None = None,
    scale: str | None = None,
    weights: Any = None,
    offset: Any = None,
    options: DesignOptions = DEFAULT_DESIGN_OPTIONS,
    context: Any = None,
    subset: Any = None,
) -> Design:
    """Build a checked :class:`Design` from an R-style formula and a data frame.

    Parameters
    ----------
    formula : str
        ``"response ~ terms"``; the response must be a column of ``data``.
    data : pandas.DataFrame or mapping of columns
    nominal, scale : str, optional
        One-sided formulas (``"~ contact"``) of the nominal (category-specific)
        and log-scale effects.
    weights, offset : str or array-like, optional
        Column names or one value per row.
    options : DesignOptions
        Response levels, missing-value and aliasing policies (see
        :class:`~ordstats.design.core.DesignOptions`).
    context : mapping, optional
        Names available to formula expressions (formulaic's evaluation context).
        The per-row values it records (``row_names``) are read as columns of
        ``data`` (:func:`with_row_context`).
    subset : str, boolean Series or array, or callable, optional
        The rows to fit (R's ``subset=``, :func:`~ordstats.design.subset.subset_mask`).
        As in R's ``model.frame``, stateful transforms (``scale(x)``) still
        learn from every row of ``data``.

    Returns
    -------
    Design
    """
    levels, missing, collinear = options.levels, options.missing, options.collinear
    many_levels = options.many_levels
    _check_options(missing, collinear)
    frame, context = with_row_context(_as_frame(data), context)
    response_name, rhs = split_formula(formula)
    censored = censored_response(response_name, frame, context)
    if censored is not None:  # its row positions stand in for the response column
        check_censored_options(levels)
        frame = frame.copy()
        frame[response_name] = censored.positions().to_numpy()
    evaluated = (
        None if response_name in frame.columns else evaluate_response(response_name, frame, context)
    )
    if evaluated is not None:  # R's factor(y) ~ x: the call's values are the response
        frame = frame.assign(**{response_name: evaluated})
    _column(frame, response_name, "response")
    given = {
        "location": rhs,
        "nominal": _side_formula(nominal, "nominal"),
        "scale": _side_formula(scale, "scale"),
    }
    scale_offset = None
    if not callable(formula_context(context).get("offset")):  # a caller's own offset()
        given["location"], offset = _formula_offset(rhs, offset)
        given["scale"], scale_offset = _scale_offset(given["scale"])
    sides = {part: text for part, text in given.items() if text is not None}
    used = [response_name]
    for part, text in sides.items():
        _check_required(text, frame, context)
        refuse_response_in_terms(response_name, text, part)
        used += _data_variables(text, frame)
    _check_columns(frame, [*used, *(v for v in (weights, offset) if isinstance(v, str))])
    check_requested_contrasts(used[1:], frame)
    frame = _without_duplicated_columns(frame)
    _warn_numbers_stored_as_objects(frame, used[1:])
    w_series = _vector(weights, frame, len(frame), "weights")
    o_series = _vector(offset, frame, len(frame), "offset")
    so_series = _vector(scale_offset, frame, len(frame), "scale offset")
    every_row = frame  # stateful transforms learn from all rows, as in R's model.frame
    selected = subset_mask(subset, frame, context)
    positions = np.arange(len(frame))  # of the rows of frame in the data given
    if selected is not None and not selected.all():
        positions = np.flatnonzero(np.asarray(selected, dtype=bool))
        frame = frame.loc[selected]
        w_series = None if w_series is None else w_series.loc[selected]
        o_series = None if o_series is None else o_series.loc[selected]
        so_series = None if so_series is None else so_series.loc[selected]
    bad = _bad_rows(frame[list(dict.fromkeys(used))])
    vectors = (("weights", w_series), ("offset", o_series), ("scale offset", so_series))
    for role, series in vectors:
        if series is not None:
            bad[role] = missing_vector_values(role, series)
    raw_ok = ~bad.any(axis=1).to_numpy()
    rows = frame if raw_ok.all() or not raw_ok.any() else frame.loc[raw_ok]
    refuse_values_of_used_rows(context, len(every_row), [len(frame), len(rows)])
    matrices, learned = {}, {}
    for part, text in sides.items():
        sides[part], matrices[part] = _with_intercept(text, rows, context, part)
        learned[part] = _transforms_learned_as_in_r(text, every_row, matrices[part], context)
        if learned[part]:
            matrices[part] = _build(text, rows, context, learned[part])
        for label, finite in _nonfinite_columns(matrices[part], part).items():
            bad[label] = ~finite if len(rows) == len(frame) else ~_expand(finite, raw_ok)
    keep_rows, w, offsets = rows_to_keep(bad, missing, w_series, o_series)
    clean = frame.iloc[keep_rows]
    refuse_values_of_used_rows(context, len(every_row), [len(clean)])
    if len(keep_rows) < len(rows):
        # re-materialise so factor levels are those of the rows used
        matrices = {part: _build(sides[part], clean, context, learned[part]) for part in sides}
    terms = {}
    for part, matrix in matrices.items():  # a loop: the warnings' stack level is the same
        # on every Python (3.12 inlines comprehensions, 3.11 gives them a frame)
        built = replace(
            _terms_from_matrix(matrix, part),
            formula=sides[part],
            empty_levels=_empty_levels(matrix.model_spec, clean),
        )
        terms[part] = _drop_aliased(built, collinear, part)
    if "nominal" in terms:
        terms["location"] = _drop_nominal_aliases(terms["location"], terms["nominal"], collinear)
    if censored is not None:
        low, high = censored.take(clean[response_name])
        response = encode_censored(
            low, high, name=response_name, many_levels=many_levels, weights=w
        )
    else:
        response = encode_response(
            clean[response_name], name=response_name, levels=levels, many_levels=many_levels
        )
    return Design(
        response=response,
        response_name=response_name,
        location=terms["location"],
        weights=w,
        offset=offsets,
        row_index=clean.index,
        n_dropped=len(frame) - len(keep_rows),
        formula=f"{response_name} ~ {sides['location']}",
        offset_name=offset if isinstance(offset, str) else None,
        nominal=terms.get("nominal"),
        scale=_with_offset_term(terms.get("scale"), scale_offset),
        scale_offset=None if so_series is None else so_series.to_numpy(dtype=float)[keep_rows],
        row_positions=positions[keep_rows],
        weightless_positions=positions[weightless_rows(bad, keep_rows)],
        scale_offset_name=scale_offset,
    )
