"""emmeans of a rank-deficient fit: what it cannot estimate is ``nonEst``, as in R.

References: tests/r/emmeans_nonest.R -> tests/data/reference/emmeans_nonest.json,
``emmeans`` of ``clm(rating ~ temp * contact)`` on wine without its warm-and-contact
cell, whose interaction column is aliased.  Before, the empty cell got the additive
model's extrapolation (latent mean 1.6676 with a standard error) and the means and
contrasts averaged over it got numbers; R marks each ``nonEst``.  Estimable means and
contrasts keep R's values.

Nested factors: tests/r/emmeans_nesting.R -> tests/data/reference/emmeans_nesting.json,
``emmeans`` of ``clm(rating ~ temp + bottle)`` on wine, whose bottles 1-4 are served cold
and 5-8 warm (bottle8 aliased).  R's ``ref_grid`` detects ``bottle %in% temp`` and averages
over each temperature's own bottles; before, ordstats averaged over all eight bottles in
both temperatures and printed every mean ``nonEst``, as R does with ``nesting = NULL``.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ordstats

REFERENCE = json.loads(
    (Path(__file__).parents[1] / "data" / "reference" / "emmeans_nonest.json").read_text()
)
CALLS = {call["r_call"]: call for call in REFERENCE["calls"]}
FORMULA = "rating ~ temp * contact"

OURS = {
    "emmeans(fit, ~ temp * contact)": lambda res: res.emmeans(["temp", "contact"]),
    "emmeans(fit, ~ temp)": lambda res: res.emmeans("temp"),
    "emmeans(fit, ~ contact)": lambda res: res.emmeans("contact"),
    "pairs(emmeans(fit, ~ temp * contact))": lambda res: res.emmeans(["temp", "contact"]).pairs(),
    'emmeans(fit, ~ temp * contact, mode = "mean.class")': lambda res: res.emmeans(
        ["temp", "contact"], mode="mean.class"
    ),
    'emmeans(fit, ~ rating | temp * contact, mode = "prob")': lambda res: res.emmeans(
        "rating", by=["temp", "contact"], mode="prob"
    ),
}


def _rows() -> pd.DataFrame:
    wine = ordstats.datasets.load("wine")
    return wine[~((wine["temp"] == "warm") & (wine["contact"] == "yes"))].reset_index(drop=True)


def _fit(data, **options) -> ordstats.OrdinalResults:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the aliased column's CollinearityWarning
        return ordstats.OrdinalModel.from_formula(FORMULA, data, **options).fit(disp=False)


@pytest.fixture(scope="module")
def fit() -> ordstats.OrdinalResults:
    return _fit(_rows())


def _numbers(values: list) -> np.ndarray:
    return np.array([np.nan if v == "NA" else v for v in values], dtype=float)


@pytest.mark.parametrize("call", list(OURS))
def test_nonestimable_means_and_contrasts_are_r_s(fit, call):
    reference = CALLS[call]
    table = OURS[call](fit).summary_frame()
    estimate = _numbers(reference["estimate"])
    for name, labels in reference["labels"].items():
        assert [str(v) for v in table[name]] == labels
    got = table[reference["estimate_column"]].to_numpy(dtype=float)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(estimate))
    assert np.isnan(estimate).any()  # every call has something R cannot estimate
    np.testing.assert_allclose(got, estimate, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(table["SE"], _numbers(reference["SE"]), rtol=1e-4, atol=1e-9)
    np.testing.assert_allclose(table["p.value"], _numbers(reference["p.value"]), rtol=1e-3)
    assert list(table.attrs["nonEst"]) == np.isnan(estimate).tolist()


def test_the_printed_table_says_nonest(fit):
    text = str(fit.emmeans(["temp", "contact"]).summary())
    row = next(line for line in text.splitlines() if line.split()[:2] == ["warm", "yes"])
    assert "nonEst" in row
    assert "nonEst: not estimable from this fit" in text
    assert "nonEst" not in str(_fit(ordstats.datasets.load("wine")).emmeans("temp").summary())


def test_a_chunked_fit_marks_the_same_cells(fit, tmp_path):
    """The aliased combination comes from the summary pass's Gram matrix."""
    path = tmp_path / "wine.parquet"
    _rows().to_parquet(path)
    chunked = _fit(str(path), chunksize=20)
    np.testing.assert_allclose(
        chunked.model.design.location.aliased_by, fit.model.design.location.aliased_by, atol=1e-12
    )
    for call in OURS:
        ours, theirs = OURS[call](chunked).summary_frame(), OURS[call](fit).summary_frame()
        assert ours.attrs["nonEst"] == theirs.attrs["nonEst"]
        np.testing.assert_allclose(ours["SE"], theirs["SE"], rtol=1e-8)


