"""Chunked fits on Apache Spark: per-partition sums on Arrow batches, added in a tree.

:class:`SparkSource` gives a :class:`pyspark.sql.DataFrame` the interface of the
sources in :mod:`ordstats.data.sources`.  ``map_reduce(func, *args)`` runs
``func`` (the same pure per-chunk function that chunked and Dask fits use,
e.g. :func:`ordstats.data.chunks.chunk_totals`) on every partition's rows as
pandas DataFrames (``mapInPandas``, so the rows travel as Arrow batches),
adds the results within each partition, and adds the partitions' results with
``treeAggregate``.  One pass is one Spark job; a lost task is recomputed by
Spark, and as every task is a pure function of its rows and the parameters,
the sum is the same.

Every pass through ``mapInPandas`` pays Spark's conversion of the rows from
the JVM to Arrow batches, several times what ordstats then does with them.
During a fit, the first pass therefore also spills each partition's chunks to
its executor's local directory (the *partition cache*,
:mod:`ordstats.data.spark_cache`), and the later passes of the fit run a job
of one task per partition id over the spilled chunks (``parallelize`` +
``mapPartitionsWithIndex``, added with ``treeAggregate``): the same chunks in
the same order, so the same sums to the last bit.  Where the first pass read
Parquet files with pyarrow (:mod:`ordstats.data.spark_files`), it spills
nothing: the later passes read the same row groups again, in the same chunks,
which costs less than writing the chunks and reading them back.  The summary pass (the
first over the spilled chunks that builds their likelihood arrays) keeps
those arrays beside the chunks (:class:`SparkArrays`, the store of
:mod:`ordstats.data.spill` for Spark), and the Newton passes after it read
the arrays instead of the chunks.  For a model whose design columns are
numeric columns used as is and whose response is numbers, the first pass's
tasks already keep the arrays (the response as its values, coded by the
levels the pass finds: :func:`~ordstats.data.spark_cache.keep_scan_arrays`),
so the summary pass reads neither the files nor the chunks.  A partition whose spill is
not found where its task runs is read through the DataFrame (and spilled
again there); should the DataFrame's partitioning change, the cache is
dropped and the pass made through the DataFrame.  The spill is deleted when
``fit()`` ends, however it ends, and when ``from_formula`` fails; passes after
the fit (robust covariances, margins, profiles) read the DataFrame.  The
session setting ``spark.ordstats.cache`` (:func:`partition_cache_setting`)
is ``auto`` by default: on for a local session (``local[n]``), where every
task runs on the machine that spilled, and off on a cluster, where a
partition's task may run on another executor at each pass (``true`` turns
it on there too: each partition not found is then read through the
DataFrame).

Predictions (:meth:`SparkSource.map_partitions`) are a pandas UDF: the result
is a Spark DataFrame, the input's columns followed by the predictions, so that
scoring stays in the cluster.  Results collected on the driver
(:meth:`SparkSource.collect_numbered`, e.g. ``get_prediction()``) label each
row by its position in the DataFrame's order, from the row counts of each
partition that the same job reports.

pyspark is imported only here, and only when a Spark DataFrame is used.
"""

from __future__ import annotations

import gc
import os
import pickle
import re
import shutil
import sys
import uuid
import warnings
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from ordstats.core.threads import numeric_threads
from ordstats.data.chunks import (
    ChunkArrays,
    ChunkSpec,
    ColumnPlan,
    LevelScan,
    _response_prototype,
    chunk_arrays,
    on_arrays,
)
from ordstats.data.parts import add_parts, sum_parts
from ordstats.data.reservoir import MIN_SUBSAMPLE, SUBSAMPLE_FRACTION, SampledScan
from ordstats.data.rows import UsedRows
from ordstats.data.spark_cache import (
    SCAN_ARRAYS,
    CachePlace,
    NumericLevels,
    PartitionCache,
    PartitionWriter,
    keep_scan_arrays,
    pack_arrays,
    read_arrays,
    read_chunks,
    remove_here,
)
from ordstats.data.spark_files import FileScan, file_scan, first_rows, read_group
from ordstats.data.spill import decoding_key, serve_arrays, serves
from ordstats.design.core import NO_ROWS
from ordstats.design.response import encode_response, format_level
from ordstats.design.subset import RowQuery, SelectedRows
from ordstats.errors import (
    DataError,
    LevelsWarning,
    MissingDataWarning,
    OrdstatsError,
    PredictionError,
    ResponseError,
    SpecificationError,
)

__all__ = [
    "CACHE_SETTING",
    "READ_SETTING",
    "SparkArrays",
    "SparkSource",
    "is_spark_frame",
    "java_runtime",
    "local_session",
    "map_partitions_seeded",
    "partition_cache_setting",
    "read_setting",
    "selected_spark_rows",
]

#: The session setting of the rows per Arrow batch sent to Python.
_BATCH_ROWS = "spark.sql.execution.arrow.maxRecordsPerBatch"
#: The most bytes of numeric columns in one Arrow batch of an ordstats pass: each
#: task's JVM holds about a batch while it converts rows to Arrow, so a whole
#: 500,000-row chunk of 21 columns (84 MB) per task ran a 1 GB driver out of heap
#: beside a cached frame.
ARROW_BATCH_BYTES = 32 << 20
#: The session setting that turns the partition cache on or off (:func:`partition_cache_setting`).
CACHE_SETTING = "spark.ordstats.cache"
#: The session setting: may passes read a plain Parquet scan with pyarrow (:func:`read_setting`)?
READ_SETTING = "spark.ordstats.readParquet"
#: Masters whose tasks all run on this machine: ``local``, ``local[4]``, ``local[*]``, ...
_LOCAL_MASTER = re.compile(r"local(\[[^\]]*\])?")
#: Rows of a sample that fixes column types (and the type of predictions).
_SAMPLE_ROWS = 1000
#: The warm start's subsample: this share of the rows, at least ``WARM_START_MIN`` rows.
WARM_START_FRACTION = SUBSAMPLE_FRACTION
WARM_START_MIN = MIN_SUBSAMPLE
#: A partition sends this many times its even part of the warm start's subsample to the
#: driver (partitions up to twice the average size still give the whole subsample).
SHARE_MARGIN = 2.0
#: Partitions whose results the driver adds itself (``treeAggregate`` of depth 1); more
#: are added in a tree of Spark tasks first.  PySpark's tree is a shuffle whose map
#: side pickles and compresses every result, and writes it to disk once the worker's
#: memory (memory-mapped arrays count) passes ``spark.python.worker.memory``: about a
#: third of the Python workers' CPU of a fit of 10^7 rows x 20 in 20 partitions.
DRIVER_ADDS_PARTITIONS = 64
_SPARK_HINT = "pip install 'ordstats[spark]' (pyspark) and a Java runtime (17 or later)"


def is_spark_frame(data: Any) -> bool:
    """Whether ``data`` is a :class:`pyspark.sql.DataFrame` (classic or Spark Connect).

    Parameters
    ----------
    data : object

    Returns
    -------
    bool
    """
    module = type(data).__module__
    return module.startswith("pyspark.sql") and hasattr(data, "mapInPandas")


