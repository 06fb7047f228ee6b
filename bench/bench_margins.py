"""Time the margins' averages in memory and streamed from Parquet (run by hand; not a test).

``PYTHONPATH=. python bench/bench_margins.py [--memory-n 1e6] [--parquet-n 1e7]
[--repeats 3] [--chunksize 500000] [--data-dir /tmp/ordstats_bench_margins]``
simulates a cumulative logit model with 20 standard-normal predictors
``x1..x20`` and a 4-level factor ``g`` (5 response levels), fits it, and times

* ``avg_comparisons(variables="g")`` (one factor, 3 contrasts) and
  ``avg_slopes(variables=["x1", ..., "x20"])`` on the in-memory fit;
* the same on a fit of the rows written to one Parquet file (made once in
  ``--data-dir``, outside the repository, and reused), against one pass over
  that file (the time of one likelihood evaluation:
  ``model.evaluator.evaluate(params)``, which reads every chunk and builds its
  design, gradient and Hessian).  Up to 2x10^6 rows the streamed estimates
  are compared with the in-memory fit's.

Each line gives the median wall time of ``--repeats`` runs and, in brackets,
the median CPU time of the process (``time.process_time``, which the load of
a shared machine disturbs less); the fits are not timed.  Set
``OPENBLAS_NUM_THREADS=1`` on a shared machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

import ordstats

P = 20
#: rows simulated at a time when writing a Parquet file (each piece its own seed)
PIECE = 1_000_000


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


def simulate_in_pieces(n: int) -> pd.DataFrame:
    """The rows of the Parquet file: pieces of ``PIECE`` rows, piece ``i`` with seed ``i``."""
    pieces = [simulate(min(PIECE, n - start), seed=i) for i, start in enumerate(range(0, n, PIECE))]
    return pd.concat(pieces, ignore_index=True)


FORMULA = "y ~ g + " + " + ".join(f"x{j + 1}" for j in range(P))
SLOPE_VARIABLES = [f"x{j + 1}" for j in range(P)]


def median_time(call: Callable[[], Any], repeats: int) -> tuple[float, float]:
    """Median wall and CPU seconds of ``repeats`` calls."""
    wall, cpu = [], []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        call()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(wall), statistics.median(cpu)


def load() -> str:
    return "load average " + " ".join(f"{v:.1f}" for v in os.getloadavg())


def run_memory(n: int, repeats: int) -> None:
    data = simulate(n)
    fit = ordstats.OrdinalModel.from_formula(FORMULA, data).fit()
    comp = median_time(lambda: fit.avg_comparisons(variables="g"), repeats)
    slopes = median_time(lambda: fit.avg_slopes(variables=SLOPE_VARIABLES), repeats)
    print(
        f"memory n={n:.0e}: avg_comparisons(g) {comp[0]:.2f} s [cpu {comp[1]:.2f} s], "
        f"avg_slopes(20 x) {slopes[0]:.2f} s [cpu {slopes[1]:.2f} s]; {load()}",
        flush=True,
    )


def parquet_file(n: int, chunksize: int, folder: str) -> str:
    """The Parquet file of ``n`` rows in ``folder`` (written once)."""
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"rows_{n}_{chunksize}.parquet")
    if not os.path.exists(path):
        partial = path + ".partial"
        with pq.ParquetWriter(
            partial, pa.Schema.from_pandas(simulate(1), preserve_index=False)
        ) as out:
            for i, start in enumerate(range(0, n, PIECE)):
                piece = pa.Table.from_pandas(
                    simulate(min(PIECE, n - start), seed=i), preserve_index=False
                )
                out.write_table(piece, row_group_size=chunksize)
        os.replace(partial, path)
    return path


def run_parquet(n: int, repeats: int, chunksize: int, folder: str) -> None:
    path = parquet_file(n, chunksize, folder)
    fit = ordstats.OrdinalModel.from_formula(FORMULA, path, chunksize=chunksize).fit()
    params = fit.params.to_numpy()
    one_pass = median_time(lambda: fit.model.evaluator.evaluate(params), repeats)
    comp_table = fit.avg_comparisons(variables="g")
    comp = median_time(lambda: fit.avg_comparisons(variables="g"), repeats)
    slopes = median_time(lambda: fit.avg_slopes(variables=SLOPE_VARIABLES), repeats)
    check = ""
    if n <= 2_000_000:
        memory = ordstats.OrdinalModel.from_formula(FORMULA, simulate_in_pieces(n)).fit()
        expected = memory.avg_comparisons(variables="g")
        diff = np.max(np.abs(comp_table["estimate"].to_numpy() - expected["estimate"].to_numpy()))
        check = f"; max |estimate - in memory| {diff:.1e}"
    print(
        f"parquet n={n:.0e}: one pass {one_pass[0]:.2f} s [cpu {one_pass[1]:.2f} s]; "
        f"avg_comparisons(g) {comp[0]:.2f} s [cpu {comp[1]:.2f} s] "
        f"({comp[0] / one_pass[0]:.1f} passes, cpu {comp[1] / one_pass[1]:.1f}); "
        f"avg_slopes(20 x) {slopes[0]:.2f} s [cpu {slopes[1]:.2f} s] "
        f"({slopes[0] / one_pass[0]:.1f} passes, cpu {slopes[1] / one_pass[1]:.1f}){check}; "
        f"{load()}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--memory-n", default="1e6")
    parser.add_argument("--parquet-n", default="1e7")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--chunksize", type=int, default=500_000)
    parser.add_argument("--data-dir", default=os.path.join("/tmp", "ordstats_bench_margins"))
    args = parser.parse_args()
    for n in filter(None, args.memory_n.split(",")):
        run_memory(int(float(n)), args.repeats)
    for n in filter(None, args.parquet_n.split(",")):
        run_parquet(int(float(n)), args.repeats, args.chunksize, args.data_dir)


if __name__ == "__main__":
    main()
