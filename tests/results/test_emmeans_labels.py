"""Contrast names as emmeans writes them.

emmeans prefixes the levels of a factor whose levels all look like numbers by its name
("k1 - k2", not "1 - 2", which reads as a subtraction) and puts a label with an operator
sign in parentheses ("(a-b) - (c+d)", "(m-1) - m0.5").  References:
tests/r/emmeans_contrast_labels.R -> tests/data/reference/emmeans_contrast_labels.json.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats.errors import OrdstatsError

DATA = Path(__file__).parents[1] / "data"
CASES = json.loads((DATA / "reference" / "emmeans_contrast_labels.json").read_text())


@pytest.fixture(scope="module")
def data() -> pd.DataFrame:
    """The R script's columns: factors made from ``k`` (1..3) and the sign of ``x``."""
    d = pd.read_csv(DATA / "coded_factor.csv")
    k, positive = d["k"].to_numpy() - 1, d["x"].to_numpy() > 0
    return d.assign(
        y=pd.Categorical(d["y"], ordered=True),
        f=pd.Categorical(d["k"]),
        g=np.array(["a-b", "c+d", "e f"])[k],
        h=np.array(["1a", "2", "3"])[k],
        m=pd.Categorical(np.array([-1.0, 0.5, 2.0])[k]),
        e=np.where(positive, "y", "x"),
        n=pd.Categorical(positive.astype(int)),
    )


_FITS: dict[str, ordstats.OrdinalResults] = {}


def _fit(formula: str, data: pd.DataFrame):
    if formula not in _FITS:
        _FITS[formula] = ordstats.OrdinalModel.from_formula(formula, data).fit(disp=False)
    return _FITS[formula]


@pytest.mark.parametrize(
    "case", CASES, ids=[f"{c['formula']}|{c['specs']}|{c['method']}" for c in CASES]
)
def test_contrast_names_as_r(case, data):
    fit = _fit(case["formula"], data)
    means = fit.emmeans(case["specs"], at=case.get("at"))
    table = means.contrast(case["method"]).summary_frame()
    expected = case["contrast"]  # jsonlite writes a single name as a string
    assert list(table["contrast"]) == ([expected] if isinstance(expected, str) else expected)


def test_numeric_levels_are_named_with_their_factor_by_a_formula_s_c(data):
    """``C(k)`` on the integer column gives R's ``factor(k)`` names."""
    fit = _fit("y ~ x + C(k)", data)
    names = list(fit.emmeans("k").pairs().summary_frame()["contrast"])
    assert names == ["k1 - k2", "k1 - k3", "k2 - k3"]


@pytest.mark.parametrize("ref", [1, "2", "f2", 2.0])
def test_the_control_is_found_by_position_level_or_name(ref, data):
    """``ref`` is a position (int), a level ("2", 2.0) or the contrast's label ("f2")."""
    table = _fit("y ~ x + f", data).emmeans("f").contrast("trt.vs.ctrl", ref=ref).summary_frame()
    assert list(table["contrast"]) == ["f1 - f2", "f3 - f2"]


def test_an_unknown_control_names_the_levels(data):
    with pytest.raises(OrdstatsError, match=r"one of the levels \['1', '2', '3'\]"):
        _fit("y ~ x + f", data).emmeans("f").contrast("trt.vs.ctrl", ref="f9")
