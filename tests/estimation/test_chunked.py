"""Fits of data read in chunks equal the in-memory fit; bad chunked input fails clearly."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pyarrow.dataset as ds
import pytest

import ordstats
from ordstats.errors import (
    CollinearityWarning,
    DataError,
    FormulaError,
    MissingDataWarning,
    NotFittedError,
    SpecificationError,
)
from ordstats.estimation.evaluators import ChunkedEvaluator
from tests._chunk_data import FORMULA, assert_same_fit, ratings, write_parquet


def _in_memory(frame, formula=FORMULA, **kw):
    with pytest.warns(MissingDataWarning):
        return ordstats.OrdinalModel.from_formula(formula, frame, **kw).fit()


def _chunked(data, formula=FORMULA, **kw):
    with pytest.warns(MissingDataWarning, match="rows have missing"):
        model = ordstats.OrdinalModel.from_formula(formula, data, **kw)
    assert isinstance(model.evaluator, ChunkedEvaluator)
    return model.fit()


@pytest.fixture(scope="module")
def frame():
    return ratings()


@pytest.fixture(scope="module")
def memory_fit(frame):
    return _in_memory(frame, weights="w")


@pytest.mark.parametrize("chunksize", [97, 500, 10_000])
def test_dataframe_in_chunks_equals_in_memory(frame, memory_fit, chunksize):
    # rows are sorted by f, so small chunks lack most of its levels
    res = _chunked(frame, weights="w", chunksize=chunksize)
    assert_same_fit(res, memory_fit)
    assert res.model.evaluator.n_passes >= 2 + res.niter  # levels, summary, one per evaluation
    tables = [str(t) for t in res.summary().tables[1:]]
    assert tables == [str(t) for t in memory_fit.summary().tables[1:]]


@pytest.mark.parametrize("chunksize", [150, 1000])
def test_parquet_files_equal_in_memory(tmp_path, frame, memory_fit, chunksize):
    write_parquet(frame, tmp_path / "ratings")
    by_glob = _chunked(str(tmp_path / "ratings" / "*.parquet"), weights="w", chunksize=chunksize)
    assert_same_fit(by_glob, memory_fit)
    by_dataset = _chunked(ds.dataset(tmp_path / "ratings"), weights="w", chunksize=chunksize)
    assert_same_fit(by_dataset, memory_fit)
    by_dir = _chunked(tmp_path / "ratings", weights="w", chunksize=chunksize)
    np.testing.assert_array_equal(by_dir.params, by_glob.params)


def test_predictions_over_files_equal_in_memory(tmp_path, frame, memory_fit):
    write_parquet(frame, tmp_path / "ratings")
    res = _chunked(str(tmp_path / "ratings"), weights="w", chunksize=250)
    for which in ("prob", "cumprob", "expected", "linear", "class"):
        with pytest.warns(MissingDataWarning, match="34 row"):
            expected = memory_fit.predict(frame, which=which)
        with pytest.warns(MissingDataWarning, match="34 row") as caught:
            got = res.predict(str(tmp_path / "ratings"), which=which)  # every row of the files
        assert len(caught) == 1
        pd.testing.assert_frame_equal(
            pd.DataFrame(got).reset_index(drop=True),
            pd.DataFrame(expected).reset_index(drop=True),
            rtol=1e-10,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            fitted = res.predict(which=which)  # the fitted rows, numbered in file order
        pd.testing.assert_frame_equal(
            pd.DataFrame(fitted), pd.DataFrame(memory_fit.predict(which=which)), rtol=1e-10
        )
    newdata = frame.iloc[:40]
    pd.testing.assert_frame_equal(res.predict(newdata), memory_fit.predict(newdata), rtol=1e-10)


def test_categorical_parquet_columns_and_ordered_response(tmp_path):
    frame = ratings(1500, seed=4, missing=False)
    frame["y"] = pd.Categorical.from_codes(
        frame["y"] - 1, ["vlow", "low", "mid", "high", "top"], ordered=True
    )
    frame["f"] = pd.Categorical(frame["f"], categories=["e", "d", "c", "b", "a"])
    write_parquet(frame, tmp_path / "cat", n_files=4)
    memory = ordstats.OrdinalModel.from_formula(FORMULA, pd.read_parquet(tmp_path / "cat")).fit()
    res = ordstats.OrdinalModel.from_formula(FORMULA, str(tmp_path / "cat"), chunksize=100).fit()
    assert res.model.levels == ["vlow", "low", "mid", "high", "top"]
    assert "f[T.d]" in res.params.index  # the categories' order sets the reference level
    assert_same_fit(res, memory)


def test_many_levels_in_chunks_equal_banded_in_memory():
    rng = np.random.default_rng(8)
    n = 4000
    x = rng.normal(size=n)
    frame = pd.DataFrame({"y": np.round(x + rng.logistic(size=n), 1), "x": x})
    memory = ordstats.OrdinalModel.from_formula("y ~ x", frame, many_levels=True).fit()
    assert type(memory.covariance).__name__ == "BandedCovariance"
    res = ordstats.OrdinalModel.from_formula("y ~ x", frame, many_levels=True, chunksize=700).fit()
    assert len(res.params) > 100
    np.testing.assert_allclose(res.params, memory.params, rtol=1e-9)
    np.testing.assert_allclose(res.bse, memory.bse, rtol=1e-9)


def test_aliased_column_and_offset_in_chunks(frame):
    data = frame.assign(x3=2.0 * frame["x1"], off=0.1 * frame["x1"])
    with pytest.warns(MissingDataWarning), pytest.warns(CollinearityWarning, match="'x3'"):
        memory = ordstats.OrdinalModel.from_formula("y ~ x1 + x3 + f", data, offset="off").fit()
    with pytest.warns(MissingDataWarning), pytest.warns(CollinearityWarning, match="'x3'"):
        model = ordstats.OrdinalModel.from_formula(
            "y ~ x1 + x3 + f", data, offset="off", chunksize=300
        )
    res = model.fit()
    assert "x3" not in res.params.index
    assert_same_fit(res, memory)


def test_progress_bar_ticks_once_per_pass(frame, capsys, monkeypatch):
    import ordstats.estimation.evaluators as cm

    with pytest.warns(MissingDataWarning):
        model = ordstats.OrdinalModel.from_formula(FORMULA, frame, chunksize=1000)
    model.fit()
    assert capsys.readouterr().err == ""  # not interactive: silent
    monkeypatch.setattr(cm, "is_interactive", lambda: True)
    before = model.evaluator.n_passes
    model.fit(disp=False)
    assert capsys.readouterr().err == ""
    middle = model.evaluator.n_passes
    model.fit()
    err = capsys.readouterr().err
    assert "Newton passes" in err and "loglik=" in err and "max_grad=" in err
    assert f"{model.evaluator.n_passes - middle}pass" in err.replace(" ", "")
    assert middle - before == model.evaluator.n_passes - middle


def test_chunked_model_has_no_rows_in_memory(frame):
    with pytest.warns(MissingDataWarning):
        model = ordstats.OrdinalModel.from_formula(FORMULA, frame, chunksize=1000)
    with pytest.raises(NotFittedError, match="keeps no rows in memory"):
        model.data  # noqa: B018
    assert model.nobs == pytest.approx(len(frame) - 35, abs=1)


# -- bad input ----------------------------------------------------------------


# data changed after the summary pass are seen by a fit that reads them again
# (with the chunk cache, the fit reads the arrays the summary pass kept)


def test_unseen_level_in_a_later_chunk(frame):
    with ordstats.set_options(chunk_cache=False), pytest.warns(MissingDataWarning):
        model = ordstats.OrdinalModel.from_formula(FORMULA, frame.copy(), chunksize=200)
    model.source.frame.loc[2900, "f"] = "zz"
    with pytest.raises(DataError, match=r"level\(s\) 'zz'.*first pass.*rows 2800-2999"):
        model.fit()


def test_file_changed_after_the_first_pass(tmp_path, frame):
    paths = write_parquet(frame, tmp_path / "r")
    with ordstats.set_options(chunk_cache=False), pytest.warns(MissingDataWarning):
        model = ordstats.OrdinalModel.from_formula(FORMULA, str(tmp_path / "r"), chunksize=200)
    frame.iloc[:5].to_parquet(paths[-1], index=False)
    with pytest.raises(DataError, match=r"cannot read '.*part-02\.parquet'"):
        model.fit()


def test_unseen_response_value_in_a_later_chunk(frame):
    with ordstats.set_options(chunk_cache=False), pytest.warns(MissingDataWarning):
        model = ordstats.OrdinalModel.from_formula(FORMULA, frame.copy(), chunksize=500)
    model.source.frame.loc[0, "y"] = 9
    with pytest.raises(DataError, match=r"response 'y' has value\(s\) '9'.*first pass"):
        model.fit()


def test_schema_mismatch_between_files(tmp_path, frame):
    paths = write_parquet(frame.dropna(), tmp_path / "s")
    bad = pd.read_parquet(paths[1]).assign(x1=lambda d: d["x1"].astype(str))
    bad.to_parquet(paths[1], index=False)
    with pytest.raises(DataError, match=r"column 'x1' is (large_)?string in .*01.* but double"):
        ordstats.OrdinalModel.from_formula(FORMULA, str(tmp_path / "s"))


def test_file_without_a_used_column(tmp_path, frame):
    paths = write_parquet(frame.dropna(), tmp_path / "m")
    pd.read_parquet(paths[2]).drop(columns="x2").to_parquet(paths[2], index=False)
    with pytest.raises(DataError, match=r"part-02.parquet' has no column 'x2'"):
        ordstats.OrdinalModel.from_formula(FORMULA, sorted(map(str, paths)))


def test_empty_files(tmp_path, frame):
    paths = write_parquet(frame.dropna(), tmp_path / "e")
    paths[1].write_bytes(b"")
    with pytest.raises(DataError, match=r"part-01.parquet' is empty \(0 bytes\)"):
        ordstats.OrdinalModel.from_formula(FORMULA, str(tmp_path / "e"))
    frame.iloc[:0].to_parquet(tmp_path / "none.parquet", index=False)
    with pytest.raises(DataError, match="no rows"):
        ordstats.OrdinalModel.from_formula(FORMULA, str(tmp_path / "none.parquet"))
    with pytest.raises(DataError, match="no files match"):
        ordstats.OrdinalModel.from_formula(FORMULA, str(tmp_path / "nothing-*.parquet"))


def test_bad_chunked_arguments(frame):
    with pytest.raises(DataError, match="chunksize must be a positive number"):
        ordstats.OrdinalModel.from_formula(FORMULA, frame, chunksize=0)
    with pytest.raises(DataError, match="weights must name a column"):
        ordstats.OrdinalModel.from_formula(FORMULA, frame, chunksize=100, weights=frame["w"])
    with pytest.raises(FormulaError, match=r"'yy' is not a column.*Did you mean 'y'"):
        ordstats.OrdinalModel.from_formula("yy ~ x1", frame, chunksize=100)
    with pytest.raises(SpecificationError, match=r"'sratio' family is not available for data"):
        ordstats.OrdinalModel.from_formula(
            FORMULA, frame, chunksize=100, family="sratio", nominal="~ x1"
        )
    with pytest.raises(SpecificationError, match=r"stateful transforms.*center"):
        ordstats.OrdinalModel.from_formula("y ~ center(x1)", frame.dropna(), chunksize=100)
    # before: poly() failed on the prototype rows, "degree=2 needs more than 2 distinct
    # values of a variable, and one has 1", though x1 has many
    match = r"stateful transforms \('poly\(\)'\) that learn from all rows at once"
    with pytest.raises(SpecificationError, match=match):
        ordstats.OrdinalModel.from_formula("y ~ poly(x1, 2)", frame.dropna(), chunksize=100)
    with pytest.raises(DataError, match="drop them first"):
        ordstats.OrdinalModel.from_formula(FORMULA, frame, chunksize=100, missing="raise")


def test_formula_expressions_and_numeric_factors_in_chunks():
    frame = ratings(1500, seed=3, missing=False)
    frame["k"] = np.arange(len(frame)) % 4
    formula = "y ~ np.exp(x1) + C(k) + f:x2"
    memory = ordstats.OrdinalModel.from_formula(formula, frame).fit()
    res = ordstats.OrdinalModel.from_formula(formula, frame, chunksize=200).fit()
    assert "C(k)[T.3]" in res.params.index and "f[e]:x2" in res.params.index
    assert_same_fit(res, memory)


def test_number_and_its_factor_in_one_formula_in_chunks(tmp_path):
    # y ~ k + C(k): k is the number and C(k) its factor, whose last level is aliased (R's
    # clm: k, factor(k)1..3); read in chunks k became a factor too, so the fit dropped k
    # and named C(k)'s four columns 'k[T.1]'...
    dd = pytest.importorskip("dask.dataframe")
    frame = ratings(1200, seed=4, missing=False)
    frame["k"] = np.arange(len(frame)) % 5
    frame = frame.sort_values("k", kind="stable", ignore_index=True)  # chunks lack levels
    formula = "y ~ x1 + k + C(k) + np.log1p(k):x2"
    with pytest.warns(CollinearityWarning, match=r"'C\(k\)\[T.4\]' is a linear"):
        memory = ordstats.OrdinalModel.from_formula(formula, frame).fit()
    assert list(memory.params.index[4:8]) == ["x1", "k", "C(k)[T.1]", "C(k)[T.2]"]
    files = write_parquet(frame, tmp_path, n_files=3)
    for data, options in [
        (frame, {"chunksize": 150}),
        (files, {"chunksize": 150}),
        (dd.from_pandas(frame, npartitions=4), {}),
    ]:
        with pytest.warns(CollinearityWarning, match=r"'C\(k\)\[T.4\]' is a linear"):
            res = ordstats.OrdinalModel.from_formula(formula, data, **options).fit()
        assert_same_fit(res, memory)


def test_non_finite_transform_in_chunks_is_reported_by_column():
    frame = ratings(1500, seed=3, missing=False)
    formula = "y ~ np.log(x1 + 10) + np.sqrt(x2 + 9.5) + f"
    frame.loc[3, "x1"] = -10.0  # log(0) = -inf
    frame.loc[[3, 700], "x2"] = -9.7  # sqrt(-0.2) = NaN
    with pytest.warns(MissingDataWarning) as memory_warning:
        memory = ordstats.OrdinalModel.from_formula(formula, frame).fit()
    with pytest.warns(MissingDataWarning) as chunked_warning:
        res = ordstats.OrdinalModel.from_formula(formula, frame, chunksize=200).fit()
    for caught in (memory_warning, chunked_warning):
        message = str(caught[0].message)
        assert "2 of 1500 rows" in message
        assert "'np.log(x1 + 10)' (1), 'np.sqrt(x2 + 9.5)' (2)" in message
    assert not [w for w in chunked_warning if w.category is RuntimeWarning]
    assert_same_fit(res, memory)


def test_lr_test_between_chunked_fits_equals_in_memory():
    frame = ratings(2000, seed=2, missing=False)
    fits = {}
    for chunksize in (None, 300):
        full = ordstats.OrdinalModel.from_formula("y ~ x1 + x2 + f", frame, chunksize=chunksize)
        small = ordstats.OrdinalModel.from_formula("y ~ x1 + f", frame, chunksize=chunksize)
        fits[chunksize] = (small.fit(), full.fit())
    chunked = ordstats.lr_test(*fits[300])
    memory = ordstats.lr_test(*fits[None])
    assert chunked.statistic == pytest.approx(memory.statistic, rel=1e-9)
    assert chunked.df == memory.df == 1
    wider = frame.assign(x3=frame.x1**2)
    other = ordstats.OrdinalModel.from_formula("y ~ x2 + g + f + x3", wider, chunksize=300).fit()
    with pytest.raises(SpecificationError, match=r"'x1' is not part of the full model"):
        ordstats.lr_test(fits[300][0], other)


def test_files_without_rows_in_a_glob_are_skipped(tmp_path):
    frame = ratings(900, seed=4, missing=False)
    for suffix, write in (
        ("parquet", lambda part, path: part.to_parquet(path, index=False)),
        ("csv", lambda part, path: part.to_csv(path, index=False)),
    ):
        folder = tmp_path / suffix
        folder.mkdir()
        write(frame.iloc[:0], folder / f"a-empty.{suffix}")  # first: its types say nothing
        write(frame.iloc[:500], folder / f"b.{suffix}")
        write(frame.iloc[:0], folder / f"c-empty.{suffix}")
        write(frame.iloc[500:], folder / f"d.{suffix}")
        with_rows = [str(folder / f"b.{suffix}"), str(folder / f"d.{suffix}")]
        expected = ordstats.OrdinalModel.from_formula(FORMULA, with_rows).fit()
        res = ordstats.OrdinalModel.from_formula(FORMULA, str(folder / f"*.{suffix}")).fit()
        assert_same_fit(res, expected)
        assert res.nobs == 900


def test_a_csv_file_with_another_separator_gets_a_hint(tmp_path, frame):
    frame.head(50).to_csv(tmp_path / "semi.csv", sep=";", index=False)
    with pytest.raises(FormulaError, match=r"one column, 'y;.*pd.read_csv\(path, sep=';'\)"):
        ordstats.OrdinalModel.from_formula(FORMULA, str(tmp_path / "semi.csv"))


@pytest.mark.filterwarnings("error::RuntimeWarning")  # no numpy/pandas warning leaks
@pytest.mark.parametrize("scale", [1e-170, 1e-150, 1e160])
def test_columns_too_large_or_small_for_chunks_are_refused(scale):
    # 1e-170 was dropped as "aliased" (its squares underflow), 1e160 stopped on a
    # non-finite Hessian; in memory both are rescaled and fitted
    frame = ratings(600, seed=8, missing=False).assign(x3=lambda d: d["x1"] * scale)
    memory = ordstats.OrdinalModel.from_formula("y ~ x2 + x3", frame).fit()
    assert np.isfinite(memory.params["x3"])
    with pytest.raises(SpecificationError, match=r"'x3' \(\|x\| up to .*\) are too large or too"):
        ordstats.OrdinalModel.from_formula("y ~ x2 + x3", frame, chunksize=200)
    rescaled = f"y ~ x2 + I(x3 * {1 / scale:g})"
    res = ordstats.OrdinalModel.from_formula(rescaled, frame, chunksize=200).fit()
    assert res.params.iloc[-1] == pytest.approx(memory.params["x3"] * scale, rel=1e-6)


# -- numeric designs are stacked from the columns, without formulaic (issue 25 speed) --


def _arrays_both_ways(frame, spec, monkeypatch):
    from ordstats.data import chunks

    plain = chunks.chunk_arrays(frame, spec)
    with monkeypatch.context() as patched:
        patched.setattr(chunks, "_plain_chunk_arrays", lambda *a, **k: None)
        general = chunks.chunk_arrays(frame, spec)
    return plain, general


@pytest.mark.parametrize(
    ("formula", "kwargs"),
    [
        ("y ~ x1 + x2", {"weights": "w"}),
        ("y ~ x1 + x2", {"offset": "o", "scale": "~ x2"}),
        ("y ~ x2", {"nominal": "~ x1"}),
    ],
)
def test_a_numeric_design_is_taken_from_the_columns_with_the_general_rules(
    formula, kwargs, monkeypatch
):
    frame = ratings(400, seed=4).assign(
        o=lambda d: 0.1 * d["x2"], x1=lambda d: d["x1"].mask(d.index % 7 == 0, np.inf)
    )
    frame.loc[frame.index % 11 == 0, "w"] = 0.0
    frame.loc[frame.index % 13 == 0, "o"] = np.nan
    with pytest.warns(MissingDataWarning):
        model = ordstats.OrdinalModel.from_formula(formula, frame, chunksize=150, **kwargs)
    spec = model.evaluator.spec
    from ordstats.data.chunks import _plain_chunk_arrays

    assert _plain_chunk_arrays(frame, spec) is not None  # the fast path applies here
    plain, general = _arrays_both_ways(frame, spec, monkeypatch)
    for name in ("y", "X", "weights", "offset", "nominal", "scale", "kept"):
        np.testing.assert_array_equal(getattr(plain, name), getattr(general, name), err_msg=name)
    assert plain.X.flags["C_CONTIGUOUS"]
    pd.testing.assert_series_equal(plain.bad, general.bad)
    assert (plain.n_bad, plain.n_rows) == (general.n_bad, general.n_rows)


def test_a_numeric_response_and_clean_columns_skip_the_flags_with_the_general_rules(monkeypatch):
    """Without weights or offset, a numeric response is checked as the predictors are;
    a column whose values are all finite gets no flags."""
    frame = ratings(400, seed=6, missing=False)
    frame = frame.assign(
        y=frame["y"].cat.codes.astype(float) if hasattr(frame["y"], "cat") else frame["y"]
    )
    model = ordstats.OrdinalModel.from_formula("y ~ x1 + x2", frame, chunksize=150)
    spec = model.evaluator.spec
    dirty = frame.assign(
        y=frame["y"].mask(frame.index % 9 == 0), x2=frame["x2"].mask(frame.index % 7 == 0, -np.inf)
    )
    from ordstats.data.chunks import _plain_chunk_arrays

    for chunk in (frame, dirty):
        assert _plain_chunk_arrays(chunk, spec) is not None  # the fast path applies here
        plain, general = _arrays_both_ways(chunk, spec, monkeypatch)
        for name in ("y", "X", "weights", "offset", "kept"):
            np.testing.assert_array_equal(getattr(plain, name), getattr(general, name), name)
        pd.testing.assert_series_equal(plain.bad, general.bad)
        assert (plain.n_bad, plain.n_rows) == (general.n_bad, general.n_rows)
    assert plain.bad["y"] == 45 and plain.bad["x2"] == 58 and plain.bad["x1"] == 0


def test_non_finite_flags_are_none_for_finite_values_even_when_their_sum_overflows():
    from ordstats.design.chunks import non_finite_flags

    assert non_finite_flags(np.array([1.0, -2.0, 3.5])) is None
    assert non_finite_flags(np.full(10, 1.7e308)) is None  # the sum is inf, every value finite
    assert non_finite_flags(np.empty(0)) is None
    np.testing.assert_array_equal(
        non_finite_flags(np.array([1.0, np.nan, np.inf, -np.inf, 2.0])),
        [False, True, True, True, False],
    )


def test_designs_with_factors_or_transforms_take_the_general_path():
    from ordstats.data.chunks import _plain_chunk_arrays

    frame = ratings(300, seed=5, missing=False)
    for formula in ("y ~ x1 + f", "y ~ x1 + I(x2 * 2)", "y ~ x1 * x2"):
        model = ordstats.OrdinalModel.from_formula(formula, frame, chunksize=100)
        assert _plain_chunk_arrays(frame, model.evaluator.spec) is None, formula


def test_the_reservoir_keeps_the_smallest_keys_as_a_full_sort_does():
    from ordstats.data.reservoir import _smallest

    rng = np.random.default_rng(3)
    for n, capacity, per_level in [(5000, 300, 20), (5000, 4990, 3), (200, 500, 5), (3000, 50, 40)]:
        keys = rng.integers(0, 400, n).astype(np.uint64)  # many ties
        response = pd.Series(rng.choice(list("abcd"), p=[0.9, 0.05, 0.04, 0.01], size=n))
        order = np.argsort(keys, kind="stable")
        codes = pd.factorize(response)[0][order]
        rank = pd.Series(codes).groupby(codes).cumcount().to_numpy()
        expected = np.zeros(n, dtype=bool)
        expected[order[(np.arange(n) < capacity) | (rank < per_level)]] = True
        np.testing.assert_array_equal(_smallest(keys, response, capacity, per_level), expected)


@pytest.mark.parametrize("chunk", [97, 500, 4000])
def test_merged_chunk_reservoirs_are_the_reservoir_of_one_chunk(chunk):
    """Many merges of full reservoirs, with ties of keys and a rare response value that
    the capacity alone would leave short: the rows of the whole data's reservoir."""
    from ordstats.data.chunks import ColumnPlan
    from ordstats.data.parts import sum_parts
    from ordstats.data.reservoir import sample_chunk

    rng = np.random.default_rng(11)
    n = 12_000
    y = rng.choice(["a", "b", "c", "rare"], p=[0.5, 0.3, 0.194, 0.006], size=n)
    frame = pd.DataFrame({"y": y, "x": rng.integers(0, 3000, n).astype(float)})  # ties
    plan = ColumnPlan(response="y", columns=["y", "x"], factors=[])
    whole = sample_chunk(frame, plan, 300, 25)
    pieces = [sample_chunk(frame.iloc[k : k + chunk], plan, 300, 25) for k in range(0, n, chunk)]
    merged = sum_parts(pieces)
    np.testing.assert_array_equal(merged.keys, whole.keys)
    pd.testing.assert_frame_equal(merged.rows, whole.rows)
    assert (frame["y"] == "rare").sum() > 50
    assert (merged.rows["y"] == "rare").sum() == 25  # the rare value's 25 smallest


