"""Fits of Spark DataFrames equal the in-memory fit; predictions stay Spark DataFrames.

Every pass of a Spark fit is a Spark job (about a second on a local session), so
the tests share a few fits (module fixtures).  The test that stops the session
is the last one of this file; the session fixture starts a new one if needed.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats.errors import DataError, MissingDataWarning, PredictionError, ResponseError
from tests._chunk_data import FORMULA, assert_same_fit, ratings


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    """``ratings`` with ``g`` as text (Spark has no categorical columns) and a row id."""
    out = ratings(2000, seed=5)
    out["g"] = out["g"].astype(object)
    return out.assign(row=np.arange(len(out)))


@pytest.fixture(scope="module")
def memory_fit(frame):
    with pytest.warns(MissingDataWarning):
        return ordstats.OrdinalModel.from_formula(FORMULA, frame, weights="w").fit()


@pytest.fixture(scope="module")
def spark_frame(spark_session, frame):
    """``frame`` on Spark in two partitions, then an empty one (which adds nothing)."""
    spark = spark_session()
    rows = spark.createDataFrame(frame).repartition(2)
    empty = spark.createDataFrame(frame.iloc[:0], schema=rows.schema)
    return rows.union(empty).cache()


@pytest.fixture(scope="module")
def spark_fit(spark_frame):
    with pytest.warns(MissingDataWarning, match="rows have missing"):
        model = ordstats.OrdinalModel.from_formula(FORMULA, spark_frame, weights="w")
    return model.fit()


def _comparable(summary: object) -> str:
    """A summary without the data's name and max|grad| (zero up to the order of sums)."""
    text = re.sub(r"^data: .*$", "", str(summary), flags=re.MULTILINE)
    return re.sub(r"max\|grad\|: +\S+", "", text)


def test_spark_fit_equals_in_memory(spark_fit, memory_fit):
    assert_same_fit(spark_fit, memory_fit)
    # levels, summary, then one pass per Newton evaluation
    assert spark_fit.model.evaluator.n_passes == 2 + spark_fit.niter + 1
    assert _comparable(spark_fit.summary()) == _comparable(memory_fit.summary())
    assert "data:    spark_frame" in str(spark_fit.summary())


def test_results_methods_on_spark_equal_in_memory(frame, spark_frame, spark_fit, memory_fit):
    np.testing.assert_allclose(spark_fit.pseudo_rsquared, memory_fit.pseudo_rsquared, rtol=1e-8)
    np.testing.assert_allclose(
        spark_fit.expected_covariance.matrix, memory_fit.expected_covariance.matrix, rtol=1e-8
    )
    # profile intervals: 31 passes (Spark jobs) for one parameter, two thirds of
    # this test's jobs, through the same chunked evaluator as Parquet and Dask
    # fits; tests/estimation/test_chunked_results.py compares them with memory
    wald = spark_fit.wald_test("x1 + x2 = 0")
    assert float(wald.statistic) == pytest.approx(
        float(memory_fit.wald_test("x1 + x2 = 0").statistic), rel=1e-8
    )
    smaller = "y ~ x1 + x2 + f"
    with pytest.warns(MissingDataWarning):
        small_spark = ordstats.OrdinalModel.from_formula(smaller, spark_frame, weights="w").fit()
        small_memory = ordstats.OrdinalModel.from_formula(smaller, frame, weights="w").fit()
    got, expected = (
        ordstats.lr_test(small_spark, spark_fit),
        ordstats.lr_test(small_memory, memory_fit),
    )
    assert got.statistic == pytest.approx(expected.statistic, rel=1e-8)
    assert got.df == expected.df == 2
    probit = spark_fit.model.with_changes(link="probit").fit()
    expected_vuong = ordstats.vuong_test(
        memory_fit, memory_fit.model.with_changes(link="probit").fit()
    )
    vuong = ordstats.vuong_test(spark_fit, probit)
    assert vuong.statistic == pytest.approx(expected_vuong.statistic, rel=1e-7)


