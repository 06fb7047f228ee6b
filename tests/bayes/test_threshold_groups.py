"""Group-specific thresholds ``y | thres(gr = g) ~ ...`` in Bayesian fits (brms' ``thres()``).

The posterior of ``rating | thres(gr = contact) ~ temp`` (wine) against NUTS is the
``wine_thres`` case of tests/test_bayes.py::test_posterior_matches_nuts (reference:
tests/data/reference/bayes/wine_thres.json, made by tests/bayes/make_reference.py).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import special, stats

import ordstats
from ordstats.design.threshold_groups import split_threshold_groups
from ordstats.errors import (
    DataError,
    FormulaError,
    MissingDataWarning,
    PredictionError,
    SpecificationError,
)
from ordstats.estimation.bayes import make_target, resolve_priors
from ordstats.estimation.bayes_language import brms_summary
from ordstats.results.posterior import PosteriorWarning
from tests.bayes.derivatives import assert_target_derivatives
from tests.bayes.models import posterior_mode, simulated_ragged

FORMULA = "rating | thres(gr = contact) ~ temp"
#: the sampled parameters: each group's four thresholds, then the slope
TH = ("1|2", "2|3", "3|4", "4|5")
NAMES = [f"{t}[contact={g}]" for g in ("no", "yes") for t in TH]


@pytest.fixture(scope="module")
def model(wine):
    return ordstats.OrdinalModel.from_formula(FORMULA, wine)


@pytest.fixture(scope="module")
def posterior(model):
    return model.fit(prior="default").posterior(4000, seed=1)


def _cumulative_probabilities(t, data):
    """P(Y = level) of wine rows from the groups' thresholds ``t`` (logit), by hand."""
    thresholds = t[:8].reshape(2, 4)[(data["contact"] == "yes").to_numpy().astype(int)]
    eta = t[8] * (data["temp"] == "warm").to_numpy()
    cum = special.expit(thresholds - eta[:, None])
    return np.diff(np.hstack([np.zeros((len(data), 1)), cum, np.ones((len(data), 1))]), axis=1)


def _four_kinds(wine):
    """One row of each temperature and contact."""
    return wine.groupby(["temp", "contact"], observed=True).head(1)


# -- the formula ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("formula", "variable"),
    [
        ("y | thres(gr = g) ~ x", "g"),
        ("y|thres(gr=g)~x + z", "g"),
        ("y | thres(gr = `my group`) ~ x", "my group"),
        ("y ~ x", None),
        ("y ~ x + (1|g)", None),
        ("`a|b` ~ x", None),
        ("`a|b` | thres(gr = g) ~ x", "g"),
    ],
)
def test_the_thres_term_is_read_from_the_left_side(formula, variable):
    plain, found = split_threshold_groups(formula)
    assert found == variable
    assert plain.split("~")[0].replace("`a|b`", "").count("|") == 0


def test_a_response_name_with_a_bar(wine):
    data = wine.rename(columns={"rating": "a|b"})
    model = ordstats.OrdinalModel.from_formula("`a|b` ~ temp", data)
    assert model.threshold_groups is None
    grouped = ordstats.OrdinalModel.from_formula("`a|b` | thres(gr = contact) ~ temp", data)
    assert grouped.threshold_groups.levels == ("no", "yes")


def test_the_model_is_the_nominal_effect_of_the_groups(model, wine):
    nominal = ordstats.OrdinalModel.from_formula("rating ~ temp", wine, nominal="~ contact")
    assert model.threshold_groups.levels == ("no", "yes")
    assert model.threshold_groups.n_thresholds == 4
    x = nominal.start_params
    assert model.evaluator.evaluate(x).nll == pytest.approx(nominal.evaluator.evaluate(x).nll)


# -- the fit --------------------------------------------------------------------------------


def test_flat_priors_give_the_maximum_likelihood_fit_of_the_nominal_model(model, wine):
    mode = model.fit(prior={"Intercept": "flat"})
    ml = ordstats.OrdinalModel.from_formula("rating ~ temp", wine, nominal="~ contact").fit()
    alpha, gamma = ml.params.iloc[:4].to_numpy(), ml.params.iloc[4:8].to_numpy()
    expected = np.concatenate([alpha, alpha + gamma, [ml.params["temp[T.warm]"]]])
    assert list(mode.params.index) == [*NAMES, "temp[T.warm]"]
    np.testing.assert_allclose(mode.params.to_numpy(), expected, atol=1e-6)


