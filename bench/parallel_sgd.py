"""Averaged parallel SGD for the cumulative logit model: the reference method of bench_spark.

The method ordstats is compared with (issue 25): every partition runs SGD on its
own rows from the same starting point, and the driver averages the partitions'
parameters; the next pass starts every partition from that average
(Zinkevich et al. 2010's parallelised SGD, iterated).  Neither the average nor
its fixed point is the maximum-likelihood estimate, and it gives no standard
errors.

Parametrisation: ``P(y <= j | x) = F(theta_j - x'beta)`` with the logistic ``F``
(ordstats' and R's clm's).  The step size is ``step / sqrt(pass)`` with
``step = 0.01`` (a common default); each step uses a mini-batch of
``batch = 32`` rows (per-row steps in Python would time the interpreter, not the
method).  After each step the thresholds are sorted, so that they stay ordered.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special

#: Defaults of the reference method.
STEP = 0.01
BATCH = 32


@dataclass(frozen=True)
class SGDState:
    """Thresholds and coefficients (one vector: ``[theta_1..theta_{K-1}, beta]``)."""

    params: np.ndarray
    n_levels: int


def _batch_gradient(params: np.ndarray, X: np.ndarray, y: np.ndarray, n_levels: int) -> np.ndarray:
    """Mean gradient of the log-likelihood over the rows of one mini-batch."""
    k = n_levels - 1
    theta, beta = params[:k], params[k:]
    eta = X @ beta
    bounds = np.concatenate([[-np.inf], theta, [np.inf]])
    upper, lower = bounds[y + 1] - eta, bounds[y] - eta
    F_u, F_l = special.expit(upper), special.expit(lower)
    f_u, f_l = F_u * (1.0 - F_u), F_l * (1.0 - F_l)
    prob = np.maximum(F_u - F_l, 1e-300)
    grad = np.zeros_like(params)
    # d log P / d theta_y = f(upper) / P ; d / d theta_{y-1} = -f(lower) / P
    np.add.at(grad, np.minimum(y, k - 1), np.where(y < k, f_u / prob, 0.0))
    np.add.at(grad, np.maximum(y - 1, 0), np.where(y > 0, -f_l / prob, 0.0))
    grad[k:] = -X.T @ ((f_u - f_l) / prob)
    return grad / len(y)


def sgd_pass(
    params: np.ndarray, X: np.ndarray, y: np.ndarray, n_levels: int, step: float, seed: int
) -> np.ndarray:
    """One pass of mini-batch SGD over the rows ``X, y`` (in a random order) from ``params``."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(y))
    x = params.copy()
    k = n_levels - 1
    for start in range(0, len(y), BATCH):
        rows = order[start : start + BATCH]
        x += step * _batch_gradient(x, X[rows], y[rows], n_levels)
        x[:k] = np.sort(x[:k])
    return x


def partition_pass(
    batches: Iterator[pd.DataFrame],
    params: np.ndarray,
    n_levels: int,
    features: list[str],
    step: float,
    seed: int,
) -> Iterator[pd.DataFrame]:
    """``mapInPandas`` body: SGD over one partition's rows; yields ``(rows, params)``."""
    frames = [b for b in batches if len(b)]
    if not frames:
        return
    rows = pd.concat(frames, ignore_index=True)
    X = rows[features].to_numpy(dtype=float)
    y = rows["y"].to_numpy(dtype=np.int64)
    out = sgd_pass(params, X, y, n_levels, step, seed)
    yield pd.DataFrame({"rows": [len(y)], "params": [out.tolist()]})


def averaged_pass(
    frame: object, params: np.ndarray, n_levels: int, features: list[str], step: float, seed: int
) -> np.ndarray:
    """One Spark pass: SGD in every partition from ``params``, then the row-weighted average."""

    def body(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        return partition_pass(batches, params, n_levels, features, step, seed)

    parts = frame.mapInPandas(body, "rows long, params array<double>").collect()  # type: ignore[attr-defined]
    weights = np.array([r["rows"] for r in parts], dtype=float)
    stacked = np.array([r["params"] for r in parts])
    return (weights[:, None] * stacked).sum(axis=0) / weights.sum()


def start_params(counts: np.ndarray, p: int) -> np.ndarray:
    """Marginal logit thresholds and zero coefficients (the same start as ordstats')."""
    cum = np.cumsum(counts)[:-1] / counts.sum()
    return np.concatenate([special.logit(cum), np.zeros(p)])
