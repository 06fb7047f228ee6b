"""Spark passes over Parquet files read by pyarrow in the Python workers, as Dask reads them.

A pass through ``mapInPandas`` pays the JVM's reading of the Parquet files,
its conversion of every value to Spark's rows and then to Arrow batches
(about 3 s of the JVM's CPU per 10^6 rows x 21 on the development machine,
more than a whole chunked pass of ordstats).  When a Spark DataFrame is no
more than a scan of Parquet files (possibly with a choice of plain columns),
its rows are the files' rows: :func:`file_scan` finds the files, and a pass
runs one Spark task per group of row groups (``parallelize`` +
``mapPartitionsWithIndex``) that reads them with pyarrow, as the chunked
source reads files, skipping the JVM's conversion.

Only such plans qualify: a relation of Spark's Parquet source without
partition columns (Hive-style directories) or buckets, under a projection of
plain columns, whose columns are numbers, booleans or text, and whose files
are on a local file system (``file:`` or plain paths, which pyarrow opens
where the task runs; files on other file systems, such as ``hdfs:`` or
``s3a:``, are read by Spark's reader).  Every file must hold every column
read, under the same name, as Spark's type or one Spark widens exactly
(integers to a wider integer or to floating point, ``float`` to ``double``;
dictionary-encoded text to text).  Anything else (a filter, a join, a
computed column, a file whose footer cannot be read) is read by Spark, as
before: the plan is checked on the driver, from the files' footers, before a
pass.

The chunks are converted as Spark's ``mapInPandas`` converts them (integers
with missing values as pandas' nullable integers), so a pass adds the same
values; chunks may end at other rows than Spark's batches, so sums agree to
rounding.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlparse

import pandas as pd

from ordstats.errors import DataError, OrdstatsError

__all__ = ["FileScan", "file_scan", "read_group"]

#: Spark's simple type names read by pyarrow, and their Arrow types (names of pyarrow's factories).
_ARROW_TYPES = {
    "byte": "int8",
    "short": "int16",
    "integer": "int32",
    "long": "int64",
    "float": "float32",
    "double": "float64",
    "boolean": "bool_",
    "string": "string",
}


@dataclass(frozen=True)
class FileScan:
    """The Parquet row groups a Spark DataFrame reads, split into tasks (picklable).

    Attributes
    ----------
    columns : tuple of str
        The DataFrame's columns, in its order.
    types : tuple of str
        Their Spark types (simple names, e.g. ``"double"``).
    groups : tuple of tuple of (str, int)
        Per task, the (file path, row group) pairs it reads, in order.
    """

    columns: tuple[str, ...]
    types: tuple[str, ...]
    groups: tuple[tuple[tuple[str, int], ...], ...]

    @property
    def tasks(self) -> int:
        """The number of tasks of a pass (at least one)."""
        return max(len(self.groups), 1)


def _local_path(uri: str) -> str | None:
    """The local path of a file Spark lists (``file:`` URIs and plain paths), else None."""
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        return unquote(parsed.path)
    if parsed.scheme == "" and os.path.isabs(uri):
        return uri
    return None


def _class_name(java_object: Any) -> str:
    return str(java_object.getClass().getSimpleName())


def _is_parquet_relation(plan: Any) -> bool:
    """Whether a logical plan node is a relation over Parquet files only."""
    if _class_name(plan) != "LogicalRelation":
        return False
    relation = plan.relation()
    if _class_name(relation) != "HadoopFsRelation":
        return False
    if _class_name(relation.fileFormat()) != "ParquetFileFormat":
        return False
    return bool(relation.partitionSchema().isEmpty()) and bool(relation.bucketSpec().isEmpty())


def _is_plain_scan(frame: Any) -> bool:
    """Whether ``frame``'s optimized plan is a Parquet relation, possibly under a projection.

    The projection must name plain columns of the relation (no renaming, no
    computed column).
    """
    plan = frame._jdf.queryExecution().optimizedPlan()
    if _class_name(plan) == "Project":
        projected = plan.projectList()
        for k in range(projected.size()):
            if _class_name(projected.apply(k)) != "AttributeReference":
                return False
        plan = plan.child()
    return _is_parquet_relation(plan)


def _widens_exactly(stored: Any, wanted: Any) -> bool:
    """Whether a file's Arrow type converts to ``wanted`` with no value changed."""
    import pyarrow.types as pat

    if stored == wanted:
        return True
    if pat.is_dictionary(stored):
        return pat.is_string(wanted) and (
            pat.is_string(stored.value_type) or pat.is_large_string(stored.value_type)
        )
    if pat.is_large_string(stored):
        return pat.is_string(wanted)
    if pat.is_integer(stored):
        if pat.is_floating(wanted):  # every integer of the type is a number of ``wanted``
            return stored.bit_width <= (32 if pat.is_float64(wanted) else 16)
        if pat.is_integer(wanted):  # a wider signed integer holds every value
            return bool(pat.is_signed_integer(wanted)) and stored.bit_width < wanted.bit_width
        return False
    return bool(pat.is_float32(stored) and pat.is_float64(wanted))


def _arrow_type(spark_type: str) -> Any:
    import pyarrow as pa

    return getattr(pa, _ARROW_TYPES[spark_type])()


