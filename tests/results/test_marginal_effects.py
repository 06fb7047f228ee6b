"""get_margeff with statsmodels' at=, method=, atexog=, dummy=, count= and its summary.

The effects are checked against quantities computed another way: predictions on
changed data (discrete changes, counts, averages), the logistic density formula
``dP(Y = j)/dx = -beta [f(theta_j - eta) - f(theta_{j-1} - eta)]``, statsmodels'
``OrderedModel`` predictions, and a delta method differenced here.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.miscmodels.ordinal_model import OrderedModel

import ordstats
from ordstats.errors import NotFittedError, OrdstatsError, SpecificationError
from tests._numdiff import central_jacobian

F = ordstats.OrdinalModel.from_formula


@pytest.fixture(scope="module")
def arrays(wine):
    """An array model: a continuous x, a count c and the 0/1 column warm."""
    rng = np.random.default_rng(7)
    exog = pd.DataFrame(
        {
            "x": rng.normal(size=len(wine)),
            "c": rng.poisson(2.0, size=len(wine)).astype(float),
            "warm": (wine["temp"] == "warm").astype(float).to_numpy(),
        }
    )
    return exog, ordstats.OrdinalModel(wine["rating"], exog).fit()


def _logit_effects(params, X, k):
    """dP(Y = j)/dx_k per row of X for a logit location model (thresholds first)."""
    n_cut = len(params) - X.shape[1]
    theta = np.r_[-np.inf, params[:n_cut], np.inf]
    eta = X @ params[n_cut:]
    density = stats.logistic.pdf(theta[None, :] - eta[:, None])
    return -params[n_cut + k] * (density[:, 1:] - density[:, :-1])


def _logit_probabilities(params, X):
    n_cut = len(params) - X.shape[1]
    theta = np.r_[-np.inf, params[:n_cut], np.inf]
    return np.diff(stats.logistic.cdf(theta[None, :] - (X @ params[n_cut:])[:, None]), axis=1)


def test_at_mean_is_the_logistic_formula_at_the_mean_row(arrays):
    exog, res = arrays
    params = res.params.to_numpy()
    mean_row = exog.to_numpy().mean(axis=0)[None, :]
    me = res.get_margeff(at="mean")
    for k, name in enumerate(exog.columns):
        np.testing.assert_allclose(
            me.margeff.loc[name], _logit_effects(params, mean_row, k)[0], atol=1e-9
        )
    # delta method, differenced here from the formula
    jac = central_jacobian(lambda p: _logit_effects(p, mean_row, 0)[0], params, 1e-6)
    expected = np.sqrt(np.diag(jac @ res.cov_params().to_numpy() @ jac.T))
    np.testing.assert_allclose(me.margeff_se.loc["x"], expected, rtol=1e-5)


@pytest.mark.parametrize("method", ["eyex", "dyex", "eydx"])
def test_elasticities_at_the_mean(arrays, method):
    exog, res = arrays
    params = res.params.to_numpy()
    mean_row = exog.to_numpy().mean(axis=0)[None, :]
    dydx = _logit_effects(params, mean_row, 0)[0]
    prob = _logit_probabilities(params, mean_row)[0]
    x = mean_row[0, 0]
    expected = {"eyex": dydx * x / prob, "dyex": dydx * x, "eydx": dydx / prob}[method]
    me = res.get_margeff(at="mean", method=method)
    np.testing.assert_allclose(me.margeff.loc["x"], expected, rtol=1e-7)
    assert me.margeff_options["method"] == method
    assert (
        me.summary_frame().columns[0]
        == {
            "eyex": "d(lny)/d(lnx)",
            "dyex": "dy/d(lnx)",
            "eydx": "d(lny)/dx",
        }[method]
    )


def test_overall_elasticities_average_the_rows(arrays):
    exog, res = arrays
    params = res.params.to_numpy()
    X = exog.to_numpy()
    per_row = _logit_effects(params, X, 0) * X[:, [0]] / _logit_probabilities(params, X)
    me = res.get_margeff(method="eyex")
    np.testing.assert_allclose(me.margeff.loc["x"], per_row.mean(axis=0), rtol=1e-7)


def test_at_all_gives_each_row_and_averages_to_overall(arrays):
    exog, res = arrays
    rows = res.get_margeff(at="all").margeff
    assert rows.shape == (len(exog) * 3, 5) and rows.index.names == ["row", "regressor"]
    overall = rows.groupby(level="regressor", sort=False).mean()
    np.testing.assert_allclose(overall, res.get_margeff().margeff, atol=1e-12)
    X = exog.to_numpy()
    np.testing.assert_allclose(
        rows.xs("x", level="regressor"),
        _logit_effects(res.params.to_numpy(), X, 0),
        atol=1e-9,
    )
    with pytest.raises(OrdstatsError, match="without standard errors"):
        res.get_margeff(at="all").summary()


def test_median_and_zero(arrays):
    exog, res = arrays
    params = res.params.to_numpy()
    median = np.median(exog.to_numpy(), axis=0)[None, :]
    np.testing.assert_allclose(
        res.get_margeff(at="median").margeff.loc["x"],
        _logit_effects(params, median, 0)[0],
        atol=1e-9,
    )
    zero = np.zeros((1, 3))
    np.testing.assert_allclose(
        res.get_margeff(at="zero").margeff.loc["c"], _logit_effects(params, zero, 1)[0], atol=1e-9
    )


def test_dummy_and_count_are_discrete_changes(arrays):
    exog, res = arrays
    me = res.get_margeff(dummy=True, count=True)

    def change(column, low, high):
        return (
            (
                res.predict(exog=exog.assign(**{column: high}))
                - res.predict(exog=exog.assign(**{column: low}))
            )
            .to_numpy()
            .mean(axis=0)
        )

    np.testing.assert_allclose(me.margeff.loc["warm"], change("warm", 0.0, 1.0), atol=1e-12)
    np.testing.assert_allclose(
        me.margeff.loc["c"], change("c", exog["c"] - 1, exog["c"] + 1) / 2, atol=1e-12
    )
    # x stays a derivative; without dummy=True warm is a derivative too
    np.testing.assert_allclose(me.margeff.loc["x"], res.get_margeff().margeff.loc["x"])
    assert not np.allclose(res.get_margeff().margeff.loc["warm"], me.margeff.loc["warm"])


def test_factor_dummies_change_from_the_reference_level(housing, housing_res):
    # Infl has three levels: Medium and High are each compared with Low (before:
    # get_margeff took no dummy= at all)
    me = housing_res.get_margeff(dummy=True)
    weights = housing["Freq"].to_numpy() / housing["Freq"].sum()

    def average(level):
        prob = housing_res.predict(housing.assign(Infl=level)).to_numpy()
        return weights @ prob

    for level in ("Medium", "High"):
        np.testing.assert_allclose(
            me.margeff.loc[f"Infl[T.{level}]"], average(level) - average("Low"), atol=1e-12
        )
    assert me.margeff.loc["Type[T.Atrium]"].sum() == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("part", ["nominal", "scale"])
def test_factor_only_in_the_nominal_or_scale_formula_changes_as_one(housing, part):
    # before: each of Infl's indicators was set to 1 alone, so a row at High got
    # Medium and High at once (0.014 off for nominal, 1.5e-4 for scale)
    res = F("Sat ~ Type + Cont", housing, weights="Freq", **{part: "~ Infl"}).fit()
    me = res.get_margeff(dummy=True)
    weights = housing["Freq"].to_numpy() / housing["Freq"].sum()

    def average(level):
        return weights @ res.predict(housing.assign(Infl=level)).to_numpy()

    for level in ("Medium", "High"):
        np.testing.assert_allclose(
            me.margeff.loc[f"Infl[T.{level}]"], average(level) - average("Low"), atol=1e-12
        )


def test_dummy_standard_errors_are_the_delta_method(wine, wine_res):
    me = wine_res.get_margeff(dummy=True)
    X = wine_res.model.data.X

    def change(params):
        warm, cold = X.copy(), X.copy()
        warm[:, 0], cold[:, 0] = 1.0, 0.0
        diff = _logit_probabilities(params, warm) - _logit_probabilities(params, cold)
        return diff.mean(axis=0)

    params = wine_res.params.to_numpy()
    np.testing.assert_allclose(me.margeff.loc["temp[T.warm]"], change(params), atol=1e-12)
    jac = central_jacobian(change, params, 1e-6)
    expected = np.sqrt(np.diag(jac @ wine_res.cov_params().to_numpy() @ jac.T))
    np.testing.assert_allclose(me.margeff_se.loc["temp[T.warm]"], expected, rtol=1e-6)


def test_atexog_sets_a_regressor_first(arrays):
    exog, res = arrays
    by_name = res.get_margeff(atexog={"c": 3.0}).margeff
    by_position = res.get_margeff(atexog={1: 3.0}).margeff
    pd.testing.assert_frame_equal(by_name, by_position)
    X = exog.assign(c=3.0).to_numpy()
    np.testing.assert_allclose(
        by_name.loc["x"], _logit_effects(res.params.to_numpy(), X, 0).mean(axis=0), atol=1e-9
    )


def test_average_effects_match_statsmodels_ordered_model(wine):
    """statsmodels' OrderedModel has no get_margeff: difference its own predictions."""
    rng = np.random.default_rng(11)
    data = wine.assign(x=rng.normal(size=len(wine)))
    exog = pd.DataFrame({"warm": (data["temp"] == "warm").astype(float), "x": data["x"]})
    sm = OrderedModel(data["rating"], exog, distr="logit").fit(method="newton", disp=0)
    assert sm.mle_retvals["converged"]
    h = 1e-6
    up = sm.model.predict(sm.params, exog=exog.assign(x=exog["x"] + h).to_numpy())
    down = sm.model.predict(sm.params, exog=exog.assign(x=exog["x"] - h).to_numpy())
    warm = sm.model.predict(sm.params, exog=exog.assign(warm=1.0).to_numpy())
    cold = sm.model.predict(sm.params, exog=exog.assign(warm=0.0).to_numpy())
    ours = F("rating ~ warm + x", data.assign(warm=exog["warm"])).fit()
    me = ours.get_margeff(dummy=True)
    np.testing.assert_allclose(me.margeff.loc["x"], ((up - down) / (2 * h)).mean(0), atol=1e-6)
    np.testing.assert_allclose(me.margeff.loc["warm"], (warm - cold).mean(0), atol=1e-6)


