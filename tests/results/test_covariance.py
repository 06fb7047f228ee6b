"""Sandwich covariances: fit(cov_type=...), against R's sandwich, statsmodels and by hand."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

import ordstats
from ordstats.errors import DataError, MissingDataWarning, SpecificationError
from ordstats.results.covariance import observed_covariance
from tests import _reference as ref
from tests._numdiff import central_jacobian, second_difference_hessian

#: SEs are functions of the estimates; both sides stop at max|grad| < 1e-6 or better.
RTOL_SE = 1e-4


@pytest.fixture(scope="module")
def wine_model(wine):
    return ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine)


def _r_se(case: str, key: str, names: list[str]) -> np.ndarray:
    return ref.in_r_order(ref.load(case)[key], names)


def test_robust_matches_r_sandwich(wine_model):
    res = wine_model.fit(cov_type="robust")
    names = list(res.params.index)
    np.testing.assert_allclose(res.bse, _r_se("sandwich_wine", "se_robust", names), rtol=RTOL_SE)
    vcov = np.array(ref.load("sandwich_wine")["vcov_robust"], dtype=float)
    np.testing.assert_allclose(res.cov_params().to_numpy(), vcov, rtol=RTOL_SE, atol=1e-10)
    assert res.cov_type == res.covariance.kind == "robust"


def test_cluster_matches_r_vcovcl(wine, wine_model):
    names = list(wine_model.param_names)
    adjusted = wine_model.fit(cov_type="cluster", cov_kwds={"groups": wine["judge"]})
    np.testing.assert_allclose(
        adjusted.bse, _r_se("sandwich_wine", "se_cluster", names), rtol=RTOL_SE
    )
    raw = wine_model.fit(
        cov_type="cluster", cov_kwds={"groups": wine["judge"], "use_correction": False}
    )
    np.testing.assert_allclose(
        raw.bse, _r_se("sandwich_wine", "se_cluster_hc0", names), rtol=RTOL_SE
    )
    full = wine_model.fit(
        cov_type="cluster", cov_kwds={"groups": wine["judge"], "use_correction": "full"}
    )
    np.testing.assert_allclose(full.bse**2 / adjusted.bse**2, np.full(6, 71 / 66))


def test_frequency_weights_count_each_observation(housing):
    """Weighted robust SEs equal R's sandwich on the data expanded by the weights."""
    res = ordstats.OrdinalModel.from_formula(
        "Sat ~ Infl + Type + Cont", housing, weights="Freq"
    ).fit(cov_type="robust")
    names = list(res.params.index)
    expected = _r_se("sandwich_housing_expanded", "se_robust", names)
    np.testing.assert_allclose(res.bse, expected, rtol=RTOL_SE)


def _sandwich_by_hand(model, params, w):
    """H^-1 (sum w s s') H^-1 with scores and Hessian from finite differences."""
    h = 1e-5
    scores = central_jacobian(lambda p: model.evaluate(p).log_prob, params, h)
    hessian = second_difference_hessian(model.loglike, params, h)
    bread = np.linalg.inv(-hessian)
    return bread @ ((scores * w[:, None]).T @ scores) @ bread


def test_sandwich_by_hand_on_small_case():
    y = np.array([0, 0, 1, 2, 1, 2, 0, 2, 1, 1])
    x = np.array([-1.0, 0.5, 0.2, 1.5, -0.3, 0.9, -1.2, 0.1, 1.1, -0.6])
    w = np.array([1.0, 2.0, 1.0, 3.0, 1.0, 1.0, 2.0, 1.0, 1.0, 2.0])
    model = ordstats.OrdinalModel(y, x, weights=w)
    res = model.fit(cov_type="robust")
    expected = _sandwich_by_hand(model, res.params.to_numpy(), w)
    # central differences of the log-likelihood: ~1e-6 absolute error in the Hessian
    np.testing.assert_allclose(res.cov_params().to_numpy(), expected, atol=1e-5)
    hc1 = model.fit(cov_type="HC1")
    np.testing.assert_allclose(hc1.cov_params(), expected * 15 / (15 - 3), atol=1e-5)


