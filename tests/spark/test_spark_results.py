"""emmeans() and joint_tests() of a Spark fit (the reference grid from one pass over Spark);
get_prediction() without newdata: the rows predicted in the cluster and collected.

The grid's levels, means and cell counts come from the rows the fit used
(rows with missing values left out, as in memory); at the same estimates the
tables are the in-memory ones bit for bit.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import ordstats
from ordstats.errors import MissingDataWarning
from ordstats.results.margins.emmeans import emmeans, joint_tests
from tests._chunk_data import FORMULA, spark_ratings, spark_setting


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return spark_ratings(600, seed=7)


@pytest.fixture(scope="module")
def fits(spark_session, frame):
    rows = spark_session().createDataFrame(frame).repartition(3)
    with pytest.warns(MissingDataWarning):
        memory = ordstats.OrdinalModel.from_formula(FORMULA, frame, weights="w").fit()
    with pytest.warns(MissingDataWarning):
        spark = ordstats.OrdinalModel.from_formula(FORMULA, rows, weights="w").fit()
    return memory, spark


@pytest.mark.parametrize(
    "options",
    [
        {"specs": "f"},
        {"specs": "f", "by": "g", "weights": "proportional", "mode": "prob"},
        {"specs": "g", "weights": "outer", "cov_reduce": "median"},
        {"specs": "g", "weights": "cells", "at": {"x1": [-1.0, 1.0]}},
    ],
)
def test_spark_emmeans_are_the_in_memory_ones(fits, options):
    memory, spark = fits
    theta, cov = memory.margins_params(), memory.margins_covariance()
    expected = emmeans(memory, **options, params=theta, cov=cov).summary_frame()
    got = emmeans(spark, **options, params=theta, cov=cov).summary_frame()
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


def test_spark_joint_tests_are_the_in_memory_ones(fits):
    memory, spark = fits
    theta, cov = memory.margins_params(), memory.margins_covariance()
    expected = joint_tests(memory, params=theta, cov=cov)
    pd.testing.assert_frame_equal(joint_tests(spark, params=theta, cov=cov), expected)
    np.testing.assert_allclose(spark.joint_tests()["F.ratio"], expected["F.ratio"], rtol=1e-7)


def test_spark_get_prediction_without_newdata_predicts_the_fitted_rows(fits, frame):
    """As in memory: the rows the fit used, in the Spark DataFrame's order, each labelled
    by its position in ``toPandas()`` (dropped rows counted).  Before, every row of the
    data (NaN where a predictor was missing, a prediction where only the response was)."""
    memory, spark = fits
    with warnings.catch_warnings():
        warnings.simplefilter("error", MissingDataWarning)
        got = spark.get_prediction()
        cumulative = spark.get_prediction(which="cumprob")
    whole = spark.model.source.frame.toPandas()
    with pytest.warns(MissingDataWarning):
        labels = ordstats.OrdinalModel.from_formula(FORMULA, whole, weights="w").design.row_index
    assert len(labels) == len(memory.predict())
    assert list(got.predicted.index) == list(labels)
    expected = memory.get_prediction(whole.loc[labels])
    np.testing.assert_allclose(
        got.summary_frame().to_numpy(), expected.summary_frame().to_numpy(), rtol=1e-7
    )
    assert cumulative.predicted.shape == (len(expected.predicted), len(memory.model.levels) - 1)
    picked = frame.dropna().iloc[:5]
    pd.testing.assert_frame_equal(
        spark.get_prediction(picked).summary_frame(),
        memory.get_prediction(picked).summary_frame(),
        rtol=1e-7,
    )


def _fit(data, **options):
    with pytest.warns(MissingDataWarning):
        return ordstats.OrdinalModel.from_formula(FORMULA, data, weights="w", **options).fit()


def _assert_predictions_of_the_frame(rows, spark=None):
    """``get_prediction()`` of a Spark fit of ``rows`` is that of the in-memory fit of
    ``rows.toPandas()``: the same labels (positions in the Spark DataFrame's order,
    dropped rows counted) and the same numbers."""
    assert rows.rdd.getNumPartitions() > 1
    whole = rows.toPandas()
    assert whole["x2"].iloc[: len(whole) // 2].isna().any()  # rows dropped in the middle
    expected = _fit(whole).get_prediction().summary_frame()
    got = (spark or _fit(rows)).get_prediction().summary_frame()
    pd.testing.assert_frame_equal(got, expected, rtol=1e-7)
    return got


def test_spark_get_prediction_labels_rows_by_their_place_in_the_frame(spark, frame):
    """The partitions of a pandas frame: before, the collected rows were numbered 0, 1, ...
    and did not line up with the in-memory fit's rows after the first dropped row."""
    _assert_predictions_of_the_frame(spark.createDataFrame(frame))


