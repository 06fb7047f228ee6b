"""The adaptive Gauss-Hermite rule over a correlated term (estimation.vector_quadrature).

The marginal likelihood of a few groups is checked against a brute-force integral: each
group's two random effects integrated on a fine grid (the trapezoidal rule, which
converges geometrically for a smooth integrand under a Gaussian).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import log_ndtr, logsumexp

import ordstats
from ordstats.estimation.vector_quadrature import NODES, CorrelatedDraws, product_rule
from ordstats.families.mixed import cholesky_factors
from tests.bayes.models import simulated_correlated

#: log-Cholesky parameters of (1 + x|g) at which the integrals are compared
PARAMS = np.array([-1.4, 0.1, 1.6, 0.8, 0.2, -0.6, 0.4])


@pytest.fixture(scope="module", params=["logit", "probit"])
def few_groups(request):
    data = simulated_correlated()
    data = data[data.g.isin(["0", "1", "2"])].reset_index(drop=True)
    return ordstats.OrdinalModel.from_formula("y ~ x + (1 + x|g)", data, link=request.param)


def _log_cdf(link: str, x: np.ndarray) -> np.ndarray:
    return -np.logaddexp(0.0, -x) if link == "logit" else log_ndtr(x)


def _brute_force(model, params: np.ndarray, half_width: float = 7.0, points: int = 401) -> float:
    """Sum over the groups of log of the integral over u in R^2, on a grid, by hand."""
    p = model.problem
    term = p.terms[0]
    alpha, beta, var = p.split(params)
    theta = np.concatenate([[-np.inf], p.jacobian @ alpha, [np.inf]])
    A = term.matrix @ cholesky_factors(var, [2])[0]
    grid = np.linspace(-half_width, half_width, points)
    u1, u2 = np.meshgrid(grid, grid, indexing="ij")
    log_prior = -0.5 * (u1**2 + u2**2) - np.log(2 * np.pi)
    link = p.link.name
    total = 0.0
    for level in range(term.n_levels):
        log_lik = log_prior.copy()
        for i in np.flatnonzero(term.codes == level):
            eta = p.X[i] @ beta + A[i, 0] * u1 + A[i, 1] * u2
            upper, lower = theta[p.y[i] + 1] - eta, theta[p.y[i]] - eta
            log_hi, log_lo = _log_cdf(link, upper), _log_cdf(link, lower)
            with np.errstate(divide="ignore"):  # P underflows at the grid's far corners
                log_lik += log_hi + np.log1p(-np.exp(log_lo - log_hi))
        step = grid[1] - grid[0]
        total += float(logsumexp(log_lik) + 2 * np.log(step))
    return total


def test_product_rule_integrates_the_gaussian_moments():
    points, log_factors = product_rule(2, 4)
    weights = np.exp(log_factors - np.sum(points**2, axis=1))  # the plain product weights
    assert points.shape == (16, 2)
    assert weights.sum() == pytest.approx(np.pi)  # int exp(-z'z) dz
    assert weights @ (points[:, 0] ** 2 * points[:, 1] ** 2) == pytest.approx(np.pi / 4)
    assert weights @ points[:, 0] ** 6 == pytest.approx(15 * np.pi / 8)  # degree 7 exact


def test_marginal_likelihood_matches_a_brute_force_integral(few_groups):
    exact = _brute_force(few_groups, PARAMS)
    v = PARAMS[None, :]
    fine = CorrelatedDraws(few_groups.objective, nodes=10).loglik(v)[0]
    default = CorrelatedDraws(few_groups.objective, nodes=NODES).loglik(v)[0]
    laplace = CorrelatedDraws(few_groups.objective, nodes=1).loglik(v)[0]
    assert fine == pytest.approx(exact, abs=1e-6)
    assert abs(default - exact) < 0.01
    assert abs(laplace - exact) > 5 * abs(default - exact)
    # one node is the mixed model's own Laplace value
    assert laplace == pytest.approx(-few_groups.objective.value(PARAMS), abs=1e-5)


def test_a_block_of_draws_equals_each_draw_alone(few_groups):
    rng = np.random.default_rng(4)
    draws = PARAMS + 0.3 * rng.standard_normal((25, PARAMS.size))
    draws[3, :3] = [1.0, 0.0, 2.0]  # thresholds out of order: -inf
    quadrature = CorrelatedDraws(few_groups.objective)
    together = quadrature.loglik(draws)
    alone = np.array([quadrature.loglik(d)[0] for d in draws])
    assert together[3] == -np.inf
    np.testing.assert_allclose(together, alone, rtol=0, atol=1e-6)


def test_only_models_with_one_correlated_term_take_the_rule():
    data = simulated_correlated()
    data = data.assign(h=(data.index % 7).astype(str))
    scalar = ordstats.OrdinalModel.from_formula("y ~ x + (1|g)", data)
    two_terms = ordstats.OrdinalModel.from_formula("y ~ x + (1|h) + (1 + x|g)", data)
    correlated = ordstats.OrdinalModel.from_formula("y ~ x + (1 + x|g)", data)
    assert CorrelatedDraws.of(scalar) is None
    assert CorrelatedDraws.of(two_terms) is None
    assert isinstance(CorrelatedDraws.of(correlated), CorrelatedDraws)
