"""The partition cache of a Spark fit: each partition's chunks spilled to its executor's disk.

Every pass of a Spark fit that goes through ``mapInPandas`` pays Spark's
conversion of the partition's rows from the JVM to Arrow batches (about 3.5 s
of CPU per 10^6 rows x 21 on the development machine, several times what
ordstats then does with them).  The rows do not change between the passes of
a fit, so the first pass keeps them: every task writes the pandas chunks it
evaluates to files in its executor's local directory (Spark's
``SPARK_LOCAL_DIRS``, which Spark deletes when the executor or local session
stops), under a directory named by the fit, and later passes run a job of one
task per partition id that reads the chunks back and evaluates the same
per-chunk function on them.  The chunks are those of the first pass, in its
order, so a cached pass adds the same numbers in the same order as a pass
through the DataFrame.  (Where the first pass read Parquet files with
pyarrow, nothing is spilled: :attr:`PartitionCache.rows` names the row
groups, which later passes read again.)

The first pass over the spilled chunks that evaluates the likelihood (the
summary's) also keeps what the passes after it need: each chunk's likelihood
arrays (response codes, design, weights and offset where not all ones and
zeros: :class:`~ordstats.data.chunks.ChunkArrays`, as the chunked fit's
:class:`~ordstats.data.spill.DiskSpill` keeps them), written beside the chunks
under a name of their own (:func:`pack_arrays`, :func:`read_arrays`; the large
arrays as ``.npy`` files, memory-mapped when read), so that a Newton pass maps
the arrays and evaluates the likelihood, without unpickling the chunks or the
arrays and building the design again.

This module only handles the files (no Spark): :class:`PartitionCache` is the
small picklable handle that travels to the tasks, :class:`PartitionWriter`
spills one partition's chunks (or arrays) during a pass,
:meth:`PartitionCache.chunk_files` finds a partition's complete spill (None
when this executor has none), and :func:`remove_here` deletes a fit's files
on this machine.
"""

from __future__ import annotations

import os
import pickle
import shutil
import socket
import tempfile
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ordstats.data.chunks import ChunkArrays, _plain_chunk_arrays
from ordstats.data.spill import constant_vector, is_constant

__all__ = [
    "CHUNKS",
    "CachePlace",
    "PartitionCache",
    "PartitionWriter",
    "local_directories",
    "pack_arrays",
    "read_arrays",
    "remove_here",
]

#: The environment variable in which Spark tells its Python workers their local directories.
_LOCAL_DIRS = "SPARK_LOCAL_DIRS"
#: The name of a partition's spilled pandas chunks (arrays have names of their own).
CHUNKS = "chunk"
#: Written last, once every file of a spill is on disk: its number of files.
_COMPLETE = "complete"


def local_directories() -> list[str]:
    """The executor's local directories (``SPARK_LOCAL_DIRS``), else the temporary directory.

    Returns
    -------
    list of str
    """
    listed = [d for d in os.environ.get(_LOCAL_DIRS, "").split(",") if d]
    return listed or [tempfile.gettempdir()]


@dataclass(frozen=True)
class CachePlace:
    """Where a task kept (or looked for) a fit's files: the host and the fit's directory."""

    host: str
    directory: str


