"""Many levels at scale (issue 28 item 4): sums over levels, and no eigenvalues at the fit.

With one free threshold per cut-point and more levels than the dense level sums
allow, the gradient and the tridiagonal Hessian are sums over the rows of each
level (``O(n + K)``) instead of products with the sparse ``(n, K)`` designs; and
the fit rules out a singular Hessian by a 1-norm condition estimate, leaving the
Lanczos iterations for ``cond_H`` to the first read (they cost ``O(K)`` per
iteration and many iterations: at K = 10^5 far more than the fit).
"""

from __future__ import annotations

import numpy as np
import pytest

import ordstats
from ordstats.families.cumulative.banded import BandedCovariance, BandedHessian
from ordstats.families.cumulative.likelihood import Evaluation


def _many_level_data(n, K, seed=0, weights=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    latent = X @ np.array([0.8, -0.4]) + rng.logistic(size=n)
    cuts = np.quantile(latent, np.linspace(0, 1, K + 1)[1:-1])
    w = rng.integers(1, 4, size=n).astype(float) if weights else None
    return np.searchsorted(cuts, latent), X, w


@pytest.mark.parametrize("link", ["logit", "probit", "cloglog"])
@pytest.mark.parametrize("weights", [False, True])
def test_level_sums_equal_the_sparse_designs(link, weights):
    y, X, w = _many_level_data(3000, 120, seed=4, weights=weights)
    model = ordstats.OrdinalModel(y, X, many_levels=True, link=link, weights=w)
    problem = model.problem
    assert problem.one_threshold_per_cut
    params = model.fit().params.to_numpy() + 0.01  # away from the optimum: a gradient
    by_levels = Evaluation(problem, params)
    # the same problem told to use the sparse (n, K) designs
    sparse_problem = type(problem)(**{f: getattr(problem, f) for f in problem.__dataclass_fields__})
    sparse_problem.__dict__["one_threshold_per_cut"] = False
    by_designs = Evaluation(sparse_problem, params)
    assert by_levels.nll == pytest.approx(by_designs.nll, rel=1e-14)
    np.testing.assert_allclose(by_levels.gradient, by_designs.gradient, rtol=1e-11, atol=1e-9)
    (block, border), (block_s, border_s) = by_levels.hessian_blocks, by_designs.hessian_blocks
    np.testing.assert_allclose(block.toarray(), block_s.toarray(), rtol=1e-11, atol=1e-9)
    np.testing.assert_allclose(border, border_s, rtol=1e-11, atol=1e-9)
    assert "_threshold_designs" not in problem.__dict__  # never built on the level path


def test_fit_computes_no_eigenvalues_and_cond_h_is_exact_on_request(monkeypatch):
    y, X, _ = _many_level_data(4000, 600, seed=2)
    model = ordstats.OrdinalModel(y, X, many_levels=True)

    def refuse(*args, **kwargs):
        raise AssertionError("eigenvalues computed during the fit")

    with monkeypatch.context() as patch:
        patch.setattr(BandedHessian, "extreme_eigenvalues", refuse)
        res = model.fit()
        assert np.all(np.isfinite(res.bse))
    assert isinstance(res.covariance, BandedCovariance)
    assert not res.covariance.singular
    dense = res.covariance.hessian.toarray()
    eigenvalues = np.linalg.eigvalsh(dense)
    assert res.cond_H == pytest.approx(eigenvalues[-1] / eigenvalues[0], rel=1e-6)


def test_condition_estimate_bounds_the_eigenvalue_ratio():
    y, X, _ = _many_level_data(4000, 300, seed=5)
    res = ordstats.OrdinalModel(y, X, many_levels=True).fit()
    estimate = res.covariance._condition_estimate()
    assert res.cond_H <= estimate <= 3 * res.cond_H * len(res.params)


def test_nearly_singular_hessian_is_still_found():
    # a Hessian that factors (positive definite) but whose eigenvalue ratio exceeds 1e13
    q, m = 200, 2
    diag = np.full(q, 2.0)
    off = np.full(q - 1, -1.0)  # the second-difference matrix: eigenvalues ~ 1/q^2 to 4
    cross = np.zeros((q, m))
    rest = np.diag([1.0, 1e-14])  # one tiny eigenvalue in the location block
    cov = BandedCovariance(BandedHessian(diag, off, cross, rest))
    assert cov.singular
    assert np.all(np.isnan(cov.variances()))
