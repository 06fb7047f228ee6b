"""Ordinal factorisation sweeps over parts: threads and a Dask cluster give the serial fit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ordstats.estimation.factorization import OrdinalFactorization
from ordstats.families.cumulative.sides import split_side
from ordstats.families.cumulative.simulate import simulate_ratings


@pytest.fixture(scope="module")
def ratings() -> pd.DataFrame:
    sim = simulate_ratings(80, 30, rank=2, density=0.4, scale_use=0.5, seed=8)
    return pd.DataFrame({"row": sim.row, "col": sim.col, "rating": sim.y + 1})


def _assert_same(res, ref) -> None:  # type: ignore[no-untyped-def]
    assert res.n_sweeps == ref.n_sweeps
    np.testing.assert_allclose(res.objective_trace, ref.objective_trace, rtol=1e-10)
    np.testing.assert_allclose(res.row_coef, ref.row_coef, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(res.col_coef, ref.col_coef, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(res.threshold_table, ref.threshold_table, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(res.row_covariance, ref.row_covariance, rtol=1e-6, atol=1e-9)


def test_split_side_keeps_whole_blocks_and_every_rating() -> None:
    rng = np.random.default_rng(2)
    block = rng.integers(0, 50, 3000)
    other = rng.integers(0, 20, 3000)
    y = rng.integers(0, 4, 3000)
    parts = split_side(
        block, other, y, np.ones(3000), block, 50, 4,
        own_bias=True, other_bias=True, owns_thresholds=True, n_parts=4,
    )  # fmt: skip
    assert len(parts) == 4
    ids = np.concatenate([p.ids for p in parts])
    np.testing.assert_array_equal(np.sort(ids), np.arange(50))  # each block in one part
    assert sum(p.n_ratings for p in parts) == 3000
    for p in parts:
        np.testing.assert_array_equal(p.threshold_index, p.block)  # own rows of the table
        assert np.all(p.ids[p.block] >= 0)
    sizes = [p.n_ratings for p in parts]
    assert max(sizes) < 1.5 * min(sizes)  # about equal shares of the ratings


@pytest.mark.filterwarnings("ignore::ordstats.errors.ConvergenceWarning")
@pytest.mark.parametrize("sharing", ["global", "row", "column"])
def test_parts_and_threads_equal_the_serial_fit(ratings: pd.DataFrame, sharing: str) -> None:
    model = OrdinalFactorization(ratings, rank=2, thresholds=sharing)
    ref = model.fit(max_sweeps=12)
    _assert_same(model.fit(max_sweeps=12, n_parts=5), ref)
    _assert_same(model.fit(max_sweeps=12, n_jobs=2), ref)


@pytest.mark.filterwarnings("ignore::ordstats.errors.ConvergenceWarning")
def test_dask_cluster_equals_the_serial_fit(ratings: pd.DataFrame) -> None:
    distributed = pytest.importorskip("dask.distributed")
    model = OrdinalFactorization(ratings, rank=2, thresholds="row")
    ref = model.fit(max_sweeps=8)
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    with distributed.Client(cluster) as client:
        sweeper = model._sweeper(client=client)  # scatters the parts
        holding = [bool(keys) for keys in client.has_what().values()]
        sweeper.runner.close()
        res = model.fit(max_sweeps=8, client=client)
    cluster.close()
    assert holding == [True, True]  # the parts were spread over both workers
    _assert_same(res, ref)


def test_likelihood_over_parts_uses_each_row_parts_own_thresholds(ratings: pd.DataFrame) -> None:
    """With per-row thresholds a part's ratings index its own rows of the threshold table;
    the likelihood pass (used by the extrapolation and the trace) once gave every part the
    first rows of the full table, so fits over parts left the serial path."""
    model = OrdinalFactorization(ratings, rank=2, thresholds="row")
    row_coef, col_coef, table = model._start(0)
    table = table + np.random.default_rng(1).normal(0.0, 0.3, (len(table), 1))  # distinct rows
    serial = model._sweeper(n_parts=1).nll(row_coef, col_coef, table)
    assert model._sweeper(n_parts=5).nll(row_coef, col_coef, table) == pytest.approx(
        serial, rel=1e-12
    )
