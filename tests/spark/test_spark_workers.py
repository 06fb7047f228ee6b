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
