r"""Posterior modes and posterior draws of a Bayesian fit (``fit(prior=...)``).

:class:`PosteriorMode` is what ``model.fit(prior=...)`` returns: the mode of the log
posterior with its Hessian.  :meth:`PosteriorMode.posterior` draws from the posterior:

``method="laplace"`` (default)
    Importance sampling from a multivariate Student-t proposal (``df`` degrees of
    freedom) centred at the mode with the inverse Hessian as its scale matrix, with
    Pareto-smoothed importance weights (:func:`ordstats.core.psis.psis`); by default
    half of the draws come from that proposal and half from the proposal moved to
    their weighted mean and covariance (``adapt=True``), all weighed against the
    mixture of the two (:func:`adaptive_importance`).  The draws are randomised
    quasi-Monte Carlo (scrambled Sobol' points), which makes the weighted averages
    more accurate than independent draws would.  The mode is
    not the mean of a skewed posterior; the weights move the proposal's draws to the
    posterior, and the Pareto ``k-hat`` says whether they can: above 0.7 a warning
    advises ``method="nuts"``.  The log posterior of all draws is evaluated at once
    where the model allows (:mod:`ordstats.estimation.draw_densities`).
``method="nuts"``
    NumPyro's No-U-Turn sampler on the same log density (the ``bayes`` extra:
    ``pip install 'ordstats[bayes]'``; :mod:`ordstats.results.nuts`).

A :class:`Posterior` holds the draws with their weights (equal for NUTS) and summarises
them (mean, SD, quantiles, effective sample size, k-hat); it predicts on the draws
(probabilities and expected ratings with credible intervals), checks the model against
replicated level counts, and exports ArviZ ``InferenceData``.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
import pandas as pd
from scipy import linalg

from ordstats._typing import FloatArray
from ordstats.config import is_interactive
from ordstats.core.psis import (
    K_HAT_LIMIT,
    mvt_draws,
    mvt_logpdf,
    mvt_mixture_logpdf,
    psis,
    weighted_quantiles,
)
from ordstats.core.threads import numeric_threads
from ordstats.errors import (
    OrdstatsWarning,
    SpecificationError,
    check_flag,
    check_seed,
    user_stacklevel,
)
from ordstats.results import figures
from ordstats.results.margins.protocol import ROW_VERBS

__all__ = [
    "Posterior",
    "PosteriorMode",
    "PosteriorTarget",
    "PosteriorWarning",
    "adaptive_importance",
]

#: Degrees of freedom of the Student-t proposal.
PROPOSAL_DF = 7.0


class PosteriorWarning(OrdstatsWarning):
    """The importance-sampling posterior is unreliable (Pareto k-hat above 0.7)."""


class PosteriorTarget(Protocol):
    """What the posterior reads of a model and its prior (``estimation.bayes.Target``)."""

    param_names: list[str]
    levels: list[str]

    def log_density(self, x: FloatArray) -> float:  # pragma: no cover - protocol
        """Log posterior at ``x`` up to a constant."""
        ...

    def log_density_batch(self, X: FloatArray) -> FloatArray:  # pragma: no cover - protocol
        """Log posterior at each row of ``X``."""
        ...

    def log_density_and_gradient(
        self, x: FloatArray
    ) -> tuple[float, FloatArray]:  # pragma: no cover - protocol
        """Log posterior and its gradient."""
        ...

    def probabilities(
        self, x: FloatArray, newdata: Any = None
    ) -> FloatArray:  # pragma: no cover - protocol
        """Category probabilities at ``x``."""
        ...

    def probabilities_batch(
        self, draws: FloatArray, newdata: Any = None
    ) -> FloatArray:  # pragma: no cover - protocol
        """Category probabilities at each draw, (draws, rows, levels)."""
        ...

    def results_at(self, x: FloatArray) -> Any:  # pragma: no cover - protocol
        """A results object at parameters ``x`` with the margins verbs (clm only)."""

    def model_params(self, X: FloatArray) -> FloatArray:  # pragma: no cover - protocol
        """The model's own parameters (what its results hold) at each sampled row of ``X``."""
        ...

    def observed_counts(self) -> FloatArray:  # pragma: no cover - protocol
        """Weighted count of each level in the fitted rows."""
        ...

    def row_weights(self) -> FloatArray:  # pragma: no cover - protocol
        """Frequency weights of the fitted rows."""
        ...

    def row_labels(self, newdata: Any = None) -> pd.Index:  # pragma: no cover - protocol
        """Labels of the rows :meth:`probabilities_batch` returns."""
        ...


