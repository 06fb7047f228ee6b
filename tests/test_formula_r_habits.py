"""Formulas as R users write them (found by tests/r/parity_sweep.R).

The R numbers of these models are checked in tests/test_parity_sweep.py; here
what each habit needs of the formula layer.
"""

from __future__ import annotations

import numpy as np
import pytest

import ordstats
from tests._parity import dataset


def test_dotted_column_names_in_backticks_are_read_whole():
    """R's column names are often dotted (MASS::Cars93's MPG.city, VGAM::pneumo's
    exposure.time); formulaic reports a quoted `` `MPG.city` `` as ``MPG``."""
    from ordstats.design.formula import required_variables

    assert required_variables("Price + `MPG.city`") == {"Price", "MPG.city"}
    assert required_variables("log(`exposure.time`)") == {"exposure.time"}
    assert required_variables("MPG + `MPG.city`") == {"MPG", "MPG.city"}


def test_a_model_with_dotted_column_names_fits_and_predicts():
    cars = dataset("cars93")
    res = ordstats.OrdinalModel.from_formula(
        "AirBags ~ Price + `MPG.city` + log(`Horsepower`)", cars
    ).fit()
    assert list(res.params.index[2:]) == ["Price", "MPG.city", "log(`Horsepower`)"]
    assert np.isfinite(res.predict(cars.iloc[:3]).to_numpy()).all()
    with pytest.raises(ordstats.errors.PredictionError, match=r"lacks the column\(s\) 'MPG.city'"):
        res.predict(cars.drop(columns="MPG.city").iloc[:3])


def test_a_power_inside_a_call_is_a_power_not_a_bitwise_xor():
    """R's ``I(hp^2)``: Python read ``^`` as XOR, so an integer column gave
    ``hp XOR 2`` (108 for 110) silently, a float column a formulaic error."""
    mtcars = dataset("mtcars")
    design = ordstats.OrdinalModel.from_formula("carb ~ I(hp^2) + log(wt^2)", mtcars).design
    hp, wt = mtcars["hp"].to_numpy(float), mtcars["wt"].to_numpy(float)
    np.testing.assert_array_equal(design.location.matrix[:, 0], hp**2)
    np.testing.assert_allclose(design.location.matrix[:, 1], np.log(wt**2), rtol=1e-15)
    # the formula's own (a + b)^2 still crosses terms
    crossed = ordstats.OrdinalModel.from_formula("carb ~ (hp + wt)^2", mtcars)
    assert crossed.exog_names == ["hp", "wt", "hp:wt"]


def test_transforms_learn_from_every_row_where_their_variables_are_present():
    """R's model.frame evaluates scale(Age) on all rows, then na.omit drops the rows
    missing Pulse; ordstats learned scale(Age) from the rows left (R: clm(Exer ~
    scale(Age) + Pulse, data = survey) in tests/data/reference/parity)."""
    survey = dataset("survey_students")
    with pytest.warns(ordstats.errors.MissingDataWarning, match=r"'Pulse' \(45\)"):
        model = ordstats.OrdinalModel.from_formula("Exer ~ scale(Age) + Pulse", survey)
    age = survey["Age"].to_numpy(float)  # no NA: every row counts
    kept = survey.index.get_indexer(model.design.row_index)
    expected = (age[kept] - age.mean()) / age.std(ddof=1)
    np.testing.assert_allclose(model.design.location.matrix[:, 0], expected, rtol=1e-13)
    # a transform's own missing values are skipped, as R's scale() does
    survey.loc[survey.index[:5], "Age"] = np.nan
    with pytest.warns(ordstats.errors.MissingDataWarning):
        model = ordstats.OrdinalModel.from_formula("Exer ~ scale(Age) + Pulse", survey)
    present = survey["Age"].dropna().to_numpy(float)
    kept = survey.index.get_indexer(model.design.row_index)
    expected = (survey["Age"].to_numpy(float)[kept] - present.mean()) / present.std(ddof=1)
    np.testing.assert_allclose(model.design.location.matrix[:, 0], expected, rtol=1e-13)
