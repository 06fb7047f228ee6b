"""get_prediction() without newdata on fits read in chunks, from files and Dask.

As ``predict()`` on such a fit, every row of the data is predicted chunk by
chunk (NaN where a predictor is missing, with one warning), with the same
index; the rows the fit used have the in-memory numbers.
"""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

from ordstats import OrdinalModel
from ordstats.errors import MissingDataWarning
from tests._chunk_data import FORMULA, ratings


@pytest.fixture(scope="module")
def data():
    return ratings(400, seed=11)


@pytest.fixture(scope="module")
def fits(data, tmp_path_factory):
    parquet = tmp_path_factory.mktemp("gp") / "rows.parquet"
    data.to_parquet(parquet, index=False)
    dd = pytest.importorskip("dask.dataframe")
    with pytest.warns(MissingDataWarning):
        memory = OrdinalModel.from_formula(FORMULA, data, weights="w").fit()
    sources = {
        "chunksize": (data, {"chunksize": 37}),
        "parquet": (str(parquet), {"chunksize": 50}),
        "dask": (dd.from_pandas(data, npartitions=3), {}),
    }
    streamed = {}
    for name, (source, options) in sources.items():
        with pytest.warns(MissingDataWarning):
            model = OrdinalModel.from_formula(FORMULA, source, weights="w", **options)
        streamed[name] = model.fit()
    return memory, streamed


def _predicted(fit, which):
    out = fit.predict(which=which)
    return out.compute() if hasattr(out, "compute") else out


@pytest.mark.parametrize("which", ["prob", "cumprob"])
@pytest.mark.parametrize("engine", ["chunksize", "parquet", "dask"])
def test_get_prediction_of_a_chunked_fit_predicts_its_rows(fits, data, engine, which):
    """The fitted rows, as in memory: before, every row of the data (NaN where a
    predictor was missing, a prediction where only the response was)."""
    memory, streamed = fits
    fit = streamed[engine]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no row with missing values is predicted
        got = fit.get_prediction(which=which)
        predicted = _predicted(fit, which)
    # the rows and index of predict() on the same fit, its numbers bit for bit
    pd.testing.assert_frame_equal(got.predicted, predicted, check_names=False)
    # the in-memory results (up to the fits' own 1e-10 agreement), with its index
    expected = memory.get_prediction(which=which).summary_frame(alpha=0.1)
    table = got.summary_frame(alpha=0.1)
    pd.testing.assert_index_equal(got.predicted.index, memory.predict(which=which).index)
    pd.testing.assert_frame_equal(table, expected, rtol=1e-8, atol=1e-12)
    lower, upper = got.conf_int(0.1)
    assert lower.shape == memory.get_prediction(which=which).se.shape
    fitted = got.predicted
    assert ((lower <= fitted) & (fitted <= upper)).to_numpy().all()


def test_get_prediction_of_a_chunked_fit_without_missing_rows_is_the_memory_one():
    data = ratings(300, seed=2, missing=False)
    memory = OrdinalModel.from_formula(FORMULA, data).fit()
    chunked = OrdinalModel.from_formula(FORMULA, data, chunksize=41).fit()
    expected = memory.get_prediction().summary_frame()
    pd.testing.assert_frame_equal(chunked.get_prediction().summary_frame(), expected, rtol=1e-8)


def test_get_prediction_of_no_rows_is_empty(fits, data):
    memory, _ = fits
    empty = memory.get_prediction(data.iloc[:0])
    assert empty.predicted.shape == (0, len(memory.model.levels))
    assert len(empty.summary_frame()) == 0