def test_the_intercept_prior_is_on_each_groups_thresholds_not_centred(model):
    # brms turns centring off with grouped thresholds: the prior ignores the slope
    log_prior, table = resolve_priors(model, "default")
    assert list(table[j][2] for j in range(8)) == ["student_t(3, 0, 2.5) (default)"] * 8
    t = np.array([-1.5, 1.0, 3.0, 4.5, -3.0, -0.3, 1.7, 3.5, 2.3])
    shifted = t.copy()
    shifted[8] += 5.0
    assert log_prior.value(shifted) == pytest.approx(log_prior.value(t))
    u = t.copy()
    u[:8] += 0.3
    change = stats.t.logpdf(u[:8], 3, 0, 2.5).sum() - stats.t.logpdf(t[:8], 3, 0, 2.5).sum()
    assert log_prior.value(u) - log_prior.value(t) == pytest.approx(change)


def test_chained_gradient_and_hessian_match_finite_differences(model):
    log_prior, _ = resolve_priors(model, {"b": "normal(0, 3)"})
    target = make_target(model, log_prior)
    assert_target_derivatives(target, np.array([-1.5, 1.0, 3.0, 4.5, -3.0, -0.3, 1.7, 3.5, 2.3]))


def test_a_prior_on_one_groups_thresholds(model):
    default = model.fit(prior="default").params
    tight = ordstats.prior("normal(0, 0.05)", class_="Intercept", group="yes")
    params = model.fit(prior=tight).params
    assert np.all(np.abs(params[NAMES[4:]]) < 0.2)  # pulled to 0
    assert abs(params[NAMES[0]] - default[NAMES[0]]) < 0.5  # the other group barely moves
    one = ordstats.prior("normal(0, 0.05)", class_="Intercept", coef="1", group="yes")
    table = model.fit(prior=one).prior_summary
    assert list(table["prior"]).count("normal(0, 0.05)") == 1
    both = model.fit(prior={"Intercept:1": "normal(0, 1)"}).prior_summary
    assert list(both["prior"]).count("normal(0, 1)") == 2


def test_posterior_summary_and_brms_names(posterior):
    assert posterior.k_hat < 0.7
    table = brms_summary(posterior)
    assert list(table.index) == [
        f"b_Intercept[{g},{j}]" for g in ("no", "yes") for j in range(1, 5)
    ]
    np.testing.assert_allclose(table["mean"], posterior.summary()["mean"].iloc[:8])


@pytest.mark.parametrize("family", ["cumulative", "sratio", "cratio", "acat"])
def test_jax_log_density_equals_ordstats(wine, family):
    pytest.importorskip("numpyro")
    import numpyro

    from ordstats.results.jax_models import log_posterior

    numpyro.enable_x64()
    model = ordstats.OrdinalModel.from_formula(FORMULA, wine, family=family)
    mode = model.fit(prior={"b": "normal(0, 3)"})
    value, size = log_posterior(mode.target.native_arrays())
    rng = np.random.default_rng(0)
    for _ in range(3):
        x = mode.params.to_numpy() + 0.1 * rng.standard_normal(size)
        assert float(value(x)) == pytest.approx(mode.target.log_density(x), rel=1e-10)


# -- predictions ----------------------------------------------------------------------------


def test_each_row_is_predicted_with_its_groups_thresholds(model, posterior, wine):
    rows = _four_kinds(wine)
    t = posterior.draws.to_numpy()[7]
    np.testing.assert_allclose(
        posterior.target.probabilities(t, rows), _cumulative_probabilities(t, rows), atol=1e-12
    )
    table = posterior.predict(rows, which="prob", n_draws=None)
    keep = posterior.weights > 0
    probs = np.stack([_cumulative_probabilities(x, rows) for x in posterior.draws.to_numpy()[keep]])
    expected = np.tensordot(posterior.weights[keep], probs, axes=1)
    np.testing.assert_allclose(table["estimate"].to_numpy(), expected.ravel(), atol=1e-10)


