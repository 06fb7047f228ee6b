"""Designs with trimmed weights against R's trimWeights and svyolr.

References: tests/r/survey_trim_refs.R -> tests/data/survey/trim_refs.json:
``trimWeights(design, upper, lower, strict)`` on apistrat and on apiclus1 calibrated to
``~stype + enroll`` (plain and strict): the trimmed weights, svyolr (precise optim
Hessian) and ``vcov(svytotal(~api00 + meals))``, the linearisation's meat.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

import ordstats
from ordstats.errors import DataError, SpecificationError
from tests.test_survey import DATA, r_order
from tests.test_survey_calibration import plain_design, sample
from tests.test_survey_domain import domain_total_variance

REFS = json.loads((DATA / "trim_refs.json").read_text())
FORMULA = "mealcat ~ avg_ed + mobility"
ORDER = r_order(5)


def design_of(ref: dict) -> ordstats.SurveyDesign:
    data = sample(ref)
    data = data.assign(**{f"stype{s}": (data["stype"] == s).astype(float) for s in "HM"})
    design = plain_design(ref, data)
    if ref.get("calibration"):
        design = design.calibrate(ref["population"])
    return design.trim_weights(upper=ref["upper"], lower=ref["lower"], strict=ref["strict"])


@pytest.mark.parametrize("name", sorted(REFS))
def test_trimmed_weights_and_their_variance_equal_r(name):
    ref = REFS[name]
    design = design_of(ref)
    np.testing.assert_allclose(design.weights, ref["weights"], rtol=1e-10)
    np.testing.assert_allclose(domain_total_variance(design), ref["total_var"], rtol=1e-9)
    res = ordstats.OrdinalModel.from_formula(FORMULA, design=design).fit(disp=False)
    np.testing.assert_allclose(res.params, np.array(ref["coef"])[ORDER], rtol=1e-7)
    expected = np.array(ref["var"])[np.ix_(ORDER, ORDER)]
    np.testing.assert_allclose(res.bse, np.sqrt(np.diag(expected)), rtol=1e-6)
    assert design.degf() == ref["degf"]


def test_a_trimming_pass_shares_the_weight_equally_and_strict_repeats_it():
    weights = np.array([10.0, 20.0, 30.0, 100.0])
    data = sample(REFS["strat_trim"]).head(4).assign(w=weights)
    one = ordstats.SurveyDesign(data, weights="w").trim_weights(upper=50, lower=15)
    # 100 -> 50 and 10 -> 15 free 45; the other two rows gain 22.5 each
    np.testing.assert_allclose(one.weights, [15.0, 42.5, 52.5, 50.0])
    strict = one.trim_weights(upper=50, lower=15, strict=True)
    assert strict.weights.max() <= 50 and strict.weights.min() >= 15
    assert strict.weights.sum() == pytest.approx(weights.sum())


def test_replicate_designs_trim_every_replicate_and_keep_zero_weights():
    data = sample(REFS["strat_trim"]).head(6)
    rep = np.array([[2.0, 0.0], [1.0, 1.0], [1.0, 1.0], [1.0, 2.0], [1.0, 1.0], [1.0, 1.0]])
    design = ordstats.ReplicateDesign(
        data.assign(w=[10.0, 20.0, 30.0, 40.0, 50.0, 60.0]),
        rep,
        weights="w",
        type="JK1",
        scale=0.5,
        combined_weights=False,  # rep holds multipliers of the weights
    )
    trimmed = design.trim_weights(upper=45, lower=15)
    # the full sample: 10 -> 15 (+5) and 50, 60 -> 45 (-20): 20, 30, 40 gain 15 / 3 each
    np.testing.assert_allclose(trimmed.weights, [15, 25, 35, 45, 45, 45])
    # replicate 1, [20, 20, 30, 40, 50, 60]: 50, 60 -> 45 free 20, shared by four rows;
    # replicate 2, [0, 20, 30, 80, 50, 60]: the zero (outside the replicate) stays zero
    # and takes no share of the 55 freed
    np.testing.assert_allclose(trimmed.repweights[:, 0], [25, 25, 35, 45, 45, 45])
    np.testing.assert_allclose(trimmed.repweights[:, 1], [0, 47.5, 57.5, 45, 45, 45])


def test_the_summary_names_the_trimming():
    design = design_of(REFS["clus1_cal_trim_strict"])
    text = str(ordstats.OrdinalModel.from_formula(FORMULA, design=design).fit().summary())
    assert re.search(r"Weights trimmed to:\s+\[29, 45\], strict", text)


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"upper": 10, "lower": 20}, SpecificationError, "needs lower < upper"),
        ({"upper": "high"}, SpecificationError, "upper must be a number"),
        ({"upper": 40, "lower": 38, "strict": True}, DataError, "strict trimming cannot end"),
        ({"upper": 30, "lower": 29}, DataError, "every weight of the sample is outside"),
        ({"upper": 40, "strict": "yes"}, SpecificationError, "strict"),
    ],
)
def test_bad_limits_are_named(options, error, message):
    ref = REFS["clus1_cal_trim"]
    design = plain_design(ref, sample(ref))  # every weight 33.85
    with pytest.raises(error, match=message):
        design.trim_weights(**options)


def test_trimming_a_domain_is_refused():
    ref = REFS["strat_trim"]
    design = plain_design(ref, sample(ref))
    domain = design.subset(design.data["yr.rnd"] == "No")
    with pytest.raises(SpecificationError, match="trim the weights of the full design"):
        domain.trim_weights(upper=40)
