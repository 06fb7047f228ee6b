"""Bootstrap optimism-corrected indexes of a fit, as rms's ``validate(fit, B = 200)``.

rms's ``predab.resample`` draws ``B`` bootstrap samples of the rows, refits
the model on each, and evaluates each index on the sample (``training``) and on
the original rows with the sample's estimates (``test``); ``optimism =
training - test`` (means over the samples whose refit converged) and
``index.corrected = index.orig - optimism``.  A refit here is the same model
with the row weights set to how often each row was drawn
(:meth:`~ordstats.OrdinalModel.with_changes`), which has the maximum-likelihood
estimates of the sample's rows repeated.

With ``K`` levels, ``m = floor(K / 2)`` (rms's ``kint``) and ``lp = x'beta -
theta_m`` (R's ``matxv(x, coef, kint)``), rms's ``validate.lrm`` indexes are:

- ``Dxy``: from the fit's statistics (:func:`~ordstats.results.rms_stats.lrm_stats`,
  probabilities binned); for a binary response Somers' ``Dxy`` of ``lp`` exactly
  (Hmisc's ``somers2``);
- ``R2`` (Nagelkerke), ``D = (LR - 1) / n``, ``U``, ``Q = D - U``,
  ``B = mean((y > m) - F(lp))^2`` (the Brier score of the middle cut),
  ``g = GiniMd(lp)`` and ``gp = GiniMd(F(lp))``;
- on the training rows (and the original fit) ``Intercept = 0``, ``Slope =
  1`` and ``U = -2 / n``; on the test rows the calibration refit ``y ~ lp`` (an
  ordinal logistic model with one slope): ``Intercept`` its ``m``-th
  intercept, ``Slope`` its slope, ``LR``, ``Dxy`` and ``R2`` its statistics,
  ``g``, ``gp`` of ``Slope * lp`` and ``Intercept + Slope * lp``, and ``U =
  (L01 - deviance - 2) / n`` with ``L01`` the binary deviance of ``lp`` for
  ``y > m``;
- ``Emax``: the largest ``|p - F(a + b logit p)|`` over ``p = 0, 0.0005, ...,
  1`` with the corrected ``Intercept`` ``a`` and ``Slope`` ``b`` (its row reads
  ``0, 0, Emax, Emax, Emax``, as rms).

For more than two levels rms's test ``U`` subtracts the ordinal calibration
deviance from the *binary* deviance ``L01`` of the middle cut, so it is not
the unreliability index it is for a binary response (it can be far below 0);
it is given as rms computes it, for parity.

With ``indexes="orm"`` (rms's ``validate.orm``, for a response with many
levels, any link): ``rho`` (Spearman's correlation of ``lp`` with ``Y``),
``R2``, ``Slope``, ``g`` and ``pdm`` (mean ``|P(Y > v_m) - 1/2|``), each as
:func:`~ordstats.results.rms_stats.orm_stats` (``m`` the level below the
median of the rows drawn); on the test rows those of the calibration refit
``y ~ lp``, ``lp`` taken at the sample fit's first threshold.  A sample need
not draw every level: its fit has thresholds between the levels it drew only
(rms's ``allow.varying.intercepts``).  rms's own refits stop at ``orm.fit``'s
``eps = 5e-4``, about ``1e-5`` from the maximum; ordstats' converge.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from scipy.special import expit

from ordstats._typing import FloatArray, IntArray
from ordstats.config import is_interactive
from ordstats.core.threads import numeric_threads
from ordstats.design.core import TermsDesign
from ordstats.errors import (
    ConvergenceWarning,
    OrdstatsError,
    OrdstatsWarning,
    SpecificationError,
    check_flag,
    user_stacklevel,
)
from ordstats.results.persistence import rows_removed_error
from ordstats.results.rms_stats import (
    _check_fit,
    _distinct_pairs,
    _median_position,
    gini_mean_difference,
    lrm_stats,
    rank_table,
    spearman_of_pairs,
    table_correlations,
)

__all__ = ["INDEXES", "validate"]

#: The rows of rms's ``validate.lrm`` table, in its order.
INDEXES = ["Dxy", "R2", "Intercept", "Slope", "Emax", "D", "U", "Q", "B", "g", "gp"]
_COLUMNS = ["index.orig", "training", "test", "optimism", "index.corrected", "n"]
_MEASURED = [name for name in INDEXES if name != "Emax"]
_WHAT = "validate()"


def validate(res: Any, how: Mapping[str, Any], progress: bool | None) -> pd.DataFrame:
    """The table of rms's ``validate(fit, method = "boot", B)`` of an lrm or orm fit.

    See :mod:`ordstats.results.validation` for the definitions; ``how`` holds
    ``method``, ``B``, ``seed``, ``samples``, ``indexes`` and ``stratify`` of
    :meth:`~ordstats.OrdinalResults.validate`.
    """
    rows = _bootstrap_rows(res, **how)
    show = is_interactive() if progress is None else check_flag("progress", progress)
    data: _LrmRows | _OrmRows = (_LrmRows if how["indexes"] == "lrm" else _OrmRows).of(res)
    original = data.original(res)
    training = np.zeros(original.size)
    test = np.zeros(original.size)
    counted = np.zeros(original.size)
    failed = 0
    with numeric_threads():
        for i, sample in enumerate(rows):
            one = _one_sample(res, data, sample)
            if one is None:
                failed += 1
            else:
                both = one[0] + one[1]
                counted += np.isfinite(both)
                training += np.where(np.isfinite(both), one[0], 0.0)
                test += np.where(np.isfinite(both), one[1], 0.0)
            if show:
                print(f"\rbootstrap sample {i + 1}/{len(rows)}", end="", file=sys.stderr)
    if show:
        print(file=sys.stderr)
    if failed:
        warnings.warn(
            f"{_WHAT}: the refit did not converge in {failed} of {len(rows)} bootstrap samples; "
            "they are left out (rms's 'Divergence or singularity')",
            ConvergenceWarning,
            stacklevel=user_stacklevel(),
        )
    return data.table(_table(data.names, original, training, test, counted))


def _table(
    names: list[str],
    original: FloatArray,
    training: FloatArray,
    test: FloatArray,
    counted: FloatArray,
) -> pd.DataFrame:
    """``index.orig``, the means over the samples, the optimism and the corrected indexes."""
    with np.errstate(invalid="ignore", divide="ignore"):
        training, test = training / counted, test / counted
    optimism = training - test
    corrected = original - optimism
    return pd.DataFrame(
        np.column_stack([original, training, test, optimism, corrected, counted]),
        index=names,
        columns=_COLUMNS,
    )


def _emax(intercept: float, slope: float) -> float:
    """``max |p - F(a + b logit p)|`` over rms's grid ``p = 0, 0.0005, ..., 1``."""
    p = np.arange(2001) * 5e-4
    with np.errstate(divide="ignore", invalid="ignore"):
        logits = np.log(p / (1.0 - p))
        calibrated = expit(intercept + slope * logits)
    return float(np.nanmax(np.abs(p - calibrated)))


