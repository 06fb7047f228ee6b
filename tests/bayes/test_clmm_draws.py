"""The vectorised Laplace log-likelihood of a clmm at many draws (estimation.draw_densities).

The inner Newton for the conditional modes starts from the modes at the draws' mean,
extrapolated linearly in the random effects ``b = sigma u`` (``MixedDraws._start``), so
its start is off by ``O(|x - c|^2)``; the logit path evaluates ``log P`` less its
width term with two ``exp`` and one ``log`` per row and draw, and hands the entries
whose exponentials overflow to the general formulas.  Every value must equal the
one-draw ``MixedObjective.value``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import ordstats
from ordstats.estimation.draw_densities import MixedDraws
from tests.bayes.models import wine_extended


def _mode(wine, formula, **kwargs):
    model = ordstats.OrdinalModel.from_formula(formula, wine_extended(wine), **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ordstats.errors.OrdstatsWarning)
        return model.fit(prior="default")


def _one_by_one(mode, draws):
    return np.array([mode.target.log_density(x) for x in draws])


def test_start_of_the_inner_newton_is_off_by_the_square_of_the_distance(wine):
    mode = _mode(wine, "rating ~ temp + contact + (1|judge)")
    draws_of = MixedDraws.of(mode.target.model, 1)
    problem = mode.target.model.problem
    a, b = problem.n_alpha, problem.n_alpha + problem.n_beta
    centre = mode.params.to_numpy()
    direction = np.random.default_rng(0).normal(size=(2, centre.size))
    direction -= direction.mean(axis=0)  # the two draws' mean is the centre
    errors = []
    for distance in (1e-2, 1e-3):
        params = centre + distance * direction
        rows = draws_of._block_rows(
            problem.jacobian @ params[:, :a].T, params[:, a:b], params[:, b]
        )
        start = draws_of._start(params, rows)
        modes = np.column_stack([mode.target.model.objective.modes(x).u for x in params])
        errors.append(np.max(np.abs(start - modes)))
    assert errors[1] < errors[0] / 50  # quadratic: 100 times smaller for 10 times closer


@pytest.mark.parametrize(
    "formula, kwargs",
    [
        ("rating ~ temp + contact + (0 + z|judge)", {"weights": "w", "offset": "off"}),
        ("rating ~ temp + contact + (1|judge)", {"weights": "w"}),
    ],
)
def test_weights_offsets_and_slopes_equal_one_draw_at_a_time(wine, formula, kwargs):
    mode = _mode(wine, formula, **kwargs)
    assert isinstance(mode.target._draws, MixedDraws)
    L = np.linalg.cholesky(np.linalg.inv(mode.hessian))
    rng = np.random.default_rng(1)
    draws = mode.params.to_numpy() + 1.5 * rng.standard_normal((60, L.shape[0])) @ L.T
    batch = mode.target.log_density_batch(draws)
    single = _one_by_one(mode, draws)
    np.testing.assert_array_equal(np.isfinite(batch), np.isfinite(single))
    np.testing.assert_allclose(batch, single, rtol=1e-10, atol=1e-9)


def test_overflowing_exponentials_take_the_general_formulas(wine):
    mode = _mode(wine, "rating ~ temp + contact + (1|judge)")
    draws = np.tile(mode.params.to_numpy(), (6, 1))
    draws[0, 4] = 760.0  # e^{eta - theta} overflows for the warm rows
    draws[1, 4] = -760.0  # and e^{theta - eta} for the lower bounds
    draws[2, 0] = -750.0  # a far-away lowest threshold
    draws[3, -1] = 4.0  # sigma e^4: large random effects
    draws[4, 4] = 580.0  # e^{-U_0} e^{b} does not overflow, but F(U) S(L) underflows
    draws[5, 4] = -580.0
    batch = mode.target.log_density_batch(draws)
    single = _one_by_one(mode, draws)
    assert np.isfinite(single).all()
    np.testing.assert_allclose(batch, single, rtol=1e-10, atol=1e-9)
