"""MASS::survey and datasets::esoph against R (tests/r/survey_esoph_parity.R).

Ordered predictors coded by R's ``contr.poly`` (``Exer.L``, ``Exer.Q``), rows with NAs
dropped as ``na.omit`` drops them, ``as.integer()`` of an ordered factor, clm and polr
fits, profile intervals, predictions on new data given as text, drop1, anova,
nominal/scale tests and emmeans over the ordered factor.  Estimates and
log-likelihoods to 1e-6, standard errors to 1e-4.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import ordstats
from ordstats.results.margins.emmeans import emmeans
from tests._parity import dataset

R = json.loads((Path(__file__).parent / "data" / "r" / "survey_esoph_parity.json").read_text())
FORMULA = "Smoke ~ Sex + Exer + Age"
USED = ["Smoke", "Sex", "Exer", "Age"]


def _numbers(values: list) -> np.ndarray:
    return np.array([np.nan if v in ("NA", None) else float(v) for v in values])


def _table(part: dict) -> np.ndarray:
    return np.array([_numbers(row) for row in part["values"]])


def _fit(formula: str, data: pd.DataFrame, **kwargs: object) -> ordstats.OrdinalResults:
    return ordstats.OrdinalModel.from_formula(formula, data, **kwargs).fit()


def _check_fit(res: ordstats.OrdinalResults, ref: dict, names: list[str] | None = None) -> None:
    if names is not None:
        assert list(res.params.index) == names
    np.testing.assert_allclose(res.params, list(ref["coef"].values()), rtol=1e-6, atol=1e-6)
    if "se" in ref:
        np.testing.assert_allclose(res.bse, list(ref["se"].values()), rtol=1e-4)
        assert res.aic == pytest.approx(ref["aic"], rel=1e-8)
        assert res.nobs == ref["nobs"]
    assert res.llf == pytest.approx(ref["loglik"], rel=1e-8)


@pytest.fixture(scope="module")
def complete() -> pd.DataFrame:
    return dataset("survey_students").dropna(subset=USED)


@pytest.fixture(scope="module")
def fit(complete: pd.DataFrame) -> ordstats.OrdinalResults:
    return _fit(FORMULA, complete)


@pytest.fixture(scope="module")
def esoph_fit() -> ordstats.OrdinalResults:
    return _fit("alcgp ~ agegp + tobgp", dataset("esoph"), weights="ncontrols")


THRESHOLDS = ["Never|Occas", "Occas|Regul", "Regul|Heavy"]


def test_ordered_predictor_is_coded_as_r_polynomials(fit: ordstats.OrdinalResults) -> None:
    _check_fit(fit, R["clm"], [*THRESHOLDS, "Sex[T.Male]", "Exer.L", "Exer.Q", "Age"])


@pytest.mark.parametrize(
    ("case", "formula", "dropped"),
    [
        ("with_na", FORMULA, "2 of 237 rows"),
        ("height", FORMULA + " + Height", "29 of 237 rows.*'Height' \\(28\\)"),
    ],
)
def test_rows_with_nas_are_dropped_as_r_drops_them_and_said(case, formula, dropped) -> None:
    data = dataset("survey_students")
    with pytest.warns(ordstats.errors.MissingDataWarning, match=dropped):
        res = _fit(formula, data)
    _check_fit(res, R[case])
    kept = data.dropna(subset=[*USED, *(["Height"] if case == "height" else [])])
    r_dropped = np.array(R[case]["dropped"]) - 1
    assert sorted(set(range(len(data))) - set(kept.index)) == list(r_dropped)


def test_unordered_and_treatment_coded_exer_match_r(complete: pd.DataFrame) -> None:
    data = complete.assign(ExerU=complete["Exer"].cat.as_unordered())
    _check_fit(_fit("Smoke ~ Sex + ExerU + Age", data), R["unordered"])
    treatment = _fit("Smoke ~ Sex + C(Exer, contr.treatment) + Age", complete)
    _check_fit(treatment, R["treatment"])


def test_profile_intervals_are_exact_where_r_interpolates(fit, complete) -> None:
    """R's confint.clm interpolates a spline through the profile, polr's too (both
    within 1.2e-4 here); ordstats' end points are where the signed root is exactly z."""
    ci = fit.conf_int(method="profile").iloc[3:]
    np.testing.assert_allclose(ci, _table(R["clm_profile"]), atol=1e-4)
    np.testing.assert_allclose(ci, _table(R["polr_profile"]), atol=2e-4)
    z = stats.norm.ppf(0.975)
    for bound in ci.loc["Age"]:
        fixed = _fit("Smoke ~ Sex + Exer", complete, offset=bound * complete["Age"].to_numpy())
        assert np.sqrt(2 * (fit.llf - fixed.llf)) == pytest.approx(z, abs=1e-6)