def _lr(res: Any) -> float:
    return float(2.0 * (res.llf - res.llnull))


class _LrmRows:
    """rms's ``validate.lrm``: the fit's rows as its indexes read them."""

    names: ClassVar[list[str]] = _MEASURED

    def __init__(self, X: FloatArray, codes: IntArray, n_levels: int, positions: Any) -> None:
        self.X, self.codes, self.n_levels = X, codes, n_levels
        self.n = codes.size
        self.middle = n_levels // 2  # rms's kint (1-based): lp uses theta_m
        self.above = (codes >= self.middle).astype(float)  # y > level m
        self.beta, self.thresholds = positions

    @classmethod
    def of(cls, res: Any) -> _LrmRows:
        design = res.model.design
        layout = res.model.problem.layout
        return cls(
            np.asarray(design.location.matrix, dtype=float),
            np.asarray(design.response.codes),
            len(res.model.levels),
            (layout.beta, slice(0, len(res.model.levels) - 1)),
        )

    def original(self, res: Any) -> FloatArray:
        """``index.orig``: the indexes of the fit itself."""
        return self.apparent(self.lp(res), np.ones(self.n), _lr(res), float(res.llnull))

    def sample_model(self, res: Any, counts: FloatArray) -> Any:
        """The model of a bootstrap sample (every level drawn, as rms requires for lrm)."""
        drawn = np.bincount(self.codes, weights=counts, minlength=self.n_levels)
        if np.any(drawn == 0):
            missing = [res.model.levels[j] for j in np.flatnonzero(drawn == 0)]
            raise SpecificationError(
                f"{_WHAT}: a bootstrap sample has no row of level(s) {missing}, so its fit has "
                "fewer thresholds than the original (rms stops the same way); draw the "
                "samples within each level (stratify=True, rms's group = y)"
            )
        return res.model.with_changes(weights=counts)

    def training(self, boot: Any, counts: FloatArray) -> FloatArray:
        """The indexes of a sample's fit on the sample."""
        return self.apparent(self.lp(boot), counts, _lr(boot), float(boot.llnull))

    def test(self, res: Any, boot: Any) -> FloatArray:
        """The indexes on the original rows of a sample's fit."""
        return self.recalibrated(res, self.lp(boot))

    def table(self, out: pd.DataFrame) -> pd.DataFrame:
        """The table rms prints, with the Emax row of the corrected calibration."""
        emax = _emax(out.loc["Intercept", "index.corrected"], out.loc["Slope", "index.corrected"])
        out.loc["Emax"] = [0.0, 0.0, emax, emax, emax, out.loc["Dxy", "n"]]
        return out.loc[INDEXES]

    def lp(self, fitted: Any, rows: slice | IntArray = slice(None)) -> FloatArray:
        """``x'beta - theta_m`` of a fit on ``rows`` of the original data."""
        params = np.asarray(fitted.params, dtype=float)
        theta = float(fitted.thresholds["estimate"].to_numpy()[self.middle - 1])
        return np.asarray(self.X[rows] @ params[self.beta] - theta)

    def dxy(self, lp: FloatArray, counts: FloatArray) -> float:
        """Somers' Dxy of ``lp`` (exact for two levels, rms's binned probabilities otherwise)."""
        if self.n_levels == 2:
            values, where = np.unique(lp, return_inverse=True)
            table = np.zeros((values.size, 2))
            np.add.at(table, (where, self.codes), counts)
        else:
            table = rank_table(expit(lp), self.codes, counts, self.n_levels)
        return table_correlations(table)[1]

    def apparent(self, lp: FloatArray, counts: FloatArray, lr: float, llnull: float) -> FloatArray:
        """The indexes of a fit on the rows it was fitted to (``counts`` times each)."""
        n = float(counts.sum())
        r2 = float(-np.expm1(-lr / n) / -np.expm1(2.0 * llnull / n))
        d, u = (lr - 1.0) / n, -2.0 / n
        brier = float(counts @ (self.above - expit(lp)) ** 2) / n
        return np.array(
            [
                self.dxy(lp, counts),
                r2,
                0.0,
                1.0,
                d,
                u,
                d - u,
                brier,
                gini_mean_difference(lp, counts),
                gini_mean_difference(expit(lp), counts),
            ]
        )

    def recalibrated(self, res: Any, lp: FloatArray) -> FloatArray:
        """The indexes on the original rows of another fit's ``lp`` (rms's ``evalfit = FALSE``)."""
        refit = res.model.with_changes(location=TermsDesign(lp[:, None], ["lp"])).fit()
        if not refit.converged:
            return np.full(len(_MEASURED), np.nan)
        stats = lrm_stats(refit)
        n, lr = float(stats["Obs"]), float(stats["Model L.R."])
        intercept = -float(refit.thresholds["estimate"].to_numpy()[self.middle - 1])
        slope = float(np.asarray(refit.params)[-1])
        binary = -2.0 * float(np.sum(self.above * lp - np.logaddexp(0.0, lp)))
        d, u = (lr - 1.0) / n, (binary + 2.0 * float(refit.llf) - 2.0) / n
        ones = np.ones(self.n)
        return np.array(
            [
                self.dxy(lp, ones) if self.n_levels == 2 else float(stats["Dxy"]),
                float(stats["R2"]),
                intercept,
                slope,
                d,
                u,
                d - u,
                float(np.mean((self.above - expit(lp)) ** 2)),
                gini_mean_difference(slope * lp),
                gini_mean_difference(expit(intercept + slope * lp)),
            ]
        )


