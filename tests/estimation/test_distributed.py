"""Fits of Dask DataFrames equal the in-memory fit, on every scheduler, even if a worker dies."""

from __future__ import annotations

import os
import signal
import threading

import numpy as np
import pandas as pd
import pytest

import ordstats
import ordstats.estimation.last_step as last_step
from ordstats.errors import MissingDataWarning
from tests._chunk_data import FORMULA, assert_same_fit, ratings

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("dask.distributed")


@pytest.fixture(scope="module")
def frame():
    return ratings(2000, seed=5)


@pytest.fixture(scope="module")
def memory_fit(frame):
    with pytest.warns(MissingDataWarning):
        return ordstats.OrdinalModel.from_formula(FORMULA, frame, weights="w").fit()


def _dask_fit(ddf):
    with pytest.warns(MissingDataWarning, match="rows have missing"):
        model = ordstats.OrdinalModel.from_formula(FORMULA, ddf, weights="w")
    return model.fit()


@pytest.mark.parametrize("npartitions", [1, 7])
def test_threaded_dask_equals_in_memory(frame, memory_fit, npartitions):
    with dask.config.set(scheduler="threads"):
        res = _dask_fit(dd.from_pandas(frame, npartitions=npartitions))
    assert_same_fit(res, memory_fit)


def test_dask_predictions_are_lazy_and_equal(frame, memory_fit):
    complete = frame.dropna().reset_index(drop=True)
    with dask.config.set(scheduler="threads"):
        res = _dask_fit(dd.from_pandas(frame, npartitions=4))
        lazy = res.predict(dd.from_pandas(complete, npartitions=3), which="prob")
        assert hasattr(lazy, "compute")
        pd.testing.assert_frame_equal(lazy.compute(), memory_fit.predict(complete), rtol=1e-10)


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def test_distributed_cluster_equals_in_memory(client, frame, memory_fit):
    res = _dask_fit(dd.from_pandas(frame, npartitions=6))
    assert_same_fit(res, memory_fit)


def test_brant_test_on_a_cluster_equals_in_memory(client, frame, memory_fit):
    """The cross products come back from the workers in buffers that need not be aligned,
    which SciPy's inverse refused ("TypeError: Expected a real or complex array")."""
    res = _dask_fit(dd.from_pandas(frame, npartitions=4))
    pd.testing.assert_frame_equal(res.brant_test(), memory_fit.brant_test(), rtol=1e-7)


def test_fit_survives_a_killed_worker(client):
    frame = ratings(60_000, seed=6)
    with pytest.warns(MissingDataWarning):
        expected = ordstats.OrdinalModel.from_formula(FORMULA, frame).fit()
    ddf = dd.from_pandas(frame, npartitions=12).persist()
    distributed.wait(ddf)
    with pytest.warns(MissingDataWarning):
        model = ordstats.OrdinalModel.from_formula(FORMULA, ddf)
    before = set(client.run(os.getpid).values())
    victim = sorted(before)[0]
    killed = threading.Event()
    evaluate = model.evaluator.evaluate

    def evaluate_then_kill(params, **kw):
        # after the first Newton pass, kill a worker while the next pass runs
        if not killed.is_set() and model.evaluator.n_passes >= 3:
            killed.set()
            threading.Timer(0.05, os.kill, (victim, signal.SIGKILL)).start()
        return evaluate(params, **kw)

    model.evaluator.evaluate = evaluate_then_kill
    res = model.fit()
    assert killed.is_set()
    client.wait_for_workers(2)
    after = set(client.run(os.getpid).values())
    assert victim not in after  # the nanny started a new worker process
    np.testing.assert_allclose(res.params, expected.params, rtol=1e-10)
    # a predicted last step leaves the covariance of the last evaluated point (within
    # HESSIAN_RTOL); whether it is predicted depends on the warm start's random rows
    predicted = res.mle_retvals["last_step_predicted"]
    rtol = last_step.HESSIAN_RTOL if predicted else 1e-10
    np.testing.assert_allclose(res.bse, expected.bse, rtol=rtol)


def test_results_methods_on_dask_equal_in_memory(frame, memory_fit):
    res = _dask_fit(dd.from_pandas(frame, npartitions=3))
    np.testing.assert_allclose(res.pseudo_rsquared, memory_fit.pseudo_rsquared, rtol=1e-8)
    np.testing.assert_allclose(
        res.conf_int(method="profile", which=["x1"]),
        memory_fit.conf_int(method="profile", which=["x1"]),
        rtol=1e-6,
    )
    probit = res.model.with_changes(link="probit").fit()
    expected = ordstats.vuong_test(memory_fit, memory_fit.model.with_changes(link="probit").fit())
    assert ordstats.vuong_test(res, probit).statistic == pytest.approx(expected.statistic, rel=1e-7)


