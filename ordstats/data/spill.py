"""Decoded chunks kept between the passes of a fit read in chunks.

Each Newton pass of a chunked fit needs every chunk's likelihood arrays
(response codes, design, weights, offset: :class:`~ordstats.data.chunks.ChunkArrays`).
Read again from the source, a chunk costs its decoding (Parquet pages, Arrow
to pandas) and the formula at every pass; the likelihood itself costs about
as much as those together.  A *store* keeps the arrays of the first pass that
builds them, so that later passes read them back.  That pass is the summary's,
or, for a model whose design columns are numeric columns used as is, the level
scan (:class:`ScanWriter`: the response is coded in the order its values are
first seen and mapped to the levels after the scan), so that such a fit reads
the source once:

- :class:`DiskSpill`: for sources read in this process (files, a DataFrame
  read in chunks), each chunk's arrays held in memory while they fit in
  :data:`MEMORY_SHARE` of the memory available when the pass begins, and
  beyond that appended to binary files in a temporary directory and read
  back chunk by chunk (so memory stays bounded by a chunk), the directory
  removed when the model is deleted (or the interpreter exits).  Memory
  first because writing the files costs the kernel more: at 10^7 rows x 20
  (1.6 GB) the first pass took 2.3-4.8 s of system CPU with files against
  1.7-1.9 s with the arrays held (bench/README.md, runs of 2026-11-27);
- :class:`ordstats.data.distributed.DaskArrays`: a Dask DataFrame's
  partitions as arrays held in the ``dask.distributed`` workers' memory.

Any source whose chunks are turned into arrays in this process can use
:class:`DiskSpill` (:func:`spill_chunk` is the pass function that writes it).
A store serves a pass only when its arrays are the ones the pass's
:class:`~ordstats.data.chunks.ChunkSpec` would build (:func:`decoding_key`),
and it returns the chunks in their order, so sums over a store are those over
the source bit for bit.  ``ordstats.set_options(chunk_cache=False)`` turns
stores off, and a directory puts every chunk in files there; a store is kept
only where it fits (a quarter of the available memory and half the free disk
space, a quarter of the Dask workers' memory).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import weakref
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from ordstats._typing import IntArray
from ordstats.config import get_options
from ordstats.core.threads import pass_threads
from ordstats.data.chunks import (
    ChunkArrays,
    ChunkSpec,
    ColumnPlan,
    _plain_chunk_arrays,
    chunk_arrays,
)
from ordstats.data.parts import InOrder, sum_in_order
from ordstats.data.reservoir import SampledScan, SampleLimits, scan_and_sample
from ordstats.design.response import format_level

__all__ = [
    "DiskSpill",
    "ScanWriter",
    "arrays_bytes",
    "decoding_key",
    "open_disk_spill",
    "open_scan_writer",
    "scan_and_spill",
    "serve_arrays",
    "spill_chunk",
]

#: The arrays of a chunk that a store keeps, with their element types (``None``: may be absent).
_VECTORS = {"y": np.intp, "weights": np.float64, "offset": np.float64, "y_low": np.intp}
_MATRICES = ("X", "nominal", "scale")
#: Use at most this share of the free disk space for a spill.
DISK_SHARE = 0.5
#: Hold chunks in memory up to this share of the memory available when the spill opens.
MEMORY_SHARE = 0.25
#: Chunks a spill holds in memory at most while its thread writes them.
WRITES_AHEAD = 3


def _held(name: str, values: np.ndarray) -> np.ndarray:
    """The array ``name`` of a chunk to hold in memory: read-only, in memory of its own.

    The vectors are copied (weights or an offset may be the caller's
    DataFrame column itself, whether or not numpy calls it a view), so that a
    change to the data after the pass does not reach the later passes; they
    are a few percent of a chunk's bytes.  The matrices are built by the pass
    itself.
    """
    if name in _VECTORS:
        values = values.copy()
    values.flags.writeable = False
    return values


def available_memory() -> int | None:
    """Bytes of memory available to new processes (None where it cannot be told).

    ``psutil``'s figure where it is installed, else Linux's ``MemAvailable``.
    """
    try:
        import psutil
    except ImportError:
        psutil = None
    if psutil is not None:
        return int(psutil.virtual_memory().available)
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return 1024 * int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def _write_columns(columns: list[tuple[Any, np.ndarray]]) -> None:
    """Append each array to its file (NumPy releases the GIL while it writes)."""
    for handle, values in columns:
        values.tofile(handle)


def decoding_key(spec: ChunkSpec) -> tuple[Any, ...]:
    """What decides a chunk's arrays besides the location columns and the binary cut.

    Two specs with the same key (the link, threshold structure and cut
    ``binary_cut`` may differ) build the same response codes, nominal and scale
    designs, weights and offsets from a chunk.
    """
    plan = spec.plan
    return (
        plan.response,
        tuple(plan.columns),
        plan.weights,
        plan.offset,
        plan.censored,
        tuple(spec.level_codes.items()),
        None if spec.nominal is None else tuple(spec.nominal.names),
        None if spec.scale is None else tuple(spec.scale.names),
        None if spec.censoring is None else spec.censoring.key,
    )


def arrays_bytes(spec: ChunkSpec, n_rows: int) -> int:
    """Bytes the arrays of ``n_rows`` rows take (design columns, codes, weights, offset)."""
    columns = sum(len(terms.names) for terms in spec.parts.values())
    return 8 * n_rows * (columns + len(_VECTORS))


def serve_arrays(arrays: ChunkArrays, spec: ChunkSpec, location: tuple[str, ...]) -> ChunkArrays:
    """``arrays`` (kept for the location columns ``location``) as ``spec`` would build them.

    A spec with no location columns (the null model) gets none; a binary
    cut turns the codes into ``Y > cut``.
    """
    X = arrays.X if tuple(spec.terms.names) == location else arrays.X[:, :0]
    y = arrays.y if spec.binary_cut is None else (arrays.y > spec.binary_cut).astype(np.intp)
    if X is arrays.X and y is arrays.y:
        return arrays
    return ChunkArrays(
        y=y,
        X=X,
        weights=arrays.weights,
        offset=arrays.offset,
        bad=arrays.bad,
        n_bad=arrays.n_bad,
        n_rows=arrays.n_rows,
        nominal=arrays.nominal,
        scale=arrays.scale,
        kept=arrays.kept,
        y_low=arrays.y_low,
    )


def serves(key: tuple[Any, ...], location: tuple[str, ...], spec: ChunkSpec) -> bool:
    """Whether arrays kept under ``key`` and ``location`` serve ``spec``'s passes."""
    names = tuple(spec.terms.names)
    return decoding_key(spec) == key and names in (location, ())


