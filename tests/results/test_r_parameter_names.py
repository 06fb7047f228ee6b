"""R ``ordinal``'s parameter names in ``slice(parm=)``, ``profile`` and ``conf_int(which=)``.

R names ``temp[T.warm]`` ``tempwarm``, the nominal effect ``1|2:contact[T.yes]``
``1|2.contactyes`` (its threshold ``1|2.(Intercept)``), ``poly(as_numeric(judge), 2)[1]``
``poly(as.numeric(judge), 2)1`` and a scale effect as the location effect (R's
``names(coef(fit))``).  An R name is the parameter it
names; one that two parameters share is refused with both names.  R's names:
tests/r/r_parameter_names.R -> tests/data/r/r_parameter_names.json.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import ordstats
from ordstats.errors import SpecificationError

R_NAMES = json.loads(
    (Path(__file__).parents[1] / "data" / "r" / "r_parameter_names.json").read_text()
)
CASES = {
    "interaction_poly": ("rating ~ temp * contact + poly(as_numeric(judge), 2)", {}),
    "nominal": ("rating ~ temp", {"nominal": "~ contact"}),
}


def _fit(case, wine):
    formula, kwargs = CASES[case]
    return ordstats.OrdinalModel.from_formula(formula, wine, **kwargs).fit()


@pytest.mark.parametrize("case", CASES)
def test_slice_takes_r_s_names(case, wine):
    res = _fit(case, wine)
    r_names = R_NAMES[case]
    assert len(r_names) == len(res.params)
    expected = res.slice(list(res.params.index), grid=3)
    pd.testing.assert_frame_equal(res.slice(r_names, grid=3), expected)


def test_profile_and_profile_intervals_take_r_s_names(wine):
    res = _fit("nominal", wine)
    expected = res.profile("2|3:contact[T.yes]", n_points=5)
    got = res.profile("2|3.contactyes", n_points=5)
    pd.testing.assert_frame_equal(got, expected)
    assert got.attrs["param"] == "2|3:contact[T.yes]"
    intervals = res.conf_int(method="profile", which=["tempwarm", "1|2.(Intercept)"])
    own = res.conf_int(method="profile", which=["temp[T.warm]", "1|2"])
    pd.testing.assert_frame_equal(intervals, own)
    assert list(intervals.index) == ["temp[T.warm]", "1|2"]


def test_an_r_name_two_parameters_share_is_refused_with_both(wine):
    assert R_NAMES["scale"].count("tempwarm") == 2  # the location and the scale effect
    res = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine, scale="~ temp").fit()
    message = r"'tempwarm' is R's name of 'temp\[T.warm\]' and 'scale:temp\[T.warm\]'"
    for call in (
        lambda: res.slice("tempwarm", grid=3),
        lambda: res.profile("tempwarm"),
        lambda: res.conf_int(method="profile", which=["tempwarm"]),
    ):
        with pytest.raises(SpecificationError, match=message):
            call()
    # the unshared R name still works
    pd.testing.assert_frame_equal(
        res.slice("contactyes", grid=3), res.slice("contact[T.yes]", grid=3)
    )


def test_an_unknown_name_lists_the_parameters(wine):
    res = _fit("nominal", wine)
    with pytest.raises(SpecificationError, match=r"'tempcold' is not a parameter .* '1\|2', "):
        res.profile("tempcold")


@pytest.mark.parametrize(
    ("r_form", "own_form"),
    [
        ("tempwarm = 0", "`temp[T.warm]` = 0"),
        ("tempwarm - 2 * contactyes = 0", "`temp[T.warm]` - 2 * `contact[T.yes]` = 0"),
        ("`tempwarm` = contactyes", "`temp[T.warm]` = `contact[T.yes]`"),
    ],
)
def test_t_test_wald_test_and_hypotheses_take_r_s_names(wine, r_form, own_form):
    res = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    own = res.t_test(own_form).summary_frame()
    pd.testing.assert_frame_equal(res.t_test(r_form).summary_frame(), own)
    assert res.wald_test(r_form, scalar=True).statistic == pytest.approx(
        res.wald_test(own_form, scalar=True).statistic, rel=1e-12
    )
    by_r = res.hypotheses(r_form.replace("`", ""))
    pd.testing.assert_series_equal(
        by_r["estimate"], res.hypotheses(own_form.replace("`", ""))["estimate"]
    )


def test_constraints_take_r_s_backticked_names_of_nominal_effects(wine):
    res = _fit("nominal", wine)
    by_r = res.t_test("`1|2.contactyes` = `2|3.contactyes`").summary_frame()
    own = res.t_test("`1|2:contact[T.yes]` = `2|3:contact[T.yes]`").summary_frame()
    pd.testing.assert_frame_equal(by_r, own)


def test_an_r_name_two_parameters_share_is_not_taken_for_either(wine):
    res = ordstats.OrdinalModel.from_formula("rating ~ temp", wine, scale="~ temp").fit()
    with pytest.raises(SpecificationError, match="'tempwarm', which is not a parameter"):
        res.t_test("tempwarm = 0")
