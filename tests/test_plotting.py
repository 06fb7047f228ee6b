"""Plots draw what the results say (checked on the Agg backend, nothing saved)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats import plotting

mpl = pytest.importorskip("matplotlib")
mpl.use("Agg")
plt = pytest.importorskip("matplotlib.pyplot")


@pytest.fixture(scope="module")
def res(wine):
    data = wine.assign(x=np.linspace(-1, 1, 72))
    return ordstats.OrdinalModel.from_formula("rating ~ temp + contact + x", data).fit()


def test_stacked_probabilities_over_a_numeric_grid(res):
    grid = pd.DataFrame({"x": np.linspace(-2, 2, 9), "temp": "warm", "contact": "no"})
    fig, ax = plt.subplots()
    plotting.plot_probabilities(res, grid, x="x", ax=ax)
    polys = ax.collections
    assert len(polys) == 5  # one band per level
    top = polys[-1].get_paths()[0].vertices[:, 1].max()
    assert top == pytest.approx(1.0)
    plt.close(fig)


def test_line_probabilities_for_a_factor(res):
    grid = pd.DataFrame({"temp": ["cold", "warm"], "contact": "no", "x": 0.0})
    fig, ax = plt.subplots()
    plotting.plot_probabilities(res, grid, x="temp", kind="line", ax=ax)
    prob = res.predict(grid)
    lines = ax.get_lines()
    assert len(lines) == 5
    np.testing.assert_allclose(lines[0].get_ydata(), prob["1"])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["cold", "warm"]
    plt.close(fig)


def test_forest_plot_of_odds_ratios(res):
    fig, ax = plt.subplots()
    plotting.plot_coefficients(res, odds_ratios=True, ax=ax)
    assert ax.get_xscale() == "log"
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == list(res.odds_ratios().index)  # first effect at the top
    plt.close(fig)


def test_bad_plot_arguments(res):
    grid = pd.DataFrame({"temp": ["cold"], "contact": "no", "x": 0.0})
    with pytest.raises(ordstats.OrdstatsError, match="kind must be 'stack' or 'line'"):
        plotting.plot_probabilities(res, grid, x="temp", kind="pie")
    with pytest.raises(ordstats.OrdstatsError, match="x='dose' is not a column"):
        plotting.plot_probabilities(res, grid, x="dose")