def test_the_reservoir_is_the_same_however_the_rows_are_chunked(monkeypatch):
    """Merging chunk samples (lazily, rows copied out only when half a chunk is dropped)
    keeps the rows of smallest key of all complete rows, whatever the chunk size."""
    import ordstats.estimation.evaluators as evaluators
    from ordstats.data.reservoir import row_keys

    monkeypatch.setattr(evaluators, "RESERVOIR_ROWS", 400)
    monkeypatch.setattr(evaluators, "MIN_ROWS_PER_LEVEL", 5)
    frame = ratings(5000, seed=8)
    draws = []
    for chunksize in (150, 1000, 5000):
        with pytest.warns(MissingDataWarning):
            model = ordstats.OrdinalModel.from_formula(FORMULA, frame, chunksize=chunksize)
        sample = model.evaluator.reader.sample
        assert len(sample) == 400  # no level is short of rows here
        rows, topped_up = sample.draw(300)
        assert not topped_up
        draws.append(rows)
    for rows in draws[1:]:
        pd.testing.assert_frame_equal(rows, draws[0])
    columns = list(draws[0].columns)
    clean = frame[columns].dropna().reset_index(drop=True)
    keys = row_keys(clean)
    expected = clean.take(np.argsort(keys, kind="stable")[:300]).reset_index(drop=True)
    pd.testing.assert_frame_equal(draws[0], expected)