class _OrmRows:
    """rms's ``validate.orm``: ``rho``, ``R2``, ``Slope``, ``g`` and ``pdm``.

    A bootstrap sample's fit has thresholds only between the levels it drew
    (rms's ``allow.varying.intercepts``); its test linear predictor uses its
    first threshold (rms's ``kint = 1``), a shift the indexes do not see.
    """

    names: ClassVar[list[str]] = ["rho", "R2", "Slope", "g", "pdm"]

    def __init__(self, X: FloatArray, response: Any, beta: slice | IntArray) -> None:
        self.X, self.response, self.beta = X, response, beta
        self.codes = np.asarray(response.codes)
        self.n = self.codes.size

    @classmethod
    def of(cls, res: Any) -> _OrmRows:
        design = res.model.design
        return cls(
            np.asarray(design.location.matrix, dtype=float),
            design.response,
            res.model.problem.layout.beta,
        )

    def original(self, res: Any) -> FloatArray:
        """``index.orig``: orm's statistics of the fit itself."""
        return _orm_indexes(res, np.ones(self.n))

    def sample_model(self, res: Any, counts: FloatArray) -> Any:
        """The model of a sample, its response coded by the levels it drew."""
        drawn = np.flatnonzero(np.bincount(self.codes, weights=counts) > 0)
        if drawn.size == len(self.response.levels):
            return res.model.with_changes(weights=counts)
        # rows of levels not drawn have weight 0: any code of theirs adds nothing
        codes = np.maximum(np.searchsorted(drawn, self.codes, side="right") - 1, 0)
        response = replace(
            self.response,
            codes=codes,
            levels=[self.response.levels[j] for j in drawn],
            values=[self.response.values[j] for j in drawn],
        )
        return res.model.with_changes(response=response, weights=counts)

    def training(self, boot: Any, counts: FloatArray) -> FloatArray:
        """The statistics orm prints of a sample's fit, on the sample."""
        return _orm_indexes(boot, counts)

    def test(self, res: Any, boot: Any) -> FloatArray:
        """The statistics of the calibration refit ``y ~ lp`` on the original rows."""
        params = np.asarray(boot.params, dtype=float)
        first = float(boot.thresholds["estimate"].to_numpy()[0])
        lp = self.X @ params[boot.model.problem.layout.beta] - first
        refit = res.model.with_changes(location=TermsDesign(lp[:, None], ["lp"])).fit()
        if not refit.converged:
            return np.full(len(self.names), np.nan)
        out = _orm_indexes(refit, np.ones(self.n))
        out[2] = float(np.asarray(refit.params)[-1])
        return out

    def table(self, out: pd.DataFrame) -> pd.DataFrame:
        """The table rms prints, as it is."""
        return out


