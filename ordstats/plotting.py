"""Plots of fitted ordinal models (matplotlib is optional and imported on use).

``plot_probabilities`` and ``plot_coefficients`` draw on a given
:class:`matplotlib.axes.Axes` (or a new one) and return it.  The margins plots
``plot_predictions``, ``plot_comparisons`` and ``plot_slopes`` (marginaleffects'
``plot_*``) draw the estimates of the margins verbs, one panel per response
level or condition value where needed, and return the
:class:`matplotlib.figure.Figure`.  Nothing is written to disk.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd

from ordstats._typing import FloatArray
from ordstats.design.newdata import distributed_newdata_hint
from ordstats.errors import OrdstatsError, check_flag
from ordstats.results.arguments import normal_quantile
from ordstats.results.figures import axes as _axes
from ordstats.results.figures import checked_axes as _checked_axes
from ordstats.results.figures import pyplot as _pyplot
from ordstats.results.margins.grid import (
    datagrid,
    factor_levels,
    is_factor,
    streamed_factor_levels,
)
from ordstats.results.margins.protocol import MarginsFit
from ordstats.results.margins.stream import column_summaries, streams
from ordstats.results.margins.verbs import comparisons, numeric_summary, predictions, slopes
from ordstats.results.mixed import MixedResults

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from ordstats.results.fitted import OrdinalResults
    from ordstats.results.margins.emmeans import EmmGrid

__all__ = [
    "plot_coefficients",
    "plot_comparisons",
    "plot_conditional_cdf",
    "plot_emmeans",
    "plot_predictions",
    "plot_probabilities",
    "plot_ranef",
    "plot_residuals",
    "plot_slopes",
]


def plot_probabilities(
    res: OrdinalResults,
    newdata: pd.DataFrame,
    x: str,
    *,
    kind: str = "stack",
    ax: Axes | None = None,
) -> Axes:
    """Plot predicted category probabilities against one column of ``newdata``.

    Parameters
    ----------
    res : OrdinalResults
    newdata : pandas.DataFrame
        Rows to predict for (a grid over ``x``, other predictors held fixed).
    x : str
        Column of ``newdata`` on the horizontal axis (numeric or categorical).
    kind : {"stack", "line"}
        Stacked areas (bars for a categorical ``x``) that sum to one, or one line
        per category.
    ax : matplotlib.axes.Axes, optional

    Notes
    -----
    Up to ten levels take matplotlib's colour cycle and a legend.  More levels
    would repeat that cycle's colours, so they take a sequential colormap
    (viridis, low levels dark) in level order and a colour bar labelled with the
    levels instead of a legend.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import pandas as pd, ordstats
    >>> wine = ordstats.datasets.load("wine")
    >>> res = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    >>> grid = pd.DataFrame({"temp": ["cold", "warm"], "contact": ["no", "no"]})
    >>> ax = ordstats.plotting.plot_probabilities(res, grid, x="temp")  # doctest: +SKIP
    """
    if kind not in ("stack", "line"):
        raise OrdstatsError(f"kind must be 'stack' or 'line'; got {kind!r}")
    _check_rows(newdata)
    if x not in newdata.columns:
        raise OrdstatsError(f"x={x!r} is not a column of newdata")
    prob = res.predict(newdata, which="prob")
    ax = _axes(ax)
    values = newdata[x]
    numeric = pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)
    numeric = numeric and values.nunique() > 1  # one value: bars or markers, which show
    positions = values.to_numpy(dtype=float) if numeric else np.arange(len(values))
    # a numeric x is drawn left to right, whatever the order of the rows
    order = np.argsort(positions, kind="stable") if numeric else np.arange(len(values))
    colors = _level_colors(len(prob.columns))
    if kind == "line":
        for k, level in enumerate(prob.columns):
            ax.plot(
                positions[order],
                prob[level].to_numpy()[order],
                marker=None if numeric else "o",
                label=str(level),
                **({} if colors is None else {"color": colors[k]}),
            )
    elif numeric:
        ax.stackplot(
            positions[order],
            *(prob[c].to_numpy()[order] for c in prob.columns),
            labels=[str(c) for c in prob.columns],
            colors=None if colors is None else list(colors),
        )
    else:
        bottom = np.zeros(len(prob))
        for k, level in enumerate(prob.columns):
            color = {} if colors is None else {"color": colors[k]}
            ax.bar(positions, prob[level], bottom=bottom, label=str(level), **color)
            bottom += prob[level].to_numpy()
    if not numeric:
        ax.set_xticks(positions, [str(v) for v in values])
    ax.set_xlabel(x)
    ax.set_ylabel("probability")
    ax.set_ylim(0, 1 if kind == "stack" else None)
    if colors is None:
        ax.legend(title=_response_name(res))
    else:
        _level_colorbar(ax, [str(c) for c in prob.columns], _response_name(res))
    return ax


#: Levels up to which plot_probabilities uses matplotlib's colour cycle (tab10) and a legend.
_CYCLE_LEVELS = 10


def _level_colors(n_levels: int) -> np.ndarray | None:
    """Colours of ``n_levels`` ordered levels: None (the colour cycle) for at most ten.

    More levels would repeat the cycle's ten colours; viridis gives each level
    its own, in order.
    """
    return None if n_levels <= _CYCLE_LEVELS else _viridis(n_levels)


def _viridis(n: int) -> np.ndarray:
    """``n`` RGBA colours evenly spaced along viridis, shape ``(n, 4)``."""
    from matplotlib import colormaps

    return np.asarray(colormaps["viridis"](np.linspace(0.0, 1.0, n)))


def _level_colorbar(ax: Axes, levels: list[str], title: str) -> None:
    """A colour bar of the levels' colours (:func:`_level_colors`), labelled with the levels.

    At most about a dozen labels are written (every ``step``-th level, the last
    one always), so that the labels stay readable.
    """
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import BoundaryNorm, ListedColormap

    n = len(levels)
    cmap = ListedColormap(_viridis(n))
    norm = BoundaryNorm(np.arange(n + 1) - 0.5, n)
    step = max(1, int(np.ceil(n / 12)))
    ticks = sorted({*range(0, n, step), n - 1})
    bar = ax.figure.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=ax, ticks=ticks)
    bar.ax.set_yticklabels([levels[t] for t in ticks])
    bar.set_label(title)


def _check_rows(newdata: Any) -> None:
    if not isinstance(newdata, pd.DataFrame) or len(newdata) == 0:
        raise OrdstatsError(
            distributed_newdata_hint(newdata, "newdata")
            or "newdata must be a pandas DataFrame with at least one row to draw"
        )


def _effect_names(res: Any) -> list[str]:
    """The location, nominal and scale effects: not the thresholds, nor a link's ``lambda``."""
    if isinstance(res, MixedResults):  # thresholds first, as odds_ratios() reads them
        return list(res.model.param_names[res.model.problem.n_alpha :])
    others = set(res.model.threshold_param_names)
    if res.model.problem.layout.n_lambda:  # no predictor may be named "lambda"
        others.add("lambda")
    return [name for name in res.params.index if name not in others]


