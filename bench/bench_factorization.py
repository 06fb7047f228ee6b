"""Ordinal MF timing: seconds per sweep and to convergence vs a Gaussian ALS sweep.

Run by hand::

    python bench/bench_factorization.py                       # 10^6 ratings, rank 10
    python bench/bench_factorization.py --n-jobs 2            # sweeps in two threads
    python bench/bench_factorization.py --rows 100000 --dask-workers 2   # 10^7 on Dask

The ratings are simulated (``simulate_ratings``, ``factor_sd=0.5``) at the given
shape and density; the fit uses global logit thresholds, ridge 1.0 and the
default convergence tolerance (``tol=1e-7`` relative change of the MAP objective).
The Gaussian comparison is plain ridge ALS with numpy laid out the same way
(bincount-accumulated block Gram matrices, one batched solve), timed over three
sweeps in the same run.  ``--dask-workers N`` starts a local ``dask.distributed``
cluster of N single-threaded worker processes and fits on it.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd

from ordstats import OrdinalFactorization, simulate_ratings
from ordstats.errors import ConvergenceWarning


def als_sweep_time(sim, n_rows: int, n_cols: int, rank: int, sweeps: int = 3) -> float:
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

    start = time.perf_counter()
    for _ in range(sweeps):
        P = solve(r, Q[c], n_rows, y)
        Q = solve(c, P[r], n_cols, y)
    return (time.perf_counter() - start) / sweeps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--cols", type=int, default=2_000)
    parser.add_argument("--density", type=float, default=0.05)
    parser.add_argument("--rank", type=int, default=10)
    parser.add_argument("--max-sweeps", type=int, default=100)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--dask-workers", type=int, default=0)
    parser.add_argument("--no-als", action="store_true", help="skip the Gaussian ALS timing")
    args = parser.parse_args()

    start = time.perf_counter()
    sim = simulate_ratings(
        args.rows, args.cols, rank=args.rank, density=args.density, factor_sd=0.5, seed=0
    )
    frame = pd.DataFrame({"row": sim.row, "col": sim.col, "rating": sim.y + 1})
    print(
        f"{len(frame):,} ratings, {args.rows:,} x {args.cols:,}, rank {args.rank} "
        f"(simulated in {time.perf_counter() - start:.1f} s)"
    )
    als = None
    if not args.no_als:
        als = als_sweep_time(sim, args.rows, args.cols, args.rank)
        print(f"Gaussian ALS: {als:.2f} s per sweep")
    # the penalties of the runs in bench/README.md (the defaults have changed since)
    model = OrdinalFactorization(frame, rank=args.rank, factor_penalty=1.0, bias_penalty=0.01)
    options: dict = {"n_jobs": args.n_jobs}
    cluster = client = None
    if args.dask_workers:
        import distributed

        cluster = distributed.LocalCluster(
            n_workers=args.dask_workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
        )
        client = distributed.Client(cluster)
        options = {"client": client}
    where = (
        f"{args.dask_workers}-worker Dask cluster"
        if client
        else f"{args.n_jobs} thread{'s' if args.n_jobs > 1 else ''}"
    )
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = model.fit(max_sweeps=args.max_sweeps, **options)
    total = time.perf_counter() - start
    if client is not None:
        client.close()
        cluster.close()
    per_sweep = total / res.n_sweeps
    ratio = f", {per_sweep / als:.1f}x ALS" if als else ""
    print(
        f"ordinal MF ({where}): {res.n_sweeps} sweeps in {total:.1f} s "
        f"({per_sweep:.2f} s per sweep{ratio}), converged={res.converged}, "
        f"objective {res.objective:.3f}"
    )


if __name__ == "__main__":
    main()