def _orm_indexes(fitted: Any, counts: FloatArray) -> FloatArray:
    """``rho``, ``R2``, ``Slope = 1``, ``g``, ``pdm`` of a fit on its rows, each ``counts`` times.

    As :func:`~ordstats.results.rms_stats.orm_stats`: ``lp`` at the cut-point
    below the median level (of the rows drawn).
    """
    model = fitted.model
    design = model.design
    codes = np.asarray(design.response.codes)
    per_level = np.bincount(codes, weights=counts, minlength=len(model.levels)).astype(float)
    _, position = _median_position(list(design.response.values), per_level)
    middle = 1 if len(model.levels) == 2 else max(1, position)
    params = np.asarray(fitted.params, dtype=float)
    theta = float(fitted.thresholds["estimate"].to_numpy()[middle - 1])
    lp = np.asarray(design.location.matrix, dtype=float) @ params[model.problem.layout.beta]
    lp = lp - theta
    n = float(counts.sum())
    lr = _lr(fitted)
    drawn = counts > 0
    pairs = _distinct_pairs(np.column_stack([lp, codes, counts])[drawn])
    return np.array(
        [
            spearman_of_pairs(pairs),
            float(-np.expm1(-lr / n) / -np.expm1(2.0 * float(fitted.llnull) / n)),
            1.0,
            gini_mean_difference(lp[drawn], counts[drawn]),
            float(counts @ np.abs(np.asarray(model.link.sf(-lp)) - 0.5)) / n,
        ]
    )


def _one_sample(
    res: Any, data: _LrmRows | _OrmRows, sample: IntArray
) -> tuple[FloatArray, FloatArray] | None:
    """Training and test indexes of one bootstrap sample; None when its refit fails."""
    counts = np.bincount(sample, minlength=data.n).astype(float)
    model = data.sample_model(res, counts)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrdstatsWarning)
        try:
            boot = model.fit()
            if not boot.converged:
                return None
            return data.training(boot, counts), data.test(res, boot)
        except OrdstatsError:
            return None


