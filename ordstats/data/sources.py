"""Data too large for memory, read as a sequence of pandas DataFrame chunks.

A *source* knows how to apply a pure function to each chunk of its rows and sum
the results (``map_reduce``).  :class:`ArrowSource` reads Parquet, CSV or Arrow
IPC files (a path, a directory, a glob, a list of paths or a
:class:`pyarrow.dataset.Dataset`) one record batch at a time; :class:`FrameSource`
splits a DataFrame that is in memory (for testing and for bounding the
temporaries of a fit); :class:`ordstats.data.distributed.DaskSource` maps over the
partitions of a Dask DataFrame on the active Dask scheduler.
"""

from __future__ import annotations

import glob
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ordstats.core.threads import pass_threads, pool_threads
from ordstats.data.distributed import DaskSource
from ordstats.data.parts import sum_in_order
from ordstats.data.spark import SparkSource, is_spark_frame, selected_spark_rows
from ordstats.design.core import NO_ROWS, with_text_column_names
from ordstats.design.subset import RowQuery, SelectedRows
from ordstats.errors import DataError

__all__ = ["ArrowSource", "FrameSource", "is_source", "open_source"]

#: Rows per chunk when the caller does not say.
DEFAULT_CHUNKSIZE = 100_000
_FORMATS = {
    ".parquet": "parquet",
    ".pq": "parquet",
    ".csv": "csv",
    ".feather": "ipc",
    ".arrow": "ipc",
    ".ipc": "ipc",
}


def _is_dask_frame(data: Any) -> bool:
    return type(data).__module__.startswith("dask") and hasattr(data, "to_delayed")


def _is_arrow_dataset(data: Any) -> bool:
    return type(data).__module__.startswith("pyarrow") and hasattr(data, "get_fragments")


def is_source(data: Any) -> bool:
    """Whether ``data`` is read in chunks: paths, a glob, a dataset, a Dask or Spark frame.

    Parameters
    ----------
    data : object

    Returns
    -------
    bool
    """
    if isinstance(data, (ArrowSource, FrameSource, SelectedRows)) or hasattr(data, "map_reduce"):
        return True
    if isinstance(data, (str, os.PathLike)):
        return True
    if (
        isinstance(data, (list, tuple))
        and data
        and all(isinstance(p, (str, os.PathLike)) for p in data)
    ):
        return True
    return _is_arrow_dataset(data) or _is_dask_frame(data) or is_spark_frame(data)


def open_source(data: Any, chunksize: int | None = None) -> Any:
    """Wrap ``data`` as a chunked source.

    Parameters
    ----------
    data : str, path, list of paths, pyarrow dataset, dask, Spark or pandas DataFrame
        Files (Parquet, CSV, Arrow IPC by extension; a directory or glob reads all
        matching files in sorted order), a dataset, a Dask DataFrame (one chunk
        per partition), a :class:`pyspark.sql.DataFrame` (each partition's rows
        in chunks) or a pandas DataFrame split into chunks.
    chunksize : int, optional
        Maximum rows per chunk (default 100,000; ignored for Dask, whose
        partitions are the chunks).

    Returns
    -------
    ArrowSource, FrameSource, DaskSource or SparkSource

    Raises
    ------
    DataError
        No files match, a file cannot be read, or ``chunksize`` is not positive.
    """
    if chunksize is not None and (
        isinstance(chunksize, bool) or not isinstance(chunksize, (int, np.integer)) or chunksize < 1
    ):
        raise DataError(f"chunksize must be a positive number of rows; got {chunksize!r}")
    size = int(chunksize or DEFAULT_CHUNKSIZE)
    if hasattr(data, "map_reduce"):
        return data
    if isinstance(data, SelectedRows):  # subset= of files or of a Spark DataFrame
        if is_spark_frame(data.data):
            return SparkSource(selected_spark_rows(data.data, data.rows), size, subset=data)
        return ArrowSource(data.data, size, rows=data.rows)
    if _is_dask_frame(data):
        return DaskSource(data)
    if is_spark_frame(data):
        return SparkSource(data, size)
    if isinstance(data, pd.DataFrame):
        return FrameSource(data, size)
    return ArrowSource(data, size)