def test_sandwich_by_hand_with_nominal_scale_and_flexible_link(wine):
    """Every parameter block (R's sandwich has no scores for nominal/scale effects)."""
    for kwargs in ({"nominal": "~ contact", "scale": "~ temp"}, {"link": "log-gamma"}):
        formula = "rating ~ temp" if "nominal" in kwargs else "rating ~ temp + contact"
        model = ordstats.OrdinalModel.from_formula(formula, wine, **kwargs)
        res = model.fit(cov_type="robust")
        expected = _sandwich_by_hand(model, res.params.to_numpy(), np.ones(72))
        # the finite-difference Hessian's error grows through its inverse: 1e-3 of the scale
        scale = np.abs(expected).max()
        np.testing.assert_allclose(res.cov_params().to_numpy(), expected, atol=1e-3 * scale)


def _binary_wine(wine):
    high = (wine["rating"].astype(int) > 3).astype(int)
    exog = pd.DataFrame(
        {
            "const": 1.0,
            "warm": (wine["temp"] == "warm").astype(float),
            "yes": (wine["contact"] == "yes").astype(float),
        }
    )
    return high, exog


def test_k2_matches_statsmodels_logit(wine):
    """With two levels the model is a logit: theta = -intercept, same slopes."""
    high, exog = _binary_wine(wine)
    ours = ordstats.OrdinalModel(high, exog[["warm", "yes"]])
    judge = wine["judge"].to_numpy()
    for cov_type, sm_kwds, our_kwds in [
        ("HC0", {}, {}),
        ("cluster", {"groups": judge}, {"groups": judge, "use_correction": "full"}),
    ]:
        extra = {"cov_kwds": sm_kwds} if sm_kwds else {}
        logit = sm.Logit(high, exog).fit(disp=0, cov_type=cov_type, **extra)
        res = ours.fit(cov_type="robust" if cov_type == "HC0" else "cluster", cov_kwds=our_kwds)
        np.testing.assert_allclose(
            res.params.to_numpy(),
            [-logit.params["const"], logit.params["warm"], logit.params["yes"]],
            rtol=1e-6,
        )
        np.testing.assert_allclose(res.bse.to_numpy(), logit.bse.to_numpy(), rtol=RTOL_SE)


def test_k2_weighted_matches_statsmodels_glm(housing):
    high = (housing["Sat"] == "High").astype(int)
    exog = pd.get_dummies(housing[["Infl", "Cont"]], drop_first=True, dtype=float)
    glm = sm.GLM(
        high, sm.add_constant(exog), family=sm.families.Binomial(), freq_weights=housing["Freq"]
    ).fit(cov_type="HC0")
    res = ordstats.OrdinalModel(high, exog, weights=housing["Freq"]).fit(cov_type="robust")
    np.testing.assert_allclose(res.bse.to_numpy(), glm.bse.to_numpy(), rtol=RTOL_SE)


def test_nonrobust_covariance_is_kept(wine_model):
    plain = wine_model.fit()
    robust = plain.get_robustcov_results("robust")
    assert plain.cov_type == "nonrobust" and robust.cov_type == "robust"
    np.testing.assert_allclose(robust.nonrobust_covariance.matrix, plain.covariance.matrix)
    np.testing.assert_allclose(robust.params, plain.params)
    assert robust.llf == plain.llf
    back = robust.get_robustcov_results("nonrobust")
    np.testing.assert_allclose(back.bse, plain.bse)
    # tests and intervals follow the covariance in use
    np.testing.assert_allclose(robust.zvalues, robust.params / robust.bse)
    half = robust.conf_int()["upper"] - robust.params
    np.testing.assert_allclose(half, 1.959963984540054 * robust.bse)


def test_summary_says_which_covariance(wine_model):
    text = str(wine_model.fit(cov_type="robust").summary())
    assert "Covariance:" in text and "robust" in text
    assert "use the robust (sandwich) covariance" in text
    assert "sandwich" not in str(wine_model.fit().summary())


def test_groups_aligned_on_index(wine, wine_model):
    shuffled = wine["judge"].sample(frac=1.0, random_state=1)
    a = wine_model.fit(cov_type="cluster", cov_kwds={"groups": shuffled})
    b = wine_model.fit(cov_type="cluster", cov_kwds={"groups": wine["judge"].to_numpy()})
    np.testing.assert_allclose(a.bse, b.bse)


