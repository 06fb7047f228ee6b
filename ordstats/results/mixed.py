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
  by 40-node Gauss-Hermite quadrature.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import optimize, stats

from ordstats._typing import FloatArray
from ordstats.design.newdata import terms_for_newdata
from ordstats.design.random import term_matrices_for
from ordstats.errors import (
    ConvergenceWarning,
    PredictionError,
    PredictionWarning,
    SpecificationError,
)
from ordstats.families.mixed import BOUNDARY_SD, cholesky_factors
from ordstats.results.arguments import normal_quantile
from ordstats.results.fitted import most_probable_level

if TYPE_CHECKING:
    from ordstats.estimation.mixed import OrdinalMixedModel

__all__ = ["MixedResults"]

_WHICH = ("prob", "cumprob", "class", "expected")


class MixedResults:
    """A fitted cumulative link mixed model.

    Parameters
    ----------
    model : OrdinalMixedModel
    params_all : ndarray
        ``(alpha, beta, log-Cholesky variance parameters)`` at the optimum.
    hessian : ndarray
        Hessian of the negative approximate log-likelihood in those parameters.
    llf : float
    nagq : int
    converged : bool
    n_evaluations : int
    boundary : list of int
        Indices (into the variance parameters) fixed on the boundary (``sd < 1e-4``),
        dropped from the covariance as R does.
    """

    def __init__(
        self,
        model: OrdinalMixedModel,
        params_all: FloatArray,
        hessian: FloatArray,
        llf: float,
        nagq: int,
        converged: bool,
        n_evaluations: int,
        boundary: list[int],
    ) -> None:
        self.model = model
        self.params_all = np.asarray(params_all, dtype=float)
        self.llf = float(llf)
        self.nagq = int(nagq)
        self.converged = bool(converged)
        self.n_evaluations = int(n_evaluations)
        self.boundary = list(boundary)
        #: largest absolute gradient of the free parameters at the optimum (set by the fit)
        self.max_grad = float("nan")
        problem = model.problem
        self.k_fixed = problem.n_alpha + problem.n_beta
        names = model.param_names + model.variance_names
        keep = [i for i in range(len(names)) if i - self.k_fixed not in self.boundary]
        cov = np.full((len(names), len(names)), np.nan)
        sub = hessian[np.ix_(keep, keep)]
        try:
            cov[np.ix_(keep, keep)] = np.linalg.inv(sub)
            if np.any(np.diag(cov)[keep] <= 0):
                raise np.linalg.LinAlgError
        except np.linalg.LinAlgError:
            warnings.warn(
                "the Hessian of the approximate log-likelihood is not positive definite: "
                "standard errors are NaN (the fit may be on a boundary or not converged)",
                PredictionWarning,
                stacklevel=3,
            )
            cov[:] = np.nan
        self.hessian = hessian
        self._cov = pd.DataFrame(cov, index=names, columns=names)

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
    def bse(self) -> pd.Series:
        """Standard errors of thresholds and fixed effects."""
        se = np.sqrt(np.diag(self._cov.to_numpy())[: self.k_fixed])
        return pd.Series(se, index=self.model.param_names)

    @property
    def tvalues(self) -> pd.Series:
        """Wald z statistics."""
        return self.params / self.bse

    @property
    def pvalues(self) -> pd.Series:
        """Two-sided Wald p-values."""
        return pd.Series(2 * stats.norm.sf(np.abs(self.tvalues)), index=self.params.index)

    def conf_int(self, alpha: float = 0.05) -> pd.DataFrame:
        """Wald intervals ``estimate -/+ z_{1-alpha/2} SE`` (R's ``confint.clmm``).

        Parameters
        ----------
        alpha : float

        Returns
        -------
        pandas.DataFrame
            Columns ``lower``, ``upper``.
        """
        z = normal_quantile(alpha)
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
                    stacklevel=3,
                )
                found = np.inf
            limits.append(0.0 if found is None else float(np.exp(found)))
        return limits[0], limits[1]

    @property
    def k_params(self) -> int:
        """Number of estimated parameters (fixed + variance), R's ``edf``."""
        return len(self.params_all)

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
        return -2 * self.llf + self.k_params * np.log(self.nobs)

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

    # -- predictions -----------------------------------------------------------

    def predict(
        self,
        newdata: pd.DataFrame | None = None,
        which: str = "prob",
        re_form: str | int | None = None,
    ) -> pd.DataFrame | pd.Series:
        """Predict from the mixed model (R's clmm has no ``predict`` method).

        Parameters
        ----------
        newdata : pandas.DataFrame, optional
            Default: the rows of the fit.
        which : {"prob", "cumprob", "class", "expected"}
            Category probabilities, cumulative probabilities ``P(Y <= j)``, the most
            probable level, or the expected level index ``sum_j j P(Y = j)``
            (levels numbered 1..K).
        re_form : None, 0 or "marginal"
            ``None``: conditional on the groups' modes (rows of unseen groups use ``b = 0``
            with a :class:`~ordstats.errors.PredictionWarning`); ``0``: random effects
            zero; ``"marginal"``: averaged over the random effects' distribution.

        Returns
        -------
        pandas.DataFrame (``prob``, ``cumprob``) or Series (``class``, ``expected``)
        """
        if which not in _WHICH:
            raise PredictionError(f"which must be one of {_WHICH}; got {which!r}")
        if not (
            re_form is None
            or (re_form == 0 and not isinstance(re_form, str))
            or re_form == "marginal"
        ):
            raise PredictionError(f"re_form must be None, 0 or 'marginal'; got {re_form!r}")
        model = self.model
        fixed = model.design.fixed
        if newdata is None:
            X = fixed.location.matrix
            offset = fixed.offset
            index = fixed.row_index
            re_parts = [(t.matrix, t.codes) for t in model.terms]
        else:
            if not isinstance(newdata, pd.DataFrame):
                raise PredictionError("newdata must be a pandas DataFrame")
            X = terms_for_newdata(fixed.location, newdata, model.formula_context)
            offset = self._new_offset(newdata)
            index = newdata.index
            re_parts = term_matrices_for(model.terms, newdata) if re_form != 0 else []
        eta = X @ self.params_all[model.problem.n_alpha : self.k_fixed] + offset
        theta = model.problem.jacobian @ self.params_all[: model.problem.n_alpha]
        cum = self._cumulative(eta, theta, re_parts, re_form)
        levels = model.levels
        full = np.column_stack([cum, np.ones(len(eta))])
        prob = np.diff(np.column_stack([np.zeros(len(eta)), full]), axis=1)
        if which == "cumprob":
            return pd.DataFrame(full, index=index, columns=levels)
        if which == "prob":
            return pd.DataFrame(prob, index=index, columns=levels)
        if which == "class":
            return most_probable_level(prob, model.design.fixed.response.values, index)
        return pd.Series(prob @ np.arange(1, len(levels) + 1), index=index)

    def _new_offset(self, newdata: pd.DataFrame) -> FloatArray:
        name = self.model.design.fixed.offset_name
        if name is None:
            if self.model.has_offset:
                raise PredictionError(
                    "the model was fitted with an offset given as values; predictions on new "
                    "data need the offset as a column name"
                )
            return np.zeros(len(newdata))
        if name not in newdata.columns:
            raise PredictionError(f"new data lack the offset column {name!r}")
        return newdata[name].to_numpy(dtype=float)

    def _cumulative(
        self,
        eta: FloatArray,
        theta: FloatArray,
        re_parts: list[tuple[FloatArray, np.ndarray]],
        re_form: str | int | None,
    ) -> FloatArray:
        link = self.model.problem.link
        if re_form == 0 or not re_parts:
            return link.cdf(theta[None, :] - eta[:, None])
        if re_form == "marginal":
            var = np.zeros(len(eta))
            for (Xt, _codes), S in zip(re_parts, self.covariance_matrices(), strict=True):
                var += np.einsum("ij,jk,ik->i", Xt, S, Xt)
            nodes, weights = np.polynomial.hermite.hermgauss(40)
            z = np.sqrt(2.0) * nodes
            arg = theta[None, :, None] - eta[:, None, None] - np.sqrt(var)[:, None, None] * z
            return np.einsum("ijk,k->ij", link.cdf(arg), weights / np.sqrt(np.pi))
        modes = self.model.objective.random_effects(self.params_all)
        unseen = np.zeros(len(eta), dtype=bool)
        shift = np.zeros(len(eta))
        for (Xt, codes), b in zip(re_parts, modes, strict=True):
            seen = codes >= 0
            unseen |= ~seen
            shift[seen] += np.einsum("ij,ij->i", Xt[seen], b[codes[seen]])
        if unseen.any():
            warnings.warn(
                f"{int(unseen.sum())} rows belong to groups not seen in the fit; their "
                "random effects are set to zero (the population, re_form=0)",
                PredictionWarning,
                stacklevel=3,
            )
        return link.cdf(theta[None, :] - (eta + shift)[:, None])

    # -- reporting -----------------------------------------------------------------

    def summary(self) -> str:
        """A report in the layout of R's ``summary.clmm``.

        Returns
        -------
        str
        """
        model = self.model
        method = "Laplace" if self.nagq <= 1 else f"adaptive Gauss-Hermite ({self.nagq} nodes)"
        lines = [
            "Cumulative Link Mixed Model fitted with the " + method + " approximation",
            "",
            f"formula: {model.design.formula}",
            "",
            " link  threshold   nobs  logLik   AIC     niter   max.grad",
            f" {model.problem.link.name:<5} {model.threshold:<11} {self.nobs:g}  "
            f"{self.llf:.2f} {self.aic:.2f} {self.n_evaluations:<7d} "
            f"{self.max_grad:.2e}",
            "",
            "Random effects:",
        ]
        vc = self.varcorr()
        lines.append(
            vc.rename(
                columns={
                    "group": "Groups",
                    "name": "Name",
                    "variance": "Variance",
                    "sd": "Std.Dev.",
                    "corr": "Corr",
                }
            ).to_string(index=False)
        )
        groups = ", ".join(f"{g}, {n}" for g, n in self.n_groups.items())
        lines += [f"Number of groups:  {groups}", ""]
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

    def __repr__(self) -> str:
        return f"<MixedResults: {self.model.design.formula}, llf={self.llf:.4f}>"

    def require_standard(self, what: str) -> None:
        """Raise a clear error for a clm results method a mixed fit does not offer."""
        raise SpecificationError(f"{what} is not available for mixed models (clmm) yet")