#: Vectors not written for a chunk where every value is this one (bit for bit).
_CONSTANTS = {"weights": 1.0, "offset": 0.0}


def is_constant(name: str, values: np.ndarray) -> bool:
    """Whether ``values`` are all :data:`_CONSTANTS` ``[name]``, bit for bit (-0.0 is not 0.0).

    Such a vector (weights of ones, an offset of zeros) is not written to a
    store; :func:`constant_vector` makes it again.
    """
    if name not in _CONSTANTS:
        return False
    bits = np.float64(_CONSTANTS[name]).view(np.uint64)
    return bool(np.all(np.ascontiguousarray(values, dtype=np.float64).view(np.uint64) == bits))


def constant_vector(name: str, n_rows: int) -> np.ndarray:
    """The vector ``name`` that :func:`is_constant` left out: ``n_rows`` ones or zeros."""
    return np.full(n_rows, _CONSTANTS[name])


@dataclass
class _ChunkEntry:
    """Where one chunk's arrays are (rows of the spill files, or held), and its row counts.

    An array neither written nor held (weights of ones, an offset of zeros)
    is made again when read.
    """

    starts: dict[str, int]
    n_used: int
    n_rows: int
    n_bad: int
    bad: pd.Series
    #: the arrays held in memory (read-only), None for a chunk in the files
    held: dict[str, np.ndarray] | None = None


