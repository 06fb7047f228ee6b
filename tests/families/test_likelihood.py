"""Analytic derivatives and probability invariants of the cumulative link likelihood."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from hypothesis import example, given, settings
from hypothesis import strategies as st

import ordstats
from ordstats.core.links import get_link, link_names
from ordstats.families.cumulative.likelihood import (
    evaluate,
    interval_derivatives,
    interval_gradients,
    interval_probabilities,
    log_interval_probabilities,
    prepare,
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
@example(  # a bottom-level row where F underflowed: log P and the lambda terms were inf/nan
    seed=5588783, link="log-gamma", structure="symmetric2", nominal=0, scale=1
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
    if link != "logit":  # the logistic closed forms have no separate tail branch
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


# -- the logistic closed forms --------------------------------------------------


def _logistic_grid():
    """Bounds from the centre to 700 units out on either side, end levels included."""
    rng = np.random.default_rng(11)
    width = np.concatenate([rng.exponential(2.0, 200), [1e-6, 1e-3, 50.0, 300.0]])
    upper = np.concatenate([rng.normal(scale=5.0, size=200), [0.0, 30.0, -30.0, 200.0]])
    lower = upper - width
    far = np.array([-700.0, -300.0, -40.0, -3.0, 0.0, 3.0, 40.0, 300.0, 700.0])
    upper = np.concatenate([upper, far, np.full(far.size, np.inf), far + 0.5])
    lower = np.concatenate([lower, np.full(far.size, -np.inf), far, far - 0.25])
    return upper, lower


def test_logistic_closed_forms_equal_the_general_formulas():
    """logistic_derivatives gives the general path's numbers, far tails and end levels too."""
    from ordstats.families.cumulative.likelihood import (
        _general_interval_derivatives,
        logistic_derivatives,
    )

    link = get_link("logit")
    upper, lower = _logistic_grid()
    fast = logistic_derivatives(link, upper, lower)
    slow = _general_interval_derivatives(link, upper, lower)
    for name in ("log_prob", "d_upper", "d_lower", "d2_cross"):
        np.testing.assert_allclose(
            getattr(fast, name), getattr(slow, name), rtol=1e-9, atol=1e-300, err_msg=name
        )
    # the general h = (f'/f) g - g^2 cancels where f'/f ~ g (u = -30 with a far lower
    # bound: h_uu ~ -1e-13 from terms of size 1); it agrees up to that cancellation,
    # and the closed forms are exact there (next test)
    for g, name in ((slow.d_upper, "d2_upper"), (slow.d_lower, "d2_lower")):
        gap = np.abs(getattr(fast, name) - getattr(slow, name))
        assert np.all(gap <= 1e-9 * np.abs(getattr(slow, name)) + 1e-14 * (g * g + np.abs(g)))
    assert interval_derivatives(link, upper, lower).d2_upper == pytest.approx(fast.d2_upper)


def test_logistic_first_derivatives_alone_equal_those_of_the_full_closed_forms():
    """logistic_gradients (the gradient-only evaluations) gives logistic_derivatives' g_u, g_l.

    Also on intervals so narrow that ``g ~ 1e154`` and ``h ~ -g^2`` overflows while
    ``P ~ 1e-155`` is well above LOGISTIC_SAFE: g keeps its finite closed form and
    h overflows to ``-inf``.
    """
    from ordstats.families.cumulative.likelihood import (
        logistic_derivatives,
        logistic_gradients,
    )

    link = get_link("logit")
    upper, lower = _logistic_grid()
    upper = np.concatenate([upper, [1e-155, 5.0 + 2e-15]])
    lower = np.concatenate([lower, [-1e-155, 5.0]])
    first = logistic_gradients(link, upper, lower)
    full = logistic_derivatives(link, upper, lower)
    for name in ("log_prob", "upper", "lower", "d_upper", "d_lower"):
        assert np.array_equal(getattr(first, name), getattr(full, name), equal_nan=True), name
    narrow = slice(-2, None)
    assert np.all(np.isfinite(full.d_upper[narrow])) and np.all(np.isfinite(full.d_lower[narrow]))
    # P = f(0) (u - l) = 5e-156 to first order: g = +-f(0) / P = +-5e154 exactly enough
    np.testing.assert_allclose(full.d_upper[-2], 5e154, rtol=1e-12)
    np.testing.assert_allclose(full.d_lower[-2], -5e154, rtol=1e-12)
    assert np.isneginf(full.d2_lower[-2]) and np.isposinf(full.d2_cross[-2])
    assert np.all(np.isfinite([full.d2_upper[-1], full.d2_cross[-1], full.d2_lower[-1]]))
    assert np.isneginf(full.d2_upper[-2])  # -g^2 beyond the largest double


