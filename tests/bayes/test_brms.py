"""ordstats' default priors and posteriors against brms (tests/r/brms_wine.R, vendored).

brms' draws (2 chains x 1,000 or 2,000) carry Monte-Carlo error of about 2-3% of a posterior
SD in the means; ordstats' importance draws a little less: means must agree within 15% of
the SD and SDs within 10%.  Signs follow brms' Stan code (ordstats.estimation.bayes): sratio
``b = -b_brms``; acat ``alpha = -thres``, ``gamma = bcs``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import ordstats

REFERENCE = json.loads(
    (Path(__file__).parent.parent / "data" / "reference" / "bayes" / "brms_wine.json").read_text()
)
DRAWS = 4000

#: ordstats' model, its prior, and each brms parameter as (ordstats' name, sign)
CASES = {
    "cum": (
        ("rating ~ temp + contact", {}),
        {
            "b_Intercept[1]": ("1|2", 1),
            "b_Intercept[4]": ("4|5", 1),
            "b_tempwarm": ("temp[T.warm]", 1),
            "b_contactyes": ("contact[T.yes]", 1),
        },
    ),
    "sratio": (
        ("rating ~ temp + contact", {"family": "sratio"}),
        {
            "b_Intercept[1]": ("1:2", 1),
            "b_Intercept[4]": ("4:5", 1),
            "b_tempwarm": ("temp[T.warm]", -1),
            "b_contactyes": ("contact[T.yes]", -1),
        },
    ),
    "thres": (
        ("rating | thres(gr = contact) ~ temp", {}),
        {
            "b_Intercept[no,1]": ("1|2[contact=no]", 1),
            "b_Intercept[yes,3]": ("3|4[contact=yes]", 1),
            "b_tempwarm": ("temp[T.warm]", 1),
        },
    ),
    "cs_prior": (
        ("rating ~ temp", {"family": "acat", "nominal": "~ contact"}),
        {
            "b_Intercept[1]": ("1:2", -1),
            "b_Intercept[4]": ("4:5", -1),
            "b_tempwarm": ("temp[T.warm]", 1),
            "bcs_contactyes[1]": ("1:2:contact[T.yes]", 1),
            "bcs_contactyes[3]": ("3:4:contact[T.yes]", 1),
        },
    ),
}


def _prior(name):
    given = REFERENCE[name].get("given_prior")
    if not given:
        return "default"
    return {p["class"]: p["prior"] for p in given}


def _brms_class_priors(name):
    """brms' class-wide priors of get_prior() ('' is flat)."""
    rows = REFERENCE[name]["prior"]
    return {r["class"]: r["prior"] or "flat" for r in rows if not r["coef"] and not r["group"]}


@pytest.mark.parametrize("name", ["cum", "sratio", "judge", "thres", "cs_prior"])
def test_default_priors_are_brms_get_prior(wine, name):
    formula = REFERENCE[name]["formula"]
    family = REFERENCE[name]["family"]
    nominal = {"nominal": "~ contact"} if "cs(" in formula else {}
    formula = formula.replace(" + cs(contact)", "")
    if "|" in formula.split("~")[1]:
        model = ordstats.OrdinalMixedModel.from_formula(formula, wine)
    else:
        model = ordstats.OrdinalModel.from_formula(formula, wine, family=family, **nominal)
    table = model.fit(prior="default").prior_summary
    ours = {c: set(t.str.removesuffix(" (default)")) for c, t in table.groupby("class")["prior"]}
    assert ours == {c: {p} for c, p in _brms_class_priors(name).items()}


@pytest.mark.parametrize("name", list(CASES))
def test_posterior_means_and_sds_equal_brms(wine, name):
    (formula, kwargs), names = CASES[name]
    model = ordstats.OrdinalModel.from_formula(formula, wine, **kwargs)
    post = model.fit(prior=_prior(name)).posterior(DRAWS, seed=1)
    mean, sd = post.mean(), post.std()
    ref = REFERENCE[name]
    for brms, (ours, sign) in names.items():
        assert abs(sign * mean[ours] - ref["mean"][brms]) < 0.15 * ref["sd"][brms], brms
        assert sd[ours] == pytest.approx(ref["sd"][brms], rel=0.1), brms


def test_random_intercept_sd_equals_brms(wine):
    model = ordstats.OrdinalMixedModel.from_formula("rating ~ temp + contact + (1 | judge)", wine)
    post = model.fit(prior="default").posterior(DRAWS, seed=1)
    ref = REFERENCE["judge"]
    for brms, ours in (("b_tempwarm", "temp[T.warm]"), ("b_Intercept[2]", "2|3")):
        assert abs(post.mean()[ours] - ref["mean"][brms]) < 0.15 * ref["sd"][brms], brms
    s = np.exp(post.draws["log(sd):judge:(Intercept)"].to_numpy())
    mean = post.weights @ s
    sd = np.sqrt(post.weights @ (s - mean) ** 2)
    brms_mean, brms_sd = ref["mean"]["sd_judge__Intercept"], ref["sd"]["sd_judge__Intercept"]
    assert abs(mean - brms_mean) < 0.15 * brms_sd
    assert sd == pytest.approx(brms_sd, rel=0.15)
