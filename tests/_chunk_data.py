"""Synthetic data and a fit comparison for the chunked and distributed tests."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

FORMULA = "y ~ x1 + x2 + f + g"
RTOL = 1e-10


def ratings(n: int = 3000, seed: int = 0, *, missing: bool = True) -> pd.DataFrame:
    """Numeric, string and categorical predictors, weights, and some missing values.

    Rows are sorted by ``f`` so that most chunks lack some of its levels.
    """
    rng = np.random.default_rng(seed)
    f = rng.choice(list("abcde"), size=n, p=[0.3, 0.3, 0.2, 0.15, 0.05])
    g = rng.choice(["lo", "mid", "hi"], size=n)
    x1, x2 = rng.normal(size=n), rng.normal(size=n)
    effect = {"a": 0.0, "b": 0.5, "c": -0.4, "d": 1.0, "e": 0.2}
    latent = 0.8 * x1 - 0.5 * x2 + np.vectorize(effect.get)(f) + (g == "hi") + rng.logistic(size=n)
    y = np.searchsorted([-1.5, 0.0, 1.0, 2.5], latent) + 1
    frame = pd.DataFrame(
        {
            "y": y,
            "x1": x1,
            "x2": x2,
            "f": f,
            "g": pd.Categorical(g, categories=["lo", "mid", "hi"]),
            "w": rng.integers(1, 4, size=n).astype(float),
        }
    )
    if missing:
        frame.loc[rng.choice(n, 25, replace=False), "x2"] = np.nan
        frame.loc[rng.choice(n, 10, replace=False), "f"] = None
    return frame.sort_values("f", kind="stable").reset_index(drop=True)


def spark_ratings(n: int, seed: int) -> pd.DataFrame:
    """:func:`ratings` with ``g`` as text: Spark has no categorical columns."""
    frame = ratings(n, seed)
    frame["g"] = frame["g"].astype(object)
    return frame


@contextmanager
def spark_setting(spark, name: str, value: str) -> Iterator[None]:
    """The Spark session's setting ``name`` is ``value`` inside the block (unset after it)."""
    spark.conf.set(name, value)
    try:
        yield
    finally:
        spark.conf.unset(name)


def spilled_fits(spark) -> list[Path]:
    """The Spark fits' cache directories in the session's local directories (where tasks write)."""

    def local_dirs(_: object) -> list[str]:
        return os.environ.get("SPARK_LOCAL_DIRS", "").split(",")

    roots = set(spark.sparkContext.parallelize([0], 1).flatMap(local_dirs).collect())
    return sorted(p for root in roots if root for p in Path(root).glob("ordstats-fit-*"))


def write_parquet(frame: pd.DataFrame, directory: Path, n_files: int = 3) -> list[Path]:
    """Split ``frame`` into ``n_files`` Parquet files, in order."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for k, part in enumerate(np.array_split(np.arange(len(frame)), n_files)):
        path = directory / f"part-{k:02d}.parquet"
        frame.iloc[part].to_parquet(path, index=False)
        paths.append(path)
    return paths


def assert_same_fit(chunked, memory, rtol=RTOL):
    """A chunked (or Dask) fit equals the in-memory fit of the same rows."""
    assert list(chunked.params.index) == list(memory.params.index)
    np.testing.assert_allclose(chunked.params, memory.params, rtol=rtol)
    np.testing.assert_allclose(chunked.bse, memory.bse, rtol=rtol)
    np.testing.assert_allclose(chunked.cov_params(), memory.cov_params(), rtol=1e-8, atol=1e-15)
    assert chunked.llf == pytest.approx(memory.llf, rel=1e-12)
    assert chunked.llnull == pytest.approx(memory.llnull, rel=1e-12)
    assert chunked.nobs == memory.nobs and chunked.n_rows == memory.n_rows
    assert chunked.niter == memory.niter and chunked.converged
    assert chunked.cond_H == pytest.approx(memory.cond_H, rel=1e-8)
