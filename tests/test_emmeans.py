"""emmeans on ordstats fits: properties, fitting paths, bad input (against R: test_emmeans_r.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import ordstats
from ordstats.errors import OrdstatsError
from ordstats.results.margins.adjust import Family, adjusted_p_values, critical_values
from ordstats.results.margins.emmeans import emmeans
from tests._numdiff import central_jacobian
from tests.test_emmeans_r import _load


@pytest.fixture(scope="module")
def wine() -> pd.DataFrame:
    return ordstats.datasets.load("wine")


@pytest.fixture(scope="module")
def soup() -> pd.DataFrame:
    return ordstats.datasets.load("soup")


@pytest.fixture(scope="module")
def fit(wine: pd.DataFrame):
    return ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()


@pytest.fixture(scope="module")
def soup_fit(soup: pd.DataFrame):
    return ordstats.OrdinalModel.from_formula("SURENESS ~ PROD + DAY + GENDER", soup).fit()


# -- the adjustments ----------------------------------------------------------------------


def test_mvt_with_independent_estimates_is_sidak() -> None:
    """Uncorrelated z's (rank 4: the quasi-Monte-Carlo path): P(max|Z| >= c) = 1 - (1 - p)^k."""
    z = np.array([0.5, 1.7, 2.4, 3.1])
    family = [Family(range(4))]
    mvt, _ = adjusted_p_values(z, family, "mvt", np.eye(4))
    sidak, _ = adjusted_p_values(z, family, "sidak", np.eye(4))
    np.testing.assert_allclose(mvt, sidak, atol=1e-4)
    crit_mvt, _ = critical_values(0.95, family, "mvt", np.eye(4))
    crit_sidak, _ = critical_values(0.95, family, "sidak", np.eye(4))
    np.testing.assert_allclose(crit_mvt, crit_sidak, atol=1e-3)


def test_mvt_of_a_rank_two_family_is_exact() -> None:
    """Three pairwise differences of three independent means (rank 2) against Tukey's law."""
    cov = np.array([[2.0, 1.0, -1.0], [1.0, 2.0, 1.0], [-1.0, 1.0, 2.0]])
    z = np.array([2.2, -0.4, 1.1])
    p, used = adjusted_p_values(z, [Family(range(3), compared=3)], "mvt", cov)
    assert used == "mvt"
    # max |m_i - m_j| / sqrt(2) of three independent N(0, 1) means: the studentized range
    tukey = stats.studentized_range.sf(np.sqrt(2.0) * np.abs(z), 3, np.inf)
    np.testing.assert_allclose(p, tukey, atol=1e-9)


def test_a_single_contrast_is_not_adjusted() -> None:
    p, used = adjusted_p_values(np.array([2.0]), [Family([0], 2)], "tukey", np.eye(1))
    assert used == "none"
    np.testing.assert_allclose(p, 2 * stats.norm.sf(2.0))


def test_tukey_becomes_sidak_for_contrasts_that_are_not_pairwise(fit) -> None:
    table = fit.emmeans("~ temp * contact").contrast("trt.vs.ctrl", adjust="tukey")
    assert table.summary_frame().attrs["adjust"] == "sidak"


# -- definitions -----------------------------------------------------------------------------


def test_mean_class_is_the_scores_times_the_probabilities(soup_fit) -> None:
    """With cell weights too (emmeans ignores them for mean.class, with a warning)."""
    for weights in ("equal", "cells", "proportional"):
        prob = soup_fit.emmeans("~ SURENESS | PROD", mode="prob", weights=weights)
        mean = soup_fit.emmeans("PROD", mode="mean.class", weights=weights)
        expected = prob.values.reshape(2, 6) @ np.arange(1.0, 7.0)
        np.testing.assert_allclose(mean.values, expected, rtol=1e-13)
        np.testing.assert_allclose(
            mean.jacobian, np.einsum("gkp,k->gp", prob.jacobian.reshape(2, 6, -1), np.arange(1, 7))
        )


def test_probabilities_sum_to_one_and_exceedance_is_one_minus_cumulative(fit) -> None:
    prob = fit.emmeans("~ rating | temp", mode="prob").summary_frame()
    np.testing.assert_allclose(prob.groupby("temp", observed=True)["prob"].sum(), 1.0)
    cum = fit.emmeans("~ cut | temp", mode="cum.prob")
    exc = fit.emmeans("~ cut | temp", mode="exc.prob")
    np.testing.assert_allclose(cum.values + exc.values, 1.0)
    np.testing.assert_allclose(cum.vcov(), exc.vcov(), atol=1e-15)


