r"""Results of a cumulative link mixed model (R's ``clmm``).

:class:`MixedResults` reads the fitted state of an
:class:`~ordstats.estimation.mixed.OrdinalMixedModel`: thresholds and fixed effects with
standard errors from the inverse Hessian of the approximate marginal negative
log-likelihood (as R's ``vcov.clmm``), the variance components (``VarCorr``), the
conditional modes with conditional variances (``ranef(condVar = TRUE)``), information
criteria, the ``summary.clmm`` layout and predictions that clmm lacks:

* ``re_form=None``: conditional on the groups' modes, ``P(Y <= j | b^)``;
* ``re_form=0``: random effects set to zero;
* ``re_form="marginal"``: population averaged,
  :math:`P(Y_i \le j) = \int F(\theta_j - \eta_i - s_i z)\,\phi(z)\,dz` with
  :math:`s_i^2 = \sum_t x_{ti}^\top \Sigma_t x_{ti}` (the random part of ``eta`` is normal),
  by composite Gauss-Legendre quadrature with panels that follow the step of ``F`` at the
  scale of the SD (:func:`~ordstats.families.mixed.marginal_cumulative`; error below 1e-12).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy import optimize, stats

from ordstats._typing import FloatArray
from ordstats.core.threads import numeric_threads
from ordstats.design import r_label, term_columns
from ordstats.errors import (
    ConvergenceWarning,
    PredictionError,
    PredictionWarning,
    SpecificationError,
    user_stacklevel,
)
from ordstats.families.mixed import (
    BOUNDARY_SD,
    cholesky_factors,
)
from ordstats.results.arguments import check_flag, normal_quantile
from ordstats.results.covariance import Covariance, CovarianceMethods, observed_covariance
from ordstats.results.fitted import (
    FitInfo,
    level_scores,
    most_probable_level,
    newdata_or_exog,
    observed_probability,
    response_codes,
)
from ordstats.results.goodness import residuals_from_probabilities
from ordstats.results.margins.mixed import MixedMarginsFit, MixedMarginsMethods
from ordstats.results.mixed_prediction import MixedPredictor, check_re_form, prediction_rows
from ordstats.results.persistence import PersistenceMethods
from ordstats.results.prediction_se import (
    PredictionResults,
    check_prediction_which,
    complementary_probabilities,
)
from ordstats.results.surrogate import latent_bounds, surrogate_series
from ordstats.results.term_tests import mixed_drop1
from ordstats.results.wald import WaldMethods, wald_test_terms

if TYPE_CHECKING:
    from ordstats.results.protocols import MixedFittedModel

__all__ = ["MixedResults"]

_WHICH = ("prob", "cumprob", "class", "expected", "observed")


_NO_NOMINAL = (
    "nominal and scale effects cannot be fitted with random effects (nor in R's clmm); "
    "test them on the clm without the random terms"
)
_NO_PROFILE = (
    "profiling a fixed effect needs a refit of the approximate likelihood per point (R's "
    "clmm has no profile either); use conf_int() (Wald, as R's confint.clmm), or "
    "sd_conf_int(method='profile') for the random-effect SDs"
)
_NO_SANDWICH = (
    "the random effects model the within-group correlation that a robust or cluster "
    "covariance would correct for (R's clmm has none); cov_params() is the inverse "
    "observed information"
)
_NO_NULL = (
    "a mixed model's null model is ambiguous (with or without its random effects); "
    "compare the fits you mean with ordstats.lr_test(restricted, full), e.g. a clm against "
    "the clmm"
)


_NO_ADD1 = (
    "R's add1 stops for a clmm too (its default method rebuilds the model frame without "
    "the random terms); fit the larger model and compare with "
    "ordstats.lr_test(restricted, full) or ordstats.anova"
)


_NO_STEP = (
    "R's step stops for a clmm too (its refits lose the random terms: 'No random effects "
    "terms specified in formula'); compare the fixed effects with drop1() and "
    "ordstats.lr_test(restricted, full)"
)


_NO_REMOVAL = (
    "the predictions and ranef() read the conditional modes, which are computed from the "
    "rows; save(fname) without remove_data keeps them"
)
_NO_CONTINUOUS = (
    "quantiles, means, exceedance and survival probabilities of a continuous or censored "
    "response (rms::orm's Quantile, Mean, ExProb) are computed for fits without random "
    "effects; for a mixed model use predictions(type='expected'|'exceedance', re_form=...)"
)
_NO_MARGEFF = (
    "effects on the probabilities depend on whether they are conditional on the groups' "
    "modes, at random effects zero or averaged over the random effects; use "
    "avg_slopes(re_form=...) or avg_comparisons(re_form=...) with re_form=None, re_form=0 "
    "or re_form='marginal'"
)
_NO_EXPECTED = (
    "the approximate marginal likelihood has no closed-form expectation; cov_params() is "
    "the inverse observed information (R's vcov.clmm)"
)

_NO_CONVERGENCE = (
    "its Newton step and correct decimals are computed for fits without random effects "
    "(R's convergence() has no clmm method); mle_retvals, max_grad and cond_H say how the "
    "fit ended"
)

_NO_SLICE = (
    "R's slice() has no clmm method, and the approximate marginal likelihood is costly to "
    "evaluate at each point; profile the variance parameters with conf_int(method='profile')"
)

_NO_UPDATE = (
    "build the model again with OrdinalModel.from_formula(...) (R's update() of a clmm "
    "re-evaluates its call; this model keeps no formula source to rebuild from)"
)


def _unavailable(what: str, why: str) -> SpecificationError:
    """The error of a clm results method that a mixed model does not offer, and why."""
    return SpecificationError(f"{what} is not available for mixed models: {why}")


def _refused(what: str, why: str) -> Callable[..., Any]:
    """A clm results method that a mixed model does not offer: it raises, saying why."""

    def refuse(self: MixedResults, *args: Any, **kwargs: Any) -> Any:
        raise _unavailable(what, why)

    refuse.__doc__ = f"Not available for mixed models: {why}."
    return refuse


def _refused_property(what: str, why: str) -> property:
    """A clm results property that a mixed model does not offer: reading it raises."""

    def refuse(self: MixedResults) -> Any:
        raise _unavailable(what, why)

    return property(refuse, doc=f"Not available for mixed models: {why}.")


class MixedResults(
    CovarianceMethods, WaldMethods, PersistenceMethods, MixedMarginsFit, MixedMarginsMethods
):
    """A fitted cumulative link mixed model.

    Besides the clmm-specific parts (:meth:`varcorr`, :meth:`ranef`,
    :meth:`sd_conf_int`, predictions with ``re_form``), it offers the clm results'
    names where they make sense, with the same code: Wald tests (``wald_test``,
    ``t_test``, ``wald_test_terms``) on the thresholds and fixed effects,
    ``odds_ratios``, ``thresholds``, ``summary2``, ``save`` and
    :func:`ordstats.load`, ``fit_info``/``mle_retvals``, ``gradient``,
    ``fittedvalues`` and ``resid_prob`` (conditional on the groups' modes).  Those
    that do not apply to a mixed model raise a
    :class:`~ordstats.errors.SpecificationError` saying why and what to use instead
    (profiles of fixed effects, term tests of nominal/scale effects, Brant's test,
    sandwich covariances, marginal effects, prediction SEs, the null model and
    pseudo-R², ``remove_data``).

    Parameters
    ----------
    model : OrdinalMixedModel
    params_all : ndarray
        ``(alpha, beta, log-Cholesky variance parameters)`` at the optimum.
    hessian : ndarray
        Hessian of the negative approximate log-likelihood in those parameters.
    llf : float
    nagq : int
    fit_info : FitInfo
        How the optimiser ended (BFGS iterations, ``max|gradient|``, convergence).
    n_evaluations : int
    boundary : list of int
        Indices (into the variance parameters) fixed on the boundary (``sd < 1e-4``),
        dropped from the covariance as R does.
    """

    #: the fitted model (the results mixins' ``model`` is a clm; here the mixed one)
    model: MixedFittedModel  # type: ignore[assignment]

    def __init__(
        self,
        model: MixedFittedModel,
        params_all: FloatArray,
        hessian: FloatArray,
        llf: float,
        nagq: int,
        fit_info: FitInfo,
        n_evaluations: int,
        boundary: list[int],
    ) -> None:
        self.model = model
        self.params_all = np.asarray(params_all, dtype=float)
        self.llf = float(llf)
        self.nagq = int(nagq)
        self.fit_info = fit_info
        self.n_evaluations = int(n_evaluations)
        self.boundary = list(boundary)
        problem = model.problem
        self.k_fixed = problem.n_alpha + problem.n_beta
        names = model.param_names + model.variance_names
        keep = [i for i in range(len(names)) if i - self.k_fixed not in self.boundary]
        inverse = observed_covariance(hessian[np.ix_(keep, keep)])
        assert isinstance(inverse, Covariance)  # a dense Hessian
        if inverse.singular:
            warnings.warn(
                "the Hessian of the approximate log-likelihood is not positive definite: "
                "standard errors are NaN (the fit may be on a boundary or not converged)",
                PredictionWarning,
                stacklevel=user_stacklevel(),
            )
        cov = np.full((len(names), len(names)), np.nan)
        cov[np.ix_(keep, keep)] = inverse.matrix
        self.hessian = hessian
        self._cov = pd.DataFrame(cov, index=names, columns=names)
        fixed = slice(0, self.k_fixed)  # never on the boundary: first in ``keep``
        #: covariance of the thresholds and fixed effects (``params``), behind the tests
        self._covariance = replace(
            inverse,
            matrix=inverse.matrix[fixed, fixed],
            std_errors=None if inverse.std_errors is None else inverse.std_errors[fixed],
        )

    # -- estimates -----------------------------------------------------------

    @property
    def params(self) -> pd.Series:
        """Thresholds (R's ``alpha``) and fixed effects (``beta``)."""
        return pd.Series(self.params_all[: self.k_fixed], index=self.model.param_names)

    @property
    def variance_params(self) -> pd.Series:
        """Log-Cholesky variance parameters (a scalar term's is ``log(sd)``, R's ``ST1``)."""
        return pd.Series(self.params_all[self.k_fixed :], index=self.model.variance_names)

    def cov_params(self) -> pd.DataFrame:
        """Covariance of all parameters (fixed and variance), inverse Hessian (R's ``vcov``)."""
        return self._cov.copy()

    @property
    def covariance(self) -> Covariance:
        """Covariance of the thresholds and fixed effects (the inverse observed information).

        ``cond`` is the condition number of the Hessian of all free parameters,
        variance parameters included (R's ``cond.H``).
        """
        return self._covariance

    @property
    def nonrobust_covariance(self) -> Covariance:
        """The same as :attr:`covariance` (a mixed model has no sandwich covariance)."""
        return self._covariance

    @property
    def normalized_cov_params(self) -> pd.DataFrame:
        """The same as :meth:`cov_params`, as statsmodels names it (no sandwich here)."""
        return self.cov_params()

    @property
    def bse(self) -> pd.Series:
        """Standard errors of thresholds and fixed effects."""
        return pd.Series(self._covariance.standard_errors(), index=self.model.param_names)

    @property
    def zvalues(self) -> pd.Series:
        """Wald z statistics, ``params / bse``."""
        return self.params / self.bse

    @property
    def tvalues(self) -> pd.Series:
        """Alias of :attr:`zvalues` (statsmodels' name)."""
        return self.zvalues

    @property
    def pvalues(self) -> pd.Series:
        """Two-sided Wald p-values."""
        return pd.Series(2 * stats.norm.sf(np.abs(self.tvalues)), index=self.params.index)

    def conf_int(self, alpha: float = 0.05, method: str = "wald") -> pd.DataFrame:
        """Wald intervals ``estimate -/+ z_{1-alpha/2} SE`` (R's ``confint.clmm``).

        Parameters
        ----------
        alpha : float
        method : {"wald"}
            Profile intervals of the fixed effects are not available (see
            :meth:`sd_conf_int` for the random-effect SDs).

        Returns
        -------
        pandas.DataFrame
            Columns ``lower``, ``upper``.
        """
        z = normal_quantile(alpha)
        if method == "profile":
            raise _unavailable("conf_int(method='profile')", _NO_PROFILE)
        if method != "wald":
            raise SpecificationError(f"method must be 'wald'; got {method!r}")
        return pd.DataFrame(
            {"lower": self.params - z * self.bse, "upper": self.params + z * self.bse}
        )

    def sd_conf_int(self, alpha: float = 0.05, method: str = "profile") -> pd.DataFrame:
        r"""Confidence intervals for the standard deviations of the random effects.

        ``method="profile"`` (R offers it only for ``clmm2``'s single random
        intercept, ``confint(profile(fit))``): with ``t = log(sd)`` the limits are
        where the signed root of the likelihood-ratio statistic,
        ``r(t) = sign(t - \hat t) \sqrt{2 (\ell(\hat\theta) - \ell_p(t))}``, every other
        parameter re-maximised (for a correlated term's later columns, the
        direction of its Cholesky row too: ``OrdinalMixedModel.fit_with_held_sd``),
        equals ``-/+ z_{1-alpha/2}``; when ``sd -> 0`` stays inside the region the
        lower limit is 0.  ``method="wald"``: ``exp(t -/+ z SE(t))``, the SE of
        ``log(sd)`` by the delta method from :meth:`cov_params`.

        Parameters
        ----------
        alpha : float
            ``1 - alpha`` is the coverage.
        method : {"profile", "wald"}

        Returns
        -------
        pandas.DataFrame
            One row per random-effect column (as :meth:`varcorr`): columns ``group``,
            ``name``, ``sd``, ``lower``, ``upper``; indexed by the grouping factor for
            a scalar term and by ``"group:name"`` otherwise.

        Raises
        ------
        SpecificationError
            For an unknown method or ``alpha`` outside (0, 1).
        """
        z = normal_quantile(alpha)
        if method not in ("profile", "wald"):
            raise SpecificationError(f"method must be 'profile' or 'wald'; got {method!r}")
        rows, index = [], []
        for t, term in enumerate(self.model.terms):
            for c, name in enumerate(term.columns):
                diag, off = self.model.sd_positions(t, c)
                row = self.params_all[off]
                sd = float(np.sqrt(row @ row + np.exp(2.0 * self.params_all[diag])))
                if method == "wald":
                    lower, upper = self._wald_sd_limits(diag, off, sd, z)
                else:
                    lower, upper = self._profile_limits(t, c, np.log(sd), z)
                rows.append((term.group, name, sd, lower, upper))
                index.append(term.group if term.q == 1 else f"{term.group}:{name}")
        return pd.DataFrame(rows, index=index, columns=["group", "name", "sd", "lower", "upper"])

    def _wald_sd_limits(
        self, diag: int, off: list[int], sd: float, z: float
    ) -> tuple[float, float]:
        """``exp(log sd -/+ z SE)``: SE of ``log sd`` by the delta method."""
        cols = [*off, diag]
        grad = np.append(self.params_all[off], np.exp(2.0 * self.params_all[diag])) / sd**2
        cov = self._cov.to_numpy()[np.ix_(cols, cols)]
        se = float(np.sqrt(grad @ cov @ grad))
        return float(sd * np.exp(-z * se)), float(sd * np.exp(z * se))

    def _profile_limits(
        self, term: int, component: int, t_hat: float, z: float
    ) -> tuple[float, float]:
        """Profile limits on the SD scale for one random-effect column (log-sd ``t_hat``)."""
        target = 0.5 * z * z
        starts = {t_hat: self.params_all}

        def drop(t: float) -> float:
            nearest = min(starts, key=lambda s: abs(s - t))
            llf, params = self.model.fit_with_held_sd(
                term, component, t, starts[nearest], self.nagq
            )
            starts[t] = params
            return max(self.llf - llf, 0.0) - target

        limits = []
        for direction in (-1.0, 1.0):
            inner, step, found = t_hat, 0.25, None
            while abs(inner - t_hat) < 12.0:
                outer = inner + direction * step
                if direction < 0 and outer < np.log(BOUNDARY_SD):
                    break  # sd -> 0 stays inside the region: the limit is 0
                if drop(outer) > 0.0:
                    low, high = min(inner, outer), max(inner, outer)
                    found = float(optimize.brentq(drop, low, high, xtol=1e-8))
                    break
                inner, step = outer, 2.0 * step
            if found is None and direction > 0:
                warnings.warn(
                    "the profile likelihood of the random-effect SD does not drop far "
                    "enough within sd * e^12 to give an upper limit; it is reported as inf",
                    ConvergenceWarning,
                    stacklevel=user_stacklevel(),
                )
                found = np.inf
            limits.append(0.0 if found is None else float(np.exp(found)))
        return limits[0], limits[1]

    @property
    def k_params(self) -> int:
        """Number of estimated parameters (fixed + variance), R's ``edf``."""
        return len(self.params_all)

    @property
    def df_effective(self) -> float:
        """Degrees of freedom of AIC and BIC: :attr:`k_params` (R's ``edf``)."""
        return float(self.k_params)

    @property
    def n_rows(self) -> int:
        """Rows of data used."""
        return self.model.n_rows

    @property
    def df_resid(self) -> float:
        """``nobs`` minus the number of parameters."""
        return self.nobs - self.k_params

    @property
    def df_model(self) -> int:
        """Parameters besides the thresholds (fixed effects and variance parameters)."""
        return self.k_params - self.model.problem.n_alpha

    # -- how the fit ended -------------------------------------------------------

    @property
    def converged(self) -> bool:
        """Whether the fit converged (``max|gradient| < 10 gradtol`` at a finite llf)."""
        return self.fit_info.converged

    @property
    def max_grad(self) -> float:
        """Largest absolute gradient of the free parameters at the estimates."""
        return self.fit_info.max_grad

    @property
    def cond_H(self) -> float:
        """Condition number of the Hessian at the estimates (R's ``cond.H``)."""
        return self._covariance.cond

    @property
    def niter(self) -> int:
        """BFGS iterations taken."""
        return self.fit_info.n_iter

    @property
    def mle_retvals(self) -> dict[str, object]:
        """How the optimiser ended, as statsmodels' ``mle_retvals`` dict.

        Keys ``converged``, ``iterations`` (BFGS), ``max_grad``, ``message``,
        ``method``, ``evaluations`` (of the approximate likelihood) and ``nagq``.
        """
        info = self.fit_info
        return {
            "converged": info.converged,
            "iterations": info.n_iter,
            "max_grad": info.max_grad,
            "message": info.message,
            "method": info.method,
            "evaluations": self.n_evaluations,
            "nagq": self.nagq,
        }

    @cached_property
    def gradient(self) -> pd.Series:
        """Gradient of the approximate log-likelihood at the estimates, every parameter."""
        return pd.Series(
            self.model.score(self.params_all, self.nagq),
            index=self.model.param_names + self.model.variance_names,
            name="gradient",
        )

    # -- thresholds and odds ratios -----------------------------------------------

    @property
    def thresholds(self) -> pd.DataFrame:
        """The cut-points ``theta = J alpha`` with delta-method standard errors.

        Returns
        -------
        pandas.DataFrame
            Columns ``"estimate"`` and ``"std err"``, one row per cut-point.
        """
        problem = self.model.problem
        jacobian, k_alpha = problem.jacobian, problem.n_alpha
        cov = self._covariance.matrix[:k_alpha, :k_alpha]
        names = self.model.options.family_object().cutpoint_names(self.model.levels)
        return pd.DataFrame(
            {
                "estimate": jacobian @ self.params_all[:k_alpha],
                "std err": np.sqrt(np.einsum("ij,jk,ik->i", jacobian, cov, jacobian)),
            },
            index=names,
        )

    def odds_ratios(self, alpha: float = 0.05, method: str = "wald") -> pd.DataFrame:
        """Odds ratios ``exp(beta)`` of the fixed effects with Wald intervals (logit link).

        ``exp(beta_k)`` multiplies the odds of a response above any cut-point,
        ``P(Y > j | b) / P(Y <= j | b)``, per unit of ``x_k`` *within a group*
        (conditional on its random effects); population-averaged odds ratios are
        smaller (compare ``predict(re_form="marginal")``).

        Parameters
        ----------
        alpha : float
            One minus the confidence level.
        method : {"wald"}
            Wald intervals, exponentiated (R's ``confint.clmm`` is Wald too).

        Returns
        -------
        pandas.DataFrame
            Columns ``"odds_ratio"``, ``"lower"``, ``"upper"``, ``"pvalue"``.

        Raises
        ------
        SpecificationError
            For links other than logit, or ``method="profile"``.
        """
        link = self.model.problem.link.name
        if link != "logit":
            raise SpecificationError(
                f"odds ratios need the logit link; this model uses {link!r}, under which "
                "exp(beta) is not an odds ratio. Refit with link='logit' or report the "
                "coefficients on the link scale"
            )
        if method != "wald":
            raise _unavailable(f"odds_ratios(method={method!r})", _NO_PROFILE)
        effects = self.model.param_names[self.model.problem.n_alpha :]
        ci = self.conf_int(alpha).loc[effects]
        table = pd.DataFrame(
            {
                "odds_ratio": np.exp(self.params[effects]),
                "lower": np.exp(ci["lower"]),
                "upper": np.exp(ci["upper"]),
                "pvalue": self.pvalues[effects],
            }
        )
        table.attrs["interpretation"] = (
            "exp(coef) multiplies, within a group (given its random effects), the "
            + self.model.options.family_object().odds_ratio_meaning
        )
        return table

    def wald_test_terms(self) -> pd.DataFrame:
        """Joint Wald test of each fixed-effects term (statsmodels' ``wald_test_terms``).

        Returns
        -------
        pandas.DataFrame
            One row per term of the fixed formula: ``"chi2"``, ``"df"``, ``"P>chi2"``.
        """
        groups = dict(term_columns(self.model.design.fixed.location))
        return wald_test_terms(
            self.params.to_numpy(), self._covariance.matrix, list(self.params.index), groups
        )

    def drop1(self, test: str = "none") -> pd.DataFrame:
        """Refit without each fixed-effects term that can be dropped, as R's ``drop1`` of a clmm.

        The random terms, weights, offset, link, thresholds and ``nagq`` stay;
        see :func:`ordstats.results.term_tests.mixed_drop1`.

        Parameters
        ----------
        test : {"none", "Chisq"}
            ``"Chisq"`` adds ``LRT`` and ``Pr(>Chi)``.

        Returns
        -------
        pandas.DataFrame
            Rows ``<none>`` and one per term: ``Df``, ``AIC`` (R's columns).
        """
        return mixed_drop1(self, test)

    # -- what a mixed model cannot offer (the reasons are above the class) ------------

    get_robustcov_results = _refused("a sandwich covariance", _NO_SANDWICH)
    remove_data = _refused("remove_data()", _NO_REMOVAL)
    convergence = _refused("convergence()", _NO_CONVERGENCE)
    slice = _refused("slice()", _NO_SLICE)
    update = _refused("update()", _NO_UPDATE)
    plot_slice = _refused("plot_slice()", _NO_SLICE)
    brant_test = _refused("Brant's test", _NO_NOMINAL)
    nominal_test = _refused("nominal_test()", _NO_NOMINAL)
    scale_test = _refused("scale_test()", _NO_NOMINAL)
    add1 = _refused("add1()", _NO_ADD1)
    step = _refused("step()", _NO_STEP)
    lrm_stats = _refused(
        "lrm_stats()", "they are rms::lrm's statistics of a fixed-effects fit (rms has no clmm)"
    )
    orm_stats = _refused(
        "orm_stats()", "they are rms::orm's statistics of a fixed-effects fit (rms has no clmm)"
    )
    validate = _refused(
        "validate()", "it is rms's bootstrap validation of a fixed-effects fit (rms has no clmm)"
    )
    simulate = _refused(
        "simulate()",
        "new responses of a mixed model need new random effects or the fitted modes, a "
        "choice R's ordinal leaves open too (it has no simulate method for clmm); simulate "
        "from res.predict(which='prob') at the effects you mean",
    )
    profile = _refused("profile()", _NO_PROFILE)
    plot_profile = _refused("plot_profile()", _NO_PROFILE)
    get_margeff = _refused("get_margeff()", _NO_MARGEFF)
    quantile = _refused("quantile()", _NO_CONTINUOUS)
    mean = _refused("mean()", _NO_CONTINUOUS)
    exceedance = _refused("exceedance()", _NO_CONTINUOUS)
    survival = _refused("survival()", _NO_CONTINUOUS)
    expected_covariance = _refused_property("the expected information", _NO_EXPECTED)
    llnull = _refused_property("llnull", _NO_NULL)
    llr = _refused_property("llr", _NO_NULL)
    llr_pvalue = _refused_property("llr_pvalue", _NO_NULL)
    prsquared = _refused_property("prsquared", _NO_NULL)
    pseudo_rsquared = _refused_property("pseudo_rsquared", _NO_NULL)

    @property
    def nobs(self) -> float:
        """Number of observations (sum of the weights, as R)."""
        return float(np.sum(self.model.problem.weights))

    @property
    def aic(self) -> float:
        """``-2 llf + 2 k``."""
        return -2 * self.llf + 2 * self.k_params

    @property
    def bic(self) -> float:
        """``-2 llf + k log(nobs)``."""
        return float(-2 * self.llf + self.k_params * np.log(self.nobs))

    @property
    def n_groups(self) -> dict[str, int]:
        """Number of levels per grouping factor."""
        return {t.group: t.n_levels for t in self.model.terms}

    # -- variance components ---------------------------------------------------

    def covariance_matrices(self) -> list[FloatArray]:
        """``Sigma_t = L_t L_t'`` per random term."""
        factors = cholesky_factors(
            self.params_all[self.k_fixed :], [t.q for t in self.model.problem.terms]
        )
        return [L @ L.T for L in factors]

    def varcorr(self) -> pd.DataFrame:
        """Variance components as R's ``VarCorr``: one row per term and column.

        Returns
        -------
        pandas.DataFrame
            Columns ``group``, ``name``, ``variance``, ``sd`` and, for terms with several
            columns, ``corr`` with the correlations to the term's earlier columns.
        """
        rows = []
        for term, S in zip(self.model.terms, self.covariance_matrices(), strict=True):
            sd = np.sqrt(np.diag(S))
            for c, name in enumerate(term.columns):
                with np.errstate(invalid="ignore", divide="ignore"):
                    corr = [S[c, e] / (sd[c] * sd[e]) for e in range(c)]
                rows.append(
                    {
                        "group": term.group,
                        "name": name,
                        "variance": S[c, c],
                        "sd": sd[c],
                        "corr": ", ".join(f"{r:.3f}" for r in corr),
                    }
                )
        return pd.DataFrame(rows)

    def ranef(self, condvar: bool = False) -> dict[str, pd.DataFrame]:
        """Conditional modes of the random effects per grouping factor (R's ``ranef``).

        Parameters
        ----------
        condvar : bool
            Also return the conditional variances (the diagonal of
            ``Lambda H^{-1} Lambda'`` per level, R's ``condVar``).

        Returns
        -------
        dict of str to DataFrame
            Levels as rows, the terms' columns as columns; with ``condvar`` a tuple
            ``(modes, variances)`` of such dicts.
        """
        condvar = check_flag("condvar", condvar)
        objective = self.model.objective
        modes = objective.random_effects(self.params_all)
        out: dict[str, pd.DataFrame] = {}
        var_out: dict[str, pd.DataFrame] = {}
        covs = objective.conditional_covariances(self.params_all) if condvar else None
        for k, term in enumerate(self.model.terms):
            frame = pd.DataFrame(modes[k], index=term.levels, columns=term.columns)
            out[term.group] = (
                pd.concat([out[term.group], frame], axis=1) if term.group in out else frame
            )
            if covs is not None:
                v = pd.DataFrame(
                    np.diagonal(covs[k], axis1=1, axis2=2), index=term.levels, columns=term.columns
                )
                var_out[term.group] = (
                    pd.concat([var_out[term.group], v], axis=1) if term.group in var_out else v
                )
        return (out, var_out) if condvar else out  # type: ignore[return-value]

    # -- fitted values and residuals (conditional on the groups' modes) ------------

    @property
    def fittedvalues(self) -> pd.Series:
        """The linear predictor of the fitted rows, ``x'beta + offset + z'b^`` (the modes).

        ``predict()`` gives the fitted probabilities of each level.
        """
        fixed = self.model.design.fixed
        beta = self.params_all[self.model.problem.n_alpha : self.k_fixed]
        values = (
            fixed.location.matrix @ beta
            + fixed.offset
            + self.model.objective.random_part(self.params_all)
        )
        return pd.Series(values, index=fixed.row_index, name="fittedvalues")

    @property
    def resid(self) -> pd.Series:
        """Residuals: the probability-scale residuals :attr:`resid_prob`."""
        return self.resid_prob

    @cached_property
    def resid_prob(self) -> pd.Series:
        """Probability-scale residuals ``P(Y < y) - P(Y > y)`` (Li & Shepherd 2012).

        From the probabilities conditional on the groups' modes (``predict()``),
        indexed by the rows used in the fit.
        """
        fixed = self.model.design.fixed
        prob = self.predict().to_numpy()
        values = residuals_from_probabilities(prob, self.model.problem.y)
        return pd.Series(values, index=fixed.row_index, name="resid_prob")

    def resid_surrogate(
        self, newdata: pd.DataFrame | None = None, *, seed: Any = None
    ) -> pd.Series:
        """Surrogate residuals of the fitted rows, given the groups' modes (R's ``sure``).

        As :meth:`OrdinalResults.resid_surrogate`: each row's residual is drawn
        from the link's distribution truncated to the interval of the latent
        variable that gives its level, ``(theta_{y-1} - eta, theta_y - eta]``,
        with ``eta`` the fitted values (:attr:`fittedvalues`, conditional on the
        random effects' modes).

        Parameters
        ----------
        newdata : None
            Only the fitted rows: new rows have no modes of their groups' effects
            to condition on.
        seed : int, numpy.random.Generator or None

        Returns
        -------
        pandas.Series
        """
        if newdata is not None:
            raise PredictionError(
                "surrogate residuals of a mixed fit are of its fitted rows, conditional on "
                "the modes of their groups' random effects; new rows have none: leave "
                "newdata out"
            )
        problem = self.model.problem
        theta = (problem.jacobian @ self.params_all[: problem.n_alpha])[None, :]
        fitted = self.fittedvalues  # x'beta + offset + z'b at the modes (computed each time)
        lower, upper = latent_bounds(theta, fitted.to_numpy(), None, problem.y)
        return surrogate_series(lower, upper, problem.link, fitted.index, seed)

    # -- predictions -----------------------------------------------------------

    def predict(
        self,
        newdata: pd.DataFrame | None = None,
        which: str = "prob",
        re_form: str | int | None = None,
        *,
        offset: object = None,
        exog: pd.DataFrame | None = None,
    ) -> pd.DataFrame | pd.Series:
        """Predict from the mixed model (R's clmm has no ``predict`` method).

        Parameters
        ----------
        newdata : pandas.DataFrame, optional
            Default: the rows of the fit.  Rows with a missing value in a column
            the prediction reads are NaN, with a
            :class:`~ordstats.errors.MissingDataWarning` naming the columns.
        which : {"prob", "cumprob", "class", "expected", "observed"}
            Category probabilities, cumulative probabilities ``P(Y <= j)``, the most
            probable level, or the expected response ``sum_j score_j P(Y = j)``, the
            scores being the level values when they are numbers or numeric labels,
            otherwise ``1, ..., K`` (as for the clm); ``"observed"``: each row's
            probability of its own level (R's ``fitted(clmm)``; ``newdata`` then needs
            the response column).
        re_form : None, 0 or "marginal"
            ``None``: conditional on the groups' modes (group ids are matched by
            value, so ``3`` finds the group fitted as ``3.0``; rows of unseen groups
            use ``b = 0`` with a :class:`~ordstats.errors.PredictionWarning` naming
            the levels); ``0``: random effects zero; ``"marginal"``: averaged over
            the random effects' distribution.
        offset : float or array-like, optional
            Offset for ``newdata`` when the model has one that is not a column of
            ``newdata``: a number for every row or one per row (a pandas Series is
            paired with the rows by index label).  Without it, new rows get offset 0
            with a :class:`~ordstats.errors.PredictionWarning`, as for the clm.
        exog : pandas.DataFrame, optional
            statsmodels' name for ``newdata`` (give one of the two), as for the clm.

        Returns
        -------
        pandas.DataFrame (``prob``, ``cumprob``) or Series (``class``, ``expected``,
        ``observed``)
        """
        with numeric_threads():  # x'beta and the probabilities: thin products
            newdata = newdata_or_exog(newdata, exog)
            if which not in _WHICH:
                raise PredictionError(f"which must be one of {_WHICH}; got {which!r}")
            check_re_form(re_form)
            model = self.model
            rows = prediction_rows(model, newdata, offset, re_form)
            eta = rows.offset + rows.X @ self.params_all[model.problem.n_alpha : self.k_fixed]
            predictor = MixedPredictor(model, self.params_all, re_form)
            cum = predictor.cumulative(rows)[0]
            levels, index = model.levels, rows.index
            full = np.column_stack([cum, np.ones(len(eta))])
            full[np.isnan(eta)] = np.nan
            prob = predictor.probabilities(rows, cum)
            prob[np.isnan(eta)] = np.nan
            if which == "cumprob":
                return pd.DataFrame(full, index=index, columns=levels)
            if which == "prob":
                return pd.DataFrame(prob, index=index, columns=levels)
            if which == "class":
                return most_probable_level(prob, model.design.fixed.response.values, index)
            if which == "observed":
                codes = (
                    model.problem.y
                    if newdata is None
                    else response_codes(newdata, model.design.fixed.response_name, model.levels)
                )
                return observed_probability(prob, codes, index)
            scores = level_scores(model.design.fixed.response.values)
            return pd.Series(prob @ scores, index=index, name="expected")

    def get_prediction(
        self,
        newdata: pd.DataFrame | None = None,
        which: str = "prob",
        re_form: str | int | None = None,
        *,
        offset: object = None,
        exog: pd.DataFrame | None = None,
    ) -> PredictionResults:
        r"""Predicted probabilities with delta-method standard errors and intervals.

        The standard errors are :math:`\sqrt{g^\top V g}` with ``V`` the covariance
        of all parameters (:meth:`cov_params`: thresholds, fixed effects and the
        log-Cholesky variance parameters; those held on the boundary count as
        known) and ``g`` the analytic gradient of the prediction in them:

        * ``re_form=0``: ``F(theta_j - x'beta)`` depends on the thresholds and
          fixed effects only (what emmeans reports for a clmm);
        * ``re_form=None``: ``F(theta_j - x'beta - z'b^)``, the conditional modes
          ``b^ = Lambda u^`` being functions of every parameter (their derivatives
          by the implicit function theorem on the mode equation).  This is the
          uncertainty of the estimates; the conditional variance of the random
          effects themselves (:meth:`ranef` with ``condvar``) is not added;
        * ``re_form="marginal"``: :math:`\int F(\theta_j - \eta - s z)\phi(z)dz`
          depends on the variance parameters through ``s``; its derivatives are
          the integrals of the derivatives, by the same adaptive quadrature.

        Parameters
        ----------
        newdata : pandas.DataFrame, optional
            Rows to predict for (default: the rows of the fit).  Marginal and
            ``re_form=0`` predictions need no grouping columns.
        which : {"prob", "cumprob"}
            ``P(Y = j)`` for every level, or ``P(Y <= j)`` for the first ``K - 1``.
        re_form : None, 0 or "marginal"
            As :meth:`predict`.
        offset : float or array-like, optional
            As :meth:`predict`.
        exog : pandas.DataFrame, optional
            statsmodels' name for ``newdata`` (give one of the two).

        Returns
        -------
        PredictionResults
            ``predicted``, ``se``, ``conf_int(alpha)`` and ``summary_frame(alpha)``
            (intervals on the logit scale), as ``OrdinalResults.get_prediction``.

        Raises
        ------
        PredictionError
            For ``which`` or ``re_form`` not listed above, or ``newdata`` lacking
            a column the prediction reads.
        """
        newdata = newdata_or_exog(newdata, exog)
        check_prediction_which(which, linear=False)
        check_re_form(re_form)
        rows = prediction_rows(self.model, newdata, offset, re_form)
        predictor = MixedPredictor(self.model, self.params_all, re_form)
        cum, gradient = predictor.cumulative(rows)
        m, k = gradient.shape[0], gradient.shape[2]
        categories = predictor.probabilities(rows, cum)
        cumulative = which == "cumprob"
        if not cumulative:
            padded = np.concatenate([np.zeros((m, 1, k)), gradient, np.zeros((m, 1, k))], axis=1)
            gradient = padded[:, 1:] - padded[:, :-1]
        levels = self.model.levels
        return PredictionResults(
            cum if cumulative else categories,
            complementary_probabilities(categories, cumulative),
            gradient,
            self._prediction_covariance(),
            rows.index,
            levels[:-1] if cumulative else levels,
            which,
        )

    def _prediction_covariance(self) -> FloatArray:
        """:meth:`cov_params` with the variance parameters held on the boundary as known."""
        cov = self._cov.to_numpy().copy()
        held = [self.k_fixed + b for b in self.boundary]
        cov[held, :] = 0.0
        cov[:, held] = 0.0
        return cov

    # -- reporting -----------------------------------------------------------------

    def summary(self) -> str:
        """A report in the layout of R's ``summary.clmm``.

        Returns
        -------
        str
        """
        model = self.model
        method = "Laplace" if self.nagq <= 1 else f"adaptive Gauss-Hermite ({self.nagq} nodes)"
        header = pd.DataFrame(
            {
                "link": [model.problem.link.name],
                "threshold": [str(model.threshold)],
                "nobs": [f"{self.nobs:g}"],
                "logLik": [f"{self.llf:.2f}"],
                "AIC": [f"{self.aic:.2f}"],
                "niter": [f"{self.niter}({self.n_evaluations})"],
                "max.grad": [f"{self.max_grad:.2e}"],
                "cond.H": [f"{self.cond_H:.1e}"],
            }
        )
        groups = ",  ".join(f"{g} {n}" for g, n in self.n_groups.items())
        lines = [
            "Cumulative Link Mixed Model fitted with the " + method + " approximation",
            "",
            f"formula: {r_label(model.design.formula)}",
            *([f"data:    {model.data_name}"] if model.data_name else []),
            "",
            _left_aligned(header),
            "",
            "Random effects:",
            _left_aligned(self._varcorr_table()),
            f"Number of groups:  {groups}",
            "",
        ]
        table = pd.DataFrame(
            {
                "Estimate": self.params,
                "Std. Error": self.bse,
                "z value": self.tvalues,
                "Pr(>|z|)": self.pvalues,
            }
        )
        k_alpha = model.problem.n_alpha
        if model.problem.n_beta:
            lines += ["Coefficients:", table.iloc[k_alpha:].to_string(float_format="%.4g"), ""]
        lines += [
            "Threshold coefficients:",
            table.iloc[:k_alpha, :3].to_string(float_format="%.4g"),
        ]
        if self.boundary:
            lines += ["", "Note: variance parameter(s) on the boundary (SD ~ 0) were held fixed."]
        if not self.converged:
            lines += ["", "Warning: the optimisation did not converge."]
        return "\n".join(lines)

    def _varcorr_table(self) -> pd.DataFrame:
        """:meth:`varcorr` as R prints it: 4 significant digits, each group named once."""
        vc = self.varcorr()
        group = vc["group"].where(vc["group"] != vc["group"].shift(), "")
        table = pd.DataFrame(
            {
                "Groups": group,
                "Name": vc["name"],
                "Variance": vc["variance"].map("{:.4g}".format),
                "Std.Dev.": vc["sd"].map("{:.4g}".format),
            }
        )
        if vc["corr"].str.len().any():
            table["Corr"] = vc["corr"]
        return table

    def __repr__(self) -> str:
        return f"<MixedResults: {self.model.design.formula}, llf={self.llf:.4f}>"

    def summary2(
        self,
        yname: str | None = None,
        xname: Sequence[str] | None = None,
        title: str | None = None,
        alpha: float = 0.05,
    ) -> Any:
        """Summarise the fit as statsmodels' ``summary2`` does (DataFrames).

        A :class:`statsmodels.iolib.summary2.Summary` with the model information,
        the coefficient table (thresholds and fixed effects) and the variance
        components (:meth:`varcorr`); ``.tables`` are DataFrames.

        Parameters
        ----------
        yname : str, optional
            Name shown for the response.
        xname : sequence of str, optional
            Names shown for the parameters, one per entry of ``params``.
        title : str, optional
        alpha : float
            One minus the level of the confidence intervals.
        """
        from statsmodels.iolib.summary2 import Summary as Summary2

        from ordstats.reporting import summary_frame

        table = summary_frame(self, alpha)
        if xname is not None:
            if len(xname) != len(table):
                raise SpecificationError(
                    f"xname must give {len(table)} names, one per parameter "
                    f"({', '.join(table.index)}); got {len(xname)}"
                )
            table.index = pd.Index(list(xname))
        method = "Laplace" if self.nagq <= 1 else f"adaptive Gauss-Hermite ({self.nagq} nodes)"
        info = {
            "Dep. Variable:": yname or self.model.design.fixed.response_name,
            "Model:": "OrdinalMixedModel",
            "Link:": self.model.problem.link.name,
            "Threshold:": str(self.model.threshold),
            "Method:": method,
            "No. Observations:": f"{self.nobs:g}",
            "Groups:": ", ".join(f"{g} ({n})" for g, n in self.n_groups.items()),
            "Log-Likelihood:": f"{self.llf:.4f}",
            "AIC:": f"{self.aic:.4f}",
            "BIC:": f"{self.bic:.4f}",
            "Converged:": str(self.converged),
            "max|grad|:": f"{self.max_grad:.2e}",
        }
        smry = Summary2()
        smry.add_dict(info, ncols=2)
        smry.add_df(table, float_format="%.4f")
        smry.add_df(self.varcorr(), index=False, float_format="%.4f")
        smry.add_title(title or "Cumulative Link Mixed Model Results")
        return smry


def _left_aligned(table: pd.DataFrame) -> str:
    """A table of strings printed left-aligned under its headers, as R prints them."""
    widths = {c: max(len(str(c)), *(len(str(v)) for v in table[c])) for c in table.columns}
    rows = [[str(c) for c in table.columns], *table.astype(str).to_numpy().tolist()]
    return "\n".join(
        " " + " ".join(v.ljust(widths[c]) for v, c in zip(row, table.columns, strict=True)).rstrip()
        for row in rows
    )
