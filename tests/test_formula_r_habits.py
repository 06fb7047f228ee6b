"""Formulas as R users write them (found by tests/r/parity_sweep.R).

The R numbers of these models are checked in tests/test_parity_sweep.py; here
what each habit needs of the formula layer.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import ordstats
from tests._parity import dataset
from tests._reference import fit_call, load


def test_dotted_column_names_in_backticks_are_read_whole():
    """R's column names are often dotted (MASS::Cars93's MPG.city, VGAM::pneumo's
    exposure.time); formulaic reports a quoted `` `MPG.city` `` as ``MPG``."""
    from ordstats.design.formula import required_variables

    assert required_variables("Price + `MPG.city`") == {"Price", "MPG.city"}
    assert required_variables("log(`exposure.time`)") == {"exposure.time"}
    assert required_variables("MPG + `MPG.city`") == {"MPG", "MPG.city"}


@pytest.mark.parametrize(
    ("formula", "options"),
    [
        ("rating ~ `1.5`", {}),
        ("rating ~ temp * `1.5` + np.log(`1.5`)", {}),
        ("rating ~ temp", {"scale": "~ `1.5`"}),
        ("rating ~ `1.5` + (1|judge)", {}),
    ],
)
def test_a_quoted_name_that_starts_with_a_digit_and_has_a_dot(wine, formula, options):
    """formulaic reports `` `1.5` `` as ``1``, which no Python name can be: before, the
    fit stopped on "the formula names '1', which is not a column of the data"."""
    from ordstats.design.formula import required_variables

    assert required_variables("`1.5` + x") == {"1.5", "x"}
    assert required_variables("`my col.x`") == {"my col.x"}
    data = wine.assign(**{"1.5": wine["bottle"].astype(int) * 0.5 + 1.0})
    plain = data.rename(columns={"1.5": "x15"})
    res = ordstats.OrdinalModel.from_formula(formula, data, **options).fit()
    renamed = {k: v.replace("`1.5`", "x15") for k, v in options.items()}
    expected = ordstats.OrdinalModel.from_formula(
        formula.replace("`1.5`", "x15"), plain, **renamed
    ).fit()
    np.testing.assert_array_equal(res.params.to_numpy(), expected.params.to_numpy())
    names = [name.replace("`1.5`", "x15").replace("1.5", "x15") for name in res.params.index]
    assert names == list(expected.params.index)
    assert res.llf == expected.llf
    np.testing.assert_array_equal(
        np.asarray(res.predict(data.iloc[:3])), np.asarray(expected.predict(plain.iloc[:3]))
    )


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


def _r_style(name: str) -> str:
    """``temp[T.warm]`` and ``temp[cold]`` as R prints them; scale effects without prefix."""
    name = name.removeprefix("scale:")
    return re.sub(r"\[(?:T\.)?(.+?)\]", r"\1", name)


def _interaction_case_data(name: str):
    if name.startswith("wine"):
        wine = ordstats.datasets.load("wine")
        return wine.assign(x=np.sin(np.arange(1.0, len(wine) + 1.0)))
    housing = ordstats.datasets.load("housing")  # R's read.csv: text, levels sorted
    return housing.astype({"Infl": str, "Type": str, "Cont": str})


@pytest.mark.parametrize(
    "case", ["wine_location", "wine_location_x", "wine_scale", "housing_location"]
)
def test_an_interaction_without_its_main_effects_is_coded_as_r_codes_it(case):
    """Before: formulaic's basis of the same column space (same logLik, every estimate and
    SE different: thresholds off by 4.03). R codes a factor by one indicator per level when
    the term without it is in no preceding term, and clm drops the column aliased with
    the thresholds (tests/r/interaction_coding.R)."""
    ref = load("interaction_coding")[case]
    formula, _, options = fit_call(ref["call"])
    with pytest.warns(ordstats.errors.CollinearityWarning):
        res = ordstats.OrdinalModel.from_formula(
            formula, _interaction_case_data(case), **options
        ).fit()
    got = {_r_style(n): v for n, v in res.params.items()}
    se = {_r_style(n): v for n, v in res.bse.items()}
    assert sorted(got) == sorted(ref["coefficients"])
    for name, value in ref["coefficients"].items():
        assert got[name] == pytest.approx(value, rel=1e-6, abs=1e-8), name
        assert se[name] == pytest.approx(ref["se"][name], rel=1e-4), name
    assert res.llf == pytest.approx(ref["logLik"], rel=1e-9)


def test_factor_levels_given_as_numbers_match_text_values_as_r_does():
    """R's factor() and ordered() compare as text: levels c(5, 4, 3, 2, 1) of the labels
    "1".."5". Before: every value was missing ('nothing is left to fit'). R:
    clm(ordered(rating, levels = c(5,4,3,2,1)) ~ temp + contact, data = wine) has
    5|4 ... 2|1 = -5.0064, -3.4669, -1.2508, 1.3444 and tempwarm -2.5031 (logLik -86.4919)."""
    wine = ordstats.datasets.load("wine")
    res = ordstats.OrdinalModel.from_formula(
        "ordered(rating, levels = c(5, 4, 3, 2, 1)) ~ temp + contact", wine
    ).fit()
    assert list(res.params.index[:4]) == ["5|4", "4|3", "3|2", "2|1"]
    np.testing.assert_allclose(
        res.params.iloc[:5], [-5.0064, -3.4669, -1.2508, 1.3444, -2.5031], atol=5e-5
    )
    assert res.llf == pytest.approx(-86.4919, abs=5e-5)
    judges = ordstats.OrdinalModel.from_formula(
        "rating ~ factor(judge, levels = c(9, 8, 7, 6, 5, 4, 3, 2, 1))", wine
    ).fit()
    assert judges.params.index[4].endswith("[T.8]")


def _term_test(res, which: str) -> tuple[list[str], np.ndarray, np.ndarray]:
    """A nominal_test/scale_test table (terms, Df, LRT), its failed refits' warning allowed."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ordstats.errors.ConvergenceWarning)
        table = getattr(res, which)().iloc[1:]
    return list(table.index), table["Df"].to_numpy(), table["LRT"].to_numpy()


