"""``contrasts=`` and ``subset=`` on a Spark fit equal the in-memory fit.

``subset=`` takes a boolean Spark Column or a query that selects each row from its own
values (evaluated on the Arrow batches of the columns it names); before, Spark
DataFrames were refused ("subset= selects rows of a DataFrame or a Dask DataFrame").
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import ordstats
from ordstats.errors import LevelsWarning, SpecificationError


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


DROP = "1"
LEVELS = [1, 2, 3, 4, 5]


def _fits(formula, frame, spark_frame, subset, spark_subset=None):
    """The in-memory and Spark fits of the subset, with the same warnings (levels dropped)."""
    fits, messages = [], []
    spark_subset = subset if spark_subset is None else spark_subset
    for data, chosen in ((frame, subset), (spark_frame, spark_subset)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", LevelsWarning)
            model = ordstats.OrdinalModel.from_formula(formula, data, subset=chosen, levels=LEVELS)
            fits.append(model.fit())
        messages.append([str(w.message) for w in caught if w.category is LevelsWarning])
    assert messages[0] == messages[1]
    return fits


@pytest.mark.parametrize(
    "query",
    ["judge != '9'", "temp == 'cold' or judge > '3'", "judge != @DROP and judge.notna()"],
)
def test_a_subset_query_on_spark_equals_in_memory(wine_spark, query):
    frame, spark_frame = wine_spark
    res_memory, res_spark = _fits("rating ~ temp + judge", frame, spark_frame, query)
    assert res_spark.nobs == res_memory.nobs < len(frame)
    assert list(res_spark.params.index) == list(res_memory.params.index)
    np.testing.assert_allclose(res_spark.params, res_memory.params, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(res_spark.bse, res_memory.bse, rtol=1e-7)
    assert res_spark.llf == pytest.approx(res_memory.llf, rel=1e-10)


def test_a_spark_column_subsets_and_predictions_stay_in_spark(wine_spark):
    frame, spark_frame = wine_spark
    res_memory, res_spark = _fits(
        "rating ~ judge", frame, spark_frame, "temp == 'cold'", spark_frame.temp == "cold"
    )
    np.testing.assert_allclose(res_spark.params, res_memory.params, rtol=1e-8, atol=1e-10)
    scored = res_spark.predict().toPandas()  # the fitted rows: those of the subset
    assert len(scored) == res_memory.nobs and set(scored["temp"]) == {"cold"}


def test_a_spark_subset_that_may_need_every_row_is_refused(wine_spark):
    _, spark_frame = wine_spark
    with pytest.raises(SpecificationError, match=r"Spark DataFrame is subset batch by batch"):
        ordstats.OrdinalModel.from_formula(
            "rating ~ temp", spark_frame, subset=lambda d: d.rating > 1, levels=LEVELS
        )
    with pytest.raises(SpecificationError, match=r"calls mean, which may read all rows at once"):
        ordstats.OrdinalModel.from_formula(
            "rating ~ temp", spark_frame, subset="rating > rating.mean()", levels=[1, 2, 3, 4, 5]
        )
