"""Bayesian fits: brms' priors, the posterior mode, PSIS and the posterior against NUTS.

The NUTS reference summaries in tests/data/reference/bayes/ come from
tests/bayes/make_reference.py (NumPyro NUTS, 4 x 5,000 draws), run by hand.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ordstats
from ordstats.core.priors import Density, LogPrior, PriorTerm, parse_density
from ordstats.core.psis import psis, weighted_quantiles
from ordstats.estimation.bayes import prior, resolve_priors
from ordstats.results.posterior import PosteriorWarning
from tests.bayes.models import MODELS, posterior_mode

REFERENCE = Path(__file__).parent / "data" / "reference" / "bayes"


@pytest.fixture(scope="module")
def wine_model(wine):
    return ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine)


# -- priors -----------------------------------------------------------------------------


def test_flat_priors_give_the_maximum_likelihood_fit(wine_model):
    ml = wine_model.fit(gradtol=1e-10)
    mode = wine_model.fit(prior={"Intercept": "flat"})
    assert mode.converged
    np.testing.assert_allclose(mode.params.to_numpy(), ml.params.to_numpy(), atol=1e-8)


def test_flat_priors_give_the_ml_fit_of_an_sratio_model_with_cs_effects(wine):
    model = ordstats.OrdinalModel.from_formula(
        "rating ~ temp", wine, nominal="~ contact", family="sratio"
    )
    ml = model.fit(gradtol=1e-10)
    mode = model.fit(prior={"Intercept": "flat"})
    np.testing.assert_allclose(mode.params.to_numpy(), ml.params.to_numpy(), atol=1e-8)


def test_normal_prior_mode_is_the_ridge_fit(wine_model):
    # -log p = b^2 / (2 s^2) = n_w * alpha / 2 * b^2  <=>  alpha = 1 / (s^2 n_w)
    s, n_w = 0.8, wine_model.nobs
    mode = wine_model.fit(prior={"Intercept": "flat", "b": f"normal(0, {s})"})
    ridge = wine_model.fit_regularized(alpha=1 / (s**2 * n_w), L1_wt=0.0, tol=1e-10)
    np.testing.assert_allclose(mode.params.to_numpy(), ridge.params.to_numpy(), atol=1e-6)
    assert mode.params["temp[T.warm]"] < wine_model.fit().params["temp[T.warm]"] - 0.1


def test_laplace_prior_mode_is_the_lasso_fit(wine_model):
    # -log p = |b| / s = n_w * alpha |b|  <=>  alpha = 1 / (s n_w)
    s, n_w = 0.05, wine_model.nobs
    mode = wine_model.fit(prior={"Intercept": "flat", "b": f"double_exponential(0, {s})"})
    lasso = wine_model.fit_regularized(alpha=1 / (s * n_w), L1_wt=1.0, tol=1e-10)
    np.testing.assert_allclose(mode.params.to_numpy(), lasso.params.to_numpy(), atol=1e-6)
    assert mode.params["contact[T.yes]"] == 0.0  # the lasso's zero, a Laplace prior's mode


def test_per_coefficient_prior_overrides_the_class(wine_model):
    log_prior, table = resolve_priors(
        wine_model,
        [prior("normal(0, 1)", "b"), prior("normal(0, 9)", "b", coef="contactyes")],
    )
    by_name = {coef: text for _, coef, text in table}
    assert by_name["temp[T.warm]"] == "normal(0, 1)"
    assert by_name["contact[T.yes]"] == "normal(0, 9)"
    assert by_name["1|2"] == "student_t(3, 0, 2.5) (default)"  # brms' default
    assert len(log_prior.terms) == 6


def test_intercept_prior_is_on_the_centred_design(wine_model):
    """brms: Intercept_j = theta_j - xbar'beta (cumulative); the row says so."""
    log_prior, _ = resolve_priors(wine_model, "default")
    xbar = wine_model.data.X.mean(axis=0)
    first = log_prior.terms[0].row
    np.testing.assert_allclose(first, [1, 0, 0, 0, -xbar[0], -xbar[1]])


