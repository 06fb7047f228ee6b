r"""Nested factors of a reference grid, as R emmeans finds and names them.

A factor ``B`` is *nested* in ``A`` when every level of ``B`` occurs with one
level of ``A`` only, among the grid's cells that have rows (wine's bottles
1-4 are served cold, 5-8 warm: ``bottle %in% temp``).  emmeans' ``ref_grid``
reads this from the data and then averages over ``B`` within each level of
``A`` over ``B``'s levels that occur there, instead of over every level
(which would reach combinations the fit cannot estimate).

:func:`find_nesting` is that search; :func:`parse_nesting` reads an explicit
``nesting=`` (``"bottle %in% temp"``, ``"c %in% (a*b)"``, or a dict
``{"bottle": ["temp"]}``; ``None`` or ``"none"`` for no nesting);
:func:`format_nesting` writes a structure as emmeans prints it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ordstats._typing import FloatArray, IntArray
from ordstats.errors import OrdstatsError

__all__ = [
    "AUTO",
    "Nesting",
    "TermCodings",
    "find_nesting",
    "format_nesting",
    "implied_nesting",
    "parse_nesting",
]

#: a nested factor and the factors it is nested in, in the grid's order
Nesting = dict[str, list[str]]
#: a formula's terms, each as its variables and whether each is coded by contrasts
#: (reduced: R's ``1`` in a terms object's ``factors``) or by every level (R's ``2``)
TermCodings = list[list[tuple[str, bool]]]
#: the default of ``nesting=``: find the structure in the grid's cells, as ``ref_grid``
AUTO = "auto"


def find_nesting(
    names: Sequence[str],
    sizes: Sequence[int],
    index: IntArray,
    weights: FloatArray,
    implied: Nesting | None = None,
) -> Nesting:
    """The factors nested in others among the cells with rows (emmeans' ``ref_grid`` rule).

    Parameters
    ----------
    names, sizes : sequence
        The grid's variables and their numbers of levels.
    index : ndarray, shape (n_cells, n_variables)
        Each cell's level positions.
    weights : ndarray, shape (n_cells,)
        Each cell's rows; cells without rows are left out.
    implied : dict, optional
        Nesting the model's formula implies (:func:`implied_nesting`), added
        to what the cells show before the transitive step, as emmeans adds
        what the model's terms imply.

    Returns
    -------
    dict
        ``{nested: [factors it is nested in]}``; empty when nothing is nested.

    Notes
    -----
    Only variables with more than one level count, and at least two are
    needed.  Variables are visited in the grid's order; once ``B`` is found
    nested in ``A``, ``A`` is not looked for in ``B``.  A variable nested in
    one that is itself nested takes over that one's nesting factors too.
    """
    used = [d for d, size in enumerate(sizes) if size > 1]
    if len(used) < 2:
        return {}
    cells = index[np.asarray(weights) > 0]
    found: Nesting = {}
    for d in used:
        inside = {k for k, groups in found.items() if names[d] in groups}
        others = [e for e in used if e != d and names[e] not in inside]
        nests = []
        for e in others:
            largest = max(
                (len(np.unique(cells[cells[:, d] == level, e])) for level in range(sizes[d])),
                default=0,
            )
            if largest == 1:
                nests.append(names[e])
        if nests:
            found[names[d]] = nests
    for name, groups in (implied or {}).items():
        found[name] = list(dict.fromkeys([*found.get(name, []), *groups]))
    for name, groups in list(found.items()):  # one step of transitivity, as emmeans
        inherited = [g for group in groups for g in found.get(group, [])]
        found[name] = list(dict.fromkeys([*inherited, *groups]))
    return {name: groups for name, groups in found.items() if name not in groups}


def implied_nesting(terms: TermCodings, names: Sequence[str]) -> Nesting:
    """The nesting a formula implies: a factor without a main effect, coded within others.

    emmeans' rule for the model's terms: a factor of the grid ``names`` that
    has no term of its own (``temp/bottle`` is ``temp + temp:bottle``) is
    nested in the factors that the terms holding it by contrasts code by every
    level (``bottle %in% temp``); where no term codes it by contrasts, the
    terms that code it by every level are read the same way.  Of several such
    terms, the smallest sets of nesting factors count.

    Parameters
    ----------
    terms : TermCodings
        The location formula's terms.
    names : sequence of str
        The grid's factors with more than one level.

    Returns
    -------
    dict
        ``{nested: [factors it is nested in]}``.
    """
    grid = set(names)
    mains = {codings[0][0] for codings in terms if len(codings) == 1}
    found: Nesting = {}
    for name in names:
        if name in mains:
            continue
        holding = [codings for codings in terms if any(v == name for v, _ in codings)]
        by_contrasts = [c for c in holding if any(v == name and reduced for v, reduced in c)]
        sets = [
            frozenset(v for v, reduced in codings if v != name and v in grid and not reduced)
            for codings in (by_contrasts or holding)
        ]
        smallest = [g for g in sets if g and not any(other < g for other in sets)]
        groups = [v for v in names if any(v in g for g in smallest)]
        if groups:
            found[name] = groups
    return found


def parse_nesting(nesting: Any) -> Nesting | None:
    """An explicit ``nesting=`` as ``{nested: [factors]}``; None for the automatic search.

    Parameters
    ----------
    nesting : {"auto", None, "none"}, str or mapping
        ``"auto"`` (find it), ``None`` or ``"none"`` (no nesting, R's
        ``nesting = NULL``), ``"b %in% a, c %in% (a*b)"`` or ``{"b": ["a"]}``.

    Returns
    -------
    dict or None
        None for ``"auto"``; an empty dict for no nesting.
    """
    if isinstance(nesting, str) and nesting.strip() == AUTO:
        return None
    if nesting is None or (isinstance(nesting, str) and nesting.strip().lower() in ("", "none")):
        return {}
    if isinstance(nesting, str):
        parsed: Nesting = {}
        for part in nesting.split(","):
            pieces = re.split(r"\s+%in%\s+", part.strip())
            groups = [g for g in re.split(r"[\s()*:+/]+", pieces[-1]) if g]
            if len(pieces) != 2 or not pieces[0].strip() or not groups:
                raise OrdstatsError(
                    "nesting must read like 'bottle %in% temp' (several separated by commas, "
                    f"'c %in% (a*b)' for more than one factor); got {nesting!r}"
                )
            parsed[pieces[0].strip()] = groups
    elif isinstance(nesting, Mapping):
        parsed = {
            str(k): [v] if isinstance(v, str) else [str(g) for g in v] for k, v in nesting.items()
        }
    else:
        raise OrdstatsError(
            "nesting must be 'auto', None (no nesting), a text like 'bottle %in% temp' or a "
            f"dict {{'bottle': ['temp']}}; got {nesting!r}"
        )
    return parsed


def format_nesting(nesting: Mapping[str, Sequence[str]]) -> str:
    """A structure as emmeans writes it: ``"b %in% a, c %in% (a*b)"`` (``"none"`` if empty)."""
    if not nesting:
        return "none"
    return ", ".join(
        f"{name} %in% {groups[0] if len(groups) == 1 else '(' + '*'.join(groups) + ')'}"
        for name, groups in nesting.items()
    )
