"""Analytic derivatives and probability invariants of the cumulative link likelihood."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from hypothesis import given, settings
from hypothesis import strategies as st

import ordstats
from ordstats.core.links import get_link, link_names
from ordstats.families.cumulative.likelihood import (
    evaluate,
    interval_derivatives,
    interval_gradients,
    interval_probabilities,
    log_interval_probabilities,
)
from ordstats.families.cumulative.prediction import category_probabilities
from tests._numdiff import central_jacobian

LINKS = link_names()
STRUCTURES = ("flexible", "equidistant", "symmetric", "symmetric2")


ALL_LINKS = link_names(flexible=True)


@given(
    seed=st.integers(0, 2**31),
    link=st.sampled_from(ALL_LINKS),
    structure=st.sampled_from(STRUCTURES),
    nominal=st.integers(0, 2),
    scale=st.integers(0, 2),
)
@settings(max_examples=80, deadline=None)
def test_gradient_and_hessian_match_finite_differences(
    cumulative_problem, seed, link, structure, nominal, scale
):
    problem, params = cumulative_problem(seed, link, structure, nominal=nominal, scale=scale)
    ev = evaluate(problem, params)
    assert np.isfinite(ev.nll)
    grad_fd = central_jacobian(lambda p: evaluate(problem, p).nll, params, 1e-6)
    hess_fd = central_jacobian(lambda p: evaluate(problem, p).gradient, params, 1e-5)
    np.testing.assert_allclose(ev.gradient, grad_fd, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ev.hessian, hess_fd, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ev.hessian, ev.hessian.T, rtol=1e-12, atol=1e-12)


@given(seed=st.integers(0, 2**31), link=st.sampled_from(ALL_LINKS), scale=st.integers(0, 1))
@settings(max_examples=30, deadline=None)
def test_observation_scores_sum_to_gradient(cumulative_problem, seed, link, scale):
    problem, params = cumulative_problem(seed, link, nominal=1, scale=scale)
    ev = evaluate(problem, params)
    weighted = problem.data.weights @ ev.observation_scores()
    np.testing.assert_allclose(weighted, -ev.gradient, rtol=1e-10, atol=1e-10)


@given(
    seed=st.integers(0, 2**31),
    link=st.sampled_from(LINKS),
    shift=st.floats(-60, 60),
    n_levels=st.integers(2, 7),
)
@settings(max_examples=80, deadline=None)
def test_category_probabilities_sum_to_one(seed, link, shift, n_levels):
    rng = np.random.default_rng(seed)
    theta = np.sort(rng.normal(scale=3, size=n_levels - 1))
    eta = rng.normal(scale=5, size=20) + shift
    prob = category_probabilities(get_link(link), theta, eta)
    assert prob.shape == (20, n_levels)
    assert np.all(prob >= 0)
    np.testing.assert_allclose(prob.sum(axis=1), 1.0, rtol=1e-12)


@pytest.mark.parametrize("link", LINKS)
@pytest.mark.parametrize("eta", [-50.0, -30.0, 30.0, 50.0])
def test_log_probabilities_finite_at_extreme_linear_predictors(link, eta):
    """Interval probabilities in either tail keep their logarithm finite (no cancellation)."""
    f = get_link(link)
    theta = np.array([-1.0, 0.0, 1.0])
    upper = np.concatenate([theta, [np.inf]]) - eta
    lower = np.concatenate([[-np.inf], theta]) - eta
    logp = log_interval_probabilities(f, upper, lower)
    # the true value is finite for every category except where F itself underflows
    # to exactly 0 or 1 in double-exponential tails (cloglog/loglog at |eta| >= 30)
    if link in ("logit", "probit", "cauchit"):
        assert np.all(np.isfinite(logp))
    assert np.all(logp <= 0)
    # the far category's probability agrees with the tail function directly
    if eta < 0:
        np.testing.assert_allclose(logp[0], f.log_cdf(upper[0]), rtol=1e-12)
    else:
        np.testing.assert_allclose(logp[-1], f.log_sf(lower[-1]), rtol=1e-12)


@pytest.mark.parametrize("link", link_names())
def test_first_derivatives_alone_equal_the_full_pointwise_derivatives(link):
    """interval_gradients (used by gradients) gives interval_derivatives' g_u, g_l, tails too."""
    lk = get_link(link)
    lower = np.array([-np.inf, -60.0, -3.0, 0.5, 20.0, 45.0, -np.inf, 2.0, -1.0])
    upper = np.array([-55.0, -59.0, -2.0, 40.0, 21.0, np.inf, np.inf, 2.5, 1e-9 - 1.0])
    first = interval_gradients(lk, upper, lower)
    full = interval_derivatives(lk, upper, lower)
    assert first.tail.any() and not first.tail.all()
    np.testing.assert_array_equal(first.log_prob, full.log_prob)
    np.testing.assert_array_equal(first.d_upper, full.d_upper)
    np.testing.assert_array_equal(first.d_lower, full.d_lower)
    assert np.all(np.isfinite(full.d2_upper)) and np.all(np.isfinite(full.d2_lower))


