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
    ChunkArrays,
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

__all__ = [
    "Reservoir",
    "SampledScan",
    "SummaryWithTotals",
    "scan_and_sample",
    "summarize_arrays_at",
    "summarize_at",
]

#: Share of the rows in the warm start's subsample (at least :data:`MIN_SUBSAMPLE`
#: rows); kept here, below ``ordstats.estimation.warm_start`` (which fits it), so that
#: the data layer's sources size their shares of the sample by the same numbers.
SUBSAMPLE_FRACTION = 0.05
#: Smallest warm-start subsample.
MIN_SUBSAMPLE = 5_000

#: 16 characters: the hash key of the row keys (the sample's fixed seed).
_HASH_KEY = "ordstats-sample0"


@dataclass
class Reservoir:
    """The complete rows with the smallest keys (overall and per response value).

    The rows stay in the chunks' frames they were read in, each with a mask of
    its kept rows, until :attr:`rows` joins them: a merge computes which keys
    it keeps and updates the masks, and copies a frame's kept rows only once
    fewer than half of its rows are kept (so that every row is copied a few
    times at most, and memory stays within about twice the capacity).

    Attributes
    ----------
    parts : list of pandas.DataFrame
        Frames with kept rows (the columns a pass reads), in the order read.
    masks : list of ndarray of bool
        Which rows of each frame are kept.
    keys : ndarray of uint64
        The keys of the kept rows, frame after frame.
    labels : pandas.Series
        Their response values, in the same order.
    response : str
        The response column (the strata).
    capacity : int
        Rows kept with the smallest keys overall.
    per_level : int
        Rows kept with the smallest keys of each response value.
    bound : int or None
        Every row whose key is below this one is kept (None: the ``capacity``
        smallest keys of all rows read are kept).  Set by :meth:`share`, when a
        part of the rows sends fewer rows than ``capacity`` onward.
    """

    parts: list[pd.DataFrame]
    masks: list[np.ndarray]
    keys: np.ndarray
    labels: pd.Series
    response: str
    capacity: int
    per_level: int
    bound: int | None = None

    def __add__(self, other: Reservoir | None) -> Reservoir:
        if other is None:
            return self
        keys = np.concatenate([self.keys, other.keys])
        labels = pd.concat([self.labels, other.labels], ignore_index=True)
        keep = _smallest(keys, labels, self.capacity, self.per_level)
        bound = _lower_bound(self.bound, other.bound)
        if bound is not None and not keep.all():
            bound = _lower_bound(bound, _smallest_dropped(keys, keep))
        return self._kept(keys, labels, keep, other, bound)

    __radd__ = __add__

    def share(self, rows: int) -> Reservoir:
        """The ``rows`` rows of smallest key and the ``per_level`` smallest of every level.

        What a part of the data sends onward when its part of the sample is
        about ``rows`` rows (a Spark partition's share): the rows below the
        new :attr:`bound` stay a random sample of all rows below it, and the
        smallest of every level stay those of the part.
        """
        if len(self.keys) <= rows:
            return self
        keep = _smallest(self.keys, self.labels, rows, self.per_level)
        bound = _lower_bound(self.bound, _smallest_dropped(self.keys, keep))
        return self._kept(self.keys, self.labels, keep, None, bound)

    def _kept(
        self,
        keys: np.ndarray,
        labels: pd.Series,
        keep: np.ndarray,
        other: Reservoir | None,
        bound: int | None,
    ) -> Reservoir:
        """The rows ``keep`` marks of this reservoir's rows followed by ``other``'s."""
        more = ([], []) if other is None else (other.parts, other.masks)
        parts, masks = [], []
        start = 0
        for part, mask in zip(self.parts + more[0], self.masks + more[1], strict=True):
            where = np.flatnonzero(mask)
            kept = keep[start : start + where.size]
            start += where.size
            if not kept.any():
                continue
            if not kept.all():
                mask = mask.copy()
                mask[where[~kept]] = False
            parts.append(part)
            masks.append(mask)
        parts, masks = _compacted(parts, masks)
        return Reservoir(
            parts,
            masks,
            keys[keep],
            labels[keep].reset_index(drop=True),
            self.response,
            self.capacity,
            self.per_level,
            bound,
        )

    def __getstate__(self) -> dict[str, Any]:
        # sent between Dask workers or to Spark's driver: the kept rows only
        rows = self.rows
        return {**self.__dict__, "parts": [rows], "masks": [np.ones(len(rows), dtype=bool)]}

    def __len__(self) -> int:
        return len(self.keys)

    @property
    def rows(self) -> pd.DataFrame:
        """The kept rows, in the order they were read."""
        frames = [_subset(part, mask) for part, mask in zip(self.parts, self.masks, strict=True)]
        if len(frames) == 1:
            return frames[0].reset_index(drop=True)
        return pd.concat(frames, ignore_index=True)

    def draw(self, size: int) -> tuple[pd.DataFrame, bool]:
        """The ``size`` rows of smallest key, each response value topped up to ``per_level``.

        Returns
        -------
        rows : pandas.DataFrame
            In increasing key order.  Fewer than ``size`` (before the top-up)
            when fewer rows lie below :attr:`bound`.
        topped_up : bool
            Whether some response value had fewer than ``per_level`` rows among
            the ``size`` and got more (the sample is then not a plain random one).
        """
        order = np.argsort(self.keys, kind="stable")
        rows = self.rows.take(order).reset_index(drop=True)
        if self.bound is not None:  # only the rows below the bound are a random sample
            size = min(size, int(np.count_nonzero(self.keys < self.bound)))
        first = np.arange(len(rows)) < size
        codes = pd.factorize(rows[self.response])[0]
        rank = _rank_within_level(codes)
        counts = np.bincount(codes[first], minlength=int(codes.max(initial=-1)) + 1)
        short = counts[codes] < self.per_level
        chosen = first | (short & (rank < self.per_level))
        return rows[chosen].reset_index(drop=True), bool(np.any(chosen & ~first))


