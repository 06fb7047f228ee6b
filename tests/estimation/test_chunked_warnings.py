"""A chunked fit warns as the in-memory fit does (an engine-parity audit's finding).

An ordered Categorical predictor with missing values: the chunked fit also passed on
formulaic's DataMismatchWarning ("categories outside of the nominated levels ...: {nan}
... will likely skew the results") from the probe that classifies the columns on the
first chunk, although the rows are dropped as missing and the estimates agree.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import ordstats
from tests._chunk_data import write_parquet


@pytest.fixture(scope="module")
def data() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.normal(size=300), "g": rng.choice(["a", "b", "c"], 300)})
    latent = frame["x"] + (frame["g"] == "b") + rng.logistic(size=300)
    frame["y"] = np.digitize(latent, [-1.0, 0.0, 1.0])
    frame["g"] = pd.Categorical(frame["g"], categories=["a", "b", "c"], ordered=True)
    frame.loc[:9, "g"] = np.nan
    return frame


def _warnings_of(data: pd.DataFrame, **options) -> tuple[list[str], pd.Series]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = ordstats.OrdinalModel.from_formula("y ~ x + g", data, **options).fit(disp=False)
    return sorted(f"{w.category.__name__}: {w.message}" for w in caught), res.params


def test_a_chunked_fit_gives_the_in_memory_warnings(data):
    memory, memory_params = _warnings_of(data)
    chunked, chunked_params = _warnings_of(data, chunksize=97)
    assert chunked == memory
    assert [m.split(":")[0] for m in memory] == ["MissingDataWarning"]
    np.testing.assert_allclose(chunked_params, memory_params, rtol=1e-10)


def _deprecations(call) -> tuple[int, object]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    return sum("Constructing a Categorical" in str(w.message) for w in caught), result


def test_an_unused_category_is_not_recoded_once_per_chunk(data):
    """An ordered Categorical with a category no row has (z): each chunk's design and
    each chunk of the streamed averages recoded it to the fit's levels through pandas'
    deprecated implicit path (a warning per chunk, an error in a later pandas)."""
    unused = data.assign(g=data["g"].cat.add_categories("z"))

    def fit(**options):
        return ordstats.OrdinalModel.from_formula("y ~ x + g", unused, **options).fit(disp=False)

    memory_count, memory = _deprecations(fit)
    chunked_count, chunked = _deprecations(lambda: fit(chunksize=97))
    assert chunked_count <= memory_count  # formulaic's own, at the fit, on both paths
    np.testing.assert_allclose(chunked.params, memory.params, rtol=1e-10)
    averaged_count, averaged = _deprecations(chunked.avg_predictions)
    assert averaged_count == 0
    np.testing.assert_allclose(
        averaged["estimate"], memory.avg_predictions()["estimate"], rtol=1e-10
    )


def test_trial_points_of_probability_zero_leak_no_numpy_warnings(wine: pd.DataFrame) -> None:
    # log-gamma, far out in lambda: some trial points give a row probability 0,
    # whose derivatives are 0/0; memory never computes them, a chunk pass did
    # (numpy's "invalid value encountered in multiply", once per chunk and trial)
    rng = np.random.default_rng(0)
    data = wine.assign(off=rng.normal(size=len(wine)) * 3.0)
    options = {"link": "log-gamma", "offset": "off"}

    def fit(**extra):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = ordstats.OrdinalModel.from_formula(
                "rating ~ temp + contact", data, **options, **extra
            ).fit(disp=False)
        return sorted(f"{w.category.__name__}: {w.message}" for w in caught), res

    memory, memory_res = fit()
    chunked, chunked_res = fit(chunksize=20)
    assert chunked == memory  # the same ConvergenceWarning, nothing else
    assert chunked_res.llf == pytest.approx(memory_res.llf, rel=1e-9)  # not converged: no closer


def test_chunks_without_a_usable_row_count_in_the_missing_report(tmp_path, data):
    # a chunk (file) whose every row is dropped was left out of the summary pass over the
    # chunk cache: "1 of 240 rows have missing ... in 'x'" for 61 of 300, and a file of
    # missing weights was dropped with no warning at all
    frame = data.assign(g=data["g"].astype(str), w=1.0)
    frame.loc[5, "x"] = np.nan
    frame.loc[120:179, "x"] = np.nan
    frame.loc[200:299, "w"] = np.nan
    for k, part in enumerate(np.array_split(np.arange(300), [200])):
        frame.iloc[part].to_parquet(tmp_path / f"p{k}.parquet", index=False)
    expected = (
        r"^161 of 300 rows have missing or non-finite values in 'x' \(61\), 'weights' \(100\);"
    )
    for source, options in [(frame, {}), (frame, {"chunksize": 60}), (tmp_path, {"chunksize": 60})]:
        with pytest.warns(ordstats.errors.MissingDataWarning, match=expected):
            res = ordstats.OrdinalModel.from_formula("y ~ x", source, weights="w", **options).fit()
        assert res.nobs == 139
        assert "161 rows with missing values or zero weight were dropped" in str(res.summary())


def separated_ratings(n: int = 300) -> pd.DataFrame:
    """Three ordered levels that x separates completely (z is noise)."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=n)
    return pd.DataFrame({"y": np.digitize(x, [-0.5, 0.5]) + 1, "x": x, "z": rng.normal(size=n)})


def _separation_messages(data, **options) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ordstats.OrdinalModel.from_formula("y ~ x + z", data, **options).fit(disp=False)
    return [f"{w.category.__name__}: {w.message}" for w in caught]


@pytest.mark.parametrize("engine", ["chunks", "files", "dask"])
def test_separation_is_named_out_of_core_as_in_memory(engine, tmp_path):
    # out of core the separation LP did not run: the fit said "did not converge ...
    # check the data for separation" where the same rows in memory name the separation
    frame = separated_ratings()
    memory = _separation_messages(frame)
    assert len(memory) == 1 and memory[0].startswith("SeparationWarning:"), memory
    assert "'x'" in memory[0]
    if engine == "chunks":
        got = _separation_messages(frame, chunksize=70)
    elif engine == "files":
        files = write_parquet(frame, tmp_path, n_files=3)
        got = _separation_messages(files, levels=[1, 2, 3])
    else:
        dd = pytest.importorskip("dask.dataframe")
        dask = pytest.importorskip("dask")
        with dask.config.set(scheduler="threads"):
            got = _separation_messages(dd.from_pandas(frame, npartitions=3), levels=[1, 2, 3])
    assert got == memory
