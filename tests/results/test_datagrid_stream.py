"""datagrid() and newdata="mean" of fits read in chunks: one pass, the in-memory grid."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats.errors import MissingDataWarning, OrdstatsError
from tests._chunk_data import FORMULA, ratings

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")


@pytest.fixture(scope="module")
def frame():
    return ratings(1500, seed=3)


def _fit(data, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingDataWarning)
        return ordstats.OrdinalModel.from_formula(FORMULA, data, weights="w", **kw).fit()


@pytest.fixture(scope="module")
def memory(frame):
    return _fit(frame)


@pytest.fixture(scope="module", params=["chunked", "dask"])
def streamed(request, frame):
    if request.param == "chunked":
        return _fit(frame, chunksize=500)
    with dask.config.set(scheduler="synchronous"):
        return _fit(dd.from_pandas(frame, npartitions=2))


def test_datagrid_of_a_streamed_fit_equals_in_memory(memory, streamed):
    expected = ordstats.datagrid(memory, x1=[0.0, 1.0], g=["hi"])
    got = ordstats.datagrid(streamed, x1=[0.0, 1.0], g=["hi"])
    pd.testing.assert_frame_equal(got, expected, rtol=1e-10)


def test_predictions_at_the_mean_of_a_streamed_fit_equal_in_memory(memory, streamed):
    expected = memory.predictions(newdata="mean")
    got = streamed.predictions(newdata="mean")
    pd.testing.assert_frame_equal(got, expected, rtol=1e-8)


@pytest.mark.parametrize(
    ("categories", "mode"),
    [(None, "b"), (["c", "a", "b"], "a")],  # text: the level seen first; else the first category
)
def test_mode_ties_are_broken_as_in_memory(categories, mode):
    rng = np.random.default_rng(1)
    h = np.repeat(["b", "a", "c"], [250, 250, 100])  # b and a tie, b seen first
    frame = pd.DataFrame(
        {
            "y": rng.integers(1, 4, len(h)),
            "x": rng.normal(size=len(h)),
            "h": h if categories is None else pd.Categorical(h, categories=categories),
        }
    )
    memory = ordstats.OrdinalModel.from_formula("y ~ x + h", frame).fit()
    chunked = ordstats.OrdinalModel.from_formula("y ~ x + h", frame, chunksize=200).fit()
    expected = ordstats.datagrid(memory)
    assert expected["h"].iloc[0] == mode
    pd.testing.assert_frame_equal(ordstats.datagrid(chunked), expected, rtol=1e-10)


def test_datagrid_checks_given_levels_against_the_streamed_rows(streamed):
    with pytest.raises(OrdstatsError, match=r"'f' has no level\(s\) \['z'\]"):
        ordstats.datagrid(streamed, f=["z"])


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"grid_type": "counterfactual", "g": ["lo"]}, "copies every estimation row"),
        ({"x1": np.unique}, "'x1' given as a function would read the whole column"),
    ],
)
def test_what_needs_every_row_in_memory_says_so(streamed, kw, match):
    with pytest.raises(OrdstatsError, match=match):
        ordstats.datagrid(streamed, **kw)
