"""Wall and CPU seconds per pass of Spark fits (driver, JVM, Python workers), for A/B runs.

Fits the bench model (``bench_engines.formula``) to a Parquet directory on a
``local[2]`` session whose Python workers have imported ordstats, ``--fits``
times in one session, and prints each pass of each fit: its wall seconds and
the CPU seconds of this process, Spark's JVM and the Python workers (psutil),
then the fit's totals.  The first fit pays the session's first-use costs (as a
``bench_engines.py`` cell does); later fits do not.  Run each checkout with its
own ``PYTHONPATH`` and alternate them::

    PYTHONPATH=. OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 PYSPARK_PYTHON=$(which python) \\
        python bench/spark_passes.py /tmp/ordstats-bench/n1e06_p20 --fits 2
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
ROOT = Path(__file__).resolve().parents[1]

from bench_engines import formula, warm_spark_workers  # noqa: E402


def cpu_seconds(proc: psutil.Process) -> dict[str, float]:
    """CPU seconds so far of this process, its JVM and the Python workers."""
    out = {"driver": 0.0, "jvm": 0.0, "py": 0.0}
    times = proc.cpu_times()
    out["driver"] = times.user + times.system
    for child in proc.children(recursive=True):
        try:
            times, name = child.cpu_times(), " ".join(child.cmdline()[:3])
        except psutil.Error:
            continue
        out["jvm" if "java" in name else "py"] += times.user + times.system
    return out


def timed(cls: type, name: str, log: list, proc: psutil.Process) -> None:
    """Record wall and CPU seconds of every call of ``cls.name`` in ``log``."""
    method = getattr(cls, name)

    def wrapper(self, *args, **kwargs):
        before, start = cpu_seconds(proc), time.perf_counter()
        try:
            return method(self, *args, **kwargs)
        finally:
            after = cpu_seconds(proc)
            used = {k: round(after[k] - before[k], 2) for k in before}
            log.append((name, time.perf_counter() - start, used))

    setattr(cls, name, wrapper)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", help="a Parquet directory written by bench_engines.py")
    parser.add_argument("--fits", type=int, default=2)
    parser.add_argument("--p", type=int, default=20)
    args = parser.parse_args()
    import ordstats
    from ordstats.data import spark as spark_data

    warnings.simplefilter("ignore")
    os.environ["PYTHONPATH"] = os.pathsep.join(
        q for q in (os.environ.get("PYTHONPATH", ""), str(ROOT)) if q
    )
    spark = spark_data.local_session(cores=2, memory="2g", name="ordstats-spark-passes")
    warm_spark_workers(spark)
    proc, log = psutil.Process(), []
    for name in ("first_chunk", "map_reduce", "arrays_pass"):
        timed(spark_data.SparkSource, name, log, proc)
    data = spark.read.parquet(args.path)
    for _ in range(args.fits):
        log.clear()
        time.sleep(1.0)
        before, start = cpu_seconds(proc), time.perf_counter()
        model = ordstats.OrdinalModel.from_formula(formula(args.p), data)
        res = model.fit(disp=False)
        wall, after = time.perf_counter() - start, cpu_seconds(proc)
        for name, seconds, used in log:
            print(f"  {name:12s} {seconds:6.2f} s  CPU {used}")
        used = {k: round(after[k] - before[k], 2) for k in before}
        print(
            f"fit {wall:.2f} s  CPU {used} = {sum(used.values()):.2f} s  "
            f"passes {model.evaluator.n_passes}  llf {res.llf!r}",
            flush=True,
        )
    spark.stop()


if __name__ == "__main__":
    main()