@dataclass
class PartitionCache:
    """The handle of one fit's partition cache (picklable: it travels to every task).

    Attributes
    ----------
    columns : tuple of str
        The columns of the cached chunks (those the first pass read).
    fit_id : str
        Names the fit's directory, so that fits never read each other's files.
    partitions : int
        Partitions of the first pass (0 until that pass ends).
    places : set of CachePlace
        Where tasks wrote files (kept on the driver, for the clean-up).
    rows : object or None
        The Parquet row groups of a first pass that pyarrow read
        (:class:`~ordstats.data.spark_files.FileScan`): its chunks are not
        spilled, later passes read them again from the files, in the same
        chunks of ``chunksize`` rows.  None: the chunks are spilled.
    chunksize : int
        Rows per chunk of the first pass.
    scan_arrays : ChunkSpec or None
        During the first pass only: the spec whose likelihood arrays each task
        also keeps, its response values as they are (:func:`keep_scan_arrays`);
        the store :data:`SCAN_ARRAYS` then serves the summary pass.
    """

    columns: tuple[str, ...]
    fit_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    partitions: int = 0
    places: set[CachePlace] = field(default_factory=set)
    rows: Any = None
    chunksize: int = 0
    scan_arrays: Any = None

    def __getstate__(self) -> dict[str, object]:
        # the tasks need the name and the columns, not the driver's bookkeeping
        return {**self.__dict__, "places": set()}

    def fit_directory(self, partition: int) -> Path:
        """The fit's directory on this machine in which ``partition`` keeps its chunks."""
        roots = local_directories()
        return Path(roots[partition % len(roots)]) / f"ordstats-fit-{self.fit_id}"

    def partition_directory(self, partition: int) -> Path:
        """The directory of ``partition``'s chunks on this machine."""
        return self.fit_directory(partition) / f"partition-{partition:06d}"

    def place(self, partition: int) -> CachePlace:
        """Where ``partition`` keeps its chunks: this host and the fit's directory."""
        return CachePlace(socket.gethostname(), str(self.fit_directory(partition)))

    def covers(self, columns: Iterable[str] | None, all_columns: Iterable[str]) -> bool:
        """Whether a pass reading ``columns`` (None: all) can read the cached chunks."""
        wanted = list(all_columns) if columns is None else list(columns)
        return set(wanted) <= set(self.columns)

    def chunk_files(self, partition: int, name: str = CHUNKS) -> list[Path] | None:
        """The files of ``partition``'s spill ``name``, in reading order; None if not all are here.

        ``name`` is :data:`CHUNKS` for the pandas chunks, or the name of a store of arrays.
        """
        directory = self.partition_directory(partition)
        try:
            count = int((directory / f"{name}-{_COMPLETE}").read_text())
        except (OSError, ValueError):
            return None
        files = [_spill_file(directory, name, k) for k in range(count)]
        return files if all(f.is_file() for f in files) else None


def _spill_file(directory: Path, name: str, index: int) -> Path:
    return directory / f"{name}-{index:06d}.pkl"


def _load(path: Path) -> Any:
    with open(path, "rb") as handle:
        return pickle.load(handle)


def read_chunks(files: list[Path], columns: list[str] | None) -> Iterator[pd.DataFrame]:
    """The cached chunks, one at a time, with ``columns`` (None: as cached) in that order."""
    for path in files:
        chunk: pd.DataFrame = _load(path)
        yield chunk if columns is None or list(chunk.columns) == columns else chunk[columns]


#: Fields of a chunk's arrays not kept: which rows of the chunk were used (no pass reads it).
_NOT_KEPT = ("kept",)


def pack_arrays(arrays: ChunkArrays) -> dict[str, Any]:
    """A chunk's arrays as they are kept: weights of ones and an offset of zeros left out."""
    packed = {k: v for k, v in vars(arrays).items() if k not in _NOT_KEPT}
    for name in ("weights", "offset"):
        if is_constant(name, packed[name]):
            packed[name] = None
    return packed


#: Arrays of at least this many bytes are kept as ``.npy`` files, read memory-mapped.
MAPPED_BYTES = 1 << 16


@dataclass(frozen=True)
class _Mapped:
    """In a chunk's packed arrays: the name of the ``.npy`` file that holds one of them."""

    file: str


def _is_mapped(value: Any) -> bool:
    """Whether an array is kept in a ``.npy`` file of its own (large numbers, no objects)."""
    numbers = isinstance(value, np.ndarray) and value.dtype.kind in "biuf"
    return numbers and value.nbytes >= MAPPED_BYTES


