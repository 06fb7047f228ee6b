"""Warnings point at the user's line, however deep inside ordstats they are raised.

The CollinearityWarning of an aliased column is raised by the design checks,
reached from a formula (in a dict comprehension: a frame of its own on Python
3.11, none on 3.12), from numeric arrays, or from the summary of chunks; a
fixed stack level pointed at ordstats' own lines for two of the three.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats.errors import CollinearityWarning, user_stacklevel


@pytest.fixture(scope="module")
def data() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"x1": rng.normal(size=400), "x2": rng.normal(size=400)})
    frame["x3"] = frame["x1"] + frame["x2"]
    frame["y"] = np.searchsorted([-1.0, 0.0, 1.0], 0.5 * frame["x1"] + rng.logistic(size=400))
    return frame


@pytest.mark.parametrize(
    "formula, options",
    [
        ("y ~ x1 + x2 + x3", {}),  # numeric columns: the arrays' path
        ("y ~ x1 + x2 + np.log(np.exp(x3))", {}),  # a transform: the formula's path
        ("y ~ x1 + x2 + x3", {"chunksize": 100}),  # chunks: the summary's path
        ("y ~ x1", {"nominal": "~ x1 + x2 + x3"}),  # the nominal part
    ],
)
def test_the_collinearity_warning_names_the_callers_line(data, formula, options):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ordstats.OrdinalModel.from_formula(formula, data, **options)
    found = [w for w in caught if issubclass(w.category, CollinearityWarning)]
    assert found
    assert {w.filename for w in found} == {__file__}


def test_user_stacklevel_outside_ordstats_is_the_caller():
    def warns():
        warnings.warn("here", UserWarning, stacklevel=user_stacklevel())

    with pytest.warns(UserWarning) as caught:
        warns()
    assert caught[0].filename == __file__
    assert caught[0].lineno == warns.__code__.co_firstlineno + 1


@pytest.mark.parametrize("options", [{}, {"chunksize": 20}])
def test_a_response_level_without_rows_is_reported_at_the_callers_line(options):
    """Before: a fixed stack level named ordstats' model.py (in memory) or evaluators.py
    (chunked)."""
    wine = ordstats.datasets.load("wine")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ordstats.OrdinalModel.from_formula(
            "rating ~ contact", wine, subset="temp == 'cold'", **options
        )
    found = [w for w in caught if issubclass(w.category, ordstats.errors.LevelsWarning)]
    assert found
    assert {w.filename for w in found} == {__file__}


def _ordstats_warnings_of(call) -> list[warnings.WarningMessage]:
    """The ordstats warnings ``call()`` raises (every one, none filtered)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [w for w in caught if issubclass(w.category, ordstats.OrdstatsWarning)]


@pytest.fixture(scope="module")
def wine_fits() -> dict[str, object]:
    wine = ordstats.datasets.load("wine")
    formula = "rating ~ temp + contact"
    return {
        "memory": ordstats.OrdinalModel.from_formula(formula, wine).fit(),
        "chunked": ordstats.OrdinalModel.from_formula(formula, wine, chunksize=20).fit(),
        "scale": ordstats.OrdinalModel.from_formula(formula, wine, scale="~ contact").fit(),
        "hc0": ordstats.OrdinalModel.from_formula(formula, wine).fit(cov_type="HC0"),
        "mixed": ordstats.OrdinalModel.from_formula(formula + " + (1|judge)", wine).fit(),
    }


@pytest.mark.parametrize("fit", ["memory", "chunked", "scale", "hc0", "mixed"])
@pytest.mark.parametrize("method", ["predict", "get_prediction", "predictions"])
def test_missing_values_in_newdata_are_reported_at_the_callers_line(wine_fits, fit, method):
    """Before: predict and get_prediction named their own lines in fitted.py and
    prediction_se.py (a fixed stack level one frame short)."""
    newdata = ordstats.datasets.load("wine").head(4).copy()
    newdata.loc[newdata.index[0], "temp"] = np.nan
    result = wine_fits[fit]
    call = getattr(result, method)
    found = _ordstats_warnings_of(
        lambda: call(newdata=newdata) if method == "predictions" else call(newdata)
    )
    assert [w.category for w in found] == [ordstats.errors.MissingDataWarning]
    assert found[0].filename == __file__


def test_a_relaxed_fit_that_fails_in_nominal_test_is_reported_at_the_callers_line():
    """Before: nominal_test's ConvergenceWarning named term_tests.py."""
    wine = ordstats.datasets.load("wine")
    fit = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    found = _ordstats_warnings_of(fit.nominal_test)
    assert found
    assert {w.filename for w in found} == {__file__}


def test_missing_rows_dropped_at_the_fit_are_reported_at_the_callers_line():
    wine = ordstats.datasets.load("wine")
    wine.loc[3, "temp"] = np.nan
    for options in ({}, {"chunksize": 20}):
        found = _ordstats_warnings_of(
            lambda options=options: ordstats.OrdinalModel.from_formula(
                "rating ~ temp + contact", wine, **options
            ).fit()
        )
        assert [w.category for w in found] == [ordstats.errors.MissingDataWarning]
        assert found[0].filename == __file__


def test_no_warning_in_ordstats_uses_a_fixed_stack_level():
    """A fixed depth names ordstats' own line when the warning is reached another way
    (validate()'s ConvergenceWarning came in with stacklevel=3 after 112528d)."""
    import re
    from pathlib import Path

    package = Path(ordstats.__file__).parent
    fixed = [
        f"{path.relative_to(package)}:{number}"
        for path in package.rglob("*.py")
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"stacklevel\s*=\s*(\d|stacklevel)", line)
    ]
    assert fixed == []