class PosteriorMode:
    """The posterior mode of a Bayesian fit (``model.fit(prior=...)``).

    Attributes
    ----------
    params : pandas.Series
        The mode (for a mixed model with the log standard deviations last).
    hessian : ndarray
        Hessian of the negative log posterior at the mode.
    log_posterior : float
        Log posterior at the mode, up to a constant.
    converged : bool
    """

    def __init__(
        self,
        target: PosteriorTarget,
        params: FloatArray,
        hessian: FloatArray,
        *,
        log_posterior: float,
        prior_table: Sequence[tuple[str, str, str]],
        converged: bool,
        message: str,
    ) -> None:
        self.target = target
        self.params = pd.Series(np.asarray(params, dtype=float), index=target.param_names)
        self.hessian = np.asarray(hessian, dtype=float)
        self.log_posterior = float(log_posterior)
        self.converged = bool(converged)
        self.message = message
        self._prior_table = list(prior_table)

    @property
    def prior_summary(self) -> pd.DataFrame:
        """The prior of each parameter (brms' ``prior_summary``): class, name, prior."""
        return pd.DataFrame(self._prior_table, columns=["class", "coef", "prior"])

    @property
    def cov_params_laplace(self) -> pd.DataFrame:
        """Inverse Hessian at the mode: the Laplace approximation's covariance."""
        names = self.params.index
        return pd.DataFrame(linalg.inv(self.hessian), index=names, columns=names)

    def posterior(
        self,
        draws: int = 4000,
        *,
        method: str = "laplace",
        seed: int | None = 0,
        df: float = PROPOSAL_DF,
        chains: int = 4,
        warmup: int = 1000,
        adapt: bool = True,
        progress: bool | None = None,
    ) -> Posterior:
        """Draws from the posterior and their summaries.

        Parameters
        ----------
        draws : int
            Number of draws (for NUTS: per chain).
        method : {"laplace", "nuts"}
            Importance sampling from a Student-t at the mode with Pareto-smoothed
            weights (fast), or NumPyro's NUTS (the ``bayes`` extra).
        seed : int or None
        df : float
            Degrees of freedom of the Student-t proposal (``"laplace"``).
        chains, warmup : int
            NUTS chains and warm-up iterations per chain (``"nuts"``).
        adapt : bool
            ``"laplace"``: draw ``draws // 2`` from the Laplace proposal, then the
            rest from the proposal moved to their importance-weighted mean and
            covariance (one step of adaptive importance sampling, which lowers k-hat
            on skewed posteriors); all ``draws`` are kept, weighed against the mixture
            of the two proposals.
        progress : bool or None
            ``"nuts"``: show a progress bar per chain (warm-up, then sampling) on
            standard error.  None: when a terminal or a notebook is watching.
            (NumPyro draws no bars where the environment variable ``CI`` is set.)

        Returns
        -------
        Posterior

        Warns
        -----
        PosteriorWarning
            When the Pareto k-hat exceeds 0.7: the importance weights are unreliable.
        """
        with numeric_threads():  # thin products, as in a fit
            n = _positive_int(draws, "draws")
            if n < MIN_DRAWS:
                raise SpecificationError(
                    f"draws must be at least {MIN_DRAWS}: fewer give no usable spread, "
                    f"effective sample size or Pareto k-hat; got {n}"
                )
            seed = check_seed(seed)
            chains, warmup = _positive_int(chains, "chains"), _positive_int(warmup, "warmup")
            show = is_interactive() if progress is None else check_flag("progress", progress)
            if method == "laplace":
                if not (isinstance(df, (int, float)) and np.isfinite(df) and df > 0):
                    raise SpecificationError(f"df must be a positive number; got {df!r}")
                return self._importance(n, seed, float(df), check_flag("adapt", adapt))
            if method == "nuts":
                from ordstats.results.nuts import run_nuts

                x, stats = run_nuts(
                    self.target,
                    self.params.to_numpy(),
                    self.hessian,
                    draws=n,
                    chains=chains,
                    warmup=warmup,
                    seed=0 if seed is None else int(seed),
                    progress=show,
                )
                return Posterior(
                    self.target,
                    x,
                    np.full(x.shape[0], -np.log(x.shape[0])),
                    method="nuts",
                    chains=int(chains),
                    sample_stats=stats,
                )
            raise SpecificationError(f"method must be 'laplace' or 'nuts'; got {method!r}")

    def _importance(self, n: int, seed: int | None, df: float, adapt: bool) -> Posterior:
        try:
            chol = linalg.cholesky(linalg.inv(self.hessian), lower=True)
        except (linalg.LinAlgError, ValueError):
            raise SpecificationError(
                "the log posterior's Hessian at the mode is not positive definite, so the "
                "Laplace proposal does not exist; use proper priors on every parameter, or "
                "method='nuts'"
            ) from None
        rng = np.random.default_rng(seed)
        centre = self.params.to_numpy()
        try:
            x, log_ratio = adaptive_importance(
                self.target, centre, chol, df, n, rng, adapt=adapt, reference=self.log_posterior
            )
        except MemoryError:
            raise SpecificationError(
                f"draws={n} do not fit in memory ({n} draws of {centre.size} parameters, "
                "each evaluated on every row); use fewer draws (the default 4000 is "
                "usually enough)"
            ) from None
        smoothed = psis(log_ratio)
        post = Posterior(
            self.target, x, smoothed.log_weights, method="laplace", k_hat=smoothed.k_hat
        )
        if not smoothed.k_hat <= K_HAT_LIMIT:
            warnings.warn(
                f"Pareto k-hat = {smoothed.k_hat:.2f} > {K_HAT_LIMIT}: the importance weights "
                "are unreliable, the posterior is too far from the Student-t at its mode. "
                "Use posterior(method='nuts') (pip install 'ordstats[bayes]'), or more "
                "informative priors",
                PosteriorWarning,
                stacklevel=user_stacklevel(),
            )
        return post

    def __repr__(self) -> str:
        return f"PosteriorMode(k={self.params.size}, log_posterior={self.log_posterior:.4f})"