def _lower_bound(a: int | None, b: int | None) -> int | None:
    """The smaller of two bounds of kept keys (None: no bound)."""
    if a is None or b is None:
        return b if a is None else a
    return min(a, b)


def _smallest_dropped(keys: np.ndarray, keep: np.ndarray) -> int:
    """The smallest key of the rows not kept: every row of a smaller key is kept."""
    return int(keys[~keep].min())


def _compacted(
    parts: list[pd.DataFrame], masks: list[np.ndarray]
) -> tuple[list[pd.DataFrame], list[np.ndarray]]:
    """Copy out the kept rows of the frames of which fewer than half are kept."""
    out_parts, out_masks = [], []
    for part, mask in zip(parts, masks, strict=True):
        n_kept = int(np.count_nonzero(mask))
        if 2 * n_kept < len(mask):
            part, mask = part[mask], np.ones(n_kept, dtype=bool)
        out_parts.append(part)
        out_masks.append(mask)
    return out_parts, out_masks


def _subset(rows: pd.DataFrame, keep: np.ndarray) -> pd.DataFrame:
    """The rows ``keep`` marks (no copy when it marks all)."""
    return rows if keep.all() else rows[keep]


def _rank_within_level(codes: IntArray) -> IntArray:
    """Position of each row among the rows of its code, in the order given."""
    n = len(codes)
    if not n:
        return np.zeros(0, dtype=np.intp)
    by_code = np.argsort(codes, kind="stable")
    shifted = codes - codes.min()
    starts = np.concatenate([[0], np.cumsum(np.bincount(shifted))[:-1]])
    rank = np.empty(n, dtype=np.intp)
    rank[by_code] = np.arange(n) - starts[shifted[by_code]]
    return rank


def _smallest(keys: np.ndarray, response: pd.Series, capacity: int, per_level: int) -> np.ndarray:
    """Which rows have one of the ``capacity`` smallest keys or of their level's ``per_level``.

    Ties of keys (rows with the same values) go to the row read first.
    """
    keep = np.ones(len(keys), dtype=bool)
    if len(keys) <= capacity:
        return keep
    codes = pd.factorize(response)[0]
    # the capacity smallest: below the capacity-th key, and the first of its ties
    kth = np.partition(keys, capacity - 1)[capacity - 1]
    keep = keys < kth
    ties = np.flatnonzero(keys == kth)
    keep[ties[: capacity - int(keep.sum())]] = True
    # a level with per_level rows among them has its per_level smallest there
    levels = int(codes.max(initial=-1)) + 1
    short = np.bincount(codes[keep], minlength=levels) < np.minimum(
        np.bincount(codes, minlength=levels), per_level
    )
    if not short.any():
        return keep
    order = np.argsort(keys, kind="stable")
    rank = _rank_within_level(codes[order])
    keep[order[rank < per_level]] = True
    return keep


