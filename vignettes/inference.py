# %% [markdown]
# # Inference with ordstats: which terms, which link, how sure
#
# Users fit ordinal models to *test* things.  This vignette walks through the
# questions people ask, one test per section, and says how to read each
# answer:
#
# 1. Is a term needed?  Likelihood-ratio tests and `anova`.
# 2. How sure are we?  Profile-likelihood intervals, robust and cluster SEs.
# 3. Linear hypotheses: `wald_test` and `t_test` with formula constraints.
# 4. Does the proportional-odds assumption hold?  Brant's test.
# 5. Which link fits?  `compare_links`: AIC/BIC, Vuong, nested LR tests.
# 6. How well does the model fit?  Pseudo-R² and probability-scale residuals.
# 7. How sure are the predictions?  `get_prediction` with delta-method SEs.
#
# Run it as a script: `python vignettes/inference.py`.  Add `--plot FILE.png`
# to save the profile plot of section 2 (needs matplotlib); without it nothing
# is written.

# %%
from __future__ import annotations

import argparse
import warnings

import numpy as np
import pandas as pd

import ordstats

parser = argparse.ArgumentParser(description="Inference vignette for ordstats.")
parser.add_argument("--plot", metavar="FILE", help="save the profile plot of temp[T.warm]")
args, _ = parser.parse_known_args()  # tolerate extra arguments from notebook kernels
pd.set_option("display.width", 110)

wine = ordstats.datasets.load("wine")
housing = ordstats.datasets.load("housing")


def fit(formula: str, data: pd.DataFrame, **kwargs) -> ordstats.OrdinalResults:
    return ordstats.OrdinalModel.from_formula(formula, data, **kwargs).fit()


# %% [markdown]
# ## 1. Is a term needed?  Likelihood-ratio tests
#
# `lr_test(restricted, full)` compares two *nested* fits: the restricted model
# must be a special case of the full one (ordstats checks this from the
# designs, and that both fits use the same response, rows and weights).
# `LR = 2 (logLik_full - logLik_restricted)` is referred to a chi-square with
# as many degrees of freedom as the full model has extra parameters.
#
# **How to read it:** a small p-value says the extra terms improve the fit
# more than chance would.  A large p-value says the data cannot tell the
# models apart -- not that the restricted model is true.

# %%
temp_only = fit("rating ~ temp", wine)
additive = fit("rating ~ temp + contact", wine)
interaction = fit("rating ~ temp * contact", wine)
print(ordstats.lr_test(temp_only, additive))

# %% [markdown]
# `anova` does the same for a sequence of models, sorted by size; each row
# tests the model against the row above (R's `anova.clm`, same columns).
# Here `contact` is clearly needed (p = 0.0009) and the interaction is not
# (p = 0.70).

# %%
table = ordstats.anova(temp_only, additive, interaction)
print(table.round(4).to_string())

# %% [markdown]
# Models that are not nested are refused with the reason, for example two
# different links (see section 5 for the valid comparison):

# %%
probit = fit("rating ~ temp + contact", wine, link="probit")
try:
    ordstats.lr_test(temp_only, probit)
except ordstats.OrdstatsError as error:
    print("refused:", error)

# %% [markdown]
# ## 2. How sure are we?  Profile intervals, robust and cluster SEs
#
# Wald intervals (`estimate +- 1.96 SE`) assume the log-likelihood is
# quadratic.  Profile-likelihood intervals re-fit the model with one parameter
# held fixed and keep the values whose likelihood-ratio test does not reject;
# they follow the shape of the likelihood and need no quadratic approximation.
# ordstats finds their ends by root-finding and profiles the thresholds too
# (R's `confint.clm` profiles only the location and scale parameters).
#
# **How to read it:** where the two intervals differ, trust the profile
# interval; a strongly asymmetric profile interval shows a skewed likelihood
# (small samples, probabilities near 0 or 1).

