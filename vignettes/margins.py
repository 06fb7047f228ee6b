# %% [markdown]
# # What the fit means: predictions, comparisons, slopes and marginal means
#
# A fitted ordinal model is rarely reported as its coefficients.  Papers report predicted
# probabilities per group, differences in probabilities ("contact raises the probability of a
# rating of 4 or more by ..."), average marginal effects and estimated marginal means with
# pairwise comparisons.  R users get these from `marginaleffects` and `emmeans`, Stata users
# from `margins`.  ordstats has both vocabularies on every fit, with exact (analytic)
# delta-method standard errors and normal-theory tests as R:
#
# - marginaleffects' verbs `predictions`, `avg_predictions`, `comparisons`,
#   `avg_comparisons`, `slopes`, `avg_slopes` and `hypotheses`;
# - emmeans' `res.emmeans(...)` with `.pairs()`, `.contrast()`, `.regrid()` and
#   `res.joint_tests()`;
# - the plots `ordstats.plotting.plot_predictions`, `plot_comparisons`, `plot_slopes`.
#
# Where the repository has R's output for the same call (`tests/data/reference/emmeans`,
# written by `tests/r/emmeans_refs.R` with emmeans 1.8.4), this page prints R's numbers beside
# ordstats'.
#
# Run it as a script: `python vignettes/margins.py`.  Add `--plot FILE.png` to save the four
# plots (needs matplotlib): the predictions to `FILE.png`, the comparisons to
# `FILE-comparisons.png`, the Tukey-adjusted pairwise differences to `FILE-pairs.png` and the
# slopes to `FILE-slopes.png`; without it nothing is written.

# %%
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd

import ordstats
from ordstats.plotting import plot_comparisons, plot_predictions, plot_slopes

parser = argparse.ArgumentParser(description="Marginal effects vignette for ordstats.")
parser.add_argument("--plot", metavar="FILE", help="save the four margins plots (FILE, FILE-*)")
args, _ = parser.parse_known_args()
pd.set_option("display.width", 110)

#: R's emmeans output for the models below (tests/r/emmeans_refs.R)
R_REFERENCE = Path(__file__).resolve().parents[1] / "tests" / "data" / "reference" / "emmeans"


def r_table(model: str, call: str) -> pd.DataFrame:
    """The table R printed for ``call`` on ``model`` (a file of the vendored references)."""
    calls = json.loads((R_REFERENCE / f"{model}.json").read_text())["calls"]
    table = next(entry["table"] for entry in calls if entry["r_call"] == call)
    return pd.DataFrame(table["columns"])[table["names"]]


def figure_path(suffix: str) -> str:
    """Where the plot named ``suffix`` goes: beside ``--plot FILE`` as ``FILE-suffix``."""
    path = Path(args.plot)
    return str(path.with_name(f"{path.stem}-{suffix}{path.suffix}"))


def save(figure: object, path: str) -> None:
    """Write a figure returned by the plot functions and close it."""
    import matplotlib.pyplot as plt

    figure.savefig(path)  # type: ignore[attr-defined]
    plt.close(figure)  # type: ignore[arg-type]


# %% [markdown]
# ## 1. Predicted probabilities per group
#
# Wine bitterness (Randall, 1989) with the interaction of temperature and skin contact, R's
# `clm(rating ~ temp * contact, data = wine)`.  `avg_predictions(by=...)` averages the
# predicted probabilities of the estimation rows within each group; every rating level is a
# `group`.  The intervals of probabilities are built on the logit scale and mapped back, so
# they stay inside [0, 1] (the summary says so).
#
# In R: `avg_predictions(fit, by = c("temp", "contact"), type = "prob")` (marginaleffects) or
# `emmeans(fit, ~ rating | temp * contact, mode = "prob")`.

# %%
wine = ordstats.datasets.load("wine")
res = ordstats.OrdinalModel.from_formula("rating ~ temp * contact", wine).fit()
by_group = res.avg_predictions(by=["temp", "contact"])
print(by_group.summary())

