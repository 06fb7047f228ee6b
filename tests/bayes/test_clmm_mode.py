"""The posterior mode of a logit clmm with one scalar term: exact Hessian, no ML fit first.

``ordstats.families.mixed_hessian.laplace_hessian`` gives the Laplace log-likelihood's
Hessian in closed form; it must equal central differences of the analytic gradient
(``laplace_gradient``), whose own error is ``O(h^2)`` plus the inner modes' tolerance.
With it, ``fit(prior=...)`` starts Newton from the scaled clm estimates instead of a
maximum-likelihood fit, and must find the same mode as from the ML fit.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import ordstats
import ordstats.estimation.mixed as mixed_module
from ordstats.families.mixed import laplace_gradient
from ordstats.families.mixed_hessian import has_laplace_hessian, laplace_hessian
from tests._numdiff import central_jacobian
from tests.bayes.models import wine_extended

CASES = {
    "intercept": ("rating ~ temp + contact + (1|judge)", {}),
    "slope, weights, offset": (
        "rating ~ temp + contact + (0 + z|judge)",
        {"weights": "w", "offset": "off"},
    ),
    "flexible thresholds, one slope": ("rating ~ temp + (1|judge)", {"threshold": "symmetric"}),
}


@pytest.fixture(scope="module", params=sorted(CASES))
def model(request, wine):
    formula, kwargs = CASES[request.param]
    return ordstats.OrdinalModel.from_formula(formula, wine_extended(wine), **kwargs)


def test_laplace_hessian_matches_differences_of_the_gradient(model):
    assert has_laplace_hessian(model.objective, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ordstats.errors.OrdstatsWarning)
        fitted = np.asarray(model.fit().params_all, dtype=float)
    away = fitted + np.random.default_rng(3).normal(scale=0.2, size=fitted.size)
    for x in (fitted, away):
        value, gradient, hessian = laplace_hessian(model.objective, x)
        reference_value, reference_gradient = laplace_gradient(model.objective, x)
        assert value == pytest.approx(reference_value, rel=1e-12)
        np.testing.assert_allclose(gradient, reference_gradient, rtol=1e-8, atol=1e-8)
        differences = central_jacobian(lambda v: laplace_gradient(model.objective, v)[1], x, 1e-4)
        np.testing.assert_allclose(hessian, differences, rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(hessian, hessian.T)


def test_laplace_hessian_is_nan_outside_the_domain(wine):
    model = ordstats.OrdinalModel.from_formula("rating ~ temp + (1|judge)", wine)
    x = np.asarray(model.clm_start(), dtype=float)
    x[[1, 2]] = x[[2, 1]]  # thresholds not increasing
    value, gradient, hessian = laplace_hessian(model.objective, x)
    assert value == np.inf and np.isnan(gradient).all() and np.isnan(hessian).all()


def test_other_links_and_quadrature_keep_the_difference_hessian(wine):
    probit = ordstats.OrdinalModel.from_formula("rating ~ temp + (1|judge)", wine, link="probit")
    logit = ordstats.OrdinalModel.from_formula("rating ~ temp + (1|judge)", wine)
    assert not has_laplace_hessian(probit.objective, 1)
    assert not has_laplace_hessian(logit.objective, 5)


@pytest.mark.parametrize("link", ["logit", "probit"])
def test_posterior_mode_needs_no_maximum_likelihood_fit(wine, monkeypatch, link):
    model = ordstats.OrdinalModel.from_formula(
        "rating ~ temp + contact + (1|judge)", wine, link=link
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ordstats.errors.OrdstatsWarning)
        ml = np.asarray(model.fit().params_all, dtype=float)
    from_ml = model.fit(prior="default", start_params=ml)

    def no_bfgs(*args, **kwargs):
        raise AssertionError("the posterior mode ran the maximum-likelihood fit")

    monkeypatch.setattr(mixed_module, "_bfgs", no_bfgs)
    mode = model.fit(prior="default")
    assert mode.converged
    np.testing.assert_allclose(mode.params, from_ml.params, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(mode.hessian, from_ml.hessian, rtol=1e-6, atol=1e-6)
    if link != "logit":
        return
    # the logit Hessian at the mode is the exact one, not differences of the gradient
    target = mode.target
    exact = target.negative_log_posterior(mode.params.to_numpy()).hessian
    np.testing.assert_array_equal(mode.hessian, exact)


@pytest.mark.parametrize("kwargs, nagq", [({}, 1), ({"link": "probit"}, 1), ({}, 5)])
def test_posterior_mode_when_the_ml_sd_is_on_the_boundary(kwargs, nagq):
    # no group variation: the ML fit puts sigma on the boundary (log sigma ~ -14), where
    # Newton started before and stalled (step halving failed, a ConvergenceWarning); the
    # prior with its Jacobian sigma has an interior mode
    rng = np.random.default_rng(5)
    g = np.repeat(np.arange(15), 10)
    x = rng.normal(size=g.size)
    effects = 0.0 * rng.normal(size=15)  # groups that do not differ
    y = np.searchsorted([-1.0, 0.5, 2.0], x + effects[g] + rng.logistic(size=g.size))
    frame = pd.DataFrame({"y": pd.Categorical(y, ordered=True), "x": x, "g": g.astype(str)})
    model = ordstats.OrdinalModel.from_formula("y ~ x + (1|g)", frame, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ordstats.errors.OrdstatsWarning)
        ml = np.asarray(model.fit(nagq=nagq).params_all, dtype=float)
    assert ml[-1] < -10
    with warnings.catch_warnings():
        warnings.simplefilter("error", ordstats.errors.ConvergenceWarning)
        mode = model.fit(prior="default", nagq=nagq)
    assert mode.converged
    assert -4 < mode.params.iloc[-1] < 0
    gradient = mode.target.negative_log_posterior(mode.params.to_numpy()).gradient
    assert np.max(np.abs(gradient)) < 1e-5
    assert mode.log_posterior > mode.target.log_density(ml) + 5
    assert np.all(np.linalg.eigvalsh(mode.hessian) > 0)
