"""carData::WVS against R across the inference toolkit (tests/r/wvs_inference.R).

``poverty ~ religion + degree + country + age + gender`` (5381 rows): clm predictions
with SEs and intervals, MASS::polr (coefficients, vcov, probabilities, profile
intervals), anova/drop1/add1/scale_test, convergence, slice, cond.H, emmeans on the
clm (means, pairs, trt.vs.ctrl with emmeans' default "dunnettx", effects with its
default "fdr"), VGAM's parallel families and the clmm with ``(1 | country)``.
Estimates and log-likelihoods to 1e-6, standard errors to 1e-4.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, special, stats

import ordstats
from ordstats.results.margins.adjust import Family, adjusted_p_values, critical_values
from tests._parity import assert_slices_match, dataset

R = json.loads((Path(__file__).parent / "data" / "r" / "wvs_inference.json").read_text())
FORMULA = "poverty ~ religion + degree + country + age + gender"
NEW = pd.DataFrame(
    {
        "religion": ["no", "yes", "yes", "no"],
        "degree": ["no", "yes", "no", "yes"],
        "country": ["Australia", "Norway", "Sweden", "USA"],
        "age": [20, 45, 70, 33.5],
        "gender": ["female", "male", "female", "male"],
    }
)


def _r_table(part: dict) -> pd.DataFrame:
    values = [[np.nan if v == "NA" else float(v) for v in row] for row in part["values"]]
    return pd.DataFrame(values, index=part["rows"], columns=part["cols"])


def _fit_as_r(formula: str, data: pd.DataFrame, part: dict):
    """The fit of ``formula``, its estimates and log-likelihood checked against R's ``part``."""
    res = ordstats.OrdinalModel.from_formula(formula, data).fit()
    np.testing.assert_allclose(res.params, list(part["coef"].values()), atol=1e-6)
    assert res.llf == pytest.approx(part["logLik"], abs=1e-6)
    return res


@pytest.fixture(scope="module")
def wvs() -> pd.DataFrame:
    return dataset("wvs")


@pytest.fixture(scope="module")
def fit(wvs):
    return ordstats.OrdinalModel.from_formula(FORMULA, wvs).fit()


def test_clm_estimates_vcov_and_cond_h(fit) -> None:
    np.testing.assert_allclose(fit.params, list(R["clm"]["coef"].values()), atol=1e-6)
    np.testing.assert_allclose(fit.cov_params(), R["clm"]["vcov"], atol=1e-8)
    assert fit.llf == pytest.approx(R["clm"]["logLik"], abs=1e-6)
    assert fit.cond_H == pytest.approx(R["clm"]["cond_H"], rel=1e-6)


def test_predictions_with_ses_and_intervals(fit) -> None:
    pred = R["predict"]
    np.testing.assert_allclose(fit.predict(NEW), pred["prob"]["fit"], atol=1e-8)
    assert list(fit.predict(NEW, which="class")) == pred["class"]
    # R's linear.predictor is theta_j - x'beta
    eta = np.asarray(pred["linear.predictor"]["eta1"])[:, :2]
    theta = fit.params.to_numpy()[:2]
    np.testing.assert_allclose(theta - fit.predict(NEW, which="linear").to_numpy()[:, None], eta)
    frame = fit.get_prediction(NEW).summary_frame()
    for ours, r in [("se", "se.fit"), ("ci_lower", "lwr"), ("ci_upper", "upr")]:
        np.testing.assert_allclose(frame[ours].to_numpy().reshape(4, 3), pred["prob"][r], atol=1e-8)
    cum = fit.get_prediction(NEW, which="cumprob").summary_frame()
    r_cum = np.asarray(pred["cum.prob"]["se.cprob1"])[:, :2]
    np.testing.assert_allclose(cum["se"].to_numpy().reshape(4, 2), r_cum, atol=1e-8)


