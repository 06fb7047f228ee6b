"""drop1() of clmm fits equals R's (stats::drop1.default on a clmm); add1() is refused, as R's.

References: tests/r/clmm_drop1.R -> tests/data/reference/clmm_drop1.json
(R 4.2, ordinal 2022.11.16, clmm.control(gradTol = 1e-8)).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import ordstats
from ordstats.errors import SpecificationError

REFERENCE = json.loads(
    (Path(__file__).parents[1] / "data" / "reference" / "clmm_drop1.json").read_text()
)
# our refits reach each optimum more closely than R's: at most 5e-6 higher log-likelihoods
# (R's wine refit without temp: AIC 209.5945289 against ours 209.5945201)
ATOL_AIC = 2e-5


def _numbers(values):
    return np.array([np.nan if v == "NA" else float(v) for v in values])


@pytest.mark.parametrize("case", ["wine", "wine_interaction", "wine_agq"])
def test_drop1_of_a_clmm_matches_r(case, wine):
    ref = REFERENCE["cases"][case]
    res = ordstats.OrdinalModel.from_formula(ref["formula"], wine).fit(nagq=ref["nAGQ"])
    assert res.llf == pytest.approx(ref["logLik"], abs=1e-6)
    table = res.drop1(test="Chisq")
    expected = ref["drop1"]
    assert list(table.index) == expected["rows"]
    assert list(table.columns) == ["Df", "AIC", "LRT", "Pr(>Chi)"]
    np.testing.assert_array_equal(table["Df"], _numbers(expected["Df"]))
    np.testing.assert_allclose(table["AIC"], _numbers(expected["AIC"]), atol=ATOL_AIC)
    np.testing.assert_allclose(table["LRT"], _numbers(expected["LRT"]), atol=ATOL_AIC)
    np.testing.assert_allclose(table["Pr(>Chi)"], _numbers(expected["p"]), rtol=1e-5)
    assert list(res.drop1().columns) == ["Df", "AIC"]  # R's default test = "none"


def test_drop1_of_a_clmm_keeps_the_random_terms_and_rows(wine):
    res = ordstats.OrdinalModel.from_formula("rating ~ temp + contact + (1|judge)", wine).fit()
    smaller = ordstats.OrdinalModel.from_formula("rating ~ contact + (1|judge)", wine).fit()
    table = res.drop1(test="Chisq")
    assert table.loc["temp", "AIC"] == pytest.approx(smaller.aic, abs=1e-6)
    assert table.loc["temp", "LRT"] == pytest.approx(2 * (res.llf - smaller.llf), abs=1e-6)


def test_drop1_of_a_clmm_says_so_for_a_bad_test(wine):
    res = ordstats.OrdinalModel.from_formula("rating ~ temp + (1|judge)", wine).fit()
    with pytest.raises(SpecificationError, match=r"test='F'.*'Chisq'"):
        res.drop1(test="F")


def test_add1_of_a_clmm_is_refused_as_in_r(wine):
    assert "model frame and formula mismatch" in REFERENCE["add1_error"]
    res = ordstats.OrdinalModel.from_formula("rating ~ temp + (1|judge)", wine).fit()
    with pytest.raises(SpecificationError, match=r"add1\(\) is not available.*R's add1 stops"):
        res.add1("~ . + contact")