class _ChunkIterator:
    """Sources that yield their chunks one after another in this process."""

    #: ``map_reduce`` runs its function here, on the chunks in order (so a fit
    #: may keep their arrays on local disk: :mod:`ordstats.data.spill`)
    reads_locally = True

    def chunks(self, columns: Sequence[str] | None = None) -> Iterator[tuple[str, pd.DataFrame]]:
        """Yield ``(label, chunk)`` pairs."""
        raise NotImplementedError  # pragma: no cover

    def map_reduce(
        self, func: Callable[..., Any], *args: Any, columns: Sequence[str] | None = None
    ) -> Any:
        """``func(chunk_1, *args) + func(chunk_2, *args) + ...``, added in the chunks' order.

        The chunks are read in this thread and evaluated on a pool of threads
        (:func:`~ordstats.data.parts.sum_in_order`: the sum of one thread, bit
        for bit), so ``func`` must be thread-safe; a step that must run in the
        chunks' order returns an :class:`~ordstats.data.parts.InOrder`.
        """
        threads = pass_threads(getattr(self, "chunksize", None))
        return _sum_chunks(self.chunks(columns), func, args, threads)

    def first_chunk(self, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """Return the first chunk (to learn column types)."""
        return _first(self.chunks(columns))


class FrameSource(_ChunkIterator):
    """A pandas DataFrame in memory, read in chunks of ``chunksize`` rows.

    Parameters
    ----------
    frame : pandas.DataFrame
    chunksize : int
    """

    def __init__(self, frame: pd.DataFrame, chunksize: int = DEFAULT_CHUNKSIZE) -> None:
        self.frame = with_text_column_names(frame)
        self.chunksize = int(chunksize)
        self.columns = [str(c) for c in frame.columns]

    def __repr__(self) -> str:
        return f"FrameSource({len(self.frame)} rows, chunksize={self.chunksize})"

    def chunks(self, columns: Sequence[str] | None = None) -> Iterator[tuple[str, pd.DataFrame]]:
        """Yield ``(label, chunk)`` pairs."""
        frame = self.frame if columns is None else self.frame[list(columns)]
        for start in range(0, max(len(frame), 1), self.chunksize):
            yield (
                f"rows {start}-{start + self.chunksize - 1}",
                frame.iloc[start : start + self.chunksize],
            )


def _first(chunks: Iterator[tuple[str, pd.DataFrame]]) -> pd.DataFrame:
    """The first chunk with rows (a file without rows may not show the column types)."""
    first = None
    for _, chunk in chunks:
        if len(chunk):
            return chunk
        first = chunk if first is None else first
    if first is None:
        raise DataError(NO_ROWS)
    return first


def _sum_chunks(
    chunks: Iterator[tuple[str, pd.DataFrame]],
    func: Callable[..., Any],
    args: tuple[Any, ...],
    threads: int | None = None,
) -> Any:
    def evaluate(labelled: tuple[str, pd.DataFrame]) -> Any:
        label, chunk = labelled
        try:
            return func(chunk, *args)
        except DataError as exc:
            raise DataError(f"{exc} (in {label})") from exc

    # a file without rows is valid data that adds nothing
    labelled = ((label, chunk) for label, chunk in chunks if len(chunk))
    total = sum_in_order(evaluate, labelled, threads)
    if total is None:
        raise DataError(NO_ROWS)
    return total


def _expand_paths(data: Any) -> list[str]:
    items = [data] if isinstance(data, (str, os.PathLike)) else list(data)
    paths: list[str] = []
    for item in items:
        text = os.fspath(item)
        if any(ch in text for ch in "*?["):
            found = sorted(glob.glob(text, recursive=True))
            if not found:
                raise DataError(f"no files match {text!r}")
            paths.extend(found)
        elif os.path.isdir(text):
            found = sorted(
                str(p) for p in Path(text).rglob("*") if p.is_file() and p.suffix in _FORMATS
            )
            if not found:
                raise DataError(f"the directory {text!r} holds no Parquet, CSV or Arrow files")
            paths.extend(found)
        elif os.path.exists(text):
            paths.append(text)
        else:
            raise DataError(f"no such file: {text!r}")
    return paths


def _format_of(paths: list[str]) -> str:
    formats = {_FORMATS.get(Path(p).suffix.lower(), "parquet") for p in paths}
    if len(formats) > 1:
        raise DataError(
            f"the files mix formats ({', '.join(sorted(formats))}); read one format at a time"
        )
    return formats.pop()


def _file_format(name: str) -> Any:
    """The pyarrow file format ``name``; CSV text fields read as pandas reads them.

    pyarrow reads an empty field (or ``NA``) of a text column as the text ``""``
    (``"NA"``), which would be a level of a factor; pandas' ``read_csv``, the
    command line and the in-memory fit of the same file read it as missing.
    """
    if name != "csv":
        return name
    import pyarrow.csv as pa_csv
    import pyarrow.dataset as ds

    return ds.CsvFileFormat(convert_options=pa_csv.ConvertOptions(strings_can_be_null=True))


class _ArrowPool:
    """pyarrow's CPU pool capped while ordstats reads; the caller's size restored after.

    ``pyarrow.set_cpu_count`` is process-wide: the first of nested or
    concurrent reads saves the caller's count, the last one out restores it.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.depth = 0
        self.saved: int | None = None

    @contextmanager
    def bounded(self) -> Iterator[bool]:
        """Cap the pool at :func:`~ordstats.core.threads.pool_threads`; yield ``use_threads``."""
        import pyarrow as pa

        allowed = pool_threads()
        with self.lock:
            if not self.depth and allowed < pa.cpu_count():
                self.saved = pa.cpu_count()
                pa.set_cpu_count(allowed)
            self.depth += 1
        try:
            yield allowed > 1
        finally:
            with self.lock:
                self.depth -= 1
                if not self.depth and self.saved is not None:
                    pa.set_cpu_count(self.saved)
                    self.saved = None


_ARROW_POOL = _ArrowPool()


_EVERY_FILE = (
    "every file must have the model's columns (store missing values as nulls): add the "
    "column to that file, or leave the file out of the list or glob"
)


class ArrowSource(_ChunkIterator):
    """Files or a :class:`pyarrow.dataset.Dataset`, read one record batch at a time.

    Only the columns a pass needs are read, and at most ``chunksize`` rows (plus
    a small read-ahead) are in memory at once.  pyarrow decodes them on at most
    the threads ordstats may use (``set_options(threads=...)``, an estimator's
    ``n_jobs``; one while several fits run), its pool capped for the pass
    and the caller's ``pyarrow.cpu_count()`` restored after it.

    Parameters
    ----------
    data : str, path, list of paths or pyarrow.dataset.Dataset
    chunksize : int
    rows : RowQuery, optional
        R's ``subset=``: each chunk is the rows of a batch that the query
        selects (the columns it reads are read too, and dropped after it).

    Raises
    ------
    DataError
        No files, unreadable or empty files, or files whose column types disagree.
    """

    def __init__(
        self, data: Any, chunksize: int = DEFAULT_CHUNKSIZE, rows: RowQuery | None = None
    ) -> None:
        try:
            import pyarrow.dataset as ds
        except ImportError as exc:  # pragma: no cover - pyarrow is in the test extra
            raise DataError(
                "reading files in chunks needs pyarrow: pip install 'ordstats[scale]'"
            ) from exc

        self.chunksize = int(chunksize)
        if _is_arrow_dataset(data):
            self.dataset = data
            self.description = "a pyarrow dataset"
        else:
            paths = _expand_paths(data)
            for path in paths:
                if os.path.getsize(path) == 0:
                    raise DataError(
                        f"the file {path!r} is empty (0 bytes); remove it or rewrite it"
                    )
            try:
                fmt = _file_format(_format_of(paths))
                self.dataset = _typed_dataset(ds.dataset(paths, format=fmt))
            except (OSError, ValueError) as exc:
                raise DataError(f"cannot read {paths[0]!r}: {exc}") from exc
            self.description = paths[0] if len(paths) == 1 else f"{len(paths)} files"
        self.columns = list(self.dataset.schema.names)
        self.rows = rows

    def __repr__(self) -> str:
        selected = "" if self.rows is None else f", subset={self.rows.query!r}"
        return f"ArrowSource({self.description}, chunksize={self.chunksize}{selected})"

    @property
    def reads_text(self) -> bool:
        """Whether the files are CSV, whose integers beyond ``int64`` pyarrow reads as floats."""
        return type(self.dataset.format).__name__ == "CsvFileFormat"

    def check_absent_columns(self, names: Sequence[str]) -> None:
        """Raise a :class:`DataError` if a file other than the first has one of ``names``.

        The files' columns are the first file's; a formula variable missing
        from it but present in a later file would otherwise read as "not a
        column of the data".
        """
        if not names:
            return
        fragments = list(self.dataset.get_fragments())
        for fragment in fragments[1:]:
            try:
                found = [n for n in names if n in fragment.physical_schema.names]
            except (OSError, ValueError):
                continue  # check_columns reports unreadable files
            if found:
                first = getattr(fragments[0], "path", "the first file")
                raise DataError(
                    f"the column(s) {', '.join(map(repr, found))} are in "
                    f"{getattr(fragment, 'path', 'a later file')!r} but not in the first file "
                    f"{first!r}; {_EVERY_FILE}"
                )

    def check_columns(self, columns: Sequence[str]) -> None:
        """Raise a :class:`DataError` if a file lacks a column or stores it differently."""
        import pyarrow.types as pat

        expected = self.dataset.schema
        for fragment in self.dataset.get_fragments():
            name = getattr(fragment, "path", "a fragment")
            try:
                schema = fragment.physical_schema
            except (OSError, ValueError) as exc:
                raise DataError(f"cannot read {name!r}: {exc}") from exc
            for col in columns:
                if col not in expected.names:
                    continue
                if schema.get_field_index(col) < 0:
                    raise DataError(
                        f"the file {name!r} has no column {col!r}, which the model uses and the "
                        f"first file has; {_EVERY_FILE}"
                    )
                want, got = expected.field(col).type, schema.field(col).type
                numeric = all(pat.is_integer(t) or pat.is_floating(t) for t in (want, got))
                empty = pat.is_null(got)  # a CSV file with no value in the column
                if (
                    want != got
                    and not numeric
                    and not empty
                    and not _same_values(want, got)
                    and col not in _all_null_columns(fragment)  # a Parquet file of NaN only
                ):
                    raise DataError(
                        f"column {col!r} is {got} in {name!r} but {want} in the first file; "
                        "every file must store a column with the same type"
                    )

    def map_reduce(
        self, func: Callable[..., Any], *args: Any, columns: Sequence[str] | None = None
    ) -> Any:
        """``func(chunk_1, *args) + ...`` in the chunks' order, pyarrow's pool capped.

        The chunks are evaluated on a pool of threads (see
        :meth:`FrameSource.map_reduce`); the cap lasts until the last one is
        evaluated, not only while the files are read.
        """
        with _ARROW_POOL.bounded():
            return super().map_reduce(func, *args, columns=columns)

    def first_chunk(self, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """Return the first chunk with rows (to learn column types), read a row group at a time.

        Reading a whole file's batches, pyarrow decodes ahead of the first.
        """
        return _first(self.chunks(columns, by_row_group=True))

    def chunks(
        self, columns: Sequence[str] | None = None, *, by_row_group: bool = False
    ) -> Iterator[tuple[str, pd.DataFrame]]:
        """Yield ``(label, chunk)`` pairs, file by file.

        A chunk's index numbers its rows in file order from 0 (the files' rows one
        after another), also when ``subset=`` leaves rows out.  ``by_row_group``:
        Parquet files row group by row group.  A chunk's numeric columns without
        missing values are views of the record batch's memory (``split_blocks``:
        no copy into pandas' blocks).
        """
        cols = list(columns) if columns is not None else None
        extra = self._query_columns(cols)
        read = cols if not extra or cols is None else [*cols, *extra]
        # decoding and conversion on at most the threads ordstats may use (none for one)
        start = 0
        with _ARROW_POOL.bounded() as use_threads:
            for fragment in self.dataset.get_fragments():
                name = getattr(fragment, "path", "a fragment")
                pieces = _row_groups(fragment) if by_row_group else [fragment]
                try:
                    for piece in pieces:
                        batches = piece.to_batches(
                            schema=self.dataset.schema,
                            columns=read,
                            batch_size=self.chunksize,
                            batch_readahead=1,
                            fragment_readahead=1,
                            use_threads=use_threads,
                        )
                        for k, batch in enumerate(batches):
                            frame = batch.to_pandas(use_threads=use_threads, split_blocks=True)
                            # rows numbered in file order (across files), before a subset
                            frame.index = pd.RangeIndex(start, start + len(frame))
                            start += len(frame)
                            if self.rows is not None:
                                frame = self.rows.select(frame)
                                frame = frame[cols] if extra else frame
                            yield f"{name}, chunk {k}", frame
                except (OSError, ValueError, TypeError) as exc:
                    if isinstance(exc, DataError):
                        raise
                    raise DataError(f"cannot read {name!r}: {exc}") from exc

    def _query_columns(self, columns: list[str] | None) -> list[str]:
        """The columns the ``subset=`` query reads that ``columns`` (None: all) leave out."""
        if self.rows is None or columns is None:
            return []
        return [c for c in self.rows.columns(self.columns) if c not in columns]


def _row_groups(fragment: Any) -> list[Any]:
    """A Parquet file's row groups as fragments (other files: the file itself)."""
    split = getattr(fragment, "split_by_row_group", None)
    if split is None:
        return [fragment]
    try:
        return list(split()) or [fragment]
    except (OSError, ValueError) as exc:
        name = getattr(fragment, "path", "a fragment")
        raise DataError(f"cannot read {name!r}: {exc}") from exc


