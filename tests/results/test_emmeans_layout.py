"""emmeans tables laid out as R's, and clear refusals (from an audit against R's emmeans).

References: tests/r/emmeans_audit_fixes.R -> tests/data/reference/emmeans_audit_fixes.json.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats.errors import OrdstatsError

REFERENCE = json.loads(
    (Path(__file__).parents[1] / "data" / "reference" / "emmeans_audit_fixes.json").read_text()
)
fit_of = ordstats.OrdinalModel.from_formula


def test_joint_tests_keep_the_formula_s_order_under_sum_coding(housing):
    """Coefficients named ``Infl1`` (sum coding) place Infl where it first appears."""
    res = fit_of(
        "Sat ~ Infl * Type + Cont",
        housing,
        weights="Freq",
        contrasts={"Type": "contr.sum", "Infl": "contr.sum"},
    ).fit()
    table = res.joint_tests()
    expected = REFERENCE["joint_tests"]
    assert list(table["model term"]) == expected["term"]
    # R's joint_tests table rounds F.ratio to three decimals
    np.testing.assert_allclose(table["F.ratio"], expected["F.ratio"], rtol=0, atol=5e-4)


def test_a_variable_named_like_another_s_coded_column_is_not_confused(wine):
    """``x`` and ``x2``: the column ``x2`` is the variable x2, not x's second sum column."""
    rng = np.random.default_rng(0)
    data = wine.assign(x2=rng.normal(size=len(wine)), x=rng.normal(size=len(wine)))
    res = fit_of("rating ~ x2 + temp + x", data).fit()
    assert list(res.joint_tests()["model term"]) == ["x2", "temp", "x"]


def test_a_contrast_of_contrasts_by_the_earlier_ones_names_the_new_column_contrast1(housing):
    res = fit_of("Sat ~ Infl * Type", housing, weights="Freq").fit()
    pairs = res.emmeans("~ Type | Infl").pairs(adjust="none")
    table = pairs.contrast("consec", by="contrast", adjust="none").summary_frame()
    expected = REFERENCE["contrast_of_contrasts"]
    assert list(table.columns[:2]) == expected["columns"][:2]
    assert list(table["contrast1"]) == expected["contrast1"]
    assert list(table["contrast"]) == expected["contrast"]
    np.testing.assert_allclose(table["estimate"], expected["estimate"], rtol=1e-6)
    np.testing.assert_allclose(table["SE"], expected["SE"], rtol=1e-4)


def test_regrid_of_log_scales_keeps_r_s_column_name(wine):
    res = fit_of("rating ~ temp", wine, scale="~ contact").fit()
    table = res.emmeans("contact", mode="scale").regrid().summary_frame()
    expected = REFERENCE["regrid_scale"]
    assert list(table.columns[:6]) == expected["columns"]
    np.testing.assert_allclose(table["emmean"], expected["emmean"], rtol=1e-6)
    np.testing.assert_allclose(table["SE"], expected["SE"], rtol=1e-4, atol=1e-12)


@pytest.fixture(scope="module")
def means(wine):
    return fit_of("rating ~ temp * contact", wine).fit().emmeans("~ temp | contact")


@pytest.mark.parametrize(
    ("method", "message"),
    [
        ({"a": [1, -1, 0, 0], "b": [1, -1]}, r"needs 2 coefficients .* got 'a': 4"),
        ({"a": [1, -1], "b": [1]}, r"got 'b': 1"),
        ({"a": ["x", "y"]}, "with finite numbers"),
        ({}, "got none"),
    ],
)
def test_custom_contrasts_of_the_wrong_shape_are_refused_clearly(means, method, message):
    with pytest.raises(OrdstatsError, match=message):
        means.contrast(method)


@pytest.mark.parametrize("method", ["poly", "del.eff", "pairwise", "eff", "consec"])
def test_contrasts_of_a_single_mean_per_group_are_refused(wine, method):
    one = (
        fit_of("rating ~ temp * contact", wine)
        .fit()
        .emmeans("~ temp | contact", at={"temp": ["warm"]})
    )
    with pytest.raises(OrdstatsError, match="each group here has one"):
        one.contrast(method)


