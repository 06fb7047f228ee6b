"""Sequential and adjacent-category families: derivatives, identities, API and bad input."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from hypothesis import given, settings
from hypothesis import strategies as st

import ordstats
from ordstats.core.links import get_link, link_names
from ordstats.errors import SeparationWarning, SpecificationError
from ordstats.families import get_family
from ordstats.families.cumulative.likelihood import CLMData
from tests._numdiff import central_jacobian

STEP_FAMILIES = (
    [("sratio", link) for link in link_names()]
    + [("cratio", link) for link in link_names()]
    + [("acat", "logit")]
)


@given(
    seed=st.integers(0, 2**31),
    which=st.sampled_from(STEP_FAMILIES),
    reverse=st.booleans(),
    nominal=st.integers(0, 2),
)
@settings(max_examples=80, deadline=None)
def test_gradient_and_hessian_match_finite_differences(step_problem, seed, which, reverse, nominal):
    fam, problem, params = step_problem(seed, *which, reverse, nominal=nominal)
    ev = fam.evaluate(problem, params)
    assert np.isfinite(ev.nll)
    grad_fd = central_jacobian(lambda p: fam.evaluate(problem, p).nll, params, 1e-6)
    hess_fd = central_jacobian(lambda p: fam.evaluate(problem, p).gradient, params, 1e-5)
    np.testing.assert_allclose(ev.gradient, grad_fd, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ev.hessian, hess_fd, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ev.hessian, ev.hessian.T, rtol=1e-12, atol=1e-12)
    weighted = problem.data.weights @ ev.observation_scores()
    np.testing.assert_allclose(weighted, -ev.gradient, rtol=1e-10, atol=1e-10)


@given(
    seed=st.integers(0, 2**31),
    which=st.sampled_from(STEP_FAMILIES),
    reverse=st.booleans(),
    nominal=st.integers(0, 1),
)
@settings(max_examples=40, deadline=None)
def test_expected_information_is_the_mean_observed_information(
    step_problem, seed, which, reverse, nominal
):
    """The outer-product form used by ``expected_information`` equals E[-Hessian]."""
    fam, problem, params = step_problem(seed, *which, reverse, nominal=nominal, n=30)
    data = problem.data
    mean_hessian = np.zeros((params.size, params.size))
    for level in range(data.n_levels):
        for i in range(data.n_obs):
            row = replace(
                data,
                y=np.array([level], dtype=np.intp),
                X=data.X[i : i + 1],
                weights=data.weights[i : i + 1],
                offset=data.offset[i : i + 1],
                nominal=data.nominal[i : i + 1] if data.nominal.size else data.nominal,
            )
            ev = fam.evaluate(fam.prepare(row), params)
            mean_hessian += float(ev.fitted[0]) * ev.hessian
    np.testing.assert_allclose(
        fam.expected_information(problem, params), mean_hessian, rtol=1e-9, atol=1e-9
    )
    if which[0] == "acat":  # the Hessian does not depend on the response
        np.testing.assert_allclose(
            fam.evaluate(problem, params).hessian, mean_hessian, rtol=1e-9, atol=1e-9
        )


@given(
    seed=st.integers(0, 2**31),
    which=st.sampled_from(STEP_FAMILIES),
    reverse=st.booleans(),
    shift=st.floats(-60, 60),
    n_levels=st.integers(2, 7),
)
@settings(max_examples=80, deadline=None)
def test_probabilities_sum_to_one_even_at_extreme_predictors(seed, which, reverse, shift, n_levels):
    rng = np.random.default_rng(seed)
    fam = get_family(which[0], link=which[1], reverse=reverse)
    alpha = rng.normal(scale=2, size=n_levels - 1)
    location = rng.normal(scale=5, size=20) + shift
    prob = fam.category_probabilities(alpha, location)
    assert prob.shape == (20, n_levels)
    assert np.all(prob >= 0)
    np.testing.assert_allclose(prob.sum(axis=1), 1.0, rtol=1e-12)
    # log P of the own category agrees with the table of all categories
    codes = rng.integers(0, n_levels, size=20)
    eta = alpha[None, :] + location[:, None]
    log_own = fam.log_prob(eta, codes)
    assert not np.any(np.isnan(log_own))
    np.testing.assert_allclose(np.exp(log_own), prob[np.arange(20), codes], rtol=1e-9, atol=1e-300)


@pytest.mark.parametrize(("family", "link"), STEP_FAMILIES)
@pytest.mark.parametrize("reverse", [False, True])
def test_sign_convention(family, link, reverse):
    """A larger ``x'b`` moves the response the way ``positive_effect`` says."""
    fam = get_family(family, link=link, reverse=reverse)
    alpha = np.array([-0.5, 0.2, 0.9])
    prob = fam.category_probabilities(alpha, np.array([-0.5, 0.0, 0.5]))
    mean = prob @ np.arange(4)
    rising = bool(np.all(np.diff(mean) > 0))
    assert rising == (fam.positive_effect == "higher")
    assert np.all(np.diff(mean) != 0)


