# %% [markdown]
# # Random effects: wine judges and soup respondents, as R's clmm
#
# Nine judges each rated eight wines.  Judges differ in how harsh they are, so ratings by the
# same judge are correlated: a cumulative link *mixed* model gives each judge a random shift
# `b_judge ~ N(0, sigma^2)` of the linear predictor,
#
#     P(Y <= j | judge) = F(theta_j - x'beta - b_judge),
#
# and estimates `sigma` with the fixed effects.  ordstats matches R's `ordinal::clmm` number
# for number (Laplace approximation by default, adaptive Gauss-Hermite quadrature with
# `fit(nagq=K)`), and adds what clmm lacks: predictions, conditional on a judge or averaged
# over judges.
#
# Run it as a script: `python vignettes/mixed.py`.  Add `--plot FILE.png` to save the plot
# of conditional and marginal probabilities (needs matplotlib); without it nothing is written.

# %%
from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

import ordstats

parser = argparse.ArgumentParser(description="Mixed-model vignette for ordstats.")
parser.add_argument("--plot", metavar="FILE", help="save conditional vs marginal probabilities")
args, _ = parser.parse_known_args()
pd.set_option("display.width", 110)

wine = ordstats.datasets.load("wine")

# %% [markdown]
# ## 1. clmm vs clm
#
# Bars in the formula, as in lme4 and clmm, build the mixed model.

# %%
clm = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
clmm = ordstats.OrdinalModel.from_formula("rating ~ temp + contact + (1|judge)", wine).fit()
print(clmm.summary())
print()
print(f"clm:  logLik = {clm.llf:.4f}, AIC = {clm.aic:.2f}")
print(f"clmm: logLik = {clmm.llf:.4f}, AIC = {clmm.aic:.2f}")
effects = pd.DataFrame({"clm": clm.params.iloc[4:], "clmm": clmm.params.iloc[4:]})
print(effects.round(3))

# %% [markdown]
# The effects grow once judges are accounted for: a subject-specific (conditional) effect is
# larger than a population-averaged one on the logit scale.  The judge SD of about 1.13 is
# large next to the effect of contact (1.83).

# %%
sd = clmm.varcorr()["sd"].iloc[0]
print(f"judge SD = {sd:.4f} (variance {sd**2:.4f})")

# %% [markdown]
# How well is the SD determined by 9 judges?  The profile-likelihood interval (every other
# parameter re-maximised at each fixed SD; R offers it only for the older `clmm2`) is
# asymmetric, as the likelihood of a scale parameter is; the Wald interval on log(SD) is
# close here.

# %%
print(clmm.sd_conf_int().round(3))
print(clmm.sd_conf_int(method="wald").round(3))

# %% [markdown]
# ## 2. Is the judge variance needed?  A boundary LR test
#
# The null `sigma^2 = 0` lies on the edge of the parameter space, so the LR statistic is a
# 50:50 mixture of a point mass at 0 and `chi2(1)`: the p-value is half of the naive one
# (R's `anova` reports the naive `chi2(1)`, which is conservative).

# %%
test = ordstats.lr_test(clm, clmm)
print(test)
print(f"boundary LR = {test.statistic:.4f}, p = {test.pvalue:.5f}")

# %% [markdown]
# ## 3. Which judges are harsh?  Conditional modes
#
# `ranef(condvar=True)` gives each judge's conditional mode and conditional variance (R's
# `ranef` and `condVar`).  Positive modes mean higher ratings.

# %%
modes, variances = clmm.ranef(condvar=True)
table = pd.DataFrame({"mode": modes["judge"].iloc[:, 0], "cond.var": variances["judge"].iloc[:, 0]})
print(table.round(3))

# %% [markdown]
# ## 4. Adaptive quadrature
#
# With one random intercept the Laplace value can be refined by adaptive Gauss-Hermite
# quadrature; ten nodes are plenty here.

# %%
agq = ordstats.OrdinalModel.from_formula("rating ~ temp + contact + (1|judge)", wine).fit(nagq=10)
print(f"Laplace logLik = {clmm.llf:.4f}, AGQ(10) logLik = {agq.llf:.4f}")

# %% [markdown]
# ## 5. Predictions: a given judge, a typical judge, the population
#
# `predict(re_form=None)` conditions on each judge's mode, `re_form=0` sets the random effect
# to zero (a typical judge) and `re_form="marginal"` averages over the judges' distribution,
# which spreads the probabilities.

# %%
grid = pd.DataFrame(
    {"temp": ["cold", "cold", "warm", "warm"], "contact": ["no", "yes", "no", "yes"]}
).assign(judge="1")
conditional = clmm.predict(grid).round(3)
typical = clmm.predict(grid, re_form=0).round(3)
marginal = clmm.predict(grid, re_form="marginal").round(3)
for name, frame in [("judge 1", conditional), ("typical judge", typical), ("marginal", marginal)]:
    print(name)
    print(pd.concat([grid[["temp", "contact"]], frame], axis=1).to_string(index=False))

# %%
if args.plot:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    x = np.arange(1, 6)
    for frame, style, label in [
        (conditional, "o-", "judge 1"),
        (typical, "s--", "typical judge (b = 0)"),
        (marginal, "^:", "population average"),
    ]:
        ax.plot(x, frame.iloc[0].to_numpy(), style, label=label)
    ax.set_xlabel("rating")
    ax.set_ylabel("probability (cold, no contact)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.plot)

# %% [markdown]
# ## 6. Nested random effects: soup respondents
#
# In the soup study each respondent tasted on several days.  `(1|RESP/DAY)` is a respondent
# effect plus a day-within-respondent effect, as `(1|RESP) + (1|DAY:RESP)`.  The day variance
# here goes to zero (it sits on the boundary and is held there).

# %%
soup = ordstats.datasets.load("soup")
nested = ordstats.OrdinalModel.from_formula("SURENESS ~ PROD + (1|RESP/DAY)", soup).fit()
print(nested.varcorr()[["group", "name", "sd"]].round(4).to_string(index=False))
print(f"nested soup logLik = {nested.llf:.4f}")