def plot_coefficients(
    res: OrdinalResults,
    *,
    odds_ratios: bool = False,
    alpha: float = 0.05,
    ax: Axes | None = None,
    **kwargs: Any,
) -> Axes:
    """Forest plot of the location (and nominal/scale) effects with intervals.

    The thresholds and the parameter ``lambda`` of a flexible link (which is
    not an effect, and whose reference value is not 0) are left out.

    Parameters
    ----------
    res : OrdinalResults
    odds_ratios : bool
        Plot ``exp`` of the effects on a log axis (logit link only), as
        :meth:`OrdinalResults.odds_ratios`.
    alpha : float
        One minus the confidence level.
    ax : matplotlib.axes.Axes, optional
    **kwargs
        Passed to :meth:`matplotlib.axes.Axes.errorbar`.

    Returns
    -------
    matplotlib.axes.Axes
    """
    odds_ratios = check_flag("odds_ratios", odds_ratios)  # odds_ratios='no' is truthy
    if odds_ratios:
        table = res.odds_ratios(alpha=alpha)
        est, lower, upper = table["odds_ratio"], table["lower"], table["upper"]
    else:
        names = _effect_names(res)
        ci = res.conf_int(alpha).loc[names]
        est, lower, upper = res.params[names], ci["lower"], ci["upper"]
    ax = _axes(ax)
    rows = np.arange(len(est))[::-1]
    ax.errorbar(est, rows, xerr=[est - lower, upper - est], fmt="o", capsize=3, **kwargs)
    ax.axvline(1.0 if odds_ratios else 0.0, color="grey", lw=0.8, ls="--")
    ax.set_yticks(rows, list(est.index))
    if odds_ratios:
        ax.set_xscale("log")
    # an L1/elastic-net fit has no standard errors: its intervals are NaN
    band = f"{1 - alpha:.0%} CI" if np.isfinite(lower).any() else "no confidence intervals"
    ax.set_xlabel(("odds ratio" if odds_ratios else "estimate") + f" ({band})")
    return ax


def plot_emmeans(
    emm: EmmGrid,
    *,
    conf_level: float = 0.95,
    adjust: str | None = None,
    ax: Axes | None = None,
    **kwargs: Any,
) -> Figure:
    """Estimated marginal means (or contrasts) with their intervals, as R's ``plot(emm)``.

    One point and interval per row of :meth:`EmmGrid.summary_frame
    <ordstats.results.margins.emmeans.EmmGrid.summary_frame>`, the estimate on
    the horizontal axis and the row's labels on the vertical, one panel per
    group of the ``by`` variables (emmeans' ``plot.emmGrid`` without its
    comparison arrows).  Rows the fit cannot estimate (``nonEst``) are left out.

    Parameters
    ----------
    emm : EmmGrid
        What ``res.emmeans(...)``, ``.contrast()`` or ``.pairs()`` returns.
    conf_level : float
    adjust : str, optional
        The intervals' multiplicity adjustment (default: the grid's, as its summary).
    ax : matplotlib.axes.Axes, optional
        Only for a grid without ``by`` groups (one panel).
    **kwargs
        Passed to :meth:`matplotlib.axes.Axes.errorbar`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    table = emm.summary_frame(adjust=adjust, conf_level=conf_level)
    estimate = emm.estimate_name
    shown = [c for c in emm.labels.columns if c not in emm.by]
    groups = list(table.groupby(emm.by, sort=False)) if emm.by else [((), table)]
    names = [
        [" ".join(map(_label, row)) for row in rows[shown].itertuples(index=False)]
        for _, rows in groups
    ]
    fig, axes = _figure(1, len(groups), ax, share_y=all(n == names[0] for n in names))
    kwargs = {"fmt": "o", "capsize": 3, **kwargs}
    for panel, (key, rows), labels in zip(axes[0], groups, names, strict=True):
        positions = np.arange(len(rows))[::-1]
        values, low, high = (rows[c].to_numpy(float) for c in (estimate, "asymp.LCL", "asymp.UCL"))
        panel.errorbar(values, positions, xerr=[values - low, high - values], **kwargs)
        panel.set_yticks(positions, labels)
        panel.set_xlabel(estimate)
        if emm.by:
            key = key if isinstance(key, tuple) else (key,)
            panel.set_title(
                ", ".join(f"{b} = {_label(v)}" for b, v in zip(emm.by, key, strict=True))
            )
    axes[0][0].set_ylabel(" ".join(shown))
    return fig


def plot_ranef(
    res: MixedResults,
    group: str | None = None,
    *,
    alpha: float = 0.05,
    ax: Axes | None = None,
    **kwargs: Any,
) -> Figure:
    """Caterpillar plot of a mixed fit's random effects (lme4's ``dotplot(ranef(fit))``).

    The conditional mode of each level of a grouping factor with the interval
    ``mode +- z sqrt(condVar)`` (:meth:`MixedResults.ranef` with
    ``condvar=True``), levels ordered by the mode of the first column, one
    panel per column of the factor's terms (intercept, slopes).

    Parameters
    ----------
    res : MixedResults
    group : str, optional
        The grouping factor (default: the only one; required with several).
    alpha : float
        One minus the level of the intervals.
    ax : matplotlib.axes.Axes, optional
        Only for a factor with one column.
    **kwargs
        Passed to :meth:`matplotlib.axes.Axes.errorbar`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    if not isinstance(res, MixedResults):
        raise OrdstatsError("plot_ranef draws the random effects of a mixed fit (with (1|g) terms)")
    z = normal_quantile(alpha)
    both = cast(tuple[dict[str, pd.DataFrame], dict[str, pd.DataFrame]], res.ranef(condvar=True))
    modes, variances = both
    if group is None:
        if len(modes) > 1:
            names = ", ".join(map(repr, modes))
            raise OrdstatsError(f"the fit has several grouping factors: choose group= from {names}")
        group = next(iter(modes))
    if group not in modes:
        raise OrdstatsError(
            f"group={group!r} is not a grouping factor of the fit; choose from "
            f"{', '.join(map(repr, modes))}"
        )
    frame, variance = modes[group], variances[group]
    order = np.argsort(frame.iloc[:, 0].to_numpy(), kind="stable")
    fig, axes = _figure(1, frame.shape[1], ax, share_y=True)
    positions = np.arange(len(frame))
    kwargs = {"fmt": "o", "capsize": 2, "markersize": 4, **kwargs}
    for panel, column in zip(axes[0], frame.columns, strict=True):
        values = frame[column].to_numpy()[order]
        half = z * np.sqrt(variance[column].to_numpy()[order])
        panel.errorbar(values, positions, xerr=half, **kwargs)
        panel.axvline(0.0, color="grey", lw=0.8, ls="--")
        panel.set_yticks(positions, [_label(v) for v in frame.index[order]])
        panel.set_title(str(column))
        panel.set_xlabel("conditional mode")
    axes[0][0].set_ylabel(group)
    return fig