def _wine_fit(frame, **kwargs):
    return ordstats.OrdinalModel.from_formula("rating ~ temp + contact", frame, **kwargs).fit()


@pytest.mark.parametrize("link", ["logit", "probit", "cauchit"])
def test_cratio_is_sratio_with_negated_coefficients_for_symmetric_links(wine, link):
    s = _wine_fit(wine, family="sratio", link=link)
    c = _wine_fit(wine, family="cratio", link=link)
    assert c.llf == pytest.approx(s.llf, rel=1e-12)
    np.testing.assert_allclose(c.params.to_numpy(), -s.params.to_numpy(), rtol=1e-7)


def test_sratio_loglog_is_cratio_cloglog_with_negated_coefficients(wine):
    """1 - F_cloglog(-x) = F_loglog(x): VGAM has no loglog link, this checks ours via cloglog."""
    s = _wine_fit(wine, family="sratio", link="loglog")
    c = _wine_fit(wine, family="cratio", link="cloglog")
    assert s.llf == pytest.approx(c.llf, rel=1e-12)
    np.testing.assert_allclose(s.params.to_numpy(), -c.params.to_numpy(), rtol=1e-7)


@pytest.mark.parametrize(
    ("link", "reverse", "slope_sign"), [("cloglog", False, -1.0), ("loglog", True, 1.0)]
)
def test_cumulative_gumbel_models_are_sequential_cloglog_models(wine, link, reverse, slope_sign):
    """Grouped proportional hazards (Laara & Matthews 1985): cumulative cloglog is sratio
    cloglog with ``alpha_j = log(e^theta_j - e^theta_{j-1})``, cumulative loglog is
    reverse sratio cloglog with ``alpha_j = log(e^-theta_j - e^-theta_{j+1})``."""
    cum = _wine_fit(wine, link=link)
    seq = _wine_fit(wine, family="sratio", link="cloglog", reverse=reverse)
    assert seq.llf == pytest.approx(cum.llf, rel=1e-10)
    np.testing.assert_allclose(seq.params.iloc[4:], slope_sign * cum.params.iloc[4:], rtol=1e-6)
    if reverse:
        theta = np.r_[-cum.thresholds["estimate"].to_numpy(), -np.inf]
        alpha = np.log(np.exp(theta[:-1]) - np.exp(theta[1:]))
    else:
        theta = np.r_[-np.inf, cum.thresholds["estimate"].to_numpy()]
        alpha = np.log(np.diff(np.exp(theta)))
    np.testing.assert_allclose(seq.thresholds["estimate"].to_numpy(), alpha, rtol=1e-6)


