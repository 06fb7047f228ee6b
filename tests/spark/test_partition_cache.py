"""The partition cache of Spark fits: later passes read the first pass's spilled chunks.

The cache only changes where a pass reads its rows, never what it adds up: the
chunks are those of the first pass, in its order, so a cached fit equals the
fit without the cache to the last bit.  A partition whose spill is not found
where its task runs (another executor of a cluster, or deleted) is read
through the DataFrame; the spill is deleted when the fit ends, also when it
fails.  (This file runs before test_spark.py, whose last test stops the shared
session.)
"""

from __future__ import annotations

import shutil
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats.data.spark import CACHE_SETTING, partition_cache_setting
from ordstats.errors import MissingDataWarning, ResponseError, SpecificationError
from tests._chunk_data import FORMULA, spark_ratings, spark_setting, spilled_fits


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return spark_ratings(2000, seed=5)


@pytest.fixture(scope="module")
def data(spark_session, frame):
    """``frame`` in two partitions (not cached by Spark: every read goes to the rows)."""
    return spark_session().createDataFrame(frame).repartition(2)


def no_cache(spark):
    """Fits of this session keep no partition cache inside the block."""
    return spark_setting(spark, CACHE_SETTING, "false")


def model_of(data):
    with pytest.warns(MissingDataWarning):
        return ordstats.OrdinalModel.from_formula(FORMULA, data, weights="w")


@pytest.fixture(scope="module")
def uncached_fit(spark_session, data):
    with no_cache(spark_session()):
        model = model_of(data)
        fit = model.fit()
    # every pass read the DataFrame
    assert model.evaluator.source.cache_log == [(0, 2)] * model.evaluator.n_passes
    return fit


def test_later_passes_read_the_spill_and_fit_the_same_numbers(spark, data, uncached_fit):
    model = model_of(data)
    source = model.evaluator.source
    # the scan reads the DataFrame (and spills it), the summary reads the spill
    assert source.cache_log == [(0, 2), (2, 0)]
    assert len(spilled_fits(spark)) == 1
    fit = model.fit()
    assert source.cache_log[1:] == [(2, 0)] * (model.evaluator.n_passes - 1)
    np.testing.assert_array_equal(fit.params, uncached_fit.params)
    np.testing.assert_array_equal(fit.cov_params(), uncached_fit.cov_params())
    assert fit.llf == uncached_fit.llf
    assert spilled_fits(spark) == []  # deleted when the fit ended
    # after the fit, passes (a robust covariance here) read the DataFrame again
    before = len(source.cache_log)
    robust = fit.get_robustcov_results("HC0")
    expected = uncached_fit.get_robustcov_results("HC0")
    np.testing.assert_array_equal(robust.bse, expected.bse)
    assert source.cache_log[before:] == [(0, 2)]
    assert spilled_fits(spark) == []


def test_newton_passes_read_the_arrays_the_summary_kept(spark, data, uncached_fit):
    """The summary pass keeps each chunk's likelihood arrays; later passes need no chunk.

    With the spilled pandas chunks deleted after the summary, every Newton pass
    still reads both partitions from the spill (the kept arrays), with the
    numbers of the fit that reads the DataFrame at every pass.
    """
    model = model_of(data)
    source = model.evaluator.source
    (fit_dir,) = spilled_fits(spark)
    for partition in sorted(fit_dir.glob("partition-*")):
        assert len(list(partition.glob("arrays-*-complete"))) == 1
        for chunk in partition.glob("chunk-*"):
            chunk.unlink()
    fit = model.fit()
    assert source.cache_log[2:] == [(2, 0)] * (model.evaluator.n_passes - 2)
    assert model.evaluator.n_reads == 1  # the scan; the rest read the spill
    np.testing.assert_array_equal(fit.params, uncached_fit.params)
    np.testing.assert_array_equal(fit.cov_params(), uncached_fit.cov_params())
    assert fit.llf == uncached_fit.llf
    assert spilled_fits(spark) == []


def test_a_partition_whose_spill_is_gone_is_read_through_the_dataframe(spark, data, uncached_fit):
    """As when its task runs on another executor of a cluster than the first pass's."""
    model = model_of(data)
    source = model.evaluator.source
    (fit_dir,) = spilled_fits(spark)
    shutil.rmtree(fit_dir / "partition-000001")
    fit = model.fit()
    # the first Newton pass finds one partition's spill; the other's task reads
    # the DataFrame and spills it again, so the later passes find both
    assert source.cache_log[2] == (1, 1)
    assert source.cache_log[3:] == [(2, 0)] * (len(source.cache_log) - 3)
    np.testing.assert_array_equal(fit.params, uncached_fit.params)
    assert fit.llf == uncached_fit.llf
    assert spilled_fits(spark) == []


