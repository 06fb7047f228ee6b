"""marginaleffects' verbs on clm fits: published numbers, R, pymarginaleffects, properties.

References:

* marginaleffects #1759 (wine ``rating ~ temp * contact``,
  ``avg_predictions(by = c("temp", "contact"), type = "prob")``), to the
  published digits;
* the average marginal effects after an ordered logit on the UCLA data (the
  quantities of Stata's ``margins, dydx(*)``) from ordinal::clm with an
  independent delta method, tests/r/margins_ucla.R ->
  tests/data/reference/margins_ucla_clm.json;
* pymarginaleffects on statsmodels' OrderedModel (its predictions; its
  comparisons fail with polars 2);
* properties: a tiny-step contrast is the slope, comparisons of the level
  probabilities sum to zero, standard errors are the delta method with a
  central-difference Jacobian.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import ordstats
from ordstats import OrdinalModel, datagrid
from ordstats.errors import MissingDataWarning, OrdstatsError, StandardErrorWarning
from tests._numdiff import central_jacobian

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture(scope="module")
def interaction(wine):
    return OrdinalModel.from_formula("rating ~ temp * contact", wine).fit()


@pytest.fixture(scope="module")
def numeric(wine):
    rng = np.random.default_rng(3)
    frame = wine.assign(x=rng.normal(size=len(wine)), z=rng.uniform(1, 3, size=len(wine)))
    return OrdinalModel.from_formula("rating ~ temp + x + x:contact + z", frame).fit()


@pytest.fixture(scope="module")
def ucla():
    frame = pd.read_csv(DATA / "ologit_ucla.csv")
    levels = ["unlikely", "somewhat likely", "very likely"]
    frame["apply"] = pd.Categorical(frame["apply"], categories=levels, ordered=True)
    return OrdinalModel.from_formula("apply ~ pared + public + gpa", frame).fit()


@pytest.fixture(scope="module")
def ucla_reference():
    return json.loads((DATA / "reference" / "margins_ucla_clm.json").read_text())


# -- published numbers and other implementations ------------------------------------


def test_avg_predictions_reproduce_marginaleffects_1759(interaction):
    table = interaction.avg_predictions(by=["temp", "contact"], type="prob")
    cold_no = table[(table["temp"] == "cold") & (table["contact"] == "no")].set_index("group")
    assert round(cold_no.loc["1", "estimate"], 5) == 0.19604
    assert round(cold_no.loc["1", "std_error"], 5) == 0.08595
    assert round(cold_no.loc["2", "estimate"], 5) == 0.56230
    assert round(cold_no.loc["2", "std_error"], 5) == 0.08850
    assert list(table.columns[:3]) == ["group", "temp", "contact"]
    assert len(table) == 20


def test_average_slopes_match_r_on_the_ucla_data(ucla, ucla_reference):
    table = ucla.avg_slopes(variables=["pared", "public", "gpa"])
    levels = ucla_reference["levels"]
    order = pd.MultiIndex.from_product([ucla_reference["regressors"], levels])
    got = table.set_index(["term", "group"]).loc[order]
    np.testing.assert_allclose(got["estimate"], ucla_reference["dydx"], rtol=1e-6)
    np.testing.assert_allclose(got["std_error"], ucla_reference["dydx_se"], rtol=1e-5)


def test_discrete_changes_match_r_on_the_ucla_data(ucla, ucla_reference):
    table = ucla.avg_comparisons(variables={"pared": [0, 1], "public": [0, 1]})
    levels = ucla_reference["levels"]
    order = pd.MultiIndex.from_product([ucla_reference["discrete_regressors"], levels])
    got = table.set_index(["term", "group"]).loc[order]
    np.testing.assert_allclose(got["estimate"], ucla_reference["discrete"], rtol=1e-6)
    np.testing.assert_allclose(got["std_error"], ucla_reference["discrete_se"], rtol=1e-5)
    assert set(table["contrast"]) == {"1 - 0"}


@pytest.mark.filterwarnings("ignore::statsmodels.tools.sm_exceptions.ConvergenceWarning")
def test_predictions_agree_with_pymarginaleffects_on_ordered_model(wine, interaction):
    marginaleffects = pytest.importorskip("marginaleffects")
    from statsmodels.miscmodels.ordinal_model import OrderedModel

    # statsmodels' parameters at ordstats' estimates: slopes, first cut-point, log increments
    cuts = interaction.params.iloc[:4].to_numpy()
    start = np.r_[interaction.params.iloc[4:].to_numpy(), cuts[0], np.log(np.diff(cuts))]
    model = OrderedModel.from_formula("rating ~ temp * contact", wine, distr="logit")
    other = model.fit(start_params=start, method="bfgs", maxiter=0, disp=False)
    theirs = marginaleffects.avg_predictions(other, by=["temp", "contact"]).to_pandas()
    ours = interaction.avg_predictions(by=["temp", "contact"])
    # pymarginaleffects numbers the levels 0..K-1 and sorts the same way
    np.testing.assert_allclose(ours["estimate"], theirs["estimate"].astype(float), rtol=1e-10)
    # their Jacobian is a finite difference, their covariance a numerical Hessian's inverse
    np.testing.assert_allclose(ours["std_error"], theirs["std_error"].astype(float), rtol=1e-4)
    # ordstats uses the normal distribution (as R); pymarginaleffects a t distribution
    z = ours["estimate"] / ours["std_error"]
    np.testing.assert_allclose(ours["p_value"], 2 * stats.norm.sf(np.abs(z)))


# -- properties ----------------------------------------------------------------------


def test_a_tiny_step_contrast_is_the_slope(numeric):
    step = 1e-6
    contrast = numeric.avg_comparisons(variables={"x": step}, conf_type="wald")
    slope = numeric.avg_slopes(variables="x")
    np.testing.assert_allclose(
        contrast["estimate"] / step, slope["estimate"], rtol=1e-6, atol=1e-10
    )
    np.testing.assert_allclose(
        contrast["std_error"] / step, slope["std_error"], rtol=1e-5, atol=1e-10
    )


def test_comparisons_of_the_level_probabilities_sum_to_zero(numeric):
    table = numeric.comparisons(variables={"temp": "reference", "z": "iqr"})
    sums = table.groupby(["term", "rowid"], observed=True)["estimate"].sum()
    np.testing.assert_allclose(sums, 0.0, atol=1e-14)
    averaged = numeric.avg_slopes()
    np.testing.assert_allclose(
        averaged.groupby("term", observed=True)["estimate"].sum(), 0.0, atol=1e-14
    )


def _delta_method(fit, function, step=1e-6):
    """Estimates and delta-method SEs of ``function(params)`` with a central-difference Jacobian."""
    params = fit.margins_params()
    jac = central_jacobian(function, params, step)
    return function(params), np.sqrt(np.diag(jac @ fit.cov_params().to_numpy() @ jac.T))


def test_standard_errors_are_the_finite_difference_delta_method(numeric):
    data = numeric.margins_data()
    warm, cold = data.assign(temp="warm"), data.assign(temp="cold")
    warm["temp"] = warm["temp"].astype(data["temp"].dtype)
    cold["temp"] = cold["temp"].astype(data["temp"].dtype)

    def average_ratio(params):
        hi = numeric.margins_predict(params, numeric.margins_rows(warm), "cumprob").values
        lo = numeric.margins_predict(params, numeric.margins_rows(cold), "cumprob").values
        return hi.mean(axis=0) / lo.mean(axis=0)

    expected, expected_se = _delta_method(numeric, average_ratio)
    table = numeric.avg_comparisons(variables="temp", type="cumprob", comparison="ratio")
    np.testing.assert_allclose(table["estimate"], expected, rtol=1e-12)
    np.testing.assert_allclose(table["std_error"], expected_se, rtol=1e-6)


def test_slopes_standard_errors_are_the_finite_difference_delta_method(numeric):
    data = numeric.margins_data()

    # a difference in x inside a difference in the parameters: steps of 1e-4 keep the
    # rounding error (eps / 1e-8) and the truncation error (1e-8) both near 1e-8
    def average_slope(params):
        h = 1e-4
        up, down = data.assign(z=data["z"] + h), data.assign(z=data["z"] - h)
        hi = numeric.margins_predict(params, numeric.margins_rows(up), "expected").values
        lo = numeric.margins_predict(params, numeric.margins_rows(down), "expected").values
        return ((hi - lo) / (2 * h) * data[["z"]].to_numpy() / (hi + lo) * 2).mean(axis=0)

    expected, expected_se = _delta_method(numeric, average_slope, step=1e-4)
    table = numeric.avg_slopes(variables="z", type="expected", slope="eyex")
    np.testing.assert_allclose(table["estimate"], expected, rtol=1e-7)
    np.testing.assert_allclose(table["std_error"], expected_se, rtol=1e-5)


# -- intervals -----------------------------------------------------------------------


def test_probability_intervals_are_on_the_logit_scale_and_inside_0_1(interaction):
    table = interaction.avg_predictions(by=["temp", "contact"])
    p, se = table["estimate"], table["std_error"]
    z = stats.norm.ppf(0.975)
    centre, half = np.log(p / (1 - p)), z * se / (p * (1 - p))
    np.testing.assert_allclose(table["conf_low"], 1 / (1 + np.exp(-(centre - half))))
    np.testing.assert_allclose(table["conf_high"], 1 / (1 + np.exp(-(centre + half))))
    assert (table["conf_low"] > 0).all() and (table["conf_high"] < 1).all()
    wald = interaction.avg_predictions(by=["temp", "contact"], conf_type="wald")
    np.testing.assert_allclose(wald["conf_low"], p - z * se)
    assert (wald["conf_low"] < 0).any()  # why the logit scale is the default
    assert "logit scale" in str(table.summary())
    assert "Wald" in str(wald.summary())


def test_comparisons_get_wald_intervals(interaction):
    table = interaction.avg_comparisons(variables="contact")
    z = stats.norm.ppf(0.975)
    np.testing.assert_allclose(table["conf_low"], table["estimate"] - z * table["std_error"])
    with pytest.raises(OrdstatsError, match="conf_type='logit' is for probabilities"):
        interaction.avg_comparisons(variables="contact", conf_type="logit")


def test_summary_has_an_html_table(interaction):
    summary = interaction.avg_predictions(by="temp").summary()
    assert "<table" in summary._repr_html_()
    assert "Average predictions" in str(summary)


# -- newdata, by, wts, grids ------------------------------------------------------------


def test_newdata_keeps_its_index_labels_as_rowid(interaction, wine):
    rows = wine.iloc[[5, 1, 40]].rename(index={5: "a", 1: "b", 40: "c"})
    table = interaction.predictions(rows)
    first = table[table["group"] == "1"]
    assert list(first["rowid"]) == ["a", "b", "c"]
    np.testing.assert_allclose(first["estimate"], interaction.predict(rows)["1"].to_numpy())


def test_wts_series_is_paired_by_index_label(interaction, wine):
    weights = pd.Series(np.arange(1.0, len(wine) + 1.0), index=wine.index)
    shuffled = weights.sample(frac=1.0, random_state=2)
    a = interaction.avg_predictions(wts=weights)
    b = interaction.avg_predictions(wts=shuffled)
    np.testing.assert_allclose(a["estimate"], b["estimate"])
    prob = interaction.predict().to_numpy()
    np.testing.assert_allclose(a["estimate"], weights.to_numpy() @ prob / weights.sum())


def test_by_averages_within_groups(interaction, wine):
    table = interaction.avg_predictions(by="temp", type="expected")
    expected = interaction.predict(which="expected").groupby(wine["temp"], observed=True).mean()
    np.testing.assert_allclose(table["estimate"], expected.to_numpy())
    assert "group" not in table.columns


def test_datagrid_mean_or_mode_and_counterfactual(numeric):
    grid = datagrid(numeric, temp=["cold", "warm"])
    data = numeric.margins_data()
    assert len(grid) == 2 and list(grid["temp"]) == ["cold", "warm"]
    np.testing.assert_allclose(grid["x"], data["x"].mean())
    assert (grid["contact"] == data["contact"].mode()[0]).all()
    counterfactual = datagrid(numeric, grid_type="counterfactual", temp=["cold", "warm"])
    assert len(counterfactual) == 2 * len(data)
    assert list(counterfactual["rowidcf"][: len(data)]) == list(data.index)
    # averaging the counterfactual predictions by temp is g-computation: the contrast
    by_temp = numeric.avg_predictions(counterfactual, by="temp")
    contrast = numeric.avg_comparisons(variables="temp")
    difference = (
        by_temp[by_temp["temp"] == "warm"]["estimate"].to_numpy()
        - by_temp[by_temp["temp"] == "cold"]["estimate"].to_numpy()
    )
    np.testing.assert_allclose(difference, contrast["estimate"], atol=1e-14)


def test_predictions_variables_make_a_counterfactual_grid(interaction):
    table = interaction.avg_predictions(variables="temp", by="temp")
    grid = datagrid(interaction, grid_type="counterfactual", temp=["cold", "warm"])
    np.testing.assert_allclose(
        table["estimate"], interaction.avg_predictions(grid, by="temp")["estimate"]
    )


def test_predictions_at_the_mean_row(interaction):
    table = interaction.predictions("mean", type="class")
    assert len(table) == 1 and np.isnan(table["std_error"]).all()


def test_class_predictions_are_level_labels(wine):
    # the estimate was the level's position (1.0 for level "2" on wine)
    fit = OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    table = fit.predictions(wine.head(4), type="class")
    expected = fit.predict(wine.head(4)).idxmax(axis=1)
    assert list(table["estimate"].astype(str)) == [str(v) for v in expected]
    assert list(table["estimate"].cat.categories) == [str(v) for v in fit.model.levels]


# -- contrasts and comparison functions ---------------------------------------------------


def test_factor_contrasts(numeric, soup):
    fit = OrdinalModel.from_formula("SURENESS ~ PROD + DAY + SOUPTYPE", soup).fit()
    pairwise = fit.avg_comparisons(variables={"SOUPTYPE": "pairwise"}, type="expected")
    sequential = fit.avg_comparisons(variables={"SOUPTYPE": "sequential"}, type="expected")
    reference = fit.avg_comparisons(variables="SOUPTYPE", type="expected")
    levels = list(soup["SOUPTYPE"].cat.categories)
    assert len(pairwise) == 3 and len(sequential) == 2 and len(reference) == 2
    assert list(reference["contrast"]) == [f"{lv} - {levels[0]}" for lv in levels[1:]]
    by_level = fit.avg_predictions(variables="SOUPTYPE", by="SOUPTYPE", type="expected")
    means = by_level.set_index("SOUPTYPE")["estimate"]
    np.testing.assert_allclose(
        sequential["estimate"], np.diff(means.loc[levels].to_numpy()), atol=1e-13
    )


def test_numeric_contrasts(numeric):
    data = numeric.margins_data()
    table = numeric.avg_comparisons(variables={"z": "minmax"}, type="expected", conf_type="wald")
    hi = numeric.avg_predictions(data.assign(z=data["z"].max()), type="expected")
    lo = numeric.avg_predictions(data.assign(z=data["z"].min()), type="expected")
    np.testing.assert_allclose(table["estimate"], hi["estimate"] - lo["estimate"], atol=1e-13)
    assert list(table["contrast"]) == ["Max - Min"]
    sd = numeric.avg_comparisons(variables={"z": "sd"}, type="expected")
    assert list(sd["contrast"]) == ["(x+sd/2) - (x-sd/2)"]
    gap = numeric.avg_comparisons(variables={"z": 2}, type="expected")
    assert list(gap["contrast"]) == ["+2"]
    given = numeric.avg_comparisons(variables={"z": [1.5, 2.5]}, type="expected")
    assert list(given["contrast"]) == ["2.5 - 1.5"]


def test_comparison_functions(interaction):
    data = interaction.margins_data()
    hi = interaction.avg_predictions(data.assign(contact="yes").astype(data.dtypes.to_dict()))
    lo = interaction.avg_predictions(data.assign(contact="no").astype(data.dtypes.to_dict()))
    ratio = interaction.avg_comparisons(variables="contact", comparison="ratio")
    np.testing.assert_allclose(ratio["estimate"], hi["estimate"] / lo["estimate"])
    lnor = interaction.avg_comparisons(variables="contact", comparison="lnor")
    odds = lambda p: p / (1 - p)  # noqa: E731
    np.testing.assert_allclose(
        lnor["estimate"], np.log(odds(hi["estimate"]) / odds(lo["estimate"]))
    )
    assert lnor["contrast"].iloc[0] == "ln(odds(yes) / odds(no))"
    custom = interaction.avg_comparisons(variables="contact", comparison=lambda h, lo: h - lo)
    difference = interaction.avg_comparisons(variables="contact")
    np.testing.assert_allclose(custom["estimate"], difference["estimate"], atol=1e-14)
    np.testing.assert_allclose(custom["std_error"], difference["std_error"], rtol=1e-7)


def test_sequential_and_adjacent_families_have_every_verb(wine):
    for family in ("sratio", "cratio", "acat"):
        fit = OrdinalModel.from_formula("rating ~ temp + contact", wine, family=family).fit()
        table = fit.avg_comparisons(variables="contact", type="exceedance")
        assert len(table) == 4 and table["std_error"].gt(0).all()
        assert len(fit.avg_slopes()) == 10


# -- hypotheses ----------------------------------------------------------------------


def test_hypothesis_string_on_estimates(interaction):
    table = interaction.avg_predictions(by="temp", type="expected")
    tested = interaction.avg_predictions(by="temp", type="expected", hypothesis="b2 - b1 = 0")
    np.testing.assert_allclose(tested["estimate"], np.diff(table["estimate"]))
    assert tested["term"].iloc[0] == "b2 - b1 = 0"
    pairwise = interaction.avg_predictions(by="temp", type="expected", hypothesis="pairwise")
    np.testing.assert_allclose(pairwise["estimate"], -tested["estimate"])
    np.testing.assert_allclose(pairwise["std_error"], tested["std_error"])
    assert pairwise["term"].iloc[0] == "cold - warm"  # earlier minus later, as R


def test_hypothesis_keywords_work_within_each_level(interaction):
    table = interaction.avg_predictions(by="temp", hypothesis="reference")
    assert len(table) == 5 and list(table["group"]) == ["1", "2", "3", "4", "5"]


def test_hypothesis_matrix(interaction):
    table = interaction.avg_predictions(by="temp", type="expected")
    matrix = np.array([[1.0, 0.5], [-1.0, 0.5]])
    tested = interaction.avg_predictions(by="temp", type="expected", hypothesis=matrix)
    np.testing.assert_allclose(tested["estimate"], matrix.T @ table["estimate"].to_numpy())


def test_hypotheses_on_the_parameters(interaction):
    table = interaction.hypotheses("temp[T.warm] = 0")
    assert table["statistic"].iloc[0] == pytest.approx(interaction.zvalues["temp[T.warm]"])
    ratio = interaction.hypotheses("b5 / b6 = 1")
    b = interaction.params.to_numpy()
    grad = np.zeros(b.size)
    grad[4], grad[5] = 1 / b[5], -b[4] / b[5] ** 2
    se = np.sqrt(grad @ interaction.cov_params().to_numpy() @ grad)
    assert ratio["estimate"].iloc[0] == pytest.approx(b[4] / b[5] - 1)
    assert ratio["std_error"].iloc[0] == pytest.approx(se, rel=1e-12)


def test_datagrid_is_exported():
    assert ordstats.datagrid is datagrid


# -- get_margeff delegates to the margins code -------------------------------------------


def test_get_margeff_is_the_analytic_average_slope(ucla):
    # get_margeff differentiates along a unit change of the column, avg_slopes along the
    # design's central difference in the variable (exact for linear columns up to rounding,
    # ~1e-12); the finite differences get_margeff used before erred by ~1e-10 and ~1e-8 (SEs)
    effects = ucla.get_margeff()
    table = ucla.avg_slopes(variables=["pared", "public", "gpa"])
    ours = table.set_index(["term", "group"])
    for name in ("pared", "public", "gpa"):
        np.testing.assert_allclose(
            effects.margeff.loc[name], ours.loc[name]["estimate"], rtol=2e-11, atol=1e-15
        )
        np.testing.assert_allclose(
            effects.margeff_se.loc[name], ours.loc[name]["std_error"], rtol=1e-10
        )


def test_get_margeff_dummy_changes_are_the_discrete_contrasts(ucla):
    effects = ucla.get_margeff(dummy=True)
    table = ucla.avg_comparisons(variables={"pared": [0, 1]}).set_index("group")
    np.testing.assert_allclose(effects.margeff.loc["pared"], table["estimate"], rtol=1e-12)
    np.testing.assert_allclose(effects.margeff_se.loc["pared"], table["std_error"], rtol=1e-11)


# -- every fitting path ------------------------------------------------------------------


def test_chunked_and_dask_fits_give_the_in_memory_numbers_with_newdata(wine):
    formula = "rating ~ temp + contact"
    memory = OrdinalModel.from_formula(formula, wine).fit()
    chunked = OrdinalModel.from_formula(formula, wine, chunksize=10).fit()
    expected = memory.avg_comparisons(variables="contact")
    got = chunked.avg_comparisons(wine, variables="contact")
    np.testing.assert_allclose(got["estimate"], expected["estimate"], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(got["std_error"], expected["std_error"], rtol=1e-7)
    with pytest.raises(OrdstatsError, match=r"read in chunks .* use the avg_ verb"):
        chunked.predictions()
    dd = pytest.importorskip("dask.dataframe")
    lazy = OrdinalModel.from_formula(formula, dd.from_pandas(wine, npartitions=3)).fit()
    got = lazy.avg_comparisons(wine, variables="contact")
    np.testing.assert_allclose(got["estimate"], expected["estimate"], rtol=1e-9, atol=1e-12)


def test_a_pickled_fit_needs_newdata(interaction, wine):
    import pickle

    again = pickle.loads(pickle.dumps(interaction))
    with pytest.raises(OrdstatsError, match=r"not kept .* pass the rows as newdata"):
        again.avg_predictions()
    np.testing.assert_allclose(
        again.avg_predictions(wine, by="temp")["estimate"],
        interaction.avg_predictions(by="temp")["estimate"],
    )


def test_hypothesis_names_match_whole_parameter_names_only(wine):
    data = wine.assign(x=np.linspace(0.1, 1.0, len(wine)))
    fit = OrdinalModel.from_formula("rating ~ x + temp", data).fit()
    table = fit.hypotheses("exp(x) = 1")
    assert table["estimate"].iloc[0] == pytest.approx(np.exp(fit.params["x"]) - 1)


def test_an_offset_given_as_values_follows_the_rows(wine):
    offset = np.linspace(-1.0, 1.0, len(wine))
    fit = OrdinalModel.from_formula("rating ~ temp", wine, offset=offset).fit()
    by_temp = fit.avg_predictions(by="temp")
    expected = fit.predict().groupby(wine["temp"], observed=True).mean()
    np.testing.assert_allclose(by_temp["estimate"], expected.to_numpy().T.ravel())
    grid = datagrid(fit, temp=["cold"])
    assert grid["(offset)"].iloc[0] == pytest.approx(0.0, abs=1e-12)  # the mean offset
    cold = wine.iloc[[0]].assign(temp=wine["temp"].iloc[[0]])
    np.testing.assert_allclose(
        fit.predictions(grid)["estimate"], fit.predict(cold, offset=0.0).to_numpy().ravel()
    )


def test_wts_can_name_the_fit_weights_column(housing):
    fit = OrdinalModel.from_formula("Sat ~ Infl + Type + Cont", housing, weights="Freq").fit()
    weighted = fit.avg_predictions(wts="Freq")
    prob = fit.predict().to_numpy()
    freq = housing["Freq"].to_numpy()
    np.testing.assert_allclose(weighted["estimate"], freq @ prob / freq.sum())


def test_penalised_fits(wine):
    model = OrdinalModel.from_formula("rating ~ temp + contact", wine)
    firth = model.fit(penalty="firth").avg_comparisons(variables="contact")
    assert firth["std_error"].gt(0).all()
    with pytest.warns(StandardErrorWarning, match="without standard errors"):
        lasso = model.fit_regularized(alpha=0.05, L1_wt=1.0).avg_comparisons(variables="contact")
    assert lasso["estimate"].notna().all() and lasso["std_error"].isna().all()
    assert lasso["conf_low"].isna().all()
    assert "not available" in str(lasso.summary())


def test_get_margeff_says_when_it_differentiates_dummies(ucla):
    text = str(ucla.get_margeff(at="mean").summary())
    assert "0/1 column(s) pared, public were differentiated as if continuous" in text
    assert "differentiated" not in str(ucla.get_margeff(dummy=True).summary())


@pytest.mark.parametrize(
    "options",
    [
        {"nominal": "~ x", "scale": "~ x"},
        {"family": "acat", "nominal": "~ x"},
        {"family": "sratio", "reverse": True},
        {"link": "Aranda-Ordaz"},
    ],
)
def test_tiny_step_contrast_is_the_slope_for_every_kind_of_fit(wine, options):
    data = wine.assign(x=np.random.default_rng(5).normal(size=len(wine)))
    formula = "rating ~ temp" if "nominal" in options else "rating ~ temp + x"
    fit = OrdinalModel.from_formula(formula, data, **options).fit()
    step = 1e-6
    contrast = fit.avg_comparisons(variables={"x": step}, type="cumprob")
    slope = fit.avg_slopes(variables="x", type="cumprob")
    np.testing.assert_allclose(contrast["estimate"] / step, slope["estimate"], atol=1e-8)
    np.testing.assert_allclose(contrast["std_error"] / step, slope["std_error"], atol=1e-7)


def test_an_index_that_repeats_labels_gives_the_margins_of_the_rows_used(wine):
    """With a row dropped for a missing value, the fitted rows were selected by label,
    so a repeated label brought in both rows: averages over 22 rows of 11 (off by 0.4%),
    by= and wts= columns misread, comparisons and slopes a numpy broadcasting error."""
    rng = np.random.default_rng(0)
    unique = wine.assign(x=rng.normal(size=len(wine)), g=np.arange(len(wine)) % 4)
    unique.loc[2, "x"] = np.nan
    repeated = unique.set_axis(np.arange(len(unique)) % 36)  # every label twice
    fits = []
    for frame in (unique, repeated):
        with pytest.warns(MissingDataWarning, match="1 of 72 rows"):
            fits.append(OrdinalModel.from_formula("rating ~ x + contact", frame).fit())
    calls = [
        lambda res: res.avg_predictions(type="expected"),
        lambda res: res.avg_predictions(by="g"),
        lambda res: res.avg_predictions(wts="g"),
        lambda res: res.avg_comparisons(variables="contact"),
        lambda res: res.avg_slopes(variables="x"),
        lambda res: res.emmeans("contact").summary_frame(),
        lambda res: datagrid(res)[["x"]],
        lambda res: res.get_robustcov_results("cluster", {"groups": "g"}).bse,
    ]
    for call in calls:
        got, expected = (pd.DataFrame(call(res)).select_dtypes("number") for res in fits)
        np.testing.assert_allclose(got.to_numpy(), expected.to_numpy(), rtol=1e-12)


def test_a_predictor_also_in_the_offset_term_is_one_column(wine):
    """``z + offset(np.log(z))``: z was read twice into the fitted rows, so the verbs
    without newdata failed (a TypeError, an AttributeError, "newdata has more than one
    column named 'z'").  The slope is the average derivative of the expected rating."""
    rng = np.random.default_rng(5)
    frame = wine.assign(x=rng.normal(size=len(wine)), z=rng.uniform(1, 3, size=len(wine)))
    res = OrdinalModel.from_formula("rating ~ x + z + offset(np.log(z))", frame).fit()
    assert list(res.margins_data().columns) == ["x", "z"]
    step = 1e-5

    def mean_expected(shift: float) -> float:
        moved = frame.assign(z=frame["z"] + shift)
        return float(res.predict(moved, which="expected").mean())

    expected = (mean_expected(step) - mean_expected(-step)) / (2 * step)
    got = res.avg_slopes(variables="z", type="expected")
    assert got["estimate"].iloc[0] == pytest.approx(expected, rel=1e-6)
    assert np.isfinite(res.avg_comparisons(variables="z")["estimate"]).all()
    assert len(res.avg_predictions()) == len(res.model.levels)


def test_log_odds_ratios_need_probabilities_and_nan_estimates_have_nan_errors(interaction):
    """Before: lnor of expected ratings was NaN with a standard error of 0.067, and
    lnratio of linear predictors of opposite signs NaN with a finite error."""
    with pytest.raises(OrdstatsError, match=r"comparison='lnor' is the log odds ratio"):
        interaction.avg_comparisons(variables="contact", comparison="lnor", type="expected")
    table = interaction.avg_comparisons(variables="contact", comparison="lnratio", type="linear")
    estimate, error = table["estimate"].to_numpy(), table["std_error"].to_numpy()
    assert np.array_equal(np.isnan(estimate), np.isnan(error)) and np.isnan(estimate).any()
    odds = interaction.avg_comparisons(variables="contact", comparison="lnor")
    assert np.isfinite(odds[["estimate", "std_error"]].to_numpy()).all()


def test_a_predictor_named_group_is_not_mistaken_for_the_response_level(wine):
    """Before: by='group' silently averaged over the predictor 'group' (4 rows of the
    response levels for 2 x 5), and per-row tables raised pandas' 'cannot insert group'."""
    res = OrdinalModel.from_formula("rating ~ group", wine.rename(columns={"temp": "group"})).fit()
    for call in (
        lambda: res.avg_predictions(by="group"),
        lambda: res.avg_slopes(by=["group"], type="expected"),
    ):
        with pytest.raises(OrdstatsError, match=r"a column named 'group'.*by='group' is ambig"):
            call()
    for verb in (res.predictions, res.comparisons):
        with pytest.raises(OrdstatsError, match=r"would hold two of them; rename that column"):
            verb()
    expected = res.predictions(type="expected")  # one value per row: no level column
    assert list(expected["group"]) == list(wine["temp"])


@pytest.mark.parametrize("name", ["term", "contrast", "rowid", "estimate", "std_error", "conf_low"])
def test_a_column_named_like_a_table_column_is_refused(wine, name):
    """Before: a predictor named 'term' or 'contrast' crashed comparisons with numpy's
    UFuncTypeError, and one named 'estimate', 'rowid', 'std_error', ... came back in the
    tables with the estimates' values in its place (as marginaleffects, such names are
    refused)."""
    data = wine.assign(**{name: np.linspace(-1, 1, len(wine))})
    res = OrdinalModel.from_formula(f"rating ~ temp + {name}", data).fit()
    for verb in (res.predictions, res.comparisons, res.slopes, res.avg_predictions):
        with pytest.raises(OrdstatsError, match=rf"a column named '{name}'.*overwrite its values"):
            verb()
    with pytest.raises(OrdstatsError, match=rf"a column named '{name}'"):
        res.predictions(newdata=data.head(3))