@dataclass
class DiskSpill:
    """The arrays of every chunk: held in memory up to a budget, beyond it in binary files.

    Build it with :func:`open_disk_spill`, fill it with a pass of
    :func:`spill_chunk`, then call :meth:`finish`.  The chunks are held in
    memory while their bytes stay within ``memory_budget`` (in the order
    added: the first chunks), and the others are appended to files in a
    temporary directory.  The directory is removed, and the held arrays
    released, by :meth:`close`, when the object is garbage-collected, or at
    exit.

    Attributes
    ----------
    path : str
        The directory.
    key : tuple
        :func:`decoding_key` of the spec the arrays were built with.
    location : tuple of str
        Its location columns.
    widths : dict
        Columns of each matrix (``X``, ``nominal``, ``scale``).
    memory_budget : float
        Bytes of arrays it may hold in memory (0: every chunk in the files).
    """

    path: str
    key: tuple[Any, ...]
    location: tuple[str, ...]
    widths: dict[str, int]
    censored: bool = False
    entries: list[_ChunkEntry] = field(default_factory=list)
    _files: dict[str, Any] = field(default_factory=dict, repr=False)
    _writer: ThreadPoolExecutor | None = field(default=None, repr=False)
    _writes: deque[Future[None]] = field(default_factory=deque, repr=False)
    _rows: int = 0
    #: rows written to each file
    _written: dict[str, int] = field(default_factory=dict, repr=False)
    finished: bool = False
    #: code of each stored response code (codes written before the levels were known)
    recode: np.ndarray | None = None
    memory_budget: float = 0.0
    #: bytes it may keep in all, held and written (set when opened)
    budget: float = 0.0
    #: bytes of the arrays held in memory
    held_bytes: int = 0

    def __post_init__(self) -> None:
        self._remove = weakref.finalize(self, shutil.rmtree, self.path, ignore_errors=True)

    @property
    def holds_more(self) -> bool:
        """Whether the next chunk's arrays may still be held in memory.

        Its matrices are then built with :func:`ordstats.core.memory.held_empty`.
        """
        return self.held_bytes < self.memory_budget

    def _names(self) -> list[str]:
        vectors = [n for n in _VECTORS if n != "y_low" or self.censored]
        return vectors + [m for m in _MATRICES if self.widths[m]]

    def add(self, arrays: ChunkArrays) -> None:
        """Append one chunk's arrays (in the order the pass reads the chunks).

        Held in memory while they fit in the budget (see :func:`_held`),
        otherwise written.  The files are written by a thread of their own, in
        the order of the calls (at most :data:`WRITES_AHEAD` chunks wait), so
        that the thread that reads the source goes on meanwhile;
        :meth:`finish` waits for them.
        """
        if self.finished:
            raise RuntimeError("the spill is finished")
        n_used = int(arrays.y.size)
        kept = {}
        for name in self._names():
            values = getattr(arrays, name)
            if not is_constant(name, values):
                kept[name] = np.ascontiguousarray(values, _VECTORS.get(name, np.float64))
        size = sum(values.nbytes for values in kept.values())
        entry = _ChunkEntry({}, n_used, arrays.n_rows, arrays.n_bad, arrays.bad)
        if self.held_bytes + size <= self.memory_budget:
            self.held_bytes += size
            entry.held = {name: _held(name, values) for name, values in kept.items()}
        else:
            entry.starts = self._write(kept, n_used)
        self.entries.append(entry)
        self._rows += n_used

    def _write(self, kept: dict[str, np.ndarray], n_used: int) -> dict[str, int]:
        """Queue the arrays' writes to the end of their files; the rows where they start."""
        if not self._files:
            self._files = {n: open(os.path.join(self.path, n), "wb") for n in self._names()}
        if self._writer is None:
            self._writer = ThreadPoolExecutor(1, thread_name_prefix="ordstats-spill")
        while len(self._writes) >= WRITES_AHEAD:
            self._writes.popleft().result()
        starts = {}
        for name in kept:
            starts[name] = self._written.get(name, 0)
            self._written[name] = starts[name] + n_used
        columns = [(self._files[name], values) for name, values in kept.items()]
        self._writes.append(self._writer.submit(_write_columns, columns))
        return starts

    def finish(self) -> None:
        """Wait for the writes and close the files: the spill can now be read.

        Raises the first error of a write (the disk full, say).
        """
        try:
            while self._writes:
                self._writes.popleft().result()
        finally:
            self._stop_writing()
        self.finished = True

    def _stop_writing(self) -> None:
        for future in self._writes:
            future.cancel()
        self._writes.clear()
        if self._writer is not None:
            self._writer.shutdown(wait=True)
            self._writer = None
        for handle in self._files.values():
            handle.close()
        self._files = {}

    def close(self) -> None:
        """Remove the files (after the writes under way end; their errors are dropped).

        The held arrays are released too.
        """
        self._stop_writing()
        self.finished = True
        self._remove()
        for entry in self.entries:
            entry.held = None
        self.held_bytes = 0

    @property
    def n_rows(self) -> int:
        """Rows kept."""
        return self._rows

    def _read(self, name: str, entry: _ChunkEntry) -> np.ndarray:
        if name in _VECTORS:
            dtype, width = np.dtype(_VECTORS[name]), 1
        else:
            dtype, width = np.dtype(np.float64), self.widths[name]
            if not width:
                return np.empty((entry.n_used, 0))
        if entry.held is not None and name in entry.held:
            values = entry.held[name]
            return values if name in _VECTORS else values.reshape(entry.n_used, width)
        if name not in entry.starts:
            return constant_vector(name, entry.n_used)
        if not entry.n_used:  # a map cannot be empty
            return np.empty(0, dtype) if name in _VECTORS else np.empty((0, width))
        # a read-only map of the chunk's bytes: no copy out of the page cache (numpy.fromfile
        # copied 16 MB per 10^5 x 20 chunk at every pass); unmapped with the chunk's arrays
        values = np.asarray(
            np.memmap(
                os.path.join(self.path, name),
                dtype=dtype,
                mode="r",
                offset=entry.starts[name] * width * dtype.itemsize,
                shape=(entry.n_used * width,),
            )
        )
        return values if name in _VECTORS else values.reshape(entry.n_used, width)

    def chunks(self) -> Iterator[ChunkArrays]:
        """The kept arrays, chunk by chunk, in the order they were written."""
        for entry in self._used_entries():
            yield self._load(entry)

    def _finished_entries(self) -> list[_ChunkEntry]:
        if not self.finished:
            raise RuntimeError("the spill is still being written")
        return self.entries

    def _used_entries(self) -> list[_ChunkEntry]:
        return [entry for entry in self._finished_entries() if entry.n_used]

    def _load(self, entry: _ChunkEntry) -> ChunkArrays:
        """One chunk's arrays, read from the files (thread-safe)."""
        y = self._read("y", entry)
        return ChunkArrays(
            y=y if self.recode is None else self.recode[y],
            X=self._read("X", entry),
            weights=self._read("weights", entry),
            offset=self._read("offset", entry),
            bad=entry.bad,
            n_bad=entry.n_bad,
            n_rows=entry.n_rows,
            nominal=self._read("nominal", entry),
            scale=self._read("scale", entry),
            y_low=self._read("y_low", entry) if self.censored else None,
        )

    def serves(self, spec: ChunkSpec) -> bool:
        """Whether the kept arrays are those ``spec`` builds (see :func:`decoding_key`)."""
        return self.finished and serves(self.key, self.location, spec)

    def map_reduce(self, func: Callable[..., Any], spec: ChunkSpec, *args: Any) -> Any:
        """``func(arrays_1, spec, *args) + ...`` over the kept chunks (None: no rows).

        The chunks are read and evaluated on a pool of threads and added in
        their order (:func:`~ordstats.data.parts.sum_in_order`): the sum of
        one thread, bit for bit.
        """

        def evaluate(entry: _ChunkEntry) -> Any:
            return func(serve_arrays(self._load(entry), spec, self.location), spec, *args)

        # every chunk, also those without a usable row: the summary pass adds up their
        # rows and missing-value counts (the functions take a chunk of no rows, as from
        # the source)
        entries = self._finished_entries()
        largest = max((entry.n_rows for entry in entries), default=0)
        return sum_in_order(evaluate, entries, pass_threads(largest))


