"""Results of a fitted ordinal regression model (any family).

:class:`OrdinalResults` reads a fitted state (estimates, the Hessian at the
optimum, convergence information) and derives inference from it.  It never
refits the model it came from, except for the null model behind ``llnull``.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy import stats

from ordstats._typing import FloatArray, IntArray, PredictWhich
from ordstats.core.links import Link
from ordstats.core.threads import numeric_threads
from ordstats.data.prediction import predict_in_chunks
from ordstats.data.sources import is_source
from ordstats.design import (
    newdata_matrices,
    newdata_offset,
    newdata_scale_offset,
    refuse_offset_without_newdata,
)
from ordstats.design.response import format_level
from ordstats.errors import (
    ConvergenceWarning,
    MissingDataWarning,
    OrdstatsError,
    PredictionError,
    PredictionWarning,
    user_stacklevel,
)
from ordstats.families import Family
from ordstats.families.cumulative.banded import BandedCovariance
from ordstats.families.cumulative.prediction import (
    crossing_rows,
    cut_points_and_scale,
    threshold_gradient,
)
from ordstats.families.problem import CLMData, FamilyEvaluation
from ordstats.families.shifted import ShiftedEvaluation
from ordstats.results.arguments import check_alpha, normal_quantile
from ordstats.results.continuous import ContinuousQuantityMethods
from ordstats.results.convergence import ConvergenceMethods
from ordstats.results.covariance import (
    CovarianceMethods,
    condition_number,
    evaluation_covariance,
    in_users_basis,
    observed_covariance,
)
from ordstats.results.goodness import GoodnessOfFitMethods
from ordstats.results.likelihood_slice import SliceMethods
from ordstats.results.marginal_effects import MarginalEffectsMethods
from ordstats.results.margins.ordinal import OrdinalMarginsFit
from ordstats.results.margins.verbs import MarginsMethods
from ordstats.results.persistence import PersistenceMethods, SlimEvaluation, rows_removed_error
from ordstats.results.prediction_se import warn_rank_deficient
from ordstats.results.profile import ProfileMethods
from ordstats.results.stepwise import StepwiseMethods
from ordstats.results.survival import SurvivalMethods
from ordstats.results.term_tests import TermTestMethods
from ordstats.results.values import Covariance, FitInfo
from ordstats.results.wald import WaldMethods

if TYPE_CHECKING:
    from statsmodels.iolib.summary import Summary

    from ordstats.results.protocols import FittedModel

__all__ = ["FitInfo", "OrdinalResults"]

_PREDICT_WHICH = ("prob", "cumprob", "class", "expected", "linear", "observed")
#: Most distinct nominal-design rows for which ``thresholds`` are tabulated.
_MAX_PATTERNS = 20


def expected_information_sums(data: CLMData, family: Family, params: FloatArray) -> FloatArray:
    """The expected information of the rows in ``data``; adds up over chunks."""
    return family.expected_information(family.prepare(data), params)


class OrdinalResults(
    CovarianceMethods,
    WaldMethods,
    ProfileMethods,
    TermTestMethods,
    StepwiseMethods,
    ConvergenceMethods,
    SliceMethods,
    GoodnessOfFitMethods,
    SurvivalMethods,  # with PredictionSEMethods, its base
    ContinuousQuantityMethods,
    MarginalEffectsMethods,
    OrdinalMarginsFit,
    MarginsMethods,
    PersistenceMethods,
):
    """Estimates, inference and predictions of a fitted :class:`OrdinalModel`.

    Not created directly: :meth:`OrdinalModel.fit` returns it.

    Attributes
    ----------
    model : OrdinalModel
        The model that was fitted (unchanged by fitting).
    params : pandas.Series
        Estimates: free threshold parameters first (``"1|2"``, ...), then
        location coefficients (``"temp[T.warm]"``, ...), R's order.
    llf : float
        Maximised log-likelihood.
    fit_info : FitInfo
        How the optimiser ended.
    """

    def __init__(
        self,
        model: FittedModel,
        params: FloatArray,
        evaluation: FamilyEvaluation,
        info: FitInfo,
        covariance: Covariance | None = None,
        *,
        defer_covariance: bool = False,
    ) -> None:
        self.model = model
        self.params = pd.Series(params, index=model.param_names, name="params")
        self.llf = -float(evaluation.nll)
        self.fit_info = info
        self._evaluation: FamilyEvaluation | SlimEvaluation = evaluation
        self._chosen_covariance = covariance
        if not defer_covariance:  # now, so that a singular Hessian warns at the fit
            self.__dict__["nonrobust_covariance"] = self._observed_covariance()

    @classmethod
    def _at_params(cls, model: FittedModel, params: FloatArray) -> OrdinalResults:
        """A result holding given parameter values, not estimates: for predictions only.

        ``OrdinalModel.predict(params, exog)`` (statsmodels' model-level
        predict) predicts through it.  Nothing is fitted: the log-likelihood
        and every statistic of the estimates are not available.
        """
        lay = model.problem.layout
        link = model.link
        if lay.n_lambda:  # a flexible link at the given lambda
            link = link.with_lambda(float(params[lay.lam][0]))  # type: ignore[attr-defined]
        k = len(params)
        unknown = SlimEvaluation(np.nan, np.full(k, np.nan), np.full((k, k), np.nan), link)
        info = FitInfo(
            converged=False,
            code=-1,
            message="parameter values given, not estimated",
            n_iter=0,
            n_halvings=0,
            max_grad=np.nan,
        )
        return cls(model, params, unknown, info, defer_covariance=True)  # type: ignore[arg-type]

    @cached_property
    def nonrobust_covariance(self) -> Covariance | BandedCovariance:
        """Inverse observed information at the estimates.

        Kept beside a sandwich :attr:`covariance`; computed at the fit, or on
        first use after ``fit(cov_type="none")``.
        """
        return self._observed_covariance()

    @property
    def covariance(self) -> Covariance | BandedCovariance:
        """The covariance behind ``bse``, tests and intervals (``covariance.kind``)."""
        # results pickled before the covariance was lazy kept it as "covariance"
        chosen = self.__dict__.get("_chosen_covariance", self.__dict__.get("covariance"))
        return chosen if chosen is not None else self.nonrobust_covariance

    def _observed_covariance(self) -> Covariance | BandedCovariance:
        covariance = evaluation_covariance(self._evaluation)
        if covariance.singular and not self.fit_info.diverging:
            # a fit that stopped short of the maximum (iteration limit, failed halving, or
            # code 4: the Hessian was not positive definite) says nothing of aliasing: its
            # Hessian is the final point's; code 1 (a small gradient) may be a maximum
            unfinished = self.fit_info.code in (2, 3, 4)
            warnings.warn(
                "the Hessian is numerically singular at the final values of a fit that did "
                "not converge, so standard errors are NaN; these values are not a maximum "
                "of the likelihood (see the convergence warning)"
                if unfinished
                else "the Hessian is numerically singular at the estimates, so the parameters "
                "are not uniquely determined and standard errors are NaN. Look for "
                "aliased predictors or empty combinations of factor levels",
                ConvergenceWarning,
                stacklevel=user_stacklevel(),
            )
        return covariance

    # -- fit information ------------------------------------------------------

    @property
    def converged(self) -> bool:
        """Whether the fit met the convergence criteria (and no estimate diverges)."""
        return self.fit_info.converged

    @property
    def niter(self) -> int:
        """Newton iterations taken."""
        return self.fit_info.n_iter

    @property
    def max_grad(self) -> float:
        """``max|gradient|`` of the log-likelihood at the estimates."""
        return self.fit_info.max_grad

    @property
    def cond_H(self) -> float:
        """Condition number of the Hessian at the estimates (R's ``cond.H``)."""
        return self.covariance.cond

    @property
    def mle_retvals(self) -> dict[str, object]:
        """How the optimiser ended, as statsmodels' ``mle_retvals`` dict.

        Keys ``converged``, ``iterations`` (Newton), ``halvings``,
        ``max_grad``, ``code`` and ``message`` (see
        :mod:`ordstats.core.solver`), ``method``, ``warm_start_rows`` (rows of
        the subsample that gave the start, 0 for none); for data read in chunks
        or from Dask ``passes`` (passes over the data the fit made, see
        :class:`FitInfo`) and ``last_step_predicted`` (its last check came
        without a pass); for ``fit(method=...)`` other
        than Newton also ``prefit_iterations``, ``prefit_evaluations``,
        ``prefit_success`` and ``prefit_message`` of the scipy stage.
        """
        info = self.fit_info
        out: dict[str, object] = {
            "converged": info.converged,
            "iterations": info.n_iter,
            "halvings": info.n_halvings,
            "max_grad": info.max_grad,
            "code": info.code,
            "message": info.message,
            "method": info.method,
            "warm_start_rows": info.warm_start_rows,
        }
        if info.n_passes is not None:
            out["passes"] = info.n_passes
            out["last_step_predicted"] = info.last_step_predicted
        if info.prefit is not None:
            out |= {
                "prefit_iterations": info.prefit.n_iter,
                "prefit_evaluations": info.prefit.n_evaluations,
                "prefit_success": info.prefit.success,
                "prefit_message": info.prefit.message,
            }
        return out

    @property
    def gradient(self) -> pd.Series:
        """Gradient of the log-likelihood at the estimates."""
        return pd.Series(-self._evaluation.gradient, index=self.params.index, name="gradient")

    # -- sizes and information criteria --------------------------------------

    @property
    def nobs(self) -> float:
        """Number of observations: the sum of the weights (R's ``nobs``)."""
        return self.model.nobs

    @property
    def n_rows(self) -> int:
        """Rows of data used."""
        return self.model.n_rows

    @property
    def k_params(self) -> int:
        """Number of estimated parameters."""
        return len(self.params)

    @property
    def df_model(self) -> int:
        """Parameters besides the thresholds."""
        return self.k_params - self.model.problem.layout.n_alpha

    @property
    def df_effective(self) -> float:
        """Degrees of freedom ``k`` of AIC, BIC and ``df_resid``: the number of parameters.

        A penalised fit counts its effective degrees of freedom instead.
        """
        return float(self.k_params)

    @property
    def df_resid(self) -> float:
        """``nobs`` minus :attr:`df_effective`."""
        return self.nobs - self.df_effective

    @property
    def aic(self) -> float:
        """Akaike information criterion, ``-2 llf + 2 k`` (``k``: :attr:`df_effective`)."""
        return -2.0 * self.llf + 2.0 * self.df_effective

    @property
    def bic(self) -> float:
        """Bayesian information criterion, ``-2 llf + log(nobs) k`` (as R's clm)."""
        return -2.0 * self.llf + np.log(self.nobs) * self.df_effective

    @cached_property
    def llnull(self) -> float:
        """Log-likelihood of the thresholds-only model on the same rows and weights."""
        return self.model.null_loglike()

    # -- inference ------------------------------------------------------------

    def cov_params(self) -> pd.DataFrame:
        """Covariance of the estimates (``covariance.kind`` says which).

        The inverse observed information unless the model was fitted with a
        sandwich ``cov_type``; that one stays in :attr:`nonrobust_covariance`.
        """
        names = self.params.index
        return pd.DataFrame(self.covariance.matrix, index=names, columns=names)

    @property
    def normalized_cov_params(self) -> pd.DataFrame:
        """Inverse observed information, as statsmodels names it (the scale is 1).

        It stays the model-based covariance under a sandwich ``cov_type``, as in
        statsmodels; :meth:`cov_params` gives the covariance in use.
        """
        names = self.params.index
        return pd.DataFrame(self.nonrobust_covariance.matrix, index=names, columns=names)

    # -- expected information (families; VGAM's covariance) --------------------

    @cached_property
    def expected_covariance(self) -> Covariance:
        """Inverse *expected* (Fisher) information at the estimates.

        VGAM fits by Fisher scoring and reports this covariance, so VGAM's
        standard errors are ``np.sqrt(np.diag(res.expected_covariance.matrix))``
        (and ``cond`` is the condition number of the expected information, the
        ``cond_H`` of the VGAM references).  ``fit(cov_type="expected")`` puts it
        behind ``bse``, the tests and the summary.
        It equals the default (observed-information) covariance for the
        adjacent-category logit model only; see
        :meth:`ordstats.families.Family.expected_information`.
        """
        if self.data_removed:
            raise rows_removed_error("the expected information (expected_covariance)")
        model = self.model  # one pass over the rows, in memory or in chunks
        params = self.params.to_numpy()
        ev = self._evaluation
        if isinstance(ev, ShiftedEvaluation):  # x + 1e8: in the fit's well-conditioned basis
            info = model.evaluator.reduce_internal_rows(
                expected_information_sums, model.family_spec, ev.basis.to_internal(params)
            )
            internal = observed_covariance(info)
            assert isinstance(internal, Covariance)  # a dense information matrix
            cond = condition_number(ev.basis.hessian(info))
            return replace(in_users_basis(internal, ev.basis, cond), kind="expected")
        info = model.evaluator.reduce_rows(expected_information_sums, model.family_spec, params)
        covariance = observed_covariance(info)
        assert isinstance(covariance, Covariance)  # a dense information matrix
        return replace(covariance, kind="expected")

    @cached_property
    def bse(self) -> pd.Series:
        """Standard errors."""
        se = self.covariance.standard_errors()
        return pd.Series(se, index=self.params.index, name="bse")

    @cached_property
    def zvalues(self) -> pd.Series:
        """Wald z statistics, ``params / bse``."""
        return (self.params / self.bse).rename("z")

    @property
    def tvalues(self) -> pd.Series:
        """Alias of :attr:`zvalues` (statsmodels' name)."""
        return self.zvalues

    @cached_property
    def pvalues(self) -> pd.Series:
        """Two-sided p-values of the z tests."""
        return pd.Series(
            2.0 * stats.norm.sf(np.abs(self.zvalues)), index=self.params.index, name="pvalue"
        )

    def conf_int(
        self, alpha: float = 0.05, method: str = "wald", which: Sequence[str] | None = None
    ) -> pd.DataFrame:
        """Confidence intervals: Wald, or profile likelihood.

        Parameters
        ----------
        alpha : float
            One minus the confidence level.
        method : {"wald", "profile"}
            ``"wald"``: ``params +- z_{1-alpha/2} bse`` (with the covariance in
            use, robust if fitted so).  ``"profile"``: the values where the
            signed root deviance reaches ``+-z_{1-alpha/2}``, every other
            parameter re-optimised (likelihood-based, so the same whatever the
            covariance; asymmetric where the likelihood is; thresholds too,
            unlike R's ``confint.clm``).  R does not profile flexible-link
            models (it reports Wald intervals); here they are profiled, and an
            interval whose profile stays above the cut-off up to the edge of
            the parameter's domain (``lambda -> 0`` of Aranda-Ordaz, the
            cloglog) ends there, at 0, with a warning saying so.  See
            :mod:`ordstats.results.profile`.
        which : sequence of str, optional
            Parameters to profile (default all; R's names too); ignored for Wald.

        Returns
        -------
        pandas.DataFrame
            Columns ``"lower"`` and ``"upper"``, one row per parameter.
        """
        alpha = check_alpha(alpha)
        if method == "profile":
            return self._profile_conf_int(alpha, which)
        if method != "wald":
            raise OrdstatsError(f"method must be 'wald' or 'profile'; got {method!r}")
        half = normal_quantile(alpha) * self.bse
        return pd.DataFrame({"lower": self.params - half, "upper": self.params + half})

    @cached_property
    def thresholds(self) -> pd.DataFrame:
        """The cut-points ``theta_j`` implied by the estimates, with delta-method SEs.

        Without nominal effects: one row per cut-point (``"1|2"``, ...).  With
        nominal effects the cut-points depend on the nominal predictors, so there
        is one block per distinct row of the nominal design in the data (at most
        20; beyond that only the reference row ``w = 0``), indexed by a
        ``(pattern, threshold)`` MultiIndex.  For the sratio, cratio and acat
        families: their intercepts ``alpha_j (+ w'gamma_j)``, named
        ``"1:2", "2:3", ...``.

        Returns
        -------
        pandas.DataFrame
            Columns ``"estimate"`` and ``"std err"``.
        """
        model = self.model
        names = model.family_spec.cutpoint_names(model.levels)
        th = model.problem.layout.thresholds
        patterns, labels = _nominal_patterns(model)
        if labels is None and sp.issparse(model.threshold_jacobian):
            # many flexible thresholds (J = I): variances without the dense covariance
            return pd.DataFrame(
                {
                    "estimate": self.params.to_numpy()[th],
                    "std err": self.covariance.standard_errors()[th],
                },
                index=names,
            )
        cov = self.covariance.matrix[th, th]
        frames = []
        for row in patterns:
            grad = threshold_gradient(model.threshold_jacobian, row)
            frames.append(
                pd.DataFrame(
                    {
                        "estimate": grad @ self.params.to_numpy()[th] + model.threshold_offset,
                        "std err": np.sqrt(np.einsum("ij,jk,ik->i", grad, cov, grad)),
                    },
                    index=names,
                )
            )
        if labels is None:
            return frames[0]
        return pd.concat(frames, keys=labels, names=["pattern", "threshold"])

    def odds_ratios(self, alpha: float = 0.05, method: str = "wald") -> pd.DataFrame:
        """Odds ratios of the location (and nominal) effects with confidence intervals.

        Under the logit link, ``exp(beta_k)`` multiplies, per unit of ``x_k``,
        odds that depend on the family (also in ``.attrs["interpretation"]`` of
        the result):

        - cumulative: of a response above any cut-point, ``P(Y > j) / P(Y <= j)``;
        - sratio: of stopping at level ``j`` rather than going beyond it,
          ``P(Y = j | Y >= j) / P(Y > j | Y >= j)`` (> 1 means lower levels);
        - cratio: of going beyond level ``j`` once reached,
          ``P(Y > j | Y >= j) / P(Y = j | Y >= j)``;
        - acat: of level ``j + 1`` rather than ``j``, ``P(Y = j+1) / P(Y = j)``;
        - ``reverse=True``: see :attr:`ordstats.families.Family.odds_ratio_meaning`.

        In the cumulative model a nominal effect ``gamma_j`` of ``w`` (row
        ``"j|j+1:w"``) multiplies the odds of ``Y > j`` by ``exp(-gamma_j)``; in
        the other families a non-parallel effect (row ``"j:j+1:w"``) enters
        ``eta_j`` as a slope does, so ``exp(gamma_j)`` multiplies the odds of
        step ``j`` only.  With scale effects the odds ratios hold at the
        reference scale ``z = 0``; elsewhere they are ``exp(beta / exp(z'zeta))``.

        Parameters
        ----------
        alpha : float
            One minus the confidence level.
        method : {"wald", "profile"}
            Intervals for ``beta`` (see :meth:`conf_int`), then exponentiated.

        Returns
        -------
        pandas.DataFrame
            Columns ``"odds_ratio"``, ``"lower"``, ``"upper"``, ``"pvalue"``.

        Raises
        ------
        OrdstatsError
            For links other than logit, where ``exp(beta)`` is not an odds ratio.
        """
        if self.model.link.name != "logit":
            raise OrdstatsError(
                f"odds ratios need the logit link; this model uses {self.model.link.name!r}, "
                "under which exp(beta) is not an odds ratio. Refit with link='logit' or "
                "report the coefficients on the link scale"
            )
        location = self.model.exog_names
        nominal = _nominal_param_names(self.model)
        ci = self.conf_int(alpha, method=method, which=location + nominal)
        # exp(beta) for location effects; in the cumulative model exp(-gamma_j) for
        # nominal effects, since theta_j + w'gamma_j lowers the odds of Y > j by
        # exp(gamma_j); the other families add w'gamma_j to eta_j like x'b
        nominal_sign = float(self.model.family_spec.capabilities.nominal_sign)
        sign = pd.Series(
            [1.0] * len(location) + [nominal_sign] * len(nominal), index=location + nominal
        )
        lower = np.where(sign > 0, ci["lower"][sign.index], -ci["upper"][sign.index])
        upper = np.where(sign > 0, ci["upper"][sign.index], -ci["lower"][sign.index])
        with np.errstate(over="ignore"):  # a diverging estimate's odds ratio is inf, as R's
            table = pd.DataFrame(
                {
                    "odds_ratio": np.exp(sign * self.params[sign.index]),
                    "lower": np.exp(lower),
                    "upper": np.exp(upper),
                    "pvalue": self.pvalues[sign.index],
                }
            )
        table.attrs["interpretation"] = (
            "exp(coef) multiplies the " + self.model.family_spec.odds_ratio_meaning
        )
        return table

    # -- prediction -----------------------------------------------------------

    def _linear_parts(
        self, newdata: Any, offset: Any
    ) -> tuple[FloatArray, FloatArray, FloatArray | None, pd.Index]:
        """Location ``x'beta + o``, cut-points ``theta(w)`` and scale ``exp(z'zeta + q)``."""
        model, lay = self.model, self.model.problem.layout
        params = self.params.to_numpy()
        design = model.design
        if newdata is None:
            refuse_offset_without_newdata(offset)
            X, W, Z = model.data.X, model.data.nominal, model.data.scale
            eta = X @ params[lay.beta] + model.data.offset
            scale_offset = model.data.scale_offset
            index = design.row_index
        else:
            X, W, Z, index = newdata_matrices(design, newdata, model.formula_context)
            eta = X @ params[lay.beta] + self._new_offset(newdata, offset, index)
            scale_offset = newdata_scale_offset(design, newdata)
        theta, scale = cut_points_and_scale(
            params, lay, model.threshold_jacobian, W, Z, model.threshold_offset, scale_offset
        )
        return eta, theta, scale, index

    def _new_offset(self, newdata: Any, offset: Any, index: pd.Index) -> FloatArray:
        return newdata_offset(
            offset,
            newdata,
            index,
            column=self.model.design.offset_name,
            fitted_with_offset=self.model.has_offset,
        )

    @property
    def fittedvalues(self) -> pd.Series:
        """The linear predictor ``x'beta + offset`` of the fitted rows (statsmodels' name).

        ``predict()`` gives the fitted probabilities of each level.  A Spark fit
        gives a Spark DataFrame with the column ``fittedvalues``.
        """
        linear = self.predict(which="linear")
        renamed = getattr(linear, "withColumnRenamed", None)  # a Spark DataFrame
        if renamed is not None:
            return renamed("linear", "fittedvalues")
        return linear.rename("fittedvalues")

    def predict(
        self,
        newdata: Any = None,
        which: PredictWhich = "prob",
        *,
        offset: Any = None,
        exog: Any = None,
    ) -> pd.DataFrame | pd.Series:
        """Predict from the fitted model.

        Parameters
        ----------
        newdata : pandas.DataFrame, array-like or large source, optional
            New rows with the predictor columns (the response is not needed).
            Default: the rows used in the fit (for data read in chunks, by the
            fit's rule: complete in the model's columns, positive weight, finite
            design).  Files, globs and datasets are predicted chunk by chunk
            (rows in file order, numbered from 0, the rows a fit left out
            keeping their numbers); a Dask DataFrame gives a lazy Dask result,
            a Spark DataFrame a Spark DataFrame.
        which : {"prob", "cumprob", "class", "expected", "linear", "observed"}
            ``"prob"``: ``P(Y = j)``, one column per level;
            ``"cumprob"``: ``P(Y <= j)`` for the first ``K - 1`` levels;
            ``"class"``: the most probable level;
            ``"expected"``: ``sum_j score_j P(Y = j)``, the scores being the level
            values when they are numbers or numeric labels (``"1"``, ..., ``"5"``),
            otherwise ``1, ..., K``;
            ``"linear"``: the linear predictor ``x'beta + offset`` (for the
            sratio, cratio and acat families the part shared by every step:
            ``eta_j`` adds the intercept ``"j:j+1"`` and any non-parallel effects).
            ``"observed"``: each row's probability of its own level, ``P(Y = y)``
            (R's ``predict.clm`` when ``newdata`` holds the response; without
            ``newdata``, R's ``fitted()``): ``newdata`` needs the response
            column, and a row whose response is missing gets NaN (with a
            :class:`~ordstats.errors.MissingDataWarning`, as missing predictors).
        offset : float or array-like, optional
            Offset for ``newdata`` (a number for every row, or one per row) when
            the model has one that is not a column of ``newdata``.  A pandas
            Series is paired with the rows by index label (its labels must be
            those of ``newdata``), other arrays by position.  Without it,
            new rows get offset 0 with a :class:`~ordstats.errors.PredictionWarning`
            (statsmodels' ``OrderedModel`` default).  For a model fitted
            without an offset it shifts the new rows' linear predictor all the
            same (R's ``predict.clm`` stops with an error there).
        exog : DataFrame or array-like, optional
            statsmodels' name for ``newdata`` (give one of the two).  An array
            has one column per regressor in the order of ``model.exog_names``
            (models built from arrays; for formula models a DataFrame with the
            formula's columns).  For models built from arrays, a DataFrame
            whose column labels include any of ``model.exog_names`` is read
            by name and must hold all of them; one that names none of them
            is read by position, as an array.

        Returns
        -------
        pandas.DataFrame or pandas.Series
            Indexed like ``newdata`` (or the fitted rows).

        Raises
        ------
        PredictionError
            Unseen factor levels or missing columns in ``newdata``.
        """
        newdata = newdata_or_exog(newdata, exog)
        if which not in _PREDICT_WHICH:
            hint = (
                ": R's eta1/eta2 (predict.clm's type = 'linear.predictor') are "
                "get_prediction(newdata, which='linear.predictor')"
                if which == "linear.predictor"
                else ""
            )
            raise OrdstatsError(f"which must be one of {_PREDICT_WHICH}; got {which!r}{hint}")
        warn_rank_deficient(self.model.design, newdata)
        # the fitted rows of data read in chunks (a pickled fit: its source is gone, said there)
        in_chunks = newdata is None and not (self.model.evaluator.keeps_rows or self.data_removed)
        if is_source(newdata) or in_chunks:
            source, rows = newdata, None
            if newdata is None:  # the fitted rows of the data read in chunks
                source, rows = self.model.source, self.model.evaluator.fitted_rows()
            with numeric_threads():
                return predict_in_chunks(
                    functools.partial(self._predict_rows, which=which), source, offset, rows=rows
                )
        return self._predict_rows(newdata, which, offset)

    def _predict_rows(
        self, newdata: Any, which: PredictWhich, offset: Any = None
    ) -> pd.DataFrame | pd.Series:
        """:meth:`predict` of a DataFrame of new rows (or None: the fitted rows in memory)."""
        with numeric_threads():  # x'beta and the probabilities: thin products
            eta, theta, scale, index = self._linear_parts(newdata, offset)
            if which == "linear":
                return pd.Series(eta, index=index, name="linear")
            if self.model.family_spec.ordered_cutpoints:
                theta = _mask_crossing(theta, index)
            levels = self.model.levels
            family, link = self.model.family_spec, self._link
            if which == "cumprob":
                cum = family.cumulative_probabilities(theta, eta, scale, link=link)
                return pd.DataFrame(cum, index=index, columns=levels[:-1])
            prob = family.category_probabilities(theta, eta, scale, link=link)
            if which == "prob":
                return pd.DataFrame(prob, index=index, columns=levels)
            if which == "expected":
                return pd.Series(prob @ self._scores(), index=index, name="expected")
            if which == "observed":
                codes = self.model.data.y if newdata is None else self._response_codes(newdata)
                return observed_probability(prob, codes, index)
            return most_probable_level(prob, self.model.design.response.values, index)

    def _response_codes(
        self,
        newdata: Any,
        purpose: str = "which='observed' gives each row the probability of its own level",
    ) -> IntArray:
        """The level of each row of ``newdata``'s response (-1: missing), by the fit's levels.

        ``purpose`` says, in the messages, why the response is read.
        """
        name, levels = self.model.endog_name, list(self.model.levels)
        if self.model.design.response.censoring is not None:
            raise PredictionError(
                f"{purpose}; a censored response spans several levels: use which='prob' "
                "and add up the levels of each row's interval"
            )
        return response_codes(newdata, name, levels, purpose)

    @property
    def _link(self) -> Link:
        """The link at the estimated ``lambda`` (flexible links) or the link itself."""
        return self._evaluation.link

    def _scores(self) -> FloatArray:
        return level_scores(self.model.design.response.values)

    # -- reporting ------------------------------------------------------------

    def update(
        self, formula: str | None = None, *, fit_kwds: dict[str, Any] | None = None, **changes: Any
    ) -> OrdinalResults:
        """Refit with another formula or options (R's ``update(fit, ~ . - x, ...)``).

        ``res.model.update(formula, **changes).fit(**fit_kwds)``: in ``formula``
        R's ``.`` stands for the model's terms (``"~ . - contact"``,
        ``"~ . + temp:contact"``); see :meth:`OrdinalModel.update` for the
        ``changes`` (``nominal=``, ``scale=``, ``link=``, ``data=``, ...).

        Parameters
        ----------
        formula : str, optional
        fit_kwds : dict, optional
            Keywords of ``fit()`` (``cov_type``, ``maxiter``, ...): the refit
            takes ``fit()``'s defaults, not this fit's.
        **changes
            As for :meth:`OrdinalModel.update`.

        Returns
        -------
        OrdinalResults
        """
        if fit_kwds is not None and not isinstance(fit_kwds, dict):
            raise OrdstatsError(f"fit_kwds must be a dict of fit()'s keywords; got {fit_kwds!r}")
        return cast(OrdinalResults, self.model.update(formula, **changes).fit(**(fit_kwds or {})))

    def summary(
        self,
        yname: str | None = None,
        xname: Sequence[str] | None = None,
        title: str | None = None,
        alpha: float = 0.05,
    ) -> Summary:
        """A statsmodels :class:`~statsmodels.iolib.summary.Summary` of the fit.

        Shows the response, link, sizes, log-likelihood, AIC, BIC, convergence
        (iterations, ``max|grad|``, ``cond(H)``), the location coefficients and
        the thresholds.  Use ``print(res.summary())``, ``.as_html()`` or
        ``.as_latex()``.

        Parameters
        ----------
        yname : str, optional
            Name shown for the response (default: its name in the data).
        xname : sequence of str, optional
            Names shown for the parameters, one per parameter in the order of
            ``params`` (default: ``params.index``).
        title : str, optional
            Title of the summary.
        alpha : float
            One minus the level of the confidence intervals.
        """
        from ordstats.reporting import summarize

        alpha = check_alpha(alpha)
        if yname is not None and not isinstance(yname, str):
            raise OrdstatsError(f"yname must be a string; got {yname!r} (alpha= by keyword)")
        if title is not None and not isinstance(title, str):
            raise OrdstatsError(f"title must be a string; got {title!r}")
        if xname is not None and (
            isinstance(xname, str)
            or not isinstance(xname, Sequence)
            or not all(isinstance(name, str) for name in xname)
        ):
            raise OrdstatsError(
                f"xname must be a list of {self.k_params} names (strings), one per parameter; "
                f"got {xname!r:.80}"
            )
        if xname is not None and len(xname) != self.k_params:
            raise OrdstatsError(
                f"xname must give {self.k_params} names, one per parameter "
                f"({', '.join(self.params.index)}); got {len(xname)}"
            )
        return summarize(self, alpha=alpha, yname=yname, xname=xname, title=title)

    def summary2(
        self,
        yname: str | None = None,
        xname: Sequence[str] | None = None,
        title: str | None = None,
        alpha: float = 0.05,
    ) -> Any:
        """Summarise the fit as statsmodels' experimental ``summary2`` does (DataFrames).

        Returns a :class:`statsmodels.iolib.summary2.Summary` with the model
        information and one coefficient table (``.tables`` are DataFrames).
        Parameters as for :meth:`summary`.
        """
        from ordstats.reporting import summarize2

        alpha = check_alpha(alpha)
        if xname is not None and len(xname) != self.k_params:
            raise OrdstatsError(f"xname must give {self.k_params} names, one per parameter")
        return summarize2(self, alpha=alpha, yname=yname, xname=xname, title=title)

    def __repr__(self) -> str:
        return f"<OrdinalResults: {self.model!r}, llf={self.llf:.6g}, converged={self.converged}>"


def _nominal_param_names(model: FittedModel) -> list[str]:
    return model.param_names[model.problem.layout.nominal]


@dataclass(frozen=True)
class _DistinctRows:
    """The distinct rows of a nominal design, sorted; None beyond ``_MAX_PATTERNS``.

    Adds up over chunks, so the rows of all chunks give those of all rows.
    """

    patterns: FloatArray | None

    @classmethod
    def of_nominal(cls, data: CLMData) -> _DistinctRows:
        """The distinct rows of one chunk's (or all rows') nominal design."""
        return cls._capped(np.unique(np.asarray(data.nominal, dtype=float), axis=0))

    @classmethod
    def _capped(cls, patterns: FloatArray) -> _DistinctRows:
        return cls(patterns if len(patterns) <= _MAX_PATTERNS else None)

    def __add__(self, other: _DistinctRows) -> _DistinctRows:
        if self.patterns is None or other.patterns is None:
            return _DistinctRows(None)
        return self._capped(np.unique(np.vstack([self.patterns, other.patterns]), axis=0))


def _nominal_patterns(model: FittedModel) -> tuple[FloatArray, list[str] | None]:
    """Distinct nominal-design rows to show thresholds for, with labels."""
    n_cols = model.problem.layout.n_nominal_cols
    if n_cols == 0:
        return np.zeros((1, 0)), None
    # one pass for rows read in chunks
    patterns = model.evaluator.reduce_rows(_DistinctRows.of_nominal).patterns
    if patterns is None:  # more than _MAX_PATTERNS
        patterns = np.zeros((1, n_cols))
    labels = [
        ", ".join(f"{name}={value:g}" for name, value in zip(model.nominal_names, row, strict=True))
        for row in patterns
    ]
    return patterns, labels


def _mask_crossing(theta: FloatArray, index: pd.Index) -> FloatArray:
    """NaN out rows whose cut-points cross (negative probabilities), with a warning."""
    bad = crossing_rows(theta)
    if bad.size == 0:
        return theta
    shared = theta.shape[0] == 1  # one set of cut-points: no nominal effects
    rows = np.arange(len(index)) if shared else bad
    shown = ", ".join(map(str, list(index[rows[:5]]))) + (", ..." if rows.size > 5 else "")
    why = (
        "the fitted cut-points do not increase (between levels whose probabilities no row "
        "isolates, as a censored response's intervals can leave them)"
        if shared
        else "their nominal effects make the cut-points decrease"
    )
    warnings.warn(
        f"the cumulative probabilities cross for {rows.size} row(s) ({shown}): {why}, which "
        "implies negative probabilities; these rows are NaN. The model does not fit these "
        "predictor values",
        PredictionWarning,
        stacklevel=user_stacklevel(),
    )
    theta = theta.copy()
    theta[bad] = np.nan
    return theta


def newdata_or_exog(newdata: Any, exog: Any) -> Any:
    """The new rows of ``predict``, given as ``newdata`` or as ``exog`` (statsmodels' name)."""
    if exog is None:
        return newdata
    if newdata is not None:
        raise PredictionError("give newdata or exog (its statsmodels name), not both")
    return exog


def level_scores(values: Sequence[Any]) -> FloatArray:
    """The scores of ``predict(which="expected")``: the level values if numbers, else 1..K."""
    try:
        return np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        return np.arange(1.0, len(values) + 1.0)


def response_codes(
    newdata: Any,
    name: str,
    levels: Sequence[str],
    purpose: str = "which='observed' gives each row the probability of its own level",
) -> IntArray:
    """The level of each row of ``newdata``'s response ``name`` (-1: missing) by ``levels``.

    ``purpose`` says, in the messages, why the response is read.
    """
    if not isinstance(newdata, pd.DataFrame) or name not in newdata.columns:
        raise PredictionError(f"{purpose}, so newdata needs the response column {name!r}")
    codes, uniques = pd.factorize(newdata[name])
    position = {label: j for j, label in enumerate(levels)}
    table = np.array([position.get(format_level(u), -2) for u in uniques], dtype=np.intp)
    unknown = [format_level(u) for u, j in zip(uniques, table, strict=True) if j == -2]
    if unknown:
        raise PredictionError(
            f"newdata's response {name!r} has value(s) {', '.join(map(repr, unknown[:5]))} "
            f"that are not levels of the fit ({', '.join(map(repr, levels))})"
        )
    out = np.full(len(codes), -1, dtype=np.intp)
    seen = codes >= 0
    out[seen] = table[codes[seen]]
    if not seen.all():
        missing = newdata.index[~seen]
        shown = ", ".join(map(str, missing[:5])) + (", ..." if len(missing) > 5 else "")
        warnings.warn(
            f"{len(missing)} row(s) of newdata ({shown}) have a missing response {name!r}; "
            f"{purpose}, so theirs are NaN",
            MissingDataWarning,
            stacklevel=user_stacklevel(),  # reached from rows in memory and from chunks
        )
    return out


def observed_probability(prob: FloatArray, codes: IntArray, index: pd.Index) -> pd.Series:
    """Each row's ``P(Y = y_i)`` (``codes``; NaN where a code is -1) as a Series ``observed``."""
    rows = np.arange(prob.shape[0])
    picked = prob[rows, np.maximum(codes, 0)]
    return pd.Series(np.where(codes >= 0, picked, np.nan), index=index, name="observed")


def most_probable_level(prob: FloatArray, levels: Sequence[Any], index: pd.Index) -> pd.Series:
    """The most probable level of each row, as an ordered Categorical Series named ``class``.

    ``levels`` are the response's own values, so the categories keep its dtype
    (integers for an integer response); a row with a non-finite probability is
    missing.
    """
    valid = np.all(np.isfinite(prob), axis=1)
    codes = np.where(valid, np.argmax(np.where(np.isfinite(prob), prob, -1.0), axis=1), -1)
    values = pd.Categorical.from_codes(codes, categories=pd.Index(levels), ordered=True)
    return pd.Series(values, index=index, name="class")
