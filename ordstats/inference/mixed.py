"""Likelihood-ratio tests involving cumulative link mixed models (clmm).

A clmm with one more variance than a clm (or another clmm) tests ``sigma^2 = 0``, a value on
the boundary of the parameter space, so the LR statistic is not ``chi2(1)`` but the 50:50
mixture ``0.5 chi2(0) + 0.5 chi2(1)`` (Self & Liang 1987; Stram & Lee 1994).  With a
vector-valued term the mixture ``0.5 chi2(df-1) + 0.5 chi2(df)`` is used, the usual
approximation; R's ``anova.clmm`` uses the naive ``chi2(df)`` throughout (conservative).
"""

from __future__ import annotations

import numpy as np

from ordstats.errors import SpecificationError
from ordstats.results.fitted import OrdinalResults
from ordstats.results.mixed import MixedResults

__all__ = ["describe_mixed", "mixed_lr_parts"]


def describe_mixed(res: MixedResults) -> str:
    """One line: the formula and a non-default link/threshold."""
    model = res.model
    extras = [f"link={model.problem.link.name}"] if model.problem.link.name != "logit" else []
    if model.threshold != "flexible":
        extras.append(f"threshold={model.threshold}")
    if res.nagq > 1:
        extras.append(f"nagq={res.nagq}")
    return model.design.formula + (f" [{', '.join(extras)}]" if extras else "")


def _fixed_names(res: OrdinalResults | MixedResults) -> list[str]:
    return list(res.params.index)


def _groups(res: OrdinalResults | MixedResults) -> list[tuple[str, tuple[str, ...]]]:
    if isinstance(res, MixedResults):
        return [(t.group, tuple(t.columns)) for t in res.model.terms]
    return []


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
        Whether ``full`` adds variance parameters (null on the boundary).

    Raises
    ------
    SpecificationError
        Different rows, response, link or threshold; not nested.
    """
    if not isinstance(full, MixedResults):
        raise SpecificationError(
            "the full model must be the mixed one: lr_test(restricted=clm, full=clmm)"
        )
    if not np.isclose(restricted.nobs, full.nobs):
        raise SpecificationError(
            f"the models use different rows or weights (nobs {restricted.nobs:g} vs "
            f"{full.nobs:g}); fit both to the same data"
        )
    if _link_threshold(restricted) != _link_threshold(full):
        raise SpecificationError(
            "the models differ in link or threshold structure; an LR test needs nested models"
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
    n_var_r = len(restricted.variance_params) if isinstance(restricted, MixedResults) else 0
    boundary = len(full.variance_params) > n_var_r
    return df, boundary
