"""Raked and non-linearly calibrated designs against R's rake, calibrate and svyolr.

References: tests/r/survey_rake_refs.R -> tests/data/survey/rake_refs.json: ``rake`` on
stype and a made-up school size (R's default control and a tight one), ``calibrate`` on
``~stype + enroll`` with ``calfun = "raking"``, ``"logit"`` (bounds) and ``"linear"``
with bounds, on apiclus1 and apistrat (svyolr with a precise optim Hessian, and
``vcov(svytotal(~api00 + meals))``, the linearisation's meat) and on apiclus1's
jackknife (each replicate raked or calibrated; the replicate variance from converged
refits).
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats.errors import DataError, OrdstatsWarning, SpecificationError
from tests.test_survey import DATA, r_order
from tests.test_survey_calibration import (
    assert_equals_r,
    domain_of,
    plain_design,
    sample,
)
from tests.test_survey_domain import domain_total_variance

REFS = json.loads((DATA / "rake_refs.json").read_text())
LINEARIZED = sorted(name for name, ref in REFS.items() if "repweights" not in ref)
REPLICATED = sorted(name for name, ref in REFS.items() if "repweights" in ref)
FORMULA = "mealcat ~ avg_ed + mobility"
ORDER = r_order(5)


def data_of(ref: dict) -> pd.DataFrame:
    """The rows R kept, with stype's 0/1 columns (R's model matrix) for calibration."""
    data = sample(ref)
    return data.assign(**{f"stype{s}": (data["stype"] == s).astype(float) for s in "HM"})


def adjusted(ref: dict, design):
    if "rake" in ref:
        populations = [pd.DataFrame(p) for p in ref["rake"]["population"]]
        return design.rake(
            ref["rake"]["margins"], populations, maxit=ref["maxit"], epsilon=ref["epsilon"]
        )
    return design.calibrate(
        ref["population"],
        calfun=ref["calfun"],
        bounds=ref["bounds"],
        epsilon=ref["epsilon"],
        trim=ref.get("trim"),
        bounds_const=ref.get("bounds_const", False),
    )


def design_of(ref: dict):
    ref = {"domain": None, **ref}
    data = data_of(ref)
    if "repweights" not in ref:
        return domain_of(ref, adjusted(ref, plain_design(ref, data)))
    design = ordstats.ReplicateDesign(
        data,
        np.array(ref["repweights"]),
        weights="pw",
        type=ref["type"],
        scale=ref["scale"],
        rscales=ref["rscales"],
    )
    return adjusted(ref, design)


def fit(design):
    return ordstats.OrdinalModel.from_formula(FORMULA, design=design).fit(disp=False)


@pytest.mark.parametrize("name", sorted(REFS))
def test_weights_equal_r(name):
    ref = REFS[name]
    design = design_of(ref)
    weights = np.array(ref["weights"])
    # R's domain gives the rows outside weight 0; they keep their weights here
    np.testing.assert_allclose(design.weights[weights > 0], weights[weights > 0], rtol=1e-10)
    if "repweights" in ref:
        expected = np.array(ref["post_repweights"])
        atol = 1e-12 * np.abs(expected).max()  # the jackknife's zero weights stay zero
        np.testing.assert_allclose(design.repweights, expected, rtol=1e-10, atol=atol)
    assert design.degf() == ref["degf"]


@pytest.mark.parametrize("name", LINEARIZED)
def test_linearisation_equals_svyrecvar_and_svyolr(name):
    ref = REFS[name]
    design = design_of(ref)
    expected = np.array(ref["total_var"])
    np.testing.assert_allclose(domain_total_variance(design), expected, rtol=1e-9)
    res = fit(design)
    np.testing.assert_allclose(res.params, np.array(ref["coef"])[ORDER], rtol=1e-7)
    expected = np.array(ref["var"])[np.ix_(ORDER, ORDER)]
    np.testing.assert_allclose(res.bse, np.sqrt(np.diag(expected)), rtol=1e-6)
    # near-zero covariances: on the correlation scale (R's optim Hessian, step 1e-5)
    scale = np.outer(res.bse, res.bse)
    np.testing.assert_allclose(res.cov_params() / scale, expected / scale, atol=1e-6)


@pytest.mark.parametrize("name", REPLICATED)
def test_replicate_variance_equals_r(name):
    ref = REFS[name]
    # R's polr refits (BFGS, reltol 1e-15) are good to ~1e-6, as in the other replicate tests
    assert_equals_r(fit(design_of(ref)), ref, coef_rtol=1e-7)


def test_raked_margins_are_the_population_s():
    ref = REFS["clus1_rake_tight"]
    design = design_of(ref)
    for column, population in zip(ref["rake"]["margins"], ref["rake"]["population"], strict=True):
        counts = pd.Series(design.weights).groupby(design.data[column].to_numpy()).sum()
        frame = pd.DataFrame(population).set_index(column)["Freq"]
        np.testing.assert_allclose(counts[frame.index], frame, rtol=1e-10)


def test_raking_calibration_has_exponential_ratios_and_reaches_the_totals():
    ref = REFS["clus1_raking_tight"]
    design = design_of(ref)
    data = data_of(ref)
    ratio = np.log(design.weights / data["pw"].to_numpy())
    columns = np.column_stack([np.ones(len(data)), data[["stypeH", "stypeM", "enroll"]]])
    lam = np.linalg.lstsq(columns, ratio, rcond=None)[0]
    np.testing.assert_allclose(columns @ lam, ratio, atol=1e-12)
    totals = columns.T @ design.weights
    np.testing.assert_allclose(totals, list(ref["population"].values()), rtol=1e-12)


def test_bounded_ratios_stay_in_the_bounds():
    for name in ("clus1_logit", "clus1_linear_bounded"):
        ref = REFS[name]
        g = design_of(ref).weights / data_of(ref)["pw"].to_numpy()
        lower, upper = ref["bounds"]
        assert g.min() >= lower - 1e-12 and g.max() <= upper + 1e-12
    assert g.max() == pytest.approx(upper)  # the linear one reaches its upper bound


def test_summary_names_the_raking_and_the_calibration_function():
    text = str(fit(design_of(REFS["strat_rake"])).summary())
    assert re.search(r"Raked on:\s+stype \+ size", text)
    text = str(fit(design_of(REFS["clus1_logit"])).summary())
    assert re.search(r"Calibrated on:\s+\(Intercept\), stypeH, stypeM, enroll \(logit in", text)


def test_rake_that_does_not_converge_warns_as_r():
    ref = REFS["clus1_rake_tight"]
    with pytest.warns(OrdstatsWarning, match="raking did not converge after 1 sweeps"):
        design = design_of({**ref, "maxit": 1})
    # one sweep: the last margin is exact, the first not yet
    counts = pd.Series(design.weights).groupby(design.data["size"].to_numpy()).sum()
    frame = pd.DataFrame(ref["rake"]["population"][1]).set_index("size")["Freq"]
    np.testing.assert_allclose(counts[frame.index], frame, rtol=1e-12)


@pytest.mark.parametrize("name", ["clus1_linear_trim", "jk1_linear_trim"])
def test_unbounded_linear_calibration_is_trimmed_where_r_ignores_trim(name):
    """R's calibrate drops trim= in unbounded linear calibration (its regcalibrate path);
    here it trims, as R does with bounds wide enough to take grake's path."""
    ref = REFS[name]
    trimmed, wide = design_of({**ref, "bounds": None}), design_of(ref)
    np.testing.assert_allclose(trimmed.weights, wide.weights, rtol=1e-10)
    untrimmed = design_of({**ref, "bounds": None, "trim": None})
    assert np.sum(trimmed.weights) == pytest.approx(np.sum(untrimmed.weights), rel=1e-12)
    g = untrimmed.weights / data_of(ref)["pw"].to_numpy()
    outside = (g < 0.8) | (g > 1.2)
    assert outside.sum() == 30  # R's "30 weights were trimmed"
    clipped = trimmed.weights[outside] / data_of(ref)["pw"].to_numpy()[outside]
    np.testing.assert_allclose(clipped, np.clip(g[outside], 0.8, 1.2), rtol=1e-12)


