"""The posterior's sampler: vectorised log densities of many draws, quasi-random proposals.

``Target.log_density_batch`` evaluates blocks of draws at once
(:mod:`ordstats.estimation.draw_densities`); it must equal the one-draw
``Target.log_density`` on every kind of model, including draws off the support and
draws where the logit path's exponentials overflow.  The Student-t proposals are
randomised quasi-Monte Carlo and pooled over the adaptive step
(:func:`ordstats.results.posterior.adaptive_importance`).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import linalg, stats

import ordstats
from ordstats.core.psis import mvt_draws, mvt_logpdf, mvt_mixture_logpdf, psis, sobol_uniforms
from ordstats.estimation.draw_densities import ClmDraws, MixedDraws
from ordstats.results.posterior import adaptive_importance


def _draws_around(mode, n=200, spread=1.5, seed=0):
    """Draws of a Gaussian ``spread`` times wider than the Laplace approximation."""
    rng = np.random.default_rng(seed)
    L = np.linalg.cholesky(np.linalg.inv(mode.hessian))
    return mode.params.to_numpy() + spread * rng.standard_normal((n, L.shape[0])) @ L.T


def _assert_batch_equals_one_by_one(mode, draws, path):
    target = mode.target
    batch = target.log_density_batch(draws)
    single = np.array([target.log_density(x) for x in draws])
    assert isinstance(target._draws, path) if path is not None else target._draws is None
    np.testing.assert_array_equal(np.isfinite(batch), np.isfinite(single))
    finite = np.isfinite(single)
    assert finite.sum() >= draws.shape[0] // 2
    np.testing.assert_allclose(batch[finite], single[finite], rtol=1e-10, atol=1e-9)
    return batch


@pytest.fixture(scope="module")
def wine_mode(wine):
    return ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine).fit(prior="default")


CLM_CASES = {
    "logit": ("rating ~ temp + contact", {}),
    "probit": ("rating ~ temp + contact", {"link": "probit"}),
    "cloglog": ("rating ~ temp + contact", {"link": "cloglog"}),
    "cauchit": ("rating ~ temp + contact", {"link": "cauchit"}),
    "nominal": ("rating ~ temp", {"nominal": "~ contact"}),
    "scale": ("rating ~ temp + contact", {"scale": "~ temp"}),
    "symmetric": ("rating ~ temp + contact", {"threshold": "symmetric"}),
    "equidistant": ("rating ~ temp + contact", {"threshold": "equidistant"}),
}


@pytest.mark.parametrize("case", sorted(CLM_CASES))
def test_clm_batch_equals_one_draw_at_a_time(wine, case):
    formula, kwargs = CLM_CASES[case]
    mode = ordstats.OrdinalModel.from_formula(formula, wine, **kwargs).fit(prior="default")
    _assert_batch_equals_one_by_one(mode, _draws_around(mode), ClmDraws)


def test_clm_batch_with_weights_and_offset(housing):
    frame = housing.assign(off=np.linspace(-0.5, 0.5, len(housing)))
    model = ordstats.OrdinalModel.from_formula(
        "Sat ~ Infl + Type + Cont", frame, weights="Freq", offset="off"
    )
    assert model.has_offset
    mode = model.fit(prior="default")
    _assert_batch_equals_one_by_one(mode, _draws_around(mode), ClmDraws)


def test_logit_path_falls_back_where_exponentials_overflow(wine_mode):
    draws = _draws_around(wine_mode, n=40)
    slope = list(wine_mode.params.index).index("temp[T.warm]")
    draws[::4, slope] = 800.0  # e^eta overflows for the warm rows
    draws[1::4, slope] = -800.0  # e^eta underflows to 0
    draws[2::4, 0] = -760.0  # a far-away lowest threshold: e^{-theta} overflows
    batch = _assert_batch_equals_one_by_one(wine_mode, draws, ClmDraws)
    assert np.isfinite(batch[::4]).all() and np.isfinite(batch[1::4]).all()


def test_disordered_thresholds_are_outside_the_support(wine_mode):
    draws = _draws_around(wine_mode, n=20)
    draws[::2, [1, 2]] = draws[::2, [2, 1]]  # swap two cut-points: not increasing
    swapped = draws[::2, 1] > draws[::2, 2]
    batch = _assert_batch_equals_one_by_one(wine_mode, draws, ClmDraws)
    assert np.all(batch[::2][swapped] == -np.inf)


def test_flexible_link_and_other_families_go_draw_by_draw(wine):
    for kwargs in ({"family": "sratio", "nominal": "~ contact"}, {"family": "acat"}):
        model = ordstats.OrdinalModel.from_formula("rating ~ temp", wine, **kwargs)
        mode = model.fit(prior={"b": "normal(0, 5)"})
        _assert_batch_equals_one_by_one(mode, _draws_around(mode, n=30), None)


def test_shifted_predictor_goes_draw_by_draw(wine):
    far = np.random.default_rng(2).normal(size=len(wine)) + 1e4  # mean 10^4 SDs
    model = ordstats.OrdinalModel.from_formula("rating ~ temp + far", wine.assign(far=far))
    assert model.evaluator.basis is not None
    with warnings.catch_warnings():  # Newton in the user's (ill-conditioned) parameters
        warnings.simplefilter("ignore", ordstats.errors.ConvergenceWarning)
        mode = model.fit(prior="default")
    assert ClmDraws.of(model) is None
    _assert_batch_equals_one_by_one(mode, _draws_around(mode, n=20), None)


MIXED_CASES = {
    "laplace": ("rating ~ temp + contact + (1|judge)", {}, 1),
    "probit": ("rating ~ temp + contact + (1|judge)", {"link": "probit"}, 1),
    "cauchit": ("rating ~ temp + contact + (1|judge)", {"link": "cauchit"}, 1),
    "agq": ("rating ~ temp + contact + (1|judge)", {}, 7),
    "slope": ("rating ~ temp + contact + (0 + z|judge)", {}, 1),
}


@pytest.mark.parametrize("case", sorted(MIXED_CASES))
def test_clmm_batch_equals_one_draw_at_a_time(wine, case):
    formula, kwargs, nagq = MIXED_CASES[case]
    frame = wine.assign(z=np.linspace(0.5, 1.5, len(wine)))  # a scalar random slope
    model = ordstats.OrdinalModel.from_formula(formula, frame, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ordstats.errors.OrdstatsWarning)
        mode = model.fit(prior="default", nagq=nagq)
    draws = _draws_around(mode, n=120)
    draws[:10, 1], draws[:10, 2] = draws[:10, 2] + 0.1, draws[:10, 1]  # disordered
    _assert_batch_equals_one_by_one(mode, draws, MixedDraws)


def test_clmm_with_two_terms_goes_draw_by_draw(wine):
    frame = wine.assign(bottle=np.tile(np.arange(8), 9).astype(str))
    model = ordstats.OrdinalModel.from_formula("rating ~ temp + (1|judge) + (1|bottle)", frame)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ordstats.errors.OrdstatsWarning)
        mode = model.fit(prior="default")
    assert MixedDraws.of(model, 1) is None
    _assert_batch_equals_one_by_one(mode, _draws_around(mode, n=12), None)


# -- the proposal ------------------------------------------------------------------------


def test_mvt_logpdf_is_the_normalised_student_t():
    rng = np.random.default_rng(1)
    k, df = 4, 7.0
    A = rng.normal(size=(k, k))
    scale = A @ A.T + k * np.eye(k)
    chol = linalg.cholesky(scale, lower=True)
    mode = rng.normal(size=k)
    x, log_q = mvt_draws(mode, chol, df, 50, rng)
    exact = stats.multivariate_t(loc=mode, shape=scale, df=df).logpdf(x)
    np.testing.assert_allclose(mvt_logpdf(x, mode, chol, df), exact, rtol=1e-12)
    np.testing.assert_allclose(log_q, exact, rtol=1e-12)
    other = (mode + 1.0, 2.0 * chol)
    mixture = mvt_mixture_logpdf(x, [(mode, chol), other], df, np.array([0.25, 0.75]))
    second = stats.multivariate_t(loc=other[0], shape=4.0 * scale, df=df).logpdf(x)
    np.testing.assert_allclose(mixture, np.logaddexp(np.log(0.25) + exact, np.log(0.75) + second))


def test_sobol_uniforms_are_reproducible_and_inside_the_cube():
    u = sobol_uniforms(1000, 6, np.random.default_rng(3))
    assert u.shape == (1000, 6) and np.all((u > 0) & (u < 1))
    np.testing.assert_array_equal(u, sobol_uniforms(1000, 6, np.random.default_rng(3)))
    assert not np.array_equal(u, sobol_uniforms(1000, 6, np.random.default_rng(4)))


def test_quasi_random_draws_estimate_the_mean_more_accurately():
    k, df, n = 5, 7.0, 4000
    chol = np.eye(k)
    errors = {True: [], False: []}
    for seed in range(20):
        for quasi in (True, False):
            x, _ = mvt_draws(np.zeros(k), chol, df, n, np.random.default_rng(seed), quasi=quasi)
            errors[quasi].append(np.abs(x.mean(axis=0)).max())
    assert np.sqrt(np.mean(np.square(errors[True]))) < 0.3 * np.sqrt(
        np.mean(np.square(errors[False]))
    )


class _Gaussian:
    """A Gaussian log density, skewed away from the proposal's centre and scale."""

    def __init__(self, mean, cov):
        self.mean, self.prec = mean, np.linalg.inv(cov)

    def log_density_batch(self, X):
        d = X - self.mean
        return -0.5 * np.einsum("ij,jk,ik->i", d, self.prec, d)


