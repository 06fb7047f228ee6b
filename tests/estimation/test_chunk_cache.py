"""The chunk cache: passes after the summary read the decoded chunks, with the same numbers.

A fit of data read in chunks keeps each chunk's likelihood arrays after the
summary pass (on local disk for files and DataFrames, in the workers' memory
for Dask on a cluster); the Newton passes and the results' passes over the
arrays read them back.  The sums are those over the source, chunk by chunk in
the same order, so the fit equals the fit that reads the data at every pass
bit for bit.
"""

from __future__ import annotations

import gc
import mmap
import os
import shutil
import tempfile

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats.core import memory
from ordstats.data import spill
from ordstats.errors import (
    CollinearityWarning,
    DataError,
    MissingDataWarning,
    SpecificationError,
)
from tests._chunk_data import FORMULA, assert_same_fit, ratings, write_parquet


@pytest.fixture(scope="module")
def frame():
    return ratings(6000, seed=3)


@pytest.fixture(scope="module")
def memory_fit(frame):
    with pytest.warns(MissingDataWarning):
        return ordstats.OrdinalModel.from_formula(FORMULA, frame).fit()


def _model(data, cache, **kw):
    with ordstats.set_options(chunk_cache=cache), pytest.warns(MissingDataWarning):
        return ordstats.OrdinalModel.from_formula(FORMULA, data, **kw)


def _spill_dirs(where) -> list[str]:
    return sorted(p for p in os.listdir(where) if p.startswith("ordstats-chunks-"))


def _assert_identical(a, b):
    np.testing.assert_array_equal(a.params, b.params)
    np.testing.assert_array_equal(a.bse, b.bse)
    assert a.llf == b.llf


@pytest.mark.parametrize("kind", ["parquet", "frame"])
def test_cached_fit_equals_reading_at_every_pass(tmp_path, frame, memory_fit, kind):
    data = frame
    if kind == "parquet":
        write_parquet(frame, tmp_path / "d")
        data = str(tmp_path / "d")
    cached = _model(data, str(tmp_path), chunksize=700)
    reread = _model(data, False, chunksize=700)
    res_cached, res_reread = cached.fit(), reread.fit()
    _assert_identical(res_cached, res_reread)
    assert_same_fit(res_cached, memory_fit)
    # the same passes; only the level scan and the summary read the source
    assert cached.evaluator.n_passes == reread.evaluator.n_passes > 2
    assert cached.evaluator.n_reads == 2
    assert reread.evaluator.n_reads == reread.evaluator.n_passes
    assert len(_spill_dirs(tmp_path)) == 1


def test_spill_is_removed_with_the_model(tmp_path, frame):
    model = _model(frame, str(tmp_path), chunksize=1000)
    model.fit()
    (directory,) = _spill_dirs(tmp_path)
    assert os.listdir(tmp_path / directory)  # the arrays' files
    del model
    gc.collect()
    assert _spill_dirs(tmp_path) == []


def _is_mapped(values: np.ndarray) -> bool:
    """Whether ``values`` is a view of a :class:`numpy.memmap`."""
    base = values.base
    while base is not None and not isinstance(base, np.memmap):
        base = getattr(base, "base", None)
    return base is not None


def test_passes_read_the_cache_without_copying_it(tmp_path, frame):
    """A chunk's arrays are read-only views of its bytes of the spill files mapped into memory
    (mapped chunk by chunk, so that memory stays bounded by the chunks in flight)."""
    model = _model(frame, str(tmp_path), chunksize=1000)
    store = model.evaluator.reader.store
    chunks = list(store.chunks())
    assert len(chunks) == 6
    for chunk in chunks:
        for values in (chunk.X, chunk.y):
            assert _is_mapped(values)
            assert not values.flags.writeable
    written = np.fromfile(os.path.join(store.path, "X"))
    np.testing.assert_array_equal(np.concatenate([c.X.ravel() for c in chunks]), written)
    res = model.fit()
    assert res.converged
    del chunks, model, store, res
    gc.collect()
    assert _spill_dirs(tmp_path) == []  # removed, maps and all