def test_a_changed_partitioning_drops_the_cache_and_reads_the_dataframe(spark, data):
    """Cached partition ids mean nothing if the DataFrame's plan now has other partitions."""
    model = model_of(data)
    source, evaluator = model.evaluator.source, model.evaluator
    params = evaluator.start_params()
    expected = evaluator.evaluate(params)  # from the spill
    source._cache.partitions = 3  # as if the first pass had seen three
    got = evaluator.evaluate(params)
    assert source.cache_log[-1] == (2, 1)  # partition 2 was not spilled anywhere
    assert source._cache is None and spilled_fits(spark) == []
    assert got.nll == expected.nll
    np.testing.assert_array_equal(got.gradient, expected.gradient)
    np.testing.assert_array_equal(got.hessian, expected.hessian)


def test_the_spill_is_deleted_when_a_fit_fails(spark, frame, data):
    # a pass whose task fails: nothing of its partition is kept
    bad = frame.assign(w=np.where(np.arange(len(frame)) == 1500, -1.0, frame["w"]))
    with pytest.raises(ordstats.errors.DataError, match="weights must be non-negative"):
        ordstats.OrdinalModel.from_formula(FORMULA, spark.createDataFrame(bad), weights="w")
    assert spilled_fits(spark) == []
    # an error on the driver after the first pass
    text = spark.createDataFrame(frame.assign(y=frame["y"].map(lambda v: f"level {v}")))
    with pytest.raises(ResponseError, match="holds text labels"):
        ordstats.OrdinalModel.from_formula("y ~ x1", text)
    assert spilled_fits(spark) == []
    # an error during fit()
    model = model_of(data)
    assert len(spilled_fits(spark)) == 1

    def broken(params, **kw):
        raise RuntimeError("the driver failed")

    model.evaluator.evaluate = broken
    with pytest.raises(RuntimeError, match="the driver failed"):
        model.fit()
    assert spilled_fits(spark) == []


def test_the_cache_setting(spark, data):
    with (
        spark_setting(spark, CACHE_SETTING, "maybe"),
        pytest.raises(SpecificationError, match=r"spark\.ordstats\.cache must be 'auto'"),
    ):
        ordstats.OrdinalModel.from_formula(FORMULA, data, weights="w")

    def session(master: str, value: str | None = None) -> SimpleNamespace:
        settings = {} if value is None else {CACHE_SETTING: value}
        conf = SimpleNamespace(get=lambda key, default: settings.get(key, default))
        return SimpleNamespace(conf=conf, sparkContext=SimpleNamespace(master=master))

    # by default only where every task runs on the driver's machine
    assert partition_cache_setting(session("local[2]"))
    assert partition_cache_setting(session("local"))
    assert partition_cache_setting(session("local[*, 3]"))
    assert not partition_cache_setting(session("spark://head:7077"))
    assert not partition_cache_setting(session("yarn"))
    assert not partition_cache_setting(session("local-cluster[2, 1, 1024]"))
    assert partition_cache_setting(session("yarn", "true"))
    assert not partition_cache_setting(session("local[2]", " False "))


def test_kept_arrays_are_memory_mapped_npy_files(tmp_path, monkeypatch):
    """Large arrays are ``.npy`` files read memory-mapped (read-only), equal to those written."""
    from ordstats.data.chunks import ChunkArrays
    from ordstats.data.spark_cache import PartitionCache, PartitionWriter, pack_arrays, read_arrays

    monkeypatch.setenv("SPARK_LOCAL_DIRS", str(tmp_path))
    rng = np.random.default_rng(0)
    arrays = ChunkArrays(
        y=rng.integers(0, 4, size=20_000),
        X=rng.normal(size=(20_000, 3)),
        weights=np.ones(20_000),
        offset=np.zeros(20_000),
        bad=pd.Series(np.zeros(20_000, dtype=bool)),
        n_bad=0,
        n_rows=20_000,
    )
    cache = PartitionCache(("y", "x"))
    writer = PartitionWriter(cache, 0, "arrays-test")
    writer.add(pack_arrays(arrays))
    writer.finish()
    files = cache.chunk_files(0, "arrays-test")
    assert files is not None
    assert sorted(p.name.split(".", 1)[1] for p in files[0].parent.glob("*.npy")) == [
        "X.npy",
        "y.npy",
    ]
    (got,) = list(read_arrays(files))
    np.testing.assert_array_equal(got.X, arrays.X)
    np.testing.assert_array_equal(got.y, arrays.y)
    assert not got.X.flags.writeable  # mapped, not copied
    np.testing.assert_array_equal(got.weights, arrays.weights)
    pd.testing.assert_series_equal(got.bad, arrays.bad)