@pytest.mark.parametrize("link", ["logit", "cloglog", "loglog"])
def test_a_large_constant_offset_starts_the_chunked_fit_where_the_rows_are(link):
    """With an offset of 30 (100 for loglog) the chunked fit started its thresholds at
    the marginal ones, where every row sits in the top category and the likelihood is
    flat: it stopped at logLik -1420 (code 3); in memory the start is shifted by the
    mean offset.  Now the summary pass adds up the offsets for the same shift."""
    rng = np.random.default_rng(0)
    data = pd.DataFrame({"x1": rng.normal(size=80), "x2": rng.normal(size=80)})
    data["y"] = np.searchsorted([-1, 0, 1], data.x1 - 0.5 * data.x2 + rng.logistic(size=80))
    data["o"] = 100.0 if link == "loglog" else 30.0
    memory = ordstats.OrdinalModel.from_formula("y ~ x1 + x2", data, offset="o", link=link)
    chunked = ordstats.OrdinalModel.from_formula(
        "y ~ x1 + x2", data, offset="o", link=link, chunksize=20
    )
    expected, got = memory.fit(), chunked.fit()
    assert got.converged
    assert got.llf == pytest.approx(expected.llf, rel=1e-9)
    np.testing.assert_allclose(got.params, expected.params, rtol=1e-6)


