"""Load R reference results vendored from ../shared/reference into tests/data/reference.

Each JSON file holds one case: the exact R call (``r_call``), R's estimates,
standard errors, log-likelihood, predictions, ... (schema in
``tests/data/reference/README.md``).
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import ordstats

REFERENCE_DIR = Path(__file__).parent / "data" / "reference"


def cases(prefix: str) -> list[str]:
    """Names of the vendored cases whose file name starts with ``prefix``."""
    return sorted(p.stem for p in REFERENCE_DIR.glob(f"{prefix}*.json"))


@cache
def load(case: str) -> dict[str, Any]:
    """One reference case as a dict, with R's "NA"/"Inf" strings turned into floats."""
    with open(REFERENCE_DIR / f"{case}.json") as handle:
        return json.load(handle, parse_constant=float)


def r_name(name: str, nominal: bool = False) -> str:
    """Our parameter name as R's clm (and this oracle) prints it.

    ``temp[T.warm]`` -> ``tempwarm``; nominal effect ``1|2:contact[T.yes]`` ->
    ``1|2.contactyes``; scale effect ``scale:temp[T.warm]`` -> ``sca.tempwarm``;
    with nominal effects the thresholds are ``1|2.(Intercept)``.
    """
    name = re.sub(r"\[T\.(.+?)\]", r"\1", name)
    if name.startswith("scale:"):
        return "sca." + name[len("scale:") :]
    if "|" in name and ":" in name:
        return name.replace(":", ".", 1)
    if nominal and "|" in name:
        return name + ".(Intercept)"
    return name


def r_names(names: list[str]) -> list[str]:
    """:func:`r_name` over a model's parameter names."""
    nominal = any("|" in n and ":" in n for n in names)
    return [r_name(n, nominal) for n in names]


def in_r_order(values: dict[str, float], names: list[str]) -> np.ndarray:
    """R's named values in the order of our parameter names."""
    return np.array([float(values[r]) for r in r_names(names)])


_CALL = re.compile(r"^(?:clmm|clm|polr)\((?P<formula>[^,]+), (?P<args>.*)\)$")


def fit_call(r_call: str) -> tuple[str, str, dict[str, Any]]:
    """Translate a ``clm``/``clmm``/``polr`` call into (formula, dataset, keyword args)."""
    match = _CALL.match(r_call.strip())
    if match is None:
        raise ValueError(f"cannot parse R call {r_call!r}")
    kwargs: dict[str, Any] = {}
    dataset = ""
    for part in match.group("args").split(", "):
        key, _, value = part.partition(" = ")
        value = value.strip('"')
        if key == "data":
            dataset = value
        elif key == "weights":
            kwargs["weights"] = value
        elif key == "link":
            kwargs["link"] = value
        elif key == "method":
            kwargs["link"] = {"logistic": "logit"}.get(value, value)
        elif key == "threshold":
            kwargs["threshold"] = value
        elif key in ("nominal", "scale"):
            kwargs[key] = value
    return match.group("formula"), dataset, kwargs


def fit_reference_call(r_call: str) -> ordstats.OrdinalResults:
    """Fit the model of an R ``clm``/``clmm``/``polr`` call with ordstats."""
    formula, dataset, kwargs = fit_call(r_call)
    data = ordstats.datasets.load(dataset)
    return ordstats.OrdinalModel.from_formula(formula, data, **kwargs).fit()


def fit_reference(case: str) -> ordstats.OrdinalResults:
    """Fit the model of a reference case with ordstats."""
    return fit_reference_call(load(case)["r_call"])


def newdata(case: str) -> pd.DataFrame:
    """The case's ``newdata`` records as a DataFrame."""
    return pd.DataFrame.from_records(load(case)["newdata"])
