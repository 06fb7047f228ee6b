"""Surrogate residuals (Liu & Zhang 2018, R's ``sure``) and their diagnostic plots.

Reference: tests/r/surrogate_residuals.R -> tests/data/r/surrogate_residuals.json: sure's
draw for clm fits of wine (logit and probit), with the uniforms it used.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import ordstats
from ordstats.errors import MissingDataWarning, OrdstatsError, PredictionError
from ordstats.links import get_link
from ordstats.results.surrogate import _log_scale_draws, latent_bounds, truncated_draws

REFERENCE = json.loads(
    (Path(__file__).parents[1] / "data" / "r" / "surrogate_residuals.json").read_text()
)
LINKS = ["logit", "probit", "cloglog", "loglog", "cauchit"]


@pytest.fixture(scope="module")
def wine() -> pd.DataFrame:
    return ordstats.datasets.load("wine")


def _latent_data(link: str, n: int = 4000, seed: int = 5) -> pd.DataFrame:
    """Ordinal data cut from a latent variable with the link's error distribution."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    latent = 1.2 * x + get_link(link).ppf(rng.random(n))
    return pd.DataFrame({"x": x, "y": np.searchsorted([-1.0, 0.5, 2.0], latent)})


@pytest.mark.parametrize("link", ["logit", "probit"])
def test_the_draw_given_rs_uniforms_equals_sures(wine, link):
    ref = REFERENCE[link]
    res = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine, link=link).fit()
    np.testing.assert_allclose(res.params, ref["alpha"] + ref["beta"], rtol=1e-6)
    eta = res.fittedvalues.to_numpy()
    theta = res.params.iloc[:4].to_numpy()[None, :]
    lower, upper = latent_bounds(theta, eta, None, np.asarray(ref["y"]) - 1)
    draws = truncated_draws(lower, upper, get_link(link), np.asarray(ref["u"]))
    np.testing.assert_allclose(draws, ref["r"], rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("link", LINKS)
def test_under_the_fitted_model_the_residuals_are_draws_of_the_link(link):
    res = ordstats.OrdinalModel.from_formula("y ~ x", _latent_data(link), link=link).fit()
    resid = res.resid_surrogate(seed=1)
    assert stats.kstest(resid, get_link(link).cdf).pvalue > 0.01
    assert resid.attrs["link"] == res.model.link


def test_a_missing_trend_shows_in_the_residuals():
    """Liu & Zhang's first example: a quadratic trend left out of the model."""
    rng = np.random.default_rng(3)
    x = rng.uniform(-2, 2, size=3000)
    latent = x + x**2 + rng.logistic(size=3000)
    data = pd.DataFrame({"x": x, "y": np.searchsorted([0.0, 1.5, 3.0], latent)})
    for formula, trend in [("y ~ x", True), ("y ~ x + I(x**2)", False)]:
        resid = ordstats.OrdinalModel.from_formula(formula, data).fit().resid_surrogate(seed=1)
        r = stats.spearmanr(resid, x**2).statistic
        assert r > 0.2 if trend else abs(r) < 0.05


def test_each_residual_lies_in_the_interval_of_its_level(wine):
    """F(r) lies between P(Y <= y - 1) and P(Y <= y), read from predict()."""
    res = ordstats.OrdinalModel.from_formula(
        "rating ~ temp", wine, nominal="~ contact", scale="~ temp", link="probit"
    ).fit()
    resid = res.resid_surrogate(seed=2)
    cum = np.column_stack([np.zeros(72), res.predict(which="cumprob").to_numpy(), np.ones(72)])
    y = res.model.data.y
    # with scale effects the residual is on the standardised scale: F(r) itself is the
    # probability, as the cumulative probabilities are F((theta - eta) / s)
    f = stats.norm.cdf(resid.to_numpy())
    rows = np.arange(72)
    assert np.all(f >= cum[rows, y] - 1e-12) and np.all(f <= cum[rows, y + 1] + 1e-12)


@pytest.mark.parametrize("link", LINKS)
@pytest.mark.parametrize(
    ("lower", "upper"), [(35.0, np.inf), (-np.inf, -35.0), (60.0, 61.0), (-61.0, -60.0)]
)
def test_intervals_deep_in_a_tail_give_finite_draws_inside_them(link, lower, upper):
    u = np.linspace(0.01, 0.99, 9)
    draws = truncated_draws(np.full(9, lower), np.full(9, upper), get_link(link), u)
    assert np.all(np.isfinite(draws))
    assert np.all(draws >= lower) and np.all(draws <= upper)


@pytest.mark.parametrize("link", LINKS)
def test_the_log_scale_fallback_equals_the_direct_draw_where_both_work(link):
    """The bisection used where tail probabilities underflow, checked where they do not."""
    lower = np.array([-np.inf, -2.0, 0.5, 3.0, 1.0])
    upper = np.array([-1.0, 1.0, 2.0, np.inf, 1.5])
    u = np.array([0.3, 0.5, 0.9, 0.2, 0.7])
    upper_tail = get_link(link).cdf(lower) > 0.5
    direct = truncated_draws(lower, upper, get_link(link), u)
    fallback = _log_scale_draws(lower, upper, get_link(link), u, upper_tail)
    np.testing.assert_allclose(fallback, direct, rtol=1e-9, atol=1e-12)


def test_the_upper_tail_draw_is_exact_for_the_logit():
    """Above l = 30, F truncated is l + Exp(1) to 1e-13: x = l - log(1 - u)."""
    u = np.array([0.1, 0.5, 0.9])
    draws = truncated_draws(np.full(3, 30.0), np.full(3, np.inf), get_link("logit"), u)
    np.testing.assert_allclose(draws, 30.0 - np.log1p(-u), rtol=1e-12)


@settings(max_examples=50, deadline=None)
@given(
    st.floats(-40, 40),
    st.floats(0.01, 20),
    st.sampled_from(LINKS),
    st.floats(0.0, 1.0, exclude_max=True),
)
def test_draws_are_within_their_interval_and_increase_with_u(lower, width, link, u):
    draws = truncated_draws(
        np.array([lower, lower]), np.array([lower + width] * 2), get_link(link), np.array([u, 1.0])
    )
    assert lower <= draws[0] <= lower + width
    assert draws[0] <= draws[1] + 1e-12


def test_a_seed_repeats_the_draw_and_new_rows_equal_the_fitted_rows(wine):
    res = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    first = res.resid_surrogate(seed=7)
    pd.testing.assert_series_equal(first, res.resid_surrogate(seed=7))
    pd.testing.assert_series_equal(first, res.resid_surrogate(wine, seed=7))
    assert not np.allclose(first, res.resid_surrogate(seed=8))


@pytest.mark.parametrize("seed", ["abc", 1.5, -1, True])
def test_a_seed_that_is_not_a_whole_number_is_refused_by_name(wine, seed):
    res = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    with pytest.raises(OrdstatsError, match="seed must be None or a non-negative whole number"):
        res.resid_surrogate(seed=seed)


def test_a_generator_as_seed_draws_as_its_documented(wine):
    res = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    drawn = res.resid_surrogate(seed=np.random.default_rng(4))
    pd.testing.assert_series_equal(drawn, res.resid_surrogate(seed=4))


def test_a_chunked_fit_draws_for_new_rows_and_says_why_not_for_its_own(wine):
    memory = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    chunked = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine, chunksize=20)
    chunked = chunked.fit()
    with pytest.raises(OrdstatsError, match="pass a sample of the rows as newdata"):
        chunked.resid_surrogate()
    np.testing.assert_allclose(
        chunked.resid_surrogate(wine, seed=3), memory.resid_surrogate(wine, seed=3), rtol=1e-8
    )


