"""emmeans() and joint_tests() of a Spark fit (the reference grid from one pass over Spark);
get_prediction() without newdata: the rows predicted in the cluster and collected.

The grid's levels, means and cell counts come from the rows the fit used
(rows with missing values left out, as in memory); at the same estimates the
tables are the in-memory ones bit for bit.
"""

from __future__ import annotations

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


def test_spark_get_prediction_without_newdata_predicts_every_row(fits, frame):
    """As a Dask fit's: every row of the data in its order, NaN where a predictor is missing
    (one warning).  Before, refused ("would collect every row ... on the driver")."""
    memory, spark = fits
    rows = spark.model.source.frame.toPandas()  # the rows in the Spark DataFrame's order
    with pytest.warns(MissingDataWarning, match=r"row\(s\) of the Spark DataFrame") as caught:
        got = spark.get_prediction()
    missing = [w for w in caught if issubclass(w.category, MissingDataWarning)]
    assert len(missing) == 1 and missing[0].filename == __file__
    with pytest.warns(MissingDataWarning):
        expected = memory.get_prediction(rows)
    assert len(got.predicted) == len(frame) and got.predicted.isna().any(axis=None)
    pd.testing.assert_frame_equal(got.summary_frame(), expected.summary_frame(), rtol=1e-7)
    with pytest.warns(MissingDataWarning):
        cumulative = spark.get_prediction(which="cumprob")
    assert cumulative.predicted.shape == (len(frame), len(memory.model.levels) - 1)
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
    with pytest.warns(MissingDataWarning):
        fits[1].get_prediction()
    assert len(reads) == 1
