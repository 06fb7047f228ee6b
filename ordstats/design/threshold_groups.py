r"""Group-specific thresholds: brms' ``y | thres(gr = g) ~ ...``.

Each level of the factor ``g`` has its own vector of thresholds ``theta_{g,1..K-1}``:

.. math::

    P(Y \le j \mid x, g) = F(\theta_{g,j} - x'\beta)

(cumulative; ``eta_{g,j} = alpha_{g,j} + x'b`` for sratio, cratio and acat).  With
treatment coding of ``g`` this is the model with a nominal (category-specific) effect
of ``g`` on every threshold: the first level's thresholds are the reference
thresholds and each other level's are the reference ones plus its nominal effects.
The formula layer builds that design (``nominal = ~ C(g)``); the Bayesian fit
(:mod:`ordstats.estimation.bayes_thresholds`) samples the groups' thresholds
themselves.

**Groups with fewer categories** (as brms with an integer response): group ``g`` has
thresholds up to its highest observed level only, ``m_g`` of them (``m_g + 1`` the
code of that level, counting from 1), and ``P(Y > m_g + 1 | g) = 0``: its top observed
level takes all the probability above its last threshold.  A group without rows at
the lowest level keeps its first threshold, which the prior holds below the second
(brms does the same with an integer response; with an ordered-factor response brms
refuses such a group).  A group without rows at a level between its second and its
top is refused, with a message listing every such group and saying what to merge: the
rows no longer keep its thresholds ordered, which brms's sampler does by construction
(for an integer response; brms refuses an ordered-factor response with such a group) and
ordstats' does not.
A group with rows at the lowest level only has no threshold and is refused, as brms
does.  The reference group of the treatment coding is the first group that has all
the thresholds (:func:`reference_first`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from ordstats.errors import DataError, FormulaError

__all__ = ["ThresholdGroups", "split_threshold_groups", "threshold_groups"]

_THRES = re.compile(r"^thres\s*\((.*)\)$", re.DOTALL)
_GR = re.compile(r"^gr\s*=\s*(`[^`]+`|[A-Za-z_.][A-Za-z0-9_.]*)$")


def _bar_outside_backticks(lhs: str) -> int:
    """Where the first ``|`` outside backtick-quoted names is (-1: none)."""
    quoted = False
    for k, c in enumerate(lhs):
        if c == "`":
            quoted = not quoted
        elif c == "|" and not quoted:
            return k
    return -1


def _lhs_parts(lhs: str, bar: int) -> tuple[str, list[str]]:
    """The response and the addition terms of ``y | a + b`` (brms' left-hand side)."""
    terms = [t.strip() for t in lhs[bar + 1 :].split("+") if t.strip()]
    return lhs[:bar].strip(), terms


def split_threshold_groups(formula: Any) -> tuple[Any, str | None]:
    """``("y ~ x", "g")`` of ``"y | thres(gr = g) ~ x"``; ``(formula, None)`` without ``|``.

    Parameters
    ----------
    formula : str
        A two-sided formula.

    Returns
    -------
    formula : str
        The formula without the addition term.
    variable : str or None
        The grouping column (without backticks).

    Raises
    ------
    FormulaError
        For another addition term (``weights()``, ``cens()``, ...), several of them, a
        number of thresholds (``thres(3, gr = g)``) or a ``thres()`` without ``gr =``.
    """
    if not isinstance(formula, str) or "~" not in formula:
        return formula, None
    lhs, rhs = formula.split("~", 1)
    bar = _bar_outside_backticks(lhs)
    if bar < 0:
        return formula, None
    response, terms = _lhs_parts(lhs, bar)
    if not response:
        raise FormulaError(f"formula {formula!r} has no response on the left of '|'")
    if len(terms) != 1 or not _THRES.match(terms[0]):
        raise FormulaError(
            f"formula {formula!r}: the only addition term after 'y |' that ordstats reads is "
            "thres(gr = g) (group-specific thresholds); give weights as weights='w' and a "
            "censored response with ordstats' censored-response support"
        )
    match = _THRES.match(terms[0])
    assert match is not None
    inner = match.group(1).strip()
    gr = _GR.match(inner)
    if gr is None:
        raise FormulaError(
            f"formula {formula!r}: write thres(gr = g) with the grouping column g; ordstats "
            "takes each group's number of thresholds from its highest observed level, so "
            f"thres(x, ...) is not available; got thres({inner})"
        )
    return f"{response} ~ {rhs}", gr.group(1).strip("`")


@dataclass(frozen=True)
class ThresholdGroups:
    """The groups of ``thres(gr = g)`` in a fitted design.

    Attributes
    ----------
    variable : str
        The grouping column ``g``.
    levels : tuple of str
        Its levels, the reference (treatment coding's first) level first.
    n_thresholds : int
        The response's levels minus one: the thresholds of the groups that have them all.
    counts : tuple of int
        Each group's number of thresholds (its highest observed level's position, the
        lowest level being 0); ``n_thresholds`` for every group by default.
    """

    variable: str
    levels: tuple[str, ...]
    n_thresholds: int
    counts: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if not self.counts:
            object.__setattr__(self, "counts", (self.n_thresholds,) * len(self.levels))

    @property
    def ragged(self) -> bool:
        """Whether some group has fewer thresholds than the response's levels minus one."""
        return min(self.counts) < self.n_thresholds

    @property
    def n_groups(self) -> int:
        """The number of groups."""
        return len(self.levels)


def nominal_formula(variable: str) -> str:
    """The nominal formula ``~ C(g)`` that gives each level of ``g`` its thresholds."""
    name = variable if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", variable) else f"`{variable}`"
    return f"~ C({name})"


def _level_of(column: str, variable: str) -> str:
    """``"yes"`` of formulaic's treatment column ``C(contact)[T.yes]``."""
    match = re.match(r"^C\(.+\)\[T\.(.*)\]$", column)
    if match is None:
        raise DataError(
            f"thres(gr = {variable}): unexpected design column {column!r}; give {variable} "
            "as a column of labels"
        )
    return match.group(1)


def threshold_groups(design: Any, group_values: Any, variable: str) -> ThresholdGroups:
    """The groups of a design built with :func:`nominal_formula`, checked.

    Parameters
    ----------
    design : Design
        Its nominal part is the treatment coding of ``g``.
    group_values : array-like
        ``g`` at the design's rows (for the reference level's label).
    variable : str

    Returns
    -------
    ThresholdGroups

    Raises
    ------
    DataError
        For a single group, or a group with rows at the lowest level only.
    """
    others = [_level_of(c, variable) for c in design.nominal.names]
    seen = list(dict.fromkeys(str(v) for v in group_values))
    reference = [v for v in seen if v not in others]
    if not others or len(reference) != 1:
        raise DataError(
            f"thres(gr = {variable}) needs at least two groups; {variable} has "
            f"{len(seen)} level(s) among the fitted rows ({', '.join(seen[:5])}); without "
            "groups, drop thres()"
        )
    levels = (reference[0], *others)
    codes = group_codes(np.asarray(design.nominal.matrix, dtype=float))
    response = design.response
    y = np.asarray(response.codes)
    n_levels = len(response.levels)
    counts = np.zeros((len(levels), n_levels))
    np.add.at(counts, (codes, y), 1.0)  # rows of weight 0 are not in the design
    tops = tuple(int(np.flatnonzero(c > 0).max()) for c in counts)
    single = [levels[g] for g, top in enumerate(tops) if top == 0]
    if single:
        raise DataError(
            f"thres(gr = {variable}): group(s) {', '.join(repr(g) for g in single[:5])} "
            f"have rows at the lowest level {response.levels[0]!r} only, so no threshold "
            "(brms refuses them too); merge such groups with others or drop their rows"
        )
    _refuse_gaps(counts, levels, [str(v) for v in response.levels], variable)
    return ThresholdGroups(variable, levels, n_levels - 1, tops)


def _refuse_gaps(counts: Any, groups: tuple[str, ...], levels: list[str], variable: str) -> None:
    """A group may lack the lowest level and levels above its top, not others.

    Between a group's lowest and highest observed level the rows keep its thresholds
    increasing; a missing level there (or below its second level) would leave two of
    them unordered, where brms samples ordered thresholds (for an integer response;
    an ordered-factor response with such a group is refused by brms too: "Number of
    thresholds is smaller than required by the response").  The message lists every
    such group, so that one recoding mends them all.
    """
    gaps = {}
    for g, row in enumerate(counts):
        seen = np.flatnonzero(row > 0)
        lacking = [levels[j] for j in range(1, int(seen.max())) if row[j] == 0]
        if lacking:
            gaps[groups[g]] = (lacking, levels[int(seen.max())])
    if not gaps:
        return
    listed = "; ".join(
        f"group {group!r} has no rows at {', '.join(map(repr, lacking))} (its highest level "
        f"is {top!r})"
        for group, (lacking, top) in list(gaps.items())[:5]
    )
    more = f" and {len(gaps) - 5} more group(s)" if len(gaps) > 5 else ""
    missing = sorted({level for lacking, _ in gaps.values() for level in lacking}, key=levels.index)
    raise DataError(
        f"thres(gr = {variable}): {listed}{more}. A group may lack the lowest level and the "
        "levels above its highest one, not levels in between: no rows there would keep its "
        "thresholds ordered (brms samples them as an ordered vector for an integer response "
        "and refuses an ordered-factor one). Either merge each missing level "
        f"({', '.join(map(repr, missing))}) with a neighbouring level of the response for all "
        f"rows (an ordered categorical with fewer levels), or merge these groups with others "
        f"(recode {variable}), or drop thres() and let the groups shift the thresholds with "
        f"a random term (1|{variable})"
    )


def group_tops(codes: Any, y: Any, n_groups: int) -> Any:
    """Each group's highest observed response code (``codes`` 0-based group numbers)."""
    tops = np.full(n_groups, -1)
    np.maximum.at(tops, np.asarray(codes), np.asarray(y))
    return tops


def reference_first(column: Any, rows: Any, y: Any) -> Any:
    """``column`` as a categorical whose first category is the first group at the top level.

    The treatment coding's reference group must have every threshold, because the
    others' thresholds are its thresholds plus differences (brms has no reference).

    Parameters
    ----------
    column : pandas.Series
        The grouping column of the data.
    rows : pandas.Index
        The fitted rows.
    y : array-like of int
        The response codes at those rows.

    Returns
    -------
    pandas.Categorical or None
        ``None`` when the first group already reaches the top level.
    """
    import pandas as pd

    cat = pd.Categorical(column)
    fitted = pd.Categorical(column.loc[rows], categories=cat.categories)
    tops = group_tops(fitted.codes, y, len(cat.categories))
    top = int(np.max(y))
    first_seen = int(np.flatnonzero(tops >= 0)[0])
    if tops[first_seen] == top:
        return None
    first = int(np.flatnonzero(tops == top)[0])
    order = [cat.categories[first], *(c for i, c in enumerate(cat.categories) if i != first)]
    return pd.Categorical(column, categories=order)


def group_codes(W: Any) -> Any:
    """Each row's group (0 = reference) from its treatment dummies ``W``."""
    W = np.asarray(W, dtype=float)
    return np.where(W.sum(axis=1) > 0, np.argmax(W, axis=1) + 1, 0)
