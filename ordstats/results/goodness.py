r"""Goodness of fit: Brant's test, pseudo-R², probability-scale residuals.

**Brant's test** (Brant 1990; Stata's ``brant``) checks the proportional-odds
(parallel lines) assumption without fitting a bigger ordinal model.  For each
cut-point ``j`` it fits the binary model of ``Y > j`` on the same regressors,
with its own slopes :math:`\beta_j`.  Under the assumption all
:math:`\beta_j` are equal.  The estimates of different cut-points are
correlated; for ``j < m``

.. math::

    \operatorname{Cov}(\hat\beta_j, \hat\beta_m) = I_j^{-1} C_{jm} I_m^{-1},\qquad
    C_{jm} = \sum_i w_i\, d_i d_i^\top
             \frac{f(\eta_{ij}) f(\eta_{im})}{\pi_{ij}(1 - \pi_{im})},

with :math:`\pi_{ij} = P(Y_i > j)`, :math:`d_i = (1, -x_i)` and the binary
information matrices :math:`I_j` (for the logit, :math:`f = \pi(1-\pi)` and
:math:`C_{jm}` is Brant's :math:`\sum w\, d d^\top \pi_{im}(1 - \pi_{ij})`).
The Wald statistic of :math:`\beta_1 = \dots = \beta_{K-1}` for all
regressors (``All``, :math:`(K-2)p` df), for each column (``K - 2`` df) and
for each formula term with several columns, is chi-square under the
assumption.  A small p-value says the effect of that regressor differs across
cut-points: consider a nominal effect for it (``nominal_test``).

**Pseudo-R²**: McFadden :math:`1 - \ell/\ell_0`; Cox-Snell
:math:`1 - \exp\{2(\ell_0 - \ell)/N\}` and Nagelkerke (Cox-Snell divided by its
maximum :math:`1 - \exp(2\ell_0/N)`); McKelvey-Zavoina
:math:`\operatorname{var}(\hat\eta) / \{\operatorname{var}(\hat\eta) + \sigma^2_F\}`,
the share of the latent variable's variance explained
(:math:`\sigma^2_F = \pi^2/3` logit, 1 probit, :math:`\pi^2/6` cloglog/loglog;
undefined for the cauchit and with scale effects).

**Probability-scale residuals** (Li & Shepherd 2012):
:math:`r_i = P(Y < y_i) - P(Y > y_i)` in ``[-1, 1]``; uniform-like on
``(-1, 1)`` with mean zero under a correct model, positive when the observed
category is higher than the model expects.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd
from scipy import linalg, stats

from ordstats._typing import FloatArray, IntArray
from ordstats.core.links import Link
from ordstats.core.threads import numeric_threads
from ordstats.data.prediction import predict_in_chunks
from ordstats.design import term_columns
from ordstats.design.censored import censored_response
from ordstats.design.response import format_level
from ordstats.errors import (
    ConvergenceWarning,
    OrdstatsError,
    PredictionError,
    SeparationWarning,
    SpecificationError,
    user_stacklevel,
)
from ordstats.families.cumulative.likelihood import Evaluation
from ordstats.families.problem import CLMData
from ordstats.families.shifted import ShiftedEvaluation
from ordstats.results.persistence import rows_removed_error
from ordstats.results.rms_stats import lrm_stats, orm_stats
from ordstats.results.simulation import simulate_responses
from ordstats.results.state import FittedState
from ordstats.results.surrogate import (
    latent_bounds,
    refuse_without_latent_variable,
    surrogate_series,
)
from ordstats.results.validation import validate

__all__ = [
    "GoodnessOfFitMethods",
    "brant_test",
    "latent_variance",
    "probability_residuals",
    "pseudo_rsquared",
    "residuals_from_probabilities",
]

#: Variance of the latent error distribution ``F`` of each link.
_LATENT_VARIANCE = {
    "logit": np.pi**2 / 3.0,
    "probit": 1.0,
    "cloglog": np.pi**2 / 6.0,
    "loglog": np.pi**2 / 6.0,
    "cauchit": np.inf,
}


def latent_variance(link: Link) -> float:
    """Variance of the link's distribution ``F`` (NaN if not known, inf for the cauchit)."""
    return _LATENT_VARIANCE.get(link.name, np.nan)