_RESIDUAL_PLOTS = ("qq", "fitted", "covariate")


def plot_residuals(
    res: OrdinalResults | MixedResults,
    x: Any = None,
    *,
    kind: str = "qq",
    newdata: pd.DataFrame | None = None,
    seed: Any = 0,
    ax: Axes | None = None,
    **kwargs: Any,
) -> Axes:
    """Diagnostic plots of surrogate residuals (R's ``sure::autoplot``).

    The residuals (:meth:`~ordstats.OrdinalResults.resid_surrogate`) are draws
    of the link's distribution ``F`` under the fitted model: their Q-Q plot
    against ``F`` bends where the link is wrong, and their smoothed mean
    against the fitted linear predictor or a covariate bends where a trend is
    missing (a spread that changes says the scale varies).

    Parameters
    ----------
    res : OrdinalResults or MixedResults
        A fit of a cumulative (latent-variable) model.
    x : str, array-like or pandas.Series, optional
        For ``kind="covariate"``: a column of the rows (the fitted data or
        ``newdata``), or one value per row (a Series is aligned on the index).
    kind : {"qq", "fitted", "covariate"}
        Q-Q plot against ``F``; residuals against the fitted linear predictor
        ``eta``; or against ``x``.  The last two add a lowess smoother (R's
        ``lowess`` defaults) and the residuals' mean as a dashed line.
    newdata : pandas.DataFrame, optional
        Rows with the response to draw residuals for (default: the fitted rows;
        needed for a fit read in chunks, on Dask or on Spark).
    seed : int, numpy.random.Generator or None
        Of the residuals' draw (default 0: the same plot each time).
    ax : matplotlib.axes.Axes, optional
    **kwargs
        Passed to :meth:`matplotlib.axes.Axes.scatter`.

    Returns
    -------
    matplotlib.axes.Axes
    """
    if kind not in _RESIDUAL_PLOTS:
        raise OrdstatsError(f"kind must be one of {_RESIDUAL_PLOTS}; got {kind!r}")
    if kind != "covariate" and x is not None:
        raise OrdstatsError(f"x is the covariate of kind='covariate'; kind={kind!r} takes none")
    resid = res.resid_surrogate(newdata, seed=seed)
    link = resid.attrs["link"]
    ax = _axes(ax)
    kwargs = {"s": 8, "alpha": 0.5, **kwargs}
    if kind == "qq":
        values = np.sort(resid.dropna().to_numpy())
        positions = (np.arange(1, values.size + 1) - 0.5) / values.size
        expected = link.ppf(positions)
        ax.scatter(expected, values, **kwargs)
        ax.axline((0.0, 0.0), slope=1.0, color="grey", lw=0.8, ls="--")
        ax.set_xlabel(f"quantiles of the {link.name} distribution")
        ax.set_ylabel("surrogate residuals (sorted)")
        return ax
    if kind == "fitted":
        eta = res.fittedvalues if newdata is None else res.predict(newdata, which="linear")
        against, label = pd.Series(eta, index=resid.index), "fitted linear predictor"
    else:
        against, label = _residual_covariate(res, x, resid.index, newdata)
    _scatter_with_lowess(ax, against.to_numpy(dtype=float), resid.to_numpy(), kwargs)
    ax.set_xlabel(label)
    ax.set_ylabel("surrogate residuals")
    return ax


def _residual_covariate(
    res: Any, x: Any, index: pd.Index, newdata: pd.DataFrame | None
) -> tuple[pd.Series, str]:
    """The covariate of a residual plot, one value per row of ``index``, and its label."""
    if x is None:
        raise OrdstatsError("kind='covariate' needs x: a column name or one value per row")
    if isinstance(x, str):
        rows = newdata if newdata is not None else res.margins_data()
        if x not in rows.columns:
            raise OrdstatsError(
                f"x={x!r} is not a column of the rows; choose from "
                f"{', '.join(map(repr, map(str, rows.columns)))}"
            )
        column = rows[x]
        if not pd.api.types.is_numeric_dtype(column):
            raise OrdstatsError(f"x={x!r} is not numeric: plot the residuals by level instead")
        return column.reindex(index), x
    if isinstance(x, pd.Series):
        return x.reindex(index), str(x.name or "x")
    values = np.asarray(x, dtype=float)
    if values.shape != (len(index),):
        raise OrdstatsError(f"x needs one value per row ({len(index)}); got shape {values.shape}")
    return pd.Series(values, index=index), "x"


