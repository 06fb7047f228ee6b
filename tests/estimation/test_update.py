"""update(): R's update(fit, formula, ...) on models and results.

Each updated fit must equal the same model built directly with ``from_formula``.
"""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats import OrdinalModel, SurveyDesign
from ordstats.design.r_functions import update_formula, update_one_sided
from ordstats.errors import FormulaError, SpecificationError


@pytest.fixture(scope="module")
def wine() -> pd.DataFrame:
    data = ordstats.datasets.load("wine")
    return data.assign(x=np.linspace(0.0, 1.0, len(data)), **{"z.w": np.cos(np.arange(72.0))})


def _same_fit(got, expected) -> None:
    assert list(got.params.index) == list(expected.params.index)
    np.testing.assert_allclose(got.params, expected.params, rtol=1e-10)
    assert got.llf == pytest.approx(expected.llf, rel=1e-12)
    assert got.nobs == expected.nobs


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("y ~ a + b", "~ . - b", "y ~ (a + b) - b"),
        ("y ~ a + b", ". ~ . + c", "y ~ (a + b) + c"),
        ("y ~ a * b", "~ .^2", "y ~ (a * b)^2"),
        ("y ~ a", "z ~ .", "z ~ (a)"),
        (
            "y ~ a",
            "log(.) ~ . + np.log(c) + `d.e` + I(x * .5)",
            "log(y) ~ (a) + np.log(c) + `d.e` + I(x * .5)",
        ),
        ("y ~ a", "~ b", "y ~ b"),
    ],
)
def test_update_formula_reads_the_dot_as_r_does(old, new, expected):
    assert update_formula(old, new) == expected


def test_update_one_sided_reads_the_dot_as_the_old_terms():
    assert update_one_sided("~ contact", "~ . + temp", "nominal") == "~ (contact) + temp"
    assert update_one_sided(None, "~ temp", "nominal") == "~ temp"
    assert update_one_sided("~ contact", None, "nominal") is None
    with pytest.raises(FormulaError, match=r"uses '.', but the model has no scale effects"):
        update_one_sided(None, "~ . + temp", "scale")


def test_dropping_and_adding_terms_equals_the_direct_fit(wine):
    res = OrdinalModel.from_formula("rating ~ temp * contact + offset(x)", wine).fit()
    _same_fit(
        res.update("~ . - temp:contact"),
        OrdinalModel.from_formula("rating ~ temp + contact + offset(x)", wine).fit(),
    )
    _same_fit(
        res.update(". ~ . + z.w"),
        OrdinalModel.from_formula("rating ~ temp * contact + `z.w` + offset(x)", wine).fit(),
    )
    reduced = res.update("~ . - contact - temp:contact")
    table = ordstats.anova(reduced, res)
    assert table["df"].iloc[1] == 2  # R: anova(update(fit, ~ . - contact - temp:contact), fit)


def test_options_nominal_and_scale_change_as_asked(wine):
    res = OrdinalModel.from_formula("rating ~ temp", wine, nominal="~ contact").fit()
    _same_fit(
        res.update(link="probit", threshold="equidistant"),
        OrdinalModel.from_formula(
            "rating ~ temp", wine, nominal="~ contact", link="probit", threshold="equidistant"
        ).fit(),
    )
    _same_fit(
        res.update(nominal="~ . + x"),
        OrdinalModel.from_formula("rating ~ temp", wine, nominal="~ contact + x").fit(),
    )
    _same_fit(
        res.update(nominal=None, scale="~ contact"),
        OrdinalModel.from_formula("rating ~ temp", wine, scale="~ contact").fit(),
    )


