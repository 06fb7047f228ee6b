"""Arrays that a fit holds for its whole life, in memory that is cheap to fill the first time.

numpy asks Linux for transparent huge pages (``madvise(MADV_HUGEPAGE)``) for
every array of 4 MiB or more.  Where the kernel's ``defrag`` setting is
``madvise`` (the default of most distributions), the first write to such
memory may make the kernel compact memory to find a huge page, on the
writing thread.  For arrays that are filled once and then kept, such as the
chunks a chunked fit holds between its passes, that is all cost and no gain:
filling 1.6 GB of held chunks (10^7 rows x 20 columns) took 1.0-2.8 s of
system CPU with the advice and 0.46-0.50 s without it (``bench/README.md``).
Short-lived arrays keep numpy's allocator, whose freed memory is reused.
"""

from __future__ import annotations

import mmap
import sys

import numpy as np

__all__ = ["held_empty"]

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