def java_runtime() -> str | None:
    """Path of the ``java`` that pyspark starts (``$JAVA_HOME/bin/java``, else on PATH).

    Returns
    -------
    str or None
        None when there is no Java runtime.
    """
    home = os.environ.get("JAVA_HOME")
    if home:
        java = os.path.join(home, "bin", "java")
        return java if os.path.isfile(java) else None
    return shutil.which("java")


def local_session(cores: int = 2, memory: str = "1g", name: str = "ordstats") -> Any:
    """A local Spark session for tests, benchmarks and examples (UI off, quiet).

    Its Python workers run this interpreter.  Stop it (``session.stop()``) when done.

    Parameters
    ----------
    cores : int
        ``local[cores]``; also the number of shuffle partitions.
    memory : str
        ``spark.driver.memory`` (the driver runs the tasks of a local session).
    name : str
        Application name.

    Returns
    -------
    pyspark.sql.SparkSession

    Raises
    ------
    DataError
        pyspark is not installed, or there is no Java runtime.
    """
    try:
        from pyspark.sql import SparkSession
    except ImportError as exc:
        raise DataError(f"Spark needs pyspark: {_SPARK_HINT}") from exc
    if java_runtime() is None:
        raise DataError(
            "Spark needs a Java runtime (17 or later) and none was found (JAVA_HOME, or java "
            "on PATH): install one, e.g. apt-get install default-jre-headless on Debian"
        )
    os.environ["PYSPARK_PYTHON"] = sys.executable
    session = (
        SparkSession.builder.master(f"local[{int(cores)}]")
        .appName(name)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(int(cores)))
        .config("spark.default.parallelism", str(int(cores)))
        .config("spark.driver.memory", memory)
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    return session


def _quoted(name: str) -> str:
    """A column name as Spark SQL reads it literally (dots, spaces, backticks)."""
    return "`" + name.replace("`", "``") + "`"


class _Failure:
    """An ordstats error raised on a worker, carried back to the driver in the sum."""

    def __init__(self, error: OrdstatsError, partition: int) -> None:
        self.error = error
        self.partition = partition


@dataclass
class _Partial:
    """The sums of some partitions' tasks and what those tasks report besides.

    Attributes
    ----------
    total : object
        The sum of the partitions' results (None: no usable rows).
    failure : _Failure or None
        The first ordstats error of a task.
    ran : frozenset of int
        The partitions whose tasks ran.
    kept : frozenset of int
        Partitions spilled to the partition cache (a pass through the DataFrame).
    missing : frozenset of int
        Partitions whose spill was not found (a cached pass): still to read.
    places : frozenset of CachePlace
        Where the tasks wrote or read the cache (for its clean-up).
    """

    total: Any = None
    failure: _Failure | None = None
    ran: frozenset[int] = frozenset()
    kept: frozenset[int] = frozenset()
    missing: frozenset[int] = frozenset()
    places: frozenset[CachePlace] = frozenset()

    def __add__(self, other: _Partial | None) -> _Partial:
        if other is None:
            return self
        return _Partial(
            add_parts(self.total, other.total),
            self.failure or other.failure,
            self.ran | other.ran,
            self.kept | other.kept,
            self.missing | other.missing,
            self.places | other.places,
        )

    __radd__ = __add__


def _combine(a: _Partial | None, b: _Partial | None) -> _Partial | None:
    """Add two partial results (``treeAggregate``'s operation); None adds nothing."""
    return add_parts(a, b)


def _added(parts: Any) -> Any:
    """The results of the RDD ``parts`` added up.

    By the driver, in partition order; above :data:`DRIVER_ADDS_PARTITIONS`
    partitions, in a tree of tasks first.
    """
    depth = 1 if parts.getNumPartitions() <= DRIVER_ADDS_PARTITIONS else 2
    return parts.treeAggregate(None, _combine, _combine, depth=depth)


def _chunks(batches: Iterator[pd.DataFrame], chunksize: int) -> Iterator[pd.DataFrame]:
    """Arrow batches joined into chunks of about ``chunksize`` rows (none without rows)."""
    pending: list[pd.DataFrame] = []
    rows = 0
    for batch in batches:
        if not len(batch):
            continue  # a partition without rows is valid data that adds nothing
        pending.append(batch)
        rows += len(batch)
        if rows >= chunksize:
            yield pd.concat(pending, ignore_index=True) if len(pending) > 1 else pending[0]
            pending, rows = [], 0
    if pending:
        yield pd.concat(pending, ignore_index=True) if len(pending) > 1 else pending[0]


def _partition_id() -> int:
    """The partition of the running Spark task (-1 outside a task)."""
    from pyspark import TaskContext

    context = TaskContext.get()
    return context.partitionId() if context is not None else -1


#: The process whose long-lived objects :func:`_settle_worker` has frozen (forks do not count).
_SETTLED_IN: int | None = None


def _settle_worker() -> None:
    """Leave the objects alive in this Python worker now out of its full garbage collections.

    PySpark's worker process runs ``gc.collect()`` after every task.  With
    ordstats' imports (numpy, pandas, pyarrow, scipy, statsmodels: about
    140,000 objects) each takes about 65 ms, or 6 s of the workers' CPU for the
    100 tasks of a fit of 10^7 rows in 20 partitions.  :func:`gc.freeze`, once
    per worker process at its first ordstats task (the previous task's garbage
    already collected by then), moves those objects to the permanent generation,
    which collections skip; objects made later are collected as before.
    """
    global _SETTLED_IN
    if _SETTLED_IN != os.getpid() and _partition_id() >= 0:  # only in a Spark task's process
        gc.freeze()
        _SETTLED_IN = os.getpid()


def _sum_chunks(
    chunks: Iterator[pd.DataFrame], func: Callable[..., Any], args: tuple[Any, ...], partition: int
) -> _Partial:
    """``func(chunk, *args)`` added over one partition's chunks (a failure on an ordstats error)."""
    _settle_worker()
    total = None
    try:
        # one BLAS thread per task: Spark already runs one task per core
        with numeric_threads():
            for chunk in chunks:
                total = add_parts(total, func(chunk, *args))
    except OrdstatsError as exc:
        return _Partial(failure=_Failure(exc, partition), ran=frozenset([partition]))
    return _Partial(total, ran=frozenset([partition]))


