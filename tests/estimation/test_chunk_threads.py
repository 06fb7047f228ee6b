"""The chunks of a pass are evaluated on a pool of threads and added in their order (issue 25).

Sums over chunks are those of one thread bit for bit, whatever the order in
which the threads end; the arrays a pass keeps (the chunk cache) are written in
the chunks' order; each chunk runs with one BLAS thread.  No test times anything.
"""

from __future__ import annotations

import functools
import os
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

import ordstats
from ordstats.core import threads as core_threads
from ordstats.core.threads import for_each_in_order
from ordstats.data import chunks, reservoir
from ordstats.data.parts import InOrder, sum_in_order
from ordstats.errors import DataError, MissingDataWarning
from ordstats.estimation import evaluators
from tests._chunk_data import FORMULA, ratings, write_parquet

NUMERIC = "y ~ x1 + x2 + w"


@pytest.fixture
def two_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    """Passes may use two threads, also on a machine with one core and for small chunks."""
    monkeypatch.setattr(core_threads, "usable_cores", lambda: 2)
    monkeypatch.setattr(core_threads, "POOL_MIN_ROWS", 0)


@pytest.fixture
def threads_used(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """Names of the threads that evaluate a chunk's likelihood, filled as fits run."""
    names: set[str] = set()
    original = chunks.arrays_totals

    def recording(*args: Any, **kwargs: Any) -> Any:
        names.add(threading.current_thread().name)
        return original(*args, **kwargs)

    for module in (chunks, evaluators, reservoir):
        monkeypatch.setattr(module, "arrays_totals", recording)
    return names


def test_results_are_consumed_in_the_items_order_when_a_later_one_ends_first():
    second_done = threading.Event()
    order: list[int] = []

    def work(k: int) -> int:
        if k == 0:
            second_done.wait()  # item 0 ends only after item 1 has ended
        if k == 1:
            second_done.set()
        return k

    for_each_in_order(work, range(6), order.append, threads=2)
    assert order == list(range(6))


def test_a_sum_in_order_is_the_one_thread_sum_bit_for_bit():
    rng = np.random.default_rng(5)
    # magnitudes far apart: floating-point addition in another order gives another sum
    values = rng.standard_normal(200) * 10.0 ** rng.integers(-8, 16, 200)
    parts = [np.array([v, -v / 3, v * 1e-9]) for v in values]
    serial = functools.reduce(lambda a, b: a + b, parts)
    for threads in (2, 3, 8):
        np.testing.assert_array_equal(sum_in_order(lambda p: p, parts, threads), serial)
    assert sum_in_order(lambda p: None, parts, 2) is None


def test_the_first_error_in_the_items_order_is_raised_and_later_results_are_not_added():
    consumed: list[int] = []

    def work(k: int) -> int:
        if k in (3, 5):
            raise DataError(f"bad chunk {k}")
        return k

    with pytest.raises(DataError, match="bad chunk 3"):
        for_each_in_order(work, range(40), consumed.append, threads=2)
    assert consumed == [0, 1, 2]


def test_in_order_steps_run_in_the_calling_thread_in_the_items_order():
    steps: list[tuple[int, str]] = []
    caller = threading.current_thread().name

    def work(k: int) -> InOrder:
        def step() -> int:
            steps.append((k, threading.current_thread().name))
            return k

        return InOrder(step)

    assert sum_in_order(work, range(10), 2) == 45
    assert steps == [(k, caller) for k in range(10)]


def test_each_call_runs_with_one_blas_thread_and_the_callers_setting_returns():
    def blas(_: int) -> int:
        return max(p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas")

    with threadpool_limits(limits=2, user_api="blas"):
        seen: list[int] = []
        for_each_in_order(blas, range(8), seen.append, threads=2)
        assert seen == [1] * 8
        assert blas(0) == 2


def test_each_call_sees_the_callers_numpy_error_state():
    seen: list[str] = []
    with np.errstate(over="raise"):
        for_each_in_order(lambda _: np.geterr()["over"], range(4), seen.append, threads=2)
    assert seen == ["raise"] * 4


# -- fits: two threads give the one-thread fit bit for bit ---------------------------


def _fit(data: Any, formula: str, threads: int, cache: Any, **kw: Any):
    with ordstats.set_options(threads=threads, chunk_cache=cache), pytest.warns(MissingDataWarning):
        model = ordstats.OrdinalModel.from_formula(formula, data, chunksize=500, **kw)
        return model, model.fit()


def _spill_bytes(model) -> dict[str, bytes]:
    store = model.evaluator.reader.store
    return {name: Path(store.path, name).read_bytes() for name in sorted(os.listdir(store.path))}


@pytest.mark.parametrize("formula", [NUMERIC, FORMULA])
@pytest.mark.parametrize("kind", ["parquet", "frame"])
def test_a_fit_on_two_threads_is_the_one_thread_fit(
    tmp_path, two_cores, threads_used, formula, kind
):
    frame = ratings(12_000, seed=9)  # 24 chunks; above 10,000 rows the fit starts warm
    data: Any = frame
    if kind == "parquet":
        write_parquet(frame, tmp_path / "d", n_files=4)
        data = str(tmp_path / "d")
    one_model, one = _fit(data, formula, 1, str(tmp_path), weights="w")
    assert threads_used == {threading.current_thread().name}
    threads_used.clear()
    two_model, two = _fit(data, formula, 2, str(tmp_path), weights="w")
    assert len(threads_used) == 2 and all(n.startswith("ordstats-pass") for n in threads_used)
    np.testing.assert_array_equal(two.params, one.params)
    np.testing.assert_array_equal(two.bse, one.bse)
    assert two.llf == one.llf and two.mle_retvals == one.mle_retvals
    assert two_model.evaluator.n_passes == one_model.evaluator.n_passes
    # the kept chunks were written in the same order, byte for byte
    assert _spill_bytes(two_model) == _spill_bytes(one_model)
    np.testing.assert_array_equal(
        two_model.evaluator.subsample(3000)[0].X, one_model.evaluator.subsample(3000)[0].X
    )
    _, reread = _fit(data, formula, 2, False, weights="w")  # every pass reads the source
    np.testing.assert_array_equal(reread.params, one.params)


def test_an_error_in_a_chunk_names_it_on_two_threads(tmp_path, two_cores):
    frame = ratings(3000, seed=2, missing=False)
    frame.loc[2500, "w"] = -1.0  # a negative weight in the last file
    write_parquet(frame, tmp_path / "d", n_files=3)
    with (
        ordstats.set_options(threads=2),
        pytest.raises(
            DataError, match=r"weights must be non-negative.*\(in .*part-02\.parquet, chunk \d\)"
        ),
    ):
        ordstats.OrdinalModel.from_formula(NUMERIC, str(tmp_path / "d"), chunksize=300, weights="w")


# -- the summary of a chunk's arrays -------------------------------------------------


@pytest.mark.parametrize("n", [0, 1, 63, 64, 1000, 1003])
def test_largest_magnitudes_are_those_of_the_absolute_values(n):
    from ordstats.data.chunks import _largest_magnitudes

    rng = np.random.default_rng(n)
    design = rng.standard_normal((n, 5)) * [1, 1e-200, 1e200, 3, 0]
    if n > 7:
        design[n - 1, 0], design[n // 2, 3], design[3, 1] = -1e5, np.nan, -np.inf
    expected = np.max(np.abs(design), axis=0, initial=0.0)
    np.testing.assert_array_equal(_largest_magnitudes(design), expected)
    np.testing.assert_array_equal(_largest_magnitudes(np.asfortranarray(design)), expected)


# -- the spill leaves out weights of ones and offsets of zeros ------------------------


def test_the_spill_reads_back_every_array_bit_for_bit_without_constant_vectors(tmp_path):
    import pandas as pd

    from ordstats.data.chunks import ChunkArrays
    from ordstats.data.spill import DiskSpill

    rng = np.random.default_rng(4)

    def arrays(n: int, weights: np.ndarray, offset: np.ndarray) -> ChunkArrays:
        return ChunkArrays(
            y=rng.integers(0, 4, n),
            X=rng.standard_normal((n, 3)),
            weights=weights,
            offset=offset,
            bad=pd.Series({"x": 0}, dtype=np.int64),
            n_bad=0,
            n_rows=n,
        )

    chunks_in = [
        arrays(50, np.ones(50), np.zeros(50)),  # nothing of weights or offset written
        arrays(40, rng.integers(1, 4, 40).astype(float), np.array([-0.0] * 20 + [0.5] * 20)),
        arrays(30, np.ones(30), np.full(30, -0.0)),  # -0.0 is written: not 0.0 bit for bit
        arrays(0, np.ones(0), np.zeros(0)),
    ]
    spill = DiskSpill(str(tmp_path), ("key",), ("a", "b", "c"), {"X": 3, "nominal": 0, "scale": 0})
    for chunk in chunks_in:
        spill.add(chunk)
    spill.finish()
    assert (tmp_path / "weights").stat().st_size == 8 * 40
    assert (tmp_path / "offset").stat().st_size == 8 * (40 + 30)
    read = list(spill.chunks())
    assert len(read) == 3
    for got, want in zip(read, chunks_in, strict=False):
        for name in ("y", "X", "weights", "offset"):
            a, b = getattr(got, name), getattr(want, name)
            assert a.dtype == b.dtype and a.shape == b.shape, name
            np.testing.assert_array_equal(a.view(np.uint64), b.view(np.uint64), err_msg=name)


def test_an_error_of_the_spills_writing_thread_is_raised_and_close_removes_the_files(
    tmp_path, monkeypatch
):
    import pandas as pd

    from ordstats.data import spill as spill_module
    from ordstats.data.chunks import ChunkArrays

    written: list[int] = []

    def failing(columns):
        if written:
            raise OSError("No space left on device")
        written.append(len(columns))

    monkeypatch.setattr(spill_module, "_write_columns", failing)
    directory = tmp_path / "spill"
    directory.mkdir()
    spill = spill_module.DiskSpill(
        str(directory), ("key",), ("a",), {"X": 1, "nominal": 0, "scale": 0}
    )
    chunk = ChunkArrays(
        y=np.zeros(5, dtype=np.intp),
        X=np.ones((5, 1)),
        weights=np.ones(5),
        offset=np.zeros(5),
        bad=pd.Series({"a": 0}, dtype=np.int64),
        n_bad=0,
        n_rows=5,
    )
    with pytest.raises(OSError, match="No space left"):
        for _ in range(10):  # at most WRITES_AHEAD chunks wait: the error comes in time
            spill.add(chunk)
        spill.finish()
    spill.close()
    assert not directory.exists()


# -- small chunks stay in the calling thread -------------------------------------------


def test_chunks_below_the_pool_size_are_evaluated_in_the_calling_thread(monkeypatch, threads_used):
    monkeypatch.setattr(core_threads, "usable_cores", lambda: 2)
    with ordstats.set_options(threads=2):
        assert core_threads.pass_threads() == 2
        assert core_threads.pass_threads(core_threads.POOL_MIN_ROWS) == 2
        assert core_threads.pass_threads(core_threads.POOL_MIN_ROWS - 1) == 1
    frame = ratings(3000, seed=5, missing=False)
    with ordstats.set_options(threads=2):
        ordstats.OrdinalModel.from_formula(NUMERIC, frame, chunksize=500).fit(disp=False)
    assert threads_used == {threading.current_thread().name}
