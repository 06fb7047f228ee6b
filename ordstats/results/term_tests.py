"""Likelihood-ratio tests of relaxing a model term by term, as R's ``nominal_test``.

``nominal_test`` asks, for each location term, whether its effect differs
between cut-points: the term is moved from the location part to the nominal
part (one effect per threshold), the model is refitted, and the two fits are
compared by a likelihood-ratio test.  A small p-value means the
proportional-odds (parallel lines) assumption fails for that term; the
remedy is to keep it as a nominal effect (``nominal="~ term"``).

``scale_test`` asks, for each location term, whether it also changes the spread
of the latent variable: the term is added as a log-scale effect
(``scale="~ term"``).  A small p-value means the categories are more (or less)
dispersed at some values of the term.

Both refit on the very same rows, weights, link and threshold structure, so the
models are nested and the LR statistic is asymptotically chi-squared with the
difference in parameter counts as degrees of freedom.
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import stats

from ordstats.design import TermsDesign, term_columns
from ordstats.errors import ConvergenceWarning
from ordstats.results.state import FittedState

if TYPE_CHECKING:
    from ordstats.estimation.model import OrdinalModel
    from ordstats.results.fitted import OrdinalResults

__all__ = ["TermTestMethods", "nominal_test", "scale_test"]

_COLUMNS = ["Df", "logLik", "AIC", "LRT", "Pr(>Chi)"]


def _with_columns(target: TermsDesign | None, moved: TermsDesign) -> TermsDesign:
    if target is None:
        return moved
    return replace(
        target,
        matrix=np.column_stack([target.matrix, moved.matrix]),
        names=target.names + moved.names,
        spec=None,
    )


def _relaxed_model(model: OrdinalModel, columns: list[int], part: str) -> OrdinalModel:
    """The model with some location columns added to the nominal or scale part."""
    design = model.design
    location = design.location
    moved = TermsDesign(
        matrix=location.matrix[:, columns], names=[location.names[j] for j in columns]
    )
    changes: dict[str, TermsDesign] = {part: _with_columns(getattr(design, part), moved)}
    if part == "nominal":  # a nominal effect contains the location shift
        keep = [j for j in range(len(location.names)) if j not in set(columns)]
        changes["location"] = replace(
            location, matrix=location.matrix[:, keep], names=[location.names[j] for j in keep]
        )
    return model.with_changes(
        location=changes.get("location"), nominal=changes.get("nominal"), scale=changes.get("scale")
    )


def _term_table(res: OrdinalResults, part: str) -> pd.DataFrame:
    model = res.model
    rows = {"<none>": [np.nan, res.llf, res.aic, np.nan, np.nan]}
    unreliable = []
    already = set(getattr(model.design, part).names) if getattr(model.design, part) else set()
    names = model.exog_names
    for term, column_names in term_columns(model.design.location).items():
        columns = [names.index(c) for c in column_names]
        if part == "scale" and set(column_names) <= already:
            continue
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            relaxed = _relaxed_model(model, columns, part).fit()
        if not relaxed.converged or any(issubclass(w.category, ConvergenceWarning) for w in caught):
            unreliable.append(term)
        df = relaxed.k_params - res.k_params
        lrt = 2.0 * (relaxed.llf - res.llf)
        rows[term] = [df, relaxed.llf, relaxed.aic, lrt, stats.chi2.sf(lrt, df)]
    if unreliable:
        warnings.warn(
            f"the fit relaxing {', '.join(map(repr, unreliable))} did not converge or is "
            "invalid (diverging estimates from separation, or crossing thresholds); its "
            "log-likelihood is a supremum at best, so read its row with care",
            ConvergenceWarning,
            stacklevel=3,
        )
    return pd.DataFrame.from_dict(rows, orient="index", columns=_COLUMNS)


def nominal_test(res: OrdinalResults) -> pd.DataFrame:
    """LR test of the proportional-odds assumption for each location term.

    For the sratio, cratio and acat families the same test asks whether a
    term's slope differs between the steps (VGAM's ``parallel = FALSE ~ term``
    against ``parallel = TRUE``).

    Parameters
    ----------
    res : OrdinalResults

    Returns
    -------
    pandas.DataFrame
        As R's ``nominal_test(fit)``: a row ``<none>`` (the fitted model) and one
        per term with ``Df``, ``logLik``, ``AIC``, ``LRT`` and ``Pr(>Chi)``.
    """
    return _term_table(res, "nominal")


def scale_test(res: OrdinalResults) -> pd.DataFrame:
    """LR test of adding each location term as a log-scale effect.

    Scale effects exist for the cumulative family only.

    Parameters
    ----------
    res : OrdinalResults

    Returns
    -------
    pandas.DataFrame
        As R's ``scale_test(fit)``; terms already in the scale part are skipped.
    """
    return _term_table(res, "scale")


class TermTestMethods(FittedState):
    """Term-wise LR tests of proportional odds and of scale effects (refit the model)."""

    def nominal_test(self) -> pd.DataFrame:
        """LR test of proportional odds for each location term (R's ``nominal_test``).

        Each term in turn becomes a nominal effect (one effect per cut-point)
        and the refit is compared with this model.  A small ``Pr(>Chi)`` says the
        term's effect differs between cut-points: keep it as ``nominal="~ term"``.
        See :mod:`ordstats.results.term_tests`.

        Returns
        -------
        pandas.DataFrame
            Rows ``<none>`` and one per term; ``Df``, ``logLik``, ``AIC``, ``LRT``,
            ``Pr(>Chi)``.
        """
        return nominal_test(self)  # type: ignore[arg-type]

    def scale_test(self) -> pd.DataFrame:
        """LR test of adding each location term as a scale effect (R's ``scale_test``).

        A small ``Pr(>Chi)`` says the spread of the latent variable changes with
        the term: add it as ``scale="~ term"``.  See :mod:`ordstats.results.term_tests`.

        Returns
        -------
        pandas.DataFrame
            As :meth:`nominal_test`.
        """
        return scale_test(self)  # type: ignore[arg-type]
