"""Every bad input gets a clear ordstats error or warning that says what to do."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats.errors import (
    CollinearityWarning,
    ConvergenceWarning,
    DataError,
    FormulaError,
    LevelsWarning,
    MissingDataWarning,
    OrdstatsError,
    PredictionError,
    PredictionWarning,
    ResponseError,
    SeparationWarning,
    SpecificationError,
    SpecificationWarning,
)

OrdinalModel = ordstats.OrdinalModel


# -- missing values ------------------------------------------------------------


def test_missing_values_are_dropped_with_a_count(wine):
    wine = wine.copy()
    wine["x"] = np.arange(len(wine), dtype=float)
    wine.loc[[0, 5], "x"] = np.nan
    wine.loc[7, "x"] = np.inf
    wine.loc[9, "temp"] = None
    with pytest.warns(MissingDataWarning, match=r"4 of 72 rows .* 'temp' \(1\), 'x' \(3\)"):
        model = OrdinalModel.from_formula("rating ~ temp + x", wine)
    assert model.n_rows == 68
    assert model.design.n_dropped == 4
    assert 0 not in model.design.row_index


def test_missing_values_raise_when_asked(wine):
    wine = wine.copy()
    wine.loc[3, "rating"] = np.nan
    with pytest.raises(DataError, match=r"1 of 72 rows .*'rating' \(1\).*missing='drop'"):
        OrdinalModel.from_formula("rating ~ temp", wine, missing="raise")


def test_unused_columns_with_missing_values_do_not_drop_rows(wine):
    wine = wine.assign(unused=np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = OrdinalModel.from_formula("rating ~ temp", wine)
    assert model.n_rows == 72


def test_non_finite_values_from_transforms_are_dropped(wine):
    wine = wine.assign(x=np.r_[0.0, np.linspace(1, 3, 71)])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = OrdinalModel.from_formula("rating ~ np.log(x) + temp", wine)
    assert model.n_rows == 71
    # one warning naming the term, no numpy RuntimeWarning from log(0)
    assert [w.category for w in caught] == [MissingDataWarning]
    assert "1 of 72 rows" in str(caught[0].message)
    assert "'np.log(x)' (1)" in str(caught[0].message)


def test_missing_data_report_names_each_column_once(wine):
    """A row bad in a raw column is not counted again under the terms built from it."""
    wine = wine.assign(x=np.r_[-2.0, -1.0, np.linspace(1, 3, 70)])
    wine.loc[0, "temp"] = np.nan
    wine.loc[5, "x"] = np.inf
    with pytest.warns(MissingDataWarning) as caught:
        model = OrdinalModel.from_formula(
            "rating ~ temp + np.log(x) + x", wine, scale="~ np.sqrt(x)"
        )
    message = str(caught[0].message)
    assert "3 of 72 rows" in message
    assert "'temp' (1), 'x' (1), 'np.log(x)' (1), 'scale: np.sqrt(x)' (1)" in message
    assert "formula terms" not in message
    assert model.n_rows == 69


def test_missing_in_arrays(wine):
    X = np.random.default_rng(0).normal(size=(72, 2))
    X[4, 1] = np.nan
    with pytest.warns(MissingDataWarning, match=r"1 of 72 rows"):
        model = OrdinalModel(wine["rating"], X)
    assert model.n_rows == 71


# -- the response --------------------------------------------------------------


def test_response_with_one_level(wine):
    wine = wine[wine["rating"] == "3"]
    with (
        pytest.warns(LevelsWarning),
        pytest.raises(ResponseError, match=r"1 observed level \(only '3'\).*at least two"),
    ):
        OrdinalModel.from_formula("rating ~ temp", wine)


def test_unordered_string_response_says_how_to_fix(wine):
    df = wine.assign(
        grade=wine["rating"].map({"1": "a", "2": "b", "3": "c", "4": "d", "5": "e"}).astype(str)
    )
    with pytest.raises(ResponseError, match=r"unordered labels.*levels=\[\.\.\.\].*ordered=True"):
        OrdinalModel.from_formula("grade ~ temp", df)
    res = OrdinalModel.from_formula("grade ~ temp", df, levels=list("abcde")).fit()
    assert res.params.index[0] == "a|b"


def test_unordered_categorical_of_strings_is_rejected():
    y = pd.Categorical(["lo", "hi", "mid", "lo", "hi"])
    with pytest.raises(ResponseError, match=r"unordered labels"):
        OrdinalModel(y, np.arange(5.0))


def test_levels_must_cover_the_values(wine):
    with pytest.raises(ResponseError, match=r"not among levels=\['1', '2', '3'\]: '4', '5'"):
        OrdinalModel.from_formula("rating ~ temp", wine, levels=["1", "2", "3"])


def test_empty_levels_are_dropped_with_a_warning(wine):
    wine = wine[wine["rating"] != "2"]
    with pytest.warns(LevelsWarning, match=r"level\(s\) '2' have no observations"):
        res = OrdinalModel.from_formula("rating ~ temp", wine).fit()
    assert list(res.thresholds.index) == ["1|3", "3|4", "4|5"]


def test_too_many_levels_needs_consent():
    rng = np.random.default_rng(1)
    y = rng.normal(size=200)
    with pytest.raises(ResponseError, match=r"200 distinct levels.*many_levels=True"):
        OrdinalModel(y, rng.normal(size=200))


def test_formula_with_absent_column(wine):
    with pytest.raises(FormulaError, match=r"'contcat'.*not a column.*Did you mean 'contact'"):
        OrdinalModel.from_formula("rating ~ temp + contcat", wine)
    with pytest.raises(FormulaError, match=r"response 'ratings' is not a column"):
        OrdinalModel.from_formula("ratings ~ temp", wine)
    with pytest.raises(FormulaError, match=r"formula must be a string like"):
        OrdinalModel.from_formula("rating temp", wine)


# -- the design ------------------------------------------------------------------


def test_intercept_only_formula_fits_the_thresholds(wine):
    res = OrdinalModel.from_formula("rating ~ 1", wine).fit()
    assert list(res.params.index) == ["1|2", "2|3", "3|4", "4|5"]
    assert res.llf == pytest.approx(res.llnull, rel=1e-12)
    assert res.df_model == 0


def test_removing_the_intercept_codes_factors_as_r(wine):
    # R: clm(rating ~ temp + contact - 1, data = wine) warns "an intercept is needed
    # and assumed", codes temp with full dummies and reports tempwarm as NA (aliased)
    with (
        pytest.warns(SpecificationWarning, match=r"thresholds act as intercepts"),
        pytest.warns(CollinearityWarning, match=r"'temp\[warm\]'"),
    ):
        res = OrdinalModel.from_formula("rating ~ temp + contact - 1", wine).fit()
    assert list(res.params.index[4:]) == ["temp[cold]", "contact[T.yes]"]
    assert res.model.design.location.aliased == ["temp[warm]"]
    r_params = [-3.8474854, -1.2522932, 0.9637849, 2.5033022, -2.5031020, 1.5277977]
    np.testing.assert_allclose(res.params, r_params, atol=2e-6)
    assert res.llf == pytest.approx(-86.49192, abs=1e-5)


def test_removing_the_intercept_of_an_interaction_or_nominal_formula(wine):
    # R: clm(rating ~ -1 + temp:contact): tempwarm:contactyes is NA
    with pytest.warns(SpecificationWarning), pytest.warns(CollinearityWarning):
        res = OrdinalModel.from_formula("rating ~ -1 + temp:contact", wine).fit()
    assert res.model.design.location.aliased == ["temp[warm]:contact[yes]"]
    r_params = [-5.4394555, -2.8846399, -0.6511111, 0.9137887, -4.0281936, -1.7070093, -2.6807331]
    np.testing.assert_allclose(res.params, r_params, atol=2e-6)
    # R: clm(rating ~ temp, nominal = ~ contact - 1): the contactyes columns are NA
    with pytest.warns(SpecificationWarning), pytest.warns(CollinearityWarning):
        res = OrdinalModel.from_formula("rating ~ temp", wine, nominal="~ contact - 1").fit()
    assert res.model.design.nominal.names == ["contact[no]"]
    r_nominal = [1.6150592, 1.5115673, 1.6747557, 1.0506229]
    np.testing.assert_allclose(res.params.iloc[4:8], r_nominal, atol=2e-6)
    assert res.params["temp[T.warm]"] == pytest.approx(2.5190448, abs=2e-6)


def test_constant_column_in_formula_is_aliased(wine):
    wine = wine.assign(one=1.0)
    with pytest.warns(CollinearityWarning, match=r"'one' is a linear combination"):
        res = OrdinalModel.from_formula("rating ~ temp + one", wine).fit()
    assert "one" not in res.params.index


def test_constant_column_in_arrays_is_an_error(wine):
    X = pd.DataFrame({"const": 1.0, "x": np.arange(72.0)})
    with pytest.raises(
        SpecificationError, match=r"'const' are constant.*already act as intercepts"
    ):
        OrdinalModel(wine["rating"], X)


def test_collinear_columns_drop_the_later_one_like_r(wine):
    wine = wine.assign(x=np.arange(72.0), x2=2 * np.arange(72.0) + 1)
    with pytest.warns(CollinearityWarning, match=r"'x2' is a linear combination.*dropped"):
        res = OrdinalModel.from_formula("rating ~ x + temp + x2", wine).fit()
    assert list(res.model.exog_names) == ["x", "temp[T.warm]"]
    assert res.model.design.location.aliased == ["x2"]
    with pytest.raises(SpecificationError, match=r"collinear='drop'"):
        OrdinalModel.from_formula("rating ~ x + temp + x2", wine, collinear="raise")


def test_non_numeric_exog_points_to_formulas(wine):
    with pytest.raises(DataError, match=r"'temp' are not numeric.*from_formula"):
        OrdinalModel(wine["rating"], wine[["temp"]])


# -- weights -----------------------------------------------------------------------


def test_negative_weights(wine):
    w = np.ones(72)
    w[3] = -1
    with pytest.raises(DataError, match=r"non-negative frequency weights; 1 are negative"):
        OrdinalModel.from_formula("rating ~ temp", wine, weights=w)


def test_all_zero_weights(wine):
    with pytest.raises(DataError, match=r"all weights are zero"):
        OrdinalModel.from_formula("rating ~ temp", wine, weights=np.zeros(72))


def test_zero_weight_rows_are_left_out(wine):
    w = np.ones(72)
    w[:10] = 0
    res = OrdinalModel.from_formula("rating ~ temp", wine, weights=w).fit()
    res2 = OrdinalModel.from_formula("rating ~ temp", wine.iloc[10:]).fit()
    np.testing.assert_allclose(res.params, res2.params, rtol=1e-10)
    assert res.nobs == 62


def test_weights_of_wrong_length(wine):
    with pytest.raises(DataError, match=r"one value per row \(72\)"):
        OrdinalModel.from_formula("rating ~ temp", wine, weights=np.ones(5))


# -- separation ----------------------------------------------------------------------


def test_complete_separation_is_detected_and_marked():
    x = np.arange(12.0)
    y = np.repeat([0, 1, 2], 4)
    with pytest.warns(SeparationWarning, match=r"separation.*'x1'.*do not exist"):
        res = OrdinalModel(y, x).fit()
    assert not res.converged
    assert res.fit_info.diverging == ("x1",)
    assert "Separation" in res.summary().as_text()


def test_quasi_complete_separation_is_detected(wine):
    # z = 1 for every rating >= 4 and for one rating 3, else 0: no wine with z = 0
    # is rated above 3, so P(Y >= 4 | z = 0) -> 0 and the effect of z diverges,
    # while the overlap at z = 1 makes the separation quasi-complete.
    z = (wine["rating"].astype(int) >= 4).astype(float)
    z[wine.index[wine["rating"] == "3"][0]] = 1.0
    wine = wine.assign(z=z)
    with pytest.warns(SeparationWarning, match=r"'z'"):
        res = OrdinalModel.from_formula("rating ~ temp + z", wine).fit()
    assert "z" in res.fit_info.diverging
    assert not res.converged


def test_no_false_separation_alarm(wine):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = OrdinalModel.from_formula("rating ~ temp * contact", wine).fit()
    assert res.converged and not res.fit_info.diverging


# -- prediction ------------------------------------------------------------------------


def test_predict_with_unseen_level(wine):
    res = OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    new = pd.DataFrame({"temp": ["hot"], "contact": ["no"]})
    with pytest.raises(PredictionError, match=r"level\(s\) 'hot' that the model was not fitted"):
        res.predict(new)


def test_predict_with_missing_column(wine):
    res = OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    with pytest.raises(PredictionError, match=r"lacks the column\(s\) 'contact'"):
        res.predict(pd.DataFrame({"temp": ["cold"]}))


def test_predict_which_is_checked(wine):
    res = OrdinalModel.from_formula("rating ~ temp", wine).fit()
    with pytest.raises(OrdstatsError, match=r"which must be one of"):
        res.predict(which="probability")


def test_odds_ratios_only_for_logit(wine):
    res = OrdinalModel.from_formula("rating ~ temp", wine, link="probit").fit()
    with pytest.raises(OrdstatsError, match=r"odds ratios need the logit link.*'probit'"):
        res.odds_ratios()


def test_non_convergence_warns(wine):
    with pytest.warns(ConvergenceWarning, match=r"did not converge.*maxiter"):
        res = OrdinalModel.from_formula("rating ~ temp + contact", wine).fit(maxiter=1)
    assert not res.converged
    assert "did not converge" in res.summary().as_text()


def test_bad_params_shape(wine):
    model = OrdinalModel.from_formula("rating ~ temp", wine)
    with pytest.raises(SpecificationError, match=r"params must have 5 values \(1\|2, "):
        model.loglike([0.0, 1.0])


def test_unknown_threshold_structure(wine):
    with pytest.raises(SpecificationError, match=r"unknown threshold structure 'flex'"):
        OrdinalModel.from_formula("rating ~ temp", wine, threshold="flex")


def test_option_values_are_checked_up_front(wine):
    with pytest.raises(
        SpecificationError, match=r"missing must be one of 'drop', 'raise'; got 'omit'"
    ):
        OrdinalModel.from_formula("rating ~ temp", wine, missing="omit")
    with pytest.raises(SpecificationError, match=r"collinear must be one of"):
        OrdinalModel(wine["rating"], np.arange(72.0), collinear="ignore")
    model = OrdinalModel.from_formula("rating ~ temp", wine)
    with pytest.raises(SpecificationError, match=r"maxiter must be a non-negative integer"):
        model.fit(maxiter=2.5)
    with pytest.raises(SpecificationError, match=r"gradtol must be a positive number"):
        model.fit(gradtol=0)


@pytest.mark.parametrize("name", ["gradtol", "reltol"])
@pytest.mark.parametrize("value", [np.inf, np.nan, -1.0, "1e-6", True])
def test_tolerances_must_be_positive_and_finite(wine, name, value):
    # an infinite tolerance used to report convergence at the starting values
    model = OrdinalModel.from_formula("rating ~ temp", wine)
    with pytest.raises(SpecificationError, match=rf"{name} must be a positive number, and finite"):
        model.fit(**{name: value})


def test_unknown_model_option_names_the_closest():
    with pytest.raises(SpecificationError, match=r"unknown option 'lnk'.*Did you mean 'link'"):
        OrdinalModel(np.array([1, 2, 1, 2]), lnk="probit")


def test_data_of_the_wrong_kind():
    with pytest.raises(DataError, match=r"data must be a pandas DataFrame or a mapping"):
        OrdinalModel.from_formula("y ~ x", 42)


def test_predict_with_missing_values_gives_nan_rows(wine):
    res = OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    new = pd.DataFrame(
        {"temp": ["cold", None, "warm"], "contact": ["no", "yes", np.nan]}, index=["a", "b", "c"]
    )
    with pytest.warns(MissingDataWarning, match=r"2 row\(s\) of newdata \(b, c\).*are NaN"):
        prob = res.predict(new)
    assert prob.loc[["b", "c"]].isna().all().all()
    assert prob.loc["a"].sum() == pytest.approx(1.0)
    with pytest.warns(MissingDataWarning):
        klass = res.predict(new, which="class")
    assert klass.isna().tolist() == [False, True, True]
    with pytest.warns(MissingDataWarning):
        frame = res.get_prediction(new).summary_frame()
    assert frame.loc["b"].isna().all().all()


# -- pandas inputs with different labels -------------------------------------------------


def test_pandas_inputs_with_other_labels_are_refused(wine):
    X = pd.DataFrame({"x": np.arange(72.0)}, index=np.arange(72) + 5)
    with pytest.raises(DataError, match=r"index of exog does not hold the same labels.*by index"):
        OrdinalModel(wine["rating"], X)
    w = pd.Series(np.ones(72), index=np.arange(72) + 1)
    with pytest.raises(DataError, match=r"index of weights .* labels as the index of the data"):
        OrdinalModel.from_formula("rating ~ temp", wine, weights=w)


def test_a_column_named_intercept_is_kept(wine):
    rng = np.random.default_rng(0)
    wine = wine.assign(Intercept=rng.normal(size=72), z=np.arange(72.0))
    res = OrdinalModel.from_formula("rating ~ Intercept + z", wine).fit()
    assert list(res.params.index[4:]) == ["Intercept", "z"]
    X = wine[["Intercept", "z"]].rename(columns={"Intercept": "u"})
    expected = OrdinalModel(wine["rating"], X).fit()
    np.testing.assert_allclose(res.params.to_numpy(), expected.params.to_numpy(), rtol=1e-8)
    np.testing.assert_allclose(res.predict(wine), expected.predict(X), rtol=1e-8)
    assert ordstats.design.term_columns(res.model.design.location) == {
        "Intercept": ["Intercept"],
        "z": ["z"],
    }


def test_predicting_a_level_without_training_rows_gives_nan(wine):
    wine = wine.assign(temp=wine["temp"].cat.add_categories(["hot"]))
    with pytest.warns(CollinearityWarning, match=r"'temp\[T.hot\]'"):
        res = OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    new = pd.DataFrame(
        {
            "temp": pd.Categorical(["cold", "hot"], categories=["cold", "warm", "hot"]),
            "contact": ["no", "no"],
        },
        index=["a", "b"],
    )
    with pytest.warns(PredictionWarning, match=r"\(b\) have the factor level\(s\) 'hot' of 'temp'"):
        prob = res.predict(new)
    assert prob.loc["b"].isna().all()
    assert prob.loc["a"].sum() == pytest.approx(1.0)
    with pytest.warns(PredictionWarning, match=r"'hot' of 'temp'.*NaN"):
        res.predict({"temp": ["hot"], "contact": ["yes"]})


def test_predict_never_takes_a_column_from_the_callers_variables(wine):
    contact = wine["contact"].iloc[:10]  # a variable of the caller named like a column
    res = OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    with pytest.raises(PredictionError, match=r"lacks the column\(s\) 'contact'.*add them"):
        res.predict(pd.DataFrame({"temp": ["cold", "warm"]}))
    assert len(contact) == 10
    # functions and modules of the context still work
    wine = wine.assign(z=np.arange(72.0))
    res = OrdinalModel.from_formula("rating ~ np.sqrt(z) + temp", wine).fit()
    assert res.predict(wine.head(3)).shape == (3, 5)


def test_non_finite_offset_or_predictor_in_newdata_gives_nan_rows(wine):
    wine = wine.assign(x=np.linspace(-1, 1, 72), off=np.linspace(0, 0.5, 72))
    res = OrdinalModel.from_formula("rating ~ temp + x", wine, offset="off").fit()
    new = pd.DataFrame(
        {"temp": ["cold", "warm", "cold"], "x": [0.1, 0.2, 0.3], "off": [0.0, np.nan, np.inf]},
        index=["a", "b", "c"],
    )
    with pytest.warns(MissingDataWarning, match=r"2 row\(s\) of newdata \(b, c\).*offset"):
        prob = res.predict(new)
    assert prob.loc[["b", "c"]].isna().all().all()
    assert prob.loc["a"].sum() == pytest.approx(1.0)
    with pytest.warns(MissingDataWarning, match=r"1 row\(s\) of newdata \(b\).*offset"):
        res.predict(new[["temp", "x"]], offset=[0.0, np.nan, 0.0])
    new = new.assign(off=0.0, x=[0.1, np.inf, -np.inf])
    with pytest.warns(MissingDataWarning, match=r"2 row\(s\) of newdata \(b, c\).*non-finite"):
        prob = res.predict(new)
    assert prob.loc[["b", "c"]].isna().all().all()
    with pytest.warns(MissingDataWarning):
        assert res.predict(new, which="class").isna().tolist() == [False, True, True]


def test_stateful_transforms_learn_from_the_rows_without_missing_values(wine):
    wine = wine.assign(x=np.linspace(0.0, 1.0, 72))
    wine.loc[3, "x"] = np.nan
    with pytest.warns(MissingDataWarning, match=r"1 of 72 rows .* 'x' \(1\); these rows"):
        res = OrdinalModel.from_formula("rating ~ center(x) + temp", wine).fit()
    assert res.model.n_rows == 71
    expected = OrdinalModel.from_formula("rating ~ center(x) + temp", wine.drop(index=3)).fit()
    np.testing.assert_allclose(res.params, expected.params, rtol=1e-10)


# -- raw errors become clear ones ----------------------------------------------------------


@pytest.fixture()
def strict():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning may reach the user either
        yield


@pytest.mark.usefixtures("strict")
def test_duplicated_column_names(wine):
    data = pd.concat([wine, wine[["temp"]]], axis=1)
    with pytest.raises(DataError, match=r"more than one column named 'temp'.*duplicated"):
        OrdinalModel.from_formula("rating ~ temp + contact", data)


@pytest.mark.usefixtures("strict")
@pytest.mark.parametrize(
    ("formula", "nominal"),
    [
        ("rating ~ temp ~ contact", None),
        ("rating ~ temp | contact", None),
        ("rating ~ temp", "~ a | b"),
    ],
)
def test_multi_part_formulas(wine, formula, nominal):
    with pytest.raises(FormulaError, match=r"has a (second '~'|'\|').*nominal='~ \.\.\.'"):
        OrdinalModel.from_formula(formula, wine, nominal=nominal)


@pytest.mark.usefixtures("strict")
@pytest.mark.parametrize("term", ["I(x +)", "I(x 2)", "I(x +* 2)"])
def test_python_syntax_errors_in_terms(wine, term):
    wine = wine.assign(x=np.arange(72.0))
    with pytest.raises(FormulaError, match=r"is not valid Python.*parentheses"):
        OrdinalModel.from_formula(f"rating ~ temp + {term}", wine)


@pytest.mark.usefixtures("strict")
@pytest.mark.parametrize(
    "values",
    [pd.date_range("2020-01-01", periods=72), pd.to_timedelta(np.arange(72), unit="D")],
)
def test_date_and_duration_columns(wine, values):
    with pytest.raises(DataError, match=r"'d' holds dates or durations.*convert it to numbers"):
        OrdinalModel.from_formula("rating ~ temp + d", wine.assign(d=values))


@pytest.mark.usefixtures("strict")
def test_levels_must_be_a_sequence(wine):
    with pytest.raises(ResponseError, match=r"levels must be a list.*got 4"):
        OrdinalModel.from_formula("rating ~ temp", wine, levels=4)
    with pytest.raises(ResponseError, match=r"levels must be a list.*got '12345'"):
        OrdinalModel(wine["rating"], levels="12345")


@pytest.mark.usefixtures("strict")
def test_all_missing_predictor(wine):
    with pytest.raises(DataError, match=r"every row has a missing.*'x' \(72\).*nothing is left"):
        OrdinalModel.from_formula("rating ~ temp + x", wine.assign(x=np.nan))
    with pytest.raises(DataError, match=r"every row has a missing.*'x1' \(72\)"):
        OrdinalModel(wine["rating"], np.full(72, np.nan))


@pytest.mark.usefixtures("strict")
def test_overflowing_weights(wine):
    with pytest.raises(DataError, match=r"weights sum to inf.*rescale"):
        OrdinalModel.from_formula("rating ~ temp", wine, weights=np.full(72, 1e308))
    with pytest.raises(DataError, match=r"weights sum to 7.2e\+201"):
        OrdinalModel(wine["rating"], np.arange(72.0), weights=np.full(72, 1e200))


def test_levels_contradicting_an_ordered_categorical_raise(wine):
    from ordstats.errors import ResponseError

    with pytest.raises(ResponseError, match="contradicts the order"):
        ordstats.OrdinalModel.from_formula("rating ~ temp", wine, levels=["5", "4", "3", "2", "1"])
    same = ordstats.OrdinalModel.from_formula(
        "rating ~ temp", wine, levels=["1", "2", "3", "4", "5"]
    )
    assert same.levels == ["1", "2", "3", "4", "5"]


def test_profile_of_a_fit_that_did_not_converge_warns(wine):
    model = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine)
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        res = model.fit(maxiter=1)
    with pytest.warns(ConvergenceWarning, match="profile .* may be wrong"):
        res.conf_int(method="profile", which=["temp[T.warm]"])
    with pytest.warns(ConvergenceWarning, match="profile .* may be wrong"):
        res.profile("temp[T.warm]", n_points=5)


def test_predict_with_an_offset_model_defaults_to_offset_zero_with_a_note(wine):
    data = wine.assign(o=np.linspace(-1.0, 1.0, len(wine)))
    offset = data["o"].to_numpy()
    res = ordstats.OrdinalModel.from_formula("rating ~ temp", data, offset=offset).fit()
    new = wine[["temp"]].iloc[:4]
    with pytest.warns(PredictionWarning, match="use offset 0"):
        default = res.predict(new, which="linear")
    np.testing.assert_allclose(default, res.predict(new, which="linear", offset=0.0))
    shifted = res.predict(new, which="linear", offset=0.5)  # a scalar is every row's offset
    np.testing.assert_allclose(shifted, default + 0.5)
    with pytest.raises(PredictionError, match="a number or one value per row"):
        res.predict(new, offset=[1.0, 2.0])


def test_discrete_scipy_distribution_is_not_a_link(wine):
    from scipy import stats

    with pytest.raises(SpecificationError, match="continuous distribution; 'poisson' is discrete"):
        OrdinalModel.from_formula("rating ~ temp", wine, link=stats.poisson(3))


@pytest.mark.parametrize(
    ("values", "levels"),
    [
        (pd.Series([1, 2, 3, 2]), None),
        (pd.Series([1.0, 2.0, np.nan, 3.0]), None),
        (pd.Series(pd.array([1, 2, None, 3], dtype="Int64")), None),
        (pd.Series(["a", "b", None, "c"]), ["a", "b", "c"]),
        (pd.Series(pd.array(["a", "b", None, "c"], dtype="string")), ["a", "b", "c"]),
        (pd.Series(pd.Categorical(["a", "b", "c"], ordered=True)), None),
        (pd.Series(pd.Categorical(["a", "b", "c", None])), ["c", "b", "a"]),
        (pd.Series(pd.Categorical([1.0, 2.0, None, 3.0])), [1, 2, 3]),
        (pd.Series([1.0, 2.0, 3.0]), ["1", "2", "3"]),
        (pd.Series([True, False, True]), None),
    ],
)
def test_response_encoding_lets_no_pandas_warning_through(values, levels):
    from ordstats.design.response import encode_response

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # FutureWarning, DeprecationWarning, pandas' own
        encoded = encode_response(values, levels=levels)
    assert encoded.n_levels >= 2
    assert (encoded.codes >= -1).all() and encoded.codes.max() == encoded.n_levels - 1


# -- input robustness below the results layer: formulas, data, arrays, chunks ----
# (issue 29, items 9, 22 and 23, and a bad-input campaign over the same area)


def test_a_duplicated_column_the_formula_does_not_use_does_not_matter(wine):
    doubled = pd.concat([wine, wine[["temp"]]], axis=1)
    expected = OrdinalModel.from_formula("rating ~ contact", wine).fit()
    res = OrdinalModel.from_formula("rating ~ contact", doubled).fit()
    np.testing.assert_allclose(res.params, expected.params, rtol=1e-12)
    np.testing.assert_allclose(res.predict(doubled), expected.predict(wine), rtol=1e-12)
    chunked = OrdinalModel.from_formula("rating ~ contact", doubled, chunksize=20).fit()
    assert chunked.llf == pytest.approx(expected.llf, rel=1e-10)


@pytest.mark.parametrize("chunksize", [None, 20])
@pytest.mark.parametrize(
    ("formula", "keywords"),
    [("rating ~ temp", {}), ("rating ~ contact", {"weights": "temp"}), ("temp ~ contact", {})],
)
def test_a_duplicated_column_the_model_uses_is_named(wine, formula, keywords, chunksize):
    doubled = pd.concat([wine, wine[["temp"]]], axis=1)
    with pytest.raises(DataError, match=r"more than one column named 'temp'.*duplicated"):
        OrdinalModel.from_formula(formula, doubled, chunksize=chunksize, **keywords)


@pytest.mark.parametrize("chunksize", [None, 10])
def test_data_without_rows(wine, chunksize):
    with pytest.raises(DataError, match=r"the data have no rows"):
        OrdinalModel.from_formula("rating ~ temp", wine.iloc[:0], chunksize=chunksize)


def test_arrays_without_rows():
    with pytest.raises(DataError, match=r"the data have no rows"):
        OrdinalModel(np.array([], dtype=int), np.empty((0, 2)))


@pytest.mark.parametrize("chunksize", [10, 36])
def test_a_chunk_that_loses_every_row_to_missing_values(wine, chunksize):
    data = wine.assign(x=np.arange(len(wine), dtype=float))
    data.loc[:35, "x"] = np.nan  # every row of the first chunk(s)
    with pytest.warns(MissingDataWarning, match=r"36 of 72 rows"):
        expected = OrdinalModel.from_formula("rating ~ temp + x", data).fit()
    with pytest.warns(MissingDataWarning, match=r"36 of 72 rows"):
        res = OrdinalModel.from_formula("rating ~ temp + x", data, chunksize=chunksize).fit()
    assert res.llf == pytest.approx(expected.llf, rel=1e-10)
    np.testing.assert_allclose(
        res.expected_covariance.matrix, expected.expected_covariance.matrix, rtol=1e-8
    )


@pytest.mark.parametrize("chunksize", [None, 10])
def test_no_usable_row_says_why(wine, chunksize):
    zero = wine.assign(w=0.0)
    with pytest.raises(DataError, match=r"(all weights are zero|zero weight)"):
        OrdinalModel.from_formula("rating ~ temp", zero, weights="w", chunksize=chunksize)


@pytest.mark.parametrize(
    ("formula", "shown"),
    [
        (None, "got None"),
        (3, r"got 3 \(of type int\)"),
        (["rating ~ temp"], r"got \['rating ~ temp'\] \(of type list\)"),
        (b"rating ~ temp", r"got b'rating ~ temp' \(of type bytes\)"),
        ("rating", "got 'rating'"),
    ],
)
@pytest.mark.parametrize("chunksize", [None, 10])
def test_a_formula_that_is_not_text(wine, formula, shown, chunksize):
    with pytest.raises(FormulaError, match=rf"formula must be a string like .*; {shown}"):
        OrdinalModel.from_formula(formula, wine, chunksize=chunksize)
    with pytest.raises(FormulaError, match=rf"formula must be a string like .*; {shown}"):
        ordstats.compare_links(formula, wine)


def test_a_formulaic_formula_object_is_asked_for_as_text(wine):
    from formulaic import Formula

    with pytest.raises(FormulaError, match=r"a formulaic Formula object; pass the formula as text"):
        OrdinalModel.from_formula(Formula("rating ~ temp"), wine)


@pytest.mark.parametrize(
    ("formula", "keywords", "where"),
    [
        ("rating ~ rating", {}, "right-hand side"),
        ("rating ~ temp + C(rating)", {}, "right-hand side"),
        ("rating ~ temp + rating + (1|judge)", {}, "right-hand side"),
        ("rating ~ temp", {"nominal": "~ rating"}, "nominal formula"),
        ("rating ~ temp", {"scale": "~ rating"}, "scale formula"),
        ("rating ~ rating", {"chunksize": 10}, "right-hand side"),
    ],
)
def test_the_response_on_both_sides(wine, formula, keywords, where):
    with pytest.raises(FormulaError, match=rf"response 'rating' is also used in the {where}"):
        OrdinalModel.from_formula(formula, wine, **keywords)


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (None, r"got None$"),
        (np.ones((4, 2)), r"got ndarray: give the columns names"),
        (pd.Series([1, 2]), r"got Series: turn it into one with series.to_frame"),
        ([], r"got an empty list"),
    ],
)
def test_data_that_is_not_a_frame_says_so(data, fragment):
    with pytest.raises(DataError, match=rf"data must be a pandas DataFrame.*{fragment}"):
        OrdinalModel.from_formula("rating ~ temp", data)


@pytest.mark.parametrize("chunksize", [None, 10])
def test_a_missing_term_is_named_not_replaced_by_the_formula(wine, chunksize):
    with pytest.raises(FormulaError, match=r"names 'nosuch', which is not a column"):
        OrdinalModel.from_formula("rating ~ nosuch", wine, chunksize=chunksize)


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        ([0, 2**63 + 1, 2**63 + 5], ["0", "9223372036854775809", "9223372036854775813"]),
        ([-1, 2**63, 2**64 + 3], ["-1", "9223372036854775808", "18446744073709551619"]),
        (np.array([2**63, 2**63 + 1, 2**63 + 5], dtype=np.uint64), None),
    ],
)
def test_integer_labels_beyond_int64_keep_every_level_in_order(labels, expected):
    y = np.repeat(np.asarray(labels, dtype=object), 10)
    x = np.random.default_rng(0).normal(size=len(y))
    for endog in (list(y), np.asarray(labels).repeat(10) if expected is None else y):
        res = OrdinalModel(endog, x).fit()
        shown = expected or [str(v) for v in labels]
        assert res.model.levels == shown
    data = pd.DataFrame({"y": pd.Series(list(y), dtype=object), "x": x})
    assert OrdinalModel.from_formula("y ~ x", data).levels == (expected or res.model.levels)


def test_decimal_labels_are_numbers():
    from decimal import Decimal

    y = [Decimal("1.5"), Decimal("10"), Decimal("2")] * 6
    res = OrdinalModel(y, np.arange(18.0) % 5).fit()
    assert res.model.levels == ["1.5", "2", "10"]


def test_csv_integers_beyond_int64_read_in_chunks_are_refused(tmp_path):
    y = np.array([2**63, 2**63 + 1, 2**63 + 5], dtype=np.uint64).repeat(10)
    data = pd.DataFrame({"y": y, "x": np.random.default_rng(1).normal(size=30)})
    data.to_csv(tmp_path / "big.csv", index=False)
    with pytest.raises(DataError, match=r"whole numbers of 2\*\*63 or more.*would merge"):
        OrdinalModel.from_formula("y ~ x", str(tmp_path / "big.csv"))
    data.to_parquet(tmp_path / "big.parquet", index=False)
    chunked = OrdinalModel.from_formula("y ~ x", str(tmp_path / "big.parquet"), chunksize=7)
    assert chunked.levels == OrdinalModel.from_formula("y ~ x", data).levels
    assert len(chunked.levels) == 3


@pytest.mark.parametrize("endog", [None, 3, "abc", {1, 2, 3}, (i for i in range(3))])
def test_a_response_that_is_not_one_value_per_row(endog):
    with pytest.raises(DataError, match=r"endog must hold one response value per row"):
        OrdinalModel(endog, None)


def _separated(direction: int, n_levels: int) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    x = np.sort(rng.normal(size=30))
    y = np.repeat(np.arange(1, n_levels + 1)[::direction], 30 // n_levels)
    return pd.DataFrame({"y": y, "x": x, "z": rng.normal(size=30)})


@pytest.mark.parametrize("link", ["logit", "probit", "cloglog", "loglog", "cauchit"])
@pytest.mark.parametrize(("direction", "n_levels"), [(1, 3), (-1, 3), (1, 2), (-1, 2), (1, 5)])
@pytest.mark.parametrize("formula", ["y ~ x", "y ~ x + z"])
def test_complete_separation_warns_under_every_link(link, direction, n_levels, formula):
    data = _separated(direction, n_levels)
    with pytest.warns(SeparationWarning, match=r"'x'.*grow without bound"):
        res = OrdinalModel.from_formula(formula, data, link=link).fit()
    assert "x" in res.fit_info.diverging
    assert np.isfinite(res.llf) and res.llf > -1e-2


def test_link_comparison_of_separated_data_reports_the_separation():
    data = _separated(1, 3)
    with pytest.warns(ConvergenceWarning) as caught:  # the separated fits and their tests
        comparison = ordstats.compare_links("y ~ x", data)
    assert any(issubclass(w.category, SeparationWarning) for w in caught)
    assert list(comparison.table.index) == ["logit", "probit", "cloglog", "loglog", "cauchit"]
    assert np.all(np.isfinite(comparison.table["logLik"]))
    for link in ("cloglog", "loglog"):
        assert f"the {link} fit shows separation: 'x' diverges" in str(comparison)


def test_link_comparison_of_a_model_with_random_terms_says_what_to_do(wine):
    with pytest.raises(SpecificationError, match=r"without random terms.*under each link"):
        ordstats.compare_links("rating ~ temp + (1|judge)", wine)


@pytest.mark.parametrize(
    ("column", "formula", "quoted"),
    [
        ("a+b", "rating ~ a+b", "rating ~ `a+b`"),
        ("log(x)", "rating ~ temp + log(x)", "rating ~ temp + `log(x)`"),
        ("x-1", "rating ~ x - 1", "rating ~ `x-1`"),
    ],
)
def test_a_column_named_like_an_expression_is_pointed_to_backticks(wine, column, formula, quoted):
    data = wine.assign(**{column: np.arange(len(wine), dtype=float)})
    with pytest.raises(FormulaError, match=rf"a column '{re.escape(column)}': put .* backticks"):
        OrdinalModel.from_formula(formula, data)
    assert column in OrdinalModel.from_formula(quoted, data).param_names