# %% [markdown]
# marginaleffects' issue #1759 published P(rating = 1 | cold, no contact) = 0.19604 with SE
# 0.08595 and P(rating = 2 | cold, no contact) = 0.56230 with SE 0.08850 for this model:

# %%
cells = by_group.set_index(["group", "temp", "contact"])
for level in ["1", "2"]:
    row = cells.loc[(level, "cold", "no")]
    print(
        f"P(rating = {level} | cold, no) = {row['estimate']:.5f} (SE {row['std_error']:.5f}), "
        f"95% CI {row['conf_low']:.5f} to {row['conf_high']:.5f}"
    )

# %% [markdown]
# emmeans' numbers for the same cells, from the vendored R output, beside ordstats':

# %%
r_cells = r_table("clm_wine_interaction", 'emmeans(fit, ~ rating | temp * contact, mode = "prob")')
ours = cells.loc[list(zip(r_cells["rating"], r_cells["temp"], r_cells["contact"], strict=True))]
side_by_side = r_cells[["rating", "temp", "contact"]].assign(
    ordstats=ours["estimate"].to_numpy(),
    R=r_cells["prob"],
    ordstats_se=ours["std_error"].to_numpy(),
    R_se=r_cells["SE"],
)
print(side_by_side.head(4).round(6).to_string(index=False))
print(
    f"largest difference over all 20 cells: estimate "
    f"{(side_by_side['ordstats'] - side_by_side['R']).abs().max():.1e}, SE "
    f"{(side_by_side['ordstats_se'] - side_by_side['R_se']).abs().max():.1e}"
)

# %% [markdown]
# R's emmeans gives Wald intervals, estimate +- z SE, which can leave [0, 1] for a small
# probability (emmeans issues #154 and #155).  `conf_type="wald"` reproduces them:

# %%
wald = res.avg_predictions(by=["temp", "contact"], conf_type="wald")
smallest = wald.set_index(["group", "temp", "contact"]).loc[("5", "cold", "no")]
logit = cells.loc[("5", "cold", "no")]
print(
    f"P(rating = 5 | cold, no) = {smallest['estimate']:.5f}: "
    f"Wald {smallest['conf_low']:.5f} to {smallest['conf_high']:.5f}, "
    f"logit scale {logit['conf_low']:.5f} to {logit['conf_high']:.5f}"
)

# %% [markdown]
# ## 2. Contact's effect on P(rating >= 4)
#
# `type="exceedance"` predicts `P(rating >= j)` (group `j`), so the average comparison of
# contact yes against no, in group 4, is the change in the probability of a rating of 4 or
# more, averaged over the wines (R: `avg_comparisons(fit, variables = "contact")` gives the
# differences per level; marginaleffects has no exceedance type for clm, so add the levels 4
# and 5 with `hypothesis = "b4 + b5 = 0"`).

# %%
effect = res.avg_comparisons(variables="contact", type="exceedance")
print(effect.summary())
four = effect.set_index("group").loc["4"]
print(
    f"\ncontact raises P(rating >= 4) by {four['estimate']:.3f} "
    f"(95% CI {four['conf_low']:.3f} to {four['conf_high']:.3f}, p = {four['p_value']:.4f})"
)

# %% [markdown]
# The same number as a hypothesis on the per-level differences (rows `b4` and `b5` are the
# levels 4 and 5), and per temperature with `by=`:

# %%
summed = res.avg_comparisons(variables="contact", hypothesis="b4 + b5 = 0")
print(f"b4 + b5 = {summed['estimate'].iloc[0]:.3f} (SE {summed['std_error'].iloc[0]:.4f})")
print(f"exceedance group 4: {four['estimate']:.3f} (SE {four['std_error']:.4f})")
by_temp = res.avg_comparisons(variables="contact", type="exceedance", by="temp")
print(by_temp[by_temp["group"] == "4"].round(3).to_string(index=False))

# %% [markdown]
# ## 3. Pairwise comparisons with Tukey's adjustment
#
# emmeans' estimated marginal means are on the latent scale by default (`mode="latent"`:
# the linear predictor minus the mean threshold).  `pairs(adjust="tukey")` compares the four
# cells with Tukey's studentized-range adjustment of p-values and intervals; R:
# `pairs(emmeans(fit, ~ temp * contact), adjust = "tukey")`.

