"""Memory for a fit's arrays: held ones cheap to fill the first time, temporaries reused.

numpy asks Linux for transparent huge pages (``madvise(MADV_HUGEPAGE)``) for
every array of 4 MiB or more.  Where the kernel's ``defrag`` setting is
``madvise`` (the default of most distributions), the first write to such
memory may make the kernel compact memory to find a huge page, on the
writing thread.  For arrays that are filled once and then kept, such as the
chunks a chunked fit holds between its passes, that is all cost and no gain:
filling 1.6 GB of held chunks (10^7 rows x 20 columns) took 1.0-2.8 s of
system CPU with the advice and 0.46-0.50 s without it (``bench/README.md``).
Short-lived arrays keep numpy's allocator, whose freed memory is reused.

That reuse is glibc's: it serves allocations above its ``mmap`` threshold by
fresh maps, and raises the threshold as such blocks are freed, so that a
pass's temporaries (a chunk's 0.8-16 MB vectors and products) soon come from
memory it keeps.  A process started with ``MALLOC_TRIM_THRESHOLD_`` set (Dask's
nannies set 65536 for their workers) keeps the threshold at 128 KiB: every
temporary is a fresh map, filled page by page, and the likelihood of a chunk
of 10^5 x 20 took 22-23 ms in a Dask worker against 11.5 ms in the driver.
:func:`heap_for_passes` lifts both thresholds while a pass's task runs there.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import mmap
import os
import sys
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = ["heap_for_passes", "held_empty"]

#: From this size on, numpy advises huge pages (its ``madvise_hugepage`` threshold).
HUGE_PAGE_ADVICE_BYTES = 4 * 1024 * 1024


def held_empty(shape: tuple[int, ...], dtype: type | np.dtype = np.float64) -> np.ndarray:
    """An uninitialised C-ordered array in anonymous memory of its own, without huge-page advice.

    Parameters
    ----------
    shape : tuple of int
        The array's shape.
    dtype : dtype, default float64
        Its element type.

    Returns
    -------
    numpy.ndarray
        A writeable array.  Below :data:`HUGE_PAGE_ADVICE_BYTES`, or off
        Linux, an ordinary :func:`numpy.empty` array; otherwise a view of an
        anonymous memory map, released when the last view of it goes.
    """
    dtype = np.dtype(dtype)
    n_bytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if n_bytes < HUGE_PAGE_ADVICE_BYTES or not sys.platform.startswith("linux"):
        return np.empty(shape, dtype=dtype)
    # an anonymous private map is zero-filled on first touch, page by page
    region = mmap.mmap(-1, n_bytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    return np.frombuffer(region, dtype=dtype).reshape(shape)


#: glibc's ``mallopt`` parameters (``malloc.h``).
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
#: During a pass: allocations up to glibc's largest mmap threshold (32 MiB on 64-bit)
#: come from the heap, and up to this much freed memory stays there.
_PASS_MMAP_THRESHOLD = 32 * 1024 * 1024
_PASS_TRIM_THRESHOLD = 128 * 1024 * 1024
_HEAP_LOCK = threading.Lock()
_heap_users = 0


@functools.cache
def _fixed_thresholds() -> tuple[Any, int, int] | None:
    """``(mallopt, trim, mmap)``: glibc's function and the thresholds the process started with.

    None unless this is glibc on Linux and ``MALLOC_TRIM_THRESHOLD_`` fixed the
    thresholds at start-up (glibc's dynamic threshold is then off).
    """
    trim = os.environ.get("MALLOC_TRIM_THRESHOLD_")
    if not sys.platform.startswith("linux") or trim is None:
        return None
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018 - glibc only (musl has no dynamic threshold)
        mallopt = libc.mallopt
        fixed_trim = int(trim)
        fixed_mmap = int(os.environ.get("MALLOC_MMAP_THRESHOLD_", 128 * 1024))
    except (AttributeError, OSError, ValueError):
        return None
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return mallopt, fixed_trim, fixed_mmap


@contextlib.contextmanager
def heap_for_passes() -> Iterator[None]:
    """Let a pass's temporaries reuse freed memory in a process with fixed malloc thresholds.

    A no-op except in a glibc process started with ``MALLOC_TRIM_THRESHOLD_``
    (see the module docstring): there the mmap and trim thresholds are raised
    while any task of the process is inside, and set back to the start-up
    values when the last one leaves.
    """
    fixed = _fixed_thresholds()
    if fixed is None:
        yield
        return
    mallopt, trim, mmap_threshold = fixed
    global _heap_users
    with _HEAP_LOCK:
        _heap_users += 1
        if _heap_users == 1:
            mallopt(_M_MMAP_THRESHOLD, _PASS_MMAP_THRESHOLD)
            mallopt(_M_TRIM_THRESHOLD, _PASS_TRIM_THRESHOLD)
    try:
        yield
    finally:
        with _HEAP_LOCK:
            _heap_users -= 1
            if _heap_users == 0:
                mallopt(_M_TRIM_THRESHOLD, trim)
                mallopt(_M_MMAP_THRESHOLD, mmap_threshold)
