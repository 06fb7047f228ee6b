"""R's functions in formulas (``factor``, ``relevel``, ``cut``, ``ns``, ...) and R's ``.``.

References: tests/r/formula_functions.R -> tests/data/reference/formula_functions.json,
``ordinal::clm`` on ``datasets::infert``: log-likelihoods and estimates to 1e-6, standard
errors to 1e-4, and predicted probabilities for new rows (ages inside and outside the
fitted range, where ``ns`` continues linearly) to 1e-6.  Before, each formula but
``poly``/``scale``/``log`` was refused as naming an unknown column, ``age %in% ind``
fitted ``ind/age`` (with ``ind``'s main effect: log-likelihood -193.40, R's -194.35), and
a factor that an expression leaves missing (``cut`` of a value outside its breaks) was
coded as its reference level (all 248 rows kept; R drops 30).  R's ``y ~ .`` (every column
but the response) was refused.
"""

from __future__ import annotations

import json
import pickle
import re
import warnings

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats.design.r_functions import R_FUNCTIONS, r_spelling
from ordstats.errors import (
    CollinearityWarning,
    FormulaError,
    MissingDataWarning,
    PredictionError,
    PredictionWarning,
    SpecificationError,
)
from tests._parity import HERE, dataset

REFERENCE = json.loads((HERE / "data" / "reference" / "formula_functions.json").read_text())
CASES = {case["formula"]: case for case in REFERENCE["fits"]}


@pytest.fixture(scope="module")
def infert() -> pd.DataFrame:
    data = dataset("infert")
    return data.assign(ind=data["induced"].astype(str))


@pytest.fixture(scope="module")
def newdata() -> pd.DataFrame:
    rows = pd.DataFrame(REFERENCE["newdata"])
    return rows.assign(ind=rows["induced"].astype(str))


def _fit(rhs: str, data: pd.DataFrame) -> ordstats.OrdinalResults:
    formula = rhs if "~" in rhs else f"education ~ {rhs}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ordstats.OrdinalModel.from_formula(formula, data).fit(disp=False)


@pytest.mark.parametrize("formula", list(CASES))
def test_fit_equals_r(formula, infert, newdata):
    """Also responses given as calls (``factor(parity) ~ age``: clm needs a factor
    response), whose levels in their order are the categories, as R's thresholds show."""
    case = CASES[formula]
    res = _fit(formula, infert)
    thresholds = [name for name in case["names"] if "|" in name]
    assert list(res.params.index[: len(thresholds)]) == thresholds
    assert res.nobs == case["nobs"]
    assert res.llf == pytest.approx(case["logLik"], rel=1e-6)
    aliased = np.array([value == "NA" for value in case["coef"]])  # R's NA: dropped here
    coef = np.array(case["coef"], dtype=object)[~aliased].astype(float)
    se = np.array(case["se"], dtype=object)[~aliased].astype(float)
    np.testing.assert_allclose(res.params.to_numpy(), coef, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(res.bse.to_numpy(), se, rtol=1e-4)
    if case["prob"] is None:
        return
    expected = np.array(case["prob"], dtype=object)
    complete = ~np.any(expected == "NA", axis=1)  # R: NA where cut() puts a row outside
    if re.search(r"\bbs\(", formula):  # new ages 19 and 47 lie beyond the fitted 21-44: R warns too
        with pytest.warns(PredictionWarning, match="beyond the boundary knots"):
            got = res.predict(newdata, which="prob")
    elif res.model.design.location.aliased:  # R's predict.clm warns the same
        with pytest.warns(PredictionWarning, match="rank-deficient fit may be misleading"):
            got = res.predict(newdata, which="prob")
    elif complete.all():
        got = res.predict(newdata, which="prob")
    else:
        with pytest.warns(MissingDataWarning, match="their predictions are NaN"):
            got = res.predict(newdata, which="prob")
    got = np.asarray(got, dtype=float)
    np.testing.assert_allclose(got[complete], expected[complete].astype(float), rtol=1e-6)
    assert np.isnan(got[~complete]).all()


def test_nesting_outside_calls_is_r_interaction_not_formulaic_nesting():
    """R reads ``b %in% a`` as ``a:b``; formulaic read it as ``a/b`` (with ``a``'s main
    effect, a different model)."""
    assert r_spelling("age %in% ind") == "age : ind"
    assert r_spelling("I(x %in% y) + z") == "I(x %in% y) + z"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("as.numeric(x) + splines::ns(z, 3)", "as_numeric(x) + ns(z, 3)"),
        ("cut(x, 3, include.lowest = TRUE)", "cut(x, 3, include_lowest = True)"),
        ("C(f, sum) + C(g, helmert)", "C(f, contr.sum) + C(g, contr.helmert)"),
        ("`as.numeric(x)` + y", "`as.numeric(x)` + y"),  # quoted names are kept
        ("factor(f, levels = c('TRUE', 'a.b = 1'))", "factor(f, levels = c('TRUE', 'a.b = 1'))"),
        ("np.log(x) + x.y", "np.log(x) + x.y"),  # Python's dotted names are not R's
        # before: "Term already seen with a different numerical scaling" (formulaic's % parse)
        ("age %/% 5 + z", "I(age // 5) + z"),
        ("a:b %% 3", "a:I(b % 3)"),
        ("a %% 2 %/% 1", "I(I(a % 2) // 1)"),  # R's %op% are left-associative
        ("log(x %% 4) + `p%%q`", "log(x % 4) + `p%%q`"),
    ],
)
def test_r_spellings_are_rewritten_outside_quotes(text, expected):
    assert r_spelling(text) == expected


