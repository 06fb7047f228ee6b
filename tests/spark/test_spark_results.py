"""emmeans() and joint_tests() of a Spark fit (the reference grid from one pass over Spark);
get_prediction() without newdata refused (its predict() stays a Spark DataFrame).

The grid's levels, means and cell counts come from the rows the fit used
(rows with missing values left out, as in memory); at the same estimates the
tables are the in-memory ones bit for bit.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats.errors import MissingDataWarning, OrdstatsError
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


def test_spark_get_prediction_without_newdata_says_what_to_use(fits, frame):
    memory, spark = fits
    with pytest.raises(OrdstatsError, match=r"Spark fit .* use predict\(\) .* newdata"):
        spark.get_prediction()
    rows = frame.dropna().iloc[:5]
    expected = memory.get_prediction(rows).summary_frame()
    got = spark.get_prediction(rows).summary_frame()
    pd.testing.assert_frame_equal(got, expected, rtol=1e-7)