def test_results_read_the_cache_with_the_same_numbers(tmp_path, frame):
    """The null model, Brant's binary fits and HC0 read the cache or the source as needed."""
    cached = _model(frame, str(tmp_path), chunksize=1000).fit()
    reread = _model(frame, False, chunksize=1000).fit()
    assert cached.llnull == reread.llnull
    np.testing.assert_array_equal(cached.brant_test().to_numpy(), reread.brant_test().to_numpy())
    np.testing.assert_array_equal(
        cached.get_robustcov_results("HC0").bse, reread.get_robustcov_results("HC0").bse
    )
    evaluator = cached.model.evaluator
    assert evaluator.n_reads < evaluator.n_passes


def test_data_changed_after_the_summary_do_not_reach_the_fit(tmp_path, frame, memory_fit):
    """The fit reads the arrays kept by the summary pass, as an in-memory fit reads its design."""
    data = frame.copy()
    model = _model(data, str(tmp_path), chunksize=500)
    data.loc[2900, "f"] = "zz"
    data.loc[0, "y"] = 9
    assert_same_fit(model.fit(), memory_fit)


def test_no_cache_when_a_column_is_dropped_as_aliased(tmp_path, frame):
    data = frame.assign(x3=2.0 * frame["x1"])
    with (
        ordstats.set_options(chunk_cache=str(tmp_path)),
        pytest.warns(MissingDataWarning),
        pytest.warns(CollinearityWarning, match="'x3'"),
    ):
        model = ordstats.OrdinalModel.from_formula(FORMULA + " + x3", data, chunksize=1000)
    assert "x3" not in model.exog_names
    assert _spill_dirs(tmp_path) == []  # its arrays had the dropped column
    res = model.fit()
    assert model.evaluator.n_reads == model.evaluator.n_passes
    with pytest.warns(MissingDataWarning):
        expected = ordstats.OrdinalModel.from_formula(FORMULA, frame).fit()
    assert_same_fit(res, expected)


def test_no_cache_without_room_on_disk(tmp_path, frame, monkeypatch):
    full = shutil.disk_usage(tmp_path)._replace(free=1000)
    monkeypatch.setattr(spill.shutil, "disk_usage", lambda path: full)
    model = _model(frame, str(tmp_path), chunksize=1000)
    model.fit()
    assert _spill_dirs(tmp_path) == []
    assert model.evaluator.n_reads == model.evaluator.n_passes


def test_pickled_model_keeps_no_cache(tmp_path, frame):
    import pickle

    model = _model(frame, str(tmp_path), chunksize=1000)
    res = model.fit()
    restored = pickle.loads(pickle.dumps(res))
    assert restored.model.evaluator.reader.store is None
    np.testing.assert_array_equal(restored.params, res.params)


# ---------------------------------------------------------------------------
# the default setting: chunks held in memory while they fit, the rest in files