# %%
emm = res.emmeans("~ temp * contact")
tukey = emm.pairs(adjust="tukey")
print(tukey.summary())
r_tukey = r_table("clm_wine_interaction", 'pairs(emmeans(fit, ~ temp * contact), adjust = "tukey")')
ours_tukey = tukey.summary_frame()
print(
    pd.DataFrame(
        {
            "contrast": ours_tukey["contrast"],
            "p (ordstats)": ours_tukey["p.value"],
            "p (R)": r_tukey["p.value"],
        }
    ).to_string(index=False)
)

# %% [markdown]
# Warm wines are rated higher whatever the contact (`cold no - warm no` has Tukey p 0.0051),
# while contact alone within cold wines is not significant after the adjustment (p 0.1732).
# `joint_tests` (R: `joint_tests(fit)`) tests each model term:

# %%
print(res.joint_tests().round(4).to_string(index=False))
r_joint = r_table("clm_wine_interaction", "joint_tests(fit)")
print(f"R's F ratios (emmeans rounds them): {', '.join(f'{f:.3f}' for f in r_joint['F.ratio'])}")

# %% [markdown]
# ## 4. Average slopes: soup respondents
#
# In the soup study (`ordinal::soup`) 185 respondents rated reference and test samples on a
# six-point scale from "reference, sure" (1) to "not reference, sure" (6).  Each also said how
# easy the test was (`EASY`, 1 = difficult to 10 = easy); as a number it is a natural
# covariate: do respondents who find the test easy discriminate better?  With
# `SURENESS ~ PROD * easy` the slope of the expected rating in `easy` differs by product
# (R: `avg_slopes(fit, variables = "easy", by = "PROD")`; Stata: `margins PROD, dydx(easy)`).

# %%
soup = ordstats.datasets.load("soup").assign(easy=lambda d: d["EASY"].astype(int))
soup_fit = ordstats.OrdinalModel.from_formula("SURENESS ~ PROD * easy", soup).fit()
slopes = soup_fit.avg_slopes(variables="easy", by="PROD", type="expected")
print(slopes.summary())
ref, test = (slopes.set_index("PROD").loc[p] for p in ("Ref", "Test"))
print(
    f"\nper point of easiness the expected rating moves by {ref['estimate']:.3f} for the "
    f"reference (p = {ref['p_value']:.2f}) and {test['estimate']:.3f} for the test product "
    f"(p = {test['p_value']:.2f})"
)

# %% [markdown]
# The signs are those of better discrimination (the reference rated lower, the test product
# higher) but neither slope is distinguishable from zero (p 0.15 and 0.46).  The default
# `avg_slopes()` gives every predictor: a factor gets its discrete contrast with the
# reference level (as marginaleffects), a number its derivative, per rating level.

# %%
print(soup_fit.avg_slopes().round(4).to_string(index=False, max_rows=12))

# %% [markdown]
# With the vendored R output for `clm(SURENESS ~ PROD + DAY + GENDER, data = soup)`, the
# probability of each rating per product (R: `emmeans(fit, ~ SURENESS | PROD, mode = "prob")`):

# %%
soup_clm = ordstats.OrdinalModel.from_formula("SURENESS ~ PROD + DAY + GENDER", soup).fit()
soup_emm = soup_clm.emmeans("~ SURENESS | PROD", mode="prob").summary_frame()
r_soup = r_table("clm_soup", 'emmeans(fit, ~ SURENESS | PROD, mode = "prob")')
print(
    soup_emm[["SURENESS", "PROD"]]
    .assign(ordstats=soup_emm["prob"], R=r_soup["prob"], SE=soup_emm["SE"], R_SE=r_soup["SE"])
    .round(5)
    .to_string(index=False)
)