def _typed_dataset(dataset: Any) -> Any:
    """``dataset`` with column types that every file can be read as.

    pyarrow takes the column types from the first file.  A CSV file with only
    its header (valid data without rows) types every column ``null``, which
    the other files cannot be read as: such a column gets the type of the
    first file that has values in it.  A column of numbers stored as integers
    in some files and as floating point in others (or as integers of several
    widths) is read as ``float64`` (``int64``), as pandas concatenates them.
    """
    import pyarrow as pa
    import pyarrow.dataset as ds
    import pyarrow.types as pat

    schema = dataset.schema
    seen: dict[str, list[Any]] = {field.name: [] for field in schema}
    declared = {field.name: field.type for field in schema}
    for k, fragment in enumerate(dataset.get_fragments()):
        physical, empty = fragment.physical_schema, _all_null_columns(fragment)
        for name, types in seen.items():
            index = physical.get_field_index(name)
            if name in empty and k == 0:  # the first file's type says nothing
                declared[name] = pa.null()
            elif index >= 0 and not pat.is_null(physical.field(index).type) and name not in empty:
                types.append(physical.field(index).type)
    found = {field.name: _common_type(declared[field.name], seen[field.name]) for field in schema}
    # missing in every file: read as the first file stores it (the fit then says the
    # column has no value; a null type cannot be read from a file's doubles)
    found = {
        name: schema.field(name).type if pat.is_null(kind) else kind for name, kind in found.items()
    }
    typed = [field.with_type(found[field.name]) for field in schema]
    if all(field.type == found[field.name] for field in schema):
        return dataset
    return ds.dataset(dataset.files, format=dataset.format, schema=pa.schema(typed))


