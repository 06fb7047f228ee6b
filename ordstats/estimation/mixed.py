r"""The cumulative link mixed model (R's ``clmm``).

:class:`OrdinalMixedModel` is a separate class next to :class:`~ordstats.OrdinalModel`
because its state differs in kind: the likelihood is an integral over random effects
(an inner Newton per evaluation), the parameter vector gains variance parameters, and
most clm results methods (profiles, nominal/scale tests, Brant) do not apply.
``OrdinalModel.from_formula`` returns an :class:`OrdinalMixedModel` when the formula has
bar terms ``(expr | group)``, so users meet one entry point.

Estimation (:mod:`ordstats.families.mixed` for the maths): the Laplace approximation
(default) or, for a single scalar random intercept, adaptive Gauss-Hermite quadrature
(``fit(nagq=K)``).  The outer optimisation of ``(alpha, beta, log-Cholesky)`` is BFGS followed by
Newton steps with a Hessian computed once at the BFGS solution, which also gives the
covariance.  Gradients are analytic (:func:`~ordstats.families.mixed.laplace_gradient` and
:func:`~ordstats.families.mixed.agq_gradient` for one scalar term, with the third
derivatives of ``log P`` from the link's ``d2log_pdf``;
:func:`~ordstats.families.mixed.laplace_gradient_general` for any other random terms with
up to 4,000 random effects) and the Hessian behind the SEs is their forward difference;
beyond 4,000 random effects both are finite differences of the approximate log-likelihood
(as R's ``vcov.clmm``, whose Hessian is numerical too).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from scipy import optimize

from ordstats._typing import FloatArray
from ordstats.core.links import FlexibleLink
from ordstats.core.solver import NewtonOptions
from ordstats.core.threads import numeric_threads
from ordstats.core.thresholds import threshold_jacobian
from ordstats.design.random import (
    MixedDesign,
    RandomTerm,
    formula_parts,
    mixed_design_from_formula,
)
from ordstats.errors import (
    CollinearityWarning,
    ConvergenceWarning,
    OrdstatsError,
    SeparationWarning,
    SpecificationError,
    SpecificationWarning,
    refuse_unknown_options,
    user_stacklevel,
)
from ordstats.estimation import bayes
from ordstats.estimation.context import FormulaContext, used_context
from ordstats.estimation.evaluators import InMemoryEvaluator, separation_check_due
from ordstats.estimation.options import ModelOptions, newton_options, print_iteration
from ordstats.families.mixed import (
    BOUNDARY_SD,
    MAX_DENSE_RANDOM_EFFECTS,
    MixedObjective,
    MixedProblem,
    TermArrays,
    agq_gradient,
    laplace_gradient,
    laplace_gradient_general,
    n_variance_params,
)
from ordstats.families.separation import detect_separation
from ordstats.results.arguments import check_flag
from ordstats.results.covariance import canonical_cov_type
from ordstats.results.fitted import FitInfo
from ordstats.results.mixed import MixedResults

__all__ = ["MAX_NAGQ", "OrdinalMixedModel"]

#: Most quadrature nodes ``fit(nagq=...)`` accepts (R's clmm fails from about 100 on;
#: numpy's Gauss-Hermite weights underflow from 380).
MAX_NAGQ = 100

#: Forward-difference step for the variance rows of the start's Hessian guess (the
#: inner Newton's tolerance makes smaller steps noisy).
_START_STEP = 1e-4
#: Variance of each link's latent distribution (the clm start's effect inflation).
_LATENT_VARIANCE = {
    "logit": np.pi**2 / 3,
    "probit": 1.0,
    "cloglog": np.pi**2 / 6,
    "loglog": np.pi**2 / 6,
}


class OrdinalMixedModel:
    r"""A cumulative link mixed model, R's ``clmm``.

    .. math::

        P(Y_i \le j \mid b) = F(\theta_j - x_i^\top\beta - o_i - \textstyle\sum_t
        x_{ti}^\top b_{t, g_t(i)}), \qquad b_{t,l} \sim N(0, \Sigma_t).

    Build it with :meth:`from_formula` (or ``OrdinalModel.from_formula`` with bar terms).

    Examples
    --------
    >>> import ordstats
    >>> wine = ordstats.datasets.load("wine")
    >>> model = ordstats.OrdinalModel.from_formula("rating ~ temp + contact + (1|judge)", wine)
    >>> res = model.fit()
    >>> round(res.llf, 4)
    -81.5654
    """

    def __init__(self, design: MixedDesign, options: ModelOptions, context: object = None) -> None:
        family = options.family_object()
        if not (family.capabilities.latent_variable and family.capabilities.threshold_structures):
            raise SpecificationError(
                "random effects are available for the cumulative family only (clmm); "
                f"got family={options.family!r}"
            )
        if isinstance(options.threshold, tuple):
            raise SpecificationError(
                "fixed thresholds are not available with random effects yet; estimate the "
                "thresholds (a threshold structure) or fit the clm without random terms"
            )
        link = family.link
        if isinstance(link, FlexibleLink):
            raise SpecificationError(
                f"flexible links ({link.name}) are not available with random effects yet; "
                "use logit, probit, cloglog, loglog or cauchit"
            )
        self.options = options
        self.design = design
        self.terms: list[RandomTerm] = design.terms
        #: the names the formulas use (:class:`~ordstats.estimation.context.FormulaContext`)
        self.formula_context = None if context is None else FormulaContext(dict(context))  # type: ignore[call-overload]
        fixed = design.fixed
        self.levels = list(fixed.response.levels)
        jac = np.asarray(threshold_jacobian(options.threshold, len(self.levels) - 1), dtype=float)
        self.problem = MixedProblem(
            link=link,
            y=np.asarray(fixed.response.codes, dtype=np.intp),
            X=np.asarray(fixed.location.matrix, dtype=float),
            offset=np.asarray(fixed.offset, dtype=float),
            weights=np.asarray(fixed.weights, dtype=float),
            jacobian=jac,
            terms=tuple(TermArrays(t.matrix, t.codes, t.n_levels) for t in self.terms),
        )
        self.objective = MixedObjective(self.problem)
        self.threshold = options.threshold
        self.param_names = family.parameter_names(options.threshold, self.levels) + list(
            fixed.location.names
        )
        self.variance_names = _variance_names(self.terms)
        self.has_offset = bool(np.any(fixed.offset != 0))
        #: the DataFrame of ``from_formula`` (the margins' estimation rows); not pickled
        self.source_data: pd.DataFrame | None = None
        #: the weights column of ``from_formula``, if the weights were a column name
        self.source_weights: str | None = None
        #: the caller's name for the data (the summary's ``data:`` line, as R's)
        self.data_name: str | None = None

    @classmethod
    def from_formula(
        cls,
        formula: str,
        data: object,
        *,
        nominal: object = None,
        scale: object = None,
        weights: object = None,
        offset: object = None,
        context: object = None,
        subset: object = None,
        **options: object,
    ) -> OrdinalMixedModel:
        """Build a mixed model from ``"y ~ fixed + (expr | group)"``.

        Parameters
        ----------
        formula : str
            Random terms as lme4/clmm: ``(1|g)``, ``(1|a) + (1|b)`` (crossed),
            ``(1|a/b)`` and ``(1|a:b)`` (nested), ``(1 + x|g)`` (correlated slopes),
            ``(1|g) + (0 + x|g)`` (uncorrelated).
        data : pandas.DataFrame
        nominal, scale : None
            Not available with random effects yet (a :class:`SpecificationError`).
        weights, offset : str or array-like, optional
        context : mapping, optional
        subset : boolean array or Series, optional
            The rows to fit (R's ``subset=``; see ``OrdinalModel.from_formula``).
        **options
            ``link`` (standard links), ``threshold``, ``levels``, ``missing``,
            ``collinear``.

        Returns
        -------
        OrdinalMixedModel
        """
        if nominal is not None or scale is not None:
            raise SpecificationError(
                "nominal and scale effects are not available with random effects yet; "
                "fit the clmm without them, or the clm without the random terms"
            )
        opts = ModelOptions.from_keywords(options)
        captured = used_context(
            context,
            [*formula_parts(formula), weights, offset],
            getattr(data, "columns", ()),
            n_rows=len(data) if isinstance(data, pd.DataFrame) else None,
        )
        design = mixed_design_from_formula(
            formula,
            data,
            weights=weights,
            offset=offset,
            context=captured,
            options=opts.design_options(),
            subset=subset,
        )
        model = cls(design, opts, captured)
        if isinstance(data, pd.DataFrame):
            model.source_data = data
            model.source_weights = weights if isinstance(weights, str) else None
        return model

    def __getstate__(self) -> dict[str, object]:
        state = self.__dict__.copy()
        state["source_data"] = None  # the caller's DataFrame stays behind
        return state

    @property
    def n_rows(self) -> int:
        """Rows used."""
        return int(self.problem.y.shape[0])

    def loglike(self, params: FloatArray, nagq: int = 1) -> float:
        """Approximate marginal log-likelihood at ``(alpha, beta, log-Cholesky)``.

        Parameters
        ----------
        params : ndarray
        nagq : int
            1 = Laplace; more = adaptive Gauss-Hermite (one scalar random intercept).

        Returns
        -------
        float
        """
        nagq = self._check_nagq(nagq)
        params = self._check_start(params, "params")
        return -self.objective.value(params, nagq)

    def score(self, params: FloatArray, nagq: int = 1) -> FloatArray:
        """Gradient of :meth:`loglike` at ``(alpha, beta, log-Cholesky)`` (statsmodels' name).

        Parameters
        ----------
        params : ndarray
        nagq : int

        Returns
        -------
        ndarray
        """
        params = self._check_start(params, "params")
        self.loglike(params, nagq)  # checks nagq
        return -self._objective_functions(self._check_nagq(nagq))[2](params)

    def start_params(self) -> FloatArray:
        """Marginal thresholds, zero fixed effects and ``log sd = 0`` (unit variances).

        The thresholds are ``F^{-1}`` of the weighted cumulative proportions, fitted to the
        threshold structure by least squares.
        """
        p = self.problem
        counts = np.bincount(p.y, p.weights, minlength=len(self.levels))
        cum = np.clip(np.cumsum(counts)[:-1] / counts.sum(), 1e-6, 1 - 1e-6)
        theta = np.asarray(p.link.ppf(cum), dtype=float)
        theta = np.maximum.accumulate(theta + 1e-3 * np.arange(theta.size))
        alpha = np.linalg.lstsq(p.jacobian, theta, rcond=None)[0]
        return np.concatenate([alpha, np.zeros(p.n_beta), np.zeros(p.n_var)])

    def _clm_start(
        self, fg: Callable[[FloatArray], tuple[float, FloatArray]]
    ) -> tuple[FloatArray, FloatArray | None]:
        r"""Start values from the clm fit, and an inverse-Hessian guess for BFGS.

        With a random intercept of SD ``sigma`` the conditional effects are the
        marginal (clm) ones times ``\sqrt{1 + \sigma^2 / v}``, ``v`` the
        variance of the link's latent distribution (``pi^2/3`` for logit), so
        the clm estimates scaled for ``sigma = 1`` start near the optimum.  The
        Hessian guess is the clm's observed information divided by that factor
        squared for the fixed block, and finite differences of the gradient
        for the variance parameters' rows; BFGS then needs a fraction of the
        iterations it needs from the identity.  Falls back to
        :meth:`start_params` (and BFGS' identity) when the clm fit fails or the
        guess is not positive definite.
        """
        fallback = self.start_params(), None
        clm = self._clm_fit()
        if clm is None:
            return fallback
        inflation = self._clm_inflation()
        x0 = self._scaled_clm_start(clm.x)
        k, k_fixed = x0.size, clm.x.size
        hessian = np.zeros((k, k))
        hessian[:k_fixed, :k_fixed] = np.asarray(clm.evaluation.hessian) / inflation
        _, g0 = fg(x0)
        for j in range(k_fixed, k):
            step = np.zeros(k)
            step[j] = _START_STEP
            column = (fg(x0 + step)[1] - g0) / _START_STEP
            hessian[:, j] = column
            hessian[j, :] = column
        try:
            inverse = np.linalg.inv(hessian)
            inverse = 0.5 * (inverse + inverse.T)
            np.linalg.cholesky(inverse)
        except np.linalg.LinAlgError:
            return x0, None
        return x0, inverse

    def _clm_fit(self) -> Any:
        """The clm fit of the fixed effects alone (a Newton result), or ``None`` if it fails."""
        family = self.options.family_object()
        evaluator = InMemoryEvaluator.from_design(self.design.fixed, family, self.problem.jacobian)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                clm = evaluator.newton(evaluator.start_params(), NewtonOptions())
        except OrdstatsError:
            return None
        if not clm.converged or clm.x.size != self.problem.n_alpha + self.problem.n_beta:
            return None
        return clm

    def _clm_inflation(self) -> float:
        """``1 + 1 / v``: the conditional over the marginal effects squared at ``sigma = 1``."""
        return 1.0 + 1.0 / _LATENT_VARIANCE.get(self.problem.link.name, np.inf)

    def _scaled_clm_start(self, clm_params: FloatArray) -> FloatArray:
        """The clm estimates scaled for a unit random-effect SD, variance parameters 0."""
        scaled = np.asarray(clm_params, dtype=float) * np.sqrt(self._clm_inflation())
        return np.concatenate([scaled, np.zeros(self.problem.n_var)])

    def clm_start(self) -> FloatArray:
        """Start values: the clm fit's estimates scaled for a unit random-effect SD.

        With a random intercept of SD ``sigma`` the conditional effects are the
        marginal (clm) ones times ``sqrt(1 + sigma^2 / v)``, ``v`` the variance of the
        link's latent distribution; the variance parameters start at 0 (unit SDs).
        Falls back to :meth:`start_params` when the clm fit fails.

        Returns
        -------
        ndarray
            ``(alpha, beta, variance parameters)``.
        """
        clm = self._clm_fit()
        return self.start_params() if clm is None else self._scaled_clm_start(clm.x)

    def _check_nagq(self, nagq: int) -> int:
        if isinstance(nagq, (int, np.integer)) and not isinstance(nagq, bool) and nagq < 0:
            raise SpecificationError(
                f"nagq must be an integer from 1 to {MAX_NAGQ}; got {nagq!r} (R's negative "
                "nAGQ, non-adaptive Gauss-Hermite quadrature, is not available: use the "
                "adaptive rule, nagq=K)"
            )
        if (
            isinstance(nagq, bool)
            or not isinstance(nagq, (int, np.integer))
            or not 1 <= nagq <= MAX_NAGQ
        ):
            raise SpecificationError(
                f"nagq must be an integer from 1 to {MAX_NAGQ} (1 is the Laplace "
                f"approximation, as R's nAGQ = 0 or 1); got {nagq!r}"
            )
        if nagq > 1 and (len(self.terms) != 1 or self.terms[0].q != 1):
            raise SpecificationError(
                "adaptive Gauss-Hermite quadrature (nagq > 1) needs a single scalar random "
                "term such as (1|judge); use the Laplace approximation (nagq=1)"
            )
        return int(nagq)

    def _check_start(self, start_params: object, role: str = "start_params") -> FloatArray:
        """``start_params`` (or ``params``) as a float vector of the right length, or an error."""
        names = self.param_names + self.variance_names
        try:
            x0 = np.asarray(start_params, dtype=float)
        except (TypeError, ValueError):
            raise SpecificationError(
                f"{role} must be {len(names)} numbers ({', '.join(names)}); got {start_params!r}"
            ) from None
        if x0.shape != (len(names),) or not np.all(np.isfinite(x0)):
            raise SpecificationError(
                f"{role} must be {len(names)} finite numbers, in the order "
                f"{', '.join(names)}; got shape {x0.shape}"
                + ("" if x0.shape != (len(names),) else " with non-finite values")
            )
        return x0

    def fit(
        self,
        nagq: int = 1,
        start_params: FloatArray | None = None,
        maxiter: int = 1000,
        gradtol: float = 1e-7,
        *,
        gtol: float | None = None,
        prior: object = None,
        disp: bool | None = None,
        cov_type: str = "nonrobust",
        cov_kwds: dict[str, Any] | None = None,
        **others: Any,
    ) -> Any:
        """Fit by maximising the Laplace (or AGQ) approximate marginal likelihood.

        Parameters
        ----------
        nagq : int
            Quadrature nodes, R's ``nAGQ``: 1 (the Laplace approximation) or, for a
            single scalar random term, 2 to 100 (adaptive Gauss-Hermite).  R's
            negative ``nAGQ`` (non-adaptive quadrature) is not available.
        start_params : ndarray, optional
            ``(alpha, beta, log-Cholesky)``; default: the clm estimates scaled for a
            unit random-effect SD (falling back to :meth:`start_params`).
        maxiter : int
            BFGS iterations.
        gradtol : float
            Convergence: the largest absolute gradient of the approximate
            log-likelihood, a positive finite number (R's ``gradTol``, the name the
            clm fit uses too).  The fit converges when it is below ``10 * gradtol``
            after the Newton steps, at a finite log-likelihood.
        gtol : float, optional
            Former name of ``gradtol``; still accepted with a ``FutureWarning``.
        disp : bool, optional
            Print a line (the negative approximate log-likelihood and the
            largest absolute gradient) each time BFGS reaches a lower value,
            about once per iteration, as the clm fit's ``disp=True`` and R's
            ``clmm.control(trace = 1)``; nothing by default or with ``disp=False``.
        prior : optional
            A Bayesian fit with brms' priors (``ordstats.prior(...)``, a list or dict
            of them, or ``"default"``): returns the posterior mode of the thresholds,
            slopes and log standard deviations under the Laplace/AGQ marginal
            likelihood, a :class:`~ordstats.results.posterior.PosteriorMode`
            (:mod:`ordstats.estimation.bayes`).
        cov_type : str
            Only ``"nonrobust"``, the inverse observed information of the
            approximate likelihood (as R's clmm); accepted so that the clm fit's
            call works, other values are refused.
        cov_kwds : dict, optional
            Refused: a fit with random terms has no sandwich or cluster covariance.
        **others
            Refused with the keywords this fit takes: the options of the fit
            without random terms (``method``, ``check_separation``, ...) are not
            this fit's (Python's own error would name the class).

        Returns
        -------
        MixedResults
            With ``prior``: a :class:`~ordstats.results.posterior.PosteriorMode`.

        Raises
        ------
        SpecificationError
            For ``nagq``, ``start_params``, ``maxiter`` or ``gradtol`` out of range,
            start values at which the log-likelihood is not finite, or a
            ``cov_type`` other than ``"nonrobust"`` (or ``cov_kwds``), ``penalty``
            (Firth's penalty is not available with random terms), or another
            keyword.
        """
        if "penalty" in others:  # the clm fit's Firth penalty: say why, not "unknown"
            raise SpecificationError(
                "fit(penalty=...) is not available for a model with random terms (clmm): "
                "Firth's penalty is built for models without them; fit the model without "
                "them, or shrink with fit(prior=...) (a Bayesian mode)"
            )
        refuse_unknown_options("fit", OrdinalMixedModel.fit, others)
        _refuse_sandwich(cov_type, cov_kwds)
        if disp is not None:
            check_flag("disp", disp)
        with numeric_threads():
            gradtol = _gradtol(gradtol, gtol, 1e-7, maxiter)
            nagq = self._check_nagq(nagq)
            bayes.refuse_monotonic_ml(self)
            if prior is not None:
                start = None if start_params is None else self._check_start(start_params)
                return bayes.fit_mode(self, prior, start_params=start, nagq=nagq)
            self._refuse_two_level_groups()
            self._warn_too_many_effects()
            f, fg, grad, analytic = self._objective_functions(nagq)
            inverse_hessian: FloatArray | None = None
            if start_params is None:
                x0, inverse_hessian = self._clm_start(fg)
            else:
                x0 = self._check_start(start_params)
            f0 = f(x0)
            if not np.isfinite(f0):
                raise SpecificationError(
                    "the approximate log-likelihood is not finite at the start values (the "
                    "thresholds must increase); give other start_params"
                )
            # the finite-difference gradient (and the Hessian behind the SEs) cannot
            # resolve less than its rounding noise; BFGS stops there too, since its
            # line search only loses time below it, and Newton steps on that Hessian finish
            tol = max(gradtol, 100 * np.finfo(float).eps * abs(f0) / _STEP)
            # iterate in z = c x, c the slopes' column sizes where far from 1 (x * 1e-200
            # gave a gradient of 1e-200 there: BFGS stopped at once, "converged")
            c = self._parameter_scale(x0.size)
            f, fg, grad = _in_scaled_parameters(f, fg, grad, c)
            if inverse_hessian is not None:
                inverse_hessian = inverse_hessian * np.outer(c, c)
            res = _bfgs(_traced(fg) if disp else fg, x0 * c, tol, maxiter, inverse_hessian)
            z = res.x
            boundary = self._boundary(z / c)
            free = _free_index(len(z), self.problem.n_alpha + self.problem.n_beta, boundary)
            hessian = _curvature(f, grad, z, analytic)
            z_bfgs = z
            z, converged, g = _newton_polish(grad, f, z, free, hessian, tol)
            if np.max(np.abs(z - z_bfgs), initial=0.0) > _POLISH_MOVE:
                # BFGS stopped short (a failed line search) and Newton went on: the
                # SEs from the Hessian there were 0.5% off (soup, (1|RESP) + (1|DAY:PROD))
                hessian = _curvature(f, grad, z, analytic)
            with np.errstate(over="ignore"):  # d2f/dx2 = c d2f/dz2 c
                x, hessian = z / c, hessian * np.outer(c, c)
            llf = -f(z)
            converged = converged and bool(np.isfinite(llf))
            if not converged:
                warnings.warn(
                    f"the mixed model did not converge (max |gradient| {np.max(np.abs(g)):.2g}); "
                    + (self._laplace_breakdown(x) if nagq == 1 else "")
                    + "try other start_params or a simpler random structure",
                    ConvergenceWarning,
                    stacklevel=user_stacklevel(),
                )
            self._warn_separation(
                x[self.problem.n_alpha : self.problem.n_alpha + self.problem.n_beta], converged
            )
            self._warn_singular(boundary)
            info = FitInfo(
                converged=converged,
                code=0 if converged else 1,
                message="converged" if converged else f"not converged (BFGS: {res.message})",
                n_iter=int(res.nit),
                n_halvings=0,
                max_grad=float(np.max(np.abs(g))) if g.size else 0.0,
                method="bfgs",
            )
            return MixedResults(
                self, x, hessian, llf, nagq, info, self.objective.n_evaluations, boundary
            )

    def _warn_separation(self, beta: FloatArray, converged: bool) -> None:
        """Warn when the fixed effects separate the response (flexible thresholds).

        A direction in which no row's probability falls raises every row's
        likelihood for each value of the random effects, so the marginal likelihood
        too: the estimates along it do not exist (R's clmm says its Hessian is
        singular).  The check is the clm's linear programme on the fixed part, run
        as the clm's: always on small data, on larger data only when the fit shows
        signs of divergence (an effect of many of its column's SDs, or no convergence).
        """
        p = self.problem
        if self.threshold != "flexible" or p.X.shape[1] == 0:
            return
        with np.errstate(over="ignore", invalid="ignore"):
            effect = np.abs(beta) * p.X.std(axis=0)
        if not separation_check_due(p.X.shape[0], effect, converged):
            return
        used = p.weights > 0
        found = detect_separation(p.y[used], p.X[used], len(self.levels))
        q = len(self.levels) - 1
        names = [self.param_names[p.n_alpha + j - q] for j in found.diverging if j >= q]
        if found.separated and names:
            warnings.warn(
                "complete or quasi-complete separation by the fixed effects: the likelihood "
                f"keeps increasing as {', '.join(map(repr, names))} grow without bound, "
                "whatever the random effects, so their maximum-likelihood estimates do not "
                "exist and the reported values and standard errors are meaningless. Merge "
                "sparse categories, or drop or recode the separating variable",
                SeparationWarning,
                stacklevel=user_stacklevel(),
            )

    def _parameter_scale(self, n_params: int) -> FloatArray:
        """Powers of two ``c`` such that ``c x`` has slopes of columns of size about one.

        Only columns whose root mean square is outside ``[2^-10, 2^10]`` are
        scaled, so that other fits follow the same iterations as before.
        """
        c = np.ones(n_params)
        X = self.problem.X
        if X.shape[1]:
            with np.errstate(all="ignore"):  # squares of 1e-200 underflow: scale first
                big = np.max(np.abs(X), axis=0)
                rms = big * np.sqrt(np.mean(np.square(X / np.where(big > 0, big, 1.0)), axis=0))
            far = np.isfinite(rms) & (rms > 0) & ((rms < 2.0**-10) | (rms > 2.0**10))
            start = self.problem.n_alpha
            c[start : start + X.shape[1]][far] = np.exp2(np.round(np.log2(rms[far])))
            unrepresentable = np.flatnonzero(np.abs(np.log2(c)) > 480)
            if unrepresentable.size:
                names = ", ".join(repr(self.param_names[k]) for k in unrepresentable)
                warnings.warn(
                    f"the column(s) {names} are of a size (below 1e-144 or above 1e144) "
                    "whose slopes' variances floating point cannot hold: the estimates are "
                    "found in rescaled units, but standard errors will be NaN. Rescale "
                    "the column(s), e.g. multiply by a power of ten",
                    CollinearityWarning,
                    stacklevel=user_stacklevel(),
                )
        return c

    def _laplace_breakdown(self, x: FloatArray) -> str:
        """A hint when some group's ``h`` is locally convex at its mode (eq. 2's ``H`` < 1).

        With a link whose ``log P`` is not concave in ``eta`` (cauchit) a group's
        curvature at its mode can approach 0, where ``-1/2 log|H|`` and so the
        Laplace value grow without bound; adaptive quadrature stays accurate there.
        """
        blocks = self.objective.modes(x).diag_blocks
        if blocks is None or np.min(np.linalg.eigvalsh(blocks)) >= 1.0:
            return ""
        quadrature = "fit(nagq=10)" if self._scalar else "a link with concave log P (not cauchit)"
        return (
            "the Laplace approximation breaks down here (a group's conditional density is "
            f"nearly flat at its mode, which the link {self.problem.link.name!r} allows): "
            f"use {quadrature}, or "
        )

    @property
    def _scalar(self) -> bool:
        """Whether the random part is one scalar term, such as ``(1|judge)``."""
        return len(self.terms) == 1 and self.terms[0].q == 1

    def _objective_functions(
        self, nagq: int
    ) -> tuple[
        Callable[[FloatArray], float],
        Callable[[FloatArray], tuple[float, FloatArray]],
        Callable[[FloatArray], FloatArray],
        bool,
    ]:
        """The negative approximate log-likelihood, with its gradient, and whether it is analytic.

        The gradient is analytic: for one scalar random term in O(n p), with
        the Laplace approximation (:func:`~ordstats.families.mixed.laplace_gradient`)
        or adaptive quadrature (:func:`~ordstats.families.mixed.agq_gradient`);
        for any other terms with at most
        :data:`~ordstats.families.mixed.MAX_DENSE_RANDOM_EFFECTS` random effects
        through the dense ``H^{-1}``
        (:func:`~ordstats.families.mixed.laplace_gradient_general`); beyond that,
        central differences.
        """

        def f(x: FloatArray) -> float:
            return self.objective.value(x, nagq)

        scalar = self._scalar
        analytic = nagq > 1 or scalar or self.problem.n_re <= MAX_DENSE_RANDOM_EFFECTS
        if analytic:

            def fg(x: FloatArray) -> tuple[float, FloatArray]:
                if nagq > 1:  # one scalar term (checked by _check_nagq)
                    return agq_gradient(self.objective, x, nagq)
                if scalar:
                    return laplace_gradient(self.objective, x)
                return laplace_gradient_general(self.objective, x)

            def grad(x: FloatArray) -> FloatArray:
                return fg(x)[1]

        else:

            def fg(x: FloatArray) -> tuple[float, FloatArray]:
                return f(x), _central_gradient(f, x)

            def grad(x: FloatArray) -> FloatArray:
                return _central_gradient(f, x)

        return f, fg, grad, analytic

    @numeric_threads()
    def fit_with_held(
        self,
        index: int,
        value: float,
        start: FloatArray,
        nagq: int = 1,
        gradtol: float = 1e-6,
        *,
        gtol: float | None = None,
    ) -> tuple[float, FloatArray]:
        """Maximise the approximate log-likelihood with ``params[index]`` held at ``value``.

        The profile likelihood of one parameter (R's ``profile.clmm2`` for the
        random-effect SD) is this maximum as a function of ``value``.

        Parameters
        ----------
        index : int
            Position in ``(alpha, beta, log-Cholesky)``.
        value : float
        start : ndarray
            Full parameter vector to start from (its ``index`` entry is replaced).
        nagq : int
        gradtol : float
            BFGS tolerance on the free parameters' gradient.
        gtol : float, optional
            Former name of ``gradtol`` (a ``FutureWarning``).

        Returns
        -------
        llf : float
            The maximised approximate log-likelihood.
        params : ndarray
            The full parameter vector at that maximum.
        """
        gradtol = _gradtol(gradtol, gtol, 1e-6)
        nagq = self._check_nagq(nagq)
        _, fg, _, _ = self._objective_functions(nagq)
        full = np.asarray(start, dtype=float).copy()
        full[index] = value
        free = np.flatnonzero(np.arange(full.size) != index)

        def fg_free(z: FloatArray) -> tuple[float, FloatArray]:
            full[free] = z
            value_, gradient = fg(full)
            return value_, gradient[free]

        res = optimize.minimize(
            fg_free,
            full[free],
            jac=True,
            method="BFGS",
            options={"gtol": gradtol, "maxiter": 500},
        )
        full[free] = res.x
        return -float(res.fun), full.copy()

    def sd_positions(self, term: int, component: int) -> tuple[int, list[int]]:
        """Positions in the parameters of ``log L_t[c, c]`` and of ``L_t[c, e]``, ``e < c``.

        The SD of component ``c`` of term ``t`` is ``|L_t[c, :]|`` (the norm of
        row ``c`` of its Cholesky factor), so these are the parameters it depends on.
        """
        qs = [t.q for t in self.terms]
        start = self.problem.n_alpha + self.problem.n_beta + n_variance_params(qs[:term])
        q = qs[term]
        rows, cols = np.tril_indices(q, -1)
        order = np.lexsort((rows, cols))  # column-major, as cholesky_factors
        off = {(int(rows[k]), int(cols[k])): start + q + i for i, k in enumerate(order)}
        return start + component, [off[(component, e)] for e in range(component)]

    @numeric_threads()
    def fit_with_held_sd(
        self,
        term: int,
        component: int,
        log_sd: float,
        start: FloatArray,
        nagq: int = 1,
        gradtol: float = 1e-6,
        *,
        gtol: float | None = None,
    ) -> tuple[float, FloatArray]:
        r"""Maximise the approximate log-likelihood with one random-effect SD held fixed.

        For the first column of a term (and any scalar term) the SD is the
        parameter ``exp(log L[0, 0])`` itself (:meth:`fit_with_held`).  For
        column ``c > 0`` the row ``L[c, :c+1]`` of norm ``s`` is written as
        ``s (z, 1) / \sqrt{1 + |z|^2}`` with free ``z`` in ``R^c``, which keeps
        the diagonal positive, so the other parameters and ``z`` are optimised.

        Parameters
        ----------
        term, component : int
            Which term and which of its columns.
        log_sd : float
            ``log s``.
        start : ndarray
            Full parameter vector to start from.
        nagq : int
        gradtol : float
        gtol : float, optional
            Former name of ``gradtol`` (a ``FutureWarning``).

        Returns
        -------
        llf : float
        params : ndarray
            The full (log-Cholesky) parameter vector at that maximum.
        """
        gradtol = _gradtol(gradtol, gtol, 1e-6)
        diag, off = self.sd_positions(term, component)
        if not off:
            return self.fit_with_held(diag, log_sd, start, nagq, gradtol)
        nagq = self._check_nagq(nagq)
        _, fg, _, _ = self._objective_functions(nagq)
        full = np.asarray(start, dtype=float).copy()
        row = full[off] / np.exp(full[diag])  # z = L[c, :c] / L[c, c]
        free = np.setdiff1d(np.arange(full.size), [diag, *off])
        s = float(np.exp(log_sd))

        def place(x: FloatArray) -> FloatArray:
            z = x[free.size :]
            r = float(np.sqrt(1.0 + z @ z))
            full[free] = x[: free.size]
            full[off] = s * z / r
            full[diag] = log_sd - np.log(r)
            return z

        def fg_free(x: FloatArray) -> tuple[float, FloatArray]:
            z = place(x)
            value, gradient = fg(full)
            r2 = 1.0 + float(z @ z)
            r = np.sqrt(r2)
            # d off_e / d z_j = s (delta_ej / r - z_e z_j / r^3); d log L_cc / d z_j = -z_j / r^2
            jac_off = s * (np.eye(z.size) / r - np.outer(z, z) / r**3)
            grad_z = jac_off.T @ gradient[off] - gradient[diag] * z / r2
            return value, np.concatenate([gradient[free], grad_z])

        x0 = np.concatenate([full[free], row])
        res = optimize.minimize(
            fg_free, x0, jac=True, method="BFGS", options={"gtol": gradtol, "maxiter": 500}
        )
        place(res.x)
        return -float(res.fun), full.copy()

    def _warn_singular(self, boundary: list[int]) -> None:
        """Warn of a vector-valued term whose covariance ended singular.

        A diagonal of ``L_t`` at the boundary after the first says that column's
        effect is a multiple of the earlier ones' (a correlation of +-1) or has no
        variance; R's clmm reports such a fit without comment.
        """
        pos = 0
        for t in self.terms:
            held = [t.columns[c] for c in range(t.q) if pos + c in boundary]
            if t.q > 1 and held:
                warnings.warn(
                    f"singular fit: the covariance of ({t.expr}|{t.group}) is on its boundary "
                    f"(the effect of {', '.join(map(repr, held))} has SD 0 or a correlation "
                    "of +-1 with the term's earlier columns; its SEs are left out). The data "
                    "do not support this random structure: drop the column(s) from the term "
                    f"or fit them uncorrelated, e.g. (1|{t.group}) + (0 + x|{t.group})",
                    SpecificationWarning,
                    stacklevel=user_stacklevel(),
                )
            pos += t.q * (t.q + 1) // 2

    def _warn_too_many_effects(self) -> None:
        """Warn when the random effects are as many as the rows (R's clmm warns too).

        With one row per level an intercept's effect is confounded with the link's
        own error: under probit ``F(theta - eta - b)``, ``b ~ N(0, s^2)``, integrates
        to ``Phi((theta - eta) / sqrt(1 + s^2))``, so ``s`` is not identified, and the
        Laplace approximation, far off there, gives a spurious optimum (wine, probit,
        ``(1|row)``: log-likelihood -64.05 against the clm's -85.76, an SD of 15).
        """
        n_rows = self.problem.y.size
        counts = [(t, t.n_levels * t.q) for t in self.terms]
        if sum(q for _, q in counts) < n_rows:
            return
        listed = ", ".join(f"{q} in ({t.expr}|{t.group})" for t, q in counts)
        warnings.warn(
            f"the model has as many random effects as rows or more ({listed}; {n_rows} "
            "rows): levels of a single row cannot tell a random effect from the link's "
            "own error, so its variance is barely identified (under probit not at all) "
            "and the Laplace approximation can be far from the likelihood; group the "
            "rows into larger levels or drop the term (R's clmm warns likewise)",
            SpecificationWarning,
            stacklevel=user_stacklevel(),
        )

    def _refuse_two_level_groups(self) -> None:
        """Refuse a maximum-likelihood fit with a grouping factor of two levels, as R's clmm.

        Its variance would be estimated from two group effects: R's clmm stops
        (``all(sapply(gfl, nlevels) > 2)``). A Bayesian fit (``prior=``), whose
        prior on the SD makes such a model proper, is not refused.
        """
        for term in self.terms:
            if term.n_levels < 3:
                shown = ", ".join(repr(level) for level in term.levels)
                raise SpecificationError(
                    f"the grouping factor {term.group!r} of ({term.expr}|{term.group}) has 2 "
                    f"levels ({shown}) in the rows used: a variance cannot be estimated by "
                    "maximum likelihood from two groups (R's clmm refuses them too); enter "
                    "the factor as a fixed effect, or give a prior on the SD (fit(prior=...))"
                )

    def _boundary(self, x: FloatArray) -> list[int]:
        """Log-sd parameters (diagonals of ``L_t``) that ran to the boundary."""
        out, pos = [], 0
        var = x[self.problem.n_alpha + self.problem.n_beta :]
        for t in self.problem.terms:
            out += [pos + c for c in range(t.q) if np.exp(var[pos + c]) < BOUNDARY_SD]
            pos += t.q * (t.q + 1) // 2
        return out

    def __repr__(self) -> str:
        return f"<OrdinalMixedModel: {self.design.formula}, {self.n_rows} rows>"

    def __getattr__(self, name: str) -> Any:
        # a method of a model without random terms that a clmm does not have
        reason = _NOT_FOR_RANDOM_TERMS.get(name)
        if reason is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        raise NotAvailableForClmm(
            f"{name}() is not available for a model with random terms (clmm): {reason}"
        )


class NotAvailableForClmm(SpecificationError, AttributeError):
    """A method of a clm that a clmm lacks (an AttributeError too, for ``hasattr``)."""


_PENALISED = (
    "penalised fits (lasso, ridge, elastic net) are built for models without random "
    "terms; fit the model without them, or shrink with fit(prior=...) (a Bayesian mode)"
)
#: Methods of a model without random terms, and why a clmm has none.
_NOT_FOR_RANDOM_TERMS = {"fit_regularized": _PENALISED, "path": _PENALISED, "cv": _PENALISED}


def _traced(
    fg: Callable[[FloatArray], tuple[float, FloatArray]],
) -> Callable[[FloatArray], tuple[float, FloatArray]]:
    """``fg`` printing one line per point with a value lower than any before.

    BFGS evaluates the trial points of its line searches through ``fg`` too:
    those that improve on the best value so far are printed as well, so the
    lines are about one per iteration, not exactly.
    """
    best = [np.inf]
    count = [0]

    def traced(x: FloatArray) -> tuple[float, FloatArray]:
        value, gradient = fg(x)
        if value < best[0]:
            best[0] = value
            print_iteration(count[0], value, float(np.max(np.abs(gradient), initial=0.0)))
            count[0] += 1
        return value, gradient

    return traced


def _bfgs(
    fg: Callable[[FloatArray], tuple[float, FloatArray]],
    x0: FloatArray,
    gradtol: float,
    maxiter: int,
    inverse_hessian: FloatArray | None,
) -> optimize.OptimizeResult:
    """Run scipy's BFGS from ``x0`` with ``inverse_hessian`` (if given) as its first one."""
    if inverse_hessian is None:
        return optimize.minimize(
            fg, x0, jac=True, method="BFGS", options={"gtol": gradtol, "maxiter": maxiter}
        )
    return optimize.minimize(
        fg,
        x0,
        jac=True,
        method="BFGS",
        options={"gtol": gradtol, "maxiter": maxiter, "hess_inv0": inverse_hessian},
    )


def _refuse_sandwich(cov_type: str, cov_kwds: dict[str, Any] | None) -> None:
    """Refuse the clm fit's sandwich and cluster covariances for a model with random terms."""
    kind = canonical_cov_type(cov_type)
    if kind == "nonrobust" and cov_kwds is None:
        return
    raise SpecificationError(
        f"cov_type={cov_type!r}"
        + (f", cov_kwds={cov_kwds!r}" if cov_kwds is not None else "")
        + " is not available for a model with random terms: its standard errors come "
        "only from the inverse observed information (cov_type='nonrobust', the "
        "default, as R's clmm). The random terms already model the correlation within "
        "groups; for cluster-robust standard errors instead, drop the random terms and "
        "fit with cov_type='cluster', cov_kwds={'groups': <grouping column>}"
    )


def _gradtol(gradtol: object, gtol: object, default: float, maxiter: object = 0) -> float:
    """``gradtol`` (or its former name ``gtol``, with a FutureWarning), validated as clm's.

    It must be a positive finite number: an infinite tolerance would report
    convergence at the start values.  ``maxiter`` is validated with it.
    """
    if gtol is not None:
        if not (isinstance(gradtol, float) and gradtol == default):
            raise SpecificationError("give gradtol only (gtol is its former name), not both")
        warnings.warn(
            "gtol is now called gradtol, as in the clm fit (R's gradTol); gtol will be removed",
            FutureWarning,
            stacklevel=user_stacklevel(),
        )
        gradtol = gtol
    return newton_options(maxiter, gradtol, NewtonOptions().rel_tol).grad_tol


def _variance_names(terms: list[RandomTerm]) -> list[str]:
    names = []
    for t in terms:
        names += [f"log(sd):{t.group}:{c}" for c in t.columns]
        rows, cols = np.tril_indices(t.q, -1)
        for k in np.lexsort((rows, cols)):
            names.append(f"chol:{t.group}:{t.columns[rows[k]]},{t.columns[cols[k]]}")
    assert len(names) == n_variance_params([t.q for t in terms])
    return names


def _free_index(k: int, k_fixed: int, boundary: list[int]) -> np.ndarray:
    return np.array([i for i in range(k) if i - k_fixed not in boundary], dtype=np.intp)


#: step of the central-difference gradient
_STEP = 1e-5


def _central_gradient(f: object, x: FloatArray, h: float = _STEP) -> FloatArray:
    """Central differences ``(f(x + h e_k) - f(x - h e_k)) / 2h``."""
    g = np.empty_like(x)
    for k in range(x.size):
        e = np.zeros_like(x)
        e[k] = h
        g[k] = (f(x + e) - f(x - e)) / (2 * h)  # type: ignore[operator]
    return g


def _hessian(f: object, x: FloatArray, h: float = 1e-4) -> FloatArray:
    """Second central differences of ``f`` (error ``O(h^2)``)."""
    k = x.size
    H = np.empty((k, k))
    f0 = f(x)  # type: ignore[operator]
    for i in range(k):
        ei = np.zeros(k)
        ei[i] = h
        H[i, i] = (f(x + ei) - 2 * f0 + f(x - ei)) / h**2  # type: ignore[operator]
        for j in range(i):
            ej = np.zeros(k)
            ej[j] = h
            H[i, j] = H[j, i] = (
                f(x + ei + ej) - f(x + ei - ej) - f(x - ei + ej) + f(x - ei - ej)  # type: ignore[operator]
            ) / (4 * h**2)
    return H


#: a Newton polish that moves a parameter further than this recomputes the Hessian
_POLISH_MOVE = 1e-5


def _curvature(
    f: Callable[[FloatArray], float],
    grad: Callable[[FloatArray], FloatArray],
    z: FloatArray,
    analytic: bool,
) -> FloatArray:
    """The symmetrised Hessian of ``f`` at ``z``: differences of ``grad`` if it is analytic."""
    hessian = _jacobian(grad, z) if analytic else _hessian(f, z)
    return np.asarray(0.5 * (hessian + hessian.T), dtype=np.float64)


def _jacobian(grad: object, x: FloatArray, h: float = 1e-5) -> FloatArray:
    """Forward differences of a gradient: the Hessian (column ``k`` from ``x + h_k e_k``).

    Error ``O(h_k)``: ample for standard errors, at half the cost of central
    differences.  The step is ``h``, or ``h_k = 10 h / sqrt(H_kk)`` (of the first
    differences, 1e-4 standard errors) where that is ten times smaller: a slope
    of ``x * 1e4`` has a standard error near ``1e-5``, and a step of ``1e-5``
    would move it by a standard error (its SE was off by 1%).
    """
    g0 = grad(x)  # type: ignore[operator]

    def column(k: int, step: float, central: bool = False) -> FloatArray:
        e = np.zeros_like(x)
        e[k] = step
        if central:
            return (grad(x + e) - grad(x - e)) / (2 * step)  # type: ignore[operator]
        return (grad(x + e) - g0) / step  # type: ignore[operator]

    steps = np.full(x.size, h)
    cols = [column(k, h) for k in range(x.size)]
    for k in range(x.size):
        curvature = cols[k][k]
        if not (np.isfinite(curvature) and curvature > 0):
            continue
        step = 10 * h / np.sqrt(curvature)  # 1e-4 standard errors
        if step < h / 10:  # never larger: a variance near its boundary would leave it
            steps[k] = step
            cols[k] = column(k, step)
    hessian = np.column_stack(cols)
    if _ill_conditioned(hessian):
        # x * 1e-3 + 3: the slope's variance is a small difference of large entries
        # (a Schur complement), where the O(h) error counts: central differences, O(h^2)
        hessian = np.column_stack([column(k, steps[k], central=True) for k in range(x.size)])
    return hessian


def _in_scaled_parameters(
    f: Callable[[FloatArray], float],
    fg: Callable[[FloatArray], tuple[float, FloatArray]],
    grad: Callable[[FloatArray], FloatArray],
    c: FloatArray,
) -> tuple[
    Callable[[FloatArray], float],
    Callable[[FloatArray], tuple[float, FloatArray]],
    Callable[[FloatArray], FloatArray],
]:
    """The objective and its gradient as functions of ``z = c x`` (``d/dz = d/dx / c``)."""
    if np.all(c == 1.0):
        return f, fg, grad

    def f_z(z: FloatArray) -> float:
        return f(z / c)

    def fg_z(z: FloatArray) -> tuple[float, FloatArray]:
        value, g = fg(z / c)
        return value, g / c

    def grad_z(z: FloatArray) -> FloatArray:
        return grad(z / c) / c

    return f_z, fg_z, grad_z


def _ill_conditioned(hessian: FloatArray) -> bool:
    """Whether the equilibrated Hessian's condition number exceeds ``10^5``."""
    diag = np.abs(np.diag(hessian))
    if not np.all(np.isfinite(hessian)) or np.any(diag == 0):
        return False
    d = 1.0 / np.sqrt(diag)  # scaled one side at a time: diag ~ 1e-310 (x * 1e-200)
    with np.errstate(all="ignore"):
        scaled = (0.5 * (hessian + hessian.T) * d[:, None]) * d[None, :]
    if not np.all(np.isfinite(scaled)):
        return True
    eig = np.abs(np.linalg.eigvalsh(scaled))
    return bool(eig.min() < 1e-5 * eig.max())


#: Newton's step below which a fit whose gradient is below ``gradtol`` has converged
_STEP_TOL = 1e-6


def _newton_polish(
    grad: object,
    f: object,
    x: FloatArray,
    free: np.ndarray,
    hessian: FloatArray,
    gradtol: float,
    steps: int = 8,
) -> tuple[FloatArray, bool, FloatArray]:
    """Newton steps on the free parameters with a fixed Hessian and the given gradient."""
    x = x.copy()
    H = hessian[np.ix_(free, free)]
    g = np.zeros(0)
    if free.size == 0:
        return x, True, g
    positive = bool(np.all(np.linalg.eigvalsh(H) > 0))
    for _ in range(steps):
        g = grad(x)[free]  # type: ignore[operator]
        if not positive:
            break
        step = np.zeros_like(x)
        step[free] = np.linalg.solve(H, g)
        # a small gradient is not enough where the likelihood is flat (constant weights
        # of 1e-5 scale it down: BFGS stopped at the start, 4e-5 of logLik short of R's
        # maximum); stop when the step is negligible too, as R's relTol
        if np.max(np.abs(g)) < gradtol and np.max(np.abs(step)) < _STEP_TOL:
            break
        f0 = f(x)  # type: ignore[operator]
        t = 1.0
        while t > 1e-4 and f(x - t * step) > f0 + 1e-12 * abs(f0):  # type: ignore[operator]
            t /= 2
        if t <= 1e-4:
            break
        x = x - t * step
    return x, bool(np.max(np.abs(g)) < 10 * gradtol), g
