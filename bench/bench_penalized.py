"""Time of a 100-point elastic-net path.

Run by hand: ``PYTHONPATH=. python bench/bench_penalized.py``.

Simulated data: ``n`` rows, ``p`` standard-normal predictors of which 10 have
effects, 5 levels from a logistic latent variable; the cumulative logit model,
``l1_ratio = 0.5``, the default grid of 100 penalties from ``alpha_max`` down to
``1e-3 alpha_max`` with warm starts.  Prints the time, the proximal Newton
iterations and the largest KKT violation along the path.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import ordstats


def simulate(n: int, p: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    beta = np.zeros(p)
    beta[:10] = rng.normal(scale=0.5, size=10)
    latent = X @ beta + rng.logistic(size=n)
    y = np.digitize(latent, [-1.5, -0.5, 0.5, 1.5])
    return X, y


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--p", type=int, default=100)
    parser.add_argument("--family", default="cumulative")
    parser.add_argument("--n-alphas", type=int, default=100)
    args = parser.parse_args()
    X, y = simulate(args.n, args.p)
    model = ordstats.OrdinalModel(y, X, family=args.family)
    start = time.perf_counter()
    path = model.path(n_alphas=args.n_alphas, l1_ratio=0.5)
    elapsed = time.perf_counter() - start
    print(
        f"family={args.family} n={args.n} p={args.p} alphas={path.alphas.size}: "
        f"{elapsed:.2f} s, {int(path.n_iter.sum())} proximal Newton iterations, "
        f"max KKT {path.kkt.max():.1e}, non-zero at the end {int(path.n_nonzero.iloc[-1])}"
    )


if __name__ == "__main__":
    main()