#: Fewest draws a posterior takes (Pareto smoothing fits the largest weights).
MIN_DRAWS = 10


def _positive_int(value: object, name: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise SpecificationError(f"{name} must be a positive whole number; got {value!r}")
    if value <= 0:
        raise SpecificationError(f"{name} must be a positive whole number; got {value!r}")
    return int(value)


def adaptive_importance(
    target: PosteriorTarget,
    centre: FloatArray,
    chol: FloatArray,
    df: float,
    n: int,
    rng: np.random.Generator,
    *,
    adapt: bool = True,
    reference: float = 0.0,
) -> tuple[FloatArray, FloatArray]:
    """``n`` draws and their log importance ratios ``log p - log q`` (before smoothing).

    Without ``adapt``: ``n`` draws of the Student-t at ``centre`` with scale factor
    ``chol``.  With ``adapt`` (and ``n >= 2``): ``n // 2`` such draws, then the
    proposal moved to their PSIS-weighted mean and covariance for the other draws
    (one step of adaptive importance sampling), when the first draws' effective
    sample size is at least twice the number of parameters.  Every draw is kept and
    weighed against the mixture of the two proposals in the proportions drawn from them
    (:func:`ordstats.core.psis.mvt_mixture_logpdf`): ``p / q_mix`` is at most twice
    ``p`` over either proposal, so a poor first proposal costs little.  The draws are
    randomised quasi-Monte Carlo (:func:`ordstats.core.psis.sobol_uniforms`).
    ``reference`` (the log posterior at the mode) only keeps the ratios near 0.
    """
    components = [(centre, chol)]
    x, log_q = mvt_draws(centre, chol, df, n // 2 if adapt and n >= 2 else n, rng)
    log_p = target.log_density_batch(x) - reference
    if x.shape[0] == n:
        return x, log_p - log_q
    first = psis(log_p - log_q)
    if first.ess >= 2 * centre.size:
        w = first.weights
        mean = w @ x
        centred = x - mean
        try:
            components.append(
                (mean, linalg.cholesky((centred * w[:, None]).T @ centred, lower=True))
            )
        except linalg.LinAlgError:  # a degenerate weighted covariance: keep the Laplace one
            pass
    second, _ = mvt_draws(*components[-1], df, n - x.shape[0], rng)
    x = np.vstack([x, second])
    log_p = np.concatenate([log_p, target.log_density_batch(second) - reference])
    if len(components) == 1:
        return x, log_p - mvt_logpdf(x, centre, chol, df)
    fractions = np.array([n // 2, n - n // 2], dtype=float) / n
    return x, log_p - mvt_mixture_logpdf(x, components, df, fractions)


class Posterior:
    """Posterior draws with their weights (``PosteriorMode.posterior()``).

    Attributes
    ----------
    draws : pandas.DataFrame
        One row per draw, one column per parameter.
    weights : ndarray
        Normalised importance weights (equal for NUTS).
    k_hat : float
        Pareto k-hat of the importance weights (``nan`` for NUTS).
    ess : float
        Effective sample size of the weights, ``1 / sum w^2`` (for NUTS: the smallest
        bulk ESS over the parameters, by ArviZ).
    method : str
    sample_stats : dict of str to ndarray
        NUTS: the sampler's statistics per chain and draw (``diverging``,
        ``energy``, ``lp``, ``n_steps``, ``tree_depth``, ``acceptance_rate``);
        empty for importance sampling.
    """

    def __init__(
        self,
        target: PosteriorTarget,
        draws: FloatArray,
        log_weights: FloatArray,
        *,
        method: str,
        k_hat: float = np.nan,
        chains: int = 1,
        sample_stats: dict[str, np.ndarray] | None = None,
    ) -> None:
        self.target = target
        self.draws = pd.DataFrame(draws, columns=target.param_names)
        self.log_weights = np.asarray(log_weights, dtype=float)
        self.weights = np.exp(self.log_weights)
        self.method = method
        self.k_hat = float(k_hat)
        self.chains = chains
        self.sample_stats = {} if sample_stats is None else dict(sample_stats)
        self._bulk_ess: FloatArray | None = None

    @property
    def ess(self) -> float:
        """Effective sample size (see the class docstring)."""
        if self.method == "nuts":
            return float(np.min(self._nuts_ess()))
        return float(1.0 / np.sum(self.weights**2))

    def _nuts_ess(self) -> FloatArray:
        if self._bulk_ess is None:
            import arviz as az

            ess = az.ess(self.to_arviz())
            self._bulk_ess = np.array([float(ess[_safe(n)]) for n in self.draws.columns])
        return self._bulk_ess

    def mean(self) -> pd.Series:
        """Posterior means."""
        return pd.Series(self.weights @ self.draws.to_numpy(), index=self.draws.columns)

    def std(self) -> pd.Series:
        """Posterior standard deviations."""
        x = self.draws.to_numpy()
        m = self.weights @ x
        return pd.Series(np.sqrt(self.weights @ (x - m) ** 2), index=self.draws.columns)

    def summary(self, probs: Sequence[float] = (0.025, 0.5, 0.975)) -> pd.DataFrame:
        """Mean, SD, quantiles, effective sample size and k-hat of each parameter.

        Parameters
        ----------
        probs : sequence of float
            Quantiles to report, each in (0, 1).

        Returns
        -------
        pandas.DataFrame
        """
        try:
            p = np.asarray(probs, dtype=float)
        except (TypeError, ValueError):
            p = np.array([np.nan])
        if p.ndim != 1 or not np.all((p > 0) & (p < 1)):
            raise SpecificationError(f"probs must be numbers in (0, 1); got {probs!r}")
        q = weighted_quantiles(self.draws.to_numpy(), self.weights, p)
        table = pd.DataFrame({"mean": self.mean(), "sd": self.std()})
        for value, row in zip(p, q, strict=True):
            table[f"q{100 * value:g}"] = row
        if self.method == "nuts":
            table["ess"] = self._nuts_ess()
        else:
            table["ess"] = self.ess
            table["k_hat"] = self.k_hat
        return table

    def resample(self, n: int | None = None, seed: int | None = 0) -> pd.DataFrame:
        """Equally weighted draws: the draws resampled by their weights (systematic).

        Parameters
        ----------
        n : int, optional
            Number of draws; default as many as there are.
        seed : int or None

        Returns
        -------
        pandas.DataFrame
        """
        size = self.draws.shape[0] if n is None else _positive_int(n, "n")
        return self.draws.iloc[self._resampled_rows(size, seed)].reset_index(drop=True)

    def _resampled_rows(self, size: int, seed: int | None) -> np.ndarray:
        """Rows of :attr:`draws` that :meth:`resample` copies, in its order."""
        rng = np.random.default_rng(check_seed(seed))
        positions = (rng.random() + np.arange(size)) / size
        index = np.searchsorted(np.cumsum(self.weights), positions)
        index = np.minimum(index, self.draws.shape[0] - 1)
        return rng.permutation(index)

    # -- predictions on the draws -------------------------------------------------------

    def _probabilities(self, newdata: Any, n_draws: int | None) -> tuple[FloatArray, FloatArray]:
        """Probabilities at each draw (S, n, K) with the draws' weights."""
        if n_draws is None:
            keep = self.weights > 0  # a draw outside the support (disordered thresholds)
            x, w = self.draws.to_numpy()[keep], self.weights[keep]
        else:
            x = self.resample(n_draws).to_numpy()
            w = np.full(x.shape[0], 1.0 / x.shape[0])
        return self.target.probabilities_batch(x, newdata), w

    def predict(
        self,
        newdata: Any = None,
        which: str = "prob",
        *,
        alpha: float = 0.05,
        n_draws: int | None = 1000,
    ) -> pd.DataFrame:
        """Posterior mean and credible interval of probabilities or expected ratings.

        Parameters
        ----------
        newdata : pandas.DataFrame, optional
            Rows to predict (default: the fitted rows; mixed models: the fitted rows,
            with the random effects at 0).
        which : {"prob", "expected"}
            Category probabilities (one row per row and level) or the expected rating
            ``sum_k k P(Y = k)`` with levels scored 1, ..., K.
        alpha : float
            ``1 - alpha`` equal-tailed credible intervals.
        n_draws : int or None
            Draws to evaluate (resampled by weight); ``None``: every draw, weighted.

        Returns
        -------
        pandas.DataFrame
            Columns ``row`` (``newdata``'s index label of the row, or the fitted
            row's label; and ``level``), ``estimate`` (the posterior mean),
            ``lower``, ``upper``.
        """
        with numeric_threads():  # thin products, as in the fit
            if which not in {"prob", "expected"}:
                raise SpecificationError(f"which must be 'prob' or 'expected'; got {which!r}")
            if not (isinstance(alpha, float) and 0 < alpha < 1):
                raise SpecificationError(f"alpha must be a number in (0, 1); got {alpha!r}")
            prob, w = self._probabilities(newdata, n_draws)
            levels = self.target.levels
            S, n, K = prob.shape
            rows = self.target.row_labels(newdata)
            if len(rows) != n:  # pragma: no cover - every target labels each row
                rows = pd.RangeIndex(n)
            if which == "expected":
                values = prob @ np.arange(1, len(levels) + 1, dtype=float)  # (S, n)
                frame = pd.DataFrame({"row": np.asarray(rows)})
            else:
                values = prob.reshape(S, n * K)
                frame = pd.DataFrame(
                    {"row": np.asarray(rows).repeat(K), "level": np.tile(levels, n)}
                )
            q = weighted_quantiles(values, w, np.array([alpha / 2, 1 - alpha / 2]))
            frame["estimate"] = w @ values
            frame["lower"], frame["upper"] = q[0], q[1]
            return frame

    def margins(
        self,
        verb: str,
        newdata: Any = None,
        *,
        alpha: float = 0.05,
        n_draws: int = 200,
        seed: int | None = 0,
        **options: Any,
    ) -> pd.DataFrame:
        """A margins verb (``"avg_predictions"``, ``"comparisons"``, ...) on the draws.

        The verb (:mod:`ordstats.results.margins.verbs`, marginaleffects' names) is
        evaluated at ``n_draws`` draws resampled by weight; the table keeps the verb's
        labels with ``estimate`` the posterior mean and ``lower``/``upper`` the
        equal-tailed ``1 - alpha`` credible interval (no standard errors or p-values).

        Parameters
        ----------
        verb : {"predictions", "avg_predictions", "comparisons", "avg_comparisons",
                "slopes", "avg_slopes"}
        newdata : pandas.DataFrame, optional
        alpha : float
        n_draws : int
        seed : int or None
        **options
            Passed to the verb (``variables=``, ``by=``, ``type=``, ...).

        Returns
        -------
        pandas.DataFrame
        """
        if verb not in ROW_VERBS:
            raise SpecificationError(f"verb must be one of {ROW_VERBS}; got {verb!r}")
        if not (isinstance(alpha, float) and 0 < alpha < 1):
            raise SpecificationError(f"alpha must be a number in (0, 1); got {alpha!r}")
        x = self.resample(_positive_int(n_draws, "n_draws"), seed).to_numpy()
        base = self.target.results_at(x[0])
        # the verbs read the model's parameters, not the sampled ones (mo(), thres(gr = g))
        params = self.target.model_params(x)
        tables = [getattr(_AtDraw(base, row), verb)(newdata, **options) for row in params]
        values = np.column_stack([np.asarray(t["estimate"], dtype=float) for t in tables])
        label_columns = [
            c
            for c in tables[0].columns
            if c
            not in {
                "estimate",
                "std_error",
                "statistic",
                "p_value",
                "s_value",
                "conf_low",
                "conf_high",
            }
        ]
        out = pd.DataFrame(tables[0][label_columns]).reset_index(drop=True)
        out["estimate"] = values.mean(axis=1)
        out["lower"] = np.quantile(values, alpha / 2, axis=1)
        out["upper"] = np.quantile(values, 1 - alpha / 2, axis=1)
        return out

    def ppc_counts(self, n_draws: int = 200, seed: int | None = 0) -> pd.DataFrame:
        """Replicated level counts: one row per replicate, one column per level.

        Each replicate draws parameters from the posterior and a response for every
        fitted row (its frequency weight counted as that many rows).  For a mixed
        model the rows take the random effects at 0, as its posterior predictions
        do: the replicates are of a typical group, not of the fitted groups, so
        their spread of levels is narrower than the data's where groups differ
        (brms' ``pp_check`` draws the fitted groups' effects).

        Parameters
        ----------
        n_draws : int
        seed : int or None

        Returns
        -------
        pandas.DataFrame
        """
        n = _positive_int(n_draws, "n_draws")
        rng = np.random.default_rng(check_seed(seed))
        x = self.resample(n, seed).to_numpy()
        weights = np.rint(self.target.row_weights()).astype(np.int64)
        K = len(self.target.levels)
        counts = np.empty((n, K))
        all_prob = self.target.probabilities_batch(x, None)
        for s in range(n):
            prob = all_prob[s]
            counts[s] = sum(
                rng.multinomial(int(m), p / p.sum()) for m, p in zip(weights, prob, strict=True)
            )
        return pd.DataFrame(counts, columns=self.target.levels)

    def plot_ppc(self, n_draws: int = 200, ax: Any = None, seed: int | None = 0) -> Any:
        """Posterior predictive check: observed level counts against replicated ones.

        Parameters
        ----------
        n_draws : int
        ax : matplotlib Axes, optional
        seed : int or None

        Returns
        -------
        matplotlib Axes
        """
        reps = self.ppc_counts(n_draws, seed)
        ax = figures.axes(ax)
        levels = np.arange(len(self.target.levels))
        lo, mid, hi = np.percentile(reps.to_numpy(), [5, 50, 95], axis=0)
        ax.bar(levels, self.target.observed_counts(), color="lightgray", label="observed")
        ax.errorbar(
            levels,
            mid,
            yerr=[mid - lo, hi - mid],
            fmt="o",
            color="C0",
            label="replicated (median, 90%)",
        )
        ax.set_xticks(levels, self.target.levels)
        ax.set_ylabel("count")
        # above the axes: inside, the legend covered the tallest bar or its interval
        ax.legend(
            loc="lower left",
            bbox_to_anchor=(0.0, 1.01),
            borderaxespad=0.0,
            fontsize="small",
            frameon=False,
        )
        return ax

    def to_arviz(self) -> Any:
        """ArviZ ``InferenceData`` of the draws (the ``bayes`` extra).

        NUTS draws keep their chains, with the sampler's statistics as
        ``sample_stats`` (:attr:`sample_stats`: divergences, energy, tree depth,
        ...), so ``az.summary``, ``az.plot_energy`` and ``az.bfmi`` work.
        Importance-sampling draws are resampled by weight into one chain of
        equally weighted draws (ArviZ has no weighted draws, :meth:`resample`);
        their ``sample_stats`` hold ``log_weight``, the normalised log importance
        weight of the draw each resampled one copies, and the posterior's
        ``attrs`` the Pareto ``k_hat`` and the weights' ``ess``.  There is no
        Hamiltonian, so ArviZ's energy plot and BFMI do not apply to them.
        """
        try:
            import arviz as az
        except ImportError:
            raise SpecificationError(
                "to_arviz() needs ArviZ: pip install 'ordstats[bayes]'"
            ) from None
        if self.method == "nuts":
            x = self.draws.to_numpy().reshape(self.chains, -1, self.draws.shape[1])
            stats = self.sample_stats or None
        else:
            rows = self._resampled_rows(self.draws.shape[0], 0)
            x = self.draws.to_numpy()[rows][None]
            stats = {"log_weight": self.log_weights[rows][None]}
        data = {_safe(name): x[..., j] for j, name in enumerate(self.draws.columns)}
        idata = az.from_dict(posterior=data, sample_stats=stats)
        idata.posterior.attrs["method"] = self.method
        if self.method != "nuts":
            idata.posterior.attrs["k_hat"] = self.k_hat
            idata.posterior.attrs["ess"] = self.ess
        return idata

    def __repr__(self) -> str:
        return (
            f"Posterior(method={self.method!r}, draws={self.draws.shape[0]}, "
            f"ess={self.ess:.0f}, k_hat={self.k_hat:.2f})"
        )


class _AtDraw:
    """A results object seen at one draw: the margins verbs read ``margins_params()``."""

    def __init__(self, base: Any, params: FloatArray) -> None:
        self._base = base
        self._params = params

    def margins_params(self) -> FloatArray:
        return self._params

    def margins_covariance(self) -> FloatArray:
        """No standard errors at a draw: the credible intervals come from the draws.

        (The base fit's Hessian may be singular, e.g. at the absent thresholds of a
        ``thres(gr = g)`` group with fewer levels.)
        """
        k = np.asarray(self._params).size
        return np.full((k, k), np.nan)

    def __getattr__(self, name: str) -> Any:
        value = getattr(type(self._base), name, None)
        if callable(value) and name in ROW_VERBS:  # the verb runs with this object as the fit
            return value.__get__(self)
        return getattr(self._base, name)


def _safe(name: str) -> str:
    """A parameter's name as an ArviZ variable (no characters xarray dislikes)."""
    return name.replace("/", "_")
