"""Coverage of the margins verbs' probability intervals (run by hand; not a unit test).

``PYTHONPATH=. python bench/bench_margins_coverage.py [--reps 2000 --n 100 --seed 0]``
simulates a cumulative logit model with a two-level factor ``g`` and a normal
``x`` (4 levels, thresholds -1.5, 0, 1.5, effects 1.0 and 0.8), fits it at
``n`` rows, and checks whether the 95% intervals of
``predictions(datagrid(g=["a", "b"], x=1.5))`` (the default: logit scale
mapped back) and of ``avg_predictions(by="g")`` cover the true probabilities.
The Wald intervals (``conf_type="wald"``) are reported beside them, with how
many of their limits leave [0, 1].  The true average probability of a ``g``
group is that of the fitted rows' ``x`` under the true parameters.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import pandas as pd
from scipy import special

import ordstats

THETA = np.array([-1.5, 0.0, 1.5])
BETA = {"g": 1.0, "x": 0.8}


def true_probabilities(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    eta = BETA["g"] * (g == "b") + BETA["x"] * x
    cum = special.expit(THETA[None, :] - eta[:, None])
    return np.diff(np.column_stack([np.zeros(len(x)), cum, np.ones(len(x))]), axis=1)


def simulate(n: int, rng: np.random.Generator) -> pd.DataFrame:
    g = rng.choice(["a", "b"], size=n)
    x = rng.normal(size=n)
    prob = true_probabilities(g, x)
    y = (rng.uniform(size=n)[:, None] > np.cumsum(prob, axis=1)).sum(axis=1) + 1
    levels = ["1", "2", "3", "4"]
    return pd.DataFrame(
        {
            "y": pd.Categorical(y.astype(str), categories=levels, ordered=True),
            "g": pd.Categorical(g, categories=["a", "b"]),
            "x": x,
        }
    )


def one_replication(n: int, rng: np.random.Generator) -> dict[str, np.ndarray] | None:
    data = simulate(n, rng)
    if data["y"].value_counts().min() == 0:
        return None  # a level without rows: a different model
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = ordstats.OrdinalModel.from_formula("y ~ g + x", data).fit()
    grid = ordstats.datagrid(res, g=["a", "b"], x=1.5)
    truth_grid = true_probabilities(np.array(["a", "b"]), np.array([1.5, 1.5])).T.ravel()
    averages = []
    for g in ("a", "b"):
        rows = data["g"] == g
        averages.append(true_probabilities(np.full(rows.sum(), g), data["x"][rows].to_numpy()))
    truth_avg = np.array([a.mean(axis=0) for a in averages]).T.ravel()
    out = {}
    for name, kind in (("logit", "auto"), ("wald", "wald")):
        at_grid = res.predictions(grid, conf_type=kind)
        by_g = res.avg_predictions(by="g", conf_type=kind)
        for label, table, truth in (("grid", at_grid, truth_grid), ("avg", by_g, truth_avg)):
            low, high = table["conf_low"].to_numpy(), table["conf_high"].to_numpy()
            out[f"{label}_{name}_cover"] = (low <= truth) & (truth <= high)
            out[f"{label}_{name}_outside"] = (low < 0) | (high > 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    results: dict[str, list[np.ndarray]] = {}
    skipped = 0
    for _ in range(args.reps):
        one = one_replication(args.n, rng)
        if one is None:
            skipped += 1
            continue
        for key, value in one.items():
            results.setdefault(key, []).append(value)
    done = args.reps - skipped
    print(f"{done} replications at n = {args.n} ({skipped} skipped: a level without rows)")
    print(
        f"{'estimates':10s} {'intervals':9s} {'coverage':>9s} {'min over levels':>16s} "
        f"{'limits outside [0, 1]':>22s}"
    )
    for label in ("grid", "avg"):
        for name in ("logit", "wald"):
            cover = np.array(results[f"{label}_{name}_cover"])
            outside = np.array(results[f"{label}_{name}_outside"])
            print(
                f"{label:10s} {name:9s} {cover.mean():9.4f} {cover.mean(axis=0).min():16.4f} "
                f"{int(outside.sum()):22d}"
            )


if __name__ == "__main__":
    main()
