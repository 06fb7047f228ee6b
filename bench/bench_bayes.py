"""ordstats' posterior (Laplace + PSIS) against NumPyro NUTS (run by hand; not a test).

``PYTHONPATH=. OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 python bench/bench_bayes.py
[--draws 4000] [--repeats 5] [--chains 4] [--nuts-draws 1000] [--warmup 1000]
[--large-n 1e5] [--models wine_clm,housing_clm,wine_clmm] [--no-nuts]``

For wine clm (``rating ~ temp + contact``), housing clm (``Sat ~ Infl + Type + Cont``,
weights ``Freq``) and wine clmm (``+ (1|judge)``), all with brms' default priors
(tests/bayes/models.py):

* ordstats: ``model.fit(prior="default").posterior(draws, seed=1)`` from the formula
  (model, mode by Newton, importance sampling with one adaptive step and PSIS), wall
  and CPU seconds, the median of ``repeats`` runs; ``posterior cpu s`` is the
  ``posterior()`` call alone;
* NUTS: ``posterior(method="nuts")``, NumPyro on the JAX log posterior
  (ordstats.results.jax_models; the clmm as the full model with its random effects),
  ``chains`` x ``nuts-draws`` after ``warmup``, timed once in the same run, wall and
  CPU seconds including JAX's compilation (a user pays it once per model);
* the speed-up is NUTS's seconds over ordstats' (the whole fit), wall and CPU;
* accuracy of both against the vendored long NUTS runs
  (tests/data/reference/bayes/, 4 x 5,000 draws): the largest ``|mean - ref| / ref sd``
  and ``|sd / ref sd - 1|`` over the parameters.

Then a simulated cumulative logit model with ``large-n`` rows and 20 predictors:
the mode and a ``draws``-draw posterior, CPU and wall seconds.  The machine's load
average is printed: on a shared machine wall seconds are only comparable within one
run, and CPU seconds (``time.process_time``, all threads of this process: JAX's too)
are the better measure.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import ordstats  # noqa: E402
from tests.bayes.models import posterior_mode  # noqa: E402

REFERENCE = ROOT / "tests" / "data" / "reference" / "bayes"
MODELS = ("wine_clm", "housing_clm", "wine_clmm")


def timed(call: Callable[[], Any]) -> tuple[Any, float, float]:
    """The call's value, wall seconds and CPU seconds (this process)."""
    wall, cpu = time.perf_counter(), time.process_time()
    value = call()
    return value, time.perf_counter() - wall, time.process_time() - cpu


def accuracy(post: Any, name: str) -> tuple[float, float]:
    ref = pd.DataFrame(json.loads((REFERENCE / f"{name}.json").read_text())["params"]).T
    mean, sd = post.mean()[ref.index], post.std()[ref.index]
    return (
        float(((mean - ref["mean"]) / ref["sd"]).abs().max()),
        float((sd / ref["sd"] - 1).abs().max()),
    )


def compare(name: str, args: argparse.Namespace) -> dict[str, Any]:
    def ours() -> Any:
        return posterior_mode(name).posterior(args.draws, seed=1)

    runs = [timed(ours) for _ in range(max(args.repeats, 1))]
    post = runs[0][0]
    mode = posterior_mode(name)
    posterior_cpu = [timed(lambda: mode.posterior(args.draws, seed=1))[2] for _ in runs]
    wall, cpu = float(np.median([r[1] for r in runs])), float(np.median([r[2] for r in runs]))
    row: dict[str, Any] = {"model": name, "ordstats s": wall, "ordstats cpu s": cpu}
    row["posterior cpu s"] = float(np.median(posterior_cpu))
    row["k_hat"], row["ess"] = post.k_hat, post.ess
    row["ordstats mean err (sd)"], row["ordstats sd err"] = accuracy(post, name)
    if not args.no_nuts:
        nuts, wall_n, cpu_n = timed(
            lambda: mode.posterior(
                args.nuts_draws, method="nuts", chains=args.chains, warmup=args.warmup, seed=1
            )
        )
        row["NUTS s"], row["NUTS cpu s"] = wall_n, cpu_n
        row["NUTS mean err (sd)"], row["NUTS sd err"] = accuracy(nuts, name)
        row["speed-up (wall)"] = wall_n / wall
        row["speed-up (cpu)"] = cpu_n / cpu
    return row


def large(n: int, draws: int) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    p = 20
    X = rng.normal(size=(n, p))
    eta = X @ np.linspace(-0.5, 0.5, p)
    y = (rng.logistic(size=n)[:, None] + eta[:, None] > np.array([-2, -0.7, 0.7, 2])).sum(1)
    frame = pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(p)]).assign(y=y)
    model = ordstats.OrdinalModel.from_formula(
        "y ~ " + " + ".join(f"x{j + 1}" for j in range(p)), frame
    )
    mode, wall_m, cpu_m = timed(lambda: model.fit(prior="default"))
    post, wall_p, cpu_p = timed(lambda: mode.posterior(draws, seed=1))
    return {
        "rows": n,
        "mode s": wall_m,
        "mode cpu s": cpu_m,
        "posterior s": wall_p,
        "posterior cpu s": cpu_p,
        "total s": wall_m + wall_p,
        "total cpu s": cpu_m + cpu_p,
        "k_hat": post.k_hat,
        "ess": post.ess,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=4000)
    parser.add_argument("--repeats", type=int, default=5, help="ordstats runs (median)")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--nuts-draws", type=int, default=1000)
    parser.add_argument("--warmup", type=int, default=1000)
    parser.add_argument("--large-n", type=float, default=1e5)
    parser.add_argument("--no-nuts", action="store_true")
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.1f} (2 cores)", flush=True)
    print(f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}", flush=True)
    if not args.no_nuts:
        print(
            f"NUTS: {args.chains} chains x {args.nuts_draws} draws after {args.warmup} "
            "warm-up, timed in this run",
            flush=True,
        )
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        for name in args.models.split(","):
            rows.append(compare(name, args))
            print(pd.Series(rows[-1]).to_string(), "\n", flush=True)
    table = pd.DataFrame(rows).set_index("model")
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(table.round(3).to_string())
    if args.large_n:
        print("\n", pd.Series(large(int(args.large_n), args.draws)).round(3).to_string())
    print(f"\nload average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