def sample_chunk(
    frame: pd.DataFrame,
    plan: ColumnPlan,
    capacity: int,
    per_level: int,
    complete: np.ndarray | None = None,
) -> Reservoir:
    """The reservoir of one chunk's complete rows.

    Parameters
    ----------
    frame : pandas.DataFrame
    plan : ColumnPlan
    capacity, per_level : int
        See :class:`Reservoir`.
    complete : ndarray of bool, optional
        The chunk's complete rows, if known.

    Returns
    -------
    Reservoir
    """
    columns = plan.read_columns if plan.censored is None else [plan.response, *plan.read_columns]
    if complete is None:
        complete = _complete_rows(frame, plan)
    clean = frame[columns] if complete.all() else frame.loc[complete, columns]
    keys = pd.util.hash_pandas_object(clean, index=False, hash_key=_HASH_KEY).to_numpy()
    labels = clean[plan.response].reset_index(drop=True)
    keep = _smallest(keys, labels, capacity, per_level)
    parts, masks = _compacted([clean], [keep])
    kept_labels = labels if keep.all() else labels[keep].reset_index(drop=True)
    return Reservoir(parts, masks, keys[keep], kept_labels, plan.response, capacity, per_level)


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
    frame: pd.DataFrame, complete: np.ndarray, plan: ColumnPlan
) -> tuple[dict[str, dict[Any, None]], set[str]]:
    """Values of the text columns and names of the number columns (not planned factors).

    Only the ``complete`` rows count.
    """
    text: dict[str, dict[Any, None]] = {}
    numbers: set[str] = set()
    # complete rows have no missing value in the plan's columns: a column holds
    # values there exactly when there is a complete row, and only text needs reading
    if not complete.any():
        return text, numbers
    every = bool(complete.all())
    for col in plan.columns:
        if col == plan.response or col in plan.factors:
            continue
        dtype = frame[col].dtype
        if pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype):
            numbers.add(col)
            continue
        series = frame[col] if every else frame[col][complete]
        text[col] = dict.fromkeys(np.asarray(pd.unique(series), dtype=object).tolist())
    return text, numbers


def scan_and_sample(
    frame: pd.DataFrame,
    plan: ColumnPlan,
    capacity: int,
    per_level: int,
    complete: np.ndarray | None = None,
) -> SampledScan:
    """The first pass on one chunk: values of the response and factors, and a sample.

    Parameters
    ----------
    frame : pandas.DataFrame
    plan : ColumnPlan
    capacity, per_level : int
        See :class:`Reservoir`.
    complete : ndarray of bool, optional
        The chunk's complete rows, if known.

    Returns
    -------
    SampledScan
    """
    frame = with_response_stand_in(frame, plan)
    if complete is None:
        complete = _complete_rows(frame, plan)
    text, numbers = _column_kinds(frame, complete, plan)
    sample = sample_chunk(frame, plan, capacity, per_level, complete)
    return SampledScan(scan_levels(frame, plan, complete), sample, text, numbers)


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


def summarize_at(
    frame: pd.DataFrame, spec: ChunkSpec, params: np.ndarray | None
) -> SummaryWithTotals:
    """The summary of one chunk and its likelihood sums at ``params`` (one read of it).

    The first Newton evaluation of a warm-started fit thus costs no pass of its own.

    Parameters
    ----------
    frame : pandas.DataFrame
    spec : ChunkSpec
    params : ndarray or None
        The subsample's estimates (None: the summary alone).

    Returns
    -------
    SummaryWithTotals
    """
    return summarize_arrays_at(chunk_arrays(frame, spec), spec, params)


def summarize_arrays_at(
    arrays: ChunkArrays, spec: ChunkSpec, params: np.ndarray | None
) -> SummaryWithTotals:
    """:func:`summarize_at` of a chunk's arrays."""
    totals = None if params is None else arrays_totals(arrays, spec, params)
    return SummaryWithTotals(arrays_summary(arrays, spec), totals)