@pytest.mark.parametrize("x", [-700.0, -300.0, -36.0, -20.0, -1.0, 0.0, 2.5, 36.0, 300.0, 700.0])
def test_logistic_closed_forms_at_the_end_levels_are_exact(x):
    """Bottom level: g_u = S(u), h_uu = -F(u) S(u); top level: g_l = -F(l), h_ll = -F(l) S(l).

    ``(f'/f) g - g^2`` written as it stands cancels to every digit here
    (``u = -36``: both terms are 1 to 16 digits); the closed forms do not.
    """
    from scipy.special import expit

    from ordstats.families.cumulative.likelihood import logistic_derivatives

    link = get_link("logit")
    F, S = expit(x), expit(-x)
    bottom = logistic_derivatives(link, np.array([x]), np.array([-np.inf]))
    assert bottom.d_upper[0] == pytest.approx(S, rel=1e-13)
    assert bottom.d2_upper[0] == pytest.approx(-F * S, rel=1e-12)
    assert bottom.d_lower[0] == 0.0 and bottom.d2_lower[0] == 0.0 and bottom.d2_cross[0] == 0.0
    top = logistic_derivatives(link, np.array([np.inf]), np.array([x]))
    assert top.d_lower[0] == pytest.approx(-F, rel=1e-13)
    assert top.d2_lower[0] == pytest.approx(-F * S, rel=1e-12)
    assert top.d_upper[0] == 0.0 and top.d2_upper[0] == 0.0


def test_logistic_closed_forms_match_finite_differences():
    """g = d log P / d bound and h = d g / d bound, by central differences of the closed forms."""
    from ordstats.families.cumulative.likelihood import logistic_derivatives

    link = get_link("logit")
    rng = np.random.default_rng(5)
    upper = rng.normal(scale=4.0, size=50)
    lower = upper - rng.exponential(1.5, size=50)
    d = logistic_derivatives(link, upper, lower)
    step = 1e-6
    for shift_u, shift_l, first, second, cross in (
        (step, 0.0, d.d_upper, d.d2_upper, d.d2_cross),
        (0.0, step, d.d_lower, d.d2_lower, d.d2_cross),
    ):
        plus = logistic_derivatives(link, upper + shift_u, lower + shift_l)
        minus = logistic_derivatives(link, upper - shift_u, lower - shift_l)
        np.testing.assert_allclose(
            (plus.log_prob - minus.log_prob) / (2 * step), first, rtol=1e-6, atol=1e-9
        )
        own = plus.d_upper if shift_u else plus.d_lower
        own_minus = minus.d_upper if shift_u else minus.d_lower
        np.testing.assert_allclose((own - own_minus) / (2 * step), second, rtol=1e-5, atol=1e-8)
        other = plus.d_lower if shift_u else plus.d_upper
        other_minus = minus.d_lower if shift_u else minus.d_upper
        np.testing.assert_allclose((other - other_minus) / (2 * step), cross, rtol=1e-5, atol=1e-8)


def test_logistic_closed_forms_hand_disordered_and_underflowing_rows_to_the_general_path():
    """P below 1e-250 (bounds 800 units out) and u < l give the general path's log P."""
    from ordstats.families.cumulative.likelihood import logistic_derivatives

    link = get_link("logit")
    upper = np.array([-800.0, 900.0, 1.0])
    lower = np.array([-801.0, 850.0, 2.0])
    d = logistic_derivatives(link, upper, lower)
    np.testing.assert_allclose(d.log_prob[:2], link.log_interval(upper[:2], lower[:2]), rtol=1e-12)
    assert np.all(np.isfinite(d.d2_upper[:2])) and np.all(np.isfinite(d.d_lower[:2]))
    assert np.isnan(d.log_prob[2])


# -- level sums over rows grouped by level ---------------------------------------


