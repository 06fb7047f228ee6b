"""Benchmark: cumulative link mixed model (one random intercept) against R's ``ordinal::clmm``.

Same synthetic data in R and Python: ``tests/r/clmm_bench.R`` writes the CSV (n = 10^4 rows,
500 groups, p = 10 regressors, K = 5 levels) and times ``clmm(y ~ x1 + ... + x10 + (1|g))``;
this script fits the same CSV with ordstats (Laplace, default settings) and prints the median
of ``--repeat`` runs with the log-likelihood and the largest differences from R's estimates
(if R's output file is given).

Usage (from the repository root)::

    Rscript tests/r/clmm_bench.R /tmp/clmm_bench.csv > /tmp/clmm_bench_r.txt
    python bench/bench_clmm.py /tmp/clmm_bench.csv --r-output /tmp/clmm_bench_r.txt

Run by hand, not in the test suite (no timing assertions in tests).
"""

from __future__ import annotations

import argparse
import re
import resource
import statistics
import time
import warnings

import numpy as np
import pandas as pd

import ordstats


def _r_numbers(path: str) -> dict[str, float]:
    text = open(path).read()
    out = {"elapsed": float(re.search(r"elapsed_seconds ([\d.]+)", text).group(1))}
    out["loglik"] = float(re.search(r"logLik (-?[\d.]+)", text).group(1))
    out["sd"] = float(re.search(r"sd\(g\) ([\d.]+)", text).group(1))
    return out


def simulate(n: int, groups: int, p: int, crossed: int | None = None) -> pd.DataFrame:
    """Thresholds (-2, -0.7, 0.7, 2), slopes from -0.5 to 0.5, group SD 1, logistic noise."""
    rng = np.random.default_rng(20240601)
    g = rng.permutation(np.arange(n) % groups)
    X = np.round(rng.normal(size=(n, p)), 6)
    latent = X @ np.linspace(-0.5, 0.5, p) + rng.normal(size=groups)[g] + rng.logistic(size=n)
    data = pd.DataFrame(X, columns=[f"x{k}" for k in range(1, p + 1)])
    data["g"] = pd.Categorical(g)
    if crossed:
        h = rng.integers(0, crossed, size=n)
        latent += rng.normal(size=crossed)[h]
        data["h"] = pd.Categorical(h)
    codes = np.searchsorted([-2.0, -0.7, 0.7, 2.0], latent) + 1
    data["y"] = pd.Categorical(codes, categories=[1, 2, 3, 4, 5], ordered=True)
    return data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", nargs="?", help="data written by tests/r/clmm_bench.R")
    parser.add_argument("--r-output", help="the output of tests/r/clmm_bench.R")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--simulate",
        metavar="N,GROUPS,P",
        help="simulate instead of reading a CSV (the same model as tests/r/clmm_bench.R)",
    )
    parser.add_argument(
        "--crossed", type=int, metavar="H", help="with --simulate: add a crossed (1|h), H levels"
    )
    parser.add_argument(
        "--write-csv", metavar="PATH", help="with --simulate: also write the data for R"
    )
    args = parser.parse_args()
    if args.simulate:
        n, groups, p = (int(float(v)) for v in args.simulate.split(","))
        data = simulate(n, groups, p, args.crossed)
        if args.write_csv:
            data.to_csv(args.write_csv, index=False)
    elif args.csv:
        data = pd.read_csv(args.csv)
        data["y"] = pd.Categorical(data["y"], categories=[1, 2, 3, 4, 5], ordered=True)
        for factor in {"g", "h"} & set(data.columns):
            data[factor] = data[factor].astype(str)
        p = sum(column.startswith("x") for column in data.columns)
    else:
        parser.error("give a CSV or --simulate N,GROUPS,P")
    formula = "y ~ " + " + ".join(f"x{k}" for k in range(1, p + 1)) + " + (1|g)"
    if "h" in data.columns:
        formula += " + (1|h)"
    times, res = [], None
    for _ in range(args.repeat):
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("error", ordstats.ConvergenceWarning)
            res = ordstats.OrdinalModel.from_formula(formula, data).fit()
        times.append(time.perf_counter() - start)
    assert res is not None
    median = statistics.median(times)
    sd = float(res.varcorr()["sd"].iloc[0])
    print(f"n = {len(data)}, groups = {data['g'].nunique()}, p = {p}, K = 5, formula {formula}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2
    print(f"peak resident memory of the process: {peak:.2f} GB")
    print(
        f"ordstats: median {median:.2f} s of {args.repeat} "
        f"(runs {', '.join(f'{t:.2f}' for t in times)})"
    )
    print(f"ordstats: logLik {res.llf:.6f}, sd(g) {sd:.6f}, evaluations {res.n_evaluations}")
    if args.r_output:
        r = _r_numbers(args.r_output)
        print(f"R clmm:   {r['elapsed']:.2f} s, logLik {r['loglik']:.6f}, sd(g) {r['sd']:.6f}")
        print(f"speed-up: {r['elapsed'] / median:.1f}x (target 30x)")
        print(f"logLik difference {res.llf - r['loglik']:.2e}; sd difference {sd - r['sd']:.2e}")
        print(f"max |params| {np.max(np.abs(res.params.to_numpy())):.3f}")


if __name__ == "__main__":
    main()
