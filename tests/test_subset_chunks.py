"""R's subset= on data read in chunks: a DataFrame with chunksize=, a Dask DataFrame, files.

A DataFrame read in chunks is subset as in memory (it is in memory); a Dask
DataFrame partition by partition, by a Dask boolean Series or a query that
selects each row from its own values, which gives the rows the whole data
would; files (Parquet, CSV) chunk by chunk by such a query, reading the columns
it names beside the model's.  Selections that may need every row at once (a
function, a query calling ``x.mean()``) are refused, saying what to do.  The
fits equal the in-memory fit of the same subset.  (Spark:
tests/spark/test_spark_subset_contrasts.py.)
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from ordstats import OrdinalModel
from ordstats.errors import MissingDataWarning, SpecificationError
from tests._chunk_data import FORMULA, assert_same_fit, ratings

dd = pytest.importorskip("dask.dataframe")
LIMIT = 0.5


@pytest.fixture(scope="module")
def data():
    return ratings(900, seed=4)


SUBSETS = {
    "query": "x1 > -1 and f != 'e'",
    "missing values": "f.notna() and (x1 > -0.5 or x2.isna())",
    "caller's variable": "x1 < @LIMIT",
}


def _fit(formula, data, **options):
    with pytest.warns(MissingDataWarning):
        return OrdinalModel.from_formula(formula, data, weights="w", **options).fit()


@pytest.mark.parametrize("case", list(SUBSETS))
def test_subset_of_chunks_and_dask_fits_the_in_memory_rows(data, case):
    subset = SUBSETS[case]
    memory = _fit(FORMULA, data, subset=subset)
    chunked = _fit(FORMULA, data, subset=subset, chunksize=53)
    lazy = _fit(FORMULA, dd.from_pandas(data, npartitions=3), subset=subset)
    for fit in (chunked, lazy):
        assert_same_fit(fit, memory)


@pytest.mark.parametrize("case", list(SUBSETS))
@pytest.mark.parametrize("suffix", ["parquet", "csv"])
def test_subset_of_files_fits_the_in_memory_rows(data, case, suffix, tmp_path):
    """Before, files were refused: subset= 'selects rows of a DataFrame or a Dask DataFrame'."""
    subset = SUBSETS[case]
    directory = tmp_path / suffix
    directory.mkdir()
    for k, part in enumerate(np.array_split(np.arange(len(data)), 3)):
        rows = data.iloc[part]
        path = directory / f"part{k}.{suffix}"
        rows.to_parquet(path) if suffix == "parquet" else rows.to_csv(path, index=False)
    as_read = data if suffix == "parquet" else data.assign(g=data["g"].astype(str))  # CSV: text
    memory = _fit(FORMULA, as_read, subset=subset)
    assert_same_fit(_fit(FORMULA, str(directory), subset=subset, chunksize=47), memory)


def test_a_subset_of_files_reads_a_column_the_model_does_not_use(data, tmp_path):
    """The query's columns are read beside the model's and dropped after the selection."""
    frame = data.assign(site=np.where(np.arange(len(data)) % 3 == 0, "north", "south"))
    frame.to_parquet(tmp_path / "rated.parquet")
    memory = _fit(FORMULA, frame, subset="site == 'north'")
    files = _fit(FORMULA, str(tmp_path), subset="site == 'north'", chunksize=40)
    assert_same_fit(files, memory)
    assert memory.nobs < 0.5 * _fit(FORMULA, frame).nobs
    assert "subset=\"site == 'north'\"" in repr(files.model.evaluator.source)


def test_a_function_subset_of_a_dataframe_in_chunks_sees_every_row(data):
    # the whole DataFrame is in memory: a selection that reads all rows is fine
    def above_mean(frame):
        return frame["x1"] > frame["x1"].mean()

    memory = _fit(FORMULA, data, subset=above_mean)
    assert_same_fit(_fit(FORMULA, data, subset=above_mean, chunksize=61), memory)


def test_a_dask_boolean_series_subsets_a_dask_dataframe(data):
    lazy = dd.from_pandas(data, npartitions=3)
    memory = _fit(FORMULA, data, subset=data["x1"] > 0)
    assert_same_fit(_fit(FORMULA, lazy, subset=lazy["x1"] > 0), memory)


def test_predictions_of_a_subset_chunked_fit_are_of_its_rows(data):
    subset = "x1 > 0"
    memory = _fit(FORMULA, data, subset=subset)
    chunked = _fit(FORMULA, data, subset=subset, chunksize=70)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the fitted rows only: none with missing values
        predicted = chunked.predict()
    expected = memory.predict()
    pd.testing.assert_index_equal(predicted.index, expected.index)
    np.testing.assert_allclose(predicted, expected, rtol=1e-8)


@pytest.mark.parametrize(
    ("subset", "message"),
    [
        (lambda frame: frame["x1"] > 0, r"Dask boolean Series .* or a query.*got function"),
        ("x1 > x1.mean()", r"calls mean, which may read all rows at once"),
        (np.ones(900, dtype=bool), r"got ndarray"),
    ],
)
def test_dask_subsets_that_may_need_every_row_are_refused(data, subset, message):
    with pytest.raises(SpecificationError, match=message):
        OrdinalModel.from_formula(FORMULA, dd.from_pandas(data, npartitions=3), subset=subset)


def test_a_subset_chunked_fit_keeps_the_callers_name_for_the_data(data):
    with pytest.warns(MissingDataWarning):
        model = OrdinalModel.from_formula(FORMULA, data, subset="x1 > 0", chunksize=90)
    assert model.data_name == "data"


def test_predictions_of_a_subset_of_files_keep_the_rows_file_numbers(data, tmp_path):
    """A subset of Parquet files: the fitted rows numbered in file order, as the in-memory
    fit of the same rows labels them (before: numbered after the subset, 0, 1, ...)."""
    path = tmp_path / "rows.parquet"
    data.to_parquet(path, index=False)
    subset = "x1 > 0"
    memory = _fit(FORMULA, data, subset=subset)
    files = _fit(FORMULA, str(path), subset=subset, chunksize=70)
    for got, expected in [
        (files.predict(), memory.predict()),
        (files.fittedvalues, memory.fittedvalues),
        (files.resid_prob, memory.resid_prob),
        (files.get_prediction().predicted, memory.get_prediction().predicted),
    ]:
        pd.testing.assert_index_equal(got.index, expected.index)
        np.testing.assert_allclose(got, expected, rtol=1e-8)
