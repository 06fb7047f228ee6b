"""Correlated random terms (1 + x|g) in Bayesian fits: SD priors and an LKJ correlation.

The posterior lives in each term's log SDs and the atanh of its partial correlations
(estimation.bayes_language.CorrelationMap); NumPyro NUTS on the full model is the oracle
(tests/data/reference/bayes/sim_cor_clmm.json, made by make_reference.py).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import ordstats
from ordstats.core.block_priors import LkjPrior
from ordstats.estimation.bayes import make_target, resolve_priors
from ordstats.estimation.bayes_language import (
    CorrelationMap,
    brms_summary,
    correlation_factors,
)
from ordstats.estimation.vector_quadrature import CorrelatedDraws
from ordstats.families.mixed import cholesky_factors
from ordstats.results.posterior import PosteriorWarning
from tests.bayes.models import load, posterior_mode

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "reference" / "bayes"


def _fd(f, x, h=1e-6):
    return np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(x.size)])


@pytest.fixture(scope="module")
def simulated():
    return load("simulated_correlated")


def test_map_to_log_cholesky_and_its_jacobian():
    cmap = CorrelationMap((1, 7), (3, 2))
    x = 0.7 * np.random.default_rng(0).standard_normal(10)
    np.testing.assert_allclose(cmap.jacobian(x), _fd(cmap.expand, x).T, atol=1e-8)
    # the covariance of the mapped log-Cholesky parameters has the SDs exp(t)
    for L, t in zip(cholesky_factors(cmap.expand(x)[1:], (3, 2)), (x[1:4], x[7:9]), strict=True):
        np.testing.assert_allclose(np.sqrt(np.diag(L @ L.T)), np.exp(t), rtol=1e-12)
    back = cmap.contract(cmap.expand(x), min_sd=0.0, max_cor=1.0)
    np.testing.assert_allclose(back, x, atol=1e-12)


@pytest.mark.parametrize("eta", [1.0, 1.7, 4.0])
def test_lkj_in_partial_correlations_is_lkj_with_the_jacobian(eta):
    # LKJ(eta) ~ det(C)^(eta - 1) in C's free entries; times |dC/dy| it is LkjPrior's density
    q, rng = 3, np.random.default_rng(1)
    prior = LkjPrior((0, 1, 2), q, eta, 3)

    def entries(y):
        W = correlation_factors(y[None], q)[0]
        C = W @ W.T
        return np.array([C[1, 0], C[2, 0], C[2, 1]])

    def lkj(y):
        W = correlation_factors(y[None], q)[0]
        log_det = 2 * np.sum(np.log(np.diag(W)))
        return (eta - 1) * log_det + np.log(abs(np.linalg.det(_fd(entries, y))))

    gaps = [prior.value(y) - lkj(y) for y in rng.standard_normal((4, 3))]
    np.testing.assert_allclose(gaps, 0.0, atol=1e-7)  # the same density, constant 0


def test_chained_gradient_matches_finite_differences(simulated):
    model = ordstats.OrdinalModel.from_formula("y ~ x + (1 + x|g)", simulated)
    log_prior, _ = resolve_priors(model, "default")
    target = make_target(model, log_prior)
    x = np.array([-1.3, 0.2, 1.7, 0.9, 0.3, -0.5, 0.6])
    ev = target.negative_log_posterior(x)
    grad = _fd(lambda v: target.negative_log_posterior(v).nll, x, 1e-5)
    np.testing.assert_allclose(ev.gradient, grad, atol=1e-5)
    # the mode's objective is the Laplace value: the quadrature's one-node rule
    v = target.cmap.expand(x)[None]
    laplace = CorrelatedDraws(model.objective, nodes=1).loglik(v)[0] + log_prior.value(x)
    assert laplace == pytest.approx(-ev.nll, abs=1e-5)
    # the draws are weighed by the 4 x 4 rule, the same one draw at a time or in a batch
    batch = target.log_density_batch(np.vstack([x, x + 0.1]))
    assert batch[0] == pytest.approx(target.log_density(x), rel=1e-12)
    expected = CorrelatedDraws(model.objective, nodes=4).loglik(v)[0] + log_prior.value(x)
    assert batch[0] == pytest.approx(expected, rel=1e-12)
    assert 0.1 < batch[0] - laplace < 2.0  # the Laplace error, which moved the SDs' means


def test_wine_correlated_term_has_a_mode(wine):
    # in the log-Cholesky coordinates the temp SD ran off to log = -15.6; in log SDs the
    # half-t prior's density vanishes as the SD goes to 0
    model = ordstats.OrdinalModel.from_formula("rating ~ temp + contact + (1 + temp|judge)", wine)
    mode = model.fit(prior="default")
    assert mode.converged
    assert list(mode.params.index[-3:]) == [
        "log(sd):judge:(Intercept)",
        "log(sd):judge:temp[T.warm]",
        "atanh(cpc):judge:temp[T.warm],(Intercept)",
    ]
    assert -3 < mode.params["log(sd):judge:temp[T.warm]"] < 1
    table = mode.prior_summary
    assert list(table["class"])[-3:] == ["sd", "sd", "cor"]
    assert table["prior"].iloc[-1] == "lkj(1) (default)"


@pytest.fixture(scope="module")
def nuts_comparison():
    record = json.loads((REFERENCE / "sim_cor_clmm.json").read_text())
    with warnings.catch_warnings():
        warnings.simplefilter("error", PosteriorWarning)
        post = posterior_mode("sim_cor_clmm").posterior(8000, seed=2)  # ESS ~ 5,900
    rows = []
    for table, reference in (
        (post.summary(), record["params"]),
        (brms_summary(post), record["brms"]),
    ):
        for param, ref in reference.items():
            gap = (table.loc[param, "mean"] - ref["mean"]) / ref["sd"]
            rows.append((param, gap, table.loc[param, "sd"] / ref["sd"]))
    return post, rows


#: The random term's parameters: with the Laplace marginal likelihood (15 rows per group)
#: their means were 0.03-0.12 posterior SD from NUTS on the full model (the x slope's SD
#: 0.09-0.12 below, systematically); with the 4 x 4 adaptive Gauss-Hermite rule of
#: estimation.vector_quadrature they are within 0.03 (seeds 1-6 of 8,000 draws).
_VARIANCE = {
    "log(sd):g:(Intercept)",
    "log(sd):g:x",
    "atanh(cpc):g:x,(Intercept)",
    "sd_g__Intercept",
    "sd_g__x",
    "cor_g__Intercept__x",
}


def test_posterior_matches_nuts_with_a_correlated_term(nuts_comparison):
    post, rows = nuts_comparison
    assert post.k_hat < 0.7
    for param, gap, ratio in rows:
        assert abs(gap) < (0.15 if param in _VARIANCE else 0.05), param
        assert ratio == pytest.approx(1, abs=0.05), param


def test_random_term_means_within_the_target(nuts_comparison):
    _, rows = nuts_comparison
    for param, gap, _ in rows:
        if param in _VARIANCE:
            assert abs(gap) < 0.05, param


def test_sd_and_lkj_priors_move_the_posterior(simulated):
    model = ordstats.OrdinalModel.from_formula("y ~ x + (1 + x|g)", simulated)
    base = model.fit(prior="default").params
    tight = model.fit(
        prior=[
            ordstats.prior("normal(0, 0.1)", "sd", coef="x", group="g"),
            ordstats.prior("lkj(50)", "cor"),
        ]
    ).params
    assert tight["log(sd):g:x"] < base["log(sd):g:x"] - 0.5
    assert tight["log(sd):g:(Intercept)"] == pytest.approx(base["log(sd):g:(Intercept)"], abs=0.1)
    cor = "atanh(cpc):g:x,(Intercept)"
    assert abs(tight[cor]) < 0.5 * abs(base[cor])


def test_jax_factor_and_lkj_equal_numpy(simulated):
    pytest.importorskip("numpyro")
    import jax.numpy as jnp
    import numpyro

    from ordstats.core.block_priors import cholesky_layout
    from ordstats.results.jax_models import _block_prior, _cholesky_factor

    numpyro.enable_x64()
    rng = np.random.default_rng(3)
    for q in (2, 3):
        n = q * (q + 1) // 2
        theta = 0.8 * rng.standard_normal(n)
        L = np.asarray(_cholesky_factor(jnp, jnp.asarray(theta), q, cholesky_layout(q)))
        v = CorrelationMap((0,), (q,)).expand(theta)
        np.testing.assert_allclose(L, cholesky_factors(v, (q,))[0], atol=1e-12)
        prior = LkjPrior(tuple(range(q, n)), q, 2.5, n)
        jax_value = _block_prior(jnp, None, [("lkj", list(prior.positions), q, 2.5)])
        assert float(jax_value(jnp.asarray(theta))) == pytest.approx(prior.value(theta))


def test_two_terms_map_their_own_parameters(simulated):
    data = simulated.assign(h=(simulated.index % 7).astype(str))
    model = ordstats.OrdinalModel.from_formula("y ~ x + (1|h) + (1 + x|g)", data)
    mode = model.fit(prior="default")
    assert mode.converged
    assert mode.params.index[-4] == "log(sd):h:(Intercept)"
    table = mode.prior_summary
    assert list(table["class"]).count("sd") == 3 and list(table["class"]).count("cor") == 1
