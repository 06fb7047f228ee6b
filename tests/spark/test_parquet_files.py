"""Spark DataFrames that only scan Parquet files: the tasks read the files with pyarrow.

A pass then skips the JVM's conversion of the rows; it must add the same rows,
converted as ``mapInPandas`` converts them, and give the fit of the same
DataFrame read through Spark (``spark.ordstats.readParquet`` false) and the
in-memory fit.  Any other plan (a filter here) is read through Spark.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ordstats
from ordstats.data.spark import CACHE_SETTING, READ_SETTING, SparkSource, read_setting
from ordstats.data.spark_files import file_scan, first_rows, read_group
from ordstats.errors import MissingDataWarning, SpecificationError
from tests._chunk_data import (
    FORMULA,
    assert_same_fit,
    spark_ratings,
    spark_setting,
    spilled_fits,
    write_parquet,
)


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return spark_ratings(2000, seed=11)


@pytest.fixture(scope="module")
def directory(frame, tmp_path_factory):
    path = tmp_path_factory.mktemp("parquet-files")
    write_parquet(frame, path, n_files=3)
    return path


def spark_reads(spark):
    """Passes inside the block read every DataFrame through Spark (``mapInPandas``)."""
    return spark_setting(spark, READ_SETTING, "false")


def fit_of(data, formula=FORMULA):
    with pytest.warns(MissingDataWarning):
        model = ordstats.OrdinalModel.from_formula(formula, data, weights="w")
    return model, model.fit()


def memory_fit(frame, formula=FORMULA):
    return fit_of(frame, formula)[1]


def test_a_parquet_scan_is_read_by_pyarrow_with_the_numbers_of_spark_and_memory(
    spark, frame, directory
):
    data = spark.read.parquet(str(directory))
    model, got = fit_of(data)
    assert model.evaluator.source.readers[0] == "pyarrow"
    with spark_reads(spark):
        through_spark_model, through_spark = fit_of(data)
    assert set(through_spark_model.evaluator.source.readers) == {"spark"}
    assert_same_fit(got, memory_fit(frame))
    assert_same_fit(got, through_spark, rtol=1e-12)
    # results after the fit read the files again, with the same numbers
    robust = got.get_robustcov_results("HC0")
    np.testing.assert_allclose(
        robust.bse, through_spark.get_robustcov_results("HC0").bse, rtol=1e-10
    )
    assert model.evaluator.source.readers[-1] == "pyarrow"


def test_a_filtered_frame_is_read_through_spark(spark, frame, directory):
    data = spark.read.parquet(str(directory)).filter("x1 > -1")
    assert file_scan(data, 2) is None
    model, got = fit_of(data)
    assert set(model.evaluator.source.readers) == {"spark"}
    assert_same_fit(got, memory_fit(frame[frame["x1"] > -1]))


def test_a_projection_of_columns_is_read_by_pyarrow(spark, frame, directory):
    data = spark.read.parquet(str(directory)).select("w", "y", "x1", "f")
    scan = file_scan(data, 2)
    assert scan is not None and scan.columns == ("w", "y", "x1", "f")
    model, got = fit_of(data, "y ~ x1 + f")
    assert model.evaluator.source.readers[0] == "pyarrow"
    assert_same_fit(got, memory_fit(frame, "y ~ x1 + f"))
    # a computed or renamed column is not a plain scan
    assert file_scan(data.withColumnRenamed("x1", "z"), 2) is None


def test_files_with_other_column_orders_types_and_no_rows(spark, frame, tmp_path):
    """``y`` is int32 in one file and double (columns reversed) in another; one has no rows."""
    parts = np.array_split(np.arange(len(frame)), 2)
    first, second = frame.iloc[parts[0]], frame.iloc[parts[1]]
    first.assign(y=first["y"].astype("int32")).to_parquet(tmp_path / "a.parquet", index=False)
    second = second.assign(y=second["y"].astype(float))
    second[list(reversed(second.columns))].to_parquet(tmp_path / "b.parquet", index=False)
    frame.iloc[:0].to_parquet(tmp_path / "c.parquet", index=False)
    schema = spark.read.parquet(str(tmp_path / "b.parquet")).schema
    data = spark.read.schema(schema).parquet(str(tmp_path))
    scan = file_scan(data, 4)
    assert scan is not None
    assert [path.rsplit("/", 1)[1] for group in scan.groups for path, _ in group] == [
        "a.parquet",
        "b.parquet",
    ]
    model, got = fit_of(data)
    assert model.evaluator.source.readers[0] == "pyarrow"
    assert_same_fit(got, memory_fit(frame))
    # a file storing a column in a type Spark's does not widen to exactly: Spark reads
    second.assign(x1=second["x1"].astype(str)).to_parquet(tmp_path / "b.parquet", index=False)
    assert file_scan(spark.read.schema(schema).parquet(str(tmp_path)), 4) is None


def test_chunks_are_converted_as_map_in_pandas_converts_them(spark, tmp_path):
    table = pa.table(
        {
            "i": pa.array([1, None, 3, 4], pa.int32()),
            "l": pa.array([1, 2, 3, 4], pa.int64()),
            "b": pa.array([True, None, False, True]),
            "s": pa.array(["a", None, "c", "d"]),
            "f": pa.array([1.5, None, 2.0, 0.5], pa.float32()),
            "d": pa.array([1.5, np.nan, None, 3.0]),
            "c": pa.array(["x", "y", None, "x"]).dictionary_encode(),
        }
    )
    pq.write_table(table, tmp_path / "x.parquet")
    data = spark.read.parquet(str(tmp_path))

    def pickled(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for batch in batches:
            yield pd.DataFrame({"p": [pickle.dumps(batch)]})

    (row,) = data.mapInPandas(pickled, "p binary").collect()
    expected = pickle.loads(row[0])
    scan = file_scan(data, 2)
    assert scan is not None
    (got,) = list(read_group(scan, 0, 100))
    pd.testing.assert_frame_equal(got, expected)
    pd.testing.assert_frame_equal(first_rows(scan, 3), expected.iloc[:3])


def test_the_read_setting(spark, directory):
    assert read_setting(spark)
    with spark_reads(spark):
        assert not read_setting(spark)
    with (
        spark_setting(spark, READ_SETTING, "sometimes"),
        pytest.raises(SpecificationError, match="must be 'auto' or 'false'"),
    ):
        SparkSource(spark.read.parquet(str(directory)), 1000).first_chunk()


def test_a_parquet_fit_spills_no_chunks_and_reads_the_row_groups_again(spark, directory):
    """The first pass keeps no copy of the chunks pyarrow read: the summary pass reads the
    same row groups again (and keeps the arrays), with the numbers of a fit without cache."""
    data = spark.read.parquet(str(directory))
    with pytest.warns(MissingDataWarning):
        model = ordstats.OrdinalModel.from_formula(FORMULA, data, weights="w")
    source = model.evaluator.source
    tasks = source.cache_log[0][1]
    assert source.readers == ["pyarrow"] and source.cache_log[1:] == [(tasks, 0)]
    (fit_dir,) = spilled_fits(spark)
    assert list(fit_dir.glob("partition-*/chunk-*")) == []
    assert len(list(fit_dir.glob("partition-*/arrays-*-complete"))) == tasks
    fit = model.fit()
    assert source.cache_log[1:] == [(tasks, 0)] * (model.evaluator.n_passes - 1)
    assert source.readers == ["pyarrow"]  # the later passes were cached ones
    assert spilled_fits(spark) == []
    with spark_setting(spark, CACHE_SETTING, "false"):
        uncached = fit_of(data)[1]
    np.testing.assert_array_equal(fit.params, uncached.params)
    np.testing.assert_array_equal(fit.cov_params(), uncached.cov_params())
    assert fit.llf == uncached.llf