# %% [markdown]
# ## 5. Mixed models: a typical judge or the population
#
# R's `clmm` has no `predict`, so marginaleffects cannot serve it, and emmeans sets the random
# effects to zero.  ordstats' verbs and `emmeans` take `re_form=`: `0` is a typical judge
# (random effect zero, as emmeans), `"marginal"` averages over the judges' distribution by
# quadrature (population-averaged probabilities, which R only approximates with
# `bias.adjust`).  emmeans' issue #154 published, for `rating ~ temp + contact + (1|judge)`,
# `emmeans(fit, ~ rating | temp, mode = "prob")`: cold 0.09761 (SE 0.05626), 0.52233
# (0.09102).

# %%
clmm = ordstats.OrdinalModel.from_formula("rating ~ temp + contact + (1|judge)", wine).fit()
typical = clmm.emmeans("~ rating | temp", mode="prob").summary_frame()
marginal = clmm.emmeans("~ rating | temp", mode="prob", re_form="marginal").summary_frame()
r_clmm = r_table("clmm_wine", 'emmeans(fit, ~ rating | temp, mode = "prob")')
print(
    typical[["rating", "temp"]]
    .assign(
        typical=typical["prob"],
        SE=typical["SE"],
        R=r_clmm["prob"],
        R_SE=r_clmm["SE"],
        marginal=marginal["prob"],
        marginal_SE=marginal["SE"],
    )
    .round(5)
    .to_string(index=False)
)
print(
    f"largest difference to R: estimate {(typical['prob'] - r_clmm['prob']).abs().max():.1e}, "
    f"SE {(typical['SE'] - r_clmm['SE']).abs().max():.1e}"
)

# %% [markdown]
# ordstats fits clmm with its own optimiser, and R's standard errors come from a numerical
# Hessian, so the two agree to about five decimals rather than to rounding error.  The
# population average is flatter than the typical judge: the judges' spread moves probability
# from the middle ratings to the extremes.  Contact's effect on P(rating >= 4), for a typical
# judge and for the population:

# %%
for re_form in (0, "marginal"):
    row = clmm.avg_comparisons(variables="contact", type="exceedance", re_form=re_form)
    row = row.set_index("group").loc["4"]
    print(
        f"re_form={re_form!r}: {row['estimate']:.3f} "
        f"(95% CI {row['conf_low']:.3f} to {row['conf_high']:.3f})"
    )

# %% [markdown]
# ## 6. Plots
#
# marginaleffects' `plot_predictions`, `plot_comparisons` and `plot_slopes`: the same
# arguments as the verbs (`by=` averages, `condition=` a grid), with their intervals.  With
# `--plot FILE` the script saves them; `draw=False` returns the numbers instead.
# Stacked bars of the predicted distribution of the rating per temperature (x) and contact
# (panels):

# %%
if args.plot:
    save(plot_predictions(res, by=["temp", "contact"]), args.plot)

# %% [markdown]
# Contact's effect on `P(rating >= j)` per temperature, a colour per level `j`:

# %%
if args.plot:
    save(
        plot_comparisons(res, "contact", by="temp", type="exceedance"),
        figure_path("comparisons"),
    )

# %% [markdown]
# The pairwise differences of section 3 with their Tukey-adjusted 95% intervals (latent
# scale; an interval that misses 0 is significant after the adjustment):

# %%
if args.plot:
    import matplotlib.pyplot as plt

    pairs = tukey.summary_frame()
    figure, ax = plt.subplots(figsize=(6, 3))
    rows = np.arange(len(pairs))[::-1]
    ax.errorbar(
        pairs["estimate"],
        rows,
        xerr=[pairs["estimate"] - pairs["asymp.LCL"], pairs["asymp.UCL"] - pairs["estimate"]],
        fmt="o",
        capsize=3,
    )
    ax.axvline(0.0, color="grey", linewidth=0.8)
    ax.set_yticks(rows, pairs["contrast"])
    ax.set_xlabel("difference on the latent scale (Tukey-adjusted 95% interval)")
    figure.tight_layout()
    save(figure, figure_path("pairs"))

# %% [markdown]
# The slope of the expected soup rating in easiness along the easiness scale, per product:

# %%
if args.plot:
    save(
        plot_slopes(soup_fit, "easy", condition=["easy", "PROD"], type="expected"),
        figure_path("slopes"),
    )