def test_a_collinear_covariate_leaves_the_means_estimable():
    """A column that is a combination of others on every row (z = x1 + x2) is aliased, but a
    grid row built from the same relation is estimable: nothing is marked."""
    rng = np.random.default_rng(3)
    n = 300
    data = pd.DataFrame({"x1": rng.normal(size=n), "g": rng.choice(["a", "b", "c"], n)})
    data["x2"] = 2.0 * data["x1"] + 1.0
    data["y"] = pd.Categorical(
        np.digitize(data["x1"] + rng.logistic(size=n), [-1.0, 0.5]), ordered=True
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = ordstats.OrdinalModel.from_formula("y ~ x1 + x2 + g", data).fit(disp=False)
    assert res.model.design.location.aliased == ["x2"]
    combination = res.model.design.location.aliased_by  # x2 = 1 + 2 x1 + 0 g[T.b] + 0 g[T.c]
    np.testing.assert_allclose(combination, [[1.0, 2.0, 0.0, 0.0]], atol=1e-9)
    table = res.emmeans("g").summary_frame()
    assert not any(table.attrs["nonEst"]) and np.isfinite(table["emmean"]).all()


@pytest.mark.parametrize("position", [0, 1])
def test_joint_tests_leave_out_what_is_confounded_as_r(fit, position):
    """R's ``(confounded)`` row (degrees of freedom, no test) and its tests by contact.
    Before, the empty cell's extrapolation entered the tests: temp (F 10.74) and contact
    (F 4.13) each had a test, and temp within contact = yes one too."""
    reference = REFERENCE["joint_tests"][position]
    by = reference["by"] or None
    table = fit.joint_tests(by=by)
    assert table["model term"].tolist() == np.atleast_1d(reference["model_term"]).tolist()
    if by is not None:
        assert table[by].tolist() == np.atleast_1d(reference["by_values"]).tolist()
    np.testing.assert_array_equal(table["df1"], np.atleast_1d(reference["df1"]))
    # emmeans prints F to 3 decimals
    expected_f = _numbers(list(np.atleast_1d(reference["F.ratio"])))
    np.testing.assert_allclose(table["F.ratio"], expected_f, rtol=1e-4)
    expected_p = _numbers(list(np.atleast_1d(reference["p.value"])))
    np.testing.assert_allclose(table["p.value"], expected_p, rtol=1e-6)


def test_a_mixed_fit_marks_the_same_cells_as_r_clmm():
    """clmm with the same empty cell: R's emmeans marks it nonEst too (before: 2.2453)."""
    reference = REFERENCE["clmm"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = ordstats.OrdinalModel.from_formula(f"{FORMULA} + (1|judge)", _rows()).fit()
    table = res.emmeans(["temp", "contact"]).summary_frame()
    estimate = _numbers(reference["estimate"])
    got = table["emmean"].to_numpy(dtype=float)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(estimate))
    # the two fits' optima differ in the fourth digit on these 63 rows (R's clmm stops
    # at its default gradient tolerance); the marked cells are the point here
    np.testing.assert_allclose(got, estimate, atol=5e-4)
    np.testing.assert_allclose(table["SE"], _numbers(reference["SE"]), rtol=2e-3)


def test_scale_mode_marks_the_scale_part_s_empty_cell_as_r():
    """mode="scale" reads the scale design, whose interaction is aliased too: R's emmeans
    prints nonEst for the empty cell (before: the additive extrapolation 0.0712)."""
    reference = REFERENCE["scale"]
    res = _fit(_rows(), scale="~ temp * contact")
    np.testing.assert_allclose(
        res.params.to_numpy(),
        [v for v in reference["coef"].values() if v != "NA"],
        rtol=1e-6,
    )
    table = res.emmeans(["temp", "contact"], mode="scale").summary_frame()
    estimate = _numbers(reference["estimate"])
    got = table["emmean"].to_numpy(dtype=float)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(estimate))
    np.testing.assert_allclose(got, estimate, rtol=1e-6, atol=1e-10)
    np.testing.assert_allclose(table["SE"], _numbers(reference["SE"]), rtol=1e-4, atol=1e-10)