# %%
wald = additive.conf_int()
profile = additive.conf_int(method="profile")
print(pd.concat({"Wald": wald, "profile": profile}, axis=1).round(3).to_string())
print()
print(additive.odds_ratios(method="profile").round(3).to_string())

# %% [markdown]
# The profile itself is a DataFrame: the signed root deviance `r` against the
# parameter.  A straight line means the Wald interval is fine; `r = +-1.96`
# marks the 95% interval ends.  `res.plot_profile(name)` draws it.

# %%
curve = additive.profile("temp[T.warm]", n_points=9)
print(curve[["value", "signed_root", "llf"]].round(4).to_string(index=False))
if args.plot:
    import matplotlib.pyplot as plt

    ax = additive.plot_profile("temp[T.warm]")
    ax.figure.savefig(args.plot, dpi=100)
    plt.close(ax.figure)
    print(f"profile plot written to {args.plot}")

# %% [markdown]
# Robust (sandwich) standard errors do not rely on the model's variance being
# right; cluster-robust ones also allow correlation within clusters.  Each
# judge rated eight wines, so ratings by the same judge may be correlated.
# The summary says which covariance it shows; the observed-information one
# stays in `nonrobust_covariance`.
#
# **How to read it:** if cluster SEs are much larger than the model-based
# ones, the observations are not independent and the model-based p-values are
# too small.  Here the cluster SE of `temp` is *smaller*; with only 9 judges
# the cluster estimate is itself noisy.

# %%
clustered = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine).fit(
    cov_type="cluster", cov_kwds={"groups": wine["judge"]}
)
print(clustered.summary().tables[1])
print(f"covariance used: {clustered.cov_type}")
robust = additive.get_robustcov_results("robust")
ses = pd.DataFrame(
    {"model-based": additive.bse, "robust": robust.bse, "cluster (judge)": clustered.bse}
)
print(ses.round(4).to_string())

# %% [markdown]
# ## 3. Linear hypotheses with formula constraints
#
# `wald_test` tests constraints jointly (chi-square), `t_test` one by one
# (z tests with intervals).  Constraints are written with the parameter names;
# thresholds go in backticks.  Both use the covariance in force (robust if the
# fit is).
#
# **How to read it:** is the effect of warm fermentation equal to that of skin
# contact?  p = 0.13: the data do not contradict it.

# %%
print(additive.wald_test("temp[T.warm] = contact[T.yes]"))
print(additive.t_test("temp[T.warm] - contact[T.yes] = 0, `4|5` - `3|4` = 1.5").summary())

# %% [markdown]
# ## 4. Does proportional odds hold?  Brant's test
#
# The cumulative logit model assumes each regressor shifts every cumulative
# logit by the same amount.  Brant's test fits the binary logit of `Y > j`
# separately for each cut-point and tests that the slopes agree (Stata's
# `brant`), per regressor, per multi-column term and overall.
#
# **How to read it:** a small p-value for a regressor says its effect differs
# between cut-points; `binary_params` shows how.  Here (housing satisfaction)
# nothing is rejected at 5%: the proportional-odds model is adequate.
# On the wine data some binary splits are separated (no cold wine is rated
# 5), so the test warns that it is unreliable there.

# %%
housing_fit = fit("Sat ~ Infl + Type + Cont", housing, weights="Freq")
brant = housing_fit.brant_test()
print(brant.round(4).to_string())
print(pd.DataFrame(brant.attrs["binary_params"]).round(3).to_string())

# %% [markdown]
# The likelihood-ratio version (R's `nominal_test`) refits the model with each
# term in turn as a *nominal* effect, one effect per cut-point, and compares.
# `scale_test` likewise adds each term as a *scale* effect (does the spread of
# the latent variable change with it?).
#
# **How to read them:** one row per term; `LRT` on `Df` degrees of freedom and
# its p-value.  A small p-value says: keep the term as `nominal="~ term"`
# (or `scale="~ term"`).  For housing, contact (`Cont`) changes the spread
# (p = 0.017), while no term breaks proportional odds at 5%.

