"""Exact weighted medians in passes over chunks (get_margeff(at="median") on chunked fits)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from ordstats.results import effect_rows
from ordstats.results.effect_rows import column_summary, median_of, weighted_medians


def _chunks(matrix, weights, n_chunks):
    """CLMData-like chunks of the columns of ``matrix`` as location columns."""
    return [
        SimpleNamespace(
            X=matrix[part],
            nominal=np.zeros((len(part), 0)),
            scale=np.zeros((len(part), 0)),
            offset=np.zeros(len(part)),
            weights=weights[part],
        )
        for part in np.array_split(np.arange(len(weights)), n_chunks)
    ]


def _medians(matrix, weights, n_chunks):
    chunks = _chunks(matrix, weights, n_chunks)
    passes = []

    def reduce_rows(func, *args):
        passes.append(func.__name__)
        total = None
        for chunk in chunks:
            part = func(chunk, *args)
            total = part if total is None else total + part
        return total

    summary = reduce_rows(column_summary, [])
    columns = list(range(matrix.shape[1]))
    got = weighted_medians(reduce_rows, columns, summary)
    return np.array([got[c] for c in columns]), len(passes) - 1


def _columns(rng, n):
    """Continuous, heavy-tailed, few-valued and constant columns (ties at one half too)."""
    return np.column_stack(
        [
            rng.normal(size=n),
            rng.standard_cauchy(size=n) * 1e6,
            rng.integers(0, 4, size=n).astype(float),
            np.repeat([0.0, 1.0], [n // 2, n - n // 2]),
            np.full(n, 2.5),
        ]
    )


@pytest.mark.parametrize("seed, unit", [(0, False), (1, True)])
def test_medians_by_narrowing_brackets_equal_numpy(monkeypatch, seed, unit):
    # few rows collected per pass, so the brackets narrow by histograms over several passes
    monkeypatch.setattr(effect_rows, "_COLLECT", 50)
    rng = np.random.default_rng(seed)
    n = 20_000
    matrix = _columns(rng, n)
    # unit weights and n even: a tie at one half, the mean of the two middle values
    weights = np.ones(n, dtype=int) if unit else rng.integers(1, 4, size=n)
    expected = [np.median(np.repeat(matrix[:, c], weights)) for c in range(matrix.shape[1])]
    got, n_passes = _medians(matrix, weights.astype(float), n_chunks=7)
    np.testing.assert_array_equal(got, expected)
    assert 1 < n_passes < 10


def test_medians_of_few_rows_take_one_pass():
    rng = np.random.default_rng(5)
    matrix = _columns(rng, 300)
    got, n_passes = _medians(matrix, np.ones(300), n_chunks=4)
    np.testing.assert_array_equal(got, np.median(matrix, axis=0))
    assert n_passes == 1


def test_median_of_a_tie_at_one_half_uses_the_next_value_beyond():
    # the cumulative weight reaches one half at 2.0: the mean with the next value (given as
    # ``above`` when it lies beyond these values; none: 2.0 itself)
    assert median_of(np.array([1.0, 2.0]), np.array([1.0, 1.0]), below=2.0, total=8.0) == 2.0
    assert median_of(np.array([1.0, 2.0]), np.ones(2), 2.0, 8.0, above=3.0) == 2.5
    assert median_of(np.array([1.0, 2.0]), np.ones(2), 1.0, 8.0, above=3.0) == 2.0
    assert median_of(np.array([2.0, 1.0]), np.array([2.0, 1.0]), 1.0, 8.0, above=5.0) == 3.5
