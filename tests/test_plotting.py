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


# -- plot_probabilities ----------------------------------------------------------------------


def test_lines_over_unsorted_rows_run_left_to_right(res):
    grid = pd.DataFrame({"x": [0.5, -2.0, 1.5, -0.5, 2.0], "temp": "warm", "contact": "no"})
    _, ax = plt.subplots()
    plotting.plot_probabilities(res, grid, x="x", kind="line", ax=ax)
    want = res.predict(grid.sort_values("x"))
    assert [line.get_label() for line in ax.get_lines()] == ["1", "2", "3", "4", "5"]
    for line, level in zip(ax.get_lines(), want.columns, strict=True):
        np.testing.assert_array_equal(line.get_xdata(), [-2.0, -0.5, 0.5, 1.5, 2.0])
        np.testing.assert_allclose(line.get_ydata(), want[level], rtol=1e-12)


@pytest.mark.parametrize("kind", ["stack", "line"])
def test_one_numeric_row_is_drawn_as_bars_or_markers(res, kind):
    row = pd.DataFrame({"x": [0.5], "temp": "warm", "contact": "no"})
    _, ax = plt.subplots()
    plotting.plot_probabilities(res, row, x="x", kind=kind, ax=ax)
    want = res.predict(row).iloc[0].to_numpy()
    if kind == "stack":
        drawn = [container.patches[0].get_height() for container in ax.containers]
    else:
        assert all(line.get_marker() == "o" for line in ax.get_lines())
        drawn = [line.get_ydata()[0] for line in ax.get_lines()]
    np.testing.assert_allclose(drawn, want, rtol=1e-12)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0.5"]


@pytest.fixture(scope="module")
def many_levels():
    """A fit with 14 ordered levels: more than the colour cycle's ten colours."""
    rng = np.random.default_rng(7)
    x = rng.normal(size=400)
    y = np.digitize(x + rng.logistic(size=400), np.linspace(-3.5, 3.5, 13))
    data = pd.DataFrame({"y": pd.Categorical(y, categories=range(14), ordered=True), "x": x})
    return ordstats.OrdinalModel.from_formula("y ~ x", data).fit()


@pytest.mark.parametrize("kind", ["stack", "line"])
def test_many_levels_get_distinct_ordered_colours_and_a_colour_bar(many_levels, kind):
    # before: the 14 levels cycled through tab10's ten colours (levels 0 and 10 alike)
    # in a legend of 14 entries
    grid = pd.DataFrame({"x": np.linspace(-2, 2, 5)})
    fig, ax = plt.subplots()
    plotting.plot_probabilities(many_levels, grid, x="x", kind=kind, ax=ax)
    if kind == "line":
        drawn = [mpl.colors.to_rgba(line.get_color()) for line in ax.get_lines()]
    else:
        drawn = [tuple(area.get_facecolor()[0]) for area in ax.collections]
    assert len(drawn) == 14 and len(set(drawn)) == 14
    want = mpl.colormaps["viridis"](np.linspace(0, 1, 14))
    np.testing.assert_allclose(drawn, want)
    assert ax.get_legend() is None
    (bar_axes,) = [other for other in fig.axes if other is not ax]
    labels = [t.get_text() for t in bar_axes.get_yticklabels()]
    assert labels[0] == "0" and labels[-1] == "13" and bar_axes.get_ylabel() == "y"
    plt.close(fig)


def test_ten_levels_or_fewer_keep_the_colour_cycle_and_a_legend(res):
    grid = pd.DataFrame({"x": [0.0, 1.0], "temp": "warm", "contact": "no"})
    fig, ax = plt.subplots()
    plotting.plot_probabilities(res, grid, x="x", kind="line", ax=ax)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["1", "2", "3", "4", "5"]
    assert len(fig.axes) == 1
    plt.close(fig)


@pytest.mark.parametrize("newdata", [pd.DataFrame({"x": []}), [0.0, 1.0]])
def test_probabilities_need_rows_to_draw(res, newdata):
    with pytest.raises(ordstats.OrdstatsError, match="newdata must be a pandas DataFrame with at"):
        plotting.plot_probabilities(res, newdata, x="x")