def test_intercept_centring_of_a_step_family_leaves_cs_effects_out(wine):
    """brms centres the slopes' design only: its thresholds are ``Intercept - Xcs * bcs``."""
    model = ordstats.OrdinalModel.from_formula(
        "rating ~ temp", wine, nominal="~ contact", family="sratio"
    )
    log_prior, _ = resolve_priors(model, "default")
    row = log_prior.terms[1].row  # step 2:3: alpha_2 + xbar b
    xbar = model.data.X.mean()
    np.testing.assert_allclose(row, [0, 1, 0, 0, 0, 0, 0, 0, xbar])


@pytest.mark.parametrize("family", ["cumulative", "sratio", "acat"])
def test_mode_with_cs_effects_equals_brms_target(wine, family):
    """The mode of brms' log posterior (tests/r/bayes_cs_centring.R, its Stan code by hand)."""
    ref = json.loads((REFERENCE / "cs_centring.json").read_text())
    model = ordstats.OrdinalModel.from_formula(
        "rating ~ temp", wine, nominal="~ contact", family=family
    )
    mode = model.fit(prior=ref["prior"])
    want = ref["modes"][family]
    assert want["max_gradient"] < 1e-6
    np.testing.assert_allclose(mode.params.to_numpy(), want["params"], atol=1e-6)


def test_equidistant_thresholds_take_the_intercept_prior_on_the_first_only(wine):
    """brms: student_t on first_Intercept, delta flat (tests/r/bayes_equidistant.R)."""
    ref = json.loads((REFERENCE / "equidistant.json").read_text())
    model = ordstats.OrdinalModel.from_formula("rating ~ temp", wine, threshold="equidistant")
    mode = model.fit(prior="default")
    assert list(mode.prior_summary["class"]) == ["Intercept", "b"]
    assert ref["max_gradient"] < 1e-6
    np.testing.assert_allclose(mode.params.to_numpy(), ref["params"], atol=1e-6)


def test_equidistant_thresholds_of_a_mixed_model_take_one_intercept_prior(wine):
    model = ordstats.OrdinalMixedModel.from_formula(
        "rating ~ temp + (1|judge)", wine, threshold="equidistant"
    )
    log_prior, table = resolve_priors(model, "default")
    assert [cls for cls, _, _ in table] == ["Intercept", "b", "sd"]
    xbar = model.problem.X.mean(axis=0)
    np.testing.assert_allclose(log_prior.terms[0].row, [1, 0, -xbar[0], 0])


densities = st.sampled_from(
    [
        "normal(0.3, 1.7)",
        "student_t(3, -0.5, 2.5)",
        "cauchy(0, 0.7)",
        "student_t(7, 1, 0.5)",
    ]
)


@given(
    texts=st.lists(densities, min_size=1, max_size=4),
    log_scale=st.lists(st.booleans(), min_size=4, max_size=4),
    seed=st.integers(0, 10_000),
)
def test_log_prior_gradient_and_hessian_match_finite_differences(texts, log_scale, seed):
    rng = np.random.default_rng(seed)
    k = 3
    terms = tuple(
        PriorTerm(rng.normal(size=k), parse_density(t), log_scale[i]) for i, t in enumerate(texts)
    )
    lp = LogPrior(terms, k)
    x = rng.normal(size=k) * 0.7
    h = 1e-5
    eye = np.eye(k)
    fd_grad = np.array([(lp.value(x + h * e) - lp.value(x - h * e)) / (2 * h) for e in eye])
    fd_hess = np.array([(lp.gradient(x + h * e) - lp.gradient(x - h * e)) / (2 * h) for e in eye])
    scale = 1 + np.abs(lp.gradient(x)).max()
    np.testing.assert_allclose(lp.gradient(x), fd_grad, atol=1e-6 * scale)
    np.testing.assert_allclose(lp.hessian(x), fd_hess, atol=1e-5 * (1 + np.abs(fd_hess).max()))
    np.testing.assert_allclose(lp.batch_value(np.vstack([x, x])), [lp.value(x)] * 2)


