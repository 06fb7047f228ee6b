"""res.step(): R's step() of a clm, its path and chosen model, and drop1/add1's k and scope.

Reference: ``tests/r/step.R`` (vendored in ``tests/data/reference/step/``).
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from ordstats import OrdinalMixedModel, OrdinalModel, SurveyDesign, datasets
from ordstats.errors import CollinearityWarning, OrdstatsError, SpecificationError

REFERENCE = Path(__file__).parents[1] / "data" / "reference" / "step"


def _reference(name: str) -> dict[str, Any]:
    return json.loads((REFERENCE / f"{name}.json").read_text())


def _wine(formula: str) -> Any:
    return OrdinalModel.from_formula(formula, datasets.load("wine")).fit()


def _housing(formula: str, **options: Any) -> Any:
    data = datasets.load("housing")
    return OrdinalModel.from_formula(formula, data, weights="Freq", **options).fit()


def _soup(formula: str, **options: Any) -> Any:
    return OrdinalModel.from_formula(formula, datasets.load("soup"), **options).fit()


CASES: dict[str, tuple[Callable[[], Any], dict[str, Any]]] = {
    "wine_backward": (lambda: _wine("rating ~ temp * contact"), {}),
    "wine_bic": (lambda: _wine("rating ~ temp * contact"), {"k": np.log(72)}),
    "wine_forward": (
        lambda: _wine("rating ~ 1"),
        {"scope": "~ temp * contact", "direction": "forward"},
    ),
    "housing_both_pairs": (
        lambda: _housing("Sat ~ Infl + Type + Cont"),
        {"scope": "~ .^2"},
    ),
    "housing_lower_upper_probit": (
        lambda: _housing("Sat ~ Infl * Type + Cont", link="probit"),
        {"scope": {"lower": "~ Infl", "upper": "~ Infl * Type * Cont"}},
    ),
    "housing_forward_one_step": (
        lambda: _housing("Sat ~ Infl + Type + Cont", link="cloglog"),
        {"scope": "~ Infl * Type * Cont", "steps": 1},
    ),
    "soup_scale_backward": (
        lambda: _soup("SURENESS ~ PROD + DAY + GENDER + AGEGROUP + COLD", scale="~ PROD"),
        {},
    ),
    "soup_nominal_both": (
        lambda: _soup("SURENESS ~ PROD + GENDER", nominal="~ DAY"),
        {"scope": "~ PROD * GENDER + AGEGROUP + COLD", "k": 3},
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_step_follows_r_path_and_chooses_r_model(name: str) -> None:
    ref = _reference(name)
    fit, options = CASES[name]
    selection = fit().step(**options)
    path = selection.anova
    assert list(path["Step"]) == ref["steps"]
    for column, key in [
        ("Df", "df"),
        ("Deviance", "deviance"),
        ("Resid. Df", "resid_df"),
        ("Resid. Dev", "resid_dev"),
        ("AIC", "aic"),
    ]:
        expected = np.array([np.nan if v is None else v for v in ref[key]], dtype=float)
        np.testing.assert_allclose(path[column], expected, rtol=1e-6, atol=1e-7, err_msg=column)
    chosen = selection.results
    assert chosen.llf == pytest.approx(ref["logLik"], rel=1e-6)
    labels = {":".join(sorted(t.split(":"))) for t in ref["terms"]}
    assert {":".join(sorted(t.split(":"))) for t in selection.terms} == labels
    assert repr(selection).splitlines()[0].endswith(" + ".join(selection.terms))
    assert len(chosen.params) == len(ref["coef"])


def test_step_drops_an_aliased_term_first_as_r() -> None:
    ref = _reference("wine_aliased")
    data = datasets.load("wine")
    data["z"] = 2.0 * (data["temp"] == "warm")
    with pytest.warns(CollinearityWarning):
        res = OrdinalModel.from_formula("rating ~ temp + contact + z", data).fit()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CollinearityWarning)  # the refits see z too
        selection = res.step()
    assert list(selection.anova["Step"]) == ref["steps"] == ["", "- z"]
    np.testing.assert_allclose(selection.anova["AIC"], ref["aic"], rtol=1e-9)
    assert selection.anova["Df"].iloc[1] == 0
    assert selection.terms == ["temp", "contact"]


def test_drop1_and_add1_take_r_k_and_drop1_a_scope() -> None:
    """R's drop1(fit, scope, k = log(n)) and add1(fit, scope, k = log(n))."""
    res = _wine("rating ~ temp * contact")
    bic = res.drop1(k=np.log(res.nobs))
    assert bic.loc["<none>", "AIC"] == pytest.approx(res.bic)
    ref = _reference("wine_bic")
    assert bic.loc["temp:contact", "AIC"] == pytest.approx(ref["aic"][1], rel=1e-9)
    additive = _wine("rating ~ temp + contact")
    both = additive.drop1(scope=["temp", "contact"], k=0)
    assert both.loc["<none>", "AIC"] == pytest.approx(-2 * additive.llf)
    assert list(both.index) == ["<none>", "temp", "contact"]
    # an explicit scope is tried as given, even a margin of a larger term (as R)
    margin = res.drop1(scope="~ temp")
    assert list(margin.index) == ["<none>", "temp"]
    up = additive.add1("~ temp * contact", k=np.log(72))
    assert up.loc["temp:contact", "AIC"] == pytest.approx(ref["aic"][0], rel=1e-9)