def test_dask_expected_covariance_equals_in_memory(frame, memory_fit):
    with dask.config.set(scheduler="threads"):
        res = _dask_fit(dd.from_pandas(frame, npartitions=4))
        got = res.expected_covariance.matrix
    np.testing.assert_allclose(got, memory_fit.expected_covariance.matrix, rtol=1e-8)


def test_dask_partitions_without_rows_add_nothing(frame, memory_fit):
    empty = dd.from_pandas(frame.iloc[:0], npartitions=1)
    ddf = dd.concat([empty, dd.from_pandas(frame, npartitions=3), empty])
    with dask.config.set(scheduler="threads"):
        assert_same_fit(_dask_fit(ddf), memory_fit)
        with pytest.raises(ordstats.errors.DataError, match="the data have no rows"):
            ordstats.OrdinalModel.from_formula(FORMULA, empty, weights="w")


# -- the cost of a pass on a cluster (issue 25, performance) -------------------


def test_a_cluster_fit_reads_the_dask_frame_once(client, frame, memory_fit):
    """The scan keeps the partitions' frames in the workers; the summary builds the arrays."""
    res = _dask_fit(dd.from_pandas(frame, npartitions=6))
    evaluator = res.model.evaluator
    assert evaluator.reader.store is not None
    assert not evaluator.reader.store.read_source
    assert evaluator.n_reads == 1 < evaluator.n_passes
    source = evaluator.source
    assert source.kept == [] and source.first_part is None  # released after the summary
    assert_same_fit(res, memory_fit)


def test_every_worker_reads_a_partition_before_the_scan(client, frame, memory_fit):
    """first_chunk starts one partition per worker thread; the scan reads none of them again."""
    from ordstats.data import distributed as dask_engine

    ddf = dd.from_pandas(frame, npartitions=5)
    source = dask_engine.DaskSource(ddf)
    first = source.first_chunk(["y", "x1"])
    assert source.first_part is not None
    ahead, columns = source.first_part
    assert len(ahead) == 2 and columns == ["y", "x1"]  # the fixture's two workers
    pd.testing.assert_frame_equal(ahead[1].result(), ddf[["y", "x1"]].partitions[1].compute())
    pd.testing.assert_frame_equal(first, ddf[["y", "x1"]].partitions[0].compute())
    assert_same_fit(_dask_fit(ddf), memory_fit)


def test_frames_beyond_the_workers_share_are_read_again(client, frame, memory_fit, monkeypatch):
    from ordstats.data import distributed as dask_engine

    monkeypatch.setattr(dask_engine, "WORKER_MEMORY_SHARE", 1e-12)
    res = _dask_fit(dd.from_pandas(frame, npartitions=3))
    evaluator = res.model.evaluator
    assert evaluator.reader.store is None
    assert evaluator.n_reads == evaluator.n_passes
    assert_same_fit(res, memory_fit)


def test_partitions_are_worked_in_blocks(frame, memory_fit, monkeypatch):
    """Partitions larger than a block (as a file's chunks) give the in-memory fit."""
    from ordstats.data import distributed as dask_engine

    monkeypatch.setattr(dask_engine, "BLOCK_ROWS", 300)
    ddf = dd.from_pandas(frame, npartitions=2)
    with dask.config.set(scheduler="threads"):
        first = dask_engine.DaskSource(ddf).first_chunk(["y", "x1"])
        res = _dask_fit(ddf)
    # only the first block of the first partition leaves the workers
    pd.testing.assert_frame_equal(first, frame[["y", "x1"]].iloc[:300])
    assert_same_fit(res, memory_fit)


def test_dask_fit_of_a_column_far_from_zero_equals_in_memory():
    """x1 + 1e8: the passes evaluate the likelihood in the in-memory fit's shifted
    basis (the standard errors were NaN), and the score sums of a sandwich too."""
    rng = np.random.default_rng(0)
    data = pd.DataFrame({"x1": rng.normal(size=300) + 1e8, "x2": rng.normal(size=300)})
    data["y"] = np.searchsorted([-1, 0, 1], data.x1 - 1e8 + rng.logistic(size=300))
    memory = ordstats.OrdinalModel.from_formula("y ~ x1 + x2", data).fit()
    with dask.config.set(scheduler="threads"):
        res = ordstats.OrdinalModel.from_formula("y ~ x1 + x2", dd.from_pandas(data, 3)).fit()
        robust = res.get_robustcov_results("HC0").bse
    np.testing.assert_allclose(res.params, memory.params, rtol=1e-8)
    np.testing.assert_allclose(res.bse, memory.bse, rtol=1e-7)
    np.testing.assert_allclose(robust, memory.get_robustcov_results("HC0").bse, rtol=1e-6)
