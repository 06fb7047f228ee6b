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

Every statistic is a sum over the rows (:class:`RowSums`: the binned
probabilities crossed with the levels, the Brier sum, and for ``g``, ``gp``
and ``rho``, which need the ranks of the linear predictor, its distinct
values with their rows), so fits that read their rows in chunks (files, Dask,
Spark) give the in-memory numbers in one pass; the distinct values are held
on the driver (as many as the rows when a predictor is continuous).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from ordstats._typing import FloatArray, IntArray
from ordstats.errors import SpecificationError
from ordstats.families.problem import CLMData

__all__ = ["gini_mean_difference", "lrm_stats", "orm_stats", "rank_correlations"]

#: rms 6's lrmfit bins P(Y > middle level) into 5001 cells ``floor(5000 p + 1)``.
_BINS = 5000


def gini_mean_difference(values: FloatArray, counts: FloatArray | None = None) -> float:
    """Gini's mean difference ``sum_{i != j} |x_i - x_j| / (n (n - 1))`` (Hmisc's ``GiniMd``).

    With ``counts``, ``values[k]`` stands for ``counts[k]`` rows (the distinct
    values of a pass over chunks): the same number as the values repeated.
    """
    x = np.asarray(values, dtype=float)
    c = np.ones(x.size) if counts is None else np.asarray(counts, dtype=float)
    order = np.argsort(x, kind="stable")
    x, c = x[order], c[order]
    n = float(c.sum())
    if n < 2:
        return float("nan")
    before = np.cumsum(c) - c  # rows below each value
    # the rows of value k hold ranks before_k + 1 .. before_k + c_k: sum of (2 r - n - 1)
    rank_weights = 2.0 * c * (2.0 * before + c - n) / n / (n - 1.0)
    return float(np.sum(rank_weights * (x - np.sum(c * x) / n)))


def rank_correlations(
    prob: FloatArray, codes: IntArray, weights: FloatArray, n_levels: int
) -> tuple[float, float, float, float]:
    """``C``, ``Dxy``, ``Gamma``, ``Tau-a`` of binned probabilities against the levels.

    A pair of rows with levels ``i < j`` is concordant when the row of level
    ``j`` has the higher bin, discordant when the lower, tied when the same;
    each pair counts ``w_i w_j``.
    """
    return table_correlations(rank_table(prob, codes, weights, n_levels))


def rank_table(prob: FloatArray, codes: IntArray, weights: FloatArray, n_levels: int) -> FloatArray:
    """The weights of the rows in each of the 5001 bins of ``prob`` and each level (adds up)."""
    cells = np.floor(_BINS * np.clip(prob, 0.0, 1.0) + 1.0).astype(np.int64) - 1
    table = np.zeros((_BINS + 1, n_levels))
    np.add.at(table, (cells, codes), weights)
    return table


def table_correlations(table: FloatArray) -> tuple[float, float, float, float]:
    """``C``, ``Dxy``, ``Gamma``, ``Tau-a`` of a :func:`rank_table`."""
    n_levels = table.shape[1]
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


@dataclass(frozen=True)
class RowSums:
    """What the statistics read of the rows, as sums that add up over chunks.

    Attributes
    ----------
    table : ndarray, shape (5001, K)
        :func:`rank_table` of ``P(Y > level m)`` with the offset.
    frequencies, counts : ndarray, shape (K,)
        The weights and the rows of each level.
    brier : float
        ``sum w (P(Y > m) - [Y > m])^2`` (without the offset, as rms).
    pdm : float
        ``sum |P(Y > m) - 1/2|`` over the rows (orm's ``pdm``).
    distinct : tuple of ndarray, each of shape (d, 3)
        Blocks of the distinct pairs ``(eta, code)`` with their number of rows,
        each sorted (:attr:`pairs` merges them): Gini's mean difference and
        Spearman's correlation need the ranks of ``eta``, which these give
        exactly (one line per distinct pair, so as many as the rows when a
        predictor is continuous).
    censored : int
        Chunks with a censored response (the statistics are refused).
    """

    table: FloatArray
    frequencies: FloatArray
    counts: FloatArray
    brier: float
    pdm: float
    distinct: tuple[FloatArray, ...]
    censored: int

    @property
    def pairs(self) -> FloatArray:
        """The distinct ``(eta, code, rows)`` of all the rows, sorted."""
        return _distinct_pairs(np.vstack(self.distinct))

    def __add__(self, other: RowSums) -> RowSums:
        return RowSums(
            self.table + other.table,
            self.frequencies + other.frequencies,
            self.counts + other.counts,
            self.brier + other.brier,
            self.pdm + other.pdm,
            _collapsed([*self.distinct, *other.distinct]),
            self.censored + other.censored,
        )


