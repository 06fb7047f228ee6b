"""One model, four engines: 10^7 rows x 20 from a Parquet directory (issue 25's table).

Run by hand from the repository root (never by the tests)::

    PYTHONPATH=. OPENBLAS_NUM_THREADS=1 python bench/bench_engines.py --n 1e7 \\
        --data-dir /tmp/ordstats-bench --repeats 3

The data are ``bench_scale.py``'s (Parquet files of 500,000 rows, row groups of
100,000, written once under ``--data-dir``; keep them out of git).  Each cell
runs in a fresh process:

- *floor*: one ``pyarrow.dataset`` scan of the model's columns in batches of
  100,000 rows (read and decode only), the least any pass can cost;
- *memory*: ``pd.read_parquet`` (timed apart), then ``from_formula(...).fit()``;
- *chunked*: ``from_formula(f, "dir", chunksize=100_000).fit()``; its passes
  evaluate chunks of 20,000 rows or more on a pool of threads (the ``threads`` option: every
  usable core by default, as the floor's pyarrow scan uses them; one BLAS
  thread each) and add them in the chunks' order;
- *dask*: a ``LocalCluster`` of 2 worker processes with one thread each,
  whose workers have imported ordstats and dask.dataframe (as the driver has;
  ``--dask-workers cold`` leaves that to the fit's first tasks),
  ``dd.read_parquet("dir")``, the same call;
- *spark*: a ``local[2]`` session (UI off, ``spark.driver.memory`` 2g,
  Python workers reused between tasks: Spark's default), whose Python
  workers have imported ordstats before the span, as the driver has: two of
  Spark's pool for RDD jobs and two of its pool for ``mapInPandas`` (tiny
  jobs of two tasks, repeated until two workers of each pool have; about
  1.5 s of CPU per worker; ``--spark-workers cold`` leaves that to the fit's
  first tasks),
  ``spark.read.parquet("dir")``, the same call.  Neither the data set nor
  any other rows pass through Spark before the span: the JVM's just-in-time
  compiler warms up during the fit's first pass, as in a user's first fit.

Seconds run from ``from_formula`` to the end of ``fit()`` (the level scan, the
summary and the Newton passes, standard errors included); passes are the
model's ``n_passes`` (scan and summary included), and in brackets those of
them that read the source (``n_reads``; the others read the chunks' arrays
kept by the first pass that builds them, ``ordstats.set_options(chunk_cache=...)``:
for this model's numeric design the level scan, so the chunked fit reads the
source once).  Memory is the peak resident
set size above the baseline taken before the fit (after the data were read in
memory; after the cluster or session started): of the driver's Python process,
and of the process with its children (Dask workers, Spark's JVM).  CPU seconds
are those of the same processes over the same span (on a shared machine they
measure the engines where wall seconds measure the load); the targets are
printed in both.
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
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # benchmark this checkout, not an installed ordstats
sys.path.insert(0, str(ROOT / "bench"))

from bench_scale import ensure_parquet, formula  # noqa: E402

CHUNKSIZE = 100_000
MODES = ("floor", "memory", "chunked", "dask", "spark")
#: What a cell's progress line shows besides its times.
SHOWN = ("retvals", "read", "warm_workers")


class Peak:
    """Peak RSS of this process alone and with its children, sampled every 20 ms."""

    def __init__(self) -> None:
        import psutil

        self.proc = psutil.Process()
        self.own = self.total = 0
        self.reset()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _sizes(self) -> tuple[int, int]:
        import psutil

        own = self.proc.memory_info().rss
        total = own
        for child in self.proc.children(recursive=True):
            try:
                total += child.memory_info().rss
            except psutil.Error:
                pass
        return own, total

    def _run(self) -> None:
        while not self._stop.wait(0.02):
            own, total = self._sizes()
            self.own, self.total = max(self.own, own), max(self.total, total)

    def reset(self) -> None:
        self.base_own, self.base_total = self._sizes()
        self.own, self.total = self.base_own, self.base_total
        self.base_cpu = self.cpu()

    def cpu(self) -> dict[str, float]:
        """CPU seconds so far: this process, and its children (Dask workers, Spark's JVM
        and Python workers) while they live."""
        import psutil

        own = self.proc.cpu_times()
        children = 0.0
        for child in self.proc.children(recursive=True):
            try:
                times = child.cpu_times()
            except psutil.Error:
                continue
            children += times.user + times.system
        return {"own": own.user + own.system, "children": children}

    def cpu_used(self) -> dict[str, float]:
        """CPU seconds since :meth:`reset` (children that ended meanwhile are not counted)."""
        now = self.cpu()
        return {k: now[k] - self.base_cpu[k] for k in now}

    def stop(self) -> tuple[float, float]:
        self._stop.set()
        self._thread.join()
        return (self.own - self.base_own) / 2**20, (self.total - self.base_total) / 2**20


def _floor(path: Path, p: int) -> dict[str, object]:
    import pyarrow.dataset as ds

    columns = ["y", *(f"x{j + 1}" for j in range(p))]
    t0 = time.perf_counter()
    rows = 0
    for batch in ds.dataset(str(path), format="parquet").to_batches(
        columns=columns, batch_size=CHUNKSIZE
    ):
        rows += batch.num_rows
    return {"time": time.perf_counter() - t0, "passes": 1, "rows": rows}


def warm_spark_workers(spark, workers: int = 2, tries: int = 10) -> int:
    """Import ordstats in ``workers`` Python workers of each of ``spark``'s two pools.

    Spark keeps one pool of Python workers for RDD jobs and another for
    ``mapInPandas`` (a fit's first pass runs both: ``mapInPandas``, then an RDD
    map of its results; the passes over the partition cache are RDD jobs),
    and reuses the workers of a pool between tasks (``spark.python.worker.reuse``,
    on by default): jobs of one task per core, repeated until ``workers``
    distinct workers of each pool have imported ordstats, leave the fit's
    tasks no import to make, as the Dask cell's workers have none.  Returns
    the number of workers warmed.
    """

    # nested, so that they travel by value (the workers need not import this file)
    def import_ordstats(_: object) -> list[int]:
        import ordstats  # noqa: F401

        return [os.getpid()]

    def import_ordstats_arrow(batches):
        import pandas as pd

        import ordstats  # noqa: F401

        for _ in batches:
            pass
        yield pd.DataFrame({"pid": [os.getpid()]})

    context = spark.sparkContext
    rdd_pool: set[int] = set()
    arrow_pool: set[int] = set()
    for _ in range(tries):
        if len(rdd_pool) < workers:
            ids = context.parallelize(range(workers), workers)
            rdd_pool.update(ids.mapPartitions(import_ordstats).collect())
        if len(arrow_pool) < workers:
            rows = spark.range(0, workers, 1, workers).mapInPandas(
                import_ordstats_arrow, "pid long"
            )
            arrow_pool.update(row[0] for row in rows.collect())
        if min(len(rdd_pool), len(arrow_pool)) >= workers:
            break
    return len(rdd_pool) + len(arrow_pool)


def child(
    mode: str,
    path: Path,
    p: int,
    cache: bool = True,
    threads: int | None = None,
    warm: bool = True,
    spark_warm: bool = True,
) -> dict[str, object]:
    import ordstats

    warnings.simplefilter("ignore")
    if not cache:  # every pass reads the source, as before the chunk cache
        ordstats.set_options(chunk_cache=False)
    if threads is not None:  # the chunked passes' pool (and every pool ordstats starts)
        ordstats.set_options(threads=threads)
    meter = Peak()
    f = formula(p)
    out: dict[str, object] = {}
    cleanup = []
    if mode == "floor":
        out = _floor(path, p)
        out["cpu"] = meter.cpu_used()
        out["peak_own"], out["peak_total"] = meter.stop()
        return out
    if mode == "memory":
        import pandas as pd

        t0 = time.perf_counter()
        data: object = pd.read_parquet(path)
        out["read"] = time.perf_counter() - t0
    elif mode == "chunked":
        data = str(path)
    elif mode == "dask":
        import dask.dataframe as dd
        from dask.distributed import Client, LocalCluster

        cluster = LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        )
        client = Client(cluster)
        cleanup += [client.close, cluster.close]
        if warm:  # the workers import ordstats before the span, as this process has
            client.run(exec, "import ordstats, dask.dataframe")
        data = dd.read_parquet(str(path))
    else:
        from ordstats.data.spark import local_session

        os.environ["PYTHONPATH"] = os.pathsep.join(
            q for q in (str(ROOT), os.environ.get("PYTHONPATH", "")) if q
        )
        spark = local_session(cores=2, memory="2g", name="ordstats-bench-engines")
        cleanup.append(spark.stop)
        if spark_warm:  # the Python workers import ordstats before the span
            out["warm_workers"] = warm_spark_workers(spark)
        data = spark.read.parquet(str(path))
    time.sleep(1.0)
    meter.reset()
    t0 = time.perf_counter()
    kwargs = {"chunksize": CHUNKSIZE} if mode == "chunked" else {}
    model = ordstats.OrdinalModel.from_formula(f, data, **kwargs)
    res = model.fit(disp=False)
    out["time"] = time.perf_counter() - t0
    out["cpu"] = meter.cpu_used()
    out["peak_own"], out["peak_total"] = meter.stop()
    out["passes"] = getattr(model.evaluator, "n_passes", None)
    # passes that read the source (the others read the chunk cache, ordstats.data.spill)
    out["reads"] = getattr(model.evaluator, "n_reads", out["passes"])
    out["retvals"] = {k: v for k, v in res.mle_retvals.items() if k != "message"}
    out["params"] = res.params.tolist()
    out["bse"] = res.bse.tolist()
    out["llf"] = res.llf
    for close in cleanup:
        close()
    return out


def run_child(
    mode: str,
    path: Path,
    p: int,
    cache: str = "on",
    threads: int | None = None,
    workers: str = "warm",
    spark_workers: str = "warm",
) -> dict:
    cmd = [sys.executable, __file__, "--child", mode, "--path", str(path), "--p", str(p)]
    cmd += ["--chunk-cache", cache, "--dask-workers", workers]
    cmd += ["--spark-workers", spark_workers]
    if threads is not None:
        cmd += ["--threads", str(threads)]
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"{mode} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=float, default=1e7)
    parser.add_argument("--p", type=int, default=20)
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/ordstats-bench"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--child", choices=MODES)
    parser.add_argument("--path", type=Path)
    parser.add_argument(
        "--chunk-cache",
        choices=("on", "off"),
        default="on",
        help="off: every pass reads the source (ordstats.set_options(chunk_cache=False))",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="ordstats.set_options(threads=...) in every cell (1: chunked passes on one thread)",
    )
    parser.add_argument(
        "--dask-workers",
        choices=("warm", "cold"),
        default="warm",
        help="warm: the Dask workers import ordstats and dask.dataframe before the timed span "
        "(as the driver has); cold: the fit's first tasks import them (about 1.6 s of CPU "
        "per worker)",
    )
    parser.add_argument(
        "--spark-workers",
        choices=("warm", "cold"),
        default="warm",
        help="warm: Spark's Python workers (two for RDD jobs, two for mapInPandas) import "
        "ordstats before the timed span (as the driver has); cold: the fit's first tasks "
        "import it (about 1.5 s of CPU per worker)",
    )
    args = parser.parse_args()
    if args.child:
        result = child(
            args.child,
            args.path,
            args.p,
            args.chunk_cache == "on",
            args.threads,
            args.dask_workers == "warm",
            args.spark_workers == "warm",
        )
        print("RESULT " + json.dumps(result))
        return
    n = int(args.n)
    path = ensure_parquet(args.data_dir, n, args.p)
    modes = args.modes.split(",")
    runs: dict[str, list[dict]] = {m: [] for m in modes}
    for repeat in range(args.repeats):  # interleaved, so that load changes hit every engine
        for mode in modes:
            load = os.getloadavg()[0]
            result = run_child(
                mode,
                path,
                args.p,
                args.chunk_cache,
                args.threads,
                args.dask_workers,
                args.spark_workers,
            )
            result["load"] = load
            runs[mode].append(result)
            print(
                f"# repeat {repeat + 1} {mode}: {result['time']:.1f} s, "
                f"CPU {_cpu(result):.1f} s, passes "
                f"{result['passes']} ({result.get('reads')} reading the source), load {load:.1f}, "
                f"{ {k: v for k, v in result.items() if k in SHOWN} }",
                flush=True,
            )
    report(n, runs)


def _cpu(result: dict) -> float:
    """CPU seconds of a cell: the driver and its children (Dask workers, Spark's JVM)."""
    return float(sum(result["cpu"].values()))


def report(n: int, runs: dict[str, list[dict]]) -> None:
    med = {m: statistics.median(r["time"] for r in rs) for m, rs in runs.items()}
    cpu = {m: statistics.median(_cpu(r) for r in rs) for m, rs in runs.items()}
    loads = [r["load"] for rs in runs.values() for r in rs]
    print(f"\nn = {n:.0e}, load average at the starts {min(loads):.1f}-{max(loads):.1f}")
    print(
        "| engine | passes (source reads) | seconds (median) | s/pass | / read floor | CPU s | "
        "CPU s/pass | CPU / floor's | peak driver MB | peak with children MB | "
        "max rel. diff params vs memory |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    ref = runs.get("memory", [{}])[0].get("params")
    floor, floor_cpu = med.get("floor"), cpu.get("floor")
    for mode, rs in runs.items():
        passes = rs[0]["passes"]
        reads = rs[0].get("reads", passes)
        per = med[mode] / passes if passes else float("nan")
        cpu_per = cpu[mode] / passes if passes else float("nan")
        own = statistics.median(r["peak_own"] for r in rs)
        total = statistics.median(r["peak_total"] for r in rs)
        diff = "-"
        if ref is not None and "params" in rs[0]:
            diff = f"{max(abs(a / b - 1) for a, b in zip(rs[0]['params'], ref, strict=True)):.1e}"
        ratio = f"{med[mode] / floor:.2f}" if floor else "-"
        cpu_ratio = f"{cpu[mode] / floor_cpu:.2f}" if floor_cpu else "-"
        print(
            f"| {mode} | {passes} ({reads}) | {med[mode]:.1f} | {per:.2f} | {ratio} | "
            f"{cpu[mode]:.1f} | {cpu_per:.2f} | {cpu_ratio} | {own:.0f} | {total:.0f} | {diff} |"
        )
    if "chunked" in med:
        passes = runs["chunked"][0]["passes"]
        if floor:
            print(
                f"chunked total / floor: {med['chunked'] / floor:.2f} wall, "
                f"{cpu['chunked'] / floor_cpu:.2f} CPU (target <= 4)"
            )
        for mode in ("dask", "spark"):
            if mode in med:
                own_passes = runs[mode][0]["passes"]
                wall = (med[mode] / own_passes) / (med["chunked"] / passes)
                used = (cpu[mode] / own_passes) / (cpu["chunked"] / passes)
                print(
                    f"{mode} per pass / chunked per pass: {wall:.2f} wall, {used:.2f} CPU "
                    "(target <= 2)"
                )


if __name__ == "__main__":
    main()
