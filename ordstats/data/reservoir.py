"""A random subsample of data read in chunks, kept during the first pass (the warm start's).

Each complete row gets a pseudo-random key, a hash of its values under a fixed
seed (:func:`row_keys`), and the sample keeps the rows with the smallest keys:
the ``capacity`` smallest overall and the ``per_level`` smallest of every
response value.  Keeping the smallest keys is reservoir sampling that merges:
the smallest keys of two parts' samples are the smallest keys of the union,
so chunks, files and Dask partitions can be sampled independently and added
in any order, and the sample is the same however the rows are split into
chunks.  Rows with the same values have the same key: a sample of data with
repeated rows keeps all copies of a row or none (each row is still kept with
the same probability).

Once the reservoir is full, a chunk's rows whose keys are above the limits of
the rows kept so far (the ``capacity``-th smallest key, or their level's
``per_level``-th smallest) can never be kept: they are dropped when the chunk
is added, and the rest wait until they add up to ``capacity`` rows before the
reservoir merges them (a merge costs about as much as the reservoir's own
rows).  The rows kept are those of merging every chunk in full.
"""

from __future__ import annotations

import functools
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
    "SampleLimits",
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

#: 16 characters: the hash key of the row keys' columns that are not numbers (the
#: sample's fixed seed, for :func:`pandas.util.hash_pandas_object`).
_HASH_KEY = "ordstats-sample0"
#: The row keys' starting value and odd multiplier (the seed of the numbers' hash).
_KEY_SEED = np.uint64(0x6F72647374617473)
_KEY_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)
#: The multipliers of the 64-bit finaliser of SplitMix64 (Steele, Lea and Flood 2014).
_FINAL_MULTIPLIERS = (np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB))


def row_keys(rows: pd.DataFrame) -> np.ndarray:
    """A pseudo-random 64-bit key for each row, a function of its values alone.

    The columns are mixed into the key one after another, each by a bijection
    of the key so far and the column's 64 bits (``h = f(h ^ bits)``, ``f(x) =
    m x ^ (m x >> 32)`` modulo ``2**64``): rows that differ in one column never
    share a key.  A final SplitMix64 step spreads the bits.  Numbers (and
    booleans) enter as the bits of their ``float64`` value, with ``-0.0`` as
    ``0.0``, so the key does not depend on how a column stores them (integers
    in one file, floating point in another); other columns (text,
    categories) by :func:`pandas.util.hash_pandas_object` of the column.  The
    rows are mixed :data:`_KEY_ROWS` at a time (the block stays in the CPU's
    cache): about three times faster than hashing the rows with pandas, which
    it replaced.

    Parameters
    ----------
    rows : pandas.DataFrame
        Complete rows (no missing value).

    Returns
    -------
    ndarray of uint64
    """
    n = len(rows)
    columns = [_column_values(column) for _, column in rows.items()]
    key = np.full(n, _KEY_SEED, dtype=np.uint64)
    spare = np.empty(min(n, _KEY_ROWS), dtype=np.uint64)
    number = np.empty(min(n, _KEY_ROWS), dtype=np.float64)
    for start in range(0, n, _KEY_ROWS):
        block = key[start : start + _KEY_ROWS]
        size = len(block)
        for values in columns:
            part = values[start : start + _KEY_ROWS]
            if part.dtype == np.float64:
                part = np.add(part, 0.0, out=number[:size]).view(np.uint64)  # -0.0 + 0.0 = 0.0
            np.bitwise_xor(block, part, out=block)
            np.multiply(block, _KEY_MULTIPLIER, out=block)
            _xor_shifted(block, 32, spare[:size])
        _xor_shifted(block, 30, spare[:size])
        np.multiply(block, _FINAL_MULTIPLIERS[0], out=block)
        _xor_shifted(block, 27, spare[:size])
        np.multiply(block, _FINAL_MULTIPLIERS[1], out=block)
        _xor_shifted(block, 31, spare[:size])
    return key


#: Rows of :func:`row_keys`' blocks.
_KEY_ROWS = 16_384