def probability_residuals(evaluation: Evaluation, link: Link) -> FloatArray:
    """Li-Shepherd residuals ``P(Y < y_i) - P(Y > y_i) = F(l_i) - (1 - F(u_i))``.

    Parameters
    ----------
    evaluation : Evaluation
        The likelihood at the estimates (standardised cut-points ``u``, ``l``).
    link : Link

    Returns
    -------
    ndarray, shape (n,)
    """
    return link.cdf(evaluation.lower) - link.sf(evaluation.upper)


def residuals_from_probabilities(prob: FloatArray, y: IntArray) -> FloatArray:
    """Li-Shepherd residuals ``P(Y < y_i) - P(Y > y_i)`` from category probabilities.

    For families without a latent cumulative structure (sequential, adjacent).

    Parameters
    ----------
    prob : ndarray, shape (n, K)
        ``P(Y_i = k)``.
    y : ndarray of int, shape (n,)
        Observed level codes.

    Returns
    -------
    ndarray, shape (n,)
    """
    levels = np.arange(prob.shape[1])[None, :]
    below = np.where(levels < y[:, None], prob, 0.0).sum(axis=1)
    above = np.where(levels > y[:, None], prob, 0.0).sum(axis=1)
    return below - above


def linear_predictor_sums(data: CLMData, beta: FloatArray, mean: float) -> FloatArray:
    """``[sum w (eta - mean), sum w (eta - mean)^2]`` of ``eta = x'beta + o`` over rows.

    Adds up over chunks, so the linear predictor's weighted variance streams
    in two passes (the first with ``mean = 0`` gives the mean).
    """
    centred = data.X @ beta + data.offset - mean
    return np.array([data.weights @ centred, data.weights @ centred**2])


def pseudo_rsquared(
    llf: float,
    llnull: float,
    nobs: float,
    explained: float,
    link: Link,
    has_scale: bool,
) -> pd.Series:
    """McFadden, Cox-Snell, Nagelkerke and McKelvey-Zavoina pseudo-R².

    Parameters
    ----------
    llf, llnull : float
        Log-likelihoods of the model and of the thresholds-only model.
    nobs : float
        Number of observations (sum of frequency weights).
    explained : float
        Weighted variance of the linear predictor ``x'beta + offset`` over the
        rows (see :func:`linear_predictor_sums`).
    link : Link
    has_scale : bool
        Whether the model has scale effects (McKelvey-Zavoina is then undefined).

    Returns
    -------
    pandas.Series
        Index ``mcfadden``, ``cox_snell``, ``nagelkerke``, ``mckelvey_zavoina``.
    """
    cox_snell = -np.expm1(2.0 * (llnull - llf) / nobs)
    maximum = -np.expm1(2.0 * llnull / nobs)
    sigma2 = np.nan if has_scale else latent_variance(link)
    mz = explained / (explained + sigma2) if np.isfinite(sigma2) else np.nan
    return pd.Series(
        {
            "mcfadden": 1.0 - llf / llnull,
            "cox_snell": cox_snell,
            "nagelkerke": cox_snell / maximum,
            "mckelvey_zavoina": mz,
        },
        name="pseudo_rsquared",
    )


# -- Brant's test -------------------------------------------------------------


def _binary_fits(res: FittedState) -> list[tuple[float, FloatArray]]:
    """Intercept (cut-point) and slopes of the binary model of ``Y > j`` for each ``j``."""
    fits = []
    for cut in range(len(res.model.levels) - 1):
        model = res.model.dichotomized(cut)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            fit = model.fit()
        if any(issubclass(w.category, ConvergenceWarning) for w in caught):
            kind = _failure_kind(fit, caught)
            level = res.model.levels[cut]
            warnings.warn(
                f"Brant test: the binary model of {res.model.endog_name} > {level!r} {kind}, "
                "so the test is unreliable; merge sparse categories or drop the term",
                ConvergenceWarning,
                stacklevel=user_stacklevel(),
            )
        params = fit.params.to_numpy()
        fits.append((float(params[0]), params[1:]))
    return fits


