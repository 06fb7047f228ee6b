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

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ordstats.data.chunks import ChunkSpec, chunk_arrays

__all__ = ["UsedRows", "reduce_model_frame_rows", "reduce_used_rows"]


@dataclass(frozen=True)
class UsedRows:
    """The rows of any chunk that a fit used, by the rule of :func:`chunk_arrays`.

    It selects rows as a :class:`~ordstats.design.subset.RowQuery` does
    (:meth:`mask`, :meth:`columns`), so predictions of the fitted rows can
    leave out, chunk by chunk, the rows a fit of the same data dropped.

    Attributes
    ----------
    spec : ChunkSpec
        The fit's chunk spec.
    """

    spec: ChunkSpec

    def mask(self, frame: pd.DataFrame) -> np.ndarray:
        """Which rows of ``frame`` (a chunk of the fitted data) the fit used."""
        return np.asarray(chunk_arrays(frame, self.spec).kept, dtype=bool)

    def select(self, frame: pd.DataFrame) -> pd.DataFrame:
        """The rows of ``frame`` that the fit used."""
        return frame.loc[self.mask(frame)]

    def columns(self, names: Sequence[str]) -> list[str]:
        """Those of the columns ``names`` that :meth:`mask` reads."""
        return [c for c in self.spec.plan.read_columns if c in set(names)]


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


def reduce_model_frame_rows(
    frame: pd.DataFrame, spec: ChunkSpec, func: Callable[..., Any], *args: Any
) -> Any:
    """As :func:`reduce_used_rows`, with the complete rows of zero weight too.

    R's model frame keeps those rows (emmeans' reference grid counts them).
    """
    rows = ~chunk_arrays(frame, spec).dropped  # negative weights were refused
    if not rows.any():
        return None
    return func(frame.loc[rows], *args)