@pytest.fixture
def temporary_directory(tmp_path, monkeypatch):
    """The system's temporary directory (where the default setting's files go) in tmp_path."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def _files_of_spills(where) -> list[str]:
    return [f for d in _spill_dirs(where) for f in os.listdir(os.path.join(where, d))]


@pytest.mark.parametrize("kind", ["parquet", "frame"])
def test_default_cache_holds_the_chunks_in_memory(
    temporary_directory, tmp_path, frame, memory_fit, kind
):
    data = frame
    if kind == "parquet":
        write_parquet(frame, tmp_path / "d")
        data = str(tmp_path / "d")
    held = _model(data, True, chunksize=700)
    store = held.evaluator.reader.store
    assert store.memory_budget > 0
    assert all(entry.held is not None for entry in store.entries)
    assert _files_of_spills(temporary_directory) == []  # nothing written
    for chunk in store.chunks():
        assert not chunk.X.flags.writeable and not chunk.y.flags.writeable
    on_disk = _model(data, str(tmp_path), chunksize=700)
    reread = _model(data, False, chunksize=700)
    res = held.fit()
    _assert_identical(res, on_disk.fit())
    _assert_identical(res, reread.fit())
    assert_same_fit(res, memory_fit)
    assert held.evaluator.n_reads == 2
    assert held.evaluator.n_passes == reread.evaluator.n_passes


def test_chunks_beyond_the_memory_share_go_to_files(temporary_directory, frame, monkeypatch):
    """The first chunks stay in memory, the later ones in files; the same fit bit for bit."""
    with ordstats.set_options(chunk_cache=False):
        one_chunk = _model(frame, False, chunksize=1000)
    chunk_bytes = spill.arrays_bytes(one_chunk.evaluator.spec, 1000)
    # room for about half of the 6 chunks' arrays
    monkeypatch.setattr(spill, "available_memory", lambda: 2.5 * chunk_bytes / spill.MEMORY_SHARE)
    model = _model(frame, True, chunksize=1000)
    store = model.evaluator.reader.store
    held = [entry.held is not None for entry in store.entries]
    assert len(held) == 6 and 0 < sum(held) < 6
    assert held == sorted(held, reverse=True)  # the first chunks
    assert store.held_bytes <= 2.5 * chunk_bytes
    assert sorted(_files_of_spills(temporary_directory))  # the later chunks' files
    res = model.fit()
    _assert_identical(res, _model(frame, False, chunksize=1000).fit())
    del model, store, res
    gc.collect()
    assert _spill_dirs(temporary_directory) == []


def test_without_a_memory_figure_every_chunk_goes_to_files(temporary_directory, frame, monkeypatch):
    monkeypatch.setattr(spill, "available_memory", lambda: None)
    model = _model(frame, True, chunksize=1000)
    store = model.evaluator.reader.store
    assert store.memory_budget == 0
    assert all(entry.held is None for entry in store.entries)
    assert _files_of_spills(temporary_directory)
    _assert_identical(model.fit(), _model(frame, False, chunksize=1000).fit())


def test_held_chunks_do_not_share_the_data_s_memory(temporary_directory, frame, memory_fit):
    """Weights read from a DataFrame's column are copied: changing the data after the
    summary pass reaches neither the fit nor the later passes."""
    data = frame.copy()
    with ordstats.set_options(chunk_cache=True), pytest.warns(MissingDataWarning):
        model = ordstats.OrdinalModel.from_formula(FORMULA, data, weights="w", chunksize=500)
    for chunk in model.evaluator.reader.store.chunks():
        assert not np.shares_memory(chunk.weights, data["w"].to_numpy())
    with pytest.warns(MissingDataWarning):
        expected = ordstats.OrdinalModel.from_formula(FORMULA, frame, weights="w").fit()
    data["w"] = 100.0
    assert_same_fit(model.fit(), expected)


def test_available_memory_is_a_positive_number_of_bytes():
    found = spill.available_memory()
    assert found is None or found > 0


def test_chunk_cache_option_is_checked(tmp_path):
    with pytest.raises(SpecificationError, match="not an existing directory"):
        ordstats.set_options(chunk_cache=str(tmp_path / "nowhere"))
    with pytest.raises(SpecificationError, match="chunk_cache must be True, False or a directory"):
        ordstats.set_options(chunk_cache=1)
    assert ordstats.get_options()["chunk_cache"] is True


# -- Dask ----------------------------------------------------------------------


def test_dask_cluster_keeps_the_arrays_in_the_workers(frame, memory_fit, monkeypatch):
    dd = pytest.importorskip("dask.dataframe")
    distributed = pytest.importorskip("distributed")
    from ordstats.data import distributed as dask_engine

    monkeypatch.setattr(dask_engine, "BLOCK_ROWS", 500)  # 1,200-row partitions in 3 blocks
    ddf = dd.from_pandas(frame, npartitions=5)
    with distributed.Client(
        processes=False, n_workers=2, threads_per_worker=1, dashboard_address=None
    ):
        cached = _model(ddf, True)
        reread = _model(ddf, False)
        res_cached, res_reread = cached.fit(), reread.fit()
        assert cached.evaluator.reader.store is not None
        # the level scan keeps the frames in the workers, the summary builds the arrays from them
        assert cached.evaluator.n_reads == 1
        assert reread.evaluator.n_reads == reread.evaluator.n_passes
        _assert_identical(res_cached, res_reread)
        assert_same_fit(res_cached, memory_fit)
        assert res_cached.llnull == res_reread.llnull


def test_dask_without_a_cluster_reads_at_every_pass(frame):
    """The local schedulers would keep the arrays in this process: no store."""
    dd = pytest.importorskip("dask.dataframe")
    model = _model(dd.from_pandas(frame, npartitions=3), True)
    model.fit()
    assert model.evaluator.reader.store is None
    assert model.evaluator.n_reads == model.evaluator.n_passes


# ---------------------------------------------------------------------------
# numeric designs: the first pass writes the arrays, the summary reads no source

NUMERIC = "y ~ x1 + x2"
LABELS = ["poor", "fair", "good", "great", "best"]


@pytest.fixture(scope="module")
def numeric_frame(frame):
    # sorted by x1, so the first chunks lack the high levels: the response's
    # values are first seen in another order than the levels'
    data = frame[["y", "x1", "x2", "w"]].sort_values("x1").reset_index(drop=True)
    return data.assign(y=np.asarray(LABELS, dtype=object)[data["y"].to_numpy() - 1])


def _numeric_fit(data, cache, **kw):
    with ordstats.set_options(chunk_cache=cache), pytest.warns(MissingDataWarning):
        model = ordstats.OrdinalModel.from_formula(NUMERIC, data, levels=LABELS, weights="w", **kw)
    return model, model.fit()


@pytest.mark.parametrize("kind", ["parquet", "frame"])
def test_numeric_fit_reads_the_source_once(tmp_path, numeric_frame, kind):
    data = numeric_frame
    if kind == "parquet":
        write_parquet(numeric_frame, tmp_path / "d")
        data = str(tmp_path / "d")
    once, res_once = _numeric_fit(data, str(tmp_path), chunksize=700)
    every, res_every = _numeric_fit(data, False, chunksize=700)
    _, memory = _numeric_fit(numeric_frame, True)
    _assert_identical(res_once, res_every)
    assert_same_fit(res_once, memory)
    assert once.evaluator.n_passes == every.evaluator.n_passes > 2
    assert once.evaluator.n_reads == 1  # the level scan; the summary reads its arrays
    assert every.evaluator.n_reads == every.evaluator.n_passes
    assert len(_spill_dirs(tmp_path)) == 1


def _backing_map(array):
    """The anonymous map that an array views (None: numpy's own memory)."""
    base = array
    while base is not None and not isinstance(base, mmap.mmap):
        base = base.obj if isinstance(base, memoryview) else getattr(base, "base", None)
    return base


def test_held_numeric_chunks_are_built_in_memory_of_their_own(numeric_frame, monkeypatch):
    """The first pass stacks the held designs outside numpy's huge-page advice
    (ordstats.core.memory); the fit is the one that reads at every pass."""
    monkeypatch.setattr(memory, "HUGE_PAGE_ADVICE_BYTES", 1)  # every design counts as large
    held, res_held = _numeric_fit(numeric_frame, True, chunksize=700)
    _, res_every = _numeric_fit(numeric_frame, False, chunksize=700)
    chunks = list(held.evaluator.reader.store.chunks())
    assert len(chunks) == 9
    assert all(_backing_map(chunk.X) is not None for chunk in chunks)
    assert all(not chunk.X.flags.writeable for chunk in chunks)
    _assert_identical(res_held, res_every)


def test_dask_workers_build_their_kept_numeric_arrays_in_memory_of_their_own(
    numeric_frame, monkeypatch
):
    from ordstats.data import distributed as dask_engine
    from ordstats.data.chunks import chunk_arrays

    monkeypatch.setattr(memory, "HUGE_PAGE_ADVICE_BYTES", 1)
    model, _ = _numeric_fit(numeric_frame, False, chunksize=700)
    spec = model.evaluator.spec
    part = numeric_frame.iloc[:1500]
    kept = dask_engine._block_arrays(part, spec)
    assert kept and all(_backing_map(arrays.X) is not None for arrays in kept)
    passing = chunk_arrays(part, spec)  # a pass's arrays, dropped after it: numpy's memory
    assert _backing_map(passing.X) is None
    np.testing.assert_array_equal(np.vstack([arrays.X for arrays in kept]), passing.X)


def test_numeric_fit_with_warm_start_reads_the_source_once(tmp_path):
    rng = np.random.default_rng(5)
    n = 30_000
    x1, x2 = rng.normal(size=n), rng.normal(size=n)
    y = np.searchsorted([-1.0, 0.0, 1.2], 0.7 * x1 - 0.4 * x2 + rng.logistic(size=n))
    data = pd.DataFrame({"y": y, "x1": x1, "x2": x2})
    with ordstats.set_options(chunk_cache=str(tmp_path)):
        model = ordstats.OrdinalModel.from_formula(NUMERIC, data, chunksize=4000)
        res = model.fit()
    with ordstats.set_options(chunk_cache=False):
        reread = ordstats.OrdinalModel.from_formula(NUMERIC, data, chunksize=4000).fit()
    memory = ordstats.OrdinalModel.from_formula(NUMERIC, data).fit()
    assert model.evaluator.first_evaluation is not None  # made by the summary, from the arrays
    assert model.evaluator.n_reads == 1
    _assert_identical(res, reread)
    # warm-started fits stop within the solver's tolerance of each other (a
    # threshold near zero differs by 3e-12 from the in-memory one)
    assert_same_fit(res, memory, rtol=1e-8)


def test_numeric_fit_stops_writing_without_room_on_disk(tmp_path, numeric_frame, monkeypatch):
    full = shutil.disk_usage(tmp_path)._replace(free=100_000)  # room for a chunk or two
    monkeypatch.setattr(spill.shutil, "disk_usage", lambda path: full)
    model, res = _numeric_fit(numeric_frame, str(tmp_path), chunksize=700)
    assert _spill_dirs(tmp_path) == []
    assert model.evaluator.n_reads == model.evaluator.n_passes
    _, memory = _numeric_fit(numeric_frame, True)
    assert_same_fit(res, memory)


def test_numeric_fit_without_cache_writes_nothing_in_the_first_pass(tmp_path, numeric_frame):
    model, _ = _numeric_fit(numeric_frame, False, chunksize=700)
    assert model.evaluator.n_reads == model.evaluator.n_passes
    assert _spill_dirs(tmp_path) == []


def test_numeric_fit_drops_the_first_pass_arrays_when_a_column_is_aliased(tmp_path, numeric_frame):
    data = numeric_frame.assign(x3=2.0 * numeric_frame["x1"])
    with (
        ordstats.set_options(chunk_cache=str(tmp_path)),
        pytest.warns(MissingDataWarning),
        pytest.warns(CollinearityWarning, match="'x3'"),
    ):
        model = ordstats.OrdinalModel.from_formula(
            NUMERIC + " + x3", data, levels=LABELS, weights="w", chunksize=700
        )
    assert "x3" not in model.exog_names
    assert _spill_dirs(tmp_path) == []
    res = model.fit()
    _, memory = _numeric_fit(numeric_frame, True)
    assert_same_fit(res, memory)


def test_numeric_fit_failing_in_the_first_pass_leaves_no_files(tmp_path, numeric_frame):
    data = numeric_frame.copy()
    data.loc[len(data) - 1, "w"] = -1.0  # in the last chunk: earlier chunks were written
    with (
        ordstats.set_options(chunk_cache=str(tmp_path)),
        pytest.raises(DataError, match="non-negative frequency weights"),
    ):
        ordstats.OrdinalModel.from_formula(NUMERIC, data, levels=LABELS, weights="w", chunksize=700)
    assert _spill_dirs(tmp_path) == []