@pytest.mark.parametrize("family", ["sratio", "cratio", "acat"])
def test_reverse_is_the_forward_model_on_reversed_levels(wine, family):
    rev = ordstats.OrdinalModel.from_formula(
        "rating ~ temp + contact", wine, family=family, reverse=True
    ).fit()
    flipped = wine.assign(rating=6 - wine["rating"].astype(int))
    fwd = ordstats.OrdinalModel.from_formula(
        "rating ~ temp + contact", flipped, family=family
    ).fit()
    assert rev.llf == pytest.approx(fwd.llf, rel=1e-12)
    np.testing.assert_allclose(
        rev.params.iloc[:4].to_numpy(), fwd.params.iloc[3::-1].to_numpy(), rtol=1e-7
    )
    np.testing.assert_allclose(
        rev.params.iloc[4:].to_numpy(), fwd.params.iloc[4:].to_numpy(), rtol=1e-7
    )
    np.testing.assert_allclose(
        rev.predict().to_numpy(), fwd.predict().to_numpy()[:, ::-1], atol=1e-10
    )


def _expanded_binary_data(res):
    """One binary row per (observation, step taken): 'stopped at step j?'."""
    data = res.model.data
    n_steps = data.n_levels - 1
    obs, step = np.nonzero(np.arange(n_steps)[None, :] <= data.y[:, None])
    dummies = np.eye(n_steps)[step]
    exog = np.column_stack([dummies, data.X[obs]])
    return (data.y[obs] == step).astype(float), exog, data.weights[obs]


def test_sequential_logit_is_a_binary_logistic_regression_on_expanded_data(housing):
    """The sratio likelihood factorises into binary logits (Tutz 2012, sec. 9.2)."""
    res = ordstats.OrdinalModel.from_formula(
        "Sat ~ Infl + Type + Cont", housing, family="sratio", weights="Freq"
    ).fit()
    endog, exog, weights = _expanded_binary_data(res)
    glm = sm.GLM(endog, exog, family=sm.families.Binomial(), freq_weights=weights).fit(tol=1e-12)
    np.testing.assert_allclose(res.params.to_numpy(), glm.params, rtol=1e-7, atol=1e-9)
    assert res.llf == pytest.approx(glm.llf, rel=1e-10)
    # observed = expected information for a binary logit: the GLM's SEs are ours
    np.testing.assert_allclose(res.bse.to_numpy(), glm.bse, rtol=1e-6)


# -- the results machinery -------------------------------------------------------------


@pytest.fixture(scope="module")
def sratio(wine):
    return _wine_fit(wine, family="sratio")


def test_model_attributes(wine, sratio):
    model = sratio.model
    assert model.family == "sratio" and model.reverse is False
    assert model.link.name == "logit"
    assert model.param_names == ["1:2", "2:3", "3:4", "4:5", "temp[T.warm]", "contact[T.yes]"]
    assert "family='sratio'" in repr(model)
    assert list(sratio.thresholds.index) == ["1:2", "2:3", "3:4", "4:5"]
    assert sratio.k_params == 6 and sratio.nobs == 72 and sratio.df_model == 2
    cum = _wine_fit(wine)
    assert cum.model.family == "cumulative" and "family=" not in repr(cum.model)


def test_summary_states_family_and_sign(wine, sratio):
    text = sratio.summary().as_text()
    assert "Stopping-Ratio Model Results" in text
    assert "Family:" in text and "sratio" in text
    assert "lower levels" in text
    assert "Intercepts" in text and "Thresholds" not in text
    assert "eta_j = logit P(Y = j | Y >= j)" in text
    assert "LOWER levels" in text
    rev = _wine_fit(wine, family="acat", reverse=True).summary().as_text()
    assert "Adjacent-Category Logit Model Results" in rev and "acat (reverse)" in rev
    assert "LOWER levels" in rev
    assert "HIGHER levels" in _wine_fit(wine, family="cratio").summary().as_text()


def test_odds_ratios_say_what_they_multiply(wine, sratio):
    table = sratio.odds_ratios()
    np.testing.assert_allclose(table["odds_ratio"], np.exp(sratio.params.iloc[4:]))
    assert "stopping at level j" in table.attrs["interpretation"]
    assert (
        "P(Y = j+1) / P(Y = j)"
        in _wine_fit(wine, family="acat").odds_ratios().attrs["interpretation"]
    )
    with pytest.raises(ordstats.OrdstatsError, match="logit link"):
        _wine_fit(wine, family="cratio", link="probit").odds_ratios()


