"""Many response levels: the tridiagonal-plus-border Hessian, its solve and covariance."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ordstats
from ordstats.core.links import get_link, link_names
from ordstats.core.thresholds import threshold_jacobian
from ordstats.errors import SpecificationError
from ordstats.families.cumulative.banded import BandedCovariance, BandedHessian, banded_newton_step
from ordstats.families.cumulative.likelihood import evaluate, prepare


def _random_banded(rng, q, m, shift=0.0):
    """A random symmetric matrix with a tridiagonal leading block, PD unless shifted."""
    dense = rng.normal(size=(q + m, q + m))
    spd = dense @ dense.T / (q + m) + np.eye(q + m)
    spd[:q, :q] = 0.0
    off = rng.uniform(-0.4, 0.4, size=q - 1)
    diag = rng.uniform(1.0, 3.0, size=q)
    diag[:-1] += np.abs(off)
    diag[1:] += np.abs(off)
    cross = rng.normal(scale=0.3 / np.sqrt(q), size=(q, m))
    rest = spd[q:, q:] + m * np.eye(m)
    return BandedHessian(diag - shift, off, cross, rest - shift * np.eye(m))


@given(seed=st.integers(0, 2**31), q=st.integers(1, 40), m=st.integers(0, 5))
@settings(max_examples=50, deadline=None)
def test_banded_solve_matches_dense_solve(seed, q, m):
    rng = np.random.default_rng(seed)
    hessian = _random_banded(rng, q, m)
    g = rng.normal(size=q + m)
    step, modified = banded_newton_step(hessian, g)
    assert not modified
    np.testing.assert_allclose(step, np.linalg.solve(hessian.toarray(), g), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(hessian.matvec(step), g, rtol=1e-9, atol=1e-10)


def test_indefinite_hessian_is_inflated_like_the_dense_step():
    rng = np.random.default_rng(3)
    hessian = _random_banded(rng, 30, 3, shift=4.0)
    dense = hessian.toarray()
    min_eig = np.linalg.eigvalsh(dense)[0]
    assert min_eig < 0
    g = rng.normal(size=33)
    step, modified = banded_newton_step(hessian, g)
    assert modified
    expected = np.linalg.solve(dense + (abs(min_eig) + 1.0) * np.eye(33), g)
    np.testing.assert_allclose(step, expected, rtol=1e-8)


@pytest.mark.parametrize(("q", "m"), [(5, 2), (60, 4), (500, 3)])
def test_banded_covariance_matches_dense_inverse(q, m):
    rng = np.random.default_rng(q)
    hessian = _random_banded(rng, q, m)
    dense = hessian.toarray()
    inverse = np.linalg.inv(dense)
    cov = BandedCovariance(hessian)
    assert not cov.singular
    np.testing.assert_allclose(cov.variances(), np.diag(inverse), rtol=1e-10)
    np.testing.assert_allclose(cov.location_block, inverse[q:, q:], rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(cov.matrix, inverse, rtol=1e-9, atol=1e-13)
    eig = np.linalg.eigvalsh(dense)
    assert cov.cond == pytest.approx(eig[-1] / eig[0], rel=1e-8)


def test_singular_banded_covariance_is_nan():
    hessian = BandedHessian(np.array([1.0, 1.0]), np.array([1.0]), np.zeros((2, 1)), np.eye(1))
    cov = BandedCovariance(hessian)
    assert cov.singular and np.isinf(cov.cond)
    assert np.all(np.isnan(cov.variances())) and np.all(np.isnan(cov.matrix))


@given(seed=st.integers(0, 2**31), link=st.sampled_from(link_names()), scale=st.integers(0, 2))
@settings(max_examples=30, deadline=None)
def test_banded_hessian_equals_dense_hessian(random_clm_data, seed, link, scale):
    rng = np.random.default_rng(seed)
    n, K = 80, 7
    data = random_clm_data(
        rng,
        n=n,
        n_levels=K,
        link=get_link(link),
        jacobian=threshold_jacobian("flexible", K - 1),
        offset=False,
        scale=scale,
        scale_sd=0.3,
    )
    problem = prepare(data)
    params = rng.normal(scale=0.3, size=problem.layout.n_params)
    params[problem.layout.alpha] = np.linspace(-1.5, 1.5, K - 1)
    ev = evaluate(problem, params)
    np.testing.assert_allclose(
        BandedHessian.from_evaluation(ev).toarray(), ev.hessian, rtol=1e-12, atol=1e-12
    )


def _many_level_data(n, p, K, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    latent = X @ rng.normal(scale=0.5, size=p) + rng.logistic(size=n)
    cuts = np.quantile(latent, np.linspace(0, 1, K + 1)[1:-1])
    return np.searchsorted(cuts, latent), X


def test_k300_banded_fit_equals_dense_newton():
    y, X = _many_level_data(6000, 3, 300)
    model = ordstats.OrdinalModel(y, X, many_levels=True)
    banded = model.fit()  # automatic: 299 thresholds
    dense = model.fit(banded=False)
    assert banded.converged and dense.converged
    assert type(banded.covariance).__name__ == "BandedCovariance"
    assert type(dense.covariance).__name__ == "Covariance"
    np.testing.assert_allclose(banded.params, dense.params, rtol=1e-10)
    np.testing.assert_allclose(banded.bse, dense.bse, rtol=1e-9)
    np.testing.assert_allclose(banded.cov_params(), dense.cov_params(), rtol=1e-8, atol=1e-14)
    assert banded.llf == pytest.approx(dense.llf, rel=1e-12)
    assert banded.cond_H == pytest.approx(dense.cond_H, rel=1e-6)


def test_ten_thousand_levels_fit():
    y, X = _many_level_data(40_000, 2, 10_000, seed=1)
    res = ordstats.OrdinalModel(y, X, many_levels=True).fit()
    assert res.converged
    assert len(res.params) == 9_999 + 2
    assert np.all(np.diff(res.thresholds["estimate"]) > 0)
    np.testing.assert_allclose(res.thresholds["std err"], res.bse.iloc[:9_999], rtol=1e-12)
    assert np.all(np.isfinite(res.bse)) and np.all(res.bse > 0)
    # location effects agree with a coarser, dense fit of the same latent model
    coarse = np.minimum(y // 2000, 4)
    small = ordstats.OrdinalModel(coarse, X).fit()
    np.testing.assert_allclose(res.params.iloc[-2:], small.params.iloc[-2:], atol=0.05)


def test_banded_needs_flexible_thresholds():
    y, X = _many_level_data(500, 1, 6)
    model = ordstats.OrdinalModel(y, X, threshold="equidistant")
    with pytest.raises(
        SpecificationError,
        match=r"banded=True needs the cumulative family.*"
        r"threshold='equidistant'",
    ):
        model.fit(banded=True)
    sratio = ordstats.OrdinalModel(y, X, family="sratio")
    with pytest.raises(SpecificationError, match="family='sratio'"):
        sratio.fit(banded=True)
    forced = ordstats.OrdinalModel(y, X).fit(banded=True)
    np.testing.assert_allclose(forced.params, ordstats.OrdinalModel(y, X).fit().params, rtol=1e-10)
