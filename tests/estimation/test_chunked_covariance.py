"""Robust and cluster covariances of fits read in chunks or from Dask: the in-memory numbers.

The meat of a sandwich is a sum over rows (or over clusters of sums over
rows), accumulated in one pass; a cluster whose rows lie in several chunks,
files or partitions is one cluster.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats.errors import MissingDataWarning
from tests._chunk_data import FORMULA, ratings, write_parquet

RTOL = 1e-9


@pytest.fixture(scope="module")
def frame():
    data = ratings(2400, seed=21)
    # 37 clusters spread over every chunk; half the labels stored as floats (1 and 1.0
    # are one cluster, as in memory)
    labels = np.arange(len(data)) % 37
    data["school"] = pd.Series(labels, dtype=object)
    data.loc[data.index[::2], "school"] = labels[::2].astype(float)
    return data


def _fit(data, chunksize=None, **fit_kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingDataWarning)
        model = ordstats.OrdinalModel.from_formula(FORMULA, data, weights="w", chunksize=chunksize)
        return model.fit(**fit_kw)


@pytest.fixture(scope="module")
def memory(frame):
    return _fit(frame)


@pytest.fixture(scope="module")
def chunked(frame):
    return _fit(frame, chunksize=300)


def _same_covariance(got, expected, kind):
    assert got.cov_type == expected.cov_type == kind
    np.testing.assert_allclose(got.cov_params(), expected.cov_params(), rtol=RTOL, atol=1e-16)
    np.testing.assert_allclose(got.bse, expected.bse, rtol=RTOL)


@pytest.mark.parametrize(
    "cov_type, kind", [("HC0", "robust"), ("robust", "robust"), ("HC1", "HC1")]
)
def test_robust_covariance_of_chunks_equals_in_memory(memory, chunked, cov_type, kind):
    # before: NotFittedError "per-observation scores need the rows in memory"
    got = chunked.get_robustcov_results(cov_type)
    _same_covariance(got, memory.get_robustcov_results(cov_type), kind)
    assert not np.allclose(got.bse, chunked.bse)  # not the inverse information again


@pytest.mark.parametrize("use_correction", [True, False, "full"])
def test_cluster_covariance_by_a_column_equals_in_memory(frame, memory, chunked, use_correction):
    got = chunked.get_robustcov_results(
        "cluster", {"groups": "school", "use_correction": use_correction}
    )
    expected = memory.get_robustcov_results(
        "cluster", {"groups": frame["school"].astype(float), "use_correction": use_correction}
    )
    _same_covariance(got, expected, "cluster")


def test_clusters_spanning_parquet_files_are_one_cluster(tmp_path, frame, memory):
    data = frame.assign(school=frame["school"].astype(float))
    write_parquet(data, tmp_path / "parts", n_files=4)
    res = _fit(
        str(tmp_path / "parts" / "*.parquet"),
        chunksize=250,
        cov_type="cluster",
        cov_kwds={"groups": "school"},
    )
    expected = memory.get_robustcov_results("cluster", {"groups": data["school"]})
    _same_covariance(res, expected, "cluster")


def test_fit_with_a_robust_cov_type_in_chunks(frame, memory):
    res = _fit(frame, chunksize=500, cov_type="HC0")
    _same_covariance(res, memory.get_robustcov_results("HC0"), "robust")
    assert "robust" in str(res.summary())


def test_expected_covariance_of_chunks_behind_bse(frame, memory):
    res = _fit(frame, chunksize=500, cov_type="expected")
    np.testing.assert_allclose(res.bse, memory.get_robustcov_results("expected").bse, rtol=RTOL)


def test_dask_robust_and_cluster_covariances_equal_in_memory(frame, memory):
    dask = pytest.importorskip("dask")
    dd = pytest.importorskip("dask.dataframe")
    data = frame.assign(school=frame["school"].astype(float))
    with dask.config.set(scheduler="threads"):
        res = _fit(dd.from_pandas(data, npartitions=5))
        _same_covariance(
            res.get_robustcov_results("HC1"), memory.get_robustcov_results("HC1"), "HC1"
        )
        _same_covariance(
            res.get_robustcov_results("cluster", {"groups": "school"}),
            memory.get_robustcov_results("cluster", {"groups": data["school"]}),
            "cluster",
        )


def test_cluster_by_name_is_the_same_in_memory_in_chunks_and_from_dask(frame, memory, chunked):
    """``{"groups": "school"}`` works on every path; in memory also the labels themselves."""
    dd = pytest.importorskip("dask.dataframe")
    assert len(memory.model.design.row_index) < len(frame)  # rows were dropped for NaN
    data = frame.assign(school=frame["school"].astype(float))
    by_name = memory.get_robustcov_results("cluster", {"groups": "school"})
    rows = memory.model.design.row_index
    for labels in (data["school"], data.loc[rows, "school"].to_numpy()):
        _same_covariance(
            memory.get_robustcov_results("cluster", {"groups": labels}), by_name, "cluster"
        )
    _same_covariance(
        chunked.get_robustcov_results("cluster", {"groups": "school"}), by_name, "cluster"
    )
    import dask

    with dask.config.set(scheduler="threads"):
        dask_fit = _fit(dd.from_pandas(data, npartitions=3))
        _same_covariance(
            dask_fit.get_robustcov_results("cluster", {"groups": "school"}), by_name, "cluster"
        )