def _failure_kind(fit: Any, caught: list[warnings.WarningMessage]) -> str:
    """How a binary fit of Brant's test failed, for its warning.

    In memory the rows are checked for separation; a fit in chunks is not, but
    when it stops because its estimates keep growing, separation is the likely
    reason, and it says so.
    """
    if any(issubclass(w.category, SeparationWarning) for w in caught):
        return "is separated"
    if "unbounded" in str(fit.mle_retvals.get("message", "")):
        return "may be separated (its estimates keep growing)"
    return "did not converge"


def brant_cross_products(
    data: CLMData,
    fits: list[tuple[float, FloatArray]],
    link: Link,
    centre: FloatArray | None = None,
) -> FloatArray:
    """``C_jm`` of the module docstring for ``j <= m`` over the rows of ``data``.

    A sum over rows, so it adds up over chunks; ``C_jj`` is the information
    matrix ``I_j`` of the binary model of cut-point ``j``.  With ``centre``,
    of the design ``X - centre`` and the intercepts ``theta - centre' beta``
    the ``fits`` then hold: the slopes' blocks are the same, and a column far
    from zero (``x + 1e8``) keeps its variation.

    Returns
    -------
    ndarray, shape (n_cuts, n_cuts, p + 1, p + 1)
        Zero below the block diagonal (``j > m``).
    """
    X = data.X if centre is None else data.X - centre
    design = np.hstack([np.ones((data.n_obs, 1)), -X])
    etas = [theta - X @ beta - data.offset for theta, beta in fits]
    # f / P(Y > j) and f / P(Y <= j) in logs: far in the tails (a separated split's
    # huge estimates) f, F and 1 - F underflow to 0, and their ratios need not; a row
    # whose density is 0 even in logs gives no information (0, not 0/0)
    log_density = [link.log_pdf(eta) for eta in etas]
    informative = [np.isfinite(d) for d in log_density]
    with np.errstate(invalid="ignore"):
        over_above = [d - link.log_sf(eta) for d, eta in zip(log_density, etas, strict=True)]
        over_below = [d - link.log_cdf(eta) for d, eta in zip(log_density, etas, strict=True)]
    n_cuts, k = len(fits), design.shape[1]
    cross = np.zeros((n_cuts, n_cuts, k, k))
    for j in range(n_cuts):
        for m in range(j, n_cuts):
            # E[1(Y > j) 1(Y > m)] = pi_m for j <= m: the weight f_j f_m / (pi_j (1 - pi_m))
            both = informative[j] & informative[m]
            log_weight = np.where(both, over_above[j] + over_below[m], -np.inf)
            weight = data.weights * np.exp(log_weight)
            cross[j, m] = (design * weight[:, None]).T @ design
    return cross


def _joint_covariance(res: FittedState, fits: list[tuple[float, FloatArray]]) -> FloatArray:
    """Covariance of the stacked ``(theta_j, beta_j)`` of all binary models (Brant 1990).

    The cross products are one pass over the rows, in memory or in chunks.
    Columns that the fit centred (``x + 1e8``; its final evaluation's
    ``basis``) are centred here too: the intercepts' rows then belong to the
    centred columns, the slopes' (all that Brant's contrasts read) are unchanged.
    """
    evaluation, centre = getattr(res, "_evaluation", None), None
    if isinstance(evaluation, ShiftedEvaluation) and np.any(evaluation.basis.shift != 0.0):
        basis = evaluation.basis
        centre = np.zeros(len(fits[0][1]))
        centre[basis.beta - res.model.problem.layout.beta.start] = basis.shift
        fits = [(theta - float(centre @ beta), beta) for theta, beta in fits]
    cross = res.model.evaluator.reduce_rows(brant_cross_products, fits, res.model.link, centre)
    n_cuts, k = len(fits), cross.shape[-1]
    inverse_info = [_inverse_or_nan(cross[j, j]) for j in range(n_cuts)]
    joint = np.zeros((n_cuts * k, n_cuts * k))
    for j in range(n_cuts):
        for m in range(j, n_cuts):
            block = inverse_info[j] @ cross[j, m] @ inverse_info[m]
            joint[j * k : (j + 1) * k, m * k : (m + 1) * k] = block
            joint[m * k : (m + 1) * k, j * k : (j + 1) * k] = block.T
    return joint