def test_exponential_sd_prior_with_its_jacobian():
    lp = LogPrior((PriorTerm(np.array([1.0]), Density("exponential", (2.0,)), True),), 1)
    u = np.log(0.4)
    # density of log s: 2 exp(-2 s) s -> log: -2 s + u (+ const)
    assert lp.value(np.array([u])) == pytest.approx(-0.8 + u)


# -- PSIS ---------------------------------------------------------------------------------


def test_psis_of_an_exact_gaussian_target_has_small_k_hat():
    rng = np.random.default_rng(3)
    for scale in (1.0, 1.1, 1.3):  # proposals at least as wide as the target
        z = rng.standard_normal(4000) * scale
        result = psis(-0.5 * z**2 + 0.5 * (z / scale) ** 2)
        assert result.k_hat < 0.5
        assert np.exp(result.log_weights).sum() == pytest.approx(1.0)


def test_psis_flags_a_proposal_with_tails_too_light():
    rng = np.random.default_rng(4)
    z = rng.standard_normal(4000) * 0.4  # N(0, 0.4^2) proposing for a Cauchy target
    result = psis(-np.log1p(z**2) + 0.5 * (z / 0.4) ** 2)
    assert result.k_hat > 0.7


def test_psis_k_hat_equals_arviz():
    az = pytest.importorskip("arviz")
    rng = np.random.default_rng(5)
    z = rng.standard_normal(3000) * 0.7
    log_ratio = -0.5 * z**2 + 0.5 * (z / 0.7) ** 2
    smoothed, k_hat = az.psislw(log_ratio.copy())
    ours = psis(log_ratio)
    assert ours.k_hat == pytest.approx(float(k_hat), abs=1e-10)
    np.testing.assert_allclose(ours.log_weights, smoothed, atol=1e-10)


def test_quantiles_leave_out_draws_of_weight_zero():
    """A draw outside the support (disordered thresholds) weighs 0 and moves no quantile.

    Hazen's weighted quantiles of 0, 1, 2 (weights 1/2, 1/4, 1/4) put the knots at
    0.25, 0.625 and 0.875, so the 0.7 quantile is 1 + 0.075 / 0.25 = 1.3.
    """
    values = np.array([[0.0], [1.0], [1.9], [2.0]])
    weights = np.array([0.5, 0.25, 0.0, 0.25])
    np.testing.assert_allclose(weighted_quantiles(values, weights, np.array([0.7])), [[1.3]])


def test_bounded_uniform_prior_is_refused_with_advice():
    with pytest.raises(ordstats.errors.SpecificationError, match=r"bounded uniform.*'flat'"):
        parse_density("uniform(0, 1)")
    assert parse_density("uniform()").name == "flat"


def test_draws_beyond_memory_say_so(wine_model):
    mode = wine_model.fit(prior="default")
    with pytest.raises(ordstats.errors.SpecificationError, match="do not fit in memory"):
        mode.posterior(draws=10**13)


def test_high_k_hat_warns_with_advice(wine_model):
    mode = wine_model.fit(prior="default")
    with pytest.warns(PosteriorWarning, match="method='nuts'"):
        _narrow_posterior(mode)


def _narrow_posterior(mode):
    """A proposal ten times too narrow: the weights collapse onto a few draws."""
    mode.hessian = mode.hessian * 100.0
    return mode.posterior(2000)


