"""The first pass's random sample: its row keys, and merges that drop rows early.

The sample keeps the complete rows of smallest key (overall and per response
value), so it must not depend on how the rows are split into chunks.  Once the
reservoir is full, a chunk's rows above its key limits are dropped when the
chunk is added and the rest wait to be merged with others: the rows kept must
be those of merging every chunk in full.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ordstats.data.chunks import ColumnPlan
from ordstats.data.parts import sum_parts
from ordstats.data.reservoir import SampleLimits, row_keys, sample_chunk

PLAN = ColumnPlan(response="y", columns=["y", "x", "z"], factors=[])


def _frame(n: int, seed: int) -> pd.DataFrame:
    """Levels of very different sizes (one only near the end), ties of whole rows."""
    rng = np.random.default_rng(seed)
    y = rng.choice(["a", "b", "c", "rare"], p=[0.55, 0.3, 0.147, 0.003], size=n).astype(object)
    y[-40:] = "late"  # a value first seen in the last chunks
    x = rng.integers(0, 40, n).astype(float)  # with z, repeated rows
    z = rng.integers(0, 5, n)
    return pd.DataFrame({"y": y, "x": x, "z": z})


def _eager_sum(parts):
    """Each chunk merged at once (the reservoir before waiting merges)."""
    total = None
    for part in parts:
        total = part if total is None else total._merged()._merge([part._merged()])
    return total


@pytest.mark.parametrize("chunk", [97, 400, 1500])
def test_waiting_merges_keep_the_rows_of_merging_every_chunk(chunk):
    frame = _frame(9000, seed=4)
    capacity, per_level = 600, 20

    def pieces():
        return [
            sample_chunk(frame.iloc[k : k + chunk], PLAN, capacity, per_level)
            for k in range(0, len(frame), chunk)
        ]

    whole = sample_chunk(frame, PLAN, capacity, per_level)
    eager = _eager_sum(pieces())
    lazy = None
    waited = False
    for piece in pieces():
        lazy = piece if lazy is None else lazy + piece
        waited |= bool(lazy._waiting)
    assert waited  # the early drops and the waiting merges were used
    for merged in (lazy, eager):
        np.testing.assert_array_equal(merged.keys, whole.keys)
        pd.testing.assert_frame_equal(merged.rows, whole.rows)
    assert (lazy.rows["y"] == "late").sum() == 20  # its 20 smallest, though seen last
    assert (lazy.rows["y"] == "rare").sum() >= per_level
    for size in (100, 600):
        pd.testing.assert_frame_equal(lazy.draw(size)[0], whole.draw(size)[0])


@pytest.mark.parametrize("lag", [0, 1, 3])
def test_chunks_sampled_with_posted_limits_keep_the_rows_of_merging_every_chunk(lag):
    # a pool thread samples chunk j with the limits posted after chunk j - 1 - lag was added
    frame = _frame(9000, seed=5)
    capacity, per_level, chunk = 600, 20, 300
    starts = range(0, len(frame), chunk)
    board = SampleLimits()
    posted = []
    total = None
    sampled = []
    for j, k in enumerate(starts):
        board.limits = posted[j - 1 - lag] if j - 1 - lag >= 0 else None
        piece = sample_chunk(frame.iloc[k : k + chunk], PLAN, capacity, per_level, board=board)
        sampled.append(len(piece.keys))
        board.limits = posted[-1] if posted else None
        total = piece if total is None else total + piece
        posted.append(board.limits)
    whole = sample_chunk(frame, PLAN, capacity, per_level)
    np.testing.assert_array_equal(total.keys, whole.keys)
    pd.testing.assert_frame_equal(total.rows, whole.rows)
    assert posted[-1] is not None  # the reservoir posted its limits ...
    assert sum(sampled[-10:]) < 10 * chunk / 4  # ... and later chunks kept few of their rows


def test_a_reservoir_with_waiting_parts_pickles_its_merged_rows():
    import pickle

    frame = _frame(4000, seed=6)
    parts = [sample_chunk(frame.iloc[k : k + 250], PLAN, 300, 10) for k in range(0, 4000, 250)]
    total = sum_parts(parts)
    copy = pickle.loads(pickle.dumps(total))
    whole = sample_chunk(frame, PLAN, 300, 10)
    np.testing.assert_array_equal(copy.keys, whole.keys)
    pd.testing.assert_frame_equal(copy.rows, whole.rows)


def test_row_keys_depend_on_the_values_not_on_how_numbers_are_stored():
    frame = _frame(5000, seed=2).drop(columns="y")
    keys = row_keys(frame)
    as_float = row_keys(frame.astype({"z": float}))
    as_int32 = row_keys(frame.astype({"z": np.int32}))
    np.testing.assert_array_equal(keys, as_float)
    np.testing.assert_array_equal(keys, as_int32)
    signed_zero = frame.assign(x=np.where(frame["x"] == 0, -0.0, frame["x"]))
    assert np.signbit(signed_zero["x"]).any()
    np.testing.assert_array_equal(row_keys(signed_zero), keys)
    # equal rows share a key; rows differing anywhere do not (here: no collision at all)
    codes = frame.groupby(["x", "z"]).ngroup().to_numpy()
    assert len(np.unique(keys)) == len(np.unique(codes))
    first = pd.Series(keys).groupby(codes).nunique()
    assert (first == 1).all()


def test_row_keys_of_text_and_categories_and_blocks():
    rng = np.random.default_rng(1)
    n = 40_000  # more than one block of rows
    words = np.array(["low", "mid", "high"], dtype=object)[rng.integers(0, 3, n)]
    frame = pd.DataFrame({"w": words, "v": rng.normal(size=n)})
    keys = row_keys(frame)
    assert len(np.unique(keys)) == n
    # a categorical column hashes its values, as a column of text does
    np.testing.assert_array_equal(row_keys(frame.astype({"w": "category"})), keys)
    # the keys of a row do not depend on the rows around it
    np.testing.assert_array_equal(row_keys(frame.iloc[17_000:17_100]), keys[17_000:17_100])
    # they spread over the whole range (the sample takes the smallest)
    assert 0.45 < np.mean(keys < np.uint64(2**63)) < 0.55