def test_polr(fit) -> None:
    polr = R["polr"]
    np.testing.assert_allclose(fit.params[2:], list(polr["coef"].values()), atol=1e-6)
    np.testing.assert_allclose(fit.params[:2], list(polr["zeta"].values()), atol=1e-6)
    order = [*range(2, 9), 0, 1]  # polr's vcov: coefficients, then zeta
    ours = fit.cov_params().to_numpy()[np.ix_(order, order)]
    # polr: optim's finite-difference Hessian, 6e-6 off in the threshold SEs
    np.testing.assert_allclose(np.sqrt(np.diag(ours)), np.sqrt(np.diag(polr["vcov"])), atol=1e-4)
    np.testing.assert_allclose(fit.predict(NEW), polr["probs"], atol=1e-6)
    # MASS's confint.polr interpolates its profile: ~1e-6
    profile = fit.conf_int(method="profile").to_numpy()[2:]
    np.testing.assert_allclose(profile, polr["confint"]["values"], atol=5e-6)


def test_anova_drop1_add1_scale_test(fit, wvs) -> None:
    small = ordstats.OrdinalModel.from_formula("poverty ~ religion + degree + country", wvs).fit()
    mid = fit.update("~ . - gender")
    table = ordstats.anova(small, mid, fit)
    r = _r_table(R["anova"])
    np.testing.assert_allclose(table["LR.stat"].to_numpy()[1:], r["LR.stat"][1:], rtol=1e-7)
    np.testing.assert_allclose(table["Pr(>Chisq)"].to_numpy()[1:], r["Pr(>Chisq)"][1:], rtol=1e-6)
    for ours, part, cols in [
        (fit.drop1(test="Chisq"), "drop1", ["AIC", "LRT", "Pr(>Chi)"]),
        (
            fit.add1("~ . + country:gender + age:country + degree:religion", test="Chisq"),
            "add1",
            ["AIC", "LRT", "Pr(>Chi)"],
        ),
        (fit.scale_test(), "scale_test", ["logLik", "LRT", "Pr(>Chi)"]),
    ]:
        r = _r_table(R[part])
        np.testing.assert_allclose(ours[cols].to_numpy(), r[cols].to_numpy(), rtol=1e-6)


def test_convergence_and_slice(fit) -> None:
    conv = R["convergence"]
    np.testing.assert_allclose(fit.bse, list(conv["se"].values()), rtol=1e-6)
    report = fit.convergence()
    np.testing.assert_allclose(report.eigenvalues, conv["eigenvalues"], rtol=1e-6)
    assert_slices_match(fit, [0, 4, 7], R["slice"])


@pytest.mark.parametrize(
    "name", ["latent", "mean_class", "pairs", "trt_vs_ctrl", "eff", "pairs_mean_class"]
)
def test_emmeans_country(fit, name: str) -> None:
    latent = fit.emmeans("country", mode="latent")
    ours = {
        "latent": latent,
        "mean_class": fit.emmeans("country", mode="mean.class"),
        "pairs": latent.pairs(),
        "trt_vs_ctrl": latent.contrast("trt.vs.ctrl", ref=1),
        "eff": latent.contrast("eff"),
        "pairs_mean_class": fit.emmeans("country", mode="mean.class").pairs(),
    }[name].summary_frame()
    r = pd.DataFrame(R["emmeans_clm"][name])
    estimate = ours.columns[1]
    np.testing.assert_allclose(ours[estimate], r[estimate], rtol=1e-7)
    np.testing.assert_allclose(ours["SE"], r["SE"], rtol=1e-6)
    # emmeans' dunnettx quantile stops within 5e-4 (see test_dunnettx_quantile)
    tol = 1e-4 if name == "trt_vs_ctrl" else 1e-6
    for col in ("asymp.LCL", "asymp.UCL"):
        np.testing.assert_allclose(ours[col], r[col], atol=tol)
    # R's ptukey loses ~1e-13 absolute in the far tail
    np.testing.assert_allclose(ours["p.value"], r["p.value"].astype(float), rtol=1e-6, atol=1e-12)


def test_emmeans_default_adjustments_are_emmeans(fit) -> None:
    latent = fit.emmeans("country", mode="latent")
    assert latent.contrast("trt.vs.ctrl").summary_frame().attrs["adjust"] == "dunnettx"
    assert latent.contrast("eff").summary_frame().attrs["adjust"] == "fdr"
    assert latent.contrast("del.eff").summary_frame().attrs["adjust"] == "fdr"