@pytest.mark.parametrize("n_levels", [2, 5, 12])
def test_grouped_level_sums_and_gram_equal_the_direct_products(n_levels, monkeypatch):
    """The grouped copy of X gives S diag(c) X and X' diag(c) X as the direct products do."""
    import ordstats.families.cumulative.likelihood as lik
    from ordstats.families.problem import CLMData

    rng = np.random.default_rng(n_levels)
    n, p = 3000, 6
    y = rng.integers(0, n_levels, n)
    y[:n_levels] = np.arange(n_levels)
    X = rng.normal(size=(n, p))
    data = CLMData(
        y=y.astype(np.intp),
        n_levels=n_levels,
        X=X,
        weights=np.ones(n),
        offset=np.zeros(n),
        link=get_link("logit"),
        threshold_jacobian=np.eye(n_levels - 1),
    )
    a, b = -rng.uniform(size=n), -rng.uniform(size=n)  # the Gram weight -(a + b) >= 0
    grouped = lik.prepare(data)
    assert grouped._rows_by_level is not None
    monkeypatch.setattr(lik, "_GROUPED_COPY_BYTES", 0)  # over budget: the indicator product
    direct = lik.prepare(data)
    assert direct._rows_by_level is None
    for got, expected in zip(
        grouped.location_blocks(a, b), direct.location_blocks(a, b), strict=True
    ):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-10)
    upper, lower, gram = grouped.location_blocks(a, b)
    for c, sums in ((a, upper), (b, lower)):
        expected_sums = np.stack([X[y == k].T @ c[y == k] for k in range(n_levels)])
        np.testing.assert_allclose(sums, expected_sums, atol=1e-10)
    np.testing.assert_allclose(gram, X.T @ (-(a + b)[:, None] * X), rtol=1e-12)
    np.testing.assert_allclose(direct.level_row_sums(X, a)[0], upper, atol=1e-10)


def test_shortcuts_for_unit_weights_and_per_level_cutpoints_change_nothing():
    """Unit weights skip the weight products and unscaled models without fixed
    thresholds gather one cut-point per level: the general code gives the same."""
    from ordstats.families.problem import CLMData

    rng = np.random.default_rng(11)
    n, n_levels = 500, 5
    y = rng.integers(0, n_levels, n).astype(np.intp)
    X = rng.normal(size=(n, 3))
    data = CLMData(
        y=y,
        n_levels=n_levels,
        X=X,
        weights=np.ones(n),
        offset=rng.normal(size=n),
        link=get_link("logit"),
        threshold_jacobian=np.eye(n_levels - 1),
    )
    params = np.r_[np.linspace(-1.5, 1.5, n_levels - 1), rng.normal(scale=0.3, size=3)]
    fast_problem, slow_problem = prepare(data), prepare(data)
    assert fast_problem.unit_weights and fast_problem.has_offset
    slow_problem.__dict__["unit_weights"] = False  # multiply by the weights
    slow_problem.__dict__["level_designs"] = None  # sparse threshold designs, np.where bounds
    fast, slow = evaluate(fast_problem, params), evaluate(slow_problem, params)
    np.testing.assert_array_equal(fast.upper, slow.upper)
    np.testing.assert_array_equal(fast.lower, slow.lower)
    assert np.isinf(fast.upper[y == n_levels - 1]).all() and np.isinf(fast.lower[y == 0]).all()
    assert fast.nll == slow.nll
    np.testing.assert_allclose(fast.gradient, slow.gradient, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(fast.hessian, slow.hessian, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("link", ALL_LINKS)
@pytest.mark.parametrize("far", [40.0, 719.4, 1e4, 1e300])
def test_second_derivatives_stay_finite_beyond_the_far_tails(link, far):
    # separated data push the bounds of near-certain rows far out: cloglog's
    # f'/f = 1 - e^u overflows there while f/P underflows (0 * inf was NaN)
    lk = get_link(link)
    upper = np.array([far, np.inf, far, far, -far])
    lower = np.array([-np.inf, -far, -far, -np.inf, -np.inf])
    d = interval_derivatives(lk, upper, lower)
    possible = np.isfinite(d.log_prob)  # an improbable row whose log P is -inf is no row
    assert possible[:4].all()
    for name in ("d_upper", "d_lower", "d2_upper", "d2_cross", "d2_lower"):
        values = getattr(d, name)[possible]
        assert np.all(np.isfinite(values)), (name, values)


@pytest.mark.parametrize("link", ["cloglog", "loglog"])
def test_second_derivatives_near_the_underflow_match_differences(link):
    # just inside the range where f/P underflows, the derivatives are tiny but exact
    lk = get_link(link)
    sign = 1.0 if link == "cloglog" else -1.0
    u = sign * np.array([3.0, 5.0, 6.5])
    lower = np.full(3, -np.inf) if link == "cloglog" else u - 1.0
    upper = u if link == "cloglog" else np.full(3, np.inf)
    d = interval_derivatives(lk, upper, lower)
    step = 1e-6
    if link == "cloglog":
        g = lambda v: interval_gradients(lk, v, lower).d_upper  # noqa: E731
        got, at = d.d2_upper, upper
    else:
        g = lambda v: interval_gradients(lk, upper, v).d_lower  # noqa: E731
        got, at = d.d2_lower, lower
    numeric = (g(at + step) - g(at - step)) / (2 * step)
    np.testing.assert_allclose(got, numeric, rtol=1e-5, atol=1e-300)