def test_regrid_of_linear_predictors_is_the_link_cdf(fit) -> None:
    linear = fit.emmeans("~ cut | temp", mode="linear.predictor")
    regridded = linear.regrid()
    np.testing.assert_allclose(regridded.values, stats.logistic.cdf(linear.values))
    assert regridded.estimate_name == "cumprob"


def test_every_fitting_path_gives_the_same_means(wine, fit) -> None:
    chunked = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine, chunksize=7).fit()
    in_memory = fit.emmeans("~ rating | temp", mode="prob").summary_frame()
    streamed = chunked.emmeans("~ rating | temp", mode="prob", data=wine).summary_frame()
    pd.testing.assert_frame_equal(in_memory, streamed, rtol=1e-7)


def test_sequential_families_have_the_probability_modes(wine) -> None:
    sratio = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine, family="sratio")
    result = sratio.fit().emmeans("temp", mode="mean.class").summary_frame()
    assert list(result["temp"]) == ["cold", "warm"]
    assert np.all(np.isfinite(result["SE"]))


def test_summary_prints_emmeans_notes(fit) -> None:
    text = str(fit.emmeans("temp").pairs(adjust="holm").summary())
    assert "Results are averaged over the levels of: contact" in text
    assert "z intervals, df = Inf" in text


# -- nominal effects: the latent means' cut-points ------------------------------------------------


@pytest.fixture(scope="module")
def nominal_fit(wine: pd.DataFrame):
    return ordstats.OrdinalModel.from_formula("rating ~ temp", wine, nominal="~ contact").fit()


def test_latent_cuts_cell_subtracts_each_cells_own_mean_cut_point(nominal_fit) -> None:
    """``latent_cuts="cell"``: every cell is the margins verbs' ``type="latent"`` at that cell."""
    cells = nominal_fit.emmeans("~ temp * contact", latent_cuts="cell").summary_frame()
    grid = cells[["temp", "contact"]].astype(str)
    own = nominal_fit.predictions(grid, type="latent")
    np.testing.assert_allclose(cells["emmean"], own["estimate"], rtol=1e-10)
    np.testing.assert_allclose(cells["SE"], own["std_error"], rtol=1e-8)


def test_latent_cuts_grid_and_cell_differ_by_the_centred_mean_cut_point(nominal_fit) -> None:
    """Default ``"grid"`` (emmeans): contact, a nominal variable only, no longer moves the means."""
    by_grid = nominal_fit.emmeans("~ contact").summary_frame()
    by_cell = nominal_fit.emmeans("~ contact", latent_cuts="cell").summary_frame()
    assert by_grid["emmean"].iloc[0] == pytest.approx(by_grid["emmean"].iloc[1], abs=1e-12)
    assert abs(by_cell["emmean"].iloc[1] - by_cell["emmean"].iloc[0]) > 1.0
    # the mean over contact's levels (equal weights) is the same either way
    assert by_grid["emmean"].mean() == pytest.approx(by_cell["emmean"].mean(), rel=1e-12)


def test_latent_cuts_make_no_difference_without_nominal_effects(fit) -> None:
    grid = fit.emmeans("~ temp | contact").summary_frame()
    cell = fit.emmeans("~ temp | contact", latent_cuts="cell").summary_frame()
    pd.testing.assert_frame_equal(grid, cell)


