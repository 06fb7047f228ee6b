"""Predictions over data too large for memory, chunk by chunk."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

import pandas as pd

from ordstats.data.distributed import DaskSource
from ordstats.data.rows import UsedRows
from ordstats.data.sources import open_source
from ordstats.data.spark import SparkSource
from ordstats.errors import MissingDataWarning, NotFittedError, OrdstatsError, user_stacklevel

__all__ = ["SOURCE_NOT_KEPT", "predict_in_chunks", "refuse_offset_values", "tables_of_fitted_rows"]

Predictor = Callable[[pd.DataFrame], Any]

#: What needs the fitted rows of a pickled chunked fit, which keeps no data source.
SOURCE_NOT_KEPT = (
    "this needs the fitted rows, read from the fit's data source, which a model read in "
    "chunks does not keep when pickled: rebuild the model on its files, or pass the "
    "rows as newdata (a DataFrame) where the method takes it"
)


def predict_in_chunks(
    predict: Predictor,
    source: Any,
    offset: Any = None,
    *,
    warn_missing: bool = True,
    rows: UsedRows | None = None,
) -> Any:
    """Apply ``predict`` to every chunk of ``source`` and stack the results.

    Parameters
    ----------
    predict : callable
        Maps a chunk (a DataFrame) to its predictions (a DataFrame or Series
        with the chunk's index).
    source : str, path, list of paths, pyarrow dataset, DataFrame or dask DataFrame
        Anything :func:`ordstats.data.sources.open_source` reads.
    offset : None
        With data read in chunks the offset must be a column of the data.
    warn_missing : bool
        Warn once about rows whose predictions are NaN.
    rows : UsedRows, optional
        Predict only the rows a fit of ``source`` used (its fitted rows).

    Returns
    -------
    pandas.DataFrame, pandas.Series or dask object
        Rows in file order (numbered from 0, the rows left out by ``rows``
        keeping their numbers) for files, the frame's index for a DataFrame,
        and a lazy Dask or Spark DataFrame for those.
    """
    refuse_offset_values(offset)
    src = _opened(source)
    if rows is not None and isinstance(src, SparkSource):
        src = src.selecting(rows)
    elif rows is not None:
        predict = functools.partial(_predict_selected, predict, rows)
    if hasattr(src, "map_partitions"):
        return src.map_partitions(predict)
    with warnings.catch_warnings():
        # one warning for all chunks instead of one per chunk
        warnings.simplefilter("ignore", MissingDataWarning)
        # files' chunks number their rows in file order, a DataFrame's keep its labels
        parts = [predict(chunk) for _, chunk in src.chunks()]
    out = pd.concat(parts)
    missing = int(pd.DataFrame(out).isna().any(axis=1).sum())
    if missing and warn_missing:
        warnings.warn(
            f"{missing} row(s) of the data have missing or non-finite predictor values; "
            "their predictions are NaN",
            MissingDataWarning,
            stacklevel=user_stacklevel(),
        )
    return out


def refuse_offset_values(offset: Any) -> None:
    """Refuse offset values for rows read in chunks (the offset must be a column)."""
    if offset is not None:
        raise OrdstatsError("with data read in chunks, the offset must be a column of the data")


def _predict_selected(predict: Predictor, rows: UsedRows, chunk: pd.DataFrame) -> Any:
    """``predict`` of the rows of ``chunk`` that ``rows`` selects."""
    return predict(rows.select(chunk))


def tables_of_fitted_rows(table: Predictor, source: Any, rows: UsedRows, what: str) -> pd.DataFrame:
    """``table`` of the fitted rows of each chunk of ``source``, stacked in memory.

    For results whose rows carry an index of several levels (a row and a
    quantile, say), which a lazy Dask DataFrame cannot hold: a Dask fit's
    partitions are computed on its scheduler and their tables gathered.

    Raises
    ------
    OrdstatsError
        For a Spark fit (``what`` names the method): its rows are not gathered
        on the driver.
    """
    src = _opened(source)
    if isinstance(src, SparkSource):
        raise OrdstatsError(
            f"{what} without newdata would gather every fitted row of the Spark DataFrame "
            "on the driver; pass the rows as newdata (a pandas DataFrame, e.g. a sample), or "
            "use predict(which='expected'), which stays in the cluster"
        )
    if isinstance(src, DaskSource):
        import dask

        parts = src.frame.to_delayed()
        tasks = [dask.delayed(_predict_selected)(table, rows, part) for part in parts]
        return pd.concat(dask.compute(*tasks))
    return pd.concat([_predict_selected(table, rows, chunk) for _, chunk in src.chunks()])


def _opened(source: Any) -> Any:
    """``source`` opened for reading in chunks, or a clear error if a pickled fit lost it."""
    if source is None:  # a pickled chunked model keeps no data source
        raise NotFittedError(SOURCE_NOT_KEPT)
    return open_source(source, getattr(source, "chunksize", None))