def test_cut_and_ns_keep_what_they_learnt_for_new_rows(infert):
    """Breaks of ``cut(age, 3)`` and knots of ``ns`` come from the fitted rows, not from
    the rows predicted (R's ``cut`` would take new breaks from new data)."""
    res = _fit("cut(age, 3) + ns(parity, 2)", infert)
    one = res.predict(infert.iloc[:1], which="prob")
    all_rows = res.predict(infert, which="prob")
    np.testing.assert_allclose(np.asarray(one, float), np.asarray(all_rows, float)[:1])
    again = pickle.loads(pickle.dumps(res))
    np.testing.assert_allclose(
        np.asarray(again.predict(infert.iloc[:5]), float),
        np.asarray(all_rows, float)[:5],
    )


def test_a_callers_value_does_not_hide_r_function_but_a_callers_function_does(infert):
    c = 3.0  # noqa: F841  (a value named like R's c(): R calls the function)
    res = ordstats.OrdinalModel.from_formula(
        "education ~ factor(ind, levels = c('2', '1', '0')) + age", infert
    ).fit(disp=False)
    case = CASES['education ~ factor(ind, levels = c("2", "1", "0")) + age']
    assert res.llf == pytest.approx(case["logLik"])

    def cut(x, n):  # the caller's own function of R's name is the caller's
        return np.asarray(x, float) / n

    res = ordstats.OrdinalModel.from_formula("education ~ cut(age, 10)", infert).fit(disp=False)
    assert list(res.params.index[2:]) == ["cut(age, 10)"]
    assert res.params.iloc[2] == pytest.approx(_fit("I(age / 10)", infert).params.iloc[2], rel=1e-8)


def test_r_functions_give_missing_values_as_r(infert):
    rows = infert.iloc[:6].copy()
    rows.loc[rows.index[0], "age"] = np.nan
    test = pd.Series([np.nan, 1.0, 0.0])  # R's NA > 30 is NA
    assert list(R_FUNCTIONS["ifelse"](test, 1, 0).fillna(-1)) == [-1, 1, 0]
    assert np.isnan(R_FUNCTIONS["pmin"](rows["age"], 30).iloc[0])
    assert R_FUNCTIONS["pmin"](rows["age"], 30, na_rm=True).iloc[0] == 30
    text = pd.Series(["TRUE", "F", "maybe", None])
    assert list(R_FUNCTIONS["as_logical"](text)) == [True, False, np.nan, np.nan] or list(
        pd.isna(R_FUNCTIONS["as_logical"](text))
    ) == [False, False, True, True]
    assert list(R_FUNCTIONS["as_numeric"](pd.Series(["1.5", "x"])).fillna(-1)) == [1.5, -1]
    levels = pd.Series(pd.Categorical(["b", "a", None], categories=["b", "a"]))
    assert list(R_FUNCTIONS["as_numeric"](levels).fillna(-1)) == [1.0, 2.0, -1]


