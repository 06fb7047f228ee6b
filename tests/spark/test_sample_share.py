"""The first pass of a Spark fit sends each partition's share of the sample, not its reservoir.

Each partition keeps the rows of smallest key (the reservoir of
:mod:`ordstats.data.reservoir`) but sends the driver only about its part of the
warm start's subsample: the rows of smallest key up to its share, and the
smallest of every response level.  The rows below the smallest bound of the
partitions are then still all the rows below it, so the warm start draws the
same rows as a fit that keeps every reservoir row (the chunked fit).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats.data.chunks import ColumnPlan
from ordstats.data.parts import sum_parts
from ordstats.data.reservoir import row_keys, sample_chunk
from ordstats.data.spark import WARM_START_FRACTION, WARM_START_MIN, sample_share
from ordstats.errors import MissingDataWarning
from ordstats.estimation import warm_start
from tests._chunk_data import FORMULA, ratings, spark_ratings


def test_the_share_follows_the_warm_start_subsample():
    assert WARM_START_FRACTION == warm_start.SUBSAMPLE_FRACTION
    assert WARM_START_MIN == warm_start.MIN_SUBSAMPLE
    # 10^6 rows in 2 partitions: the subsample is 50,000 rows, 25,000 from each
    assert 50_000 < sample_share(500_000, 2, 200_000) < 60_000
    # 10^7 rows in 20 partitions: 200,000 rows (the cap), 10,000 from each
    assert 20_000 < sample_share(500_000, 20, 200_000) < 22_000
    assert sample_share(100, 1, 200_000) == min(200_000, sample_share(100, 1, 200_000))


def _keys(rows: pd.DataFrame) -> np.ndarray:
    return row_keys(rows)


def test_shares_of_parts_draw_the_rows_of_the_whole_reservoir():
    """Parts that send shares draw what the merged full reservoirs draw; a part much larger
    than its share assumes gives fewer rows, all of them below the bound (a random sample)."""
    frame = ratings(6000, seed=11, missing=False)
    plan = ColumnPlan("y", ["y", "x1", "x2"], [])
    parts = [frame.iloc[k : k + 1500] for k in range(0, 6000, 1500)]
    full = sum_parts(sample_chunk(p, plan, 4000, 5) for p in parts)
    shares = [sample_chunk(p, plan, 4000, 5).share(1200) for p in parts]
    assert all(len(share) < 1300 for share in shares)  # 1200 and a few levels' smallest
    shared = sum_parts(shares)
    assert shared.bound is not None
    for size in (2000, 4000):  # 4000: the capacity, reached by the merged shares
        expected, _ = full.draw(size)
        got, _ = shared.draw(size)
        assert len(got) == size
        pd.testing.assert_frame_equal(got, expected)
    # one part of 4500 rows sends 700: the rows below its bound are fewer than 2000
    skewed = sample_chunk(frame.iloc[:4500], plan, 4000, 5).share(700) + sample_chunk(
        frame.iloc[4500:], plan, 4000, 5
    )
    rows, _ = skewed.draw(2000)
    below = np.sort(skewed.keys[skewed.keys < skewed.bound])
    assert len(rows) == len(below) < 2000
    np.testing.assert_array_equal(_keys(rows), below)


def test_a_spark_fit_sends_shares_and_starts_where_the_chunked_fit_starts(spark):
    frame = spark_ratings(30_000, seed=3)
    data = spark.createDataFrame(frame).repartition(4)
    with pytest.warns(MissingDataWarning):
        model = ordstats.OrdinalModel.from_formula(FORMULA, data, weights="w")
    with pytest.warns(MissingDataWarning):
        chunked = ordstats.OrdinalModel.from_formula(FORMULA, frame, weights="w", chunksize=5000)
    sample, every = model.evaluator.reader.sample, chunked.evaluator.reader.sample
    # four partitions of about 7,500 rows each sent fewer than half of their rows
    assert len(sample) < 0.5 * len(every)
    size = warm_start.subsample_size(30_000)
    (got, topped), (expected, topped_chunked) = sample.draw(size), every.draw(size)
    assert len(got) == size and topped == topped_chunked
    pd.testing.assert_frame_equal(got, expected, check_dtype=False)  # text: str or object
    fit, fit_chunked = model.fit(), chunked.fit()
    np.testing.assert_allclose(fit.params, fit_chunked.params, rtol=1e-9)
    assert model.evaluator.n_passes == chunked.evaluator.n_passes
