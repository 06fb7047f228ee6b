"""Ordinal MF timing: seconds per sweep and to convergence vs a Gaussian ALS sweep.

Run by hand: ``python bench/bench_factorization.py [n_rows n_cols density rank]``
(default 10,000 x 2,000 at 5% = 10^6 ratings, rank 10).
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np
import pandas as pd

from ordstats import OrdinalFactorization, simulate_ratings
from ordstats.errors import ConvergenceWarning

n_rows, n_cols = (int(a) for a in sys.argv[1:3]) if len(sys.argv) > 2 else (10_000, 2_000)
density = float(sys.argv[3]) if len(sys.argv) > 3 else 0.05
rank = int(sys.argv[4]) if len(sys.argv) > 4 else 10
max_sweeps = int(sys.argv[5]) if len(sys.argv) > 5 else 100

t = time.perf_counter()
sim = simulate_ratings(n_rows, n_cols, rank=rank, density=density, factor_sd=0.5, seed=0)
frame = pd.DataFrame({"row": sim.row, "col": sim.col, "rating": sim.y + 1})
print(
    f"{len(frame):,} ratings, {n_rows:,} x {n_cols:,}, rank {rank} "
    f"(simulated in {time.perf_counter() - t:.1f} s)"
)


def als_sweep_time(sweeps: int = 3) -> float:
    """Seconds per ridge-ALS sweep (same batched bincount + solve layout)."""
    r, c, y = sim.row, sim.col, sim.y + 1.0
    rng = np.random.default_rng(0)
    P, Q = rng.standard_normal((n_rows, rank)), rng.standard_normal((n_cols, rank))

    def solve(block, other, n_blocks, target):
        d = other.shape[1]
        A = np.zeros((n_blocks, d, d))
        b = np.zeros((n_blocks, d))
        for i in range(d):
            b[:, i] = np.bincount(block, other[:, i] * target, n_blocks)
            for j in range(i + 1):
                A[:, i, j] = A[:, j, i] = np.bincount(block, other[:, i] * other[:, j], n_blocks)
        return np.linalg.solve(A + np.eye(d), b[:, :, None])[:, :, 0]

    t = time.perf_counter()
    for _ in range(sweeps):
        P = solve(r, Q[c], n_rows, y)
        Q = solve(c, P[r], n_cols, y)
    return (time.perf_counter() - t) / sweeps


als = als_sweep_time()
print(f"Gaussian ALS: {als:.2f} s per sweep")
model = OrdinalFactorization(frame, rank=rank, factor_penalty=1.0)
t = time.perf_counter()
with warnings.catch_warnings():
    warnings.simplefilter("ignore", ConvergenceWarning)
    res = model.fit(max_sweeps=max_sweeps, tol=1e-6)
total = time.perf_counter() - t
print(
    f"ordinal MF: {res.n_sweeps} sweeps in {total:.1f} s ({total / res.n_sweeps:.2f} s per sweep, "
    f"{total / res.n_sweeps / als:.1f}x ALS), converged={res.converged}"
)
