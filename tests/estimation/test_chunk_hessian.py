"""A chunk's Hessian in one pass: the rows grouped by level are gathered, not copied.

Each pass of a fit read in chunks evaluates a chunk's likelihood once
(``prepare(..., single_use=True)``), so the copy of the design grouped by
level that an in-memory fit keeps for its many Hessians is not made: the
rank-k update gathers each block of rows into its buffer.  The numbers are
the copy's bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest

from ordstats.core.thresholds import threshold_jacobian
from ordstats.families import get_family
from ordstats.families.cumulative.likelihood import CLMData, evaluate, prepare


def _data(link: str, weighted: bool) -> tuple[CLMData, np.ndarray]:
    rng = np.random.default_rng(7)
    n, p, levels = 30_000, 6, 5
    family = get_family("cumulative", link=link)
    X = rng.normal(size=(n, p))
    y = rng.integers(0, levels, n)
    weights = rng.integers(1, 4, n).astype(float) if weighted else np.ones(n)
    data = CLMData(
        y=y,
        n_levels=levels,
        X=X,
        weights=weights,
        offset=np.zeros(n),
        link=family.link,
        threshold_jacobian=threshold_jacobian("flexible", levels - 1),
    )
    params = np.concatenate([np.linspace(-1.0, 1.0, levels - 1), rng.normal(size=p) * 0.2])
    return data, params


@pytest.mark.parametrize(("link", "weighted"), [("logit", False), ("probit", True)])
def test_a_single_use_hessian_equals_the_kept_copys_bit_for_bit(link, weighted):
    data, params = _data(link, weighted)
    kept, once = prepare(data), prepare(data, single_use=True)
    a, b = evaluate(kept, params), evaluate(once, params)
    np.testing.assert_array_equal(b.hessian, a.hessian)
    np.testing.assert_array_equal(b.gradient, a.gradient)
    assert b.nll == a.nll
    assert "_rows_by_level" in kept.__dict__  # the in-memory fit keeps its grouped copy
    assert "_rows_by_level" not in once.__dict__  # the chunk's pass does not make one
