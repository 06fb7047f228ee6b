"""A numeric column that the formula reads as a factor (``C(k)``) is a factor to the verbs.

Before, comparisons and emmeans looked at the column (integers) and treated ``k`` as
a number: contrasts ``k +- 1/2`` and a grid at the mean of ``k``, which the fitted
design refused ("newdata has factor level(s) 1.5, 2.5 ..."; emmeans: 2.0233).  They now
use the fit's levels of ``k``.  References: tests/r/emmeans_coded_factor.R ->
tests/data/reference/emmeans_coded_factor.json (R's clm with ``factor(k)``).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ordstats

DATA = Path(__file__).parents[1] / "data"
REFERENCE = json.loads((DATA / "reference" / "emmeans_coded_factor.json").read_text())


@pytest.fixture(scope="module")
def data() -> pd.DataFrame:
    return pd.read_csv(DATA / "coded_factor.csv")


@pytest.fixture(scope="module")
def fit(data):
    return ordstats.OrdinalModel.from_formula("y ~ x + C(k)", data).fit(disp=False)


def test_the_fit_is_r_s(fit):
    assert fit.llf == pytest.approx(REFERENCE["logLik"], rel=1e-9)


def test_emmeans_over_the_levels_of_k_as_r(fit):
    table = fit.emmeans("k").summary_frame()
    assert [str(v) for v in table["k"]] == REFERENCE["emmeans"]["k"]
    np.testing.assert_allclose(table["emmean"], REFERENCE["emmeans"]["emmean"], rtol=1e-6)
    np.testing.assert_allclose(table["SE"], REFERENCE["emmeans"]["SE"], rtol=1e-4)


def test_pairs_as_r(fit):
    table = fit.emmeans("k").pairs().summary_frame()
    assert list(table["contrast"]) == REFERENCE["pairs"]["contrast"]  # "k1 - k2", ...
    np.testing.assert_allclose(table["estimate"], REFERENCE["pairs"]["estimate"], rtol=1e-6)
    np.testing.assert_allclose(table["SE"], REFERENCE["pairs"]["SE"], rtol=1e-4)
    np.testing.assert_allclose(table["p.value"], REFERENCE["pairs"]["p.value"], rtol=1e-4)


def test_comparisons_are_between_levels(fit, data):
    table = fit.avg_comparisons(variables="k")
    assert sorted(set(table["contrast"])) == ["2 - 1", "3 - 1"]
    # the contrast of level 3 with 1 is the average of the predictions at k = 3 and k = 1
    at = {v: fit.avg_predictions(newdata=data.assign(k=v)) for v in (1, 3)}
    expected = at[3]["estimate"].to_numpy() - at[1]["estimate"].to_numpy()
    got = table[table["contrast"] == "3 - 1"]["estimate"].to_numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-10)


def test_newdata_with_integer_k_is_read_as_the_factor(fit, data):
    rows = data.head(4)
    assert fit.comparisons(rows, variables="k")["contrast"].nunique() == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no extrapolation warning, no pandas deprecation
        fit.predictions(rows)


def test_a_column_also_read_as_a_number_stays_a_number(data):
    """``y ~ k + C(k)``-like models read k both ways: it keeps its numeric contrasts."""
    both = ordstats.OrdinalModel.from_formula("y ~ x + k + I(k**2)", data).fit(disp=False)
    table = both.avg_comparisons(variables="k")
    assert set(table["contrast"]) == {"+1"}


def test_a_chunked_fit_streams_the_same_contrasts(fit, data):
    chunked = ordstats.OrdinalModel.from_formula("y ~ x + C(k)", data, chunksize=70).fit(disp=False)
    ours = chunked.avg_comparisons(variables="k")
    memory = fit.avg_comparisons(variables="k")
    np.testing.assert_allclose(ours["estimate"], memory["estimate"], rtol=1e-8)
    table = chunked.emmeans("k").summary_frame()
    np.testing.assert_allclose(table["emmean"], REFERENCE["emmeans"]["emmean"], rtol=1e-6)
