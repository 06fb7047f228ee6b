"""Plots draw what the results say (checked on the Agg backend, nothing saved).

The lines, bars and bands are read back from the Axes and compared with the
results method each plot documents (``predict``, ``conf_int``, ``exceedance``,
the regularisation path); bad input, a missing matplotlib and an ``ax=`` that
is no Axes give ordstats errors that say what to do.
"""

from __future__ import annotations

import builtins
import warnings

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


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


# -- the regularisation path ----------------------------------------------------------------


def test_regularisation_path_lines_are_the_path_with_a_legend(wine):
    path = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine).path(n_alphas=6)
    _, ax = plt.subplots()
    path.plot(ax=ax)
    lines = ax.get_lines()
    assert [line.get_label() for line in lines] == ["temp[T.warm]", "contact[T.yes]"]
    for line in lines:
        np.testing.assert_allclose(line.get_xdata(), np.log10(path.alphas), rtol=1e-12)
        np.testing.assert_allclose(line.get_ydata(), path.params[line.get_label()], rtol=1e-12)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == list(path.params.columns[-2:])


# -- ax=, a missing matplotlib and matplotlib's global state -----------------------------------


@pytest.fixture(scope="module")
def other_plots(wine):
    """Plots that the results draw themselves: profile, path and posterior check."""
    model = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine)
    fit = model.fit()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the importance sampler's diagnostics
        posterior = model.fit(prior="default").posterior(draws=200, seed=1)
    return {
        "profile": lambda ax: fit.plot_profile("contact[T.yes]", ax=ax),
        "path": lambda ax: model.path(n_alphas=4).plot(ax=ax),
        "ppc": lambda ax: posterior.plot_ppc(n_draws=20, ax=ax),
        "coefficients": lambda ax: plotting.plot_coefficients(fit, ax=ax),
        "predictions": lambda ax: plotting.plot_predictions(fit, by="temp", ax=ax),
    }


@pytest.mark.parametrize("kind", ["profile", "path", "ppc", "coefficients", "predictions"])
def test_plots_say_what_ax_takes(other_plots, kind):
    with pytest.raises(ordstats.OrdstatsError, match="ax must be a matplotlib Axes"):
        other_plots[kind]("left")


@pytest.mark.parametrize("kind", ["profile", "path", "ppc", "coefficients", "predictions"])
def test_drawing_into_a_given_axes_leaves_pyplot_alone(other_plots, kind):
    fig, ax = plt.subplots()
    rc = dict(mpl.rcParams)
    other_plots[kind](ax)
    assert plt.get_fignums() == [fig.number]
    assert plt.gcf() is fig
    assert dict(mpl.rcParams) == rc


@pytest.mark.parametrize("kind", ["profile", "path", "ppc", "coefficients", "predictions"])
def test_missing_matplotlib_names_the_extra_to_install(other_plots, kind, monkeypatch):
    real_import = builtins.__import__

    def without_matplotlib(name, *args, **kwargs):
        if name.split(".")[0] == "matplotlib":
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", without_matplotlib)
    with pytest.raises(ordstats.OrdstatsError, match=r"pip install 'ordstats\[plot\]'"):
        other_plots[kind](None)
