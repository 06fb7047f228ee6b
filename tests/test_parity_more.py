"""Parity with R's clm and polr on seven more data sets (tests/r/parity_more_datasets.R).

brglm2::stemcell, HSAUR3::CHFLS, pscl::admit, HSAUR3::Lanza, AER::BankWages,
lmerTest::carrots and AER::Affairs, fitted with the less-used features: the five
links, equidistant/symmetric/symmetric2 thresholds, nominal and scale effects,
polynomial contrasts of ordered predictors (also in ``nominal=`` and ``scale=``, and
with a level that ``subset=`` leaves without rows), offsets in the location and
scale formulas, weights, ``subset=``, an interaction with an empty cell and
``start=``.  Compared: estimates, standard errors, logLik, AIC, BIC, nobs, fitted
values, predictions on new rows (probabilities with standard errors and intervals,
cumulative probabilities, R's ``eta1``, classes), profile and Wald intervals,
``drop1``, ``nominal_test``, ``scale_test`` and ``anova`` of a nested model.
Where R is wrong (tests/data/reference/README.md) the test says what it checks instead.
"""

from __future__ import annotations

import json
import re
import warnings
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats.errors import OrdstatsWarning
from tests import _reference as ref
from tests._parity import dataset
from tests.test_parity_sweep import r_style

REFERENCE = Path(__file__).parent / "data" / "reference" / "parity_more"
W = {"weights": "frequency"}
ADMIT = "score ~ `gre.quant` + `gre.verbal`"

