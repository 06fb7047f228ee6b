r"""Tests between fitted models: likelihood ratios, analysis of deviance, Vuong.

* :func:`lr_test` -- likelihood-ratio test of a restricted model against a full
  model that contains it.  :math:`LR = 2(\ell_{full} - \ell_{restricted})` is
  asymptotically :math:`\chi^2` with as many degrees of freedom as the full
  model has extra parameters, *if the restricted model is true* and nested in
  the full one.  A small p-value says the extra parameters improve the fit
  more than chance would; a large one says the data cannot tell the models
  apart (not that the restricted model is right).
* :func:`anova` -- the same for a sequence of nested models, as R's
  ``anova.clm``.
* :func:`vuong_test` -- Vuong's (1989) test for two *non-nested* models of the
  same data: are their expected log-likelihoods equal?
* :func:`ordstats.compare_links` (in :mod:`ordstats.links_compare`) puts these
  together to compare link functions.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from ordstats._typing import FloatArray
from ordstats.errors import (
    ConvergenceWarning,
    OrdstatsError,
    SpecificationError,
    user_stacklevel,
)
from ordstats.families import Family
from ordstats.families.problem import CLMData
from ordstats.inference.describe import describe_model, models_frame
from ordstats.inference.mixed import check_same_data, mixed_lr_parts
from ordstats.inference.nesting import check_comparable, check_nested
from ordstats.results.anova_types import lr_anova, wald_anova
from ordstats.results.fitted import OrdinalResults
from ordstats.results.mixed import MixedResults
from ordstats.results.persistence import rows_removed_error
from ordstats.results.regularized import PenalizedResults
from ordstats.results.survey import SurveyResults

__all__ = ["LRTestResult", "VuongTestResult", "anova", "describe_model", "lr_test", "vuong_test"]


def lr_pvalue(statistic: float, df: int, boundary: bool = False) -> float:
    r"""P-value of a likelihood-ratio statistic.

    Parameters
    ----------
    statistic : float
    df : int
        Degrees of freedom.
    boundary : bool
        Whether one tested parameter lies on the boundary of its space under
        the null; then the statistic follows the mixture
        :math:`\tfrac12\chi^2_{df-1} + \tfrac12\chi^2_{df}` (Self & Liang 1987),
        with :math:`\chi^2_0` the point mass at zero.

    Returns
    -------
    float

    Examples
    --------
    >>> round(lr_pvalue(3.84, 1), 3), round(lr_pvalue(3.84, 1, boundary=True), 3)
    (0.05, 0.025)
    """
    upper = float(stats.chi2.sf(statistic, df))
    if not boundary:
        return upper
    lower = float(stats.chi2.sf(statistic, df - 1)) if df > 1 else float(statistic <= 0.0)
    return 0.5 * upper + 0.5 * lower


@dataclass(frozen=True)
class LRTestResult:
    """Outcome of a likelihood-ratio test between nested models.

    Attributes
    ----------
    statistic : float
        ``2 (llf_full - llf_restricted)``.
    df : int
        Extra parameters of the full model (0 for two models of the same size).
    pvalue : float
        NaN (R's ``NA``) when ``df`` is 0: there is no test.
    llf_restricted, llf_full : float
    k_restricted, k_full : int
        Numbers of parameters.
    restricted, full : str
        Descriptions of the two models.
    boundary : bool
        The null value is on the boundary of the parameter space (mixture
        reference distribution, see :func:`lr_pvalue`).
    """

    statistic: float
    df: int
    pvalue: float
    llf_restricted: float
    llf_full: float
    k_restricted: int
    k_full: int
    restricted: str
    full: str
    boundary: bool = False

    def __str__(self) -> str:
        if self.df == 0:
            return self._same_size_report()
        reference = (
            f"50:50 mixture of chi2({self.df - 1}) and chi2({self.df})"
            if self.boundary
            else f"chi2({self.df})"
        )
        verdict = (
            "the full model fits significantly better at the 5% level"
            if self.pvalue < 0.05
            else "no significant improvement over the restricted model at the 5% level"
        )
        return "\n".join(
            [
                "Likelihood-ratio test of nested models",
                *self._models_lines(),
                f"  LR = {self.statistic:.4f} on {self.df} df ({reference}), "
                f"p-value = {self.pvalue:.4g}",
                f"  => {verdict}",
            ]
            + (
                [
                    "  note: the null value is on the boundary of the parameter space "
                    "(e.g. a random-effect variance of 0), hence the mixture"
                ]
                if self.boundary
                else []
            )
        )

    def _models_lines(self) -> list[str]:
        return [
            f"  restricted: {self.restricted}",
            f"              {self.k_restricted} parameters, logLik = {self.llf_restricted:.4f}",
            f"  full:       {self.full}",
            f"              {self.k_full} parameters, logLik = {self.llf_full:.4f}",
        ]

    def _same_size_report(self) -> str:
        """Two models of the same size: the statistic on 0 df and no p-value, as R's anova."""
        return "\n".join(
            [
                "Likelihood-ratio statistic of two models with the same number of parameters",
                *self._models_lines(),
                f"  LR = {self.statistic:.4f} on 0 df, p-value = NA",
                "  => no test: neither model adds parameters to the other (as in R's anova);",
                "     compare models of the same size by their log-likelihood or AIC",
            ]
        )


def _check_results(models: Sequence[object]) -> None:
    for res in models:
        if not isinstance(res, (OrdinalResults, MixedResults)):
            raise OrdstatsError(
                f"expected fitted models (OrdinalResults from .fit()); got {type(res).__name__}"
            )
        if not getattr(res, "has_likelihood", True):
            raise SpecificationError(
                "likelihood-ratio tests (lr_test, anova) and Vuong's test compare likelihoods "
                "of independent rows; a survey fit's pseudo-likelihood is not one (R's svyolr "
                "has no anova either). Test the extra terms of the larger survey fit with its "
                ".reg_term_test(terms) (Wald F, R's regTermTest) or .rao_scott_lrt(terms) "
                "(R's regTermTest(method='LRT'))"
            )
        if getattr(res, "penalty_kind", None):
            raise OrdstatsError(
                "likelihood-ratio tests, anova and Vuong's test compare maximum-likelihood "
                "fits; a penalised fit (fit_regularized or fit(penalty=...)) does not maximise "
                "the likelihood. Compare penalised fits by cross-validation (model.cv)"
            )


def _warn_unconverged(*models: OrdinalResults) -> None:
    bad = [describe_model(m) for m in models if not m.converged]
    if bad:
        warnings.warn(
            "the fit of " + "; ".join(bad) + " did not converge, so its log-likelihood "
            "may not be the maximum and the test may be wrong",
            ConvergenceWarning,
            stacklevel=user_stacklevel(),
        )


def _warn_negative(statistic: float, full: OrdinalResults) -> None:
    if statistic < -1e-6 * max(1.0, abs(full.llf)):
        warnings.warn(
            f"the full model {describe_model(full)} has a lower log-likelihood than the "
            "restricted one, so its fit missed the maximum; refit it (e.g. from the "
            "restricted model's estimates) before trusting the test",
            ConvergenceWarning,
            stacklevel=user_stacklevel(),
        )


def lr_test(restricted: OrdinalResults, full: OrdinalResults) -> LRTestResult:
    """Likelihood-ratio test of a restricted model against a full model containing it.

    The statistic ``LR = 2 (llf_full - llf_restricted)`` is compared with a
    chi-square distribution on ``k_full - k_restricted`` degrees of freedom.
    The p-value is the probability of an improvement at least this large if
    the restricted model were true.  Both fits must be of the same response
    on the same rows with the same weights, and the restricted model must be
    nested in the full one (:func:`ordstats.inference.nesting.check_nested` checks this
    from the designs, not from the formulas).  A standard link is nested in a
    flexible family that contains it; when its value is on the boundary of
    the family (cloglog in Aranda-Ordaz) the p-value uses the 50:50 mixture.

    Two models with the same number of parameters (the same model under
    another coding, a term added that is aliased, or models that are not
    nested) are not tested, as in R's ``anova``: the result has the statistic
    ``2 (llf_full - llf_restricted)`` (of either sign), ``df`` 0 and ``pvalue``
    NaN (R's ``NA``); only that both are fits of the same data is checked.

    Parameters
    ----------
    restricted, full : OrdinalResults

    Returns
    -------
    LRTestResult
        ``statistic``, ``df``, ``pvalue``; ``print()`` gives a short report.

    Raises
    ------
    SpecificationError
        If the models are not comparable, or of different sizes and not
        nested; the message says why.

    Examples
    --------
    >>> import ordstats
    >>> wine = ordstats.datasets.load("wine")
    >>> m1 = ordstats.OrdinalModel.from_formula("rating ~ temp", wine).fit()
    >>> m2 = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    >>> test = ordstats.lr_test(m1, m2)
    >>> round(test.statistic, 4), test.df, round(test.pvalue, 6)
    (11.043, 1, 0.00089)
    """
    _check_results([restricted, full])
    if restricted.k_params == full.k_params:
        return _same_size_test(restricted, full)
    if isinstance(restricted, MixedResults) or isinstance(full, MixedResults):
        return _mixed_lr_test(restricted, full)
    nesting = check_nested(restricted, full)
    _warn_unconverged(restricted, full)
    statistic = 2.0 * (full.llf - restricted.llf)
    _warn_negative(statistic, full)
    df = full.k_params - restricted.k_params
    boundary = bool(nesting is not None and nesting.boundary)
    return _lr_result(restricted, full, df, lr_pvalue(statistic, df, boundary), boundary)


def _same_size_test(
    restricted: OrdinalResults | MixedResults, full: OrdinalResults | MixedResults
) -> LRTestResult:
    """:func:`lr_test` of two models with as many parameters: no test, as R's ``anova``.

    R gives ``LR.stat = 2 (logLik - logLik above)``, ``df`` 0 and no p-value,
    nested or not; the fits must still be of the same data.
    """
    if isinstance(restricted, MixedResults) or isinstance(full, MixedResults):
        check_same_data(restricted, full)
    else:
        check_comparable(restricted, full)
    _warn_unconverged(restricted, full)  # type: ignore[arg-type]
    return _lr_result(restricted, full, 0, np.nan)


def _mixed_lr_test(restricted: object, full: object) -> LRTestResult:
    """:func:`lr_test` with a clmm (see :mod:`ordstats.inference.mixed`)."""
    df, boundary = mixed_lr_parts(restricted, full)  # type: ignore[arg-type]
    statistic = 2.0 * (full.llf - restricted.llf)  # type: ignore[attr-defined]
    _warn_negative(statistic, full)  # type: ignore[arg-type]
    pvalue = lr_pvalue(max(statistic, 0.0), df, boundary)
    return _lr_result(restricted, full, df, pvalue, boundary)  # type: ignore[arg-type]


def _lr_result(
    restricted: OrdinalResults | MixedResults,
    full: OrdinalResults | MixedResults,
    df: int,
    pvalue: float,
    boundary: bool = False,
) -> LRTestResult:
    """The :class:`LRTestResult` of two fits: ``2 (llf_full - llf_restricted)`` on ``df``."""
    return LRTestResult(
        statistic=2.0 * (full.llf - restricted.llf),
        df=df,
        pvalue=pvalue,
        llf_restricted=restricted.llf,
        llf_full=full.llf,
        k_restricted=restricted.k_params,
        k_full=full.k_params,
        restricted=describe_model(restricted),
        full=describe_model(full),
        boundary=boundary,
    )


def _row_names(models: Sequence[OrdinalResults], names: Sequence[str] | None) -> list[str]:
    if names is not None:
        if not isinstance(names, (str, Sequence, pd.Index, np.ndarray)):
            raise OrdstatsError(
                f"names must be a list of {len(models)} labels, one per model; got {names!r:.40}"
            )
        if isinstance(names, str):  # a string is a sequence of letters
            raise OrdstatsError(
                f"names must be a list of {len(models)} labels, one per model; got the string "
                f"{names!r}"
            )
        if len(names) != len(models) or len(set(names)) != len(names):
            raise OrdstatsError(f"names must be {len(models)} distinct labels, one per model")
        return [str(n) for n in names]
    labels = [describe_model(m) for m in models]
    seen: dict[str, int] = {}
    unique = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        unique.append(label if seen[label] == 1 else f"{label} #{seen[label]}")
    return unique


def anova(
    *models: OrdinalResults,
    names: Sequence[str] | None = None,
    type: Any = None,
    test: str = "Wald",
) -> pd.DataFrame:
    """Likelihood-ratio tests of a sequence of nested models, as R's ``anova.clm``.

    With one model, Wald tests of its location terms instead, as R's
    ``anova(fit, type = "I")`` of one clm: ``type`` is ``"I"`` (the default of
    R's ``anova.clm``), ``"II"``, ``"III"`` or ``"marginal"``, and the table has R's
    columns ``Df``, ``Chisq``, ``Pr(>Chisq)``
    (:func:`ordstats.results.anova_types.wald_anova` gives the hypotheses).
    With ``test="LR"`` (one model) likelihood-ratio tests of type ``"II"`` (the
    default) or ``"III"``, as ``car::Anova`` of a polr fit
    (:func:`ordstats.results.anova_types.lr_anova`).

    The models are sorted by their number of parameters (models of the same
    size keep the order given); each row tests the model against the one above
    it (``LR.stat = 2 (logLik - logLik above)`` on ``df`` extra parameters).
    Each must be nested in the next (checked from the designs), fitted to the
    same response, rows and weights.  Read the table top down: a small
    ``Pr(>Chisq)`` says the added parameters of that row improve the fit beyond
    chance; the first row has no test.

    A model with as many parameters as the one above it (a term added that is
    aliased and dropped, or a different model of the same size) is not tested:
    as in R, its row has ``LR.stat = 2 (logLik - logLik above)`` (0 for the
    same model, any sign otherwise), ``df`` 0 and ``Pr(>Chisq)`` NaN (R's
    ``NA``), and nesting is not checked (as :func:`lr_test` does for such a
    pair); so also where either fit has random effects, as R's ``anova.clmm``.

    A row that adds random-effect variances (a clm against a clmm, or a clmm with
    more random terms) takes :func:`lr_test`'s p-value: the 50:50 mixture of
    ``chi2(df - 1)`` and ``chi2(df)``, since the null variance is on the boundary.
    R's ``anova.clmm`` reports the plain ``chi2(df)`` p-value there (twice ours for
    ``df = 1``); ``LR.stat``, ``logLik`` and ``AIC`` are R's.

    Parameters
    ----------
    *models : OrdinalResults
        Two or more fits.
    names : sequence of str, optional
        Row labels in the order given (default: formula and link).
    type : {"I", "II", "III", "marginal"}, optional
        With one model only: the type of its tests (default ``"I"`` for Wald
        tests, as R's ``anova(fit)``; ``"II"`` for LR tests, as car's).
    test : {"Wald", "LR"}
        With one model only: R ordinal's Wald tests or car's likelihood-ratio tests.

    Returns
    -------
    pandas.DataFrame
        Columns ``no.par``, ``AIC``, ``logLik``, ``LR.stat``, ``df``,
        ``Pr(>Chisq)`` (R's names), one row per model labelled by its
        formula with its nominal and scale parts (:func:`describe_model`).
        ``attrs["models"]`` holds R's ``attr(, "models")``: ``formula``,
        ``nominal`` and ``scale`` (when a model has one), ``link`` and
        ``threshold`` per row, as a dict of columns of ``{row: value}``
        (``pd.DataFrame(attrs["models"])`` gives the table; a plain dict, so
        that pandas can compare the ``attrs`` when it concatenates or casts).

    Raises
    ------
    SpecificationError
        If fewer than two models are given, a pair of different sizes is not
        nested, or two fits are not of the same data.

    Examples
    --------
    >>> import ordstats
    >>> wine = ordstats.datasets.load("wine")
    >>> m1 = ordstats.OrdinalModel.from_formula("rating ~ temp", wine).fit()
    >>> m2 = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    >>> ordstats.anova(m2, m1, names=["temp + contact", "temp"]).round(4)
                    no.par       AIC   logLik  LR.stat   df  Pr(>Chisq)
    temp                 5  194.0269 -92.0134      NaN  NaN         NaN
    temp + contact       6  184.9838 -86.4919   11.043  1.0      0.0009
    """
    if test not in ("Wald", "LR"):
        raise SpecificationError(f"test={test!r}: use 'Wald' (R ordinal's anova) or 'LR' (car)")
    if len(models) == 1:
        return _single_anova(models[0], type, test)
    if type is not None or test != "Wald":
        raise SpecificationError(
            "type= and test= are for the tests of one model (anova(fit, type='II')); the "
            "comparison of several models is by likelihood-ratio tests"
        )
    if len(models) < 2:
        raise SpecificationError(
            "anova needs at least two fitted models to compare, or one for Wald tests of "
            "its terms (anova(fit), anova(fit, type='II'))"
        )
    _check_results(models)
    labels = _row_names(models, names)
    order = sorted(range(len(models)), key=lambda i: models[i].k_params)
    ordered = [models[i] for i in order]
    rows = []
    for position, res in enumerate(ordered):
        row = {"no.par": res.k_params, "AIC": res.aic, "logLik": res.llf}
        if position == 0:
            row.update({"LR.stat": np.nan, "df": np.nan, "Pr(>Chisq)": np.nan})
        else:
            step = lr_test(ordered[position - 1], res)
            row.update({"LR.stat": step.statistic, "df": step.df, "Pr(>Chisq)": step.pvalue})
        rows.append(row)
    index = [labels[i] for i in order]
    table = pd.DataFrame(rows, index=index)
    table.attrs["heading"] = "Likelihood ratio tests of cumulative link models"
    table.attrs["models"] = models_frame(ordered, index).to_dict()
    return table


def _single_anova(res: Any, kind: Any, test: str) -> pd.DataFrame:
    """R's ``anova(fit, type=)`` of one clm, refused where R has none."""
    if isinstance(res, MixedResults):
        raise SpecificationError(
            "anova of one mixed model is not available (R's anova.clmm compares models): "
            "use res.wald_test_terms() or res.drop1(test='Chisq')"
        )
    if isinstance(res, SurveyResults):
        raise SpecificationError(
            "anova of one survey fit is not available (R's svyolr has none): test its terms "
            "with res.reg_term_test(...) (Wald F on the design's degrees of freedom)"
        )
    if isinstance(res, PenalizedResults):
        raise SpecificationError(
            "Wald tests of terms need maximum-likelihood estimates; a penalised fit's standard "
            "errors do not give valid tests: refit without the penalty"
        )
    if not isinstance(res, OrdinalResults):
        raise SpecificationError(f"anova takes fitted ordstats models; got {type(res).__name__}")
    if test == "LR":
        return lr_anova(res, "II" if kind is None else kind)
    return wald_anova(res, "I" if kind is None else kind)


@dataclass(frozen=True)
class VuongTestResult:
    r"""Outcome of Vuong's test between two non-nested models.

    Attributes
    ----------
    statistic : float
        :math:`z = (\sum_i w_i m_i - c) / (\sqrt{N}\,\hat\omega)` with
        :math:`m_i = \log p_1(y_i) - \log p_2(y_i)` and the correction ``c``.
    pvalue : float
        Two-sided: could the models fit equally well?
    pvalue_first, pvalue_second : float
        One-sided p-values for "model 1 is better" (``z`` large) and "model 2
        is better" (``z`` small).
    omega : float
        Standard deviation of the ``m_i`` (zero: the models agree on every row).
    correction : str
        ``"none"``, ``"aic"`` or ``"bic"``.
    first, second : str
        Descriptions of the models.
    """

    statistic: float
    pvalue: float
    pvalue_first: float
    pvalue_second: float
    omega: float
    correction: str
    first: str
    second: str

    def __str__(self) -> str:
        if self.omega == 0.0 or not np.isfinite(self.statistic):
            verdict = "the models give the same probabilities on every row: indistinguishable"
        elif self.pvalue < 0.05:
            better = self.first if self.statistic > 0 else self.second
            verdict = f"{better} fits significantly better (5% level)"
        else:
            verdict = "the data cannot distinguish the two models (5% level)"
        return "\n".join(
            [
                f"Vuong's test of non-nested models (correction: {self.correction})",
                f"  model 1: {self.first}",
                f"  model 2: {self.second}",
                f"  z = {self.statistic:.4f}, p-value = {self.pvalue:.4g} (two-sided); "
                f"one-sided p: model 1 better {self.pvalue_first:.4g}, "
                f"model 2 better {self.pvalue_second:.4g}",
                f"  => {verdict}",
            ]
        )


def _row_loglik(res: OrdinalResults) -> np.ndarray:
    return res.model.evaluate(res.params.to_numpy()).log_prob


def _difference_sums(first: OrdinalResults, second: OrdinalResults) -> tuple[float, float]:
    """``sum w m`` and ``sum w (m - mean)^2`` of the row log-likelihood differences ``m``."""
    if first.model.evaluator.keeps_rows:
        weights = first.model.data.weights
        diff = _row_loglik(first) - _row_loglik(second)
        mean = float(weights @ diff) / first.nobs
        return float(weights @ diff), float(weights @ (diff - mean) ** 2)
    # data read in chunks: the same columns under two families/links, in two passes
    a, b = first.model, second.model
    if a.exog_names != b.exog_names or a.threshold != b.threshold:
        raise SpecificationError(
            "Vuong's test on data read in chunks needs two models with the same columns and "
            "threshold structure (e.g. one formula under two links); load the data into "
            "memory to compare other models"
        )
    args = (a.family_spec, first.params.to_numpy(), b.family_spec, second.params.to_numpy())
    total = float(a.evaluator.reduce_rows(loglik_difference_sums, *args, 0.0)[0])
    squares = float(a.evaluator.reduce_rows(loglik_difference_sums, *args, total / first.nobs)[1])
    return total, squares


def loglik_difference_sums(
    data: CLMData,
    first: Family,
    first_params: FloatArray,
    second: Family,
    second_params: FloatArray,
    mean: float,
) -> FloatArray:
    """``[sum w (m - mean), sum w (m - mean)^2]`` with ``m = log p_1(y) - log p_2(y)`` per row.

    Both families are evaluated on the same arrays (each with its own link), so
    the sums add up over chunks.
    """
    rows = [
        family.evaluate(family.prepare(replace(data, link=family.link)), params).log_prob
        for family, params in ((first, first_params), (second, second_params))
    ]
    centred = rows[0] - rows[1] - mean
    return np.array([data.weights @ centred, data.weights @ centred**2])


#: ``omega`` below this (relative to the mean row log-likelihood) means the two fits give
#: the same probabilities to the precision of their estimates (one model under two
#: codings of its factors differs by ~1e-12 per row; a real difference is far larger)
_SAME_ROWS = 1e-7


def vuong_test(
    first: OrdinalResults, second: OrdinalResults, correction: str = "none"
) -> VuongTestResult:
    r"""Vuong's (1989) test of two non-nested models of the same data.

    With :math:`m_i = \log p_1(y_i) - \log p_2(y_i)` the difference of the
    rows' log-likelihood contributions (a row of frequency weight ``w``
    counting ``w`` times, ``N`` observations),

    .. math:: z = \frac{\sum_i w_i m_i - c}{\sqrt{N}\,\hat\omega}, \qquad
              \hat\omega^2 = \frac1N \sum_i w_i (m_i - \bar m)^2,

    is asymptotically standard normal when both models are equally close to
    the truth (in Kullback-Leibler divergence).  ``z`` far above zero favours
    model 1, far below model 2.  ``c`` is 0 (``"none"``), ``k_1 - k_2``
    (``"aic"``) or ``(k_1 - k_2) log(N) / 2`` (``"bic"``, Vuong's Schwarz
    correction); it matters only when the models differ in size.

    The test is for strictly non-nested models, such as the same formula
    under two links.  If the models can give the same fitted distribution
    (overlapping models, e.g. links when no covariate matters), ``omega``
    is near zero and the normal reference is not valid; read a tiny
    ``omega`` as "indistinguishable".  For nested models use :func:`lr_test`.

    Two fits that give the same probabilities on every row (the same model
    twice, or one model under two codings of its factors) make ``z`` 0/0: it is
    reported as 0, with two-sided p-value 1 and one-sided p-values 1/2 (no
    evidence either way), and ``omega`` 0.

    Parameters
    ----------
    first, second : OrdinalResults
        Fits of the same response on the same rows and weights.
    correction : {"none", "aic", "bic"}

    Returns
    -------
    VuongTestResult
    """
    _check_results([first, second])
    if any(isinstance(res, MixedResults) for res in (first, second)):
        raise SpecificationError(
            "Vuong's test compares the models' log-likelihoods row by row, and a clmm's "
            "likelihood does not split into rows (its rows share random effects); compare "
            "non-nested clmm fits by their AIC or BIC (.aic, .bic)"
        )
    for res in (first, second):
        if getattr(res, "data_removed", False):
            raise rows_removed_error("Vuong's test (it compares the models row by row)")
    check_comparable(first, second)
    if correction not in ("none", "aic", "bic"):
        raise OrdstatsError(f"correction must be 'none', 'aic' or 'bic'; got {correction!r}")
    total, squares = _difference_sums(first, second)
    n_obs = first.nobs
    omega = float(np.sqrt(squares / n_obs))
    k_diff = first.k_params - second.k_params
    penalty = {"none": 0.0, "aic": float(k_diff), "bic": 0.5 * k_diff * np.log(n_obs)}[correction]
    scale = np.sqrt(n_obs) * omega
    # per-row differences at the fits' own precision: the same probabilities
    same = omega <= _SAME_ROWS * max(1.0, abs(first.llf) / n_obs)
    if same:  # m_i = 0 on every row: 0/0, no evidence for either model
        z, omega = 0.0, 0.0
    elif scale <= 1e-12 * max(1.0, abs(total)):  # m_i the same nonzero constant: no variance
        z = np.nan
    else:
        z = (total - penalty) / scale
    return VuongTestResult(
        statistic=z,
        pvalue=float(2.0 * stats.norm.sf(abs(z))),
        pvalue_first=float(stats.norm.sf(z)),
        pvalue_second=float(stats.norm.cdf(z)),
        omega=omega,
        correction=correction,
        first=describe_model(first),
        second=describe_model(second),
    )