@pytest.mark.parametrize("n", [1, 3, 501, 4000])
def test_adaptive_importance_keeps_every_draw_and_targets_the_posterior(n):
    mean, cov = np.array([1.0, -0.5, 0.3]), np.diag([0.5, 2.0, 1.0]) + 0.2
    target = _Gaussian(mean, cov)
    x, log_ratio = adaptive_importance(
        target, np.zeros(3), np.eye(3), 7.0, n, np.random.default_rng(0)
    )
    assert x.shape == (n, 3) and log_ratio.shape == (n,)
    if n < 4000:
        return
    w = psis(log_ratio).weights
    centred = x - w @ x
    np.testing.assert_allclose(w @ x, mean, atol=0.03)
    np.testing.assert_allclose((centred * w[:, None]).T @ centred, cov, atol=0.06)


def test_adaptive_importance_weighs_draws_against_the_mixture():
    """Draws of a target equal to the first proposal: the ratios are p / q_mix exactly."""
    rng = np.random.default_rng(5)
    chol = np.eye(2)

    class Exact:
        def log_density_batch(self, X):
            return mvt_logpdf(X, np.zeros(2), chol, 7.0)

    _, log_ratio = adaptive_importance(Exact(), np.zeros(2), chol, 7.0, 1000, rng)
    # the second proposal is the first moved to the weighted moments of its draws
    assert not np.allclose(log_ratio, log_ratio[0])
    w = psis(log_ratio)
    assert w.k_hat < 0.5 and w.ess > 900


def test_posterior_is_reproducible_given_a_seed(wine_mode):
    a = wine_mode.posterior(500, seed=11)
    b = wine_mode.posterior(500, seed=11)
    pd.testing.assert_frame_equal(a.draws, b.draws)
    np.testing.assert_array_equal(a.weights, b.weights)
    assert not wine_mode.posterior(500, seed=12).draws.equals(a.draws)
