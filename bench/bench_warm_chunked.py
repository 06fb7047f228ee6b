"""Passes over the data of chunked and Dask fits, with and without the warm start.

Run by hand from the repository root (never by the tests)::

    python bench/bench_warm_chunked.py                 # n = 1e6, p = 20
    python bench/bench_warm_chunked.py --sizes 1e6 1e7 --dask

The data are ``bench_scale.py``'s (Parquet files of 500,000 rows in
``--data-dir``, reused).  For each size the same model is fitted from the
files in chunks of 100,000 rows with ``warm_start=False`` (the default start)
and with the default (the first pass keeps a subsample, Newton starts from its
fit), and optionally from Dask (``dd.read_parquet``, threaded scheduler).  The
table shows the passes before fitting (levels + subsample, summary), the
Newton passes (``mle_retvals["passes"]``), iterations, seconds and the largest
difference between the estimates.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # benchmark this checkout, not an installed ordstats
sys.path.insert(0, str(ROOT / "bench"))

from bench_scale import ensure_parquet, formula  # noqa: E402

import ordstats  # noqa: E402


def _fit(data, model_formula: str, warm_start: bool | None) -> dict[str, object]:
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = ordstats.OrdinalModel.from_formula(model_formula, data, chunksize=100_000)
        before = model.evaluator.n_passes
        res = model.fit(warm_start=warm_start, disp=False)
    return {
        "before": before,
        "passes": res.mle_retvals["passes"],
        "iterations": res.mle_retvals["iterations"],
        "rows": res.mle_retvals["warm_start_rows"],
        "seconds": time.perf_counter() - start,
        "params": res.params.to_numpy(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", type=float, default=[1e6])
    parser.add_argument("--p", type=int, default=20)
    parser.add_argument("--data-dir", type=Path, default=ROOT / "bench" / "_data")
    parser.add_argument("--dask", action="store_true", help="also fit from Dask")
    parser.add_argument("--warm-only", action="store_true", help="skip the default start")
    args = parser.parse_args()
    model_formula = formula(args.p)
    print(f"load average {os.getloadavg()[0]:.1f}; {os.cpu_count()} cores; p = {args.p}, K = 5")
    print(
        "| n | source | start | passes before fit | Newton passes | iterations | "
        "subsample rows | seconds | max abs diff to cold |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for size in args.sizes:
        n = int(size)
        path = str(ensure_parquet(args.data_dir, n, args.p))
        runs = {}
        for label, warm in (("default", False), ("warm", None)):
            if not (args.warm_only and warm is False):
                runs[("files", label)] = _fit(path, model_formula, warm)
        if args.dask:
            import dask
            import dask.dataframe as dd

            with dask.config.set(scheduler="threads"):
                runs[("dask", "warm")] = _fit(dd.read_parquet(path), model_formula, None)
        cold = runs.get(("files", "default"), runs[("files", "warm")])["params"]
        for (source, label), run in runs.items():
            diff = float(np.max(np.abs(run["params"] - cold)))  # 0 without a cold fit
            print(
                f"| {n:.0e} | {source} | {label} | {run['before']} | {run['passes']} | "
                f"{run['iterations']} | {run['rows']} | {run['seconds']:.1f} | {diff:.1e} |"
            )


if __name__ == "__main__":
    main()