def _xor_shifted(key: np.ndarray, shift: int, spare: np.ndarray) -> None:
    """``key ^= key >> shift`` in place (``spare``: a buffer of the same size)."""
    np.right_shift(key, np.uint64(shift), out=spare)
    np.bitwise_xor(key, spare, out=key)


def _column_values(column: pd.Series) -> np.ndarray:
    """One column for :func:`row_keys`: numbers as ``float64``, others as their pandas hash."""
    dtype = column.dtype
    is_number = pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)
    if not is_number or isinstance(dtype, pd.CategoricalDtype):
        hashed = pd.util.hash_pandas_object(column, index=False, hash_key=_HASH_KEY)
        return np.asarray(hashed.to_numpy(), dtype=np.uint64)
    return np.asarray(column.to_numpy(dtype=np.float64, na_value=np.nan), dtype=np.float64)


class Reservoir:
    """The complete rows with the smallest keys (overall and per response value).

    The rows stay in the chunks' frames they were read in, each with a mask of
    its kept rows, until :attr:`rows` joins them: a merge computes which keys
    it keeps and updates the masks, and copies a frame's kept rows only once
    fewer than half of its rows are kept (so that every row is copied a few
    times at most, and memory stays within about twice the capacity).  Parts
    added to a full reservoir wait, their rows above its key limits dropped,
    until they hold ``capacity`` rows (see the module's description); reading
    any attribute merges them first.

    Parameters
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
    board : SampleLimits, optional
        Where a reservoir of the chunks read first posts its key limits once
        it is full, for the threads that sample the chunks after them.
    """

    def __init__(
        self,
        parts: list[pd.DataFrame],
        masks: list[np.ndarray],
        keys: np.ndarray,
        labels: pd.Series,
        response: str,
        capacity: int,
        per_level: int,
        bound: int | None = None,
        board: SampleLimits | None = None,
    ) -> None:
        self._parts, self._masks, self._keys, self._labels = parts, masks, keys, labels
        self.response, self.capacity, self.per_level = response, capacity, per_level
        self._bound = bound
        #: where the limits of this reservoir (the chunks read first) are posted
        self._board = board
        #: parts added since the last merge, in the order read (their rows within the limits)
        self._waiting: list[Reservoir] = []
        self._limits: _KeyLimits | None = None

    @property
    def parts(self) -> list[pd.DataFrame]:
        """Frames with kept rows, in the order read."""
        return self._merged()._parts

    @property
    def masks(self) -> list[np.ndarray]:
        """Which rows of each frame are kept."""
        return self._merged()._masks

    @property
    def keys(self) -> np.ndarray:
        """The keys of the kept rows, frame after frame."""
        return self._merged()._keys

    @property
    def labels(self) -> pd.Series:
        """The kept rows' response values, in the same order."""
        return self._merged()._labels

    @property
    def bound(self) -> int | None:
        """Every row whose key is below this one is kept (None: no bound)."""
        return self._merged()._bound

    def __add__(self, other: Reservoir | None) -> Reservoir:
        if other is None:
            return self
        limits = self._key_limits() if self._bound is None and other._bound is None else None
        if limits is None:  # not full yet, or a share's bound: merge now
            return self._merged()._merge([other._merged()])
        other = other._merged()._within(limits)
        if not len(other._keys):
            return self
        out = Reservoir(
            self._parts,
            self._masks,
            self._keys,
            self._labels,
            self.response,
            self.capacity,
            self.per_level,
            board=self._board,
        )
        out._waiting, out._limits = [*self._waiting, other], limits
        if sum(len(part._keys) for part in out._waiting) >= self.capacity:
            return out._merged()
        return out

    __radd__ = __add__

    def _merged(self) -> Reservoir:
        """The reservoir with its waiting parts merged (in place: the same rows)."""
        if self._waiting:
            merged = Reservoir._merge(self, self._waiting)
            self._parts, self._masks = merged._parts, merged._masks
            self._keys, self._labels = merged._keys, merged._labels
            self._waiting, self._limits = [], None
        return self

    def _merge(self, others: list[Reservoir]) -> Reservoir:
        """The rows of the reservoir and of ``others`` (merged ones), the smallest kept."""
        everyone = [self, *others]
        keys = np.concatenate([part._keys for part in everyone])
        labels = pd.concat([part._labels for part in everyone], ignore_index=True)
        keep = _smallest(keys, labels, self.capacity, self.per_level)
        bound = functools.reduce(_lower_bound, (part._bound for part in everyone))
        if bound is not None and not keep.all():
            bound = _lower_bound(bound, _smallest_dropped(keys, keep))
        return self._kept(keys, labels, keep, others, bound)

    def _key_limits(self) -> _KeyLimits | None:
        """The limits of the merged rows' keys; None while fewer than ``capacity`` are kept."""
        if self._limits is None and not self._waiting and len(self._keys) >= self.capacity:
            self._limits = _KeyLimits.of(self._keys, self._labels, self.capacity, self.per_level)
            if self._board is not None:
                self._board.limits = self._limits
        return self._limits

    def _within(self, limits: _KeyLimits) -> Reservoir:
        """The rows whose keys are within ``limits`` (the others can never be kept)."""
        keep = limits.admits(self._keys, self._labels)
        if keep.all():
            return self
        return self._kept(self._keys, self._labels, keep, [], self._bound)

    def share(self, rows: int) -> Reservoir:
        """The ``rows`` rows of smallest key and the ``per_level`` smallest of every level.

        What a part of the data sends onward when its part of the sample is
        about ``rows`` rows (a Spark partition's share): the rows below the
        new :attr:`bound` stay a random sample of all rows below it, and the
        smallest of every level stay those of the part.
        """
        if len(self.keys) <= rows:
            return self
        keep = _smallest(self._keys, self._labels, rows, self.per_level)
        bound = _lower_bound(self._bound, _smallest_dropped(self._keys, keep))
        return self._kept(self._keys, self._labels, keep, [], bound)

    def _kept(
        self,
        keys: np.ndarray,
        labels: pd.Series,
        keep: np.ndarray,
        others: list[Reservoir],
        bound: int | None,
    ) -> Reservoir:
        """The rows ``keep`` marks of this reservoir's rows followed by ``others``' (merged)."""
        all_parts = [*self._parts, *(p for other in others for p in other._parts)]
        all_masks = [*self._masks, *(m for other in others for m in other._masks)]
        parts, masks = [], []
        start = 0
        for part, mask in zip(all_parts, all_masks, strict=True):
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
            self._board,
        )

    def __getstate__(self) -> dict[str, Any]:
        # sent between Dask workers or to Spark's driver: the kept rows only
        rows = self.rows
        return {
            **self.__dict__,
            "_parts": [rows],
            "_masks": [np.ones(len(rows), dtype=bool)],
            "_limits": None,
            "_board": None,
        }

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


