"""Scale benchmark: in memory vs chunked (Parquet) vs Dask, many levels, and a 10^8-row fit.

Run by hand from the repository root (never by the tests)::

    python bench/bench_scale.py                       # n = 1e6, 1e7 (p = 20) + K = 5 vs 1000
    python bench/bench_scale.py --sizes 1e6 --reps 3  # quicker
    python bench/bench_scale.py --huge 1e8 --huge-p 20

Every fit runs in a fresh subprocess, so its peak memory can be measured: a
thread samples the resident set size of the process *and its children* (Dask
workers) every 20 ms; the table reports the peak minus the baseline taken after
imports (and, for Dask, after the cluster started).  Generated Parquet files go
to ``--data-dir`` (default ``bench/_data``, git-ignored) and are reused.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # benchmark this checkout, not an installed ordstats
ROWS_PER_FILE = 500_000
CHUNKSIZE = 100_000


# -- data ----------------------------------------------------------------------


def beta_of(p: int) -> np.ndarray:
    return np.array([0.0 if j % 5 == 4 else 0.5 * (-1) ** j * (1 - j / (2 * p)) for j in range(p)])


def make_part(n: int, p: int, seed: int, K: int = 5) -> dict[str, np.ndarray]:
    """``n`` rows of the latent logistic model with ``p`` normal predictors."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    latent = X @ beta_of(p) + rng.logistic(size=n)
    scale = np.sqrt(beta_of(p) @ beta_of(p) + np.pi**2 / 3)
    cuts = scale * np.log(np.arange(1, K) / (K - np.arange(1, K)))  # logistic quantiles
    out = {"y": np.searchsorted(cuts, latent).astype(np.int64)}
    out.update({f"x{j + 1}": X[:, j] for j in range(p)})
    return out