def _scatter_with_lowess(ax: Axes, x: FloatArray, y: FloatArray, kwargs: dict[str, Any]) -> None:
    """Points, their lowess curve (R's defaults: f = 2/3, 3 iterations) and their mean."""
    from statsmodels.nonparametric.smoothers_lowess import lowess

    finite = np.isfinite(x) & np.isfinite(y)
    x, y = x[finite], y[finite]
    ax.scatter(x, y, **kwargs)
    if x.size > 2 and np.ptp(x) > 0:
        curve = lowess(y, x, frac=2 / 3, it=3, delta=0.01 * np.ptp(x))
        ax.plot(curve[:, 0], curve[:, 1], color="C3", lw=1.5, label="lowess")
    ax.axhline(float(np.mean(y)), color="grey", lw=0.8, ls="--", label="mean")
    ax.legend(loc="best", frameon=False)


def plot_conditional_cdf(
    res: OrdinalResults,
    newdata: pd.DataFrame,
    *,
    alpha: float | None = 0.05,
    labels: Any = None,
    ax: Axes | None = None,
) -> Axes:
    """Plot the fitted conditional distribution ``P(Y <= y | x)`` of each row of ``newdata``.

    For a fit with numeric response levels (a continuous response fitted with
    ``many_levels=True``, as R's ``rms::orm``): one step function per row
    (covariate pattern), with steps at the level values, and the pointwise
    intervals of :meth:`~ordstats.OrdinalResults.exceedance` as a band.

    Parameters
    ----------
    res : OrdinalResults
    newdata : pandas.DataFrame
        One row per covariate pattern to draw.
    alpha : float or None
        One minus the confidence level of the band; None draws no band.
    labels : sequence of str, optional
        Legend entry of each row (default: the index labels of ``newdata``).
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> grid = boston.iloc[:3]  # doctest: +SKIP
    >>> ax = ordstats.plotting.plot_conditional_cdf(res, grid)  # doctest: +SKIP
    """
    from ordstats.results.continuous import numeric_level_values

    if isinstance(res, MixedResults) or not hasattr(res, "exceedance"):
        raise OrdstatsError(
            "plot_conditional_cdf draws exceedance() of a fit of OrdinalModel (a numeric "
            "response fitted with many_levels=True), which this fit has not; for a mixed "
            "model plot plot_predictions(res, condition=..., type='exceedance')"
        )
    _check_rows(newdata)
    values = numeric_level_values(res.model.design.response.values, "plot_conditional_cdf")
    names = _row_labels(newdata, labels)
    # P(Y <= v_j) = 1 - P(Y >= v_{j+1}); P(Y <= v_K) = 1
    table = res.exceedance(list(values[1:]), newdata, alpha=0.05 if alpha is None else alpha)
    shape = (len(newdata), len(values) - 1)
    ones = np.ones((len(newdata), 1))
    cdf = np.hstack([1.0 - table["estimate"].to_numpy().reshape(shape), ones])
    lower = np.hstack([1.0 - table["upper"].to_numpy().reshape(shape), ones])
    upper = np.hstack([1.0 - table["lower"].to_numpy().reshape(shape), ones])
    ax = _axes(ax)
    for row, name in enumerate(names):
        (line,) = ax.step(values, cdf[row], where="post", label=name)
        if alpha is not None:
            ax.fill_between(
                values, lower[row], upper[row], step="post", alpha=0.2, color=line.get_color()
            )
    ax.set_xlabel(res.model.endog_name)
    ax.set_ylabel(f"P({res.model.endog_name} <= value)")
    ax.set_ylim(0, 1)
    ax.legend()
    return ax


def _row_labels(newdata: pd.DataFrame, labels: Any) -> list[str]:
    """The legend entry of each row: ``labels`` (one per row), else the index labels."""
    if labels is None:
        return [str(v) for v in newdata.index]
    if isinstance(labels, str) or not np.ndim(labels) or len(labels) != len(newdata):
        raise OrdstatsError(
            f"labels must be a list of {len(newdata)} names, one per row of newdata; got "
            f"{labels!r:.60}"
        )
    return [str(v) for v in labels]


# -- the margins plots (marginaleffects' plot_predictions, plot_comparisons, plot_slopes) ---

#: points on a numeric x axis of a conditional plot (between the minimum and the maximum)
X_POINTS = 50
#: the most panels a margins plot draws (more would be too small to read)
MAX_PANELS = 30
_KINDS = ("auto", "stack", "lines")
_NUMERIC_SUMMARIES = ("range", "threenum", "fivenum", "minmax")
_Y_LABELS = {
    "prob": "P(Y = level)",
    "cumprob": "P(Y <= level)",
    "exceedance": "P(Y >= level)",
    "expected": "expected value",
    "class": "most probable level (position)",
    "linear": "linear predictor",
    "latent": "latent mean",
}
#: the columns that name one estimate of comparisons and slopes
_CONTRAST_COLUMNS = ("term", "contrast")


def _margins_fit(res: Any, verb: str) -> MarginsFit:
    if not isinstance(res, MarginsFit):
        raise OrdstatsError(
            f"{verb} plots the predictions, comparisons or slopes of an ordstats fit; "
            f"{type(res).__name__} has none (fit a model with OrdinalModel.from_formula(...).fit())"
        )
    return res


def _names(value: Any, argument: str) -> dict[str, Any]:
    """``condition=``/``by=`` as an ordered ``{name: values or None}`` of one to three names."""
    if isinstance(value, str):
        spec = {value: None}
    elif isinstance(value, dict):
        spec = dict(value)
    elif isinstance(value, (list, tuple)):
        spec = dict.fromkeys(value)
    else:
        raise OrdstatsError(
            f"{argument} must be a column name, a list of up to three names or a dict "
            f"{{name: values}}; got {type(value).__name__}"
        )
    if not all(isinstance(name, str) for name in spec):
        raise OrdstatsError(f"{argument} must name columns (strings); got {list(spec)!r}")
    if not 1 <= len(spec) <= 3:
        raise OrdstatsError(
            f"{argument} names {len(spec)} variables; give one to three: the x axis, then the "
            "colours, then the rows of panels"
        )
    return spec


