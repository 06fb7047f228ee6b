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
gradients), both on the same cached DataFrame: fits with ``tol=0`` run exactly
``maxIter`` iterations (``summary.totalIterations``), and the time per
iteration is that of a ``maxIter=11`` fit minus a ``maxIter=1`` fit (setup
cancels) over 10, the median of 3 pairs after an untimed warm-up.

The log-likelihood of each SGD average is computed in memory, untimed (an
oracle the method itself does not have).
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


def newton_on_spark(frame, formula: str, reference) -> dict[str, float]:
    t = time.perf_counter()
    res = ordstats.OrdinalModel.from_formula(formula, frame).fit(disp=False)
    seconds = time.perf_counter() - t
    passes = res.model.evaluator.n_passes
    return {
        "seconds": seconds,
        "passes": passes,
        "newton_passes": res.mle_retvals["passes"],
        "last_step_predicted": res.mle_retvals["last_step_predicted"],
        "per_pass": seconds / passes,
        "gap": abs(res.llf - reference.llf) / abs(reference.llf),
        "coef": float(np.max(np.abs(res.params.to_numpy() - reference.params.to_numpy()))),
    }


def sgd_on_spark(frame, names, reference, counts, max_passes: int, step: float):
    """Passes of averaged SGD until the loglik is within 1e-3 relative of the MLE."""
    model = reference.model
    params = start_params(counts, len(names))
    n_levels = len(counts)
    seconds, reached, history = 0.0, None, []
    for k in range(1, max_passes + 1):
        t = time.perf_counter()
        params = averaged_pass(frame, params, n_levels, names, step / np.sqrt(k), seed=k)
        seconds += time.perf_counter() - t
        gap = abs(model.loglike(params) - reference.llf) / abs(reference.llf)
        history.append(gap)
        if reached is None and gap <= 1e-3:
            reached = k
        if gap <= 1e-8:
            break
    return {
        "seconds": seconds,
        "passes": len(history),
        "per_pass": seconds / len(history),
        "gap": history[-1],
        "coef": float(np.max(np.abs(params - reference.params.to_numpy()))),
        "passes_to_1e-3": reached,
        "history": history,
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

    def timed(iters: int) -> tuple[float, int]:
        lr = LogisticRegression(
            featuresCol="features", labelCol="y", maxIter=iters, tol=0.0, regParam=0.0
        )
        t = time.perf_counter()
        fit = lr.fit(data)
        return time.perf_counter() - t, fit.summary.totalIterations

    timed(2)  # untimed warm-up: the first fit pays for Spark ML's first use
    per, pairs = [], []
    for _ in range(repeats):
        (t1, i1), (t11, i11) = timed(1), timed(11)
        pairs.append((t1, i1, t11, i11))
        per.append((t11 - t1) / (i11 - i1) if i11 > i1 else float("nan"))
    data.unpersist()
    return {
        "per_iteration": float(np.median(per)),
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
    parser.add_argument("--memory", default="1g", help="spark.driver.memory")
    parser.add_argument("--no-lr", action="store_true", help="skip the K = 2 comparison")
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
                newton = newton_on_spark(frame, formula, reference)
                print(f"  ordstats Newton: {newton}", flush=True)
                counts = np.bincount(data.y, minlength=args.levels).astype(float)
                sgd = sgd_on_spark(frame, names, reference, counts, args.sgd_passes, args.sgd_step)
                print(f"  averaged SGD: { {k: v for k, v in sgd.items() if k != 'history'} }")
                print("  SGD gap by pass: " + ", ".join(f"{g:.2e}" for g in sgd["history"]))
                lr_row = None
                if not args.no_lr:
                    binary = (data.y >= args.levels // 2).astype(np.int64)
                    write_parquet(data.X, binary, Path(tmp) / "binary")
                    # both methods read the same cached rows (Spark ML caches its
                    # input itself when it is not cached)
                    frame2 = spark.read.parquet(str(Path(tmp) / "binary")).cache()
                    frame2.count()
                    ref2, _ = mle(data.X, binary)
                    newton2 = newton_on_spark(frame2, formula, ref2)
                    lr = logistic_regression_per_iteration(frame2, names)
                    frame2.unpersist()
                    lr_row = (newton2, lr["per_iteration"])
                    print(f"  K=2: ordstats {newton2}, Spark ML LR {lr}", flush=True)
                rows.append((n, newton, sgd, lr_row))
    finally:
        spark.stop()
    report(rows)


def report(rows) -> None:
    print()
    print("| rows | method | passes | seconds | s/pass | loglik gap (rel.) | max abs coef error |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for n, newton, sgd, _ in rows:
        print(
            f"| {n:.0e} | ordstats exact Newton | {newton['passes']} | {newton['seconds']:.1f} "
            f"| {newton['per_pass']:.2f} | {newton['gap']:.1e} | {newton['coef']:.1e} |"
        )
        reached = sgd["passes_to_1e-3"]
        print(
            f"| {n:.0e} | averaged parallel SGD | {sgd['passes']} "
            f"(1e-3 reached: {reached if reached else 'never'}) | {sgd['seconds']:.1f} "
            f"| {sgd['per_pass']:.2f} | {sgd['gap']:.1e} | {sgd['coef']:.1e} |"
        )
    print()
    for n, newton, sgd, lr_row in rows:
        reached = sgd["passes_to_1e-3"]
        fewer = newton["gap"] <= 1e-8 and (reached is None or newton["passes"] < reached)
        print(
            f"n = {n:.0e}: Newton to 1e-8 in fewer passes than SGD to 1e-3: "
            f"{'met' if fewer else 'not met'}"
        )
        if lr_row is not None:
            newton2, lr_iter = lr_row
            if lr_iter <= 0:  # the two timed fits differ by less than the noise of the load
                print(f"n = {n:.0e}, K = 2: Spark ML per-iteration time not measurable here")
                continue
            ratio = newton2["per_pass"] / lr_iter
            print(
                f"n = {n:.0e}, K = 2: ordstats {newton2['per_pass']:.2f} s/pass "
                f"({newton2['passes']} passes), Spark ML LogisticRegression {lr_iter:.2f} "
                f"s/iteration: ratio {ratio:.2f} ({'met' if ratio <= 2 else 'not met'}: <= 2)"
            )


if __name__ == "__main__":
    main()