def test_spark_get_prediction_with_subset_counts_the_rows_subset_leaves_out(spark, frame):
    """R's ``subset=``: the labels are positions in the DataFrame it selects from, as in
    memory (and as for files read in chunks); before, positions among the selected rows,
    or an error where the fit's filter saw rows the subset leaves out."""
    rows = spark.createDataFrame(frame)
    whole, subset = rows.toPandas(), "g != 'lo'"
    memory, fit = _fit(whole, subset=subset), _fit(rows, subset=subset)
    expected = memory.get_prediction().summary_frame()
    pd.testing.assert_frame_equal(fit.get_prediction().summary_frame(), expected, rtol=1e-7)
    # predict() and resid_prob pick the fitted rows among the subset's (before: a chunk
    # with a level subset= leaves out stopped them, as the fit never saw it)
    levels = [str(level) for level in memory.model.levels]
    predicted = fit.predict().toPandas()[levels].to_numpy()
    np.testing.assert_allclose(predicted, memory.predict().to_numpy(), rtol=1e-7)
    residuals = fit.resid_prob.toPandas()["resid_prob"].to_numpy()
    np.testing.assert_allclose(residuals, memory.resid_prob.to_numpy(), rtol=1e-7, atol=1e-12)


def test_spark_get_prediction_of_a_parquet_file_is_the_chunked_one(spark, frame, tmp_path):
    """A Parquet file that Spark reads in several partitions (row groups of 100 rows,
    split by bytes): the labels and numbers of the in-memory fit of ``toPandas()`` and of
    the chunked fit of the file, rows the fit dropped keeping their numbers."""
    path = tmp_path / "rows.parquet"
    frame.to_parquet(path, index=False, row_group_size=100)
    with spark_setting(spark, "spark.sql.files.maxPartitionBytes", str(path.stat().st_size // 3)):
        rows = spark.read.parquet(str(path))
        got = _assert_predictions_of_the_frame(rows, _fit(rows))
    chunked = _fit(str(path), chunksize=150).get_prediction().summary_frame()
    pd.testing.assert_frame_equal(got, chunked, rtol=1e-7)


def test_spark_wts_are_checked_over_every_partition_as_in_memory(spark, frame):
    """avg_predictions(wts=) with negative weights in both partitions: the count and the
    smallest of every row, as in memory (before: of the first chunk that had them)."""
    row = np.arange(len(frame))
    data = frame.assign(v=np.where(row % 5 == 2, -1.0, 1.0) * (1.0 + row % 7))
    rows = spark.createDataFrame(data)
    assert rows.rdd.getNumPartitions() > 1
    with pytest.raises(ordstats.errors.OrdstatsError) as expected:
        _fit(data).avg_predictions(wts="v")
    with pytest.raises(ordstats.errors.OrdstatsError) as got:
        _fit(rows).avg_predictions(wts="v")
    assert str(got.value) == str(expected.value)


def test_spark_get_prediction_reads_the_first_rows_once(fits, monkeypatch):
    """The first rows tell the predictions' columns; before, they were read (a Spark job)
    twice: once for the column names, once more for the pandas UDF's schema."""
    source = fits[1].model.source
    reads = []
    read = type(source).first_chunk

    def counted(self, *args, **kwargs):
        reads.append(args)
        return read(self, *args, **kwargs)

    monkeypatch.setattr(type(source), "first_chunk", counted)
    fits[1].get_prediction()
    assert len(reads) == 1


def test_spark_continuous_quantities_without_newdata_say_to_pass_rows(fits, frame):
    """mean(), quantile() and exceedance() of a Spark fit's rows would gather them on the
    driver; with newdata they are the in-memory numbers."""
    memory, spark = fits
    for call in (lambda res, *a: res.mean(*a), lambda res, *a: res.quantile(0.5, *a)):
        with pytest.raises(ordstats.errors.OrdstatsError, match="every fitted row of the Spark"):
            call(spark)
        rows = frame.dropna().iloc[:7]
        pd.testing.assert_frame_equal(call(spark, rows), call(memory, rows), rtol=1e-7)


def test_spark_simulate_draws_in_the_cluster_with_the_fitted_probabilities(spark, frame):
    """Before: refused. The draws stay a lazy Spark DataFrame, fixed by the seed."""
    rows = spark.createDataFrame(frame).repartition(2)
    with pytest.warns(MissingDataWarning):
        fit = ordstats.OrdinalModel.from_formula(FORMULA, rows).fit()
    with pytest.warns(MissingDataWarning):
        memory = ordstats.OrdinalModel.from_formula(FORMULA, frame).fit()
    lazy = fit.simulate(nsim=400, seed=3)
    assert hasattr(lazy, "mapInPandas")  # a Spark DataFrame: nothing collected yet
    sims = lazy.toPandas()
    pd.testing.assert_frame_equal(sims, fit.simulate(nsim=400, seed=3).toPandas())
    assert not sims.equals(fit.simulate(nsim=400, seed=4).toPandas())
    names = [f"sim_{k + 1}" for k in range(400)]
    assert list(sims.columns[-400:]) == names and len(sims) == memory.nobs
    levels = [str(v) for v in memory.model.levels]
    draws = sims[names].astype(str).to_numpy()
    assert set(np.unique(draws)) <= set(levels)
    prob = memory.predict(sims[["x1", "x2", "f", "g"]]).to_numpy()
    counts = np.stack([(draws == level).sum(axis=1) for level in levels], axis=1)
    # each row's 400 draws against its probabilities: the chi-square over all rows
    expected = 400 * prob
    statistic = float(np.sum((counts - expected) ** 2 / expected))
    dof = counts.shape[0] * (counts.shape[1] - 1)
    assert stats.chi2.sf(statistic, dof) > 1e-4


def test_spark_anova_and_lrm_stats_are_the_in_memory_ones(fits):
    """X'X, the LR refits without a term's columns and lrm's sums, over the partitions.

    Before: "needs the design's rows in memory" / "need the rows in memory".
    """
    memory, spark = fits
    for options in ({"type": "I"}, {"type": "II"}, {"type": "III", "test": "LR"}):
        expected = ordstats.anova(memory, **options)
        got = ordstats.anova(spark, **options)
        pd.testing.assert_index_equal(got.index, expected.index)
        np.testing.assert_allclose(got.to_numpy(), expected.to_numpy(), rtol=1e-10)
    expected, got = memory.lrm_stats(), spark.lrm_stats()
    keep = expected.index != "Max Deriv"  # each fit's own last gradient
    np.testing.assert_allclose(got[keep].to_numpy(), expected[keep].to_numpy(), rtol=1e-10)


@pytest.mark.parametrize(
    "call",
    [
        lambda r: r.avg_predictions(variables="nocol"),
        lambda r: r.avg_comparisons(variables="x1", type="mean"),
        lambda r: r.avg_slopes(variables="x1", type="mean"),
        lambda r: r.avg_predictions(type="class"),
    ],
    ids=["unknown-variable", "unknown-type-comparisons", "unknown-type-slopes", "class-averaged"],
)
def test_spark_averages_refuse_bad_options_before_the_pass_as_in_memory(fits, call):
    memory, spark = fits
    with pytest.raises(ordstats.OrdstatsError) as expected:
        call(memory)
    with pytest.raises(ordstats.OrdstatsError) as got:
        call(spark)
    assert str(got.value) == str(expected.value)
