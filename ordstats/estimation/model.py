"""Ordinal regression models: specification and fitting.

:class:`OrdinalModel` holds a checked design (from a formula or from arrays) and
fits it by Newton-Raphson with analytic derivatives.  Fitting returns a new
:class:`~ordstats.results.fitted.OrdinalResults`; the model itself never changes.  The
cumulative link model is the default family; the sequential and
adjacent-category families live in :mod:`ordstats.families`.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import scipy.sparse as sp

from ordstats._typing import CollinearAction, FloatArray, MissingAction
from ordstats.core.links import Link, get_link
from ordstats.core.solver import NewtonOptions, NewtonResult, newton
from ordstats.core.thresholds import threshold_jacobian
from ordstats.data.sources import is_source
from ordstats.design import Design, design_from_arrays, design_from_formula
from ordstats.errors import ConvergenceWarning, SeparationWarning, SpecificationError
from ordstats.families import DEFAULT_FAMILY, Family, get_family
from ordstats.families.cumulative.banded import (
    BandedEvaluation,
    banded_applicable,
    banded_newton_step,
)
from ordstats.families.cumulative.likelihood import CLMData, Evaluation, evaluate, prepare
from ordstats.families.cumulative.prediction import crossing_rows, threshold_matrix
from ordstats.families.cumulative.start import initial_params
from ordstats.results.covariance import canonical_cov_type
from ordstats.results.fitted import FitInfo, OrdinalResults

__all__ = ["OrdinalModel"]

#: Run the separation LP on every fit with at most this many rows; larger data
#: sets are checked only when the fit shows signs of divergence, and only up to
#: ``_SEPARATION_MAX_ROWS`` rows (beyond that the LP costs more than the fit).
_SEPARATION_ALWAYS_ROWS = 5000
_SEPARATION_MAX_ROWS = 200_000
#: A location effect larger than this many standard deviations of its column
#: (on the linear-predictor scale) is a sign of divergence.
_DIVERGENCE_STD_EFFECT = 15.0
#: With more thresholds than this (flexible, no nominal effects) the threshold
#: Jacobian is stored sparse and the Hessian is handled as tridiagonal plus a
#: dense border (:mod:`ordstats.families.cumulative.banded`) unless ``fit(banded=False)``.
BANDED_MIN_THRESHOLDS = 50


class OrdinalModel:
    r"""Regression model for an ordinal response: cumulative, sequential or adjacent.

    Cumulative as R's ``ordinal::clm``; sequential and adjacent-category as
    VGAM's ``sratio``, ``cratio`` and ``acat``.  The default cumulative link model is

    .. math::

        P(Y \le j \mid x, w, z) = F\!\left(\frac{\theta_j + w^\top\gamma_j
        - x^\top \beta - o}{\exp(z^\top \zeta)}\right), \quad j = 1, \dots, K - 1

    with thresholds ``theta_1 < ... < theta_{K-1}`` (``theta = J alpha`` for a
    threshold structure), location effects ``beta`` (a positive ``beta`` moves
    probability to higher categories), optional nominal effects ``gamma_j``
    (category-specific: partial proportional odds) and log-scale effects
    ``zeta``, offset ``o`` and the link's distribution ``F`` (for the flexible
    links its shape parameter ``lambda`` is estimated too).

    The other families have ``K - 1`` linear predictors with intercepts
    ``alpha_j`` (named ``"1:2"``, ``"2:3"``, ... after the levels of the step, VGAM's
    ``(Intercept):j``) and shared slopes ``b``, ``eta_j = alpha_j + x'b + o``,
    exactly as VGAM with ``parallel = TRUE``, so the coefficients equal VGAM's.
    **Their signs differ between families**:

    ============  =======================================  ==========================
    family        ``reverse=False``                        ``reverse=True``
    ============  =======================================  ==========================
    ``sratio``    ``F(eta_j) = P(Y = j | Y >= j)``:        ``P(Y = j+1 | Y <= j+1)``:
                  positive slope = **lower** levels        positive = higher levels
    ``cratio``    ``F(eta_j) = P(Y > j | Y >= j)``:        ``P(Y <= j | Y <= j+1)``:
                  positive slope = **higher** levels       positive = lower levels
    ``acat``      ``eta_j = log P(Y = j+1) / P(Y = j)``:   ``log P(Y = j) / P(Y = j+1)``:
                  positive slope = **higher** levels       positive = lower levels
    ============  =======================================  ==========================

    Parameters
    ----------
    endog : array-like, pandas.Series or pandas.Categorical
        The ordinal response: an ordered Categorical (its order), numbers
        (sorted order), or labels with ``levels`` giving their order.
    exog : array-like or pandas.DataFrame, optional
        Numeric regressors *without* a constant column: the thresholds act as
        intercepts.  ``None`` fits the thresholds only.
    nominal, scale : array-like or pandas.DataFrame, optional
        Numeric regressors of nominal and log-scale effects (no constant).
        For sratio, cratio and acat, ``nominal`` gives category-specific
        (non-parallel) effects: ``eta_j = alpha_j + w'gamma_j + x'b`` (VGAM's
        ``parallel = FALSE ~ w``); scale effects are cumulative-only.
    family : {"cumulative", "sratio", "cratio", "acat"}
        The model (see above and :mod:`ordstats.families`).
    reverse : bool
        VGAM's ``reverse=`` for sratio, cratio and acat: the steps run from the
        top level down.  Not defined for the cumulative family.
    link : str or Link
        The inverse of ``F``: ``"logit"``, ``"probit"``, ``"cloglog"``,
        ``"loglog"``, ``"cauchit"``, or a flexible family.  ``"aranda-ordaz"``
        (logit at ``lambda = 1``,
        cloglog as ``lambda -> 0``) and ``"log-gamma"`` (probit at 0, cloglog at 1,
        loglog at -1) estimate ``lambda``; R's spellings are accepted.  sratio and
        cratio take the five standard links; ``acat`` is the adjacent-category
        *logit* model and takes ``"logit"`` only.
    weights : array-like, optional
        Non-negative frequency (case) weights, as R's ``weights=``.
    offset : array-like, optional
        Known term added to ``x'beta``.
    threshold : {"flexible", "equidistant", "symmetric", "symmetric2"}
        Threshold structure (cumulative family only; the others have one free
        intercept per step).
    levels : sequence, optional
        Order of the response levels, lowest first.
    missing : {"drop", "raise"}
        What to do with rows that have missing or non-finite values.
    collinear : {"drop", "raise"}
        What to do with aliased regressors.
    many_levels : bool
        Allow a response with more than 50 distinct levels.

    See Also
    --------
    OrdinalModel.from_formula : Build the model from a formula and a DataFrame.

    Examples
    --------
    >>> import ordstats
    >>> wine = ordstats.datasets.load("wine")
    >>> res = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    >>> round(res.llf, 4)
    -86.4919
    >>> res.params.round(3).tolist()
    [-1.344, 1.251, 3.467, 5.006, 2.503, 1.528]
    """

    def __init__(
        self,
        endog: Any,
        exog: Any = None,
        *,
        nominal: Any = None,
        scale: Any = None,
        family: str = "cumulative",
        reverse: bool = False,
        link: str | Link = "logit",
        weights: Any = None,
        offset: Any = None,
        threshold: str = "flexible",
        levels: Sequence[Any] | None = None,
        missing: MissingAction = "drop",
        collinear: CollinearAction = "drop",
        many_levels: bool = False,
    ) -> None:
        spec = get_family(family, link=link, reverse=reverse)
        design = design_from_arrays(
            endog,
            exog,
            nominal=nominal,
            scale=scale,
            weights=weights,
            offset=offset,
            levels=levels,
            missing=missing,
            collinear=collinear,
            many_levels=many_levels,
        )
        self._setup(design, family=spec, threshold=threshold)

    @classmethod
    def from_formula(
        cls,
        formula: str,
        data: Any,
        *,
        nominal: str | None = None,
        scale: str | None = None,
        family: str = "cumulative",
        reverse: bool = False,
        link: str | Link = "logit",
        weights: Any = None,
        offset: Any = None,
        threshold: str = "flexible",
        levels: Sequence[Any] | None = None,
        missing: MissingAction = "drop",
        collinear: CollinearAction = "drop",
        many_levels: bool = False,
        context: Any = None,
        chunksize: int | None = None,
    ) -> OrdinalModel:
        """Build a model from an R-style formula and a DataFrame (or data too large for memory).

        Factors get treatment contrasts with the first level as reference, so
        coefficient names (``"temp[T.warm]"``) and values match R's ``clm``.

        Parameters
        ----------
        formula : str
            ``"response ~ terms"``, e.g. ``"rating ~ temp * contact"``.
        data : pandas.DataFrame, str, path, list of paths, pyarrow dataset or dask DataFrame
            A DataFrame is fitted in memory.  A Parquet/CSV/Arrow file, directory
            or glob (``"ratings/*.parquet"``), a :class:`pyarrow.dataset.Dataset`
            or a Dask DataFrame is read in chunks at every Newton pass, so memory
            stays bounded by ``chunksize``; the result is the in-memory fit (see
            :class:`ordstats.estimation.chunked.ChunkedOrdinalModel`; location formulas
            and standard links only).
        nominal : str, optional
            One-sided formula of nominal effects, e.g. ``"~ contact"``:
            category-specific ("partial proportional odds") effects on the
            thresholds of the cumulative model, non-parallel effects
            ``gamma_j`` on ``eta_j`` for sratio, cratio and acat.
        scale : str, optional
            One-sided formula of log-scale effects, e.g. ``"~ temp"``
            (cumulative family only).
        family, reverse, link, threshold, levels, missing, collinear, many_levels
            As for :class:`OrdinalModel`.
        weights, offset : str or array-like, optional
            Column names of ``data`` or one value per row.
        context : mapping, optional
            Names that formula expressions may use (defaults to the caller's
            variables), e.g. ``{"np": numpy}``.
        chunksize : int, optional
            Rows per chunk for data read in chunks (default 100,000); with a
            DataFrame, fit it chunk by chunk too.

        Returns
        -------
        OrdinalModel
        """
        spec = get_family(family, link=link, reverse=reverse)
        if context is None:
            frame = sys._getframe(1)
            context = {**frame.f_globals, **frame.f_locals}
        if chunksize is not None or is_source(data):
            from ordstats.estimation.chunked import ChunkedOrdinalModel

            return ChunkedOrdinalModel.from_source(
                formula,
                data,
                chunksize=chunksize,
                link=link,
                weights=weights,
                offset=offset,
                threshold=threshold,
                levels=levels,
                missing=missing,
                collinear=collinear,
                many_levels=many_levels,
                context=context,
                nominal=nominal,
                scale=scale,
                family=spec,
            )
        design = design_from_formula(
            formula,
            data,
            nominal=nominal,
            scale=scale,
            weights=weights,
            offset=offset,
            levels=levels,
            missing=missing,
            collinear=collinear,
            many_levels=many_levels,
            context=context,
        )
        model = cls.__new__(cls)
        model._setup(design, family=spec, threshold=threshold, context=context)
        return model

    def _setup(
        self, design: Design, *, family: Family, threshold: str, context: Any = None
    ) -> None:
        self.design = design
        #: the :class:`~ordstats.families.Family` that fits and predicts
        self.family_spec = family
        #: ``"cumulative"``, ``"sratio"``, ``"cratio"`` or ``"acat"``
        self.family = family.name
        self.reverse = family.reverse
        self.link = family.link
        self.threshold = threshold
        self.formula_context = context
        levels = design.response.levels
        self.threshold_jacobian = _jacobian(threshold, len(levels) - 1, family.capabilities.banded)
        n = len(design.response.codes)
        self.data = CLMData(
            y=design.response.codes,
            n_levels=len(levels),
            X=design.location.matrix,
            weights=design.weights,
            offset=design.offset,
            link=self.link,
            threshold_jacobian=self.threshold_jacobian,
            nominal=design.nominal.matrix if design.nominal else np.empty((n, 0)),
            scale=design.scale.matrix if design.scale else np.empty((n, 0)),
        )
        self.problem = family.prepare(self.data)
        self.threshold_param_names = family.parameter_names(threshold, levels)
        self.nominal_names = list(design.nominal.names) if design.nominal else []
        self.exog_names = list(design.location.names)
        self.scale_names = list(design.scale.names) if design.scale else []
        self.param_names = (
            self.threshold_param_names
            + [f"{thr}:{term}" for term in self.nominal_names for thr in self.threshold_param_names]
            + self.exog_names
            + [f"scale:{term}" for term in self.scale_names]
            + (["lambda"] if self.problem.layout.n_lambda else [])
        )

    # -- descriptive ----------------------------------------------------------

    @property
    def levels(self) -> list[str]:
        """Response level labels, lowest first."""
        return list(self.design.response.levels)

    @property
    def endog_name(self) -> str:
        """Name of the response."""
        return self.design.response_name

    @property
    def nobs(self) -> float:
        """Number of observations: the sum of the weights (as R's ``nobs``)."""
        return float(self.data.weights.sum())

    @property
    def n_rows(self) -> int:
        """Rows used in the fit."""
        return self.data.n_obs

    @property
    def k_params(self) -> int:
        """Number of free parameters."""
        return self.problem.layout.n_params

    #: Where the rows are read from for chunked models (None: in memory).
    source: Any = None

    @property
    def response_counts(self) -> FloatArray:
        """Weighted number of observations per response level."""
        data = self.data
        return np.bincount(data.y, weights=data.weights, minlength=data.n_levels)

    @property
    def has_offset(self) -> bool:
        """Whether the model has a non-zero offset."""
        return bool(np.any(self.data.offset))

    @property
    def has_weights(self) -> bool:
        """Whether any weight differs from one."""
        return bool(np.any(self.data.weights != 1.0))

    def null_loglike(self) -> float:
        """Log-likelihood of the thresholds-only model on the same rows and weights."""
        if self.threshold == "flexible" and not self.has_offset:
            counts = self.response_counts
            return float(counts @ np.log(counts / counts.sum()))
        data, family = self.data, self.family_spec
        null = family.prepare(replace(data, X=np.empty((data.n_obs, 0))))
        solution = newton(lambda x: family.evaluate(null, x), family.initial_params(null))
        return -float(solution.evaluation.nll)

    def __repr__(self) -> str:
        spec = self.design.formula or f"{self.endog_name} ~ exog"
        fam = "" if self.family == DEFAULT_FAMILY else f"family={self.family_spec.label!r}, "
        return f"OrdinalModel({spec!r}, {fam}link={self.link.name!r}, nobs={self.nobs:g})"

    # -- likelihood -----------------------------------------------------------

    def _check_params(self, params: Any) -> FloatArray:
        arr = np.asarray(params, dtype=float)
        if arr.shape != (self.k_params,):
            raise SpecificationError(
                f"params must have {self.k_params} values ({', '.join(self.param_names)}); "
                f"got shape {arr.shape}"
            )
        return arr

    def evaluate(self, params: Any) -> Evaluation:
        """Evaluate the negative log-likelihood and its derivatives at ``params``."""
        return self.family_spec.evaluate(self.problem, self._check_params(params))

    def loglike(self, params: Any) -> float:
        """Log-likelihood at ``params`` (``-inf`` if the thresholds are disordered)."""
        return -self.evaluate(params).nll

    def score(self, params: Any) -> FloatArray:
        """Gradient of the log-likelihood at ``params``."""
        return -self.evaluate(params).gradient

    def hessian(self, params: Any) -> FloatArray:
        """Hessian of the log-likelihood at ``params`` (minus the observed information)."""
        return -self.evaluate(params).hessian

    @property
    def start_params(self) -> FloatArray:
        """Default starting values (marginal thresholds, zero effects)."""
        return self.family_spec.initial_params(self.problem)

    # -- fitting --------------------------------------------------------------

    def fit(
        self,
        start_params: Any = None,
        *,
        maxiter: int = 100,
        gradtol: float = 1e-6,
        reltol: float = 1e-6,
        disp: bool | None = None,
        check_separation: bool = True,
        cov_type: str = "nonrobust",
        cov_kwds: dict[str, Any] | None = None,
        banded: bool | None = None,
    ) -> OrdinalResults:
        """Fit the model by Newton-Raphson with analytic gradient and Hessian.

        Parameters
        ----------
        start_params : array-like, optional
            Starting values in the order of :attr:`param_names`.
        maxiter : int
            Maximum Newton iterations (R's ``maxIter``).
        gradtol : float
            Tolerance on ``max|gradient|`` (R's ``gradTol``).
        reltol : float
            Tolerance on the Newton step relative to the parameters (R's ``relTol``).
        disp : bool, optional
            Print one line per iteration.  For data read in chunks: a progress
            bar with one tick per pass when a terminal or notebook is watching
            (default), nothing with ``disp=False``.
        check_separation : bool
            Check for (quasi-)complete separation and mark diverging estimates.
        cov_type : {"nonrobust", "robust", "HC0", "HC1", "cluster", "expected"}
            Covariance of the estimates behind ``bse``, tests and the summary:
            the inverse observed information, a sandwich estimator (see
            :mod:`ordstats.results.covariance`) or the inverse expected information
            (``"expected"``, VGAM's standard errors).  The observed-information
            covariance stays available as ``nonrobust_covariance``.
        cov_kwds : dict, optional
            For ``"cluster"``: ``{"groups": labels}`` (a Series aligned on the
            data's index or one label per row used) and ``"use_correction"``.
        banded : bool, optional
            Treat the threshold block of the Hessian as tridiagonal (flexible
            thresholds without nominal effects; see :mod:`ordstats.families.cumulative.banded`), so
            that thousands of levels cost little more than a few.  Default: when
            there are more than 50 thresholds.  The estimates are the same.

        Returns
        -------
        OrdinalResults

        Warns
        -----
        ConvergenceWarning
            If the convergence criteria were not met.
        SeparationWarning
            If the data are separated, so that some estimates diverge.
        """
        kind = canonical_cov_type(cov_type)
        options = _newton_options(maxiter, gradtol, reltol)
        if start_params is not None:
            start = self._check_params(start_params)
        elif self.problem.layout.n_lambda:
            start = self._flexible_start(options)
        else:
            start = self.start_params
        solution = self._newton(start, options, disp=disp, banded=self._use_banded(banded))
        diverging = self._diverging(solution) if check_separation else []
        info = FitInfo.from_solution(solution, diverging, self._crossing(solution.x))
        _warn_fit(info)
        results = OrdinalResults(self, solution.x, solution.evaluation, info)
        if kind == "nonrobust":
            return results
        return results.get_robustcov_results(kind, cov_kwds)

    def _flexible_start(self, options: NewtonOptions) -> FloatArray:
        """Start a flexible link at the fit of the standard link it nests.

        Far from the optimum the joint Hessian in ``(theta, beta, lambda)`` is
        often indefinite, so the other parameters are first fitted with
        ``lambda`` fixed at its default (logit for Aranda-Ordaz, probit for
        log-gamma).
        """
        standard = get_link(self.link.nested_link)  # type: ignore[attr-defined]
        fixed = prepare(replace(self.data, link=standard))
        inner = newton(lambda x: evaluate(fixed, x), initial_params(fixed), options)
        return np.concatenate([inner.x, [self.link.lam]])  # type: ignore[attr-defined]

    def _crossing(self, params: FloatArray) -> tuple[Any, ...]:
        """Labels of fitted rows whose nominal effects make the cut-points cross.

        Only the cumulative model needs ordered cut-points; the intercepts of
        the other families are unconstrained.
        """
        lay = self.problem.layout
        if not lay.n_nominal_cols or not self.family_spec.ordered_cutpoints:
            return ()
        theta = threshold_matrix(params[lay.thresholds], self.threshold_jacobian, self.data.nominal)
        return tuple(self.design.row_index[crossing_rows(theta)])

    def _use_banded(self, banded: bool | None) -> bool:
        layout = self.problem.layout
        applicable = self.family_spec.capabilities.banded and banded_applicable(
            layout, self.threshold_jacobian
        )
        if banded and not applicable:
            raise SpecificationError(
                "banded=True needs the cumulative family with flexible thresholds and no "
                f"nominal effects; this model has family={self.family!r}, "
                f"threshold={self.threshold!r}. Use banded=None or False"
            )
        if banded is None:
            return applicable and layout.n_alpha > BANDED_MIN_THRESHOLDS
        return bool(banded)

    def _newton(
        self, start: FloatArray, options: NewtonOptions, *, disp: bool, banded: bool
    ) -> NewtonResult:
        """Run the Newton iterations from ``start`` (subclasses change where data live)."""
        callback = _print_iteration if disp else None
        family, problem = self.family_spec, self.problem
        if banded:
            return newton(
                lambda x: BandedEvaluation(family.evaluate(problem, x)),
                start,
                options,
                callback,
                linear_solve=banded_newton_step,
            )
        return newton(lambda x: family.evaluate(problem, x), start, options, callback)

    def _diverging(self, solution: NewtonResult) -> list[str]:
        """Names of the parameters that diverge because of separation, if any."""
        X = self.data.X
        if self.k_params == self.problem.layout.n_alpha or self.data.n_obs > _SEPARATION_MAX_ROWS:
            return []  # beyond _SEPARATION_MAX_ROWS the LP costs more than the fit
        beta = solution.x[self.problem.layout.beta]
        effect = np.abs(beta) * X.std(axis=0)
        suspicious = (not solution.converged) or bool(np.any(effect > _DIVERGENCE_STD_EFFECT))
        n_rows = self.data.n_obs
        if n_rows > _SEPARATION_MAX_ROWS or (not suspicious and n_rows > _SEPARATION_ALWAYS_ROWS):
            return []
        return [self.param_names[k] for k in self.family_spec.diverging_parameters(self.problem)]


def _jacobian(threshold: str, n_thresholds: int, banded: bool = True) -> Any:
    """Return the threshold Jacobian: a sparse identity for many flexible thresholds."""
    if banded and threshold == "flexible" and n_thresholds > BANDED_MIN_THRESHOLDS:
        return sp.eye_array(n_thresholds, format="csr")
    return threshold_jacobian(threshold, n_thresholds)


def _newton_options(maxiter: Any, gradtol: Any, reltol: Any) -> NewtonOptions:
    if isinstance(maxiter, bool) or not isinstance(maxiter, (int, np.integer)) or maxiter < 0:
        raise SpecificationError(f"maxiter must be a non-negative integer; got {maxiter!r}")
    for name, value in (("gradtol", gradtol), ("reltol", reltol)):
        if not isinstance(value, (int, float, np.floating)) or not value > 0:
            raise SpecificationError(f"{name} must be a positive number; got {value!r}")
    return NewtonOptions(max_iter=int(maxiter), grad_tol=float(gradtol), rel_tol=float(reltol))


def _print_iteration(iteration: int, nll: float, max_grad: float) -> None:
    print(f"iter {iteration:3d}  nll = {nll:.10g}  max|grad| = {max_grad:.3e}")


def _warn_fit(info: FitInfo) -> None:
    if info.crossing:
        shown = ", ".join(map(str, info.crossing[:5])) + (", ..." if len(info.crossing) > 5 else "")
        warnings.warn(
            f"not all thresholds are increasing for {len(info.crossing)} fitted row(s) "
            f"({shown}): the nominal effects imply negative probabilities there, so the fit "
            "is invalid. Simplify the nominal effects (fewer terms, or as location effects)",
            ConvergenceWarning,
            stacklevel=3,
        )
    if info.diverging:
        warnings.warn(
            "complete or quasi-complete separation: the likelihood keeps increasing as "
            f"{', '.join(map(repr, info.diverging))} grow without bound, so their maximum-"
            "likelihood estimates do not exist and the reported values and standard "
            "errors are meaningless. Merge sparse categories, drop or recode the "
            "separating variable, or use a penalised fit",
            SeparationWarning,
            stacklevel=3,
        )
    elif info.code != 0:
        warnings.warn(
            f"the fit did not converge ({info.message}; max|gradient| = {info.max_grad:.2e} "
            f"after {info.n_iter} iterations). Check the data for separation or rescale "
            "the predictors; fit(maxiter=...) allows more iterations",
            ConvergenceWarning,
            stacklevel=3,
        )
