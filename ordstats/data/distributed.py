"""Chunked fits on Dask: one task per partition, on whatever scheduler is active.

:class:`DaskSource` gives a Dask DataFrame the interface of the sources in
:mod:`ordstats.data.sources`: ``map_reduce(func, *args)`` builds one task
``func(partition, *args)`` per partition and sums the results in a tree, then
computes the sum with :func:`dask.compute`, so the threaded, multiprocessing or
``dask.distributed`` scheduler that is active runs it.  A task lost with a
worker is recomputed by Dask; as every task is a pure function of its
partition and the parameters, the sum is the same.

On a ``dask.distributed`` cluster, :meth:`DaskSource.keep_arrays` persists
each partition's likelihood arrays in the workers' memory
(:class:`DaskArrays`, a store of :mod:`ordstats.data.spill`), so that the
Newton passes after the first neither read nor decode the partitions again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import pandas as pd

from ordstats.config import resolve_threads
from ordstats.core.threads import single_threaded_call
from ordstats.data.chunks import ChunkSpec, chunk_arrays
from ordstats.data.parts import add_parts
from ordstats.data.spill import arrays_bytes, cache_setting, decoding_key, serve_arrays, serves
from ordstats.design.core import NO_ROWS
from ordstats.errors import DataError

__all__ = ["DaskArrays", "DaskSource"]

#: Keep a Dask DataFrame's arrays in the workers' memory only up to this share of it.
WORKER_MEMORY_SHARE = 0.25


def _tree_sum(parts: list[Any], delayed: Callable[..., Any]) -> Any:
    """Pairwise sums, so no task adds more than two partial results."""
    while len(parts) > 1:
        paired = [delayed(add_parts)(a, b) for a, b in zip(parts[::2], parts[1::2], strict=False)]
        parts = paired + ([parts[-1]] if len(parts) % 2 else [])
    return parts[0]


def _local_pool(tree: Any) -> dict[str, int]:
    """Dask's local thread or process pool bounded by the ``threads`` option.

    A ``dask.distributed`` cluster sizes its own workers; the synchronous
    scheduler has no pool.
    """
    import dask.base
    import dask.multiprocessing
    import dask.threaded

    local = (dask.threaded.get, dask.multiprocessing.get)
    if dask.base.get_scheduler(collections=[tree]) in local:
        return {"num_workers": resolve_threads(None)}
    return {}


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
        # each task with one BLAS thread (also in a distributed worker's process)
        task = dask.delayed(partial(single_threaded_call, func), pure=True)
        parts = [task(p, *shared) for p in self._select(columns).to_delayed()]
        if not parts:
            raise DataError("the Dask DataFrame has no partitions")
        total = _compute(_tree_sum(parts, dask.delayed), columns)
        if total is None:
            raise DataError(NO_ROWS)
        return total

    def keep_arrays(self, spec: ChunkSpec, n_rows: int) -> DaskArrays | None:
        """Persist every partition's arrays in the workers' memory, or None.

        None without a ``dask.distributed`` client (the local schedulers would
        keep them in this process), with the ``chunk_cache`` option off, or
        when the arrays of ``n_rows`` rows would take more than
        :data:`WORKER_MEMORY_SHARE` of the workers' memory limits.  The
        partitions are read when the first pass over the store runs.
        """
        import dask

        client = _distributed_client()
        if client is None or cache_setting() is None:
            return None
        limits = [w.get("memory_limit") or 0 for w in client.scheduler_info()["workers"].values()]
        if not limits or arrays_bytes(spec, n_rows) > WORKER_MEMORY_SHARE * sum(limits):
            return None
        task = dask.delayed(partial(single_threaded_call, chunk_arrays), pure=True)
        shared = dask.delayed(spec, pure=True)
        columns = spec.plan.read_columns
        parts = [task(p, shared) for p in self._select(columns).to_delayed()]
        if not parts:
            raise DataError("the Dask DataFrame has no partitions")
        return DaskArrays(list(dask.persist(*parts)), spec, columns)

    def first_chunk(self, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """Compute the first partition."""
        return self._select(columns).get_partition(0).compute()

    def map_partitions(self, func: Callable[[pd.DataFrame], Any]) -> Any:
        """Apply ``func`` lazily to every partition (for predictions)."""
        meta = func(self.frame._meta)
        return self.frame.map_partitions(func, meta=meta)


def _distributed_client() -> Any:
    """The active ``dask.distributed`` client, or None."""
    try:
        from distributed import default_client
    except ImportError:  # pragma: no cover - distributed is in the dask extra
        return None
    try:
        return default_client()
    except ValueError:
        return None


def _compute(tree: Any, columns: Sequence[str] | None) -> Any:
    """Compute ``tree`` (a missing column of a partition reported as such)."""
    import dask

    try:
        (total,) = dask.compute(tree, **_local_pool(tree))
    except KeyError as exc:
        if columns is None or "not in index" not in str(exc):
            raise
        raise DataError(
            f"a partition of the Dask DataFrame lacks columns the model reads "
            f"({exc.args[0]}); every partition must hold "
            f"{', '.join(map(repr, columns))}"
        ) from exc
    return total


def _on_kept(arrays: Any, spec: ChunkSpec, location: tuple[str, ...], func: Any, *args: Any) -> Any:
    return func(serve_arrays(arrays, spec, location), spec, *args)


class DaskArrays:
    """A Dask DataFrame's partitions as likelihood arrays in the workers' memory.

    Built by :meth:`DaskSource.keep_arrays`; the store of :mod:`ordstats.data.spill`
    for Dask.

    Parameters
    ----------
    parts : list of dask.delayed.Delayed
        One persisted :class:`~ordstats.data.chunks.ChunkArrays` per partition.
    spec : ChunkSpec
        The spec they were built with.
    columns : list of str
        The columns read (for the message of a partition that lacks one).
    """

    def __init__(self, parts: list[Any], spec: ChunkSpec, columns: Sequence[str]) -> None:
        self.parts = parts
        self.key = decoding_key(spec)
        self.location = tuple(spec.terms.names)
        self.columns = list(columns)

    def __repr__(self) -> str:
        return f"DaskArrays({len(self.parts)} partitions)"

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "parts": []}

    def serves(self, spec: ChunkSpec) -> bool:
        """Whether the kept arrays are those ``spec`` builds."""
        return bool(self.parts) and serves(self.key, self.location, spec)

    def map_reduce(self, func: Callable[..., Any], spec: ChunkSpec, *args: Any) -> Any:
        """``func(arrays_1, spec, *args) + ...`` on the workers (None: no rows)."""
        import dask

        shared = [dask.delayed(a, pure=True) for a in (spec, self.location, func, *args)]
        task = dask.delayed(partial(single_threaded_call, _on_kept), pure=True)
        tree = _tree_sum([task(p, *shared) for p in self.parts], dask.delayed)
        return _compute(tree, self.columns)

    def close(self) -> None:
        """Release the arrays (the workers drop them)."""
        self.parts = []