# -- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda f: f.emmeans("tmp"), r"'tmp' is not a variable of the reference grid"),
        (lambda f: f.emmeans("temp", by="contct"), r"'contct' is not a variable"),
        (lambda f: f.emmeans("~ rating | temp"), r"'rating' is not a variable.*use one of"),
        (lambda f: f.emmeans("temp", mode="latnt"), r"mode must be one of 'latent'"),
        (lambda f: f.emmeans("temp", weights="cell"), r"weights must be one of 'equal'"),
        (lambda f: f.emmeans("temp", at={"temp": "hot"}), r"names levels \['hot'\]"),
        (lambda f: f.emmeans("temp", at={"zz": 1}), r"'zz' is not a variable"),
        (lambda f: f.emmeans("temp", at=[1]), r"at must be a dict"),
        (lambda f: f.emmeans("temp", mode="scale"), r"mode='scale' is for models with a scale"),
        (lambda f: f.emmeans("temp", re_form=None), r"re_form is for mixed models"),
        (lambda f: f.emmeans("temp", data=[1, 2]), r"data must be a pandas DataFrame"),
        (lambda f: f.emmeans(3), r"specs must be a variable name"),
        (lambda f: f.emmeans("temp").pairs(adjust="scheffe"), r"adjust must be one of"),
        (lambda f: f.emmeans("temp").contrast("helmert"), r"method must be 'pairwise'"),
        (lambda f: f.emmeans("temp").contrast({"c": [1, 0, -1]}), r"needs 2 coefficients"),
        (
            lambda f: f.emmeans("~ temp * contact").contrast("trt.vs.ctrl", ref="hot"),
            r"ref must be a position",
        ),
        (lambda f: f.joint_tests(by="tmp"), r"'tmp' is not a variable"),
        (lambda f: f.emmeans("temp", at={"contact": []}), r"'contact': ...\} gives no value"),
    ],
)
def test_emmeans_refuses_bad_input(fit, call, message) -> None:
    with pytest.raises(OrdstatsError, match=message):
        call(fit)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"at": {"x": []}}, r"at=\{'x': ...\} gives no value"),
        ({"cov_reduce": lambda v: "mean"}, r"cov_reduce must return one or more finite numbers"),
        ({"cov_reduce": lambda v: []}, r"predictor 'x' .*it returned \[\]"),
        ({"cov_reduce": lambda v: np.nan}, r"cov_reduce must return one or more finite"),
    ],
)
def test_emmeans_refuses_a_covariate_without_values(wine, options, message) -> None:
    """Before: numpy's "cannot reshape array of size 0" and "could not convert string"."""
    data = wine.assign(x=np.arange(len(wine)) % 7 * 1.0)
    res = ordstats.OrdinalModel.from_formula("rating ~ temp + x", data).fit()
    with pytest.raises(OrdstatsError, match=message):
        res.emmeans("temp", **options)


def test_a_variable_named_twice_in_specs_is_one(fit) -> None:
    """R's emmeans(fit, c("temp", "temp")) is its emmeans(fit, "temp"); before, a grid
    of temp against itself with NaN cells."""
    twice = fit.emmeans(["temp", "temp"]).summary_frame()
    pd.testing.assert_frame_equal(twice, fit.emmeans("temp").summary_frame())
    pd.testing.assert_frame_equal(
        fit.emmeans("~ temp * temp | contact").summary_frame(),
        fit.emmeans("~ temp | contact").summary_frame(),
    )


COLON_NAME = json.loads(
    (Path(__file__).parent / "data" / "reference" / "emmeans_colon_name.json").read_text()
)


@pytest.fixture(scope="module")
def colon_fit(wine):
    data = wine.rename(columns={"temp": "t:1"})
    return ordstats.OrdinalModel.from_formula("rating ~ `t:1` + contact", data).fit()


def test_a_variable_with_a_colon_in_its_name_is_one_variable(colon_fit) -> None:
    """R's emmeans(fit, "t:1") and emmeans(fit, ~ `t:1` | contact) (tests/r/
    emmeans_colon_name.R); before: "t:1" was split into 't' and '1', unknown variables."""
    assert colon_fit.llf == pytest.approx(COLON_NAME["logLik"], rel=1e-9)
    for specs, expected in COLON_NAME["emmeans"].items():
        table = colon_fit.emmeans(specs).summary_frame()
        assert [str(v) for v in table["t:1"]] == expected["t1"]
        if expected["contact"] is not None:
            assert [str(v) for v in table["contact"]] == expected["contact"]
        np.testing.assert_allclose(table["emmean"], expected["emmean"], rtol=1e-6)
        np.testing.assert_allclose(table["SE"], expected["SE"], rtol=1e-5)
    listed = colon_fit.emmeans(["t:1"], by="contact").summary_frame()
    for specs in ("~ t:1 | contact", "t:1 | contact", "~ `t:1` | `contact`"):
        pd.testing.assert_frame_equal(colon_fit.emmeans(specs).summary_frame(), listed)
    crossed = colon_fit.emmeans(["t:1", "contact"]).summary_frame()
    for specs in ("t:1 * contact", "~ t:1 : contact", "`t:1`*contact"):
        pd.testing.assert_frame_equal(colon_fit.emmeans(specs).summary_frame(), crossed)
    with pytest.raises(OrdstatsError, match="opens a backtick"):
        colon_fit.emmeans("~ `t:1")
    with pytest.raises(OrdstatsError, match=r"more than one '\|'"):
        colon_fit.emmeans("~ t:1 | contact | contact")


def test_emmeans_latent_needs_a_latent_scale(wine) -> None:
    acat = ordstats.OrdinalModel.from_formula("rating ~ temp", wine, family="acat").fit()
    # before: "use mode='prob'", a keyword joint_tests() does not take
    with pytest.raises(OrdstatsError, match=r"joint_tests\(\) tests each term's means on"):
        acat.joint_tests()
    with pytest.raises(OrdstatsError, match=r"mode='linear.predictor' has no meaning"):
        acat.emmeans("temp", mode="linear.predictor")