def ensure_parquet(directory: Path, n: int, p: int) -> Path:
    """Write (once) ``n`` rows in files of 500,000 rows, row groups of 100,000."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    target = directory / f"n{n:.0e}_p{p}".replace("+", "")
    done = target / "_complete"
    if done.exists():
        return target
    target.mkdir(parents=True, exist_ok=True)
    n_files = max(1, -(-n // ROWS_PER_FILE))
    for k in range(n_files):
        rows = min(ROWS_PER_FILE, n - k * ROWS_PER_FILE)
        table = pa.table(make_part(rows, p, seed=1000 + k))
        pq.write_table(table, target / f"part-{k:05d}.parquet", row_group_size=CHUNKSIZE)
    done.write_text("ok")
    return target


def formula(p: int) -> str:
    return "y ~ " + " + ".join(f"x{j + 1}" for j in range(p))


# -- one measured fit (child process) -----------------------------------------


class PeakRSS:
    """Peak resident set size of this process and its children, sampled."""

    def __init__(self) -> None:
        import psutil

        self.proc = psutil.Process()
        self.peak = self.baseline = self.current()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def current(self) -> int:
        import psutil

        total = self.proc.memory_info().rss
        for child in self.proc.children(recursive=True):
            try:
                total += child.memory_info().rss
            except psutil.Error:
                pass
        return total

    def _run(self) -> None:
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, self.current())

    def reset(self) -> None:
        self.peak = self.baseline = self.current()

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return (self.peak - self.baseline) / 2**20


def child(args: argparse.Namespace) -> None:
    import ordstats

    meter = PeakRSS()
    data_dir = Path(args.path)
    f = formula(args.p)
    result: dict[str, object] = {}
    if args.mode == "memory":
        import pandas as pd

        t0 = time.perf_counter()
        frame = pd.read_parquet(data_dir)
        result["read"] = time.perf_counter() - t0
        meter.reset()  # the data in memory are the baseline of the fit
        t0 = time.perf_counter()
        res = ordstats.OrdinalModel.from_formula(f, frame).fit()
        result["time"] = time.perf_counter() - t0
        y, X = frame["y"].to_numpy(), frame.drop(columns="y").to_numpy()
        t0 = time.perf_counter()
        ordstats.OrdinalModel(y, X).fit()
        result["time_arrays"] = time.perf_counter() - t0
    elif args.mode == "chunked":
        t0 = time.perf_counter()
        res = ordstats.OrdinalModel.from_formula(f, str(data_dir), chunksize=args.chunksize).fit(
            disp=False
        )
        result["time"] = time.perf_counter() - t0
        result["passes"] = res.model.n_passes
    else:
        import dask.dataframe as dd
        from dask.distributed import Client, LocalCluster

        cluster = LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        )
        client = Client(cluster)
        time.sleep(1.0)
        meter.reset()
        t0 = time.perf_counter()
        ddf = dd.read_parquet(str(data_dir))
        res = ordstats.OrdinalModel.from_formula(f, ddf).fit(disp=False)
        result["time"] = time.perf_counter() - t0
        result["passes"] = res.model.n_passes
        result["partitions"] = ddf.npartitions
    result["peak_mb"] = meter.stop()
    result.update(
        params=res.params.tolist(),
        bse=res.bse.tolist(),
        llf=res.llf,
        niter=res.niter,
        converged=res.converged,
    )
    if args.mode == "dask":
        client.close()
        cluster.close()
    print("RESULT " + json.dumps(result))


def run_child(mode: str, path: Path, p: int, chunksize: int) -> dict:
    cmd = [
        sys.executable,
        __file__,
        "--child",
        mode,
        "--path",
        str(path),
        "--p",
        str(p),
        "--chunksize",
        str(chunksize),
    ]
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    for line in out.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"{mode} fit failed:\n{out.stdout[-2000:]}\n{out.stderr[-4000:]}")


# -- many levels (in process) ---------------------------------------------------


def many_levels(reps: int) -> list[str]:
    import ordstats

    n, p = 100_000, 10
    rng = np.random.default_rng(7)
    X = rng.standard_normal((n, p))
    latent = X @ beta_of(p) + rng.logistic(size=n)
    lines = [
        "| K | thresholds | Hessian | median fit time (s) | ratio to K = 5 | iterations |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    base = None
    for K in (5, 1000, 10_000):
        cuts = np.quantile(latent, np.linspace(0, 1, K + 1)[1:-1])
        y = np.searchsorted(cuts, latent)
        model = ordstats.OrdinalModel(y, X, many_levels=True)
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            res = model.fit()
            res.bse  # noqa: B018 - standard errors are part of the fit
            times.append(time.perf_counter() - t0)
        med = statistics.median(times)
        base = base or med
        kind = type(res.covariance).__name__.replace("Covariance", "") or "dense"
        lines.append(
            f"| {K} | {K - 1} | {kind.lower() or 'dense'} | {med:.2f} | "
            f"{med / base:.2f} | {res.niter} |"
        )
    return lines


# -- report ---------------------------------------------------------------------


def rel_diff(a: dict, b: dict, key: str) -> float:
    x, y = np.asarray(a[key]), np.asarray(b[key])
    return float(np.max(np.abs(x - y) / np.abs(y)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", type=float, default=[1e6, 1e7])
    parser.add_argument("--p", type=int, default=20)
    parser.add_argument("--reps", type=int, default=3, help="repeats per fit (median)")
    parser.add_argument("--reps-large", type=int, default=1, help="repeats at n >= 1e7")
    parser.add_argument(
        "--memory-max",
        type=float,
        default=1e6,
        help="largest n fitted in memory (10^7 needs ~6 GB)",
    )
    parser.add_argument("--chunksize", type=int, default=CHUNKSIZE)
    parser.add_argument("--huge", type=float, default=0, help="rows of the large Parquet fit")
    parser.add_argument("--huge-p", type=int, default=20)
    parser.add_argument("--no-levels", action="store_true")
    parser.add_argument("--data-dir", default=str(ROOT / "bench" / "_data"))
    parser.add_argument("--child", choices=["memory", "chunked", "dask"])
    parser.add_argument("--path")
    args = parser.parse_args()
    if args.child:
        args.mode = args.child
        child(args)
        return
    data_dir = Path(args.data_dir)
    lines = [
        f"Machine: {os.cpu_count()} cores; chunksize {args.chunksize}; files of "
        f"{ROWS_PER_FILE} rows; medians of repeats; RSS = peak beyond the baseline.",
        "",
        "| n | p | path | repeats | median time (s) | time / chunked | peak RSS (MB) | "
        "passes | max rel. diff params | max rel. diff SE |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    sizes = [(int(n), args.p) for n in args.sizes]
    if args.huge:
        sizes.append((int(args.huge), args.huge_p))
    for n, p in sizes:
        t0 = time.perf_counter()
        path = ensure_parquet(data_dir, n, p)
        print(f"data n={n:.0e} p={p}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        modes = ["chunked"] if n == args.huge else ["chunked", "dask"]
        if n <= args.memory_max:
            modes.insert(0, "memory")
        reps = args.reps if n < 1e7 else args.reps_large
        results = {}
        for mode in modes:
            runs = [run_child(mode, path, p, args.chunksize) for _ in range(reps)]
            print(f"  {mode}: {[round(r['time'], 2) for r in runs]}", file=sys.stderr)
            best = runs[0]
            best["time"] = statistics.median(r["time"] for r in runs)
            best["peak_mb"] = statistics.median(r["peak_mb"] for r in runs)
            if mode == "memory":
                best["time_arrays"] = statistics.median(r["time_arrays"] for r in runs)
            results[mode] = best
        ref = results["chunked"]
        for mode, r in results.items():
            label = (
                mode
                if mode != "memory"
                else (f"memory (formula + fit; arrays: {r['time_arrays']:.2f} s)")
            )
            lines.append(
                f"| {n:.0e} | {p} | {label} | {reps} | {r['time']:.2f} | "
                f"{r['time'] / ref['time']:.2f} | {r['peak_mb']:.0f} | {r.get('passes', '-')} | "
                f"{rel_diff(r, ref, 'params'):.1e} | {rel_diff(r, ref, 'bse'):.1e} |"
            )
        save(data_dir, lines)  # partial results survive a later failure
    if not args.no_levels:
        lines += ["", "Many levels (in memory, n = 1e5, p = 10):", "", *many_levels(args.reps)]
    print(save(data_dir, lines))


def save(data_dir: Path, lines: list[str]) -> str:
    text = "\n".join(lines)
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "scale_results.md").write_text(text + "\n")
    return text


if __name__ == "__main__":
    main()
