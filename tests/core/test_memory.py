"""Held arrays: memory of their own, without numpy's huge-page advice (ordstats.core.memory)."""

from __future__ import annotations

import mmap
import os
import subprocess
import sys

import numpy as np
import pytest

from ordstats.core import memory
from ordstats.design import stack_columns

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's THP advice")


def backing_map(array: np.ndarray) -> mmap.mmap | None:
    """The anonymous map an array views, if any."""
    base = array
    while base is not None and not isinstance(base, mmap.mmap):
        base = getattr(base, "base", None)
        if isinstance(base, memoryview):
            base = base.obj
    return base


def test_small_arrays_are_ordinary_numpy_arrays():
    small = memory.held_empty((10, 3))
    assert small.shape == (10, 3) and small.dtype == np.float64
    assert backing_map(small) is None


@linux_only
@pytest.mark.parametrize("dtype", [np.float64, np.intp, np.float32])
def test_large_arrays_are_writeable_views_of_a_map(dtype):
    shape = (memory.HUGE_PAGE_ADVICE_BYTES // np.dtype(dtype).itemsize // 4 + 1, 4)
    held = memory.held_empty(shape, dtype)
    assert held.shape == shape and held.dtype == np.dtype(dtype)
    assert held.flags.c_contiguous and held.flags.writeable
    assert backing_map(held) is not None
    values = np.arange(held.size, dtype=dtype).reshape(shape)
    held[...] = values
    np.testing.assert_array_equal(held, values)


@linux_only
def test_a_map_lives_as_long_as_a_view_of_it():
    rows = memory.held_empty((memory.HUGE_PAGE_ADVICE_BYTES // 8, 2))[10:20]
    rows[...] = 7.0
    region = backing_map(rows)
    del region
    np.testing.assert_array_equal(rows, np.full((10, 2), 7.0))


@linux_only
def test_held_stack_equals_the_ordinary_one(monkeypatch):
    rng = np.random.default_rng(0)
    columns = [rng.standard_normal(5000) for _ in range(3)]
    monkeypatch.setattr(memory, "HUGE_PAGE_ADVICE_BYTES", 1)
    held = stack_columns(columns, 5000, held=True)
    plain = stack_columns(columns, 5000)
    assert backing_map(held) is not None and backing_map(plain) is None
    np.testing.assert_array_equal(held, plain)
    np.testing.assert_array_equal(held, np.column_stack(columns))


# -- malloc thresholds in processes started with fixed ones (Dask's workers) ----------

_FAULTS = """
import resource, numpy as np
from ordstats.core.memory import heap_for_passes

def faults(repeat=40):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(repeat):
        block = np.ones(1_000_000)  # 8 MB, freed at once: a pass's temporary
        del block
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

outside = faults()
with heap_for_passes():
    faults(2)  # the heap grows once
    inside = faults()
print(outside, inside, faults())
"""


def _faults(env_extra: dict[str, str]) -> list[int]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")} | env_extra
    done = subprocess.run(
        [sys.executable, "-c", _FAULTS], env=env, capture_output=True, text=True, check=True
    )
    return [int(v) for v in done.stdout.split()]


@linux_only
def test_a_process_with_fixed_malloc_thresholds_reuses_freed_memory_in_passes():
    """Dask's nannies start workers with MALLOC_TRIM_THRESHOLD_=65536: each 8 MB temporary
    was a fresh map filled page by page (about 16,000 page faults for 40 of them here);
    inside heap_for_passes it reuses the heap, and the start-up thresholds come back
    after it."""
    outside, inside, after = _faults({"MALLOC_TRIM_THRESHOLD_": "65536"})
    assert outside > 4000  # every block faults its pages in
    assert inside < outside / 10
    assert after > outside / 2  # back to the process's own settings


@linux_only
def test_heap_for_passes_is_a_no_op_without_fixed_thresholds(monkeypatch):
    memory._fixed_thresholds.cache_clear()
    try:
        monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)
        assert memory._fixed_thresholds() is None
        with memory.heap_for_passes():
            assert memory._heap_users == 0
    finally:
        memory._fixed_thresholds.cache_clear()
