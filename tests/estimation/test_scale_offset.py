"""R's ``offset()`` term in the scale formula: ``s = exp(z'zeta + q)``.

Reference: tests/r/scale_offset.R -> tests/data/reference/scale_offset.json
(``clm(rating ~ temp, scale = ~ contact + offset(x))`` on wine, the same with a
location offset and the probit link, and with nominal effects, equidistant thresholds
and the cloglog link).
"""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from ordstats import OrdinalModel, anova
from ordstats.errors import ConvergenceWarning, FormulaError, PredictionError, SpecificationError
from ordstats.families.cumulative.likelihood import evaluate, prepare
from tests._numdiff import central_jacobian
from tests._reference import load

REF = load("scale_offset")
CASES = {
    "scale": ("rating ~ temp", {}),
    "both": ("rating ~ temp + offset(w)", {"link": "probit"}),
    "structured": (
        "rating ~ contact",
        {"nominal": "~ temp", "threshold": "equidistant", "link": "cloglog"},
    ),
}


@pytest.fixture(scope="module")
def frame(wine: pd.DataFrame) -> pd.DataFrame:
    return wine.assign(x=np.linspace(0, 1, 72) ** 2, w=np.linspace(-1, 1, 72))


@pytest.fixture(scope="module")
def fits(frame: pd.DataFrame) -> dict[str, object]:
    return {
        case: OrdinalModel.from_formula(
            formula, frame, scale="~ contact + offset(x)", **options
        ).fit()
        for case, (formula, options) in CASES.items()
    }


def _in_r_order(res: object) -> np.ndarray:
    """The estimates in R's order: thresholds, location, scale (ordstats' order too)."""
    return np.asarray(res.params)  # type: ignore[attr-defined]