def _by_row(table, rows):
    """A margins predictions table as rows x levels."""
    return table.pivot(index="rowid", columns="group", values="estimate").loc[rows.index]


def test_margins_verbs_read_the_groups_thresholds(posterior, wine):
    rows = _four_kinds(wine)
    draw = posterior.resample(1, seed=3).to_numpy()[0]
    table = posterior.margins("predictions", rows, n_draws=1, seed=3)
    np.testing.assert_allclose(
        _by_row(table, rows).to_numpy(), _cumulative_probabilities(draw, rows), atol=1e-10
    )
    contrast = posterior.margins("avg_comparisons", variables="contact", n_draws=20)
    assert contrast["estimate"].sum() == pytest.approx(0, abs=1e-10)  # probabilities move


def test_margins_of_a_mo_posterior_read_the_linear_steps(housing):
    data = housing.assign(Infl=housing["Infl"].cat.as_ordered())
    model = ordstats.OrdinalModel.from_formula("Sat ~ mo(Infl) + Type + Cont", data, weights="Freq")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PosteriorWarning)
        post = model.fit(prior="default").posterior(300, seed=1)
    draw = post.resample(1, seed=2).to_numpy()[0]
    rows = data.iloc[[0, 30]]
    table = post.margins("predictions", rows, n_draws=1, seed=2)
    expected = post.target.probabilities(draw, rows)
    np.testing.assert_allclose(_by_row(table, rows).to_numpy(), expected, atol=1e-10)


# -- bad input ------------------------------------------------------------------------------


def test_maximum_likelihood_points_to_the_nominal_model(model):
    with pytest.raises(SpecificationError, match=r"nominal='~ C\(contact\)'"):
        model.fit()


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.fit(penalty="firth"),
        lambda m: m.fit_regularized(alpha=0.1),
        lambda m: m.path(n_alphas=3),
        lambda m: m.cv(),
    ],
)
def test_penalised_maximum_likelihood_refuses_too(model, call):
    with pytest.raises(SpecificationError, match="fitted by Bayesian fits"):
        call(model)


def test_a_group_whose_rows_at_its_top_level_all_have_zero_weight(wine):
    weights = np.where((wine["contact"] == "yes") & (wine["rating"] == "5"), 0.0, 1.0)
    model = ordstats.OrdinalModel.from_formula(FORMULA, wine.assign(w=weights), weights="w")
    assert model.threshold_groups.counts == (4, 3)  # 'yes' stops at 4


def test_missing_group_values_follow_the_missing_policy(wine):
    data = wine.assign(contact=wine["contact"].astype(object))
    data.loc[3, "contact"] = np.nan
    with pytest.warns(UserWarning, match="missing or non-finite values in 'contact'"):
        model = ordstats.OrdinalModel.from_formula(FORMULA, data)
    assert model.nobs == 71
    with pytest.raises(DataError, match="missing or non-finite values in 'contact'"):
        ordstats.OrdinalModel.from_formula(FORMULA, data, missing="raise")


def test_new_data_with_a_group_the_fit_has_not_seen(posterior, wine):
    rows = wine.iloc[:3].assign(contact=["no", "maybe", "yes"])
    with pytest.raises(PredictionError, match="factor level\\(s\\) 'maybe'"):
        posterior.predict(rows)
    missing = wine.iloc[:3].assign(contact=["no", None, "yes"])
    with pytest.warns(MissingDataWarning, match="predictions are NaN"):
        table = posterior.predict(missing)
    assert table.loc[table["row"] == 1, "estimate"].isna().all()


@pytest.mark.parametrize(
    ("formula", "keywords", "error", "message"),
    [
        ("rating | thres(gr = judge) ~ temp", {}, DataError, "'4' has no rows at '4' \\(its"),
        ("rating | thres(gr = nope) ~ temp", {}, FormulaError, "no column 'nope'"),
        ("rating | thres(4, gr = contact) ~ temp", {}, FormulaError, r"thres\(x, \.\.\.\)"),
        ("rating | thres() ~ temp", {}, FormulaError, r"write thres\(gr = g\)"),
        ("rating | weights(w) ~ temp", {}, FormulaError, "weights='w'"),
        ("rating | thres(gr = contact) + cens(c) ~ temp", {}, FormulaError, "only addition"),
        (FORMULA, {"nominal": "~ temp"}, SpecificationError, "nominal .* not available"),
        (FORMULA + " + (1|judge)", {}, SpecificationError, "random terms"),
        (FORMULA, {"threshold": "equidistant"}, SpecificationError, "flexible thresholds"),
        (FORMULA, {"chunksize": 10}, SpecificationError, "in memory"),
    ],
)
def test_what_grouped_thresholds_do_not_take(wine, formula, keywords, error, message):
    with pytest.raises(error, match=message):
        ordstats.OrdinalModel.from_formula(formula, wine, **keywords)


