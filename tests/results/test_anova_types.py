"""ordstats.anova(fit, type=...): R ordinal's anova() of one clm (Wald tests of type III, II, I).

Reference: ``tests/r/anova_types.R`` (vendored in ``tests/data/reference/anova_types/``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ordstats
from ordstats import OrdinalMixedModel, OrdinalModel, SurveyDesign, datasets
from ordstats.errors import SpecificationError
from ordstats.results.anova_types import doolittle_upper
from tests._parity import dataset

REFERENCE = Path(__file__).parents[1] / "data" / "reference" / "anova_types"


def _reference(name: str) -> dict[str, Any]:
    return json.loads((REFERENCE / f"{name}.json").read_text())


def _soup(formula: str, **options: Any) -> Any:
    data = datasets.load("soup")
    data["AG"] = data["AGEGROUP"].cat.as_ordered()
    return OrdinalModel.from_formula(formula, data, **options).fit()


def _bank(formula: str) -> Any:
    return OrdinalModel.from_formula(formula, dataset("bankwages")).fit()


CASES: dict[str, Callable[[], Any]] = {
    "housing": lambda: OrdinalModel.from_formula(
        "Sat ~ Infl * Type + Cont", datasets.load("housing"), weights="Freq"
    ).fit(),
    "soup_three_way": lambda: _soup("SURENESS ~ PROD * DAY * GENDER + AGEGROUP"),
    "soup_ordered_predictor": lambda: _soup("SURENESS ~ PROD * AG"),
    "soup_sum_contrasts": lambda: _soup(
        "SURENESS ~ PROD * GENDER + DAY",
        contrasts={"PROD": "contr.sum", "GENDER": "contr.helmert"},
    ),
    "soup_nominal_scale": lambda: _soup(
        "SURENESS ~ PROD * GENDER + AGEGROUP", nominal="~ DAY", scale="~ COLD", link="probit"
    ),
    "bankwages_numeric": lambda: _bank("job ~ education * gender + minority + education:minority"),
    "bankwages_not_hierarchical": lambda: _bank("job ~ education:gender + minority"),
    # poly() is a matrix (R's dataClasses "nmatrix.2"), not numeric: gender is contained
    # in poly(education, 2):gender for Type II
    "bankwages_poly": lambda: _bank("job ~ poly(education, 2) * gender + minority"),
    "wine_one_term": lambda: OrdinalModel.from_formula(
        "rating ~ temp", datasets.load("wine")
    ).fit(),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("kind", ["III", "II", "I", "marginal", "2b"])
def test_wald_tests_of_each_type_equal_r(name: str, kind: str) -> None:
    ref = _reference(name)
    res = CASES[name]()
    assert res.llf == pytest.approx(ref["logLik"], rel=1e-6)
    expected = {
        key: value if isinstance(value, list) or key == "heading" else [value]
        for key, value in ref["types"][kind].items()
    }  # R's toJSON unboxes one-term tables
    table = ordstats.anova(res, type=kind)
    assert sorted(table.index) == sorted(expected["terms"])
    table = table.loc[expected["terms"]]
    np.testing.assert_array_equal(table["Df"], expected["df"])
    # the statistics inherit the estimates' convergence (R's clm stops at gradtol 1e-6)
    np.testing.assert_allclose(table["Chisq"], expected["chisq"], rtol=2e-6)
    np.testing.assert_allclose(table["Pr(>Chisq)"], expected["p"], rtol=1e-4)
    assert table.attrs["heading"] == expected["heading"].strip()


def test_one_model_defaults_to_r_anova_clm_type_i_and_marginal_is_wald_test_terms() -> None:
    # R's anova.clm(object, ..., type = c("I", "II", "III", ...)): type I by default
    res = CASES["soup_ordered_predictor"]()
    default = ordstats.anova(res)
    assert default.attrs["heading"].startswith("Type I ")
    expected = _reference("soup_ordered_predictor")["types"]["I"]["chisq"]
    np.testing.assert_allclose(default["Chisq"], expected, rtol=2e-6)
    np.testing.assert_allclose(ordstats.anova(res, type=1)["Chisq"], default["Chisq"], rtol=1e-12)
    type3 = ordstats.anova(res, type="III")
    marginal = ordstats.anova(res, type="marginal")
    np.testing.assert_allclose(marginal["Chisq"], res.wald_test_terms()["chi2"], rtol=1e-10)
    # with contr.poly the type III test of PROD differs from its marginal test (as R)
    assert type3.loc["PROD", "Chisq"] < 0.5 * marginal.loc["PROD", "Chisq"]


def test_doolittle_factor_reproduces_the_gram_matrix() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(size=(40, 5))
    gram = x.T @ x
    upper = doolittle_upper(gram)
    lower = upper.T
    np.testing.assert_allclose(np.diag(lower), 1.0)
    u = np.linalg.solve(lower, gram)
    np.testing.assert_allclose(np.tril(u, -1), 0.0, atol=1e-9)
    np.testing.assert_allclose(lower @ u, gram, rtol=1e-12)


def test_single_model_anova_refuses_what_r_has_not() -> None:
    wine = datasets.load("wine")
    res = OrdinalModel.from_formula("rating ~ temp * contact", wine).fit()
    with pytest.raises(SpecificationError, match="type="):
        ordstats.anova(res, type="IV")
    other = OrdinalModel.from_formula("rating ~ temp", wine).fit()
    with pytest.raises(SpecificationError, match="one model"):
        ordstats.anova(res, other, type="II")
    mixed = OrdinalMixedModel.from_formula("rating ~ temp + (1|judge)", wine).fit()
    with pytest.raises(SpecificationError, match="mixed model"):
        ordstats.anova(mixed)
    design = SurveyDesign(wine.assign(w=1.0 + (wine["judge"].cat.codes % 3)), weights="w")
    survey = OrdinalModel.from_formula("rating ~ temp", design=design).fit()
    with pytest.raises(SpecificationError, match="reg_term_test"):
        ordstats.anova(survey)
    penalised = OrdinalModel.from_formula("rating ~ temp", wine).fit_regularized(alpha=0.1)
    with pytest.raises(SpecificationError, match="penalised"):
        ordstats.anova(penalised)
    chunked = OrdinalModel.from_formula(
        "rating ~ temp * contact", wine, chunksize=30, contrasts={"temp": "contr.sum"}
    ).fit()
    with pytest.raises(SpecificationError, match=r"type III .* in chunks"):
        ordstats.anova(chunked, type="III")
    inline = OrdinalModel.from_formula("rating ~ C(temp, contr.sum) * contact", wine).fit()
    with pytest.raises(SpecificationError, match="contrasts="):
        ordstats.anova(inline, type="III")
    assert len(ordstats.anova(inline)) == len(ordstats.anova(inline, type="II")) == 3


LR_CASES: dict[str, Callable[[], Any]] = {
    "housing": CASES["housing"],
    "bankwages_numeric": lambda: _bank("job ~ education * gender + minority"),
    "soup_ordered_predictor": lambda: _soup("SURENESS ~ PROD * AG + DAY"),
    "probit_by_hand": lambda: OrdinalModel.from_formula(
        "Sat ~ Infl * Type + Cont", datasets.load("housing"), weights="Freq", link="probit"
    ).fit(),
}


@pytest.mark.parametrize("name", sorted(LR_CASES))
@pytest.mark.parametrize("kind", ["II", "III"])
def test_lr_tests_equal_car_anova_of_polr(name: str, kind: str) -> None:
    ref = _reference(f"lr_{name}")
    res = LR_CASES[name]()
    assert res.llf == pytest.approx(ref["logLik"], rel=1e-6)
    expected = ref["types"][kind]
    table = ordstats.anova(res, type=kind, test="LR").loc[expected["terms"]]
    np.testing.assert_array_equal(table["Df"], expected["df"])
    # polr's BFGS stops about 1e-5 from the maximum in each refit's deviance
    np.testing.assert_allclose(table["LR Chisq"], expected["lr"], rtol=1e-5, atol=2e-5)
    if "p" in expected:
        np.testing.assert_allclose(table["Pr(>Chisq)"], expected["p"], rtol=1e-4)
    assert table.attrs["heading"] == f"Analysis of Deviance Table (Type {kind} tests)"


def test_lr_tests_default_to_type_ii_and_refuse_type_i() -> None:
    res = CASES["housing"]()
    default = ordstats.anova(res, test="LR")
    assert default.attrs["heading"].endswith("(Type II tests)")
    with pytest.raises(SpecificationError, match="'II'"):
        ordstats.anova(res, type="I", test="LR")
    with pytest.raises(SpecificationError, match="test="):
        ordstats.anova(res, test="F")