def test_predict_every_kind(sratio):
    prob = sratio.predict()
    np.testing.assert_allclose(prob.sum(axis=1), 1.0)
    np.testing.assert_allclose(
        sratio.predict(which="cumprob").to_numpy(), np.cumsum(prob.to_numpy(), axis=1)[:, :-1]
    )
    np.testing.assert_allclose(sratio.predict(which="expected"), prob.to_numpy() @ np.arange(1, 6))
    assert (sratio.predict(which="class").astype(str) == prob.idxmax(axis=1)).all()
    linear = sratio.predict(which="linear")
    X = sratio.model.data.X
    np.testing.assert_allclose(linear, X @ sratio.params.iloc[4:].to_numpy())
    fitted = sratio._evaluation.fitted
    np.testing.assert_allclose(prob.to_numpy()[np.arange(72), sratio.model.data.y], fitted)


def test_null_loglik_with_an_offset_is_the_intercept_only_fit(wine):
    offset = 0.25 * (np.arange(72) % 3)
    full = ordstats.OrdinalModel.from_formula(
        "rating ~ temp", wine, family="cratio", offset=offset
    ).fit()
    null = ordstats.OrdinalModel.from_formula(
        "rating ~ 1", wine, family="cratio", offset=offset
    ).fit()
    assert full.llnull == pytest.approx(null.llf, rel=1e-10)
    counts = np.bincount(full.model.data.y)
    assert _wine_fit(wine, family="acat").llnull == pytest.approx(counts @ np.log(counts / 72))


def test_arrays_interface(wine):
    X = pd.get_dummies(wine[["temp", "contact"]], drop_first=True, dtype=float)
    res = ordstats.OrdinalModel(wine["rating"], X, family="acat").fit()
    formula = _wine_fit(wine, family="acat")
    np.testing.assert_allclose(res.params.to_numpy(), formula.params.to_numpy(), rtol=1e-10)


def test_separation_is_detected_for_the_families():
    y = np.array([1, 1, 2, 2, 3, 3, 1, 2, 3])
    x = np.array([0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.05, 0.25, 0.45])
    for family in ("sratio", "cratio", "acat"):
        with pytest.warns(SeparationWarning, match="'x'"):
            res = ordstats.OrdinalModel(y, pd.DataFrame({"x": x}), family=family).fit()
        assert res.fit_info.diverging == ("x",)
    # overlapping data are not separated
    x2 = np.array([0.0, 0.5, 0.2, 0.3, 0.4, 0.1, 0.05, 0.25, 0.45])
    assert ordstats.OrdinalModel(y, pd.DataFrame({"x": x2}), family="sratio").fit().converged


def test_nonparallel_effects_through_nominal(wine):
    res = ordstats.OrdinalModel.from_formula(
        "rating ~ temp", wine, family="sratio", nominal="~ contact"
    ).fit()
    steps = ["1:2", "2:3", "3:4", "4:5"]
    assert res.model.param_names == steps + [f"{s}:contact[T.yes]" for s in steps] + [
        "temp[T.warm]"
    ]
    # the intercepts need not increase: no crossing check for these families
    assert np.any(np.diff(res.params.iloc[:4]) < 0) and res.fit_info.crossing == ()
    odds = res.odds_ratios()  # non-parallel effects enter eta_j as slopes do: exp(+gamma_j)
    assert list(odds.index) == ["temp[T.warm]"] + [f"{s}:contact[T.yes]" for s in steps]
    np.testing.assert_allclose(odds["odds_ratio"], np.exp(res.params[odds.index]))
    np.testing.assert_allclose(res.predict(wine).to_numpy(), res.predict().to_numpy())
    with_contact = res.thresholds.loc["contact[T.yes]=1", "estimate"].to_numpy()
    np.testing.assert_allclose(
        with_contact, res.params.iloc[:4].to_numpy() + res.params.iloc[4:8].to_numpy()
    )
    text = res.summary().as_text()
    assert "Non-parallel effects (one per step)" in text and "w'gamma_j" in text
    X = pd.get_dummies(wine[["temp"]], drop_first=True, dtype=float)
    W = pd.get_dummies(wine[["contact"]], drop_first=True, dtype=float)
    arrays = ordstats.OrdinalModel(wine["rating"], X, nominal=W, family="sratio").fit()
    np.testing.assert_allclose(arrays.params.to_numpy(), res.params.to_numpy(), rtol=1e-10)


