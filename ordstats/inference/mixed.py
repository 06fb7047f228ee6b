"""Likelihood-ratio tests involving cumulative link mixed models (clmm).

A clmm with one more variance than a clm (or another clmm) tests ``sigma^2 = 0``, a value on
the boundary of the parameter space, so the LR statistic is not ``chi2(1)`` but the 50:50
mixture ``0.5 chi2(0) + 0.5 chi2(1)`` (Self & Liang 1987; Stram & Lee 1994).  With a
vector-valued term the mixture ``0.5 chi2(df-1) + 0.5 chi2(df)`` is used, the usual
approximation; R's ``anova.clmm`` uses the naive ``chi2(df)`` throughout (conservative).
A full model that adds correlations but no SD (``(1|g) + (0 + x|g)`` against ``(1 + x|g)``)
tests a null inside the parameter space: plain ``chi2(df)``, as R.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ordstats._typing import FloatArray, IntArray
from ordstats.design import r_label
from ordstats.errors import SpecificationError
from ordstats.families.problem import CLMData
from ordstats.results.fitted import OrdinalResults
from ordstats.results.mixed import MixedResults

__all__ = ["check_same_data", "describe_mixed", "mixed_lr_parts"]


def describe_mixed(res: MixedResults) -> str:
    """One line: the formula and a non-default link/threshold."""
    model = res.model
    extras = [f"link={model.problem.link.name}"] if model.problem.link.name != "logit" else []
    if model.threshold != "flexible":
        extras.append(f"threshold={model.threshold}")
    if res.nagq > 1:
        extras.append(f"nagq={res.nagq}")
    return r_label(model.design.formula) + (f" [{', '.join(extras)}]" if extras else "")


def _fixed_names(res: OrdinalResults | MixedResults) -> list[str]:
    return list(res.params.index)


def _groups(res: OrdinalResults | MixedResults) -> list[tuple[str, tuple[str, ...]]]:
    if isinstance(res, MixedResults):
        return [(t.group, tuple(t.columns)) for t in res.model.terms]
    return []


@dataclass(frozen=True)
class _FittedRows:
    """What a likelihood was computed on: rows, response codes, weights, offset, groups."""

    index: pd.Index
    levels: list[str]
    y: IntArray
    weights: FloatArray
    offset: FloatArray
    #: grouping factor name -> each row's group code
    groups: dict[str, IntArray]


def _fitted_rows(res: OrdinalResults | MixedResults) -> _FittedRows:
    if isinstance(res, MixedResults):
        mixed, p = res.model, res.model.problem
        groups = {t.group: np.asarray(t.codes) for t in mixed.terms}
        return _FittedRows(
            mixed.design.fixed.row_index, list(mixed.levels), p.y, p.weights, p.offset, groups
        )
    model = res.model
    data = getattr(model, "data", None)
    if model.source is not None or not isinstance(data, CLMData):
        raise SpecificationError(
            "an LR test of a clm against a clmm compares the rows both were fitted to: "
            "fit the clm in memory, from the same DataFrame as the clmm"
        )
    return _FittedRows(
        model.design.row_index, list(model.levels), data.y, data.weights, data.offset, {}
    )


def _check_same_rows(
    restricted: OrdinalResults | MixedResults, full: OrdinalResults | MixedResults
) -> None:
    """Refuse fits whose likelihoods are not of the same data (as for two clm fits)."""
    a, b = _fitted_rows(restricted), _fitted_rows(full)
    if a.levels != b.levels:
        raise SpecificationError(
            f"the models' responses have different levels ({a.levels} vs {b.levels}); "
            "likelihoods of different responses cannot be compared"
        )
    if len(a.index) != len(b.index) or not a.index.equals(b.index):
        raise SpecificationError(
            f"the models were fitted to different rows ({len(a.index)} vs {len(b.index)} "
            f"used; first labels {list(a.index[:3])} and {list(b.index[:3])}): refit both "
            "on the same complete rows of the same DataFrame"
        )
    if not np.array_equal(a.y, b.y):
        raise SpecificationError(
            "the models' responses differ on the same rows; were they fitted to different data?"
        )
    if not np.allclose(a.weights, b.weights, rtol=1e-12, atol=0.0):
        raise SpecificationError(
            "the models were fitted with different weights; refit both with the same weights"
        )
    if not np.allclose(a.offset, b.offset, rtol=1e-12, atol=0.0):
        raise SpecificationError(
            "the models were fitted with different offsets, so they are not nested; refit "
            "both with the same offset"
        )
    for group in sorted(set(a.groups) & set(b.groups)):
        if not _same_partition(a.groups[group], b.groups[group]):
            raise SpecificationError(
                f"the models' grouping factor {group!r} puts the same rows in different "
                "groups; were they fitted to different data?"
            )


def check_same_data(
    first: OrdinalResults | MixedResults, second: OrdinalResults | MixedResults
) -> None:
    """Refuse two fits, one or both a clmm, whose likelihoods are not of the same data.

    Parameters
    ----------
    first, second : OrdinalResults or MixedResults

    Raises
    ------
    SpecificationError
        Different rows, response, weights, offset or grouping of the rows.
    """
    if not np.isclose(first.nobs, second.nobs):
        raise SpecificationError(
            f"the models use different rows or weights (nobs {first.nobs:g} vs "
            f"{second.nobs:g}); fit both to the same data"
        )
    _check_same_rows(first, second)


def _same_partition(first: IntArray, second: IntArray) -> bool:
    """Whether two coding vectors group the rows alike (whatever the codes' numbering)."""
    pairs = np.unique(np.column_stack([first, second]), axis=0)
    return len(pairs) == len(np.unique(first)) == len(np.unique(second))


def _link_threshold(res: OrdinalResults | MixedResults) -> tuple[str, object]:
    if isinstance(res, MixedResults):
        return res.model.problem.link.name, res.model.threshold
    return res.model.link.name, res.model.threshold


def mixed_lr_parts(
    restricted: OrdinalResults | MixedResults, full: OrdinalResults | MixedResults
) -> tuple[int, bool]:
    """Check that ``restricted`` is nested in ``full``; return ``(df, boundary)``.

    Parameters
    ----------
    restricted, full : OrdinalResults or MixedResults
        A clm and a clmm, or two clmm fits, on the same rows.

    Returns
    -------
    df : int
        Extra parameters of ``full``.
    boundary : bool
        Whether ``full`` adds random-effect SDs (null on the boundary); added
        correlations alone leave the null inside the parameter space.

    Raises
    ------
    SpecificationError
        Different rows, response, weights, offset, grouping, link or threshold; not nested.
    """
    if not isinstance(full, MixedResults):
        raise SpecificationError(
            "the full model must be the mixed one: lr_test(restricted=clm, full=clmm)"
        )
    check_same_data(restricted, full)
    if _link_threshold(restricted) != _link_threshold(full):
        raise SpecificationError(
            "the models differ in link or threshold structure; an LR test needs nested models"
        )
    if restricted.k_params > full.k_params:
        # two clmm fits given larger first are nested the other way round: say so,
        # not that the larger one's extra effects make them non-nested
        swap = " (pass the smaller model first)" if isinstance(restricted, MixedResults) else ""
        raise SpecificationError(
            f"the restricted model has {restricted.k_params} parameters and the full model "
            f"{full.k_params}: a nested model must have fewer parameters{swap}"
        )
    missing = [n for n in _fixed_names(restricted) if n not in _fixed_names(full)]
    if missing:
        raise SpecificationError(
            f"the restricted model has fixed effects {missing} that the full one lacks: not nested"
        )
    extra_terms = [
        (group, cols)
        for group, cols in _groups(restricted)
        if not any(g == group and set(cols) <= set(c) for g, c in _groups(full))
    ]
    if extra_terms:
        raise SpecificationError(
            f"the restricted model has random terms {extra_terms} that the full one lacks"
        )
    df = full.k_params - restricted.k_params
    if df <= 0:
        raise SpecificationError("the full model must have more parameters than the restricted one")
    # the null is on the boundary only where the full model adds an SD; a correlation
    # (the covariance of (1 + x|g) against (1|g) + (0 + x|g)) is 0 inside its range
    boundary = _n_sds(full) > _n_sds(restricted)
    return df, boundary


def _n_sds(res: OrdinalResults | MixedResults) -> int:
    return sum(len(cols) for _, cols in _groups(res))