# -- the posterior against NUTS -------------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("name", sorted(set(MODELS) - {"sim_cor_clmm", "sim_thres_bottom"}))
def test_posterior_matches_nuts(name, seed):
    reference = json.loads((REFERENCE / f"{name}.json").read_text())["params"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", PosteriorWarning)
        # the 4,000 draws (quasi-random: their Monte Carlo error is a fraction
        # of independent draws'); seed 1 is bench/bench_bayes.py's
        post = posterior_mode(name).posterior(4000, seed=seed)
    assert post.k_hat < 0.7
    summary = post.summary()
    for param, ref in reference.items():
        assert abs(summary.loc[param, "mean"] - ref["mean"]) < 0.05 * ref["sd"], param
        assert summary.loc[param, "sd"] == pytest.approx(ref["sd"], rel=0.05), param


def test_summary_columns_and_resampling(wine_model):
    post = wine_model.fit(prior="default").posterior(1000)
    summary = post.summary()
    assert list(summary.columns) == ["mean", "sd", "q2.5", "q50", "q97.5", "ess", "k_hat"]
    assert 0 < post.ess <= 1000
    draws = post.resample(500)
    assert draws.shape == (500, 6)
    np.testing.assert_allclose(draws.mean(), post.mean(), atol=4 * post.std().max() / 20)


# -- predictions ----------------------------------------------------------------------------


def test_expected_rating_on_the_draws(wine_model, wine):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PosteriorWarning)  # few draws: k-hat is noisy
        post = wine_model.fit(prior="default").posterior(200)
    table = post.predict(wine.iloc[:3], which="expected", n_draws=None)
    keep = post.weights > 0
    prob = np.stack(
        [np.asarray(wine_model.predict(x, exog=wine.iloc[:3])) for x in post.draws[keep].values]
    )
    expected = post.weights[keep] @ (prob @ np.arange(1, 6))
    np.testing.assert_allclose(table["estimate"], expected)
    assert np.all(table["lower"] < table["estimate"]) and np.all(table["estimate"] < table["upper"])


def test_probabilities_on_the_draws_sum_to_one(wine_model, wine):
    post = wine_model.fit(prior="default").posterior(500)
    table = post.predict(wine.iloc[:2], n_draws=200)
    assert table.groupby("row")["estimate"].sum().to_numpy() == pytest.approx([1, 1])


def test_posterior_predictions_are_labelled_by_the_rows_index(wine_model, wine):
    """The table numbered rows by position (row 0 for a row labelled 40), while the
    missing-value warning of the same call named the row by its label."""
    post = wine_model.fit(prior="default").posterior(500)
    new = wine.iloc[[40, 3]].set_axis(["obs_A", 40])
    table = post.predict(new, n_draws=100)
    assert table["row"].tolist() == ["obs_A"] * 5 + [40] * 5
    single = post.predict(wine.iloc[[7]], which="expected", n_draws=100)
    assert single["row"].tolist() == [7]
    fitted = post.predict(which="expected", n_draws=50)
    assert fitted["row"].tolist() == wine.index.tolist()


def test_posterior_predictive_counts(wine_model):
    post = wine_model.fit(prior="default").posterior(500)
    counts = post.ppc_counts(50)
    assert counts.shape == (50, 5)
    assert np.all(counts.sum(axis=1) == 72)
    observed = wine_model.response_counts
    assert np.all(np.abs(counts.mean() - observed) < 4 * counts.std() + 1)


def test_ppc_plot(wine_model):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    ax = wine_model.fit(prior="default").posterior(300).plot_ppc(20)
    assert len(ax.patches) == 5


def test_ppc_plot_legend_covers_no_bar_or_interval(wine_model):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.transforms import Bbox

    # a small panel of a grid, as in vignettes/bayes_wine.py: inside the axes the legend
    # covered the bars of levels 2 and 3
    figure, axes = plt.subplots(2, 4, figsize=(12, 5.5))
    ax = wine_model.fit(prior="default").posterior(300).plot_ppc(20, ax=axes.flat[6])
    figure.tight_layout()
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    legend = ax.get_legend().get_window_extent(renderer)
    drawn = [patch.get_window_extent(renderer) for patch in ax.patches]
    for collection in ax.collections:  # the errorbars' intervals
        for segment in collection.get_segments():
            drawn.append(Bbox(ax.transData.transform(segment)))
    drawn += [Bbox(ax.transData.transform(line.get_xydata()[[0, -1]])) for line in ax.lines]
    assert not [box for box in drawn if box.overlaps(legend)]
    assert figure.bbox.contains(legend.x0, legend.y0) and figure.bbox.contains(legend.x1, legend.y1)
    others = [a.get_window_extent(renderer) for a in axes.flat if a is not ax]
    assert not [box for box in others if box.overlaps(legend)]
    plt.close(figure)


