# %% [markdown]
# # Cumulative, sequential or adjacent-category? Three ordinal models side by side
#
# Three classic regression models for an ordered response (Tutz 2012, *Regression
# for Categorical Data*, ch. 9; Agresti 2010, *Analysis of Ordinal Categorical
# Data*, ch. 3-4) differ in **what a linear predictor describes**:
#
# | family | linear predictor `eta_j` (j = 1..K-1) | think of the response as |
# |---|---|---|
# | `cumulative` | `F^-1 P(Y <= j)` | a latent continuous variable cut at thresholds |
# | `sratio` | `F^-1 P(Y = j \| Y >= j)` | a process that reaches `j + 1` only through `j` |
# | `cratio` | `F^-1 P(Y > j \| Y >= j)` | the same process, modelling "going on" |
# | `acat` | `log P(Y = j+1) / P(Y = j)` | local comparisons of neighbouring levels |
#
# **When to choose which.**
#
# * **Cumulative** (proportional odds with the logit link): the default when the
#   levels are coarse measurements of one underlying continuum (ratings of
#   bitterness, satisfaction, pain).  Its coefficients do not change if adjacent
#   levels are merged, and `exp(beta)` is one odds ratio for every cut-point.
# * **Sequential** (stopping ratio `sratio`, continuation ratio `cratio`): when a
#   higher level can only be reached *through* the lower ones: school grades
#   completed, disease stages, the round in which a game or a process stopped.
#   Each step is a binary "stop here or go on?" decision among those who got
#   that far, so the likelihood is a sum of binary logistic regressions and the
#   model extends naturally to step-specific effects.  With the cloglog link it
#   is the grouped proportional-hazards model (identical to the cumulative
#   cloglog model, see below).
# * **Adjacent category** (`acat`): when the levels are compared pairwise with
#   their neighbours, as in the partial-credit model of item-response theory.
#   `exp(b)` is the odds ratio of level `j + 1` against level `j`, for every `j`.
#
# All three are fitted by the same Newton solver with analytic derivatives and
# share every tool of ordstats: summaries, Wald and likelihood-ratio tests,
# predictions, odds ratios.  The sequential and adjacent families follow VGAM's
# `sratio()`, `cratio()` and `acat()` with `parallel = TRUE`, so their estimates
# equal VGAM's, **signs included** — and those signs differ between families.

# %%
import numpy as np
import pandas as pd

import ordstats

pd.set_option("display.width", 120)

wine = ordstats.datasets.load("wine")
formula = "rating ~ temp + contact"

# %% [markdown]
# ## The same data, six models
#
# Bitterness of wine rated 1 (least) to 5 (most bitter) by nine judges, at two
# temperatures and with or without skin contact.  `reverse=True` gives VGAM's
# reverse variants, in which the steps run from the top level down.

# %%
specs = {
    "cumulative": {},
    "sratio": {"family": "sratio"},
    "sratio (reverse)": {"family": "sratio", "reverse": True},
    "cratio": {"family": "cratio"},
    "cratio (reverse)": {"family": "cratio", "reverse": True},
    "acat": {"family": "acat"},
}
fits = {
    name: ordstats.OrdinalModel.from_formula(formula, wine, **kwargs).fit()
    for name, kwargs in specs.items()
}

# %% [markdown]
# ## AIC comparison
#
# Every model has four intercepts and two slopes, so the AIC ranks them by
# their log-likelihoods.  Differences of one or two AIC units, as here, are no
# evidence for one model over another: on these 72 ratings the data cannot tell
# the families apart, and the choice should follow from how the response arises.

# %%
table = pd.DataFrame(
    {
        "k": [res.k_params for res in fits.values()],
        "logLik": [res.llf for res in fits.values()],
        "AIC": [res.aic for res in fits.values()],
    },
    index=list(fits),
).sort_values("AIC")
table["dAIC"] = table["AIC"] - table["AIC"].min()
print(table.round(3))

# %% [markdown]
# ## Reading the signs
#
# A positive coefficient means *higher* levels in the cumulative model (R
# `clm`'s convention), in `cratio` and in `acat`, but *lower* levels in `sratio`,
# because there `eta_j` is the chance of **stopping** at level `j`.  The reverse
# variants flip the direction again.  Each summary says so in its header
# (`Positive coef:`) and in a note.  Warm wine is more bitter in every model:

# %%
signs = pd.DataFrame(
    {
        name: {
            "temp[T.warm]": res.params["temp[T.warm]"],
            "contact[T.yes]": res.params["contact[T.yes]"],
            "positive coef means": res.model.family_spec.positive_effect + " levels",
        }
        for name, res in fits.items()
    }
).T
print(signs)

# %%
print(fits["sratio"].summary())

# %% [markdown]
# The odds ratios answer different questions in each family; the table carries
# its interpretation:

