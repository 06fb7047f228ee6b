"""The used rows of a chunk as a DataFrame, for sums that need the raw columns.

Most passes over chunked data need the likelihood arrays of a chunk
(:func:`ordstats.data.chunks.reduce_chunk`).  Some results (the margins verbs:
averages of predictions, comparisons and slopes) need the rows themselves, as
the user's columns, because they change a predictor and rebuild the design.
:func:`reduce_used_rows` gives ``func`` the rows of one chunk that the fit
used (complete in the model's columns, positive weight, finite design: the
rule of :func:`~ordstats.data.chunks.chunk_arrays`), with every column read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd

from ordstats.data.chunks import ChunkSpec, chunk_arrays

__all__ = ["reduce_used_rows"]


def reduce_used_rows(
    frame: pd.DataFrame, spec: ChunkSpec, func: Callable[..., Any], *args: Any
) -> Any:
    """``func(used_rows, *args)`` for one chunk (None when no row of it is used).

    ``func`` must be a module-level function (it travels to Dask workers)
    whose results add up over chunks.

    Parameters
    ----------
    frame : pandas.DataFrame
        One chunk of the raw data.
    spec : ChunkSpec
        The fit's chunk spec (which rows it uses).
    func : callable
    *args
        Passed to ``func``.

    Returns
    -------
    object or None
    """
    kept = chunk_arrays(frame, spec).kept
    if not kept.any():
        return None
    return func(frame.loc[kept], *args)