def _inverse_or_nan(information: FloatArray) -> FloatArray:
    """The inverse of a binary model's information matrix; NaN where it is singular.

    A separated split (warned about by :func:`_binary_fits`) can leave no row
    with information about some direction.
    """
    if np.all(np.isfinite(information)):
        try:
            return np.asarray(linalg.inv(information))
        except linalg.LinAlgError:
            pass
    return np.full_like(information, np.nan)


def _wald(contrast: FloatArray, estimates: FloatArray, covariance: FloatArray) -> tuple[float, int]:
    """Wald statistic of ``contrast @ estimates = 0`` and its df (NaN where not estimable)."""
    value = contrast @ estimates
    middle = contrast @ covariance @ contrast.T
    if not (np.all(np.isfinite(middle)) and np.all(np.isfinite(value))):
        return float("nan"), contrast.shape[0]
    try:
        return float(value @ np.linalg.solve(middle, value)), contrast.shape[0]
    except np.linalg.LinAlgError:
        return float("nan"), contrast.shape[0]


def _equality_contrast(columns: Sequence[int], n_cuts: int, k: int) -> FloatArray:
    """Rows ``beta_1c - beta_jc`` (j = 2..n_cuts) for each column ``c`` (1-based in ``k``)."""
    rows = []
    for col in columns:
        for j in range(1, n_cuts):
            row = np.zeros(n_cuts * k)
            row[col] = 1.0
            row[j * k + col] = -1.0
            rows.append(row)
    return np.array(rows)


def _chunk_residuals(res: GoodnessOfFitMethods, chunk: pd.DataFrame) -> pd.Series:
    """Probability-scale residuals of one chunk (NaN for rows without a usable response)."""
    # the fitted rows: no warning about new rows (predict's, for a rank-deficient fit)
    prob = res._predict_rows(chunk, "prob").to_numpy()  # type: ignore[attr-defined]
    values = np.full(len(chunk), np.nan)
    censoring = res.model.design.response.censoring
    if censoring is not None:  # the range of levels of each row's (lower, upper]
        _censored_residuals(res, chunk, censoring, prob, values)
        return pd.Series(values, index=chunk.index, name="resid_prob")
    codes = {label: j for j, label in enumerate(res.model.levels)}
    labels = chunk[res.model.endog_name].map(lambda v: codes.get(format_level(v), -1))
    y = labels.to_numpy(dtype=np.intp)
    usable = (y >= 0) & np.all(np.isfinite(prob), axis=1)
    values[usable] = residuals_from_probabilities(prob[usable], y[usable])
    return pd.Series(values, index=chunk.index, name="resid_prob")


