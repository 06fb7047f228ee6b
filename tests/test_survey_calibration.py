"""Post-stratified and calibrated designs against R's postStratify, calibrate and svyolr.

References: tests/r/survey_poststratify_refs.R -> tests/data/survey/poststratify_refs.json:
the post-stratified weights, svyolr (precise optim Hessian), svyolr on the same weights
as an ordinary design, and ``vcov(svytotal(~api00 + meals, design))`` on apiclus1 (with a
domain), apistrat (two post-strata columns) and apiclus2 (two stages);
tests/r/survey_calibrate_refs.R -> tests/data/survey/calibrate_refs.json: the same for
linear calibration (``calibrate(..., calfun = "linear")``) on enroll and api00.
"""

from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats.errors import DataError, SpecificationError
from tests.test_survey import DATA, load, r_order
from tests.test_survey_domain import domain_total_variance

REFS = json.loads((DATA / "poststratify_refs.json").read_text())
CAL_REFS = json.loads((DATA / "calibrate_refs.json").read_text())
FORMULA = "mealcat ~ avg_ed + mobility"
ORDER = r_order(5)


def sample(ref: dict) -> pd.DataFrame:
    """The rows R kept (those with mealcat, avg.ed and mobility), with the made-up size."""
    name = "apiclus1" if "apiclus1" in ref["design"] else "apiclus2"
    name = "apistrat" if "apistrat" in ref["design"] else name
    data = load(name)
    data = data[data["row"].isin(ref["rows"])].reset_index(drop=True)
    size = pd.cut(data["enroll"], [0, 400, 800, np.inf], labels=["small", "mid", "large"])
    return data.assign(size=size.astype(str))


def plain_design(ref: dict, data: pd.DataFrame, weights: str = "pw") -> ordstats.SurveyDesign:
    if "apiclus1" in ref["design"]:
        return ordstats.SurveyDesign(data, weights=weights, psu="dnum", fpc="fpc")
    if "apistrat" in ref["design"]:
        return ordstats.SurveyDesign(data, weights=weights, strata="stype", fpc="fpc")
    if weights == "pw":  # apiclus2's weights are the fpc's
        return ordstats.SurveyDesign(data, psu=["dnum", "snum"], fpc=["fpc1", "fpc2"])
    return ordstats.SurveyDesign(data, weights=weights, psu=["dnum", "snum"], fpc=["fpc1", "fpc2"])


def domain_of(ref: dict, design: ordstats.SurveyDesign) -> ordstats.SurveyDesign:
    assert ref["domain"] in (None, "yr.rnd == 'No'")
    return design if ref["domain"] is None else design.subset(design.data["yr.rnd"] == "No")


def post_stratified(ref: dict) -> ordstats.SurveyDesign:
    data = sample(ref)
    design = plain_design(ref, data).post_stratify(ref["by"], pd.DataFrame(ref["population"]))
    return domain_of(ref, design)


def fit(design: ordstats.SurveyDesign) -> ordstats.SurveyResults:
    return ordstats.OrdinalModel.from_formula(FORMULA, design=design).fit()


@pytest.mark.parametrize("name", sorted(REFS))
def test_post_stratified_weights_equal_r(name):
    ref = REFS[name]
    np.testing.assert_allclose(post_stratified(ref).weights, ref["weights"], rtol=1e-12)


@pytest.mark.parametrize("name", sorted(REFS))
def test_svyolr_on_a_post_stratified_design(name):
    ref = REFS[name]
    res = fit(post_stratified(ref))
    assert_equals_r(res, ref)
    assert res.design_df == ref["degf"]


def assert_equals_r(res, ref: dict, coef_rtol: float = 1e-6, var_rtol: float = 1e-5) -> None:
    """A fit's estimates and covariance against R's (``coef``, ``var``, R's order)."""
    np.testing.assert_allclose(res.params, np.array(ref["coef"])[ORDER], rtol=coef_rtol)
    expected = np.array(ref["var"])[np.ix_(ORDER, ORDER)]
    np.testing.assert_allclose(res.cov_params(), expected, rtol=var_rtol)


@pytest.mark.parametrize("name", sorted(REFS))
def test_the_same_weights_as_plain_weights_give_r_s_plain_variance(name):
    # what a user got before post_stratify(): the calibrated weights as sampling weights
    ref = REFS[name]
    data = sample(ref).assign(w=ref["weights"])
    res = fit(domain_of(ref, plain_design(ref, data, "w")))
    plain = np.array(ref["plain_var"])[np.ix_(ORDER, ORDER)]
    np.testing.assert_allclose(res.params, np.array(ref["plain_coef"])[ORDER], rtol=1e-6)
    np.testing.assert_allclose(res.cov_params(), plain, rtol=1e-5)
    assert not np.allclose(np.diag(plain), np.diag(np.array(ref["var"])), rtol=1e-3)