def _bootstrap_rows(
    res: Any,
    method: str,
    B: int | None,
    seed: Any,
    samples: Any,
    indexes: str,
    stratify: bool,
) -> IntArray:
    """The checked ``(B, n)`` 0-based rows of each sample, given or drawn."""
    if indexes not in ("lrm", "orm"):
        raise SpecificationError(
            f"indexes are rms's validate.lrm ('lrm') or validate.orm ('orm'); got {indexes!r}"
        )
    _check_validatable(res, indexes)
    if method != "boot":
        raise SpecificationError(
            f"{_WHAT} implements rms's method='boot' only; got method={method!r}"
        )
    n = len(res.model.design.response.codes)
    if B is not None and (
        isinstance(B, (bool, np.bool_)) or not isinstance(B, (int, np.integer)) or B < 1
    ):
        raise SpecificationError(
            f"B is the number of bootstrap samples, a positive integer; got {B!r}"
        )
    codes = np.asarray(res.model.design.response.codes)
    if samples is None:
        draws = 200 if B is None else int(B)
        return _draw(np.random.default_rng(seed), codes, draws, check_flag("stratify", stratify))
    if seed is not None or stratify:
        raise SpecificationError(
            f"{_WHAT} draws the samples (seed=, stratify=) or takes them (samples=), not both"
        )
    rows = np.asarray(samples)
    if rows.ndim != 2 or rows.shape[1] != n or rows.shape[0] < 1:
        raise SpecificationError(
            f"samples are the 0-based rows of each bootstrap sample, shape (B, {n}) for this "
            f"fit's {n} rows; got shape {rows.shape}"
        )
    if not np.issubdtype(rows.dtype, np.integer):
        raise SpecificationError(f"samples are 0-based row numbers (integers); got {rows.dtype}")
    if rows.min() < 0 or rows.max() >= n:
        raise SpecificationError(
            f"samples are 0-based row numbers, 0 to {n - 1}; got {rows.min()} to {rows.max()}"
        )
    if B is not None and B != rows.shape[0]:
        raise SpecificationError(f"B={B} but samples holds {rows.shape[0]} samples")
    return rows.astype(np.int64)


def _draw(rng: np.random.Generator, codes: IntArray, B: int, stratify: bool) -> IntArray:
    """``B`` bootstrap samples of the rows; with ``stratify``, within each level (rms's group)."""
    n = codes.size
    if not stratify:
        return rng.integers(0, n, size=(B, n))
    rows = np.empty((B, n), dtype=np.int64)
    for level in np.unique(codes):
        members = np.flatnonzero(codes == level)
        rows[:, members] = members[rng.integers(0, members.size, size=(B, members.size))]
    return rows


def _check_validatable(res: Any, indexes: str) -> None:
    """Refuse fits rms's validate.lrm does not describe, saying why."""
    if res.data_removed:
        raise rows_removed_error(_WHAT)
    _check_fit(res, _WHAT)
    model = res.model
    if not model.evaluator.keeps_rows:
        raise SpecificationError(
            f"{_WHAT} refits the model on hundreds of bootstrap samples of the rows in memory; "
            "this fit reads its rows in chunks: fit the rows (or a sample of them) in memory"
        )
    if model.design.response.lower_codes is not None:
        raise SpecificationError(f"{_WHAT} is for an uncensored response; this one is censored")
    if indexes == "lrm" and getattr(model.link, "name", None) != "logit":
        raise SpecificationError(
            f"{_WHAT} follows rms's validate.lrm, whose indexes (B, U, Emax) are of the logit "
            f"link; this fit's link is {getattr(model.link, 'name', model.link)!r}"
        )
    if model.has_weights or model.has_offset:
        raise SpecificationError(
            f"{_WHAT}: rms's validate refits each bootstrap sample without the fit's weights "
            "and offset, so its indexes would describe another model; refit without them"
        )
    if model.threshold != "flexible":
        raise SpecificationError(
            f"{_WHAT} follows rms's lrm, whose intercepts are free; this fit's thresholds are "
            f"{model.threshold!r}"
        )
    if int(res.df_model) == 0:
        raise SpecificationError(f"{_WHAT} needs at least one slope; this fit has thresholds only")
