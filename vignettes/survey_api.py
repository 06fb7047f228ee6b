# %% [markdown]
# # Survey data: ordinal models on California's school API samples
#
# Ordinal answers often come from complex samples: strata, clusters (primary sampling units,
# PSUs), finite-population corrections and sampling weights.  Frequency weights give the
# wrong standard errors there.  R users fit `survey::svyolr`; ordstats fits the same
# pseudo-likelihood with `OrdinalModel.from_formula(formula, design=...)` and a design-based
# covariance: Taylor linearisation (`SurveyDesign`) or replicate weights (`ReplicateDesign`).
#
# The data are R survey's `api` samples of California schools (`tests/data/survey/`, with
# R's reference fits written by `tests/r/survey_refs.R`): `apiclus1` (15 school districts
# sampled at random, every school of each), `apiclus2` (districts, then schools within
# them) and `apistrat` (schools stratified by type).  The response is `mealcat`, the share
# of students eligible for subsidised meals cut at 25, 50 and 75%.
#
# Run it as a script: `python vignettes/survey_api.py`.

# %%
from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import ordstats
from ordstats.errors import MissingDataWarning

pd.set_option("display.width", 110)
DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "survey"
REFS = json.loads((DATA / "refs.json").read_text())
LEVELS = ["(0,25]", "(25,50]", "(50,75]", "(75,100]"]


def load(name: str) -> pd.DataFrame:
    """One of the api samples, with mealcat as an ordered factor."""
    data = pd.read_csv(DATA / f"{name}.csv").rename(columns={"avg.ed": "avg_ed"})
    data["mealcat"] = pd.Categorical(data["mealcat"], categories=LEVELS, ordered=True)
    return data


