"""Per-row log P(Y_i = y_i) and its derivatives in the linear predictors, for every family.

The derivatives are checked against finite differences of log P (also where
|eta - theta| reaches 50 and F(b) - F(a) underflows), and chained to the
parameters they must add up to the gradient and Hessian of ``evaluate()``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ordstats.core.links import get_link, link_names
from ordstats.core.thresholds import threshold_jacobian
from ordstats.errors import SpecificationError
from ordstats.families import (
    CumulativeRowDerivatives,
    RowDerivatives,
    StepFamily,
    family_names,
    get_family,
)
from ordstats.families.cumulative.prediction import threshold_matrix
from ordstats.families.pointwise import DiagonalCurvature, SemiseparableCurvature
from ordstats.families.problem import CLMData

#: every family with every link it accepts, and both orientations where defined
CASES = [
    (name, link, reverse)
    for name in family_names()
    for link in get_family(name).capabilities.links
    for reverse in ((False, True) if get_family(name).capabilities.reverse else (False,))
]


def _draw(rng: np.random.Generator, name: str, n: int, n_levels: int, spread: float):
    """Linear predictors and levels; |eta - theta| up to ``spread``."""
    y = rng.integers(0, n_levels, size=n).astype(np.intp)
    if name == "cumulative":
        cutpoints = np.sort(rng.uniform(-2.0, 2.0, size=n_levels - 1))
        cutpoints += 0.3 * np.arange(n_levels - 1)  # strictly increasing
        eta = rng.uniform(-spread, spread, size=n)
        return eta, y, cutpoints
    return rng.uniform(-spread, spread, size=(n, n_levels - 1)), y, None


def _log_prob(fam, eta, y, cutpoints):
    return fam.row_derivatives(eta, y, cutpoints=cutpoints).log_prob


def _as_matrix(eta):
    return eta[:, None] if eta.ndim == 1 else eta


def _perturbed(eta, j, h):
    out = _as_matrix(eta).copy()
    out[:, j] += h
    return out[:, 0] if eta.ndim == 1 else out


def _assert_close(actual, expected, scale, rtol):
    """``|actual - expected| <= rtol * (scale + |expected|)``, row-wise ``scale``."""
    scale = np.reshape(scale, (-1,) + (1,) * (np.ndim(expected) - 1))
    bad = np.abs(actual - expected) > rtol * (scale + np.abs(expected))
    assert not np.any(bad), (actual[bad], expected[bad])


@given(
    seed=st.integers(0, 2**31),
    case=st.sampled_from(CASES),
    n_levels=st.integers(2, 6),
    spread=st.sampled_from([1.0, 8.0, 50.0]),
)
@settings(max_examples=200, deadline=None)
def test_derivatives_match_finite_differences_of_log_p(seed, case, n_levels, spread):
    name, link, reverse = case
    fam = get_family(name, link=link, reverse=reverse)
    rng = np.random.default_rng(seed)
    eta, y, cutpoints = _draw(rng, name, 12, n_levels, spread)
    rd = fam.row_derivatives(eta, y, cutpoints=cutpoints)
    m = 1 if name == "cumulative" else n_levels - 1
    assert rd.log_prob.shape == (12,) and rd.gradient.shape == (12, m)
    assert rd.hessian.shape == (12, m, m)
    # tail-safe: finite and a log-probability everywhere, even at |eta - theta| = 50
    assert np.all(np.isfinite(rd.log_prob)) and np.all(rd.log_prob <= 0.0)
    assert np.all(np.isfinite(rd.gradient)) and np.all(np.isfinite(rd.hessian))

    size = 1.0 + np.abs(rd.log_prob)  # log P, its gradient and Hessian scale alike
    h = 1e-5
    for j in range(m):
        up = fam.row_derivatives(_perturbed(eta, j, h), y, cutpoints=cutpoints)
        down = fam.row_derivatives(_perturbed(eta, j, -h), y, cutpoints=cutpoints)
        _assert_close(rd.gradient[:, j], (up.log_prob - down.log_prob) / (2 * h), size, 1e-6)
        _assert_close(rd.hessian[:, :, j], (up.gradient - down.gradient) / (2 * h), size, 1e-6)
        # the diagonal also from second differences of log P alone
        h2 = 1e-3
        lp_up = _log_prob(fam, _perturbed(eta, j, h2), y, cutpoints)
        lp_down = _log_prob(fam, _perturbed(eta, j, -h2), y, cutpoints)
        second = (lp_up - 2.0 * rd.log_prob + lp_down) / h2**2
        _assert_close(rd.hessian[:, j, j], second, size, 1e-4)
    np.testing.assert_array_equal(rd.hessian, np.swapaxes(rd.hessian, 1, 2))


@given(
    seed=st.integers(0, 2**31),
    link=st.sampled_from(link_names()),
    n_levels=st.integers(2, 6),
    spread=st.sampled_from([1.0, 8.0, 50.0]),
    with_scale=st.booleans(),
)
@settings(max_examples=100, deadline=None)
def test_cumulative_cutpoint_derivatives_match_finite_differences(
    seed, link, n_levels, spread, with_scale
):
    fam = get_family("cumulative", link=link)
    rng = np.random.default_rng(seed)
    eta, y, cutpoints = _draw(rng, "cumulative", 12, n_levels, spread)
    scale = rng.uniform(0.5, 2.0, size=12) if with_scale else None
    rd = fam.row_derivatives(eta, y, cutpoints=cutpoints, scale=scale)
    assert isinstance(rd, CumulativeRowDerivatives)
    size = 1.0 + np.abs(rd.log_prob)
    rows = np.arange(12)
    h = 1e-5
    # (theta_{y_i}, theta_{y_i - 1}): shift one cut-point of every row at a time
    for side, offset in enumerate((0, -1)):
        index = y + offset
        exists = (index >= 0) & (index < n_levels - 1)
        grad_fd = np.zeros(12)
        hess_fd = np.zeros((12, 2))
        for sign in (1.0, -1.0):
            theta = np.tile(cutpoints, (12, 1))
            theta[rows[exists], index[exists]] += sign * h
            moved = fam.row_derivatives(eta, y, cutpoints=theta, scale=scale)
            grad_fd += sign * moved.log_prob / (2 * h)
            hess_fd += sign * moved.cutpoint_gradient / (2 * h)
        _assert_close(rd.cutpoint_gradient[:, side], grad_fd, size, 1e-6)
        _assert_close(rd.cutpoint_hessian[:, :, side], hess_fd, size, 1e-6)
        assert np.all(rd.cutpoint_gradient[~exists, side] == 0.0)
    # log P depends on theta - eta only: the mixed derivatives are minus the row sums
    up = fam.row_derivatives(eta + h, y, cutpoints=cutpoints, scale=scale)
    down = fam.row_derivatives(eta - h, y, cutpoints=cutpoints, scale=scale)
    mixed = (up.cutpoint_gradient - down.cutpoint_gradient) / (2 * h)
    _assert_close(-rd.cutpoint_hessian.sum(axis=2), mixed, size, 1e-6)
    np.testing.assert_allclose(
        rd.gradient[:, 0], -rd.cutpoint_gradient.sum(axis=1), rtol=1e-12, atol=1e-14
    )


@pytest.mark.parametrize("link", link_names())
def test_cumulative_log_p_is_exact_where_the_naive_difference_underflows(link):
    fam = get_family("cumulative", link=link)
    F = get_link(link).cdf
    cutpoints = np.array([-1.0, 0.0, 1.0])
    eta = np.array([50.0, -50.0, 50.0, -50.0, 0.3])
    y = np.array([0, 3, 1, 2, 2])
    rd = fam.row_derivatives(eta, y, cutpoints=cutpoints)
    bounds = np.concatenate([[-np.inf], cutpoints, [np.inf]])
    naive = F(bounds[y + 1] - eta) - F(bounds[y] - eta)
    assert np.all(np.isfinite(rd.log_prob)) and np.all(np.isfinite(rd.gradient))
    ok = naive > 1e-6  # no cancellation there: the naive value is accurate
    np.testing.assert_allclose(np.exp(rd.log_prob[ok]), naive[ok], rtol=1e-9)
    # far in a tail the gradient in eta approaches the score of the tail itself
    assert rd.gradient[0, 0] < 0 < rd.gradient[1, 0]


def _cumulative_problem(seed: int, link: str, *, n_levels: int = 5, n: int = 40):
    rng = np.random.default_rng(seed)
    fam = get_family("cumulative", link=link)
    y = rng.integers(0, n_levels, size=n)
    y[:n_levels] = np.arange(n_levels)
    data = CLMData(
        y=y.astype(np.intp),
        n_levels=n_levels,
        X=rng.normal(size=(n, 2)),
        weights=rng.uniform(0.5, 2.0, size=n),
        offset=rng.normal(scale=0.3, size=n),
        link=fam.link,
        threshold_jacobian=threshold_jacobian(
            "equidistant" if seed % 2 else "flexible", n_levels - 1
        ),
        nominal=rng.normal(size=(n, 1)),
        scale=rng.normal(size=(n, 1)),
    )
    problem = fam.prepare(data)
    lay = problem.layout
    params = rng.normal(scale=0.2, size=lay.n_params)
    params[: lay.n_alpha] = np.linspace(-1.0, 1.0, lay.n_alpha) if lay.n_alpha > 2 else [-0.5, 1.0]
    params[lay.nominal] *= 0.1  # keep the cut-points ordered on every row
    if lay.n_lambda:
        params[lay.lam] = 0.7
    return fam, problem, params


def _chained(weights, jacobian, gradient, hessian):
    """``sum_i w_i J_i' g_i`` and ``sum_i w_i J_i' h_i J_i``; J_i is (m, k)."""
    return (
        np.einsum("i,ij,ijk->k", weights, gradient, jacobian),
        np.einsum("i,ijp,ijk,ikq->pq", weights, jacobian, hessian, jacobian),
    )


@given(seed=st.integers(0, 2**31), link=st.sampled_from([*link_names(), "aranda-ordaz"]))
@settings(max_examples=40, deadline=None)
def test_cumulative_rows_add_up_to_the_likelihood_derivatives(seed, link):
    fam, problem, params = _cumulative_problem(seed, link)
    data, lay = problem.data, problem.layout
    ev = fam.evaluate(problem, params)
    assert np.isfinite(ev.nll)
    theta = threshold_matrix(params[lay.thresholds], data.threshold_jacobian, data.nominal)
    eta = data.X @ params[lay.beta] + data.offset
    scale = np.exp(data.scale @ params[lay.zeta])
    rd = fam.row_derivatives(eta, data.y, cutpoints=theta, scale=scale, link=ev.link)
    np.testing.assert_allclose(rd.log_prob, ev.log_prob, rtol=1e-12)
    # predictors (eta_i, theta_{y_i}, theta_{y_i - 1}) and their Jacobian in the parameters
    n, k = data.n_obs, lay.n_params
    jac = np.zeros((n, 3, k))
    jac[:, 0, lay.beta] = data.X
    jac[:, 1, : lay.n_threshold_block] = problem.T_upper.toarray()
    jac[:, 2, : lay.n_threshold_block] = problem.T_lower.toarray()
    mixed = -rd.cutpoint_hessian.sum(axis=2)
    hess = np.zeros((n, 3, 3))
    hess[:, 0, 0] = rd.hessian[:, 0, 0]
    hess[:, 0, 1:] = hess[:, 1:, 0] = mixed
    hess[:, 1:, 1:] = rd.cutpoint_hessian
    grad_rows = np.column_stack([rd.gradient[:, 0], rd.cutpoint_gradient])
    gradient, hessian = _chained(data.weights, jac, grad_rows, hess)
    # zeta and lambda are held fixed by the row derivatives: compare the rest
    keep = np.r_[lay.thresholds, lay.beta]
    np.testing.assert_allclose(gradient[keep], -ev.gradient[keep], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(
        hessian[np.ix_(keep, keep)], -ev.hessian[np.ix_(keep, keep)], rtol=1e-9, atol=1e-9
    )


@given(
    seed=st.integers(0, 2**31),
    case=st.sampled_from([c for c in CASES if c[0] != "cumulative"]),
    nominal=st.integers(0, 2),
)
@settings(max_examples=60, deadline=None)
def test_step_rows_add_up_to_the_likelihood_derivatives(seed, case, nominal):
    name, link, reverse = case
    rng = np.random.default_rng(seed)
    fam = get_family(name, link=link, reverse=reverse)
    n, n_levels = 40, 5
    y = rng.integers(0, n_levels, size=n)
    y[:n_levels] = np.arange(n_levels)
    data = CLMData(
        y=y.astype(np.intp),
        n_levels=n_levels,
        X=rng.normal(size=(n, 2)),
        weights=rng.uniform(0.5, 2.0, size=n),
        offset=rng.normal(scale=0.3, size=n),
        link=fam.link,
        threshold_jacobian=np.eye(n_levels - 1),
        nominal=rng.normal(size=(n, nominal)) if nominal else np.empty((0, 0)),
    )
    problem = fam.prepare(data)
    lay = problem.layout
    params = rng.normal(scale=0.5, size=lay.n_params)
    ev = fam.evaluate(problem, params)
    rd = fam.row_derivatives(ev.eta, data.y)
    expected = SemiseparableCurvature if name == "acat" else DiagonalCurvature
    assert isinstance(rd, RowDerivatives) and isinstance(rd.curvature, expected)
    np.testing.assert_allclose(rd.log_prob, ev.log_prob, rtol=1e-13)
    # eta_ij = sum_t z_it gamma_tj + x_i'b: the Jacobian of each row, (K - 1, k)
    q = n_levels - 1
    jac = np.zeros((n, q, lay.n_params))
    for t in range(problem.Z.shape[1]):
        jac[:, np.arange(q), t * q + np.arange(q)] = problem.Z[:, [t]]
    jac[:, :, lay.beta] = data.X[:, None, :]
    gradient, hessian = _chained(data.weights, jac, rd.gradient, rd.hessian)
    np.testing.assert_allclose(gradient, -ev.gradient, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(hessian, -ev.hessian, rtol=1e-10, atol=1e-10)
    # the location form: eta_ij = cutpoints_j + eta_i gives the same rows
    if not nominal:
        location = data.X @ params[lay.beta] + data.offset
        again = fam.row_derivatives(location, data.y, cutpoints=params[lay.alpha])
        np.testing.assert_allclose(again.gradient, rd.gradient, rtol=1e-12)


def test_every_family_implements_the_contract():
    for name in family_names():
        fam = get_family(name)
        rd = fam.row_derivatives(
            np.zeros(3) if name == "cumulative" else np.zeros((3, 2)),
            np.array([0, 1, 2]),
            cutpoints=np.array([-1.0, 1.0]) if name == "cumulative" else None,
        )
        assert isinstance(rd, RowDerivatives) and rd.n_predictors == rd.gradient.shape[1]
        np.testing.assert_allclose(rd.hessian, rd.curvature.dense())


def test_bad_row_derivative_arguments():
    with pytest.raises(SpecificationError, match="family='cumulative' needs the thresholds"):
        get_family("cumulative").row_derivatives(np.zeros(3), np.array([0, 1, 2]))
    sratio = get_family("sratio")
    assert isinstance(sratio, StepFamily)
    with pytest.raises(SpecificationError, match="family='sratio' has no scale effects"):
        sratio.row_derivatives(np.zeros((3, 2)), np.array([0, 1, 2]), scale=np.ones(3))
    with pytest.raises(SpecificationError, match=r"shape \(n, K - 1\)"):
        sratio.row_derivatives(np.zeros(3), np.array([0, 1, 2]))


def test_reverse_row_derivatives_are_the_forward_ones_on_reversed_levels():
    rng = np.random.default_rng(3)
    eta = rng.normal(size=(6, 3))
    y = np.array([0, 1, 2, 3, 3, 0])
    for name in ("sratio", "cratio", "acat"):
        forward = get_family(name).row_derivatives(eta[:, ::-1], 3 - y)
        reverse = get_family(name, reverse=True).row_derivatives(eta, y)
        np.testing.assert_allclose(reverse.log_prob, forward.log_prob, rtol=1e-14)
        np.testing.assert_allclose(reverse.gradient, forward.gradient[:, ::-1], rtol=1e-14)
        np.testing.assert_allclose(
            reverse.hessian, forward.hessian[:, ::-1, ::-1], rtol=1e-14, atol=1e-300
        )


@pytest.mark.parametrize(
    ("link", "shared"),
    [("probit", "_general_interval_gradients"), ("logit", "logistic_gradients")],
)
def test_the_likelihood_and_the_row_api_share_their_pointwise_terms(monkeypatch, link, shared):
    """Evaluation and row_derivatives get their derivatives from the same function.

    The general formulas for most links, the closed forms for the logistic one.
    """
    import ordstats.families.cumulative.likelihood as lik

    calls = []
    original = getattr(lik, shared)

    def spy(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(lik, shared, spy)
    fam, problem, params = _cumulative_problem(0, link)
    _ = fam.evaluate(problem, params).gradient
    _ = fam.row_derivatives(np.zeros(2), np.array([0, 1]), cutpoints=np.array([0.0]))
    assert len(calls) == 2


@pytest.mark.parametrize(("name", "link", "reverse"), CASES)
@pytest.mark.parametrize("offset", [-50.0, -20.0, 20.0, 50.0])
def test_derivatives_in_the_far_tails(name, link, reverse, offset):
    """Every level at |eta - theta| = 20 and 50: the tails of cloglog and loglog included."""
    fam = get_family(name, link=link, reverse=reverse)
    y = np.arange(4)
    if name == "cumulative":
        cutpoints = np.array([-1.0, 0.0, 1.0])
        eta = np.full(4, offset)
    else:
        cutpoints = None
        eta = np.full((4, 3), offset)
    rd = fam.row_derivatives(eta, y, cutpoints=cutpoints)
    assert np.all(np.isfinite(rd.log_prob)) and np.all(np.isfinite(rd.hessian))
    size = 1.0 + np.abs(rd.log_prob)
    h = 1e-5
    for j in range(rd.n_predictors):
        up = fam.row_derivatives(_perturbed(eta, j, h), y, cutpoints=cutpoints)
        down = fam.row_derivatives(_perturbed(eta, j, -h), y, cutpoints=cutpoints)
        _assert_close(rd.gradient[:, j], (up.log_prob - down.log_prob) / (2 * h), size, 1e-6)
        _assert_close(rd.hessian[:, :, j], (up.gradient - down.gradient) / (2 * h), size, 1e-6)