# %%
print(housing_fit.nominal_test().round(4).to_string())
print(housing_fit.scale_test().round(4).to_string())

# %% [markdown]
# ## 5. Which link fits?
#
# Models with different links are *not* nested, so an LR test between them
# (what R's `anova` prints) is not valid.  `compare_links` reports what is:
#
# * `logLik`, `AIC`, `BIC` per link: same number of parameters, so they rank
#   the links by likelihood; differences below ~2 mean little;
# * Vuong's test for each pair: `z > 0` favours the first link; a two-sided
#   p-value below 0.05 says one link fits significantly better;
# * the LR test of each link within a flexible family that nests it:
#   Aranda-Ordaz is the logit at `lambda = 1` and tends to the cloglog as
#   `lambda -> 0` (a boundary: the p-value uses the 50:50 mixture of
#   chi-square 0 and 1), log-gamma is the probit at 0, the cloglog at 1 and
#   the loglog at -1.  A small p-value rejects the link within its family.

# %%
links = ordstats.compare_links("rating ~ temp + contact", wine)
print(links)
print(f"Lowest AIC: {links.best}")

# %% [markdown]
# **How to read it:** probit has the highest likelihood, but no pairwise
# Vuong test among logit, probit and cloglog rejects equality, and neither
# family rejects the logit, probit or cloglog (the log-gamma fit, lambda =
# 0.16, is close to the probit).  Only the loglog is rejected within the
# log-gamma family (p = 0.046) and the cauchit is clearly worse.  The data
# cannot tell logit, probit and cloglog apart, so the choice can follow
# interpretation (logit gives odds ratios).
#
# ## 6. How well does the model fit?
#
# Pseudo-R² measures are not variance explained in the OLS sense: McFadden's
# compares log-likelihoods with the thresholds-only model (0.2-0.4 is a good
# fit); Nagelkerke rescales Cox-Snell to reach 1; McKelvey-Zavoina estimates
# the share of the latent variable's variance explained by the predictors.
#
# Probability-scale residuals `P(Y < y) - P(Y > y)` lie in [-1, 1] and average
# zero under a correct model; positive ones mark ratings higher than expected.
# **How to read them:** average them within groups of a covariate not in the
# model -- a clear trend says that covariate matters.

# %%
print(additive.pseudo_rsquared.round(4).to_string())
residuals = additive.resid_prob
print(f"mean residual: {residuals.mean():.4f}")
by_judge = residuals.groupby(wine["judge"]).mean()
print("mean residual by judge (not in the model):")
print(by_judge.round(3).to_string())
print(
    f"judge {by_judge.idxmax()} rates higher and judge {by_judge.idxmin()} lower "
    "than the model expects"
)

# %% [markdown]
# The judges differ a lot: a judge effect (a mixed model, or `judge` as a
# term) belongs in the model, which is also why the cluster-robust SEs of
# section 2 matter.
#
# ## 7. How sure are the predictions?
#
# `get_prediction` gives each predicted probability with its delta-method
# standard error and a 95% interval, formed on the logit scale and mapped back
# as R's `predict.clm(se.fit = TRUE, interval = TRUE)` does, so intervals stay
# inside (0, 1).
#
# **How to read it:** the interval is for the probability itself (the model's
# uncertainty), not for a single rating.

# %%
newdata = pd.DataFrame(
    {"temp": ["cold", "warm"], "contact": ["no", "yes"]},
    index=["cold, no contact", "warm, contact"],
)
prediction = additive.get_prediction(newdata)
print(prediction.summary_frame().round(3).to_string())

with warnings.catch_warnings():
    warnings.simplefilter("error")  # the vignette itself must not warn
    np.testing.assert_allclose(prediction.predicted.sum(axis=1), 1.0)