def cache_setting() -> str | None:
    """The directory of spill files (``""``: the system's temporary one), None when off."""
    setting = get_options()["chunk_cache"]
    if setting is False:
        return None
    return "" if setting is True else str(setting)


@dataclass(frozen=True)
class _Room:
    """Where a spill may go and how much it may keep there (bytes)."""

    directory: str
    disk: float
    memory: float

    @property
    def total(self) -> float:
        """Bytes it may keep in all."""
        return self.disk + self.memory


def _room() -> _Room | None:
    """The spill directory, :data:`DISK_SHARE` of its free bytes and the memory share.

    The memory share is :data:`MEMORY_SHARE` of the available memory when the
    ``chunk_cache`` option is ``True``, none for a directory (every chunk in
    its files).  None when the option is off.
    """
    where = cache_setting()
    if where is None:
        return None
    directory = where or tempfile.gettempdir()
    try:
        disk = DISK_SHARE * shutil.disk_usage(directory).free
    except OSError:
        disk = 0.0
    memory = available_memory() if where == "" else None
    return _Room(directory, disk, MEMORY_SHARE * memory if memory else 0.0)


def open_disk_spill(spec: ChunkSpec, n_rows: int | None) -> DiskSpill | None:
    """An empty spill for the arrays of at most ``n_rows`` rows, or None.

    None when the ``chunk_cache`` option is off, or the arrays would take more
    than the memory share and :data:`DISK_SHARE` of the free space of the
    directory together (``n_rows`` None: the caller checks the size as it
    writes).
    """
    room = _room()
    if room is None or not room.total:
        return None
    if n_rows is not None and arrays_bytes(spec, n_rows) > room.total:
        return None
    try:
        path = tempfile.mkdtemp(prefix="ordstats-chunks-", dir=room.directory)
    except OSError:
        return None
    widths = {
        "X": len(spec.terms.names),
        "nominal": len(spec.nominal.names) if spec.nominal is not None else 0,
        "scale": len(spec.scale.names) if spec.scale is not None else 0,
    }
    return DiskSpill(
        path,
        decoding_key(spec),
        tuple(spec.terms.names),
        widths,
        censored=spec.censoring is not None,
        memory_budget=room.memory,
        budget=room.total,
    )