def test_a_scale_fit_s_latent_means_need_both_parts():
    """The latent means of the scale fit: the empty cell is nonEst (both parts are aliased
    there); the covered cells keep their numbers.  (R's emmeans prints every latent mean
    of this fit nonEst, the covered cells included: not followed.)"""
    res = _fit(_rows(), scale="~ temp * contact")
    emm = res.emmeans(["temp", "contact"])
    np.testing.assert_array_equal(emm.estimable(), [True, True, True, False])


# -- nested factors (bottle %in% temp) ------------------------------------------------------

NESTING = json.loads(
    (Path(__file__).parents[1] / "data" / "reference" / "emmeans_nesting.json").read_text()
)
NESTED_CALLS = {call["r_call"]: call for call in NESTING["calls"]}
NESTED_OURS = {
    "emmeans(fit, ~ temp)": lambda res: res.emmeans("temp"),
    'emmeans(fit, ~ rating | temp, mode = "prob")': lambda res: res.emmeans(
        "~ rating | temp", mode="prob"
    ),
    "pairs(emmeans(fit, ~ temp))": lambda res: res.emmeans("temp").pairs(),
    'emmeans(fit, ~ temp, weights = "proportional")': lambda res: res.emmeans(
        "temp", weights="proportional"
    ),
    'emmeans(fit, ~ temp, mode = "mean.class")': lambda res: res.emmeans("temp", mode="mean.class"),
    "emmeans(fit, ~ bottle)": lambda res: res.emmeans("bottle"),
    "emmeans(fit, ~ bottle | temp)": lambda res: res.emmeans("~ bottle | temp"),
    'emmeans(fit, ~ temp, nesting = "bottle %in% temp")': lambda res: res.emmeans(
        "temp", nesting="bottle %in% temp"
    ),
    "emmeans(fit, ~ temp, nesting = NULL)": lambda res: res.emmeans("temp", nesting=None),
    'emmeans(fit, ~ rating | temp, mode = "prob", nesting = NULL)': lambda res: res.emmeans(
        "~ rating | temp", mode="prob", nesting=None
    ),
    "pairs(emmeans(fit, ~ temp, nesting = NULL))": lambda res: res.emmeans(
        "temp", nesting=None
    ).pairs(),
}


@pytest.fixture(scope="module")
def nested_fit() -> ordstats.OrdinalResults:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # bottle8's CollinearityWarning
        return ordstats.OrdinalModel.from_formula(
            "rating ~ temp + bottle", ordstats.datasets.load("wine")
        ).fit(disp=False)


def test_the_nested_fit_is_r_s(nested_fit):
    expected = [v for v in NESTING["coef"].values() if v != "NA"]
    np.testing.assert_allclose(nested_fit.params.to_numpy(), expected, rtol=1e-6)


@pytest.mark.parametrize("call", list(NESTED_OURS))
def test_nested_means_and_contrasts_are_r_s(nested_fit, call):
    """Each mean over bottle uses the bottles of its temperature, as R's emmeans; with
    the detection switched off (R's ``nesting = NULL``) every such mean is nonEst."""
    reference = NESTED_CALLS[call]
    table = NESTED_OURS[call](nested_fit).summary_frame()
    for name, labels in reference["labels"].items():
        assert [str(v) for v in table[name]] == np.atleast_1d(labels).tolist()
    estimate = _numbers(list(np.atleast_1d(reference["estimate"])))
    got = table[reference["estimate_column"]].to_numpy(dtype=float)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(estimate))
    np.testing.assert_allclose(got, estimate, rtol=1e-6, atol=1e-12)
    se = _numbers(list(np.atleast_1d(reference["SE"])))
    np.testing.assert_allclose(table["SE"], se, rtol=1e-4, atol=1e-12)
    p_value = _numbers(list(np.atleast_1d(reference["p.value"])))
    np.testing.assert_allclose(table["p.value"], p_value, rtol=1e-3, atol=1e-300)