@pytest.mark.parametrize(
    ("cov_type", "cov_kwds", "error", "message"),
    [
        ("sandwich", None, SpecificationError, "unknown cov_type"),
        ("cluster", None, DataError, "needs cov_kwds"),
        ("cluster", {"groups": "jugde"}, DataError, "not a column of the data; did you mean"),
        ("cluster", {"groups": np.arange(5)}, DataError, "one label per row"),
        ("cluster", {"groups": np.zeros(72)}, DataError, "at least two clusters"),
        ("cluster", {"groups": np.r_[np.nan, np.ones(71)]}, DataError, "have 1 missing values"),
        (
            "cluster",
            {"groups": np.arange(72), "use_correction": "yes"},
            SpecificationError,
            "use_correction",
        ),
        ("robust", {"groups": np.arange(72)}, SpecificationError, "not understood"),
    ],
)
def test_bad_covariance_requests(wine_model, cov_type, cov_kwds, error, message):
    with pytest.raises(error, match=message):
        wine_model.fit(cov_type=cov_type, cov_kwds=cov_kwds)


def test_groups_by_column_name_in_memory_equal_the_labels(wine):
    """A name is read from the estimation rows (rows dropped for missing values skipped)."""
    data = wine.copy()
    data.loc[[3, 10], "contact"] = None
    with pytest.warns(MissingDataWarning, match="2 of 72 rows"):
        model = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", data)
    by_name = model.fit(cov_type="cluster", cov_kwds={"groups": "judge"})
    by_series = model.fit(cov_type="cluster", cov_kwds={"groups": data["judge"]})
    rows = model.design.row_index
    by_array = model.fit(
        cov_type="cluster", cov_kwds={"groups": data.loc[rows, "judge"].to_numpy()}
    )
    assert by_name.cov_type == "cluster"
    np.testing.assert_allclose(by_name.cov_params(), by_series.cov_params(), rtol=1e-13)
    np.testing.assert_allclose(by_name.cov_params(), by_array.cov_params(), rtol=1e-13)
    assert not np.allclose(by_name.bse, model.fit().bse)


def test_groups_by_column_name_in_a_shifted_basis(wine):
    """A covariate far from zero (fitted in a shifted basis): name and labels agree."""
    data = wine.assign(x=1e6 + np.arange(72.0) % 9)
    model = ordstats.OrdinalModel.from_formula("rating ~ temp + x", data)
    assert model.evaluator.basis is not None
    by_name = model.fit().get_robustcov_results("cluster", {"groups": "judge"})
    by_series = model.fit().get_robustcov_results("cluster", {"groups": data["judge"]})
    np.testing.assert_allclose(by_name.bse, by_series.bse, rtol=1e-12)


def test_groups_series_must_cover_rows(wine, wine_model):
    with pytest.raises(DataError, match="no label for 2 of the rows"):
        wine_model.fit(cov_type="cluster", cov_kwds={"groups": wine["judge"].iloc[2:]})


def test_a_model_not_identified_is_singular_as_r_finds_it(wine):
    """contact both nominal and scale beside temp * contact: within each contact group the
    scale trades against the cut-points and the temp effect. R's conv.check: an eigenvalue
    of the Hessian below sqrt(eps) ("Hessian is numerically singular"); ours is 2.6e-11
    here, with a reciprocal condition number (units removed) of about 4e-13 that rounding
    can put on either side of 1e-13."""
    with pytest.warns(ordstats.errors.CollinearityWarning, match="also a nominal effect"):
        model = ordstats.OrdinalModel.from_formula(
            "rating ~ temp * contact", wine, nominal="~ contact", scale="~ temp + contact"
        )
    # the flat direction may also leave a Newton step that is not small (code 1, "may be
    # unbounded"), as rounding decides (numpy 2.4 / scipy 1.17 here): both are true
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = model.fit()
        assert np.isnan(res.bse).all()
    said = [str(w.message) for w in caught]
    assert all(issubclass(w.category, ordstats.errors.ConvergenceWarning) for w in caught)
    assert any("numerically singular" in text for text in said), said


def test_r_rule_alone_does_not_make_units_singular():
    """An eigenvalue below sqrt(eps) from units alone (a predictor in 1e-7 units) with a
    well-conditioned equilibrated Hessian keeps its covariance."""
    hessian = np.diag([2.0, 3.0e-10]) + 1e-11
    cov = observed_covariance(hessian)
    assert not cov.singular
    assert np.all(np.isfinite(cov.matrix))
    singular = observed_covariance(np.array([[1.0, 1.0], [1.0, 1.0 + 1e-14]]))
    assert singular.singular
