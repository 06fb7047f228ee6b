"""Fit time of the sequential and adjacent-category families against the cumulative model
and VGAM (run by hand: ``PYTHONPATH=. python bench/bench_families.py [--vgam]``).

Simulated data: 10 standard-normal predictors, 5 levels from a logistic latent
variable; the same CSV is fitted by ``VGAM::vglm`` when ``--vgam`` is given and
Rscript with VGAM is available.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

import ordstats

FAMILIES = ("cumulative", "sratio", "cratio", "acat")
R_SCRIPT = """
suppressMessages(library(VGAM))
d <- read.csv("{path}"); d$y <- ordered(d$y)
fam <- c(cumulative = "cumulative", sratio = "sratio", cratio = "cratio", acat = "acat")
for (f in names(fam)) {{
  t <- system.time(fit <- vglm(y ~ ., family = get(fam[[f]])(parallel = TRUE), data = d))
  cat(f, t[["elapsed"]], logLik(fit), "\\n")
}}
"""


def simulate(n: int, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 10))
    latent = X @ rng.normal(scale=0.3, size=10) + rng.logistic(size=n)
    y = np.digitize(latent, [-1.5, -0.5, 0.5, 1.5]) + 1
    return pd.DataFrame(X, columns=[f"x{k}" for k in range(10)]).assign(y=y)


def time_ordstats(data: pd.DataFrame) -> dict[str, tuple[float, float]]:
    X = data.drop(columns="y")
    out = {}
    for family in FAMILIES:
        start = time.perf_counter()
        res = ordstats.OrdinalModel(data["y"], X, family=family).fit()
        out[family] = (time.perf_counter() - start, res.llf)
    return out


def time_vgam(data: pd.DataFrame) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "data.csv"
        data.to_csv(path, index=False)
        script = R_SCRIPT.format(path=path)
        return subprocess.run(
            ["Rscript", "-e", script], capture_output=True, text=True, check=True
        ).stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--vgam", action="store_true", help="also time VGAM::vglm")
    args = parser.parse_args()
    for n in args.n:
        data = simulate(n)
        for family, (seconds, llf) in time_ordstats(data).items():
            print(f"ordstats n={n:>9,} {family:>10}: {seconds:7.2f} s  logLik {llf:.4f}")
        if args.vgam:
            for line in time_vgam(data).splitlines():
                family, seconds, llf = line.split()
                print(
                    f"VGAM     n={n:>9,} {family:>10}: {float(seconds):7.2f} s  "
                    f"logLik {float(llf):.4f}"
                )


if __name__ == "__main__":
    main()
