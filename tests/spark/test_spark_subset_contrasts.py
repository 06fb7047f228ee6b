"""``contrasts=`` on a Spark fit equals the in-memory fit; ``subset=`` is refused clearly."""

from __future__ import annotations

import numpy as np
import pytest

import ordstats
from ordstats.errors import SpecificationError


@pytest.fixture
def wine_spark(spark):
    wine = ordstats.datasets.load("wine")
    frame = wine.assign(
        rating=wine["rating"].astype(int),
        temp=wine["temp"].astype(str),
        judge=wine["judge"].astype(str),
    )[["rating", "temp", "judge"]]
    return frame, spark.createDataFrame(frame)


def test_contrasts_on_spark_equal_in_memory(wine_spark):
    frame, spark_frame = wine_spark
    coding = {"judge": "contr.sum", "temp": "contr.SAS"}
    memory = ordstats.OrdinalModel.from_formula("rating ~ temp + judge", frame, contrasts=coding)
    spark = ordstats.OrdinalModel.from_formula(
        "rating ~ temp + judge", spark_frame, contrasts=coding, levels=[1, 2, 3, 4, 5]
    )
    res_memory, res_spark = memory.fit(), spark.fit()
    assert list(res_spark.params.index) == list(res_memory.params.index)
    assert "judge1" in res_spark.params.index and "temp[T.cold]" in res_spark.params.index
    np.testing.assert_allclose(res_spark.params, res_memory.params, rtol=1e-8, atol=1e-10)


def test_subset_on_spark_is_refused(wine_spark):
    _, spark_frame = wine_spark
    with pytest.raises(SpecificationError, match=r"not of data read from files or Spark"):
        ordstats.OrdinalModel.from_formula("rating ~ temp", spark_frame, subset="temp == 'warm'")