# -- mixed and penalised fits ----------------------------------------------------------------


@pytest.fixture(scope="module")
def mixed(wine):
    return ordstats.OrdinalModel.from_formula("rating ~ temp + contact + (1|judge)", wine).fit()


def _forest(ax) -> pd.DataFrame:
    """Estimate, lower and upper end of each row of a forest plot, by its tick label."""
    marker, _, (bars,) = ax.containers[0].lines
    names = dict(zip(ax.get_yticks(), (t.get_text() for t in ax.get_yticklabels()), strict=True))
    rows = [names[y] for y in marker.get_ydata()]
    drawn = pd.DataFrame({"estimate": np.asarray(marker.get_xdata(), dtype=float)}, index=rows)
    if any(len(segment) for segment in bars.get_segments()):  # none where all are NaN
        ends = np.array(bars.get_segments())[:, :, 0]
        drawn = drawn.assign(lower=ends[:, 0], upper=ends[:, 1])
    return drawn


@pytest.mark.parametrize(
    ("options", "effects"),
    [
        ({"nominal": "~ contact"}, [f"{k}|{k + 1}:contact[T.yes]" for k in range(1, 5)]),
        ({"scale": "~ contact"}, ["contact[T.yes]", "scale:contact[T.yes]"]),
        ({"link": "aranda-ordaz"}, ["contact[T.yes]"]),
    ],
)
def test_forest_rows_are_the_effects(wine, options, effects):
    fit = ordstats.OrdinalModel.from_formula(
        "rating ~ temp" + ("" if "nominal" in options else " + contact"), wine, **options
    ).fit()
    _, ax = plt.subplots()
    plotting.plot_coefficients(fit, ax=ax)
    drawn = _forest(ax)
    want = sorted(["temp[T.warm]", *effects], key=list(fit.params.index).index)
    assert list(drawn.index) == want  # in the order of params, the first at the top
    ci = fit.conf_int().loc[want]
    np.testing.assert_allclose(drawn.loc[want, "estimate"], fit.params[want], rtol=1e-12)
    np.testing.assert_allclose(drawn.loc[want, "lower"], ci["lower"], rtol=1e-12)
    np.testing.assert_allclose(drawn.loc[want, "upper"], ci["upper"], rtol=1e-12)


def test_mixed_fit_forest_is_its_fixed_effects(mixed):
    _, ax = plt.subplots()
    plotting.plot_coefficients(mixed, alpha=0.1, ax=ax)
    drawn = _forest(ax)
    assert list(drawn.index) == ["temp[T.warm]", "contact[T.yes]"]
    ci = mixed.conf_int(0.1).loc[drawn.index]
    np.testing.assert_allclose(drawn["estimate"], mixed.params[drawn.index], rtol=1e-12)
    np.testing.assert_allclose(drawn["lower"], ci["lower"], rtol=1e-12)
    np.testing.assert_allclose(drawn["upper"], ci["upper"], rtol=1e-12)
    assert ax.get_xlabel() == "estimate (90% CI)"


def test_mixed_fit_probabilities_are_its_predictions(mixed):
    grid = pd.DataFrame({"temp": ["cold", "warm"], "contact": "no", "judge": "1"})
    _, ax = plt.subplots()
    plotting.plot_probabilities(mixed, grid, x="temp", kind="line", ax=ax)
    want = mixed.predict(grid)
    for line, level in zip(ax.get_lines(), want.columns, strict=True):
        np.testing.assert_allclose(line.get_ydata(), want[level], rtol=1e-12)
    assert ax.get_legend().get_title().get_text() == "rating"


def test_lasso_forest_says_it_has_no_intervals(wine):
    model = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine)
    lasso = model.fit_regularized(alpha=0.05, L1_wt=1.0)
    _, ax = plt.subplots()
    plotting.plot_coefficients(lasso, ax=ax)
    drawn = _forest(ax)
    assert list(drawn.columns) == ["estimate"]
    np.testing.assert_allclose(drawn["estimate"], lasso.params[drawn.index], rtol=1e-12)
    assert ax.get_xlabel() == "estimate (no confidence intervals)"


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


# -- the profile plot ------------------------------------------------------------------------


