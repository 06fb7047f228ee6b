"""Inference toolkit, prediction SEs and the CLI for the sratio, cratio and acat families."""

from __future__ import annotations

import json

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats

import ordstats
from ordstats.cli import main
from ordstats.errors import ConvergenceWarning, SpecificationError
from ordstats.results.goodness import probability_residuals, residuals_from_probabilities
from tests import _reference as ref
from tests import _vglm
from tests._numdiff import central_jacobian

#: VGAM's confint(method = "profile") interpolates the profile on a grid; the
#: exact roots found here differ from it by up to ~2e-4 on these cases.
ATOL_PROFILE_VGAM = 5e-4
#: LR statistics and probabilities from optimised log-likelihoods.
RTOL = 1e-6

fit = ordstats.OrdinalModel.from_formula


@pytest.fixture(scope="module")
def sratio(wine):
    return fit("rating ~ temp + contact", wine, family="sratio").fit()


# -- likelihood-ratio tests ------------------------------------------------------------


@pytest.mark.parametrize("family", ["sratio", "cratio", "acat"])
def test_lr_test_of_parallel_against_nonparallel_slopes(wine, family):
    """The statistic from VGAM's log-likelihoods of the two fits."""
    parallel = ref.load(f"vglm_wine_{family}")["loglik"]
    nonparallel = ref.load(f"vglm_extra_wine_{family}_nonparallel")["loglik"]
    restricted = fit("rating ~ temp + contact", wine, family=family).fit()
    full = fit("rating ~ temp", wine, family=family, nominal="~ contact").fit()
    test = ordstats.lr_test(restricted, full)
    assert test.statistic == pytest.approx(2 * (nonparallel - parallel), rel=RTOL)
    assert test.df == 3
    assert test.pvalue == pytest.approx(stats.chi2.sf(test.statistic, 3), rel=1e-10)
    assert "family=" + family in test.restricted
    table = ordstats.anova(restricted, full)
    assert table["LR.stat"].iloc[1] == pytest.approx(test.statistic, rel=1e-10)


def test_nominal_test_relaxes_the_shared_slopes(sratio):
    """R's nominal_test idea for the step families: each term made step-specific.

    A step-specific temp effect is separated (rating 1 only cold, 5 only warm),
    which the test reports."""
    with pytest.warns(ConvergenceWarning, match="relaxing 'temp'"):
        table = sratio.nominal_test()
    vglm = {
        name: ref.load(f"vglm_{name}")["loglik"]
        for name in ("wine_sratio", "extra_wine_sratio_nonparallel")
    }
    assert table.loc["contact", "logLik"] == pytest.approx(
        vglm["extra_wine_sratio_nonparallel"], rel=RTOL
    )
    assert table.loc["contact", "LRT"] == pytest.approx(
        2 * (vglm["extra_wine_sratio_nonparallel"] - vglm["wine_sratio"]), rel=RTOL
    )
    assert table.loc["contact", "Df"] == 3
    with pytest.raises(
        SpecificationError, match="scale effects are defined for the cumulative family only"
    ):
        sratio.scale_test()


def test_lr_test_refuses_models_of_different_families(wine, sratio):
    cumulative = fit("rating ~ temp + contact", wine).fit()
    smaller = fit("rating ~ temp", wine, family="sratio").fit()
    for restricted, full in [
        (smaller, cumulative),
        (smaller, fit("rating ~ temp + contact", wine, family="sratio", reverse=True).fit()),
    ]:
        with pytest.raises(SpecificationError, match=r"different families .* not nested"):
            ordstats.lr_test(restricted, full)
    # non-nested comparisons are what Vuong's test is for
    vuong = ordstats.vuong_test(cumulative, sratio)
    assert np.isfinite(vuong.statistic)


# -- profile likelihood ------------------------------------------------------------------

PROFILE_CASES = [
    c for c in ref.cases("vglm_") if "cumulative" not in c and ref.load(c).get("profile_ci")
]


@pytest.mark.parametrize("case", PROFILE_CASES)
def test_profile_intervals_agree_with_vglm(case):
    res = _vglm.fit(case)
    expected = np.array([ref.load(case)["profile_ci"][n] for n in _vglm.vglm_names(res)])
    np.testing.assert_allclose(
        res.conf_int(method="profile").to_numpy(), expected, atol=ATOL_PROFILE_VGAM, rtol=0
    )


def test_profile_interval_ends_are_exact(wine, sratio):
    """At an end of the 95% profile interval of b, refitting with b fixed (as an offset)
    loses exactly chi2_1(0.95) / 2 of log-likelihood."""
    upper = sratio.conf_int(method="profile").loc["temp[T.warm]", "upper"]
    offset = upper * (wine["temp"] == "warm").to_numpy(dtype=float)
    fixed = fit("rating ~ contact", wine, family="sratio", offset=offset).fit()
    assert 2 * (sratio.llf - fixed.llf) == pytest.approx(stats.chi2.ppf(0.95, 1), rel=1e-7)


# -- covariances ---------------------------------------------------------------------------


def test_expected_covariance_as_cov_type_gives_vglm_standard_errors(wine):
    data = ref.load("vglm_wine_cratio")
    res = fit("rating ~ temp + contact", wine, family="cratio").fit(cov_type="expected")
    assert res.cov_type == "expected"
    np.testing.assert_allclose(res.bse.to_numpy(), _vglm.in_vglm_order(data["se"], res), rtol=1e-4)
    assert "expected" in res.summary().as_text()
    assert res.expected_covariance.cond == pytest.approx(data["cond_H"], rel=1e-4)
    assert res.cond_H == pytest.approx(res.nonrobust_covariance.cond)  # the observed Hessian's
    with pytest.raises(SpecificationError, match="takes no cov_kwds"):
        res.get_robustcov_results("expected", {"groups": wine["judge"]})


