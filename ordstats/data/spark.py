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

Predictions (:meth:`SparkSource.map_partitions`) are a pandas UDF: the result
is a Spark DataFrame, the input's columns followed by the predictions, so that
scoring stays in the cluster.

pyspark is imported only here, and only when a Spark DataFrame is used.
"""

from __future__ import annotations

import os
import pickle
import shutil
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import pandas as pd

from ordstats.core.threads import numeric_threads
from ordstats.data.chunks import ColumnPlan, LevelScan, _response_prototype
from ordstats.data.parts import add_parts
from ordstats.design.core import NO_ROWS
from ordstats.design.response import encode_response, format_level
from ordstats.errors import (
    DataError,
    MissingDataWarning,
    OrdstatsError,
    PredictionError,
    ResponseError,
)

__all__ = ["SparkSource", "is_spark_frame", "java_runtime", "local_session"]

#: The session setting of the rows per Arrow batch sent to Python.
_BATCH_ROWS = "spark.sql.execution.arrow.maxRecordsPerBatch"
#: Rows of a sample that fixes column types (and the type of predictions).
_SAMPLE_ROWS = 1000
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


def _combine(a: Any, b: Any) -> Any:
    """Add two partial results; the first failure wins, None adds nothing."""
    if isinstance(a, _Failure):
        return a
    if isinstance(b, _Failure):
        return b
    return add_parts(a, b)


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


def _partition_sum(
    batches: Iterator[pd.DataFrame], func: Callable[..., Any], args: tuple[Any, ...], chunksize: int
) -> Any:
    """``func(chunk, *args)`` added over one partition's chunks (a :class:`_Failure` on error)."""
    from pyspark import TaskContext

    total = None
    try:
        # one BLAS thread per task: Spark already runs one task per core
        with numeric_threads():
            for chunk in _chunks(batches, chunksize):
                total = add_parts(total, func(chunk, *args))
    except OrdstatsError as exc:
        context = TaskContext.get()
        return _Failure(exc, context.partitionId() if context is not None else -1)
    return total


class SparkSource:
    """A Spark DataFrame as a chunked source: each partition's rows, in chunks.

    Parameters
    ----------
    frame : pyspark.sql.DataFrame
        A DataFrame of a classic Spark session (Spark Connect sessions are not
        supported).  Cache it first (``frame.cache()``) if it is expensive to
        compute: every pass of the fit reads all partitions.
    chunksize : int
        Rows per chunk within a partition: Spark's Arrow batches (10,000 rows by
        default) are joined into chunks of about this many rows.

    Raises
    ------
    DataError
        pyspark cannot be imported, or ``frame`` belongs to a Spark Connect session.
    """

    def __init__(self, frame: Any, chunksize: int) -> None:
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
        self.columns = [str(c) for c in frame.columns]

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

        Raises
        ------
        DataError
            The data have no rows, a chunk cannot be used (the message of
            ``func``'s error, naming the partition), or the Spark session
            stopped.
        """
        chunksize = self.chunksize

        def partial_sums(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
            part = _partition_sum(batches, func, args, chunksize)
            yield pd.DataFrame({"part": [pickle.dumps(part, protocol=pickle.HIGHEST_PROTOCOL)]})

        def run() -> Any:
            parts = self._select(columns).mapInPandas(partial_sums, "part binary")
            with self._arrow_batches():
                return parts.rdd.map(lambda row: pickle.loads(row[0])).treeAggregate(
                    None, _combine, _combine
                )

        total = self._run(run)
        if isinstance(total, _Failure):
            raise type(total.error)(f"{total.error} (in Spark partition {total.partition})")
        if total is None:
            raise DataError(NO_ROWS)
        return total

    @contextmanager
    def _arrow_batches(self) -> Iterator[None]:
        """Arrow batches of at least ``chunksize`` rows during a pass; the session's after.

        Spark sends a partition's rows to Python in batches of
        ``spark.sql.execution.arrow.maxRecordsPerBatch`` rows (10,000 by
        default), each converted to pandas on its own: at ``chunksize`` a
        chunk is one batch, which saves that conversion's per-batch cost and
        the joining of batches into chunks (about a third of the Python
        workers' time of a pass on 10^6 rows x 20).
        """
        conf = self.frame.sparkSession.conf
        before = conf.get(_BATCH_ROWS)
        try:
            rows = int(before or 0)
        except ValueError:
            rows = 0
        if rows <= 0 or rows >= self.chunksize:  # no limit, or batches as large already
            yield
            return
        conf.set(_BATCH_ROWS, str(self.chunksize))
        try:
            yield
        finally:
            conf.set(_BATCH_ROWS, before)

    def _run(self, job: Callable[[], Any]) -> Any:
        """Run a Spark job; a stopped session becomes a clear :class:`DataError`."""
        if self._stopped():
            raise DataError(_stopped_message())
        try:
            return job()
        except Exception as exc:
            if isinstance(exc, OrdstatsError) or not self._stopped():
                raise
            raise DataError(_stopped_message()) from exc

    def _stopped(self) -> bool:
        """Whether the frame's Spark session has stopped (or its JVM is gone)."""
        try:
            context = self.frame.sparkSession.sparkContext
            jsc = context._jsc
            return jsc is None or bool(jsc.sc().isStopped())
        except Exception:  # the JVM itself is unreachable
            return True

    def first_chunk(self, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """The first rows (up to 1000), converted as every pass converts them (Arrow)."""

        def frames(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
            for batch in batches:
                if len(batch):
                    yield pd.DataFrame({"part": [pickle.dumps(batch)]})

        def run() -> list[Any]:
            sample = self._select(columns).limit(_SAMPLE_ROWS)
            return sample.mapInPandas(frames, "part binary").collect()

        rows = self._run(run)
        if not rows:
            raise DataError(NO_ROWS)
        return pd.concat([pickle.loads(row[0]) for row in rows], ignore_index=True)

    def map_partitions(self, func: Callable[[pd.DataFrame], Any]) -> Any:
        """The frame with ``func``'s predictions as new columns (a pandas UDF; lazy).

        ``func`` maps a pandas DataFrame of rows to a DataFrame or Series of
        predictions with the same index.  Its output type is learned from the
        first rows, on the driver, so that a missing column or an unseen level
        there is reported at once.

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


def _stopped_message() -> str:
    return (
        "the Spark session of this DataFrame has stopped (or its JVM is gone), so the pass "
        "over the data could not run; nothing of the fit was kept. Start a session, rebuild "
        "the DataFrame and fit again"
    )
