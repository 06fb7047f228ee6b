"""Nominal (partial proportional odds) and scale (location-scale) effects."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats.errors import (
    CollinearityWarning,
    ConvergenceWarning,
    FormulaError,
    PredictionWarning,
    SpecificationError,
)

OrdinalModel = ordstats.OrdinalModel


def _crossing_data(n: int = 300) -> pd.DataFrame:
    """Both end categories gain with w, so theta_1(w) rises while theta_2(w) falls."""
    rng = np.random.default_rng(1)
    w = rng.uniform(-3, 3, n)
    middle = rng.uniform(size=n) < 1 / (1 + np.exp(3 * w))
    y = np.where(middle, 1, np.where(rng.uniform(size=n) < 0.5, 0, 2))
    return pd.DataFrame({"y": y, "w": w})


def test_parameter_names_and_order(wine):
    res = OrdinalModel.from_formula(
        "rating ~ temp", wine, nominal="~ contact", scale="~ temp"
    ).fit()
    assert list(res.params.index) == [
        "1|2",
        "2|3",
        "3|4",
        "4|5",
        "1|2:contact[T.yes]",
        "2|3:contact[T.yes]",
        "3|4:contact[T.yes]",
        "4|5:contact[T.yes]",
        "temp[T.warm]",
        "scale:temp[T.warm]",
    ]
    assert res.df_model == 6


def test_nominal_formula_forms_are_equivalent(wine):
    a = OrdinalModel.from_formula("rating ~ temp", wine, nominal="~ contact").fit()
    b = OrdinalModel.from_formula("rating ~ temp", wine, nominal="contact").fit()
    pd.testing.assert_series_equal(a.params, b.params)
    with pytest.raises(FormulaError, match=r"must be one-sided"):
        OrdinalModel.from_formula("rating ~ temp", wine, nominal="rating ~ contact")
    with pytest.raises(FormulaError, match=r"'contcat'.*not a column"):
        OrdinalModel.from_formula("rating ~ temp", wine, scale="~ contcat")


def test_location_term_also_nominal_is_dropped(wine):
    with pytest.warns(
        CollinearityWarning,
        match=r"'contact\[T.yes\]' in the location formula is also a nominal effect",
    ):
        res = OrdinalModel.from_formula("rating ~ temp + contact", wine, nominal="~ contact").fit()
    assert "contact[T.yes]" not in res.params.index
    with pytest.raises(SpecificationError, match=r"collinear='drop'"):
        OrdinalModel.from_formula(
            "rating ~ temp + contact", wine, nominal="~ contact", collinear="raise"
        )


def test_location_term_also_nominal_under_symmetric2_says_it_is_estimable(wine):
    """Under threshold='symmetric2' a nominal effect moves only the spacings, so the
    location column is identified; R's clm drops it anyway, and so does ordstats, but
    the warning said the nominal effect already contained its location shift."""
    formula, options = "rating ~ temp + contact", {"nominal": "~ contact"}
    with pytest.warns(CollinearityWarning, match=r"not with threshold='symmetric2'"):
        OrdinalModel.from_formula(formula, wine, threshold="symmetric2", **options).fit()
    kept = OrdinalModel.from_formula(
        formula, wine, threshold="symmetric2", collinear="keep", **options
    ).fit()
    assert kept.converged and np.isfinite(kept.bse["contact[T.yes]"])


def test_nominal_model_generalises_the_location_model(wine):
    """Equal nominal effects gamma_j = -beta reproduce the location model exactly."""
    loc = OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    nom = OrdinalModel.from_formula("rating ~ temp", wine, nominal="~ contact")
    params = np.concatenate(
        [
            loc.params.iloc[:4],
            -np.repeat(loc.params["contact[T.yes]"], 4),
            [loc.params["temp[T.warm]"]],
        ]
    )
    assert nom.loglike(params) == pytest.approx(loc.llf, rel=1e-12)
    assert nom.fit().llf >= loc.llf


def test_thresholds_per_nominal_pattern(wine):
    res = OrdinalModel.from_formula("rating ~ temp", wine, nominal="~ contact").fit()
    theta = res.thresholds
    assert theta.index.names == ["pattern", "threshold"]
    base = theta.loc["contact[T.yes]=0", "estimate"].to_numpy()
    shifted = theta.loc["contact[T.yes]=1", "estimate"].to_numpy()
    np.testing.assert_allclose(base, res.params.iloc[:4])
    np.testing.assert_allclose(shifted - base, res.params.iloc[4:8])
    # delta method for alpha_j + gamma_j
    cov = res.cov_params().to_numpy()
    var = np.diag(cov)[:4] + np.diag(cov)[4:8] + 2 * np.diag(cov[:4, 4:8])
    np.testing.assert_allclose(theta.loc["contact[T.yes]=1", "std err"], np.sqrt(var))


def test_odds_ratios_of_nominal_effects(wine):
    res = OrdinalModel.from_formula("rating ~ temp", wine, nominal="~ contact").fit()
    table = res.odds_ratios()
    assert list(table.index) == ["temp[T.warm]", *res.params.index[4:8]]
    np.testing.assert_allclose(table["odds_ratio"].iloc[1:], np.exp(-res.params.iloc[4:8]))
    assert np.all(table["lower"] < table["odds_ratio"]) and np.all(
        table["odds_ratio"] < table["upper"]
    )


def test_scale_effects_change_the_spread(wine):
    res = OrdinalModel.from_formula("rating ~ temp + contact", wine, scale="~ temp").fit()
    warm = pd.DataFrame({"temp": ["warm"], "contact": ["no"]})
    cum = res.predict(warm, which="cumprob").to_numpy()[0]
    s = np.exp(res.params["scale:temp[T.warm]"])
    theta = res.thresholds["estimate"].to_numpy()
    expected = 1 / (1 + np.exp(-(theta - res.params["temp[T.warm]"]) / s))
    np.testing.assert_allclose(cum, expected, rtol=1e-12)


def test_structured_thresholds_with_nominal_effects(wine):
    res = OrdinalModel.from_formula(
        "rating ~ temp", wine, nominal="~ contact", threshold="equidistant"
    ).fit()
    assert list(res.params.index[:4]) == [
        "threshold.1",
        "spacing",
        "threshold.1:contact[T.yes]",
        "spacing:contact[T.yes]",
    ]
    theta = res.thresholds
    for pattern in ("contact[T.yes]=0", "contact[T.yes]=1"):
        diffs = np.diff(theta.loc[pattern, "estimate"])
        np.testing.assert_allclose(diffs, diffs[0])


def test_crossing_thresholds_make_the_fit_invalid():
    with pytest.warns(
        ConvergenceWarning,
        match=r"not all thresholds are increasing for \d+ "
        r"fitted row\(s\).*fit is invalid",
    ):
        res = OrdinalModel.from_formula("y ~ 1", _crossing_data(), nominal="~ w").fit()
    assert not res.converged and res.fit_info.crossing
    assert "Invalid fit" in res.summary().as_text()


def test_prediction_where_thresholds_cross_is_nan_with_a_warning(wine):
    df = _crossing_data()
    res = OrdinalModel.from_formula("y ~ 1", df[df["w"] < 0], nominal="~ w").fit()
    new = pd.DataFrame({"w": [-2.0, 3.0]}, index=["inside", "far"])
    with pytest.warns(PredictionWarning, match=r"cross for 1 row\(s\) \(far\)"):
        prob = res.predict(new)
    assert np.isnan(prob.loc["far"]).all()
    assert prob.loc["inside"].sum() == pytest.approx(1.0)


def test_arrays_interface_takes_nominal_and_scale(wine):
    res = OrdinalModel.from_formula(
        "rating ~ temp", wine, nominal="~ contact", scale="~ temp"
    ).fit()
    X = (wine[["temp"]] == "warm").astype(float).rename(columns={"temp": "warm"})
    W = (wine[["contact"]] == "yes").astype(float).rename(columns={"contact": "yes"})
    arr = OrdinalModel(wine["rating"], X, nominal=W, scale=X).fit()
    np.testing.assert_allclose(arr.params.to_numpy(), res.params.to_numpy(), rtol=1e-8)
    assert list(arr.params.index[4:6]) == ["1|2:yes", "2|3:yes"]
    assert arr.params.index[-1] == "scale:warm"


def test_summary_shows_each_block(wine):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        text = (
            OrdinalModel.from_formula("rating ~ temp", wine, nominal="~ contact", scale="~ temp")
            .fit()
            .summary()
            .as_text()
        )
    for block in (
        "Location coefficients",
        "Nominal effects",
        "Scale effects (log scale)",
        "Thresholds",
        "Nominal:",
        "~ contact",
        "Scale:",
        "~ temp",
    ):
        assert block in text
    assert text.index("Nominal effects") < text.index("Scale effects") < text.index("Thresholds")
