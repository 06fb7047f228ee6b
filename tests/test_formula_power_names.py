"""R's labels of power and function terms (``I(x^2)``, ``I(x^2):z``, ``poly(x, 2)``,
``I(log(x))``) in the estimates, the summary and the term tables.

The oracle is R's clm (tests/r/formula_power_names.R, vendored in
tests/data/reference/formula_names/).  ordstats names factor levels and matrix
columns as patsy does (``temp[T.warm]`` for R's ``tempwarm``, ``poly(x, 2)[1]``
for ``poly(x, 2)1``); every other name is R's.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats import datasets

REFERENCE = Path(__file__).parent / "data" / "reference" / "formula_names"
CASES = json.loads((REFERENCE / "clm_wine_power_names.json").read_text())


@pytest.fixture(scope="module")
def data() -> pd.DataFrame:
    wine = datasets.load("wine")
    return wine.assign(x=wine["judge"].astype(int) / 3, z=wine["bottle"].astype(int) * 1.0)


def _patsy_style(r_name: str) -> str:
    """R's coefficient name in ordstats' convention for levels and matrix columns."""
    if r_name == "tempwarm":
        return "temp[T.warm]"
    return re.sub(r"^(poly\(x, 2\))(\d)$", r"\1[\2]", r_name)


@pytest.mark.parametrize("case", CASES, ids=[c["formula"] for c in CASES])
def test_power_and_function_terms_are_named_as_r_names_them(data, case):
    """Before: ``I(x^2)`` was labelled ``I(x ** 2)`` in params, summary, drop1 and anova."""
    res = ordstats.OrdinalModel.from_formula(case["formula"], data).fit()
    assert list(res.params.index) == [_patsy_style(n) for n in case["coef_names"]]
    np.testing.assert_allclose(res.params, case["coef"], rtol=1e-6, atol=1e-8)  # x^2 a power
    assert res.llf == pytest.approx(case["logLik"], rel=1e-9)
    assert f"\n{list(res.params.index)[-1]} " in str(res.summary())
    dropped = res.drop1(test="Chisq")
    assert list(dropped.index) == case["drop1_rows"]
    np.testing.assert_allclose(dropped["LRT"].iloc[1:], case["drop1_lrt"][1:], rtol=1e-6)
    assert list(ordstats.anova(res, type="III").index) == case["anova_rows"]
    assert list(res.wald_test_terms().index) == case["anova_rows"]
    # new data still evaluate the term (the name is a label, not the expression)
    np.testing.assert_allclose(res.predict(data.iloc[:9]), res.predict().iloc[:9], rtol=1e-12)


@pytest.mark.parametrize("formula", ["rating ~ temp + I(x^2)", "rating ~ temp + I(x^2):z"])
def test_chunked_fits_and_margins_read_the_r_labels(data, formula):
    res = ordstats.OrdinalModel.from_formula(formula, data).fit()
    chunked = ordstats.OrdinalModel.from_formula(formula, data, chunksize=20).fit()
    assert res.params.index[-1].startswith("I(x^2)")
    assert list(chunked.params.index) == list(res.params.index)
    np.testing.assert_allclose(chunked.params, res.params, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(chunked.predict(data.iloc[:5]), res.predict(data.iloc[:5]))
    # the slope of x reads its columns by these names: as the same term spelled x**2
    python = ordstats.OrdinalModel.from_formula(formula.replace("^", "**"), data).fit()
    assert list(python.params.index) == list(res.params.index)
    slopes = res.avg_slopes(variables="x")["estimate"]
    expected = python.avg_slopes(variables="x")["estimate"]
    np.testing.assert_allclose(slopes, expected, rtol=1e-10)
    assert np.all(np.abs(slopes) > 1e-4)


def test_a_column_named_with_a_power_keeps_its_name(data):
    """Only powers inside a call are R's ``^``; a quoted column name is the name."""
    named = data.assign(**{"a ** b": data["x"]})
    res = ordstats.OrdinalModel.from_formula("rating ~ temp + `a ** b`", named).fit()
    assert res.params.index[-1] == "a ** b"


def test_the_formula_lines_read_as_written_in_r(data):
    """Before: ``formula: rating ~ temp + I(x**2)`` and ``OrdinalModel('... I(x**2)')``."""
    model = ordstats.OrdinalModel.from_formula("rating ~ temp + I(x^2)", data, scale="~ I(x^2)")
    lines = str(model.fit().summary()).splitlines()
    assert "formula: rating ~ temp + I(x^2)" in lines
    assert "scale:   ~ I(x^2)" in lines
    assert repr(model).startswith("OrdinalModel('rating ~ temp + I(x^2)'")