def test_interval_probability_of_middle_category_in_upper_tail_is_accurate():
    # P(30 < Z < 31) for the logistic: difference of survival functions, no cancellation
    p = interval_probabilities(get_link("logit"), np.array([31.0]), np.array([30.0]))
    expected = np.exp(-30.0) / (1 + np.exp(-30.0)) - np.exp(-31.0) / (1 + np.exp(-31.0))
    assert p[0] == pytest.approx(expected, rel=1e-12)
    # the naive F(31) - F(30) is off by ~1e-3 relative
    naive = 1 / (1 + np.exp(-31.0)) - 1 / (1 + np.exp(-30.0))
    assert abs(naive / expected - 1) > 1e-6


def _wine_fit(frame, **kwargs):
    return ordstats.OrdinalModel.from_formula("rating ~ temp + contact", frame, **kwargs).fit()


def test_fit_invariant_to_row_order(wine):
    res = _wine_fit(wine)
    shuffled = wine.sample(frac=1.0, random_state=3)
    res2 = _wine_fit(shuffled)
    np.testing.assert_allclose(res2.params, res.params, rtol=1e-9)
    np.testing.assert_allclose(res2.bse, res.bse, rtol=1e-8)
    assert res2.llf == pytest.approx(res.llf, rel=1e-13)
    # fitted probabilities follow the rows
    pd.testing.assert_frame_equal(res2.predict().loc[wine.index], res.predict(), rtol=1e-8)


def test_fit_invariant_to_monotone_relabelling_of_response(wine):
    res = _wine_fit(wine)
    relabelled = wine.assign(rating=wine["rating"].astype(int) ** 2 + 10)  # 11, 14, 19, 26, 35
    res2 = _wine_fit(relabelled)
    assert res2.model.levels == ["11", "14", "19", "26", "35"]
    np.testing.assert_allclose(res2.params.to_numpy(), res.params.to_numpy(), rtol=1e-10)
    assert res2.params.index[0] == "11|14"


def test_reversing_the_response_negates_estimates(wine):
    res = _wine_fit(wine)
    reversed_ = wine.assign(
        rating=wine["rating"].cat.reorder_categories(
            list(reversed(wine["rating"].cat.categories)), ordered=True
        )
    )
    res2 = _wine_fit(reversed_)
    np.testing.assert_allclose(res2.params.iloc[4:], -res.params.iloc[4:], rtol=1e-9)
    np.testing.assert_allclose(res2.params.iloc[:4], -res.params.iloc[:4][::-1], rtol=1e-9)
    assert res2.llf == pytest.approx(res.llf, rel=1e-12)


@pytest.mark.parametrize("link, family", [("logit", sm.Logit), ("probit", sm.Probit)])
def test_two_levels_equal_binary_regression(link, family):
    rng = np.random.default_rng(7)
    X = rng.normal(size=(400, 3))
    y = (X @ [0.8, -0.5, 0.3] + rng.logistic(size=400) > 0.2).astype(int)
    res = ordstats.OrdinalModel(y, X, link=link).fit()
    binary = family(y, sm.add_constant(X)).fit(disp=False)
    # P(Y <= 0) = F(theta - x'b)  <=>  P(Y = 1) = F(-theta + x'b): intercept sign flips
    np.testing.assert_allclose(res.params.iloc[0], -binary.params[0], rtol=1e-7)
    np.testing.assert_allclose(res.params.iloc[1:], binary.params[1:], rtol=1e-7)
    np.testing.assert_allclose(res.bse.to_numpy(), binary.bse, rtol=1e-6)
    assert res.llf == pytest.approx(binary.llf, rel=1e-10)
    # statsmodels fits its null model iteratively and stops ~3e-8 short of the maximum
    assert res.llnull == pytest.approx(binary.llnull, rel=1e-9)
    n1 = y.sum()
    assert res.llnull == pytest.approx(n1 * np.log(n1 / 400) + (400 - n1) * np.log(1 - n1 / 400))


def test_frequency_weights_equal_replicated_rows(housing, housing_res):
    expanded = housing.loc[housing.index.repeat(housing["Freq"])].reset_index(drop=True)
    res2 = ordstats.OrdinalModel.from_formula("Sat ~ Infl + Type + Cont", expanded).fit()
    np.testing.assert_allclose(res2.params, housing_res.params, rtol=1e-8)
    np.testing.assert_allclose(res2.bse, housing_res.bse, rtol=1e-7)
    assert housing_res.nobs == res2.nobs == 1681
    assert housing_res.n_rows == 72