def _collapsed(blocks: list[FloatArray]) -> tuple[FloatArray, ...]:
    """The blocks, the last ones merged while one is at most twice the next.

    As a binary counter: adding chunks one by one merges each row about
    ``log2(chunks)`` times, not once per chunk.
    """
    out: list[FloatArray] = []
    for block in blocks:
        out.append(block)
        while len(out) > 1 and len(out[-2]) <= 2 * len(out[-1]):
            last = out.pop()
            out.append(_distinct_pairs(np.vstack([out.pop(), last])))
    return tuple(out)


def _distinct_pairs(rows: FloatArray) -> FloatArray:
    """``rows`` of ``(eta, code, count)`` merged over equal ``(eta, code)``, sorted."""
    if not len(rows):
        return rows
    rows = rows[np.lexsort((rows[:, 1], rows[:, 0]))]
    new = np.ones(len(rows), dtype=bool)
    new[1:] = (rows[1:, 0] != rows[:-1, 0]) | (rows[1:, 1] != rows[:-1, 1])
    starts = np.flatnonzero(new)
    out = rows[starts].copy()
    out[:, 2] = np.add.reduceat(rows[:, 2], starts)
    return out


def row_sums(data: CLMData, beta: FloatArray, theta: float, middle: int, link: Any) -> RowSums:
    """:class:`RowSums` of the rows of ``data`` (a chunk, or all rows in memory).

    ``theta`` is the cut-point between the levels ``middle - 1`` and ``middle``
    (0-based codes), ``beta`` the location coefficients of ``data.X``.
    """
    n_levels = data.n_levels
    linear = data.X @ beta  # x'beta, without the offset
    eta = linear - theta
    prob = np.asarray(link.sf(theta - linear))
    prob_with_offset = np.asarray(link.sf(theta - linear - data.offset))
    codes, weights = data.y, data.weights
    pairs = np.column_stack([eta, codes, np.ones(eta.size)])
    return RowSums(
        table=rank_table(prob_with_offset, codes, weights, n_levels),
        frequencies=np.bincount(codes, weights=weights, minlength=n_levels).astype(float),
        counts=np.bincount(codes, minlength=n_levels).astype(float),
        brier=float(np.sum(weights * (prob - (codes >= middle)) ** 2)),
        pdm=float(np.sum(np.abs(prob - 0.5))),
        distinct=(_distinct_pairs(pairs),),
        censored=int(data.y_low is not None),
    )


def _pass(res: Any, middle: int, what: str) -> RowSums:
    """One pass over the fit's rows (in memory or in chunks)."""
    model = res.model
    theta = float(res.thresholds["estimate"].to_numpy()[middle - 1])
    beta = res.params.to_numpy()[model.problem.layout.beta]
    sums: RowSums = model.evaluator.reduce_rows(row_sums, beta, theta, middle, model.link)
    if sums.censored or model.design.response.lower_codes is not None:
        raise SpecificationError(
            f"{what} are rms's statistics of an uncensored response; this response is censored"
        )
    return sums


def _eta_counts(distinct: FloatArray) -> tuple[FloatArray, FloatArray, IntArray]:
    """The distinct values of ``eta``, their rows, and each pair's value (its position)."""
    values, where = np.unique(distinct[:, 0], return_inverse=True)
    counts = np.bincount(where, weights=distinct[:, 2], minlength=values.size)
    return values, counts.astype(float), where


def _average_ranks(counts: FloatArray) -> FloatArray:
    """The mid-ranks of tied groups of ``counts`` rows, in order (R's ``rank`` of ties)."""
    return np.cumsum(counts) - (counts - 1.0) / 2.0


