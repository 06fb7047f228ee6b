"""Domains with one PSU in a stratum, against R's survey.adjust.domain.lonely (issue 27).

References: tests/r/survey_domain_refs.R -> tests/data/survey/domain_refs.json: R's
``vcov(svytotal(~api00 + meals, subset(design, domain)))`` (svyrecvar of the domain's
weighted values, the meat of a linearisation) under each ``survey.lonely.psu`` choice with
``survey.adjust.domain.lonely`` FALSE ("plain") and TRUE ("adjusted"), and svyolr on the
apiclus1 domains.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import ordstats
from ordstats.errors import OrdstatsWarning
from ordstats.results.survey_variance import linearization_meat
from tests.test_survey import DATA, F_STYPE, load, r_order

REFS = json.loads((DATA / "domain_refs.json").read_text())


def design_of(ref: dict) -> ordstats.SurveyDesign:
    options = {
        "lonely_psu": ref["lonely_psu"],
        "adjust_domain_lonely": ref["adjust_domain_lonely"],
    }
    data = load(ref["data"])
    if ref["data"] == "apistrat":
        design = ordstats.SurveyDesign(data, weights="pw", strata="stype", fpc="fpc", **options)
    elif ref["data"] == "apiclus1":
        data["half"] = np.where(data["dnum"] < 400, "low", "high")
        design = ordstats.SurveyDesign(data, weights="pw", strata="half", psu="dnum", **options)
    else:
        design = ordstats.SurveyDesign(data, psu=["dnum", "snum"], fpc=["fpc1", "fpc2"], **options)
    return design.subset(data["row"].isin(ref["rows"]))


def domain_total_variance(design: ordstats.SurveyDesign) -> np.ndarray:
    positions = np.flatnonzero(design.domain)
    values = design.data[["api00", "meals"]].to_numpy(float)[positions]
    return linearization_meat(design.weights[positions, None] * values, positions, design)


@pytest.mark.parametrize("name", sorted(REFS))
def test_domain_total_variance_equals_svyrecvar(name):
    ref = REFS[name]
    design = design_of(ref)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        meat = domain_total_variance(design)
    lonely = [w for w in caught if "only one PSU in the domain" in str(w.message)]
    assert len(lonely) == len(ref["warnings"])  # R warns once per such stratum, as here
    assert all(issubclass(w.category, OrdstatsWarning) for w in lonely)
    expected = np.array(ref["total_var"], dtype=float)
    if np.isnan(expected).all():
        # "average" at stage 2 inside a district: no other stratum to average over (R: NaN)
        assert np.isnan(meat).all()
    else:
        np.testing.assert_allclose(meat, expected, rtol=1e-10)


def test_adjusted_domains_differ_from_plain_where_r_does():
    # the option changes "adjust" and "average" only, as in R's numbers
    for case in ("strat", "clus1", "clus2"):
        plain = np.array(REFS[f"{case}_adjust_plain"]["total_var"])
        for lonely in ("adjust", "average"):
            adjusted = np.array(REFS[f"{case}_{lonely}_adjusted"]["total_var"], dtype=float)
            assert not np.allclose(adjusted, plain, rtol=1e-6, equal_nan=False)
        for lonely in ("remove", "certainty"):
            same = np.array(REFS[f"{case}_{lonely}_adjusted"]["total_var"])
            np.testing.assert_allclose(same, plain, rtol=1e-12)


@pytest.mark.parametrize("lonely", ["remove", "adjust", "certainty", "average"])
@pytest.mark.parametrize("adjusted", [False, True])
def test_svyolr_on_a_domain_with_a_lonely_psu(lonely, adjusted):
    ref = REFS[f"clus1_{lonely}_{'adjusted' if adjusted else 'plain'}"]
    design = design_of(ref)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # rows with missing avg.ed; the lonely stratum
        res = ordstats.OrdinalModel.from_formula(F_STYPE, design=design).fit()
    order = r_order(len(ref["svyolr"]["coef"]))
    coef = np.array(ref["svyolr"]["coef"])[order]
    var = np.array(ref["svyolr"]["var"])[np.ix_(order, order)]
    np.testing.assert_allclose(res.params, coef, rtol=1e-6)
    np.testing.assert_allclose(res.bse, np.sqrt(np.diag(var)), rtol=1e-4)


def test_adjust_domain_lonely_must_be_a_flag():
    with pytest.raises(ordstats.OrdstatsError, match="adjust_domain_lonely must be True or"):
        ordstats.SurveyDesign(load("apistrat"), weights="pw", adjust_domain_lonely="yes")