def _shifted_ratings(n: int, shift: float) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    data = pd.DataFrame(
        {"x1": rng.normal(size=n), "x2": rng.normal(size=n), "g": rng.integers(0, 15, n)}
    )
    data["y"] = np.searchsorted([-1, 0, 1], data.x1 - 0.5 * data.x2 + rng.logistic(size=n))
    return data.assign(x1=data["x1"] + shift)


@pytest.mark.parametrize("shift", [1e7, 1e9])
def test_a_column_far_from_zero_is_fitted_in_chunks_as_in_memory(shift):
    """x1 + 1e7: the chunks' sums of squares lost x1's variation to rounding (it was
    dropped as aliased); with centred moments it was kept, but the chunked Hessian in
    the user's parameters is singular to rounding, so the standard errors were NaN
    (at + 1e9 the fit did not converge).  In memory the fit works in a shifted basis;
    the chunked passes now evaluate the likelihood in the same basis."""
    data = _shifted_ratings(80, shift)
    memory = ordstats.OrdinalModel.from_formula("y ~ x1 + x2", data).fit()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        chunked = ordstats.OrdinalModel.from_formula("y ~ x1 + x2", data, chunksize=20).fit()
    assert chunked.converged
    assert chunked.llf == pytest.approx(memory.llf, rel=1e-9)
    np.testing.assert_allclose(chunked.params, memory.params, rtol=1e-8)
    np.testing.assert_allclose(chunked.bse, memory.bse, rtol=1e-7)
    unshifted = ordstats.OrdinalModel.from_formula("y ~ x1 + x2", _shifted_ratings(80, 0.0)).fit()
    np.testing.assert_allclose(chunked.bse[["x1", "x2"]], unshifted.bse[["x1", "x2"]], rtol=1e-6)