def spill_chunk(
    frame: pd.DataFrame, spec: ChunkSpec, spill: DiskSpill, func: Callable[..., Any], *args: Any
) -> InOrder:
    """One chunk's arrays and ``func(arrays, spec, *args)``; the arrays appended to ``spill``.

    The pass function of a source read in this process.  The chunks may be
    evaluated on a pool of threads: the arrays are appended when the pass
    finishes the chunk's result, in the chunks' order (the spill keeps that
    order).
    """
    arrays = chunk_arrays(frame, spec)
    part = func(arrays, spec, *args)

    def append() -> Any:
        spill.add(arrays)
        return part

    return InOrder(append)


@dataclass
class ResponseCoder:
    """Codes response values in the order first seen, before the levels are known.

    A chunk's values are factorised on their own (:func:`local_codes`, on any
    thread) and given their codes in the order of the chunks (:meth:`codes`).
    """

    seen: dict[Any, int] = field(default_factory=dict)

    def codes(self, local: IntArray, uniques: Any) -> IntArray:
        """The codes of a chunk's values factorised as ``local`` codes of ``uniques``."""
        values = np.asarray(uniques, dtype=object).tolist()
        table = np.array([self.seen.setdefault(u, len(self.seen)) for u in values], dtype=np.intp)
        return table[local] if len(local) else np.empty(0, dtype=np.intp)

    def table(self, level_codes: dict[str, int]) -> IntArray:
        """The level code of each first-seen code (-1 for a value without a level)."""
        return np.array([level_codes.get(format_level(u), -1) for u in self.seen], dtype=np.intp)