def _check_condition(fit: MarginsFit, spec: dict[str, Any], reference: pd.DataFrame) -> None:
    known = fit.margins_variables()
    unknown = [name for name in spec if name not in known]
    if unknown:
        raise OrdstatsError(
            f"condition names {', '.join(map(repr, unknown))}, which the model does not use; "
            f"its predictors are {', '.join(map(repr, known))}"
        )
    missing = [name for name in spec if name not in reference.columns]
    if missing:
        raise OrdstatsError(
            f"condition names {', '.join(map(repr, missing))}, which is not a column of newdata"
        )


@dataclass(frozen=True)
class _ConditionSummary:
    """What the default grid values of one condition variable are made from.

    ``levels`` for a factor; for a number, ``numbers``: its mean, SD, quartiles,
    median, minimum and maximum (:func:`~ordstats.results.margins.verbs.numeric_summary`
    in memory, :func:`~ordstats.results.margins.stream.column_summaries` of
    rows read in chunks: the same numbers).
    """

    name: str
    levels: list[Any] | None = None
    numbers: dict[str, float] = field(default_factory=dict)

    @classmethod
    def of_column(cls, column: pd.Series) -> _ConditionSummary:
        """The summary of a column in memory."""
        if is_factor(column):
            return cls(str(column.name), levels=factor_levels(column))
        return cls(str(column.name), numbers=numeric_summary(column.astype(float)))

    @property
    def distinct(self) -> int:
        """Distinct values of a number, up to 2 (0: none)."""
        low, high = self.numbers.get("min", np.nan), self.numbers.get("max", np.nan)
        return 2 if high > low else int(bool(np.isfinite(low)))


def _streamed_summaries(fit: Any, names: list[str]) -> dict[str, _ConditionSummary]:
    """:class:`_ConditionSummary` of columns of a fit read in chunks (a few passes)."""
    levels = streamed_factor_levels(fit, names)
    numeric = [name for name in names if name not in levels]
    out = {name: _ConditionSummary(name, levels=found) for name, found in levels.items()}
    for name, summary in column_summaries(fit, numeric).items():
        out[name] = _ConditionSummary(name, numbers=summary)
    return out


def _condition_values(summary: _ConditionSummary, spec: Any, first: bool) -> list[Any]:
    """The grid values of one condition variable (marginaleffects' defaults).

    A factor takes its levels; a numeric x axis ``X_POINTS`` points from the
    minimum to the maximum, a numeric colour or panel variable Tukey's five
    numbers.  ``"threenum"`` (mean and mean +- SD), ``"fivenum"``,
    ``"minmax"`` and ``"range"`` choose a summary; anything else is taken as
    the values.
    """
    if summary.levels is not None:
        if spec is None:
            return summary.levels
        return [spec] if isinstance(spec, str) or not np.ndim(spec) else list(spec)
    if spec is None:
        spec = "range" if first else "fivenum"
    if not isinstance(spec, str):
        return list(spec) if np.ndim(spec) else [spec]
    numbers = summary.numbers
    if summary.distinct < 2 and spec in _NUMERIC_SUMMARIES:
        if summary.distinct == 1 and not first:  # one colour or panel
            return [numbers["min"]]
        raise OrdstatsError(
            f"condition: numeric {summary.name!r} takes {summary.distinct} distinct value(s) in "
            f"the data, so the x axis has nothing to span; give its values "
            f"(condition={{{summary.name!r}: [...]}}) or use newdata= rows where it varies"
        )
    if spec == "range":
        return list(np.linspace(numbers["min"], numbers["max"], X_POINTS))
    if spec == "threenum":
        mean, sd = numbers["mean"], numbers["sd"]
        return [mean - sd, mean, mean + sd]
    if spec == "fivenum":
        return sorted({numbers[key] for key in ("min", "q1", "median", "q3", "max")})
    if spec == "minmax":
        return [numbers["min"], numbers["max"]]
    raise OrdstatsError(
        f"condition: numeric {summary.name!r} takes values or one of "
        f"{', '.join(map(repr, _NUMERIC_SUMMARIES))}; got {spec!r}"
    )


def _plot_data(
    fit: MarginsFit,
    verb: Callable[..., pd.DataFrame],
    condition: Any,
    by: Any,
    newdata: Any,
    options: dict[str, Any],
) -> tuple[pd.DataFrame, list[str]]:
    """The verb's estimates on a condition grid or averaged ``by``, and the plotted names."""
    if (condition is None) == (by is None):
        raise OrdstatsError(
            "give either condition= (estimates on a grid over these predictors, the others at "
            "their mean or mode) or by= (averages over the rows within these columns)"
        )
    if by is not None:
        names = list(_names(by, "by"))
        return verb(fit, newdata, by=names, **options), names
    if options.get("wts") is not None:
        raise OrdstatsError("wts= weights the rows of an average: use it with by=, not condition=")
    spec = _names(condition, "condition")
    if newdata is not None and not isinstance(newdata, pd.DataFrame):
        raise OrdstatsError(
            distributed_newdata_hint(newdata, "newdata")
            or f"newdata must be a pandas DataFrame; got {type(newdata).__name__}"
        )
    if newdata is not None and len(newdata) == 0:
        raise OrdstatsError("newdata has no rows to make the condition grid from")
    if newdata is None and streams(fit, None):  # rows read in chunks: summaries by passes
        columns = cast(Any, fit)._margins_grid_columns()  # the streaming fits' hook
        _check_condition(fit, spec, pd.DataFrame(columns=columns))
        summarised = [
            name for name, given in spec.items() if given is None or isinstance(given, str)
        ]
        summaries = _streamed_summaries(fit, summarised)
    else:
        reference = fit.margins_data() if newdata is None else newdata
        _check_condition(fit, spec, reference)
        summaries = {name: _ConditionSummary.of_column(reference[name]) for name in spec}
    values = {
        name: _condition_values(summaries.get(name, _ConditionSummary(name)), chosen, position == 0)
        for position, (name, chosen) in enumerate(spec.items())
    }
    grid = datagrid(fit if newdata is None else None, newdata, "mean_or_mode", **values)
    return verb(fit, grid, **options), list(spec)


