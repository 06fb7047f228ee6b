r"""Design-based variances: Taylor linearisation (R's ``svyrecvar``) and replicates (``svrVar``).

Linearisation.  With sampling weights :math:`w_i`, per-row scores :math:`s_i`
of :math:`\log P(Y_i = y_i)` and :math:`H` the observed information of the
weighted log-likelihood (the bread), the estimates' covariance is
:math:`H^{-1} M H^{-1}` with :math:`M` the design-based covariance of the
estimated total :math:`\sum_i w_i s_i`.  At one stage, with PSU totals
:math:`z_{hg} = \sum_{i \in (h, g)} w_i s_i` in stratum :math:`h` of
:math:`n_h` sampled PSUs out of :math:`N_h`,

.. math::

    M = \sum_h (1 - f_h)\, \frac{n_h}{n_h - 1} \sum_g (z_{hg} - \bar z_h)(z_{hg} - \bar z_h)^\top,
    \qquad f_h = n_h / N_h

(:math:`f_h = 0` without an fpc).  A stratum sampled whole (:math:`f_h = 1`)
adds nothing; one with a single PSU follows ``lonely_psu``.  With an fpc at
each stage, each first-stage PSU adds its second-stage variance times
:math:`n_h / N_h`, and so on down the stages (R's ``multistage``).  Rows not
used by the fit (missing values, outside a domain) have zero scores but their
PSUs still count in :math:`n_h`, as R's padding of absent PSUs.

Replicates.  With :math:`\hat\theta_r` the estimates under replicate weights
:math:`r`, :math:`V = \text{scale} \sum_r \text{rscales}_r (\hat\theta_r -
c)(\hat\theta_r - c)^\top`, :math:`c` the mean of the replicates (or the full
estimate with ``mse=True``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import optimize, sparse, stats

from ordstats._typing import FloatArray, IntArray
from ordstats.errors import DataError, OrdstatsWarning, user_stacklevel

__all__ = ["linearization_meat", "replicate_variance", "weighted_f_tail"]

#: R's ``onestrat``: a stratum whose sampling fractions are all within this of 1
#: is self-representing and adds no variance.
_SELF_REPRESENTING = 1e-7


def _totals(x: FloatArray, codes: IntArray, size: int) -> FloatArray:
    """Column sums of ``x`` by code (one row per code), one sparse product."""
    n = codes.shape[0]
    indicator = sparse.csr_matrix((np.ones(n), (codes, np.arange(n))), shape=(size, n))
    return np.asarray(indicator @ x)


@dataclass(frozen=True)
class LonelyRules:
    """What a stratum with one PSU contributes (R's ``survey.lonely.psu`` options).

    Attributes
    ----------
    lonely : str
        ``"fail"``, ``"remove"``, ``"adjust"``, ``"certainty"`` or ``"average"``,
        for strata with one PSU in the design.
    in_domain : bool
        Apply ``lonely`` also to strata with several PSUs of which a domain
        uses one (R's ``options(survey.adjust.domain.lonely = TRUE)``): with
        ``"adjust"`` that PSU's total is not centred, with ``"average"`` the
        stratum takes the other strata's mean; otherwise (and by default) it is
        centred at the stratum's mean over all its PSUs, as any domain's.
    """

    lonely: str
    in_domain: bool = False


def _domain_lonely(stage: Any, code: int, number: int, rules: LonelyRules) -> None:
    warnings.warn(
        f"stratum {stage.stratum_label(code)!r} has only one PSU in the domain at stage "
        f"{number}; lonely_psu={rules.lonely!r} applies to it (adjust_domain_lonely=True, R's "
        "survey.adjust.domain.lonely)",
        OrdstatsWarning,
        stacklevel=user_stacklevel(),
    )


def _cluster_codes(stage: Any) -> tuple[IntArray, Any]:
    """Codes ``0..C-1`` of each row's cluster, and a map of row values to their clusters'.

    A row value of a cluster is its first row's (R's ``!duplicated(cluster)``).
    Codes from the design are already ``0..C-1`` at the first stage: no sort.
    """
    codes = stage.clusters
    size = int(codes.max()) + 1
    if codes.size and np.bincount(codes, minlength=size).min() > 0:
        # first row of each cluster: the smallest position among its rows
        first = np.full(size, codes.size, dtype=np.intp)
        np.minimum.at(first, codes, np.arange(codes.size))
    else:  # a later stage inside one cluster: codes with gaps
        _, first, codes = np.unique(codes, return_index=True, return_inverse=True)
    return codes, lambda values: values[first]


def _one_stage(
    x: FloatArray, used: np.ndarray, stage: Any, rules: LonelyRules, number: int
) -> FloatArray:
    """The variance of the total of ``x`` at one stage (R's ``onestage``)."""
    k = x.shape[1]
    lonely = rules.lonely
    cluster_of_row, per_cluster = _cluster_codes(stage)
    n_clusters = int(cluster_of_row.max()) + 1
    totals = _totals(x, cluster_of_row, n_clusters)
    psu_used = np.zeros(n_clusters, dtype=bool)
    psu_used[cluster_of_row[used]] = True
    strata, stratum_of_psu = np.unique(per_cluster(stage.strata), return_inverse=True)
    n_h = per_cluster(stage.n_psu)
    if stage.popsize is None:
        f = np.ones(n_clusters)
    else:
        size = per_cluster(stage.popsize)
        f = np.where(np.isinf(size), 1.0, (size - n_h) / size)
    present = np.zeros(strata.size, dtype=bool)
    present[stratum_of_psu[psu_used]] = True
    result = np.zeros((k, k))
    n_ok = 0
    for h in np.flatnonzero(present):
        members = stratum_of_psu == h
        f_h, n = f[members], float(n_h[members][0])
        if np.all(f_h < _SELF_REPRESENTING):
            n_ok += 1
            continue
        z = totals[members]
        if n > 1:
            weight = f_h * n / (n - 1.0)
            if rules.in_domain and psu_used[members].sum() == 1:
                _domain_lonely(stage, int(strata[h]), number, rules)
                if lonely == "average":
                    continue
                if lonely == "adjust":  # the one PSU's total, not centred
                    result += (z * weight[:, None]).T @ z
                    n_ok += 1
                    continue
            # absent PSUs of the stratum (all rows dropped) are zero rows: the mean is over n
            z = z - z.sum(axis=0) / n
        else:
            if lonely == "fail":
                label = stage.stratum_label(int(strata[h]))
                raise DataError(
                    f"stratum {label!r} has only one PSU at stage {number}, so its variance "
                    "cannot be estimated; choose lonely_psu='adjust', 'remove', 'certainty' or "
                    "'average' in the design (R's options(survey.lonely.psu=))"
                )
            if lonely == "average":
                continue
            if lonely in ("remove", "certainty"):
                z = z - z.mean(axis=0)
            weight = f_h
        result += (z * weight[:, None]).T @ z
        n_ok += 1
    n_strata = int(present.sum())
    if n_ok < n_strata:  # "average": the other strata's mean for the lonely ones
        # none to average over (one stratum at this stage): undefined, NaN as R
        if not n_ok:
            warnings.warn(
                f"every stratum at stage {number} has a single PSU, so lonely_psu='average' "
                "has no stratum to average over: the variance is undefined (NaN, as in R); "
                "choose lonely_psu='adjust', 'remove' or 'certainty' in the design",
                OrdstatsWarning,
                stacklevel=user_stacklevel(),
            )
        result *= n_strata / n_ok if n_ok else np.nan
    return result


def _multistage(
    x: FloatArray, used: np.ndarray, stages: list[Any], rules: LonelyRules, number: int = 1
) -> FloatArray:
    """Variance of the total over the stages (R's ``multistage``)."""
    stage = stages[0]
    v = _one_stage(x, used, stage, rules, number)
    if len(stages) > 1 and stage.popsize is not None:
        order = np.argsort(stage.clusters, kind="stable")
        codes = stage.clusters[order]
        starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
        for rows in np.split(order, starts[1:]):
            if not used[rows].any():
                continue
            fraction = stage.n_psu[rows[0]] / stage.popsize[rows[0]]
            sub = [s.take(rows) for s in stages[1:]]
            v = v + _multistage(x[rows], used[rows], sub, rules, number + 1) * fraction
    return v


def linearization_meat(weighted_scores: FloatArray, positions: IntArray, design: Any) -> FloatArray:
    """The design-based covariance of the score total (the sandwich's meat).

    Parameters
    ----------
    weighted_scores : ndarray, shape (m, k)
        ``w_i s_i`` of the rows a fit used.
    positions : ndarray of int, shape (m,)
        Their positions in the design's data.
    design : SurveyDesign

    Returns
    -------
    ndarray, shape (k, k)
    """
    n, k = len(design.data), weighted_scores.shape[1]
    used = np.zeros(n, dtype=bool)
    used[positions] = True
    if positions.shape[0] == n and np.array_equal(positions, np.arange(n)):
        x = weighted_scores  # every row used, in order: no copy
    else:
        x = np.zeros((n, k))
        x[positions] = weighted_scores
    for calibration in getattr(design, "calibrations", ()):
        x = calibration.residuals(x)
    rules = LonelyRules(design.lonely_psu, bool(getattr(design, "adjust_domain_lonely", False)))
    meat = _multistage(x, used, list(design.stages), rules)
    return 0.5 * (meat + meat.T)


def replicate_variance(
    replicates: FloatArray, full: FloatArray, scale: float, rscales: FloatArray, mse: bool
) -> FloatArray:
    """R's ``svrVar``: the replicate estimates' spread, scaled.

    Parameters
    ----------
    replicates : ndarray, shape (R, k)
    full : ndarray, shape (k,)
        The full-sample estimates (the centre with ``mse=True``).
    scale : float
    rscales : ndarray, shape (R,)
    mse : bool

    Returns
    -------
    ndarray, shape (k, k)
    """
    centre = full if mse else replicates[rscales > 0].mean(axis=0)
    d = (replicates - centre) * np.sqrt(rscales)[:, None]
    v = scale * (d.T @ d)
    return np.asarray(0.5 * (v + v.T))


def _saddle_upper(x: float, lam: FloatArray) -> float:
    """Saddlepoint tail ``P(sum_i lam_i chi2_1 > x)`` (Kuonen 1999), as R's ``survey:::saddle``."""
    d = float(np.max(lam))
    lam = lam / d
    x = x / d

    def k0(z: float) -> float:
        return float(-np.sum(np.log1p(-2.0 * z * lam)) / 2.0)

    def k1(z: float) -> float:
        return float(np.sum(lam / (1.0 - 2.0 * z * lam)))

    def k2(z: float) -> float:
        return float(2.0 * np.sum(lam**2 / (1.0 - 2.0 * z * lam) ** 2))

    if np.any(lam < 0):
        lower = float(np.max(1.0 / (2.0 * lam[lam < 0]))) * 0.99999
    elif x > lam.sum():
        lower = -0.01
    else:
        lower = -lam.size / (2.0 * x)
    upper = float(np.min(1.0 / (2.0 * lam[lam > 0]))) * 0.99999
    zeta = optimize.brentq(lambda z: k1(z) - x, lower, upper, xtol=1e-12)
    if abs(zeta) < 1e-4:
        return float("nan")
    w = np.sign(zeta) * np.sqrt(2.0 * (zeta * x - k0(zeta)))
    v = zeta * np.sqrt(k2(zeta))
    return float(stats.norm.sf(w + np.log(v / w) / w))


def weighted_f_tail(x: float, lam: FloatArray, ddf: float) -> float:
    """``P(sum_i lam_i chi2_1 / (chi2_ddf / ddf) > x)``, R's ``pFsum`` (saddlepoint).

    The saddlepoint approximation of the quadratic form ``sum lam_i Z_i^2 -
    x chi2_ddf / ddf`` being positive; where it is not defined (the saddle point
    near zero) the Satterthwaite F approximation, as R.  ``ddf = inf``: the
    chi-squared mixture alone.
    """
    lam = np.asarray(lam, dtype=float)
    mean = lam.mean()
    ratio = np.mean(lam**2) / mean**2
    scale, ndf = mean * ratio, lam.size / ratio
    if np.isfinite(ddf):
        satterthwaite = float(stats.f.sf(x / ndf / scale, ndf, ddf))
        terms = np.concatenate([lam, np.full(round(ddf), -x / ddf)])
        tail = _saddle_upper(0.0, terms)
    else:
        satterthwaite = float(stats.chi2.sf(x / scale, ndf))
        tail = _saddle_upper(x, lam)
    return satterthwaite if np.isnan(tail) else tail