def test_emmeans_of_a_formula_offset_without_its_column_says_what_to_do(wine):
    res = fit_of("rating ~ temp + offset(o)", wine.assign(o=0.1)).fit()
    with pytest.raises(
        OrdstatsError, match=r"data lacks the column\(s\) 'o' that the model's offset"
    ):
        res.emmeans("temp", data=wine)


@pytest.mark.filterwarnings("error::RuntimeWarning")  # no numpy/pandas warning leaks
@pytest.mark.parametrize("chunksize", [None, 20])
def test_a_factor_of_numbers_and_text_lists_its_levels_in_the_model_s_order(wine, chunksize):
    """Before: the margins grids took such a column's first-seen order (1, a, 2, b here),
    where the model's coefficients and R's factor() follow 1, 2, a, b."""
    values = np.array([1, "a", 2, "b"], dtype=object)[np.arange(len(wine)) % 4]
    data = wine.assign(g=pd.Series(values, index=wine.index, dtype=object))
    options = {} if chunksize is None else {"chunksize": chunksize}
    res = ordstats.OrdinalModel.from_formula("rating ~ temp + C(g)", data, **options).fit()
    assert [name for name in res.params.index if "C(g)" in name] == [
        "C(g)[T.2]",
        "C(g)[T.a]",
        "C(g)[T.b]",
    ]
    means = res.emmeans("g").summary_frame()
    assert list(means["g"]) == [1, 2, "a", "b"]
    # each mean is the reference level's plus its coefficient
    np.testing.assert_allclose(
        means["emmean"].to_numpy()[1:] - means["emmean"].to_numpy()[0],
        res.params.filter(like="C(g)").to_numpy(),
        rtol=1e-9,
    )
    by_level = res.avg_predictions(by="g")
    assert list(dict.fromkeys(by_level["g"])) == [1, 2, "a", "b"]


NESTED_COLUMNS = json.loads(
    (Path(__file__).parents[1] / "data" / "reference" / "emmeans_nested_columns.json").read_text()
)
NESTED_OURS = {
    'pairs(emmeans(fit, ~ bottle | temp), adjust = "none")': lambda res: res.emmeans(
        "~ bottle | temp"
    ).pairs(adjust="none"),
    'contrast(emmeans(fit, ~ judge | bottle), "consec", adjust = "none")': lambda res: res.emmeans(
        "~ judge | bottle"
    ).contrast("consec", adjust="none"),
    'contrast(emmeans(fit, ~ judge | bottle, mode = "mean.class"), "pairwise", adjust = "none")': (
        lambda res: res.emmeans("~ judge | bottle", mode="mean.class").pairs(adjust="none")
    ),
    'contrast(emmeans(fit, ~ temp | judge), "pairwise", adjust = "none")': lambda res: res.emmeans(
        "~ temp | judge"
    ).pairs(adjust="none"),
}


@pytest.mark.parametrize("call", NESTED_COLUMNS["calls"], ids=lambda call: call["r_call"])
def test_nested_contrasts_list_their_groups_first_as_r(call):
    """tests/r/emmeans_nested_columns.R: bottle %in% temp.  emmeans lists a nested
    contrast's by variables (the nesting factors with them) before ``contrast``, a
    crossed one's after it; ordstats put ``contrast`` first in both."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # bottle8's CollinearityWarning
        res = fit_of("rating ~ temp + bottle + judge", ordstats.datasets.load("wine")).fit()
    table = NESTED_OURS[call["r_call"]](res).summary_frame()
    assert [c for c in table.columns if c in call["columns"]] == call["columns"]
    assert table["contrast"].tolist() == call["contrast"]
    np.testing.assert_allclose(table["estimate"], call["estimate"], rtol=1e-6, atol=1e-10)
    np.testing.assert_allclose(table["SE"], call["SE"], rtol=1e-4)