class _Layout:
    """Which table columns go to the x axis, the colours, the panel columns and rows."""

    def __init__(self, table: pd.DataFrame, names: list[str], *, stack: bool) -> None:
        levels = "group" in table.columns and table["group"].nunique() > 1
        self.x = names[0]
        self.rows = names[2:] + self._contrasts(table)
        if stack:
            self.colour: str | None = "group"
            self.column = names[1] if len(names) > 1 else None
        else:
            self.colour = names[1] if len(names) > 1 else ("group" if levels else None)
            self.column = "group" if levels and len(names) > 1 else None

    @staticmethod
    def _contrasts(table: pd.DataFrame) -> list[str]:
        present = [c for c in _CONTRAST_COLUMNS if c in table.columns]
        if present and len(table[present].drop_duplicates()) > 1:
            return present
        return []


def _label(value: Any) -> str:
    if isinstance(value, (float, np.floating)):
        return f"{value:.3g}"
    return str(value)


def _panel_title(names: list[str], values: tuple[Any, ...], response: str) -> str:
    named = dict(zip(names, values, strict=True))
    parts = [
        f"{response if name == 'group' else name} = {_label(value)}"
        for name, value in named.items()
        if name not in _CONTRAST_COLUMNS
    ]
    contrast = ": ".join(_label(named[c]) for c in _CONTRAST_COLUMNS if c in named)
    return ", ".join([contrast, *parts] if contrast else parts)


def _figure(
    n_rows: int, n_columns: int, ax: Axes | None, share_y: bool = True
) -> tuple[Figure, np.ndarray]:
    if ax is not None:
        ax = _checked_axes(ax)
        if (n_rows, n_columns) != (1, 1):
            raise OrdstatsError(
                f"this plot has {n_rows} x {n_columns} panels; leave ax=None to draw it in a "
                "new figure (ax= takes a single panel)"
            )
        return ax.figure, np.array([[ax]])  # type: ignore[return-value]
    fig, axes = _pyplot().subplots(
        n_rows,
        n_columns,
        squeeze=False,
        sharex=True,
        sharey=share_y,
        figsize=(1.5 + 3.5 * min(n_columns, 5), 1.0 + 2.8 * min(n_rows, 6)),
        layout="constrained",
    )
    return fig, axes


def _select(table: pd.DataFrame, names: list[str], values: tuple[Any, ...]) -> pd.DataFrame:
    keep = np.ones(len(table), dtype=bool)
    for name, value in zip(names, values, strict=True):
        keep &= (table[name] == value).to_numpy()
    return table[keep]


def _draw_lines(ax: Axes, panel: pd.DataFrame, layout: _Layout, colours: list[Any]) -> None:
    """Lines with bands (numeric x) or points with error bars (factor x), one per colour."""
    x_levels = _x_levels(panel, layout.x)
    for k, value in enumerate(colours):
        part = panel if value is None else panel[(panel[layout.colour] == value).to_numpy()]
        if part.empty:
            continue
        label = None if value is None else _label(value)
        est = part["estimate"].to_numpy(dtype=float)
        low, high = part["conf_low"].to_numpy(dtype=float), part["conf_high"].to_numpy(dtype=float)
        yerr = np.vstack([est - low, high - est])
        if x_levels is None and len(part) > 1:
            order = np.argsort(part[layout.x].to_numpy(dtype=float), kind="stable")
            xs = part[layout.x].to_numpy(dtype=float)[order]
            ax.plot(xs, est[order], color=f"C{k % 10}", label=label)
            ax.fill_between(xs, low[order], high[order], color=f"C{k % 10}", alpha=0.2, lw=0)
        elif x_levels is None:  # one numeric value: a line and a band of one point do not show
            xs = part[layout.x].to_numpy(dtype=float)
            ax.errorbar(xs, est, yerr=yerr, fmt="o", color=f"C{k % 10}", capsize=3, label=label)
        else:
            dodge = 0.6 * (k + 0.5) / len(colours) - 0.3 if len(colours) > 1 else 0.0
            xs = np.array([x_levels.index(v) for v in part[layout.x]]) + dodge
            ax.errorbar(xs, est, yerr=yerr, fmt="o", color=f"C{k % 10}", capsize=3, label=label)
    if x_levels is not None:
        ax.set_xticks(range(len(x_levels)), [_label(v) for v in x_levels])


def _x_levels(panel: pd.DataFrame, x: str) -> list[Any] | None:
    """The x axis's levels in their order for a factor, None for a numeric x."""
    if not is_factor(panel[x]):
        return None
    present = set(panel[x])
    return [level for level in factor_levels(panel[x]) if level in present]


def _draw_stack(ax: Axes, panel: pd.DataFrame, layout: _Layout) -> None:
    """Stacked probabilities: bars for a factor x (or one numeric value), areas for a numeric x."""
    levels = list(pd.unique(panel["group"]))
    x_levels = _x_levels(panel, layout.x)
    keys = x_levels if x_levels is not None else sorted(set(panel[layout.x].astype(float)))
    heights = []
    for level in levels:
        part = panel[(panel["group"] == level).to_numpy()]
        by_x = dict(
            zip(
                part[layout.x] if x_levels else part[layout.x].astype(float),
                part["estimate"],
                strict=True,
            )
        )
        heights.append(np.array([by_x.get(key, np.nan) for key in keys], dtype=float))
    colours = [f"C{k % 10}" for k in range(len(levels))]
    if x_levels is None and len(keys) > 1:
        ax.stackplot(keys, *heights, colors=colours, labels=[_label(v) for v in levels])
    else:
        bottom = np.zeros(len(keys))
        for level, height, colour in zip(levels, heights, colours, strict=True):
            ax.bar(range(len(keys)), height, bottom=bottom, color=colour, label=_label(level))
            bottom = bottom + height
        ax.set_xticks(range(len(keys)), [_label(v) for v in keys])
    ax.set_ylim(0, 1)


def _response_name(res: Any) -> str:
    if isinstance(res, MixedResults):
        return res.model.design.fixed.response_name
    return str(getattr(getattr(res, "model", None), "endog_name", "response"))


