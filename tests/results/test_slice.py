"""res.slice(): R ordinal's slice(fit), against R and on every kind of fit.

Reference: ``tests/r/slice.R`` (vendored in ``tests/data/reference/slice/``).
"""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest

from ordstats import OrdinalMixedModel, OrdinalModel, SurveyDesign, datasets
from ordstats.errors import OrdstatsError, SpecificationError

matplotlib.use("Agg")

REFERENCE = Path(__file__).parents[1] / "data" / "reference" / "slice"


def _reference(name: str) -> dict:
    return json.loads((REFERENCE / f"{name}.json").read_text())


def _wine(**options):
    return OrdinalModel.from_formula("rating ~ temp + contact", datasets.load("wine"), **options)


FITS = {
    "wine": (lambda: _wine().fit(), {}),
    "wine_lambda_grid": (lambda: _wine().fit(), {"parm": [1, 4], "lambda_": 2, "grid": 7}),
    "wine_names_noquad": (
        lambda: _wine().fit(),
        {"parm": ["contact[T.yes]", "1|2"], "grid": 5, "quad_approx": False},
    ),
    "housing_scale_probit": (
        lambda: OrdinalModel.from_formula(
            "Sat ~ Infl + Type",
            datasets.load("housing"),
            scale="~ Cont",
            weights="Freq",
            link="probit",
        ).fit(),
        {"grid": 9},
    ),
    "wine_equidistant_cloglog": (
        lambda: _wine(threshold="equidistant", link="cloglog").fit(),
        {"grid": 11},
    ),
}


@pytest.mark.parametrize("name", list(FITS))
def test_slices_equal_r_s(name):
    ref = _reference(name)
    fit, options = FITS[name]
    res = fit()
    np.testing.assert_allclose(res.params, ref["coef"], rtol=1e-6)
    table = res.slice(**options)
    assert list(dict.fromkeys(table["parameter"])) == [
        res.params.index[ref["names"].index(part["parameter"])] for part in ref["slices"]
    ]
    for part, (_, got) in zip(ref["slices"], table.groupby("parameter", sort=False), strict=True):
        np.testing.assert_allclose(got["value"], part["value"], rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(got["logLik"], part["logLik"], rtol=1e-6, atol=1e-8)
        if part["quad"] is None:
            assert "quad" not in got.columns
        else:
            np.testing.assert_allclose(got["quad"], part["quad"], rtol=1e-6, atol=1e-8)


def test_the_slices_peak_at_the_estimates_and_bend_as_the_quadratic_near_them():
    res = _wine().fit()
    table = res.slice(grid=101)
    for name, part in table.groupby("parameter"):
        middle = part.iloc[50]
        assert middle["value"] == pytest.approx(res.params[name])
        assert middle["logLik"] == pytest.approx(0.0, abs=1e-12)
        assert part["logLik"].max() <= 1e-9  # a maximum: no point above it
        near = part.iloc[48:53]
        np.testing.assert_allclose(near["logLik"], near["quad"], rtol=2e-2, atol=1e-6)


def test_a_slice_through_disordered_thresholds_is_minus_infinity():
    res = _wine().fit()
    table = res.slice("2|3", lambda_=40, grid=41)
    crossed = table["value"] <= res.params["1|2"]
    assert crossed.any() and np.isneginf(table.loc[crossed, "logLik"]).all()
    assert np.isfinite(table.loc[~crossed, "logLik"]).any()


def test_a_chunked_fit_slices_as_in_memory():
    memory = _wine().fit().slice(["temp[T.warm]"], grid=5)
    chunked = _wine(chunksize=20).fit().slice(["temp[T.warm]"], grid=5)
    pd.testing.assert_frame_equal(chunked, memory, rtol=1e-9)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"parm": "nope"}, r"'nope' is not a parameter of the model; choose from '1\|2'"),
        ({"parm": 6}, r"position 6 is out of range for 6 parameters"),
        ({"parm": []}, r"parm names no parameter"),
        ({"parm": [1, "2|3"]}, r"more than once"),
        ({"parm": [1.5]}, r"names or positions; got 1.5"),
        ({"parm": 2.0}, r"names or positions; got 2.0"),
        ({"lambda_": 0}, r"lambda_ must be a positive finite number; got 0"),
        ({"lambda_": np.inf}, r"lambda_ must be a positive finite number"),
        ({"grid": 0}, r"grid must be a number of points, at least 1; got 0"),
        ({"grid": "many"}, r"grid must be a number of points"),
        ({"quad_approx": "yes"}, r"quad_approx must be True or False"),
    ],
)
def test_bad_arguments_are_refused_clearly(options, message):
    res = _wine().fit()
    with pytest.raises(SpecificationError, match=message):
        res.slice(**options)


def test_fits_without_a_likelihood_to_slice_refuse_with_the_reason():
    wine = datasets.load("wine")
    penalised = _wine().fit_regularized(alpha=0.1)
    with pytest.raises(SpecificationError, match=r"slice\(\) needs maximum-likelihood estimates"):
        penalised.slice()
    mixed = OrdinalMixedModel.from_formula("rating ~ temp + (1|judge)", wine).fit()
    with pytest.raises(SpecificationError, match=r"R's slice\(\) has no clmm method"):
        mixed.slice()
    design = SurveyDesign(wine.assign(w=1.0 + (wine["judge"].cat.codes % 3)), weights="w")
    survey = OrdinalModel.from_formula("rating ~ temp", design=design).fit()
    with pytest.raises(SpecificationError, match=r"R's svyolr has no slice"):
        survey.plot_slice()
    slim = _wine().fit()
    slim.remove_data()
    with pytest.raises(OrdstatsError, match=r"slice\(\) needs the rows of the data"):
        slim.slice()


def test_plot_slice_draws_each_slice_and_its_quadratic():
    import matplotlib.pyplot as plt

    res = _wine().fit()
    table = res.slice(["temp[T.warm]", "1|2"], grid=9)
    axes = res.plot_slice(["temp[T.warm]", "1|2"], grid=9)
    assert len(axes) == 2
    for ax, (name, part) in zip(axes, table.groupby("parameter", sort=False), strict=True):
        curve, quad = ax.get_lines()[:2]
        np.testing.assert_allclose(curve.get_xdata(), part["value"])
        np.testing.assert_allclose(curve.get_ydata(), part["logLik"])
        np.testing.assert_allclose(quad.get_ydata(), part["quad"])
        assert ax.get_xlabel() == name
    plt.close(axes[0].figure)
    figure, given = plt.subplots(1, 2)
    assert list(res.plot_slice(["temp[T.warm]", "1|2"], axes=given, grid=9)) == list(given)
    with pytest.raises(OrdstatsError, match=r"axes must be 2 matplotlib Axes, one per parameter"):
        res.plot_slice(["temp[T.warm]", "1|2"], axes=given[0], grid=9)
    with pytest.raises(OrdstatsError, match=r"^each of axes must be a matplotlib Axes"):
        res.plot_slice(["temp[T.warm]", "1|2"], axes=["a", "b"], grid=9)
    with pytest.raises(OrdstatsError, match=r"^axes must be a matplotlib Axes .*got 'a'"):
        res.plot_slice(["temp[T.warm]"], axes="a", grid=9)
    plt.close(figure)