def test_bounds_const_bounds_the_weights_not_their_ratios():
    for name in ("strat_linear_const", "strat_logit_const"):
        weights = design_of(REFS[name]).weights
        assert weights.min() >= 12 - 1e-9 and weights.max() <= 50 + 1e-9
    assert weights.min() > 12 and weights.max() < 50  # logit: strictly inside
    text = str(fit(design_of(REFS["strat_logit_const"])).summary())
    assert re.search(r"enroll \(logit, weights in \[12, 50\]\)", text)


def test_bounds_const_bounds_each_replicates_weights():
    """R ignores bounds.const on a svyrep.design; here each replicate's weights are bounded."""
    ref = REFS["jk1_raking"]
    design = design_of({**ref, "calfun": "linear", "bounds": [15, 100], "bounds_const": True})
    assert design.weights.min() >= 15 - 1e-9 and design.weights.max() <= 100 + 1e-9
    replicate = design.repweights[design.repweights > 0]
    assert replicate.min() >= 15 - 1e-9 and replicate.max() <= 100 + 1e-9
    free = design_of({**ref, "calfun": "linear", "bounds": None})
    assert free.repweights.max() > 100  # the bounds bind (replicate 9)


def test_a_trim_that_every_ratio_is_outside_clips_them_all_as_r():
    """Before: ZeroDivisionError (no row left to share the clipped weight); R's calibrate
    clips every ratio (raking on apiclus1 trimmed to [2, 3]: "157 weights were trimmed",
    every ratio 2)."""
    ref = REFS["clus1_raking_trim"]
    design = design_of({**ref, "trim": [2.0, 3.0]})
    np.testing.assert_allclose(design.weights / data_of(ref)["pw"].to_numpy(), 2.0, rtol=1e-12)