def fit(formula: str, design: object, **options: object) -> ordstats.SurveyResults:
    """Fit to a design; rows with a missing avg.ed are dropped, as svyolr's na.omit."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingDataWarning)
        return ordstats.OrdinalModel.from_formula(formula, design=design, **options).fit(disp=False)


def r_se(name: str, key: str = "var") -> np.ndarray:
    """R's standard errors in ordstats' order (cut-points first)."""
    ref = REFS[name]
    se = np.sqrt(np.diag(np.array(ref[key] if key == "var" else ref[key]["var"])))
    k = se.size
    return se[list(range(k - 3, k)) + list(range(k - 3))]


# %% [markdown]
# ## A cluster sample: svyolr's example
#
# `dclus1` is `svydesign(id = ~dnum, weights = ~pw, data = apiclus1, fpc = ~fpc)`: the PSU
# is the district, `fpc` the number of districts in the population (757).

# %%
apiclus1 = load("apiclus1")
dclus1 = ordstats.SurveyDesign(apiclus1, weights="pw", psu="dnum", fpc="fpc")
res = fit("mealcat ~ avg_ed + mobility + stype", dclus1)
print(res.summary())

# %% [markdown]
# The estimates are svyolr's.  The standard errors are those of the linearisation with the
# exact observed information: svyolr's published cut-point SEs (3.6862, 3.1089, 2.8634)
# come from optim's finite-difference Hessian (step 1e-3).  Against R with an accurate
# Hessian (optim step 1e-5, or numDeriv) they agree to the digits printed below.  Tests and
# intervals use t on svyolr's `df.residual`: 14 design degrees of freedom (15 PSUs, 1
# stratum) minus the 4 slopes.

# %%
apiclus2 = load("apiclus2")
apistrat = load("apistrat")
designs = {
    "clus1": (dclus1, "mealcat ~ avg_ed + mobility + stype"),
    "clus2": (
        ordstats.SurveyDesign(apiclus2, psu=["dnum", "snum"], fpc=["fpc1", "fpc2"]),
        "mealcat ~ avg_ed + mobility + stype",
    ),
    "strat": (
        ordstats.SurveyDesign(apistrat, weights="pw", strata="stype", fpc="fpc"),
        "mealcat ~ avg_ed + mobility + enroll",
    ),
    "clus1_domain": (
        dclus1.subset(apiclus1["yr.rnd"] == "No"),
        "mealcat ~ avg_ed + mobility + stype",
    ),
}
fits = {name: fit(formula, design) for name, (design, formula) in designs.items()}
print("svyolr's published cut-point SEs:", r_se("clus1_default")[:3].round(4))
rows = []
for name, result in fits.items():
    se = result.bse.to_numpy()
    rows.append(
        {
            "design": name,
            "SE vs svyolr default": np.max(np.abs(se / r_se(f"{name}_default") - 1)),
            "vs svyolr, step 1e-5": np.max(np.abs(se / r_se(f"{name}_precise") - 1)),
            "vs numDeriv": np.max(np.abs(se / r_se(f"{name}_precise", "numderiv") - 1)),
        }
    )
print("largest relative difference of the standard errors from R's:")
print(pd.DataFrame(rows).to_string(index=False, float_format=lambda v: f"{v:.1e}"))

# %% [markdown]
# `clus2` is two-stage: districts, then schools, with an fpc at each stage, so each
# district adds its schools' variance times its sampling fraction, as R's `svyrecvar`.
# `clus1_domain` is the non-year-round schools: the domain's rows are fitted, but the
# variance counts every PSU of the full design (R's `subset(dclus1, yr.rnd == "No")`).
#
# ## Tests of terms and design effects
#
# `reg_term_test` is R's `regTermTest`: the Wald F of a term's coefficients on the
# residual design df.  `design_effects` divides each design variance by the variance a
# simple random sample of the same size would give (the inverse information with the
# weights divided by their mean over the design's rows, as R's `svyglm(..., deff = TRUE)`).

# %%
print(res.reg_term_test("stype").round(4))
ref = REFS["clus1_precise"]["regTermTest"]
print(
    f"R's regTermTest: F = {ref['Ftest']:.4f} on {ref['df']} and {ref['ddf']} df, "
    f"p = {ref['p']:.4f}"
)
print(res.design_effects().round(2))

# %% [markdown]
# Clustering by district inflates the variance of the cut-points and of `avg_ed` about
# tenfold: parents' education varies mostly between districts.
#
# ## Replicate weights
#
# `ReplicateDesign` takes the replicate weights as a matrix, column names or a regular
# expression.  These are R's `as.svrepdesign(dclus1, type = "JK1")` weights: one replicate
# per district left out, with R's scale.

# %%
jk1 = REFS["clus1_JK1"]
rep_design = ordstats.ReplicateDesign(
    apiclus1, repweights=np.array(jk1["repweights"]), weights="pw", type="JK1", scale=jk1["scale"]
)
rep = fit("mealcat ~ avg_ed + mobility + stype", rep_design)
comparison = pd.DataFrame(
    {
        "linearisation": res.bse,
        "jackknife": rep.bse,
        "svyolr (polr refits)": r_se("clus1_JK1"),
        "R (clm refits)": np.sqrt(np.diag(np.array(jk1["var_newton"])))[[4, 5, 6, 0, 1, 2, 3]],
    }
)
print(comparison.round(4).to_string())

# %% [markdown]
# svyolr refits each replicate with polr's BFGS, which stops short of the optimum; its
# replicate variance with refits converged by Newton (`ordinal::clm`) is the last column,
# which ordstats equals.
#
# ## Beyond svyolr
#
# Any family, link, nominal and scale effect fits to a design, and the margins verbs use
# the design covariance: here the population share of each meal category, averaged with the
# sampling weights, under a probit model.

# %%
probit = fit("mealcat ~ avg_ed + mobility + stype", dclus1, link="probit")
used = apiclus1.loc[probit.model.design.row_index]
shares = probit.avg_predictions(wts=used["pw"].to_numpy())
print(shares[["group", "estimate", "std_error", "conf_low", "conf_high"]].round(3))
sratio = fit("mealcat ~ avg_ed + mobility + stype", dclus1, family="sratio")
print(f"sratio: avg_ed {sratio.params['avg_ed']:.3f} (design SE {sratio.bse['avg_ed']:.3f})")
