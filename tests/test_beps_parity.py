"""carData::BEPS against R's ordinal and emmeans (tests/r/beps_parity.R).

``economic.cond.national`` (1-5, 1525 rows) with threshold structures, nominal and scale
effects, the standard and flexible links, ``factor()`` of a numeric, a numeric-by-factor
interaction, ``offset()``, weights, subset and dropped NA rows; predictions with SEs and
intervals, profile intervals, slice, nominal/scale tests, anova and emmeans.  Estimates
and log-likelihoods to 1e-6, standard errors to 1e-4.  Where R is off (clm's cauchit
outer thresholds, its flexible links stopping short, emmeans' nonEst for ``offset()``)
the test says so and checks against an exact recomputation instead.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, special, stats

import ordstats
from ordstats.errors import ConvergenceWarning, MissingDataWarning, PredictionError
from tests._parity import assert_slices_match, dataset

R = json.loads((Path(__file__).parent / "data" / "r" / "beps_parity.json").read_text())
Y = "economic.cond.national"
F = f"{Y} ~ vote + age + gender + Blair + Hague + Europe"
SPECS: dict[str, tuple[str, dict]] = {
    "flexible": (F, {}),
    "symmetric": (F, {"threshold": "symmetric"}),
    "symmetric2": (F, {"threshold": "symmetric2"}),
    "equidistant": (F, {"threshold": "equidistant"}),
    "nominal": (f"{Y} ~ vote + age + Blair + Europe", {"nominal": "~ gender + Hague"}),
    "scale": (F, {"scale": "~ age + gender"}),
    "probit": (F, {"link": "probit"}),
    "cloglog": (F, {"link": "cloglog"}),
    "loglog": (F, {"link": "loglog"}),
    "factor_numeric": (f"{Y} ~ Blair + factor(Hague) + age:vote + vote", {}),
    "offset": (f"{Y} ~ vote + age + Blair + offset(Europe / 10)", {}),
    "weights": (F, {"weights": "political.knowledge + 1"}),
    "subset": (F, {"subset": "age > 40"}),
    "scale_sym": (F, {"scale": "~ age + gender", "threshold": "symmetric"}),
}
NEW = pd.DataFrame(
    {
        "vote": ["Labour", "Conservative", "Liberal Democrat"],
        "age": [30, 55, 80],
        "gender": ["female", "male", "male"],
        "Blair": [1, 4, 5],
        "Hague": [2, 3, 5],
        "Europe": [1, 6, 11],
        "political.knowledge": [0, 2, 3],
    }
)


@pytest.fixture(scope="module")
def beps() -> pd.DataFrame:
    return dataset("beps")


def _fit(name: str, data: pd.DataFrame):
    formula, options = SPECS[name]
    options = dict(options)
    if options.get("weights") == "political.knowledge + 1":
        options["weights"] = data["political.knowledge"] + 1
    return ordstats.OrdinalModel.from_formula(formula, data, **options).fit()


@pytest.fixture(scope="module")
def fits(beps) -> dict:
    names = ["scale", "symmetric", "flexible", "nominal", "factor_numeric"]
    return {name: _fit(name, beps) for name in names}


def _r_table(part: dict) -> pd.DataFrame:
    values = [[np.nan if v == "NA" else float(v) for v in row] for row in part["values"]]
    return pd.DataFrame(values, index=part["rows"], columns=part["cols"])


def _values(named: dict) -> np.ndarray:
    return np.array([np.nan if v == "NA" else v for v in named.values()], dtype=float)


@pytest.mark.parametrize("name", list(SPECS))
def test_estimates_ses_and_loglik(beps, name: str) -> None:
    res = _fit(name, beps)
    part = R[name]
    np.testing.assert_allclose(res.params, _values(part["coef"]), atol=1e-6)
    np.testing.assert_allclose(res.bse, _values(part["se"]), atol=1e-4)
    assert res.llf == pytest.approx(part["logLik"], abs=1e-6)
    assert res.nobs == part["nobs"]


def _exact_loglik(data: pd.DataFrame, params: np.ndarray, cdf=stats.cauchy.cdf) -> float:
    """The log-likelihood of ``F`` with exact -/+Inf outer thresholds (independent of ordstats)."""
    y = data[Y].cat.codes.to_numpy()
    x = np.column_stack(
        [
            data["vote"] == "Labour",
            data["vote"] == "Liberal Democrat",
            data["age"],
            data["gender"] == "male",
            data["Blair"],
            data["Hague"],
            data["Europe"],
        ]
    ).astype(float)
    theta = np.r_[-np.inf, params[:4], np.inf]
    eta = x @ params[4:]
    # floored: the optimiser of the threshold profile may step to disordered thresholds
    prob = np.maximum(cdf(theta[y + 1] - eta) - cdf(theta[y] - eta), 1e-300)
    return float(np.sum(np.log(prob)))


def test_cauchit_is_the_exact_maximum_where_clm_is_off(beps) -> None:
    # clm puts the outer cauchit thresholds at -/+1e5, not -/+Inf, so its logLik is
    # 8.4e-3 low and its 1|2 threshold 1e-3 off; ours is the exact maximum
    res = ordstats.OrdinalModel.from_formula(F, beps, link="cauchit").fit()
    r_params = _values(R["cauchit"]["coef"])
    assert res.llf == pytest.approx(_exact_loglik(beps, res.params.to_numpy()), abs=1e-9)
    assert res.llf >= _exact_loglik(beps, r_params)
    assert res.llf - R["cauchit"]["logLik"] == pytest.approx(8.43e-3, abs=1e-4)
    np.testing.assert_allclose(res.params, r_params, atol=2e-3)


@pytest.mark.parametrize(
    "name,link", [("log_gamma", "log-gamma"), ("aranda_ordaz", "Aranda-Ordaz")]
)
def test_flexible_links_at_least_as_high_as_clm(beps, name: str, link: str) -> None:
    # clm's nlminb stops short of the maximum (max|grad| 0.08 and 0.02 in R)
    res = ordstats.OrdinalModel.from_formula(F, beps, link=link).fit()
    part = R[name]
    assert res.mle_retvals["converged"]
    assert 0 <= res.llf - part["logLik"] < 1e-6
    np.testing.assert_allclose(res.params, _values(part["coef"]), atol=1e-4)
    np.testing.assert_allclose(res.bse, _values(part["se"]), atol=1e-4)


def test_rows_with_missing_values_are_dropped_as_na_omit(beps) -> None:
    data = beps.copy()
    data.loc[[2, 9, 49], "age"] = np.nan
    data.loc[[9, 76], "vote"] = np.nan
    with pytest.warns(MissingDataWarning, match="4 of 1525 rows"):
        res = ordstats.OrdinalModel.from_formula(F, data).fit()
    part = R["na_omit"]
    np.testing.assert_allclose(res.params, _values(part["coef"]), atol=1e-6)
    assert res.nobs == part["nobs"] == part["n_fitted"]
    # R's fitted() is the probability of each row's observed level
    codes = data.dropna(subset=["age", "vote"])[Y].cat.codes.to_numpy()
    observed = res.predict().to_numpy()[np.arange(5), codes[:5]]
    np.testing.assert_allclose(observed, part["fitted_head"], atol=1e-8)


@pytest.mark.parametrize(
    "name",
    [
        "scale",
        "nominal",
        "symmetric2",
        "equidistant",
        "offset",
        "weights",
        "cauchit",
        "factor_numeric",
        "scale_sym",
    ],
)
def test_predictions_with_ses_and_intervals(beps, name: str) -> None:
    if name == "cauchit":
        res = ordstats.OrdinalModel.from_formula(F, beps, link="cauchit").fit()
        tol = 1e-5  # clm's cauchit optimum is 1e-3 off (see above)
    else:
        res, tol = _fit(name, beps), 1e-7
    pred = R[f"predict_{name}"]
    np.testing.assert_allclose(res.predict(NEW), pred["prob"]["fit"], atol=tol)
    frame = res.get_prediction(NEW).summary_frame()
    for ours, r in [("se", "se.fit"), ("ci_lower", "lwr"), ("ci_upper", "upr")]:
        np.testing.assert_allclose(frame[ours].to_numpy().reshape(3, 5), pred["prob"][r], atol=tol)
    if "cum.prob" in pred:
        cum = res.get_prediction(NEW, which="cumprob").summary_frame()
        r_cum = {k: np.asarray(v, dtype=float)[:, :4] for k, v in pred["cum.prob"].items()}
        for ours, r in [("prob", "cprob1"), ("se", "se.cprob1")]:
            np.testing.assert_allclose(cum[ours].to_numpy().reshape(3, 4), r_cum[r], atol=tol)
        # R's cum.prob interval is P +- z se; ours is on the logit scale (stays in (0, 1))
        z = stats.norm.ppf(0.975)
        np.testing.assert_allclose(r_cum["lwr1"], r_cum["cprob1"] - z * r_cum["se.cprob1"])
        p, se = cum["prob"].to_numpy(), cum["se"].to_numpy()
        logit_lower = special.expit(special.logit(p) - z * se / (p * (1 - p)))
        np.testing.assert_allclose(cum["ci_lower"], logit_lower, rtol=1e-10)
    if "class" in pred:
        assert list(res.predict(NEW, which="class")) == pred["class"]


@pytest.mark.parametrize("column,value", [("vote", "Green"), ("gender", "other"), ("Hague", 7)])
def test_unseen_levels_are_refused_by_name(beps, fits, column: str, value: object) -> None:
    res = _fit("factor_numeric", beps) if column == "Hague" else fits["scale"]
    new = NEW.copy()
    if isinstance(value, str):
        new[column] = new[column].astype(object)
    new.loc[1, column] = value
    for call in (
        lambda: res.predict(new),
        lambda: res.predict(new, which="class"),
        lambda: res.get_prediction(new, which="cumprob"),
    ):
        with pytest.raises(PredictionError, match=f"level\\(s\\) '?{value}'? that the model"):
            call()


@pytest.mark.parametrize(
    "name,key",
    [("scale", "profile_scale"), ("symmetric", "profile_sym"), ("nominal", "profile_nominal")],
)
def test_profile_intervals(fits, name: str, key: str) -> None:
    # R profiles beta and zeta only, never thresholds: compare its rows (the last ones)
    r = _r_table(R[key])
    ours = fits[name].conf_int(method="profile")
    np.testing.assert_allclose(ours.to_numpy()[-len(r) :], r.to_numpy(), atol=1e-4)


def test_profile_intervals_of_symmetric_scale(beps) -> None:
    r = _r_table(R["profile_scale_sym"])
    ours = _fit("scale_sym", beps).conf_int(method="profile")
    np.testing.assert_allclose(ours.to_numpy()[-len(r) :], r.to_numpy(), atol=1e-4)


def test_slice_of_threshold_location_and_scale(fits) -> None:
    assert_slices_match(fits["scale"], [0, 4, 11], R["slice"])


@pytest.mark.parametrize(
    "name,method,key",
    [
        ("symmetric", "nominal_test", "nominal_test"),
        ("symmetric", "scale_test", "scale_test"),
        ("flexible", "nominal_test", "nominal_test_flex"),
        ("scale", "scale_test", "scale_test_scale"),
        ("scale", "nominal_test", "nominal_test_scale"),
    ],
)
def test_nominal_and_scale_tests(fits, name: str, method: str, key: str) -> None:
    ours = getattr(fits[name], method)()
    r = _r_table(R[key])
    assert list(ours.index) == list(r.index)
    np.testing.assert_allclose(ours.to_numpy(float), r.to_numpy(), rtol=1e-6, atol=1e-9)


def test_drop1_of_scale_model(fits) -> None:
    r = _r_table(R["drop1_scale"])
    np.testing.assert_allclose(fits["scale"].drop1(test="Chisq").to_numpy(float), r, rtol=1e-6)


def test_anova_symmetric_against_flexible(fits) -> None:
    table = ordstats.anova(fits["symmetric"], fits["flexible"])
    r = R["anova_sym_flex"]
    np.testing.assert_allclose(table["logLik"], r["logLik"], atol=1e-6)
    assert table["LR.stat"].iloc[1] == pytest.approx(r["LR"][1], rel=1e-6)
    assert table["Pr(>Chisq)"].iloc[1] == pytest.approx(r["p"][1], rel=1e-6)


def _emmeans_cases(fits) -> dict:
    scale, nominal = fits["scale"], fits["nominal"]
    latent = scale.emmeans("vote", mode="latent")
    return {
        "emmeans_scale_prob": scale.emmeans(f"{Y} | vote", mode="prob"),
        "emmeans_scale_latent": latent,
        "emmeans_scale_pairs": latent.pairs(),
        "emmeans_scale_mean_class": scale.emmeans("vote", mode="mean.class"),
        "emmeans_scale_cum": scale.emmeans("cut | vote", mode="cum.prob"),
        "emmeans_nominal_prob": nominal.emmeans(f"{Y} | vote", mode="prob"),
        "emmeans_nominal_mean_class": nominal.emmeans("vote", mode="mean.class"),
        "emmeans_nominal_linear": nominal.emmeans("gender | cut", mode="linear.predictor"),
        "emmeans_sym_latent": fits["symmetric"].emmeans("vote", mode="latent").pairs(),
        "emmeans_factor_hague": fits["factor_numeric"].emmeans("Hague", mode="latent"),
        "emmeans_factor_vote_age70": fits["factor_numeric"].emmeans(
            "vote", at={"age": 70}, mode="latent"
        ),
    }


@pytest.mark.parametrize(
    "key",
    [
        "emmeans_scale_prob",
        "emmeans_scale_latent",
        "emmeans_scale_pairs",
        "emmeans_scale_mean_class",
        "emmeans_scale_cum",
        "emmeans_nominal_prob",
        "emmeans_nominal_mean_class",
        "emmeans_nominal_linear",
        "emmeans_sym_latent",
        "emmeans_factor_hague",
        "emmeans_factor_vote_age70",
    ],
)
def test_emmeans(fits, key: str) -> None:
    ours = _emmeans_cases(fits)[key].summary_frame()
    r = pd.DataFrame(R[key])
    estimate = r.columns[list(r.columns).index("SE") - 1]
    np.testing.assert_allclose(ours[estimate], r[estimate], atol=1e-7)
    np.testing.assert_allclose(ours["SE"], r["SE"], atol=1e-7)
    for col in ("asymp.LCL", "asymp.UCL"):
        np.testing.assert_allclose(ours[col], r[col], atol=1e-6)


def test_emmeans_of_offset_model_include_the_offset_at_its_mean(beps) -> None:
    # emmeans reports nonEst for a clm with offset(); with offset = 0 it gives x'beta -
    # mean(theta), so ours (offset Europe / 10 at mean Europe) is that plus the offset
    res = _fit("offset", beps)
    assert all(v == "NA" for v in pd.DataFrame(R["emmeans_offset_latent"])["emmean"])
    ours = res.emmeans("vote", mode="latent").summary_frame()
    r = pd.DataFrame(R["emmeans_offset_zero"])
    np.testing.assert_allclose(ours["emmean"] - beps["Europe"].mean() / 10, r["emmean"], atol=1e-7)
    np.testing.assert_allclose(ours["SE"], r["SE"], atol=1e-7)


def test_avg_comparisons_are_the_averaged_counterfactual_differences(fits, beps) -> None:
    # R's marginaleffects is not installed: recompute exactly from predict()
    res = fits["scale"]
    table = res.avg_comparisons(variables="vote")
    levels = beps["vote"].cat.categories

    def at(level: str) -> pd.DataFrame:
        return res.predict(beps.assign(vote=pd.Categorical([level] * len(beps), categories=levels)))

    for level in levels[1:]:
        rows = table[table["contrast"] == f"{level} - {levels[0]}"]
        expected = (at(level) - at(levels[0])).mean().to_numpy()
        np.testing.assert_allclose(rows["estimate"], expected, atol=1e-12)


def test_rare_level_fits_as_clm(beps) -> None:
    # level 1 of household kept for 4 rows: R fits it without a warning, so do we
    household = beps["economic.cond.household"]
    keep = (household != "1") | beps.index.isin(np.flatnonzero(household == "1")[:4])
    res = ordstats.OrdinalModel.from_formula(
        "economic.cond.household ~ vote + age + gender + Blair + Hague + Europe", beps[keep]
    ).fit()
    part = R["rare"]
    assert part["warnings"] == [] and part["convergence"] == 0
    np.testing.assert_allclose(res.params, _values(part["coef"]), atol=1e-6)
    np.testing.assert_allclose(res.bse, _values(part["se"]), atol=1e-4)
    assert res.cond_H == pytest.approx(part["cond_H"], rel=1e-6)


def test_separated_rare_level_warns_where_clm_reports_a_singular_hessian(beps) -> None:
    # only 3 women in household level 1 and a nominal gender effect: the men's first
    # threshold goes to -Inf; clm says "Hessian is numerically singular" (code 1, NA SEs)
    part = R["separated"]
    household = beps["economic.cond.household"]
    rows = (household != "1") | beps.index.isin(np.asarray(part["rows"]) - 1)
    model = ordstats.OrdinalModel.from_formula(
        "economic.cond.household ~ vote + age + Blair", beps[rows], nominal="~ gender"
    )
    with pytest.warns(ConvergenceWarning, match="separation"):
        res = model.fit()
    assert part["convergence"] == 1 and part["se_na"] == len(res.params)
    assert res.llf == pytest.approx(part["logLik"], abs=1e-6)
    np.testing.assert_allclose(res.params.iloc[-4:], _values(part["location"]), atol=1e-4)


def test_get_prediction_of_class_says_what_to_use(fits) -> None:
    # R's predict(type = "class", se.fit = TRUE) warns and drops the SEs; which="linear"
    # has SEs now (tests/results/test_prediction_linear.py)
    with pytest.raises(
        PredictionError, match=r"got 'class'; .*use predict\(newdata, which='class'\)"
    ):
        fits["scale"].get_prediction(NEW, which="class")


def test_profile_intervals_of_thresholds_are_exact(fits, beps) -> None:
    # R profiles no threshold: at each bound of 1|2 the likelihood ratio, maximised over
    # the other parameters (an independent logit log-likelihood), is chi2(1)'s 0.95 quantile
    res = fits["flexible"]

    def negative_loglik(params: np.ndarray) -> float:
        return -_exact_loglik(beps, params, special.expit)

    start = np.delete(res.params.to_numpy(), 0)
    for bound in res.conf_int(method="profile").iloc[0]:
        best = optimize.minimize(
            lambda rest, b=bound: negative_loglik(np.insert(rest, 0, b)),
            start,
            method="BFGS",
            options={"gtol": 1e-8},
        )
        assert 2 * (res.llf + best.fun) == pytest.approx(stats.chi2.ppf(0.95, 1), abs=1e-6)


@pytest.mark.parametrize(
    "key", ["nominal_test_weights", "scale_test_weights", "nominal_test_subset", "drop1_subset"]
)
def test_term_tests_refit_with_weights_subset_and_offset(beps, key: str) -> None:
    formula = f"{Y} ~ vote + age + Blair + offset(Europe / 10)"
    if key.endswith("weights"):
        model = ordstats.OrdinalModel.from_formula(
            formula, beps, weights=beps["political.knowledge"] + 1
        )
    else:
        model = ordstats.OrdinalModel.from_formula(
            formula, beps, subset="age > 40", scale="~ gender"
        )
    res = model.fit()
    method = key.rsplit("_", 1)[0]
    ours = res.drop1(test="Chisq") if method == "drop1" else getattr(res, method)()
    r = _r_table(R["refits"][key])
    assert list(ours.index) == list(r.index)
    np.testing.assert_allclose(ours.to_numpy(float), r.to_numpy(), rtol=1e-6, atol=1e-9)