#: case: (data set, formula, keyword arguments); R's call is in the case's ``r_call``
CASES: dict[str, tuple[str, str, dict[str, Any]]] = {
    "stemcell_poly": ("stemcell", "research ~ religion + gender", W),
    "stemcell_cauchit": ("stemcell", "research ~ religion + gender", {**W, "link": "cauchit"}),
    "stemcell_loglog_sym2": (
        "stemcell",
        "research ~ religion + gender",
        {**W, "link": "loglog", "threshold": "symmetric2"},
    ),
    "stemcell_nominal": ("stemcell", "research ~ religion", {**W, "nominal": "~ gender"}),
    "stemcell_scale": (
        "stemcell",
        "research ~ religion + gender",
        {**W, "scale": "~ religion", "link": "probit"},
    ),
    "stemcell_interaction": ("stemcell", "research ~ religion * gender", W),
    "polr_stemcell": ("stemcell", "research ~ religion + gender", W),
    "chfls_poly": ("chfls", "R_happy ~ R_health + R_age + log1p(R_income)", {}),
    "chfls_probit_equi": (
        "chfls",
        "R_happy ~ R_health + R_edu + R_age",
        {"link": "probit", "threshold": "equidistant"},
    ),
    "chfls_scale_subset": (
        "chfls",
        "R_happy ~ R_health + R_age",
        {"scale": "~ R_age", "subset": "R_age < 45"},
    ),
    "chfls_offset_formula": ("chfls", "R_happy ~ R_health + offset(R_age/20)", {"link": "cloglog"}),
    "chfls_scale_offset": (
        "chfls",
        "R_happy ~ R_health",
        {"scale": "~ offset(R_age/100) + log1p(R_income)"},
    ),
    "chfls_edu_region": ("chfls", "R_happy ~ R_edu * R_region", {}),
    "chfls_nominal_poly": ("chfls", "R_happy ~ R_age", {"nominal": "~ R_health"}),
    "chfls_subset_unused_level": ("chfls", "R_happy ~ R_health + R_age", {"subset": "R_age < 30"}),
    "chfls_subset_unused_nominal": (
        "chfls",
        "R_happy ~ R_age",
        {"nominal": "~ R_health", "subset": "R_age < 30", "link": "probit"},
    ),
    "polr_chfls": ("chfls", "R_happy ~ R_health + R_age", {"link": "cloglog"}),
    "admit_cloglog": ("admit", ADMIT + " + ap + pt + female", {"link": "cloglog"}),
    "admit_nominal": ("admit", ADMIT, {"nominal": "~ ap"}),
    "admit_symmetric": (
        "admit",
        "score ~ I(`gre.quant`/100) + I(`gre.verbal`/100) + female",
        {"threshold": "symmetric", "link": "cauchit"},
    ),
    "admit_start": ("admit", "score ~ `gre.quant` + female", {}),
    "admit_no_start": ("admit", "score ~ `gre.quant` + female", {}),
    "admit_equi_nominal": (
        "admit",
        "score ~ `gre.quant`",
        {"nominal": "~ female", "threshold": "equidistant"},
    ),
    "lanza_interaction": ("lanza", "classification ~ study * treatment", {}),
    "lanza_empty_cell": (
        "lanza",
        "classification ~ study * treatment",
        {"subset": '~((study == "IV") & (treatment == "Placebo"))'},
    ),
    "lanza_symmetric2": (
        "lanza",
        "classification ~ study + treatment",
        {"threshold": "symmetric2", "link": "probit"},
    ),
    "lanza_scale": ("lanza", "classification ~ treatment", {"scale": "~ treatment"}),
    "bank_loglog": ("bankwages", "job ~ education + gender + minority", {"link": "loglog"}),
    "bank_interaction": ("bankwages", "job ~ education + gender * minority", {}),
    "bank_scale": ("bankwages", "job ~ education + minority", {"scale": "~ gender"}),
    "bank_offset_subset": (
        "bankwages",
        "job ~ gender + offset(education/4)",
        {"subset": 'minority == "no"', "link": "cloglog"},
    ),
    "bank_weights_subset": (
        "bankwages",
        "job ~ education + gender",
        {"subset": "education > 8", "weights": "education/12", "link": "probit"},
    ),
    "carrots_ordered_age": ("carrots", "Preference ~ sens1 + sens2 + AgeO + Gender", {}),
    "carrots_sensory_probit": (
        "carrots",
        "Preference ~ Sweetness + Bitter + Crisp",
        {"link": "probit"},
    ),
    "carrots_nominal_scale": (
        "carrots",
        "Preference ~ sens1 + sens2",
        {"scale": "~ Homesize", "nominal": "~ Gender"},
    ),
    "carrots_equidistant": (
        "carrots",
        "Preference ~ sens2 + Age",
        {"threshold": "equidistant", "link": "loglog"},
    ),
    "affairs_cauchit_scale": (
        "affairs",
        "rating ~ yearsmarried + children + religiousness",
        {"scale": "~ children", "link": "cauchit"},
    ),
    "affairs_ordered_relig": ("affairs", "rating ~ relig + yearsmarried + gender", {}),
    "affairs_weights": (
        "affairs",
        "rating ~ yearsmarried + children",
        {"weights": "education/10", "link": "probit"},
    ),
    "affairs_symmetric_scale": (
        "affairs",
        "rating ~ yearsmarried + children",
        {"scale": "~ gender", "threshold": "symmetric"},
    ),
    "affairs_relig_scale_poly": (
        "affairs",
        "rating ~ yearsmarried",
        {"scale": "~ relig", "link": "loglog"},
    ),
    "polr_affairs": (
        "affairs",
        "rating ~ yearsmarried + children + religiousness",
        {"link": "probit"},
    ),
    "polr_affairs_offset": (
        "affairs",
        "rating ~ yearsmarried + offset(religiousness/5) + children",
        {"subset": 'gender == "male"', "weights": "education/10"},
    ),
}

#: the smaller model of each case's ``small_call`` (R's anova(small, fit))
SMALL: dict[str, tuple[str, dict[str, Any]]] = {
    "stemcell_poly": ("research ~ gender", W),
    "stemcell_nominal": ("research ~ religion + gender", W),
    "stemcell_interaction": ("research ~ religion + gender", W),
    "chfls_poly": ("R_happy ~ R_age + log1p(R_income)", {}),
    "chfls_probit_equi": (
        "R_happy ~ R_health + R_age",
        {"link": "probit", "threshold": "equidistant"},
    ),
    "admit_cloglog": (ADMIT, {"link": "cloglog"}),
    "lanza_interaction": ("classification ~ study + treatment", {}),
    "bank_loglog": ("job ~ education", {"link": "loglog"}),
    "carrots_ordered_age": ("Preference ~ sens1 + sens2 + Gender", {}),
    "affairs_ordered_relig": ("rating ~ yearsmarried + gender", {}),
}

