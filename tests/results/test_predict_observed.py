"""``predict(which="observed")``: each row's probability of its own level.

R's ``predict.clm`` gives it when ``newdata`` holds the response, and ``fitted()`` /
``predict(fit)`` for the fitted rows.  References: tests/r/observed_probabilities.R ->
tests/data/reference/observed_probabilities.json.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats.errors import MissingDataWarning, PredictionError

REFERENCE = json.loads(
    (Path(__file__).parents[1] / "data" / "reference" / "observed_probabilities.json").read_text()
)
MODELS = {
    "wine_interaction": ("wine", "rating ~ temp * contact", {}),
    "wine_nominal_scale_probit": (
        "wine",
        "rating ~ temp",
        {"nominal": "~ contact", "scale": "~ temp", "link": "probit"},
    ),
    "housing_weighted": (
        "housing",
        "Sat ~ Infl + Type + Cont",
        {"weights": "Freq", "levels": ["Low", "Medium", "High"]},
    ),
}


@pytest.fixture(scope="module")
def frames(wine, housing):
    return {"wine": wine, "housing": housing}


def _fit(case, frames):
    name, formula, kwargs = MODELS[case]
    data = frames[name]
    return data, ordstats.OrdinalModel.from_formula(formula, data, **kwargs).fit()


@pytest.mark.parametrize("case", MODELS)
def test_observed_probabilities_are_r_s(case, frames):
    data, res = _fit(case, frames)
    with_newdata = res.predict(data, which="observed")
    assert with_newdata.name == "observed" and with_newdata.index.equals(data.index)
    np.testing.assert_allclose(with_newdata, REFERENCE[case]["newdata"], rtol=1e-6)
    np.testing.assert_allclose(res.predict(which="observed"), REFERENCE[case]["fitted"], rtol=1e-6)


@pytest.mark.parametrize("case", MODELS)
def test_the_log_of_the_fitted_rows_adds_up_to_the_log_likelihood(case, frames):
    data, res = _fit(case, frames)
    weights = data["Freq"].to_numpy() if "Freq" in data else 1.0
    assert np.sum(weights * np.log(res.predict(which="observed"))) == pytest.approx(res.llf)


def test_chunked_fits_and_sources_give_the_same_rows(wine, tmp_path):
    _, memory = _fit("wine_interaction", {"wine": wine})
    chunked = ordstats.OrdinalModel.from_formula(
        "rating ~ temp * contact", wine, chunksize=20
    ).fit()
    expected = memory.predict(wine, which="observed")
    pd.testing.assert_series_equal(chunked.predict(which="observed"), expected, rtol=1e-9)
    path = tmp_path / "wine.parquet"
    wine.to_parquet(path, index=False)
    from_file = memory.predict(str(path), which="observed")
    np.testing.assert_allclose(from_file.to_numpy(), expected.to_numpy(), rtol=1e-12)
    dd = pytest.importorskip("dask.dataframe")
    lazy = memory.predict(dd.from_pandas(wine, npartitions=3), which="observed")
    pd.testing.assert_series_equal(lazy.compute(), expected)


def test_a_missing_response_gives_nan_and_other_rows_keep_theirs(wine):
    _, res = _fit("wine_interaction", {"wine": wine})
    rows = wine.head(6).copy()
    rows["rating"] = rows["rating"].astype(object)
    rows.loc[rows.index[2], "rating"] = None
    with pytest.warns(MissingDataWarning, match=r"1 row\(s\) of newdata \(2\) have a missing"):
        got = res.predict(rows, which="observed")
    assert np.isnan(got.iloc[2]) and np.isfinite(got.drop(got.index[2])).all()
    prob = res.predict(rows, which="prob")
    for i in (0, 1, 3):
        assert got.iloc[i] == prob.iloc[i][str(wine["rating"].iloc[i])]


def test_a_response_missing_on_every_row_gives_nan_everywhere(wine):
    _, res = _fit("wine_interaction", {"wine": wine})
    with pytest.warns(MissingDataWarning, match=r"4 row\(s\) of newdata \(0, 1, 2, 3\)"):
        got = res.predict(wine.head(4).assign(rating=np.nan), which="observed")
    assert got.isna().all() and len(got) == 4


def test_the_response_is_matched_to_the_levels_by_label(wine):
    """An integer, a float or a text response gives the same rows ("2", 2, 2.0)."""
    _, res = _fit("wine_interaction", {"wine": wine})
    rows = wine.head(8)
    labels = rows["rating"].astype(str)
    expected = res.predict(rows.assign(rating=labels), which="observed")
    for values in (labels.astype(int), labels.astype(float)):
        pd.testing.assert_series_equal(
            res.predict(rows.assign(rating=values), which="observed"), expected
        )


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (lambda w: w.drop(columns="rating"), "needs the response column 'rating'"),
        (lambda w: w.assign(rating=w["rating"].astype(str).replace("5", "6")), r"value\(s\) '6'"),
    ],
)
def test_newdata_without_the_response_or_with_an_unknown_level_is_refused(wine, rows, message):
    _, res = _fit("wine_interaction", {"wine": wine})
    with pytest.raises(PredictionError, match=message):
        res.predict(rows(wine), which="observed")