def test_stepwise_bad_input_is_refused_with_what_to_do() -> None:
    res = _wine("rating ~ temp + contact")
    with pytest.raises(SpecificationError, match="not a term of the model"):
        res.drop1(scope="~ bottle")
    with pytest.raises(SpecificationError, match="direction="):
        res.step(direction="sideways")
    with pytest.raises(SpecificationError, match="penalty per parameter"):
        res.step(k="BIC")
    with pytest.raises(SpecificationError, match=">= 0"):
        res.drop1(k=-1.0)
    with pytest.raises(SpecificationError, match="steps"):
        res.step(steps=-1)
    with pytest.raises(SpecificationError, match="'lower' and 'upper'"):
        res.step(scope={"upper": "~ temp * contact", "min": "~ temp"})
    with pytest.raises(OrdstatsError, match="not a column of the data"):
        res.step(scope="~ temp + nosuchcolumn")


def test_step_with_no_move_returns_the_start_and_steps_zero_stops() -> None:
    res = _wine("rating ~ temp + contact")
    kept = res.step()
    assert kept.results is res
    assert list(kept.anova["Step"]) == [""]
    none = _wine("rating ~ temp * contact").step(steps=0)
    assert len(none.anova) == 1


def test_step_keeps_rows_weights_and_link_of_the_start() -> None:
    """The chosen model equals the model fitted directly with the chosen formula."""
    selection = _housing("Sat ~ Infl + Type + Cont", link="probit").step(scope="~ .^2")
    direct = _housing("Sat ~ Infl + Type + Cont + Infl:Type + Type:Cont", link="probit")
    assert selection.results.llf == pytest.approx(direct.llf, rel=1e-10)
    params = selection.results.params
    pd.testing.assert_series_equal(
        params.sort_index(), direct.params.sort_index(), check_names=False, rtol=1e-6
    )


def test_step_is_refused_where_refits_are_not_possible() -> None:
    data = datasets.load("wine")
    mixed = OrdinalMixedModel.from_formula("rating ~ temp + contact + (1|judge)", data).fit()
    with pytest.raises(OrdstatsError, match="step"):
        mixed.step()
    model = OrdinalModel.from_formula("rating ~ temp + contact", data)
    with pytest.raises(OrdstatsError, match="step"):
        model.fit_regularized(alpha=0.1).step()
    design = SurveyDesign(data.assign(w=1.0 + (data["judge"].cat.codes % 3)), weights="w")
    survey = OrdinalModel.from_formula("rating ~ temp * contact", design=design).fit()
    with pytest.raises(SpecificationError, match="R's svyolr has no AIC"):
        survey.step()
