"""Generate the NUTS reference summaries of tests/data/reference/bayes/ (run by hand).

    cd <repo> && PYTHONPATH=$PWD OPENBLAS_NUM_THREADS=1 python tests/bayes/make_reference.py

NumPyro NUTS (4 chains x 5,000 draws after 1,000 warm-up iterations, seed 1) on the
JAX log posterior of each model in ``models.py`` (ordstats.results.jax_models; the mixed
model is the full model with its random effects sampled).  Only summaries are stored:
mean, SD, 2.5% and 97.5% quantiles, ArviZ's bulk ESS and R-hat per parameter; for a
model with random terms also the mean and SD of brms' ``sd_`` and ``cor_`` parameters
(``brms``, from ``ordstats.estimation.bayes_language.brms_summary``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
OUT = HERE.parent / "data" / "reference" / "bayes"

from models import MODELS, posterior_mode  # noqa: E402


def main(names: list[str]) -> None:
    import arviz as az

    OUT.mkdir(parents=True, exist_ok=True)
    for name in names or list(MODELS):
        mode = posterior_mode(name)
        post = mode.posterior(5000, method="nuts", chains=4, warmup=1000, seed=1)
        idata = post.to_arviz()
        rhat = az.rhat(idata)
        summary = post.summary(probs=(0.025, 0.975))
        record = {
            "model": MODELS[name][0],
            "settings": "numpyro NUTS, 4 chains x 5000 draws, 1000 warmup, seed 1",
            "params": {
                p: {
                    "mean": float(summary.loc[p, "mean"]),
                    "sd": float(summary.loc[p, "sd"]),
                    "q2.5": float(summary.loc[p, "q2.5"]),
                    "q97.5": float(summary.loc[p, "q97.5"]),
                    "ess_bulk": float(summary.loc[p, "ess"]),
                    "rhat": float(rhat[p.replace("/", "_")]),
                }
                for p in summary.index
            },
        }
        if mode.target.mixed:
            from ordstats.estimation.bayes_language import brms_summary

            table = brms_summary(post)
            record["brms"] = {
                p: {"mean": float(table.loc[p, "mean"]), "sd": float(table.loc[p, "sd"])}
                for p in table.index
            }
        (OUT / f"{name}.json").write_text(json.dumps(record, indent=1) + "\n")
        print(name, "written", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
