"""Chunked fits on Dask: one task per partition, on whatever scheduler is active.

:class:`DaskSource` gives a Dask DataFrame the interface of the sources in
:mod:`ordstats.data.sources`: ``map_reduce(func, *args)`` runs one task per
partition, which adds up ``func(block, *args)`` over the partition's blocks of
:data:`BLOCK_ROWS` rows (the size of a file's chunks: the likelihood's
temporaries stay small), and sums the partitions' results in a tree.  A task
lost with a worker is recomputed by Dask; as every task is a pure function of
its partition and the parameters, the sum is the same.

On a ``dask.distributed`` cluster the passes are futures: the first pass
over a source (the level scan) also keeps each partition's frame in the
workers' memory where it fits, and :meth:`DaskSource.keep_arrays` turns the
kept frames into each partition's likelihood arrays (:class:`DaskArrays`, a
store of :mod:`ordstats.data.spill`) without reading the source again, so
that a fit reads the Dask DataFrame once and the Newton passes after the
summary neither read nor decode the partitions.  The partitions' sums are
added on the workers; only the total comes back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, fields, is_dataclass, replace
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from ordstats.config import resolve_threads
from ordstats.core.threads import single_threaded_call
from ordstats.data.chunks import ChunkArrays, ChunkSpec, chunk_arrays
from ordstats.data.parts import add_parts
from ordstats.data.reservoir import SampledScan
from ordstats.data.spark import sample_share
from ordstats.data.spill import arrays_bytes, cache_setting, decoding_key, serve_arrays, serves
from ordstats.design.core import NO_ROWS
from ordstats.errors import DataError

__all__ = ["BLOCK_ROWS", "DaskArrays", "DaskSource"]

#: Keep a Dask DataFrame's arrays in the workers' memory only up to this share of it.
WORKER_MEMORY_SHARE = 0.25
#: Rows of the blocks a task splits its partition into (a file's chunk size).
BLOCK_ROWS = 100_000


def _blocks(frame: pd.DataFrame) -> Iterator[pd.DataFrame]:
    """The partition in blocks of :data:`BLOCK_ROWS` rows (a partition without rows as is)."""
    if not len(frame):
        yield frame
    for start in range(0, len(frame), BLOCK_ROWS):
        yield frame.iloc[start : start + BLOCK_ROWS]


def _first_block(frame: pd.DataFrame) -> pd.DataFrame:
    return next(_blocks(frame))


def _over_blocks(func: Callable[..., Any], frame: pd.DataFrame, *args: Any) -> Any:
    """``func(block, *args)`` added up over the partition's blocks."""
    total = None
    for block in _blocks(frame):
        total = add_parts(total, func(block, *args))
    return total


def _block_arrays(frame: pd.DataFrame, spec: ChunkSpec) -> list[ChunkArrays]:
    """The likelihood arrays of each block of the partition, kept by the worker."""
    return [chunk_arrays(block, spec, held=True) for block in _blocks(frame)]


def _on_kept(
    func: Callable[..., Any],
    spec: ChunkSpec,
    location: tuple[str, ...],
    args: tuple[Any, ...],
    blocks: list[ChunkArrays],
) -> Any:
    """``func(arrays, spec, *args)`` added up over a partition's kept blocks."""
    total = None
    for arrays in blocks:
        total = add_parts(total, func(serve_arrays(arrays, spec, location), spec, *args))
    return total


def _partition_total(
    func: Callable[..., Any], n_partitions: int, frame: pd.DataFrame, *args: Any
) -> Any:
    """:func:`_over_blocks`, a first pass's sample cut to the partition's share.

    Each partition sends on only its share of the warm start's subsample
    (:func:`~ordstats.data.spark.sample_share`, as a Spark partition does), not
    its whole reservoir: the rows below the smallest bound of the partitions
    (:meth:`~ordstats.data.reservoir.Reservoir.share`) still hold the whole
    subsample, unless partitions differ much in size.  Sending whole
    reservoirs moved up to 200,000 rows per partition between the workers and
    to the client (37 MB each at 21 columns).
    """
    total = _over_blocks(func, frame, *args)
    if not isinstance(total, SampledScan) or n_partitions <= 1:
        return total
    rows = sample_share(total.scan.n_rows, n_partitions, total.sample.capacity)
    return replace(total, sample=total.sample.share(rows))