@pytest.mark.parametrize("name", sorted(REFS))
def test_total_variance_equals_svyrecvar_with_post_strata(name):
    meat = domain_total_variance(post_stratified(REFS[name]))
    np.testing.assert_allclose(meat, REFS[name]["total_var"], rtol=1e-10)


def calibrated(ref: dict) -> ordstats.SurveyDesign:
    return domain_of(ref, plain_design(ref, sample(ref)).calibrate(ref["population"]))


@pytest.mark.parametrize("name", sorted(CAL_REFS))
def test_linear_calibration_equals_r(name):
    ref = CAL_REFS[name]
    design = calibrated(ref)
    weights = np.array(ref["weights"])
    # R's domain gives the rows outside weight 0; they keep their weights here
    np.testing.assert_allclose(design.weights[weights > 0], weights[weights > 0], rtol=1e-10)
    expected = np.array(ref["total_var"])
    # a total of a calibration variable has variance 0: rounding noise in both
    atol = 1e-12 * np.abs(expected).max()
    np.testing.assert_allclose(domain_total_variance(design), expected, rtol=1e-8, atol=atol)
    res = fit(design)
    np.testing.assert_allclose(res.params, np.array(ref["coef"])[ORDER], rtol=1e-6)
    expected = np.array(ref["var"])[np.ix_(ORDER, ORDER)]
    np.testing.assert_allclose(res.cov_params(), expected, rtol=1e-5)
    assert res.design_df == ref["degf"]


def test_calibrated_totals_are_the_population_s():
    ref = CAL_REFS["strat_enroll_api00"]
    design = calibrated(ref)
    totals = design.data[["enroll", "api00"]].to_numpy(float).T @ design.weights
    np.testing.assert_allclose(totals, [ref["population"]["enroll"], ref["population"]["api00"]])
    assert design.weights.sum() == pytest.approx(ref["population"]["(Intercept)"])


def test_calibrating_on_the_post_strata_is_post_stratifying():
    ref = REFS["clus1_stype"]
    data = sample(ref)
    for level in "EHM":
        data[f"is_{level}"] = (data["stype"] == level).astype(float)
    counts = {f"is_{row['stype']}": row["Freq"] for row in ref["population"]}
    post = plain_design(ref, data).post_stratify("stype", pd.DataFrame(ref["population"]))
    cal = plain_design(ref, data).calibrate(counts)
    np.testing.assert_allclose(cal.weights, post.weights, rtol=1e-12)
    np.testing.assert_allclose(domain_total_variance(cal), domain_total_variance(post), rtol=1e-10)


@pytest.mark.parametrize(
    ("population", "error", "message"),
    [
        ([1.0, 2.0], SpecificationError, "must map column names"),
        ({"(Intercept)": 6194, "nothere": 1.0}, DataError, "'nothere' is not a column"),
        ({"(Intercept)": 6194, "stype": 1.0}, DataError, "calibration must be numbers"),
        ({"enroll": 1e6, "twice": 2e6}, DataError, "collinear"),
        ({"(Intercept)": 6194, "enroll": 10.0}, DataError, r"zero or negative.*bounds=\(L, U\)"),
        ({"enroll": float("nan")}, DataError, "finite"),
    ],
)
def test_bad_calibration_totals_are_named(population, error, message):
    ref = CAL_REFS["clus1_enroll"]
    data = sample(ref).assign(twice=lambda d: 2 * d["enroll"])
    with pytest.raises(error, match=message):
        plain_design(ref, data).calibrate(population)


def test_population_as_a_series_equals_the_frame():
    ref = REFS["strat_stype_size"]
    data = sample(ref)
    frame = pd.DataFrame(ref["population"])
    series = frame.set_index(["stype", "size"])["Freq"]
    a = plain_design(ref, data).post_stratify(["stype", "size"], frame)
    b = plain_design(ref, data).post_stratify(["stype", "size"], series)
    np.testing.assert_array_equal(a.weights, b.weights)


def test_post_stratifying_twice_applies_both_in_turn():
    ref = REFS["clus1_stype"]
    data = sample(ref)
    population = pd.DataFrame(ref["population"])
    once = plain_design(ref, data).post_stratify("stype", population)
    twice = once.post_stratify("stype", population)
    np.testing.assert_allclose(twice.weights, once.weights, rtol=1e-14)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(fit(twice).bse, fit(once).bse, rtol=1e-8)