def read_arrays(files: list[Path], levels: NumericLevels | None = None) -> Iterator[ChunkArrays]:
    """The kept arrays of a partition's chunks (:func:`pack_arrays`), one chunk at a time.

    The large arrays are memory-mapped from their ``.npy`` files (read-only):
    no unpickling, and the operating system's page cache serves every pass
    and every Python worker from one copy.  Arrays the first pass kept hold
    the response's values (:func:`keep_scan_arrays`): ``levels`` codes them.
    """
    for path in files:
        packed = _load(path)
        raw = packed.pop(_RAW_RESPONSE, False)
        for key, value in packed.items():
            if isinstance(value, _Mapped):
                packed[key] = np.asarray(np.load(path.parent / value.file, mmap_mode="r"))
        if raw:
            if levels is None:  # pragma: no cover - a store of the first pass carries them
                raise RuntimeError("arrays of the first pass read without the response levels")
            packed["y"] = levels.codes(packed["y"])
        for name in ("weights", "offset"):
            if packed[name] is None:
                packed[name] = constant_vector(name, packed["y"].size)
        yield ChunkArrays(**packed)


#: The store name of the arrays the first pass keeps (:func:`keep_scan_arrays`).
SCAN_ARRAYS = "scan-arrays"
#: In a chunk's packed arrays: ``y`` holds the response's values, not level codes.
_RAW_RESPONSE = "raw_response"


@dataclass(frozen=True)
class NumericLevels:
    """The level codes of a numeric response, for arrays kept with the response's values.

    Attributes
    ----------
    values : ndarray
        The levels' values, increasing.
    level_codes : ndarray of int
        Each value's level code (the levels' order, which ``levels=`` may set).
    """

    values: np.ndarray
    level_codes: np.ndarray

    @classmethod
    def of(cls, level_codes: dict[str, int]) -> NumericLevels | None:
        """From a spec's level codes (labels of numbers); None if a label is not a number."""
        try:
            pairs = sorted((float(label), code) for label, code in level_codes.items())
        except ValueError:
            return None
        values = np.array([v for v, _ in pairs])
        if not np.isfinite(values).all() or np.any(np.diff(values) == 0):
            return None
        return cls(values, np.array([c for _, c in pairs], dtype=np.intp))

    def codes(self, y: np.ndarray) -> np.ndarray:
        """The level codes of the response values ``y`` (each one a level's value)."""
        where = np.clip(np.searchsorted(self.values, y), 0, len(self.values) - 1)
        if not np.array_equal(self.values[where], y):
            raise RuntimeError("a kept response value has no level")  # pragma: no cover
        return self.level_codes[where]


def keep_scan_arrays(
    chunks: Iterator[pd.DataFrame], spec: Any, writer: PartitionWriter
) -> Iterator[pd.DataFrame]:
    """The first pass's chunks, each one's likelihood arrays kept by ``writer`` as it passes.

    For a model whose design columns are numeric columns used as is
    (``_plain_chunk_arrays``): the arrays of ``spec`` with the response's values in
    place of the codes, which the levels found by the whole pass give later
    (:func:`read_arrays`).  A chunk of another kind stops the keeping.
    """
    for chunk in chunks:
        if writer.place is not None:
            arrays = _kept_arrays(chunk, spec)
            if arrays is None:
                writer.abandon()
            else:
                writer.add({**pack_arrays(arrays), _RAW_RESPONSE: True})
        yield chunk


def _kept_arrays(chunk: pd.DataFrame, spec: Any) -> ChunkArrays | None:
    """A chunk's arrays with the response's values; None for a chunk of another kind.

    Another kind: a response that is not numbers, a design that is not plain
    numeric columns, or values the pass's own function reports (bad weights).
    """
    response = chunk[spec.plan.response]
    numbers = pd.api.types.is_numeric_dtype(response) or pd.api.types.is_bool_dtype(response)
    if not numbers:
        return None
    try:
        return _plain_chunk_arrays(chunk, spec, _response_values)
    except (ValueError, TypeError):  # ordstats' DataError included: the pass says it
        return None