#: clm's cauchit fits put the outer thresholds at -1e5/+1e5 (reference README): its
#: maximum is below the exact one by up to 5e-6 relative and its estimates are up to
#: 6e-3 relative from it; only the log-likelihood and the estimates are compared
CAUCHIT = {"stemcell_cauchit", "admit_symmetric", "affairs_cauchit_scale"}
#: nominal effects that leave a level without rows in a cell: the thresholds there grow
#: without bound, R's Hessian is singular (its standard errors are NA, its predict()
#: with se.fit fails) and the estimates along the flat direction differ (up to 3e-2);
#: the log-likelihood and the fitted probabilities agree to 1e-9
UNBOUNDED = {
    "admit_nominal",
    "chfls_nominal_poly",
    "carrots_nominal_scale",
    "chfls_subset_unused_nominal",
}
POLR = {c for c in CASES if c.startswith("polr_")}
CLM = sorted(set(CASES) - POLR - CAUCHIT - UNBOUNDED)
START = [-2.0, 0.0, 1.0, 2.0, 0.001, 0.0]  # R's start = of admit_start

#: term-test rows where R's refit stops with crossing thresholds of a nominal effect
#: (a level without rows where ap or pt is 1): R keeps the row, ordstats gives NA with
#: a warning that the refit failed; the models of admit_nominal's refits all have the
#: unbounded thresholds of the fit itself
OURS_NA = {
    ("admit_cloglog", "nominal_test", "ap"),
    ("admit_cloglog", "nominal_test", "pt"),
    ("admit_nominal", "nominal_test", "gre.quant"),
    ("admit_nominal", "scale_test", "gre.quant"),
    ("admit_nominal", "scale_test", "gre.verbal"),
}
#: threshold="symmetric2": R's nominal_test refits without the location effect of the
#: tested term (its nominal effects move only the spacings) and reports negative LRTs
SYMMETRIC2 = {"stemcell_loglog_sym2", "lanza_symmetric2"}


@cache
def reference(case: str) -> dict[str, Any]:
    return dict(json.loads((REFERENCE / f"{case}.json").read_text(), parse_constant=float))


def quietly(call: Any, *args: Any, **kwargs: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrdstatsWarning)
        return call(*args, **kwargs)


def _fit(data_name: str, formula: str, kwargs: dict[str, Any], **fit_kwargs: Any) -> Any:
    data = dataset(data_name)
    kwargs = dict(kwargs)
    if "/" in str(kwargs.get("weights", "")):  # R's weights = education/10
        kwargs["weights"] = data.eval(kwargs["weights"])
    model = quietly(ordstats.OrdinalModel.from_formula, formula, data, **kwargs)
    return quietly(model.fit, **fit_kwargs)


@cache
def fitted(case: str) -> Any:
    start = {"start_params": START} if case == "admit_start" else {}
    return _fit(*CASES[case], **start)


_STRUCTURED = re.compile(r"^(threshold\.\d+|spacing(?:\.\d+)?|central(?:\.\d+)?)(?::(.+))?$")


def r_names(res: Any) -> list[str]:
    """R's names of the parameters (R deparses ``I(x/100)`` without spaces)."""
    nominal = bool(res.model.nominal_names)
    names = []
    for name in res.params.index:
        match = _STRUCTURED.match(name)
        if match and nominal:  # nominal effects on structured thresholds
            name = f"{match.group(1)}.{match.group(2) or '(Intercept)'}"
        names.append(r_style(ref.r_name(name, nominal)).replace(" / ", "/"))
    return names


