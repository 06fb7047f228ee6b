"""``get_prediction(which="linear" | "linear.predictor")``: linear predictors with SEs.

``"linear.predictor"`` is R's ``predict.clm(type = "linear.predictor", se.fit = TRUE,
interval = TRUE)``: eta1 and eta2 at each row's level.  R puts ``+-1e5`` (less ``x'beta``)
beyond the end cut-points, ordstats ``+-inf`` with standard error 0.  ``"linear"`` is
statsmodels' ``x'beta`` with the exact delta-method SE.  References:
tests/r/linear_predictor.R -> tests/data/r/linear_predictor.json.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats.errors import MissingDataWarning, PredictionError
from tests._chunk_data import FORMULA, ratings

REFERENCE = json.loads(
    (Path(__file__).parents[1] / "data" / "r" / "linear_predictor.json").read_text()
)
MODELS = {
    "wine": ("rating ~ temp + contact", {}),
    "wine_nominal_scale_probit": (
        "rating ~ temp",
        {"nominal": "~ contact", "scale": "~ temp", "link": "probit"},
    ),
}
R_END = 1e4  # R's ends are +-1e5 shifted by the linear predictor


def _fit(case, wine):
    formula, kwargs = MODELS[case]
    return ordstats.OrdinalModel.from_formula(formula, wine, **kwargs).fit()


def _r_values(reference, name):
    """R's column with its +-1e5 ends as +-inf."""
    values = np.asarray(reference[name], dtype=float)
    return np.where(np.abs(values) > R_END, np.sign(values) * np.inf, values)


@pytest.mark.parametrize("case", MODELS)
def test_eta1_eta2_with_ses_and_intervals_are_r_s(case, wine):
    reference = REFERENCE[case]
    got = _fit(case, wine).get_prediction(wine, which="linear.predictor")
    assert list(got.predicted.columns) == ["eta1", "eta2"]
    lower, upper = got.conf_int(alpha=0.1)
    for column in ("eta1", "eta2"):
        number = column[-1]
        expected = _r_values(reference, column)
        np.testing.assert_allclose(got.predicted[column], expected, rtol=1e-6, atol=1e-6)
        finite = np.isfinite(expected)
        # R's SE at an end is that of its placeholder -+1e5 - x'beta; an end is no estimate
        se = got.se[column].to_numpy()
        np.testing.assert_allclose(
            se[finite], np.asarray(reference[f"se_{column}"])[finite], rtol=1e-4
        )
        assert (se[~finite] == 0).all() and (~finite).any()
        for limits, r_name in ((lower, "lwr"), (upper, "upr")):
            r_limits = _r_values(reference, f"{r_name}{number}")
            np.testing.assert_allclose(limits[column], r_limits, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("case", MODELS)
def test_without_newdata_the_fitted_rows_give_the_same(case, wine):
    res = _fit(case, wine)
    expected = res.get_prediction(wine, which="linear.predictor").summary_frame()
    pd.testing.assert_frame_equal(
        res.get_prediction(which="linear.predictor").summary_frame(), expected
    )


@pytest.mark.parametrize("case", MODELS)
def test_new_rows_without_the_response_give_every_cut_point(case, wine):
    reference = REFERENCE[case]
    got = _fit(case, wine).get_prediction(
        wine[["temp", "contact"]].head(6), which="linear.predictor"
    )
    assert list(got.predicted.columns) == ["1", "2", "3", "4"]
    np.testing.assert_allclose(got.predicted, reference["bare_eta1"], rtol=1e-6)
    np.testing.assert_allclose(got.se, reference["bare_se_eta1"], rtol=1e-4)


@pytest.mark.parametrize("case", MODELS)
def test_linear_is_x_beta_with_its_exact_se(case, wine):
    reference = REFERENCE[case]
    res = _fit(case, wine)
    got = res.get_prediction(wine, which="linear")
    table = got.summary_frame(alpha=0.05)
    assert table.index.names == ["row", "quantity"] and table.columns[0] == "linear"
    # the values predict() gives (statsmodels' which="linear")
    np.testing.assert_allclose(table["linear"], res.predict(wine, which="linear"), rtol=1e-12)
    np.testing.assert_allclose(table["linear"], reference["xb"], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(table["se"], reference["se_xb"], rtol=1e-4, atol=1e-10)
    z = 1.959963984540054
    np.testing.assert_allclose(table["ci_upper"] - table["linear"], z * table["se"], rtol=1e-12)


def test_missing_responses_give_nan_with_a_warning(wine):
    res = _fit("wine", wine)
    rows = wine.head(4).copy()
    rows["rating"] = rows["rating"].astype(float)
    rows.loc[rows.index[1], "rating"] = np.nan
    with pytest.warns(MissingDataWarning, match="linear.predictor"):
        got = res.get_prediction(rows, which="linear.predictor")
    assert (
        got.predicted.iloc[1].isna().all()
        and got.predicted.drop(index=rows.index[1]).notna().all().all()
    )


def test_mixed_fits_say_what_they_have(wine):
    res = ordstats.OrdinalMixedModel.from_formula("rating ~ temp + (1 | judge)", wine).fit()
    with pytest.raises(PredictionError, match="which must be 'prob' or 'cumprob'; got 'linear'"):
        res.get_prediction(which="linear")


@pytest.mark.parametrize("which", ["linear", "linear.predictor"])
@pytest.mark.parametrize("engine", ["chunksize", "dask"])
def test_fits_read_in_chunks_give_the_in_memory_linear_predictors(engine, which):
    """Of the fitted rows (predicted chunk by chunk) and of new rows given as a DataFrame."""
    data = ratings(300, seed=2, missing=False)
    memory = ordstats.OrdinalModel.from_formula(FORMULA, data).fit()
    if engine == "dask":
        dd = pytest.importorskip("dask.dataframe")
        source, options = dd.from_pandas(data, npartitions=3), {}
    else:
        source, options = data, {"chunksize": 41}
    chunked = ordstats.OrdinalModel.from_formula(FORMULA, source, **options).fit()
    for newdata in (None, data.iloc[::7]):
        expected = memory.get_prediction(newdata, which=which).summary_frame(alpha=0.1)
        got = chunked.get_prediction(newdata, which=which).summary_frame(alpha=0.1)
        pd.testing.assert_frame_equal(got, expected, rtol=1e-7, atol=1e-9)


def test_families_without_cut_points_point_to_predict(wine):
    res = ordstats.OrdinalModel.from_formula("rating ~ temp", wine, family="sratio").fit()
    with pytest.raises(PredictionError, match="not available for this fit: use predict"):
        res.get_prediction(which="linear")


def test_predict_points_r_users_to_eta1_eta2(wine_res, wine):
    with pytest.raises(
        ordstats.errors.OrdstatsError, match=r"get_prediction\(newdata, which='linear\.predictor'\)"
    ):
        wine_res.predict(wine, which="linear.predictor")