def test_dunnettx_with_seven_contrasts(fit) -> None:
    # (1 + sqrt(57)) / 2 = 4.27 "means": a non-integer studentized range
    ours = fit.emmeans("~ country * gender").contrast("trt.vs.ctrl").summary_frame()
    r = pd.DataFrame(R["emmeans_clm"]["trt_vs_ctrl_7"])
    np.testing.assert_allclose(ours["p.value"], r["p.value"].astype(float), rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(ours["asymp.UCL"], r["asymp.UCL"], atol=1e-4)


def test_dunnettx_quantile() -> None:
    for k, quantile in zip(*R["dunnettx_quantile"].values(), strict=True):
        family = [Family(range(k))]
        crit, adjust = critical_values(0.95, family, "dunnettx", np.eye(k))
        assert adjust == "dunnettx"
        np.testing.assert_allclose(crit, quantile, rtol=1e-9)
        p, _ = adjusted_p_values(np.full(k, quantile), family, "dunnettx", np.eye(k))
        np.testing.assert_allclose(p, 0.05, rtol=1e-9)


def test_fdr_is_benjamini_hochberg() -> None:
    # R: p.adjust(c(0.01, 0.04, 0.03, 0.2), "fdr") = 0.04, 0.05333, 0.05333, 0.2
    z = stats.norm.isf(np.array([0.01, 0.04, 0.03, 0.2]) / 2)
    p, adjust = adjusted_p_values(z, [Family(range(4))], "fdr", np.eye(4))
    assert adjust == "fdr"
    np.testing.assert_allclose(p, [0.04, 0.16 / 3, 0.16 / 3, 0.2], rtol=1e-12)


@pytest.mark.parametrize("family", ["cumulative", "sratio", "cratio", "acat"])
def test_vglm_parallel_families(wvs, family: str) -> None:
    options = {} if family == "cumulative" else {"family": family}
    res = ordstats.OrdinalModel.from_formula(FORMULA, wvs, **options).fit()
    r = R["vglm"][family]
    assert res.llf == pytest.approx(r["logLik"], abs=1e-6)
    # VGAM's cumulative slopes are -beta; sratio/cratio/acat share our signs
    sign = np.r_[1.0, 1.0, -np.ones(7)] if family == "cumulative" else 1.0
    np.testing.assert_allclose(sign * res.params.to_numpy(), list(r["coef"].values()), atol=1e-6)
    # VGAM: inverse expected information
    se = np.sqrt(np.diag(res.expected_covariance.matrix))
    np.testing.assert_allclose(se, list(r["se"].values()), atol=1e-6)


def test_clmm_random_country(wvs) -> None:
    r = R["clmm"]
    res = _fit_as_r("poverty ~ religion + degree + gender + age + (1|country)", wvs, r)
    # R's clmm vcov is a finite-difference Hessian: ~5e-5 off in the threshold SEs
    np.testing.assert_allclose(res.bse, list(r["se"].values())[:6], atol=1e-4)
    assert res.varcorr()["sd"].iloc[0] == pytest.approx(r["sd"], rel=1e-6)
    modes, condvar = res.ranef(condvar=True)
    np.testing.assert_allclose(modes["country"].to_numpy().ravel(), r["ranef"], atol=1e-6)
    np.testing.assert_allclose(condvar["country"].to_numpy().ravel(), r["condvar"], rtol=1e-4)


@pytest.fixture(scope="module")
def mixed(wvs):
    formula = "poverty ~ religion + degree + gender + age + (1|country)"
    return ordstats.OrdinalModel.from_formula(formula, wvs)


def test_clmm_drop1_and_emmeans(mixed) -> None:
    res = mixed.fit()
    r = _r_table(R["clmm"]["drop1"])
    ours = res.drop1(test="Chisq")
    np.testing.assert_allclose(ours["LRT"][1:], r["LRT"][1:], rtol=1e-6)
    np.testing.assert_allclose(ours["AIC"], r["AIC"], rtol=1e-8)
    emm = res.emmeans("~ poverty | gender", mode="prob", re_form=0).summary_frame()
    r_emm = pd.DataFrame(R["clmm"]["emmeans_prob"])
    np.testing.assert_allclose(emm["prob"], r_emm["prob"], atol=1e-6)
    np.testing.assert_allclose(emm["SE"], r_emm["SE"], atol=1e-4)


def test_clmm_agq_is_the_exact_integral(mixed, wvs) -> None:
    # R's clmm(nAGQ = 10) stops on these data; recompute the marginal log-likelihood
    # at ordstats' estimates by 200-point Gauss-Hermite about each group's mode
    res = mixed.fit(nagq=10)
    beta = res.params.to_numpy()
    sd = float(res.varcorr()["sd"].iloc[0])
    design = wvs[["religion", "degree", "gender"]].eq(["yes", "yes", "male"]).to_numpy(float)
    eta = np.column_stack([design, wvs["age"]]) @ beta[2:]
    theta = np.r_[-np.inf, beta[:2], np.inf]
    y = wvs["poverty"].cat.codes.to_numpy()
    nodes, weights = np.polynomial.hermite_e.hermegauss(200)
    total = 0.0
    for country in wvs["country"].cat.categories:
        rows = (wvs["country"] == country).to_numpy()

        def log_joint(u, rows=rows):
            e = eta[rows][:, None] + np.atleast_1d(u)
            p = special.expit(theta[y[rows] + 1][:, None] - e) - special.expit(
                theta[y[rows]][:, None] - e
            )
            return np.log(p).sum(axis=0) + stats.norm.logpdf(u, scale=sd)

        mode = optimize.minimize_scalar(lambda u: -log_joint(u)[0], bounds=(-5, 5)).x
        h = 1e-4
        curvature = -(log_joint(mode + h) - 2 * log_joint(mode) + log_joint(mode - h))[0] / h**2
        spread = 1 / np.sqrt(curvature)
        values = log_joint(mode + spread * nodes) + nodes**2 / 2
        total += special.logsumexp(values, b=weights) + np.log(spread)
    assert res.llf == pytest.approx(total, abs=1e-8)
    assert res.llf > mixed.fit().llf  # not the Laplace value


@pytest.mark.parametrize(
    ("case", "family", "options"),
    [
        ("sratio_gender", "sratio", {"nominal": "~ gender"}),
        ("acat_gender", "acat", {"nominal": "~ gender"}),
        ("sratio_reverse", "sratio", {"reverse": True}),
        ("acat_reverse", "acat", {"reverse": True}),
    ],
)
def test_vglm_partial_and_reverse(wvs, case: str, family: str, options: dict) -> None:
    formula = FORMULA if "nominal" not in options else FORMULA.replace(" + gender", "")
    res = ordstats.OrdinalModel.from_formula(formula, wvs, family=family, **options).fit()
    r = R["vglm"][case]
    assert res.llf == pytest.approx(r["logLik"], abs=1e-6)
    # VGAM orders (Intercept):1, :2, slopes, gendermale:1, :2; ours steps, step effects, slopes
    order = [0, 1, *range(4, 10), 2, 3] if "nominal" in options else list(range(9))
    se = np.sqrt(np.diag(res.expected_covariance.matrix))
    # reverse=True: ours are VGAM's reverse = TRUE estimates, signs included
    estimates = res.params.to_numpy()[order]
    np.testing.assert_allclose(estimates, list(r["coef"].values()), atol=1e-6)
    np.testing.assert_allclose(se[order], list(r["se"].values()), atol=1e-6)


def test_country_by_cubic_age(wvs) -> None:
    r = R["poly"]
    res = _fit_as_r("poverty ~ gender + religion + degree + country * poly(age, 3)", wvs, r)
    np.testing.assert_allclose(res.predict(NEW), r["prob"], atol=1e-7)
    drop = _r_table(r["drop1"])
    np.testing.assert_allclose(res.drop1(test="Chisq")["LRT"][1:], drop["LRT"][1:], rtol=1e-6)
    wald = _r_table(r["anova_II"])
    ours = ordstats.anova(res, type="II")
    np.testing.assert_allclose(ours["Chisq"], wald["Chisq"], rtol=1e-6)
    assert list(ours.index) == list(wald.index)
