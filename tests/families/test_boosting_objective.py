"""The cumulative-link boosting objective: derivatives, thresholds, tails (no booster needed)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ordstats
from ordstats.core.links import get_link
from ordstats.families.cumulative.boosting import (
    HESSIAN_FLOOR,
    ScoreDerivatives,
    expected_information,
    null_thresholds,
    ordinal_nll,
    round_derivatives,
    score_derivatives,
    threshold_step,
    update_thresholds,
)
from ordstats.families.cumulative.likelihood import evaluate, prepare
from ordstats.families.problem import CLMData

LINKS = ["logit", "probit", "cloglog", "loglog", "cauchit"]
THETA = np.array([-1.0, 0.2, 1.5])


def _rows(seed: int = 0, n: int = 200):
    rng = np.random.default_rng(seed)
    eta = rng.normal(size=n)
    y = np.digitize(eta + rng.logistic(size=n), [-1.0, 0.2, 1.5])
    return eta, y, rng.uniform(0.5, 2.0, n)


def _row_nll(eta_i: float, y_i: int, link) -> float:
    return ordinal_nll(np.array([eta_i]), np.array([y_i]), THETA, link)


@pytest.mark.parametrize("link_name", LINKS)
def test_gradient_and_hessian_match_finite_differences(link_name):
    link = get_link(link_name)
    eta, y, w = _rows()
    grad, hess = score_derivatives(eta, y, THETA, link, w)
    h = 1e-5
    for i in range(0, 200, 13):
        up, down = _row_nll(eta[i] + h, y[i], link), _row_nll(eta[i] - h, y[i], link)
        mid = _row_nll(eta[i], y[i], link)
        assert grad[i] == pytest.approx(w[i] * (up - down) / (2 * h), rel=1e-6, abs=1e-9)
        second = (up - 2 * mid + down) / h**2
        if second > 1e-3:  # where the NLL is convex in eta the Hessian is the observed one
            assert hess[i] == pytest.approx(w[i] * second, rel=1e-4)
        assert hess[i] > 0


@pytest.mark.parametrize("link_name", LINKS)
@pytest.mark.parametrize("offset", [-50.0, -20.0, 20.0, 50.0])
def test_extreme_scores_give_finite_signed_derivatives(link_name, offset):
    """|eta - theta| up to 50: no NaN or inf, gradients point the right way, Hessians > 0."""
    link = get_link(link_name)
    y = np.array([0, 1, 2, 3])
    eta = np.full(4, offset)
    grad, hess = score_derivatives(eta, y, THETA, link)
    assert np.all(np.isfinite(grad)) and np.all(np.isfinite(hess))
    assert np.all(hess >= HESSIAN_FLOOR)
    # a huge score makes low classes improbable: raising it further raises their NLL
    if offset > 0:
        assert grad[0] > 0 and grad[3] <= 0
    else:
        assert grad[3] < 0 and grad[0] >= 0
    assert np.isfinite(ordinal_nll(eta, y, THETA, link))


def test_cauchit_concave_tails_get_the_expected_information():
    link = get_link("cauchit")
    eta = np.array([30.0])  # far above every threshold, class 0: NLL concave in eta there
    y = np.array([0])
    h = 1e-3
    f = [_row_nll(e, 0, link) for e in (eta[0] - h, eta[0], eta[0] + h)]
    assert (f[0] - 2 * f[1] + f[2]) / h**2 < 0
    _, hess = score_derivatives(eta, y, THETA, link)
    np.testing.assert_allclose(hess, expected_information(eta, THETA, link), rtol=1e-12)


@pytest.mark.parametrize("link_name", LINKS)
def test_expected_information_is_the_mean_squared_score(link_name):
    link = get_link(link_name)
    eta = np.array([-2.0, 0.3, 1.7])
    info = expected_information(eta, THETA, link)
    levels = np.arange(4)
    for i, e in enumerate(eta):
        grads, _ = score_derivatives(np.full(4, e), levels, THETA, link)
        prob = np.exp([-_row_nll(e, k, link) for k in levels])
        assert info[i] == pytest.approx(float(prob @ grads**2), rel=1e-10)


@pytest.mark.parametrize("link_name", LINKS)
def test_threshold_derivatives_equal_the_likelihood_code(link_name):
    """round_derivatives' threshold gradient and Hessian are the slope-free model's."""
    link = get_link(link_name)
    eta, y, w = _rows(1)
    d = round_derivatives(eta, y, THETA, link, w)
    data = CLMData(y, 4, np.empty((len(y), 0)), w, eta, link, np.eye(3))
    ev = evaluate(prepare(data), THETA)
    np.testing.assert_allclose(d.threshold_gradient, ev.gradient, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(d.threshold_hessian, ev.hessian, rtol=1e-12, atol=1e-12)
    assert d.nll == pytest.approx(ev.nll, rel=1e-14)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    shift=st.floats(-3.0, 3.0),
    spread=st.floats(0.1, 5.0),
    link_name=st.sampled_from(LINKS),
)
def test_threshold_steps_never_increase_the_training_nll(seed, shift, spread, link_name):
    link = get_link(link_name)
    eta, y, w = _rows(seed, n=150)
    theta = THETA * spread + shift  # a start far from the conditional optimum
    for _ in range(4):
        d = round_derivatives(eta, y, theta, link, w)
        update = threshold_step(eta, y, theta, link, d, w)
        assert update.nll_after <= update.nll_before
        assert update.nll_before == pytest.approx(ordinal_nll(eta, y, theta, link, w))
        theta = update.thresholds
        assert np.all(np.diff(theta) > 0)


@pytest.mark.parametrize("link_name", LINKS)
def test_null_and_conditional_thresholds_equal_ordinal_model(link_name):
    eta, y, w = _rows(2, n=400)
    link = get_link(link_name)
    null = ordstats.OrdinalModel(y, weights=w, link=link_name).fit()
    np.testing.assert_allclose(null_thresholds(y, 4, link, w), null.params, rtol=1e-6)
    given_eta = ordstats.OrdinalModel(y, weights=w, offset=eta, link=link_name).fit()
    update = update_thresholds(eta, y, null_thresholds(y, 4, link, w), link, w, max_steps=100)
    assert update.converged
    np.testing.assert_allclose(update.thresholds, given_eta.params, rtol=1e-6, atol=1e-8)
    assert update.nll_after == pytest.approx(-given_eta.llf, rel=1e-10)


def test_closed_form_logit_path_equals_the_general_interval_derivatives():
    """The logistic fast path gives interval_derivatives' numbers, tails included."""
    from ordstats.families.cumulative.boosting import _logit_derivatives
    from ordstats.families.cumulative.likelihood import (
        _general_interval_derivatives as interval_derivatives,  # the link's general formulas
    )

    rng = np.random.default_rng(4)
    eta = np.concatenate([rng.normal(scale=3.0, size=300), [-800.0, -60.0, 60.0, 800.0]])
    y = np.concatenate([rng.integers(0, 4, 300), [1, 2, 1, 2]])
    cuts = np.concatenate([[-np.inf], THETA, [np.inf]])
    upper, lower = cuts[y + 1] - eta, cuts[y] - eta
    fast, gradient, hessian = _logit_derivatives(upper, lower)
    slow = interval_derivatives(get_link("logit"), upper, lower)
    for name in ("log_prob", "d_upper", "d_lower", "d2_upper", "d2_cross", "d2_lower"):
        np.testing.assert_allclose(
            getattr(fast, name), getattr(slow, name), rtol=1e-9, atol=1e-300, err_msg=name
        )
    np.testing.assert_allclose(gradient, slow.d_upper + slow.d_lower, rtol=1e-9, atol=1e-12)
    expected_h = -(slow.d2_upper + 2 * slow.d2_cross + slow.d2_lower)
    np.testing.assert_allclose(hessian, expected_h, rtol=1e-7, atol=1e-12)