@pytest.mark.parametrize(
    ("population", "message"),
    [
        ({"E": 4421, "H": 755, "M": 1018}, "must be a pandas DataFrame"),
        (pd.DataFrame({"stype": ["E", "H"], "Freq": [4421, 755]}), r"no population count.*'M'"),
        (pd.DataFrame({"stype": list("EHMX"), "Freq": [1, 2, 3, 4]}), r"no row in the sample.*'X'"),
        (pd.DataFrame({"stype": list("EHM"), "Freq": [1, 0, 3]}), r"zero one.*'H'"),
        (pd.DataFrame({"stype": list("EHM"), "N": [1, 2, 3]}), r"lacks \['Freq'\]"),
        (pd.DataFrame({"stype": list("EHE"), "Freq": [1, 2, 3]}), "repeats a post-stratum"),
        (pd.DataFrame({"stype": [1, 2, 3], "Freq": [1, 2, 3]}), "labels of another type"),
    ],
)
def test_bad_population_counts_are_named(population, message):
    design = plain_design(REFS["clus1_stype"], sample(REFS["clus1_stype"]))
    with pytest.raises((DataError, SpecificationError), match=message):
        design.post_stratify("stype", population)


def test_calibrate_before_the_domain():
    ref = REFS["clus1_stype"]
    design = plain_design(ref, sample(ref))
    domain = design.subset(design.data["yr.rnd"] == "No")
    with pytest.raises(SpecificationError, match="post-stratify the full design, then"):
        domain.post_stratify("stype", pd.DataFrame(ref["population"]))
    with pytest.raises(SpecificationError, match="calibrate the full design, then"):
        domain.calibrate({"enroll": 1e6})


def test_summary_names_the_post_strata_and_calibration():
    text = str(fit(post_stratified(REFS["strat_stype_size"])).summary())
    assert re.search(r"Post-strata:\s+stype x size", text)
    text = str(fit(calibrated(CAL_REFS["strat_enroll_api00"])).summary())
    assert re.search(r"Calibrated on:\s+\(Intercept\), enroll, api00", text)


REP_REFS = json.loads((DATA / "replicate_calibration_refs.json").read_text())


@pytest.mark.parametrize("name", sorted(REP_REFS))
def test_post_stratified_and_calibrated_replicate_designs_equal_r(name):
    """R's postStratify and calibrate of a svyrep.design adjust the full-sample and each
    replicate's weights to the population counts or totals
    (tests/r/survey_replicate_calibration_refs.R)."""
    ref = REP_REFS[name]
    data = load("apiclus1")
    data = data[data["row"].isin(ref["rows"])].reset_index(drop=True)
    design = ordstats.ReplicateDesign(
        data,
        repweights=np.array(ref["repweights"]),
        weights="pw",
        type=ref["type"],
        scale=ref["scale"],
        rscales=ref["rscales"],
        mse=ref["mse"],
    )
    if "by" in ref:
        design = design.post_stratify(ref["by"], pd.DataFrame(ref["population"]))
    else:
        design = design.calibrate(ref["population"])
    np.testing.assert_allclose(design.weights, ref["weights"], rtol=1e-10)
    repweights = np.array(ref["post_repweights"])
    atol = 1e-10 * np.abs(repweights).max()  # JK1's zero weights stay (about) zero
    np.testing.assert_allclose(design.repweights, repweights, rtol=1e-10, atol=atol)
    assert design.degf() == ref["degf"]
    res = ordstats.OrdinalModel.from_formula(FORMULA, design=design).fit(disp=False)
    np.testing.assert_allclose(res.params, np.array(ref["coef"])[ORDER], rtol=1e-6)
    expected = np.array(ref["var_newton"])[np.ix_(ORDER, ORDER)]
    np.testing.assert_allclose(res.cov_params(), expected, rtol=1e-5)
    assert res.df_resid == ref["df_residual"]
    label = r"Post-strata:\s+stype" if "by" in ref else r"Calibrated on:\s+\(Intercept\), enroll"
    assert re.search(label, str(res.summary()))


def test_a_replicate_without_weight_in_a_post_stratum_is_named():
    ref = REP_REFS["clus1_JK1"]
    data = load("apiclus1")
    data = data[data["row"].isin(ref["rows"])].reset_index(drop=True)
    # a post-stratum of one district's schools: its jackknife replicate drops them all
    district = data["dnum"].iloc[0]
    data["cell"] = np.where(data["dnum"] == district, "one", "rest")
    counts = pd.Series({"one": 50.0, "rest": 6000.0})
    design = ordstats.ReplicateDesign(
        data, repweights=np.array(ref["repweights"]), weights="pw", type="JK1", scale=14 / 15
    )
    with pytest.raises(DataError, match=r"replicate \d+ \('rep\d+'\) has no positive weight"):
        design.post_stratify("cell", counts)