def _censored_residuals(
    res: GoodnessOfFitMethods,
    chunk: pd.DataFrame,
    censoring: Any,
    prob: FloatArray,
    out: FloatArray,
) -> None:
    """``P(Y < y_low) - P(Y > y)`` of a chunk's censored rows into ``out`` (as in memory)."""
    context = res.model.formula_context  # a dict of the caller's names, or None
    bounds = censored_response(
        res.model.endog_name, chunk, context if isinstance(context, Mapping) else None
    )
    assert bounds is not None  # the model's response is Censored(lower, upper)
    lower, upper = np.asarray(bounds.lower, float), np.asarray(bounds.upper, float)
    usable = ~np.isnan(lower) & ~np.isnan(upper) & np.all(np.isfinite(prob), axis=1)
    rows = np.flatnonzero(usable)
    low, high = censoring.codes(lower[rows], upper[rows])
    below = np.cumsum(prob[rows], axis=1)
    under = np.where(low > 0, below[np.arange(rows.size), np.maximum(low - 1, 0)], 0.0)
    over = prob[rows][:, ::-1].cumsum(axis=1)[:, ::-1]  # P(Y >= k), summed from the top
    top = prob.shape[1] - 1
    beyond = np.where(high < top, over[np.arange(rows.size), np.minimum(high + 1, top)], 0.0)
    out[rows] = under - beyond


def brant_test(res: FittedState) -> pd.DataFrame:
    """Brant's Wald test of the proportional-odds assumption (see module docstring).

    Parameters
    ----------
    res : OrdinalResults
        A location-only cumulative link model with at least three levels.

    Returns
    -------
    pandas.DataFrame
        Rows ``All`` (omnibus), each design column and each formula term with
        several columns; columns ``chi2``, ``df``, ``Pr(>chi2)``.
        ``attrs["binary_params"]`` holds the slopes of the binary model of each
        cut-point, to see how the effects differ, as a dict of columns
        (``"> level"``) of ``{regressor: slope}``: ``pd.DataFrame(attrs["binary_params"])``
        gives the table.  (A plain dict, so that pandas can compare the ``attrs``
        when it concatenates or casts the table.)

    Raises
    ------
    SpecificationError
        Fewer than three response levels, no regressors, nominal/scale effects,
        a flexible link, or a family other than the cumulative model.
    """
    model = res.model
    lay = model.problem.layout
    if res.data_removed:
        raise rows_removed_error("Brant's test")
    if not model.family_spec.capabilities.latent_variable:
        raise SpecificationError(
            "Brant's test checks the proportional-odds assumption of the cumulative model; "
            f"for family={model.family!r} test the shared slopes against non-parallel "
            "ones instead: lr_test(fit, fit of the same model with nominal='~ term')"
        )
    if len(model.levels) < 3:
        raise SpecificationError("Brant's test needs at least three response levels")
    if lay.n_beta == 0:
        raise SpecificationError("Brant's test needs location effects to test")
    if lay.n_nominal_cols or lay.n_zeta:
        raise SpecificationError(
            "Brant's test is defined for models with location effects only; this model "
            "has nominal or scale effects (test those with nominal_test/scale_test or lr_test)"
        )
    if lay.n_lambda:
        raise SpecificationError(
            "Brant's test needs a fixed link; this model estimates the link parameter "
            "lambda. Use the standard link it nests (e.g. logit for Aranda-Ordaz)"
        )
    fits = _binary_fits(res)
    covariance = _joint_covariance(res, fits)
    estimates = np.concatenate([np.r_[theta, beta] for theta, beta in fits])
    n_cuts, k = len(fits), lay.n_beta + 1
    names = model.exog_names
    position = {name: j + 1 for j, name in enumerate(names)}
    groups: dict[str, list[int]] = {"All": list(range(1, k))}
    groups.update({name: [position[name]] for name in names})
    for term, term_names in term_columns(model.design.location).items():
        if len(term_names) > 1:
            groups[term] = [position[c] for c in term_names]
    rows = {}
    for label, columns in groups.items():
        chi2, df = _wald(_equality_contrast(columns, n_cuts, k), estimates, covariance)
        rows[label] = {"chi2": chi2, "df": df, "Pr(>chi2)": float(stats.chi2.sf(chi2, df))}
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.attrs["binary_params"] = pd.DataFrame(
        np.column_stack([beta for _, beta in fits]),
        index=names,
        columns=[f"> {level}" for level in model.levels[:-1]],
    ).to_dict()
    return table