# -- bad input ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"family": "stopping"}, "unknown family 'stopping'; choose one of 'cumulative'"),
        ({"family": "acat", "link": "probit"}, "family='acat' supports link 'logit'"),
        (
            {"family": "cumulative", "reverse": True},
            "reverse=True is not defined for family='cumulative'",
        ),
        ({"family": "sratio", "reverse": "yes"}, "reverse must be True or False"),
        ({"family": "sratio", "threshold": "equidistant"}, "threshold='flexible'"),
        ({"family": "cratio", "link": "nope"}, "unknown link 'nope'"),
        (
            {"family": "sratio", "link": "aranda-ordaz"},
            "family='sratio' supports link 'logit' or 'probit' or 'cloglog'",
        ),
        (
            {"family": "acat", "scale": "~ temp"},
            "scale effects are defined for the cumulative family only",
        ),
    ],
)
def test_bad_family_arguments(wine, kwargs, message):
    with pytest.raises(SpecificationError, match=message.replace("(", r"\(")):
        ordstats.OrdinalModel.from_formula("rating ~ temp", wine, **kwargs)
    if "scale" not in kwargs:
        with pytest.raises(SpecificationError, match=message.replace("(", r"\(")):
            ordstats.OrdinalModel(wine["rating"], None, **kwargs)


def test_scale_effects_are_cumulative_only():
    fam = get_family("sratio")
    data = CLMData(
        y=np.array([0, 1, 2]),
        n_levels=3,
        X=np.zeros((3, 0)),
        weights=np.ones(3),
        offset=np.zeros(3),
        link=get_link("logit"),
        threshold_jacobian=np.eye(2),
        scale=np.ones((3, 1)),
    )
    with pytest.raises(
        SpecificationError, match="scale effects are defined for the cumulative family only"
    ):
        fam.prepare(data)


@given(seed=st.integers(0, 2**31), q=st.integers(1, 5), m=st.integers(1, 3))
@settings(max_examples=30, deadline=None)
def test_structured_curvatures_match_their_dense_form(seed, q, m):
    from ordstats.families.pointwise import DiagonalCurvature, SemiseparableCurvature

    rng = np.random.default_rng(seed)
    n = 7
    Z, v = rng.normal(size=(n, m)), rng.uniform(size=n)
    for curvature in (
        DiagonalCurvature(rng.normal(size=(n, q))),
        SemiseparableCurvature(rng.uniform(size=(n, q)), rng.uniform(size=(n, q))),
    ):
        h = curvature.dense()
        np.testing.assert_allclose(curvature.row_sums(), h.sum(axis=2), atol=1e-12)
        gram = np.einsum("i,it,is,ijk->tjsk", v, Z, Z, h).reshape(m * q, m * q)
        np.testing.assert_allclose(curvature.step_gram(Z, v), gram, atol=1e-12)
        np.testing.assert_allclose(curvature.reversed().dense(), h[:, ::-1, ::-1], atol=1e-12)


@pytest.mark.parametrize("family", ["cumulative", "sratio", "cratio", "acat"])
def test_probabilities_without_gradients_equal_probability_gradients(wine, family):
    """Family.probabilities (held-out losses) is probability_gradients' first output."""
    model = ordstats.OrdinalModel.from_formula(
        "rating ~ temp + contact",
        wine,
        family=family,
        link="logit" if family == "acat" else "probit",
    )
    params = model.fit().params.to_numpy()
    spec = model.family_spec
    expected, _ = spec.probability_gradients(params, model.data)
    prob = spec.probabilities(params, model.data)
    np.testing.assert_allclose(prob, expected, rtol=1e-13)
    np.testing.assert_allclose(prob.sum(axis=1), 1.0)