def test_spark_predictions_stay_spark_frames(frame, spark_frame, spark_fit, memory_fit):
    complete = frame.dropna().reset_index(drop=True)
    scored = spark_fit.predict(spark_frame.dropna(), which="prob")
    assert type(scored).__module__.startswith("pyspark.sql")  # lazy: scored in the cluster
    levels = list(memory_fit.model.levels)
    assert scored.columns == [*spark_frame.columns, *levels]
    got = scored.toPandas().sort_values("row").reset_index(drop=True)
    pd.testing.assert_frame_equal(got[levels], memory_fit.predict(complete), rtol=1e-10)

    classes = spark_fit.predict(spark_frame.dropna(), which="class").toPandas()
    classes = classes.sort_values("row").reset_index(drop=True)
    expected = memory_fit.predict(complete, which="class")
    assert classes["class"].tolist() == expected.astype(int).tolist()

    # residuals of the fitted rows (before: every row of the source, NaN where not used)
    resid = spark_fit.resid_prob.toPandas().set_index("row")["resid_prob"].sort_index()
    used = memory_fit.resid_prob
    assert list(resid.index) == list(frame["row"][used.index])
    np.testing.assert_allclose(resid, used, rtol=1e-10)
    fitted = spark_fit.predict().toPandas().sort_values("row")
    assert list(fitted["row"]) == list(frame["row"][used.index])
    np.testing.assert_allclose(fitted[levels], memory_fit.predict(), rtol=1e-10)


def test_prediction_column_named_like_a_data_column_is_refused(spark_frame, spark_fit):
    clash = spark_frame.withColumnRenamed("row", "linear")
    with pytest.raises(PredictionError, match="'linear' are also columns of the Spark"):
        spark_fit.predict(clash, which="linear")


# -- bad input ----------------------------------------------------------------------


def test_text_response_without_levels_says_how_to_pass_them(spark, frame):
    labels = {1: "very low", 2: "low", 3: "mid", 4: "high", 5: "very high"}
    text = spark.createDataFrame(frame.assign(y=frame["y"].map(labels)))
    with pytest.raises(ResponseError, match=r"Spark DataFrame holds text labels.*levels=\["):
        ordstats.OrdinalModel.from_formula("y ~ x1", text)
    model = ordstats.OrdinalModel.from_formula("y ~ x1", text, levels=list(labels.values()))
    assert model.levels == list(labels.values())


def test_an_error_in_one_partition_names_it(spark, frame):
    bad = frame.assign(w=np.where(np.arange(len(frame)) == 1500, -1.0, frame["w"]))
    data = spark.createDataFrame(bad).repartition(2)
    with pytest.raises(DataError, match=r"weights must be non-negative.*\(in Spark partition \d\)"):
        ordstats.OrdinalModel.from_formula(FORMULA, data, weights="w")


def test_columns_missing_from_some_files_and_nan_responses_as_in_memory(spark, tmp_path):
    """Parquet files read with mergeSchema: a column a file lacks is null in its rows."""
    data = ratings(1200, seed=8).assign(g=lambda d: d["g"].astype(object))
    data["y"] = data["y"].astype(float)
    data.loc[[3, 700], "y"] = np.nan  # NaN, which Spark keeps apart from null
    first, second = data.iloc[:600], data.iloc[600:]
    first.to_parquet(tmp_path / "a.parquet", index=False)
    second.drop(columns="x2").to_parquet(tmp_path / "b.parquet", index=False)
    files = spark.read.option("mergeSchema", "true").parquet(str(tmp_path))
    # in memory: the rows of the file without x2 have it missing
    memory = pd.concat([first, second.assign(x2=np.nan)], ignore_index=True)
    warned = r"have missing or non-finite values in 'y' \(2\), 'f' \(10\), 'x2' \(611\)"
    with pytest.warns(MissingDataWarning, match=warned):
        expected = ordstats.OrdinalModel.from_formula(FORMULA, memory).fit()
    with pytest.warns(MissingDataWarning, match=warned):
        got = ordstats.OrdinalModel.from_formula(FORMULA, files).fit()
    assert_same_fit(got, expected)


def test_parquet_files_spark_cannot_read_together_are_a_clear_error(spark, tmp_path):
    """x1 stored as int64 in one file and double in another: Spark's reader fails on
    the directory (its own toPandas() too), and the raw Py4JJavaError escaped the fit;
    the message now says why and which readers take such files."""
    rng = np.random.default_rng(0)
    data = pd.DataFrame({"y": rng.integers(1, 4, 40), "x1": rng.integers(0, 9, 40)})
    data.iloc[:20].to_parquet(tmp_path / "a.parquet", index=False)
    data.iloc[20:].astype({"x1": float}).to_parquet(tmp_path / "b.parquet", index=False)
    files = spark.read.parquet(str(tmp_path))
    with pytest.raises(DataError, match="Spark cannot read these Parquet files together"):
        ordstats.OrdinalModel.from_formula("y ~ x1", files).fit()