@pytest.mark.parametrize("family", ["acat", "sratio", "cratio"])
def test_emmeans_refusing_the_default_mode_says_so_and_lists_the_modes(wine, family) -> None:
    # before: "mode='latent' has no meaning ...", not saying latent is the default
    fit = ordstats.OrdinalModel.from_formula("rating ~ temp", wine, family=family).fit()
    listed = "mode='cum.prob', 'exc.prob', 'prob', 'mean.class'"
    with pytest.raises(OrdstatsError) as refused:
        fit.emmeans("temp")
    message = str(refused.value)
    assert message.startswith("mode='latent' (the default) has no meaning for this model")
    assert message.endswith(f"pass one of this model's modes: {listed}")
    for mode in ("cum.prob", "exc.prob", "prob", "mean.class"):  # each listed mode works
        assert len(fit.emmeans("temp", mode=mode).summary_frame()) > 0


def test_emmeans_without_the_rows_says_to_pass_data(wine) -> None:
    fit = ordstats.OrdinalModel.from_formula("rating ~ temp", wine).fit()
    fit.remove_data()
    with pytest.raises(OrdstatsError, match=r"pass them as data="):
        fit.emmeans("temp")
    assert len(emmeans(fit, "temp", data=wine).values) == 2


FORMULA_NESTING = json.loads(
    (Path(__file__).parent / "data" / "reference" / "emmeans_formula_nesting.json").read_text()
)


def test_a_factor_nested_by_the_formula_only_is_nested(wine) -> None:
    """R's emmeans reads ``b2 %in% temp`` from ``temp/b2``'s terms (tests/r/
    emmeans_formula_nesting.R): b2 has no main effect.  The data do not nest it
    (b2 = 1-4 at both temperatures); before, b2's means were averaged over temp."""
    data = wine.assign(b2=((wine["bottle"].astype(int) - 1) % 4 + 1).astype(str))
    res = ordstats.OrdinalModel.from_formula("rating ~ temp/b2", data).fit()
    assert res.llf == pytest.approx(FORMULA_NESTING["logLik"], rel=1e-9)
    for specs, expected in FORMULA_NESTING["emmeans"].items():
        table = res.emmeans(specs).summary_frame()
        if expected["b2"] is not None:
            assert [str(v) for v in table["b2"]] == expected["b2"]
        assert [str(v) for v in table["temp"]] == expected["temp"]
        np.testing.assert_allclose(table["emmean"], expected["emmean"], rtol=1e-6)
        np.testing.assert_allclose(table["SE"], expected["SE"], rtol=1e-5)
    crossed = res.emmeans("b2", nesting=None).summary_frame()
    assert "temp" not in crossed.columns  # nesting=None still averages over temp


def test_contrast_with_every_variable_in_by_is_refused() -> None:
    """sub nested in grp, by=sub: each group is one mean; emmeans refuses ("There are no
    factor levels left to contrast"), ordstats raised a bare IndexError."""
    data = pd.DataFrame(
        {
            "y": pd.Categorical(list("123231312213123321"), categories=list("123"), ordered=True),
            "grp": pd.Categorical(["a"] * 9 + ["b"] * 9),
            "sub": pd.Categorical(["a1", "a2", "a3"] * 3 + ["b1", "b2", "b3"] * 3),
        }
    )
    with pytest.warns(UserWarning, match="rank deficient"):
        res = ordstats.OrdinalModel.from_formula("y ~ grp + sub", data).fit()
    means = res.emmeans("~ grp | sub")
    assert means.by == ["grp", "sub"]
    for method in ("eff", "pairwise", "consec", "poly", "trt.vs.ctrl"):
        with pytest.raises(OrdstatsError, match="no variable is left to contrast"):
            means.contrast(method)
    with pytest.raises(OrdstatsError, match="no variable is left to contrast"):
        means.pairs()


# -- the step families (no emmeans method in R): the delta method recomputed ------------------


def _grid_probabilities(res, params: np.ndarray, grid: pd.DataFrame) -> np.ndarray:
    """P(rating | temp) averaged over contact with equal weights: (temp, rating)."""
    probs = np.asarray(res.model.predict(params, exog=grid, which="prob"), dtype=float)
    return probs.reshape(2, 2, -1).mean(axis=1)


