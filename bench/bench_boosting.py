"""Ordinal boosting: time per round against the booster's own binary objective (run by hand).

``PYTHONPATH=. python bench/bench_boosting.py [--n 100000 --p 20 --rounds 100 --repeats 3]``
times ``OrdinalLGBMClassifier`` / ``OrdinalXGBClassifier`` (logit, 5 levels,
thresholds learnt every round, and every 5th and 10th round: ``--every``)
against LightGBM's and XGBoost's built-in ``binary`` / ``binary:logistic``
objective on the same ``X`` (the target cut at its median), with the same tree
settings and rounds, and prints the median time per round over the repeats and
the ratio.  The held-out comparison on three data
sets is ``python vignettes/boosting.py`` (see bench/README.md).
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


def per_round(fit, rounds: int, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fit()
        times.append((time.perf_counter() - start) / rounds)
    return statistics.median(times)


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
        "LightGBM": per_round(
            lambda: lgb.train(
                {"objective": "binary", "verbosity": -1, "seed": 0},
                lgb.Dataset(X, label=binary),
                num_boost_round=r,
            ),
            r,
            args.repeats,
        ),
        "XGBoost": per_round(
            lambda: xgb.train(
                {"objective": "binary:logistic", "eta": 0.3, "max_depth": 6, "verbosity": 0},
                xgb.DMatrix(X, label=binary),
                num_boost_round=r,
            ),
            r,
            args.repeats,
        ),
    }
    estimators = {"LightGBM": OrdinalLGBMClassifier, "XGBoost": OrdinalXGBClassifier}
    print(f"n = {args.n}, p = {args.p}, {r} rounds, median of {args.repeats} fits (ms per round)")
    print(
        f"{'booster':<10}{'threshold step every':>22}{'ordinal (5 levels)':>20}"
        f"{'built-in binary':>18}{'ratio':>8}"
    )
    for name, estimator in estimators.items():
        for every in args.every:
            fit = partial(estimator, n_estimators=r, random_state=0, threshold_update_every=every)
            ordinal = per_round(lambda fit=fit: fit().fit(X, y), r, args.repeats)
            print(
                f"{name:<10}{every:>22}{ordinal * 1e3:>20.2f}{builtin[name] * 1e3:>18.2f}"
                f"{ordinal / builtin[name]:>8.2f}"
            )


if __name__ == "__main__":
    main()
