r"""Which link fits? Likelihood-based comparison of link functions.

Models that differ only in their link are *not nested* (no logit model is a
probit model with some parameter fixed), so the likelihood-ratio test that R's
``anova()`` prints for them is not valid: its chi-square reference has no
justification and "df = 0".  :func:`compare_links` reports what is valid:

1. **Information criteria** for each link: ``logLik``, ``AIC`` and ``BIC``.  All
   links have the same number of parameters, so they rank the links by
   log-likelihood; a difference below about 2 is not worth much.
2. **Nested LR tests against flexible families**: each standard link is a
   special case of a one-parameter family (Aranda-Ordaz: logit at
   ``lambda = 1``, cloglog as ``lambda -> 0``; log-gamma: probit at
   ``lambda = 0``, cloglog at ``1``, loglog at ``-1``).  ``LR = 2(llf_family -
   llf_link)`` on 1 df tests "is this link adequate within the family?"; a
   small p-value rejects the link.  cloglog sits on the boundary of the
   Aranda-Ordaz family, where the reference distribution is the 50:50 mixture
   of chi-square 0 and 1 (the p-value is halved).  These tests need the
   flexible links; where they are not available the table says so.
3. **Vuong's test** for each pair of standard links: ``z > 0`` favours the
   first link of the pair; a two-sided p-value below 0.05 says one link fits
   significantly better, otherwise the data cannot tell them apart.  See
   :func:`ordstats.vuong_test`.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ordstats.errors import OrdstatsError, SpecificationError
from ordstats.inference import lr_test, vuong_test
from ordstats.links import get_link
from ordstats.nesting import LINK_NESTING

if TYPE_CHECKING:
    from ordstats.results import OrdinalResults

__all__ = ["LinkComparison", "compare_links"]

STANDARD_LINKS = ("logit", "probit", "cloglog", "loglog", "cauchit")


@dataclass
class LinkComparison:
    """Fits of one formula under several links, and the tests between them.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per link: ``no.par``, ``logLik``, ``AIC``, ``BIC``, ``converged``.
    nested : pandas.DataFrame
        LR tests of each standard link against the flexible family containing
        it: ``family``, ``lambda0`` (its value there), ``lambda_hat``,
        ``LR.stat``, ``df``, ``Pr(>Chisq)``, ``boundary``.  Empty when no
        flexible link is available.
    vuong : pandas.DataFrame
        Vuong's test for each pair: ``z``, ``Pr(>|z|)``, ``favours``.
    results : dict
        The fitted models by link name.
    notes : list of str
        Links that could not be fitted and tests that could not be done.
    """

    table: pd.DataFrame
    nested: pd.DataFrame
    vuong: pd.DataFrame
    results: dict[str, OrdinalResults]
    notes: list[str] = field(default_factory=list)

    @property
    def best(self) -> str:
        """The link with the smallest AIC."""
        return str(self.table["AIC"].idxmin())

    def __str__(self) -> str:
        parts = [
            "Comparison of link functions",
            "",
            "Information criteria (same number of parameters: ranks by log-likelihood):",
            self.table.to_string(float_format=lambda v: f"{v:.4f}"),
            "",
            "LR tests of each link within a flexible family that nests it:",
            self.nested.to_string(float_format=lambda v: f"{v:.4g}")
            if len(self.nested)
            else "  (not available)",
            "",
            "Vuong's tests of non-nested pairs (z > 0 favours link 1):",
            self.vuong.to_string(float_format=lambda v: f"{v:.4g}"),
        ]
        if self.notes:
            parts += ["", "Notes:", *[f"  - {note}" for note in self.notes]]
        return "\n".join(parts)


def _fit(
    formula: str, data: Any, link: str, model_kwargs: dict[str, Any], fit_kwds: dict[str, Any]
) -> OrdinalResults:
    from ordstats.model import OrdinalModel

    model = OrdinalModel.from_formula(formula, data, link=link, **model_kwargs)
    return model.fit(**fit_kwds)


def _link_table(results: dict[str, OrdinalResults]) -> pd.DataFrame:
    rows = {
        link: {
            "no.par": res.k_params,
            "logLik": res.llf,
            "AIC": res.aic,
            "BIC": res.bic,
            "converged": res.converged,
        }
        for link, res in results.items()
    }
    return pd.DataFrame.from_dict(rows, orient="index")


def _vuong_table(results: dict[str, OrdinalResults]) -> pd.DataFrame:
    rows = []
    for first, second in combinations(results, 2):
        test = vuong_test(results[first], results[second])
        favours = ""
        if np.isfinite(test.statistic) and test.pvalue < 0.05:
            favours = first if test.statistic > 0 else second
        rows.append(
            {"link 1": first, "link 2": second, "z": test.statistic,
             "Pr(>|z|)": test.pvalue, "favours": favours}
        )
    return pd.DataFrame(rows, columns=["link 1", "link 2", "z", "Pr(>|z|)", "favours"])


def _available_family(family: str) -> bool:
    try:
        get_link(family)
    except (OrdstatsError, TypeError):
        return False
    return True


_NESTED_COLUMNS = ["link", "family", "lambda0", "lambda_hat", "LR.stat", "df", "Pr(>Chisq)",
                   "boundary"]


def _nested_table(
    results: dict[str, OrdinalResults],
    fit_family: Any,
    notes: list[str],
) -> pd.DataFrame:
    """LR test of each fitted standard link against each family that nests it."""
    families: dict[str, OrdinalResults | None] = {}
    rows = []
    for link, res in results.items():
        for nesting in LINK_NESTING.get(link, ()):
            if nesting.family not in families:
                families[nesting.family] = fit_family(nesting.family)
            family_fit = families[nesting.family]
            if family_fit is None:
                continue
            test = lr_test(res, family_fit)
            rows.append(
                {
                    "link": link,
                    "family": nesting.family,
                    "lambda0": nesting.value,
                    "lambda_hat": float(family_fit.params.get("lambda", np.nan)),
                    "LR.stat": test.statistic,
                    "df": test.df,
                    "Pr(>Chisq)": test.pvalue,
                    "boundary": test.boundary,
                }
            )
    missing = sorted(f for f, fit in families.items() if fit is None)
    if missing:
        notes.append(
            f"flexible link(s) {', '.join(missing)} are not available in this version of "
            "ordstats, so the nested LR tests against them are not reported"
        )
    return pd.DataFrame(rows, columns=_NESTED_COLUMNS)


def compare_links(
    formula: str,
    data: Any,
    links: Sequence[str] = STANDARD_LINKS,
    *,
    nested_tests: bool = True,
    fit_kwds: dict[str, Any] | None = None,
    context: Any = None,
    **model_kwargs: Any,
) -> LinkComparison:
    """Fit one formula under several links and compare them validly.

    Reports, for each link, ``logLik``, ``AIC`` and ``BIC``; the
    likelihood-ratio test of each standard link against the flexible family
    that nests it (Aranda-Ordaz for logit and cloglog, log-gamma for probit,
    cloglog and loglog, with the boundary case cloglog-in-Aranda-Ordaz tested
    against the 50:50 chi-square mixture); and Vuong's test for each pair of
    links, which are not nested.  See the module docstring of
    :mod:`ordstats.link_comparison` for how to read each part.

    Parameters
    ----------
    formula : str
    data : pandas.DataFrame
    links : sequence of str
        Standard links to compare (at least two).
    nested_tests : bool
        Fit the flexible families and test each link within them.
    fit_kwds : dict, optional
        Passed to every ``fit()``.
    context : mapping, optional
        Names available to formula expressions (default: the caller's).
    **model_kwargs
        Passed to :meth:`OrdinalModel.from_formula` (``weights=``,
        ``threshold=``, ...), the same for every link.

    Returns
    -------
    LinkComparison
        ``table``, ``nested``, ``vuong``, ``results``; ``print()`` gives a report.

    Examples
    --------
    >>> import ordstats
    >>> wine = ordstats.datasets.load("wine")
    >>> cmp = ordstats.compare_links("rating ~ temp + contact", wine,
    ...                              links=("logit", "probit"), nested_tests=False)
    >>> cmp.table["logLik"].round(4).tolist()
    [-86.4919, -85.7611]
    >>> cmp.best
    'probit'
    """
    names = [get_link(link).name for link in links]
    if len(set(names)) != len(names) or len(names) < 2:
        raise SpecificationError(f"links must be at least two different links; got {list(links)}")
    if "link" in model_kwargs:
        raise SpecificationError("give the links to compare as links=, not link=")
    if context is None:
        frame = sys._getframe(1)
        context = {**frame.f_globals, **frame.f_locals}
    kwargs = {**model_kwargs, "context": context}
    fit_kwds = dict(fit_kwds or {})
    results = {name: _fit(formula, data, name, kwargs, fit_kwds) for name in names}
    notes: list[str] = []

    def fit_family(family: str) -> OrdinalResults | None:
        if not _available_family(family):
            return None
        return _fit(formula, data, family, kwargs, fit_kwds)

    nested = (
        _nested_table(results, fit_family, notes)
        if nested_tests
        else pd.DataFrame(columns=_NESTED_COLUMNS)
    )
    return LinkComparison(
        table=_link_table(results),
        nested=nested,
        vuong=_vuong_table(results),
        results=results,
        notes=notes,
    )
