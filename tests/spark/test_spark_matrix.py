"""Every results method on a Spark fit: the in-memory numbers, or the in-memory refusal.

The Spark side of tests/estimation/test_engine_matrix.py (same data, model
kinds and methods).  Each pass of a Spark fit is a Spark job (about a second
on a local session), so the fits are shared per module, every method is
checked on two kinds (weights and an offset; nominal and scale effects), and
the other kinds (a flexible link, symmetric and fixed thresholds, a cluster
covariance) are checked on the methods that read the fit alone plus one pass
each (about 60 jobs in all).
"""

from __future__ import annotations

import pickle
import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest

from ordstats.errors import MissingDataWarning, OrdstatsError
from tests.estimation.test_engine_matrix import (
    METHODS,
    assert_same_numbers,
    fit_kind,
    matrix_frame,
    new_rows,
    summary_lines,
)

#: the methods that need no pass over the rows (estimates, covariance, new rows)
NO_PASS = (
    "params",
    "bse",
    "cov_params",
    "likelihoods and sizes",
    "conf_int",
    "predict prob",
    "predict cumprob",
    "get_prediction",
    "comparisons of new rows",
    "hypotheses",
)


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return matrix_frame().assign(row=lambda d: np.arange(len(d)))


@pytest.fixture(scope="module")
def spark_frame(spark_session, frame):
    return spark_session().createDataFrame(frame).repartition(3).cache()


def spark_numbers(value: Any) -> Any:
    """A Spark DataFrame of per-row results as pandas, indexed by the source's ``row``."""
    if not hasattr(value, "toPandas"):
        return value
    out = value.toPandas().set_index("row").sort_index()
    out.index.name = None
    columns = [c for c in out.columns if c not in matrix_frame().columns]
    return out[columns[0]] if len(columns) == 1 else out[columns]


def _same(kind: str, frame: pd.DataFrame, spark_frame: Any, names: Any) -> None:
    memory, spark = fit_kind(frame, kind), fit_kind(spark_frame, kind)
    new = new_rows(frame)
    assert summary_lines(spark) == summary_lines(memory)
    differ = []
    for name in names:
        method = METHODS[name]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MissingDataWarning)
            try:
                expected = method(memory, new)
            except OrdstatsError as refused:
                with pytest.raises(type(refused), match=r"\w"):
                    method(spark, new)
                continue
            try:
                assert_same_numbers(spark_numbers(method(spark, new)), expected, name)
            except AssertionError as exc:
                differ.append(f"{name}: {exc}")
    assert not differ, "\n".join(differ)


@pytest.mark.parametrize("kind", ["weights and offset", "nominal and scale"])
def test_every_results_method_on_spark_equals_in_memory(frame, spark_frame, kind):
    _same(kind, frame, spark_frame, METHODS)


@pytest.mark.parametrize(
    ("kind", "one_pass"),
    [
        ("log-gamma with scale", "expected_covariance"),
        ("symmetric", "HC1"),
        ("fixed thresholds", "get_margeff"),
        ("cluster covariance", "cluster"),
    ],
)
def test_other_kinds_on_spark_equal_in_memory(frame, spark_frame, kind, one_pass):
    _same(kind, frame, spark_frame, [*NO_PASS, one_pass])


def test_a_spark_fit_pickles_and_streams_after_its_residuals(frame, spark_frame):
    """Before: resid_prob (a Spark DataFrame) was cached on the result, which then could not
    be pickled (save(), pickle) or sent to the workers (get_margeff, the avg_ verbs): a raw
    PySparkRuntimeError [CONTEXT_ONLY_VALID_ON_DRIVER]; and fittedvalues raised a raw
    PySparkAttributeError (a Spark DataFrame has no rename)."""
    memory, spark = (
        fit_kind(frame, "weights and offset"),
        fit_kind(spark_frame, "weights and offset"),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingDataWarning)
        assert_same_numbers(spark_numbers(spark.resid_prob), memory.resid_prob, "resid_prob")
        fitted = spark.fittedvalues
        assert fitted.columns[-1] == "fittedvalues"
        assert_same_numbers(spark_numbers(fitted), memory.fittedvalues, "fittedvalues")
    assert_same_numbers(
        spark.avg_predictions().select_dtypes("number"),
        memory.avg_predictions().select_dtypes("number"),
        "avg_predictions",
    )
    back = pickle.loads(pickle.dumps(spark))
    new = new_rows(frame)
    assert_same_numbers(back.predict(new), memory.predict(new), "pickled")