# %%
for name in ("cumulative", "sratio", "cratio", "acat"):
    odds = fits[name].odds_ratios()
    print(
        f"{name:>10}: OR(warm) = {odds.loc['temp[T.warm]', 'odds_ratio']:6.2f}  "
        f"{odds.attrs['interpretation']}"
    )

# %% [markdown]
# ## The predictions are close
#
# Despite their different parameters the models predict similar distributions
# for the four conditions; the expected ratings differ by less than a tenth.

# %%
conditions = pd.DataFrame(
    {"temp": ["cold", "cold", "warm", "warm"], "contact": ["no", "yes", "no", "yes"]}
)
expected = pd.DataFrame(
    {name: res.predict(conditions, which="expected") for name, res in fits.items()}
)
print(pd.concat([conditions, expected.round(3)], axis=1).to_string())
print(fits["acat"].predict(conditions).round(3))

# %% [markdown]
# ## Links
#
# The sequential families take every link; `acat` is the adjacent-category
# *logit* model.  With the complementary log-log link the stopping-ratio model
# *is* the cumulative model (the grouped proportional-hazards model, Läärä and
# Matthews 1985): the same likelihood, slopes of opposite sign and intercepts
# `alpha_j = log(exp(theta_j) - exp(theta_{j-1}))`.

# %%
cum_cloglog = ordstats.OrdinalModel.from_formula(formula, wine, link="cloglog").fit()
sr_cloglog = ordstats.OrdinalModel.from_formula(
    formula, wine, family="sratio", link="cloglog"
).fit()
print(f"logLik cumulative cloglog {cum_cloglog.llf:.6f}, sratio cloglog {sr_cloglog.llf:.6f}")
theta = np.r_[-np.inf, cum_cloglog.thresholds["estimate"].to_numpy()]
print(
    pd.DataFrame(
        {
            "sratio intercept": sr_cloglog.thresholds["estimate"],
            "log(e^theta_j - e^theta_j-1)": np.log(np.diff(np.exp(theta))),
        }
    )
)
assert np.isclose(cum_cloglog.llf, sr_cloglog.llf)

# %% [markdown]
# ## Same slopes at every step?
#
# The families above share one slope per predictor across all steps (VGAM's
# `parallel = TRUE`).  `nominal=` frees a term's slope step by step (VGAM's
# `parallel = FALSE ~ contact`), and a likelihood-ratio test compares the two.
# Models of *different* families are not nested, so `lr_test` refuses them;
# compare those by AIC, as above, or by `ordstats.vuong_test`.

# %%
free = ordstats.OrdinalModel.from_formula(
    "rating ~ temp", wine, family="sratio", nominal="~ contact"
).fit()
print(free.params.filter(like="contact").round(3))
test = ordstats.lr_test(fits["sratio"], free)
print(
    f"non-parallel contact vs shared slope: LR = {test.statistic:.3f} on {test.df} df, "
    f"p = {test.pvalue:.3f}"
)

# %% [markdown]
# The three lower steps have almost the same contact effect; only the last one,
# which few ratings reach, differs, and the test (the same statistic as from
# VGAM's two fits) finds no evidence against a shared slope.

# %% [markdown]
# ## Standard errors: observed or expected information
#
# ordstats reports the inverse *observed* information, as R's `clm`.  VGAM fits
# by Fisher scoring and reports the inverse *expected* information.  For `acat`
# they coincide; for the sequential models they do not (which steps a rating
# passes through depends on the rating itself).  `fit(cov_type="expected")`
# gives VGAM's numbers:

# %%
res = fits["sratio"]
vgam_like = ordstats.OrdinalModel.from_formula(formula, wine, family="sratio").fit(
    cov_type="expected"
)
print(pd.DataFrame({"observed (ordstats)": res.bse, "expected (VGAM)": vgam_like.bse}))

# %% [markdown]
# ## A larger data set: Copenhagen housing
#
# 1681 tenants (72 rows with frequency weights) rated their satisfaction Low,
# Medium or High.  With more data the families separate: the cumulative and
# adjacent-category models are within one AIC unit of each other and 4 to 8
# units ahead of the sequential ones, which suits a satisfaction scale (one
# underlying attitude, not a staged process).  ordstats' BIC, like R `clm`'s,
# counts the 1681 tenants; VGAM's counts the 72 rows.

# %%
housing = ordstats.datasets.load("housing")
house = {
    name: ordstats.OrdinalModel.from_formula(
        "Sat ~ Infl + Type + Cont", housing, weights="Freq", **kwargs
    ).fit()
    for name, kwargs in specs.items()
}
print(
    pd.DataFrame(
        {
            "logLik": [r.llf for r in house.values()],
            "AIC": [r.aic for r in house.values()],
            "BIC": [r.bic for r in house.values()],
        },
        index=list(house),
    )
    .sort_values("AIC")
    .round(2)
)
