r"""What a penalised fit returns: results at one penalty, a path, a cross-validation.

:class:`PenalizedResults` is an :class:`~ordstats.results.fitted.OrdinalResults`
(it prints, predicts and reports the unpenalised log-likelihood ``llf`` at the
penalised estimates) that also carries the penalty.  Its covariance is
NaN for L1/elastic-net fits, the ridge sandwich for pure ridge fits and the
inverse expected information for Firth fits (see
:mod:`ordstats.estimation.penalized`).  Methods that refit the model (term
tests, Brant's test, profiles, link comparisons) would silently drop the
penalty, so they raise.

The cross-validation losses (:func:`cv_loss`) are the public metrics of
:mod:`ordstats.metrics` on class codes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

import ordstats.metrics as metrics
from ordstats._typing import FloatArray, IntArray
from ordstats.errors import SpecificationError
from ordstats.families.problem import FamilyEvaluation
from ordstats.results import figures
from ordstats.results.covariance import Covariance
from ordstats.results.fitted import FitInfo, OrdinalResults

if TYPE_CHECKING:
    from ordstats.results.protocols import FittedModel

__all__ = ["CV_SCORINGS", "CVResult", "PenalizedResults", "RegularizationPath", "cv_loss"]

#: Losses :func:`cv_loss` knows (smaller is better).
CV_SCORINGS = ("log_loss", "mae", "rps")

_REFITTING = (
    "profile",
    "plot_profile",
    "nominal_test",
    "scale_test",
    "brant_test",
    "drop1",
    "add1",
    "step",
)
#: Methods whose maximum-likelihood theory does not hold at penalised estimates.
_ML_ONLY = ("get_robustcov_results", "convergence", "slice", "plot_slice")


class PenalizedResults(OrdinalResults):
    """Results of a penalised fit (elastic net, ridge, lasso or Firth).

    Attributes
    ----------
    penalty_kind : str
        ``"elastic net"`` or ``"firth"``.
    alpha, l1_ratio : float or None
        The elastic-net penalty (``l1_ratio`` is statsmodels' ``L1_wt``).
    standardize : bool
    objective : float
        The minimised penalised objective (eq. 1 of
        :mod:`ordstats.estimation.penalized`; for Firth ``-l - log det I / 2``).
    path : RegularizationPath or None
        The path this fit ends, when it came from one.
    df_effective : float
        Effective degrees of freedom of an elastic-net fit,
        ``tr(H_A (H_A + P_A)^{-1})`` over thresholds and non-zero parameters
        (a lasso: their number; a ridge fit: ``tr(H (H + P)^{-1})``); for
        Firth the number of parameters.  AIC and BIC use it.
    """

    def __init__(
        self,
        model: FittedModel,
        params: FloatArray,
        evaluation: FamilyEvaluation,
        info: FitInfo,
        covariance: Covariance,
        *,
        penalty_kind: str,
        alpha: float | None = None,
        l1_ratio: float | None = None,
        standardize: bool = False,
        objective: float = np.nan,
        path: RegularizationPath | None = None,
        df_effective: float | None = None,
    ) -> None:
        # the unpenalised likelihood's information is not this fit's covariance: a
        # singular one (aliased columns kept for the penalty) is no warning here
        super().__init__(model, params, evaluation, info, covariance, defer_covariance=True)
        self.penalty_kind = penalty_kind
        self.alpha = alpha
        self.l1_ratio = l1_ratio
        self.standardize = standardize
        self.objective = objective
        self.path = path
        self._df_effective = float(self.k_params if df_effective is None else df_effective)

    @property
    def n_nonzero(self) -> int:
        """Number of non-zero penalised slopes."""
        lay = self.model.problem.layout
        params = self.params.to_numpy()
        slopes = np.concatenate([params[lay.nominal], params[lay.beta]])
        return int(np.count_nonzero(slopes))

    @property
    def df_model(self) -> int:
        """Non-zero penalised parameters (glmnet's ``df``); all slopes for Firth."""
        return super().df_model if self.penalty_kind == "firth" else self.n_nonzero

    @property
    def df_effective(self) -> float:
        """Effective degrees of freedom (see the class docstring); AIC and BIC use it."""
        return self._df_effective

    @property
    def llr_pvalue(self) -> float:
        """Not available for elastic-net fits: ``llr`` has no chi-square law after a penalty."""
        if self.penalty_kind == "firth":
            return float(super().llr_pvalue)
        raise SpecificationError(
            "llr_pvalue is a likelihood-ratio test, and llr of a penalised (elastic-net) fit "
            "has no chi-square distribution: the penalty shrinks and selects; test on an "
            "unpenalised fit (model.fit())"
        )

    @property
    def method_label(self) -> str:
        """The estimation method, for the summary."""
        return "Firth (Jeffreys)" if self.penalty_kind == "firth" else "Elastic net"

    @property
    def penalty_note(self) -> str:
        """What was penalised and what the standard errors are, for the summary."""
        if self.penalty_kind == "firth":
            return (
                "Firth's penalised likelihood: loglik + log det I / 2 (Jeffreys prior, expected "
                "information I); Log-Likelihood is the unpenalised one at these estimates and "
                "standard errors are the inverse expected information."
            )
        scaled = "standardised " if self.standardize else ""
        text = (
            f"Elastic net on the {scaled}slopes (thresholds unpenalised): "
            f"alpha = {self.alpha:.6g}, L1_wt = {self.l1_ratio:g}, loss = -loglik / n_w + "
            "alpha * (L1_wt * |b|_1 + (1 - L1_wt) / 2 * |b|_2^2). Log-Likelihood is the "
            "unpenalised one at these estimates; AIC and BIC use the effective degrees of "
            f"freedom {self.df_effective:.4g} = tr(H_A (H_A + P_A)^-1) over the thresholds and "
            "non-zero parameters (a lasso: their number, as glmnet/ordinalNet), Df Model the "
            "number of non-zero penalised parameters. "
        )
        if self.l1_ratio == 0.0 or self.alpha == 0.0:
            return text + "Standard errors: ridge sandwich (H + P)^-1 H (H + P)^-1."
        return text + "No standard errors after an L1 penalty (selection)."

    def __repr__(self) -> str:
        if self.penalty_kind == "firth":
            what = "penalty='firth'"
        else:
            what = f"alpha={self.alpha:.4g}, L1_wt={self.l1_ratio:g}"
        return (
            f"<PenalizedResults: {self.model!r}, {what}, llf={self.llf:.6g}, "
            f"converged={self.converged}>"
        )

    def __str__(self) -> str:
        header = repr(self)
        table = pd.DataFrame({"coef": self.params, "std err": self.bse})
        return f"{header}\n{table.to_string()}\nCovariance: {self.covariance.kind}"


def _refit_unavailable(name: str, shown: str | None = None) -> Any:
    def method(self: PenalizedResults, *args: object, **kwargs: object) -> Any:
        raise SpecificationError(
            f"{shown or name + '()'} refits the model without its penalty, which would mix "
            "penalised and unpenalised fits; use it on an unpenalised fit (model.fit())"
        )

    method.__name__ = name
    method.__doc__ = "Not available for penalised fits: it would refit without the penalty."
    return method


def _ml_only(name: str) -> Any:
    def method(self: PenalizedResults, *args: object, **kwargs: object) -> Any:
        raise SpecificationError(
            f"{name}() needs maximum-likelihood estimates; a penalised fit reports "
            f"{self.covariance.kind!r} standard errors (see ordstats.estimation.penalized)"
        )

    method.__name__ = name
    method.__doc__ = "Not available for penalised fits (maximum-likelihood theory only)."
    return method


def _update_unavailable(self: PenalizedResults, *args: object, **kwargs: object) -> Any:
    raise SpecificationError(
        "update() would refit without the penalty; refit the updated model with it: "
        "res.model.update(...).fit_regularized(...) or .fit(penalty='firth')"
    )


PenalizedResults.update = _update_unavailable  # type: ignore[method-assign,assignment]
for _name in _REFITTING:
    setattr(PenalizedResults, _name, _refit_unavailable(_name))
# conf_int(method="profile") profiles through this method, not through profile()
PenalizedResults._profile_conf_int = _refit_unavailable(  # type: ignore[method-assign]
    "_profile_conf_int", "conf_int(method='profile')"
)
for _name in _ML_ONLY:
    setattr(PenalizedResults, _name, _ml_only(_name))


@dataclass(frozen=True)
class RegularizationPath:
    """Elastic-net estimates along a decreasing sequence of penalties.

    Attributes
    ----------
    alphas : ndarray
        Decreasing penalties; with the default grid the first is the smallest
        ``alpha`` at which every penalised slope is zero.
    params : pandas.DataFrame
        One row of estimates per ``alpha`` (original scale).
    kkt : ndarray
        Largest KKT violation at each ``alpha`` (scale of eq. 1).
    objective : ndarray
        Penalised objective at each ``alpha``.
    n_iter : ndarray
        Proximal Newton iterations at each ``alpha`` (warm starts).
    l1_ratio : float
    standardize : bool
    penalised : pandas.Series of bool
        Which parameters carry the penalty.
    solver_params : ndarray, shape (n_alphas, m)
        The solver's parameters ``z`` with ``params = A z`` (they differ from
        ``params`` only with nominal effects, whose common parts and
        deviations are separate; see
        :class:`ordstats.estimation.penalized.PenaltySpec`).  The KKT
        conditions hold in ``z``.
    """

    alphas: FloatArray
    params: pd.DataFrame
    kkt: FloatArray
    objective: FloatArray
    n_iter: IntArray
    l1_ratio: float
    standardize: bool
    penalised: pd.Series
    solver_params: FloatArray

    @property
    def n_nonzero(self) -> pd.Series:
        """Number of non-zero penalised parameters at each ``alpha``."""
        cols = self.penalised.index[self.penalised.to_numpy()]
        return (self.params[cols] != 0).sum(axis=1).rename("n_nonzero")

    def plot(self, ax: Any = None) -> Any:
        """Plot the penalised coefficients against ``log10(alpha)`` (needs matplotlib)."""
        ax = figures.axes(ax)
        cols = self.penalised.index[self.penalised.to_numpy()]
        for name in cols:
            ax.plot(np.log10(self.alphas), self.params[name], label=name)
        ax.set_xlabel("log10(alpha)")
        ax.set_ylabel("coefficient")
        ax.invert_xaxis()
        if len(cols):
            ax.legend(fontsize="small")
        return ax


@dataclass(frozen=True)
class CVResult:
    """Cross-validated loss along a regularisation path.

    Attributes
    ----------
    alphas : ndarray
    mean, se : ndarray
        Mean loss over the folds, each fold weighted by its held-out weight,
        and its standard error (``cv.glmnet``'s ``cvm`` and ``cvsd``).
    fold_losses : ndarray, shape (n_folds, n_alphas)
    scoring : str
        ``"log_loss"``, ``"mae"`` or ``"rps"`` (:func:`cv_loss`).
    alpha_best : float
        The ``alpha`` with the smallest mean loss.
    alpha_1se : float
        The largest ``alpha`` whose mean loss is within one standard error of
        the smallest (glmnet's ``lambda.1se``).
    path : RegularizationPath
        The path on all rows.
    """

    alphas: FloatArray
    mean: FloatArray
    se: FloatArray
    fold_losses: FloatArray
    scoring: str
    alpha_best: float
    alpha_1se: float
    path: RegularizationPath

    def table(self) -> pd.DataFrame:
        """Mean loss, its standard error and the number of non-zero slopes per ``alpha``."""
        return pd.DataFrame(
            {"mean": self.mean, "se": self.se, "n_nonzero": self.path.n_nonzero.to_numpy()},
            index=pd.Index(self.alphas, name="alpha"),
        )


def cv_loss(scoring: str, prob: FloatArray, y: IntArray, weights: FloatArray) -> float:
    r"""Weighted mean loss of predicted probabilities ``prob`` (n, K) for codes ``y``.

    ``"log_loss"``: :math:`-\log P_{i y_i}`; ``"mae"``: :math:`|\hat y_i - y_i|`
    in categories with :math:`\hat y_i` the most probable level (as
    ``predict(which="class")``); ``"rps"``: the ranked probability score
    :math:`\sum_{j=1}^{K-1} (P(Y_i \le j) - 1\{y_i \le j\})^2` (not divided by
    ``K - 1``).
    """
    if scoring not in CV_SCORINGS:
        raise SpecificationError(f"scoring must be one of {CV_SCORINGS}; got {scoring!r}")
    if not np.all(np.isfinite(prob)):
        return float("nan")  # crossing cut-points (nominal effects): this fold cannot score
    labels = list(range(prob.shape[1]))
    if scoring == "log_loss":
        return metrics.ordinal_log_loss(y, prob, labels=labels, sample_weight=weights, eps=1e-300)
    if scoring == "mae":
        most_probable = np.argmax(prob, axis=1)
        return metrics.mean_absolute_class_error(
            y, most_probable, labels=labels, sample_weight=weights
        )
    if scoring == "rps":
        return metrics.ranked_probability_score(y, prob, labels=labels, sample_weight=weights)
    raise SpecificationError(f"scoring must be one of {CV_SCORINGS}; got {scoring!r}")