@dataclass
class _LocalCodes:
    """Codes a chunk's response by its own first-seen order; keeps the values they stand for."""

    uniques: Any = None

    def __call__(self, series: pd.Series) -> IntArray:
        codes, self.uniques = pd.factorize(series)
        return np.asarray(codes, dtype=np.intp)


@dataclass
class ScanWriter:
    """Writes the chunks' arrays during the first pass, so the summary reads no source.

    For models whose design columns are numeric columns used as is (their
    terms known before the first pass): the response is coded in the order
    its values are first seen and mapped to the levels by :meth:`finish`.  A
    chunk of another kind, or arrays beyond the room of the memory share and the
    disk share together, stop the writing
    (the summary pass then reads the source).  A chunk's arrays are built by
    :meth:`prepare` (on any thread) and written by :meth:`write`, chunk after
    chunk in the order read.
    """

    spec: ChunkSpec
    spill: DiskSpill | None
    budget: float
    coder: ResponseCoder = field(default_factory=ResponseCoder)

    def prepare(self, frame: pd.DataFrame) -> tuple[ChunkArrays | None, Any] | None:
        """A chunk's arrays, its response coded by the chunk alone, and the values of the codes.

        None when writing has stopped; arrays None when the chunk is not of the
        writer's kind.
        """
        if self.spill is None:
            return None
        local = _LocalCodes()
        arrays = _plain_chunk_arrays(frame, self.spec, local, held=self.spill.holds_more)
        return arrays, local.uniques

    def write(self, prepared: tuple[ChunkArrays | None, Any] | None) -> None:
        """Append a prepared chunk (or stop writing), in the order the chunks were read."""
        if self.spill is None or prepared is None:
            return
        arrays, uniques = prepared
        if arrays is None:
            self.abandon()
            return
        if arrays_bytes(self.spec, self.spill.n_rows + arrays.y.size) > self.budget:
            self.abandon()
            return
        self.spill.add(replace(arrays, y=self.coder.codes(arrays.y, uniques)))

    def abandon(self) -> None:
        """Remove what was written."""
        if self.spill is not None:
            self.spill.close()
        self.spill = None

    def finish(self, spec: ChunkSpec) -> DiskSpill | None:
        """The spill, now serving ``spec`` (the spec built after the first pass), or None.

        None (and the files removed) when writing stopped, or ``spec`` has
        other columns or a response value without a level.
        """
        spill, self.spill = self.spill, None
        if spill is None:
            return None
        same = [t.names for t in spec.parts.values()] == [t.names for t in self.spec.parts.values()]
        recode = self.coder.table(spec.level_codes)
        if spec.plan != self.spec.plan or not same or np.any(recode < 0):
            spill.close()
            return None
        spill.finish()
        spill.key, spill.recode = decoding_key(spec), recode
        return spill


def open_scan_writer(spec: ChunkSpec) -> ScanWriter | None:
    """A :class:`ScanWriter` for ``spec`` (its level codes unused), None when the cache is off."""
    spill = open_disk_spill(spec, None)
    return None if spill is None else ScanWriter(spec, spill, spill.budget)


def scan_and_spill(
    frame: pd.DataFrame,
    plan: ColumnPlan,
    capacity: int,
    per_level: int,
    writer: ScanWriter,
    board: SampleLimits | None = None,
) -> InOrder:
    """:func:`~ordstats.data.reservoir.scan_and_sample` that also writes the chunk's arrays.

    The rows the arrays use are the chunk's complete rows (the same rules), so
    the scan does not find them again.  The arrays are written when the pass
    finishes the chunk's result, in the chunks' order.
    """
    prepared = writer.prepare(frame)
    arrays = None if prepared is None else prepared[0]
    kept = None if arrays is None else np.asarray(arrays.kept, dtype=bool)
    sampled = scan_and_sample(frame, plan, capacity, per_level, kept, board)

    def write() -> SampledScan:
        writer.write(prepared)
        return sampled

    return InOrder(write)
