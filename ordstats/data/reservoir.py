"""A random subsample of data read in chunks, kept during the first pass (the warm start's).

Each complete row gets a pseudo-random key, the hash of its values under a
fixed seed (:func:`pandas.util.hash_pandas_object`), and the sample keeps the
rows with the smallest keys: the ``capacity`` smallest overall and the
``per_level`` smallest of every response value.  Keeping the smallest keys is
reservoir sampling that merges: the smallest keys of two parts' samples are
the smallest keys of the union, so chunks, files and Dask partitions can be
sampled independently and added in any order, and the sample is the same
however the rows are split into chunks.  Rows with the same values have the
same key: a sample of data with repeated rows keeps all copies of a row or
none (each row is still kept with the same probability).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ordstats._typing import IntArray
from ordstats.data.chunks import (
    ChunkSpec,
    ChunkSummary,
    ColumnPlan,
    LevelScan,
    PassTotals,
    _complete_rows,
    arrays_summary,
    arrays_totals,
    chunk_arrays,
    scan_levels,
    with_response_stand_in,
)
from ordstats.data.parts import add_parts

__all__ = ["Reservoir", "SampledScan", "SummaryWithTotals", "scan_and_sample", "summarize_at"]

#: 16 characters: the hash key of the row keys (the sample's fixed seed).
_HASH_KEY = "ordstats-sample0"


@dataclass
class Reservoir:
    """The complete rows with the smallest keys (overall and per response value).

    Attributes
    ----------
    rows : pandas.DataFrame
        The kept rows (the columns a pass reads), in increasing key order.
    keys : ndarray of uint64
        Their keys.
    response : str
        The response column (the strata).
    capacity : int
        Rows kept with the smallest keys overall.
    per_level : int
        Rows kept with the smallest keys of each response value.
    """

    rows: pd.DataFrame
    keys: np.ndarray
    response: str
    capacity: int
    per_level: int

    def __add__(self, other: Reservoir | None) -> Reservoir:
        if other is None:
            return self
        rows = pd.concat([self.rows, other.rows], ignore_index=True)
        keys = np.concatenate([self.keys, other.keys])
        return _smallest(rows, keys, self.response, self.capacity, self.per_level)

    __radd__ = __add__

    def __len__(self) -> int:
        return len(self.rows)

    def draw(self, size: int) -> tuple[pd.DataFrame, bool]:
        """The ``size`` rows of smallest key, each response value topped up to ``per_level``.

        Returns
        -------
        rows : pandas.DataFrame
        topped_up : bool
            Whether some response value had fewer than ``per_level`` rows among
            the ``size`` and got more (the sample is then not a plain random one).
        """
        first = np.arange(len(self.rows)) < size
        rank = _rank_within_level(self.rows[self.response])
        codes = pd.factorize(self.rows[self.response])[0]
        counts = np.bincount(codes[first], minlength=int(codes.max(initial=-1)) + 1)
        short = counts[codes] < self.per_level
        chosen = first | (short & (rank < self.per_level))
        return self.rows[chosen].reset_index(drop=True), bool(np.any(chosen & ~first))


def _rank_within_level(values: pd.Series) -> IntArray:
    """Position of each row among the rows of its response value (rows in key order)."""
    codes = pd.factorize(values)[0]
    return np.asarray(pd.Series(codes).groupby(codes).cumcount().to_numpy(), dtype=np.intp)


def _smallest(
    rows: pd.DataFrame, keys: np.ndarray, response: str, capacity: int, per_level: int
) -> Reservoir:
    order = np.argsort(keys, kind="stable")
    rows, keys = rows.iloc[order].reset_index(drop=True), keys[order]
    keep = (np.arange(len(rows)) < capacity) | (_rank_within_level(rows[response]) < per_level)
    return Reservoir(rows[keep].reset_index(drop=True), keys[keep], response, capacity, per_level)


def sample_chunk(frame: pd.DataFrame, plan: ColumnPlan, capacity: int, per_level: int) -> Reservoir:
    """The reservoir of one chunk's complete rows.

    Parameters
    ----------
    frame : pandas.DataFrame
    plan : ColumnPlan
    capacity, per_level : int
        See :class:`Reservoir`.

    Returns
    -------
    Reservoir
    """
    columns = plan.read_columns if plan.censored is None else [plan.response, *plan.read_columns]
    clean = frame.loc[_complete_rows(frame, plan), columns]
    keys = pd.util.hash_pandas_object(clean, index=False, hash_key=_HASH_KEY).to_numpy()
    return _smallest(clean, keys, plan.response, capacity, per_level)


@dataclass
class SampledScan:
    """The level scan of the first pass, the rows it sampled and the columns' kinds.

    Attributes
    ----------
    scan : LevelScan
    sample : Reservoir
    text : dict
        Column (not a planned factor) -> values, for the columns that hold
        text in some chunk's complete rows: factors that the first chunk did
        not show (a Dask partition whose text column is all missing has
        numbers' type).
    numbers : set of str
        Columns that hold numbers in some chunk's complete rows.
    """

    scan: LevelScan
    sample: Reservoir
    text: dict[str, dict[Any, None]] = field(default_factory=dict)
    numbers: set[str] = field(default_factory=set)

    def __add__(self, other: SampledScan | None) -> SampledScan:
        if other is None:
            return self
        text = {
            c: {**self.text.get(c, {}), **other.text.get(c, {})} for c in {*self.text, *other.text}
        }
        return SampledScan(
            self.scan + other.scan, self.sample + other.sample, text, self.numbers | other.numbers
        )

    __radd__ = __add__


def _column_kinds(
    clean: pd.DataFrame, plan: ColumnPlan
) -> tuple[dict[str, dict[Any, None]], set[str]]:
    """Values of the text columns and names of the number columns (not planned factors)."""
    text: dict[str, dict[Any, None]] = {}
    numbers: set[str] = set()
    for col in plan.columns:
        if col == plan.response or col in plan.factors or not clean[col].notna().any():
            continue
        series = clean[col]
        if pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
            numbers.add(col)
        else:
            text[col] = dict.fromkeys(np.asarray(pd.unique(series), dtype=object).tolist())
    return text, numbers


def scan_and_sample(
    frame: pd.DataFrame, plan: ColumnPlan, capacity: int, per_level: int
) -> SampledScan:
    """The first pass on one chunk: values of the response and factors, and a sample.

    Parameters
    ----------
    frame : pandas.DataFrame
    plan : ColumnPlan
    capacity, per_level : int
        See :class:`Reservoir`.

    Returns
    -------
    SampledScan
    """
    frame = with_response_stand_in(frame, plan)
    text, numbers = _column_kinds(frame.loc[_complete_rows(frame, plan)], plan)
    sample = sample_chunk(frame, plan, capacity, per_level)
    return SampledScan(scan_levels(frame, plan), sample, text, numbers)


@dataclass
class SummaryWithTotals:
    """The summary pass and, in the same pass, the likelihood sums at the warm start."""

    summary: ChunkSummary
    totals: PassTotals | None

    def __add__(self, other: SummaryWithTotals | None) -> SummaryWithTotals:
        if other is None:
            return self
        return SummaryWithTotals(self.summary + other.summary, add_parts(self.totals, other.totals))

    __radd__ = __add__


def summarize_at(frame: pd.DataFrame, spec: ChunkSpec, params: np.ndarray) -> SummaryWithTotals:
    """The summary of one chunk and its likelihood sums at ``params`` (one read of it).

    The first Newton evaluation of a warm-started fit thus costs no pass of its own.

    Parameters
    ----------
    frame : pandas.DataFrame
    spec : ChunkSpec
    params : ndarray
        The subsample's estimates.

    Returns
    -------
    SummaryWithTotals
    """
    arrays = chunk_arrays(frame, spec)
    return SummaryWithTotals(arrays_summary(arrays, spec), arrays_totals(arrays, spec, params))
