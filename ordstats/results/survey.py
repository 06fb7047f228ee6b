r"""Results of a fit to survey data: design-based covariance, t on design df, term tests.

``OrdinalModel.from_formula(formula, design=...)`` fits the pseudo-likelihood
(the log-likelihood with the sampling weights) and returns
:class:`SurveyResults`.  Its covariance is design-based
(:mod:`ordstats.results.survey_variance`): Taylor linearisation with the exact
observed information of the weighted log-likelihood as the bread (R's
``svyolr`` differentiates its gradient numerically), or the spread of the
estimates refitted under each replicate weight.

Degrees of freedom.  Tests and intervals use Student's t (F for several
parameters) on ``df_resid = degf - (parameters besides the thresholds)``, the
``df.residual`` that R's ``svyolr`` stores and ``regTermTest`` uses
(``degf`` = PSUs - strata, or the replicate weights' rank - 1).  R's
``summary.svyolr`` prints t values without p-values and ``confint`` on an
``svyolr`` fit uses normal quantiles; ordstats' p-values and intervals are
those of t on ``df_resid`` (``use_t=False`` in :meth:`SurveyResults.conf_int`
gives R's normal intervals).

Margins.  ``avg_predictions`` and the other margins verbs take the design-based
covariance of the coefficients and treat the averaged rows as fixed (the delta
method, as marginaleffects with ``vcov(svyolr_fit)``); their ``wts=`` default
counts each row once; pass the sampling weights for a population-weighted
average.  The rows' own sampling variability (Stata's ``margins,
vce(unconditional)``) is not included.
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from ordstats._typing import FloatArray
from ordstats.design import term_columns
from ordstats.errors import (
    OrdstatsError,
    OrdstatsWarning,
    SpecificationError,
    check_flag,
    is_real_number,
    user_stacklevel,
)
from ordstats.families.shifted import ShiftedEvaluation
from ordstats.results.arguments import check_alpha
from ordstats.results.covariance import observed_covariance
from ordstats.results.fitted import OrdinalResults
from ordstats.results.persistence import rows_removed_error
from ordstats.results.survey_variance import linearization_meat, weighted_f_tail
from ordstats.results.values import Covariance
from ordstats.results.wald import wald_test_terms

__all__ = ["SurveyResults", "linearization_covariance"]


def design_rows(model: Any, design: Any) -> np.ndarray:
    """Positions in the design's data of the rows a model used."""
    positions = design.data.index.get_indexer(model.design.row_index)
    if np.any(positions < 0):
        raise OrdstatsError("the fitted rows are not rows of the survey design's data")
    return np.asarray(positions)


def linearization_covariance(
    nonrobust: Covariance, evaluation: Any, weights: FloatArray, positions: Any, design: Any
) -> Covariance:
    """The linearisation covariance ``H^{-1} M H^{-1}`` of a weighted fit.

    Parameters
    ----------
    nonrobust : Covariance
        The inverse observed information of the weighted log-likelihood.
    evaluation : FamilyEvaluation
        The final evaluation (per-row scores).
    weights : ndarray
        The sampling weights of the rows used.
    positions : ndarray of int
        Their positions in the design's data.
    design : SurveyDesign

    Returns
    -------
    Covariance
        ``kind="linearization"``.
    """
    k = nonrobust.matrix.shape[0]
    if nonrobust.singular or k == 0:
        return Covariance(np.full((k, k), np.nan), nonrobust.cond, True, "linearization")
    if isinstance(evaluation, ShiftedEvaluation):
        # bread and meat in the well-conditioned internal basis, then mapped back
        internal = observed_covariance(evaluation.internal.hessian)
        bread = internal.matrix
        scores = evaluation.internal.observation_scores()
    else:
        bread = nonrobust.matrix
        scores = evaluation.observation_scores()
    meat = linearization_meat(weights[:, None] * scores, positions, design)
    matrix = bread @ meat @ bread
    matrix = 0.5 * (matrix + matrix.T)
    if isinstance(evaluation, ShiftedEvaluation):
        basis = evaluation.basis
        return Covariance(
            basis.covariance(matrix),
            nonrobust.cond,
            False,
            "linearization",
            std_errors=basis.standard_errors(matrix),
        )
    return Covariance(matrix, nonrobust.cond, False, "linearization")


