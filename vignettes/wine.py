# %% [markdown]
# # Bitterness of wine: a first cumulative link model
#
# Randall (1989) had nine judges rate the bitterness of eight wines on a
# five-point scale (1 = least bitter).  The wines were made at two
# fermentation temperatures (`temp`: cold, warm) with or without skin
# contact (`contact`: no, yes).  We model the rating with a cumulative link
# model
#
#     P(rating <= j | x) = F(theta_j - x'beta),   j = 1, ..., 4,
#
# where a positive `beta` moves ratings up the scale.  This is the model and
# parametrisation of R's `ordinal::clm(rating ~ temp + contact, data = wine)`.
#
# Run it as a script: `python vignettes/wine.py`.  Add `--plot FILE.png` to
# save a figure of the predicted probabilities (needs matplotlib); without it
# nothing is written.  Every number below is computed when the script runs.

# %%
from __future__ import annotations

import argparse

import pandas as pd

import ordstats

parser = argparse.ArgumentParser(description="Wine bitterness vignette for ordstats.")
parser.add_argument("--plot", metavar="FILE", help="save a plot of predicted probabilities")
args, _ = parser.parse_known_args()  # tolerate extra arguments from notebook kernels
pd.set_option("display.width", 100)

# %% [markdown]
# ## The data
#
# `ordstats.datasets.load` returns the rating as an ordered categorical and
# the factors with R's level order, so the reference levels are `cold` and `no`.

# %%
wine = ordstats.datasets.load("wine")
print(wine.head())
print()
print(pd.crosstab([wine["temp"], wine["contact"]], wine["rating"]))

# %% [markdown]
# ## Fit and summary

# %%
model = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", data=wine)
res = model.fit()
print(res.summary())
print(f"\nlogLik = {res.llf:.2f}, AIC = {res.aic:.2f}, converged = {res.converged}")

# %% [markdown]
# The thresholds `1|2`, ..., `4|5` are the cut-points `theta_j` on the latent
# scale; the location coefficients `temp[T.warm]` and `contact[T.yes]` are
# R's `tempwarm` and `contactyes`.
#
# ## Odds ratios
#
# Under the logit link, `exp(beta)` multiplies the odds of a rating above any
# cut-point, `P(Y > j) / P(Y <= j)`, and the multiplier is the same for
# every `j` (the proportional-odds assumption).

# %%
odds = res.odds_ratios()
print(odds.round(3))
for name, row in odds.iterrows():
    print(
        f"{name}: the odds of a more bitter rating are {row['odds_ratio']:.1f} times "
        f"higher (95% CI {row['lower']:.1f} to {row['upper']:.1f})"
    )

# %% [markdown]
# ## Predicted probabilities
#
# One row per combination of temperature and contact.  Plain strings are
# fine in `newdata`: they are encoded with the levels the model was fitted on.

# %%
grid = pd.DataFrame(
    {"temp": ["cold", "cold", "warm", "warm"], "contact": ["no", "yes", "no", "yes"]}
)
probs = res.predict(grid, which="prob")
table = pd.concat([grid, probs.round(3)], axis=1)
print(table.to_string(index=False))

# %% [markdown]
# The most probable rating (`which="class"`) and the expected rating
# (`which="expected"`, the probability-weighted mean of the scores 1..5):

# %%
outcomes = grid.assign(
    predicted=res.predict(grid, which="class").astype(str),
    expected=res.predict(grid, which="expected").round(2),
)
print(outcomes.to_string(index=False))

# %% [markdown]
# ## Comparing links
#
# The same model with each of the five links; all have the same number of
# parameters, so AIC ranks them by log-likelihood.

# %%
LINKS = ("logit", "probit", "cloglog", "loglog", "cauchit")
fits = {
    link: ordstats.OrdinalModel.from_formula("rating ~ temp + contact", data=wine, link=link).fit()
    for link in LINKS
}
comparison = pd.DataFrame(
    {
        "logLik": [fit.llf for fit in fits.values()],
        "AIC": [fit.aic for fit in fits.values()],
        "temp[T.warm]": [fit.params["temp[T.warm]"] for fit in fits.values()],
        "converged": [fit.converged for fit in fits.values()],
    },
    index=pd.Index(LINKS, name="link"),
).sort_values("AIC")
print(comparison.round(3))
print(f"\nLowest AIC: {comparison.index[0]}")