def test_summary_has_a_table_per_level(wine_res):
    me = wine_res.get_margeff(dummy=True)
    text = str(me.summary(alpha=0.1))
    for level in wine_res.model.levels:
        assert f"rating={level}" in text
    assert "Method:" in text and "dydx" in text and "At:" in text and "overall" in text
    assert "[0.05" in text and "0.95]" in text
    frame = me.summary_frame(alpha=0.1)
    assert frame.loc[("temp[T.warm]", "2"), "dy/dx"] == pytest.approx(
        me.margeff.loc["temp[T.warm]", "2"]
    )
    assert f"{frame.loc[('temp[T.warm]', '2'), 'dy/dx']:.4f}" in text
    ci = me.conf_int(0.1)
    np.testing.assert_allclose(
        ci["upper"] - ci["lower"], 2 * 1.6448536 * frame["std err"], rtol=1e-6
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"at": "average"}, "at must be one of"),
        ({"method": "dy/dx"}, "method must be one of"),
        ({"dummy": "yes"}, "dummy must be True or False"),
        ({"dummy": True, "method": "eyex"}, "no meaning for a discrete change"),
        ({"count": True, "at": "zero"}, "not available with dummy=True or count=True"),
        ({"atexog": {"z": 1.0}}, "'z', which is not a regressor"),
        ({"atexog": {7: 1.0}}, "outside 0..1"),
        ({"atexog": [1.0]}, "atexog must be a dict"),
        ({"atexog": {0: float("nan")}}, r"atexog\[0\] must be a finite number; got nan"),
        ({"atexog": {0: "1"}}, r"atexog\[0\] must be a finite number; got '1'"),
    ],
)
def test_bad_options(wine_res, kwargs, message):
    with pytest.raises(SpecificationError, match=message):
        wine_res.get_margeff(**kwargs)


