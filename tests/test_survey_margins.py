"""Average predicted probabilities of survey fits against R (issue 27).

References: tests/r/survey_margins_refs.R -> tests/data/survey/margins_refs.json: svyolr
(precise optim Hessian) on apiclus1 and apistrat, ``mealcat ~ avg.ed + stype``; the
average over the fitted rows of the predicted probabilities (each row once, or weighted by
the sampling weights) and its delta-method SE with ``vcov(fit)``.

The estimand: ``avg_predictions`` of a survey fit averages over the fitted rows as given
(fixed) and takes the uncertainty of the coefficients only, from the design-based
covariance -- marginaleffects' ``avg_predictions(svyolr_fit, wts = weights(design))``.  Pass
the sampling weights as ``wts=`` for a population-weighted average; the default counts each
row once, as marginaleffects.  The population mean of the predicted probabilities with the
rows' own sampling variability (Stata's ``margins, vce(unconditional)``; R: svyrecvar of
its influence functions, ``sampled_se``) is a different quantity with larger SEs.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import ordstats
from tests.test_survey import DATA, load, r_order

REFS = json.loads((DATA / "margins_refs.json").read_text())
FORMULA = "mealcat ~ avg_ed + stype"


@pytest.fixture(scope="module")
def fits() -> dict[str, ordstats.SurveyResults]:
    c1, st = load("apiclus1"), load("apistrat")
    designs = {
        "clus1": ordstats.SurveyDesign(c1, weights="pw", psu="dnum", fpc="fpc"),
        "strat": ordstats.SurveyDesign(st, weights="pw", strata="stype", fpc="fpc"),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # rows with missing avg.ed are dropped, as R
        return {
            name: ordstats.OrdinalModel.from_formula(FORMULA, design=design).fit()
            for name, design in designs.items()
        }


def averaged(res: ordstats.SurveyResults, wts: str):
    rows = res.model.design.row_index
    weights = res.survey_design.data.loc[rows, "pw"] if wts == "pw" else None
    return res.avg_predictions(wts=weights)


@pytest.mark.parametrize("name", sorted(REFS))
def test_avg_predictions_equal_the_delta_method_with_svyolr_vcov(fits, name):
    ref = REFS[name]
    res = fits[name.split("_")[0]]
    order = r_order(len(ref["coef"]))
    np.testing.assert_allclose(res.params, np.array(ref["coef"])[order], rtol=1e-6)
    var = np.array(ref["var"])[np.ix_(order, order)]
    np.testing.assert_allclose(res.bse, np.sqrt(np.diag(var)), rtol=1e-4)
    table = averaged(res, ref["wts"])
    assert list(table["group"]) == ref["levels"]
    np.testing.assert_allclose(table["estimate"], ref["estimate"], rtol=1e-6)
    np.testing.assert_allclose(table["std_error"], ref["std_error"], rtol=1e-4)


@pytest.mark.parametrize("name", [n for n in sorted(REFS) if n.endswith("_pw")])
def test_rows_are_fixed_not_sampled(fits, name):
    # the population-mean estimand (rows sampled too) has larger SEs: not what ordstats gives
    ref = REFS[name]
    table = averaged(fits[name.split("_")[0]], "pw")
    sampled = np.array(ref["sampled_se"])
    assert np.all(sampled > table["std_error"].to_numpy() * 1.02)