def test_logit_score_only_derivatives_equal_the_full_pass():
    """score_derivatives' one-exp logistic path is round_derivatives' gradient and Hessian."""
    rng = np.random.default_rng(7)
    eta = np.concatenate([rng.normal(scale=3.0, size=300), [-800.0, -60.0, 60.0, 800.0]])
    y = np.concatenate([rng.integers(0, 4, 300), [0, 3, 0, 3]])
    w = rng.uniform(0.5, 2.0, eta.size)
    link = get_link("logit")
    grad, hess = score_derivatives(eta, y, THETA, link, w)
    full = round_derivatives(eta, y, THETA, link, w)
    np.testing.assert_allclose(grad, full.gradient, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(hess, full.hessian, rtol=1e-9, atol=1e-15)
    assert np.all(hess / w >= HESSIAN_FLOOR * (1 - 1e-12))  # floored before weighting


@pytest.mark.parametrize("link_name", LINKS)
@pytest.mark.parametrize("weighted", [False, True])
def test_reused_score_derivatives_equal_the_function(link_name, weighted):
    """ScoreDerivatives (cut points cached, arrays reused) gives the numbers of
    score_derivatives, round_derivatives and ordinal_nll, in the far tails (where the
    logistic path falls back to the general one) and after the thresholds move."""
    rng = np.random.default_rng(11)
    eta = np.concatenate([rng.normal(scale=3.0, size=400), [-800.0, -60.0, 60.0, 800.0, 0.2]])
    y = np.concatenate([rng.integers(0, 4, 400), [0, 3, 0, 3, 1]])
    w = rng.uniform(0.5, 2.0, eta.size) if weighted else None
    link = get_link(link_name)
    scorer = ScoreDerivatives(y, link, w)
    for theta in (THETA, THETA + 0.7, THETA):  # a change of thresholds re-gathers the cuts
        grad, hess = scorer(eta, theta)
        ref_grad, ref_hess = score_derivatives(eta, y, theta, link, w)
        np.testing.assert_allclose(grad, ref_grad, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(hess, ref_hess, rtol=1e-12, atol=1e-300)
        assert np.all(np.isfinite(grad)) and np.all(hess > 0)
        full, ref = scorer.round(eta, theta), round_derivatives(eta, y, theta, link, w)
        for name in ("gradient", "hessian", "threshold_gradient", "threshold_hessian"):
            np.testing.assert_allclose(
                getattr(full, name), getattr(ref, name), rtol=1e-12, atol=1e-12, err_msg=name
            )
        assert full.nll == pytest.approx(ref.nll, rel=1e-13)
        assert scorer.nll(eta, theta) == pytest.approx(
            ordinal_nll(eta, y, theta, link, w), rel=1e-13
        )


# -- far tails of cloglog and loglog, against analytic asymptotics (issue 29, item 24) ----
#
# cloglog, F(x) = 1 - exp(-e^x): for x -> -inf (the single-exponential side)
# -log F(x) = -x + e^x / 2 + O(e^{2x}) and f(x) / F(x) = 1 - e^x / 2 + ..., so with
# theta = THETA and a score d above theta_0 the bottom class has NLL d - THETA[0]
# and gradient 1 to double precision once d > 40.  A middle class y = 1 far below
# the score has P = F(u) - F(l) = e^u (1 - e^{l - u}) (1 + O(e^u)): NLL
# -u - log(1 - e^{l - u}), gradient (f(u) - f(l)) / P -> 1.  For x -> +inf (the
# double-exponential side) -log(1 - F(x)) = e^x exactly, with gradient -e^x and
# Hessian e^x in the score; beyond x = log(max double) ~ 709.78 these overflow.
# loglog is the mirror image: F(x) = 1 - F_cloglog(-x).

FAR = [40.0, 100.0, 500.0, 709.0, 745.0, 800.0, 1000.0]


def _one_row(eta: float, y: int, link_name: str):
    link = get_link(link_name)
    eta_a, y_a = np.array([eta]), np.array([y])
    grad, hess = score_derivatives(eta_a, y_a, THETA, link)
    full = round_derivatives(eta_a, y_a, THETA, link)
    nll = ordinal_nll(eta_a, y_a, THETA, link)
    assert full.nll == nll and full.gradient[0] == grad[0] and full.hessian[0] == hess[0]
    assert not np.isnan(full.threshold_gradient).any()
    assert not np.isnan(full.threshold_hessian).any()
    return nll, grad[0], hess[0], full


def test_cloglog_log_cdf_keeps_its_digits_where_exp_is_subnormal():
    # log(1 - exp(-e^x)) = x - e^x / 2 + ...: was -739.9974 at -740 and -744.44 at -745
    x = np.array([-40.0, -700.0, -720.0, -740.0, -745.0, -746.0, -1e4])
    np.testing.assert_array_equal(get_link("cloglog").log_cdf(x), x)
    np.testing.assert_array_equal(get_link("loglog").log_sf(-x), x)


@pytest.mark.parametrize("d", FAR)
def test_single_exponential_tails_are_exact_far_out(d):
    # bottom class, cloglog, score d above theta_0: NLL = d, gradient 1 (was NaN past ~745)
    nll, grad, hess, full = _one_row(THETA[0] + d, 0, "cloglog")
    assert nll == pytest.approx(d, rel=1e-15)
    assert grad == pytest.approx(1.0, rel=1e-15)
    assert HESSIAN_FLOOR <= hess < np.inf
    np.testing.assert_allclose(full.threshold_gradient, [-1.0, 0.0, 0.0], atol=1e-15)
    # top class, loglog, score d below theta_2: the mirror image
    nll, grad, hess, _ = _one_row(THETA[2] - d, 3, "loglog")
    assert nll == pytest.approx(d, rel=1e-15)
    assert grad == pytest.approx(-1.0, rel=1e-15)
    # a middle class: u = theta_1 - eta = -d, l = theta_0 - eta
    gap = THETA[1] - THETA[0]
    expected = d - np.log1p(-np.exp(-gap))
    nll, grad, _, full = _one_row(THETA[1] + d, 1, "cloglog")
    assert nll == pytest.approx(expected, rel=1e-14)
    assert grad == pytest.approx(1.0, rel=1e-14)
    share = np.exp(-gap) / -np.expm1(-gap)  # f(l) / P and f(u) / P
    np.testing.assert_allclose(full.threshold_gradient, [share, -1.0 - share, 0.0], rtol=1e-13)
    nll, grad, _, _ = _one_row(THETA[1] - d, 2, "loglog")  # mirrored: u - l = theta_2 - theta_1
    assert nll == pytest.approx(d - np.log1p(-np.exp(-(THETA[2] - THETA[1]))), rel=1e-14)
    assert grad == pytest.approx(-1.0, rel=1e-14)


@pytest.mark.parametrize("d", FAR)
def test_double_exponential_tails_overflow_to_infinities_not_nan(d):
    # top class, cloglog, score d below theta_2: -log P = e^d, gradient -e^d, Hessian e^d
    cases = [(THETA[2] - d, 3, "cloglog", -1.0), (THETA[0] + d, 0, "loglog", 1.0)]
    for eta, y, link_name, sign in cases:
        nll, grad, hess, full = _one_row(eta, y, link_name)
        if d <= 709.0:
            exact = np.exp(d)
            assert nll == pytest.approx(exact, rel=1e-13)
            assert grad == pytest.approx(sign * exact, rel=1e-13)
            assert hess == pytest.approx(exact, rel=1e-13)
        else:  # the exact values exceed the double range
            assert nll == np.inf and grad == sign * np.inf and hess == np.inf
            assert np.isinf(full.threshold_gradient).sum() == 1


@pytest.mark.parametrize("link_name", ["cloglog", "loglog"])
def test_a_booster_round_far_in_the_tails_has_no_nan(link_name):
    link = get_link(link_name)
    eta = np.array([-1000.0, -710.0, -50.0, 0.0, 50.0, 710.0, 1000.0] * 4)
    y = np.repeat(np.arange(4), 7)
    objective = ScoreDerivatives(y, link)
    grad, hess = objective(eta, THETA)
    assert not np.isnan(grad).any() and not np.isnan(hess).any() and np.all(hess > 0)
    assert not np.isnan(objective.nll(eta, THETA))
    assert not np.isnan(expected_information(eta, THETA, link)).any()
    step = threshold_step(eta, y, THETA, link, objective.round(eta, THETA))
    assert not np.isnan(step.thresholds).any()


@pytest.mark.parametrize("link_name", LINKS)
def test_no_nan_anywhere_on_a_grid_of_scores_to_1000(link_name):
    link = get_link(link_name)
    eta = np.repeat(np.linspace(-1000.0, 1000.0, 161), 4)
    y = np.tile(np.arange(4), 161)
    full = round_derivatives(eta, y, THETA, link)
    # per row; the threshold sums over rows may add infinities of both signs (no value)
    assert not np.isnan(full.gradient).any() and not np.isnan(full.hessian).any()
    assert np.all(full.hessian > 0) and not np.isnan(full.nll)
    assert not np.isnan(ordinal_nll(eta, y, THETA, link))
    step = threshold_step(eta, y, THETA, link, full)
    assert not np.isnan(step.thresholds).any()
