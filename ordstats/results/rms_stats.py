"""The model statistics ``rms::lrm`` and ``rms::orm`` print (``fit$stats``).

:func:`lrm_stats` (ordinal logistic regression, rms's ``lrm``):

For a cumulative model with ``K`` levels, ``m = floor(K / 2)`` and the linear
predictor of the middle cut-point ``eta_i = x_i'beta - theta_m`` (R's
``lpmid``, without the offset), so that ``p_i = F(eta_i) = P(Y_i > level m)``
for the logit link (the fit's link otherwise):

- ``Model L.R.`` ``2 (llf - llnull)`` on ``d.f.`` (the non-threshold
  parameters), ``P`` its chi-square p-value;
- ``C``, ``Dxy``, ``Gamma``, ``Tau-a``: rank correlations between ``p_i``
  (with the offset) and ``Y`` over the pairs of rows with different responses:
  ``C = (concordant + ties / 2) / pairs``, ``Dxy = (concordant - discordant) /
  pairs``, ``Gamma = (concordant - discordant) / (concordant + discordant)``,
  ``Tau-a = (concordant - discordant) / (n (n - 1) / 2)``.  As rms 6 (its
  Fortran ``lrmfit``), the probabilities are first binned into 5001 cells
  ``floor(5000 p + 1)``, so rows whose ``p`` differ by less than 1/5000 count as
  tied (:func:`ordstats.metrics.concordance_index` is exact);
- ``R2``: Nagelkerke's ``(1 - exp(-LR / n)) / (1 - exp(2 llnull / n))``;
  ``R2(n)`` ``1 - exp(-LR / n)``, ``R2(p,n)`` ``1 - exp(-max(LR - p, 0) / n)``
  and the same with the effective sample size ``n (1 - sum_j f_j^3)`` of the
  level frequencies ``f_j`` (Hmisc's ``R2Measures``; the names carry ``n``
  rounded to one decimal, as R's);
- ``Brier``: ``sum w_i (p_i - [Y_i > level m])^2 / sum w_i``;
- ``g``: Gini's mean difference of ``eta`` (rows unweighted, as R), ``gr =
  exp(g)`` (the median odds ratio scale), ``gp`` Gini's mean difference of ``p``.

With weights ``n`` is their sum (``Sum of Weights``) except in ``Obs`` and in
``g`` and ``gp``, which rms computes over the rows.  rms 6.5 rounds each
row's weight to an integer for the rank correlations but the level totals
separately, which gives ``C`` above 1 with fractional weights; here the pairs
are weighted by ``w_i w_j`` (the same as R for integer weights).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from ordstats._typing import FloatArray, IntArray
from ordstats.errors import SpecificationError

__all__ = ["gini_mean_difference", "lrm_stats", "orm_stats", "rank_correlations"]

#: rms 6's lrmfit bins P(Y > middle level) into 5001 cells ``floor(5000 p + 1)``.
_BINS = 5000


def gini_mean_difference(values: FloatArray) -> float:
    """Gini's mean difference ``sum_{i != j} |x_i - x_j| / (n (n - 1))`` (Hmisc's ``GiniMd``)."""
    x = np.sort(np.asarray(values, dtype=float))
    n = x.size
    if n < 2:
        return float("nan")
    rank_weights = 4.0 * (np.arange(1, n + 1) - (n - 1) / 2.0) / n / (n - 1)
    return float(np.sum(rank_weights * (x - x.mean())))


def rank_correlations(
    prob: FloatArray, codes: IntArray, weights: FloatArray, n_levels: int
) -> tuple[float, float, float, float]:
    """``C``, ``Dxy``, ``Gamma``, ``Tau-a`` of binned probabilities against the levels.

    A pair of rows with levels ``i < j`` is concordant when the row of level
    ``j`` has the higher bin, discordant when the lower, tied when the same;
    each pair counts ``w_i w_j``.
    """
    cells = np.floor(_BINS * np.clip(prob, 0.0, 1.0) + 1.0).astype(np.int64) - 1
    table = np.zeros((_BINS + 1, n_levels))
    np.add.at(table, (cells, codes), weights)
    totals = table.sum(axis=0)
    # above[b, j]: weight of level j in the bins above b
    above = np.cumsum(table[::-1], axis=0)[::-1] - table
    concordant = discordant = tied = 0.0
    for low in range(n_levels - 1):
        weight = table[:, low]
        higher = slice(low + 1, n_levels)
        concordant += float(weight @ above[:, higher].sum(axis=1))
        tied += float(weight @ table[:, higher].sum(axis=1))
        below = totals[higher].sum() - above[:, higher].sum(axis=1) - table[:, higher].sum(axis=1)
        discordant += float(weight @ below)
    pairs = concordant + discordant + tied
    n = totals.sum()
    c_index = (concordant + tied / 2.0) / pairs if pairs else 0.5
    dxy = (concordant - discordant) / pairs if pairs else 0.0
    untied = concordant + discordant
    gamma = (concordant - discordant) / untied if untied else 0.0
    tau_a = (concordant - discordant) / (n * (n - 1.0) / 2.0)
    return c_index, dxy, gamma, tau_a


def _r2_measures(lr: float, p: int, n: float, frequencies: FloatArray) -> list[tuple[str, float]]:
    """Hmisc's ``R2Measures(lr, p, n, ess = frequencies)``, with its names.

    As R's, two names repeat when the effective size rounds to ``n`` (a response
    whose values are nearly all distinct).
    """

    def name(p_: int, n_: float) -> str:
        size = str(round(float(n_), 1)).removesuffix(".0")  # R's as.character(round(n, 1))
        return f"R2({size})" if p_ == 0 else f"R2({p_},{size})"

    shares = frequencies / frequencies.sum()
    effective = n * (1.0 - np.sum(shares**3))
    out = []
    for size in (n, effective):
        out.append((name(0, size), float(-np.expm1(-lr / size))))
        out.append((name(p, size), float(-np.expm1(-max(lr - p, 0.0) / size))))
    return out


def _check_fit(res: Any, what: str = "lrm_stats()") -> Any:
    model = res.model
    design = model.design
    if getattr(model, "survey_design", None) is not None:
        raise SpecificationError(
            f"{what} need a likelihood: a survey fit maximises a pseudo-likelihood (R's "
            "svyolr has no such statistics); use reg_term_test() for its terms"
        )
    if getattr(res, "penalty_kind", None) is not None:
        raise SpecificationError(
            f"{what} of a penalised fit would test and rank penalised estimates as if "
            "they were maximum-likelihood ones: refit without the penalty"
        )
    if not model.family_spec.capabilities.latent_variable:  # the cumulative family
        raise SpecificationError(
            f"{what} are rms's statistics of the cumulative (proportional odds) model; "
            f"this fit is of the {model.family_spec.name!r} family"
        )
    if getattr(design, "nominal", None) is not None or getattr(design, "scale", None) is not None:
        raise SpecificationError(
            f"{what} are rms's statistics of a cumulative model with one linear predictor; "
            "this model has nominal or scale effects (lrm and orm have neither)"
        )
    if design.location.matrix.shape[0] != model.n_rows or design.response.lower_codes is not None:
        raise SpecificationError(
            f"{what} need the rows in memory and an uncensored response (this model reads "
            "its data in chunks, or its response is censored)"
        )
    return design


def lrm_stats(res: Any) -> pd.Series:
    """rms::lrm's ``fit$stats``; see :mod:`ordstats.results.rms_stats`.

    Parameters
    ----------
    res : OrdinalResults

    Returns
    -------
    pandas.Series
        ``Obs``, ``Max Deriv``, ``Model L.R.``, ``d.f.``, ``P``, ``C``, ``Dxy``,
        ``Gamma``, ``Tau-a``, ``R2``, ``R2(n)``, ``R2(p,n)``, ``R2(neff)``,
        ``R2(p,neff)``, ``Brier``, ``g``, ``gr``, ``gp`` and, with weights,
        ``Sum of Weights``.
    """
    design = _check_fit(res)
    model = res.model
    codes = np.asarray(design.response.codes)
    weights = np.asarray(design.weights, dtype=float)
    n_levels = len(model.levels)
    middle = n_levels // 2  # R's kmid (1-based): the cut-point between levels m and m + 1
    theta = res.thresholds["estimate"].to_numpy()[middle - 1]
    offset = np.asarray(design.offset, dtype=float)
    linear = res.predict(which="linear").to_numpy() - offset  # x'beta
    link = model.link
    eta = linear - theta
    prob = np.asarray(link.sf(theta - linear))
    prob_with_offset = np.asarray(link.sf(theta - linear - offset))
    event = codes >= middle
    total = float(weights.sum())
    lr = float(2.0 * (res.llf - res.llnull))
    df = int(res.df_model)
    frequencies = np.bincount(codes, weights=weights, minlength=n_levels).astype(float)
    c_index, dxy, gamma, tau_a = rank_correlations(prob_with_offset, codes, weights, n_levels)
    g = gini_mean_difference(eta)
    values = [
        ("Obs", float(codes.size)),
        ("Max Deriv", float(getattr(res, "mle_retvals", {}).get("max_grad", np.nan))),
        ("Model L.R.", lr),
        ("d.f.", float(df)),
        ("P", float(stats.chi2.sf(lr, df)) if df else 1.0),
        ("C", c_index),
        ("Dxy", dxy),
        ("Gamma", gamma),
        ("Tau-a", tau_a),
        ("R2", float(-np.expm1(-lr / total) / -np.expm1(2.0 * res.llnull / total))),
        *_r2_measures(lr, df, total, frequencies),
        ("Brier", float(np.sum(weights * (prob - event) ** 2) / total)),
        ("g", g),
        ("gr", float(np.exp(g))),
        ("gp", gini_mean_difference(prob)),
    ]
    if model.has_weights:
        values.append(("Sum of Weights", total))
    return _named(values, "lrm stats")


def _median_position(values: list[Any], codes: IntArray) -> tuple[float, int]:
    """``Median Y`` (R's ``quantile(y, 0.5, type = 1)``) and its level's position.

    For numeric levels the median value; otherwise the median level number (1-based),
    as orm reads a factor.
    """
    position = int(np.sort(codes)[int(np.ceil(0.5 * codes.size)) - 1])
    value = values[position]
    numeric = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, bool
    )
    return (float(value) if numeric else float(position + 1)), position


def _null_params(res: Any) -> pd.Series:
    """The estimates of the thresholds-only model, with every slope 0 (orm's score test start)."""
    null = res.model.refit_formulas(location="1")
    if null is None:
        raise SpecificationError(
            "orm_stats() refit the thresholds-only model for the score test: they need a model "
            "built with from_formula in this session"
        )
    start = pd.Series(0.0, index=res.params.index)
    fitted = null.fit().params
    start[fitted.index] = fitted
    return start


def _score_statistic(res: Any) -> float:
    """Rao's score statistic ``U' I^{-1} U`` at the thresholds-only estimates."""
    start = _null_params(res)
    gradient = np.asarray(res.model.score(start), dtype=float)
    information = -np.asarray(res.model.hessian(start), dtype=float)
    return float(gradient @ np.linalg.solve(information, gradient))


def orm_stats(res: Any) -> pd.Series:
    """rms::orm's ``fit$stats``, for a cumulative fit of an ordinal or continuous response.

    With ``m`` the level just below the median of ``Y`` (at least the first),
    ``eta_i = x_i'beta - theta_m`` (R's ``lp``, without the offset):

    - ``Obs``, ``Distinct Y``, ``Median Y`` (R's ``quantile(y, 0.5, type = 1)``;
      for a factor the level number), ``Max Deriv``;
    - ``Model L.R.`` on ``d.f.`` slopes and its ``P``; ``Score``, Rao's score
      statistic at the thresholds-only estimates with the slopes 0, and ``Score P``;
    - ``rho``: Spearman's correlation of ``eta`` with ``Y``;
    - ``R2`` (Nagelkerke) and Hmisc's ``R2Measures`` as in :func:`lrm_stats`;
    - ``g``, ``gr`` as in :func:`lrm_stats`; ``pdm``, the mean of ``|P(Y > v_m) - 1/2|``.

    rms 6.5's orm takes no weights (its ``orm.fit`` stops), so weighted fits are
    refused.

    Parameters
    ----------
    res : OrdinalResults

    Returns
    -------
    pandas.Series
        With rms's names.
    """
    design = _check_fit(res, "orm_stats()")
    model = res.model
    if model.has_weights:
        raise SpecificationError(
            "orm_stats() follow rms::orm, which takes no weights in rms 6.5; use lrm_stats() "
            "for a weighted logit fit, or give the rows replicated"
        )
    codes = np.asarray(design.response.codes)
    n = float(codes.size)
    n_levels = len(model.levels)
    median, position = _median_position(list(design.response.values), codes)
    middle = 1 if n_levels == 2 else max(1, position)  # R's kmid (1-based cut-point)
    theta = res.thresholds["estimate"].to_numpy()[middle - 1]
    offset = np.asarray(design.offset, dtype=float)
    linear = res.predict(which="linear").to_numpy() - offset
    eta = linear - theta
    lr = float(2.0 * (res.llf - res.llnull))
    df = int(res.df_model)
    score = _score_statistic(res) if df else 0.0
    frequencies = np.bincount(codes, minlength=n_levels).astype(float)
    g = gini_mean_difference(eta)
    values = [
        ("Obs", n),
        ("Distinct Y", float(n_levels)),
        ("Median Y", median),
        ("Max Deriv", float(getattr(res, "mle_retvals", {}).get("max_grad", np.nan))),
        ("Model L.R.", lr),
        ("d.f.", float(df)),
        ("P", float(stats.chi2.sf(lr, df)) if df else 1.0),
        ("Score", score),
        ("Score P", float(stats.chi2.sf(score, df)) if df else 1.0),
        ("rho", float(stats.spearmanr(eta, codes).statistic)),
        ("R2", float(-np.expm1(-lr / n) / -np.expm1(2.0 * res.llnull / n))),
        *_r2_measures(lr, df, n, frequencies),
        ("g", g),
        ("gr", float(np.exp(g))),
        ("pdm", float(np.mean(np.abs(np.asarray(model.link.sf(theta - linear)) - 0.5)))),
    ]
    return _named(values, "orm stats")


def _named(values: list[tuple[str, float]], name: str) -> pd.Series:
    """A Series of ``(name, value)`` pairs in order (names may repeat, as R's)."""
    return pd.Series([v for _, v in values], index=[k for k, _ in values], name=name, dtype=float)