def sample_share(n_rows: int, n_partitions: int, capacity: int) -> int:
    """Rows of its first-pass sample a partition of ``n_rows`` rows sends to the driver.

    The warm start uses :data:`WARM_START_FRACTION` of all rows (at least
    :data:`WARM_START_MIN`, at most ``capacity``).  Taking every partition as
    large as this one, its even part of that subsample is ``wanted /
    n_partitions`` rows; it sends :data:`SHARE_MARGIN` times that, and a few
    standard deviations more, so that the rows below the smallest bound of
    the partitions (:meth:`~ordstats.data.reservoir.Reservoir.share`) hold the
    whole subsample unless partitions differ much in size (the subsample is
    then smaller, still random).  Sending the whole reservoir (``capacity``
    rows from every partition) cost a 10^6-row fit on 2 partitions about 3 s
    of CPU, and 10^7 rows on 20 partitions would send 670 MB through the driver.

    Parameters
    ----------
    n_rows : int
        Rows the partition read.
    n_partitions : int
    capacity : int
        The reservoir's capacity.

    Returns
    -------
    int
    """
    parts = max(n_partitions, 1)
    wanted = min(capacity, max(WARM_START_MIN, int(WARM_START_FRACTION * n_rows * parts)))
    even = wanted / parts
    return min(capacity, int(np.ceil(SHARE_MARGIN * even + 6 * np.sqrt(even))) + 100)


def _shipped(part: _Partial, n_partitions: int) -> _Partial:
    """A partition's result as it leaves the task: a first pass's sample cut to its share."""
    total = part.total
    if not isinstance(total, SampledScan) or n_partitions <= 1:
        return part
    sample = total.sample
    rows = sample_share(total.scan.n_rows, n_partitions, sample.capacity)
    return replace(part, total=replace(total, sample=sample.share(rows)))


def _spilled(chunks: Iterator[pd.DataFrame], writer: PartitionWriter) -> Iterator[pd.DataFrame]:
    """The chunks, each spilled to the partition cache as it passes."""
    for chunk in chunks:
        writer.add(chunk)
        yield chunk


def _partition_sum(
    batches: Iterator[pd.DataFrame],
    func: Callable[..., Any],
    args: tuple[Any, ...],
    chunksize: int,
    n_partitions: int,
    cache: PartitionCache | None = None,
) -> _Partial:
    """One partition's sum in a pass through the DataFrame, spilling its chunks to ``cache``.

    Nothing is spilled where the cache re-reads the partition's Parquet row
    groups (``cache.rows``): the partition is kept all the same.
    """
    partition = _partition_id()
    chunks = _chunks(batches, chunksize)
    writers = []
    if cache is not None and cache.rows is None:  # spill the chunks (first: clears the directory)
        writers.append(PartitionWriter(cache, partition))
        chunks = _spilled(chunks, writers[0])
    if cache is not None and cache.scan_arrays is not None:  # the first pass keeps the arrays too
        writers.append(PartitionWriter(cache, partition, SCAN_ARRAYS))
        chunks = keep_scan_arrays(chunks, cache.scan_arrays, writers[-1])
    part = _shipped(_sum_chunks(chunks, func, args, partition), n_partitions)
    if cache is None or part.failure is not None:
        for writer in writers:
            writer.abandon()
        return part
    places = [writer.finish() for writer in writers]
    if cache.rows is None and places[0] is None:  # the chunks could not be kept
        return part
    kept = frozenset(place for place in places if place is not None)
    return replace(part, kept=frozenset([partition]), places=kept)


def _cached_chunks(
    cache: PartitionCache, partition: int, columns: list[str] | None
) -> Iterator[pd.DataFrame] | None:
    """``partition``'s chunks of the first pass, with ``columns``; None if not found here.

    Read again from the Parquet files where the first pass read them with
    pyarrow (the same chunks, in the same order), else from the spill.
    """
    if cache.rows is None:
        files = cache.chunk_files(partition)
        return None if files is None else read_chunks(files, columns)
    chunks = _chunks(read_group(cache.rows, partition, cache.chunksize), cache.chunksize)
    if columns is None:
        return chunks
    return (c if list(c.columns) == columns else c[columns] for c in chunks)


def _cached_partition_sum(
    partition: int,
    *,
    cache: PartitionCache,
    func: Callable[..., Any],
    args: tuple[Any, ...],
    columns: list[str] | None,
) -> _Partial:
    """One partition's sum from its spilled chunks, or a report that they are not here."""
    chunks = _cached_chunks(cache, partition, columns)
    if chunks is None:  # another executor kept them, or they were deleted
        return _Partial(missing=frozenset([partition]))
    part = _sum_chunks(chunks, func, args, partition)
    part = _shipped(part, cache.partitions)
    return replace(part, places=frozenset([cache.place(partition)]))


def _on_kept(
    arrays: ChunkArrays,
    func: Callable[..., Any],
    spec: ChunkSpec,
    location: tuple[str, ...],
    *args: Any,
) -> Any:
    """``func(arrays, spec, *args)`` of a chunk's kept arrays (built for ``location``)."""
    return func(serve_arrays(arrays, spec, location), spec, *args)


def _built_arrays(
    chunks: Iterator[pd.DataFrame], spec: ChunkSpec, writer: PartitionWriter
) -> Iterator[ChunkArrays]:
    """Each chunk's arrays (``spec``'s), kept by ``writer`` as they pass."""
    for chunk in chunks:
        arrays = chunk_arrays(chunk, spec)
        writer.add(pack_arrays(arrays))
        yield arrays


@dataclass(frozen=True)
class _ArraysTask:
    """What a task of a pass over a store's arrays needs (it travels to every task).

    ``built`` is the spec the arrays are built with, ``spec`` the pass's.
    """

    cache: PartitionCache
    name: str
    built: ChunkSpec
    func: Callable[..., Any]
    spec: ChunkSpec
    args: tuple[Any, ...]
    #: the levels of a response kept as its values (the first pass's store)
    levels: NumericLevels | None = None

    def __call__(self, partition: int) -> _Partial:
        """One partition's sum from its kept arrays, else from its chunks (keeping their arrays)."""
        cache, location = self.cache, tuple(self.built.terms.names)
        args = (self.func, self.spec, location, *self.args)
        files = cache.chunk_files(partition, self.name)
        if files is not None:
            part = _sum_chunks(read_arrays(files, self.levels), _on_kept, args, partition)
            return replace(part, places=frozenset([cache.place(partition)]))
        columns = list(self.built.plan.read_columns)
        chunks = _cached_chunks(cache, partition, columns)
        if chunks is None:  # another executor kept them, or they were deleted
            return _Partial(missing=frozenset([partition]))
        writer = PartitionWriter(cache, partition, self.name)  # coded: levels are not needed
        arrays = _built_arrays(chunks, self.built, writer)
        part = _sum_chunks(arrays, _on_kept, args, partition)
        if part.failure is not None:
            writer.abandon()
        else:
            writer.finish()
        return replace(part, places=frozenset([cache.place(partition)]))