def test_a_detected_nesting_is_noted_as_r_notes_it(nested_fit):
    assert "bottle %in% temp" in NESTING["note"]
    text = str(nested_fit.emmeans("temp").summary())
    assert "A nesting structure was detected in the fitted model: bottle %in% temp" in text
    for quiet in (
        nested_fit.emmeans("temp", nesting=None),
        nested_fit.emmeans("temp", nesting="none"),
        nested_fit.emmeans("temp", nesting={"bottle": ["temp"]}),  # given, not detected
        _fit(ordstats.datasets.load("wine")).emmeans("temp"),  # crossed factors
    ):
        assert "nesting structure" not in str(quiet.summary())


def test_a_nesting_of_unknown_variables_is_refused(nested_fit):
    with pytest.raises(ordstats.OrdstatsError, match="nesting= 'judge' is not a variable"):
        nested_fit.emmeans("temp", nesting="judge %in% temp")
    with pytest.raises(ordstats.OrdstatsError, match="nesting must read like"):
        nested_fit.emmeans("temp", nesting="bottle in temp")


UNBALANCED = NESTING["unbalanced"]
UNBALANCED_OURS = {
    "emmeans(fit, ~ temp)": lambda res: res.emmeans("temp"),
    'emmeans(fit, ~ temp, weights = "outer")': lambda res: res.emmeans("temp", weights="outer"),
    "emmeans(fit, ~ contact)": lambda res: res.emmeans("contact"),
    'emmeans(fit, ~ rating | contact, mode = "prob")': lambda res: res.emmeans(
        "~ rating | contact", mode="prob"
    ),
    "pairs(emmeans(fit, ~ bottle | temp))": lambda res: res.emmeans("~ bottle | temp").pairs(),
}


@pytest.fixture(scope="module")
def unbalanced_fit() -> ordstats.OrdinalResults:
    wine = ordstats.datasets.load("wine")
    data = wine[wine["bottle"].astype(str) != "8"].copy()
    data["bottle"] = data["bottle"].cat.remove_unused_categories()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an aliased column's CollinearityWarning
        return ordstats.OrdinalModel.from_formula("rating ~ temp + bottle + contact", data).fit(
            disp=False
        )


def test_a_factor_nested_in_two_is_noted_as_r_names_it(unbalanced_fit):
    assert "bottle %in% (temp*contact)" in UNBALANCED["note"]
    assert "bottle %in% (temp*contact)" in str(unbalanced_fit.emmeans("temp").summary())


@pytest.mark.parametrize("call", list(UNBALANCED_OURS))
def test_unbalanced_nested_means_and_contrasts_are_r_s(unbalanced_fit, call):
    """Four bottles cold, three warm, each with one contact level: the means average each
    temperature's (and contact's) own bottles, and the pairs of bottles within temp come
    in groups of different sizes (before: every mean nonEst, and those pairs refused)."""
    reference = {c["r_call"]: c for c in UNBALANCED["calls"]}[call]
    table = UNBALANCED_OURS[call](unbalanced_fit).summary_frame()
    for name, labels in reference["labels"].items():
        assert [str(v) for v in table[name]] == np.atleast_1d(labels).tolist()
    got = table[reference["estimate_column"]].to_numpy(dtype=float)
    np.testing.assert_allclose(got, _numbers(reference["estimate"]), rtol=1e-6)
    np.testing.assert_allclose(table["SE"], _numbers(reference["SE"]), rtol=1e-4)
    np.testing.assert_allclose(table["p.value"], _numbers(reference["p.value"]), rtol=1e-3)


JOINT_CASES = [
    ("nested", 0, {}),
    ("nested", 1, {"nesting": None}),
    ("unbalanced", 0, {}),
    ("unbalanced", 1, {"by": "contact"}),
]


