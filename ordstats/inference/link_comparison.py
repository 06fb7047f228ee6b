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
   of chi-square 0 and 1 (the p-value is halved).
3. **Vuong's test** for each pair of standard links: ``z > 0`` favours the
   first link of the pair; a two-sided p-value below 0.05 says one link fits
   significantly better, otherwise the data cannot tell them apart.  See
   :func:`ordstats.vuong_test`.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ordstats.core.links import get_link
from ordstats.design import capture_context
from ordstats.design.random import has_random_terms
from ordstats.errors import OrdstatsWarning, SpecificationError, check_flag, user_stacklevel
from ordstats.estimation.model import OrdinalModel
from ordstats.inference.lr import lr_test, vuong_test
from ordstats.inference.nesting import LINK_NESTING

if TYPE_CHECKING:
    from ordstats.results.fitted import OrdinalResults

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
        ``LR.stat``, ``df``, ``Pr(>Chisq)``, ``boundary``.  Empty with
        ``nested_tests=False``.
    vuong : pandas.DataFrame
        Vuong's test for each pair: ``z``, ``Pr(>|z|)``, ``favours``.
    results : dict
        The fitted models by link name.
    family_results : dict
        The fits of the flexible families by name (empty without nested tests).
    notes : list of str
        Fits that did not converge.
    """

    table: pd.DataFrame
    nested: pd.DataFrame
    vuong: pd.DataFrame
    results: dict[str, OrdinalResults]
    family_results: dict[str, OrdinalResults] = field(default_factory=dict)
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
            else "  (not computed: nested_tests=False, or no link nested in a family)",
            "",
            "Vuong's tests of non-nested pairs (z > 0 favours link 1):",
            self.vuong.to_string(float_format=lambda v: f"{v:.4g}"),
        ]
        if self.notes:
            parts += ["", "Notes:", *[f"  - {note}" for note in self.notes]]
        return "\n".join(parts)


def _fit(base: OrdinalModel, link: str, fit_kwds: dict[str, Any]) -> OrdinalResults:
    """Fit ``base`` under ``link``: the same model with only its link changed.

    Its warnings (non-convergence, separation) name the link: one per link
    fitted, they would otherwise read alike.
    """
    model = base if base.link.name == link else base.with_changes(link=link)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", OrdstatsWarning)
        res = model.fit(**fit_kwds)
    for item in caught:
        named = issubclass(item.category, OrdstatsWarning)
        message = f"under the {link} link: {item.message}" if named else item.message
        warnings.warn(message, item.category, stacklevel=user_stacklevel())
    return res


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
            {
                "link 1": first,
                "link 2": second,
                "z": test.statistic,
                "Pr(>|z|)": test.pvalue,
                "favours": favours,
            }
        )
    return pd.DataFrame(rows, columns=["link 1", "link 2", "z", "Pr(>|z|)", "favours"])


_NESTED_COLUMNS = [
    "link",
    "family",
    "lambda0",
    "lambda_hat",
    "LR.stat",
    "df",
    "Pr(>Chisq)",
    "boundary",
]


def _nested_table(
    results: dict[str, OrdinalResults], families: dict[str, OrdinalResults]
) -> pd.DataFrame:
    """LR test of each fitted standard link against each family that nests it."""
    rows = []
    for link, res in results.items():
        for nesting in LINK_NESTING.get(link, ()):
            family_fit = families[nesting.family]
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
    return pd.DataFrame(rows, columns=_NESTED_COLUMNS)


def _unconverged_notes(fits: dict[str, OrdinalResults]) -> list[str]:
    return [
        _separation_note(link, res.fit_info.diverging)
        if res.fit_info.diverging
        else f"the {link} fit did not converge ({res.fit_info.message}); read its rows with caution"
        for link, res in fits.items()
        if not res.converged
    ]


def _separation_note(link: str, diverging: Sequence[str]) -> str:
    verb = "diverges" if len(diverging) == 1 else "diverge"
    return (
        f"the {link} fit shows separation: {', '.join(map(repr, diverging))} {verb} (no finite "
        "estimate), so its logLik is only approached and its tests are not valid"
    )


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
    :mod:`ordstats.inference.link_comparison` for how to read each part.

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
        ``threshold=``, ``family=``, ...), the same for every link.  For the
        sratio and cratio families the nested tests are skipped (a note says
        so): the flexible links belong to the cumulative model.

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
    if isinstance(links, str):
        other = "probit" if links.strip().lower() == "logit" else "logit"
        raise SpecificationError(
            f"links= takes a list of at least two links, e.g. links=[{other!r}, {links!r}]; "
            f"got the string {links!r}"
        )
    names = [get_link(link).name for link in links]
    if len(set(names)) != len(names) or len(names) < 2:
        raise SpecificationError(f"links must be at least two different links; got {list(links)}")
    flexible = [name for name in names if name not in STANDARD_LINKS]
    if flexible:
        raise SpecificationError(
            f"links= takes standard links; {', '.join(map(repr, flexible))} is a flexible "
            "family, which compare_links fits itself for the nested tests"
        )
    if "link" in model_kwargs:
        raise SpecificationError("give the links to compare as links=, not link=")
    if model_kwargs.get("design") is not None:
        raise SpecificationError(
            "the link comparison's AIC, nested LR tests and Vuong's tests compare likelihoods "
            "of independent rows, which a survey design's are not; fit the model under each "
            "link with design= and compare their estimates and design-based tests instead"
        )
    if has_random_terms(formula):
        raise SpecificationError(
            "the link comparison needs a model without random terms: Vuong's tests and the "
            "nested LR tests compare independent rows. Fit the model with random terms under "
            "each link instead (link= in Python, --link in 'ordstats fit') and compare their "
            "logLik and AIC"
        )
    captured = capture_context(1) if context is None else context
    base = OrdinalModel.from_formula(formula, data, link=names[0], context=captured, **model_kwargs)
    if fit_kwds is not None and not isinstance(fit_kwds, Mapping):
        raise SpecificationError(
            f"fit_kwds must be a dict of fit() options, e.g. {{'maxiter': 50}}; "
            f"got {fit_kwds!r:.60}"
        )
    fit_kwds = dict(fit_kwds or {})
    if fit_kwds.get("penalty") is not None:
        raise SpecificationError(
            "compare_links compares likelihoods (AIC, nested LR tests, Vuong's tests), which a "
            "penalised fit does not maximise; fit the penalised model under each link with "
            "fit(penalty=...) and compare their predictions instead"
        )
    nested_tests = check_flag("nested_tests", nested_tests)
    results = {name: _fit(base, name, fit_kwds) for name in names}
    notes = []
    if nested_tests and not base.family_spec.capabilities.flexible_links:
        # the flexible links (Aranda-Ordaz, log-gamma) exist for the cumulative model only
        nested_tests = False
        notes.append("no nested tests: flexible links exist for the cumulative family only")
    needed = sorted({n.family for name in names for n in LINK_NESTING.get(name, ())})
    families = {family: _fit(base, family, fit_kwds) for family in needed} if nested_tests else {}
    nested = (
        _nested_table(results, families) if nested_tests else pd.DataFrame(columns=_NESTED_COLUMNS)
    )
    return LinkComparison(
        table=_link_table(results),
        nested=nested,
        vuong=_vuong_table(results),
        results=results,
        family_results=families,
        notes=notes + _unconverged_notes({**results, **families}),
    )