class SparkArrays:
    """A Spark fit's likelihood arrays, kept beside its partition cache's chunks.

    Built by :meth:`SparkSource.keep_arrays`; the store of
    :mod:`ordstats.data.spill` for Spark.  Its first pass reads each
    partition's spilled chunks, builds their arrays and keeps them (so it
    reads no source: ``read_source`` is False); later passes read the
    arrays.  It serves passes while the fit's partition cache lives.

    Parameters
    ----------
    source : SparkSource
    cache : PartitionCache
    spec : ChunkSpec
        The spec the arrays are built with.
    """

    read_source = False

    def __init__(
        self,
        source: SparkSource,
        cache: PartitionCache,
        spec: ChunkSpec,
        name: str | None = None,
        levels: NumericLevels | None = None,
    ) -> None:
        self.source, self.cache, self.spec = source, cache, spec
        self.key = decoding_key(spec)
        self.location = tuple(spec.terms.names)
        self.name = f"arrays-{uuid.uuid4().hex}" if name is None else name
        #: the first pass's arrays (``name`` :data:`SCAN_ARRAYS`) keep the response's values
        self.levels = levels
        self.closed = False

    def __repr__(self) -> str:
        return f"SparkArrays({self.cache.partitions} partitions)"

    def serves(self, spec: ChunkSpec) -> bool:
        """Whether the kept arrays are those ``spec`` builds (and the cache still lives)."""
        live = not self.closed and self.source.caches(self.cache)
        return live and serves(self.key, self.location, spec)

    def map_reduce(self, func: Callable[..., Any], spec: ChunkSpec, *args: Any) -> Any:
        """``func(arrays_1, spec, *args) + ...`` over every partition's kept arrays."""
        task = _ArraysTask(self.cache, self.name, self.spec, func, spec, args, self.levels)
        return self.source.arrays_pass(task)

    def close(self) -> None:
        """Stop serving passes (the files go with the partition cache, when the fit ends)."""
        self.closed = True


