"""The results object: inference tables, summary rendering and predictions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import ordstats


def test_series_share_the_parameter_index(wine_res):
    names = ["1|2", "2|3", "3|4", "4|5", "temp[T.warm]", "contact[T.yes]"]
    for series in (
        wine_res.params,
        wine_res.bse,
        wine_res.zvalues,
        wine_res.tvalues,
        wine_res.pvalues,
        wine_res.gradient,
    ):
        assert list(series.index) == names
    assert list(wine_res.cov_params().index) == names == list(wine_res.cov_params().columns)
    assert list(wine_res.conf_int().columns) == ["lower", "upper"]


def test_inference_is_consistent(wine_res):
    np.testing.assert_allclose(wine_res.zvalues, wine_res.params / wine_res.bse)
    np.testing.assert_allclose(wine_res.pvalues, 2 * stats.norm.sf(np.abs(wine_res.zvalues)))
    np.testing.assert_allclose(np.sqrt(np.diag(wine_res.cov_params())), wine_res.bse)
    ci90 = wine_res.conf_int(alpha=0.10)
    np.testing.assert_allclose(ci90["upper"] - wine_res.params, stats.norm.ppf(0.95) * wine_res.bse)
    # the covariance is the inverse observed information
    info = -wine_res.model.hessian(wine_res.params.to_numpy())
    np.testing.assert_allclose(wine_res.cov_params().to_numpy() @ info, np.eye(6), atol=1e-10)


def test_sizes_and_criteria(wine_res):
    assert wine_res.nobs == 72 and wine_res.n_rows == 72
    assert wine_res.k_params == 6 and wine_res.df_model == 2 and wine_res.df_resid == 66
    assert wine_res.aic == pytest.approx(-2 * wine_res.llf + 12)
    assert wine_res.bic == pytest.approx(-2 * wine_res.llf + 6 * np.log(72))
    counts = np.bincount(wine_res.model.data.y, minlength=5)
    assert wine_res.llnull == pytest.approx(counts @ np.log(counts / 72))
    assert wine_res.llnull < wine_res.llf


def test_thresholds_for_structured_fit(wine):
    res = ordstats.OrdinalModel.from_formula(
        "rating ~ temp + contact", wine, threshold="equidistant"
    ).fit()
    theta = res.thresholds["estimate"]
    assert list(theta.index) == ["1|2", "2|3", "3|4", "4|5"]
    np.testing.assert_allclose(np.diff(theta), res.params["spacing"])
    # delta method: Var(t1 + (j-1) s) from the covariance of (threshold.1, spacing)
    cov = res.cov_params().loc[["threshold.1", "spacing"], ["threshold.1", "spacing"]].to_numpy()
    j = np.arange(4.0)
    expected = np.sqrt(cov[0, 0] + 2 * j * cov[0, 1] + j * j * cov[1, 1])
    np.testing.assert_allclose(res.thresholds["std err"], expected, rtol=1e-12)
    # llnull of a structured model is the structured thresholds-only fit
    null = ordstats.OrdinalModel.from_formula("rating ~ 1", wine, threshold="equidistant").fit()
    assert res.llnull == pytest.approx(null.llf, rel=1e-10)


def test_odds_ratios(wine_res):
    table = wine_res.odds_ratios()
    assert list(table.index) == ["temp[T.warm]", "contact[T.yes]"]
    np.testing.assert_allclose(table["odds_ratio"], np.exp(wine_res.params.iloc[4:]))
    np.testing.assert_allclose(table["lower"], np.exp(wine_res.conf_int().iloc[4:]["lower"]))
    assert table.loc["temp[T.warm]", "odds_ratio"] == pytest.approx(12.22, abs=0.01)


def test_summary_text(wine_res):
    text = wine_res.summary().as_text()
    for piece in [
        "Cumulative Link Model Results",
        "Dep. Variable:",
        "rating",
        "Link:",
        "logit",
        "No. Observations:",
        "72",
        "Log-Likelihood:",
        "-86.4919",
        "AIC:",
        "184.9838",
        "BIC:",
        "198.6438",
        "Converged:",
        "True",
        "Iterations:",
        "max|grad|:",
        "cond(H):",
        "26.59",
        "Location coefficients",
        "temp[T.warm]",
        "2.5031",
        "Thresholds",
        "1|2",
        "-1.3444",
        "P>|z|",
    ]:
        assert piece in text, piece
    assert text.index("Location coefficients") < text.index("Thresholds")


def test_summary_other_formats(wine_res):
    smry = wine_res.summary(alpha=0.1)
    assert "<table" in smry.as_html() and "temp[T.warm]" in smry.as_html()
    assert "\\begin{tabular}" in smry.as_latex()
    assert "[0.05" in smry.as_text()


def test_summary_notes_weights_and_dropped_rows(housing_res):
    text = housing_res.summary().as_text()
    assert "1681" in text and "sum of frequency weights over 72 rows" in text


def test_fit_does_not_change_the_model(wine_res):
    model = wine_res.model
    before = model.start_params.copy()
    res2 = model.fit()
    np.testing.assert_array_equal(model.start_params, before)
    assert res2 is not wine_res
    pd.testing.assert_series_equal(res2.params, wine_res.params)


def test_predict_defaults_to_fitted_rows(wine_res):
    prob = wine_res.predict()
    assert prob.shape == (72, 5) and list(prob.columns) == ["1", "2", "3", "4", "5"]
    fitted = prob.to_numpy()[np.arange(72), wine_res.model.data.y]
    np.testing.assert_allclose(
        fitted,
        np.exp(-np.array([wine_res.model.evaluate(wine_res.params.to_numpy()).log_prob])).ravel()
        ** -1,
        rtol=1e-12,
    )
    cum = wine_res.predict(which="cumprob")
    np.testing.assert_allclose(
        cum.to_numpy(), np.cumsum(prob.to_numpy(), axis=1)[:, :-1], rtol=1e-12
    )
    klass = wine_res.predict(which="class")
    assert isinstance(klass.dtype, pd.CategoricalDtype) and klass.cat.ordered


@pytest.mark.parametrize("dtype", ["int64", "float64", "Int64"])
def test_predicted_class_keeps_a_numeric_response_dtype(wine, dtype):
    """``which="class"`` of a numeric response gives its numbers, not string labels."""
    data = wine.assign(y=wine["rating"].astype(int).astype(dtype))
    res = ordstats.OrdinalModel.from_formula("y ~ temp + contact", data).fit()
    klass = res.predict(which="class")
    assert klass.cat.ordered
    assert pd.api.types.is_numeric_dtype(klass.cat.categories)
    assert klass.cat.categories.tolist() == [1, 2, 3, 4, 5]
    prob = res.predict()
    np.testing.assert_array_equal(
        klass.astype(float).to_numpy(), np.argmax(prob.to_numpy(), axis=1) + 1.0
    )
    assert (klass.astype(float) >= 3).sum() > 0  # comparable as numbers


def test_predicted_class_keeps_string_labels(wine):
    res = ordstats.OrdinalModel.from_formula(
        "y ~ temp", wine.assign(y=wine["rating"].astype(str)), levels=list("12345")
    ).fit()
    assert res.predict(which="class").cat.categories.tolist() == list("12345")


def test_predict_with_offset_column(wine):
    data = wine.assign(off=np.linspace(-0.5, 0.5, 72))
    res = ordstats.OrdinalModel.from_formula("rating ~ temp", data, offset="off").fit()
    new = data.iloc[:3]
    lin = res.predict(new, which="linear")
    np.testing.assert_allclose(
        lin, res.params["temp[T.warm]"] * (new["temp"] == "warm") + new["off"]
    )
    # without the column: offset 0 with a note naming it (statsmodels' default, issue 14)
    with pytest.warns(ordstats.errors.PredictionWarning, match="give newdata a column 'off'"):
        zero = res.predict(new.drop(columns="off"), which="linear")
    np.testing.assert_allclose(zero, lin - new["off"])


def test_arrays_interface_names_and_predict():
    rng = np.random.default_rng(2)
    X = pd.DataFrame({"a": rng.normal(size=300), "b": rng.normal(size=300)})
    y = pd.Series(
        pd.Categorical.from_codes(rng.integers(0, 3, 300), ["lo", "mid", "hi"], ordered=True),
        name="grade",
    )
    res = ordstats.OrdinalModel(y, X).fit()
    assert list(res.params.index) == ["lo|mid", "mid|hi", "a", "b"]
    np.testing.assert_allclose(res.predict(X.iloc[:5]).to_numpy(), res.predict().iloc[:5])
    np.testing.assert_allclose(res.predict(X.to_numpy()[:5]).to_numpy(), res.predict().iloc[:5])


@pytest.mark.parametrize("threshold", ["flexible", "equidistant"])
@pytest.mark.parametrize("sides", [{"scale": "~ x2"}, {"nominal": "~ x2"}])
@pytest.mark.parametrize("chunksize", [None, 50])
def test_llnull_is_the_thresholds_only_fit_with_any_offset(threshold, sides, chunksize):
    """With an offset, or structured thresholds, the null model kept the nominal and
    scale effects (a constant offset of 1 moved llnull from -321.9 to -313.8 and llr
    from 60.8 to 44.6, with df_model counting those effects in both); it is now the
    thresholds-only fit on every path, as without an offset."""
    rng = np.random.default_rng(3)
    n = 200
    data = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.normal(size=n)})
    latent = data.x1 + 0.5 * data.x2 + rng.logistic(size=n) * np.exp(0.3 * data.x2)
    data["y"] = np.searchsorted([-1.5, -0.5, 0.5, 1.5], latent)
    data["off"] = 1.0
    options = {"threshold": threshold, **sides}
    if chunksize is not None:
        options["chunksize"] = chunksize
    res = ordstats.OrdinalModel.from_formula("y ~ x1", data, offset="off", **options).fit()
    null = ordstats.OrdinalModel.from_formula(
        "y ~ 1", data, offset="off", threshold=threshold
    ).fit()
    assert res.llnull == pytest.approx(null.llf, rel=1e-9)
    assert res.llr == pytest.approx(2 * (res.llf - null.llf), rel=1e-8)
