"""The change of basis behind centred and rescaled columns (``ShiftedBasis``)."""

from __future__ import annotations

import numpy as np
import pytest

from ordstats.core.linalg import ShiftedBasis, shifted_basis
from ordstats.core.thresholds import threshold_jacobian


def _basis(structure: str = "flexible", n_cut: int = 3) -> ShiftedBasis:
    J = np.asarray(threshold_jacobian(structure, n_cut), dtype=float)
    rng = np.random.default_rng(0)
    X = np.column_stack(
        [rng.normal(size=50) + 1e6, rng.normal(size=50), 1e-40 * rng.normal(size=50)]
    )
    basis = shifted_basis(X, J, slice(0, J.shape[1]), J.shape[1])
    assert basis is not None
    return basis


@pytest.mark.parametrize("structure", ["flexible", "equidistant", "symmetric"])
def test_internal_and_external_parameters_are_inverse(structure):
    basis = _basis(structure, 4)
    k = int(basis.beta.max()) + 2  # one parameter after the betas (a scale effect)
    p = np.random.default_rng(1).normal(size=k)
    # alpha passes through alpha - 1e6 * beta: rounding of 1e6 * eps
    np.testing.assert_allclose(basis.to_external(basis.to_internal(p)), p, rtol=1e-12, atol=1e-9)
    T = basis.transform(k)
    np.testing.assert_allclose(T @ basis.to_internal(p), p, rtol=1e-9, atol=1e-12)


def test_only_badly_placed_columns_are_transformed():
    basis = _basis()
    n_alpha = 3
    # column 0 is centred (mean 1e6, sd 1), column 2 rescaled (sd 1e-40), column 1 untouched
    np.testing.assert_array_equal(basis.beta, [n_alpha + 0, n_alpha + 2])
    assert basis.shift[0] == pytest.approx(1e6, rel=1e-6) and basis.shift[1] == 0.0
    assert basis.scale[0] == 1.0 and basis.scale[1] == pytest.approx(1e-40, rel=0.5)


def test_ordinary_columns_need_no_basis():
    X = np.random.default_rng(0).normal(size=(40, 3)) * [1, 1e5, 1e-5] + [3.0, 1e7, 0.0]
    J = np.asarray(threshold_jacobian("flexible", 2), dtype=float)
    assert shifted_basis(X, J, slice(0, 2), 2) is None


def test_gradient_and_hessian_map_as_the_chain_rule_says():
    """f(p) = g(T^{-1} p): grad_p = T^{-T} grad_q and H_p = T^{-T} H_q T^{-1}."""
    basis = _basis()
    k = 6
    T = basis.transform(k)
    T_inv = np.linalg.inv(T)
    rng = np.random.default_rng(2)
    A = rng.normal(size=(k, k))
    H_q = A @ A.T + k * np.eye(k)
    g_q = rng.normal(size=k)
    np.testing.assert_allclose(basis.gradient(g_q), T_inv.T @ g_q, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(basis.hessian(H_q), T_inv.T @ H_q @ T_inv, rtol=1e-8, atol=1e-6)
    C_q = np.linalg.inv(H_q)
    np.testing.assert_allclose(basis.covariance(C_q), T @ C_q @ T.T, rtol=1e-12)
    # per-row scores map like gradients, row by row
    scores = rng.normal(size=(5, k))
    np.testing.assert_allclose(basis.gradient(scores), scores @ T_inv, rtol=1e-9, atol=1e-9)


def test_standard_errors_do_not_overflow():
    J = np.asarray(threshold_jacobian("flexible", 2), dtype=float)
    X = 1e-170 * np.random.default_rng(0).normal(size=(30, 1))
    basis = shifted_basis(X, J, slice(0, 2), 2)
    assert basis is not None
    se = basis.standard_errors(np.diag([0.04, 0.09, 0.25]))
    assert np.isfinite(se).all()
    assert se[2] == pytest.approx(0.5 / basis.scale[0], rel=1e-12)  # ~ 1e170
    assert se[:2] == pytest.approx([0.2, 0.3])


def test_structures_without_a_constant_shift_are_left_alone():
    X = np.random.default_rng(0).normal(size=(30, 1)) + 1e6
    J = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 2.0]])  # no v with J v = 1
    assert shifted_basis(X, J, slice(0, 2), 2) is None


def test_the_design_layers_moments_are_the_column_moments():
    """aliasing_gram's by-product equals column_moments, on columns of any size and place."""
    from ordstats.core.linalg import column_moments
    from ordstats.design.core import aliasing_gram

    rng = np.random.default_rng(3)
    X = np.column_stack(
        [
            rng.normal(size=400) + 1e8,
            1e-200 * rng.normal(size=400),
            1e200 * rng.normal(size=400),
            np.full(400, 7.0),
            np.zeros(400),
            rng.integers(0, 2, 400).astype(float),
        ]
    )
    gram, moments = aliasing_gram(X)
    direct = column_moments(X)
    np.testing.assert_allclose(moments.mean, direct.mean, rtol=1e-13)
    np.testing.assert_allclose(moments.sd, direct.sd, rtol=1e-9, atol=0.0)
    assert moments.sd[3] == 0.0 and moments.sd[4] == 0.0  # constant columns: exactly zero
    # the constant columns are zero in the Gram matrix of [1, C]: aliased with the intercept
    assert np.all(gram[4, :] == 0.0) and np.all(gram[:, 5] == 0.0)
    J = np.asarray(threshold_jacobian("flexible", 3), dtype=float)
    with_moments = shifted_basis(X, J, slice(0, 3), 3, moments)
    without = shifted_basis(X, J, slice(0, 3), 3)
    assert with_moments is not None and without is not None
    np.testing.assert_array_equal(with_moments.beta, without.beta)
    np.testing.assert_allclose(with_moments.shift, without.shift, rtol=1e-13)
    np.testing.assert_allclose(with_moments.scale, without.scale, rtol=1e-9)