@pytest.mark.parametrize("case", list(CASES))
def test_estimates_loglik_and_standard_errors_match_r(fits, case):
    res, ref = fits[case], REF[case]
    assert res.llf == pytest.approx(ref["logLik"], rel=1e-6)
    # atol: the cut-point near 0 of the probit case; R stops at max|gradient| < 1e-6
    np.testing.assert_allclose(_in_r_order(res), list(ref["coef"].values()), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(np.asarray(res.bse), list(ref["se"].values()), rtol=1e-4)


@pytest.mark.parametrize("case", list(CASES))
def test_predictions_evaluate_the_scale_offset_on_new_rows(fits, case):
    res = fits[case]
    newdata = pd.DataFrame(REF["newdata"])
    # atol: cloglog's far tail (7.5e-15) moves by 3e-6 relative within R's convergence tolerance
    np.testing.assert_allclose(res.predict(newdata), REF[case]["prob"], rtol=1e-6, atol=1e-12)
    se_frame = res.get_prediction(newdata).summary_frame()
    np.testing.assert_allclose(
        se_frame["prob"].to_numpy(), np.ravel(REF[case]["prob"]), rtol=1e-6, atol=1e-12
    )


def test_margins_predictions_and_slopes_carry_the_scale_offset(frame):
    data = frame.assign(z=np.sin(np.arange(72)))
    res = OrdinalModel.from_formula("rating ~ temp + z", data, scale="~ z + offset(x)").fit()
    expected = res.predict(data).to_numpy()
    got = res.predictions().sort_values(["rowid", "group"])["estimate"].to_numpy()
    np.testing.assert_allclose(got, expected.ravel(), rtol=1e-9)
    h = 1e-6
    up, down = res.predict(data.assign(z=data.z + h)), res.predict(data.assign(z=data.z - h))
    slopes = res.avg_slopes(variables="z")["estimate"].to_numpy()
    np.testing.assert_allclose(slopes, ((up - down) / (2 * h)).mean().to_numpy(), atol=1e-7)


def test_refits_keep_the_scale_offset(fits):
    res = fits["scale"]
    scale_test = res.scale_test()
    assert scale_test.loc["temp", "LRT"] == pytest.approx(REF["scale_test"]["temp"], rel=1e-5)
    with pytest.warns(ConvergenceWarning, match="relaxing 'temp'"):  # as wine's without offset
        nominal_test = res.nominal_test()
    for term, lrt in REF["nominal_test"].items():
        assert nominal_test.loc[term, "LRT"] == pytest.approx(lrt, rel=1e-5)
    drop1 = res.drop1()
    np.testing.assert_allclose(drop1["AIC"], list(REF["drop1_aic"].values()), rtol=1e-6)


def test_anova_compares_models_with_the_same_scale_offset(frame, fits):
    bigger = OrdinalModel.from_formula(
        "rating ~ temp + contact", frame, scale="~ contact + offset(x)"
    ).fit()
    table = anova(fits["scale"], bigger)
    assert table.iloc[1]["LR.stat"] == pytest.approx(REF["anova_lr"], rel=1e-6)
    without = OrdinalModel.from_formula("rating ~ temp + contact", frame, scale="~ contact").fit()
    with pytest.raises(SpecificationError, match="'scale offset' describe effects"):
        anova(fits["scale"], without)


def test_survival_and_exceedance_use_the_scale_offset(frame):
    res = OrdinalModel.from_formula(
        "r ~ temp", frame.assign(r=frame.rating.astype(int)), scale="~ contact + offset(x)"
    ).fit()
    newdata = pd.DataFrame(REF["newdata"])
    above = 1.0 - np.cumsum(REF["scale"]["prob"], axis=1)[:, :-1]  # R's P(Y > j)
    surv = res.survival(newdata).summary_frame()["surv"].to_numpy()
    np.testing.assert_allclose(surv, above.ravel(), rtol=1e-6)
    exceed = res.exceedance(3, newdata)["estimate"].to_numpy()
    np.testing.assert_allclose(exceed, above[:, 1], rtol=1e-6)


def test_a_missing_scale_offset_drops_the_row(frame):
    holed = frame.assign(x=frame.x.where(frame.index != frame.index[3]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = OrdinalModel.from_formula("rating ~ temp", holed, scale="~ contact + offset(x)")
    assert model.n_rows == len(frame) - 1


def test_newdata_must_hold_the_scale_offset_variables(fits):
    newdata = pd.DataFrame(REF["newdata"]).drop(columns="x")
    with pytest.raises(PredictionError, match="scale formula's offset"):
        fits["scale"].predict(newdata)


def test_unsupported_uses_of_a_scale_offset_are_refused(frame, fits):
    with pytest.raises(SpecificationError, match="cumulative family only"):
        OrdinalModel.from_formula(
            "rating ~ temp", frame, scale="~ contact + offset(x)", family="sratio"
        )
    with pytest.raises(FormulaError, match="not in a nominal formula"):
        OrdinalModel.from_formula("rating ~ temp", frame, nominal="~ contact + offset(x)")
    with pytest.raises(FormulaError, match="more than one offset term"):
        OrdinalModel.from_formula("rating ~ temp", frame, scale="~ contact + offset(x) + offset(w)")
    for scale in ("~ contact + offset(x)", "~ offset(x)"):
        with pytest.raises(FormulaError, match="a scale offset needs the data in memory"):
            OrdinalModel.from_formula("rating ~ temp", frame, scale=scale, chunksize=20)
        for family in ("sratio", "acat"):  # before, '~ offset(x)' was ignored by these
            with pytest.raises(SpecificationError, match="cumulative family only"):
                OrdinalModel.from_formula("rating ~ temp", frame, scale=scale, family=family)
    with pytest.raises(SpecificationError, match="get_margeff"):
        fits["scale"].get_margeff()
    # emmeans evaluates a scale offset on its grid, as R's ref_grid (refused before;
    # against R in tests/test_emmeans_r.py, clm_wine_scale_offset)
    means = fits["scale"].emmeans("contact", mode="scale")
    assert np.all(np.isfinite(np.asarray(means.values, dtype=float)))


@pytest.mark.parametrize("link", ["logit", "probit", "cloglog"])
@pytest.mark.parametrize("structure", ["flexible", "equidistant"])
def test_gradient_and_hessian_with_a_scale_offset(cumulative_problem, link, structure):
    plain, params = cumulative_problem(5, link, structure, scale=2, n=80)
    q = np.random.default_rng(6).normal(scale=0.4, size=plain.data.n_obs)
    problem = prepare(replace(plain.data, scale_offset=q))
    at = evaluate(problem, params)
    assert at.nll != pytest.approx(evaluate(plain, params).nll)  # the offset is used
    grad = central_jacobian(lambda p: evaluate(problem, p).nll, params, 1e-6)
    np.testing.assert_allclose(at.gradient, grad, rtol=1e-6, atol=1e-6)
    hess = central_jacobian(lambda p: evaluate(problem, p).gradient, params, 1e-6)
    np.testing.assert_allclose(at.hessian, hess, rtol=1e-5, atol=1e-5)


# R's clm(rating ~ temp + contact, scale = ~ offset(q)): s = exp(q), no scale parameters
# (tests/r/r_behaviours.R -> tests/data/reference/r_behaviours.json).  Before, ordstats
# refused a scale formula with only an offset.
ONLY = load("r_behaviours")["offset_only"]
ONLY_CASES = {
    "fit": ("rating ~ temp + contact", {}),
    "nominal": ("rating ~ temp", {"nominal": "~ contact"}),
}


@pytest.fixture(scope="module")
def offset_only(wine: pd.DataFrame) -> dict[str, object]:
    frame = wine.assign(q=np.linspace(-0.5, 0.5, 72))
    return {
        case: OrdinalModel.from_formula(formula, frame, scale="~ offset(q)", **options).fit()
        for case, (formula, options) in ONLY_CASES.items()
    }


@pytest.mark.parametrize("case", list(ONLY_CASES))
def test_a_scale_offset_alone_fits_as_r(offset_only, case):
    res, ref = offset_only[case], ONLY[case]
    assert res.model.design.scale.names == []
    assert res.llf == pytest.approx(ref["logLik"], rel=1e-6)
    np.testing.assert_allclose(np.asarray(res.params), list(ref["coef"].values()), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(res.bse), list(ref["se"].values()), rtol=1e-4)


@pytest.mark.parametrize("case", list(ONLY_CASES))
def test_a_scale_offset_alone_predicts_new_rows_as_r(offset_only, case):
    res, ref = offset_only[case], ONLY[case]
    newdata = pd.DataFrame(ONLY["newdata"])
    np.testing.assert_allclose(res.predict(newdata), ref["prob"], rtol=1e-6)
    frame = res.get_prediction(newdata).summary_frame()
    np.testing.assert_allclose(frame["prob"], np.ravel(ref["prob"]), rtol=1e-6)


def test_a_scale_offset_alone_in_prediction_standard_errors(offset_only):
    """The delta method's SEs, with the gradient divided by each row's scale exp(q).

    R's predict(se.fit = TRUE) leaves that division out with a scale offset: its SEs are
    these times exp(q) (r_behaviours.json's prob_se), so they are checked by numbers here.
    """
    res = offset_only["fit"]
    newdata = pd.DataFrame(ONLY["newdata"])
    X = (newdata[["temp", "contact"]].to_numpy() == ["warm", "yes"]).astype(float)
    s = np.exp(newdata["q"].to_numpy())

    def probabilities(params: np.ndarray) -> np.ndarray:
        cdf = expit((params[None, :4] - (X @ params[4:])[:, None]) / s[:, None])
        return np.diff(np.column_stack([np.zeros(3), cdf, np.ones(3)]), axis=1).ravel()

    jac = central_jacobian(probabilities, res.params.to_numpy(), 1e-6)
    expected = np.sqrt(np.diag(jac @ res.cov_params().to_numpy() @ jac.T))
    se = res.get_prediction(newdata).summary_frame()["se"].to_numpy()
    np.testing.assert_allclose(se, expected, rtol=1e-6)
    r_se = np.ravel(ONLY["fit"]["prob_se"]) / np.repeat(s, 5)
    np.testing.assert_allclose(se, r_se, rtol=1e-4)


def test_a_scale_offset_alone_in_refits_tests_and_intervals(offset_only, wine):
    res = offset_only["fit"]
    scale_test = res.scale_test()
    for term, lrt in ONLY["scale_test"].items():
        assert scale_test.loc[term, "LRT"] == pytest.approx(lrt, rel=1e-5)
    with pytest.warns(ConvergenceWarning, match="relaxing 'temp'"):
        nominal_test = res.nominal_test()
    for term, lrt in ONLY["nominal_test"].items():
        assert nominal_test.loc[term, "LRT"] == pytest.approx(lrt, rel=1e-5)
    np.testing.assert_allclose(res.drop1()["AIC"], list(ONLY["drop1_aic"].values()), rtol=1e-6)
    bigger = OrdinalModel.from_formula(
        "rating ~ temp * contact", wine.assign(q=np.linspace(-0.5, 0.5, 72)), scale="~ offset(q)"
    ).fit()
    assert anova(res, bigger).iloc[1]["LR.stat"] == pytest.approx(ONLY["anova_lr"], rel=1e-6)
    profile = res.conf_int(method="profile").loc[["temp[T.warm]", "contact[T.yes]"]]
    np.testing.assert_allclose(profile, ONLY["confint_profile"], rtol=1e-4)


def test_a_scale_offset_alone_in_survival(offset_only):
    newdata = pd.DataFrame(ONLY["newdata"])
    above = 1.0 - np.cumsum(ONLY["fit"]["prob"], axis=1)[:, :-1]  # R's P(Y > j)
    res = offset_only["fit"]
    surv = res.survival(newdata).summary_frame()["surv"].to_numpy()
    np.testing.assert_allclose(surv, above.ravel(), rtol=1e-6)