class GoodnessOfFitMethods(FittedState):
    """Brant's test, pseudo-R-squared and probability-scale residuals."""

    def brant_test(self) -> pd.DataFrame:
        """Brant's Wald test of proportional odds, per column, term and overall.

        Fits the binary model of ``Y > j`` for each cut-point and tests that
        their slopes are equal (Stata's ``brant``).  A small ``Pr(>chi2)`` for a
        regressor says its effect differs between cut-points.  See
        :mod:`ordstats.results.goodness`.

        Returns
        -------
        pandas.DataFrame
            Rows ``All`` and each column/term; ``chi2``, ``df``, ``Pr(>chi2)``.
        """
        with numeric_threads():  # the binary fits and their products
            return brant_test(self)

    def simulate(self, nsim: int = 1, seed: Any = None) -> pd.DataFrame:
        """New responses drawn from the fit, row by row (R's ``simulate(fit, nsim, seed)``).

        Each row's response is drawn from its fitted probabilities, as MASS's
        ``simulate.polr`` (the parametric bootstrap's responses); see
        :func:`ordstats.results.simulation.simulate_responses`.

        Parameters
        ----------
        nsim : int
            Number of simulated responses per row.
        seed : int, numpy.random.Generator or None

        Returns
        -------
        pandas.DataFrame
            Columns ``sim_1``, ..., one ordered categorical per simulation (a
            Dask DataFrame for a Dask fit; for a Spark fit a Spark DataFrame of
            the rows with those columns, drawn in the cluster).
        """
        return simulate_responses(self, nsim, seed)

    def lrm_stats(self) -> pd.Series:
        """The statistics rms::lrm prints for this fit (R's ``fit$stats``).

        Likelihood-ratio test, rank correlations of the predicted probability
        of a response above the middle level with the response (``C``,
        ``Dxy``, ``Gamma``, ``Tau-a``), Nagelkerke's and the ``R2(p,n)``
        measures, Brier score and the ``g``-indexes; see
        :mod:`ordstats.results.rms_stats` for each definition and for where rms
        approximates or errs.  One pass over the rows, in memory or in chunks.

        Returns
        -------
        pandas.Series
            With rms's names (``"Model L.R."``, ``"C"``, ``"R2(2,72)"``, ...).
        """
        return lrm_stats(self)

    def orm_stats(self) -> pd.Series:
        """The statistics rms::orm prints for this fit (R's ``fit$stats``).

        Likelihood-ratio and score tests, Spearman's ``rho`` of the linear
        predictor with the response, the R-squared measures, ``g``, ``gr`` and
        ``pdm``; for ordinal and continuous responses under any standard link
        (orm's families).  See :func:`ordstats.results.rms_stats.orm_stats`.

        Returns
        -------
        pandas.Series
            With rms's names (``"Distinct Y"``, ``"Score"``, ``"rho"``, ...).
        """
        return orm_stats(self)

    def validate(
        self,
        method: str = "boot",
        B: int | None = None,
        seed: int | np.random.Generator | None = None,
        samples: Any = None,
        progress: bool | None = None,
        indexes: str = "lrm",
        stratify: bool = False,
    ) -> pd.DataFrame:
        """Bootstrap optimism-corrected indexes, as rms's ``validate(fit, B = 200)``.

        The model is refitted on ``B`` bootstrap samples of its rows; each
        index (``Dxy``, ``R2``, calibration ``Intercept`` and ``Slope``,
        ``Emax``, ``D``, ``U``, ``Q``, Brier ``B``, ``g``, ``gp``) is evaluated
        on the sample (``training``) and on the original rows with the
        sample's estimates (``test``).  See :mod:`ordstats.results.validation`
        for each definition.  For a cumulative logit fit with free thresholds,
        no weights and no offset, with its rows in memory.

        Parameters
        ----------
        method : {"boot"}
            The bootstrap (rms's default; cross-validation is not offered).
        B : int, optional
            Number of bootstrap samples; default 200, or the rows of ``samples``.
        seed : int or numpy.random.Generator, optional
            Draws the samples (``numpy.random.default_rng(seed)``).
        samples : array-like of int, shape (B, n), optional
            The 0-based rows of each sample, e.g. R's draws (``sample(n,
            replace = TRUE) - 1`` after ``set.seed``) to reproduce its table.
        progress : bool, optional
            Report the samples done on standard error; default: when a terminal
            or notebook is watching.
        indexes : {"lrm", "orm"}
            rms's ``validate.lrm`` indexes (above; logit link) or those of
            ``validate.orm`` (``rho``, ``R2``, ``Slope``, ``g``, ``pdm``; any
            link), for a response with many levels fitted as rms's ``orm``.
        stratify : bool
            Draw each sample within the levels of the response, so that every
            level keeps its rows (rms's ``group = y``, which its error message
            advises when a sample misses a level of an lrm fit).

        Returns
        -------
        pandas.DataFrame
            Rows the indexes; columns ``index.orig``, ``training``, ``test``,
            ``optimism`` (training - test), ``index.corrected`` (index.orig -
            optimism) and ``n`` (samples counted), as rms.

        Warns
        -----
        ConvergenceWarning
            When some refits did not converge (left out, as rms).
        """
        how = {"method": method, "B": B, "seed": seed, "samples": samples}
        return validate(self, how | {"indexes": indexes, "stratify": stratify}, progress)

    @cached_property
    def pseudo_rsquared(self) -> pd.Series:
        """McFadden, Cox-Snell, Nagelkerke and McKelvey-Zavoina pseudo-R².

        See :mod:`ordstats.results.goodness` for the definitions.
        """
        evaluator = self.model.evaluator  # two sums over the rows, in memory or in chunks
        beta = self.params.to_numpy()[self.model.problem.layout.beta]
        mean = float(evaluator.reduce_rows(linear_predictor_sums, beta, 0.0)[0]) / self.nobs
        explained = float(evaluator.reduce_rows(linear_predictor_sums, beta, mean)[1]) / self.nobs
        values = pseudo_rsquared(
            self.llf,
            self.llnull,
            self.nobs,
            explained,
            self.model.link,
            self.model.problem.layout.n_zeta > 0,
        )
        if not self.model.family_spec.capabilities.latent_variable:
            # McKelvey-Zavoina needs the latent variable of a cumulative model
            values["mckelvey_zavoina"] = np.nan
        return values

    @property
    def prsquared(self) -> float:
        """McFadden's pseudo-R², ``1 - llf / llnull`` (statsmodels' name)."""
        return float(self.pseudo_rsquared["mcfadden"])

    @property
    def llr(self) -> float:
        """Likelihood-ratio statistic against the thresholds-only model, ``2 (llf - llnull)``."""
        return 2.0 * (self.llf - self.llnull)

    @property
    def llr_pvalue(self) -> float:
        """p-value of :attr:`llr` on ``df_model`` degrees of freedom (chi-square)."""
        df = self.df_model  # type: ignore[attr-defined]
        return float(stats.chi2.sf(self.llr, df)) if df > 0 else float("nan")

    @property
    def resid(self) -> pd.Series:
        """Residuals: the probability-scale residuals :attr:`resid_prob`.

        ``P(Y < y) - P(Y > y)`` (Li & Shepherd 2012), as statsmodels'
        ``OrderedResults.resid_prob``; an ordinal response has no
        ``y - fitted`` residual.
        """
        return self.resid_prob

    @property
    def resid_prob(self) -> pd.Series:
        """Probability-scale residuals ``P(Y < y) - P(Y > y)`` (Li & Shepherd 2012).

        Indexed by the rows used in the fit (for data read in chunks, rows in
        file order numbered from 0; a Dask or Spark fit: a lazy Dask Series or
        a Spark DataFrame).
        """
        cached = self.__dict__.get("resid_prob")
        if cached is None:
            cached = self._probability_residuals()
            # a lazy Spark or Dask result is not kept: it would tie the result to the
            # cluster's session, and a result that holds one cannot be pickled or sent
            # to the workers (the margins, get_margeff and save() do both)
            if isinstance(cached, pd.Series):
                self.__dict__["resid_prob"] = cached
        return cached

    def resid_surrogate(self, newdata: Any = None, *, seed: Any = None) -> pd.Series:
        """Surrogate residuals: draws of the latent error given each row's level (R's ``sure``).

        Liu & Zhang (2018): each row's residual is drawn from the link's
        distribution ``F`` truncated to the interval of the latent variable
        that gives its observed level, ``((theta_{y-1} - eta) / s, (theta_y -
        eta) / s]``.  Under the fitted model they are independent draws of
        ``F``, so a Q-Q plot against ``F`` checks the link and a plot against
        the fitted ``eta`` or a covariate shows a missing trend or a varying
        scale (:func:`ordstats.plotting.plot_residuals`).  The values are
        random: R's ``sure::resids`` (which gives them on the location scale)
        and ordstats agree in distribution, and a seed repeats a draw.

        Parameters
        ----------
        newdata : pandas.DataFrame, optional
            Rows with the response column (default: the fitted rows).  A fit
            read in chunks, on Dask or on Spark needs them: pass a sample of
            its rows as a pandas DataFrame.
        seed : int, numpy.random.Generator or None
            Seeds the uniform draws (numpy's ``default_rng``).

        Returns
        -------
        pandas.Series
            ``resid_surrogate``, indexed as the rows; NaN where the response or
            a predictor is missing.

        Raises
        ------
        OrdstatsError
            A family without a latent variable (sequential, adjacent: use
            :attr:`resid_prob`), or no rows in memory.
        PredictionError
            ``newdata`` without the response column, or of a censored response.
        """
        if not self.model.family_spec.capabilities.latent_variable:
            refuse_without_latent_variable(self.model.family_spec.label)
        link = self._link  # type: ignore[attr-defined]
        if newdata is None:
            if self.data_removed:
                raise rows_removed_error("resid_surrogate() without newdata")
            if not self.model.evaluator.keeps_rows:
                raise OrdstatsError(
                    "surrogate residuals of the fitted rows need them in memory, and a model "
                    "read in chunks (or on Dask or Spark) does not keep them: pass a sample "
                    "of the rows as newdata (a pandas DataFrame with the response column)"
                )
            evaluation = self._evaluation  # type: ignore[attr-defined]
            index = self.model.design.row_index
            return surrogate_series(evaluation.lower, evaluation.upper, link, index, seed)
        if self.model.design.response.censoring is not None:
            raise PredictionError(
                "surrogate residuals of new rows read one level per row; a censored "
                "response spans several: use the fitted rows (newdata=None)"
            )
        with numeric_threads():
            eta, theta, scale, index = self._linear_parts(newdata, None)  # type: ignore[attr-defined]
        codes = self._response_codes(  # type: ignore[attr-defined]
            newdata, "surrogate residuals are drawn given each row's own level"
        )
        lower, upper = latent_bounds(theta, eta, scale, codes)
        return surrogate_series(lower, upper, link, index, seed)

    def _probability_residuals(self) -> Any:
        if self.data_removed:
            raise rows_removed_error("resid_prob (and resid)")
        if not self.model.evaluator.keeps_rows:
            source = self.model.source
            residuals = functools.partial(_chunk_residuals, self)
            # named by _chunk_residuals: a Spark fit gives a Spark DataFrame, which has no rename
            rows = self.model.evaluator.fitted_rows()
            return predict_in_chunks(residuals, source, warn_missing=False, rows=rows)
        evaluation = self._evaluation  # type: ignore[attr-defined]
        if self.model.family_spec.capabilities.latent_variable:
            values = probability_residuals(evaluation, evaluation.link)  # lambda-hat
        else:
            prob = self.predict().to_numpy()  # type: ignore[attr-defined]
            values = residuals_from_probabilities(prob, self.model.data.y)
        return pd.Series(values, index=self.model.design.row_index, name="resid_prob")
