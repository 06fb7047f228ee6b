"""Monotonic predictors mo(x) in Bayesian fits, and the joint priors of core.block_priors.

The posterior of ``Sat ~ mo(Infl) + Type + Cont`` (housing) against NUTS is the
``housing_mo`` case of tests/test_bayes.py::test_posterior_matches_nuts.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats.core.block_priors import LkjPrior, SimplexPrior
from ordstats.errors import DataError, SpecificationError
from ordstats.estimation.bayes import make_target, resolve_priors
from ordstats.estimation.bayes_language import brms_summary
from ordstats.results.posterior import PosteriorWarning
from tests.bayes.derivatives import assert_target_derivatives, fd_gradient


@pytest.fixture(scope="module")
def simulated():
    rng = np.random.default_rng(3)
    n = 300
    x = rng.integers(0, 4, n)  # levels 0..3: D = 3
    z = rng.standard_normal(n)
    steps = np.array([0.0, 0.9, 1.2, 1.5])  # b D zeta cumulated: b = 0.5, zeta = (.6, .2, .2)
    eta = steps[x] + 0.7 * z
    latent = eta + rng.logistic(size=n)
    y = np.digitize(latent, [0.0, 1.2, 2.4])
    return pd.DataFrame({"y": y, "x": x, "z": z})


@pytest.fixture(scope="module")
def housing_ordered(housing):
    return housing.assign(Infl=housing["Infl"].cat.as_ordered())


def _housing_mo(data):
    return ordstats.OrdinalModel.from_formula("Sat ~ mo(Infl) + Type + Cont", data, weights="Freq")


def test_mo_columns_are_the_step_indicators(simulated):
    model = ordstats.OrdinalModel.from_formula("y ~ mo(x) + z", simulated)
    assert model.param_names[3:6] == ["mo(x)[1]", "mo(x)[2]", "mo(x)[3]"]
    X = model.data.X
    np.testing.assert_array_equal(X[:, :3], (simulated["x"].to_numpy()[:, None] >= [1, 2, 3]))


def test_mo_stays_inside_ordstats_formulas(simulated):
    # mo() is passed to formulaic in ordstats' evaluation context, not registered in
    # formulaic's global transforms: other formulaic code does not accept it silently
    import formulaic
    from formulaic.errors import FactorEvaluationError
    from formulaic.transforms import TRANSFORMS

    assert "mo" not in TRANSFORMS
    with pytest.raises(FactorEvaluationError, match="name 'mo' is not defined"):
        formulaic.model_matrix("mo(x) + z", simulated)
    # ordstats' formulas still read mo(), also on new data and with a caller's variable
    # named mo in scope (the monotonic term takes precedence, as in brms)
    mo = "a caller's variable"  # noqa: F841
    res = ordstats.OrdinalModel.from_formula("y ~ mo(x) + z", simulated).fit(prior="default")
    assert "mo(x)" in res.params.index
    new = simulated.iloc[:5]
    x = res.params.to_numpy()
    on_new = res.target.probabilities(x, new)
    np.testing.assert_allclose(on_new, res.target.probabilities(x, None)[:5], rtol=1e-12)


def test_integer_codes_and_ordered_categorical_give_the_same_fit(simulated):
    letters = np.array(list("abcd"))[simulated["x"]]
    coded = simulated.assign(x=pd.Categorical(letters, categories=list("abcd"), ordered=True))
    a = ordstats.OrdinalModel.from_formula("y ~ mo(x) + z", simulated).fit(prior="default")
    b = ordstats.OrdinalModel.from_formula("y ~ mo(x) + z", coded).fit(prior="default")
    np.testing.assert_allclose(a.params.to_numpy(), b.params.to_numpy(), atol=1e-8)


def test_chained_gradient_and_hessian_match_finite_differences(simulated):
    model = ordstats.OrdinalModel.from_formula("y ~ mo(x) + z", simulated)
    log_prior, _ = resolve_priors(model, {"simo": "dirichlet(2)", "b": "normal(0, 3)"})
    target = make_target(model, log_prior)
    rng = np.random.default_rng(0)
    for _ in range(3):
        x = np.array([-0.2, 1.1, 2.3, 0.5, 0.3, -0.4, 0.6]) + 0.3 * rng.standard_normal(7)
        assert_target_derivatives(target, x)


def test_simplex_and_lkj_priors_match_finite_differences():
    rng = np.random.default_rng(1)
    priors = [
        SimplexPrior((1, 3, 4), (1.0, 2.0, 0.5, 3.0), 6),
        LkjPrior((3, 4, 5), 3, 1.7, 7),
        LkjPrior((4,), 2, 1.0, 5),
    ]
    for prior in priors:
        x = 0.7 * rng.standard_normal(prior.k)
        np.testing.assert_allclose(prior.gradient(x), fd_gradient(prior.value, x), atol=1e-7)
        hess = np.array(
            [fd_gradient(lambda v, j=j, p=prior: p.gradient(v)[j], x) for j in range(prior.k)]
        )
        np.testing.assert_allclose(prior.hessian(x), hess, atol=1e-6)


def test_dirichlet_of_the_log_ratios_is_the_dirichlet_of_the_simplex():
    # a flat target plus the prior: importance draws of y give Dirichlet(alpha) shares
    prior = SimplexPrior((0, 1), (2.0, 3.0, 5.0), 2)
    rng = np.random.default_rng(2)
    y = rng.uniform(-8, 8, size=(200_000, 2))
    w = np.exp(prior.batch_value(y))
    w /= w.sum()
    full = np.hstack([y, np.zeros((y.shape[0], 1))])
    zeta = np.exp(full) / np.exp(full).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(w @ zeta, [0.2, 0.3, 0.5], atol=0.01)


def test_mo_posterior_and_brms_parameters(housing_ordered):
    mode = _housing_mo(housing_ordered).fit(prior="default")
    assert mode.converged
    assert list(mode.prior_summary["class"]).count("simo") == 1
    post = mode.posterior(4000, seed=1)
    assert post.k_hat < 0.7
    table = brms_summary(post)
    assert list(table.index) == ["bsp_moInfl", "simo_moInfl1[1]", "simo_moInfl1[2]"]
    shares = table.loc[["simo_moInfl1[1]", "simo_moInfl1[2]"], "mean"]
    assert shares.sum() == pytest.approx(1)
    # the whole effect b D is the unconstrained fit's step to the top level (both steps > 0)
    ml = ordstats.OrdinalModel.from_formula(
        "Sat ~ C(Infl, contr.treatment) + Type + Cont", housing_ordered, weights="Freq"
    ).fit()  # ordered Infl: treatment contrasts on request (the default is R's contr.poly)
    step = ml.params["C(Infl, contr.treatment)[T.High]"]
    assert 2 * table.loc["bsp_moInfl", "mean"] == pytest.approx(step, abs=0.05)


def test_informative_dirichlet_prior_moves_the_simplex(housing_ordered):
    model = _housing_mo(housing_ordered)
    name = "mo(Infl):log(zeta1/zeta2)"
    flat = model.fit(prior="default").params[name]
    strong = ordstats.prior("dirichlet(200, 20)", class_="simo", coef="moInfl1")
    assert model.fit(prior=strong).params[name] > flat + 1


def test_mo_predictions_on_new_data(housing_ordered):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PosteriorWarning)
        post = _housing_mo(housing_ordered).fit(prior="default").posterior(300)
    table = post.predict(housing_ordered.iloc[:4], which="expected", n_draws=50)
    assert table.shape[0] == 4
    assert table["estimate"].iloc[3] > table["estimate"].iloc[0]  # Infl Low -> Medium


def test_jax_log_density_of_a_mo_model_equals_ordstats(housing_ordered):
    pytest.importorskip("numpyro")
    import numpyro

    from ordstats.results.jax_models import log_posterior

    numpyro.enable_x64()
    mode = _housing_mo(housing_ordered).fit(prior={"simo": "dirichlet(2, 3)"})
    value, size = log_posterior(mode.target.native_arrays())
    rng = np.random.default_rng(0)
    for _ in range(3):
        x = mode.params.to_numpy() + 0.1 * rng.standard_normal(size)
        assert float(value(x)) == pytest.approx(mode.target.log_density(x), rel=1e-10)


def test_mo_with_two_levels_is_a_linear_slope(simulated):
    # flat priors: brms centres x but not mo(x), so the Intercept priors would differ
    data = simulated.assign(x=(simulated["x"] > 1).astype(int))
    mo_fit = ordstats.OrdinalModel.from_formula("y ~ mo(x) + z", data).fit(
        prior={"Intercept": "flat"}
    )
    linear = ordstats.OrdinalModel.from_formula("y ~ x + z", data).fit()
    np.testing.assert_allclose(mo_fit.params.to_numpy(), linear.params.to_numpy(), atol=1e-6)


# -- bad input ------------------------------------------------------------------------------


def test_maximum_likelihood_refuses_mo(simulated):
    model = ordstats.OrdinalModel.from_formula("y ~ mo(x) + z", simulated)
    with pytest.raises(SpecificationError, match=r"fit\(prior='default'\)"):
        model.fit()


@pytest.mark.parametrize(
    ("column", "message"),
    [
        (pd.Categorical(list("abab") * 5), "unordered categorical"),
        ([0.5, 1.0, 2.0, 1.0] * 5, "whole numbers 0, 1, ..., D; the column has 0.5"),
        ([-1, 0, 1, 2] * 5, "the column has -1"),
        (list("abab") * 5, "got a column of"),
        (pd.Categorical(["a"] * 20, categories=["a"], ordered=True), "at least two levels"),
    ],
)
def test_mo_on_a_column_that_is_not_ordinal(column, message):
    data = pd.DataFrame({"y": [1, 2, 3, 2] * 5, "x": column})
    with pytest.raises(ordstats.errors.OrdstatsError, match=message):
        ordstats.OrdinalModel.from_formula("y ~ mo(x)", data)


def test_mo_with_a_level_without_rows(simulated):
    data = simulated.assign(x=2 * (simulated["x"] > 1))  # levels 0..2, no row at 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ordstats.errors.CollinearityWarning)
        model = ordstats.OrdinalModel.from_formula("y ~ mo(x) + z", data)
    with pytest.raises(DataError, match=r"steps mo\(x\)\[\d\] were dropped as aliased"):
        model.fit(prior="default")


def test_mo_in_a_mixed_model(wine):
    data = wine.assign(level=wine["rating"].cat.codes % 3)
    model = ordstats.OrdinalModel.from_formula("rating ~ mo(level) + (1|judge)", data)
    for prior in (None, "default"):
        with pytest.raises(SpecificationError, match="not available in mixed models"):
            model.fit(prior=prior)


def test_mo_in_an_interaction_or_the_scale_part(simulated):
    model = ordstats.OrdinalModel.from_formula("y ~ mo(x):z", simulated)
    with pytest.raises(DataError, match="main effect only"):
        model.fit(prior="default")
    model = ordstats.OrdinalModel.from_formula("y ~ z", simulated, scale="~ mo(x)")
    with pytest.raises(SpecificationError, match="location formula only"):
        model.fit(prior="default")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"simo": "normal(0, 1)"}, "takes a dirichlet"),
        ({"b": "dirichlet(1)"}, "prior of class 'simo'"),
        ({"simo": "dirichlet(1, 2)"}, "give one concentration or 3"),
        ({"simo": "dirichlet(0)"}, "alpha must be positive"),
        ({"simo:moz1": "dirichlet(1)"}, "no such parameter"),
    ],
)
def test_bad_simplex_priors(simulated, spec, message):
    model = ordstats.OrdinalModel.from_formula("y ~ mo(x) + z", simulated)
    with pytest.raises(SpecificationError, match=message):
        model.fit(prior=spec)
