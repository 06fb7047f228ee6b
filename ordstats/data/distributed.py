"""Chunked fits on Dask: one task per partition, on whatever scheduler is active.

:class:`DaskSource` gives a Dask DataFrame the interface of the sources in
:mod:`ordstats.data.sources`: ``map_reduce(func, *args)`` builds one task
``func(partition, *args)`` per partition and sums the results in a tree, then
computes the sum with :func:`dask.compute`, so the threaded, multiprocessing or
``dask.distributed`` scheduler that is active runs it.  A task lost with a
worker is recomputed by Dask; as every task is a pure function of its
partition and the parameters, the sum is the same.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from ordstats.data.parts import add_parts
from ordstats.design.core import NO_ROWS
from ordstats.errors import DataError

__all__ = ["DaskSource"]


def _tree_sum(parts: list[Any], delayed: Callable[..., Any]) -> Any:
    """Pairwise sums, so no task adds more than two partial results."""
    while len(parts) > 1:
        paired = [delayed(add_parts)(a, b) for a, b in zip(parts[::2], parts[1::2], strict=False)]
        parts = paired + ([parts[-1]] if len(parts) % 2 else [])
    return parts[0]


class DaskSource:
    """A Dask DataFrame as a chunked source: each partition is a chunk.

    Parameters
    ----------
    frame : dask.dataframe.DataFrame
        Persist it first (``frame.persist()``) if it is expensive to compute:
        every pass of the fit reads all partitions.
    """

    def __init__(self, frame: Any) -> None:
        self.frame = frame
        self.columns = [str(c) for c in frame.columns]

    def __repr__(self) -> str:
        return f"DaskSource({self.frame.npartitions} partitions)"

    def _select(self, columns: Sequence[str] | None) -> Any:
        return self.frame if columns is None else self.frame[list(columns)]

    def map_reduce(
        self, func: Callable[..., Any], *args: Any, columns: Sequence[str] | None = None
    ) -> Any:
        """``func(partition_1, *args) + ...`` computed on the active Dask scheduler."""
        import dask

        shared = [dask.delayed(a, pure=True) for a in args]
        task = dask.delayed(func, pure=True)
        parts = [task(p, *shared) for p in self._select(columns).to_delayed()]
        if not parts:
            raise DataError("the Dask DataFrame has no partitions")
        try:
            (total,) = dask.compute(_tree_sum(parts, dask.delayed))
        except KeyError as exc:
            if columns is None or "not in index" not in str(exc):
                raise
            raise DataError(
                f"a partition of the Dask DataFrame lacks columns the model reads "
                f"({exc.args[0]}); every partition must hold "
                f"{', '.join(map(repr, columns))}"
            ) from exc
        if total is None:
            raise DataError(NO_ROWS)
        return total

    def first_chunk(self, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """Compute the first partition."""
        return self._select(columns).get_partition(0).compute()

    def map_partitions(self, func: Callable[[pd.DataFrame], Any]) -> Any:
        """Apply ``func`` lazily to every partition (for predictions)."""
        meta = func(self.frame._meta)
        return self.frame.map_partitions(func, meta=meta)