@pytest.mark.parametrize(
    ("family", "link"), [("sratio", "logit"), ("cratio", "probit"), ("acat", "logit")]
)
def test_step_family_standard_errors_are_the_delta_method(wine, family, link) -> None:
    """The SEs of prob, cum.prob, mean.class and a contrast are J V J' with J differenced
    from the model's own probabilities (res.model.predict at perturbed parameters)."""
    res = ordstats.OrdinalModel.from_formula(
        "rating ~ temp * contact", wine, family=family, link=link
    ).fit()
    grid = pd.DataFrame(
        {"temp": ["cold", "cold", "warm", "warm"], "contact": ["no", "yes", "no", "yes"]}
    ).astype({"temp": wine["temp"].dtype, "contact": wine["contact"].dtype})
    theta, cov = np.asarray(res.params, float), np.asarray(res.cov_params(), float)
    quantities = {  # the emmeans call and the same quantity from the probabilities
        "prob": (
            lambda: res.emmeans("~ rating | temp", mode="prob"),
            lambda p: _grid_probabilities(res, p, grid).ravel(),
        ),
        "cum.prob": (
            lambda: res.emmeans("~ cut | temp", mode="cum.prob"),
            lambda p: np.cumsum(_grid_probabilities(res, p, grid), axis=1)[:, :-1].ravel(),
        ),
        "mean.class": (
            lambda: res.emmeans("~ temp", mode="mean.class"),
            lambda p: _grid_probabilities(res, p, grid) @ np.arange(1.0, 6.0),
        ),
        "pairs": (
            lambda: res.emmeans("~ temp", mode="mean.class").pairs(),
            lambda p: -np.diff(_grid_probabilities(res, p, grid) @ np.arange(1.0, 6.0)),
        ),
    }
    for name, (call, quantity) in quantities.items():
        means = call()
        got = means.summary_frame()
        if "cut" in got or "rating" in got:  # emmeans' order: the response/cut fastest, in temp
            got = got.sort_values("temp", kind="stable")
        jacobian = central_jacobian(quantity, theta, 1e-6)
        se = np.sqrt(np.einsum("ij,jk,ik->i", jacobian, cov, jacobian))
        np.testing.assert_allclose(
            got[means.estimate_name], quantity(theta), rtol=1e-10, err_msg=name
        )
        np.testing.assert_allclose(got["SE"], se, rtol=1e-7, err_msg=name)


# -- offsets: R's ref_grid puts the rows' mean offset in every cell -----------------------------


@pytest.fixture(scope="module")
def wine_z() -> pd.DataFrame:
    return _load("wine_binary")


def test_every_form_of_an_offset_gives_the_grid_the_mean_offset(wine_z) -> None:
    """Before: an offset column or values were taken as 0 (with a warning about newdata),
    an offset(z1) term was refused, though R's emmeans (polr_wine_offset.json) uses the
    mean offset; now each form (and a fit read in chunks) gives R's latent means."""
    formula = "rating ~ temp + contact"
    fits = [
        ordstats.OrdinalModel.from_formula(formula + " + offset(z1)", wine_z),
        ordstats.OrdinalModel.from_formula(formula, wine_z, offset="z1"),
        ordstats.OrdinalModel.from_formula(formula, wine_z, offset=wine_z["z1"].to_numpy()),
        ordstats.OrdinalModel.from_formula(formula, wine_z, offset="z1", chunksize=20),
    ]
    results = [model.fit() for model in fits]
    means = [res.emmeans("temp").summary_frame() for res in results]
    for other in means[1:]:
        pd.testing.assert_frame_equal(other, means[0], rtol=1e-6)
    # R: polr(rating ~ temp + contact + offset(z1)) gives -1.508139, 1.233819 (its own
    # optimum; ordstats' clm optimum agrees to ~1e-5)
    np.testing.assert_allclose(means[0]["emmean"], [-1.508139, 1.233819], atol=1e-4)
    # as R, at= for the offset's variable leaves the mean offset alone
    moved = results[0].emmeans("temp", at={"z1": [1.0]}).summary_frame()
    np.testing.assert_allclose(moved["emmean"], means[0]["emmean"], rtol=1e-12)


def test_a_mixed_model_s_grid_has_the_mean_offset(wine_z) -> None:
    res = ordstats.OrdinalMixedModel.from_formula(
        "rating ~ temp + contact + (1|judge)", wine_z, offset="z1"
    ).fit()
    at_mean = res.emmeans("temp").values
    at_zero = res.emmeans("temp", data=wine_z.assign(z1=0.0)).values
    np.testing.assert_allclose(at_mean - at_zero, wine_z["z1"].mean(), rtol=1e-10)
