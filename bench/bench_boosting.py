"""Ordinal boosting: time per round against the booster's own binary objective (run by hand).

``PYTHONPATH=. python bench/bench_boosting.py [--n 100000 --p 20 --rounds 100 --repeats 3]``
times ``OrdinalLGBMClassifier`` / ``OrdinalXGBClassifier`` (logit, 5 levels,
thresholds learnt every round, and every 5th and 10th round: ``--every``)
against LightGBM's and XGBoost's built-in ``binary`` / ``binary:logistic``
objective on the same ``X`` (the target cut at its median), with the same tree
settings and rounds.  The built-in and ordinal fits are interleaved, so each
repeat's ratio compares fits run in the same state of the machine; the table
gives median times per round and the median of the per-repeat ratios.  The
held-out comparison on three data sets is ``python vignettes/boosting.py`` (see bench/README.md).
"""

from __future__ import annotations

import argparse
import statistics
import time
from functools import partial

import numpy as np

from ordstats.learn import OrdinalLGBMClassifier, OrdinalXGBClassifier


def simulate(n: int, p: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    latent = np.sin(X[:, 0]) + X[:, 1] * X[:, 2] + 0.5 * X[:, 3:6].sum(axis=1)
    latent = latent + rng.logistic(size=n)
    return X, np.digitize(latent, np.quantile(latent, [0.2, 0.4, 0.6, 0.8]))


def seconds(fit) -> float:
    start = time.perf_counter()
    fit()
    return time.perf_counter() - start


def interleaved(builtin, ordinal: dict[int, object], repeats: int) -> tuple[list, dict]:
    """Time the built-in fit and each ordinal fit in turn, ``repeats`` times.

    Interleaving puts each ratio's two fits in the same state of a shared, noisy
    machine (other jobs, the other booster's idle OpenMP threads).
    """
    base: list[float] = []
    times: dict[int, list[float]] = {every: [] for every in ordinal}
    for _ in range(repeats):
        base.append(seconds(builtin))
        for every, fit in ordinal.items():
            times[every].append(seconds(fit))
    return base, times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--p", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--every",
        type=int,
        nargs="+",
        default=[1, 5, 10],
        help="values of threshold_update_every to time (1: a threshold step each round)",
    )
    args = parser.parse_args()
    import lightgbm as lgb
    import xgboost as xgb

    X, y = simulate(args.n, args.p)
    binary = (y >= 2).astype(int)
    r = args.rounds
    builtin = {
        "LightGBM": lambda: lgb.train(
            {"objective": "binary", "verbosity": -1, "seed": 0},
            lgb.Dataset(X, label=binary),
            num_boost_round=r,
        ),
        "XGBoost": lambda: xgb.train(
            {"objective": "binary:logistic", "eta": 0.3, "max_depth": 6, "verbosity": 0},
            xgb.DMatrix(X, label=binary),
            num_boost_round=r,
        ),
    }
    estimators = {"LightGBM": OrdinalLGBMClassifier, "XGBoost": OrdinalXGBClassifier}
    print(
        f"n = {args.n}, p = {args.p}, {r} rounds, {args.repeats} interleaved repeats: "
        "median ms per round, median of the per-repeat ratios"
    )
    print(
        f"{'booster':<10}{'threshold step every':>22}{'ordinal (5 levels)':>20}"
        f"{'built-in binary':>18}{'ratio':>8}"
    )
    for name, estimator in estimators.items():
        ordinal = {every: partial(_fit, estimator, X, y, r, every) for every in args.every}
        base, times = interleaved(builtin[name], ordinal, args.repeats)
        for every, ordinal_times in times.items():
            ratio = statistics.median(t / b for t, b in zip(ordinal_times, base, strict=True))
            print(
                f"{name:<10}{every:>22}{statistics.median(ordinal_times) / r * 1e3:>20.2f}"
                f"{statistics.median(base) / r * 1e3:>18.2f}{ratio:>8.2f}"
            )


def _fit(estimator, X, y, rounds: int, every: int) -> None:
    estimator(n_estimators=rounds, random_state=0, threshold_update_every=every).fit(X, y)


if __name__ == "__main__":
    main()