def number(value: Any) -> float:
    return float("nan") if value == "NA" else float(value)


def matrix(rows: list[list[Any]]) -> np.ndarray:
    return np.array([[number(v) for v in row] for row in rows])


def r_values(values: dict[str, Any], names: list[str]) -> np.ndarray:
    return np.array([number(values[n]) for n in names])


def newdata(case: str, res: Any) -> pd.DataFrame:
    """R's new rows with the fitted data set's categories."""
    data = dataset(CASES[case][0])
    rows = pd.DataFrame(reference(case)["newdata"])
    for column in rows:
        if column in data and isinstance(data[column].dtype, pd.CategoricalDtype):
            dtype = data[column].dtype
            rows[column] = pd.Categorical(rows[column].astype(str), dtype=dtype)
    return rows


@pytest.mark.parametrize("case", sorted(CASES))
def test_log_likelihood_and_information_criteria(case: str) -> None:
    r, res = reference(case), fitted(case)
    if case in CAUCHIT or case in POLR:
        # clm's cauchit (outer thresholds at +-1e5) and polr's optim stop short
        assert res.llf >= r["loglik"] - 1e-9 * abs(r["loglik"])
        assert res.llf == pytest.approx(r["loglik"], rel=1e-4)
        return
    assert res.llf == pytest.approx(r["loglik"], rel=1e-8)
    assert (res.k_params, res.nobs) == (r["df"], pytest.approx(r["nobs"], rel=1e-12))
    assert res.aic == pytest.approx(r["aic"], rel=1e-8)
    assert res.bic == pytest.approx(r["bic"], rel=1e-8)


@pytest.mark.parametrize("case", sorted(set(CASES) - UNBOUNDED))
def test_estimates_and_standard_errors(case: str) -> None:
    r, res = reference(case), fitted(case)
    names = r_names(res)
    rtol = 1e-2 if case in CAUCHIT else 1e-3 if case in POLR else 1e-6
    np.testing.assert_allclose(res.params, r_values(r["coef"], names), rtol=rtol, atol=1e-7)
    if case in CAUCHIT:
        return
    np.testing.assert_allclose(
        res.bse, r_values(r["se"], names), rtol=1e-3 if case in POLR else 1e-5
    )
    if case not in POLR:
        aliased = [r_style(n) for n in ref.r_names(res.model.design.location.aliased)]
        assert sorted(r["aliased"]) == sorted(aliased)


def _fitted_probabilities(res: Any) -> np.ndarray:
    probabilities = np.asarray(quietly(res.predict), dtype=float)
    codes = np.asarray(res.model.design.response.codes, dtype=int)
    return probabilities[np.arange(len(codes)), codes]


@pytest.mark.parametrize("case", sorted(set(CASES) - POLR - CAUCHIT))
def test_fitted_probabilities(case: str) -> None:
    r, res = reference(case), fitted(case)
    expected = np.array([number(v) for v in r["fitted"]])
    ours = _fitted_probabilities(res)[: len(expected)]
    if case in UNBOUNDED:  # rows whose crossing thresholds R gives probabilities -1 and 1
        assert np.isnan(ours).sum() <= 3
        ours, expected = ours[np.isfinite(ours)], expected[np.isfinite(ours)]
    np.testing.assert_allclose(ours, expected, rtol=1e-6)