def test_summaries_of_a_variable_are_r_s_with_na_rm():
    # before: "the formula names 'mean', which is not a column of the data"
    x = pd.Series([1.0, 2.0, np.nan, 7.0])
    assert np.isnan(R_FUNCTIONS["mean"](x))  # R: NA unless na.rm = TRUE
    assert R_FUNCTIONS["mean"](x, na_rm=True) == pytest.approx(10 / 3)
    assert R_FUNCTIONS["sd"](x, na_rm=True) == pytest.approx(np.std([1, 2, 7], ddof=1))
    assert R_FUNCTIONS["median"](x, na_rm=True) == 2.0
    assert R_FUNCTIONS["length"](x) == 4
    assert np.isnan(R_FUNCTIONS["sd"](pd.Series([3.0])))  # R's sd of one value is NA
    flags = R_FUNCTIONS["xor"](pd.Series([1.0, 1.0, 0.0, np.nan]), pd.Series([1.0, 0.0, 0.0, 1.0]))
    assert list(flags.iloc[:3]) == [False, True, False] and pd.isna(flags.iloc[3])
    with pytest.raises(FormulaError, match=r"mean\(\) needs numbers"):
        R_FUNCTIONS["mean"](pd.Series(["a", "b"]))


def test_bs_continues_its_polynomials_beyond_the_boundary_knots_with_r_s_warning(infert):
    # before: formulaic's bs refused new ages outside the fitted range ("extend beyond
    # upper and/or lower bounds"), where R warns and predicts; the values are checked
    # against R in test_fit_equals_r
    res = ordstats.OrdinalModel.from_formula("education ~ bs(age, df = 4)", infert).fit()
    with pytest.warns(PredictionWarning, match="beyond the boundary knots"):
        far = res.predict(pd.DataFrame({"age": [15.0, 50.0]}), which="prob")
    assert np.isfinite(far.to_numpy()).all()
    inside = pd.DataFrame({"age": [25.0, 35.0]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res.predict(inside, which="prob")


def test_cut_labels_and_edges_are_r_s():
    cut = R_FUNCTIONS["cut"]
    x = pd.Series([21.0, 28.0, 36.5, 44.0])
    assert list(cut(x, 3).cat.categories) == ["(21,28.7]", "(28.7,36.3]", "(36.3,44]"]
    low = cut(pd.Series([20.0, 25.0, 30.0]), [20, 30, 40], include_lowest=True)
    assert list(low) == ["[20,30]", "[20,30]", "[20,30]"]
    assert pd.isna(cut(pd.Series([20.0]), [20, 30, 40])[0])  # (20,30]: 20 is outside


def test_bad_r_function_arguments_are_clear(infert):
    with pytest.raises(FormulaError, match=r"relevel\(\): ref='9' is not a level"):
        _fit("relevel(factor(induced), ref = '9')", infert)
    with pytest.raises(FormulaError, match=r"cut\(\): breaks=1 must be at least 2"):
        _fit("cut(age, 1)", infert)
    with pytest.raises(FormulaError, match=r"factor\(\): 2 labels for 3 levels"):
        _fit("factor(induced, labels = c('a', 'b'))", infert)


def test_relevel_refuses_a_number_which_r_reads_as_a_position(infert):
    """``relevel(factor(induced), ref = 1)`` is R's reference level "0" (the first
    level); before, ordstats took the level "1": other coefficients, silently."""
    for ref in ("1", "1.0", "2"):
        with pytest.raises(FormulaError, match=rf"ref={ref} is a number, which R reads as"):
            _fit(f"relevel(factor(induced), ref = {ref}) + age", infert)
    level_one = _fit('relevel(factor(induced), ref = "1") + age', infert)
    assert [name.rsplit("[", 1)[1] for name in level_one.params.index[-3:-1]] == ["T.0]", "T.2]"]


def test_chunked_fits_take_r_functions_and_refuse_learnt_state(infert, tmp_path):
    infert.to_parquet(tmp_path / "infert.parquet")
    for rhs in ("factor(induced) + age", "cut(age, c(20, 30, 40, 50)) + parity", "age %in% ind"):
        memory = _fit(rhs, infert)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            chunked = ordstats.OrdinalModel.from_formula(
                f"education ~ {rhs}", str(tmp_path), chunksize=60
            ).fit(disp=False)
        assert chunked.llf == pytest.approx(memory.llf, rel=1e-10)
        assert list(chunked.params.index) == list(memory.params.index)
    with pytest.raises(SpecificationError, match=r"stateful transforms \('ns\(age, 3\)'\)"):
        ordstats.OrdinalModel.from_formula("education ~ ns(age, 3)", str(tmp_path), chunksize=60)


RELEVEL = 'education ~ relevel(factor(induced), ref = "2") + age'


def _sorted_by_induced(infert: pd.DataFrame, copies: int = 1) -> pd.DataFrame:
    """``copies`` of infert, rows with ``induced`` 0 first and 2 (the reference) last."""
    rows = pd.concat([infert] * copies, ignore_index=True)
    return rows.sort_values("induced", kind="stable").reset_index(drop=True)


def test_relevel_fits_data_whose_first_rows_lack_the_reference(infert):
    """R's estimates (of infert five times: the same estimates, standard errors over
    sqrt(5)) when the first rows have no ``induced == 2``.  Before, a fit of more than
    1,000 rows read the formula's layout from its first 100 and failed: ``relevel():
    ref='2' is not a level of the factor (0)``."""
    case = CASES[RELEVEL]
    res = _fit(RELEVEL, _sorted_by_induced(infert, copies=5))
    assert res.nobs == 5 * case["nobs"]
    assert res.llf == pytest.approx(5 * case["logLik"], rel=1e-6)
    np.testing.assert_allclose(res.params.to_numpy(), case["coef"], rtol=1e-6)
    np.testing.assert_allclose(res.bse.to_numpy() * np.sqrt(5), case["se"], rtol=1e-4)


def test_relevel_encodes_new_rows_and_chunks_without_the_reference(infert, tmp_path):
    """Rows without the reference level take the fit's levels, as R's predict gives new
    data the model's: new rows are predicted, and a file whose first chunks have no
    ``induced == 2`` is fitted in chunks with R's estimates.  Before, both failed in
    ``relevel``, the chunked fit saying that the data changed during the fit."""
    res = _fit(RELEVEL, infert)
    without = infert["induced"] < 2
    np.testing.assert_allclose(
        res.predict(infert[without]).to_numpy(), res.predict(infert)[without].to_numpy()
    )
    _sorted_by_induced(infert).to_parquet(tmp_path / "infert.parquet")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        chunked = ordstats.OrdinalModel.from_formula(RELEVEL, str(tmp_path), chunksize=40).fit(
            disp=False
        )
    case = CASES[RELEVEL]
    assert list(chunked.params.index) == list(res.params.index)
    np.testing.assert_allclose(chunked.params.to_numpy(), case["coef"], rtol=1e-6)
    np.testing.assert_allclose(chunked.bse.to_numpy(), case["se"], rtol=1e-4)
    with pytest.raises(FormulaError, match=r"relevel\(\): ref='9' is not a level"):
        ordstats.OrdinalModel.from_formula(
            "education ~ relevel(factor(induced), ref = '9')", str(tmp_path), chunksize=40
        )


def test_dot_is_every_other_column_also_for_sources_and_side_formulas(infert, tmp_path):
    """R's ``.``: the data's columns but the response (the weights column included, as in
    R); in nominal and scale formulas too, and for data read in chunks."""
    weighted = infert.assign(w=1.0 + np.arange(1, len(infert) + 1) % 3)
    res = ordstats.OrdinalModel.from_formula(
        "education ~ . - w - ind", weighted, weights="w", scale="~ . - w - ind - age"
    ).fit(disp=False)
    assert list(res.params.index[2:]) == [
        "age",
        "parity",
        "induced",
        "case",
        "spontaneous",
        *(f"scale:{n}" for n in ("parity", "induced", "case", "spontaneous")),
    ]
    weighted.to_parquet(tmp_path / "infert.parquet")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        chunked = ordstats.OrdinalModel.from_formula(
            "education ~ . - w - ind", str(tmp_path), chunksize=60, weights="w"
        ).fit(disp=False)
        memory = ordstats.OrdinalModel.from_formula(
            "education ~ . - w - ind", weighted, weights="w"
        ).fit(disp=False)
    assert chunked.llf == pytest.approx(memory.llf, rel=1e-10)
    assert r_spelling("`a.b` + x.y") == "`a.b` + x.y"  # dots inside names are not R's '.'


def test_a_response_call_needs_the_data_in_memory(infert, tmp_path):
    infert.to_parquet(tmp_path / "infert.parquet")
    with pytest.raises(FormulaError, match=r"the response 'factor\(parity\)' is an expression"):
        ordstats.OrdinalModel.from_formula("factor(parity) ~ age", str(tmp_path), chunksize=60)
    with pytest.raises(FormulaError, match=r"cannot evaluate the response 'factor\(nope\)'"):
        ordstats.OrdinalModel.from_formula("factor(nope) ~ age", infert)


def test_offset_terms_carry_into_term_tests_refits_and_mixed_models(infert):
    """R's clm takes an offset only as a formula term (its offset= argument is refused).
    Before, ordstats refused the term; a nominal_test's refits must keep it (R's LRTs)."""
    checks = REFERENCE["offset_checks"]
    res = _fit(checks["nominal_test"]["formula"], infert)
    table = res.nominal_test()
    np.testing.assert_allclose(
        table["LRT"].loc[checks["nominal_test"]["terms"]], checks["nominal_test"]["LRT"], rtol=1e-5
    )
    probit = res.model.with_changes(link="probit").fit(disp=False)
    column = ordstats.OrdinalModel.from_formula(
        "education ~ age + ind", infert.assign(o=infert["parity"] / 10), offset="o", link="probit"
    ).fit(disp=False)
    assert probit.llf == pytest.approx(column.llf, rel=1e-10)
    mixed = ordstats.OrdinalModel.from_formula(checks["clmm"]["formula"], infert).fit()
    assert mixed.llf == pytest.approx(checks["clmm"]["logLik"], rel=1e-6)


def test_offset_terms_are_given_once_in_memory_and_evaluated_on_new_rows(infert, tmp_path):
    res = _fit("education ~ age + offset(parity / 10)", infert)
    with pytest.raises(PredictionError, match=r"newdata must hold the variables of the model's"):
        res.predict(infert[["age"]].iloc[:2])
    with pytest.raises(FormulaError, match="more than one offset term"):
        _fit("education ~ age + offset(parity) + offset(case)", infert)
    with pytest.raises(FormulaError, match="the offset is given twice"):
        ordstats.OrdinalModel.from_formula(
            "education ~ age + offset(parity)", infert, offset=infert["case"]
        )
    infert.to_parquet(tmp_path / "infert.parquet")
    with pytest.raises(FormulaError, match="store a location offset as a column and pass offset="):
        ordstats.OrdinalModel.from_formula(
            "education ~ age + offset(parity / 10)", str(tmp_path), chunksize=60
        )


def test_text_levels_of_numbers_are_compared_as_r_writes_them(infert):
    """R compares a factor's values with text levels as text: factor(n, levels = c("2",
    "1", "0")) of the numbers 0, 1, 2 (also stored as floats, 2.0 written "2").  Before,
    no value matched and every row was dropped as missing."""
    expected = CASES['education ~ factor(ind, levels = c("2", "1", "0")) + age']["logLik"]
    floats = infert.assign(indf=infert["induced"].astype(float))
    for rhs in (
        "factor(induced, levels = c('2', '1', '0')) + age",
        "factor(indf, levels = c('2', '1', '0')) + age",
        "relevel(factor(indf), ref = '2') + age",
    ):
        res = _fit(rhs, floats)
        assert res.nobs == len(infert)
        assert res.llf == pytest.approx(expected, rel=1e-8)
    names = _fit("interaction(indf, case)", floats).params.index
    assert "interaction(indf, case)[T.1.0]" in names  # R's level 1.0: induced 1, case 0


R_BEHAVIOURS = json.loads((HERE / "data" / "reference" / "r_behaviours.json").read_text())


@pytest.mark.parametrize("formula", list(R_BEHAVIOURS["constant_term"]["refused"]))
def test_a_summary_of_a_column_alone_as_a_term_is_refused_as_in_r(formula, infert):
    """R's model.frame refuses ~ sd(age) ('variable lengths differ'); before, ordstats
    raised numpy's 'all input arrays must have the same shape'."""
    term = re.search(r"(sd|mean)\(age\)", formula).group(0)  # type: ignore[union-attr]
    assert term in R_BEHAVIOURS["constant_term"]["refused"][formula]
    with pytest.raises(FormulaError, match=rf"the term '{re.escape(term)}' gives one value"):
        ordstats.OrdinalModel.from_formula(formula, infert)
    with pytest.raises(FormulaError, match="gives one value"):
        ordstats.OrdinalModel.from_formula("education ~ age", infert, scale=f"~ {term}")


def test_a_constant_column_is_aliased_with_the_thresholds_as_in_r(infert):
    ref = R_BEHAVIOURS["constant_term"]
    with pytest.warns(CollinearityWarning, match=r"'I\(0 \* age \+ sd\(age\)\)'"):
        res = ordstats.OrdinalModel.from_formula(
            "education ~ age + I(0 * age + sd(age))", infert
        ).fit(disp=False)
    assert res.model.design.location.aliased == [ref["aliased"]]
    assert res.llf == pytest.approx(ref["logLik"], rel=1e-6)
    np.testing.assert_allclose(res.params, list(ref["coef"].values()), rtol=1e-6)
    np.testing.assert_allclose(res.bse, list(ref["se"].values()), rtol=1e-4)
    newdata = pd.DataFrame(ref["newdata"])
    with pytest.warns(PredictionWarning, match="rank-deficient fit may be misleading"):
        prob = res.predict(newdata)  # as R's predict.clm warns
    np.testing.assert_allclose(prob, ref["prob"], rtol=1e-6)


@pytest.mark.parametrize(
    "rhs", ["poly(age, parity, degree = 2)", "poly(age, spontaneous, degree = 2, raw = TRUE)"]
)
def test_poly_of_several_variables_keeps_its_polynomials_for_new_rows(infert, rhs):
    # R's polym: each variable's polynomials learnt on the fitted rows (R's fit in
    # test_fit_equals_r; R's predict.clm cannot take new rows for it)
    res = _fit(rhs, infert)
    assert [name.split(")")[-1] for name in res.params.index[2:]] == [
        "[1.0]",
        "[2.0]",
        "[0.1]",
        "[1.1]",
        "[0.2]",
    ]
    rows = infert.iloc[[3, 50, 120]]
    np.testing.assert_allclose(
        res.predict(rows, which="prob"), res.predict(which="prob").loc[rows.index], rtol=1e-12
    )


def test_raw_poly_of_several_variables_reads_in_chunks(infert):
    # raw powers learn nothing from the rows, so data read in chunks may use them
    rhs = "poly(age, spontaneous, degree = 2, raw = TRUE) + ind"
    memory = _fit(rhs, infert)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        chunked = ordstats.OrdinalModel.from_formula(
            f"education ~ {rhs}", infert, chunksize=60
        ).fit(disp=False)
    np.testing.assert_allclose(chunked.params, memory.params, rtol=1e-8)
