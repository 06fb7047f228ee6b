"""Spark benchmark: exact Newton vs averaged parallel SGD, and Spark ML LogisticRegression.

Run by hand (never by the test suite), from the repository root::

    python bench/bench_spark.py                    # 1e6 rows x 20, local[2]
    python bench/bench_spark.py --sizes 1e6,1e7    # 1e7 takes long on 2 cores

For each size the same synthetic data (``bench_fit.make_data``: 20 AR(1)
predictors, K = 5 levels, logit) are written to a Parquet directory and read
by one local Spark session (``local[2]``, UI off, 1 GB driver), then fitted

(a) by ordstats on the Spark DataFrame (exact Newton, one Spark job per pass);
(b) by averaged parallel SGD (``bench/parallel_sgd.py``): every partition runs
    SGD from the current average, the driver averages, one pass per round;

and compared with the maximum-likelihood estimate of the same rows (ordstats in
memory; the estimate every exact method reaches).  For K = 2 the time per pass of
(a) is set against the time per iteration of
``pyspark.ml.classification.LogisticRegression`` (L-BFGS over ``treeAggregate``d
gradients), both on the same cached DataFrame, in two like-for-like readings:

- *over all passes*: ordstats' whole fit over its passes (the level scan
  included), against a whole ``maxIter=11`` fit over its 11 iterations (its
  setup, its pass for the label and feature statistics and its first
  iteration included);
- *after the first*: ordstats' passes after the level scan (which read the
  partition cache the scan spilled), against the difference of a
  ``maxIter=11`` and a ``maxIter=1`` fit over their 10 iterations (the setup,
  the statistics pass and the first iteration cancel).

Fits with ``tol=0`` run exactly ``maxIter`` iterations
(``summary.totalIterations``); each time is the median of 3 pairs after an
untimed warm-up fit.  LogisticRegression persists its input itself only when
the input is not cached; the bench caches the assembled DataFrame first, so
no caching falls inside its timed fits, and ordstats fits the same cached rows.

Both methods are scored after every pass by the same oracle, computed in memory
and untimed (the methods themselves do not have it): the relative gap of the
log-likelihood of their current estimate to the MLE's, and the largest absolute
difference of its coefficients (thresholds and slopes) from the MLE.  For SGD
the estimate after pass k is the average after k rounds.  For Newton the
estimate after pass 1 (the level scan) is the warm start (the fit of the
scan's subsample), and after pass k > 1 the point Newton evaluates next (the
final estimates after the last pass).  The comparison table prints, for each
method, the passes it needs to get (a) the log-likelihood within 1e-3
relative, (b) every coefficient within 1e-3, and (c) the log-likelihood within
1e-8 relative ("-" when not reached in the passes made).

Timing: wall seconds and the CPU seconds of the driver and its children (the
JVM, its Python workers) of every pass, from ``SparkSource.map_reduce`` and
``SparkSource.arrays_pass``; "after the first" is the mean over the passes
after the level scan, which on a local session read the partition cache that
the scan spilled (the summary pass reads the spilled chunks and keeps their
likelihood arrays, the Newton passes read those; ``spark.ordstats.cache``:
the row "no partition cache" sets it to false).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import psutil

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from bench_fit import make_data  # noqa: E402
from parallel_sgd import STEP, averaged_pass, start_params  # noqa: E402

import ordstats  # noqa: E402

ROWS_PER_FILE = 500_000


def session(memory: str):
    """The local Spark session, or exit with what to install."""
    from ordstats.data.spark import local_session
    from ordstats.errors import DataError

    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(HERE.parent), str(HERE), os.environ.get("PYTHONPATH", "")) if p
    )
    try:
        return local_session(cores=2, memory=memory, name="ordstats-bench")
    except DataError as exc:
        sys.exit(str(exc))


def write_parquet(X: np.ndarray, y: np.ndarray, directory: Path) -> list[str]:
    """The rows as Parquet files of ROWS_PER_FILE rows; returns the feature names."""
    names = [f"x{j + 1}" for j in range(X.shape[1])]
    directory.mkdir(parents=True, exist_ok=True)
    for k, start in enumerate(range(0, len(y), ROWS_PER_FILE)):
        part = pd.DataFrame(X[start : start + ROWS_PER_FILE], columns=names)
        part.insert(0, "y", y[start : start + ROWS_PER_FILE])
        part.to_parquet(directory / f"part-{k:03d}.parquet", index=False)
    return names


def mle(X: np.ndarray, y: np.ndarray):
    """The in-memory fit (the maximum-likelihood reference)."""
    t = time.perf_counter()
    res = ordstats.OrdinalModel(y, X).fit(disp=False)
    return res, time.perf_counter() - t


#: The oracle's thresholds: (a) and (b) of the comparison, and the exact fit's (c).
LOOSE, EXACT = 1e-3, 1e-8


def cpu_seconds() -> float:
    """CPU seconds of this process and its children (Spark's JVM and its Python workers)."""
    proc = psutil.Process()
    times = proc.cpu_times()
    total = times.user + times.system
    for child in proc.children(recursive=True):
        try:
            times = child.cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system
    return total


class PassClock:
    """Wall and CPU seconds of every pass while active.

    A pass is a ``SparkSource.map_reduce`` call (through the DataFrame or the
    spilled chunks) or a ``SparkSource.arrays_pass`` call (over the arrays
    the summary pass kept).
    """

    METHODS = ("map_reduce", "arrays_pass")

    def __init__(self) -> None:
        self.passes: list[tuple[str, float, float]] = []
        self._originals: dict[str, object] = {}

    def __enter__(self) -> PassClock:
        from ordstats.data import spark

        for method in self.METHODS:
            original = getattr(spark.SparkSource, method, None)
            if original is not None:
                self._originals[method] = original
                setattr(spark.SparkSource, method, self._timed(original))
        return self

    def _timed(self, original):
        passes = self.passes

        def timed(source, func, *args, **kwargs):
            cpu, wall = cpu_seconds(), time.perf_counter()
            try:
                return original(source, func, *args, **kwargs)
            finally:
                name = getattr(func, "__name__", None) or getattr(func.func, "__name__", "?")
                passes.append((name, time.perf_counter() - wall, cpu_seconds() - cpu))

        return timed

    def __exit__(self, *exc: object) -> None:
        from ordstats.data import spark

        for method, original in self._originals.items():
            setattr(spark.SparkSource, method, original)

    def summary(self) -> dict[str, float]:
        walls = [w for _, w, _ in self.passes]
        cpus = [c for _, _, c in self.passes]
        later = max(len(walls) - 1, 1)
        return {
            "first_pass_s": walls[0],
            "first_pass_cpu": cpus[0],
            "after_first_s": sum(walls[1:]) / later,
            "after_first_cpu": sum(cpus[1:]) / later,
        }


def scores(reference, params: np.ndarray) -> tuple[float, float]:
    """The oracle: relative log-likelihood gap to the MLE and max |coefficient error|."""
    gap = abs(reference.model.loglike(params) - reference.llf) / abs(reference.llf)
    return float(gap), float(np.max(np.abs(params - reference.params.to_numpy())))


def passes_to(history: list[tuple[float, float]], which: int, threshold: float) -> int | None:
    """The first pass after which score ``which`` (0: gap, 1: coef error) is within threshold."""
    for k, score in enumerate(history, start=1):
        if score[which] <= threshold:
            return k
    return None


def reached(history: list[tuple[float, float]]) -> dict[str, int | None]:
    return {
        "loglik_1e-3": passes_to(history, 0, LOOSE),
        "coef_1e-3": passes_to(history, 1, LOOSE),
        "loglik_1e-8": passes_to(history, 0, EXACT),
    }


def newton_on_spark(frame, formula: str, reference, *, history: bool = True) -> dict:
    """ordstats' fit of ``frame``: time, passes, per-pass costs and the estimate after each pass."""
    model_passes: list[tuple[int, np.ndarray]] = []
    with PassClock() as clock:
        cpu, t = cpu_seconds(), time.perf_counter()
        model = ordstats.OrdinalModel.from_formula(formula, frame)
        evaluator = model.evaluator
        evaluate = evaluator.evaluate

        def recorded(params, **kw):  # the point Newton evaluates, with the passes made so far
            model_passes.append((evaluator.n_passes, np.array(params, dtype=float)))
            return evaluate(params, **kw)

        evaluator.evaluate = recorded
        res = model.fit(disp=False)
        seconds, cpu = time.perf_counter() - t, cpu_seconds() - cpu
    passes = evaluator.n_passes
    out = {
        "seconds": seconds,
        "cpu": cpu,
        "passes": passes,
        "newton_passes": res.mle_retvals["passes"],
        "last_step_predicted": res.mle_retvals["last_step_predicted"],
        "per_pass": seconds / passes,
        "gap": abs(res.llf - reference.llf) / abs(reference.llf),
        "coef": float(np.max(np.abs(res.params.to_numpy() - reference.params.to_numpy()))),
        "pass_costs": clock.passes,
        **clock.summary(),
    }
    if history:
        estimates = newton_estimates(evaluator, model_passes, res.params.to_numpy(), passes)
        out["history"] = [scores(reference, x) for x in estimates]
        out["reached"] = reached(out["history"])
    return out


def newton_estimates(evaluator, evaluated, final: np.ndarray, passes: int) -> list[np.ndarray]:
    """Newton's estimate after each pass: the warm start after the scan, then the next point.

    ``evaluated`` holds (passes made before the call, point) of every
    evaluation; the last point evaluated with ``k`` passes made is what Newton
    had after pass ``k`` (the warm start's evaluation made no pass of its own:
    the summary pass computed it).  After the last pass: the final estimates.
    """
    after: dict[int, np.ndarray] = {}
    first = evaluator.first_evaluation
    if first is not None:
        after[1] = np.asarray(first[0].params, dtype=float)
    for made, point in evaluated:
        after[made] = point
    after[passes] = final
    out, current = [], None
    for k in range(1, passes + 1):
        current = after.get(k, current)
        out.append(current if current is not None else np.full_like(final, np.nan))
    return out


def warm_up(frame, formula: str) -> None:
    """Untimed: ordstats imported in the Python workers, a fit of 2000 rows, a pass over every row.

    Spark keeps two pools of Python workers (RDD jobs, ``mapInPandas``) and a
    fit uses both; ``bench_engines.warm_spark_workers`` imports ordstats in two
    workers of each (the 2000-row fit, on one partition, reached one worker of
    each, so the first fit timed paid about 3 s of CPU for the other two
    imports).  The fit and the pass (rows to Arrow batches to pandas, counted)
    warm the JVM's just-in-time compiler: the first full-size job of a session
    costs about twice the CPU of the same job later, so without it the first
    fit timed (with the partition cache) paid that for the fit after it
    (without).
    """
    from bench_engines import warm_spark_workers

    warm_spark_workers(frame.sparkSession)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ordstats.OrdinalModel.from_formula(formula, frame.limit(2000)).fit(disp=False)

    def count(batches):
        yield pd.DataFrame({"rows": [sum(len(batch) for batch in batches)]})

    frame.mapInPandas(count, "rows long").collect()


def sgd_on_spark(frame, names, reference, counts, max_passes: int, step: float):
    """``max_passes`` passes of averaged SGD, scored after each (the oracle, untimed)."""
    params = start_params(counts, len(names))
    n_levels = len(counts)
    seconds, cpu, history = 0.0, 0.0, []
    for k in range(1, max_passes + 1):
        c, t = cpu_seconds(), time.perf_counter()
        params = averaged_pass(frame, params, n_levels, names, step / np.sqrt(k), seed=k)
        seconds, cpu = seconds + time.perf_counter() - t, cpu + cpu_seconds() - c
        history.append(scores(reference, params))
    return {
        "seconds": seconds,
        "cpu": cpu,
        "passes": len(history),
        "per_pass": seconds / len(history),
        "gap": history[-1][0],
        "coef": history[-1][1],
        "history": history,
        "reached": reached(history),
    }


def logistic_regression_per_iteration(frame, names, repeats: int = 3) -> dict[str, float]:
    """Seconds per iteration of Spark ML's LogisticRegression on ``frame`` (cached).

    Fits with ``tol=0`` run exactly ``maxIter`` L-BFGS iterations (checked with
    ``summary.totalIterations``); the per-iteration time is the difference of a
    ``maxIter=11`` and a ``maxIter=1`` fit (the setup, the first pass and the
    driver's work cancel) over their difference of iterations, the median of
    ``repeats`` pairs run after an untimed warm-up fit.
    """
    from pyspark.ml.classification import LogisticRegression
    from pyspark.ml.feature import VectorAssembler

    data = VectorAssembler(inputCols=names, outputCol="features").transform(frame).cache()
    data.count()

    def timed(iters: int) -> tuple[float, float, int]:
        lr = LogisticRegression(
            featuresCol="features", labelCol="y", maxIter=iters, tol=0.0, regParam=0.0
        )
        cpu, t = cpu_seconds(), time.perf_counter()
        fit = lr.fit(data)
        return time.perf_counter() - t, cpu_seconds() - cpu, fit.summary.totalIterations

    timed(2)  # untimed warm-up: the first fit pays for Spark ML's first use
    per, whole, per_cpu, whole_cpu, pairs = [], [], [], [], []
    for _ in range(repeats):
        (t1, c1, i1), (t11, c11, i11) = timed(1), timed(11)
        pairs.append((t1, i1, t11, i11))
        per.append((t11 - t1) / (i11 - i1) if i11 > i1 else float("nan"))
        per_cpu.append((c11 - c1) / (i11 - i1) if i11 > i1 else float("nan"))
        whole.append(t11 / i11 if i11 else float("nan"))
        whole_cpu.append(c11 / i11 if i11 else float("nan"))
    data.unpersist()
    return {
        "per_iteration": float(np.median(per)),
        "per_iteration_whole_fit": float(np.median(whole)),
        "cpu_per_iteration": float(np.median(per_cpu)),
        "cpu_per_iteration_whole_fit": float(np.median(whole_cpu)),
        "per_iteration_all": per,
        "fits": pairs,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1e6", help="numbers of rows, comma-separated")
    parser.add_argument("--p", type=int, default=20)
    parser.add_argument("--levels", type=int, default=5)
    parser.add_argument("--sgd-passes", type=int, default=10, help="most SGD passes")
    parser.add_argument("--sgd-step", type=float, default=STEP)
    parser.add_argument("--memory", default="2g", help="spark.driver.memory")
    parser.add_argument("--no-lr", action="store_true", help="skip the K = 2 comparison")
    parser.add_argument(
        "--no-uncached", action="store_true", help="skip the fit without the partition cache"
    )
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore", FutureWarning)  # pyspark on pandas 3
    spark = session(args.memory)
    rows = []
    try:
        for n in (int(float(s)) for s in args.sizes.split(",")):
            data = make_data(n, args.p, args.levels)
            with tempfile.TemporaryDirectory(prefix="ordstats-bench-spark-") as tmp:
                names = write_parquet(data.X, data.y, Path(tmp) / "ordinal")
                formula = "y ~ " + " + ".join(names)
                reference, mem_seconds = mle(data.X, data.y)
                print(f"n = {n:.0e}: in-memory MLE {mem_seconds:.1f} s", flush=True)
                frame = spark.read.parquet(str(Path(tmp) / "ordinal"))
                print(f"  {frame.rdd.getNumPartitions()} partitions", flush=True)
                warm_up(frame, formula)
                newton = newton_on_spark(frame, formula, reference)
                print(f"  ordstats Newton: {brief(newton)}", flush=True)
                uncached = None
                if not args.no_uncached:
                    spark.conf.set("spark.ordstats.cache", "false")
                    try:
                        uncached = newton_on_spark(frame, formula, reference, history=False)
                    finally:
                        spark.conf.unset("spark.ordstats.cache")
                    print(f"  ordstats Newton, no partition cache: {brief(uncached)}", flush=True)
                counts = np.bincount(data.y, minlength=args.levels).astype(float)
                sgd = sgd_on_spark(frame, names, reference, counts, args.sgd_passes, args.sgd_step)
                print(f"  averaged SGD: {brief(sgd)}", flush=True)
                lr_row = None
                if not args.no_lr:
                    binary = (data.y >= args.levels // 2).astype(np.int64)
                    write_parquet(data.X, binary, Path(tmp) / "binary")
                    # both methods read the same cached rows (Spark ML caches its
                    # input itself when it is not cached)
                    frame2 = spark.read.parquet(str(Path(tmp) / "binary")).cache()
                    frame2.count()
                    ref2, _ = mle(data.X, binary)
                    newton2 = newton_on_spark(frame2, formula, ref2, history=False)
                    lr = logistic_regression_per_iteration(frame2, names)
                    frame2.unpersist()
                    lr_row = (newton2, lr)
                    print(f"  K=2: ordstats {brief(newton2)}, Spark ML LR {lr}", flush=True)
                rows.append((n, newton, uncached, sgd, lr_row))
    finally:
        spark.stop()
    report(rows)


def brief(result: dict) -> dict:
    """A result without its per-pass lists (for the progress lines)."""
    return {k: v for k, v in result.items() if k not in ("history", "pass_costs")}


def report(rows) -> None:
    print()
    print(
        "| rows | method | passes | seconds | s/pass | first pass s (CPU) "
        "| after the first: s/pass (CPU) | loglik gap (rel.) | max abs coef error |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for n, newton, uncached, sgd, _ in rows:
        fits = [("ordstats exact Newton", newton)]
        if uncached is not None:
            fits.append(("ordstats exact Newton, no partition cache", uncached))
        for label, fit in fits:
            print(
                f"| {n:.0e} | {label} | {fit['passes']} | {fit['seconds']:.1f} "
                f"| {fit['per_pass']:.2f} "
                f"| {fit['first_pass_s']:.2f} ({fit['first_pass_cpu']:.2f}) "
                f"| {fit['after_first_s']:.2f} ({fit['after_first_cpu']:.2f}) "
                f"| {fit['gap']:.1e} | {fit['coef']:.1e} |"
            )
        print(
            f"| {n:.0e} | averaged parallel SGD | {sgd['passes']} | {sgd['seconds']:.1f} "
            f"| {sgd['per_pass']:.2f} | - | - | {sgd['gap']:.1e} | {sgd['coef']:.1e} |"
        )
    print()
    print(
        "Passes needed (the estimate after each pass scored against the MLE; '-': not "
        "within the passes made)"
    )
    print()
    print(
        "| rows | method | passes made | loglik within 1e-3 (rel.) "
        "| max abs coef error within 1e-3 | loglik within 1e-8 (rel.) |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    for n, newton, _, sgd, _ in rows:
        for label, fit in (("ordstats exact Newton", newton), ("averaged parallel SGD", sgd)):
            got = fit["reached"]
            shown = [str(got[key]) if got[key] is not None else "-" for key in got]
            print(f"| {n:.0e} | {label} | {fit['passes']} | " + " | ".join(shown) + " |")
    for n, newton, _, sgd, _ in rows:
        for label, fit in (("Newton", newton), ("SGD", sgd)):
            print(
                f"n = {n:.0e}, {label} after each pass: loglik gap "
                + ", ".join(f"{g:.1e}" for g, _ in fit["history"])
                + "; max abs coef error "
                + ", ".join(f"{c:.1e}" for _, c in fit["history"])
            )
    print()
    for n, _, _, _, lr_row in rows:
        if lr_row is not None:
            report_k2(n, *lr_row)


def report_k2(n: int, newton2: dict, lr: dict) -> None:
    """ordstats' seconds per pass against Spark ML's per iteration, in both readings."""
    target = "ordstats per pass <= 2 x LogisticRegression per iteration"
    print(f"n = {n:.0e}, K = 2 (target: {target}); wall s, CPU s in parentheses")
    print()
    print("| reading | ordstats s/pass | LogisticRegression s/iteration | ratio wall (CPU) |")
    print("| --- | --- | --- | --- |")
    passes = newton2["passes"]
    readings = (
        (
            f"over all passes (ordstats {passes} passes, scan included; "
            "LR a whole maxIter=11 fit / 11)",
            (newton2["per_pass"], newton2["cpu"] / passes),
            (lr["per_iteration_whole_fit"], lr["cpu_per_iteration_whole_fit"]),
        ),
        (
            "after the first (ordstats passes after the scan; LR (maxIter=11 - maxIter=1) / 10)",
            (newton2["after_first_s"], newton2["after_first_cpu"]),
            (lr["per_iteration"], lr["cpu_per_iteration"]),
        ),
    )
    for label, ours, theirs in readings:
        # a difference of two timed fits within the noise of the load is not a time
        ratios = [
            f"{a / b:.2f}" if b > 0 else "not measurable" for a, b in zip(ours, theirs, strict=True)
        ]
        print(
            f"| {label} | {ours[0]:.3f} ({ours[1]:.3f}) | {theirs[0]:.3f} ({theirs[1]:.3f}) "
            f"| {ratios[0]} ({ratios[1]}) |"
        )


if __name__ == "__main__":
    main()
