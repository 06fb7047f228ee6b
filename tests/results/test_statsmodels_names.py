"""The names statsmodels users reach for, with their statsmodels meaning."""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import ordstats
from ordstats.errors import OrdstatsError, PredictionError, SpecificationError
from tests._numdiff import central_jacobian


@pytest.fixture(scope="module")
def continuous(wine):
    """A model with a continuous regressor that is also a scale effect."""
    rng = np.random.default_rng(3)
    data = wine.assign(x=rng.normal(size=len(wine)))
    res = ordstats.OrdinalModel.from_formula("rating ~ temp + x", data, scale="~ x").fit()
    return data, res


def test_llr_and_its_pvalue(wine_res):
    assert wine_res.llr == pytest.approx(2 * (wine_res.llf - wine_res.llnull))
    assert wine_res.llr_pvalue == pytest.approx(stats.chi2.sf(wine_res.llr, 2))
    assert wine_res.df_model == 2
    assert wine_res.df_resid == wine_res.nobs - 6


def test_fittedvalues_resid_and_names(wine_res, wine):
    temp = (wine["temp"] == "warm").astype(float)
    contact = (wine["contact"] == "yes").astype(float)
    expected = wine_res.params["temp[T.warm]"] * temp + wine_res.params["contact[T.yes]"] * contact
    np.testing.assert_allclose(wine_res.fittedvalues, expected)
    pd.testing.assert_series_equal(wine_res.resid, wine_res.resid_prob)
    assert wine_res.model.endog_names == "rating"
    assert wine_res.model.exog_names == ["temp[T.warm]", "contact[T.yes]"]


def test_mle_retvals(wine_res, wine):
    assert wine_res.mle_retvals["converged"] is True
    assert wine_res.mle_retvals["method"] == "newton"
    bfgs = wine_res.model.fit(method="bfgs").mle_retvals
    assert bfgs["prefit_iterations"] > 0 and bfgs["iterations"] <= 3


def test_predict_exog_on_arrays(wine):
    model = ordstats.OrdinalModel(wine["rating"], wine[["temp"]].eq("warm").astype(float))
    res = model.fit()
    by_array = res.predict(exog=np.array([[0.0], [1.0]]))
    by_frame = res.predict(pd.DataFrame({"temp": [0.0, 1.0]}))
    np.testing.assert_allclose(by_array, by_frame)
    with pytest.raises(PredictionError, match="not both"):
        res.predict(wine, exog=wine)


def test_summary_keywords(wine_res):
    names = ["a", "b", "c", "d", "e", "f"]
    text = str(wine_res.summary(yname="liking", xname=names, title="My title", alpha=0.1))
    assert "liking" in text and "My title" in text and "[0.05" in text
    assert "temp[T.warm]" not in text and "\ne " in text
    with pytest.raises(OrdstatsError, match="6 names"):
        wine_res.summary(xname=["a"])
    two = wine_res.summary2(title="T2")
    assert "T2" in str(two)
    assert list(two.tables[1].index) == list(wine_res.params.index)


def test_wald_test_prints_a_chi2_test(wine_res):
    result = wine_res.wald_test("temp[T.warm], contact[T.yes]")
    assert result.df == 2
    text = str(result)
    assert "df_denom" not in text
    assert "chi2 = 27.91 on 2 df" in text
    assert f"p-value = {result.pvalue:.3g}" in text


def test_wald_test_terms(housing):
    res = ordstats.OrdinalModel.from_formula(
        "Sat ~ Infl + Type", housing, weights="Freq", nominal="~ Cont"
    ).fit()
    table = res.wald_test_terms()
    assert list(table.index) == ["Infl", "Type", "nominal: Cont"]
    assert list(table["df"]) == [2, 3, 2]
    joint = res.wald_test("Type[T.Apartment], Type[T.Atrium], Type[T.Terrace]")
    assert table.loc["Type", "chi2"] == pytest.approx(joint.statistic)
    assert table.loc["Type", "P>chi2"] == pytest.approx(joint.pvalue)


def _predict_shifted(res, data, column, h):
    up = res.predict(data.assign(**{column: data[column] + h})).to_numpy()
    down = res.predict(data.assign(**{column: data[column] - h})).to_numpy()
    return ((up - down) / (2 * h)).mean(axis=0)


def test_margeff_against_finite_differences_of_predict(continuous):
    data, res = continuous
    me = res.get_margeff()
    assert list(me.margeff.index) == ["temp[T.warm]", "x"]
    np.testing.assert_allclose(
        me.margeff.loc["x"], _predict_shifted(res, data, "x", 1e-6), atol=1e-7
    )
    np.testing.assert_allclose(me.margeff.sum(axis=1), 0.0, atol=1e-9)


def test_margeff_standard_errors_are_the_delta_method(continuous):
    data, res = continuous

    def effect(params):
        moved = copy.copy(res)
        moved.params = pd.Series(params, index=res.params.index)
        return _predict_shifted(moved, data, "x", 1e-5)

    jac = central_jacobian(effect, res.params.to_numpy(), 1e-4)
    expected = np.sqrt(np.diag(jac @ res.cov_params().to_numpy() @ jac.T))
    np.testing.assert_allclose(res.get_margeff().margeff_se.loc["x"], expected, rtol=1e-3)
    frame = res.get_margeff().summary_frame()
    assert frame.shape == (10, 6)
    assert "Average marginal effects" in str(res.get_margeff())