def _row_groups(
    paths: Sequence[str], columns: Sequence[str], types: Sequence[str]
) -> list[Any] | None:
    """Every (path, row group, rows) of ``paths``; None if a footer does not fit ``columns``."""
    import pyarrow.parquet as pq

    found: list[Any] = []
    for path in paths:
        try:
            meta = pq.read_metadata(path)
            schema = meta.schema.to_arrow_schema()
        except (OSError, ValueError):
            return None
        if not meta.num_rows:  # valid data that adds nothing, whatever its column types
            continue
        for name, kind in zip(columns, types, strict=True):
            index = schema.get_field_index(name)
            if index < 0 or not _widens_exactly(schema.field(index).type, _arrow_type(kind)):
                return None
        found += [(path, g, meta.row_group(g).num_rows) for g in range(meta.num_row_groups)]
    return found


def _split(row_groups: list[Any], tasks: int) -> tuple[tuple[tuple[str, int], ...], ...]:
    """Consecutive row groups split into at most ``tasks`` groups of about equal rows."""
    total = sum(rows for _, _, rows in row_groups)
    tasks = max(1, min(tasks, len(row_groups)))
    groups: list[list[tuple[str, int]]] = [[] for _ in range(tasks)]
    done = 0
    for path, index, rows in row_groups:
        # the task whose share of the rows holds this row group's middle row
        middle = done + rows / 2
        task = min(int(middle * tasks / total), tasks - 1) if total else 0
        groups[task].append((path, index))
        done += rows
    return tuple(tuple(g) for g in groups if g)


def file_scan(frame: Any, tasks: int) -> FileScan | None:
    """The Parquet row groups ``frame`` reads, split into ``tasks``, if pyarrow may read them.

    Parameters
    ----------
    frame : pyspark.sql.DataFrame
        The DataFrame of a pass (its columns already chosen).
    tasks : int
        The most tasks of a pass.

    Returns
    -------
    FileScan or None
        None when the plan is not a plain Parquet scan of local files whose
        footers fit the DataFrame's columns (see the module docstring): the
        pass then reads the DataFrame through Spark.
    """
    try:
        if not _is_plain_scan(frame):
            return None
        uris = list(frame.inputFiles())
    except Exception:  # a plan py4j cannot inspect: Spark's reader reads it
        return None
    paths = [_local_path(u) for u in sorted(uris)]  # in the order of their names, every time
    if not paths or any(p is None for p in paths):
        return None
    fields = frame.schema.fields
    types = [f.dataType.typeName() for f in fields]
    if any(t not in _ARROW_TYPES for t in types):
        return None
    columns = [str(f.name) for f in fields]
    row_groups = _row_groups([p for p in paths if p is not None], columns, types)
    if row_groups is None:
        return None
    return FileScan(tuple(columns), tuple(types), _split(row_groups, tasks))


def _as_spark_converts(table: Any, scan: FileScan) -> pd.DataFrame:
    """A table of the scan's columns as ``mapInPandas`` gives it to Python.

    Spark converts integers with missing values to pandas' nullable integers,
    where pyarrow gives floating point.
    """
    import pyarrow as pa
    import pyarrow.types as pat

    wanted = pa.schema(
        [pa.field(n, _arrow_type(t)) for n, t in zip(scan.columns, scan.types, strict=True)]
    )
    table = table.select(list(scan.columns)).cast(wanted)
    frame: pd.DataFrame = table.to_pandas(split_blocks=True, use_threads=False)
    for field, column in zip(wanted, table.columns, strict=True):
        if pat.is_integer(field.type) and column.null_count:
            frame[field.name] = column.to_pandas(types_mapper=pd.ArrowDtype).astype(
                f"Int{field.type.bit_width}"
            )
    return frame


def read_group(scan: FileScan, task: int, chunksize: int) -> Iterator[pd.DataFrame]:
    """The rows of task ``task``'s row groups as pandas frames of at most ``chunksize`` rows.

    Parameters
    ----------
    scan : FileScan
    task : int
    chunksize : int

    Yields
    ------
    pandas.DataFrame
    """
    import pyarrow.parquet as pq

    if task >= len(scan.groups):
        return
    by_file: dict[str, list[int]] = {}
    for path, index in scan.groups[task]:
        by_file.setdefault(path, []).append(index)
    for path, indices in by_file.items():
        try:
            reader = pq.ParquetFile(path)
            batches = reader.iter_batches(
                batch_size=chunksize,
                row_groups=indices,
                columns=list(scan.columns),
                use_threads=False,
            )
            for batch in batches:
                yield _as_spark_converts(pa_table(batch), scan)
        except (OSError, ValueError, TypeError) as exc:  # pyarrow's errors are among these
            if isinstance(exc, OrdstatsError):
                raise
            raise DataError(f"cannot read {path!r}: {exc}") from exc


def first_rows(scan: FileScan, rows: int) -> pd.DataFrame:
    """The first ``rows`` rows of the scan (or fewer), converted as a pass converts them."""
    for task in range(len(scan.groups)):
        for frame in read_group(scan, task, rows):
            if len(frame):
                return frame.iloc[:rows]
    return pd.DataFrame({c: [] for c in scan.columns})


def pa_table(batch: Any) -> Any:
    """A record batch as a one-batch table."""
    import pyarrow as pa

    return pa.Table.from_batches([batch])