def _with_args(
    func: Callable[..., Any], args: tuple[Any, ...], n_partitions: int, frame: pd.DataFrame
) -> Any:
    """:func:`_partition_total` with the pass's arguments bound first (they travel in the task)."""
    return _partition_total(func, n_partitions, frame, *args)


def _pass_and_frame(
    func: Callable[..., Any],
    args: tuple[Any, ...],
    budget: float,
    n_partitions: int,
    frame: pd.DataFrame,
) -> tuple[Any, pd.DataFrame | None]:
    """The partition's result of the pass, and the frame if it takes at most ``budget`` bytes."""
    total = _with_args(func, args, n_partitions, frame)
    fits = frame.memory_usage(index=True, deep=True).sum() <= budget
    return total, frame if fits else None


@dataclass
class _KeptSum:
    """A pass's sum, and whether every partition's frame was kept."""

    total: Any
    all_kept: bool

    def __add__(self, other: _KeptSum) -> _KeptSum:
        return _KeptSum(add_parts(self.total, other.total), self.all_kept and other.all_kept)


def _kept_sum(pair: tuple[Any, pd.DataFrame | None]) -> _KeptSum:
    return _KeptSum(pair[0], pair[1] is not None)


def _second(pair: tuple[Any, Any]) -> Any:
    return pair[1]


def _tree_sum(parts: list[Any], delayed: Callable[..., Any]) -> Any:
    """Pairwise sums, so no task adds more than two partial results."""
    while len(parts) > 1:
        paired = [delayed(add_parts)(a, b) for a, b in zip(parts[::2], parts[1::2], strict=False)]
        parts = paired + ([parts[-1]] if len(parts) % 2 else [])
    return parts[0]


def _future_sum(client: Any, futures: list[Any], columns: Sequence[str] | None) -> Any:
    """The futures' results added up pairwise on the workers; the total gathered here."""
    if not futures:
        raise DataError("the Dask DataFrame has no partitions")
    total = _tree_sum(futures, lambda f: partial(client.submit, f, pure=False))
    with _missing_columns_reported(columns):
        return _aligned(total.result())


