"""Verdicts of paired model comparisons, shared by the vignettes that compare models.

Not a vignette: the gallery skips files whose names start with ``_``, and the
vignettes import this one from their own folder.
"""

from __future__ import annotations

import pandas as pd


def verdict(lower: float, upper: float, lower_is_better: bool) -> str:
    """A model against the reference, from the interval of (model - reference).

    Parameters
    ----------
    lower, upper : float
        The 95% interval of the paired difference, model minus reference.
    lower_is_better : bool
        Whether a lower value of the metric is better (log-loss) or worse (accuracy).

    Returns
    -------
    str
        ``"better"`` or ``"worse"`` where the interval excludes zero, else ``"tied"``.
    """
    if lower <= 0 <= upper:
        return "tied"
    return "better" if (upper < 0) == lower_is_better else "worse"


def verdicts(table: pd.DataFrame, lower_is_better: dict[str, bool]) -> pd.DataFrame:
    """The verdict of every model (rows) on every metric (columns).

    Parameters
    ----------
    table : pandas.DataFrame
        Indexed by ``(model, metric)``, with columns ``lower`` and ``upper``.
    lower_is_better : dict
        Per metric, in the order of the columns wanted.

    Returns
    -------
    pandas.DataFrame
    """
    words = [
        verdict(row.lower, row.upper, lower_is_better[metric])
        for (_, metric), row in table.iterrows()
    ]
    models = list(dict.fromkeys(table.index.get_level_values("model")))
    return pd.Series(words, index=table.index).unstack().loc[models, list(lower_is_better)]