def test_mixed_posterior_predictions(wine):
    model = ordstats.OrdinalModel.from_formula("rating ~ temp + contact + (1|judge)", wine)
    post = model.fit(prior="default").posterior(1000)
    table = post.predict(which="expected", n_draws=50)
    assert table["row"].tolist() == wine.index.tolist()


# -- NUTS and ArviZ (the bayes extra) -------------------------------------------------------


def test_jax_log_density_equals_ordstats(wine, housing):
    pytest.importorskip("numpyro")
    import numpyro

    from ordstats.results.jax_models import log_posterior

    numpyro.enable_x64()
    cases = [
        ("rating ~ temp + contact", wine, {"link": "probit"}),
        ("rating ~ temp + contact", wine, {"link": "cloglog", "scale": "~ contact"}),
        ("rating ~ temp", wine, {"nominal": "~ contact", "link": "loglog"}),
        ("rating ~ temp", wine, {"nominal": "~ contact", "family": "sratio"}),
        ("rating ~ temp", wine, {"family": "cratio", "link": "cauchit", "reverse": True}),
        ("rating ~ temp", wine, {"family": "acat", "nominal": "~ contact"}),
        ("Sat ~ Infl + Type + Cont", housing, {"weights": "Freq", "family": "sratio"}),
    ]
    rng = np.random.default_rng(0)
    for formula, data, kwargs in cases:
        model = ordstats.OrdinalModel.from_formula(formula, data, **kwargs)
        mode = model.fit(prior={"b": "normal(0, 3)"})
        value, size = log_posterior(mode.target.native_arrays())
        assert size == mode.params.size
        for _ in range(3):
            x = mode.params.to_numpy() + 0.05 * rng.standard_normal(size)
            assert float(value(x)) == pytest.approx(mode.target.log_density(x), rel=1e-10)


def test_live_nuts_is_close_to_the_reference(wine_model):
    pytest.importorskip("numpyro")
    reference = json.loads((REFERENCE / "wine_clm.json").read_text())["params"]
    post = wine_model.fit(prior="default").posterior(300, method="nuts", chains=1, warmup=300)
    assert post.draws.shape == (300, 6)
    for param, ref in reference.items():  # 300 draws: a Monte Carlo error near 0.1 SD
        assert abs(post.mean()[param] - ref["mean"]) < 0.4 * ref["sd"], param
    idata = post.to_arviz()
    assert idata.posterior["temp[T.warm]"].shape == (1, 300)


def test_nuts_inference_data_carries_the_sampler_statistics(wine_model):
    pytest.importorskip("numpyro")
    import arviz as az

    mode = wine_model.fit(prior="default")
    post = mode.posterior(100, method="nuts", chains=2, warmup=100)
    idata = post.to_arviz()
    stats = idata.sample_stats
    for name in ["diverging", "energy", "lp", "n_steps", "tree_depth", "acceptance_rate"]:
        assert stats[name].shape == (2, 100), name
    assert stats["diverging"].dtype == bool
    n_steps = stats["n_steps"].to_numpy()
    np.testing.assert_array_equal(stats["tree_depth"], np.floor(np.log2(n_steps)) + 1)
    # lp is the log posterior at each draw (ordstats' target, up to its constant)
    draws = post.draws.to_numpy().reshape(2, 100, -1)
    lp = np.array([[mode.target.log_density(x) for x in chain] for chain in draws])
    np.testing.assert_allclose(stats["lp"] - lp, (stats["lp"] - lp).mean(), atol=1e-8)
    assert np.all(np.isfinite(az.bfmi(idata)))
    assert "r_hat" in az.summary(idata).columns
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ax = az.plot_energy(idata)
    plt.close(ax.figure)


def test_importance_draws_to_arviz(wine_model):
    pytest.importorskip("arviz")
    post = wine_model.fit(prior="default").posterior(400)
    idata = post.to_arviz()
    assert idata.posterior["contact[T.yes]"].shape == (1, 400)
    assert idata.posterior.attrs["k_hat"] == post.k_hat
    # each equally weighted draw carries the log weight of the draw it copies
    rows = [post.draws.index[(post.draws == row).all(axis=1)][0] for row in post.resample().values]
    np.testing.assert_array_equal(idata.sample_stats["log_weight"][0], post.log_weights[rows])
    np.testing.assert_array_equal(
        idata.posterior["contact[T.yes]"][0], post.resample()["contact[T.yes]"]
    )