def _draw(
    res: Any,
    table: pd.DataFrame,
    layout: _Layout,
    *,
    stack: bool,
    ylabel: str,
    ax: Axes | None,
) -> Figure:
    response = _response_name(res)
    row_keys: list[tuple[Any, ...]] = [()]
    if layout.rows:
        row_keys = list(table[layout.rows].drop_duplicates().itertuples(index=False, name=None))
    column_keys = list(pd.unique(table[layout.column])) if layout.column else [None]
    colours = list(pd.unique(table[layout.colour])) if layout.colour else [None]
    _check_panels(len(row_keys), len(column_keys), layout, response)
    fig, axes = _figure(len(row_keys), len(column_keys), ax)
    for i, row_key in enumerate(row_keys):
        for j, column_key in enumerate(column_keys):
            names = layout.rows + ([layout.column] if layout.column else [])
            values = row_key + ((column_key,) if layout.column else ())
            panel, axis = _select(table, names, values), axes[i, j]
            if stack:
                _draw_stack(axis, panel, layout)
            else:
                axis.axhline(0.0, color="grey", lw=0.6, ls=":", gid="reference")
                _draw_lines(axis, panel, layout, colours)
            axis.set_title(_panel_title(names, values, response), fontsize="medium")
    _title_single_contrast(fig, table, layout, ax)
    for axis in axes[-1, :]:
        axis.set_xlabel(layout.x)
    for axis in axes[:, 0]:
        axis.set_ylabel(ylabel)
    if layout.colour is not None:
        title = response if layout.colour == "group" else layout.colour
        axes[0, -1].legend(
            title=title, fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0)
        )
    return fig


def _check_panels(n_rows: int, n_columns: int, layout: _Layout, response: str) -> None:
    if n_rows * n_columns > MAX_PANELS:
        names = layout.rows + ([layout.column] if layout.column else [])
        split = ", ".join(f"the levels of {response}" if n == "group" else n for n in names)
        raise OrdstatsError(
            f"this plot would have {n_rows} x {n_columns} = {n_rows * n_columns} panels (at most "
            f"{MAX_PANELS} are drawn), one per value of {split}: give fewer values "
            "(condition={name: [...]}), or draw=False for the estimates as a table"
        )


def _title_single_contrast(
    fig: Figure, table: pd.DataFrame, layout: _Layout, ax: Axes | None
) -> None:
    """Name the one contrast plotted (several get one panel row each)."""
    if "term" not in table.columns or "term" in layout.rows:
        return
    first = table.iloc[0]
    title = f"{first['term']}: {first['contrast']}" if "contrast" in table else str(first["term"])
    if ax is None:
        fig.suptitle(title)
    else:
        ax.set_title(title)


def _stacked(kind: str, type: str, table: pd.DataFrame, x: str) -> bool:
    if kind not in _KINDS:
        raise OrdstatsError(f"kind must be one of {', '.join(map(repr, _KINDS))}; got {kind!r}")
    if kind == "stack" and type != "prob":
        raise OrdstatsError(
            f"kind='stack' stacks the probabilities of the levels (type='prob'); type={type!r} "
            "is drawn as lines: use kind='lines'"
        )
    return kind == "stack" or (kind == "auto" and type == "prob" and is_factor(table[x]))


def plot_predictions(
    res: Any,
    condition: Any = None,
    *,
    by: Any = None,
    newdata: pd.DataFrame | None = None,
    type: str = "prob",
    wts: Any = None,
    kind: str = "auto",
    conf_level: float = 0.95,
    conf_type: str = "auto",
    draw: bool = True,
    ax: Axes | None = None,
) -> Any:
    """Plot predictions against predictors, as marginaleffects' ``plot_predictions``.

    ``condition=`` plots conditional predictions on a grid (the predictors
    named vary, the others are held at their mean or mode, as
    :func:`ordstats.datagrid`); ``by=`` plots average predictions over the
    rows of ``newdata`` (default: the estimation rows) within the columns
    named.  The first name goes on the x axis, the second gets one colour
    each (or, with ``kind="stack"``, one panel column each), the third one
    panel row each.  Without a second name the response levels get the
    colours; with one they get the panel columns.

    The estimates are those of :meth:`OrdinalResults.predictions` and
    :meth:`OrdinalResults.avg_predictions` with the same arguments, with
    their intervals (``conf_type``).

    Parameters
    ----------
    res : OrdinalResults
        A fit (any fit with the margins verbs).
    condition : str, list of str or dict, optional
        One to three predictors, or ``{name: values}``: a factor takes its
        levels by default, a numeric x axis 50 points from its minimum to
        its maximum, a numeric colour or panel variable Tukey's five numbers
        (minimum, quartiles, maximum); ``"threenum"`` (mean - SD, mean,
        mean + SD), ``"fivenum"``, ``"minmax"`` and ``"range"`` choose a
        summary.
    by : str or list of str, optional
        One to three columns of ``newdata`` to average within.
    newdata : pandas.DataFrame, optional
        With ``by``: the rows to average.  With ``condition``: the rows whose
        ranges, levels, means and modes make the grid.  Default: the
        estimation rows.
    type : str
        The prediction type (``"prob"``, ``"cumprob"``, ``"exceedance"``,
        ``"expected"``, ``"linear"``, ``"latent"``).
    wts : str, array-like or pandas.Series, optional
        Weights of the rows in the averages (``by`` only).
    kind : {"auto", "stack", "lines"}
        ``"stack"``: the level probabilities stacked to one (bars for a factor
        x, areas for a numeric x; no intervals; ``type="prob"`` only).
        ``"lines"``: one line with its confidence band per series (points
        with error bars for a factor x).  ``"auto"``: stacked bars for
        ``type="prob"`` over a factor x, lines otherwise.
    conf_level : float
    conf_type : {"auto", "wald", "logit"}
        How the intervals are formed (see :meth:`OrdinalResults.predictions`).
    draw : bool
        ``False`` returns the estimates that would be plotted instead of a
        figure (marginaleffects' ``draw=False``).
    ax : matplotlib.axes.Axes, optional
        Draw into this axes (a plot with one panel only).

    Returns
    -------
    matplotlib.figure.Figure or MarginsTable
        The figure (its panels are ``fig.axes``), or the estimates if
        ``draw=False``.

    Examples
    --------
    >>> import ordstats
    >>> wine = ordstats.datasets.load("wine")
    >>> res = ordstats.OrdinalModel.from_formula("rating ~ temp * contact", wine).fit()
    >>> table = ordstats.plotting.plot_predictions(res, by=["temp", "contact"], draw=False)
    >>> round(float(table["estimate"].iloc[0]), 4)  # P(rating = 1 | cold, no)
    0.196
    >>> fig = ordstats.plotting.plot_predictions(res, by=["temp", "contact"])  # doctest: +SKIP
    """
    fit = _margins_fit(res, "plot_predictions")
    options = {"type": type, "wts": wts, "conf_level": conf_level, "conf_type": conf_type}
    table, names = _plot_data(fit, predictions, condition, by, newdata, options)
    stack = _stacked(kind, type, table, names[0])
    if not check_flag("draw", draw):  # draw='no' is truthy
        return table
    layout = _Layout(table, names, stack=stack)
    label = "probability" if stack else _Y_LABELS.get(type, type)
    return _draw(res, table, layout, stack=stack, ylabel=label, ax=ax)


