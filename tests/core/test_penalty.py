"""The elastic-net numerics of ordstats.core.penalty on plain quadratic objectives."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ordstats.core.penalty import (
    ElasticNet,
    check_penalty_arguments,
    kkt_violation,
    max_penalty,
    proximal_newton,
    soft_threshold,
)
from ordstats.errors import SpecificationError


@dataclass(frozen=True)
class _Quadratic:
    nll: float
    gradient: np.ndarray
    hessian: np.ndarray


def _quadratic(A: np.ndarray, b: np.ndarray):
    """``f(x) = x'Ax/2 - b'x`` with its derivatives."""
    return lambda x: _Quadratic(float(0.5 * x @ A @ x - b @ x), A @ x - b, A)


def _random_problem(seed: int, k: int = 6):
    rng = np.random.default_rng(seed)
    M = rng.normal(size=(3 * k, k))
    return M.T @ M + 0.1 * np.eye(k), rng.normal(size=k) * 5


def test_soft_threshold():
    np.testing.assert_array_equal(
        soft_threshold(np.array([-3.0, -0.5, 0.0, 0.5, 3.0]), 1.0), [-2.0, 0.0, 0.0, 0.0, 2.0]
    )


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), alpha=st.floats(0.01, 2.0))
def test_ridge_has_the_closed_form(seed, alpha):
    A, b = _random_problem(seed)
    n = 7.0
    weights = np.r_[0.0, np.ones(A.shape[0] - 1)]  # first parameter unpenalised
    pen = ElasticNet.from_weights(alpha, 0.0, weights)
    sol = proximal_newton(_quadratic(A, b), np.zeros(A.shape[0]), pen, n, tol=1e-12)
    expected = np.linalg.solve(A / n + np.diag(pen.l2), b / n)
    np.testing.assert_allclose(sol.x, expected, atol=1e-9)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), alpha=st.floats(0.01, 2.0), rho=st.floats(0.1, 1.0))
def test_elastic_net_meets_kkt_and_beats_perturbations(seed, alpha, rho):
    A, b = _random_problem(seed)
    n = 3.0
    weights = np.r_[0.0, np.ones(A.shape[0] - 1)]
    pen = ElasticNet.from_weights(alpha, rho, weights)
    f = _quadratic(A, b)
    sol = proximal_newton(f, np.zeros(A.shape[0]), pen, n, tol=1e-10)
    assert sol.converged
    assert np.max(kkt_violation(f(sol.x).gradient / n, sol.x, pen)) <= 1e-10
    rng = np.random.default_rng(seed)
    for _ in range(20):
        other = sol.x + rng.normal(scale=0.01, size=sol.x.size)
        assert f(other).nll / n + pen.value(other) >= sol.objective - 1e-12


def test_max_penalty_zeroes_every_weighted_slope():
    A, b = _random_problem(1)
    n = 5.0
    weights = np.r_[0.0, np.ones(A.shape[0] - 1)]
    f = _quadratic(A, b)
    # null fit: only the unpenalised parameter moves
    x0 = np.zeros(A.shape[0])
    x0[0] = b[0] / A[0, 0]
    alpha_max = max_penalty(f(x0).gradient / n, weights, 1.0)
    at = proximal_newton(f, x0, ElasticNet.from_weights(alpha_max, 1.0, weights), n, tol=1e-12)
    assert np.all(at.x[1:] == 0)
    below = ElasticNet.from_weights(0.98 * alpha_max, 1.0, weights)
    assert np.any(proximal_newton(f, x0, below, n, tol=1e-12).x[1:] != 0)


@pytest.mark.parametrize(
    ("alpha", "ratio", "match"),
    [(-1, 0.5, "alpha"), (np.inf, 0.5, "alpha"), (1, 2, r"\[0, 1\]"), (1, None, "numbers")],
)
def test_bad_arguments(alpha, ratio, match):
    with pytest.raises(SpecificationError, match=match):
        check_penalty_arguments(alpha, ratio)


def test_secant_update_satisfies_the_secant_equation_and_stays_positive_definite():
    """The BFGS correction of a reused Hessian: H_new s = y, H_new positive definite."""
    from ordstats.core.penalty import _secant_update

    rng = np.random.default_rng(3)
    A = rng.normal(size=(6, 6))
    H = A @ A.T + np.eye(6)
    true = H + np.diag(rng.uniform(0.1, 2.0, 6))
    s = rng.normal(size=6)
    y = true @ s
    H_new = _secant_update(H, s, y)
    np.testing.assert_allclose(H_new @ s, y, rtol=1e-12)
    np.testing.assert_allclose(H_new, H_new.T)
    assert np.linalg.eigvalsh(H_new).min() > 0
    # no curvature along s (y's <= 0): the update is skipped
    assert _secant_update(H, s, -y) is H
