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

import ordstats
from ordstats.errors import MissingDataWarning
from ordstats.results.margins.emmeans import emmeans, joint_tests
from tests._chunk_data import FORMULA, spark_ratings


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
    """As in memory: the rows the fit used, in the Spark DataFrame's order, numbered from 0.
    Before, every row of the data (NaN where a predictor was missing, a prediction where
    only the response was)."""
    memory, spark = fits
    with warnings.catch_warnings():
        warnings.simplefilter("error", MissingDataWarning)
        got = spark.get_prediction()
        cumulative = spark.get_prediction(which="cumprob")
    # predict() gives the fitted rows with their columns, in the order get_prediction has
    used = spark.predict().toPandas()[list(frame.columns)]
    assert len(used) == len(memory.predict()) and not used.isna().any(axis=None)
    expected = memory.get_prediction(used)
    assert got.predicted.shape == expected.predicted.shape
    assert list(got.predicted.index) == list(range(len(expected.predicted)))
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