def test_separation_is_named_on_spark_as_in_memory(spark):
    from tests.estimation.test_chunked_warnings import _separation_messages, separated_ratings

    frame = separated_ratings()
    memory = _separation_messages(frame)
    got = _separation_messages(spark.createDataFrame(frame), levels=[1, 2, 3])
    assert memory[0].startswith("SeparationWarning:")
    assert [m for m in got if "PySpark does not yet" not in m] == memory


def test_a_session_that_stops_during_the_fit_is_a_clear_error(spark, frame):
    """Last test of the file: it stops the shared session (a later test gets a new one).

    A session stopped before a fit, or before predicting from a fit, gave a raw
    PySparkRuntimeError (the first rows and the fitted rows were selected outside
    the check)."""
    data = spark.createDataFrame(frame).repartition(2)
    with pytest.warns(MissingDataWarning):
        fitted = ordstats.OrdinalModel.from_formula(FORMULA, data, weights="w").fit()
    with pytest.warns(MissingDataWarning):
        model = ordstats.OrdinalModel.from_formula(FORMULA, data, weights="w")
    evaluate = model.evaluator.evaluate

    def stop_after_one_pass(params, **kw):
        if model.evaluator.n_passes >= 3:  # levels, summary, first Newton pass
            spark.stop()
        return evaluate(params, **kw)

    model.evaluator.evaluate = stop_after_one_pass
    with pytest.raises(DataError, match="Spark session of this DataFrame has stopped"):
        model.fit()
    # nothing was kept: fitting again is the same clear error, not a raw Spark one
    with pytest.raises(DataError, match=r"has stopped.*fit again"):
        model.fit()
    with pytest.raises(DataError, match="has stopped"):
        ordstats.OrdinalModel.from_formula(FORMULA, data, weights="w")
    with pytest.raises(DataError, match="has stopped"):
        fitted.predict()


def test_a_pass_sends_chunks_as_single_arrow_batches_and_restores_the_setting(spark, frame):
    from ordstats.data.spark import SparkSource

    key = "spark.sql.execution.arrow.maxRecordsPerBatch"
    session = spark
    session.conf.set(key, "1000")
    source = SparkSource(session.createDataFrame(frame.head(50)), 4_000)
    try:
        with source._arrow_batches():
            assert session.conf.get(key) == "4000"
        assert session.conf.get(key) == "1000"
        session.conf.set(key, "0")  # no limit: left alone
        with source._arrow_batches():
            assert session.conf.get(key) == "0"
    finally:
        session.conf.unset(key)


def test_a_pass_caps_its_arrow_batches_by_bytes(spark, frame):
    """A whole large chunk as one batch ran the JVM out of heap (bench_spark, 1 GB driver)."""
    from ordstats.data.spark import ARROW_BATCH_BYTES, SparkSource

    key = "spark.sql.execution.arrow.maxRecordsPerBatch"
    small = spark.createDataFrame(frame.head(50))
    source = SparkSource(small, 10**8)
    cap = ARROW_BATCH_BYTES // (8 * len(small.columns))
    spark.conf.set(key, "1000")
    try:
        with source._arrow_batches():
            assert spark.conf.get(key) == str(cap)
        assert spark.conf.get(key) == "1000"
    finally:
        spark.conf.unset(key)


def _chunk_sizes(chunk: pd.DataFrame) -> np.ndarray:
    """A count of the chunk's size (how many chunks of each number of rows a pass saw)."""
    return np.bincount([len(chunk)], minlength=64)


def test_a_pass_reads_arrow_batches_of_its_chunk_size(spark, frame):
    """Spark fixes the batch size when a pass's RDD is made: the setting must be on then.

    With batches of 3 rows and chunks of 7, every chunk was three batches (9 rows)
    joined in the worker; a chunk is now one batch of 7 rows (the last one shorter).
    """
    from ordstats.data.spark import SparkSource

    key = "spark.sql.execution.arrow.maxRecordsPerBatch"
    spark.conf.set(key, "3")
    try:
        source = SparkSource(spark.createDataFrame(frame.head(40)).coalesce(1), 7)
        sizes = source.map_reduce(_chunk_sizes)
    finally:
        spark.conf.unset(key)
    assert {n: int(c) for n, c in enumerate(sizes) if c} == {7: 5, 5: 1}