def test_sandwich_and_expected_covariances_in_chunks_with_a_column_far_from_zero():
    """The streamed score sums were in the user's parameters, where the bread of x1 +
    1e8 is ill-conditioned: HC0 standard errors were NaN (negative variances); the
    expected information was singular to rounding on every path."""
    data = _shifted_ratings(300, 1e8)
    memory = ordstats.OrdinalModel.from_formula("y ~ x1 + x2", data).fit()
    chunked = ordstats.OrdinalModel.from_formula("y ~ x1 + x2", data, chunksize=40).fit()
    for kind, kwds in [("HC0", None), ("HC1", None), ("cluster", {"groups": "g"})]:
        expected = memory.get_robustcov_results(kind, cov_kwds=kwds).bse
        got = chunked.get_robustcov_results(kind, cov_kwds=kwds).bse
        np.testing.assert_allclose(got, expected, rtol=1e-6, err_msg=kind)
    unshifted = ordstats.OrdinalModel.from_formula("y ~ x1 + x2", _shifted_ratings(300, 0.0)).fit()
    reference = np.sqrt(np.diag(unshifted.expected_covariance.matrix))[-2:]
    for fit in (memory, chunked):
        se = np.sqrt(np.diag(fit.expected_covariance.matrix))[-2:]
        np.testing.assert_allclose(se, reference, rtol=1e-6)