@pytest.mark.parametrize("case", [c for c in CLM if "prob" in reference(c)])
def test_predictions_on_new_rows(case: str) -> None:
    r, res = reference(case), fitted(case)
    rows = newdata(case, res)
    prediction = quietly(res.get_prediction, rows)
    np.testing.assert_allclose(prediction.predicted, matrix(r["prob"]), rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(prediction.se, matrix(r["prob_se"]), rtol=1e-4, atol=1e-12)
    lower, upper = (frame.to_numpy() for frame in prediction.conf_int(0.05))
    np.testing.assert_allclose(lower, matrix(r["prob_lwr"]), rtol=1e-4, atol=1e-12)
    np.testing.assert_allclose(upper, matrix(r["prob_upr"]), rtol=1e-4, atol=1e-12)
    n_steps = len(res.model.levels) - 1
    cumulative = np.asarray(quietly(res.predict, rows, which="cumprob"), dtype=float)
    expected = matrix(r["cprob1"])[:, :n_steps]
    np.testing.assert_allclose(cumulative[:, :n_steps], expected, rtol=1e-6, atol=1e-12)
    if not res.model.nominal_names and res.model.design.scale is None:
        linear = np.asarray(quietly(res.predict, rows, which="linear"), dtype=float).ravel()
        thresholds = res.thresholds["estimate"].to_numpy(dtype=float)
        eta1 = thresholds[None, :] - linear[:, None]
        np.testing.assert_allclose(eta1, matrix(r["eta1"])[:, :n_steps], rtol=1e-6, atol=1e-8)
    classes = np.asarray(quietly(res.predict, rows, which="class")).astype(str)
    assert list(classes) == r["class"]


@pytest.mark.parametrize("case", [c for c in CLM if "confint" in reference(c)])
def test_profile_and_wald_intervals(case: str) -> None:
    r, res = reference(case), fitted(case)
    positions = dict(zip(r_names(res), range(len(res.params)), strict=True))
    profile = quietly(res.conf_int, method="profile").to_numpy()
    for name, lower, upper in zip(
        *(r["confint"][k] for k in ("names", "lower", "upper")), strict=True
    ):
        # R interpolates a spline through its profile grid: ~1e-4 relative
        ours = profile[positions[name]]
        np.testing.assert_allclose(ours, [lower, upper], rtol=1e-3, atol=1e-5, err_msg=name)
    wald = r["confint_wald"]
    present = [i for i, v in enumerate(wald["lower"]) if v != "NA"]  # R lists aliased ones
    expected = np.array([[wald["lower"][i], wald["upper"][i]] for i in present], dtype=float)
    np.testing.assert_allclose(quietly(res.conf_int).to_numpy(), expected, rtol=1e-6, atol=1e-9)


@cache
def _relaxed() -> dict[tuple[str, str, str], float]:
    rows = json.loads((REFERENCE / "relaxed_refits.json").read_text())["rows"]
    return {(row["case"], row["test"], row["term"]): row["logLik"] for row in rows}


def _term_rows(case: str, kind: str) -> dict[str, dict[str, Any]]:
    if case == "admit_start":  # R refits with the full model's start = (wrong length)
        case = "admit_no_start"
    rows = reference(case).get(kind)
    return dict(rows) if rows else {}


TERM_TESTS = [
    (c, k)
    for c in CLM
    for k in ("drop1", "nominal_test", "scale_test")
    if _term_rows(c, k) and not (k == "nominal_test" and c in SYMMETRIC2)
]


@pytest.mark.parametrize(("case", "kind"), TERM_TESTS)
def test_term_tests(case: str, kind: str) -> None:
    res = fitted(case)
    table = quietly(getattr(res, kind), **({"test": "Chisq"} if kind == "drop1" else {}))
    table = table.rename(index=lambda name: r_style(str(name)).replace(" / ", "/"))
    rows = _term_rows(case, kind)
    assert sorted(table.index) == sorted(rows)
    base = table.loc["<none>", "logLik" if kind != "drop1" else "AIC"]
    for term, row in rows.items():
        ours = table.loc[term]
        if (case, kind, term) in OURS_NA:
            assert ours.drop(["AIC"] if term == "<none>" else []).isna().all(), term
            continue
        if term == "<none>":
            assert ours["AIC"] == pytest.approx(row["AIC"], rel=1e-8)
            continue
        if row["AIC"] == "NA":  # R's refit stopped short or failed
            relaxed = _relaxed().get((case, kind, term))
            if ours.isna().all():  # so did ordstats'
                continue
            if relaxed is not None:
                assert ours["logLik"] == pytest.approx(relaxed, rel=1e-8), term
            else:  # a valid nested fit: test_saturated_nominal_refit checks one
                assert ours["logLik"] >= base - 1e-8, term
            continue
        assert ours["AIC"] == pytest.approx(row["AIC"], rel=1e-6), term
        assert ours["LRT"] == pytest.approx(row["LRT"], rel=1e-5, abs=1e-7), term
        assert ours["Df"] == row["Df"], term
        assert ours["Pr(>Chi)"] == pytest.approx(row["Pr(>Chi)"], abs=1e-7), term


@pytest.mark.parametrize("case", sorted(SMALL))
def test_anova_of_the_nested_model(case: str) -> None:
    r = reference(case)["anova"]
    small = _fit(CASES[case][0], *SMALL[case])
    table = quietly(ordstats.anova, small, fitted(case))
    np.testing.assert_allclose(table["logLik"], r["loglik"], rtol=1e-8)
    assert table["LR.stat"].iloc[1] == pytest.approx(r["lr"][1], rel=1e-6, abs=1e-8)
    assert table["df"].iloc[1] == r["df"][1]
    assert table["Pr(>Chisq)"].iloc[1] == pytest.approx(r["p"][1], abs=1e-8)


def test_saturated_nominal_refit() -> None:
    """stemcell ``research ~ religion * gender``: nominal_test's row religion:gender is
    the saturated model (R: ``clm(..., nominal = ~ religion:gender, weights = ...)``
    stops with "object 'mf.basic' not found"): its logLik is sum n log(n / n_cell)."""
    table = quietly(fitted("stemcell_interaction").nominal_test)
    data = dataset("stemcell")
    cell = data.groupby(["religion", "gender"], observed=True)["frequency"].transform("sum")
    saturated = float((data["frequency"] * np.log(data["frequency"] / cell)).sum())
    assert table.loc["religion:gender", "logLik"] == pytest.approx(saturated, rel=1e-10)
    assert table.loc["religion:gender", "Df"] == 10


@pytest.mark.parametrize("case", sorted(SYMMETRIC2))
def test_symmetric2_nominal_test_is_nested(case: str) -> None:
    """R's rows are non-nested (its refit drops the term's location effect: negative
    LRTs); ordstats keeps it and adds the term's effects on the spacings."""
    res = fitted(case)
    r_rows = reference(case)["nominal_test"]
    table = quietly(res.nominal_test)
    data_name, formula, kwargs = CASES[case]
    spacings = len(res.thresholds) // 2  # symmetric2: theta = (-s_k, ..., s_k)
    for term, row in r_rows.items():
        if term == "<none>":
            continue
        assert number(row["LRT"]) < 0  # R's
        direct = _fit(data_name, formula, {**kwargs, "nominal": f"~ {term}", "collinear": "keep"})
        assert table.loc[term, "logLik"] == pytest.approx(direct.llf, rel=1e-10)
        assert table.loc[term, "logLik"] >= res.llf
        columns = len([n for n in res.params.index if n.startswith(term)])
        assert table.loc[term, "Df"] == spacings * columns


def test_polr_predicts_new_rows_with_their_formula_offset() -> None:
    """MASS's predict.polr leaves a formula offset out on new rows (its fitted values
    keep it); ordstats predicts the fitted rows as polr's fitted values give them."""
    res, r = fitted("polr_affairs_offset"), reference("polr_affairs_offset")
    rows = newdata("polr_affairs_offset", res)
    ours = np.asarray(quietly(res.predict, rows), dtype=float)
    # polr's optim stops ~6e-4 relative from the optimum in the probabilities
    np.testing.assert_allclose(ours, matrix(r["fitted_probs"]), rtol=2e-3)
    assert not np.allclose(ours, matrix(r["prob"]), rtol=1e-2)  # R's without the offset


def test_every_reference_case_is_compared() -> None:
    cases = {p.stem for p in REFERENCE.glob("*.json")} - {"relaxed_refits"}
    assert cases == set(CASES)