def test_after_remove_data_says_why(wine):
    res = F("rating ~ temp + contact", wine).fit()
    res.remove_data()
    with pytest.raises(NotFittedError, match=r"get_margeff\(\) needs the rows"):
        res.get_margeff()


def test_get_margeff_is_statas_margins_dydx_after_ologit_on_the_ucla_data():
    # Stata's `ologit apply pared public gpa` + `margins, dydx(*)` (every regressor as
    # continuous) and, with `i.pared i.public`, the discrete changes 0 -> 1: computed by an
    # independent delta method in R (tests/r/margins_ucla.R, on ordinal::clm's fit, whose
    # estimates are Stata's ologit ones: pared 1.047664, public -0.0586828, gpa 0.6157458)
    data = Path(__file__).resolve().parents[1] / "data"
    reference = json.loads((data / "reference" / "margins_ucla_clm.json").read_text())
    frame = pd.read_csv(data / "ologit_ucla.csv")
    levels = reference["levels"]
    frame["apply"] = pd.Categorical(frame["apply"], categories=levels, ordered=True)
    res = F("apply ~ pared + public + gpa", frame).fit()
    np.testing.assert_allclose(
        res.params[["pared", "public", "gpa"]], [1.047664, -0.0586828, 0.6157458], atol=1e-6
    )
    shape = (3, len(levels))
    continuous = res.get_margeff()
    assert list(continuous.margeff.index) == reference["regressors"]
    np.testing.assert_allclose(continuous.margeff, np.reshape(reference["dydx"], shape), rtol=1e-6)
    np.testing.assert_allclose(
        continuous.margeff_se, np.reshape(reference["dydx_se"], shape), rtol=1e-5
    )
    discrete = res.get_margeff(dummy=True)
    expected = np.reshape(reference["discrete"], (2, len(levels)))
    expected_se = np.reshape(reference["discrete_se"], (2, len(levels)))
    np.testing.assert_allclose(discrete.margeff.loc[["pared", "public"]], expected, rtol=1e-6)
    np.testing.assert_allclose(discrete.margeff_se.loc[["pared", "public"]], expected_se, rtol=1e-5)
    np.testing.assert_allclose(discrete.margeff.loc["gpa"], continuous.margeff.loc["gpa"])