def test_a_middle_gap_lists_every_group_and_the_advice_fits(wine):
    # judge 4 has no rating 4 but a 5; with judge 6's 3s moved to 2 it lacks 3 too
    rating = wine["rating"].astype(int)
    gappy = wine.assign(
        rating=pd.Categorical(rating.where(~((wine["judge"] == "6") & (rating == 3)), 2))
    )
    with pytest.raises(DataError) as caught:
        ordstats.OrdinalModel.from_formula("rating | thres(gr = judge) ~ temp", gappy)
    message = str(caught.value)
    assert "group '4' has no rows at '4' (its highest level is '5')" in message
    assert "group '6' has no rows at '3' (its highest level is '5')" in message
    assert "merge each missing level ('3', '4') with a neighbouring level" in message
    assert "random term (1|judge)" in message
    # the advice on wine itself: level 5 merged into 4 for all rows, and the groups fit
    merged = wine.assign(
        rating=pd.Categorical(rating.clip(upper=4), ordered=True),
        judge=wine["judge"].astype(str),
    )
    model = ordstats.OrdinalModel.from_formula("rating | thres(gr = judge) ~ temp", merged)
    assert np.isfinite(model.fit(prior="default").log_posterior)


def test_a_single_group(wine):
    with pytest.raises(DataError, match="at least two groups"):
        ordstats.OrdinalModel.from_formula("rating | thres(gr = g) ~ temp", wine.assign(g="a"))


def test_thres_on_arrays_that_are_not_a_data_frame(wine):
    columns = {c: wine[c].to_numpy() for c in ("rating", "temp", "contact")}
    with pytest.raises(SpecificationError, match="pandas DataFrame"):
        ordstats.OrdinalModel.from_formula(FORMULA, columns)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (ordstats.prior("normal(0, 1)", class_="Intercept", group="maybe"), "no such parameter"),
        ({"Intercept:7": "normal(0, 1)"}, "no such parameter"),
    ],
)
def test_priors_on_groups_the_model_does_not_have(model, spec, message):
    with pytest.raises(SpecificationError, match=message):
        model.fit(prior=spec)


def test_group_is_not_for_slopes():
    with pytest.raises(SpecificationError, match="group= applies to"):
        ordstats.prior("normal(0, 1)", class_="b", group="yes")


def test_groups_of_a_frame_with_a_missing_level_in_pandas(wine):
    data = wine.assign(contact=pd.Categorical(wine["contact"], categories=["no", "yes", "maybe"]))
    model = ordstats.OrdinalModel.from_formula(FORMULA, data)
    assert model.threshold_groups.levels == ("no", "yes")


# -- groups with fewer categories (brms' nthres per group) ----------------------------------

#: sim_thres_ragged's groups: a and b have every level 1-5, c stops at 4, d at 3
RAGGED_COUNTS = (4, 4, 3, 2)


@pytest.fixture(scope="module")
def ragged():
    return posterior_mode("sim_thres_ragged")


def _ragged_probabilities(t, data):
    """P(Y = level) by hand: group g's thresholds ``t``, P(Y <= j) = 1 from its top on."""
    starts = np.cumsum([0, *RAGGED_COUNTS[:-1]])
    slope = t[sum(RAGGED_COUNTS)]
    out = []
    for g, x in zip(data["g"], data["x"], strict=True):
        i = "abcd".index(g)
        cuts = t[starts[i] : starts[i] + RAGGED_COUNTS[i]]
        cum = np.ones(5)
        cum[: cuts.size] = special.expit(cuts - slope * x)
        out.append(np.diff(np.concatenate([[0.0], cum])))
    return np.array(out)