class SampleLimits:
    """The key limits of the chunks sampled first, shared with the threads sampling later ones.

    A chunk's rows whose keys are above the limits of the rows read before it
    can never be kept (:class:`_KeyLimits`).  The reservoir of the first
    chunks, added in the chunks' order on one thread, posts its limits here
    whenever it computes them; :func:`sample_chunk`, on a pool thread, drops a
    later chunk's rows above the limits posted so far.  The limits only fall
    as chunks are added, so limits read before a later addition drop a subset
    of the rows that addition's limits drop (:meth:`Reservoir.__add__` drops
    those too): the sample is the same, and the ordered step handles a few
    rows of each chunk instead of all of them.

    Attributes
    ----------
    limits : _KeyLimits or None
        None until the first chunks fill the reservoir.
    """

    def __init__(self) -> None:
        self.limits: _KeyLimits | None = None


def _lower_bound(a: int | None, b: int | None) -> int | None:
    """The smaller of two bounds of kept keys (None: no bound)."""
    if a is None or b is None:
        return b if a is None else a
    return min(a, b)


@dataclass(frozen=True)
class _KeyLimits:
    """Keys that a full reservoir's later rows must be below to be kept, ever.

    A row read later is kept only if its key is below the ``capacity``-th
    smallest key so far (ties go to the rows read first) or below the
    ``per_level``-th smallest of its response value; both only fall as rows
    are added.

    Attributes
    ----------
    overall : int
        The ``capacity``-th smallest key.
    by_level : dict
        Response value -> its limit, the larger of ``overall`` and the
        ``per_level``-th smallest key of the value; absent for values with fewer
        than ``per_level`` rows (no limit).
    """

    overall: int
    by_level: dict[Any, int]

    @classmethod
    def of(cls, keys: np.ndarray, labels: pd.Series, capacity: int, per_level: int) -> _KeyLimits:
        """The limits of the kept rows ``keys`` (at least ``capacity``) and their ``labels``."""
        overall = np.partition(keys, capacity - 1)[capacity - 1]
        codes, uniques = pd.factorize(labels)
        by_level = {}
        for code, value in enumerate(np.asarray(uniques, dtype=object).tolist()):
            level_keys = keys[codes == code]
            if len(level_keys) >= per_level:
                smallest = np.partition(level_keys, per_level - 1)[per_level - 1]
                by_level[value] = int(max(overall, smallest))
        return cls(int(overall), by_level)

    def admits(self, keys: np.ndarray, labels: pd.Series) -> np.ndarray:
        """Which of the rows ``keys`` (response values ``labels``) may still be kept."""
        codes, uniques = pd.factorize(labels)
        values = np.asarray(uniques, dtype=object).tolist()
        limited = np.array([value in self.by_level for value in values], dtype=bool)
        limit = np.array([self.by_level.get(value, 0) for value in values], dtype=np.uint64)
        return ~limited[codes] | (keys < limit[codes])


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
    board: SampleLimits | None = None,
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
    board : SampleLimits, optional
        The limits of the chunks read before this one (rows above them are
        dropped here), and where the reservoir posts its own.

    Returns
    -------
    Reservoir
    """
    columns = plan.read_columns if plan.censored is None else [plan.response, *plan.read_columns]
    if complete is None:
        complete = _complete_rows(frame, plan)
    clean = frame[columns] if complete.all() else frame.loc[complete, columns]
    keys = row_keys(clean)
    labels = clean[plan.response].reset_index(drop=True)
    limits = None if board is None else board.limits
    admitted = None if limits is None else np.flatnonzero(limits.admits(keys, labels))
    if admitted is not None and admitted.size < len(keys):
        keys, labels = keys[admitted], labels.take(admitted).reset_index(drop=True)
    else:
        admitted = None
    keep = _smallest(keys, labels, capacity, per_level)
    mask = keep
    if admitted is not None:  # the kept rows among all of the chunk's complete rows
        mask = np.zeros(len(clean), dtype=bool)
        mask[admitted[keep]] = True
    parts, masks = _compacted([clean], [mask])
    kept_labels = labels if keep.all() else labels[keep].reset_index(drop=True)
    return Reservoir(
        parts, masks, keys[keep], kept_labels, plan.response, capacity, per_level, board=board
    )


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
    board: SampleLimits | None = None,
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
    board : SampleLimits, optional
        Shared by the chunks of a pass read in order (see :class:`SampleLimits`).

    Returns
    -------
    SampledScan
    """
    frame = with_response_stand_in(frame, plan)
    if complete is None:
        complete = _complete_rows(frame, plan)
    text, numbers = _column_kinds(frame, complete, plan)
    sample = sample_chunk(frame, plan, capacity, per_level, complete, board)
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
    arrays: ChunkArrays, spec: ChunkSpec, params: np.ndarray | None, with_hessian: bool = True
) -> SummaryWithTotals:
    """:func:`summarize_at` of a chunk's arrays (``with_hessian``: see :func:`arrays_totals`)."""
    totals = (
        None if params is None else arrays_totals(arrays, spec, params, with_hessian=with_hessian)
    )
    return SummaryWithTotals(arrays_summary(arrays, spec), totals)