_LR_REFUSED = (
    "{what} compares likelihoods as if the rows were independent, which a survey "
    "design's are not; test terms with reg_term_test() (Wald F) or rao_scott_lrt() "
    "(R's regTermTest and regTermTest(method='LRT'))"
)
_NO_LIKELIHOOD = (
    "{what} needs a likelihood, and a survey fit maximises a pseudo-likelihood (the "
    "log-likelihood with sampling weights), which is not one; R's svyolr has no {what} "
    "either. Compare models by testing the extra terms of the larger one with "
    "reg_term_test() (Wald F) or rao_scott_lrt()"
)


class SurveyResults(OrdinalResults):
    """Results of an ordinal model fitted to survey data (see the module docstring).

    As :class:`~ordstats.results.fitted.OrdinalResults`, with ``bse`` and
    ``cov_params()`` design-based, ``tvalues``/``pvalues``/``conf_int`` on
    Student's t with ``df_resid`` degrees of freedom, and
    :meth:`reg_term_test`, :meth:`design_effects` and a design block in the
    summary.
    """

    use_t = True

    @property
    def survey_design(self) -> Any:
        """The design the model was fitted with (its rows: gone after :meth:`remove_data`)."""
        design = self.model.survey_design  # type: ignore[attr-defined]
        if design is None:
            raise rows_removed_error("the survey design")
        return design

    @cached_property
    def design_description(self) -> list[tuple[str, str]]:
        """The summary's design block (label, value), kept by :meth:`remove_data`."""
        return list(self.survey_design.describe())

    def remove_data(self) -> None:
        """:meth:`OrdinalResults.remove_data`, keeping the design's df and description.

        The summary, t tests, intervals and :meth:`reg_term_test` still work;
        :meth:`design_effects` and refits need the design's rows.
        """
        self.design_df  # noqa: B018 (cached: both read the design's rows)
        self.design_description  # noqa: B018
        super().remove_data()

    @cached_property
    def design_df(self) -> int:
        """Design degrees of freedom of the rows used (R's ``degf``)."""
        design = self.survey_design
        return int(design.degf(design_rows(self.model, design)))

    @property
    def df_resid(self) -> float:
        """``degf`` minus the parameters besides the thresholds (R's ``svyolr`` ``df.residual``)."""
        return float(self.design_df - self.df_model)

    @cached_property
    def zvalues(self) -> pd.Series:
        """Wald statistics ``params / bse`` (referred to t on ``df_resid``)."""
        return (self.params / self.bse).rename("t")

    @cached_property
    def pvalues(self) -> pd.Series:
        """Two-sided p-values of t on ``df_resid`` degrees of freedom."""
        df = self.df_resid
        if df <= 0:
            return pd.Series(np.nan, index=self.params.index, name="pvalue")
        return pd.Series(
            2.0 * stats.t.sf(np.abs(self.zvalues), df), index=self.params.index, name="pvalue"
        )

    def conf_int(
        self,
        alpha: float = 0.05,
        method: str = "wald",
        which: Any = None,
        use_t: bool = True,
    ) -> pd.DataFrame:
        """Wald intervals ``params +- q bse`` with ``q`` of t on ``df_resid`` (default).

        Parameters
        ----------
        alpha : float
            One minus the confidence level.
        method : {"wald"}
            Profile intervals are not design-based and are refused.
        which : ignored
        use_t : bool
            ``False``: normal quantiles (R's ``confint`` on an ``svyolr`` fit);
            also, with a warning, where ``df_resid <= 0``.

        Returns
        -------
        pandas.DataFrame
            Columns ``"lower"`` and ``"upper"``.
        """
        alpha = check_alpha(alpha)
        use_t = check_flag("use_t", use_t)  # use_t='no' is truthy
        if method != "wald":
            raise SpecificationError(
                "survey fits have Wald intervals only: the (pseudo-)likelihood profile is not "
                "design-based; use method='wald'"
            )
        if use_t and self.df_resid > 0:
            q = float(stats.t.ppf(1.0 - alpha / 2.0, self.df_resid))
        else:
            if use_t:
                warnings.warn(
                    f"the residual design df is {self.df_resid:g} (design df {self.design_df} "
                    f"minus {self.df_model:g} slopes), so t is undefined: the intervals use "
                    "normal quantiles (R's confint on svyolr); a design with more PSUs, or "
                    "fewer terms, gives t intervals",
                    OrdstatsWarning,
                    stacklevel=user_stacklevel(),
                )
            q = float(stats.norm.ppf(1.0 - alpha / 2.0))
        half = q * self.bse
        return pd.DataFrame({"lower": self.params - half, "upper": self.params + half})

    def reg_term_test(
        self, terms: Any = None, df: float | None = None, joint: bool = False
    ) -> pd.DataFrame:
        """Wald F test that every coefficient of a term is zero (R's ``regTermTest``).

        Parameters
        ----------
        terms : str or list of str, optional
            Terms of the formula (labels as in :meth:`wald_test_terms`, e.g.
            ``"stype"``); default every term.
        df : float, optional
            Denominator degrees of freedom (default ``df_resid``, as R); ``inf``
            gives the chi-squared test.
        joint : bool
            One test that the coefficients of all ``terms`` are zero together,
            labelled ``"a + b"`` (R's ``regTermTest(m, ~a + b)``); default one
            test per term.

        Returns
        -------
        pandas.DataFrame
            One row per term (one row with ``joint``): ``"F"``, ``"df"``,
            ``"ddf"``, ``"P>F"`` (and ``"chi2"``), from the design-based covariance.
        """
        groups = self.term_parameters()
        wanted = list(groups) if terms is None else _term_names(terms)
        unknown = [t for t in wanted if t not in groups]
        if unknown:
            raise SpecificationError(
                f"terms {unknown} are not terms of the model; choose from {list(groups)}"
            )
        if check_flag("joint", joint):  # joint='no' is truthy
            groups = {" + ".join(wanted): [name for t in wanted for name in groups[t]]}
        else:
            groups = {t: groups[t] for t in wanted}
        table = wald_test_terms(
            self.params.to_numpy(), self.covariance.matrix, list(self.params.index), groups
        )
        ddf = self.df_resid if df is None else _denominator_df(df)
        f_stat = table["chi2"] / table["df"]
        if np.isfinite(ddf):
            p = stats.f.sf(f_stat, table["df"], ddf)
        else:
            p = stats.chi2.sf(table["chi2"], table["df"])
        return pd.DataFrame(
            {"F": f_stat, "df": table["df"], "ddf": ddf, "P>F": p, "chi2": table["chi2"]}
        )

    def rao_scott_lrt(self, terms: Any) -> pd.DataFrame:
        """Working likelihood-ratio test of location terms (R's ``regTermTest(method="LRT")``).

        The statistic is twice the difference of the weighted log-likelihoods of
        this fit and the fit without the terms (refitted with the same weights);
        under the design it is distributed as ``sum_i lambda_i chi2_1`` with
        ``lambda`` the eigenvalues of ``V0^{-1} V`` (``V0`` the terms' block of
        the inverse observed information, ``V`` of the design covariance; Rao
        and Scott 1984; Lumley and Scott 2013), referred to ``F``-like tails on
        ``df_resid`` denominator degrees of freedom by R's saddlepoint
        approximation (``pFsum``).

        R's ``svyolr`` divides the deviance by the mean weight but takes
        ``lambda`` from the unscaled Hessian, so its statistic is this one over
        the mean weight (and its p-value larger); here both are on the scale of
        the weighted log-likelihood.

        Parameters
        ----------
        terms : str or list of str
            Location terms of the formula.

        Returns
        -------
        pandas.DataFrame
            One row: ``"chisq"``, ``"df"``, ``"ddf"``, ``"P"`` and ``"lambda"``
            (a tuple).
        """
        wanted = _term_names(terms)
        model = self.model
        location = model.design.location
        groups = term_columns(location)
        unknown = [t for t in wanted if t not in groups]
        if unknown:
            raise SpecificationError(
                f"terms {unknown} are not location terms of the model; choose from {list(groups)}"
            )
        dropped = {name for t in wanted for name in groups[t]}
        keep = [j for j, name in enumerate(location.names) if name not in dropped]
        reduced_location = replace(
            location,
            matrix=location.matrix[:, keep],
            names=[location.names[j] for j in keep],
            spec=None,
            moments=None,
        )
        reduced = model.with_changes(location=reduced_location).fit()
        chisq = 2.0 * (self.llf - reduced.llf)
        names = list(self.params.index)
        index = [names.index(n) for n in location.names if n in dropped]
        v0 = self.nonrobust_covariance.matrix[np.ix_(index, index)]
        v = self.covariance.matrix[np.ix_(index, index)]
        lam = np.sort(np.linalg.eigvals(np.linalg.solve(v0, v)).real)[::-1]
        p = weighted_f_tail(chisq, lam, self.df_resid)
        label = " + ".join(wanted)
        return pd.DataFrame(
            {
                "chisq": chisq,
                "df": len(index),
                "ddf": self.df_resid,
                "P": p,
                "lambda": [tuple(lam)],
            },
            index=[label],
        )

    @cached_property
    def srs_covariance(self) -> Covariance:
        """Covariance under simple random sampling of the same size, for design effects.

        The inverse observed information of the log-likelihood with the sampling
        weights divided by their mean over the design's rows (the domain's rows for
        a subset), as R's ``svyglm(..., deff = TRUE)``: rows the fit drops for
        missing values count in that mean.  No ``n / (n - 1)`` and no
        finite-population factor enter, unlike the design effect of a mean
        (``svymean(..., deff = TRUE)``).
        """
        design = self.survey_design
        mean_weight = float(np.mean(design.weights[design.domain]))
        nonrobust = self.nonrobust_covariance
        return Covariance(nonrobust.matrix * mean_weight, nonrobust.cond, nonrobust.singular, "srs")

    def design_effects(self) -> pd.DataFrame:
        """Design effect of each estimate: design variance over SRS variance.

        Returns
        -------
        pandas.DataFrame
            ``"deff"`` (variance ratio, Kish's design effect, with
            :attr:`srs_covariance` as the SRS variance: R's ``deff(svyglm(...,
            deff = TRUE))`` for a regression coefficient) and ``"deft"`` (its
            square root, the ratio of standard errors).
        """
        deff = self.covariance.variances() / self.srs_covariance.variances()
        return pd.DataFrame({"deff": deff, "deft": np.sqrt(deff)}, index=self.params.index)

    def summary(self, *args: Any, **kwargs: Any) -> Any:
        """The summary of :meth:`OrdinalResults.summary` with a design block."""
        smry = super().summary(*args, **kwargs)
        lines = [f"{label} {value}" for label, value in self.design_description]
        lines.append(f"Design df: {self.design_df} (residual df {self.df_resid:g})")
        lines.append(
            f"Covariance: {self.covariance.kind}; t and F on {self.df_resid:g} df "
            "(R's svyolr df.residual)"
        )
        smry.add_extra_txt(["Survey design: " + "; ".join(lines)])
        return smry

    def get_robustcov_results(self, cov_type: str = "robust", cov_kwds: Any = None) -> Any:
        """Refused: a survey fit's covariance is the design's.

        Raises
        ------
        SpecificationError
            Always; the sandwich covariances of ``OrdinalResults`` treat rows as
            independent draws, which a survey design's rows are not.
        """
        raise SpecificationError(
            "a survey fit's covariance is the design's (linearisation or replicate weights); "
            "sandwich covariances (cov_type) are for fits without a design"
        )

    #: Read by the summary: AIC and BIC are shown as "n/a".
    has_likelihood = False

    @property
    def aic(self) -> float:
        """Refused: a pseudo-likelihood has no AIC (R's ``svyolr`` has no ``AIC`` method)."""
        raise SpecificationError(_NO_LIKELIHOOD.format(what="AIC"))

    @property
    def bic(self) -> float:
        """Refused: a pseudo-likelihood has no BIC (R's ``svyolr`` has no ``BIC`` method)."""
        raise SpecificationError(_NO_LIKELIHOOD.format(what="BIC"))

    @property
    def llr(self) -> float:
        """Refused: the test against the thresholds-only model is a likelihood-ratio test."""
        raise SpecificationError(_LR_REFUSED.format(what="llr (the likelihood ratio vs the null)"))

    @property
    def llr_pvalue(self) -> float:
        """Refused: the test against the thresholds-only model is a likelihood-ratio test."""
        raise SpecificationError(_LR_REFUSED.format(what="llr_pvalue (the LR test vs the null)"))

    def convergence(self) -> Any:
        """Refused: its standard errors would treat the rows as independent (R has none).

        Raises
        ------
        SpecificationError
            Always; ``mle_retvals`` and ``max_grad`` say how the fit ended.
        """
        raise SpecificationError(
            "convergence() reports standard errors from the pseudo-likelihood's Hessian, which "
            "treats the rows as independent, which a survey design's are not (R's svyolr has "
            "no convergence() either); res.mle_retvals and res.max_grad say how the fit ended"
        )

    def slice(self, *args: Any, **kwargs: Any) -> pd.DataFrame:
        """Refused: the pseudo-likelihood's slices are not design-based (R has no ``slice``).

        Raises
        ------
        SpecificationError
            Always.
        """
        raise SpecificationError(
            "slice() measures the pseudo-likelihood in widths from its Hessian, which treats the "
            "rows as independent, which a survey design's are not (R's svyolr has no slice()); "
            "the design-based standard errors are in res.bse"
        )

    def plot_slice(self, *args: Any, **kwargs: Any) -> Any:
        """Refused, as :meth:`slice`."""
        return self.slice(*args, **kwargs)

    def profile(self, param: str, alpha: float = 0.001, n_points: int = 31) -> pd.DataFrame:
        """Refused: the pseudo-likelihood profile is not design-based (R has no ``profile``).

        Raises
        ------
        SpecificationError
            Always; use :meth:`conf_int` (Wald on the design covariance).
        """
        raise SpecificationError(
            "the profile of a survey fit's pseudo-likelihood treats the rows as independent, "
            "which a survey design's are not (R's svyolr has no profile either); use conf_int() "
            "for Wald intervals on the design-based covariance"
        )

    def brant_test(self) -> pd.DataFrame:
        """Refused: Brant's covariance of the binary fits assumes independent rows.

        Raises
        ------
        SpecificationError
            Always; fit the terms as ``nominal=`` with the design and test
            them with :meth:`reg_term_test`.
        """
        raise SpecificationError(
            "Brant's test combines binary fits with a covariance for independent rows, which "
            "a survey design's are not; fit the model with nominal='~terms' and the same "
            "design= and test the nominal terms with reg_term_test()"
        )

    def nominal_test(self) -> pd.DataFrame:
        """Refused: likelihood-ratio tests are not design-based; see :meth:`rao_scott_lrt`."""
        raise SpecificationError(_LR_REFUSED.format(what="nominal_test()"))

    def scale_test(self) -> pd.DataFrame:
        """Refused: likelihood-ratio tests are not design-based; see :meth:`rao_scott_lrt`."""
        raise SpecificationError(_LR_REFUSED.format(what="scale_test()"))

    def __repr__(self) -> str:
        return f"<SurveyResults: {self.model!r}, {self.covariance.kind} covariance>"


def replicate_covariance(matrix: FloatArray, nonrobust: Covariance) -> Covariance:
    """A replicate-weight covariance as a :class:`Covariance`."""
    return Covariance(0.5 * (matrix + matrix.T), nonrobust.cond, nonrobust.singular, "replicate")


def _term_names(terms: Any) -> list[str]:
    """``terms`` (a term's label or a list of them) as a non-empty list of labels."""
    if isinstance(terms, str):
        return [terms]
    if isinstance(terms, (list, tuple)) and terms and all(isinstance(t, str) for t in terms):
        return list(terms)
    raise SpecificationError(
        f"terms must be a term's label or a non-empty list of them (e.g. 'temp' or "
        f"['temp', 'contact']); got {terms!r:.60}"
    )


def _denominator_df(df: Any) -> float:
    """``df`` of :meth:`SurveyResults.reg_term_test`: a positive number or ``inf``."""
    if not is_real_number(df) or not float(df) > 0:
        raise SpecificationError(
            f"df must be a positive number of denominator degrees of freedom (inf for the "
            f"chi-squared test); got {df!r:.40}"
        )
    return float(df)
