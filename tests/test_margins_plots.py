"""The margins plots draw the verbs' numbers (read back from the artists on Agg).

Each test reads what matplotlib was given (bar heights and bottoms, line and
marker data, error-bar segments, the outline of a confidence band) and checks
it against an independent call of the verb the plot documents.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats import datagrid, plotting
from ordstats.errors import OrdstatsError

mpl = pytest.importorskip("matplotlib")
mpl.use("Agg")
plt = pytest.importorskip("matplotlib.pyplot")

LEVELS = ["1", "2", "3", "4", "5"]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _data() -> pd.DataFrame:
    wine = ordstats.datasets.load("wine")
    rng = np.random.default_rng(7)
    return wine.assign(x=rng.normal(size=len(wine)), z=rng.normal(size=len(wine)))


@pytest.fixture(scope="module")
def data() -> pd.DataFrame:
    return _data()


@pytest.fixture(scope="module")
def res(data):
    return ordstats.OrdinalModel.from_formula("rating ~ temp * contact + x", data).fit()


def _table(table: pd.DataFrame, **where) -> pd.DataFrame:
    keep = np.ones(len(table), dtype=bool)
    for name, value in where.items():
        keep &= (table[name].astype(str) == str(value)).to_numpy()
    return table[keep]


def _band(collection) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """x, lower and upper edge of a fill_between band."""
    vertices = collection.get_paths()[0].vertices
    xs = np.unique(vertices[:, 0])
    low = np.array([vertices[vertices[:, 0] == x, 1].min() for x in xs])
    high = np.array([vertices[vertices[:, 0] == x, 1].max() for x in xs])
    return xs, low, high


def _assert_error_bars(container, want: pd.DataFrame) -> None:
    """The markers are the estimates, the bars run from conf_low to conf_high."""
    marker, _, (bars,) = container.lines
    np.testing.assert_allclose(marker.get_ydata(), want["estimate"], rtol=1e-12)
    segments = np.array(bars.get_segments())
    np.testing.assert_allclose(segments[:, 0, 1], want["conf_low"], rtol=1e-12)
    np.testing.assert_allclose(segments[:, 1, 1], want["conf_high"], rtol=1e-12)


def _labelled_lines(ax) -> list:
    return [line for line in ax.get_lines() if line.get_gid() != "reference"]


# -- plot_predictions ----------------------------------------------------------------------


def test_stacked_bars_are_the_average_predictions(res):
    fig = plotting.plot_predictions(res, by=["temp", "contact"])
    expected = res.avg_predictions(by=["temp", "contact"])
    assert len(fig.axes) == 2  # one panel per contact level
    for ax, contact in zip(fig.axes, ["no", "yes"], strict=True):
        assert ax.get_title() == f"contact = {contact}"
        assert [t.get_text() for t in ax.get_xticklabels()] == ["cold", "warm"]
        bars = ax.containers
        assert [b.get_label() for b in bars] == LEVELS
        top = np.zeros(2)
        for level, container in zip(LEVELS, bars, strict=True):
            heights = [patch.get_height() for patch in container.patches]
            bottoms = [patch.get_y() for patch in container.patches]
            want = _table(expected, group=level, contact=contact)["estimate"]
            np.testing.assert_allclose(heights, want, rtol=1e-12)
            np.testing.assert_allclose(bottoms, top, rtol=1e-12, atol=1e-15)
            top += heights
        np.testing.assert_allclose(top, 1.0, rtol=1e-12)
    # marginaleffects #1759: P(1 | cold, no) = 0.19604 (rating ~ temp * contact, no x)
    wine = ordstats.datasets.load("wine")
    published = ordstats.OrdinalModel.from_formula("rating ~ temp * contact", wine).fit()
    first = plotting.plot_predictions(published, by=["temp", "contact"]).axes[0]
    assert first.containers[0].patches[0].get_height() == pytest.approx(0.19604, abs=5e-6)


def test_lines_and_bands_over_a_numeric_x_are_the_predictions(res, data):
    fig = plotting.plot_predictions(res, condition="x")
    (ax,) = fig.axes
    grid = datagrid(res, x=np.linspace(data["x"].min(), data["x"].max(), 50))
    expected = res.predictions(grid)
    lines = _labelled_lines(ax)
    assert [line.get_label() for line in lines] == LEVELS
    for level, line, band in zip(LEVELS, lines, ax.collections, strict=True):
        want = _table(expected, group=level)
        np.testing.assert_allclose(line.get_xdata(), want["x"], rtol=1e-12)
        np.testing.assert_allclose(line.get_ydata(), want["estimate"], rtol=1e-12)
        xs, low, high = _band(band)
        np.testing.assert_allclose(xs, want["x"], rtol=1e-12)
        np.testing.assert_allclose(low, want["conf_low"], rtol=1e-10)
        np.testing.assert_allclose(high, want["conf_high"], rtol=1e-10)
    # the grid holds the other predictors at their mode
    assert (expected["temp"] == data["temp"].mode()[0]).all()


def test_a_second_condition_takes_the_colours_and_the_levels_take_panels(res, data):
    fig = plotting.plot_predictions(res, condition=["x", "temp"], type="cumprob", conf_type="wald")
    assert [ax.get_title() for ax in fig.axes] == [f"rating = {k}" for k in LEVELS[:-1]]
    grid = datagrid(res, x=np.linspace(data["x"].min(), data["x"].max(), 50), temp=["cold", "warm"])
    expected = res.predictions(grid, type="cumprob", conf_type="wald")
    for level, ax in zip(LEVELS, fig.axes, strict=False):
        lines = _labelled_lines(ax)
        assert [line.get_label() for line in lines] == ["cold", "warm"]
        for temp, line, band in zip(["cold", "warm"], lines, ax.collections, strict=True):
            want = _table(expected, group=level, temp=temp)
            np.testing.assert_allclose(line.get_ydata(), want["estimate"], rtol=1e-12)
            np.testing.assert_allclose(_band(band)[1], want["conf_low"], rtol=1e-10)


def test_stacked_areas_over_a_numeric_x_are_the_cumulative_probabilities(res, data):
    fig = plotting.plot_predictions(res, condition="x", kind="stack")
    (ax,) = fig.axes
    grid = datagrid(res, x=np.linspace(data["x"].min(), data["x"].max(), 50))
    cumulative = res.predictions(grid, type="cumprob")
    assert len(ax.collections) == 5
    for level, area in zip(LEVELS[:-1], ax.collections, strict=False):
        xs, _, top = _band(area)
        want = _table(cumulative, group=level)
        np.testing.assert_allclose(xs, want["x"], rtol=1e-12)
        np.testing.assert_allclose(top, want["estimate"], rtol=1e-10)
    np.testing.assert_allclose(_band(ax.collections[-1])[2], 1.0, rtol=1e-12)


def test_numeric_colour_variable_takes_its_five_numbers(res, data):
    table = plotting.plot_predictions(res, condition=["temp", "x"], draw=False)
    five = np.quantile(data["x"], [0, 0.25, 0.5, 0.75, 1])
    np.testing.assert_allclose(np.unique(table["x"]), five, rtol=1e-12)
    three = plotting.plot_predictions(res, condition={"temp": None, "x": "threenum"}, draw=False)
    mean, sd = data["x"].mean(), data["x"].std()
    np.testing.assert_allclose(np.unique(three["x"]), [mean - sd, mean, mean + sd], rtol=1e-12)


def test_condition_values_given_as_one_value_or_a_list(res):
    table = plotting.plot_predictions(res, condition={"x": [0.0, 1.0], "temp": "warm"}, draw=False)
    assert sorted(set(table["x"])) == [0.0, 1.0]
    assert set(table["temp"]) == {"warm"}


def test_one_numeric_value_is_drawn_as_points_and_bars(res):
    expected = res.predictions(datagrid(res, x=[0.5]))
    (lines,) = plotting.plot_predictions(res, condition={"x": [0.5]}).axes
    assert [c.get_label() for c in lines.containers] == LEVELS
    for level, container in zip(LEVELS, lines.containers, strict=True):
        _assert_error_bars(container, _table(expected, group=level))
    (stacked,) = plotting.plot_predictions(res, condition={"x": [0.5]}, kind="stack").axes
    assert [t.get_text() for t in stacked.get_xticklabels()] == ["0.5"]
    heights = [container.patches[0].get_height() for container in stacked.containers]
    np.testing.assert_allclose(heights, expected["estimate"], rtol=1e-12)


def test_expected_rating_is_one_line_per_colour_with_error_bars(res):
    fig = plotting.plot_predictions(res, by=["temp", "contact"], type="expected")
    (ax,) = fig.axes
    expected = res.avg_predictions(by=["temp", "contact"], type="expected")
    assert [c.get_label() for c in ax.containers] == ["no", "yes"]
    for contact, container in zip(["no", "yes"], ax.containers, strict=True):
        want = _table(expected, contact=contact)
        _assert_error_bars(container, want)


def test_draw_false_returns_the_plotted_estimates(res):
    table = plotting.plot_predictions(res, by="temp", draw=False)
    pd.testing.assert_frame_equal(
        pd.DataFrame(table), pd.DataFrame(res.avg_predictions(by="temp")), check_exact=True
    )


def test_a_single_panel_draws_into_a_given_axes(res):
    fig, ax = plt.subplots()
    assert plotting.plot_predictions(res, by="temp", ax=ax) is fig
    assert len(ax.containers) == 5


# -- plot_comparisons and plot_slopes ---------------------------------------------------------


def test_comparisons_by_a_factor_are_the_average_comparisons(res):
    fig = plotting.plot_comparisons(res, "contact", by="temp")
    (ax,) = fig.axes
    expected = res.avg_comparisons(variables="contact", by="temp")
    assert fig._suptitle.get_text() == "contact: yes - no"
    assert [c.get_label() for c in ax.containers] == LEVELS
    for level, container in zip(LEVELS, ax.containers, strict=True):
        want = _table(expected, group=level)
        _assert_error_bars(container, want)


def test_several_contrasts_get_one_panel_row_each(data):
    frame = data.assign(temp3=pd.Categorical(np.resize(["a", "b", "c"], len(data))))
    res = ordstats.OrdinalModel.from_formula("rating ~ temp3 + x", frame).fit()
    fig = plotting.plot_comparisons(
        res, {"temp3": "pairwise"}, condition="x", type="expected", comparison="ratio"
    )
    assert [ax.get_title() for ax in fig.axes] == ["temp3: b / a", "temp3: c / a", "temp3: c / b"]
    grid = datagrid(res, x=np.linspace(frame["x"].min(), frame["x"].max(), 50))
    expected = res.comparisons(
        grid, variables={"temp3": "pairwise"}, type="expected", comparison="ratio"
    )
    for ax, contrast in zip(fig.axes, ["b / a", "c / a", "c / b"], strict=True):
        (line,) = _labelled_lines(ax)
        want = _table(expected, contrast=contrast)["estimate"]
        np.testing.assert_allclose(line.get_ydata(), want, rtol=1e-12)


def test_slopes_over_a_numeric_condition_are_the_slopes(res, data):
    fig = plotting.plot_slopes(res, "x", condition=["x", "contact"])
    grid = datagrid(res, x=np.linspace(data["x"].min(), data["x"].max(), 50), contact=["no", "yes"])
    expected = res.slopes(grid, variables="x")
    assert len(fig.axes) == 5
    for level, ax in zip(LEVELS, fig.axes, strict=True):
        for contact, line, band in zip(
            ["no", "yes"], _labelled_lines(ax), ax.collections, strict=True
        ):
            want = _table(expected, group=level, contact=contact)
            np.testing.assert_allclose(line.get_ydata(), want["estimate"], rtol=1e-12)
            np.testing.assert_allclose(_band(band)[2], want["conf_high"], rtol=1e-10)


def test_slope_axis_says_derivative_or_difference(res):
    (numeric,) = plotting.plot_slopes(res, "x", by="temp", type="expected").axes
    assert numeric.get_ylabel() == "dydx in expected value"
    (factor,) = plotting.plot_slopes(res, "contact", by="temp").axes
    assert factor.get_ylabel() == "difference in P(Y = level)"


def test_average_slopes_weighted_by_rows(res, data):
    weights = np.linspace(1, 2, len(data))
    table = plotting.plot_slopes(res, "x", by="contact", wts=weights, draw=False)
    expected = res.avg_slopes(variables="x", by="contact", wts=weights)
    np.testing.assert_allclose(table["estimate"], expected["estimate"], rtol=1e-12)
    unweighted = res.avg_slopes(variables="x", by="contact")
    assert not np.allclose(table["estimate"], unweighted["estimate"])


# -- every kind of fit ---------------------------------------------------------------------

_KINDS = {
    "probit nominal": ("rating ~ temp + x", {"link": "probit", "nominal": "~ contact"}),
    "scale": ("rating ~ temp + contact + x", {"scale": "~ temp"}),
    "sratio": ("rating ~ temp + contact + x", {"family": "sratio"}),
    "acat": ("rating ~ temp + contact + x", {"family": "acat"}),
    "equidistant": ("rating ~ temp + contact + x", {"threshold": "equidistant"}),
    "chunked": ("rating ~ temp + contact + x", {"chunksize": 20}),
}


@pytest.mark.parametrize("kind", sorted(_KINDS))
def test_every_fit_kind_plots_its_own_estimates(data, kind):
    formula, options = _KINDS[kind]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = ordstats.OrdinalModel.from_formula(formula, data, **options).fit(disp=False)
    fig = plotting.plot_predictions(res, by="temp", newdata=data, kind="lines")
    expected = res.avg_predictions(data, by="temp")
    (ax,) = fig.axes
    for level, container in zip(LEVELS, ax.containers, strict=True):
        marker = container.lines[0]
        want = _table(expected, group=level)["estimate"]
        np.testing.assert_allclose(marker.get_ydata(), want, rtol=1e-12)
    slopes = plotting.plot_slopes(res, "x", condition="temp", newdata=data, draw=False)
    grid = datagrid(newdata=data, temp=["cold", "warm"])
    np.testing.assert_allclose(
        slopes["estimate"], res.slopes(grid, variables="x")["estimate"], rtol=1e-12
    )


@pytest.mark.parametrize("engine", ["chunked", "dask"])
@pytest.mark.parametrize(
    "condition",
    ["x", ["x", "temp"], ["temp", "x"], {"x": "threenum", "contact": None}, {"x": "minmax"}],
)
def test_condition_plots_of_rows_read_in_chunks_equal_in_memory(data, engine, condition):
    """Before: refused, the default values (range, five numbers) read the rows in memory;
    now a few passes give the same summaries."""
    formula = "rating ~ temp + contact + x"
    memory = ordstats.OrdinalModel.from_formula(formula, data).fit()
    if engine == "dask":
        dd = pytest.importorskip("dask.dataframe")
        source, options = dd.from_pandas(data, npartitions=3), {}
    else:
        source, options = data, {"chunksize": 20}
    streamed = ordstats.OrdinalModel.from_formula(formula, source, **options).fit()
    for plot, extra in [
        (plotting.plot_predictions, {}),
        (plotting.plot_slopes, {"variables": "x"}),
        (plotting.plot_comparisons, {"variables": "contact"}),
    ]:
        want = plot(memory, condition=condition, draw=False, **extra)
        got = plot(streamed, condition=condition, draw=False, **extra)
        assert got.shape == want.shape
        numbers = want.select_dtypes("number").columns
        np.testing.assert_allclose(got[numbers], want[numbers], rtol=1e-8)


def test_penalised_fit_plots_its_own_estimates(data):
    model = ordstats.OrdinalModel.from_formula("rating ~ temp + contact + x", data)
    res = model.fit_regularized(alpha=0.5, L1_wt=0.0)
    table = plotting.plot_comparisons(res, "contact", by="temp", draw=False)
    expected = res.avg_comparisons(variables="contact", by="temp")
    np.testing.assert_allclose(table["estimate"], expected["estimate"], rtol=1e-12)
    assert len(plotting.plot_comparisons(res, "contact", by="temp").axes) == 1


def test_mixed_fit_plots_its_estimates_or_says_it_has_none(data):
    from ordstats.results.margins.protocol import MarginsFit

    formula = "rating ~ temp + contact + (1|judge)"
    res = ordstats.OrdinalModel.from_formula(formula, data).fit()
    if isinstance(res, MarginsFit):
        table = plotting.plot_predictions(res, by="temp", draw=False)
        expected = res.avg_predictions(by="temp")
        np.testing.assert_allclose(table["estimate"], expected["estimate"], rtol=1e-12)
    else:
        with pytest.raises(OrdstatsError, match="MixedResults has none"):
            plotting.plot_predictions(res, by="temp")


def test_mixed_fit_panels_and_legend_name_its_response(data):
    res = ordstats.OrdinalModel.from_formula("rating ~ temp + contact + (1|judge)", data).fit()
    fig = plotting.plot_predictions(res, condition=["contact", "temp"], kind="lines")
    assert [ax.get_title() for ax in fig.axes] == [f"rating = {k}" for k in LEVELS]
    (stacked,) = plotting.plot_predictions(res, by="temp").axes
    assert stacked.get_legend().get_title().get_text() == "rating"


# -- bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda r: plotting.plot_predictions(r, condition="dose"),
            "condition names 'dose', which the model does not use; its predictors are",
        ),
        (
            lambda r: plotting.plot_predictions(r, condition=["x", "temp", "contact", "z"]),
            "condition names 4 variables; give one to three",
        ),
        (
            lambda r: plotting.plot_predictions(r, by=["x", "temp", "contact", "z"]),
            "by names 4 variables; give one to three",
        ),
        (lambda r: plotting.plot_predictions(r), "give either condition= .* or by="),
        (
            lambda r: plotting.plot_predictions(r, condition="x", by="temp"),
            "give either condition= .* or by=",
        ),
        (lambda r: plotting.plot_predictions(r, condition=3), "condition must be a column name"),
        (
            lambda r: plotting.plot_predictions(r, condition={"x": "sixnum"}),
            "numeric 'x' takes values or one of 'range'",
        ),
        (
            lambda r: plotting.plot_predictions(r, condition={"temp": ["tepid"]}),
            "'temp' has no level",
        ),
        (
            lambda r: plotting.plot_predictions(r, by="temp", type="expected", kind="stack"),
            "kind='stack' stacks the probabilities",
        ),
        (lambda r: plotting.plot_predictions(r, by="temp", kind="pie"), "kind must be one of"),
        (
            lambda r: plotting.plot_predictions(r, condition="x", wts=np.ones(72)),
            "wts= weights the rows of an average: use it with by=",
        ),
        (
            lambda r: plotting.plot_predictions(r, condition="x", newdata="rows"),
            "newdata must be a pandas DataFrame",
        ),
        (
            lambda r: plotting.plot_predictions(
                r, condition="x", newdata=pd.DataFrame({"temp": ["cold"]})
            ),
            "condition names 'x', which is not a column of newdata",
        ),
        (
            lambda r: plotting.plot_predictions(r, by="region"),
            "by= names 'region', which is not a column",
        ),
        (
            lambda r: plotting.plot_predictions(r, by="temp", type="odds"),
            "type must be one of",
        ),
        (lambda r: plotting.plot_comparisons(r, by="temp"), "plot_comparisons needs variables="),
        (lambda r: plotting.plot_slopes(r, condition="x"), "plot_slopes needs variables="),
        (
            lambda r: plotting.plot_slopes(r, "dose", condition="x"),
            "variables= names 'dose', which the model does not use",
        ),
        (
            lambda r: plotting.plot_predictions(r.params, by="temp"),
            "plot_predictions plots the predictions, comparisons or slopes of an ordstats fit",
        ),
        (
            lambda r: plotting.plot_predictions(r, by=["x", "temp"], ax=plt.subplots()[1]),
            "this plot has 1 x 5 panels; leave ax=None",
        ),
        (
            lambda r: plotting.plot_predictions(r, condition="x", newdata=_data().assign(x=0.5)),
            r"numeric 'x' takes 1 distinct value\(s\) .*give its values \(condition=\{'x': ",
        ),
        (
            lambda r: plotting.plot_slopes(
                r, "x", condition={"x": "minmax"}, newdata=_data().assign(x=np.nan)
            ),
            "numeric 'x' takes 0 distinct value",
        ),
        (
            lambda r: plotting.plot_predictions(r, condition="x", newdata=_data().iloc[:0]),
            "newdata has no rows to make the condition grid from",
        ),
        (
            lambda r: plotting.plot_predictions(
                r,
                condition={"temp": None, "contact": None, "x": np.linspace(0, 1, 7)},
                kind="lines",
            ),
            r"7 x 5 = 35 panels \(at most 30 are drawn\), one per value of x, the levels of "
            "rating: give fewer values",
        ),
    ],
)
def test_bad_plot_input_says_what_to_do(res, call, message):
    with pytest.raises(OrdstatsError, match=message):
        call(res)
