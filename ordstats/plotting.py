"""Plots of fitted ordinal models (matplotlib is optional and imported on use).

Each function draws on a given :class:`matplotlib.axes.Axes` (or a new one) and
returns it; nothing is written to disk.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ordstats.errors import OrdstatsError

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from ordstats.results.fitted import OrdinalResults

__all__ = ["plot_coefficients", "plot_probabilities"]


def _axes(ax: Axes | None) -> Axes:
    if ax is not None:
        return ax
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise OrdstatsError("plotting needs matplotlib: pip install matplotlib") from exc
    return plt.subplots()[1]


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
    if x not in newdata.columns:
        raise OrdstatsError(f"x={x!r} is not a column of newdata")
    prob = res.predict(newdata, which="prob")
    ax = _axes(ax)
    values = newdata[x]
    numeric = pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)
    positions = values.to_numpy(dtype=float) if numeric else np.arange(len(values))
    if kind == "line":
        for level in prob.columns:
            ax.plot(positions, prob[level], marker=None if numeric else "o", label=str(level))
    elif numeric:
        order = np.argsort(positions)
        ax.stackplot(
            positions[order],
            *(prob[c].to_numpy()[order] for c in prob.columns),
            labels=[str(c) for c in prob.columns],
        )
    else:
        bottom = np.zeros(len(prob))
        for level in prob.columns:
            ax.bar(positions, prob[level], bottom=bottom, label=str(level))
            bottom += prob[level].to_numpy()
    if not numeric:
        ax.set_xticks(positions, [str(v) for v in values])
    ax.set_xlabel(x)
    ax.set_ylabel("probability")
    ax.set_ylim(0, 1 if kind == "stack" else None)
    ax.legend(title=res.model.endog_name)
    return ax


def plot_coefficients(
    res: OrdinalResults,
    *,
    odds_ratios: bool = False,
    alpha: float = 0.05,
    ax: Axes | None = None,
    **kwargs: Any,
) -> Axes:
    """Forest plot of the location (and nominal/scale) effects with intervals.

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
    if odds_ratios:
        table = res.odds_ratios(alpha=alpha)
        est, lower, upper = table["odds_ratio"], table["lower"], table["upper"]
    else:
        names = [n for n in res.params.index if n not in res.model.threshold_param_names]
        ci = res.conf_int(alpha).loc[names]
        est, lower, upper = res.params[names], ci["lower"], ci["upper"]
    ax = _axes(ax)
    rows = np.arange(len(est))[::-1]
    ax.errorbar(est, rows, xerr=[est - lower, upper - est], fmt="o", capsize=3, **kwargs)
    ax.axvline(1.0 if odds_ratios else 0.0, color="grey", lw=0.8, ls="--")
    ax.set_yticks(rows, list(est.index))
    if odds_ratios:
        ax.set_xscale("log")
    ax.set_xlabel(("odds ratio" if odds_ratios else "estimate") + f" ({1 - alpha:.0%} CI)")
    return ax