class SparkSource:
    """A Spark DataFrame as a chunked source: each partition's rows, in chunks.

    Parameters
    ----------
    frame : pyspark.sql.DataFrame
        A DataFrame of a classic Spark session (Spark Connect sessions are not
        supported).  Cache it first (``frame.cache()``) if it is expensive to
        compute: the first pass of a fit reads all partitions, and so does
        every pass without the partition cache (see the module docstring).
    chunksize : int
        Rows per chunk within a partition: Spark's Arrow batches (10,000 rows by
        default) are joined into chunks of about this many rows.
    subset : SelectedRows, optional
        The DataFrame and query of R's ``subset=`` that ``frame`` is the
        selected rows of: rows collected on the driver are numbered by their
        position in that DataFrame (:meth:`collect_numbered`).

    Raises
    ------
    DataError
        pyspark cannot be imported, or ``frame`` belongs to a Spark Connect session.
    """

    def __init__(self, frame: Any, chunksize: int, subset: SelectedRows | None = None) -> None:
        try:
            import pyspark  # noqa: F401
        except ImportError as exc:  # pragma: no cover - a Spark DataFrame implies pyspark
            raise DataError(f"fitting a Spark DataFrame needs pyspark: {_SPARK_HINT}") from exc
        if type(frame).__module__.startswith("pyspark.sql.connect"):
            raise DataError(
                "a Spark Connect DataFrame cannot be fitted yet (its per-partition sums need "
                "the RDD API); use a classic Spark session (SparkSession.builder.master(...)) "
                "or write the data to Parquet files and fit those"
            )
        self.frame = frame
        self.chunksize = int(chunksize)
        self.subset = subset
        self.columns = [str(c) for c in frame.columns]
        self._cache_wanted = partition_cache_setting(frame.sparkSession)
        #: whether a pass through the DataFrame may start a partition cache (during a fit)
        self._cache_open = self._cache_wanted
        self._cache: PartitionCache | None = None
        #: per pass: (partitions read from the cache, partitions read through the DataFrame)
        self.cache_log: list[tuple[int, int]] = []
        #: per pass through the DataFrame: who read the rows, "pyarrow" (the files) or "spark"
        self.readers: list[str] = []
        #: the layout whose arrays the next first pass keeps (:meth:`keep_scan_arrays`)
        self._scan_spec: ChunkSpec | None = None

    def __repr__(self) -> str:
        return f"SparkSource({len(self.columns)} columns, chunksize={self.chunksize})"

    def check_response(
        self, scan: LevelScan, plan: ColumnPlan, levels: Any, many_levels: bool
    ) -> None:
        """Refuse a text response without ``levels=``, saying how to pass them.

        The in-memory message also suggests an ordered categorical column,
        which a Spark DataFrame cannot hold.

        Raises
        ------
        ResponseError
        """
        if scan.n_rows == 0 or not scan.values.get(plan.response):
            return  # the no-rows errors come next, from the levels
        try:
            with warnings.catch_warnings():  # the encoding that follows gives them, once
                warnings.simplefilter("ignore", LevelsWarning)
                encode_response(
                    _response_prototype(scan, plan.response),
                    name=plan.response,
                    levels=levels,
                    many_levels=many_levels,
                )
        except ResponseError as exc:
            if levels is not None or "levels=" not in str(exc):
                raise
            shown = ", ".join(repr(format_level(v)) for v in list(scan.values[plan.response])[:4])
            raise ResponseError(
                f"the response {plan.response!r} of the Spark DataFrame holds text labels "
                f"({shown}, ...) whose order ordstats cannot tell, and a Spark column cannot be "
                "an ordered categorical: pass the labels from lowest to highest, e.g. "
                "OrdinalModel.from_formula(formula, data, levels=['low', 'mid', 'high'])"
            ) from exc

    def _select(self, columns: Sequence[str] | None) -> Any:
        if columns is None:
            return self.frame
        return self.frame.select(*[_quoted(c) for c in columns])

    def map_reduce(
        self, func: Callable[..., Any], *args: Any, columns: Sequence[str] | None = None
    ) -> Any:
        """``func(chunk_1, *args) + ...`` over every partition, added with ``treeAggregate``.

        During a fit, the first pass through the DataFrame also spills each
        partition's chunks to its executor's local disk, and later passes that
        read the same columns read the spilled chunks instead (one task per
        partition); a partition whose chunks are not found where its task runs
        is read through the DataFrame (see :mod:`ordstats.data.spark_cache`).

        Raises
        ------
        DataError
            The data have no rows, a chunk cannot be used (the message of
            ``func``'s error, naming the partition), or the Spark session
            stopped.
        """
        wanted = list(self.columns if columns is None else columns)
        cache = self._cache
        if cache is not None and cache.partitions and cache.covers(wanted, self.columns):
            task = partial(_cached_partition_sum, cache=cache, func=func, args=args, columns=wanted)
            return self._cached_total(cache, task, func, args, wanted)
        spill = self._start_cache(wanted)
        part, n_partitions = self._run(partial(self._frame_pass, func, args, wanted, spill))
        if spill is not None:
            spill.scan_arrays = None  # the first pass only
            self._kept(spill, part, n_partitions)
        self.cache_log.append((0, n_partitions))
        return _total(part)

    def _frame_pass(
        self,
        func: Callable[..., Any],
        args: tuple[Any, ...],
        columns: list[str],
        cache: PartitionCache | None,
    ) -> tuple[_Partial, int]:
        """A pass through the DataFrame, spilling to ``cache``; and its number of partitions."""
        # Spark reads the Arrow batch size when the RDD is made, not when it runs
        with self._arrow_batches():
            parts = self._partition_results(func, args, columns, cache)
            total = _added(parts)
        return total if total is not None else _Partial(), parts.getNumPartitions()

    def _partition_results(
        self,
        func: Callable[..., Any],
        args: tuple[Any, ...],
        columns: list[str],
        cache: PartitionCache | None,
    ) -> Any:
        """The RDD of the partitions' results through the DataFrame (not yet computed)."""
        chunksize = self.chunksize
        selected = self._select(columns)
        n_partitions = selected.rdd.getNumPartitions()
        scan = self._file_scan(selected, n_partitions)
        self.readers.append("spark" if scan is None else "pyarrow")
        if scan is not None:
            return self._file_results(scan, func, args, cache)

        def partial_sums(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
            part = _partition_sum(batches, func, args, chunksize, n_partitions, cache)
            yield pd.DataFrame({"part": [pickle.dumps(part, protocol=pickle.HIGHEST_PROTOCOL)]})

        frame = selected.mapInPandas(partial_sums, "part binary")
        return frame.rdd.map(lambda row: pickle.loads(row[0]))

    def _file_scan(self, selected: Any, tasks: int) -> FileScan | None:
        """The Parquet files ``selected`` reads, for pyarrow in the tasks; None: Spark reads it."""
        if not read_setting(self.frame.sparkSession):
            return None
        return file_scan(selected, tasks)

    def _file_results(
        self,
        scan: FileScan,
        func: Callable[..., Any],
        args: tuple[Any, ...],
        cache: PartitionCache | None,
    ) -> Any:
        """The RDD of the tasks' results, each task reading its row groups with pyarrow.

        A partition cache started by this pass spills nothing: later passes
        read the row groups again (:func:`_cached_chunks`), which costs less
        than writing and reading back the chunks (about 1 s of the Python
        workers' CPU in the first fit of a session at 10^6 rows x 21).
        """
        chunksize, tasks = self.chunksize, scan.tasks
        if cache is not None:
            cache.rows, cache.chunksize = scan, chunksize

        def partition_sums(index: int, _: Iterator[int]) -> Iterator[_Partial]:
            batches = read_group(scan, index, chunksize)
            yield _partition_sum(batches, func, args, chunksize, tasks, cache)

        context = self.frame.sparkSession.sparkContext
        return context.parallelize(range(tasks), tasks).mapPartitionsWithIndex(partition_sums)

    def keep_scan_arrays(self, spec: ChunkSpec | None) -> None:
        """Have the next first pass of a fit also keep the chunks' arrays of ``spec``.

        ``spec`` is the layout of a model whose design columns are numeric
        columns used as is, built before the levels are known; its tasks keep
        each chunk's arrays with the response's values (:meth:`scan_store`
        serves them to the summary pass, which then reads no chunk).  None:
        keep none (a fit of another kind).
        """
        self._scan_spec = spec

    def scan_store(self, spec: ChunkSpec) -> SparkArrays | None:
        """The arrays the first pass kept, serving ``spec`` (the fit's spec after that pass).

        None where the first pass kept none, or ``spec`` has other columns than
        the arrays, or a response whose levels are not numbers.  Partitions
        whose arrays are not found are built from their chunks at the summary
        pass, as for any store.
        """
        built, self._scan_spec = self._scan_spec, None
        cache = self._cache
        if built is None or cache is None or not cache.partitions or not self.caches(cache):
            return None
        same = [t.names for t in spec.parts.values()] == [t.names for t in built.parts.values()]
        levels = NumericLevels.of(spec.level_codes)
        if spec.plan != built.plan or not same or levels is None or spec.binary_cut is not None:
            return None
        return SparkArrays(self, cache, spec, SCAN_ARRAYS, levels)

    def keep_arrays(self, spec: ChunkSpec, n_rows: int) -> SparkArrays | None:
        """A store of the chunks' arrays beside the fit's partition cache, or None.

        None when the fit keeps no partition cache, or its chunks lack a
        column ``spec`` reads.  ``n_rows`` is not used: the arrays take about
        as much of the executors' disks as the chunks.
        """
        cache = self._cache
        if cache is None or not cache.partitions:
            return None
        if not cache.covers(spec.plan.read_columns, self.columns):
            return None
        return SparkArrays(self, cache, spec)

    def caches(self, cache: PartitionCache) -> bool:
        """Whether ``cache`` is the live partition cache of this source."""
        return self._cache is cache and bool(cache.partitions)

    def arrays_pass(self, task: _ArraysTask) -> Any:
        """One pass of a :class:`SparkArrays` store (partitions not found read the DataFrame)."""
        columns = list(task.built.plan.read_columns)
        args = (task.spec, task.func, *task.args)
        return self._cached_total(task.cache, task, on_arrays, args, columns)

    def _cached_total(
        self,
        cache: PartitionCache,
        task: Callable[[int], _Partial],
        func: Callable[..., Any],
        args: tuple[Any, ...],
        columns: list[str],
    ) -> Any:
        """A pass of ``task`` per partition id; partitions it did not find by ``func`` on chunks."""
        part = self._run(partial(self._cached_pass, cache, task))
        self.cache_log.append((len(part.ran), len(part.missing)))
        if part.missing and part.failure is None:
            part = self._run(partial(self._complete, cache, part, func, args, columns))
        return _total(part)

    def _cached_pass(self, cache: PartitionCache, task: Callable[[int], _Partial]) -> _Partial:
        """A pass over the spilled chunks: a task per partition id, added with ``treeAggregate``."""
        context = self.frame.sparkSession.sparkContext
        n_partitions = cache.partitions

        def partition_sum(index: int, _: Iterator[int]) -> Iterator[_Partial]:
            yield task(index)

        ids = context.parallelize(range(n_partitions), n_partitions)
        part: _Partial = _added(ids.mapPartitionsWithIndex(partition_sum))
        cache.places.update(part.places)
        return part

    def _complete(
        self,
        cache: PartitionCache,
        cached: _Partial,
        func: Callable[..., Any],
        args: tuple[Any, ...],
        columns: list[str],
    ) -> _Partial:
        """``cached`` and the partitions whose spill it did not find, read through the DataFrame.

        Their tasks spill them again, wherever they run.  Should the DataFrame
        now have another number of partitions (its plan changed), the cached
        partition ids mean nothing: the cache is dropped and the whole pass
        made through the DataFrame instead.
        """
        with self._arrow_batches():
            parts = self._partition_results(func, args, columns, cache)
        if parts.getNumPartitions() != cache.partitions:
            self.release_cache()
            return self._frame_pass(func, args, columns, None)[0]
        context = self.frame.sparkSession.sparkContext
        with self._arrow_batches():
            part = sum_parts(context.runJob(parts, list, sorted(cached.missing)))
        if part is None:
            return replace(cached, missing=frozenset())
        cache.places.update(part.places)
        return replace(cached, missing=frozenset()) + part

    def _start_cache(self, columns: list[str]) -> PartitionCache | None:
        """The partition cache a pass through the DataFrame fills, or None (no caching now)."""
        if not self._cache_open or self._cache is not None:
            return None
        cache = PartitionCache(tuple(columns), scan_arrays=self._scan_spec)
        self._cache = cache
        # chunks left on this machine go with the source, should no fit end release them
        self._finalizer = weakref.finalize(self, remove_here, cache.places)
        return cache

    def _kept(self, cache: PartitionCache, part: _Partial, n_partitions: int) -> None:
        """Record the first pass's spill; drop the cache if no partition could be kept."""
        cache.places.update(part.places)
        if part.kept and part.failure is None:
            cache.partitions = n_partitions
        else:
            self.release_cache()
            self._cache_open = self._cache_wanted

    def begin_fit(self) -> None:
        """Allow a partition cache again (a new fit of this source begins)."""
        self._cache_open = self._cache_wanted

    def release_cache(self) -> None:
        """Delete the partition cache (a fit ended); later passes read the DataFrame.

        Files on this machine are deleted here; on other hosts (a cluster) by
        one task per partition, as far as those tasks reach them: Spark
        deletes its executors' local directories, and with them what is
        left, when the executors stop.
        """
        cache, self._cache, self._cache_open = self._cache, None, False
        if cache is None:
            return
        elsewhere = remove_here(cache.places)
        if elsewhere and not self._stopped():
            _remove_on_executors(self.frame.sparkSession.sparkContext, cache)

    @contextmanager
    def _arrow_batches(self) -> Iterator[None]:
        """Arrow batches of ``chunksize`` rows during a pass (at most :data:`ARROW_BATCH_BYTES`).

        Spark sends a partition's rows to Python in batches of
        ``spark.sql.execution.arrow.maxRecordsPerBatch`` rows (10,000 by
        default), each converted to pandas on its own: at ``chunksize`` a
        chunk is one batch, which saves that conversion's per-batch cost and
        the joining of batches into chunks (about a third of the Python
        workers' time of a pass on 10^6 rows x 20).  The session's setting
        comes back after the pass.
        """
        conf = self.frame.sparkSession.conf
        before = conf.get(_BATCH_ROWS)
        try:
            rows = int(before or 0)
        except ValueError:
            rows = 0
        wanted = min(self.chunksize, max(1, ARROW_BATCH_BYTES // (8 * max(len(self.columns), 1))))
        if rows <= 0 or rows >= wanted:  # no limit, or batches as large already
            yield
            return
        conf.set(_BATCH_ROWS, str(wanted))
        try:
            yield
        finally:
            conf.set(_BATCH_ROWS, before)

    def _run(self, job: Callable[[], Any]) -> Any:
        """Run a Spark job, with a clear :class:`DataError` for what Spark's error hides.

        A stopped session, or Parquet files Spark cannot read together.
        """
        if self._stopped():
            raise DataError(_stopped_message())
        try:
            return job()
        except Exception as exc:
            if isinstance(exc, OrdstatsError):
                raise
            if self._stopped():
                raise DataError(_stopped_message()) from exc
            if _PARQUET_TYPE_MISMATCH in str(exc):
                raise DataError(_mismatched_types_message()) from exc
            raise

    def _stopped(self) -> bool:
        """Whether the frame's Spark session has stopped (or its JVM is gone)."""
        return _session_stopped(self.frame)

    def first_chunk(self, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """The first rows (up to 1000), converted as every pass converts them (Arrow)."""

        def frames(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
            for batch in batches:
                if len(batch):
                    yield pd.DataFrame({"part": [pickle.dumps(batch)]})

        def run() -> list[Any]:
            sample = self._select(columns).limit(_SAMPLE_ROWS)
            return sample.mapInPandas(frames, "part binary").collect()

        selected = self._run(partial(self._select, columns))
        scan = self._run(partial(self._file_scan, selected, 1))
        if scan is not None:  # read on the driver, as the tasks of a pass read the files
            first = first_rows(scan, _SAMPLE_ROWS)
            if not len(first):
                raise DataError(NO_ROWS)
            return first
        rows = self._run(run)
        if not rows:
            raise DataError(NO_ROWS)
        return pd.concat([pickle.loads(row[0]) for row in rows], ignore_index=True)

    def map_partitions(self, func: Callable[[pd.DataFrame], Any]) -> Any:
        """The frame with ``func``'s predictions as new columns (a pandas UDF; lazy).

        ``func`` maps a pandas DataFrame of rows to a DataFrame or Series of
        predictions with the same index.  Its output type is learned from the
        first rows (:meth:`first_chunk`), on the driver, so that a missing
        column or an unseen level there is reported at once.

        Returns
        -------
        pyspark.sql.DataFrame
            Every column of the frame, then one column per column of ``func``'s
            output (a Series gives one column, named by the Series).

        Raises
        ------
        PredictionError
            A prediction column has the name of a column of the frame.
        """
        from pyspark.sql import functions as F
        from pyspark.sql.functions import pandas_udf

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MissingDataWarning)
            raw = func(self.first_chunk())
        sample, single = _as_frame(raw), isinstance(raw, pd.Series)
        clash = [c for c in sample.columns if c in self.columns]
        if clash:
            raise PredictionError(
                f"the prediction column(s) {', '.join(map(repr, clash))} are also columns of the "
                "Spark DataFrame; rename or drop those columns before predicting"
            )
        schema = _spark_schema(sample)

        def predictions(batch: pd.DataFrame) -> pd.DataFrame:
            _settle_worker()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MissingDataWarning)
                return _as_frame(func(batch)).reset_index(drop=True)

        # pyspark reads the kind of pandas UDF from the type hints: frame -> frame or series
        def predict_frame(batch: pd.DataFrame) -> pd.DataFrame:
            return predictions(batch)

        def predict_series(batch: pd.DataFrame) -> pd.Series:
            return predictions(batch).iloc[:, 0]

        if single:
            udf = pandas_udf(predict_series, returnType=schema.fields[0].dataType)  # type: ignore[call-overload]
        else:
            udf = pandas_udf(predict_frame, returnType=schema)  # type: ignore[call-overload]
        result = "__ordstats_prediction__"
        inputs = F.struct(*[F.col(_quoted(c)) for c in self.columns])
        scored = self.frame.withColumn(result, udf(inputs))
        if single:
            return scored.withColumnRenamed(result, str(sample.columns[0]))
        expanded = [F.col(f"{result}.{_quoted(c)}").alias(str(c)) for c in sample.columns]
        return scored.select(*[F.col(_quoted(c)) for c in self.columns], *expanded)

    def selecting(self, rows: UsedRows) -> SparkSource:
        """The source of the rows ``rows`` selects (lazy), such as the rows a fit used.

        For R's ``subset=``, ``rows`` sees only the rows the subset selects:
        one filter of the DataFrame the subset selects from, as two filters
        may be evaluated in either order.
        """
        frame, selected = self._unfiltered(rows)
        return SparkSource(selected_spark_rows(frame, selected), self.chunksize)

    def _unfiltered(
        self, rows: RowQuery | UsedRows
    ) -> tuple[Any, RowQuery | UsedRows | _RowsWithin]:
        """The DataFrame to filter for ``rows`` and the one filter to apply.

        Without R's ``subset=``, this source's frame and ``rows``; with it, the
        DataFrame the subset selects from and ``rows`` among the subset's rows
        (one filter: two may be evaluated in either order).
        """
        if self.subset is None:
            return self.frame, rows
        return self.subset.data, _RowsWithin(self.subset.rows, rows)

    def collect_numbered(
        self,
        func: Callable[[pd.DataFrame], pd.DataFrame],
        rows: RowQuery | UsedRows,
        first: pd.DataFrame,
    ) -> pd.DataFrame:
        """``func`` of the rows ``rows`` selects, collected, each labelled by its position.

        One Spark job: each partition's rows are read once (``mapInPandas``),
        and ``func`` maps the selected ones to a DataFrame of numbers.  A
        row's label is its position in the DataFrame's own order (the order
        of ``toPandas()``; for R's ``subset=``, that of the DataFrame it
        selects from), rows not selected counted, as the rows of files read
        in chunks are numbered.

        Parameters
        ----------
        func : callable
            Maps a pandas DataFrame of rows to a DataFrame of numbers, one row
            per row.
        rows : RowQuery or UsedRows
            Which rows to map (R's ``subset=``, or the rows a fit used).
        first : pandas.DataFrame
            Rows of the frame (:meth:`first_chunk`) whose result tells the
            columns.

        Returns
        -------
        pandas.DataFrame
            ``func``'s columns, indexed by the rows' positions.
        """
        from pyspark.sql import types as T

        picked = rows.select(first)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MissingDataWarning)
            sample = pd.DataFrame(func(picked if len(picked) else first))
        names = [f"__ordstats_value_{k}" for k in range(sample.shape[1])]
        fields = [
            T.StructField(_PARTITION, T.IntegerType(), False),
            T.StructField(_ROW, T.LongType(), False),
            T.StructField(_COUNT, T.BooleanType(), False),
            *[T.StructField(name, T.DoubleType(), True) for name in names],
        ]
        frame, selected = self._unfiltered(rows)  # with subset=, the rows it selects from
        task = partial(_numbered_rows, func=func, rows=selected, names=names)
        job = frame.mapInPandas(task, T.StructType(fields))
        collected = self._run(job.toPandas)
        return _by_position(collected, sample.columns)


#: The columns that number the rows of :meth:`SparkSource.collect_numbered`'s job.
_PARTITION, _ROW, _COUNT = "__ordstats_partition", "__ordstats_row", "__ordstats_count"


@dataclass(frozen=True)
class _RowsWithin:
    """The rows ``inner`` selects among those that ``outer`` (R's ``subset=``) selects."""

    outer: RowQuery
    inner: RowQuery | UsedRows

    def mask(self, frame: pd.DataFrame) -> np.ndarray:
        """Which rows of ``frame`` both select (``inner`` sees only ``outer``'s rows)."""
        mask = np.array(self.outer.mask(frame), dtype=bool)
        if mask.any():
            mask[mask] = np.asarray(self.inner.mask(frame.loc[mask]), dtype=bool)
        return mask

    def columns(self, names: Sequence[str]) -> list[str]:
        """Those of the columns ``names`` that :meth:`mask` reads."""
        return list(dict.fromkeys([*self.outer.columns(names), *self.inner.columns(names)]))


def _numbered_rows(
    batches: Iterator[pd.DataFrame],
    func: Callable[[pd.DataFrame], Any],
    rows: RowQuery | UsedRows | _RowsWithin,
    names: list[str],
) -> Iterator[pd.DataFrame]:
    """``func`` of one partition's selected rows, each with its position in the partition.

    Positions count every row of the partition, selected or not; a last row
    (``_COUNT`` true) gives the partition's number of rows, so that the driver
    can number the rows of all partitions one after another.
    """
    _settle_worker()
    partition, seen = _partition_id(), 0
    for batch in batches:
        batch = batch.reset_index(drop=True)
        keep = np.asarray(rows.mask(batch), dtype=bool)
        if keep.any():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MissingDataWarning)
                out = _as_frame(func(batch.loc[keep])).reset_index(drop=True)
            out.columns = names
            out.insert(0, _COUNT, False)
            out.insert(0, _ROW, np.flatnonzero(keep).astype(np.int64) + seen)
            out.insert(0, _PARTITION, np.int32(partition))
            yield out
        seen += len(batch)
    count = {_PARTITION: [np.int32(partition)], _ROW: [np.int64(seen)], _COUNT: [True]}
    yield pd.DataFrame({**count, **{name: [None] for name in names}})


def _by_position(collected: pd.DataFrame, columns: pd.Index) -> pd.DataFrame:
    """The rows of :func:`_numbered_rows`' job, labelled by their position in the frame.

    A row's label is its position in its partition plus the rows of the
    partitions before it: its position in the frame's own order (that of
    ``toPandas()``), rows left out counted.
    """
    counts = collected.loc[collected[_COUNT].astype(bool)]
    sizes = counts.set_index(_PARTITION)[_ROW].sort_index()
    starts = sizes.cumsum() - sizes
    rows = collected.loc[~collected[_COUNT].astype(bool)]
    rows = rows.sort_values([_PARTITION, _ROW], kind="stable")
    labels = rows[_ROW].to_numpy(dtype=np.int64) + starts.loc[rows[_PARTITION]].to_numpy()
    values = rows.drop(columns=[_PARTITION, _ROW, _COUNT])
    return pd.DataFrame(values.to_numpy(dtype=float), index=pd.Index(labels), columns=columns)


def selected_spark_rows(frame: Any, rows: RowQuery | UsedRows | _RowsWithin) -> Any:
    """The rows of the Spark DataFrame ``frame`` that ``rows`` selects (lazy).

    ``rows`` is R's ``subset=`` or the rows a fit used.  The query is evaluated
    on the Arrow batches of the columns it reads (a pandas UDF), by the rules of
    an in-memory ``subset=``: a row missing a value the query compares is not
    selected.
    """
    from pyspark.sql import functions as F
    from pyspark.sql.functions import pandas_udf

    if _session_stopped(frame):
        raise DataError(_stopped_message("the rows cannot be selected"))
    names = rows.columns([str(c) for c in frame.columns]) or [str(frame.columns[0])]

    def selected(batch: pd.DataFrame) -> pd.Series:
        _settle_worker()
        return pd.Series(rows.mask(batch.reset_index(drop=True)))

    udf = pandas_udf(selected, returnType="boolean")  # type: ignore[call-overload]
    return frame.filter(udf(F.struct(*[F.col(_quoted(c)) for c in names])))


def _as_frame(out: Any) -> pd.DataFrame:
    """Predictions as a DataFrame of plain columns (a categorical becomes its values)."""
    frame = out.to_frame() if isinstance(out, pd.Series) else pd.DataFrame(out)
    frame.columns = [str(c) for c in frame.columns]
    for name in frame.columns:
        column = frame[name]
        if isinstance(column.dtype, pd.CategoricalDtype):
            frame[name] = pd.Series(column.to_numpy(dtype=object), index=frame.index)
            frame[name] = frame[name].where(column.notna(), None)
    return frame


def map_partitions_seeded(
    frame: Any,
    func: Callable[[pd.DataFrame, np.random.Generator], pd.DataFrame],
    entropy: int,
    sample: pd.DataFrame,
    drop: Sequence[str] = (),
) -> Any:
    """``frame`` with the columns ``func`` adds, drawn in the cluster with seeded generators.

    Each partition's Arrow batches go through ``func(batch, rng)`` in order,
    with one generator per partition, ``numpy.random.default_rng([entropy,
    partition id])``: the same DataFrame and ``entropy`` give the same draws
    whenever Spark evaluates them (the frame stays lazy).

    Parameters
    ----------
    frame : pyspark.sql.DataFrame
    func : callable
        ``(batch, rng) -> DataFrame`` of new columns, one row per row of ``batch``.
    entropy : int
    sample : pandas.DataFrame
        Rows of ``func``'s output, from which the new columns' Spark types are read.
    drop : sequence of str
        Columns of ``frame`` left out of the result.

    Returns
    -------
    pyspark.sql.DataFrame
        The columns of ``frame`` (without ``drop``), then those of ``func``.
    """
    from pyspark.sql import types as T

    kept = [field for field in frame.schema.fields if field.name not in set(drop)]
    names = [field.name for field in kept]
    schema = T.StructType([*kept, *_spark_schema(sample).fields])

    def draw(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        from pyspark import TaskContext

        _settle_worker()
        context = TaskContext.get()
        partition = 0 if context is None else int(context.partitionId())
        rng = np.random.default_rng([entropy, partition])
        for batch in batches:
            added = func(batch, rng).reset_index(drop=True)
            yield pd.concat([batch[names].reset_index(drop=True), added], axis=1)

    return frame.mapInPandas(draw, schema)


def _spark_schema(sample: pd.DataFrame) -> Any:
    """The Spark struct type of a frame of predictions (numbers as doubles, labels as text)."""
    from pyspark.sql import types as T

    fields = []
    for name in sample.columns:
        inferred = pd.api.types.infer_dtype(sample[name], skipna=True)
        if inferred == "boolean":
            kind: Any = T.BooleanType()
        elif inferred == "integer":
            kind = T.LongType()
        elif inferred in ("floating", "mixed-integer-float", "decimal", "empty"):
            kind = T.DoubleType()
        else:
            kind = T.StringType()
        fields.append(T.StructField(str(name), kind, True))
    return T.StructType(fields)


def _total(part: _Partial) -> Any:
    """The sum of a pass, or the error of its first failed task (naming the partition)."""
    if part.failure is not None:
        error = part.failure.error
        raise type(error)(f"{error} (in Spark partition {part.failure.partition})")
    if part.total is None:
        raise DataError(NO_ROWS)
    return part.total


def _remove_on_executors(context: Any, cache: PartitionCache) -> None:
    """Delete a fit's spill on the executors that one task per partition reaches (best effort)."""
    n_tasks = max(cache.partitions, context.defaultParallelism, 1)

    def remove(index: int, _: Iterator[int]) -> Iterator[int]:
        remove_here([cache.place(index)])
        yield index

    try:
        context.parallelize(range(n_tasks), n_tasks).mapPartitionsWithIndex(remove).count()
    except Exception:  # the session is going away: Spark deletes its local directories
        return


def partition_cache_setting(session: Any) -> bool:
    """Whether fits on ``session`` keep a partition cache (the ``spark.ordstats.cache`` setting).

    ``"auto"`` (the default) keeps one on a local session (master ``local``
    or ``local[n]``), where every task finds the files of the first pass, and
    not on a cluster, where a partition's task may run on another executor at
    every pass; ``"true"`` keeps one there too (partitions whose files are
    not found where their task runs are then read through the DataFrame);
    ``"false"`` never keeps one.

    Parameters
    ----------
    session : pyspark.sql.SparkSession

    Returns
    -------
    bool

    Raises
    ------
    SpecificationError
        The setting is none of ``auto``, ``true`` and ``false``.
    """
    value = _setting(session, CACHE_SETTING, ("auto", "true", "false"))
    if value == "auto":
        return bool(_LOCAL_MASTER.fullmatch(session.sparkContext.master))
    return value == "true"


def _setting(session: Any, name: str, allowed: tuple[str, ...]) -> str:
    """The session's value of an ordstats setting (``allowed[0]`` if unset), one of ``allowed``."""
    value = str(session.conf.get(name, allowed[0])).strip().lower()
    if value in allowed:
        return value
    listed = ", ".join(repr(a) for a in allowed[:-1]) + f" or {allowed[-1]!r}"
    raise SpecificationError(
        f"the Spark setting {name} must be {listed}; got {value!r}. "
        f"Set it with spark.conf.set({name!r}, 'false') (or the session's builder)"
    )


def read_setting(session: Any) -> bool:
    """Whether passes may read a plain Parquet scan with pyarrow (``spark.ordstats.readParquet``).

    ``"auto"`` (the default): a pass over a DataFrame that only reads Parquet
    files of a local file system (see :mod:`ordstats.data.spark_files`) reads
    them with pyarrow in its tasks, skipping the JVM's conversion of the rows;
    ``"false"``: every pass reads the DataFrame through Spark (``mapInPandas``).

    Parameters
    ----------
    session : pyspark.sql.SparkSession

    Returns
    -------
    bool

    Raises
    ------
    SpecificationError
        The setting is neither ``auto`` nor ``false``.
    """
    return _setting(session, READ_SETTING, ("auto", "false")) == "auto"


def _session_stopped(frame: Any) -> bool:
    """Whether the Spark session of the DataFrame ``frame`` has stopped (or its JVM is gone)."""
    try:
        jsc = frame.sparkSession.sparkContext._jsc
        return jsc is None or bool(jsc.sc().isStopped())
    except Exception:  # the JVM itself is unreachable
        return True


def _stopped_message(
    what: str = "the pass over the data could not run; nothing of the fit was kept",
) -> str:
    return (
        f"the Spark session of this DataFrame has stopped (or its JVM is gone), so {what}. "
        "Start a session, rebuild the DataFrame and fit again"
    )


#: Spark's error class for a Parquet column stored with different types in different files.
_PARQUET_TYPE_MISMATCH = "PARQUET_COLUMN_DATA_TYPE_MISMATCH"


def _mismatched_types_message() -> str:
    return (
        "Spark cannot read these Parquet files together: a column is stored with different "
        "types in different files (int64 in one, double in another, say), which Spark's "
        "reader does not reconcile. Rewrite the files with one type per column, or fit the "
        "directory with ordstats' own reader (from_formula(formula, 'dir', chunksize=...)) "
        "or with Dask, which read such a column as float64"
    )
