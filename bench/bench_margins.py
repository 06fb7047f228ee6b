"""Time the margins' averages in memory and streamed from Parquet (run by hand; not a test).

``PYTHONPATH=. python bench/bench_margins.py [--memory-n 1e6] [--parquet-n 1e6,3e6]
[--repeats 3] [--chunksize 250000]`` simulates a cumulative logit model with 20
standard-normal predictors ``x1..x20`` and a 4-level factor ``g``
(5 response levels), fits it, and times

* ``avg_comparisons(variables="g")`` (one factor, 3 contrasts) and
  ``avg_slopes(variables=["x1", ..., "x20"])`` on the in-memory fit;
* the same on a fit of the rows written to one Parquet file, against one pass
  over that file (the time of one likelihood evaluation:
  ``model.evaluator.evaluate(params)``, which reads every chunk and builds its
  design, gradient and Hessian).

Medians of ``--repeats`` runs (the fits are not timed).  Set
``OPENBLAS_NUM_THREADS=1`` on a shared machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

import ordstats

P = 20


def simulate(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, P))
    g = rng.choice(["a", "b", "c", "d"], size=n)
    eta = X @ np.linspace(-0.5, 0.5, P) + 0.4 * (g == "b") - 0.3 * (g == "c") + 0.6 * (g == "d")
    cuts = np.array([-2.0, -0.7, 0.7, 2.0])
    y = (rng.logistic(size=n)[:, None] + eta[:, None] > cuts).sum(axis=1)
    frame = pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(P)])
    frame["g"] = g
    frame["y"] = y
    return frame


FORMULA = "y ~ g + " + " + ".join(f"x{j + 1}" for j in range(P))
SLOPE_VARIABLES = [f"x{j + 1}" for j in range(P)]


def median_time(call: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run_memory(n: int, repeats: int) -> None:
    data = simulate(n)
    fit = ordstats.OrdinalModel.from_formula(FORMULA, data).fit()
    comp = median_time(lambda: fit.avg_comparisons(variables="g"), repeats)
    slopes = median_time(lambda: fit.avg_slopes(variables=SLOPE_VARIABLES), repeats)
    print(f"memory n={n:.0e}: avg_comparisons(g) {comp:.2f} s, avg_slopes(20 x) {slopes:.2f} s")


def run_parquet(n: int, repeats: int, chunksize: int) -> None:
    data = simulate(n)
    memory = ordstats.OrdinalModel.from_formula(FORMULA, data).fit()
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "rows.parquet")
        data.to_parquet(path, index=False, row_group_size=chunksize)
        del data
        fit = ordstats.OrdinalModel.from_formula(FORMULA, path, chunksize=chunksize).fit()
        params = fit.params.to_numpy()
        one_pass = median_time(lambda: fit.model.evaluator.evaluate(params), repeats)
        comp_table = fit.avg_comparisons(variables="g")
        comp = median_time(lambda: fit.avg_comparisons(variables="g"), repeats)
        slopes = median_time(lambda: fit.avg_slopes(variables=SLOPE_VARIABLES), repeats)
    expected = memory.avg_comparisons(variables="g")
    diff = np.max(np.abs(comp_table["estimate"].to_numpy() - expected["estimate"].to_numpy()))
    print(
        f"parquet n={n:.0e}: one pass {one_pass:.2f} s; avg_comparisons(g) {comp:.2f} s "
        f"({comp / one_pass:.1f} passes); avg_slopes(20 x) {slopes:.2f} s "
        f"({slopes / one_pass:.1f} passes); max |estimate - in memory| {diff:.1e}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--memory-n", default="1e6")
    parser.add_argument("--parquet-n", default="1e6")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--chunksize", type=int, default=250_000)
    args = parser.parse_args()
    for n in filter(None, args.memory_n.split(",")):
        run_memory(int(float(n)), args.repeats)
    for n in filter(None, args.parquet_n.split(",")):
        run_parquet(int(float(n)), args.repeats, args.chunksize)


if __name__ == "__main__":
    main()