def _r_table(table: dict) -> tuple[list[str], np.ndarray, np.ndarray]:
    as_float = lambda xs: np.array([np.nan if x is None else x for x in xs], dtype=float)  # noqa: E731
    return table["terms"], as_float(table["Df"]), as_float(table["LRT"])


@pytest.mark.parametrize(
    ("case", "options", "which"),
    [
        ("airquality", {}, "nominal_test"),
        ("airquality", {}, "scale_test"),
        ("airquality_scaled", {"scale": "~ `Solar.R`"}, "nominal_test"),
    ],
)
def test_term_tests_refit_dotted_column_names(case, options, which):
    """nominal_test and scale_test put each term into a refit's formula: a dotted name
    (Solar.R) went in without its backticks, so the refit failed and its row was NA
    with a ConvergenceWarning where R has the LRT (tests/r/term_tests_dotted_names.R)."""
    ref = load("term_tests_dotted_names")[case]
    formula = ref["formula"].replace("Solar.R", "`Solar.R`")
    with pytest.warns(ordstats.errors.MissingDataWarning):
        res = ordstats.OrdinalModel.from_formula(formula, dataset("airquality"), **options).fit()
    terms, df, lrt = _term_test(res, which)
    r_terms, r_df, r_lrt = _r_table(ref[which])
    assert terms == r_terms
    np.testing.assert_array_equal(df, r_df)
    np.testing.assert_allclose(lrt, r_lrt, rtol=1e-5)


def test_scale_test_keeps_a_row_r_leaves_na_at_its_default_iterations():
    """R's scale_test has NA for log(hincome):children of carData::Womenlf: its refit
    stops (code -2) at clm.control()'s limits, but reaches logLik -211.06618 with
    maxModIter = 20; ordstats' refit reaches that maximum, so the row has its LRT."""
    ref = load("term_tests_dotted_names")["womenlf"]
    assert ref["relaxed_default_code"] == -2
    res = ordstats.OrdinalModel.from_formula(ref["formula"], dataset("womenlf")).fit()
    terms, df, lrt = _term_test(res, "scale_test")
    r_terms, r_df, r_lrt = _r_table(ref["scale_test"])
    assert terms == r_terms
    np.testing.assert_array_equal(df[:2], r_df[:2])
    np.testing.assert_allclose(lrt[:2], r_lrt[:2], rtol=1e-5)
    assert df[2] == 2
    assert lrt[2] == pytest.approx(2 * (ref["relaxed_logLik"] - ref["logLik"]), rel=1e-6)


def test_bare_dotted_column_names_are_read_as_r_reads_them(tmp_path):
    """R reads ``y ~ Solar.R`` as the column Solar.R; formulaic reads an attribute of Solar,
    so before, the formula was refused ("names 'Solar', which is not a column"; put it in
    backticks).  A dotted column name is now quoted for the user, in every formula; a
    dotted name that is not a column (``np.pi``) is left alone."""
    aq = dataset("airquality").dropna()
    aq = aq.assign(**{"wind.speed": aq["Wind"], "oz.level": aq["oz"]})
    bare = ordstats.OrdinalModel.from_formula(
        "oz.level ~ Temp + log(wind.speed) + I(Solar.R * np.pi)", aq, scale="~ Solar.R"
    ).fit()
    quoted = ordstats.OrdinalModel.from_formula(
        "`oz.level` ~ Temp + log(`wind.speed`) + I(`Solar.R` * np.pi)", aq, scale="~ `Solar.R`"
    ).fit()
    assert list(bare.params.index) == list(quoted.params.index)
    np.testing.assert_array_equal(bare.params.to_numpy(), quoted.params.to_numpy())
    np.testing.assert_array_equal(
        np.asarray(bare.predict(aq.head(3))), np.asarray(quoted.predict(aq.head(3)))
    )
    path = tmp_path / "aq.parquet"
    aq.to_parquet(path)
    levels = list(aq["oz"].cat.categories)
    chunked = ordstats.OrdinalModel.from_formula(
        "oz.level ~ Temp + log(wind.speed) + I(Solar.R * np.pi)",
        path,
        scale="~ Solar.R",
        levels=levels,
    ).fit()
    np.testing.assert_allclose(chunked.params.to_numpy(), bare.params.to_numpy(), rtol=1e-8)
    with pytest.raises(ordstats.errors.FormulaError, match=r"names 'Solar', which is not"):
        ordstats.OrdinalModel.from_formula("oz ~ Solar.X", aq)