def _response_values(series: pd.Series) -> np.ndarray:
    return np.asarray(series.to_numpy(dtype=float, na_value=np.nan))


class PartitionWriter:
    """Spills the chunks of one partition during a pass; marks the spill complete at the end.

    A write that fails (a full disk, a directory that cannot be made)
    abandons the partition's spill and leaves the pass alone: that partition
    is then read through the DataFrame (its chunks) or from its chunks (its
    arrays) at every pass, as without the spill.

    Parameters
    ----------
    cache : PartitionCache
    partition : int
    name : str
        :data:`CHUNKS` (pandas chunks: the partition's directory starts empty),
        or the name of a store of arrays (written beside the chunks).
    """

    def __init__(self, cache: PartitionCache, partition: int, name: str = CHUNKS) -> None:
        self.directory = cache.partition_directory(partition)
        self.place: CachePlace | None = cache.place(partition)
        self.name = name
        self.count = 0
        # a retried or speculative task starts again from nothing
        self._remove()
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError:
            self.place = None

    def add(self, item: Any) -> None:
        """Spill one chunk or one chunk's packed arrays (written under a temporary name).

        Of packed arrays (a dict), the large numeric ones are written as
        ``.npy`` files beside the chunk's file (:func:`read_arrays` maps them).
        """
        if self.place is None:
            return
        final = _spill_file(self.directory, self.name, self.count)
        try:
            if isinstance(item, dict):
                item = {key: self._mapped(key, value) for key, value in item.items()}
            _write_atomically(final, pickle.dumps(item, protocol=pickle.HIGHEST_PROTOCOL))
        except OSError:
            self.abandon()
            return
        self.count += 1

    def _mapped(self, key: str, value: Any) -> Any:
        """``value``, or the :class:`_Mapped` name of the ``.npy`` file it was written to."""
        if not _is_mapped(value):
            return value
        name = f"{self.name}-{self.count:06d}.{key}.npy"
        _write_atomically(self.directory / name, value)
        return _Mapped(name)

    def finish(self) -> CachePlace | None:
        """Mark the spill complete; where it was kept (None if it was abandoned)."""
        if self.place is not None:
            try:
                marker = self.directory / f"{self.name}-{_COMPLETE}"
                _write_atomically(marker, str(self.count).encode())
            except OSError:
                self.abandon()
        return self.place

    def abandon(self) -> None:
        """Delete what was written of the spill (a failed write or a failed task)."""
        self.place = None
        self._remove()

    def _remove(self) -> None:
        if self.name == CHUNKS:  # the arrays were built from the chunks: they go too
            shutil.rmtree(self.directory, ignore_errors=True)
            return
        for path in self.directory.glob(f"*{self.name}-*"):
            path.unlink(missing_ok=True)


def _write_atomically(path: Path, data: bytes | np.ndarray) -> None:
    """Write ``data`` (bytes, or an array as ``.npy``) to ``path``: a reader sees all or no file."""
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex}")
    try:
        if isinstance(data, np.ndarray):
            with open(temporary, "wb") as handle:
                np.save(handle, data, allow_pickle=False)
        else:
            temporary.write_bytes(data)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def remove_here(places: Iterable[CachePlace]) -> set[CachePlace]:
    """Delete the fit directories of ``places`` on this host; the places on other hosts.

    Parameters
    ----------
    places : iterable of CachePlace

    Returns
    -------
    set of CachePlace
        The places this host could not reach.
    """
    host, elsewhere = socket.gethostname(), set()
    for place in places:
        if place.host == host:
            shutil.rmtree(place.directory, ignore_errors=True)
        else:
            elsewhere.add(place)
    return elsewhere
