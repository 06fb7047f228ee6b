"""Awkward chunks, files and partitions are fitted with the in-memory estimates.

Zero-row files and partitions, chunks whose every row is dropped as missing, chunks
without some level, files or partitions with another column order or a number type
(int in one, float in another), and text columns that are all missing in the first
file or partition (stored as numbers there).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats.errors import DataError, MissingDataWarning
from tests._chunk_data import FORMULA, ratings

pytest.importorskip("pyarrow")

RTOL = 1e-10


def _fit(data, formula=FORMULA, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingDataWarning)
        return ordstats.OrdinalModel.from_formula(formula, data, **kw).fit()


def _same(got, expected):
    assert list(got.params.index) == list(expected.params.index)
    np.testing.assert_allclose(got.params, expected.params, rtol=RTOL, atol=1e-13)
    np.testing.assert_allclose(got.bse, expected.bse, rtol=1e-9)
    assert got.nobs == expected.nobs


def _write(parts: list[pd.DataFrame], folder: Path, suffix: str = "parquet") -> str:
    folder.mkdir(parents=True, exist_ok=True)
    for k, part in enumerate(parts):
        path = folder / f"part-{k:02d}.{suffix}"
        if suffix == "csv":
            part.to_csv(path, index=False)
        else:
            part.to_parquet(path, index=False)
    return str(folder / f"*.{suffix}")


def _dask_frame(parts: list[pd.DataFrame]):
    """A Dask DataFrame of these partitions as they are (types and column order kept)."""
    dask = pytest.importorskip("dask")
    dd = pytest.importorskip("dask.dataframe")
    delayed = [dask.delayed(lambda p: p)(part) for part in parts]
    return dd.from_delayed(delayed, meta=parts[-1].iloc[:0], verify_meta=False)


@pytest.fixture(scope="module")
def numbers() -> pd.DataFrame:
    """Rows in random order with an integer predictor ``k`` and a text factor ``f``."""
    frame = ratings(1500, seed=3, missing=False).drop(columns="w")
    frame["k"] = np.random.default_rng(1).integers(0, 5, len(frame))
    frame["f"] = frame["f"].astype(object)
    return frame.sample(frac=1.0, random_state=2).reset_index(drop=True)


KFORMULA = "y ~ x1 + k + f + g"


def _thirds(frame: pd.DataFrame) -> list[pd.DataFrame]:
    return [frame.iloc[p].copy() for p in np.array_split(np.arange(len(frame)), 3)]


def test_a_chunk_whose_rows_are_all_missing_in_files_and_partitions(tmp_path):
    frame = ratings(1800, seed=8)
    parts = _thirds(frame)
    parts[1]["x1"] = np.nan  # every row of the middle file/partition is dropped
    data = pd.concat(parts)
    expected = _fit(data, weights="w")
    _same(_fit(_write(parts, tmp_path / "pq"), weights="w"), expected)
    _same(_fit(_write(parts, tmp_path / "pq100"), weights="w", chunksize=100), expected)
    dask = pytest.importorskip("dask")
    with dask.config.set(scheduler="sync"):
        res = _fit(_dask_frame(parts), weights="w")
        _same(res, expected)
        np.testing.assert_allclose(
            res.expected_covariance.matrix, expected.expected_covariance.matrix, rtol=1e-8
        )
        np.testing.assert_allclose(
            res.get_robustcov_results("HC0").bse,
            expected.get_robustcov_results("HC0").bse,
            rtol=1e-9,
        )


def test_zero_row_files_and_partitions_add_nothing(tmp_path):
    frame = ratings(1200, seed=9)
    parts = _thirds(frame)
    with_empty = [frame.iloc[:0], parts[0], frame.iloc[:0], parts[1], parts[2], frame.iloc[:0]]
    expected = _fit(frame, weights="w")
    _same(_fit(_write(with_empty, tmp_path / "pq"), weights="w"), expected)
    dask = pytest.importorskip("dask")
    with dask.config.set(scheduler="sync"):
        _same(_fit(_dask_frame(with_empty), weights="w"), expected)


def test_chunks_without_some_response_and_factor_levels(tmp_path):
    frame = ratings(2000, seed=10).sort_values(["y", "f"]).reset_index(drop=True)
    expected = _fit(frame, weights="w")
    _same(_fit(frame, weights="w", chunksize=150), expected)
    _same(_fit(_write(_thirds(frame), tmp_path / "pq"), weights="w"), expected)
    dask = pytest.importorskip("dask")
    with dask.config.set(scheduler="sync"):
        _same(
            _fit(_dask_frame([frame.iloc[i : i + 250] for i in range(0, 2000, 250)])), _fit(frame)
        )


@pytest.mark.parametrize("suffix", ["parquet", "csv"])
@pytest.mark.parametrize("float_file", [0, 1])
def test_integers_in_one_file_and_fractions_in_another(tmp_path, numbers, suffix, float_file):
    # before: "cannot read ...: Float value 3.500000 was truncated converting to int64"
    parts = _thirds(numbers)
    for k, part in enumerate(parts):
        part["k"] = part["k"] + 0.5 if k == float_file else part["k"]
    data = pd.concat(parts)
    expected = _fit(data.assign(g=data["g"].astype(str)) if suffix == "csv" else data, KFORMULA)
    _same(_fit(_write(parts, tmp_path / suffix, suffix), KFORMULA), expected)


def test_integers_and_floats_in_dask_partitions(numbers):
    dask = pytest.importorskip("dask")
    parts = _thirds(numbers)
    parts[1]["k"] = parts[1]["k"] + 0.5
    parts[2]["y"] = parts[2]["y"].astype(float)  # the response as 1.0, 2.0, ...
    with dask.config.set(scheduler="sync"):
        _same(_fit(_dask_frame(parts), KFORMULA), _fit(pd.concat(parts), KFORMULA))


@pytest.mark.parametrize("kind", ["parquet", "csv", "dask"])
def test_another_column_order_in_one_file_or_partition(tmp_path, numbers, kind):
    parts = _thirds(numbers)
    parts[1] = parts[1][parts[1].columns[::-1]]
    expected = _fit(numbers, KFORMULA)
    if kind == "dask":
        dask = pytest.importorskip("dask")
        with dask.config.set(scheduler="sync"):
            _same(_fit(_dask_frame(parts), KFORMULA), expected)
        return
    if kind == "csv":
        expected = _fit(numbers.assign(g=numbers["g"].astype(str)), KFORMULA)
    _same(_fit(_write(parts, tmp_path / kind, kind), KFORMULA), expected)


def test_a_text_column_all_missing_in_the_first_file_or_partition(tmp_path, numbers):
    # such a column is stored as numbers (NaN) there, text elsewhere. Before: Parquet
    # "column 'f' is string in ... but double in the first file"; Dask "a chunk has
    # values it cannot encode (... Term `f` has generated too many columns ...)"
    parts = _thirds(numbers)
    parts[0]["f"] = np.nan
    expected = _fit(pd.concat(parts), KFORMULA)
    _same(_fit(_write(parts, tmp_path / "first"), KFORMULA), expected)
    _same(_fit(_write(parts[::-1], tmp_path / "last"), KFORMULA), expected)
    dask = pytest.importorskip("dask")
    with dask.config.set(scheduler="sync"):
        _same(_fit(_dask_frame(parts), KFORMULA), expected)


@pytest.mark.parametrize("lacking", ["first", "later"])
def test_a_column_only_some_files_have_says_which_file_and_what_to_do(tmp_path, lacking):
    """A model column absent from one file: the file is named, and what to do is said."""
    frame = ratings(600, seed=3, missing=False)
    first, later = frame.iloc[:300], frame.iloc[300:]
    if lacking == "first":
        first = first.drop(columns="x2")
    else:
        later = later.drop(columns="x2")
    first.to_parquet(tmp_path / "a.parquet", index=False)
    later.to_parquet(tmp_path / "b.parquet", index=False)
    where = (
        "are in '.*b.parquet' but not in the first file"
        if lacking == "first"
        else ("the file '.*b.parquet' has no column 'x2'")
    )
    with pytest.raises(DataError, match=f"{where}.*add the column to that file, or leave"):
        ordstats.OrdinalModel.from_formula(FORMULA, str(tmp_path / "*.parquet"), chunksize=100)


@pytest.mark.parametrize("column", ["y", "x1"])
def test_a_column_missing_in_every_parquet_file_is_a_clear_error(tmp_path, column):
    """A column with no value in any file has the type null in the files' common
    schema, and reading the files' doubles as null raised pyarrow's raw
    ArrowNotImplementedError; CSV files, DataFrames and Dask said no row can be used."""
    data = pd.DataFrame({"y": np.tile([1.0, 2.0, 3.0], 10), "x1": np.arange(30.0)})
    data[column] = np.nan
    folder = _write([data.iloc[:15], data.iloc[15:]], tmp_path)
    with pytest.raises(DataError, match=f"every row has a missing .*: '{column}' \\(30\\)"):
        ordstats.OrdinalModel.from_formula("y ~ x1", folder, chunksize=5)


@pytest.mark.parametrize("path", ["frame", "csv", "dask"])
def test_no_complete_row_out_of_core_names_the_columns_as_in_memory(tmp_path, path):
    """Out of core the message said only that no row can be used; in memory it names
    each column with its count of missing values."""
    data = pd.DataFrame({"y": np.tile([1.0, 2.0], 10), "x1": np.arange(20.0)})
    data.loc[:9, "y"] = np.nan
    data.loc[10:, "x1"] = np.nan
    expected = r"every row has a missing or non-finite value: 'y' \(10\), 'x1' \(10\)"
    with pytest.raises(DataError, match=expected):
        ordstats.OrdinalModel.from_formula("y ~ x1", data)
    if path == "frame":
        source, options = data, {"chunksize": 5}
    elif path == "csv":
        source, options = _write([data.iloc[:10], data.iloc[10:]], tmp_path, "csv"), {}
    else:
        source, options = _dask_frame([data.iloc[:10], data.iloc[10:]]), {}
    with pytest.raises(DataError, match=expected):
        ordstats.OrdinalModel.from_formula("y ~ x1", source, **options)