# %% [markdown]
# Coefficients are on each link's own latent scale, so compare them across
# links only in sign and significance, not in size.
#
# ## Beyond proportional odds: nominal and scale effects
#
# The proportional-odds model gives each predictor one effect on every
# cumulative logit. A *nominal* effect lets it differ by cut-point (partial
# proportional odds, R's `clm(..., nominal = ~ contact)`): the thresholds become
# `theta_j + contact * gamma_j`, shown in their own table. A *scale* effect lets a
# predictor change the spread of the latent variable, `exp(z' zeta)`
# (`clm(..., scale = ~ temp)`). Both nest the model above, so a likelihood-ratio
# test tells whether the extra parameters are needed.

# %%
from scipy import stats

nominal = ordstats.OrdinalModel.from_formula("rating ~ temp", data=wine, nominal="~ contact").fit()
print(nominal.summary().tables[2])  # the nominal-effects table
print(nominal.thresholds.round(3))  # cut-points for contact = no / yes, with delta-method SEs


def lr(restricted: ordstats.OrdinalResults, full: ordstats.OrdinalResults) -> str:
    """LR statistic, degrees of freedom and p-value of two nested fits."""
    stat = 2 * (full.llf - restricted.llf)
    df = full.k_params - restricted.k_params
    return f"LR = {stat:.3f} on {df} df, p = {stats.chi2.sf(stat, df):.3f}"


print("nominal contact vs proportional odds:", lr(res, nominal))

scaled = ordstats.OrdinalModel.from_formula(
    "rating ~ temp + contact", data=wine, scale="~ temp"
).fit()
print(
    f"scale effect of warm temperature: {scaled.params['scale:temp[T.warm]']:.3f} "
    f"(SE {scaled.bse['scale:temp[T.warm]']:.3f})"
)
print("scale temp vs proportional odds:", lr(res, scaled))

# %% [markdown]
# Neither test rejects the simpler model: the effect of contact is about the
# same at every cut-point, and warm wines are not rated more or less
# consistently. (R's `nominal_test(fit)` and `scale_test(fit)` run these tests
# term by term.)
#
# ## A flexible link
#
# The Aranda-Ordaz family contains the logit (`lambda = 1`) and tends to the
# complementary log-log as `lambda -> 0`; ordstats estimates `lambda` with
# analytic derivatives and reports its standard error.

# %%
flexible = ordstats.OrdinalModel.from_formula(
    "rating ~ temp + contact", data=wine, link="Aranda-Ordaz"
).fit()
print(
    f"lambda = {flexible.params['lambda']:.4f} (SE {flexible.bse['lambda']:.4f}), "
    f"logLik = {flexible.llf:.4f} vs logit {res.llf:.4f}"
)
print("logit as the special case lambda = 1:", lr(res, flexible))
#
# ## Plot (optional)
#
# Only with `--plot FILE`: a bar chart of the predicted distribution of the
# rating for each combination.


# %%
def plot_probabilities(probs: pd.DataFrame, grid: pd.DataFrame, path: str) -> None:
    """Save grouped bars of predicted category probabilities to ``path``."""
    try:
        import matplotlib
    except ImportError:
        raise SystemExit("--plot needs matplotlib: pip install matplotlib") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{t}/{c}" for t, c in zip(grid["temp"], grid["contact"], strict=True)]
    fig, ax = plt.subplots(figsize=(7, 4))
    probs.set_axis(labels).T.plot.bar(ax=ax, rot=0)
    ax.set_xlabel("rating")
    ax.set_ylabel("predicted probability")
    ax.legend(title="temp/contact")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    print(f"saved {path}")


if args.plot:
    plot_probabilities(probs, grid, args.plot)