def test_data_weights_offset_and_subset_can_be_replaced(wine):
    weights = pd.Series(1.0 + (np.arange(72) % 3), index=wine.index)
    res = OrdinalModel.from_formula("rating ~ temp + contact", wine, weights=weights).fit()
    _same_fit(
        res.update(weights=None, offset="x"),
        OrdinalModel.from_formula("rating ~ temp + contact", wine, offset="x").fit(),
    )
    _same_fit(
        res.update(subset="judge != '1'"),
        OrdinalModel.from_formula(
            "rating ~ temp + contact", wine, weights=weights, subset="judge != '1'"
        ).fit(),
    )
    part = wine.iloc[:60]
    other = res.update(data=part, weights=None)
    _same_fit(other, OrdinalModel.from_formula("rating ~ temp + contact", part).fit())
    assert "data:    wine" in str(res.summary())
    assert "data:" not in str(other.summary())  # not the old data's name
    subset = res.update(subset="judge != '1'")
    with pytest.raises(SpecificationError, match=r"pass subset= for the new data too"):
        subset.update(data=part)


def test_a_chunked_model_updates_as_in_memory(wine):
    chunked = OrdinalModel.from_formula("rating ~ temp * contact", wine, chunksize=20).fit()
    memory = OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    updated = chunked.update("~ . - temp:contact")
    np.testing.assert_allclose(updated.params, memory.params, rtol=1e-8)
    with pytest.raises(SpecificationError, match=r"update\(data=...\) takes a DataFrame"):
        chunked.update(data=wine)


def test_what_update_cannot_do_is_said(wine):
    res = OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    with pytest.raises(FormulaError, match=r"takes a formula with '~'"):
        res.update("temp")
    with pytest.raises(FormulaError, match=r"has no terms; '~ .' keeps them"):
        res.update("rating ~ ")
    with pytest.raises(SpecificationError, match=r"cannot add random terms.*from_formula"):
        res.update("~ . + (1|judge)")
    with pytest.raises(SpecificationError, match=r"unknown keyword\(s\) 'lnk'; it takes nominal"):
        res.update(lnk="probit")
    with pytest.raises(ordstats.OrdstatsError, match=r"fit_kwds must be a dict"):
        res.update(fit_kwds="newton")
    X = pd.get_dummies(wine[["temp", "contact"]], drop_first=True).astype(float)
    arrays = OrdinalModel(wine["rating"], X).fit()
    with pytest.raises(SpecificationError, match=r"does not hold \(built from arrays"):
        arrays.update("~ . - temp")
    unpickled = pickle.loads(pickle.dumps(res))
    with pytest.raises(SpecificationError, match=r"does not hold"):
        unpickled.update("~ . - temp")
    with pytest.raises(SpecificationError, match=r"update\(\) would refit without the penalty"):
        res.model.fit(penalty="firth").update("~ . - temp")
    mixed = ordstats.OrdinalMixedModel.from_formula("rating ~ temp + (1|judge)", wine).fit()
    with pytest.raises(SpecificationError, match=r"update\(\) is not available for mixed models"):
        mixed.update("~ . + contact")
    design = SurveyDesign(wine.assign(w=1.0 + (np.arange(72) % 2)), weights="w")
    survey = OrdinalModel.from_formula("rating ~ temp", design=design).fit()
    with pytest.raises(SpecificationError, match=r"survey design's model"):
        survey.update("~ . + contact")


@pytest.mark.parametrize("name", ["weights", "offset"])
def test_arrays_of_the_old_rows_do_not_follow_new_data(wine, name):
    """An array pairs by position: on reordered data it would weight the wrong rows."""
    values = 1.0 + (np.arange(72) % 3) / 2
    res = OrdinalModel.from_formula("rating ~ temp", wine, **{name: values}).fit()
    reordered = wine.iloc[::-1]
    with pytest.raises(SpecificationError, match=rf"pass {name}= for the new data too"):
        res.update(data=reordered)
    _same_fit(
        res.update(data=reordered, **{name: values[::-1]}),
        OrdinalModel.from_formula("rating ~ temp", wine, **{name: values}).fit(),
    )
    # a Series pairs by index label, so it follows the rows
    labelled = OrdinalModel.from_formula(
        "rating ~ temp", wine, **{name: pd.Series(values, index=wine.index)}
    ).fit()
    _same_fit(labelled.update(data=reordered), res)
