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

__all__ = ["AUTO", "Nesting", "find_nesting", "format_nesting", "parse_nesting"]

#: a nested factor and the factors it is nested in, in the grid's order
Nesting = dict[str, list[str]]
#: the default of ``nesting=``: find the structure in the grid's cells, as ``ref_grid``
AUTO = "auto"


def find_nesting(
    names: Sequence[str], sizes: Sequence[int], index: IntArray, weights: FloatArray
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
    for name, groups in list(found.items()):  # one step of transitivity, as emmeans
        inherited = [g for group in groups for g in found.get(group, [])]
        found[name] = list(dict.fromkeys([*inherited, *groups]))
    return {name: groups for name, groups in found.items() if name not in groups}


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
