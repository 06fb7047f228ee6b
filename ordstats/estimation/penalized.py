r"""Penalised fits of an :class:`~ordstats.OrdinalModel`: elastic net, paths, CV, Firth.

**Elastic net** (glmnet's and scikit-learn's scaling).  The estimates minimise

.. math::

    \frac{1}{n_w}\Bigl(-\ell(\theta, b)\Bigr)
    + \alpha \sum_j c_j \Bigl(\rho\, |s_j b_j| + \frac{1 - \rho}{2} (s_j b_j)^2\Bigr),
    \qquad n_w = \textstyle\sum_i w_i,                                   \tag{1}

over the thresholds/intercepts ``theta`` (never penalised), and the slopes
``b`` (location effects, penalty factor ``c_j = 1``; scale effects and a
flexible link's parameter are not penalised), with ``rho = L1_wt = l1_ratio``.
A nominal column's effects ``gamma_1, ..., gamma_q`` (one per cut-point) are
split into a common part and deviations, ``gamma_j = c + delta_j``: ``c``
carries factor 1, each ``delta_j`` factor ``nominal_weight``, so their penalty
is ``min_c [P(c) + nominal_weight sum_j P(gamma_j - c)]`` with ``P`` the
bracket of (1) (ordinalNet's semi-parallel model, :class:`PenaltySpec`).  ``s_j`` is 1, or with
``standardize=True`` the weighted standard deviation (divisor ``n_w``) of the
column, so the penalty acts on standardised columns exactly as glmnet's
``standardize = TRUE``; estimates are always on the original scale.  For
``K = 2`` and the logit link, (1) is glmnet's binomial objective with
``lambda = alpha`` and ``alpha = rho``, and scikit-learn's
``LogisticRegression(penalty="elasticnet", C=1 / (n_w alpha), l1_ratio=rho)``
(whose objective is ``n_w`` times (1)).
Case weights and offsets enter ``-l`` as in glmnet's ``weights`` and
``offset`` (checked to 1e-8 along paths and in ``cv.glmnet``'s losses);
glmnet's ``penalty.factor`` and ``intercept = FALSE`` have no counterpart
(slopes carry factor 1, thresholds are always estimated and never penalised).

**Ridge as MAP.**  With ``rho = 0``, (1) is ``n_w^{-1}`` times the negative
log posterior under independent Gaussian priors ``b_j ~ N(0, 1/(n_w alpha
c_j s_j^2))`` and flat priors on the thresholds, so the ridge estimate is the
posterior mode (MAP).

**Nominal (non-parallel) effects.**  With ``nominal_weight > 0`` their
deviations ``delta_j`` from a common effect are shrunk toward zero, i.e. toward
the parallel model.
For sratio, cratio and acat, when the same columns are also location effects
(``eta_j = alpha_j + x'(b + gamma_j)``) this is ordinalNet's semi-parallel
model (Wurm, Rathouz and Hanlon 2021): ``b`` the parallel part, ``gamma_j``
its penalised non-parallel deviations.

**Firth** (``fit(penalty="firth")``): maximise
``l(theta) + 1/2 log det I(theta)`` with ``I`` the *expected* information
(Jeffreys prior; Firth 1993), brglm2's ``type = "MPL_Jeffreys"``.  It solves
the mean-bias-reducing score (brglm2's ``AS_mean``, Kosmidis 2014's estimator
for cumulative links, ``bpolr``) only for canonical links, the binary logit and
the adjacent-category logit (``bracl``); for other links, e.g. probit or
cloglog, the two estimators differ (by 0.03-0.3 on separated binary data).
The expected information is used because the Jeffreys prior is defined by it
and it stays positive definite under separation, where the observed
information of the diverging directions vanishes.  Estimates are finite
under separation.  brglm2's median-bias reduction (``AS_median``) is another
estimator, not offered (on ``stemcell`` it is ~3e-3 from ``AS_mean``).  With
non-integer weights R's binomial ``logLik`` rounds the trials (rows of weight
0.5 drop out of it), while ``llf`` here is ``sum_i w_i log p_i``.
The gradient of ``log det I`` is taken by central differences (error
``~1e-10``); the iteration is Newton's on the penalised objective with the
observed Hessian of ``-l`` as its curvature, joined by second differences of
``log det I`` once an iteration shrinks the score by less than half (under
separation the penalty's curvature is of the likelihood's size along the
diverging directions, and steps without it converge slowly).

**Standard errors.**  An L1 or elastic-net fit reports none (NaN; as
statsmodels' ``fit_regularized``, no valid post-selection covariance).  A pure
ridge fit (``L1_wt = 0``) reports the sandwich
``(H + P)^{-1} H (H + P)^{-1}`` with ``H`` the observed information and
``P = n_w diag(alpha c_j s_j^2)``; a Firth fit the inverse expected
information at the estimates (brglm2's).

**Degrees of freedom.**  AIC and BIC of an elastic-net fit use the effective
degrees of freedom ``tr(H_A (H_A + P_A)^{-1})`` over the active set ``A``
(thresholds and non-zero parameters; Zou, Hastie & Tibshirani 2007): for a
lasso the number of non-zero parameters (glmnet's ``df`` plus the
thresholds, ordinalNet's ``nNonzero``), for a ridge fit the trace of
``H (H + P)^{-1}``.  ``df_model`` is the number of non-zero penalised
parameters (glmnet's ``df``).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, cast

import numpy as np
import numpy.typing as npt
import pandas as pd

from ordstats._typing import FloatArray
from ordstats.core.penalty import (
    ElasticNet,
    PenalizedResult,
    check_penalty_arguments,
    max_penalty,
    positive_definite,
    proximal_newton,
)
from ordstats.errors import (
    ConvergenceWarning,
    OrdstatsError,
    OrdstatsWarning,
    SpecificationError,
    check_flag,
    check_seed,
    is_real_number,
    user_stacklevel,
)
from ordstats.estimation.evaluators import InMemoryEvaluator
from ordstats.estimation.options import check_maxiter, check_tolerance
from ordstats.families.problem import FamilyEvaluation
from ordstats.results.covariance import Covariance, observed_covariance
from ordstats.results.fitted import FitInfo
from ordstats.results.protocols import FittedModel
from ordstats.results.regularized import (
    CVResult,
    PenalizedResults,
    RegularizationPath,
    cv_loss,
)
from ordstats.results.values import SELECTION_KIND

if TYPE_CHECKING:
    from ordstats.design import Design
    from ordstats.estimation.evaluators import Evaluator
    from ordstats.estimation.options import ModelOptions

__all__ = [
    "PenalizableModel",
    "PenaltySpec",
    "cross_validate",
    "fit_elastic_net",
    "fit_firth",
    "regularization_path",
]

BoolArray = npt.NDArray[np.bool_]


class PenalizableModel(FittedModel, Protocol):
    """What penalised fits read of a model (``OrdinalModel``), besides what results read.

    A protocol, so that this module does not import :mod:`ordstats.estimation.model`,
    which imports it; cross-validation builds each training fold's model with
    ``type(model).from_design``.
    """

    @classmethod
    def from_design(  # noqa: D102
        cls,
        design: Design,
        options: ModelOptions,
        *,
        evaluator: Evaluator | None = None,
        context: object = None,
    ) -> PenalizableModel: ...

    @property
    def options(self) -> ModelOptions:  # noqa: D102
        ...

    @property
    def evaluator(self) -> Evaluator:  # noqa: D102
        ...

    @property
    def start_params(self) -> FloatArray:  # noqa: D102
        ...

    def _check_params(self, params: Any) -> FloatArray: ...


#: An L1 weight large enough to keep every penalised parameter at zero.
_HUGE = 1e100


@dataclass(frozen=True)
class PenaltySpec:
    r"""How the parameters of one model are penalised (eq. 1 of the module docstring).

    The solver works on ``z`` with ``x = A z`` (``x`` the model's parameters).
    Without nominal effects ``A = I``.  With nominal effects each nominal
    column ``t`` gets a common part and its deviations,
    ``gamma_jt = c_t + delta_jt`` (ordinalNet's semi-parallel model): ``c_t``
    carries the slope penalty (factor 1), the deviations ``delta_jt`` the
    factor ``nominal_weight``, so a large ``nominal_weight`` shrinks toward the
    parallel model and 0 leaves the non-parallel effects unpenalised.

    Attributes
    ----------
    factors : ndarray, shape (m,)
        Penalty factor of each ``z``: 0 for thresholds, scale effects and link
        parameters.
    scales : ndarray, shape (m,)
        ``s_j``: column standard deviations with ``standardize=True``, else 1.
    n_weight : float
        ``n_w``, the sum of the frequency weights.
    basis : ndarray, shape (k, m)
        ``A``.
    penalised_params : ndarray of bool, shape (k,)
        Which model parameters involve a penalised ``z``.
    common : ndarray of bool, shape (m,)
        Which ``z`` are the common parts ``c_t`` of nominal columns.
    """

    factors: FloatArray
    scales: FloatArray
    n_weight: float
    basis: FloatArray
    penalised_params: BoolArray
    common: BoolArray

    @classmethod
    def for_model(
        cls, model: PenalizableModel, *, standardize: bool = False, nominal_weight: float = 1.0
    ) -> PenaltySpec:
        """Penalty factors, scales and parametrisation of ``model``'s parameters."""
        lay = model.problem.layout
        nom = _check_weight(nominal_weight)
        standardize = check_flag("standardize", standardize)
        if lay.n_beta == 0 and lay.n_nominal_cols == 0:
            raise SpecificationError(
                "the model has no slopes to penalise (thresholds are never penalised); add "
                "predictors or use fit()"
            )
        data = model.data
        n_weight = float(np.sum(data.weights))
        q, r = lay.n_alpha, lay.n_nominal_cols
        k = lay.n_params
        m = k + r
        basis = np.zeros((k, m))
        factors = np.zeros(m)
        scales = np.ones(m)
        common = np.zeros(m, dtype=bool)
        basis[: lay.n_alpha, : lay.n_alpha] = np.eye(lay.n_alpha)
        x_sd = _column_sd(data.X, data.weights, n_weight) if standardize else np.ones(lay.n_beta)
        w_sd = _column_sd(data.nominal, data.weights, n_weight) if standardize else np.ones(r)
        for t in range(r):
            rows = slice(lay.nominal.start + t * q, lay.nominal.start + (t + 1) * q)
            first = lay.nominal.start + t * (q + 1)
            basis[rows, first] = 1.0  # the common part c_t
            basis[rows, first + 1 : first + 1 + q] = np.eye(q)  # the deviations
            factors[first] = 1.0
            common[first] = True
            factors[first + 1 : first + 1 + q] = nom
            scales[first : first + 1 + q] = w_sd[t]
        rest = slice(lay.beta.start, k)
        basis[rest, r + lay.beta.start :] = np.eye(k - lay.beta.start)
        factors[r + lay.beta.start : r + lay.beta.stop] = 1.0
        scales[r + lay.beta.start : r + lay.beta.stop] = x_sd
        penalised = np.zeros(k, dtype=bool)
        penalised[lay.beta] = True
        penalised[lay.nominal] = True
        return cls(factors, scales, n_weight, basis, penalised, common)

    def elastic_net(self, alpha: float, l1_ratio: float) -> ElasticNet:
        """The weights ``lambda^(1)``, ``lambda^(2)`` of :mod:`ordstats.core.penalty`."""
        return ElasticNet.from_weights(alpha, l1_ratio, self.factors, self.scales)

    @property
    def penalised(self) -> BoolArray:
        """Boolean mask of penalised ``z``."""
        return self.factors > 0

    def null_penalty(self) -> ElasticNet:
        """A penalty that holds every penalised ``z`` at zero."""
        return ElasticNet(l1=np.where(self.penalised, _HUGE, 0.0), l2=np.zeros_like(self.factors))

    def to_params(self, z: FloatArray) -> FloatArray:
        """``x = A z``."""
        return self.basis @ z

    def from_params(self, x: FloatArray) -> FloatArray:
        """A ``z`` with ``A z = x`` (common parts of nominal effects zero)."""
        z = np.zeros(self.basis.shape[1])
        free_cols = ~(self.basis.sum(axis=0) > 1)  # drop the common parts
        z[free_cols] = np.linalg.lstsq(self.basis[:, free_cols], x, rcond=None)[0]
        return z

    def objective(self, model: PenalizableModel) -> Callable[[FloatArray], _InZ]:
        """``z -> f(A z)`` with gradient ``A' g`` and Hessian ``A' H A``."""
        return lambda z: _InZ(model.evaluator.evaluate(self.to_params(z)), self.basis)


class _InZ:
    """A family evaluation seen through ``x = A z``."""

    def __init__(self, inner: FamilyEvaluation, basis: FloatArray) -> None:
        self.inner = inner
        self.nll = float(inner.nll)
        self._basis = basis

    @property
    def gradient(self) -> FloatArray:
        return self._basis.T @ np.asarray(self.inner.gradient)

    @property
    def hessian(self) -> FloatArray:
        A = self._basis
        return A.T @ np.asarray(self.inner.hessian) @ A


def _check_weight(nominal_weight: float) -> float:
    try:
        nom = float(nominal_weight)
    except (TypeError, ValueError):
        nom = -1.0
    if not np.isfinite(nom) or nom < 0:
        raise SpecificationError(
            f"nominal_weight must be a finite number >= 0; got {nominal_weight!r}"
        )
    return nom


def _column_sd(A: FloatArray, weights: FloatArray, n_weight: float) -> FloatArray:
    if A.size == 0:
        return np.empty(0)
    mean = weights @ A / n_weight
    sd = np.sqrt(weights @ (A - mean) ** 2 / n_weight)
    # a constant column's computed sd is its rounding (~1e-16 |value|), not 0: it would
    # turn off the column's penalty and leave it aliased with the thresholds
    if np.any(sd <= 1e-10 * np.max(np.abs(A), axis=0)):
        raise SpecificationError(
            "standardize=True needs non-constant columns; a predictor has zero variance"
        )
    return sd


def _check_model(model: PenalizableModel) -> None:
    """Penalised fits evaluate the likelihood many times: the rows must be in memory."""
    if not model.evaluator.keeps_rows:
        raise SpecificationError(
            "penalised fits need the rows in memory, which this model does not hold (its "
            "data were read in chunks, or removed by remove_data()); build the model from a "
            "DataFrame without chunksize="
        )


def null_fit(model: PenalizableModel, spec: PenaltySpec, tol: float = 1e-8) -> PenalizedResult:
    """The fit with every penalised parameter at zero (the start of a path)."""
    start = np.where(spec.penalised, 0.0, spec.from_params(model.start_params))
    return proximal_newton(
        spec.objective(model), start, spec.null_penalty(), spec.n_weight, tol=tol
    )


def fit_elastic_net(
    model: PenalizableModel,
    alpha: float,
    l1_ratio: float,
    *,
    standardize: bool = False,
    nominal_weight: float = 1.0,
    start_params: FloatArray | None = None,
    tol: float = 1e-7,
    maxiter: int = 200,
) -> PenalizedResults:
    """Minimise eq. (1) at one ``alpha`` (see :meth:`OrdinalModel.fit_regularized`)."""
    _check_model(model)
    tol, maxiter = check_tolerance("tol", tol), check_maxiter(maxiter)
    a, r = check_penalty_arguments(alpha, l1_ratio)
    spec = PenaltySpec.for_model(model, standardize=standardize, nominal_weight=nominal_weight)
    start = _start(model, spec, start_params)
    sol = proximal_newton(
        spec.objective(model),
        start,
        spec.elastic_net(a, r),
        spec.n_weight,
        tol=tol,
        max_iter=maxiter,
    )
    _warn_unconverged(sol, tol)
    return _results(model, sol, spec, a, r, standardize)


def _start(
    model: PenalizableModel, spec: PenaltySpec, start_params: FloatArray | None
) -> FloatArray:
    if start_params is not None:
        return spec.from_params(model._check_params(start_params))
    return null_fit(model, spec).x


def _warn_unconverged(sol: PenalizedResult, tol: float) -> None:
    if not sol.converged:
        warnings.warn(
            f"the penalised fit did not converge: max KKT violation {sol.kkt:.2e} > tol = "
            f"{tol:g} after {sol.n_iter} proximal Newton iterations. Increase maxiter, "
            "standardize the predictors or use a larger alpha",
            ConvergenceWarning,
            stacklevel=user_stacklevel(),
        )


def _fit_info(sol: PenalizedResult) -> FitInfo:
    return FitInfo(
        converged=sol.converged,
        code=0 if sol.converged else 2,
        message=f"proximal Newton: max KKT violation {sol.kkt:.2e}",
        n_iter=sol.n_iter,
        n_halvings=0,
        max_grad=sol.kkt,
    )


def _ridge_covariance(hessian: FloatArray, penalty: ElasticNet, spec: PenaltySpec) -> Covariance:
    """Sandwich ``(H + P)^{-1} H (H + P)^{-1}`` of a pure ridge fit, mapped by ``A``."""
    A = spec.basis
    bread = observed_covariance(hessian + spec.n_weight * np.diag(penalty.l2))
    if not isinstance(bread, Covariance) or bread.singular:
        k = A.shape[0]
        return Covariance(np.full((k, k), np.nan), np.inf, True, kind="ridge sandwich")
    B = bread.matrix
    return Covariance(A @ B @ hessian @ B @ A.T, bread.cond, False, kind="ridge sandwich")


def effective_df(hessian: FloatArray, z: FloatArray, penalty: ElasticNet, n_weight: float) -> float:
    """``tr(H_A (H_A + n_w diag(l2)_A)^+)`` over unpenalised and non-zero ``z``.

    Parameters
    ----------
    hessian : ndarray, shape (m, m)
        Observed information of ``-l`` in ``z``.
    z : ndarray, shape (m,)
    penalty : ElasticNet
    n_weight : float
    """
    active = (z != 0) | (penalty.l1 + penalty.l2 == 0)
    h = hessian[np.ix_(active, active)]
    if not np.any(penalty.l2[active]):  # a lasso: the rank of H_A, as a whole number
        return float(np.linalg.matrix_rank(h, hermitian=True))
    # pseudo-inverse: aliased columns kept for the penalty count once (the rank of H_A)
    inverse = np.linalg.pinv(h + n_weight * np.diag(penalty.l2[active]), hermitian=True)
    return float(np.trace(h @ inverse))


def _results(
    model: PenalizableModel,
    sol: PenalizedResult,
    spec: PenaltySpec,
    alpha: float,
    l1_ratio: float,
    standardize: bool,
    path: RegularizationPath | None = None,
) -> PenalizedResults:
    penalty = spec.elastic_net(alpha, l1_ratio)
    k = spec.basis.shape[0]
    if l1_ratio == 0.0 or alpha == 0.0:  # no selection: alpha = 0 is the MLE, H^-1
        cov = _ridge_covariance(np.asarray(sol.evaluation.hessian), penalty, spec)
    else:
        cov = Covariance(np.full((k, k), np.nan), np.nan, False, kind=SELECTION_KIND)
    inner = sol.evaluation.inner if isinstance(sol.evaluation, _InZ) else sol.evaluation
    hessian = np.asarray(sol.evaluation.hessian)
    return PenalizedResults(
        model,
        spec.to_params(sol.x),
        cast(FamilyEvaluation, inner),
        _fit_info(sol),
        cov,
        penalty_kind="elastic net",
        alpha=alpha,
        l1_ratio=l1_ratio,
        standardize=standardize,
        objective=sol.objective,
        path=path,
        df_effective=effective_df(hessian, sol.x, penalty, spec.n_weight),
    )


def default_alphas(
    model: PenalizableModel, spec: PenaltySpec, l1_ratio: float, n_alphas: int, eps: float
) -> tuple[FloatArray, PenalizedResult]:
    """``n_alphas`` values from ``alpha_max`` down to ``eps * alpha_max``, log-spaced."""
    null = null_fit(model, spec)
    grad = np.asarray(null.evaluation.gradient) / spec.n_weight
    weights = spec.factors * spec.scales
    alpha_max = max_penalty(grad, weights, l1_ratio)
    if alpha_max <= 0:
        raise SpecificationError("every penalised gradient is zero at the null fit")
    return np.geomspace(alpha_max, alpha_max * eps, n_alphas), null


def _decreasing_alphas(alphas: Any, l1_ratio: float) -> FloatArray:
    """The user's ``alphas``, checked, in decreasing order (as glmnet orders ``lambda``)."""
    try:
        if not all(map(is_real_number, np.ravel(np.asarray(alphas, dtype=object)))):
            raise TypeError  # True is a slip, not an alpha of 1
        given = np.atleast_1d(np.asarray(alphas, dtype=float))
    except (TypeError, ValueError):
        given = np.empty((0, 0))
    if given.ndim != 1 or given.size == 0:
        raise SpecificationError("alphas must be a non-empty sequence of numbers")
    for a in given:
        check_penalty_arguments(a, l1_ratio)
    return np.sort(given)[::-1]


def regularization_path(
    model: PenalizableModel,
    alphas: Sequence[float] | FloatArray | None = None,
    *,
    n_alphas: int = 100,
    l1_ratio: float = 1.0,
    eps: float = 1e-3,
    standardize: bool = False,
    nominal_weight: float = 1.0,
    tol: float = 1e-7,
    maxiter: int = 200,
) -> RegularizationPath:
    """Warm-started fits along decreasing ``alphas`` (see :meth:`OrdinalModel.path`)."""
    _check_model(model)
    tol, maxiter = check_tolerance("tol", tol), check_maxiter(maxiter)
    check_penalty_arguments(0.0, l1_ratio)
    spec = PenaltySpec.for_model(model, standardize=standardize, nominal_weight=nominal_weight)
    if alphas is None:
        grid, null = default_alphas(
            model, spec, l1_ratio, _check_n_alphas(n_alphas), _check_eps(eps)
        )
        x = null.x
    else:
        grid = _decreasing_alphas(alphas, l1_ratio)
        null = null_fit(model, spec)
        x = null.x
    hessian, evaluation = null.hessian, null.evaluation
    rows, zs, kkts, objectives, iters = [], [], [], [], []
    for a in grid:
        sol = proximal_newton(
            spec.objective(model),
            x,
            spec.elastic_net(a, l1_ratio),
            spec.n_weight,
            tol=tol,
            max_iter=maxiter,
            hessian=hessian,
            evaluation=evaluation,
        )
        _warn_unconverged(sol, tol)
        x, hessian, evaluation = sol.x, sol.hessian, sol.evaluation
        rows.append(spec.to_params(x))
        zs.append(x)
        kkts.append(sol.kkt)
        objectives.append(sol.objective)
        iters.append(sol.n_iter)
    params = pd.DataFrame(
        np.array(rows), index=pd.Index(grid, name="alpha"), columns=model.param_names
    )
    return RegularizationPath(
        alphas=grid,
        params=params,
        kkt=np.array(kkts),
        objective=np.array(objectives),
        n_iter=np.array(iters),
        l1_ratio=float(l1_ratio),
        standardize=bool(standardize),
        penalised=pd.Series(spec.penalised_params, index=model.param_names),
        solver_params=np.array(zs),
    )


def cross_validate(
    model: PenalizableModel,
    alphas: Sequence[float] | FloatArray | None = None,
    *,
    n_alphas: int = 50,
    l1_ratio: float = 1.0,
    cv: int | Sequence[tuple[Any, Any]] = 5,
    scoring: str = "log_loss",
    standardize: bool = False,
    nominal_weight: float = 1.0,
    seed: int | None = 0,
    tol: float = 1e-7,
) -> CVResult:
    """Choose ``alpha`` by cross-validation (see :meth:`OrdinalModel.cv`)."""
    from ordstats.results.regularized import CV_SCORINGS

    if scoring not in CV_SCORINGS:
        raise SpecificationError(f"scoring must be one of {CV_SCORINGS}; got {scoring!r}")
    splits = cv_splits(cv, model.n_rows, seed)
    full = regularization_path(
        model,
        alphas,
        n_alphas=n_alphas,
        l1_ratio=l1_ratio,
        standardize=standardize,
        nominal_weight=nominal_weight,
        tol=tol,
    )
    data = model.data
    losses = np.zeros((len(splits), full.alphas.size))
    fold_weights = np.array([float(np.sum(data.weights[held_out])) for _, held_out in splits])
    for f, (train, held_out) in enumerate(splits):
        _check_fold_levels(data.y[train], model.levels, f)
        sub = InMemoryEvaluator(model.family_spec, data.take(train))
        train_model = type(model).from_design(
            model.design, model.options, evaluator=sub, context=model.formula_context
        )
        path = regularization_path(
            train_model,
            full.alphas,
            l1_ratio=l1_ratio,
            standardize=standardize,
            nominal_weight=nominal_weight,
            tol=tol,
        )
        test = data.take(held_out)
        for i, params in enumerate(path.params.to_numpy()):
            prob = _probabilities(model, params, test)
            losses[f, i] = cv_loss(scoring, prob, test.y, test.weights)
    mean, se = _fold_mean_and_se(losses, fold_weights)
    best, one_se = _chosen_alphas(mean, se)
    return CVResult(
        alphas=full.alphas,
        mean=mean,
        se=se,
        fold_losses=losses,
        scoring=scoring,
        alpha_best=float(full.alphas[best]),
        alpha_1se=float(full.alphas[one_se]),
        path=full,
    )


def _fold_mean_and_se(
    losses: FloatArray, fold_weights: FloatArray
) -> tuple[FloatArray, FloatArray]:
    r"""The cross-validated loss per ``alpha`` and its standard error, as ``cv.glmnet``.

    Each fold's mean loss counts by its held-out weight :math:`w_f` (its row
    count with unit weights): :math:`\bar l = \sum_f w_f l_f / \sum_f w_f` and
    :math:`\mathrm{se} = \sqrt{\sum_f w_f (l_f - \bar l)^2 / \sum_f w_f / (F - 1)}`
    for :math:`F` folds.  With folds of equal weight these are the plain mean
    and the standard deviation of the fold losses over :math:`\sqrt F`.

    Parameters
    ----------
    losses : ndarray, shape (n_folds, n_alphas)
    fold_weights : ndarray, shape (n_folds,)

    Returns
    -------
    mean, se : ndarray, shape (n_alphas,)
    """
    share = fold_weights / np.sum(fold_weights)
    mean = share @ losses
    spread = share @ (losses - mean) ** 2
    return mean, np.sqrt(spread / (losses.shape[0] - 1))


def _chosen_alphas(mean: FloatArray, se: FloatArray) -> tuple[int, int]:
    """Positions of the best ``alpha`` and of the largest within one SE of it.

    A loss is NaN where the fit of an ``alpha`` gives held-out rows no
    probabilities (nominal effects whose cut-points cross there): such an
    ``alpha`` is not chosen, with a warning.
    """
    valid = np.isfinite(mean)
    if not valid.any():
        raise OrdstatsError(
            "no value of alpha gives every held-out row probabilities: the nominal effects' "
            "cut-points cross on held-out rows at each of them. Use larger alphas (more "
            "shrinkage toward the parallel model) or a larger nominal_weight"
        )
    if not valid.all():
        warnings.warn(
            f"{int((~valid).sum())} of {valid.size} values of alpha give some held-out rows "
            "crossing cut-points (no probabilities, a NaN loss); they are not chosen",
            OrdstatsWarning,
            stacklevel=user_stacklevel(),
        )
    best = int(np.flatnonzero(valid)[np.argmin(mean[valid])])
    within = np.flatnonzero(valid & (mean <= mean[best] + se[best]))
    return best, int(within.min())


#: Most values of ``alpha`` a path takes (each is a penalised fit).
MAX_ALPHAS = 10_000


def _check_n_alphas(n_alphas: object) -> int:
    """``n_alphas`` as a whole number from 1 to :data:`MAX_ALPHAS`."""
    whole = isinstance(n_alphas, (int, np.integer)) and not isinstance(n_alphas, (bool, np.bool_))
    if not whole or not 1 <= int(n_alphas) <= MAX_ALPHAS:  # type: ignore[call-overload]
        raise SpecificationError(
            f"n_alphas must be a whole number from 1 to {MAX_ALPHAS} (each value of alpha is "
            f"a fit); got {n_alphas!r}"
        )
    return int(n_alphas)  # type: ignore[call-overload]


def _check_eps(eps: object) -> float:
    """``eps``: the smallest alpha's share of the largest, in (0, 1)."""
    if not is_real_number(eps) or not 0.0 < float(eps) < 1.0:
        raise SpecificationError(
            f"eps must be a number in (0, 1): the smallest alpha is eps times the largest "
            f"(glmnet's lambda.min.ratio); got {eps!r}"
        )
    return float(eps)


def cv_splits(
    cv: int | Sequence[tuple[Any, Any]], n: int, seed: int | None
) -> list[tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]]:
    """The ``(train, test)`` row positions of each fold, checked.

    Parameters
    ----------
    cv : int or sequence of (train, test) pairs
        A number of folds (rows assigned at random, seeded by ``seed``) or the
        folds themselves: positions among the model's ``n`` rows.
    n : int
    seed : int or None

    Returns
    -------
    list of (ndarray, ndarray)
    """
    if isinstance(cv, (int, np.integer)) and not isinstance(cv, (bool, np.bool_)):
        if cv < 2:
            raise SpecificationError(f"cv must be at least 2 folds; got {cv!r}")
        if cv > n:
            raise SpecificationError(
                f"cv={cv} folds for {n} rows: a fold needs a row at least; use at most {n} "
                "(leave-one-out)"
            )
        folds = np.random.default_rng(check_seed(seed)).permutation(np.arange(n) % int(cv))
        return [(np.flatnonzero(folds != f), np.flatnonzero(folds == f)) for f in range(cv)]
    if isinstance(cv, (str, bytes)) or not hasattr(cv, "__iter__"):
        raise SpecificationError(
            f"cv must be a number of folds (>= 2) or a list of (train, test) pairs of row "
            f"positions; got {cv!r}"
        )
    splits = [_fold_positions(pair, n, k) for k, pair in enumerate(cv)]
    for k, (train, test) in enumerate(splits):
        shared = np.intersect1d(train, test)
        if shared.size:
            raise SpecificationError(
                f"cv split {k}: {shared.size} row(s) are in both its train and test rows "
                f"(e.g. position {int(shared[0])}), so its loss would be in-sample; give "
                "disjoint train and test rows"
            )
    if len(splits) < 2:
        raise SpecificationError(
            f"cv gives {len(splits)} (train, test) split; cross-validation needs at least 2 "
            "(their spread is the standard error of the loss)"
        )
    return splits


def _check_fold_levels(y: npt.NDArray[np.intp], levels: Sequence[str], fold: int) -> None:
    """Refuse a fold whose training rows lack a level (its thresholds are not estimable)."""
    absent = np.flatnonzero(np.bincount(y, minlength=len(levels)) == 0)
    if absent.size:
        raise SpecificationError(
            f"cv fold {fold}: its training rows have no rows of level(s) "
            f"{', '.join(repr(levels[int(j)]) for j in absent)}, so its thresholds are not "
            "estimable; use folds that keep every level in each training part (stratified "
            "folds such as StratifiedKFold, or fewer folds)"
        )


def _fold_positions(pair: Any, n: int, k: int) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    try:
        train, test = pair
    except (TypeError, ValueError):
        raise SpecificationError(
            f"cv split {k} is not a (train, test) pair of row positions: {pair!r}"
        ) from None
    positions = []
    for part, name in ((train, "train"), (test, "test")):
        rows = np.asarray(part).reshape(-1)
        if rows.dtype.kind == "b" and rows.size == n:  # a boolean mask of the rows
            rows = np.flatnonzero(rows)
        if rows.size == 0 or rows.dtype.kind not in "iu" or rows.min() < 0 or rows.max() >= n:
            raise SpecificationError(
                f"cv split {k}: the {name} rows must be a non-empty list of positions in "
                f"0..{n - 1} (the model has {n} rows)"
            )
        positions.append(rows.astype(np.intp, copy=False))
    return positions[0], positions[1]


def _probabilities(model: PenalizableModel, params: FloatArray, rows: Any) -> FloatArray:
    return model.family_spec.probabilities(params, rows)


def _refuse_singular_information(info: FloatArray) -> None:
    """Firth's ``log det I`` needs identified parameters: refuse a singular ``I``."""
    if not np.all(np.isfinite(info)):
        return  # no information at all: the start's own check says why
    diag = np.sqrt(np.abs(np.diag(info)))
    if np.any(diag == 0):
        smallest = 0.0
    else:
        smallest = float(np.linalg.eigvalsh(info / np.outer(diag, diag))[0])
    if smallest <= 1e-12:
        raise SpecificationError(
            "penalty='firth' needs a non-singular expected information, and it is singular "
            "at the starting values: the design has aliased columns (a model built with "
            "collinear='keep'), or the start gives rows no probability. Build the model "
            "with collinear='drop' (the default) or change start_params"
        )


def fit_firth(
    model: PenalizableModel,
    *,
    start_params: FloatArray | None = None,
    maxiter: int = 100,
    gradtol: float = 1e-7,
) -> PenalizedResults:
    """Maximise ``l + 1/2 log det I`` (see the module docstring and ``fit(penalty="firth")``)."""
    _check_model(model)
    family, problem = model.family_spec, model.problem
    if problem.layout.n_lambda:
        raise SpecificationError(
            "penalty='firth' is not available with a flexible link (its parameter has no "
            "expected information here); use a standard link"
        )

    def log_det(x: FloatArray) -> float:
        info = family.expected_information(problem, x)
        if not np.all(np.isfinite(info)):  # thresholds out of order: no information
            return -np.inf
        sign, value = np.linalg.slogdet(info)
        return float(value) if sign > 0 else -np.inf

    def gradient_log_det(x: FloatArray) -> FloatArray:
        g = np.empty_like(x)
        for j in range(x.size):
            h = 1e-5 * max(1.0, abs(x[j]))
            up, down = x.copy(), x.copy()
            up[j] += h
            down[j] -= h
            g[j] = (log_det(up) - log_det(down)) / (2 * h)
        return g

    def hessian_log_det(x: FloatArray) -> FloatArray | None:
        """Central second differences of ``log det I`` (None where they leave the domain)."""
        h = 1e-4 * np.maximum(1.0, np.abs(x))
        q = x.size
        out = np.empty((q, q))
        centre = log_det(x)

        def at(j: int, sj: float, k: int, sk: float) -> float:
            moved = x.copy()
            moved[j] += sj * h[j]
            moved[k] += sk * h[k]
            return log_det(moved)

        for j in range(q):
            out[j, j] = (at(j, 1.0, j, 0.0) - 2 * centre + at(j, -1.0, j, 0.0)) / h[j] ** 2
            for k in range(j):
                corners = at(j, 1, k, 1) - at(j, 1, k, -1) - at(j, -1, k, 1) + at(j, -1, k, -1)
                out[j, k] = out[k, j] = corners / (4 * h[j] * h[k])
        return out if np.all(np.isfinite(out)) else None

    def curvature(at: FloatArray, evaluation: Any, full: bool) -> FloatArray:
        """The observed Hessian of ``-l``; with ``full``, minus the penalty's curvature too."""
        hessian = np.asarray(evaluation.hessian)
        if full:
            penalty = hessian_log_det(at)
            if penalty is not None:
                hessian = hessian - 0.5 * penalty
        return positive_definite(hessian)

    def penalised(trial: FloatArray) -> tuple[Any, float]:
        """The evaluation at ``trial`` and ``-l - 1/2 log det I`` there (inf off the domain)."""
        evaluation = model.evaluator.evaluate(trial)
        if not np.isfinite(evaluation.nll):
            return evaluation, np.inf
        return evaluation, float(evaluation.nll - 0.5 * log_det(trial))

    def score(at: FloatArray, evaluation: Any) -> FloatArray:
        """The gradient of the penalised objective."""
        return np.asarray(evaluation.gradient) - 0.5 * gradient_log_det(at)

    x = model.start_params if start_params is None else model._check_params(start_params)
    _refuse_singular_information(family.expected_information(problem, x))
    ev, value = penalised(x)
    if not (np.isfinite(value) and np.all(np.isfinite(ev.hessian))):
        raise SpecificationError(
            "start_params give no finite penalised log-likelihood (the thresholds must be "
            "finite and increasing, and every value a number); leave start_params out or "
            "start from another fit's params"
        )
    code, it, grad = 2, 0, np.full(x.size, np.inf)
    values = [value]  # the objective after each step
    # The observed Hessian of -l leaves out the penalty's curvature: cheap, and enough
    # where it dominates, but under separation (where the penalty's curvature is of the
    # likelihood's size along the diverging directions) the steps then shrink the score
    # by a factor near 1 per iteration (cloglog: thousands of iterations).  Once an
    # iteration shrinks it by less than half, the penalty's curvature (second
    # differences of log det I) joins in.
    full, previous = False, np.inf
    for it in range(maxiter + 1):
        grad = score(x, ev)
        size = float(np.max(np.abs(grad)))
        full = full or (it >= 3 and size > 0.5 * previous)
        previous = size
        step = np.linalg.solve(curvature(x, ev, full), grad)
        if np.max(np.abs(grad)) < gradtol:
            # one more step where it still gains: the Hessian leaves out the penalty's
            # curvature, so each step shrinks the error by a factor, not to its square
            ev_t, val_t = penalised(x - step)
            if val_t <= value:
                x, ev, value = x - step, ev_t, val_t
                grad = score(x, ev)
            code = 0
            break
        if it == maxiter:
            break
        t = 1.0
        for _ in range(40):
            trial = x - t * step
            ev_t, val_t = penalised(trial)
            if np.isfinite(val_t) and val_t <= value + 1e-12 * abs(value):
                break
            t *= 0.5
        else:
            code = 3
            break
        x, ev, value = trial, ev_t, val_t
        values.append(value)
    info_matrix = family.expected_information(problem, x)
    inverse = observed_covariance(info_matrix)
    assert isinstance(inverse, Covariance)  # a dense information matrix
    cov = Covariance(inverse.matrix, inverse.cond, inverse.singular, kind="expected")
    max_grad = float(np.max(np.abs(grad)))
    fit_info = FitInfo(
        converged=code == 0,
        code=code,
        message="Firth-penalised Newton: " + ("converged" if code == 0 else "did not converge"),
        n_iter=it,
        n_halvings=0,
        max_grad=max_grad,
    )
    if code != 0:
        recent = np.asarray(values[-10:])
        stalled = len(values) > 10 and np.ptp(recent) <= 1e-10 * max(1.0, abs(value))
        if code == 2 and stalled:  # the score's own rounding (a numerical derivative)
            advice = (
                "the penalised likelihood stopped changing over the last 10 iterations, so "
                "the score is at its rounding error: the estimates are settled; loosen "
                f"gradtol (to about {10 * max_grad:.0e}) to have the fit reported as converged"
            )
        elif code == 2:
            advice = f"increase maxiter (it stopped after {it} iterations)"
        else:
            advice = (
                "no step along the Newton direction increased the penalised likelihood; "
                "start from other values (start_params) or loosen gradtol"
            )
        warnings.warn(
            f"the Firth-penalised fit did not converge (max|penalised score| = {max_grad:.2e}, "
            f"gradtol {gradtol:g}): {advice}",
            ConvergenceWarning,
            stacklevel=user_stacklevel(),
        )
    return PenalizedResults(
        model,
        x,
        ev,
        fit_info,
        cov,
        penalty_kind="firth",
        objective=value,
    )