def test_profile_plot_draws_the_curve_the_wald_line_and_the_levels(res):
    from ordstats.results.profile import plot_profile

    curve = res.profile("x")
    _, ax = plt.subplots()
    plot_profile(curve, ax=ax, levels=(0.9, 0.99))
    profile, wald, *rules = ax.get_lines()
    np.testing.assert_allclose(profile.get_ydata(), curve["signed_root"], rtol=1e-12)
    se = res.bse["x"]
    np.testing.assert_allclose(wald.get_ydata(), (curve["value"] - res.params["x"]) / se)
    heights = sorted(line.get_ydata()[0] for line in rules if line.get_ydata()[0] != 0)
    z90, z99 = 1.6448536269514722, 2.5758293035489004
    np.testing.assert_allclose(heights, [-z99, -z90, z90, z99], rtol=1e-12)
    assert [line.get_label() for line in (profile, wald)] == ["profile", "Wald"]
    assert ax.get_xlabel() == "x"


def test_profile_plot_takes_one_level(res):
    from ordstats.results.profile import plot_profile

    _, ax = plt.subplots()
    plot_profile(res.profile("x"), ax=ax, levels=0.95)
    rules = sorted(line.get_ydata()[0] for line in ax.get_lines()[2:])
    z95 = 1.959963984540054
    np.testing.assert_allclose([r for r in rules if r != 0], [-z95, z95], rtol=1e-12)


@pytest.mark.parametrize("levels", [[0.9, 1.5], 1.0, "0.95", [True], None])
def test_profile_plot_levels_are_confidence_levels(res, levels):
    from ordstats.results.profile import plot_profile

    with pytest.raises(ordstats.OrdstatsError, match="levels must be confidence levels strictly"):
        plot_profile(res.profile("x"), levels=levels)


def test_profile_plot_needs_a_profile(res):
    from ordstats.results.profile import plot_profile

    with pytest.raises(ordstats.OrdstatsError, match="needs the DataFrame returned by profile"):
        plot_profile(res.params)


# -- plot_conditional_cdf --------------------------------------------------------------------


@pytest.fixture(scope="module")
def continuous():
    rng = np.random.default_rng(3)
    data = pd.DataFrame({"x": rng.normal(size=40)})
    data["y"] = np.round(data["x"] + rng.normal(size=40), 1)
    return ordstats.OrdinalModel.from_formula("y ~ x", data, many_levels=True).fit(), data


def test_conditional_cdf_and_band_are_one_minus_the_exceedance(continuous):
    res, data = continuous
    rows = data.iloc[[0, 5]]
    _, ax = plt.subplots()
    plotting.plot_conditional_cdf(res, rows, alpha=0.1, ax=ax)
    values = np.sort(data["y"].unique())
    exceed = res.exceedance(list(values[1:]), rows, alpha=0.1)
    for row, (line, band) in enumerate(zip(ax.get_lines(), ax.collections, strict=True)):
        part = exceed.iloc[row * (len(values) - 1) : (row + 1) * (len(values) - 1)]
        np.testing.assert_array_equal(line.get_xdata(), values)
        np.testing.assert_allclose(line.get_ydata(), [*(1 - part["estimate"]), 1.0], rtol=1e-12)
        # the band's outline: its lower edge (1 - upper), then its upper one (1 - lower)
        edges = np.r_[1 - part["upper"], 1 - part["lower"], 1.0]
        drawn = band.get_paths()[0].vertices[:, 1]
        np.testing.assert_allclose(np.unique(drawn), np.unique(edges), rtol=1e-12)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["0", "5"]
    assert ax.get_ylabel() == "P(y <= value)"


@pytest.mark.parametrize("labels", [3, "ab", ["only one"]])
def test_conditional_cdf_labels_are_one_per_row(continuous, labels):
    res, data = continuous
    with pytest.raises(ordstats.OrdstatsError, match="labels must be a list of 2 names"):
        plotting.plot_conditional_cdf(res, data.iloc[:2], labels=labels)