def test_margins_verb_on_the_draws(wine_model):
    """avg_comparisons at each draw: the posterior mean lies near the ML estimate."""
    post = wine_model.fit(prior="default").posterior(1000)
    table = post.margins("avg_comparisons", variables="contact", n_draws=8)
    ml = wine_model.fit().avg_comparisons(variables="contact")
    assert list(table["group"]) == list(ml["group"])
    assert np.all(table["lower"] <= table["estimate"])
    assert np.all(table["estimate"] <= table["upper"])
    assert np.all(np.abs(table["estimate"] - ml["estimate"]) < 2 * ml["std_error"])
    draw = post.resample(8).to_numpy()[3]  # one draw's value is the verb at that draw
    at_draw = post.target.results_at(draw).avg_comparisons(variables="contact")
    direct = type(post)(post.target, draw[None], np.zeros(1), method="laplace")
    one = direct.margins("avg_comparisons", variables="contact", n_draws=1)
    np.testing.assert_allclose(one["estimate"], at_draw["estimate"], rtol=1e-12)


def test_disc_prior_shrinks_the_scale_effect(wine):
    model = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine, scale="~ temp")
    ml = model.fit()
    disc = ordstats.prior("normal(0, 0.05)", "disc", coef="tempwarm")  # brms' name
    mode = model.fit(prior=[disc, ordstats.prior("flat", "Intercept")])
    table = mode.prior_summary.set_index("coef")
    assert table.loc["scale:temp[T.warm]", "class"] == "disc"
    assert table.loc["scale:temp[T.warm]", "prior"] == "normal(0, 0.05)"
    zeta = model.param_names.index("scale:temp[T.warm]")
    assert abs(mode.params.iloc[zeta]) < 0.5 * abs(ml.params.iloc[zeta])
    # the mode solves the penalised score equations: ML gradient = prior gradient
    score = model.score(mode.params.to_numpy())
    expected = np.zeros(model.k_params)
    expected[zeta] = mode.params.iloc[zeta] / 0.05**2
    np.testing.assert_allclose(score, expected, atol=1e-5)


def test_sd_prior_by_group_on_a_mixed_model(wine):
    model = ordstats.OrdinalModel.from_formula("rating ~ temp + contact + (1|judge)", wine)
    tight = model.fit(prior=ordstats.prior("exponential(20)", "sd", group="judge"))
    loose = model.fit(prior="default")
    assert tight.params.iloc[-1] < loose.params.iloc[-1] - 0.5  # log sd pulled down
    assert "exponential(20)" in tight.prior_summary["prior"].tolist()
    with pytest.raises(ordstats.errors.SpecificationError, match=r"group 'judge'"):
        model.fit(prior=ordstats.prior("normal(0, 1)", "sd", group="bottle"))


def test_nuts_shows_a_progress_bar_per_chain_when_asked_or_watched(wine_model, capfd, monkeypatch):
    # before: NUTS ran for minutes without a sign of life (progress_bar=False always)
    pytest.importorskip("numpyro")
    import ordstats.results.posterior as posterior_module

    # NumPyro turns its progress bars off wherever CI or PYTEST_XDIST_WORKER is set
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    mode = wine_model.fit(prior="default")
    mode.posterior(100, method="nuts", chains=2, warmup=100)
    assert "warmup" not in capfd.readouterr().err  # not a terminal: silent by default
    mode.posterior(100, method="nuts", chains=2, warmup=100, progress=True)
    err = capfd.readouterr().err
    assert err.count("sample: 100%") == 2  # each chain's bar reaches its end
    monkeypatch.setattr(posterior_module, "is_interactive", lambda: True)
    mode.posterior(100, method="nuts", chains=1, warmup=100)
    assert "sample: 100%" in capfd.readouterr().err
    with pytest.raises(ordstats.OrdstatsError, match="progress"):
        mode.posterior(100, method="nuts", progress="yes")