def spearman_of_pairs(distinct: FloatArray) -> float:
    """Spearman's correlation of ``eta`` with the codes over :attr:`RowSums.pairs`."""
    counts = distinct[:, 2]
    _, per_value, where = _eta_counts(distinct)
    x = _average_ranks(per_value)[where]
    codes = distinct[:, 1].astype(np.int64)
    y = _average_ranks(np.bincount(codes, weights=counts).astype(float))[codes]
    n = counts.sum()
    x, y = x - counts @ x / n, y - counts @ y / n
    return float((counts @ (x * y)) / np.sqrt((counts @ x**2) * (counts @ y**2)))


def _gini_of(link: Any, distinct: FloatArray) -> tuple[float, float]:
    """Gini's mean differences of ``eta`` and of ``P(Y > m) = F(eta)`` over the rows."""
    values, counts, _ = _eta_counts(distinct)
    return (
        gini_mean_difference(values, counts),
        gini_mean_difference(np.asarray(link.sf(-values)), counts),
    )


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
    _check_fit(res)
    model = res.model
    n_levels = len(model.levels)
    middle = n_levels // 2  # R's kmid (1-based): the cut-point between levels m and m + 1
    sums = _pass(res, middle, "lrm_stats()")
    total = float(sums.frequencies.sum())
    lr = float(2.0 * (res.llf - res.llnull))
    df = int(res.df_model)
    c_index, dxy, gamma, tau_a = table_correlations(sums.table)
    g, gp = _gini_of(model.link, sums.pairs)
    values = [
        ("Obs", float(sums.counts.sum())),
        ("Max Deriv", float(getattr(res, "mle_retvals", {}).get("max_grad", np.nan))),
        ("Model L.R.", lr),
        ("d.f.", float(df)),
        ("P", float(stats.chi2.sf(lr, df)) if df else 1.0),
        ("C", c_index),
        ("Dxy", dxy),
        ("Gamma", gamma),
        ("Tau-a", tau_a),
        ("R2", float(-np.expm1(-lr / total) / -np.expm1(2.0 * res.llnull / total))),
        *_r2_measures(lr, df, total, sums.frequencies),
        ("Brier", sums.brier / total),
        ("g", g),
        ("gr", float(np.exp(g))),
        ("gp", gp),
    ]
    if model.has_weights:
        values.append(("Sum of Weights", total))
    return _named(values, "lrm stats")


def _median_position(values: list[Any], counts: FloatArray) -> tuple[float, int]:
    """``Median Y`` (R's ``quantile(y, 0.5, type = 1)``) and its level's position.

    ``counts`` are the rows of each level.  For numeric levels the median value;
    otherwise the median level number (1-based), as orm reads a factor.
    """
    position = int(np.searchsorted(np.cumsum(counts), np.ceil(0.5 * counts.sum())))
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
    counts = np.asarray(model.response_counts, dtype=float)  # unweighted: no weights
    n = float(counts.sum())
    n_levels = len(model.levels)
    median, position = _median_position(list(design.response.values), counts)
    middle = 1 if n_levels == 2 else max(1, position)  # R's kmid (1-based cut-point)
    sums = _pass(res, middle, "orm_stats()")
    lr = float(2.0 * (res.llf - res.llnull))
    df = int(res.df_model)
    score = _score_statistic(res) if df else 0.0
    g, _ = _gini_of(model.link, sums.pairs)
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
        ("rho", spearman_of_pairs(sums.pairs)),
        ("R2", float(-np.expm1(-lr / n) / -np.expm1(2.0 * res.llnull / n))),
        *_r2_measures(lr, df, n, sums.counts),
        ("g", g),
        ("gr", float(np.exp(g))),
        ("pdm", sums.pdm / n),
    ]
    return _named(values, "orm stats")


def _named(values: list[tuple[str, float]], name: str) -> pd.Series:
    """A Series of ``(name, value)`` pairs in order (names may repeat, as R's)."""
    return pd.Series([v for _, v in values], index=[k for k, _ in values], name=name, dtype=float)
