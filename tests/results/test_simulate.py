"""res.simulate(): new responses drawn from the fitted probabilities (R's simulate(polr))."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ordstats import OrdinalMixedModel, OrdinalModel, datasets
from ordstats.errors import SpecificationError


@pytest.fixture(scope="module")
def wine_fit():
    return OrdinalModel.from_formula("rating ~ temp + contact", datasets.load("wine")).fit()


def test_draws_follow_each_rows_fitted_probabilities(wine_fit) -> None:
    sims = wine_fit.simulate(nsim=4000, seed=11)
    assert list(sims.columns[:2]) == ["sim_1", "sim_2"] and sims.shape == (72, 4000)
    assert isinstance(sims["sim_1"].dtype, pd.CategoricalDtype) and sims["sim_1"].cat.ordered
    assert list(sims["sim_1"].cat.categories) == ["1", "2", "3", "4", "5"]
    prob = wine_fit.predict(which="prob").to_numpy()
    codes = np.stack([sims[c].cat.codes.to_numpy() for c in sims.columns], axis=1)
    # the 18 rows of each temp x contact cell share one distribution: pool them
    for row in (0, 4):
        same = np.all(np.isclose(prob, prob[row]), axis=1)
        counts = np.bincount(codes[same].ravel(), minlength=5)
        expected = prob[row] * counts.sum()
        assert stats.chisquare(counts, expected).pvalue > 1e-4


def test_a_seed_repeats_the_draws_and_the_index_is_the_fits(wine_fit) -> None:
    first = wine_fit.simulate(nsim=3, seed=5)
    pd.testing.assert_frame_equal(first, wine_fit.simulate(nsim=3, seed=5))
    assert not first.equals(wine_fit.simulate(nsim=3, seed=6))
    rng = np.random.default_rng(5)
    pd.testing.assert_frame_equal(first, wine_fit.simulate(nsim=3, seed=rng))
    data = datasets.load("wine").set_index(pd.Index(range(100, 172)))
    res = OrdinalModel.from_formula("rating ~ temp", data).fit()
    assert list(res.simulate(seed=1).index) == list(range(100, 172))


def test_extreme_rows_draw_their_certain_level() -> None:
    wine = datasets.load("wine")
    offset = np.zeros(len(wine))
    top, bottom = wine.index[wine["rating"] == "5"][0], wine.index[wine["rating"] == "1"][0]
    offset[top], offset[bottom] = 60.0, -60.0  # P(top level) and P(bottom level) round to 1
    res = OrdinalModel.from_formula("rating ~ temp", wine.assign(o=offset), offset="o").fit()
    sims = res.simulate(nsim=200, seed=0)
    assert (sims.loc[top] == "5").all() and (sims.loc[bottom] == "1").all()


def test_simulate_refuses_what_it_cannot_describe(wine_fit) -> None:
    with pytest.raises(SpecificationError, match="nsim"):
        wine_fit.simulate(nsim=0)
    wine = datasets.load("wine")
    weighted = OrdinalModel.from_formula("rating ~ temp", wine.assign(w=2.0), weights="w").fit()
    with pytest.raises(SpecificationError, match="weighted"):
        weighted.simulate()
    mixed = OrdinalMixedModel.from_formula("rating ~ temp + (1|judge)", wine).fit()
    with pytest.raises(SpecificationError, match="random effects"):
        mixed.simulate()


def test_a_dask_fit_draws_partition_by_partition_with_the_in_memory_distribution() -> None:
    dd = pytest.importorskip("dask.dataframe")
    wine = datasets.load("wine")
    fit = OrdinalModel.from_formula("rating ~ temp + contact", dd.from_pandas(wine, npartitions=3))
    lazy = fit.fit().simulate(nsim=2000, seed=3)
    assert hasattr(lazy, "compute")  # the draws stay distributed until asked for
    sims = lazy.compute()
    pd.testing.assert_frame_equal(sims, lazy.compute())  # the seed fixes every partition
    assert list(sims.index) == list(wine.index) and sims.shape == (72, 2000)
    memory = OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    prob = memory.predict(which="prob").to_numpy()
    codes = np.stack([sims[c].cat.codes.to_numpy() for c in sims.columns], axis=1)
    same = np.all(np.isclose(prob, prob[0]), axis=1)
    counts = np.bincount(codes[same].ravel(), minlength=5)
    assert stats.chisquare(counts, prob[0] * counts.sum()).pvalue > 1e-4