def test_rows_without_a_response_or_a_predictor_are_nan(wine):
    res = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    rows = wine.head(4).copy()
    rows["rating"] = rows["rating"].astype(object)
    rows.loc[rows.index[0], "rating"] = None
    rows.loc[rows.index[1], "temp"] = None
    with pytest.warns(MissingDataWarning):
        resid = res.resid_surrogate(rows, seed=0)
    assert resid.isna().tolist() == [True, True, False, False]


def test_new_rows_need_the_response(wine):
    res = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    with pytest.raises(PredictionError, match="needs the response column 'rating'"):
        res.resid_surrogate(wine.drop(columns="rating"))


def test_families_without_a_latent_variable_are_refused(wine):
    res = ordstats.OrdinalModel.from_formula("rating ~ temp", wine, family="acat").fit()
    with pytest.raises(OrdstatsError, match="has none: use resid_prob"):
        res.resid_surrogate()


def test_a_mixed_fit_draws_given_the_modes(wine):
    res = ordstats.OrdinalModel.from_formula("rating ~ temp + contact + (1|judge)", wine).fit()
    resid = res.resid_surrogate(seed=4)
    cum = np.column_stack([np.zeros(72), res.predict(which="cumprob").to_numpy(), np.ones(72)])
    y, f = res.model.problem.y, stats.logistic.cdf(resid.to_numpy())
    rows = np.arange(72)
    assert np.all(f >= cum[rows, y] - 1e-12) and np.all(f <= cum[rows, y + 1] + 1e-12)
    with pytest.raises(PredictionError, match="leave newdata out"):
        res.resid_surrogate(wine)


@pytest.mark.parametrize("kind", ["qq", "fitted", "covariate"])
def test_residual_plots_draw_every_row(kind):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    data = _latent_data("logit", n=500)
    res = ordstats.OrdinalModel.from_formula("y ~ x", data).fit()
    ax = ordstats.plotting.plot_residuals(res, "x" if kind == "covariate" else None, kind=kind)
    assert ax.collections[0].get_offsets().shape == (500, 2)
    if kind != "qq":
        assert [line.get_label() for line in ax.get_lines()] == ["lowess", "mean"]
    plt.close("all")


def test_bad_residual_plot_arguments_are_named(wine):
    pytest.importorskip("matplotlib")
    res = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    plot = ordstats.plotting.plot_residuals
    with pytest.raises(OrdstatsError, match="kind must be one of"):
        plot(res, kind="histogram")
    with pytest.raises(OrdstatsError, match="kind='covariate' needs x"):
        plot(res, kind="covariate")
    with pytest.raises(OrdstatsError, match="not a column of the rows"):
        plot(res, "age", kind="covariate")
    with pytest.raises(OrdstatsError, match="is not numeric"):
        plot(res, "contact", kind="covariate")
    with pytest.raises(OrdstatsError, match="takes none"):
        plot(res, "temp")