def test_robust_covariance_is_the_cluster_sandwich_of_the_binary_glm(sratio):
    """Summed over an observation's binary steps, the GLM scores are its sratio scores."""
    robust = sratio.get_robustcov_results("robust")
    data = sratio.model.data
    obs, step = np.nonzero(np.arange(4)[None, :] <= data.y[:, None])
    exog = np.column_stack([np.eye(4)[step], data.X[obs]])
    glm = sm.GLM((data.y[obs] == step).astype(float), exog, family=sm.families.Binomial())
    clustered = glm.fit(cov_type="cluster", cov_kwds={"groups": obs, "use_correction": False})
    np.testing.assert_allclose(robust.bse.to_numpy(), clustered.bse, rtol=1e-6)


# -- predictions with standard errors ---------------------------------------------------


@pytest.mark.parametrize(
    "kwargs",
    [
        {"family": "sratio"},
        {"family": "acat", "reverse": True},
        {"family": "cratio", "link": "cloglog"},
    ],
)
@pytest.mark.parametrize("which", ["prob", "cumprob"])
def test_prediction_standard_errors_by_the_delta_method(wine, kwargs, which):
    res = fit("rating ~ temp", wine, nominal="~ contact", **kwargs).fit()
    newdata = wine.iloc[[0, 3, 40, 71]]
    pred = res.get_prediction(newdata, which=which)
    np.testing.assert_allclose(
        pred.predicted.to_numpy(), res.predict(newdata, which=which).to_numpy(), rtol=1e-12
    )
    # finite-difference gradient of the predictions through a refitted-parameter model
    params = res.params.to_numpy()

    def predicted(p):
        moved = ordstats.OrdinalResults(res.model, p, res.model.evaluate(p), res.fit_info)
        return moved.predict(newdata, which=which).to_numpy()

    grad = central_jacobian(predicted, params, 1e-6)
    se = np.sqrt(np.einsum("mjk,kl,mjl->mj", grad, res.cov_params().to_numpy(), grad))
    np.testing.assert_allclose(pred.se.to_numpy(), se, rtol=1e-5, atol=1e-9)


# -- goodness of fit --------------------------------------------------------------------


def test_goodness_of_fit_tools(sratio):
    r2 = sratio.pseudo_rsquared
    assert r2["mcfadden"] == pytest.approx(1 - sratio.llf / sratio.llnull)
    assert np.isnan(r2["mckelvey_zavoina"])  # needs a latent cumulative model
    np.testing.assert_allclose(
        sratio.resid_prob,
        residuals_from_probabilities(sratio.predict().to_numpy(), sratio.model.data.y),
    )
    with pytest.raises(SpecificationError, match="cumulative model; for family='sratio'"):
        sratio.brant_test()


@pytest.mark.parametrize("link", ["logit", "aranda-ordaz"])
def test_probability_residuals_of_cumulative_fits_agree_both_ways(wine, link):
    """From the cut-points and from the predicted probabilities; with a flexible link
    both use the estimated lambda."""
    res = fit("rating ~ temp + contact", wine, link=link).fit()
    from_probabilities = residuals_from_probabilities(res.predict().to_numpy(), res.model.data.y)
    np.testing.assert_allclose(res.resid_prob, from_probabilities, atol=1e-12)
    np.testing.assert_allclose(
        probability_residuals(res._evaluation, res._evaluation.link), from_probabilities, atol=1e-12
    )


def test_compare_links_within_a_family(wine):
    cmp = ordstats.compare_links(
        "rating ~ temp + contact", wine, family="cratio", links=("logit", "cloglog")
    )
    assert cmp.table["logLik"].tolist() == pytest.approx(
        [
            ref.load("vglm_wine_cratio")["loglik"],
            ref.load("vglm_extra_wine_cratio_cloglog")["loglik"],
        ],
        rel=RTOL,
    )
    assert "flexible links exist for the cumulative family only" in str(cmp)
    assert cmp.nested.empty


# -- command line ------------------------------------------------------------------------


def test_cli_fits_a_family(capsys):
    assert (
        main(
            [
                "fit",
                "rating ~ temp + contact",
                "--data",
                "wine",
                "--family",
                "acat",
                "--reverse",
                "--format",
                "json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["family"] == "acat" and out["reverse"] is True
    coef = ref.load("vglm_wine_acat_reverse")["coef"]
    assert out["params"]["temp[T.warm]"]["estimate"] == pytest.approx(coef["tempwarm"], rel=1e-6)
    assert out["params"]["1:2"]["estimate"] == pytest.approx(coef["(Intercept):1"], rel=1e-6)
    assert (
        main(
            [
                "fit",
                "rating ~ temp",
                "--data",
                "wine",
                "--family",
                "sratio",
                "--cov-type",
                "expected",
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "Stopping-Ratio Model Results" in text and "expected" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--family", "acat", "--link", "probit"], "--family acat supports link 'logit'"),
        (["--reverse"], "--reverse is not defined for --family cumulative"),
    ],
)
def test_cli_family_errors(args, message, capsys):
    assert main(["fit", "rating ~ temp", "--data", "wine", *args]) == 2
    assert message in capsys.readouterr().err


def test_cli_rejects_an_unknown_family(capsys):
    assert main(["fit", "rating ~ temp", "--data", "wine", "--family", "logistic"]) == 2
    assert "invalid choice: 'logistic'" in capsys.readouterr().err