def test_array_models_pass_the_design_moments_to_the_likelihood(monkeypatch):
    """The array interface computes the column moments once, in the aliasing check."""
    import ordstats
    import ordstats.core.linalg as linalg

    calls = []
    original = linalg.column_moments

    def spy(X):
        calls.append(X.shape)
        return original(X)

    monkeypatch.setattr(linalg, "column_moments", spy)
    rng = np.random.default_rng(4)
    X = np.column_stack([rng.normal(size=300) + 1e6, rng.normal(size=300)])
    y = np.digitize(X[:, 1] + rng.logistic(size=300), [-1.0, 0.0, 1.0])
    model = ordstats.OrdinalModel(y, X)
    assert calls == []
    assert model.evaluator.basis is not None  # x + 1e6 is still centred
    res = model.fit()
    assert res.converged


# -- one-pass column summaries ---------------------------------------------------


@pytest.mark.parametrize("shape", [(0, 3), (5, 3), (64, 2), (1000, 20), (1001, 7)])
@pytest.mark.parametrize("order", ["C", "F"])
def test_column_reduce_equals_numpys_reductions(shape, order):
    from ordstats.core.linalg import column_reduce

    rng = np.random.default_rng(sum(shape))
    X = np.asarray(rng.normal(size=shape), order=order)
    for ufunc in (np.minimum, np.maximum) if shape[0] else ():  # no identity: empty fails
        np.testing.assert_array_equal(column_reduce(ufunc, X), ufunc.reduce(X, axis=0))
    np.testing.assert_allclose(column_reduce(np.add, X), X.sum(axis=0), rtol=1e-12, atol=1e-12)
    if shape[0] > 3:
        X[3, 1] = np.nan  # NaN propagates as in min / max
        assert np.isnan(column_reduce(np.minimum, X)[1])
        assert np.isnan(column_reduce(np.maximum, X)[1])


def test_column_summary_finds_the_non_finite_columns():
    from ordstats.design.core import column_summary

    X = np.random.default_rng(0).normal(size=(500, 5))
    X[10, 1], X[20, 2], X[499, 3] = np.nan, np.inf, -np.inf
    summary = column_summary(X)
    np.testing.assert_array_equal(summary.finite, [True, False, False, False, True])
    np.testing.assert_allclose(summary.total[[0, 4]], X[:, [0, 4]].sum(axis=0), rtol=1e-12)


def test_aliasing_gram_is_the_same_with_and_without_rescaled_rows(monkeypatch):
    """Moderate columns are centred as they are and the small Gram matrix rescaled;
    the general path divides every row by the column sizes first: the same numbers."""
    import ordstats.design.core as core

    rng = np.random.default_rng(7)
    X = np.column_stack(
        [rng.normal(size=3000) * 1e6 + 3e7, rng.normal(size=3000) * 1e-6, np.full(3000, 2.0)]
    )
    X = np.column_stack([X, X[:, 0] * 2e-6 + X[:, 1] * 5e5])  # aliased with the first two
    fast, fast_moments = core.aliasing_gram(X)
    monkeypatch.setattr(core, "_RAW_SIZE_RANGE", (np.inf, 0.0))  # no column counts as moderate
    general, general_moments = core.aliasing_gram(X)
    np.testing.assert_allclose(fast, general, rtol=1e-9, atol=1e-9 * np.abs(general).max())
    np.testing.assert_allclose(fast_moments.mean, general_moments.mean, rtol=1e-13)
    np.testing.assert_allclose(fast_moments.sd, general_moments.sd, rtol=1e-9)
    assert core.aliased_columns(fast) == core.aliased_columns(general) == [3, 4]
    # raw sums that overflow: the unit-size columns give the mean
    huge = np.column_stack([np.full(100, 1e307) + np.arange(100) * 1e300, rng.normal(size=100)])
    _, moments = core.aliasing_gram(huge)
    assert np.isfinite(moments.mean).all()
    np.testing.assert_allclose(moments.mean[0], 1e307 + 49.5e300, rtol=1e-12)


@pytest.mark.parametrize("value", [0.1, 3.7, 123.456, -0.3, 1e-200, 1e200])
def test_a_constant_column_of_any_value_is_reported_as_constant(value):
    """Its mean is taken from its extremes, not from a rounded sum / n, so it centres
    to exact zeros: the clear 'constant' error, not a dropped aliased column."""
    import ordstats
    from ordstats.design.core import aliasing_gram
    from ordstats.errors import SpecificationError

    rng = np.random.default_rng(1)
    n = 100_000  # 0.1 * n summed in floating point is not 0.1 * n
    x = rng.normal(size=n)
    X = np.column_stack([x, np.full(n, value)])
    _, moments = aliasing_gram(X)
    assert moments.sd[1] == 0.0 and moments.mean[1] == value
    y = np.digitize(x + rng.logistic(size=n), [-1.0, 0.0, 1.0])
    with pytest.raises(SpecificationError, match="constant"):
        ordstats.OrdinalModel(y, X)