def test_margeff_of_a_logit_location_model_is_analytic(wine_res):
    # dP(Y = j)/dx = -beta [f(theta_j - eta) - f(theta_{j-1} - eta)], averaged
    theta = np.r_[-np.inf, wine_res.params.iloc[:4].to_numpy(), np.inf]
    eta = wine_res.fittedvalues.to_numpy()[:, None]
    density = stats.logistic.pdf(theta[None, :] - eta)
    beta = wine_res.params["contact[T.yes]"]
    expected = (-beta * (density[:, 1:] - density[:, :-1])).mean(axis=0)
    np.testing.assert_allclose(
        wine_res.get_margeff().margeff.loc["contact[T.yes]"], expected, atol=1e-8
    )


def test_model_predict_takes_params_and_exog_as_statsmodels(wine):
    from statsmodels.miscmodels.ordinal_model import OrderedModel

    exog = pd.DataFrame(
        {
            "warm": (wine["temp"] == "warm").astype(float),
            "yes": (wine["contact"] == "yes").astype(float),
        }
    )
    sm_res = OrderedModel(wine["rating"], exog, distr="logit").fit(method="newton", disp=0)
    # statsmodels' params: slopes, then the first threshold and log increments
    slopes, raw = sm_res.params.to_numpy()[:2], sm_res.params.to_numpy()[2:]
    thresholds = np.cumsum(np.r_[raw[0], np.exp(raw[1:])])
    model = ordstats.OrdinalModel(wine["rating"], exog)  # not fitted
    new = exog.to_numpy()[::7]
    ours = model.predict(np.r_[thresholds, slopes], new)
    np.testing.assert_allclose(ours, sm_res.model.predict(sm_res.params, new), atol=1e-14)
    cum = model.predict(np.r_[thresholds, slopes], new, which="cum")
    np.testing.assert_allclose(cum, np.cumsum(ours.to_numpy(), axis=1)[:, :-1], atol=1e-14)
    np.testing.assert_allclose(
        model.predict(np.r_[thresholds, slopes], new, which="linpred"), new @ slopes
    )
    res = model.fit()
    pd.testing.assert_frame_equal(model.predict(res.params), res.predict())
    shuffled = res.params.iloc[::-1]  # a Series is aligned on its labels
    pd.testing.assert_frame_equal(model.predict(shuffled, new), res.predict(exog=new))


def test_model_predict_refuses_params_of_another_model_and_decreasing_thresholds(wine):
    small = ordstats.OrdinalModel.from_formula("rating ~ temp", wine)
    full = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    # before: the extra label was dropped silently and contact's effect ignored
    with pytest.raises(SpecificationError, match=r"label\(s\) 'contact\[T.yes\]' that are not"):
        small.predict(full.params, wine.head())
    with pytest.raises(SpecificationError, match=r"lacks the parameter\(s\) '1\|2' and has"):
        small.predict(full.params.drop("1|2"), wine.head())
    # before: NaN probabilities and a warning blaming nominal effects the model has not
    with pytest.raises(SpecificationError, match="thresholds given in params do not increase"):
        small.predict([2.0, 1.0, 3.0, 4.0, 0.5], wine.head())
    # sequential and adjacent-category thresholds need not increase
    sratio = ordstats.OrdinalModel.from_formula("rating ~ temp", wine, family="sratio")
    assert np.all(np.isfinite(sratio.predict([2.0, 1.0, 3.0, 4.0, 0.5], wine.head())))


def test_model_predict_on_formula_models_and_flexible_links(wine):
    model = ordstats.OrdinalModel.from_formula("rating ~ temp", wine, link="aranda-ordaz")
    res = model.fit()
    pd.testing.assert_frame_equal(model.predict(res.params, wine.head()), res.predict(wine.head()))


def test_distr_is_statsmodels_name_for_link(wine):
    # before: distr= raised "unknown option 'distr'" and an unfrozen scipy.stats.norm was
    # "unknown link"; statsmodels' OrderedModel takes both
    from statsmodels.miscmodels.ordinal_model import OrderedModel

    exog = pd.get_dummies(wine[["temp", "contact"]], drop_first=True).astype(float)
    theirs = OrderedModel(wine["rating"], exog, distr="probit").fit(method="bfgs", disp=False)
    for distr in ("probit", stats.norm):
        ours = ordstats.OrdinalModel(wine["rating"], exog, distr=distr).fit(disp=0)
        assert ours.llf == pytest.approx(theirs.llf, rel=1e-8)
        np.testing.assert_allclose(ours.params.iloc[-2:], theirs.params.iloc[:2], rtol=1e-5)
    logit = ordstats.OrdinalModel.from_formula("rating ~ temp", wine, distr=stats.logistic)
    assert logit.fit().llf == pytest.approx(
        ordstats.OrdinalModel.from_formula("rating ~ temp", wine).fit().llf, rel=1e-10
    )


@pytest.mark.parametrize(
    "keywords, match",
    [
        ({"distr": "probit", "link": "logit"}, "distr= .* and link= were both given"),
        ({"distr": stats.t}, r"'t' needs its shape parameters \(df\).*scipy.stats.t\(df=...\)"),
    ],
)
def test_distr_conflicts_and_unfrozen_shapes_are_refused(wine, keywords, match):
    with pytest.raises(SpecificationError, match=match):
        ordstats.OrdinalModel.from_formula("rating ~ temp", wine, **keywords)


def test_normalized_cov_params_stays_model_based_under_a_sandwich(wine):
    model = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine)
    plain, robust = model.fit(), model.fit(cov_type="HC0")
    pd.testing.assert_frame_equal(plain.normalized_cov_params, plain.cov_params())
    pd.testing.assert_frame_equal(robust.normalized_cov_params, plain.cov_params(), rtol=1e-10)
    assert not np.allclose(robust.cov_params(), plain.cov_params())