@pytest.mark.parametrize("chunksize", [None, 40])
def test_brant_test_does_not_depend_on_a_shift_of_a_column(chunksize):
    """Brant's joint covariance was computed from the raw design: with x1 + 1e8 the
    statistics were 4.71, 0.64, 3.99 in memory and 5.07, 0.18, 1.25 in chunks, where
    the unshifted data give 4.23, 0.16, 3.70 (a shift changes no slope)."""
    options = {} if chunksize is None else {"chunksize": chunksize}
    shifted = _shifted_ratings(300, 1e8)
    got = ordstats.OrdinalModel.from_formula("y ~ x1 + x2", shifted, **options).fit().brant_test()
    unshifted = _shifted_ratings(300, 0.0)
    expected = ordstats.OrdinalModel.from_formula("y ~ x1 + x2", unshifted).fit().brant_test()
    np.testing.assert_allclose(got["chi2"], expected["chi2"], rtol=1e-6)


def test_a_shifted_column_is_not_taken_for_separation():
    """In memory, x1 + 1e8 fitted right but warned of complete separation by x1: the
    separation LP read the raw column, where rounding separates; it now reads the
    shifted basis's columns, as the fit does."""
    data = _shifted_ratings(300, 1e8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit = ordstats.OrdinalModel.from_formula("y ~ x1 + x2", data).fit()
    assert fit.converged


@pytest.mark.parametrize("chunksize", [None, 20])
def test_a_column_constant_to_rounding_is_dropped_in_chunks_as_in_memory(chunksize):
    """x1 + 1e10 varies by 1e-10 of its size: in memory it counts as constant (as R's
    qr) and is dropped with a note saying so; the chunks' centred moments kept it."""
    data = _shifted_ratings(80, 1e10)
    options = {} if chunksize is None else {"chunksize": chunksize}
    with pytest.warns(CollinearityWarning, match="'x1' varies by only 9.6e-11 of its size"):
        fit = ordstats.OrdinalModel.from_formula("y ~ x1 + x2", data, **options).fit()
    assert "x1" not in fit.params.index


def test_centred_moments_of_chunks_add_up_to_the_whole():
    from ordstats.data.chunks import CentredMoments

    rng = np.random.default_rng(1)
    design = rng.normal(size=(300, 3)) * [1.0, 1e-3, 5.0] + [1e8, 0.0, -3.0]
    parts = [CentredMoments.of(design[a:b]) for a, b in ((0, 7), (7, 7), (7, 180), (180, 300))]
    total = sum(parts[1:], parts[0])
    centred = design - design.mean(axis=0)
    np.testing.assert_allclose(total.means, design.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(total.m2, centred.T @ centred, rtol=1e-9, atol=1e-6)


def test_a_caller_s_function_named_like_a_column_is_the_column_after_a_chunked_fit(tmp_path):
    # data take precedence over the caller's names: the fit read the column f, but the
    # chunked model kept the caller's f in its formula context, so the results methods
    # took f for the function ("the model does not use 'f'"; emmeans: int * function)
    frame = ratings(600, seed=5, missing=False)

    def f() -> None:  # the caller's function of a column's name
        return None

    assert callable(f)
    memory = ordstats.OrdinalModel.from_formula("y ~ x1 + f", frame).fit()
    files = write_parquet(frame, tmp_path, n_files=2)
    for data, options in [(frame, {"chunksize": 150}), (files, {})]:
        res = ordstats.OrdinalModel.from_formula("y ~ x1 + f", data, **options).fit()
        assert_same_fit(res, memory)
        for call in (
            lambda r: r.avg_comparisons(variables="f"),
            lambda r: r.emmeans("f").summary_frame(),
            lambda r: r.joint_tests(),
        ):
            got, want = call(res), call(memory)
            np.testing.assert_allclose(
                got.select_dtypes("number").to_numpy(dtype=float),
                want.select_dtypes("number").to_numpy(dtype=float),
                rtol=1e-6,
            )