def _check_plotted_variables(variables: Any, verb: str) -> Any:
    if variables is None:
        raise OrdstatsError(
            f"{verb} needs variables=: the predictor whose effect to plot (e.g. "
            "variables='contact', or {'contact': ['no', 'yes']})"
        )
    return variables


def plot_comparisons(
    res: Any,
    variables: Any = None,
    condition: Any = None,
    *,
    by: Any = None,
    newdata: pd.DataFrame | None = None,
    comparison: Any = "difference",
    type: str = "prob",
    wts: Any = None,
    conf_level: float = 0.95,
    conf_type: str = "auto",
    draw: bool = True,
    ax: Axes | None = None,
) -> Any:
    """Plot comparisons of predictions against predictors, as marginaleffects' ``plot_comparisons``.

    The effect of changing ``variables`` (its contrast as in
    :meth:`OrdinalResults.comparisons`) on the predictions of ``type``, with
    its confidence intervals: on a ``condition`` grid (conditional
    comparisons) or averaged ``by`` columns of ``newdata``.  The layout is
    that of :func:`plot_predictions` with ``kind="lines"``; several contrasts
    (e.g. ``"pairwise"``) get one panel row each.

    Parameters
    ----------
    res : OrdinalResults
    variables : str or dict
        The predictor to change, or ``{name: contrast}`` (see
        :meth:`OrdinalResults.comparisons`).
    condition, by, newdata, type, wts, conf_level, conf_type, draw, ax
        As for :func:`plot_predictions`.
    comparison : {"difference", "ratio", "lnratio", "lnor"} or callable
        As for :meth:`OrdinalResults.comparisons`.

    Returns
    -------
    matplotlib.figure.Figure or MarginsTable

    Examples
    --------
    >>> import ordstats
    >>> wine = ordstats.datasets.load("wine")
    >>> res = ordstats.OrdinalModel.from_formula("rating ~ temp * contact", wine).fit()
    >>> fig = ordstats.plotting.plot_comparisons(res, "contact", by="temp")  # doctest: +SKIP
    """
    fit = _margins_fit(res, "plot_comparisons")
    options = {
        "variables": _check_plotted_variables(variables, "plot_comparisons"),
        "comparison": comparison,
        "type": type,
        "wts": wts,
        "conf_level": conf_level,
        "conf_type": conf_type,
    }
    table, names = _plot_data(fit, comparisons, condition, by, newdata, options)
    if not check_flag("draw", draw):  # draw='no' is truthy
        return table
    layout = _Layout(table, names, stack=False)
    name = comparison if isinstance(comparison, str) else "comparison"
    ylabel = f"{name} in {_Y_LABELS.get(type, type)}"
    return _draw(res, table, layout, stack=False, ylabel=ylabel, ax=ax)


def plot_slopes(
    res: Any,
    variables: Any = None,
    condition: Any = None,
    *,
    by: Any = None,
    newdata: pd.DataFrame | None = None,
    slope: str = "dydx",
    type: str = "prob",
    wts: Any = None,
    conf_level: float = 0.95,
    conf_type: str = "auto",
    draw: bool = True,
    ax: Axes | None = None,
) -> Any:
    """Plot slopes (derivatives) of predictions against predictors, as marginaleffects'.

    The derivative of the predictions of ``type`` in the numeric predictor
    ``variables`` (a factor gets its contrasts with the reference level), as
    :meth:`OrdinalResults.slopes`, with its confidence intervals: on a
    ``condition`` grid or averaged ``by`` columns of ``newdata``.  The layout
    is that of :func:`plot_predictions` with ``kind="lines"``.

    Parameters
    ----------
    res : OrdinalResults
    variables : str
        The predictor to differentiate in.
    condition, by, newdata, type, wts, conf_level, conf_type, draw, ax
        As for :func:`plot_predictions`.
    slope : {"dydx", "eyex", "eydx", "dyex"}
        As for :meth:`OrdinalResults.slopes`.

    Returns
    -------
    matplotlib.figure.Figure or MarginsTable

    Examples
    --------
    >>> import ordstats
    >>> wine = ordstats.datasets.load("wine")
    >>> res = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    >>> fig = ordstats.plotting.plot_slopes(res, "contact", by="temp")  # doctest: +SKIP
    """
    fit = _margins_fit(res, "plot_slopes")
    options = {
        "variables": _check_plotted_variables(variables, "plot_slopes"),
        "slope": slope,
        "type": type,
        "wts": wts,
        "conf_level": conf_level,
        "conf_type": conf_type,
    }
    table, names = _plot_data(fit, slopes, condition, by, newdata, options)
    if not check_flag("draw", draw):  # draw='no' is truthy
        return table
    layout = _Layout(table, names, stack=False)
    derivative = table["contrast"].astype(str).str.match(r"^[de]Y/[de]X$").all()
    ylabel = f"{slope if derivative else 'difference'} in {_Y_LABELS.get(type, type)}"
    return _draw(res, table, layout, stack=False, ylabel=ylabel, ax=ax)
