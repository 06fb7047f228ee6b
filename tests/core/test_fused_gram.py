"""The fused Gram matrix and segment sums of the Hessian's location block."""

from __future__ import annotations

import numpy as np
import pytest

import ordstats.core.linalg as linalg
from ordstats.core.linalg import weighted_gram, weighted_gram_with_sums


def _segments(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    cuts = np.sort(rng.choice(np.arange(1, n), size=k - 1, replace=False))
    return np.concatenate([[0], cuts, [n]])


@pytest.mark.parametrize("block_bytes", [2**19, 8 * 7 * 5])  # one block; 5-row blocks
def test_fused_gram_and_sums_equal_the_separate_products(monkeypatch, block_bytes):
    monkeypatch.setattr(linalg, "_FUSED_BYTES", block_bytes)
    rng = np.random.default_rng(3)
    n, p = 503, 7
    A = rng.normal(size=(n, p)) * 10.0 ** rng.integers(-3, 4, p)
    c = rng.uniform(0.01, 3.0, n)
    weights = rng.normal(size=(2, n))
    bounds = _segments(rng, n, 6)
    fused = weighted_gram_with_sums(A, c, bounds, weights)
    assert fused is not None
    gram, sums = fused
    np.testing.assert_allclose(gram, weighted_gram(A, c), rtol=1e-13)
    assert np.array_equal(gram, gram.T)
    for k in range(bounds.shape[0] - 1):
        rows = slice(bounds[k], bounds[k + 1])
        scale = np.abs(weights[:, rows]) @ np.abs(A[rows])
        np.testing.assert_array_less(
            np.abs(sums[:, k] - weights[:, rows] @ A[rows]), 1e-14 * scale + 1e-300
        )


@pytest.mark.parametrize("bad", [0.0, -1.0, np.inf, np.nan])
def test_fused_gram_declines_weights_that_are_not_positive_and_finite(bad):
    rng = np.random.default_rng(4)
    A, c = rng.normal(size=(20, 3)), rng.uniform(0.5, 1.0, 20)
    c[7] = bad
    assert weighted_gram_with_sums(A, c, np.array([0, 10, 20]), np.ones((2, 20))) is None
