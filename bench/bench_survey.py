"""Time survey fits: linearisation and replicate weights (run by hand; not a test).

``PYTHONPATH=. OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 python bench/bench_survey.py
[--n 1e6] [--replicates 80] [--r-n 20000] [--threads N]`` simulates a stratified cluster
sample: ``--strata`` strata (200) of ``--psus`` PSUs (2,000 in all, 10 per stratum), a
PSU random effect, sampling weights varying by stratum, 20 standard-normal predictors
and 5 response levels.  It times

* the fit with linearisation standard errors
  (``OrdinalModel.from_formula(formula, design=SurveyDesign(...)).fit()``);
* the fit with ``--replicates`` replicate weights (random half-samples of the
  PSUs in every stratum, Fay's rho 0.5, so that every row stays in every
  replicate): full fit plus the refits of all replicates (chord iterations on
  the full-sample Hessian with the gradients of many replicates per pass over
  the rows, in as many threads as ``--threads`` allows: ordstats' ``threads``
  option, every core by default; see ``ordstats/estimation/survey_refits.py``);
* at ``--r-n`` rows, the same linearisation fit in ordstats and R's
  ``survey::svyolr`` (``Rscript``), for a ratio (skipped without Rscript).

Wall and CPU time (``time.process_time``: all threads of the process) are printed
with the load average at the start and end.  Set ``OPENBLAS_NUM_THREADS=1`` on a
shared machine (ordstats' threads run one BLAS thread each).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
import time
from typing import Any

import numpy as np
import pandas as pd

import ordstats
from ordstats.config import resolve_threads

P = 20
FORMULA = "y ~ " + " + ".join(f"x{j + 1}" for j in range(P))


def simulate(n: int, strata: int, psus: int, seed: int = 0) -> pd.DataFrame:
    """A stratified cluster sample of ``n`` rows."""
    rng = np.random.default_rng(seed)
    psu = rng.integers(0, psus, size=n)
    stratum = psu % strata
    X = rng.normal(size=(n, P))
    eta = X @ np.linspace(-0.5, 0.5, P) + 0.5 * rng.normal(size=psus)[psu]
    cuts = np.array([-2.0, -0.7, 0.7, 2.0])
    y = (rng.logistic(size=n)[:, None] + eta[:, None] > cuts).sum(axis=1)
    frame = pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(P)])
    frame["y"] = pd.Categorical(y, categories=range(5), ordered=True)
    frame["stratum"] = stratum
    frame["psu"] = psu
    frame["w"] = 50.0 + 10.0 * (stratum % 7)
    return frame


def fay_weights(frame: pd.DataFrame, n_rep: int, seed: int = 1) -> np.ndarray:
    """Random half-samples of each stratum's PSUs, weights times 1.5 / 0.5 (Fay, rho 0.5)."""
    rng = np.random.default_rng(seed)
    psus = np.unique(frame["psu"].to_numpy())
    columns = []
    for _ in range(n_rep):
        half = rng.random(psus.size) < 0.5
        factor = np.where(half, 1.5, 0.5)
        columns.append(frame["w"].to_numpy() * factor[np.searchsorted(psus, frame["psu"])])
    return np.column_stack(columns)


def timed(call: Any) -> tuple[Any, float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    out = call()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def linearization_fit(frame: pd.DataFrame) -> Any:
    design = ordstats.SurveyDesign(frame, weights="w", strata="stratum", psu="psu")
    return ordstats.OrdinalModel.from_formula(FORMULA, design=design).fit()


def replicate_fit(frame: pd.DataFrame, repweights: np.ndarray) -> Any:
    design = ordstats.ReplicateDesign(
        frame, repweights=repweights, weights="w", type="Fay", rho=0.5
    )
    return ordstats.OrdinalModel.from_formula(FORMULA, design=design).fit(disp=False)


R_SCRIPT = """
suppressMessages(library(survey))
d <- read.csv("{path}")
d$y <- factor(d$y, levels = 0:4)
des <- svydesign(id = ~psu, strata = ~stratum, weights = ~w, data = d)
f <- as.formula("{formula}")
t <- system.time(m <- svyolr(f, design = des))
cat(sprintf("%.3f %.3f\\n", t[["elapsed"]], t[["user.self"]] + t[["sys.self"]]))
cat(sprintf("%.10g\\n", sqrt(diag(vcov(m)))[1]))
"""


def r_svyolr(frame: pd.DataFrame) -> tuple[float, float, float] | None:
    """Wall and CPU seconds of svyolr on ``frame``, and its first SE (None without R)."""
    if shutil.which("Rscript") is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "survey.csv")
        frame.assign(y=frame["y"].astype(int)).to_csv(path, index=False)
        script = R_SCRIPT.format(path=path, formula=FORMULA)
        out = subprocess.run(
            ["Rscript", "-e", script], capture_output=True, text=True, check=True
        ).stdout.split()
    return float(out[0]), float(out[1]), float(out[2])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=float, default=1e6)
    parser.add_argument("--strata", type=int, default=200)
    parser.add_argument("--psus", type=int, default=2000)
    parser.add_argument("--replicates", type=int, default=80)
    parser.add_argument("--r-n", type=float, default=20000)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    if args.threads is not None:
        ordstats.set_options(threads=args.threads)
    print(f"load average at start: {os.getloadavg()[0]:.2f} (cores: {os.cpu_count()})")
    print(
        f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}; "
        f"ordstats threads: {resolve_threads(None)}"
    )
    n = int(args.n)
    frame = simulate(n, args.strata, args.psus)
    print(f"{n} rows, {args.strata} strata, {args.psus} PSUs, {P} predictors")
    res, wall, cpu = timed(lambda: linearization_fit(frame))
    print(
        f"fit + linearisation SEs: {wall:.2f} s wall, {cpu:.2f} s CPU (design df {res.design_df})"
    )
    repweights = fay_weights(frame, args.replicates)
    rep, wall, cpu = timed(lambda: replicate_fit(frame, repweights))
    print(
        f"fit + {args.replicates} replicate weights: {wall:.2f} s wall, {cpu:.2f} s CPU "
        f"(SE ratio replicate/linearisation for x1: {rep.bse['x1'] / res.bse['x1']:.3f})"
    )
    small = simulate(int(args.r_n), args.strata, args.psus, seed=2)
    ours, wall, cpu = timed(lambda: linearization_fit(small))
    print(f"{int(args.r_n)} rows: ordstats {wall:.2f} s wall, {cpu:.2f} s CPU")
    r = r_svyolr(small)
    if r is not None:
        r_wall, r_cpu, r_se = r
        print(
            f"{int(args.r_n)} rows: R svyolr {r_wall:.2f} s wall, {r_cpu:.2f} s CPU; "
            f"ratio R/ordstats {r_wall / wall:.1f}x wall; SE of x1 "
            f"R {r_se:.6g} vs ordstats {ours.bse['x1']:.6g}"
        )
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
