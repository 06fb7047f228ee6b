"""emmeans() and joint_tests() on fits read in chunks: the reference grid from one pass.

The grid needs from the estimation rows only the factors' levels, the numeric
predictors' means and (for weights other than "equal") the rows per cell;
fits read in chunks of a DataFrame, from Parquet files or from Dask get them
in one streaming pass.  Evaluated at the same estimates, the tables are the
in-memory ones bit for bit (the means are correctly rounded sums).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from ordstats import OrdinalModel
from ordstats.errors import OrdstatsError
from ordstats.results.margins.emmeans import emmeans, joint_tests
from ordstats.results.margins.grid_rows import exact_sum_parts, frame_summary

FORMULA = "rating ~ temp * contact + x + np.log(x + 1) + z"


@pytest.fixture(scope="module")
def data(wine):
    n = len(wine)
    return wine.assign(x=np.linspace(0.0, 1.0, n) ** 2 + 0.1, z=np.sin(np.arange(n)))


@pytest.fixture(scope="module")
def fits(data, tmp_path_factory):
    memory = OrdinalModel.from_formula(FORMULA, data).fit()
    parquet = tmp_path_factory.mktemp("emm") / "rows.parquet"
    data.to_parquet(parquet, index=False)
    streamed = {
        "chunksize": OrdinalModel.from_formula(FORMULA, data, chunksize=11).fit(),
        "parquet": OrdinalModel.from_formula(FORMULA, str(parquet), chunksize=13).fit(),
    }
    dd = pytest.importorskip("dask.dataframe")
    streamed["dask"] = OrdinalModel.from_formula(FORMULA, dd.from_pandas(data, npartitions=4)).fit()
    return memory, streamed


CALLS = {
    "equal": {"specs": "temp"},
    "outer": {"specs": "temp", "weights": "outer"},
    "proportional": {"specs": "contact", "weights": "proportional"},
    "cells, prob": {"specs": "temp", "weights": "cells", "mode": "prob"},
    "flat, by": {"specs": "contact", "by": "temp", "weights": "flat"},
    "cum.prob": {"specs": "~ cut | temp", "mode": "cum.prob", "weights": "proportional"},
    "at": {"specs": "temp", "at": {"x": [0.2, 0.5], "contact": ["yes"]}},
    "median": {"specs": "temp", "cov_reduce": "median", "weights": "outer"},
    "function": {"specs": "temp", "cov_reduce": lambda v: np.quantile(v, [0.25, 0.75])},
}


@pytest.mark.parametrize("case", list(CALLS))
@pytest.mark.parametrize("engine", ["chunksize", "parquet", "dask"])
def test_streamed_grid_gives_the_in_memory_means_exactly(fits, engine, case):
    memory, streamed = fits
    theta, cov = memory.margins_params(), memory.margins_covariance()
    expected = emmeans(memory, **CALLS[case], params=theta, cov=cov).summary_frame()
    got = emmeans(streamed[engine], **CALLS[case], params=theta, cov=cov).summary_frame()
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


@pytest.mark.parametrize("engine", ["chunksize", "parquet", "dask"])
def test_streamed_joint_tests_are_the_in_memory_ones(fits, engine):
    memory, streamed = fits
    theta, cov = memory.margins_params(), memory.margins_covariance()
    for by in (None, "contact"):
        expected = joint_tests(memory, by=by, params=theta, cov=cov)
        got = joint_tests(streamed[engine], by=by, params=theta, cov=cov)
        pd.testing.assert_frame_equal(got, expected, check_exact=True)


@pytest.mark.parametrize("engine", ["chunksize", "dask"])
def test_methods_on_streamed_fits_match_memory(fits, engine):
    memory, streamed = fits
    fit = streamed[engine]
    expected = memory.emmeans("temp", weights="proportional").pairs().summary_frame()
    got = fit.emmeans("temp", weights="proportional").pairs().summary_frame()
    pd.testing.assert_frame_equal(got, expected, rtol=1e-8)
    pd.testing.assert_frame_equal(fit.joint_tests(), memory.joint_tests(), rtol=1e-7)


def test_the_grid_is_one_pass_kept_on_the_fit(data):
    fit = OrdinalModel.from_formula(FORMULA, data, chunksize=10).fit()
    before = fit.model.evaluator.n_passes
    fit.emmeans("temp", weights="outer")
    assert fit.model.evaluator.n_passes == before + 1
    fit.emmeans("contact", by="temp", mode="prob")
    fit.joint_tests()
    assert fit.model.evaluator.n_passes == before + 1
    fit.emmeans("temp", cov_reduce="median")  # the column's values: one more pass
    assert fit.model.evaluator.n_passes == before + 2


def test_data_still_overrides_the_rows(fits, data):
    memory, streamed = fits
    rows = data.iloc[:40]
    expected = memory.emmeans("temp", weights="cells", data=rows).summary_frame()
    got = streamed["chunksize"].emmeans("temp", weights="cells", data=rows).summary_frame()
    pd.testing.assert_frame_equal(got, expected, rtol=1e-8)


def test_removed_rows_still_say_to_pass_data(data):
    fit = OrdinalModel.from_formula(FORMULA, data).fit()
    fit.remove_data()
    with pytest.raises(OrdstatsError, match=r"no longer holds its estimation rows.*data="):
        fit.emmeans("temp")


# -- the exact sums the means come from ------------------------------------------------------


def test_exact_sum_parts_add_up_to_the_exact_sum():
    values = np.array([1e16, 1.0, -1e16, 3.0, 1e-20, 2.0**-60])
    parts = exact_sum_parts(values)
    assert math.fsum(parts) == math.fsum(values)
    # split anywhere, the parts of the pieces still round to the whole's sum
    for cut in range(len(values) + 1):
        pieces = exact_sum_parts(values[:cut]) + exact_sum_parts(values[cut:])
        assert math.fsum(pieces) == math.fsum(values)


def test_summaries_of_chunks_add_up_to_the_frame_summary(data):
    names = ["temp", "contact", "x", "z"]
    whole = frame_summary(data, names)
    pieces = sum(
        (frame_summary(data.iloc[i : i + 7], names) for i in range(7, len(data), 7)),
        frame_summary(data.iloc[:7], names),
    )
    assert pieces.n == whole.n
    for name in ("x", "z"):
        assert pieces.mean(name) == whole.mean(name)
    for name in ("temp", "contact"):
        assert pieces.levels(name) == whole.levels(name)
    pd.testing.assert_series_equal(pieces.counts.sort_index(), whole.counts.sort_index())


def test_text_factors_of_chunks_sort_as_in_memory(data):
    text = data.assign(temp=data["temp"].astype(str)).iloc[::-1]
    names = ["temp", "x"]
    pieces = frame_summary(text.iloc[:30], names) + frame_summary(text.iloc[30:], names)
    assert pieces.levels("temp") == ["cold", "warm"]