def test_predictions_on_new_data_given_as_text(fit: ordstats.OrdinalResults) -> None:
    new = pd.DataFrame(
        {"Sex": ["Female", "Male", "Male"], "Exer": ["None", "Freq", "Some"], "Age": [20, 25, 18.5]}
    )
    np.testing.assert_allclose(fit.predict(new), R["predict"], rtol=1e-6)


def test_drop1_anova_and_term_tests_match_r(fit, complete) -> None:
    drop = fit.drop1(test="Chisq")
    np.testing.assert_allclose(drop.to_numpy(), _table(R["drop1"]), rtol=1e-6)
    lr = ordstats.anova(_fit("Smoke ~ Sex + Age", complete), fit)
    np.testing.assert_allclose(lr.to_numpy(), _table(R["anova"]), rtol=1e-6)
    for name, table in (("nominal_test", fit.nominal_test()), ("scale_test", fit.scale_test())):
        np.testing.assert_allclose(table.to_numpy(), _table(R[name]), rtol=1e-6, err_msg=name)


def _check_emm(grid, ref: dict, columns: dict[str, str], labels: str) -> None:
    table = grid.summary().table
    assert [str(v) for v in table[labels]] == ref[labels]
    for ours, theirs in columns.items():
        tol = 1e-4 if ours == "SE" else 1e-6
        np.testing.assert_allclose(table[ours], _numbers(ref[theirs]), rtol=tol, err_msg=ours)


def test_emmeans_over_the_ordered_factor(fit: ordstats.OrdinalResults) -> None:
    prob = emmeans(fit, "~ Exer | Smoke", mode="prob")
    _check_emm(prob, R["emm_prob"], {"prob": "prob", "SE": "SE"}, "Exer")
    poly_prob = prob.contrast("poly")
    _check_emm(poly_prob, R["emm_poly_prob"], {"estimate": "estimate", "SE": "SE"}, "contrast")
    latent = emmeans(fit, "Exer")
    _check_emm(latent, R["emm"], {"emmean": "emmean", "SE": "SE"}, "Exer")
    same = {"estimate": "estimate", "SE": "SE", "p.value": "p.value"}
    _check_emm(latent.pairs(), R["emm_pairs"], same, "contrast")
    _check_emm(latent.contrast("poly"), R["emm_poly"], same, "contrast")


def test_esoph_ordered_predictors_and_emmeans(esoph_fit: ordstats.OrdinalResults) -> None:
    _check_fit(esoph_fit, R["esoph_clm"])
    drop = esoph_fit.drop1(test="Chisq")
    np.testing.assert_allclose(drop.to_numpy(), _table(R["esoph_drop1"]), rtol=1e-6)
    prob = emmeans(esoph_fit, "~ tobgp | alcgp", mode="prob")
    _check_emm(prob, R["esoph_emm_prob"], {"prob": "prob", "SE": "SE"}, "tobgp")
    poly = emmeans(esoph_fit, "agegp").contrast("poly")
    _check_emm(poly, R["esoph_emm_poly"], {"estimate": "estimate", "SE": "SE"}, "contrast")


def test_as_integer_of_an_ordered_factor_is_named_as_r_names_it() -> None:
    """Before: the coefficient read ``as_integer(agegp)`` (the Python spelling the formula
    is evaluated with) where R's reads ``as.integer(agegp)``."""
    esoph = dataset("esoph")
    names = [*R["esoph_integer"]["coef"]]
    assert "as.integer(agegp)" in names
    res = _fit("alcgp ~ as.integer(agegp) + tobgp", esoph, weights="ncontrols")
    _check_fit(res, R["esoph_integer"], names)
    assert "as.integer(agegp)" in res.drop1().index
    _check_fit(res, R["esoph_polr_integer"], names)


def test_anova_and_summary_spell_formulas_as_r(complete: pd.DataFrame) -> None:
    """Before: anova rows and attrs["models"] read ``as_integer(agegp)`` and ``I(Age**2)``,
    the summary header ``Scale: ~ as_numeric(Age)`` (the spelling formulaic evaluates)."""
    esoph = dataset("esoph")
    small = _fit("alcgp ~ tobgp", esoph, weights="ncontrols")
    full = _fit("alcgp ~ as.integer(agegp) + tobgp", esoph, weights="ncontrols")
    table = ordstats.anova(small, full)
    assert list(table.attrs["models"]["formula"]) == R["esoph_anova_models"]["formula:"]
    assert list(table.index) == R["esoph_anova_models"]["formula:"]
    np.testing.assert_allclose(table.to_numpy(), _table(R["esoph_anova"]), rtol=1e-6)
    powered = _fit("Smoke ~ Sex + I(Age^2)", complete, scale="~ as.numeric(Age)")
    label = ordstats.anova(_fit("Smoke ~ Sex", complete), powered).index[1]
    assert label == "Smoke ~ Sex + I(Age^2), scale: ~as.numeric(Age)"
    header = str(powered.summary())
    assert "~ as.numeric(Age)" in header and "as_numeric" not in header
