"""The names a model's formulas may use, kept so that models and results pickle.

A formula such as ``"rating ~ np.log(x) + temp"`` is evaluated with the
caller's variables (formulaic's captured context).  A model keeps only the
names its formulas use, in a :class:`FormulaContext`, which pickles and
deep-copies: modules (``np``) are stored by name and imported again on loading.
Names whose values are per-row data of the fitted rows (``xx`` in
``"rating ~ temp + xx"``) are recorded as such: predictions take them from the
new data, never from the context, and a pickled context leaves their values out.
"""

from __future__ import annotations

import importlib
import re
import types
from collections.abc import Iterable, Mapping

from ordstats.design import formula_variables, is_row_data
from ordstats.design.r_functions import shadows_r_function
from ordstats.errors import OrdstatsError, SpecificationError

__all__ = ["FormulaContext", "formula_names", "used_context"]


class _ModuleRef:
    """A module stored by its import name."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


def _restore(items: dict[str, object], row_names: frozenset[str] | None = None) -> FormulaContext:
    return FormulaContext(
        {
            key: importlib.import_module(value.name) if isinstance(value, _ModuleRef) else value
            for key, value in items.items()
        },
        row_names=row_names,
    )


class FormulaContext(dict[str, object]):
    """A dict of the names formulas use that pickles and deep-copies (modules by name).

    Parameters
    ----------
    items : mapping, optional
    row_names : frozenset of str, optional
        The names whose values are per-row data of the fitted rows (``xx`` in
        ``"y ~ temp + xx"``), when known.  Predictions take them from new
        data, never from here, so a pickled context leaves their values out.
    """

    def __init__(
        self, items: Mapping[str, object] | None = None, *, row_names: Iterable[str] | None = None
    ) -> None:
        super().__init__(items or {})
        self.row_names = None if row_names is None else frozenset(row_names)

    def __reduce__(self) -> tuple[object, tuple[dict[str, object], frozenset[str] | None]]:
        dropped = self.row_names or frozenset()
        items = {
            key: _ModuleRef(value.__name__) if isinstance(value, types.ModuleType) else value
            for key, value in self.items()
            if key not in dropped
        }
        return _restore, (items, self.row_names)


def formula_names(formulas: Iterable[object]) -> set[str]:
    """Every identifier the given formulas (``"y ~ rhs"`` or one-sided ``"~ rhs"``) may use.

    Non-string entries (``None``, arrays) are skipped.
    """
    names: set[str] = set()
    for formula in formulas:
        if not isinstance(formula, str) or "~" not in formula:
            continue
        text = formula if formula.split("~", 1)[0].strip() else "_response_" + formula
        try:
            _, used = formula_variables(text)
        except (SyntaxError, ValueError, OrdstatsError):
            continue  # the formula layer reports the broken formula clearly
        names |= used
        # a response expression's names too ("cut(response, bins) ~ x")
        lhs = re.sub(r"`[^`]+`", " ", text.split("~", 1)[0])
        names |= set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", lhs))
    return names


def used_context(
    context: object,
    formulas: Iterable[object],
    columns: Iterable[object] = (),
    n_rows: int | None = None,
) -> FormulaContext:
    """Keep the names of ``context`` that ``formulas`` use and that are not data columns.

    Parameters
    ----------
    context : mapping or None
        The caller's names (formulaic's captured context) or a user's mapping.
    formulas : iterable of str
        The model's formulas (location, nominal, scale).
    columns : iterable
        Column names of the data: data take precedence over the context, so
        these are not kept (and new data must provide them).
    n_rows : int, optional
        Rows of the data: kept values with one value per row are recorded as
        per-row data (:attr:`FormulaContext.row_names`), which new data must
        hold as columns.

    Returns
    -------
    FormulaContext
    """
    if context is None:
        return FormulaContext(row_names=() if n_rows is not None else None)
    if not isinstance(context, Mapping):
        raise SpecificationError(
            "context must be a mapping of names (e.g. {'np': numpy}); got "
            f"{type(context).__name__}"
        )
    wanted = formula_names(formulas) - {str(c) for c in columns}
    kept: dict[str, object] = {}
    for name in wanted:
        try:
            value = context[name]
        except KeyError:
            continue
        if not shadows_r_function(name, value):
            kept[name] = value
    rows = None
    if n_rows is not None:
        rows = [name for name, value in kept.items() if is_row_data(value, n_rows)]
    return FormulaContext(kept, row_names=rows)
