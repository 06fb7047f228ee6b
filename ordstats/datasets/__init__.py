"""Ordinal data sets bundled with ordstats, with R's level orders.

``wine`` (Randall 1989, bitterness of wine; from R's ``ordinal``), ``soup``
(discrimination study of packet soup; from R's ``ordinal``) and ``housing``
(Copenhagen housing conditions; from R's ``MASS``, a frequency table with
weights ``Freq``).
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import pandas as pd

from ordstats.errors import OrdstatsError

__all__ = ["describe", "list_datasets", "load"]

_NAMES = ("wine", "soup", "housing")


def list_datasets() -> list[str]:
    """Names of the bundled data sets."""
    return list(_NAMES)


def describe(name: str) -> dict[str, Any]:
    """Metadata of a bundled data set: description, response, weights, level orders.

    Parameters
    ----------
    name : str

    Returns
    -------
    dict
    """
    _check(name)
    text = resources.files(__name__).joinpath(f"{name}.levels.json").read_text()
    meta: dict[str, Any] = json.loads(text)
    return meta


def _check(name: str) -> None:
    if name not in _NAMES:
        raise OrdstatsError(f"no bundled data set {name!r}; available: {', '.join(_NAMES)}")


def load(name: str) -> pd.DataFrame:
    """Load a bundled data set with R's factor levels.

    The response is an ordered :class:`pandas.Categorical` and the other factors
    are (unordered) Categoricals, each with the level order R uses, so that
    treatment contrasts and threshold names match R.

    Parameters
    ----------
    name : {"wine", "soup", "housing"}

    Returns
    -------
    pandas.DataFrame

    Examples
    --------
    >>> from ordstats import datasets
    >>> wine = datasets.load("wine")
    >>> wine["rating"].cat.categories.tolist()
    ['1', '2', '3', '4', '5']
    """
    meta = describe(name)
    columns = meta["columns"]
    with resources.files(__name__).joinpath(f"{name}.csv").open("r") as handle:
        frame = pd.read_csv(handle, dtype={c: str for c in {**meta["ordered"], **meta["factors"]}})
    for col, order in meta["ordered"].items():
        frame[col] = pd.Categorical(frame[col], categories=order, ordered=True)
    for col, order in meta["factors"].items():
        frame[col] = pd.Categorical(frame[col], categories=order)
    return frame[columns]