def _all_null_columns(fragment: Any) -> set[str]:
    """Columns of a Parquet file whose every value is missing (by its statistics).

    pandas writes a column of missing values as ``double`` whatever the other
    files hold (text, say); such a column may be read as any type.
    """
    meta = getattr(fragment, "metadata", None)
    if meta is None or not meta.num_rows:
        return set()
    nulls: dict[str, int] = {}
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        for j in range(group.num_columns):
            column = group.column(j)
            stats = column.statistics
            count = stats.null_count if stats is not None and stats.has_null_count else -1
            name = column.path_in_schema
            nulls[name] = -1 if count < 0 or nulls.get(name, 0) < 0 else nulls.get(name, 0) + count
    return {name for name, count in nulls.items() if count == meta.num_rows}


def _common_type(declared: Any, types: list[Any]) -> Any:
    """The type a column is read as, given its ``declared`` and its types in the files."""
    import pyarrow as pa
    import pyarrow.types as pat

    if not types:
        return declared
    if pat.is_null(declared):
        declared = types[0]
    numbers = [t for t in [declared, *types] if pat.is_integer(t) or pat.is_floating(t)]
    if len(numbers) < len(types) + 1 or len(set(numbers)) == 1:
        return declared  # other mismatches are reported by check_columns
    if any(pat.is_floating(t) for t in numbers):
        return pa.float64()
    return pa.int64()


def _same_values(want: Any, got: Any) -> bool:
    """Dictionary-encoded and plain columns of the same value type are compatible."""
    import pyarrow.types as pat

    def base(t: Any) -> Any:
        t = t.value_type if pat.is_dictionary(t) else t
        return "string" if pat.is_string(t) or pat.is_large_string(t) else t

    return bool(base(want) == base(got))