def _aligned(value: Any) -> Any:
    """``value`` with its arrays copied where they are not aligned in memory.

    dask.distributed hands arrays over in pickle's out-of-band buffers, which
    need not be aligned; SciPy's LAPACK wrappers refuse such arrays ("Expected
    a real or complex array").  Tuples, lists, dicts and dataclasses are walked.
    """
    if isinstance(value, np.ndarray):
        return value if value.flags.aligned else value.copy()
    if isinstance(value, (tuple, list)) and not hasattr(value, "_fields"):
        return type(value)(_aligned(v) for v in value)
    if isinstance(value, dict):
        return {k: _aligned(v) for k, v in value.items()}
    if is_dataclass(value) and not isinstance(value, type):
        old = {f.name: getattr(value, f.name) for f in fields(value) if f.init}
        new = {name: _aligned(v) for name, v in old.items()}
        changed = {name: v for name, v in new.items() if v is not old[name]}
        return replace(value, **changed) if changed else value
    return value


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
        every pass of the fit that does not read kept arrays reads all
        partitions.
    """

    def __init__(self, frame: Any) -> None:
        self.frame = frame
        self.columns = [str(c) for c in frame.columns]
        #: the partitions' frames kept in the workers by the first pass (futures)
        self.kept: list[Any] = []
        self.kept_columns: list[str] = []
        #: the first partitions (one per worker thread), computed in the workers
        #: by :meth:`first_chunk` for the first pass, and the columns read
        self.first_part: tuple[list[Any], list[str]] | None = None
        self.passes = 0

    def __repr__(self) -> str:
        return f"DaskSource({self.frame.npartitions} partitions)"

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "kept": [], "first_part": None}

    def _select(self, columns: Sequence[str] | None) -> Any:
        return self.frame if columns is None else self.frame[list(columns)]

    def _take_kept(self, columns: Sequence[str] | None) -> list[Any]:
        """The kept frames if they hold ``columns`` (released from here on), else []."""
        kept, self.kept = self.kept, []
        if not kept or columns is None or not set(columns) <= set(self.kept_columns):
            return []
        return kept

    def map_reduce(
        self, func: Callable[..., Any], *args: Any, columns: Sequence[str] | None = None
    ) -> Any:
        """``func(partition_1, *args) + ...`` computed on the active Dask scheduler."""
        first, self.passes = not self.passes, self.passes + 1
        kept = self._take_kept(columns)
        first_part, self.first_part = self.first_part, None
        client = _active_client()
        if client is None:
            total = self._delayed_pass(func, args, columns)
        elif kept:
            task = partial(single_threaded_call, _over_blocks, func)
            futures = [client.submit(task, f, *args, pure=False) for f in kept]
            total = _future_sum(client, futures, columns)
        else:
            total = self._future_pass(client, func, args, columns, first, first_part)
        if total is None:
            raise DataError(NO_ROWS)
        return total

    def _delayed_pass(
        self, func: Callable[..., Any], args: tuple[Any, ...], columns: Sequence[str] | None
    ) -> Any:
        import dask

        shared = [dask.delayed(a, pure=True) for a in args]
        # each task with one BLAS thread (also in a distributed worker's process)
        n_partitions = self.frame.npartitions
        task = dask.delayed(
            partial(single_threaded_call, _partition_total, func, n_partitions), pure=True
        )
        parts = [task(p, *shared) for p in self._select(columns).to_delayed()]
        if not parts:
            raise DataError("the Dask DataFrame has no partitions")
        return _compute(_tree_sum(parts, dask.delayed), columns)

    def _future_pass(
        self,
        client: Any,
        func: Callable[..., Any],
        args: tuple[Any, ...],
        columns: Sequence[str] | None,
        keep: bool,
        first_part: tuple[Any, list[str]] | None,
    ) -> Any:
        """A pass of futures; the first one keeps the frames where they fit (:meth:`keep_arrays`).

        The partitions computed by :meth:`first_chunk` are not read again.
        """
        import dask

        parts: list[Any] = self._select(columns).to_delayed()
        if parts and first_part is not None and first_part[1] == list(columns or ()):
            ahead = first_part[0]
            parts[: len(ahead)] = ahead
        budget = _frame_budget(client, len(parts)) if keep and columns is not None else None
        if budget is None:
            task = dask.delayed(partial(single_threaded_call, _with_args, func, args, len(parts)))
            return _future_sum(client, client.compute([task(p) for p in parts]), columns)
        task = dask.delayed(
            partial(single_threaded_call, _pass_and_frame, func, args, budget, len(parts))
        )
        both = client.compute([task(p) for p in parts])
        sums = [client.submit(_kept_sum, b, pure=False) for b in both]
        frames = [client.submit(_second, b, pure=False) for b in both]
        del both
        total: _KeptSum = _future_sum(client, sums, columns)
        if total.all_kept:
            self.kept, self.kept_columns = frames, list(columns or ())
        return total.total

    def keep_arrays(self, spec: ChunkSpec, n_rows: int) -> DaskArrays | None:
        """Persist every partition's arrays in the workers' memory, or None.

        Built from the frames the first pass kept where it kept them (then
        the store's ``read_source`` is False), otherwise read from the
        source when the first pass over the store runs.  None without a
        ``dask.distributed`` client (the local schedulers would keep them in
        this process), with the ``chunk_cache`` option off, or when the
        arrays of ``n_rows`` rows would take more than
        :data:`WORKER_MEMORY_SHARE` of the workers' memory limits.
        """
        import dask

        columns = spec.plan.read_columns
        kept = self._take_kept(columns)
        client = _active_client()
        if client is None or cache_setting() is None:
            return None
        limits = _memory_limits(client)
        if not limits or arrays_bytes(spec, n_rows) > WORKER_MEMORY_SHARE * sum(limits):
            return None
        task = partial(single_threaded_call, _block_arrays)
        if kept:
            parts = [client.submit(task, f, spec, pure=False) for f in kept]
            return DaskArrays(parts, spec, columns, read_source=False)
        delayed = dask.delayed(task, pure=False)
        parts = client.compute([delayed(p, spec) for p in self._select(columns).to_delayed()])
        if not parts:
            raise DataError("the Dask DataFrame has no partitions")
        return DaskArrays(parts, spec, columns)

    def first_chunk(self, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """The first block of the first partition (only its rows leave the worker).

        On a cluster, before the first pass, the first partitions (one per
        worker thread, so that every worker reads) are computed and stay in
        the workers for that pass (:meth:`map_reduce`) to use.
        """
        import dask

        client = _active_client()
        if client is None or self.passes or cache_setting() is None:
            first = self._select(columns).get_partition(0).to_delayed()[0]
            return dask.delayed(_first_block)(first).compute()
        # the first partitions, one per worker thread, are read at once (the scan
        # would read them next): the workers read in parallel while partition 0's
        # first block comes back
        parts = self._select(columns).to_delayed()
        if not parts:
            raise DataError("the Dask DataFrame has no partitions")
        computed = client.compute(parts[: _worker_threads(client)])
        self.first_part = (computed, list(columns or ()))
        with _missing_columns_reported(columns):
            block: pd.DataFrame = client.submit(_first_block, computed[0], pure=False).result()
        return block

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


def _active_client() -> Any:
    """The ``dask.distributed`` client that computes Dask collections now, or None.

    None also where a client exists but another scheduler is chosen
    (``dask.config.set(scheduler="threads")``).
    """
    import dask.base

    client = _distributed_client()
    if client is None or dask.base.get_scheduler() != client.get:
        return None
    return client


def _worker_threads(client: Any) -> int:
    """Threads of the cluster's workers (at least 1)."""
    return max(1, sum(client.nthreads().values()))


def _memory_limits(client: Any) -> list[int]:
    return [w.get("memory_limit") or 0 for w in client.scheduler_info()["workers"].values()]


def _frame_budget(client: Any, n_partitions: int) -> float | None:
    """Bytes a partition's frame may take in the workers (None: keep none).

    Frames and the arrays built from them must fit together in
    :data:`WORKER_MEMORY_SHARE` of the workers' memory limits.
    """
    limits = _memory_limits(client)
    if cache_setting() is None or not limits or not all(limits) or not n_partitions:
        return None
    return WORKER_MEMORY_SHARE * sum(limits) / (2 * n_partitions)


@contextmanager
def _missing_columns_reported(columns: Sequence[str] | None) -> Iterator[None]:
    """Report a partition's missing column (a ``KeyError`` of pandas) as such."""
    try:
        yield
    except KeyError as exc:
        if columns is None or "not in index" not in str(exc):
            raise
        raise DataError(
            f"a partition of the Dask DataFrame lacks columns the model reads "
            f"({exc.args[0]}); every partition must hold "
            f"{', '.join(map(repr, columns))}"
        ) from exc


def _compute(tree: Any, columns: Sequence[str] | None) -> Any:
    """Compute ``tree`` (a missing column of a partition reported as such)."""
    import dask

    with _missing_columns_reported(columns):
        (total,) = dask.compute(tree, **_local_pool(tree))
    return total


class DaskArrays:
    """A Dask DataFrame's partitions as likelihood arrays in the workers' memory.

    Built by :meth:`DaskSource.keep_arrays`; the store of :mod:`ordstats.data.spill`
    for Dask.

    Parameters
    ----------
    parts : list of distributed.Future
        Each partition's :class:`~ordstats.data.chunks.ChunkArrays`, block by block.
    spec : ChunkSpec
        The spec they were built with.
    columns : list of str
        The columns read (for the message of a partition that lacks one).
    read_source : bool
        Whether building them reads the source (False: built from the frames
        the first pass kept).
    """

    def __init__(
        self, parts: list[Any], spec: ChunkSpec, columns: Sequence[str], read_source: bool = True
    ) -> None:
        self.parts = parts
        self.key = decoding_key(spec)
        self.location = tuple(spec.terms.names)
        self.columns = list(columns)
        self.read_source = read_source

    def __repr__(self) -> str:
        return f"DaskArrays({len(self.parts)} partitions)"

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "parts": []}

    def serves(self, spec: ChunkSpec) -> bool:
        """Whether the kept arrays are those ``spec`` builds."""
        return bool(self.parts) and serves(self.key, self.location, spec)

    def map_reduce(self, func: Callable[..., Any], spec: ChunkSpec, *args: Any) -> Any:
        """``func(arrays_1, spec, *args) + ...`` on the workers (None: no rows)."""
        client = self.parts[0].client
        task = partial(single_threaded_call, _on_kept, func, spec, self.location, args)
        return _future_sum(client, [client.submit(task, p, pure=False) for p in self.parts], None)

    def close(self) -> None:
        """Release the arrays (the workers drop them)."""
        self.parts = []
