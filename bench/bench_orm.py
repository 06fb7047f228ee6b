"""Continuous responses at scale: ordstats many-levels fits against R's ``rms::orm`` (issue 28).

``PYTHONPATH=. OPENBLAS_NUM_THREADS=1 python bench/bench_orm.py`` fits
``y ~ x1 + x2`` with one threshold per distinct value of ``y`` (logit link) at
n rows with K distinct values: 10^4/10^3, 10^5/10^4 and 10^6/10^5 by default
(``--sizes 10000:1000 ...``).  Each fit runs in a fresh worker process (data
built there, not timed): ``from_formula`` plus ``fit()`` (design, Newton
iterations, standard errors), the median of ``--repeats`` fits, as wall time and
as the CPU time of the process (``time.process_time``), which a machine shared
with other jobs inflates far less; and the peak resident memory of the worker
(``ru_maxrss``) beside its size after building the data.  R's ``orm`` runs on
the same data (written to a CSV, reading not timed: ``system.time(orm(...))``,
elapsed and user + system CPU) at the sizes up to ``--r-max-rows`` (stopped after
``--r-timeout`` seconds); the table
gives the ratios R / ordstats and the largest difference between the slopes.
The load average is printed before and after: the machine these numbers come
from is shared.  Needs R with rms for the R columns (``--no-r`` without).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

#: R code run on one CSV: time orm() only, print one JSON line.
R_CODE = r"""
suppressMessages(library(rms))
args <- commandArgs(TRUE)
d <- read.csv(args[1])
times <- c()
for (i in seq_len(as.integer(args[2]))) {
  t <- system.time(f <- orm(y ~ x1 + x2, data = d))
  times <- rbind(times, c(t[["elapsed"]], t[["user.self"]] + t[["sys.self"]]))
}
cat(sprintf('{"wall": %.4f, "cpu": %.4f, "x1": %.12g, "x2": %.12g}\n',
            median(times[, 1]), median(times[, 2]), coef(f)[["x1"]], coef(f)[["x2"]]))
"""

DEFAULT_SIZES = ["10000:1000", "30000:3000", "100000:10000", "1000000:100000"]
#: The issue's targets: seconds for (n, K).
TARGETS = {(100_000, 10_000): 2.0, (1_000_000, 100_000): 20.0}


def simulated(n: int, K: int, seed: int = 0) -> pd.DataFrame:
    """Logistic latent data with exactly ``K`` distinct response values, equally often."""
    rng = np.random.default_rng(seed)
    x1, x2 = rng.normal(size=n), rng.normal(size=n)
    latent = x1 - 0.5 * x2 + rng.logistic(size=n)
    ranks = np.empty(n, dtype=np.int64)
    ranks[np.argsort(latent, kind="stable")] = np.arange(n)
    values = 1.0 + 0.01 * np.arange(K)  # distinct values on a grid of 0.01
    return pd.DataFrame({"y": values[(ranks * K) // n], "x1": x1, "x2": x2})


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def worker(n: int, K: int, repeats: int) -> None:
    """Time ``repeats`` fits in this process; print one JSON line."""
    from ordstats import OrdinalModel

    data = simulated(n, K)
    before = _rss_mb()
    walls, cpus = [], []
    for _ in range(repeats):
        start, cpu = time.perf_counter(), time.process_time()
        res = OrdinalModel.from_formula("y ~ x1 + x2", data, many_levels=True).fit()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
        assert res.converged and len(res.params) == K - 1 + 2
    record = {
        "wall": float(np.median(walls)),
        "cpu": float(np.median(cpus)),
        "rss_data_mb": before,
        "rss_peak_mb": _rss_mb(),
        "iterations": res.niter,
        "x1": float(res.params["x1"]),
        "x2": float(res.params["x2"]),
    }
    print(json.dumps(record))


def run_ordstats(n: int, K: int, repeats: int) -> dict:
    command = [sys.executable, __file__, "--worker", f"{n}:{K}", "--repeats", str(repeats)]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_r(n: int, K: int, repeats: int, folder: Path, timeout: float) -> dict | None:
    """R's timings, or None when R takes longer than ``timeout`` seconds (wall)."""
    path = folder / f"orm_{n}_{K}.csv"
    simulated(n, K).to_csv(path, index=False, float_format="%.17g")
    script = folder / "orm_time.R"
    script.write_text(R_CODE)
    try:
        done = subprocess.run(
            ["Rscript", str(script), str(path), str(repeats)],
            capture_output=True,
            text=True,
            check=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return None
    finally:
        path.unlink()
    return json.loads(done.stdout.strip().splitlines()[-1])


def _sizes(texts: list[str]) -> list[tuple[int, int]]:
    out = []
    for text in texts:
        n, K = (int(float(part)) for part in text.split(":"))
        out.append((n, K))
    return out


def _load() -> str:
    return ", ".join(f"{value:.1f}" for value in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=DEFAULT_SIZES, help="n:K pairs")
    parser.add_argument("--repeats", type=int, default=3, help="fits per size (median)")
    parser.add_argument("--r-max-rows", type=int, default=30_000, help="largest n for R")
    parser.add_argument(
        "--r-timeout", type=float, default=900.0, help="seconds (wall) before R is stopped"
    )
    parser.add_argument("--r-repeats", type=int, default=1, help="R fits per size (median)")
    parser.add_argument("--no-r", action="store_true", help="ordstats only")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        (size,) = _sizes([args.worker])
        worker(*size, args.repeats)
        return
    have_r = not args.no_r and shutil.which("Rscript") is not None
    print(f"load average (1, 5, 15 min) at start: {_load()}")
    print(f"BLAS threads: OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n, K in _sizes(args.sizes):
            ours = run_ordstats(n, K, args.repeats)
            row = {
                "n": n,
                "K": K,
                "ordstats wall s": ours["wall"],
                "ordstats CPU s": ours["cpu"],
                "peak MB": ours["rss_peak_mb"],
                "fit MB": ours["rss_peak_mb"] - ours["rss_data_mb"],
                "Newton it.": ours["iterations"],
            }
            if have_r and n <= args.r_max_rows:
                theirs = run_r(n, K, args.r_repeats, Path(tmp), args.r_timeout)
                if theirs is None:
                    row["orm wall s"] = f"> {args.r_timeout:g} (stopped)"
                    theirs = {}
                row |= (
                    {}
                    if not theirs
                    else {
                        "orm wall s": theirs["wall"],
                        "orm CPU s": theirs["cpu"],
                        "wall ratio": theirs["wall"] / ours["wall"],
                        "CPU ratio": theirs["cpu"] / ours["cpu"],
                        "max |slope diff|": max(abs(theirs[c] - ours[c]) for c in ("x1", "x2")),
                    }
                )
            target = TARGETS.get((n, K))
            if target is not None:
                row["target s"] = target
            rows.append(row)
            print(f"done n={n} K={K} (load {_load()})", flush=True)
    table = pd.DataFrame(rows).set_index(["n", "K"])
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(table.to_string(float_format=lambda v: f"{v:.3g}"))
    print(f"load average (1, 5, 15 min) at end: {_load()}")


if __name__ == "__main__":
    main()
