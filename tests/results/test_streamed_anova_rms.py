"""anova(type=...) and lrm_stats()/orm_stats() of fits read in chunks and from Dask.

These are sums over the rows (``X'X`` of the design, a histogram of the
predicted probabilities crossed with the response, the distinct linear
predictors with their counts, the score at the null), so a fit reading its
rows in chunks (a DataFrame in 3 chunks, a Dask DataFrame in 2 partitions)
gives the in-memory numbers.  Before, each refused: "needs the design's rows
in memory".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats import OrdinalModel, datasets
from ordstats.errors import SpecificationError
from ordstats.results.rms_stats import row_sums
from tests._chunk_data import FORMULA, ratings

RTOL = 1e-10

#: (formula, data, options): wine and soup as R's examples, housing with frequency weights
CASES: dict[str, tuple[str, Callable[[], pd.DataFrame], dict[str, Any]]] = {
    "wine": ("rating ~ temp * contact", lambda: datasets.load("wine"), {}),
    "housing": ("Sat ~ Infl * Type + Cont", lambda: datasets.load("housing"), {"weights": "Freq"}),
    "soup": ("SURENESS ~ PROD * GENDER + DAY", lambda: datasets.load("soup"), {}),
    # continuous predictors: as many distinct linear predictors as rows
    "ratings": (FORMULA, lambda: ratings(600, seed=5, missing=False), {}),
}


def _fits(name: str, engine: str) -> tuple[Any, Any]:
    formula, load, options = CASES[name]
    data = load()
    memory = OrdinalModel.from_formula(formula, data, **options).fit()
    if engine == "dask":
        dd = pytest.importorskip("dask.dataframe")
        source: Any = dd.from_pandas(data, npartitions=2)
        streamed = OrdinalModel.from_formula(formula, source, **options).fit()
    else:
        chunksize = -(-len(data) // 3)  # three chunks
        streamed = OrdinalModel.from_formula(formula, data, chunksize=chunksize, **options).fit()
    assert not streamed.model.evaluator.keeps_rows
    return memory, streamed


@pytest.fixture(
    scope="module",
    params=[(n, e) for n in CASES for e in ("chunks", "dask")],
    ids=lambda p: "-".join(p),
)
def fits(request: pytest.FixtureRequest) -> tuple[Any, Any]:
    return _fits(*request.param)


@pytest.mark.parametrize("kind", ["I", "II", "III", "marginal", "2b"])
def test_wald_anova_of_a_streamed_fit_is_the_memory_one(fits, kind) -> None:
    memory, streamed = fits
    expected = ordstats.anova(memory, type=kind)
    got = ordstats.anova(streamed, type=kind)
    pd.testing.assert_index_equal(got.index, expected.index)
    np.testing.assert_allclose(got.to_numpy(), expected.to_numpy(), rtol=RTOL)
    assert got.attrs["heading"] == expected.attrs["heading"]


@pytest.mark.parametrize("kind", ["II", "III"])
def test_lr_anova_of_a_streamed_fit_refits_its_columns(fits, kind) -> None:
    """The refits drop the term's columns of the fit read in chunks (car's refits)."""
    memory, streamed = fits
    expected = ordstats.anova(memory, type=kind, test="LR")
    got = ordstats.anova(streamed, type=kind, test="LR")
    pd.testing.assert_index_equal(got.index, expected.index)
    np.testing.assert_allclose(got.to_numpy(), expected.to_numpy(), rtol=RTOL)


def test_lrm_stats_of_a_streamed_fit_are_the_memory_ones(fits) -> None:
    memory, streamed = fits
    expected, got = memory.lrm_stats(), streamed.lrm_stats()
    pd.testing.assert_index_equal(got.index, expected.index)
    # Max Deriv is each fit's own last gradient
    keep = expected.index != "Max Deriv"
    np.testing.assert_allclose(got[keep].to_numpy(), expected[keep].to_numpy(), rtol=RTOL)


def test_orm_stats_of_a_streamed_fit_are_the_memory_ones(fits) -> None:
    memory, streamed = fits
    if memory.model.has_weights:
        for fit in (memory, streamed):
            with pytest.raises(SpecificationError, match="no weights"):
                fit.orm_stats()
        return
    expected, got = memory.orm_stats(), streamed.orm_stats()
    pd.testing.assert_index_equal(got.index, expected.index)
    keep = expected.index != "Max Deriv"
    np.testing.assert_allclose(got[keep].to_numpy(), expected[keep].to_numpy(), rtol=RTOL)


def test_rms_stats_of_a_censored_response_read_in_chunks_are_refused() -> None:
    """The pass sees the chunks' censored rows and says so (before: 'in memory')."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=120)
    upper = np.round(x + rng.normal(size=120), 1)
    frame = pd.DataFrame({"lo": upper - (rng.random(120) < 0.3), "hi": upper, "x": x})
    res = OrdinalModel.from_formula(
        "Censored(lo, hi) ~ x", frame, many_levels=True, chunksize=50
    ).fit()
    for stats_of in (res.lrm_stats, res.orm_stats):
        with pytest.raises(SpecificationError, match=r"uncensored response; this .* censored"):
            stats_of()


def test_rms_row_sums_added_chunk_by_chunk_keep_few_blocks() -> None:
    """Adding 64 chunks one by one gives the sums of all rows at once, in few sorted blocks
    (each row merged about log2(64) times, not once per chunk)."""
    res = OrdinalModel.from_formula(FORMULA, ratings(640, seed=4, missing=False)).fit()
    data = res.model.evaluator.reduce_rows(lambda rows: rows)
    beta = res.params.to_numpy()[res.model.problem.layout.beta]
    args = (beta, float(res.thresholds["estimate"].iloc[1]), 2, res.model.link)
    whole = row_sums(data, *args)
    total = None
    for rows in np.array_split(np.arange(len(data.y)), 64):
        chunk = replace(data, y=data.y[rows], X=data.X[rows], weights=data.weights[rows])
        chunk = replace(chunk, offset=data.offset[rows])
        part = row_sums(chunk, *args)
        total = part if total is None else total + part
    assert total is not None and len(total.distinct) <= 7
    # X @ beta of a block of rows may differ from that of all rows in the last bit
    np.testing.assert_allclose(total.pairs, whole.pairs, rtol=1e-14)
    np.testing.assert_array_equal(total.table, whole.table)
    assert total.brier == pytest.approx(whole.brier, rel=1e-12)