def test_conditional_cdf_of_a_mixed_fit_says_what_to_plot(mixed, wine):
    with pytest.raises(ordstats.OrdstatsError, match=r"plot_predictions.*type='exceedance'"):
        plotting.plot_conditional_cdf(mixed, wine.iloc[:2])


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


@pytest.mark.parametrize(
    ("specs", "options", "panels", "rows"),
    [
        ("~ temp | contact", {}, ["contact = no", "contact = yes"], ["cold", "warm"]),
        ("~ temp * contact", {}, [""], ["cold no", "warm no", "cold yes", "warm yes"]),
        ("~ rating | temp", {"mode": "prob"}, ["temp = cold", "temp = warm"], list("12345")),
    ],
)
def test_emmeans_plot_draws_each_mean_with_its_interval(wine, specs, options, panels, rows):
    res = ordstats.OrdinalModel.from_formula("rating ~ temp * contact", wine).fit()
    emm = res.emmeans(specs, **options)
    table = emm.summary_frame()
    fig = plotting.plot_emmeans(emm)
    assert [ax.get_title() for ax in fig.axes] == panels
    first = fig.axes[0]
    assert [t.get_text() for t in first.get_yticklabels()] == rows
    points = first.lines[0].get_xdata()
    np.testing.assert_allclose(points, table[emm.estimate_name].to_numpy()[: len(rows)])
    plt.close(fig)


def test_emmeans_plot_of_contrasts_and_one_panel_on_a_given_axes(wine):
    res = ordstats.OrdinalModel.from_formula("rating ~ temp * contact", wine).fit()
    pairs = res.emmeans("~ temp | contact").pairs()
    fig = plotting.plot_emmeans(pairs)
    assert fig.axes[0].get_xlabel() == "estimate"
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["cold - warm"]
    plt.close(fig)
    _, ax = plt.subplots()
    assert plotting.plot_emmeans(res.emmeans("~ temp"), ax=ax) is ax.figure
    with pytest.raises(ordstats.OrdstatsError, match="leave ax=None"):
        plotting.plot_emmeans(res.emmeans("~ temp | contact"), ax=ax)
    plt.close("all")


def test_ranef_plot_draws_each_levels_mode_and_interval_in_order(wine):
    res = ordstats.OrdinalModel.from_formula("rating ~ temp + contact + (1|judge)", wine).fit()
    modes, variances = res.ranef(condvar=True)
    fig = plotting.plot_ranef(res, alpha=0.1)
    ax = fig.axes[0]
    expected = modes["judge"]["(Intercept)"].sort_values(kind="stable")
    assert [t.get_text() for t in ax.get_yticklabels()] == [str(v) for v in expected.index]
    np.testing.assert_allclose(ax.lines[0].get_xdata(), expected.to_numpy())
    half = 1.6448536269514722 * np.sqrt(variances["judge"]["(Intercept)"][expected.index])
    segments = ax.collections[0].get_segments()
    np.testing.assert_allclose([s[1][0] - s[0][0] for s in segments], 2 * half, rtol=1e-10)
    plt.close(fig)


def test_ranef_plot_of_slopes_and_of_several_factors(wine):
    data = wine.assign(bottle=wine["bottle"].astype(str))
    slopes = ordstats.OrdinalModel.from_formula(
        "rating ~ temp + contact + (1 + temp|judge)", data
    ).fit()
    fig = plotting.plot_ranef(slopes)
    assert [ax.get_title() for ax in fig.axes] == list(slopes.ranef()["judge"].columns)
    plt.close(fig)
    two = ordstats.OrdinalModel.from_formula(
        "rating ~ temp + contact + (1|judge) + (1|bottle)", data
    ).fit()
    with pytest.raises(ordstats.OrdstatsError, match="several grouping factors: choose group="):
        plotting.plot_ranef(two)
    assert len(plotting.plot_ranef(two, "bottle").axes[0].get_yticklabels()) == 8
    with pytest.raises(ordstats.OrdstatsError, match="'temp' is not a grouping factor"):
        plotting.plot_ranef(two, "temp")
    with pytest.raises(ordstats.OrdstatsError, match="random effects of a mixed fit"):
        plotting.plot_ranef(ordstats.OrdinalModel.from_formula("rating ~ temp", wine).fit())
    plt.close("all")