def _ragged_point(mode, seed=0):
    return mode.params.to_numpy() + 0.05 * np.random.default_rng(seed).standard_normal(14)


def test_each_group_has_thresholds_up_to_its_top_level(ragged):
    groups = ragged.target.tmap.groups
    assert groups.counts == RAGGED_COUNTS
    expected = [f"{t}[g={g}]" for g, m in zip("abcd", RAGGED_COUNTS, strict=True) for t in TH[:m]]
    assert list(ragged.params.index) == [*expected, "x"]
    assert list(brms_summary(ragged.posterior(500, seed=1)).index) == [
        f"b_Intercept[{g},{j}]"
        for g, m in zip("abcd", RAGGED_COUNTS, strict=True)
        for j in range(1, m + 1)
    ]


def test_the_top_level_of_a_group_takes_what_lies_above_its_last_threshold(ragged):
    data = simulated_ragged()
    y = data["y"].cat.codes.to_numpy()

    def by_hand(t):  # up to the prior's constant; the default is flat on the slope
        loglik = np.log(_ragged_probabilities(t, data)[np.arange(len(data)), y]).sum()
        return loglik + stats.t.logpdf(t[:13], 3, 0, 2.5).sum()

    t, u = _ragged_point(ragged), _ragged_point(ragged, seed=5)
    change = ragged.target.log_density(u) - ragged.target.log_density(t)
    assert change == pytest.approx(by_hand(u) - by_hand(t), rel=1e-10, abs=1e-10)


def test_levels_above_a_groups_top_have_probability_zero(ragged):
    rows = simulated_ragged().groupby("g").head(2)
    t = _ragged_point(ragged, seed=1)
    probs = ragged.target.probabilities(t, rows)
    np.testing.assert_allclose(probs, _ragged_probabilities(t, rows), atol=1e-14)
    assert np.all(probs[rows["g"].to_numpy() == "d"][:, 3:] == 0.0)
    assert np.all(probs[rows["g"].to_numpy() == "c"][:, 4] == 0.0)


def test_ragged_derivatives_match_finite_differences(ragged):
    assert_target_derivatives(ragged.target, _ragged_point(ragged, seed=2))


def test_ragged_jax_log_density_equals_ordstats(ragged):
    pytest.importorskip("numpyro")
    import numpyro

    from ordstats.results.jax_models import log_posterior

    numpyro.enable_x64()
    value, size = log_posterior(ragged.target.native_arrays())
    assert size == 14
    for seed in range(3):
        x = _ragged_point(ragged, seed)
        assert float(value(x)) == pytest.approx(ragged.target.log_density(x), rel=1e-10)


def test_a_ragged_first_group_gives_the_same_posterior(ragged):
    # the reference of the nominal coding must have every threshold: 'd' first is moved
    data = simulated_ragged().replace({"g": {"a": "z", "d": "a"}})
    model = ordstats.OrdinalModel.from_formula("y | thres(gr = g) ~ x", data)
    assert model.threshold_groups.levels[0] == "b"
    mode = model.fit(prior="default")
    renamed = {f"{t}[g={g}]": f"{t}[g={h}]" for g, h in (("a", "d"), ("z", "a")) for t in TH}
    np.testing.assert_allclose(
        mode.params.rename(index=renamed)[ragged.params.index], ragged.params, atol=1e-6
    )


def test_a_group_without_the_lowest_level_keeps_its_first_threshold():
    # brms (integer response) keeps b's first threshold, held by the prior alone: its
    # posterior has the prior's t(3) tail, so the Student-t proposal's k-hat is > 0.7
    # (NUTS: tests/data/reference/bayes/sim_thres_bottom.json, SD 5.1; here about 2.5)
    mode = posterior_mode("sim_thres_bottom")
    assert mode.target.tmap.groups.counts == RAGGED_COUNTS
    with pytest.warns(PosteriorWarning, match="k-hat"):
        post = mode.posterior(4000, seed=1)
    assert post.k_hat > 0.7


FAMILIES = [("cumulative", False), ("acat", False)] + [
    (f, r) for f in ("sratio", "cratio") for r in (False, True)
]