def test_summary_names_the_trim():
    text = str(fit(design_of(REFS["clus1_raking_trim"])).summary())
    assert re.search(r"Calibrated on:.*\(raking, trimmed to \[0.85, 1.1\]\)", text)
    text = str(fit(design_of({**REFS["clus1_linear_trim"], "bounds": None})).summary())
    assert re.search(r"enroll \(trimmed to \[0.8, 1.2\]\)", text)


@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        ({"bounds": [50, 12], "bounds_const": True}, SpecificationError, "new weights need"),
        ({"bounds_const": "yes"}, SpecificationError, "bounds_const"),
        ({"trim": [1.2, 0.8]}, SpecificationError, "trim .lower, upper. needs lower < upper"),
        ({"trim": 1.2}, SpecificationError, "trim must be a pair"),
        ({"trim": ["a", 2]}, SpecificationError, "trim.0. must be a number"),
        ({"calfun": "probit"}, SpecificationError, "calfun must be one of"),
        ({"calfun": "logit", "bounds": None}, SpecificationError, "needs finite bounds"),
        ({"bounds": [1.2, 3.0]}, SpecificationError, "lower < 1 < upper"),
        ({"bounds": "wide"}, SpecificationError, "must be a pair"),
        ({"epsilon": 0.0}, SpecificationError, "epsilon must be positive"),
        ({"calfun": "logit", "bounds": [0.9, 1.1]}, DataError, "did not reach the totals"),
        ({"calfun": "linear", "bounds": [-1.0, 1.2]}, DataError, "did not reach the totals"),
    ],
)
def test_bad_calibration_choices_are_named(change, error, message):
    with pytest.raises(error, match=message):
        design_of({**REFS["clus1_raking"], **change})


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"maxit": 0}, "maxit must be a positive whole number"),
        ({"maxit": 2.5}, "maxit must be a positive whole number"),
        ({"epsilon": -1}, "epsilon must be positive"),
    ],
)
def test_bad_rake_controls_are_named(change, message):
    with pytest.raises(SpecificationError, match=message):
        design_of({**REFS["clus1_rake"], **change})


def test_rake_needs_as_many_populations_as_margins():
    ref = REFS["clus1_rake"]
    design = plain_design(ref, data_of(ref))
    with pytest.raises(SpecificationError, match="lists of the same length"):
        design.rake(["stype", "size"], [pd.DataFrame(ref["rake"]["population"][0])])
    with pytest.raises(SpecificationError, match="rake the full design, then"):
        design.subset(design.data["yr.rnd"] == "No").rake(["stype"], [None])


def test_bounds_as_an_array_equal_a_tuple():
    ref = REFS["clus1_logit"]
    design = plain_design(ref, data_of(ref))
    a = design.calibrate(ref["population"], calfun="logit", bounds=np.array(ref["bounds"]))
    b = design.calibrate(ref["population"], calfun="logit", bounds=tuple(ref["bounds"]))
    np.testing.assert_array_equal(a.weights, b.weights)


def test_bounds_after_r_s_rescaling_are_announced():
    # totals 1000 times the sample's: R's grake rescales the weights first, and says so
    ref = REFS["clus1_raking"]
    design = plain_design(ref, data_of(ref))
    totals = {name: 1000 * value for name, value in ref["population"].items()}
    columns = np.column_stack([np.ones(len(design.data)), design.data[list(totals)[1:]]])
    scale = np.mean(np.array(list(totals.values())) / (columns.T @ design.weights))
    with pytest.warns(OrdstatsWarning, match=re.escape(f"rescaled by {scale:.3g}")):
        raked = design.calibrate(totals, calfun="raking", bounds=(0.5, 2.5))
    np.testing.assert_allclose(columns.T @ raked.weights, list(totals.values()), rtol=1e-7)
    ratio = raked.weights / design.weights / scale
    assert ratio.min() >= 0.5 and ratio.max() <= 2.5


def test_margins_with_different_totals_are_announced():
    ref = REFS["clus1_rake"]
    populations = [pd.DataFrame(p) for p in ref["rake"]["population"]]
    populations[1]["Freq"] *= 2
    design = plain_design(ref, data_of(ref))
    with pytest.warns(OrdstatsWarning, match="add up to different totals"):
        raked = design.rake(ref["rake"]["margins"], populations)
    assert raked.weights.sum() == pytest.approx(populations[1]["Freq"].sum())