@pytest.mark.parametrize(("which", "position", "options"), JOINT_CASES)
def test_joint_tests_test_a_nested_factor_within_its_nesting_factors_as_r(
    nested_fit, unbalanced_fit, which, position, options
):
    """bottle %in% temp: R tests temp (F 23.308, from the nested means) and temp:bottle
    (bottle within each temp, 6 df); before, ordstats tested bottle and gave temp no test
    (a (confounded) row), which is what R gives with nesting = NULL.  R's (confounded) rows
    are compared by their degrees of freedom (ordstats gives them no F, see above)."""
    fit = nested_fit if which == "nested" else unbalanced_fit
    reference = (NESTING if which == "nested" else UNBALANCED)["joint_tests"][position]
    table = fit.joint_tests(**options)
    assert table["model term"].tolist() == np.atleast_1d(reference["model_term"]).tolist()
    if options.get("by"):
        assert table["contact"].tolist() == np.atleast_1d(reference["by_values"]).tolist()
    np.testing.assert_array_equal(table["df1"], np.atleast_1d(reference["df1"]))
    tested = (table["model term"] != "(confounded)").to_numpy()
    expected_f = np.atleast_1d(reference["F.ratio"]).astype(float)[tested]
    np.testing.assert_allclose(table["F.ratio"][tested], expected_f, atol=5e-4)  # 3 decimals
    expected_p = np.atleast_1d(reference["p.value"]).astype(float)[tested]
    np.testing.assert_allclose(table["p.value"][tested], expected_p, rtol=1e-6)


@pytest.mark.parametrize(
    ("terms", "expected"),
    [
        # R's attr(terms(~ temp/b2), "factors"): temp 1 | temp 2, b2 1
        ([[("temp", True)], [("temp", False), ("b2", True)]], {"b2": ["temp"]}),
        # ~ temp:b2 alone: both coded by every level, each "in" the other: none (as R)
        ([[("temp", False), ("b2", False)]], {}),
        # ~ temp*contact + temp:contact:b2: b2 %in% (temp*contact)
        (
            [
                [("temp", True)],
                [("contact", True)],
                [("temp", True), ("contact", True)],
                [("temp", False), ("contact", False), ("b2", True)],
            ],
            {"b2": ["temp", "contact"]},
        ),
        # main effects of both: nothing implied
        ([[("temp", True)], [("b2", True)], [("temp", True), ("b2", True)]], {}),
    ],
)
def test_nesting_implied_by_the_terms_follows_r(terms, expected):
    from ordstats.results.margins.nesting import find_nesting, implied_nesting

    names = ["temp", "contact", "b2"]
    implied = implied_nesting(terms, names)
    # the cells of a crossed grid show no nesting: what is found is the terms'
    index = np.array([(a, b, c) for a in range(2) for b in range(2) for c in range(4)])
    assert find_nesting(names, [2, 2, 4], index, np.ones(len(index)), implied) == expected


# -- contrasts of nonEst means in the nonlinear modes ---------------------------------------

NONLINEAR = json.loads(
    (Path(__file__).parents[1] / "data" / "reference" / "emmeans_nonlinear_nonest.json").read_text()
)


@pytest.mark.parametrize("call", NONLINEAR["calls"], ids=lambda call: call["mode"])
def test_contrasts_of_nonest_means_are_nonest_unless_linear_as_r(call):
    """tests/r/emmeans_nonlinear_nonest.R: judge's means within warm average over the
    contact cell without rows (nonEst).  Their differences are judge's coefficients on the
    latent and linear-predictor scales, and R gives them; on the probability and
    mean-class scales they depend on the aliased cell's arbitrary prediction and R
    prints nonEst.  Before, ordstats judged those by the linear predictors' difference
    and printed the arbitrary numbers."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the aliased column's CollinearityWarning
        res = ordstats.OrdinalModel.from_formula("rating ~ temp * contact + judge", _rows()).fit(
            disp=False
        )
    means = res.emmeans(call["specs"], mode=call["mode"])
    table = means.contrast("trt.vs.ctrl", adjust="none").summary_frame()
    assert table["contrast"].tolist() == call["contrast"]
    estimate = _numbers(call["estimate"])
    got = table["estimate"].to_numpy(dtype=float)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(estimate))
    np.testing.assert_allclose(got, estimate, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(table["SE"], _numbers(call["SE"]), rtol=1e-4, atol=1e-9)