def _groups_alone(t, data, options):
    """Log-likelihood (up to the prior) as each group's own model of its levels 1..m+1."""
    total, starts = 0.0, np.cumsum([0, *RAGGED_COUNTS[:-1]])
    for i, g in enumerate("abcd"):
        rows = data[data["g"] == g].assign(y=lambda d: d["y"].cat.remove_unused_categories())
        alone = ordstats.OrdinalModel.from_formula("y ~ x", rows, **options)
        own = np.append(t[starts[i] : starts[i] + RAGGED_COUNTS[i]], t[-1])
        total -= alone.evaluator.evaluate(own).nll
    return total + stats.norm.logpdf(t[-1], 0, 3) + stats.t.logpdf(t[:13], 3, 0, 2.5).sum()


@pytest.mark.parametrize(("family", "reverse"), FAMILIES)
def test_each_group_is_its_own_model_of_its_levels(family, reverse):
    # a group with levels 1..m+1 contributes the likelihood of the ungrouped model of
    # its rows with those levels only, at its thresholds and the shared slope
    data = simulated_ragged()
    options = {"family": family, "reverse": reverse}
    model = ordstats.OrdinalModel.from_formula("y | thres(gr = g) ~ x", data, **options)
    target = model.fit(prior={"b": "normal(0, 3)"}).target
    t = np.array([-2.0, -0.4, 0.6, 2.1, -2.4, -1.1, 0.4, 1.6, -1.4, 0.1, 1.0, -0.9, 0.6, 0.8])
    if family != "cumulative":
        t[:13] = t[:13] * np.where(np.arange(13) % 2, 1.0, -1.0)  # no order needed
    u = t + 0.05 * np.random.default_rng(4).standard_normal(14)
    change = target.log_density(u) - target.log_density(t)
    expected = _groups_alone(u, data, options) - _groups_alone(t, data, options)
    assert change == pytest.approx(expected, rel=1e-9, abs=1e-9)
    probs = target.probabilities(u, data.groupby("g").head(1))
    assert probs[3, 3:].tolist() == [0.0, 0.0] and probs[2, 4] == 0.0


@pytest.mark.parametrize(("family", "reverse"), FAMILIES[1:])
def test_ragged_step_families_jax_equals_ordstats(family, reverse):
    pytest.importorskip("numpyro")
    import numpyro

    from ordstats.results.jax_models import log_posterior

    numpyro.enable_x64()
    data = simulated_ragged()
    model = ordstats.OrdinalModel.from_formula(
        "y | thres(gr = g) ~ x", data, family=family, reverse=reverse
    )
    mode = model.fit(prior={"b": "normal(0, 3)"})
    value, _ = log_posterior(mode.target.native_arrays())
    assert_target_derivatives(mode.target, _ragged_point(mode, seed=1))
    for seed in range(2):
        x = _ragged_point(mode, seed)
        assert float(value(x)) == pytest.approx(mode.target.log_density(x), rel=1e-10)


def test_a_group_with_the_lowest_level_only():
    data = simulated_ragged()
    data.loc[data["g"] == "d", "y"] = 1
    with pytest.raises(DataError, match="'d' have rows at the lowest level"):
        ordstats.OrdinalModel.from_formula("y | thres(gr = g) ~ x", data)


def test_maximum_likelihood_of_groups_with_fewer_thresholds(ragged):
    with pytest.raises(SpecificationError, match="no maximum-likelihood estimate"):
        ragged.target.model.fit()


def test_margins_verbs_of_groups_with_fewer_thresholds(ragged):
    # each draw's nominal-model Hessian is singular at the absent thresholds: the verbs
    # need no standard errors there (the credible intervals come from the draws)
    post = ragged.posterior(500, seed=1)
    rows = simulated_ragged().groupby("g").head(1)
    draw = post.resample(1, seed=3).to_numpy()[0]
    table = post.margins("predictions", rows, n_draws=1, seed=3)
    by_row = _by_row(table, rows).to_numpy()
    np.testing.assert_allclose(by_row, _ragged_probabilities(draw, rows), atol=1e-10)
    assert by_row[3, 3:].tolist() == [0.0, 0.0]  # group d stops at 3


def test_reversed_acat_with_groups_of_fewer_levels():
    with pytest.raises(DataError, match="only with reverse=False"):
        ordstats.OrdinalModel.from_formula(
            "y | thres(gr = g) ~ x", simulated_ragged(), family="acat", reverse=True
        )
