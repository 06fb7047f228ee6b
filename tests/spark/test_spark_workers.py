"""What a Spark pass costs beside the likelihood: adding the partitions' results, and the
Python workers' garbage collections.

Measured on 10^7 rows x 20 in 20 Parquet files on ``local[2]`` (bench/spark_passes.py,
bench/README.md): PySpark's ``treeAggregate`` of depth 2 shuffled the 20 results through
a pickling, compressing and spilling merger, and the worker's ``gc.collect()`` after every
task walked the 140,000 objects of ordstats' imports (about 65 ms a task).  A Newton
pass took 1.6-1.9 s (3.1 s of the workers' CPU); with the results added on the driver
and the imports frozen, 0.9-1.0 s (1.3 s), as a chunked pass in one process.
"""

from __future__ import annotations

import gc
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats.data import spark as spark_data
from tests._chunk_data import FORMULA, spark_ratings


class _Recorded:
    """An RDD stand-in that records the depth ``treeAggregate`` is asked for."""

    def __init__(self, partitions: int) -> None:
        self.partitions, self.depth = partitions, None

    def getNumPartitions(self) -> int:
        return self.partitions

    def treeAggregate(self, zero, seq, comb, depth=2):
        self.depth = depth
        return zero


@pytest.mark.parametrize(("partitions", "depth"), [(1, 1), (20, 1), (64, 1), (65, 2), (500, 2)])
def test_the_driver_adds_the_results_of_few_partitions(partitions, depth):
    rdd = _Recorded(partitions)
    spark_data._added(rdd)
    assert rdd.depth == depth


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return spark_ratings(3000, seed=11).dropna()


def _fit(data) -> ordstats.OrdinalResults:
    return ordstats.OrdinalModel.from_formula(FORMULA, data, weights="w").fit(disp=False)


def test_a_tree_of_tasks_adds_many_partitions_to_the_same_fit(spark, frame, monkeypatch):
    """Six partitions added by the driver, then (the limit lowered) by a tree of tasks."""
    data = spark.createDataFrame(frame).repartition(6)
    on_driver = _fit(data)
    monkeypatch.setattr(spark_data, "DRIVER_ADDS_PARTITIONS", 2)
    in_tree = _fit(data)
    memory = _fit(frame)
    for res in (on_driver, in_tree):
        np.testing.assert_allclose(res.params, memory.params, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(res.bse, memory.bse, rtol=1e-9)
        assert res.llf == pytest.approx(memory.llf, rel=1e-12)


def test_workers_freeze_their_imports_once_per_process(monkeypatch):
    frozen: list[int] = []
    monkeypatch.setattr(spark_data.gc, "freeze", lambda: frozen.append(pid[0]))
    monkeypatch.setattr(spark_data, "_SETTLED_IN", None)
    pid = [101]
    monkeypatch.setattr(spark_data.os, "getpid", lambda: pid[0])
    monkeypatch.setattr(spark_data, "_partition_id", lambda: -1)
    spark_data._settle_worker()
    assert frozen == []  # not in a Spark task: the caller's own process is left alone
    monkeypatch.setattr(spark_data, "_partition_id", lambda: 0)
    spark_data._settle_worker()
    spark_data._settle_worker()
    assert frozen == [101]
    pid[0] = 102  # a worker forked from a settled process settles itself
    spark_data._settle_worker()
    assert frozen == [101, 102]


def test_spark_tasks_freeze_the_workers_imports(spark):
    def freeze_count(_):
        from ordstats.data.spark import _settle_worker

        _settle_worker()
        yield gc.get_freeze_count()

    counts = spark.sparkContext.parallelize(range(2), 2).mapPartitions(freeze_count).collect()
    assert len(counts) == 2 and min(counts) > 10_000
    assert gc.get_freeze_count() == 0  # the driver (this process) is not frozen


# -- the first pass keeps the arrays of a plain numeric model --------------------------------


def _numeric(frame: pd.DataFrame) -> pd.DataFrame:
    rows = frame[["y", "x1", "x2", "w"]].dropna()
    return rows.assign(y=rows["y"].astype(float))


NUMERIC = "y ~ x1 + x2"


def _built(data, **options):
    return ordstats.OrdinalModel.from_formula(NUMERIC, data, weights="w", **options)


def test_the_summary_pass_reads_the_arrays_the_first_pass_kept(spark, frame, tmp_path, monkeypatch):
    """A model of numeric columns: the scan's tasks keep each chunk's arrays (the response as
    values, coded by the levels the scan finds), so the summary pass reads no chunk; the fit
    is the one that builds the arrays at the summary pass, bit for bit."""
    rows = _numeric(frame)
    rows.to_parquet(tmp_path / "rows.parquet", row_group_size=700)
    data = spark.read.parquet(str(tmp_path))
    model = _built(data)
    store = model.evaluator.reader.store
    assert store.name == spark_data.SCAN_ARRAYS and store.levels is not None
    fit = model.fit()
    monkeypatch.setattr(spark_data.SparkSource, "keep_scan_arrays", lambda self, spec: None)
    summary_built = _built(data)
    assert summary_built.evaluator.reader.store.name != spark_data.SCAN_ARRAYS
    other = summary_built.fit()
    np.testing.assert_array_equal(fit.params, other.params)
    np.testing.assert_array_equal(fit.cov_params(), other.cov_params())
    memory = ordstats.OrdinalModel.from_formula(NUMERIC, rows, weights="w").fit(disp=False)
    np.testing.assert_allclose(fit.params, memory.params, rtol=1e-10, atol=1e-12)
    assert fit.llf == pytest.approx(memory.llf, rel=1e-12)


def test_a_partition_whose_kept_arrays_are_gone_is_built_from_its_chunks(spark, frame, monkeypatch):
    rows = _numeric(frame)
    data = spark.createDataFrame(rows).repartition(3)
    scan_store = spark_data.SparkSource.scan_store

    removed = []

    def without_partition_0(self, spec):
        store = scan_store(self, spec)
        for place in self._cache.places:  # the executors' directories (spark_cache.CachePlace)
            pattern = f"partition-000000/{spark_data.SCAN_ARRAYS}-*"
            for path in Path(place.directory).glob(pattern):
                path.unlink()
                removed.append(path)
        return store

    monkeypatch.setattr(spark_data.SparkSource, "scan_store", without_partition_0)
    fit = _built(data).fit()
    assert removed  # the first pass had kept them
    memory = ordstats.OrdinalModel.from_formula(NUMERIC, rows, weights="w").fit(disp=False)
    np.testing.assert_allclose(fit.params, memory.params, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fit.bse, memory.bse, rtol=1e-9)


def test_a_text_response_keeps_no_arrays_in_the_first_pass(spark, frame):
    rows = _numeric(frame)
    text = rows.assign(y=rows["y"].map({1.0: "a", 2.0: "b", 3.0: "c", 4.0: "d", 5.0: "e"}))
    model = _built(spark.createDataFrame(text), levels=list("abcde"))
    assert model.evaluator.reader.store.name != spark_data.SCAN_ARRAYS
    memory = ordstats.OrdinalModel.from_formula(NUMERIC, rows, weights="w").fit(disp=False)
    np.testing.assert_allclose(model.fit().params, memory.params, rtol=1e-10, atol=1e-12)
