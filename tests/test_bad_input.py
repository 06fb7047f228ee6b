"""Every bad input gets a clear ordstats error or warning that says what to do."""

from __future__ import annotations

import decimal
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
    """Its categories have an order (pandas sorted them: hi < lo < mid), but nothing says
    it is the outcome's: the message shows them and names .cat.as_ordered() and levels=."""
    y = pd.Categorical(["lo", "hi", "mid", "lo", "hi"])
    with pytest.raises(
        ResponseError,
        match=r"unordered Categorical \(categories 'hi', 'lo', 'mid'\).*as_ordered\(\).*levels=",
    ):
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


def test_a_function_the_formula_calls_but_nobody_defines_is_named_as_a_function(wine):
    with pytest.raises(FormulaError, match=r"calls 'foo', which is not a function.*context="):
        OrdinalModel.from_formula("rating ~ foo(temp)", wine)
    with pytest.raises(FormulaError, match=r"names 'tmp', which is not a column"):
        OrdinalModel.from_formula("rating ~ tmp", wine)


@pytest.mark.parametrize("values", [pd.to_datetime(["2020-01-01"]), pd.to_timedelta([1], "D")])
def test_dates_in_newdata_are_refused_as_at_the_fit(wine, values):
    """Before: numpy's UFuncTypeError from the design's product."""
    res = OrdinalModel.from_formula("rating ~ x + temp", wine.assign(x=np.arange(72.0))).fit()
    rows = pd.DataFrame({"x": values, "temp": ["cold"]})
    for call in (res.predict, lambda d: res.predictions(newdata=d)):
        with pytest.raises(PredictionError, match="'x' holds dates or durations"):
            call(rows)


def test_a_response_expression_uses_names_of_context_and_of_the_caller(wine):
    """Before: "name 'bins' is not defined" though context= gave it (left side not read)."""
    bins = [0, 30, 60, 100]
    given = OrdinalModel.from_formula("cut(response, bins) ~ temp", wine, context={"bins": bins})
    assert list(given.levels) == ["(0,30]", "(30,60]", "(60,100]"]  # R's cut labels
    caller = OrdinalModel.from_formula("cut(response, bins) ~ temp", wine)
    np.testing.assert_array_equal(given.fit().params, caller.fit().params)
    tens = OrdinalModel.from_formula("np.floor(response / 10) ~ temp", wine, context={"np": np})
    assert tens.levels[0] == "1"


def _column_warnings(data):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        OrdinalModel.from_formula("rating ~ x", data)
    return [str(w.message) for w in caught if "column 'x'" in str(w.message)]


def test_numbers_with_a_stray_text_warn_before_becoming_a_factor(wine):
    """Before: a 72-level factor and only separation and collinearity warnings."""
    x = np.round(np.linspace(0, 10, 72), 2).astype(object)
    x[5] = "oops"
    for data in (wine.assign(x=x), wine.assign(x=x.astype(str))):  # objects, or a CSV's text
        (message,) = _column_warnings(data)
        assert "numbers and 1 text value(s) ('oops')" in message
        assert "factor with 72 levels" in message and "errors='coerce'" in message


@pytest.mark.parametrize("value", [[1, 2], {"a": 1}])
def test_a_column_of_lists_is_refused_clearly(wine, value):
    """Before: pandas' TypeError (unhashable type: 'list')."""
    with pytest.raises(DataError, match="'x' holds values that are not numbers or labels"):
        OrdinalModel.from_formula("rating ~ x", wine.assign(x=[value] * 72))


def test_chunked_fits_warn_of_stray_texts_and_fit_mixed_columns_as_in_memory(wine, tmp_path):
    """Before: no warning from a CSV read in chunks, and a chunked DataFrame with the
    mixed column stopped in sorted() (TypeError: '<' between str and float)."""
    x = np.round(np.linspace(0, 10, 72), 2).astype(object)
    x[5] = "oops"
    data = wine.assign(x=x)
    data.to_csv(tmp_path / "stray.csv", index=False)
    for source in (data, str(tmp_path / "stray.csv")):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            OrdinalModel.from_formula("rating ~ x", source, chunksize=20)
        messages = [w for w in caught if "column 'x' holds numbers and 1 text" in str(w.message)]
        assert len(messages) == 1 and messages[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        memory = OrdinalModel.from_formula("rating ~ temp + x", data)
        chunked = OrdinalModel.from_formula("rating ~ temp + x", data, chunksize=20)
    assert list(chunked.exog_names) == list(memory.exog_names)  # numbers, then the text


def test_values_of_two_types_that_print_alike_warn(wine):
    (message,) = _column_warnings(wine.assign(x=np.array([1, "1", 2, "2"] * 18, dtype=object)))
    assert "print alike" in message and ".astype(str)" in message


@pytest.mark.parametrize(
    "x",
    [
        np.array(["1", "2", "3"] * 24),  # codes as text: a factor
        np.array(["none", "1", "2", "3+"] * 18),  # a factor with some numbers
        np.array([1, 2, 3] * 24, dtype=object),  # whole numbers as objects: codes
    ],
)
def test_factors_that_hold_numbers_do_not_warn(wine, x):
    assert _column_warnings(wine.assign(x=x)) == []


@pytest.fixture(scope="module")
def wine_x_fit(wine):
    return OrdinalModel.from_formula(
        "rating ~ temp * contact + x", wine.assign(x=np.arange(72.0))
    ).fit()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda r: r.avg_predictions(by=5), "by= takes True, False, a column name"),
        (lambda r: r.avg_predictions(by=["temp", 3]), "by= takes True, False, a column name"),
        (lambda r: r.emmeans("~ temp +"), r"specs '~ temp \+' has an operator without"),
        (lambda r: r.emmeans("~ temp | "), r"specs '~ temp \| ' has an operator without"),
        (lambda r: r.emmeans("temp * * contact"), "has an operator without"),
        (lambda r: ordstats.datagrid(newdata=pd.DataFrame({"x": []})), "have no rows"),
        (lambda r: ordstats.datagrid(r, x=lambda v: 1 / 0), "x='<lambda>' failed on the column"),
    ],
)
def test_margins_arguments_of_the_wrong_kind_say_so(wine_x_fit, call, message):
    """Before: TypeError ('int' object is not iterable), IndexError, or no complaint."""
    with pytest.raises(OrdstatsError, match=message):
        call(wine_x_fit)


def test_datagrid_takes_functions_of_the_column_as_marginaleffects(wine_x_fit):
    grid = ordstats.datagrid(wine_x_fit, x=np.mean)
    assert grid["x"].tolist() == [35.5]
    grid = ordstats.datagrid(wine_x_fit, x=lambda v: v.quantile([0.25, 0.75]), temp=np.unique)
    assert grid["x"].tolist() == [17.75, 17.75, 53.25, 53.25]
    assert grid["temp"].astype(str).tolist() == ["cold", "warm", "cold", "warm"]


def test_misread_arguments_of_the_model_comparisons_say_what_they_take(wine):
    small = OrdinalModel.from_formula("rating ~ temp", wine).fit()
    large = OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    with pytest.raises(SpecificationError, match="links= takes a list"):  # before: link 'p'
        ordstats.compare_links("rating ~ temp", wine, links="probit")
    with pytest.raises(OrdstatsError, match="names must be a list"):  # before: rows 'a', 'b'
        ordstats.anova(small, large, names="ab")
    with pytest.raises(OrdstatsError, match="names must be a list"):  # before: len() of an int
        ordstats.anova(small, large, names=5)
    # before: the example given was links=['logit', 'logit'], itself refused
    with pytest.raises(SpecificationError, match=r"e.g. links=\['probit', 'logit'\]"):
        ordstats.compare_links("rating ~ temp", wine, links="logit")
    relabelled = wine.set_axis(wine.index + 100)
    other = OrdinalModel.from_formula("rating ~ temp + contact", relabelled).fit()
    with pytest.raises(SpecificationError, match="rows with different labels"):
        ordstats.anova(small, other)


@pytest.mark.parametrize("data", [[1, 2, 3], (1, 2), [[1, "cold"], [2, "warm"]]])
def test_from_formula_of_a_list_of_values_says_it_needs_column_names(data):
    """Before: "the response 'rating' is not a column of the data"."""
    with pytest.raises(DataError, match=r"got (list|tuple): its values have no column names"):
        OrdinalModel.from_formula("rating ~ temp", data)


def test_a_list_of_records_is_data(wine):
    records = wine[["rating", "temp"]].to_dict("records")
    expected = OrdinalModel.from_formula("rating ~ temp", wine[["rating", "temp"]]).fit()
    got = OrdinalModel.from_formula("rating ~ temp", records, levels=[1, 2, 3, 4, 5]).fit()
    np.testing.assert_allclose(got.params.to_numpy(), expected.params.to_numpy(), rtol=1e-10)


def test_hypotheses_take_backticked_names_as_t_test_recommends(wine):
    """Before: "is not a valid expression", though t_test's message suggests backticks."""
    res = OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    quoted = res.hypotheses("`temp[T.warm]` - `contact[T.yes]` = 0")
    plain = res.hypotheses("temp[T.warm] - contact[T.yes] = 0")
    assert quoted["estimate"].iloc[0] == plain["estimate"].iloc[0]
    assert quoted["std_error"].iloc[0] == plain["std_error"].iloc[0]
    with pytest.raises(OrdstatsError, match=r"names `tmp`, which is not a parameter.*'1\|2'"):
        res.hypotheses("`tmp` = 0")


@pytest.mark.parametrize("cov_kwds", [["judge"], "judge"])
def test_cov_kwds_that_is_not_a_dict_says_so(wine, cov_kwds):
    """Before: AttributeError ('list' object has no attribute 'get')."""
    model = OrdinalModel.from_formula("rating ~ temp", wine)
    with pytest.raises(SpecificationError, match=r"cov_kwds must be a dict, e\.g\."):
        model.fit(cov_type="cluster", cov_kwds=cov_kwds)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"n_rows": 0}, "n_rows must be a whole number >= 1"),
        ({"rank": -1}, "rank must be a whole number >= 1"),
        ({"n_levels": 1}, "n_levels must be a whole number >= 2"),
        ({"density": 2}, r"density is a share of the cells, in \(0, 1\]"),
        ({"density": 0}, r"density is a share"),
        ({"factor_sd": -1.0}, "factor_sd must be a finite number >= 0"),
        ({"seed": "a"}, "seed must be a whole number >= 0"),
        ({"density": True}, r"density is a share"),
        ({"scale_use": np.True_}, "scale_use must be a finite number >= 0"),
    ],
)
def test_simulate_ratings_refuses_sizes_it_cannot_use(options, message):
    """Before: numpy's errors (negative dimensions, a sample larger than the population)
    or, for n_levels=1, a matrix with one level; ``density=True`` was taken as 1."""
    arguments = {"n_rows": 6, "n_cols": 5, **options}
    with pytest.raises(SpecificationError, match=message):
        ordstats.simulate_ratings(arguments.pop("n_rows"), arguments.pop("n_cols"), **arguments)


def test_rarer_wrong_arguments_get_ordstats_errors(wine):
    """Before: numpy's ValueError (ragged rows, a text matrix) and UFuncTypeError."""
    with pytest.raises(DataError, match="same number of columns in every row"):
        OrdinalModel(wine["rating"], [[1.0, 2.0], [3.0]] * 36)
    model = OrdinalModel.from_formula("rating ~ temp + contact", wine)
    for cut in ("2", True, 2.0):
        with pytest.raises(SpecificationError, match=r"cut is the code of a level \(0 to 3"):
            model.dichotomized(cut)
    for cut in (-1, 4):
        with pytest.raises(SpecificationError, match="cut must be 0 to 3"):
            model.dichotomized(cut)
    assert list(model.dichotomized(np.int64(3)).levels) == ["False", "True"]
    with pytest.raises(SpecificationError, match="constraint matrix must hold numbers"):
        model.fit().t_test(np.array([["a"] * 6]))


def test_compare_links_fit_kwds_and_plot_axes_of_the_wrong_kind(wine):
    """Before: "cannot convert dictionary update sequence", and 'int' has no 'figure'."""
    with pytest.raises(SpecificationError, match="fit_kwds must be a dict"):
        ordstats.compare_links("rating ~ temp", wine, links=["logit", "probit"], fit_kwds=[1])
    # before: "not available with a flexible link", of links the user never named
    with pytest.raises(SpecificationError, match="which a penalised fit does not maximise"):
        ordstats.compare_links(
            "rating ~ temp", wine, links=["logit", "probit"], fit_kwds={"penalty": "firth"}
        )
    pytest.importorskip("matplotlib")
    from ordstats import plotting

    res = OrdinalModel.from_formula("rating ~ temp", wine).fit()
    with pytest.raises(OrdstatsError, match="ax must be a matplotlib Axes"):
        plotting.plot_predictions(res, by="temp", ax=5)
    with pytest.raises(OrdstatsError, match="ax must be a matplotlib Axes"):
        plotting.plot_probabilities(res, wine.head(4), "temp", ax="x")


def test_boolean_indicators_from_get_dummies_are_zero_and_one(wine):
    """pandas' get_dummies gives bool columns: before, refused as 'not numeric'."""
    dummies = pd.get_dummies(wine[["temp", "contact"]], drop_first=True)
    assert all(pd.api.types.is_bool_dtype(dtype) for dtype in dummies.dtypes)
    expected = OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    for exog in (dummies, dummies.to_numpy(), dummies.astype("boolean")):
        res = OrdinalModel(wine["rating"], exog).fit()
        np.testing.assert_allclose(res.params.to_numpy(), expected.params.to_numpy(), rtol=1e-8)
    res = OrdinalModel(wine["rating"], dummies).fit()
    pd.testing.assert_frame_equal(res.predict(dummies.head(3)), res.predict(dummies.head(3) * 1.0))


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


def test_start_params_that_are_not_numbers(wine):
    model = OrdinalModel.from_formula("rating ~ temp", wine)
    with pytest.raises(SpecificationError, match=r"params must be 5 finite numbers .*got 'abc'"):
        model.fit(start_params="abc")  # before: numpy's 'could not convert string to float'


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
    # before: numpy's UFuncTypeError from the first chunk's design
    with pytest.raises(DataError, match=r"'d' holds dates or durations.*convert it to numbers"):
        OrdinalModel.from_formula("rating ~ temp + d", wine.assign(d=values), chunksize=20)


@pytest.mark.usefixtures("strict")
def test_complex_columns_are_refused_not_cast_to_their_real_part(wine):
    """Before: numpy's ComplexWarning, and a fit of the real parts (in memory and chunked)."""
    values = np.arange(72.0) + 1j
    for fit_data in (
        lambda: OrdinalModel.from_formula("rating ~ temp + z", wine.assign(z=values)),
        lambda: OrdinalModel.from_formula("rating ~ temp + z", wine.assign(z=values), chunksize=20),
        lambda: OrdinalModel(wine["rating"], pd.DataFrame({"z": values}, index=wine.index)),
    ):
        with pytest.raises(DataError, match=r"'z' holds complex numbers.*np.real, np.abs"):
            fit_data()
    res = OrdinalModel.from_formula("rating ~ temp + z", wine.assign(z=values.real)).fit()
    with pytest.raises(PredictionError, match="'z' holds complex numbers"):
        res.predict(pd.DataFrame({"z": [1 + 2j], "temp": ["cold"]}))


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


# -- new data for prediction (issue 29: caller variables, offsets, clmm group ids) -------


def test_predict_refuses_a_variable_the_formula_took_from_the_caller(wine):
    xx = np.random.default_rng(0).normal(size=72)  # noqa: F841 - the formula reads it
    res = OrdinalModel.from_formula("rating ~ temp + xx", wine).fit()
    with pytest.raises(PredictionError, match=r"newdata lacks the column\(s\) 'xx' used by"):
        res.predict(wine[["temp"]].iloc[::-1])
    with pytest.raises(PredictionError, match=r"newdata lacks the column\(s\) 'xx' used by"):
        res.get_prediction(wine[["temp"]])
    clmm = OrdinalModel.from_formula("rating ~ temp + xx + (1|judge)", wine).fit()
    with pytest.raises(PredictionError, match=r"newdata lacks the column\(s\) 'xx' used by"):
        clmm.predict(wine[["temp", "judge"]])


def test_predict_offset_series_with_other_labels(wine):
    res = OrdinalModel.from_formula("rating ~ temp", wine, offset=np.zeros(72)).fit()
    new = wine[["temp"]].head(3)
    foreign = pd.Series([0.0, 1.0, 2.0], index=["a", "b", "c"])
    with pytest.raises(DataError, match=r"index of offset does not hold the same labels as"):
        res.predict(new, offset=foreign)
    with pytest.raises(DataError, match=r"index of offset does not hold the same labels as"):
        res.get_prediction(new, offset=foreign)
    with pytest.raises(PredictionError, match=r"offset= is the offset of newdata"):
        res.predict(offset=foreign)


def test_clmm_predict_without_a_random_slope_column(wine):
    data = wine.assign(x=np.linspace(-1, 1, 72))
    with pytest.warns(SpecificationWarning, match=r"singular fit"):
        res = OrdinalModel.from_formula("rating ~ temp + (1 + x|judge)", data).fit()
    with pytest.raises(PredictionError, match=r"lacks the column\(s\) 'x' of the random term"):
        res.predict(data[["temp", "judge"]])
    with pytest.raises(PredictionError, match=r"lacks the column\(s\) 'judge' of the random"):
        res.predict(data[["temp", "x"]])
    with pytest.raises(DataError, match=r"index of offset does not hold the same labels as"):
        OrdinalModel.from_formula(
            "rating ~ temp + (1|judge)", data, offset=np.full(72, 0.1)
        ).fit().predict(data.head(3), offset=pd.Series([0.0, 0.1, 0.2], index=[7, 8, 9]))


# == the scikit-learn estimators and the ordinal metrics (issue 29: learn/, metrics.py) ==

#: The optional library each estimator needs (the boosters need theirs besides scikit-learn).
_LEARN_NEEDS = {"OrdinalLGBMClassifier": "lightgbm", "OrdinalXGBClassifier": "xgboost"}
LEVEL_NAMES = np.array(["low", "mid", "high"])


def _learn_estimator(name: str, **options):
    pytest.importorskip("sklearn")
    if name in _LEARN_NEEDS:
        pytest.importorskip(_LEARN_NEEDS[name])
    import ordstats.learn

    return getattr(ordstats.learn, name)(**options)


def _learn_rows():
    rng = np.random.default_rng(29)
    X = rng.normal(size=(90, 2))
    codes = np.digitize(X[:, 0] + rng.logistic(size=90), [-1.0, 1.0])
    return X, codes


@pytest.mark.parametrize(
    ("estimator", "y_of_codes", "options", "message"),
    [
        ("OrdinalClassifier", lambda c: LEVEL_NAMES[c], {}, r"without an order .*classes="),
        ("OrdinalLGBMClassifier", lambda c: LEVEL_NAMES[c], {}, r"without an order"),
        ("OrdinalXGBClassifier", lambda c: list(LEVEL_NAMES[c]), {}, r"without an order"),
        ("OrdinalClassifier", lambda c: [[1, "a", 2][k] for k in c], {}, "without an order"),
        ("OrdinalClassifier", lambda c: c + np.linspace(0, 0.5, len(c)), {}, "continuous"),
        ("OrdinalClassifier", lambda c: c, {"classes": "012"}, "classes must be a list"),
        ("OrdinalClassifierCV", lambda c: c, {"cv": "five"}, "could not split"),
        ("OrdinalLGBMClassifier", lambda c: c, {"params": {"objective": "regression"}}, "may not"),
        ("OrdinalXGBClassifier", lambda c: c, {"params": {"eval_metric": "rmse"}}, "may not"),
    ],
)
def test_learn_estimators_bad_targets_and_options(estimator, y_of_codes, options, message):
    X, codes = _learn_rows()
    model = _learn_estimator(estimator, **options)
    with pytest.raises(OrdstatsError, match=message):
        model.fit(X, y_of_codes(codes))


@pytest.mark.parametrize(
    ("estimator", "options", "message"),
    [
        ("OrdinalClassifier", {"prediction": "median"}, r"no longer a parameter.*kind="),
        ("OrdinalClassifier", {"C": 1.0}, "no parameter 'C'"),
        ("OrdinalClassifierCV", {"Cs": 10}, "no parameter 'Cs'"),
        ("OrdinalLGBMClassifier", {"verbose": -1}, r"params=\{'verbose': -1\}"),
        ("OrdinalXGBClassifier", {"verbosity": 0}, r"params=\{'verbosity': 0\}"),
    ],
)
def test_learn_estimators_unknown_keywords(estimator, options, message):
    with pytest.raises(SpecificationError, match=message):
        _learn_estimator(estimator, **options)


def test_learn_estimators_bad_calls():
    pytest.importorskip("sklearn")
    from sklearn.model_selection import GroupKFold

    X, codes = _learn_rows()
    with pytest.raises(SpecificationError, match="kind must be one of"):
        _learn_estimator("OrdinalClassifier").fit(X, codes).predict(X, kind="mean")
    with pytest.raises(SpecificationError, match="pass groups= to fit"):
        _learn_estimator("OrdinalClassifierCV", cv=GroupKFold(3), n_alphas=3).fit(X, codes)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda m: m.mean_absolute_class_error(["lo", "hi"], ["hi", "lo"]), "pass labels="),
        (lambda m: m.quadratic_weighted_kappa([1, "a"], ["a", 1]), "pass labels="),
        (lambda m: m.ranked_probability_score(["lo", "hi"], np.eye(2)), "pass labels="),
        (lambda m: m.concordance_index(["lo", "hi"], [0.1, 0.2]), "pass labels="),
        (lambda m: m.mean_absolute_class_error([True, False], [1, 0]), "mix booleans"),
        (lambda m: m.mean_absolute_class_error([1.0, np.nan], [1.0, 2.0]), "y_true has missing"),
        (lambda m: m.mean_absolute_class_error([0, 1], [1, 0], labels="01"), "list of classes"),
    ],
)
def test_ordinal_metrics_refuse_what_they_cannot_order(call, message):
    from ordstats import metrics

    with pytest.raises(DataError, match=message):
        call(metrics)


# -- ordinal matrix factorisation (issue 29, item 22) ---------------------------------


@pytest.fixture(scope="module")
def ratings_frame():
    sim = ordstats.simulate_ratings(40, 15, rank=1, density=0.5, seed=0)
    return pd.DataFrame({"row": sim.row, "col": sim.col, "rating": sim.y + 1})


@pytest.fixture(scope="module")
def ratings_fit(ratings_frame):
    return ordstats.OrdinalFactorization(ratings_frame, rank=1).fit()


_WHOLE = "must be a whole number >= {}, not {}"


@pytest.mark.parametrize(
    ("options", "error", "match"),
    [
        ({"rank": None}, SpecificationError, _WHOLE.format(0, "None")),
        ({"rank": -1}, SpecificationError, _WHOLE.format(0, "-1")),
        ({"rank": 1.5}, SpecificationError, _WHOLE.format(0, r"1\.5")),
        ({"rank": "2"}, SpecificationError, _WHOLE.format(0, "'2'")),
        ({"rank": True}, SpecificationError, _WHOLE.format(0, "True")),
        ({"rank": 16}, SpecificationError, r"rank 16 exceeds .*15 columns\): choose rank <= 15"),
        ({"factor_penalty": "1"}, SpecificationError, "factor_penalty must be a finite number"),
        ({"factor_penalty": None}, SpecificationError, "factor_penalty must be a finite number"),
        ({"bias_penalty": np.nan}, SpecificationError, "bias_penalty must be a finite number"),
        ({"threshold_penalty": np.inf}, SpecificationError, "threshold_penalty must be a finite"),
        ({"bias_penalty": -0.1}, SpecificationError, r">= 0, not -0\.1"),
        ({"thresholds": "item"}, SpecificationError, "thresholds must be one of"),
        ({"thresholds": ["row"]}, SpecificationError, "thresholds must be one of"),
        ({"link": "aranda-ordaz"}, SpecificationError, "shape parameter .* not estimate"),
        ({"link": "nope"}, SpecificationError, "unknown link 'nope'"),
        ({"row_bias": "no"}, SpecificationError, "row_bias must be True or False"),
        ({"levels": "12345"}, ResponseError, "levels must be a list"),
        ({"levels": [1, 2, 2, 3, 4, 5]}, ResponseError, "contain duplicates"),
        ({"levels": [1, 2, 3]}, ResponseError, "values not among levels"),
        ({"row": None}, DataError, r"column None \(row=\) not in the data"),
        ({"col": ["col"]}, DataError, "col= names a column .*, not a list"),
        ({"weights": np.ones(3)}, DataError, "weights= names a column .*, not a ndarray"),
    ],
)
def test_factorization_options_are_checked(ratings_frame, options, error, match):
    with pytest.raises(error, match=match):
        ordstats.OrdinalFactorization(ratings_frame, **options)


def _mixed_ratings(frame):
    text = frame.rating.astype(str)
    return frame.assign(rating=frame.rating.astype(object).where(frame.index % 2 == 0, text))


@pytest.mark.parametrize(
    ("change", "error", "match"),
    [
        (_mixed_ratings, ResponseError, r"unordered labels .*Pass levels="),
        (lambda f: f.assign(rating=f.rating.map(dict(enumerate("abcde", 1)))), ResponseError,
         "unordered labels"),
        (lambda f: f.assign(w="1"), DataError, "holds str values, not numbers"),
        (lambda f: f.assign(w=["a"] + [1] * (len(f) - 1)), DataError, "holds object values"),
        (lambda f: f.assign(w=np.nan), DataError, "missing or infinite values"),
        (lambda f: f.assign(w=0.0), DataError, "all weights are zero"),
        (lambda f: f.assign(w=-1.0), DataError, "non-negative"),
        (lambda f: f.iloc[:0], DataError, r"no ratings \(no rows\)"),
        (lambda f: f.assign(rating=3), ResponseError, r"1 observed level \(only '3'\)"),
        (lambda f: f.assign(row=None), DataError, r"missing values in \['row'\]"),
        (lambda f: f.assign(rating=f.rating.astype(float).where(f.index != 0, np.inf)),
         DataError, "infinite values"),
        (lambda f: f.assign(rating=f.rating + 0.01 * np.arange(len(f))), ResponseError,
         "distinct levels; .*many_levels=True"),
        (lambda f: pd.concat([f, f.iloc[[3]].assign(rating=1)]), DataError,
         r"rated more than once, e\.g\. row \d+, column \d+ with ratings \["),
        (lambda f: f.to_numpy(), DataError, "not ndarray; for a dense array"),
    ],
)  # fmt: skip
def test_factorization_data_are_checked(ratings_frame, change, error, match):
    weights = {"weights": "w"} if "w" in getattr(change(ratings_frame), "columns", []) else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LevelsWarning)
        with pytest.raises(error, match=match):
            ordstats.OrdinalFactorization(change(ratings_frame), **weights)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda m: m.fit(max_sweeps=0), _WHOLE.format(1, "0")),
        (lambda m: m.fit(max_sweeps="5"), _WHOLE.format(1, "'5'")),
        (lambda m: m.fit(tol="x"), "tol must be a finite number >= 0, not 'x'"),
        (lambda m: m.fit(tol=np.nan), "tol must be a finite number >= 0, not nan"),
        (lambda m: m.fit(seed="a"), _WHOLE.format(0, "'a'")),
        (lambda m: m.fit(n_jobs=0), _WHOLE.format(1, "0")),
        (lambda m: m.fit(progress="yes"), "progress must be True or False"),
        (lambda m: m.fit(start=(np.zeros(3), np.zeros(3), np.zeros(3))),
         r"start must be .*shapes \(40, 3\), \(15, 3\), \(1, 4\).*got shapes \(3,\)"),
        (lambda m: m.fit(start="abc"), "start must be"),
    ],
)  # fmt: skip
def test_factorization_fit_options_are_checked(ratings_frame, call, match):
    with pytest.raises(SpecificationError, match=match):
        call(ordstats.OrdinalFactorization(ratings_frame))


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda r: r.recommend(-1), SpecificationError, _WHOLE.format(1, "-1")),
        (lambda r: r.recommend(0), SpecificationError, _WHOLE.format(1, "0")),
        (lambda r: r.recommend(2.5), SpecificationError, _WHOLE.format(1, r"2\.5")),
        (lambda r: r.recommend("3"), SpecificationError, _WHOLE.format(1, "'3'")),
        (lambda r: r.recommend(3, chunk_rows=0), SpecificationError, "chunk_rows must be"),
        (lambda r: r.recommend(3, rows=["nobody"]), PredictionError, "unknown row label"),
        (lambda r: r.fold_in("new", [3, 4]), DataError, "a dict or a pandas Series"),
        (lambda r: r.fold_in("new", {}), DataError, "at least one rating"),
        (lambda r: r.fold_in("new", pd.Series([3, 4], index=[0, 0])), DataError,
         "rated more than once"),
        (lambda r: r.fold_in("new", {0: np.nan}), DataError, "rating nan is not one of"),
        (lambda r: r.fold_in(["new"], {0: 3}), DataError, "must be hashable"),
        (lambda r: r.fold_in("new", {0: 3}, max_iter=0), SpecificationError,
         _WHOLE.format(1, "0")),
        (lambda r: r.predict_proba([0, 1], [0]), PredictionError, "same length"),
    ],
)  # fmt: skip
def test_factorization_results_methods_check_their_arguments(ratings_fit, call, error, match):
    with pytest.raises(error, match=match):
        call(ratings_fit)


def test_factorization_recommend_for_no_rows_is_an_empty_table(ratings_fit):
    table = ratings_fit.recommend(3, rows=[])
    assert table.empty and list(table.columns) == ["row", "rank", "col", "expected"]


# -- mixed models (clmm): issue 29 items 6, 11, 20, 22 ---------------------------

_CLMM = "rating ~ temp + contact + (1|judge)"


@pytest.fixture(scope="module")
def clmm_model(wine):
    return OrdinalModel.from_formula(_CLMM, wine)


@pytest.mark.parametrize(
    ("nagq", "match"),
    [
        (1000, r"nagq must be an integer from 1 to 100 .*got 1000"),
        (101, "from 1 to 100"),
        (0, r"1 is the Laplace approximation, as R's nAGQ = 0 or 1"),
        (-3, "R's negative nAGQ, non-adaptive Gauss-Hermite quadrature, is not available"),
        (2.5, "an integer from 1 to 100"),
        ("10", "an integer from 1 to 100"),
        (True, "an integer from 1 to 100"),
    ],
)
def test_clmm_nagq_out_of_range(clmm_model, nagq, match):
    with pytest.raises(SpecificationError, match=match):
        clmm_model.fit(nagq=nagq)
    with pytest.raises(SpecificationError, match=match):
        clmm_model.loglike(clmm_model.start_params(), nagq=nagq)


@pytest.mark.parametrize(
    ("start", "match"),
    [
        (
            np.zeros(3),
            r"start_params must be 7 finite numbers, in the order 1\|2, .*got shape \(3,\)",
        ),
        (np.zeros((7, 1)), r"got shape \(7, 1\)"),
        ([0.0] * 6 + [np.nan], "with non-finite values"),
        ("zeros", "start_params must be 7 numbers"),
        ([-1.0, 0.0, 1.0, 2.0, "a", 0.0, 0.0], "start_params must be 7 numbers"),
    ],
)
def test_clmm_start_params_of_the_wrong_shape(clmm_model, start, match):
    with pytest.raises(SpecificationError, match=match):
        clmm_model.fit(start_params=start)


def test_clmm_string_tolerance(clmm_model):
    with pytest.raises(SpecificationError, match=r"gradtol must be a positive number.*'1e-6'"):
        clmm_model.fit(gradtol="1e-6")
    with (
        pytest.warns(FutureWarning, match="gtol is now called gradtol"),
        pytest.raises(SpecificationError, match=r"gradtol must be a positive number.*'1e-6'"),
    ):
        clmm_model.fit(gtol="1e-6")
    with pytest.raises(SpecificationError, match="maxiter must be a non-negative integer"):
        clmm_model.fit(maxiter=-1)


def test_clmm_cli_nagq_out_of_range_is_an_error_line(capsys):
    from ordstats import cli

    code = cli.main(["fit", _CLMM, "--data", "wine", "--nagq", "1000"])
    _, err = capsys.readouterr()
    assert code == 2
    assert err.startswith("ordstats: error: nagq must be an integer from 1 to 100")
    assert "Traceback" not in err


def test_clmm_missing_grouping_value_under_missing_raise(wine):
    data = wine.copy()
    data["judge"] = data["judge"].astype(object)
    data.loc[3, "judge"] = None
    with pytest.raises(DataError, match=r"'judge' \(1\); drop them first or pass missing='drop'"):
        OrdinalModel.from_formula(_CLMM, data, missing="raise")


@pytest.mark.parametrize(
    ("formula", "match"),
    [
        ("rating ~ temp + (|judge)", "nothing left of the bar"),
        ("rating ~ temp + (1|judge) + (1|judge)", "variances are not identified"),
        ("rating ~ temp + (1|(judge))", "must be a column name or columns joined by ':'"),
        ("rating ~ temp + (1|judge|bottle)", "cannot read the random term"),
    ],
)
def test_clmm_formula_mistakes(wine, formula, match):
    data = wine.assign(off=0.1)
    with pytest.raises(FormulaError, match=match):
        OrdinalModel.from_formula(formula, data)


# -- issue 29: results and the tests between fits (alpha, constraints, predict, messages) --


@pytest.fixture(scope="module")
def issue29_fit():
    wine = ordstats.datasets.load("wine")
    return ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()


_ALPHA_USERS = {
    "conf_int": lambda r, a: r.conf_int(alpha=a),
    "conf_int profile": lambda r, a: r.conf_int(alpha=a, method="profile"),
    "odds_ratios": lambda r, a: r.odds_ratios(alpha=a),
    "summary": lambda r, a: r.summary(alpha=a),
    "summary2": lambda r, a: r.summary2(alpha=a),
    "profile": lambda r, a: r.profile("temp[T.warm]", alpha=a),
    "get_prediction conf_int": lambda r, a: r.get_prediction().conf_int(alpha=a),
    "get_prediction summary_frame": lambda r, a: r.get_prediction().summary_frame(alpha=a),
    "get_margeff summary_frame": lambda r, a: r.get_margeff().summary_frame(alpha=a),
    "get_margeff summary": lambda r, a: r.get_margeff().summary(alpha=a),
    "t_test conf_int": lambda r, a: r.t_test("temp[T.warm] = 0").conf_int(alpha=a),
}


@pytest.mark.parametrize("method", sorted(_ALPHA_USERS))
@pytest.mark.parametrize("alpha", ["0.05", True, None, 2, 0.0, 1.0, float("nan")])
def test_every_method_with_alpha_checks_it_the_same_way(issue29_fit, method, alpha):
    # before: '0.05' gave "TypeError: '<' not supported between 'float' and 'str'"
    # (or "unsupported operand type(s) for /") depending on the method
    with pytest.raises(SpecificationError, match="alpha must be a number strictly between 0 and 1"):
        _ALPHA_USERS[method](issue29_fit, alpha)


def test_mixed_model_intervals_check_alpha(wine):
    mixed = ordstats.OrdinalModel.from_formula("rating ~ temp + (1|judge)", wine).fit()
    for alpha in (2, "0.05", -0.1):  # before: alpha=2 gave intervals (inf, -inf)
        with pytest.raises(SpecificationError, match="alpha must be a number"):
            mixed.conf_int(alpha=alpha)
        with pytest.raises(SpecificationError, match="alpha must be a number"):
            mixed.sd_conf_int(alpha=alpha, method="wald")


def test_model_predict_before_fit_says_to_fit_or_pass_params(wine):
    from ordstats.errors import NotFittedError

    model = ordstats.OrdinalModel.from_formula("rating ~ temp", wine)
    with pytest.raises(NotFittedError, match=r"fit the model .* or\s+pass params"):
        model.predict()  # before: AttributeError, no attribute 'predict'
    with pytest.raises(SpecificationError, match=r"first argument of OrdinalModel\.predict"):
        model.predict(wine)
    with pytest.raises(SpecificationError, match="5 finite numbers"):
        model.predict([0.0, 1.0, 2.0, 3.0, "x"])


def test_t_test_tuple_of_a_name_and_a_value_says_what_to_write(issue29_fit):
    # before: IndexError: tuple index out of range
    with pytest.raises(SpecificationError, match=r"write 'temp\[T.warm\] = 0'"):
        issue29_fit.t_test(("temp[T.warm]", 0))
    with pytest.raises(SpecificationError, match="q go with a matrix R"):
        issue29_fit.wald_test(["temp[T.warm]"], 0.5)


def test_resid_after_remove_data_says_the_data_were_removed(wine):
    from ordstats.errors import NotFittedError

    res = ordstats.OrdinalModel.from_formula("rating ~ temp", wine).fit()
    res.remove_data()
    # before: TypeError: 'NoneType' object is not iterable
    with pytest.raises(NotFittedError, match="rows of the data, which were removed"):
        _ = res.resid


def test_no_message_names_an_internal_class():
    """Errors and warnings are for users: no class they never see (e.g. an evaluator)."""
    import ast
    import pathlib
    import re

    import ordstats.errors
    import ordstats.links

    package = pathlib.Path(ordstats.__file__).parent
    trees = {path: ast.parse(path.read_text()) for path in package.rglob("*.py")}
    defined = {
        node.name
        for tree in trees.values()
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
    }
    public = set(ordstats.__all__) | set(ordstats.errors.__all__) | set(ordstats.links.__all__)
    internal = re.compile(r"\b(" + "|".join(sorted(defined - public)) + r")\b")
    offenders = []
    for path, tree in trees.items():
        for node in ast.walk(tree):
            is_warn = isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "warn"
            target = node.exc if isinstance(node, ast.Raise) else node if is_warn else None
            if target is None:
                continue
            text = " ".join(
                n.value
                for n in ast.walk(target)
                if isinstance(n, ast.Constant) and isinstance(n.value, str)
            )
            found = internal.findall(text) + re.findall(r"\w*Evaluator\b", text)
            if found:
                offenders.append(f"{path.relative_to(package)}:{node.lineno} {found}")
            elif re.search(r"type\([^)]*evaluator[^)]*\)\.__name__", ast.unparse(target)):
                offenders.append(f"{path.relative_to(package)}:{node.lineno} evaluator type")
    assert not offenders, offenders


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


# -- issue 29: new data with a repeated column --------------------------------------


def test_newdata_with_a_used_column_twice_is_refused_and_an_unused_one_ignored(wine):
    res = OrdinalModel.from_formula("rating ~ temp", wine).fit()
    twice = pd.concat([wine[["temp"]], wine[["temp"]]], axis=1)
    with pytest.raises(DataError, match=r"newdata has more than one column named 'temp'"):
        res.predict(twice)
    unused_twice = pd.concat([wine[["temp", "contact"]], wine[["contact"]]], axis=1)
    pd.testing.assert_frame_equal(res.predict(unused_twice), res.predict(wine[["temp"]]))


# -- issue 29 review: the factorisation's unknown column labels ----------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda r: r.predict_proba([0], ["nowhere"]),
        lambda r: r.fold_in("new", {"nowhere": 3}),
    ],
)
def test_an_unknown_column_label_is_not_pointed_at_fold_in(ratings_fit, call):
    # the message said "fold new rows in with fold_in() first", also inside fold_in
    with pytest.raises(PredictionError, match=r"unknown column label\(s\) \['nowhere'\]") as info:
        call(ratings_fit)
    assert "fold_in" not in str(info.value) and "refit" in str(info.value)


# -- issue 29 last read: a predictor named like another parameter ---------------------


def test_a_predictor_named_like_the_link_parameter_is_refused():
    rng = np.random.default_rng(0)
    data = pd.DataFrame(
        {"y": rng.integers(0, 3, 200), "lambda": rng.normal(size=200), "b": rng.normal(size=200)}
    )
    with pytest.raises(SpecificationError, match=r"two parameters would be named 'lambda'"):
        OrdinalModel.from_formula("y ~ lambda + b", data, link="aranda-ordaz")
    assert OrdinalModel.from_formula("y ~ lambda + b", data).param_names[-2:] == ["lambda", "b"]


# -- issue 29 review (results/mixed): a repeated grouping column -----------------------


def test_a_repeated_column_of_a_random_term_is_named(wine):
    # before: TypeError 'factorize requires a Series ... got DataFrame' (pandas), and for
    # new data "Term `contact` has generated columns that are inconsistent"
    twice = pd.concat([wine, wine[["judge"]]], axis=1)
    with pytest.raises(DataError, match="more than one column named 'judge'"):
        OrdinalModel.from_formula("rating ~ temp + (1|judge)", twice)
    res = OrdinalModel.from_formula("rating ~ temp + (1 + contact|judge)", wine).fit()
    new = pd.concat([wine[["temp", "judge", "contact"]], wine[["contact"]]], axis=1)
    for re_form in (None, "marginal"):
        with pytest.raises(DataError, match="newdata has more than one column named 'contact'"):
            res.predict(new, re_form=re_form)
    # a column the prediction does not read may repeat
    assert res.predict(new, re_form=0).shape == (72, 5)


# -- issue 29 review (r1-core): neighbours of the fixed cases ------------------------


@pytest.mark.parametrize("kind", ["pyarrow", "dask"])
def test_a_float_response_in_another_array_library_keeps_its_numeric_order(wine, kind):
    # the exact re-reading of Python integer lists must not turn other arrays into objects
    y = wine["rating"].astype(float).to_numpy()
    X = (wine[["temp", "contact"]] == ["warm", "yes"]).astype(float).to_numpy()
    if kind == "pyarrow":
        endog = pytest.importorskip("pyarrow").array(y)
    else:
        endog = pytest.importorskip("dask.array").from_array(y, chunks=20)
    expected = OrdinalModel(y, X).fit()
    res = OrdinalModel(endog, X).fit()
    assert res.llf == pytest.approx(expected.llf, rel=1e-12)
    assert list(res.params.index[:4]) == list(expected.params.index[:4])


def test_a_numpy_record_array_names_its_columns_and_is_data(wine):
    records = wine[["rating", "temp", "contact"]].astype({"rating": int}).to_records(index=False)
    res = OrdinalModel.from_formula("rating ~ temp + contact", records).fit()
    expected = OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    assert res.llf == pytest.approx(expected.llf, rel=1e-12)


@pytest.mark.parametrize(
    ("data", "shown"),
    [
        (None, r"got None$"),
        (np.zeros((3, 2)), r"got ndarray: give the columns names"),
        ([], r"got an empty list"),
        (pd.Series([1, 2]), r"got Series: turn it into one"),
    ],
)
def test_data_that_is_not_a_table_gets_the_same_message_with_random_terms(data, shown):
    for formula in ("rating ~ temp", "rating ~ temp + (1|judge)"):
        with pytest.raises(DataError, match=r"data must be a pandas DataFrame .*" + shown):
            OrdinalModel.from_formula(formula, data)


def test_a_repeated_column_of_a_random_term_is_refused_at_fit_and_at_predict(wine):
    data = wine.assign(x=np.linspace(-1.0, 1.0, len(wine)))
    for column, formula in (
        ("judge", "rating ~ temp + (1|judge)"),
        ("x", "rating ~ temp + (0 + x|judge)"),
    ):
        twice = pd.concat([data, data[[column]]], axis=1)
        with pytest.raises(DataError, match=rf"the data has more than one column named '{column}'"):
            OrdinalModel.from_formula(formula, twice)
    res = OrdinalModel.from_formula("rating ~ temp + (1|judge)", data).fit()
    twice = pd.concat([data[["temp", "judge"]], data[["judge"]]], axis=1)
    with pytest.raises(DataError, match=r"newdata has more than one column named 'judge'"):
        res.predict(twice)
    # the population prediction does not read the groups: a repeated one does not matter
    np.testing.assert_allclose(
        res.predict(twice, re_form=0), res.predict(data[["temp"]], re_form=0), rtol=0, atol=0
    )


def test_a_random_term_transform_that_is_not_finite_drops_its_rows_by_name(wine):
    data = wine.assign(x=np.linspace(-2.5, 3.0, len(wine)))  # log(x + 2) is NaN on 7 rows
    formula = "rating ~ temp + (1 + np.log(x + 2)|judge)"
    with pytest.warns(MissingDataWarning, match=r"7 of 72 rows .* 'np.log\(x \+ 2\)' \(7\)"):
        res = OrdinalModel.from_formula(formula, data).fit()
    expected = OrdinalModel.from_formula(formula, data[data["x"] > -2]).fit()
    assert res.nobs == 65
    assert res.llf == pytest.approx(expected.llf, rel=1e-10)
    with pytest.raises(DataError, match=r"7 of 72 rows .* 'np.log\(x \+ 2\)'.*missing='drop'"):
        OrdinalModel.from_formula(formula, data, missing="raise")


@pytest.mark.parametrize(
    "formula", ["rating ~ temp + (1|rating)", "rating ~ temp + (1 + rating|judge)"]
)
def test_the_response_in_a_random_term_is_refused(wine, formula):
    with pytest.raises(FormulaError, match=r"the response 'rating' is also used in the random"):
        OrdinalModel.from_formula(formula, wine)


def test_a_per_row_variable_of_the_calling_scope_shares_the_rows_fate(wine):
    # as R's model.frame does: a row with a missing value is dropped with its value of xx
    xx = np.linspace(-1.0, 1.0, len(wine)) ** 3
    data = wine.copy()
    data.loc[3, "contact"] = None
    for formula in ("rating ~ contact + xx", "rating ~ contact + xx + (1|judge)"):
        with pytest.warns(MissingDataWarning, match=r"1 of 72 rows"):
            res = OrdinalModel.from_formula(formula, data).fit()
        with pytest.warns(MissingDataWarning, match=r"1 of 72 rows"):
            expected = OrdinalModel.from_formula(formula, data.assign(xx=xx)).fit()
        assert res.llf == pytest.approx(expected.llf, rel=1e-12)


def test_a_pandas_variable_of_the_calling_scope_is_paired_by_index_label(wine):
    xs = pd.Series(np.linspace(-1.0, 1.0, len(wine)) ** 3, index=wine.index)
    forward = OrdinalModel.from_formula("rating ~ temp + xs", wine).fit()
    backward = OrdinalModel.from_formula("rating ~ temp + xs", wine.iloc[::-1]).fit()
    assert backward.llf == pytest.approx(forward.llf, rel=1e-12)
    xs = xs.set_axis(np.arange(len(wine)) + 100)
    with pytest.raises(DataError, match=r"the index of the formula variable 'xs' does not hold"):
        OrdinalModel.from_formula("rating ~ temp + xs", wine)


def test_a_variable_of_the_calling_scope_that_is_not_one_value_per_row_is_named(wine):
    xx = np.linspace(-1.0, 1.0, len(wine))  # noqa: F841 - the formula reads it
    expected = r"reads 'xx' \(72 values\) from the calling scope.*add it to the data as a column"
    with pytest.raises(FormulaError, match=expected):
        OrdinalModel.from_formula("rating ~ temp + xx", wine.iloc[:50])
    chunked = r"'xx' from the calling scope.*add it to the data as a column"
    with pytest.raises(FormulaError, match=chunked):  # chunks are never the caller's rows
        OrdinalModel.from_formula("rating ~ temp + xx", wine, chunksize=20)


def test_newdata_that_is_not_a_table_of_rows_says_how_to_make_one(wine, wine_res):
    with pytest.raises(PredictionError, match=r"one value per row.*pd.DataFrame\(\[\{"):
        wine_res.predict({"temp": "warm", "contact": "yes"})  # one row, but scalars
    with pytest.raises(
        PredictionError, match=r"is a Series, read as one column.*pd.DataFrame\(\[series\]\)"
    ):
        wine_res.predict(wine.iloc[0])  # a row
    with pytest.raises(PredictionError, match=r"newdata must be a pandas DataFrame .*got int"):
        wine_res.predict(5)
    expected = wine_res.predict(wine.iloc[[70]]).to_numpy()  # warm, yes
    for one_row in (
        pd.DataFrame([{"temp": "warm", "contact": "yes"}]),
        pd.DataFrame([wine.iloc[70]]),
    ):
        np.testing.assert_allclose(wine_res.predict(one_row).to_numpy(), expected)


def test_array_newdata_that_is_not_numbers_is_refused_clearly(wine):
    X = (wine[["temp", "contact"]] == ["warm", "yes"]).astype(float).to_numpy()
    res = OrdinalModel(wine["rating"], X).fit()
    for newdata in ([["a", "b"]], [[1.0], [1.0, 2.0]], {"x1": 1.0}):
        with pytest.raises(PredictionError, match=r"newdata must be numbers: one row of the 2"):
            res.predict(newdata)


def test_data_without_rows_get_one_message_wherever_the_rows_live(wine, tmp_path):
    path = tmp_path / "header_only.csv"
    wine.iloc[:0].to_csv(path, index=False)
    messages = set()
    for data, chunksize in ((wine.iloc[:0], None), (wine.iloc[:0], 10), (str(path), None)):
        with pytest.raises(DataError, match=r"the data have no rows") as caught:
            OrdinalModel.from_formula("rating ~ temp", data, chunksize=chunksize)
        messages.add(str(caught.value))
    assert len(messages) == 1, messages


def test_an_offset_term_fits_in_memory_and_is_refused_in_chunks(wine):
    """R's offset(x) term (clm and clmm take offsets only so) is the offset x; data read
    in chunks refuse it with one message saying to store the column."""
    data = wine.assign(off=np.linspace(0.0, 1.0, len(wine)))
    for random in ("", " + (1|judge)"):
        res = OrdinalModel.from_formula("rating ~ temp + offset(off)" + random, data).fit()
        given = OrdinalModel.from_formula("rating ~ temp" + random, data, offset="off").fit()
        assert res.llf == pytest.approx(given.llf, rel=1e-10)
    with pytest.raises(FormulaError, match=r"offset terms .*pass offset='column'"):
        OrdinalModel.from_formula("rating ~ temp + offset(off)", data, chunksize=20)


def test_a_function_of_the_callers_named_offset_is_a_function(wine):
    def offset(values):
        return 2.0 * values

    data = wine.assign(x=np.linspace(0.0, 1.0, len(wine)))
    for random in ("", " + (1|judge)"):
        res = OrdinalModel.from_formula("rating ~ temp + offset(x)" + random, data).fit()
        expected = OrdinalModel.from_formula("rating ~ temp + x" + random, data).fit()
        assert res.llf == pytest.approx(expected.llf, rel=1e-10)


@pytest.mark.parametrize("random", ["", " + (1|judge)"])
def test_the_offset_column_of_newdata_is_checked_as_at_fit(wine, random):
    data = wine.assign(off=np.linspace(-1.0, 1.0, len(wine)))
    res = OrdinalModel.from_formula("rating ~ temp" + random, data, offset="off").fit()
    for values in ("a", True):
        with pytest.raises(PredictionError, match=r"the offset column 'off' of newdata must be"):
            res.predict(data.assign(off=values))
    with pytest.raises(DataError, match=r"newdata has more than one column named 'off'"):
        res.predict(pd.concat([data, data[["off"]]], axis=1))
    with pytest.warns(MissingDataWarning, match=r"missing or non-finite offset values"):
        assert res.predict(data.assign(off=None)).isna().all(axis=None)


def test_a_categorical_variable_of_the_calling_scope_keeps_its_category_order(wine):
    cat = pd.Categorical(wine["temp"].astype(str), categories=["warm", "cold"])  # noqa: F841
    res = OrdinalModel.from_formula("rating ~ cat", wine).fit()
    assert res.params.index[-1] == "cat[T.cold]"
    assert res.llf == pytest.approx(OrdinalModel.from_formula("rating ~ temp", wine).fit().llf)


@pytest.mark.parametrize("chunksize", [None, 7])
def test_an_empty_text_field_of_a_csv_file_is_missing_as_pandas_reads_it(wine, tmp_path, chunksize):
    pytest.importorskip("pyarrow")
    path = tmp_path / "gaps.csv"
    data = wine.astype({"temp": object, "contact": object})
    data.loc[:19, "temp"] = None
    data.loc[30, "contact"] = "NA"
    data.to_csv(path, index=False)
    with pytest.warns(MissingDataWarning, match=r"'contact' \(1\), 'temp' \(20\)"):
        expected = OrdinalModel.from_formula("rating ~ temp + contact", pd.read_csv(path)).fit()
    with pytest.warns(MissingDataWarning, match=r"21 of 72 rows"):
        model = OrdinalModel.from_formula("rating ~ temp + contact", str(path), chunksize=chunksize)
        res = model.fit()
    assert expected.nobs == res.nobs == 51
    assert list(res.params.index) == list(expected.params.index)
    assert res.llf == pytest.approx(expected.llf, rel=1e-12)


# -- nominal and scale effects of data read in chunks (ooc-models) ------------------


@pytest.mark.parametrize(
    ("keywords", "error", "message"),
    [
        ({"nominal": "~ rating"}, FormulaError, r"'rating' is also used in the nominal formula"),
        ({"scale": "rating ~ temp"}, FormulaError, r"scale formula .* must be one-sided"),
        ({"nominal": 3}, FormulaError, r"nominal must be a one-sided formula"),
        ({"nominal": "~ nosuch"}, FormulaError, r"'nosuch', which is not a column"),
        ({"scale": "~ center(x)"}, SpecificationError, r"the scale formula uses stateful"),
        (
            {"nominal": "~ contact", "threshold": [0.0, 1.0, 2.0, 3.0]},
            SpecificationError,
            r"fixed thresholds cannot have nominal effects",
        ),
        ({"family": "acat"}, SpecificationError, r"'acat' family is not available for data read"),
    ],
)
def test_bad_side_formulas_of_data_read_in_chunks(wine, keywords, error, message):
    data = wine.assign(x=np.linspace(0.1, 3.0, len(wine)))
    with pytest.raises(error, match=message):
        OrdinalModel.from_formula("rating ~ temp", data, chunksize=20, **keywords)


def test_term_tests_of_an_unpickled_chunked_fit_say_what_to_do(wine):
    import pickle

    res = OrdinalModel.from_formula("rating ~ temp + contact", wine, chunksize=20).fit()
    restored = pickle.loads(pickle.dumps(res))
    for method in (restored.nominal_test, restored.scale_test):
        with pytest.raises(SpecificationError, match=r"does not keep when pickled.*lr_test"):
            method()


# -- sandwich covariances of data read in chunks (issue 25, item 3) ----------------


def test_chunked_cluster_covariance_input_is_checked(wine):
    data = wine.assign(pair=np.arange(len(wine)) // 8, one=1)
    res = OrdinalModel.from_formula("rating ~ temp + contact", data, chunksize=20).fit()
    cases = [
        ({}, r"needs cov_kwds=\{'groups': <column name>\}"),
        ({"groups": data["pair"]}, r"groups'\] must name a column of the data .*got Series"),
        ({"groups": "piar"}, r"'piar' is not a column of the data; did you mean 'pair'\?"),
        ({"groups": "one"}, r"needs at least two clusters"),
        ({"groups": "pair", "bad": 1}, r"cov_kwds \['bad'\] not understood"),
    ]
    for kwds, message in cases:
        with pytest.raises(OrdstatsError, match=message):
            res.get_robustcov_results("cluster", kwds)
    gaps = data.assign(pair=data["pair"].where(data.index % 9 > 0))
    res = OrdinalModel.from_formula("rating ~ temp + contact", gaps, chunksize=20).fit()
    with pytest.raises(DataError, match=r"'pair'\), have 8 missing values among the rows"):
        res.get_robustcov_results("cluster", {"groups": "pair"})
    with pytest.raises(SpecificationError, match=r"cov_kwds \['groups'\] not understood"):
        res.get_robustcov_results("HC0", {"groups": "pair"})


# -- awkward chunks and partitions (issue 25, item 5) ------------------------------


def _dask_partitions(parts):
    dask = pytest.importorskip("dask")
    dd = pytest.importorskip("dask.dataframe")
    delayed = [dask.delayed(lambda p: p)(part) for part in parts]
    return dd.from_delayed(delayed, meta=parts[0].iloc[:0], verify_meta=False)


def test_a_dask_partition_without_a_used_column_is_named(wine):
    dask = pytest.importorskip("dask")
    data = wine[["rating", "temp", "contact"]]
    parts = [data.iloc[:36], data.iloc[36:].drop(columns="contact")]
    with (
        dask.config.set(scheduler="sync"),
        pytest.raises(  # before: KeyError from pandas
            DataError,
            match=r"a partition of the Dask DataFrame lacks columns the model reads "
            r"\(\['contact'\] not in index\); every partition must hold 'rating', "
            r"'contact', 'temp'",
        ),
    ):
        OrdinalModel.from_formula("rating ~ temp + contact", _dask_partitions(parts))


def test_a_column_of_numbers_in_one_partition_and_text_in_another(wine):
    dask = pytest.importorskip("dask")
    data = wine[["rating", "temp"]].assign(x=np.linspace(0.0, 1.0, len(wine)))
    parts = [data.iloc[:36], data.iloc[36:].assign(x=lambda d: d["x"].astype(str))]
    with (
        dask.config.set(scheduler="sync"),
        pytest.raises(
            DataError, match=r"'x' hold numbers in some chunks or partitions and text in others"
        ),
    ):
        OrdinalModel.from_formula("rating ~ temp + x", _dask_partitions(parts))


# -- margins verbs: predictions, comparisons, slopes, hypotheses, datagrid (issue 23) -----


@pytest.fixture(scope="module")
def margins_fit(wine):
    data = wine.assign(x=np.linspace(0.0, 1.0, len(wine)))
    return OrdinalModel.from_formula("rating ~ temp + contact + x", data).fit()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda f: f.avg_comparisons(variables="tempp"),
            r"variables= names 'tempp', which the model does not use; its predictors are "
            r"'contact', 'temp', 'x'",
        ),
        (
            lambda f: f.avg_predictions(by="foo"),
            r"by= names 'foo', which is not a column of the data \(columns: 'contact', 'temp', "
            r"'x'\); add it to newdata",
        ),
        (
            lambda f: f.avg_comparisons(variables={"x": ["a", "b"]}),
            r"'x' is numeric, so its contrast is two numbers \[lo, hi\].*it has no levels "
            r"\['a', 'b'\]",
        ),
        (
            lambda f: f.avg_comparisons(variables={"temp": ["cold", "hot"]}),
            r"'temp' has no level\(s\) \['hot'\]; its levels are \['cold', 'warm'\]",
        ),
        (
            lambda f: f.hypotheses("1 = 0"),
            r"hypothesis '1 = 0' names no estimate: write it in terms of b1, ..., b7 or the "
            r"parameter names",
        ),
        (
            lambda f: f.avg_predictions(hypothesis="b99 - b1 = 0"),
            r"names 'b99', which is not an estimate: use b1, ..., b5",
        ),
        (lambda f: f.avg_predictions(hypothesis="b1 +"), r"'b1 \+' is not a valid expression"),
        (
            lambda f: f.avg_predictions(hypothesis=np.ones((3, 2))),
            r"one row per estimate \(5\).*got an array of shape \(3, 2\)",
        ),
        (lambda f: f.avg_predictions(newdata=[1, 2]), r"newdata must be a pandas DataFrame"),
        (lambda f: f.avg_predictions(wts=[1, 2]), r"wts has 2 values for 72 rows"),
        (lambda f: f.avg_predictions(conf_level=95), r"conf_level must be between 0 and 1"),
        (lambda f: f.avg_predictions(conf_type="exact"), r"conf_type must be one of 'auto'"),
        (lambda f: f.avg_comparisons(comparison="diff"), r"comparison must be one of"),
        (lambda f: f.avg_slopes(slope="dx"), r"slope must be one of 'dydx'"),
        (lambda f: f.avg_predictions(type="probs"), r"type must be one of 'prob'"),
        (lambda f: f.avg_predictions(type="class"), r"type='class' .* cannot be averaged"),
        (
            lambda f: f.avg_comparisons(variables={"temp": "revpairwise"}),
            r"the contrast of factor 'temp' must be one of 'reference', 'sequential'",
        ),
        (lambda f: ordstats.datagrid(f, tempp=["cold"]), r"'tempp' is not a column of the data"),
        (lambda f: ordstats.datagrid(f, temp=["hot"]), r"'temp' has no level\(s\) \['hot'\]"),
        (lambda f: ordstats.datagrid(f, grid_type="balanced"), r"grid_type must be one of"),
        # audit round 2: raw TypeErrors, NaN contrasts that gave NaN tables, a misleading message
        (lambda f: f.avg_predictions(variables=3), r"^variables= takes a column name"),
        (
            lambda f: ordstats.datagrid(f, x=np.nan),
            r"'x' is numeric; give finite numbers, got \[nan\]",
        ),
        (
            lambda f: f.avg_comparisons(variables={"x": np.nan}),
            r"the gap of numeric 'x' must be a finite number; got nan",
        ),
        (
            lambda f: f.comparisons(variables={"x": [np.nan, 1.0]}),
            r"the values \[lo, hi\] of numeric 'x' must be finite numbers",
        ),
        (lambda f: f.hypotheses(None), r"one column per hypothesis; got None$"),
        (
            lambda f: f.avg_predictions(wts=pd.Series(1.0, index=[0] * 72)),
            r"wts \(a Series\) is paired with the rows by index label, and its index repeats",
        ),
    ],
)
def test_margins_verbs_refuse_bad_input(margins_fit, call, message):
    with pytest.raises(OrdstatsError, match=message):
        call(margins_fit)


@pytest.mark.parametrize("family", ["sratio", "cratio", "acat"])
def test_margins_latent_type_needs_a_latent_scale(wine, family):
    fit = OrdinalModel.from_formula("rating ~ temp", wine, family=family).fit()
    with pytest.raises(OrdstatsError, match=rf"type='latent' has no meaning for the '{family}'"):
        fit.avg_predictions(type="latent")
    with pytest.raises(OrdstatsError, match=r"type='latent' has no meaning"):
        fit.avg_slopes(type="latent")


def test_margins_without_the_rows_say_to_pass_newdata(wine):
    from ordstats.errors import NotFittedError

    fit = OrdinalModel.from_formula("rating ~ temp", wine).fit()
    fit.remove_data()
    with pytest.raises(NotFittedError, match=r"without newdata needs the rows of the data"):
        fit.avg_predictions()
    assert len(fit.avg_predictions(wine.iloc[:3], by="temp")) == 5


# -- Spark: no pyspark, no Java, Spark Connect (issue 25; the rest in tests/spark/) --------


def test_a_spark_session_without_java_says_what_to_install(monkeypatch, tmp_path):
    from ordstats.data.spark import local_session

    monkeypatch.setenv("JAVA_HOME", str(tmp_path))  # no bin/java there
    pytest.importorskip("pyspark")
    with pytest.raises(DataError, match=r"needs a Java runtime.*default-jre-headless"):
        local_session()


def test_a_spark_session_without_pyspark_says_what_to_install(monkeypatch):
    import sys

    from ordstats.data.spark import local_session

    monkeypatch.setitem(sys.modules, "pyspark", None)
    monkeypatch.setitem(sys.modules, "pyspark.sql", None)
    with pytest.raises(DataError, match=r"pip install 'ordstats\[spark\]'"):
        local_session()


def test_a_spark_connect_frame_is_refused_clearly():
    class DataFrame:  # what a Spark Connect session returns, without a server
        columns = ("y", "x")

        def mapInPandas(self, func, schema):  # pragma: no cover - never called
            raise AssertionError

    DataFrame.__module__ = "pyspark.sql.connect.dataframe"
    with pytest.raises(DataError, match="Spark Connect DataFrame cannot be fitted yet"):
        ordstats.OrdinalModel.from_formula("y ~ x", DataFrame())


# -- emmeans latent means with nominal effects (latent_cuts) --------------------------------


def test_emmeans_latent_cuts_must_be_grid_or_cell(wine):
    fit = OrdinalModel.from_formula("rating ~ temp", wine, nominal="~ contact").fit()
    with pytest.raises(OrdstatsError, match=r"latent_cuts must be 'grid' \(as emmeans"):
        fit.emmeans("temp", latent_cuts="cells")


# -- constraint strings of wald_test, t_test, f_test --------------------------------------------


@pytest.fixture(scope="module")
def numeric_clm():
    rng = np.random.default_rng(0)
    data = pd.DataFrame({"x1": rng.normal(size=120), "x2": rng.normal(size=120)})
    latent = data["x1"] - 0.5 * data["x2"] + rng.logistic(size=120)
    data["y"] = pd.cut(latent, [-np.inf, -1, 0, 1, np.inf], labels=list("abcd"))
    return OrdinalModel.from_formula("y ~ x1 + x2", data).fit()


@pytest.mark.parametrize("method", ["wald_test", "t_test", "f_test"])
@pytest.mark.parametrize(
    ("constraint", "reason"),
    [
        ("x1 == x2", "Unknown operator '=='"),
        ("2 x1 = x2", "incorrectly used"),
        ("x1 = ", "misplaced"),
    ],
)
def test_unreadable_constraints_say_how_to_write_them(numeric_clm, method, constraint, reason):
    with pytest.raises(SpecificationError, match=re.escape(reason)) as caught:
        getattr(numeric_clm, method)(constraint)
    message = str(caught.value)
    assert message.startswith(f"cannot read the constraints {constraint!r}")
    assert "linear equation of the parameter names, e.g. 'x1 + x2 = 0'" in message
    assert "\x1b" not in message and "\n" not in message  # no terminal colours, one line
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


# -- cluster covariance: groups by column name in memory, labels in chunks ----------------------


def test_in_memory_cluster_groups_by_name_are_checked(wine):
    data = wine.assign(pair=np.arange(len(wine)) // 8)
    res = OrdinalModel.from_formula("rating ~ temp + contact", data).fit()
    with pytest.raises(DataError, match=r"'piar' is not a column of the data; did you mean 'pair'"):
        res.get_robustcov_results("cluster", {"groups": "piar"})
    gaps = data.assign(pair=data["pair"].where(data.index % 9 > 0))
    with pytest.raises(DataError, match=r"'pair'\), have 8 missing values among the rows"):
        OrdinalModel.from_formula("rating ~ temp + contact", gaps).fit(
            cov_type="cluster", cov_kwds={"groups": "pair"}
        )
    X = pd.get_dummies(data[["temp", "contact"]], drop_first=True, dtype=float)
    arrays = OrdinalModel(data["rating"], X).fit()
    with pytest.raises(
        DataError, match=r"groups='pair' names a column, but the DataFrame .* not kept"
    ):
        arrays.get_robustcov_results("cluster", {"groups": "pair"})


def test_cluster_groups_with_a_repeated_index(wine):
    data = wine.set_index(np.arange(len(wine)) % 36)  # every label twice
    res = OrdinalModel.from_formula("rating ~ temp + contact", data).fit()
    with pytest.raises(DataError, match=r"groups Series has duplicated index labels"):
        res.get_robustcov_results("cluster", {"groups": data["judge"]})
    # no row dropped: the column is read by position
    by_name = res.get_robustcov_results("cluster", {"groups": "judge"})
    by_array = res.get_robustcov_results("cluster", {"groups": data["judge"].to_numpy()})
    np.testing.assert_allclose(by_name.bse, by_array.bse, rtol=1e-13)
    # a row dropped: the column is read on the rows used by their positions (before:
    # refused, "the data's index repeats labels and 1 row(s) were dropped")
    gaps = data.assign(contact=data["contact"].where(np.arange(len(data)) != 5))
    with pytest.warns(MissingDataWarning):
        dropped = OrdinalModel.from_formula("rating ~ temp + contact", gaps).fit()
    used = np.arange(len(data)) != 5
    expected = dropped.get_robustcov_results("cluster", {"groups": data["judge"].to_numpy()[used]})
    got = dropped.get_robustcov_results("cluster", {"groups": "judge"})
    np.testing.assert_allclose(got.bse, expected.bse, rtol=1e-13)


def test_chunked_cluster_groups_as_values_say_to_name_the_column(wine):
    res = OrdinalModel.from_formula("rating ~ temp + contact", wine, chunksize=20).fit()
    for labels in (wine["judge"].to_numpy(), list(wine["judge"])):
        with pytest.raises(DataError, match=r"must name a column of the data \(e.g. \{'groups'"):
            res.get_robustcov_results("cluster", {"groups": labels})


# ---------------------------------------------------------------------------
# censored responses: Censored(lower, upper) (issue 28, item 2)


def _censored_frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "lo": [1.0, 2.0, 3.0, 4.0, 5.0, 2.5],
            "hi": [1.0, 2.0, 3.0, np.inf, 5.0, 4.0],
            "x": [0.1, -0.3, 0.5, 0.2, -0.1, 0.4],
            "g": ["a", "b", "a", "b", "a", "b"],
        }
    )


def test_censored_lower_above_upper_says_to_swap():
    data = _censored_frame().assign(lo=[1.0, 2.0, 3.0, 4.0, 5.0, 4.5])
    with pytest.raises(ordstats.errors.ResponseError, match=r"lower bound is above the upper"):
        OrdinalModel.from_formula("Censored(lo, hi) ~ x", data)


def test_censored_every_row_censored_needs_an_exact_value():
    data = _censored_frame().assign(hi=np.inf)
    with pytest.raises(ordstats.errors.ResponseError, match=r"every value .* is censored"):
        OrdinalModel.from_formula("Censored(lo, hi) ~ x", data)


def test_censored_one_missing_bound_says_to_use_infinity():
    data = _censored_frame().assign(hi=[1.0, 2.0, np.nan, np.inf, 5.0, 4.0])
    with pytest.raises(ordstats.errors.ResponseError, match=r"one bound missing.*Use -inf"):
        OrdinalModel.from_formula("Censored(lo, hi) ~ x", data)


def test_censored_both_bounds_missing_is_a_missing_response():
    data = _censored_frame().assign(
        lo=[1.0, 2.0, np.nan, 4.0, 5.0, 2.5], hi=[1.0, 2.0, np.nan, np.inf, 5.0, 4.0]
    )
    with pytest.warns(MissingDataWarning):
        model = OrdinalModel.from_formula("Censored(lo, hi) ~ x", data)
    assert len(model.design.row_index) == 5


def test_censored_rows_without_a_finite_bound_are_refused():
    data = _censored_frame().assign(
        lo=[1.0, 2.0, 3.0, 4.0, 5.0, -np.inf], hi=[1, 2, 3, 4, 5, np.inf]
    )
    with pytest.raises(ordstats.errors.ResponseError, match=r"no finite bound"):
        OrdinalModel.from_formula("Censored(lo, hi) ~ x", data)


def test_censored_below_every_exact_value_warns_it_carries_nothing():
    data = _censored_frame().assign(lo=[1.0, 2.0, 3.0, 0.5, 5.0, 2.5])
    with pytest.warns(ordstats.errors.LevelsWarning, match=r"cover every level.*add nothing"):
        OrdinalModel.from_formula("Censored(lo, hi) ~ x", data)


def test_censored_beyond_every_exact_value_makes_its_own_level():
    data = _censored_frame().assign(lo=[1.0, 2.0, 3.0, 9.0, 5.0, 2.5])
    model = OrdinalModel.from_formula("Censored(lo, hi) ~ x", data)
    # as rms's Ocens, a level above the exact values, at 9 + 1e-8 (non-integer data)
    assert model.levels[-1] == "9.00000001"


@pytest.mark.parametrize("family", ["sratio", "cratio", "acat"])
def test_censored_response_with_another_family_is_refused(family):
    with pytest.raises(SpecificationError, match=r"censored response .* not supported with fam"):
        OrdinalModel.from_formula("Censored(lo, hi) ~ x", _censored_frame(), family=family)


def test_censored_response_with_random_effects_is_refused():
    with pytest.raises(SpecificationError, match=r"not supported with random effects"):
        ordstats.OrdinalMixedModel.from_formula("Censored(lo, hi) ~ x + (1|g)", _censored_frame())


def test_censored_response_with_levels_is_refused():
    with pytest.raises(ordstats.errors.ResponseError, match=r"levels= does not apply"):
        OrdinalModel.from_formula("Censored(lo, hi) ~ x", _censored_frame(), levels=[1, 2])


def test_censored_needs_two_arguments():
    with pytest.raises(ordstats.errors.FormulaError, match=r"must have two arguments"):
        OrdinalModel.from_formula("Censored(lo) ~ x", _censored_frame())


def test_censored_bound_that_cannot_be_evaluated():
    with pytest.raises(ordstats.errors.FormulaError, match=r"cannot evaluate the bound 'nope"):
        OrdinalModel.from_formula("Censored(lo, nope + 1) ~ x", _censored_frame())


def test_censored_bounds_must_be_numeric_and_of_one_length():
    with pytest.raises(DataError, match=r"lower must be numeric"):
        ordstats.Censored(["a", "b"], [1.0, 2.0])
    with pytest.raises(DataError, match=r"lower has 2 values but upper 3"):
        ordstats.Censored([1.0, 2.0], [1.0, 2.0, 3.0])


def test_survival_needs_a_numeric_response_and_finite_times(wine):
    res = OrdinalModel.from_formula("rating ~ temp", wine).fit()
    res.survival(times=[2])  # numeric levels 1..5 are fine
    letters = {"1": "a", "2": "b", "3": "c", "4": "d", "5": "e"}
    labelled = wine.assign(r=wine["rating"].astype(str).map(letters))
    fit = OrdinalModel.from_formula("r ~ temp", labelled, levels=list("abcde")).fit()
    with pytest.raises(ordstats.OrdstatsError, match=r"survival\(\) needs a numeric response"):
        fit.survival()
    with pytest.raises(ordstats.OrdstatsError, match=r"times must be one or more finite"):
        res.survival(times=[np.nan])


def test_censored_bounds_read_in_chunks_must_be_columns():
    with pytest.raises(ordstats.errors.FormulaError, match=r"bounds of .* must be columns"):
        OrdinalModel.from_formula("Censored(lo, hi * 2) ~ x", _censored_frame(), chunksize=3)


def test_censored_one_missing_bound_in_chunks_says_to_use_infinity():
    data = _censored_frame().assign(hi=[1.0, 2.0, np.nan, np.inf, 5.0, 4.0])
    with pytest.raises(DataError, match=r"one bound missing.*Use -inf.*\(in rows 0-2\)"):
        OrdinalModel.from_formula("Censored(lo, hi) ~ x", data, chunksize=3)


# -- survey designs (issue 27) -------------------------------------------------------------


def _survey_frame(wine):
    data = wine.copy()
    data["stratum"] = np.arange(len(data)) % 3
    data["psu"] = np.arange(len(data)) % 12  # each PSU within one stratum
    data["w"] = 2.0
    data["N"] = 40.0
    return data


def test_survey_design_columns_with_missing_values(wine):
    data = _survey_frame(wine)
    for column in ("stratum", "psu", "w", "N"):
        gaps = data.assign(**{column: data[column].where(np.arange(len(data)) != 3)})
        with pytest.raises(DataError, match=rf"the \w+ column '{column}' has 1 missing values"):
            ordstats.SurveyDesign(gaps, weights="w", strata="stratum", psu="psu", fpc="N")


@pytest.mark.parametrize("value", [0.0, -1.0])
def test_survey_weights_zero_or_negative(wine, value):
    data = _survey_frame(wine)
    data.loc[data.index[4], "w"] = value
    with pytest.raises(
        DataError, match=r"sampling weights must be positive; 1 are zero or negative"
    ):
        ordstats.SurveyDesign(data, weights="w", psu="psu")


def test_survey_fpc_smaller_than_the_sample_and_mixed(wine):
    data = _survey_frame(wine).assign(N=3.0)  # 4 PSUs sampled per stratum of 3
    with pytest.raises(DataError, match=r"fpc implies more than 100% sampling at stage 1"):
        ordstats.SurveyDesign(data, weights="w", strata="stratum", psu="psu", fpc="N")
    mixed = data.assign(N=np.where(np.arange(len(data)) % 2 == 0, 40.0, 0.5))
    with pytest.raises(DataError, match=r"all population sizes \(>= 1\) or all sampling fractions"):
        ordstats.SurveyDesign(mixed, weights="w", psu="psu", fpc="N")


def test_survey_psus_not_nested_in_strata(wine):
    data = _survey_frame(wine).assign(psu=np.arange(len(wine)) % 5)
    with pytest.raises(DataError, match=r"some PSUs appear in several strata.*nest=True"):
        ordstats.SurveyDesign(data, weights="w", strata="stratum", psu="psu")


def test_survey_domain_without_rows(wine):
    design = ordstats.SurveyDesign(_survey_frame(wine), weights="w", psu="psu")
    with pytest.raises(DataError, match=r"the domain has no rows"):
        design.subset(wine["rating"] == "nonexistent")
    with pytest.raises(DataError, match=r"one value per row of the design \(72\)"):
        design.subset([True, False])


def test_survey_lonely_psu_under_fail(wine):
    data = _survey_frame(wine)
    data["stratum"] = np.where(data["psu"] == 0, 9, data["stratum"])  # stratum 9: one PSU
    design = ordstats.SurveyDesign(data, weights="w", strata="stratum", psu="psu")
    model = OrdinalModel.from_formula("rating ~ temp + contact", design=design)
    with pytest.raises(DataError, match=r"stratum 9 has only one PSU at stage 1.*lonely_psu="):
        model.fit()
    with pytest.raises(SpecificationError, match=r"lonely_psu must be one of"):
        ordstats.SurveyDesign(data, weights="w", psu="psu", lonely_psu="skip")


def test_survey_replicate_weights_of_the_wrong_shape(wine):
    data = _survey_frame(wine)
    for bad in (np.ones((len(data) - 1, 4)), np.ones(len(data)), np.ones((len(data), 1))):
        with pytest.raises(DataError, match=r"repweights must have one row per row of the data"):
            ordstats.ReplicateDesign(data, repweights=bad, weights="w", type="BRR")
    with pytest.raises(DataError, match=r"repweights have missing or infinite values"):
        ordstats.ReplicateDesign(
            data, repweights=np.full((len(data), 4), np.nan), weights="w", type="BRR"
        )
    with pytest.raises(DataError, match=r"no column of the data matches the repweights pattern"):
        ordstats.ReplicateDesign(data, repweights="^rep", weights="w", type="BRR")
    with pytest.raises(SpecificationError, match=r"type must be one of"):
        ordstats.ReplicateDesign(data, repweights=np.ones((len(data), 4)), weights="w", type="JK")


def test_survey_design_with_data_weights_or_cov_type(wine):
    design = ordstats.SurveyDesign(_survey_frame(wine), weights="w", psu="psu")
    with pytest.raises(SpecificationError, match=r"with design=, the data are the design's"):
        OrdinalModel.from_formula("rating ~ temp", wine, design=design)
    with pytest.raises(SpecificationError, match=r"leave out weights="):
        OrdinalModel.from_formula("rating ~ temp", weights="w", design=design)
    with pytest.raises(SpecificationError, match=r"takes an ordstats.SurveyDesign"):
        OrdinalModel.from_formula("rating ~ temp", design="dclus1")
    model = OrdinalModel.from_formula("rating ~ temp", design=design)
    with pytest.raises(SpecificationError, match=r"a survey fit's covariance is the design's"):
        model.fit(cov_type="HC0")


def test_survey_fit_refuses_tests_that_are_not_design_based(wine):
    design = ordstats.SurveyDesign(_survey_frame(wine), weights="w", psu="psu")
    res = OrdinalModel.from_formula("rating ~ temp + contact", design=design).fit()
    with pytest.raises(SpecificationError, match=r"sandwich covariances \(cov_type\) are for"):
        res.get_robustcov_results("HC0")
    for method in (res.nominal_test, res.scale_test):
        with pytest.raises(SpecificationError, match=r"use|reg_term_test\(\) \(Wald F\)"):
            method()
    with pytest.raises(SpecificationError, match=r"Wald intervals only"):
        res.conf_int(method="profile")
    with pytest.raises(SpecificationError, match=r"not location terms of the model"):
        res.rao_scott_lrt("age")


# -- Bayesian fits (issue 26): priors, posterior draws -------------------------------------


@pytest.fixture
def wine_bayes_model(wine):
    return OrdinalModel.from_formula("rating ~ temp + contact", wine)


@pytest.mark.parametrize(
    ("prior_text", "message"),
    [
        ("normal(0, -1)", r"sigma must be positive"),
        ("student_t(0, 0, 1)", r"nu must be positive"),
        ("normal(0)", r"normal\(\) takes 2 argument"),
        ("gamma(2, 1)", r"unknown prior distribution 'gamma'"),
        ("normal(0, a)", r"arguments of the prior .* must be numbers"),
        ("normal 0 1", r"cannot read the prior"),
        ("exponential(1)", r"positive numbers only"),
        ("normal(0, inf)", r"must be finite numbers"),
    ],
)
def test_bayes_bad_prior_text(wine_bayes_model, prior_text, message):
    with pytest.raises(SpecificationError, match=message):
        wine_bayes_model.fit(prior={"b": prior_text})


def test_bayes_prior_on_a_parameter_the_model_lacks(wine_bayes_model):
    with pytest.raises(SpecificationError, match=r"no such parameter; class 'b' has 'temp"):
        wine_bayes_model.fit(prior=ordstats.prior("normal(0, 1)", "b", coef="bottle"))
    with pytest.raises(SpecificationError, match=r"no parameters of class 'sd'"):
        wine_bayes_model.fit(prior={"sd": "normal(0, 1)"})
    with pytest.raises(SpecificationError, match=r"unknown prior class 'slope'"):
        ordstats.prior("normal(0, 1)", "slope")
    with pytest.raises(SpecificationError, match=r"two priors for the same parameters"):
        wine_bayes_model.fit(prior=[ordstats.prior("normal(0, 1)")] * 2)
    with pytest.raises(SpecificationError, match=r"prior must be ordstats.prior"):
        wine_bayes_model.fit(prior=3)


@pytest.mark.parametrize(
    "spec",
    [
        [
            ordstats.prior("normal(0, 1)", coef="temp[T.warm]"),
            ordstats.prior("normal(5, 1)", coef="tempwarm"),
        ],
        {"b:temp[T.warm]": "normal(0, 1)", "b:tempwarm": "normal(5, 1)"},
        [
            ordstats.prior("normal(0, 5)", "Intercept", coef="1"),
            ordstats.prior("normal(0, 3)", "Intercept", coef="1|2"),
        ],
    ],
)
def test_bayes_two_spellings_of_one_parameter_are_two_priors(wine_bayes_model, spec):
    """Before: the second spelling's prior was silently dropped (the estimate that of the
    first alone, and prior_summary listed only the first)."""
    with pytest.raises(
        SpecificationError, match=r"the same parameter '.*\(two spellings of its name\)"
    ):
        wine_bayes_model.fit(prior=spec)


def test_bayes_laplace_prior_off_zero_or_on_intercepts(wine_bayes_model):
    with pytest.raises(SpecificationError, match=r"must be centred at 0 \(the lasso\)"):
        wine_bayes_model.fit(prior={"b": "double_exponential(1, 1)"})
    with pytest.raises(SpecificationError, match=r"on single slopes only"):
        wine_bayes_model.fit(prior={"Intercept": "laplace(0, 1)"})


def test_bayes_prior_with_penalty_or_lkj_without_correlated_terms(wine_bayes_model, wine):
    with pytest.raises(SpecificationError, match=r"give prior= or penalty=, not both"):
        wine_bayes_model.fit(prior="default", penalty="firth")
    scalar = OrdinalModel.from_formula("rating ~ temp + (1|judge)", wine)
    with pytest.raises(SpecificationError, match=r"no parameters of class 'cor'"):
        scalar.fit(prior={"cor": "lkj(2)"})


@pytest.mark.parametrize("draws", [0, -5, 2.5, True, "100"])
def test_bayes_draws_must_be_positive_whole_numbers(wine_bayes_model, draws):
    mode = wine_bayes_model.fit(prior="default")
    with pytest.raises(SpecificationError, match=r"draws must be a positive whole number"):
        mode.posterior(draws)


def test_bayes_unknown_method_df_and_probs(wine_bayes_model):
    mode = wine_bayes_model.fit(prior="default")
    with pytest.raises(SpecificationError, match=r"method must be 'laplace' or 'nuts'"):
        mode.posterior(100, method="mcmc")
    with pytest.raises(SpecificationError, match=r"df must be a positive number"):
        mode.posterior(100, df=0)
    post = mode.posterior(500)
    with pytest.raises(SpecificationError, match=r"probs must be numbers in \(0, 1\)"):
        post.summary(probs=(0.5, 1.5))
    with pytest.raises(SpecificationError, match=r"which must be 'prob' or 'expected'"):
        post.predict(which="class")


def test_bayes_nuts_without_the_extra_says_what_to_install(wine_bayes_model, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_numpyro(name, *args, **kwargs):
        if name.split(".")[0] in {"numpyro", "jax", "arviz"}:
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    mode = wine_bayes_model.fit(prior="default")
    post = mode.posterior(300)  # the importance-sampling posterior needs no extra
    monkeypatch.setattr(builtins, "__import__", no_numpyro)
    with pytest.raises(SpecificationError, match=r"pip install 'ordstats\[bayes\]'"):
        mode.posterior(100, method="nuts")
    with pytest.raises(SpecificationError, match=r"pip install 'ordstats\[bayes\]'"):
        post.to_arviz()


# -- margins (issue 23 walk): emmeans at=, get_margeff on fits read in chunks ---------------


def test_emmeans_at_an_unknown_variable_names_it_plainly(wine):
    # before: "at= names 'nope' is not a variable of the reference grid" (not a sentence)
    res = OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    with pytest.raises(OrdstatsError, match=r"^at= 'nope' is not a variable of the reference"):
        res.emmeans("temp", at={"nope": 1})


def test_chunked_get_margeff_bad_input_says_what_to_do(wine):
    res = OrdinalModel.from_formula("rating ~ temp + contact", wine, chunksize=20).fit()
    with pytest.raises(SpecificationError, match=r"at='overall' \(which streams over the"):
        res.get_margeff(at="all")
    with pytest.raises(SpecificationError, match=r"atexog names 'nope', which is not a regressor"):
        res.get_margeff(at="mean", atexog={"nope": 1})
    with pytest.raises(SpecificationError, match=r"at='median' is not available with dummy"):
        res.get_margeff(at="median", dummy=True)


# -- margins (issue 23, margins-fin): a wts= column with bad values is named ----------------


@pytest.mark.parametrize("chunksize", [None, 20])
def test_margins_wts_column_with_negative_values_is_named(wine, chunksize):
    # before: "wts must be finite, non-negative and not all zero", without the column
    data = wine.assign(survey_w=np.where(np.arange(len(wine)) == 7, -2.0, 1.0))
    options = {} if chunksize is None else {"chunksize": chunksize}
    res = OrdinalModel.from_formula("rating ~ temp + contact", data, **options).fit()
    # in memory the weights column is read from newdata; a chunked fit reads it in its pass
    newdata = data if chunksize is None else None
    with pytest.raises(
        OrdstatsError, match=r"^wts='survey_w' \(a column of the data\) has 1 negati"
    ):
        res.avg_predictions(newdata, wts="survey_w")
    with pytest.raises(
        OrdstatsError, match=r"wts='survey_w' .* has 1 negative values \(smallest -2\)"
    ):
        res.avg_comparisons(newdata, variables="temp", wts="survey_w")


def test_margins_wts_values_say_what_is_wrong(wine):
    res = OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    with pytest.raises(OrdstatsError, match=r"^wts has 1 missing or infinite values; weights must"):
        res.avg_predictions(wts=np.where(np.arange(len(wine)) == 3, np.nan, 1.0))
    with pytest.raises(OrdstatsError, match=r"^wts has only zeros; weights must be finite"):
        res.avg_predictions(wts=np.zeros(len(wine)))


# -- margins: type="class" in slopes and comparisons (issue 23 walk) -------------------------


@pytest.mark.parametrize("verb", ["avg_slopes", "comparisons"])
def test_class_type_has_no_slopes_or_comparisons(verb):
    wine = ordstats.datasets.load("wine")
    fit = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    with pytest.raises(ordstats.errors.OrdstatsError, match="no comparisons or slopes"):
        getattr(fit, verb)(type="class")


# -- survey designs: the issue 27 walk (text columns, domain conditions, replicate frames) ---


def test_survey_text_weights_are_a_clear_error(wine):
    # before: numpy's "could not convert string to float: 'a'"
    data = _survey_frame(wine).assign(w=lambda d: np.where(np.arange(len(d)) == 2, "a", "2"))
    with pytest.raises(DataError, match=r"^weights must be numbers; the column 'w' has text"):
        ordstats.SurveyDesign(data, weights="w", psu="psu")
    with pytest.raises(DataError, match=r"^weights must be numbers; the column 'w' has text"):
        ordstats.ReplicateDesign(data, repweights=np.ones((len(data), 3)), weights="w")


def test_survey_text_replicate_weights_are_a_clear_error(wine):
    # before: numpy's "could not convert string to float: 'cold'"
    data = _survey_frame(wine)
    with pytest.raises(DataError, match=r"^repweights must be numbers; the column 'temp' has"):
        ordstats.ReplicateDesign(data, repweights=["w", "temp"], weights="w", type="bootstrap")


def test_survey_domain_condition_of_text_is_refused(wine):
    # before: every non-empty string counted as True, a domain of every row
    design = ordstats.SurveyDesign(_survey_frame(wine), weights="w", psu="psu")
    with pytest.raises(DataError, match=r"a domain condition must be True/False per row"):
        design.subset(wine["temp"].astype(str).to_numpy())
    # numbers and missing values count as R's subset: nonzero is in, missing is out
    numeric = np.where(np.arange(len(wine)) < 10, 1.0, np.nan)
    assert int(design.subset(numeric).domain.sum()) == 10


def test_survey_replicate_weight_column_of_zeros_is_an_error(wine):
    # before: that replicate's refit stayed at the full-sample estimates, silently
    data = _survey_frame(wine)
    weights = np.column_stack([np.ones((len(data), 3)), np.zeros(len(data))])
    with pytest.raises(DataError, match=r"replicate 4 \('rep4'\) has no positive weight"):
        ordstats.ReplicateDesign(data, repweights=weights, weights="w", type="bootstrap")


def test_survey_replicate_weights_frame_aligns_on_the_index(wine):
    # before: "the repweights DataFrame must have the data's index" for the same rows reordered
    data = _survey_frame(wine)
    rng = np.random.default_rng(2)
    frame = pd.DataFrame(rng.uniform(1.0, 3.0, (len(data), 4)), index=data.index)
    ordered = ordstats.ReplicateDesign(data, repweights=frame, weights="w", type="bootstrap")
    shuffled = ordstats.ReplicateDesign(
        data, repweights=frame.sample(frac=1.0, random_state=1), weights="w", type="bootstrap"
    )
    np.testing.assert_array_equal(shuffled.repweights, ordered.repweights)
    with pytest.raises(DataError, match=r"repweights DataFrame lacks 1 of the data's index labels"):
        ordstats.ReplicateDesign(data, repweights=frame.iloc[1:], weights="w", type="bootstrap")


# --- Bayesian model language (issue 26 walk): brms' cs() term ---


@pytest.mark.parametrize("family", ["cumulative", "sratio"])
def test_brms_cs_term_points_to_nominal(wine, family):
    # before: "Unable to evaluate factor `cs(contact)`. [ValueError: could not convert
    # string to float: 'no']", which does not say that nominal= is the spelling
    with pytest.raises(FormulaError, match=r"cs\(contact\).*nominal='~ contact'"):
        ordstats.OrdinalModel.from_formula("rating ~ temp + cs(contact)", wine, family=family)


# == bad-input audit across the public API (fuzz walk): fits, results, families ==========


def _wine_with_numeric(wine: pd.DataFrame) -> pd.DataFrame:
    return wine.assign(x=np.cos(np.arange(len(wine), dtype=float)))


@pytest.mark.parametrize("family", ["sratio", "cratio", "acat"])
def test_step_family_nominal_test_with_a_numeric_term(wine, family):
    # before: "ValueError: operands could not be broadcast together with shapes (2,) (3,)":
    # the relaxed refit kept the column moments of the location design it had shrunk
    data = _wine_with_numeric(wine)
    res = OrdinalModel.from_formula("rating ~ temp + contact + x", data, family=family).fit()
    relaxed = OrdinalModel.from_formula(
        "rating ~ temp + contact", data, family=family, nominal="~ x"
    ).fit()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        table = res.nominal_test()
    assert table.loc["x", "logLik"] == pytest.approx(relaxed.llf, abs=1e-6)


@pytest.mark.parametrize(
    "fit",
    [
        lambda model: model.fit_regularized(alpha=0.05),
        lambda model: model.fit_regularized(alpha=0.05, L1_wt=0.0),
        lambda model: model.fit(penalty="firth"),
    ],
    ids=["lasso", "ridge", "firth"],
)
def test_penalised_profile_intervals_are_refused_like_profile(wine, fit):
    # before: conf_int(method="profile") gave the unpenalised fit's profile intervals (around
    # the maximum-likelihood estimates, not the penalised ones), while profile() refused
    res = fit(OrdinalModel.from_formula("rating ~ temp + contact + x", _wine_with_numeric(wine)))
    with pytest.raises(
        SpecificationError,
        match=r"conf_int\(method='profile'\) refits the model without its penalty",
    ):
        res.conf_int(method="profile")


def test_wald_test_of_a_lasso_fit_does_not_blame_a_singular_hessian(wine):
    # before: "not available (singular Hessian)", though the Hessian is fine: L1 gives no SEs
    model = OrdinalModel.from_formula("rating ~ temp + contact + x", _wine_with_numeric(wine))
    res = model.fit_regularized(alpha=0.05)
    with pytest.raises(SpecificationError, match=r"L1 or elastic-net penalty.*ridge penalty"):
        res.wald_test("x = 0")


def test_predict_with_a_factor_given_as_numbers_is_not_silently_wrong(wine):
    # before: judge = [1, 2, 3] (int) for levels '1', '2', '3' predicted P(Y = 1) of about
    # 1.0 for every row, silently: formulaic encoded the numbers as one numeric column
    res = OrdinalModel.from_formula("rating ~ temp + judge", wine).fit()
    rows = wine[["temp", "judge"]].iloc[:3]
    with pytest.raises(
        PredictionError, match=r"'judge' holds int64 values \(1, 2, 3\).*astype\(str\)"
    ):
        res.predict(rows.assign(judge=[1, 2, 3]))
    with pytest.raises(PredictionError, match=r"'temp' holds bool values .*levels 'cold', 'warm'"):
        res.predict(rows.assign(temp=[True, False, True]))


def test_predict_with_numbers_for_a_factor_of_numbers_uses_its_levels(wine):
    # before: the int column was read as a number, not as the levels 1, 2, 3 of the factor
    data = wine.assign(j=wine["judge"].astype(int).astype("category"))
    res = OrdinalModel.from_formula("rating ~ temp + j", data).fit()
    rows = data[["temp", "j"]].iloc[[0, 8, 16]]
    expected = res.predict(rows).to_numpy()
    np.testing.assert_allclose(res.predict(rows.assign(j=[1, 2, 3])).to_numpy(), expected)
    np.testing.assert_allclose(res.predict(rows.assign(j=[1.0, 2.0, 3.0])).to_numpy(), expected)


def test_predict_with_text_or_booleans_for_a_numeric_column(wine):
    # before: "cannot build the design for newdata: Term `x` has generated too many columns
    # compared to specification" (formulaic's words), which does not say what to do
    data = _wine_with_numeric(wine).assign(b=wine["contact"] == "yes")
    res = OrdinalModel.from_formula("rating ~ x + b", data).fit()
    rows = data[["x", "b"]].iloc[:3]
    with pytest.raises(PredictionError, match=r"'x' holds text.*as numbers.*pd\.to_numeric"):
        res.predict(rows.assign(x=rows["x"].astype(str)))
    np.testing.assert_allclose(
        res.predict(rows).to_numpy(), res.predict(rows.assign(b=rows["b"].astype(float))).to_numpy()
    )


@pytest.mark.parametrize(
    "keywords, match",
    [
        ({"check_separation": "no"}, r"check_separation must be True or False, not 'no'"),
        ({"disp": "yes"}, r"disp must be True or False, not 'yes'"),
        ({"disp": 2}, r"disp must be True or False, not 2"),
        ({"disp": 0.0}, r"disp must be True or False, not 0.0"),
        ({"banded": "x"}, r"banded must be True or False, not 'x'"),
        ({"cov_kwds": {"groups": "judge"}}, r"cov_kwds=.*would be ignored.*cov_type"),
    ],
)
def test_fit_switches_and_covariance_keywords_are_checked(wine, keywords, match):
    # before: a string switch was read as True ("no" turned the separation check on) and
    # cov_kwds without a cov_type that reads them were dropped silently (model-based SEs)
    model = OrdinalModel.from_formula("rating ~ temp + contact", wine)
    with pytest.raises(SpecificationError, match=match):
        model.fit(**keywords)


@pytest.mark.parametrize("disp", [0, 1, np.int64(0)])
def test_fit_takes_statsmodels_integer_switches(wine, disp):
    # before: fit(disp=0), the statsmodels idiom, raised "disp must be True or False, not 0"
    model = OrdinalModel.from_formula("rating ~ temp + contact", wine)
    np.testing.assert_allclose(model.fit(disp=disp).params, model.fit().params, rtol=0, atol=0)


def test_mixed_ranef_condvar_must_be_a_boolean(wine):
    # before: condvar="no" returned the conditional variances (a truthy string)
    res = OrdinalModel.from_formula("rating ~ temp + (1|judge)", wine).fit()
    with pytest.raises(SpecificationError, match=r"condvar must be True or False, not 'no'"):
        res.ranef(condvar="no")


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda m: m.fit_regularized(alpha=0.1, tol=-1), r"tol must be a positive number"),
        (lambda m: m.fit_regularized(alpha=0.1, tol="1e-6"), r"tol must be a positive number"),
        (lambda m: m.fit_regularized(alpha=0.1, maxiter=-1), r"maxiter must be a non-negative"),
        (lambda m: m.path(alphas=[0.1, 0.01], tol=0.0), r"tol must be a positive number"),
        (lambda m: m.path(alphas=[0.1, 0.01], tol=np.inf), r"tol must be a positive number"),
    ],
)
def test_penalised_fit_tolerances_are_checked(wine, call, match):
    # before: tol=-1 ran all 200 iterations and warned that the KKT violation 1.5e-16 was
    # above "tol = -1"; tol=inf stopped at the start
    with pytest.raises(SpecificationError, match=match):
        call(OrdinalModel.from_formula("rating ~ temp + contact", wine))


def test_datagrid_of_something_that_is_not_a_fit(wine):
    # before: AttributeError: 'int' object has no attribute 'margins_data'
    with pytest.raises(OrdstatsError, match=r"must be a fitted ordstats model .*got OrdinalModel"):
        ordstats.datagrid(OrdinalModel.from_formula("rating ~ temp", wine), temp="cold")
    with pytest.raises(OrdstatsError, match=r"pass a DataFrame as newdata="):
        ordstats.datagrid(wine, temp="cold")


def test_exog_frame_with_a_repeated_column_name_says_so(wine):
    # before: "exog columns 'x', 'x' are not numeric", though both are numbers
    exog = pd.concat(
        [_wine_with_numeric(wine)[["x"]], wine[["response"]].rename(columns={"response": "x"})],
        axis=1,
    )
    with pytest.raises(DataError, match=r"exog has more than one column named 'x'; rename"):
        OrdinalModel(wine["rating"], exog)


def test_a_parameter_series_is_matched_by_label(wine):
    # before: model.loglike(res.params.iloc[::-1]) read the values by position: -inf, silently
    res = OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    model = res.model
    assert model.loglike(res.params.iloc[::-1]) == pytest.approx(res.llf, abs=1e-10)
    assert model.loglike(res.params.reset_index(drop=True)) == pytest.approx(res.llf, abs=1e-10)
    with pytest.raises(SpecificationError, match=r"lacks the parameter\(s\) 'temp\[T.warm\]'"):
        model.score(res.params.rename({"temp[T.warm]": "tempwarm"}))


def test_start_values_where_the_likelihood_is_not_finite_say_what_to_give(wine):
    # before: "the objective is not finite at the starting values", without what to do
    model = OrdinalModel.from_formula("rating ~ temp + contact", wine)
    with pytest.raises(OrdstatsError, match=r"give finite start_params with increasing thresholds"):
        model.fit(start_params=[np.nan] * 6)


def test_loading_a_file_that_is_not_a_pickle(tmp_path):
    # before: _pickle.UnpicklingError: invalid load key, 'r'.
    path = tmp_path / "results.pkl"
    path.write_text("rating,temp\n1,cold\n")
    with pytest.raises(OrdstatsError, match=r"is not a saved ordstats result .*res\.save\(path\)"):
        ordstats.load(path)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda mode: mode.posterior(draws=20, seed="a"), r"seed must be None or a non-negative"),
        (lambda mode: mode.posterior(draws=20, chains=0), r"chains must be a positive whole"),
        (lambda mode: mode.posterior(draws=20).resample(5, seed=1.5), r"seed must be None"),
        (lambda mode: mode.posterior(draws=20).summary(probs="a"), r"probs must be numbers in"),
    ],
)
def test_bayes_seed_chains_and_probs_are_checked(wine_bayes_model, call, match):
    # before: numpy's "SeedSequence expects int or sequence of ints", chains=0 ignored for
    # the Laplace draws, and "could not convert string to float: 'a'"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ordstats.OrdstatsWarning)
        mode = wine_bayes_model.fit(prior="default")
        with pytest.raises(SpecificationError, match=match):
            call(mode)


def test_survival_times_that_are_not_numbers(wine):
    # before: ValueError: could not convert string to float: 'a'
    res = OrdinalModel.from_formula("rating ~ temp", wine).fit()
    with pytest.raises(OrdstatsError, match=r"times must be one or more finite numbers"):
        res.survival(wine[["temp"]].iloc[:2], times="a")


@pytest.mark.parametrize(
    "keywords, match",
    [
        ({"title": 3}, r"title must be a string; got 3"),
        ({"xname": 3}, r"xname must be a list of 2 names"),
        ({"xname": "ab"}, r"xname must be a list of 2 names"),
    ],
)
def test_summary_labels_of_the_wrong_type(wine, keywords, match):
    # before: AttributeError: 'int' object has no attribute 'center' (from statsmodels' table
    # code) for title=3, TypeError: object of type 'int' has no len() for xname=3
    res = OrdinalModel.from_formula(
        "contact ~ temp", wine.assign(contact=pd.Categorical(wine["contact"], ordered=True))
    ).fit()
    with pytest.raises(OrdstatsError, match=match):
        res.summary(**keywords)


def test_cli_compare_of_one_formula_twice_gives_r_s_row_without_a_test(capsys):
    # before: "ordstats: error: names must be 2 distinct labels, one per model" (names the
    # user never gave), then the refusal of two models of the same size; R's anova(m, m)
    # gives LR.stat 0 on df 0 with p NA
    from ordstats.cli import main

    assert main(["compare", "rating ~ temp", "rating ~ temp", "--data", "wine"]) == 0
    out = capsys.readouterr().out
    assert "rating ~ temp #2" in out
    assert "LR = 0.0000 on 0 df, p-value = NA" in out and "no test" in out


def test_a_predictor_of_numbers_stored_as_objects_warns(wine):
    # before: the column became a factor with 72 levels and the only message was a
    # separation warning listing 'o[T.-0.99]', 'o[T.-0.98]', ...
    data = _wine_with_numeric(wine)
    data["o"] = data["x"].astype(object)
    with (
        warnings.catch_warnings(),
        pytest.warns(
            SpecificationWarning,
            match=r"'o' holds numbers stored as objects.*72 levels.*pd\.to_numeric",
        ),
    ):
        warnings.simplefilter("ignore", CollinearityWarning)  # 72 dummies: some are aliased
        OrdinalModel.from_formula("rating ~ temp + o", data)
    codes = wine.assign(j=wine["judge"].astype(int).astype(object))
    with warnings.catch_warnings():
        warnings.simplefilter("error", SpecificationWarning)
        OrdinalModel.from_formula("rating ~ temp + j", codes)  # whole numbers: codes, no warning


@pytest.mark.parametrize(
    "call, what",
    [
        (lambda m: m.fit(penalty="firth"), r"penalised fits \(penalty=\)"),
        (lambda m: m.fit(prior="default"), r"Bayesian fits \(prior=\)"),
        (lambda m: m.fit_regularized(alpha=0.1), r"penalised fits \(fit_regularized, path, cv\)"),
        (lambda m: m.path(alphas=[0.1, 0.01]), r"penalised fits \(fit_regularized, path, cv\)"),
        (lambda m: m.cv(alphas=[0.1, 0.01]), r"penalised fits \(fit_regularized, path, cv\)"),
    ],
)
def test_penalised_and_bayesian_fits_refuse_a_survey_design(wine, call, what):
    # before: they returned results with nobs 144 (the sampling weights read as frequency
    # weights) and standard errors that were not design-based, silently
    design = ordstats.SurveyDesign(_survey_frame(wine), weights="w")
    model = OrdinalModel.from_formula("rating ~ temp + contact", design=design)
    with pytest.raises(SpecificationError, match=what + r" do not support survey designs"):
        call(model)


def test_a_bayesian_fit_refuses_a_covariance_type(wine_bayes_model):
    # before: fit(prior="default", cov_type="robust") returned the posterior mode and
    # dropped the request for sandwich standard errors silently
    with pytest.raises(
        SpecificationError, match=r"prior=\) describes its uncertainty by the posterior"
    ):
        wine_bayes_model.fit(prior="default", cov_type="robust")


def test_ordinal_metrics_of_probabilities_that_are_not_a_matrix():
    # before: "y_true has 2 distinct values but y_prob has -1 columns"
    with pytest.raises(DataError, match=r"y_prob must be a matrix .* got shape \(2,\)"):
        ordstats.metrics.ordinal_log_loss([1, 2], np.array([0.2, 0.8]))
    with pytest.raises(DataError, match=r"y_prob must be numbers"):
        ordstats.metrics.ranked_probability_score([1, 2], "ab")


# subset and contrasts


@pytest.mark.parametrize(
    ("subset", "message"),
    [
        ([True, False, True], r"subset has 3 values but the data have 72 rows"),
        (pd.Series(True, index=range(100, 172)), r"index of subset does not hold the same labels"),
        (np.arange(72), r"subset must select rows with True/False values; the array has dtype int"),
        ("nosuch > 1", r"name 'nosuch' is not defined; the query may use the data's columns"),
        ("temp == 'hot'", r"subset selects no row of the data"),
        ("temp ==", r"cannot be evaluated on the data"),
        (lambda d: d["nosuch"] > 1, r"the function given failed on the data: KeyError"),
    ],
)
def test_a_subset_that_does_not_select_rows_of_the_data(wine, subset, message):
    with pytest.raises(DataError, match=message):
        OrdinalModel.from_formula("rating ~ temp", wine, subset=subset)


def test_a_subset_query_on_a_dotted_column_says_to_use_backticks():
    frame = pd.DataFrame({"y": [1, 2, 3, 1, 2, 3], "W.Hnd": ["a", "b"] * 3})
    with pytest.raises(DataError, match=r"needs backticks \(`W.Hnd`\)"):
        OrdinalModel.from_formula("y ~ 1", frame, subset="W.Hnd == 'a'")


def test_a_subset_of_files_that_may_need_every_row_is_refused(wine, tmp_path):
    # row-wise queries subset files (tests/test_subset_chunks.py); a function or a mean cannot
    path = tmp_path / "wine.parquet"
    wine.to_parquet(path)
    with pytest.raises(SpecificationError, match=r"files are subset chunk by chunk.*got function"):
        OrdinalModel.from_formula("rating ~ temp", str(path), subset=lambda d: d.temp == "warm")
    with pytest.raises(SpecificationError, match=r"calls mean, which may read all rows at once"):
        OrdinalModel.from_formula("rating ~ temp", str(path), subset="judge > judge.mean()")
    with pytest.raises(DataError, match=r"name 'nosuch' is not defined"):
        OrdinalModel.from_formula("rating ~ temp", str(path), subset="nosuch > 1")


@pytest.mark.parametrize(
    ("contrasts", "error", "message"),
    [
        ({"judge": "contr.foo"}, SpecificationError, r"'contr.foo' is not one of R's contrasts"),
        (["contr.sum"], SpecificationError, r"contrasts must be a dict .* got list"),
        ({"judge": np.ones((3, 2))}, SpecificationError, r"matrix has 3 rows but the factor has 9"),
        ({"judge": [["a"]]}, SpecificationError, r"a contrast name or a numeric matrix"),
        ({"judge": np.ones(9)}, SpecificationError, r"one row per level and at least one column"),
        (
            {"temp": pd.DataFrame({"c": [1.0, -1.0]}, index=["cold", "hot"])},
            SpecificationError,
            r"lacks the level\(s\) warm",
        ),
        ({"judge": "contr.sum", "x": "contr.sum"}, DataError, r"'x' is numeric"),
    ],
)
def test_contrasts_that_r_would_refuse(wine, contrasts, error, message):
    data = wine.assign(x=np.arange(len(wine), dtype=float))
    with pytest.raises(error, match=message):
        OrdinalModel.from_formula("rating ~ temp + judge + x", data, contrasts=contrasts)


def test_contrasts_of_a_column_no_formula_uses_are_ignored_with_a_warning(wine):
    # R: "variable 'contact' is absent: its contrasts will be ignored"
    with pytest.warns(SpecificationWarning, match=r"'contact', which is not used"):
        OrdinalModel.from_formula("rating ~ temp", wine, contrasts={"contact": "contr.sum"})


@pytest.mark.parametrize("role", ["weights", "offset"])
def test_an_infinite_weight_or_offset_is_refused_as_r_refuses_it(wine, role):
    # before: the row was dropped as a missing value with a MissingDataWarning; R's clm
    # stops ("Non-finite log-likelihood at starting value"), and NA is still dropped
    values = np.ones(len(wine))
    values[[3, 7]] = [np.inf, -np.inf]
    with pytest.raises(DataError, match=rf"{role} must be finite; 2 value\(s\) are infinite"):
        OrdinalModel.from_formula("rating ~ temp", wine, **{role: values})
    with pytest.raises(DataError, match=rf"{role} must be finite; .*\(rows 3, 7\)"):
        OrdinalModel(wine["rating"], (wine["temp"] == "warm").astype(float), **{role: values})
    with pytest.raises(DataError, match=rf"{role} must be finite"):
        OrdinalModel.from_formula(
            "rating ~ temp", wine.assign(v=values), chunksize=20, **{role: "v"}
        )


def test_a_subset_with_a_survey_design_points_to_its_domain_subset(wine):
    design = ordstats.SurveyDesign(wine.assign(w=1.0), weights="w")
    with pytest.raises(SpecificationError, match=r"for a survey domain use design.subset"):
        OrdinalModel.from_formula("rating ~ temp", design=design, subset="temp == 'warm'")


def test_subset_and_contrasts_with_group_thresholds_say_what_to_do(wine):
    with pytest.raises(SpecificationError, match=r"not available with thres\(gr = \.\.\.\)"):
        OrdinalModel.from_formula("rating | thres(gr = contact) ~ temp", wine, subset="judge != 1")


# -- the engine matrix (tests/estimation/test_engine_matrix.py): fits without their rows ------


def test_a_spread_contrast_of_new_rows_without_the_fits_rows_says_what_to_give(wine):
    # before: a pickled fit (or one after remove_data()) took the SD of newdata's column for
    # the "sd" contrast and newdata's levels for a factor's, silently
    import pickle

    new = wine[wine["contact"] == "no"].iloc[:3].assign(z=[0.1, 0.2, 0.4])
    fit = ordstats.OrdinalModel.from_formula(
        "rating ~ temp + contact + z", wine.assign(z=np.arange(len(wine)) / 10.0)
    ).fit()
    without = pickle.loads(pickle.dumps(fit))
    assert set(new["contact"]) == {"no"}  # the "yes - no" contrast still comes from the fit
    contrasts = without.comparisons(new, variables="contact")["contrast"].astype(str)
    assert list(contrasts) == ["yes - no"] * (3 * 5)  # 3 rows x 5 levels of the response
    with pytest.raises(
        OrdstatsError,
        match=r"contrasts \{'z': 'sd'\} are statistics of a column over the estimation rows.*"
        r"give each as a number \(a gap\) or as \[lo, hi\]",
    ):
        without.comparisons(new, variables={"z": "sd"})


# -- results5: emmeans of fits read in chunks, get_prediction, clmm drop1/add1 -----------------


def test_emmeans_of_a_pickled_chunked_fit_says_to_pass_data(wine):
    import pickle

    chunked = OrdinalModel.from_formula("rating ~ temp + contact", wine, chunksize=10).fit()
    unpickled = pickle.loads(pickle.dumps(chunked))
    with pytest.raises(OrdstatsError, match=r"no longer has \(it was pickled.*data=<DataFrame>"):
        unpickled.emmeans("temp")
    assert len(unpickled.emmeans("temp", data=wine).values) == 2
    chunked.joint_tests()  # the grid's summary, once built, travels with the fit
    assert len(pickle.loads(pickle.dumps(chunked)).emmeans("temp").values) == 2


def test_emmeans_of_a_chunked_fit_checks_cov_reduce(wine):
    chunked = OrdinalModel.from_formula(
        "rating ~ temp + x", wine.assign(x=np.arange(len(wine)) / 7.0), chunksize=10
    ).fit()
    with pytest.raises(OrdstatsError, match=r"cov_reduce must be 'mean', 'median' or a function"):
        chunked.emmeans("temp", cov_reduce="mode")


def test_emmeans_refuses_an_unknown_cov_reduce_without_numeric_predictors(wine):
    # it was refused only when a numeric predictor needed it, and ignored otherwise
    res = OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    with pytest.raises(OrdstatsError, match=r"got 'range'; for R's cov.reduce = range pass lambda"):
        res.emmeans("temp", cov_reduce="range")


def test_drop1_and_add1_of_a_clmm_say_what_they_take(wine):
    res = OrdinalModel.from_formula("rating ~ temp + contact + (1|judge)", wine).fit()
    with pytest.raises(SpecificationError, match=r"test='LR'.*'none'.*'Chisq'"):
        res.drop1(test="LR")
    with pytest.raises(SpecificationError, match=r"R's add1 stops for a clmm too.*lr_test"):
        res.add1("~ . + bottle")


@pytest.mark.parametrize(
    ("verb", "given", "meant"),
    [
        ("predictions", "bye", "'by'"),
        ("avg_predictions", "by_", "'by'"),
        ("comparisons", "variable", "'variables'"),
        ("avg_comparisons", "comparsion", "'comparison'"),
        ("slopes", "variabels", "'variables'"),
        ("avg_slopes", "slop", "'slope'"),
    ],
)
def test_a_mistyped_keyword_of_a_margins_verb_names_the_verb_and_the_closest(
    wine, verb, given, meant
):
    """Before: Python's TypeError naming the keyword alone, and for the avg_ verbs
    another function (``predictions() got an unexpected keyword argument 'by_'``)."""
    res = OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    with pytest.raises(SpecificationError) as caught:
        getattr(res, verb)(**{given: "temp"})
    assert str(caught.value).startswith(
        f"{verb}() got unknown argument(s) {given!r} (did you mean {meant}"
    )
    assert "; it takes by, " in str(caught.value)


@pytest.mark.parametrize("chunksize", [None, 20])
@pytest.mark.parametrize(
    ("formula", "options", "term"),
    [
        ("rating ~ temp + contact", {}, "the term(s) 'temp'"),
        ("rating ~ temp:contact + contact", {}, "the term(s) 'temp:contact'"),
        ("rating ~ contact", {"nominal": "~ temp"}, "the nominal term(s) 'temp'"),
    ],
)
def test_a_factor_of_one_level_is_not_dropped_silently(wine, chunksize, formula, options, term):
    """Before: the term vanished from the model without a word (R's clm stops: contrasts
    can be applied only to factors with 2 or more levels)."""
    data = wine.assign(temp="cold")
    extra = {} if chunksize is None else {"chunksize": chunksize}
    with pytest.warns(CollinearityWarning) as caught:
        res = OrdinalModel.from_formula(formula, data, **options, **extra).fit()
    messages = [str(w.message) for w in caught if issubclass(w.category, CollinearityWarning)]
    assert any(
        m.startswith(term) and "single level in the rows used ('temp' ('cold'))" in m
        for m in messages
    ), messages
    assert not any("temp" in name for name in res.params.index)


@pytest.mark.parametrize(
    "call",
    [
        lambda m, d: m.fit_regularized(alpha=0.1, standardize="no"),
        lambda m, d: m.path(n_alphas=3, standardize="no"),
        lambda m, d: ordstats.compare_links(
            "rating ~ temp", d, ["logit", "probit"], nested_tests="no"
        ),
        lambda m, d: ordstats.ReplicateDesign(d, repweights="^rep", weights="w", mse="no"),
        lambda m, d: ordstats.ReplicateDesign(
            d, repweights="^rep", weights="w", combined_weights="no"
        ),
        lambda m, d: m.fit(prior="default").posterior(50, adapt="no"),
    ],
)
def test_a_flag_given_as_text_is_refused(wine, call):
    """Before: any text was truthy, so "no" meant True (standardize="no" gave exactly
    the standardize=True estimates)."""
    model = OrdinalModel.from_formula("rating ~ temp + contact", wine)
    rng = np.random.default_rng(0)
    replicates = {f"rep{k}": rng.uniform(0.5, 1.5, len(wine)) for k in range(4)}
    data = wine.assign(w=1.0, **replicates)
    with pytest.raises(SpecificationError, match=r"must be True or False, not 'no'"):
        call(model, data)


@pytest.fixture(scope="module")
def survey_rows(wine):
    rng = np.random.default_rng(1)
    replicates = {f"rep{k}": rng.uniform(0.5, 1.5, len(wine)) for k in range(8)}
    return wine.assign(w=rng.uniform(1.0, 3.0, len(wine)), cl=np.arange(72) % 9, **replicates)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"type": "Fay", "rho": "0.3"}, r"rho must be a number, in \[0, 1\); got '0.3'"),
        ({"type": "Fay", "rho": [0.3]}, r"rho must be a number"),
        ({"type": "bootstrap", "scale": "1"}, r"scale must be a number, positive; got '1'"),
        ({"type": "bootstrap", "scale": [1, 2]}, r"scale must be a number"),
        ({"type": "JKn", "rscales": ["a"] * 8}, r"rscales must be numbers, one per replicate"),
        ({"type": "JKn", "rscales": -np.ones(8)}, r"rscales must be non-negative"),
        ({"type": "JKn", "rscales": np.zeros(8)}, r"one at least positive"),
        ({"repweights": "["}, r"repweights '\[' is not a valid regular expression"),
    ],
)
def test_replicate_design_arguments_are_checked(survey_rows, options, message):
    """Before: TypeErrors from comparisons and numpy, re.error, or (negative or zero
    rscales) a design whose every standard error was NaN."""
    arguments = {"repweights": "^rep", "weights": "w", **options}
    with pytest.raises(SpecificationError, match=message):
        ordstats.ReplicateDesign(survey_rows, **arguments)


def test_replicate_design_says_brr_ignores_rho(survey_rows):
    with pytest.warns(ordstats.errors.OrdstatsWarning, match=r"does not use rho="):
        ordstats.ReplicateDesign(survey_rows, repweights="^rep", weights="w", type="BRR", rho=0.3)


@pytest.mark.parametrize("weights", ["series", "list"])
def test_survey_design_weights_must_name_a_column(survey_rows, weights):
    """Before: pandas' TypeError (unhashable type)."""
    value = survey_rows["w"] if weights == "series" else ["w"]
    with pytest.raises(SpecificationError, match=r"weights must be the name of a column"):
        ordstats.SurveyDesign(survey_rows, weights=value)


@pytest.mark.parametrize("terms", [[], 5, [1]])
@pytest.mark.parametrize("test", ["reg_term_test", "rao_scott_lrt"])
def test_survey_term_tests_check_their_terms(survey_rows, test, terms):
    """Before: scipy's TypeError, 'int' object is not iterable, or ZeroDivisionError."""
    design = ordstats.SurveyDesign(survey_rows, weights="w", psu="cl")
    res = OrdinalModel.from_formula("rating ~ temp + contact", design=design).fit()
    with pytest.raises(SpecificationError, match=r"terms must be a term's label or a non-empty"):
        getattr(res, test)(terms)


def _wine_with_holes(wine):
    holes = wine.assign(x=np.arange(72.0))
    holes.loc[[3, 10, 40], "x"] = np.nan
    return holes


@pytest.mark.parametrize(
    "build",
    [
        # one value per row of a subset, in reversed order
        lambda w, h: OrdinalModel.from_formula(
            "rating ~ tt",
            w,
            subset='contact == "yes"',
            context={"tt": w["temp"][w.contact == "yes"].iloc[::-1]},
        ),
        # one value per complete row (the caller's scope), as a Series and as an array
        lambda w, h: OrdinalModel.from_formula(
            "rating ~ tt + x", h, context={"tt": w["temp"].drop([3, 10, 40]).iloc[::-1]}
        ),
        lambda w, h: OrdinalModel.from_formula(
            "rating ~ tt + x", h, context={"tt": w["temp"].drop([3, 10, 40]).to_numpy()}
        ),
        lambda w, h: OrdinalModel.from_formula(
            "rating ~ x", h, nominal="~ tt", context={"tt": w["temp"].drop([3, 10, 40])}
        ),
        lambda w, h: OrdinalModel.from_formula(
            "rating ~ tt + x + (1|judge)", h, context={"tt": w["temp"].drop([3, 10, 40])}
        ),
        # rows a random term's grouping column leaves out
        lambda w, h: OrdinalModel.from_formula(
            "rating ~ tt + (1|judge)",
            w.assign(judge=w["judge"].astype(object).where(h["x"].notna())),
            context={"tt": w["temp"].drop([3, 10, 40])},
        ),
    ],
)
def test_caller_values_of_the_rows_used_are_refused_not_paired_by_position(wine, build):
    """Before: formulaic paired them with the rows used by position: temp's coefficient
    came out with the opposite sign (+2.80 against -2.80), or 2.73 against -0.51 (an
    index-alignment audit). R's model.frame stops: variable lengths differ."""
    with pytest.raises(DataError, match=r"'tt' \((36|69) values\) from the calling scope"):
        build(wine, _wine_with_holes(wine))


def test_caller_values_of_every_row_are_still_aligned_and_levels_lists_still_work(wine):
    holes = _wine_with_holes(wine)
    with pytest.warns(MissingDataWarning):
        expected = OrdinalModel.from_formula("rating ~ temp + x", holes).fit().params
    reversed_temp = wine["temp"].iloc[::-1]
    with pytest.warns(MissingDataWarning):
        got = OrdinalModel.from_formula("rating ~ tt + x", holes, context={"tt": reversed_temp})
    np.testing.assert_allclose(got.fit().params.to_numpy(), expected.to_numpy(), rtol=1e-10)
    with pytest.warns(MissingDataWarning):
        levels = OrdinalModel.from_formula(
            "rating ~ C(temp, levels=lv) + x", holes, context={"lv": ["warm", "cold"]}
        )
    assert levels.fit().params.iloc[4] == pytest.approx(-expected.iloc[4], rel=1e-8)


def test_a_survey_domain_condition_is_paired_by_label(survey_rows):
    """Before: labels absent from the condition were read as outside the domain, silently
    (a different fit), and labels of another kind gave "the domain has no rows"."""
    design = ordstats.SurveyDesign(survey_rows, weights="w", psu="cl")
    warm = survey_rows["contact"] == "yes"
    fit = OrdinalModel.from_formula("rating ~ temp", design=design.subset(warm)).fit()
    reordered = design.subset(warm.iloc[::-1])
    again = OrdinalModel.from_formula("rating ~ temp", design=reordered).fit()
    np.testing.assert_allclose(again.params.to_numpy(), fit.params.to_numpy(), rtol=1e-12)
    for condition in (warm.drop([4, 5]), warm.set_axis(survey_rows.index.astype(str))):
        with pytest.raises(DataError, match=r"the index of the domain condition does not hold"):
            design.subset(condition)


def test_labelled_constraint_and_hypothesis_matrices_are_paired_by_name(wine):
    """Before: read by position whatever their labels, so a matrix whose labels were in
    another order tested another parameter (1|2 instead of contact), silently."""
    res = OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    names = list(res.params.index)
    contact = res.params["contact[T.yes]"]
    picked = pd.DataFrame([[0, 0, 0, 0, 0, 1]], columns=names)[names[::-1]]
    assert res.t_test(picked).summary_frame()["coef"].iloc[0] == pytest.approx(contact)
    some = pd.DataFrame([[1.0]], columns=["contact[T.yes]"])  # the others get zeros
    assert res.t_test(some).summary_frame()["coef"].iloc[0] == pytest.approx(contact)
    column = pd.DataFrame(np.eye(6)[:, [5]], index=names).iloc[::-1]
    assert res.hypotheses(column)["estimate"].iloc[0] == pytest.approx(contact)
    # the default labels still pair by position; other labels are refused
    assert res.t_test(np.eye(6)[[5]]).summary_frame()["coef"].iloc[0] == pytest.approx(contact)
    with pytest.raises(SpecificationError, match=r"column labels \('tmp', ...\) are not parameter"):
        res.wald_test(pd.DataFrame([[1.0]], columns=["tmp"]))
    with pytest.raises(OrdstatsError, match=r"row labels \('x', ...\) are not the estimates'"):
        res.hypotheses(pd.DataFrame({"h": [1.0]}, index=["x"]))


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda res, d: res.get_prediction(d), "newdata"),
        (lambda res, d: res.avg_predictions(d), "newdata"),
        (lambda res, d: res.comparisons(d, variables="temp"), "newdata"),
        (lambda res, d: res.emmeans("temp", data=d), "data"),
        (lambda res, d: ordstats.datagrid(res, newdata=d), "newdata"),
    ],
)
def test_a_dask_dataframe_where_rows_in_memory_are_needed_is_named(wine, call, name):
    """Before: 'newdata lacks the column(s) ... used by the model' (it has them), or
    'newdata must be a pandas DataFrame; got DataFrame'."""
    dd = pytest.importorskip("dask.dataframe")
    res = OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    with pytest.raises(OrdstatsError, match=rf"{name} is a Dask DataFrame: .* {name}\.compute\(\)"):
        call(res, dd.from_pandas(wine, npartitions=3))


def test_clmm_penalised_fits_and_bad_params_say_why(wine):
    """Before: AttributeError 'OrdinalMixedModel' object has no attribute 'fit_regularized',
    and numpy's 'could not convert string to float' from loglike/score."""
    model = OrdinalModel.from_formula("rating ~ temp + contact + (1|judge)", wine)
    for name in ("fit_regularized", "path", "cv"):
        with pytest.raises(SpecificationError, match=rf"{name}\(\) is not available .* random"):
            getattr(model, name)
        assert not hasattr(model, name)
    for method in (model.loglike, model.score):
        with pytest.raises(SpecificationError, match=r"params must be 7 numbers \(1\|2, "):
            method(["a"] * 7)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda m: m.path(n_alphas=np.nan), r"n_alphas must be a whole number from 1 to"),
        (lambda m: m.path(n_alphas=2.7), r"n_alphas must be a whole number"),
        (lambda m: m.path(n_alphas="5"), r"n_alphas must be a whole number"),
        (lambda m: m.path(n_alphas=10**9), r"n_alphas must be a whole number from 1 to 10000"),
        (lambda m: m.path(n_alphas=5, eps=0), r"eps must be a number in \(0, 1\)"),
        (lambda m: m.path(n_alphas=5, eps="a"), r"eps must be a number in \(0, 1\)"),
        (lambda m: m.path(n_alphas=5, eps=2.0), r"eps must be a number in \(0, 1\)"),
        (lambda m: m.cv(n_alphas=5, cv=3, seed=-1), r"seed must be None or a non-negative"),
        (lambda m: m.cv(n_alphas=5, cv=3, seed=1.5), r"seed must be None or a non-negative"),
        (lambda m: m.cv(n_alphas=5, cv=73), r"cv=73 folds for 72 rows"),
        (
            lambda m: m.cv(n_alphas=5, cv=[(np.arange(72), np.arange(72))] * 2),
            r"cv split 0: 72 row\(s\) are in both its train and test rows",
        ),
    ],
)
def test_penalised_path_and_cv_arguments_are_checked(wine, call, message):
    """Before: numpy errors (NaN to integer, a geometric sequence with zero, a negative
    seed), 2.7 alphas read as 2, 10^9 alphas run for ever, alphas above alpha_max from
    eps=2, 'sample_weight sums to zero' for too many folds, and an in-sample CV loss for
    overlapping folds."""
    model = OrdinalModel.from_formula("rating ~ temp + contact", wine)
    with pytest.raises(SpecificationError, match=message):
        call(model)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (
            lambda w: ordstats.simulate_ratings(10**9, 10**9, density=1.0),
            SpecificationError,
            r"about 1e\+18 rated cells; simulate at most 100,000,000",
        ),
        (
            lambda w: ordstats.simulate_ratings(5, 4, link="aranda-ordaz"),
            SpecificationError,
            r"aranda-ordaz link has a shape parameter",
        ),
        (
            lambda w: ordstats.simulate_ratings(5, 4, seed=0).true_proba(np.array([0]), [99]),
            SpecificationError,
            r"col must be whole-number positions from 0 to 3",
        ),
        (
            lambda w: ordstats.simulate_ratings(5, 4, seed=0).true_proba([0, 1], [1]),
            SpecificationError,
            r"row and col must pair one to one",
        ),
        (
            lambda w: ordstats.OrdinalFactorization(
                pd.DataFrame({"row": [0, 0, 1, 1], "col": [0, 1, 0, 1], "rating": [1, 2, 1, 2]}),
                row="col",
            ),
            SpecificationError,
            r"row= and col= both name the column 'col'",
        ),
        (
            lambda w: OrdinalModel.from_formula("rating ~ temp", w).fit(
                prior=ordstats.prior("normal(0, 1e-200)")
            ),
            SpecificationError,
            r"sigma must be between 1e-100 and 1e\+100 .* put it in an offset",
        ),
        (
            lambda w: (
                OrdinalModel.from_formula("rating ~ temp", w).fit(prior="default").posterior(1)
            ),
            SpecificationError,
            r"draws must be at least 10",
        ),
    ],
)
def test_simulation_factorisation_and_bayes_arguments_are_checked(wine, call, error, message):
    """Before: a run for ever (10^18 cells), flexible links accepted, numpy's IndexError or
    pandas' 'identically-labeled Series', a ZeroDivisionError from sigma squared, and a
    posterior of one draw (SD 0, k-hat -inf) without a word."""
    with pytest.raises(error, match=message):
        call(wine)


def test_lonely_psu_average_with_no_stratum_to_average_over_warns(survey_rows):
    """Before: every SE NaN with numpy's RuntimeWarnings only (R gives NaN too)."""
    design = ordstats.SurveyDesign(
        survey_rows, weights="w", strata="cl", psu="cl", nest=True, lonely_psu="average"
    )
    with pytest.warns(ordstats.errors.OrdstatsWarning, match=r"no stratum to average over"):
        res = OrdinalModel.from_formula("rating ~ temp + contact", design=design).fit()
    assert np.isnan(res.bse).all()


def test_a_factor_level_without_rows_is_named_in_the_aliasing_warning(wine):
    """R drops unused levels before coding (no coefficient, no message); here the zero
    column is dropped as aliased, and the warning said only that it "is a linear
    combination of the thresholds (intercept) or earlier columns"."""
    data = wine.assign(temp=wine["temp"].cat.add_categories("hot"))
    with pytest.warns(
        CollinearityWarning, match=r"no row has the factor level\(s\) 'hot' of 'temp'"
    ):
        res = OrdinalModel.from_formula("rating ~ temp + contact", data).fit()
    plain = OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    np.testing.assert_allclose(res.params, plain.params, rtol=1e-10)


@pytest.mark.parametrize("chunksize", [None, 20])
def test_a_category_without_rows_is_not_predicted_and_spoils_no_other_mean(wine, chunksize):
    """Before: chunked predict() gave the 'hot' row the 'cold' probabilities (in memory:
    NaN), and in memory emmeans() was NaN for every level, not only for 'hot'."""
    data = wine.assign(temp=wine["temp"].cat.add_categories("hot"))
    plain = OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    with pytest.warns(CollinearityWarning):
        res = OrdinalModel.from_formula("rating ~ temp + contact", data, chunksize=chunksize).fit()
    rows = pd.DataFrame(
        {"temp": pd.Categorical(["hot", "cold"], categories=["cold", "warm", "hot"]),
         "contact": ["no", "no"]}
    )  # fmt: skip
    with pytest.warns(PredictionWarning, match=r"'hot' of 'temp', which had no rows"):
        predicted = res.predict(rows)
    assert predicted.iloc[0].isna().all() and predicted.iloc[1].notna().all()
    with pytest.warns(PredictionWarning):
        means = res.emmeans("temp").summary_frame().set_index("temp")["emmean"]
    expected = plain.emmeans("temp").summary_frame().set_index("temp")["emmean"]
    np.testing.assert_allclose(means[["cold", "warm"]], expected[["cold", "warm"]], rtol=1e-8)
    assert np.isnan(means["hot"])


@pytest.mark.parametrize("chunksize", [None, 20])
def test_arrow_strings_decimals_periods_and_spaced_names(wine, chunksize):
    """Before: Arrow-backed text predictors failed in memory ('could not convert string to
    float'); Decimal objects became a 69-level factor without a word; a Period column
    was a TypeError; a backticked name with a space broke every margins verb."""
    pa = pytest.importorskip("pyarrow")
    extra = {} if chunksize is None else {"chunksize": chunksize}
    plain = OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    arrow = wine.assign(temp=wine["temp"].astype(str).astype(pd.ArrowDtype(pa.string())))
    res = OrdinalModel.from_formula("rating ~ temp + contact", arrow, **extra).fit()
    np.testing.assert_allclose(res.params.to_numpy(), plain.params.to_numpy(), rtol=1e-10)
    x = np.random.default_rng(1).normal(size=len(wine))
    decimals = wine.assign(x=[decimal.Decimal(str(round(v, 3))) for v in x])
    with pytest.warns(SpecificationWarning, match=r"'x' holds numbers stored as objects"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CollinearityWarning)
            OrdinalModel.from_formula("rating ~ temp + x", decimals, **extra)
    periods = wine.assign(p=pd.period_range("2020", periods=len(wine), freq="D"))
    with pytest.raises(DataError, match=r"'p' holds periods \(period\[D\]\)"):
        OrdinalModel.from_formula("rating ~ temp + p", periods, **extra)
    spaced = wine.rename(columns={"temp": "my temp"})
    res = OrdinalModel.from_formula("rating ~ `my temp` + contact", spaced, **extra).fit()
    assert res.avg_predictions().shape[0] == 5
    assert res.emmeans("contact").summary_frame().shape[0] == 2


def test_a_boolean_predictor_s_margins_are_the_same_chunked(wine):
    """Before: chunked avg_slopes() labelled b's rows 'warm - cold', gave x a wrong value
    and dropped temp; avg_comparisons(variables='b') said there were no predictors."""
    data = wine.assign(x=np.random.default_rng(1).normal(size=72), b=np.arange(72) % 3 == 0)
    memory = OrdinalModel.from_formula("rating ~ temp + x + b", data).fit()
    chunked = OrdinalModel.from_formula("rating ~ temp + x + b", data, chunksize=20).fit()
    for verb, options in (
        ("avg_slopes", {}),
        ("avg_comparisons", {"variables": "b"}),
        ("avg_comparisons", {"variables": ["temp", "b"]}),
    ):
        expected = getattr(memory, verb)(**options)
        got = getattr(chunked, verb)(**options)
        assert got[["term", "contrast"]].equals(expected[["term", "contrast"]])
        np.testing.assert_allclose(got["estimate"], expected["estimate"], rtol=1e-9, atol=1e-12)
    assert "True - False" in set(expected["contrast"])


def test_emmeans_data_with_missing_values_empty_or_repeated_columns(wine):
    """Before: one NaN made every mean NaN, an empty frame gave NaN silently (or numpy's
    'cannot reshape'), and a repeated column an AttributeError. R's ref_grid leaves
    incomplete rows out."""
    data = wine.assign(x=np.random.default_rng(1).normal(size=72))
    res = OrdinalModel.from_formula("rating ~ temp + x", data).fit()
    rows = data.head(6).copy()
    rows.loc[1, "x"] = np.nan
    with pytest.warns(MissingDataWarning, match=r"1 row\(s\) of data have missing values"):
        got = res.emmeans("temp", data=rows).summary_frame()["emmean"]
    expected = res.emmeans("temp", data=rows.dropna()).summary_frame()["emmean"]
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    with pytest.raises(OrdstatsError, match=r"data has no rows"):
        res.emmeans("temp", data=data.iloc[:0])
    with pytest.raises(OrdstatsError, match=r"data has repeated column names \('x'\)"):
        res.emmeans("temp", data=data.assign(contact=1.0).rename(columns={"contact": "x"}))


def test_get_prediction_keeps_the_names_of_newdata_s_index(wine):
    """Before: a MultiIndex gave pandas' 'Length of names must match', and a named index
    was renamed 'row'."""
    res = OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    pairs = pd.MultiIndex.from_tuples([("a", 0), ("a", 1)], names=["site", None])
    table = res.get_prediction(wine.head(2).set_axis(pairs)).summary_frame()
    assert list(table.index.names) == ["site", None, "level"]
    named = res.get_prediction(wine.head(2).rename_axis("id")).summary_frame()
    assert list(named.index.names) == ["id", "level"]
    plain = res.get_prediction(wine.head(2)).summary_frame()
    assert list(plain.index.names) == ["row", "level"]
    np.testing.assert_allclose(table["prob"], plain["prob"], rtol=1e-14)


def test_datagrid_of_a_nullable_column_without_values_or_repeated_names(wine):
    """Before: float() of pd.NA (a TypeError), and pandas' 'Grouper ... not 1-dimensional'."""
    empty = wine.assign(x=pd.array([pd.NA] * len(wine), dtype="Float64"))
    assert np.isnan(ordstats.datagrid(newdata=empty, temp=["cold"])["x"].iloc[0])
    with pytest.raises(OrdstatsError, match=r"repeated column names \('contact'\)"):
        ordstats.datagrid(newdata=pd.concat([wine, wine[["contact"]]], axis=1), temp=["cold"])


@pytest.mark.parametrize("chunksize", [None, 20])
def test_an_integer_column_name_in_backticks_is_the_column(wine, chunksize):
    """Before: KeyError "['0'] not in index" (the formula names columns by text)."""
    x = np.random.default_rng(1).normal(size=len(wine))
    plain = OrdinalModel.from_formula("rating ~ temp + x", wine.assign(x=x)).fit()
    data = wine.assign(x=x).rename(columns={"x": 0})
    extra = {} if chunksize is None else {"chunksize": chunksize}
    res = OrdinalModel.from_formula("rating ~ temp + `0`", data, **extra).fit()
    np.testing.assert_allclose(res.params.to_numpy(), plain.params.to_numpy(), rtol=1e-10)
    np.testing.assert_allclose(res.predict(data.head(3)), plain.predict(wine.assign(x=x).head(3)))
    np.testing.assert_allclose(
        res.avg_predictions()["estimate"], plain.avg_predictions()["estimate"], rtol=1e-10
    )


# -- the array constructor's response: the checks of from_formula (input audit F2, F3, F13) --


def test_array_constructor_drops_an_infinite_response_as_from_formula_does(wine):
    """Before: OrdinalModel(y, X) made inf a level ('5|inf'), from_formula dropped the row."""
    x = wine["temp"].eq("warm").astype(float).rename("temp")
    for bad in (np.inf, -np.inf):
        y = wine["rating"].astype(int).astype(float)
        y[3] = bad
        match = r"1 of 72 rows .* non-finite values in 'y' \(1\)"
        with pytest.warns(MissingDataWarning, match=match):
            formula = OrdinalModel.from_formula("y ~ temp", wine.assign(y=y)).fit()
        with pytest.warns(MissingDataWarning, match=match):
            arrays = OrdinalModel(y.rename("y"), x).fit()
        assert arrays.nobs == formula.nobs == 71
        assert list(arrays.params.index[:4]) == ["1|2", "2|3", "3|4", "4|5"]
        np.testing.assert_allclose(arrays.llf, formula.llf, rtol=1e-8)
        with pytest.raises(DataError, match=r"non-finite values in 'y' \(1\)"):
            OrdinalModel(y.rename("y"), x, missing="raise")


def test_array_constructor_refuses_complex_and_date_responses_as_from_formula_does(wine):
    """Before: a complex response was ordered by numpy's complex sort; dates were called
    'unordered labels'."""
    x = wine[["response"]].astype(float)
    complex_y = np.array([2 + 0j, 1 + 5j, 3 - 1j] * 24)
    dates = pd.to_datetime(wine["rating"].astype(int), unit="D")
    cases = [
        (complex_y, r"'y' holds complex numbers \(complex128\).*np.real, np.abs or np.angle"),
        (dates, r"'rating' holds dates or durations \(datetime64.*\.dt\.days"),
        (pd.to_timedelta(wine["rating"].astype(int), unit="D"), r"dates or durations"),
    ]
    for y, match in cases:
        with pytest.raises(DataError, match=match):
            OrdinalModel(y, x)
        name = getattr(y, "name", None) or "y"
        with pytest.raises(DataError, match=match):
            OrdinalModel.from_formula(
                f"{name} ~ response", pd.DataFrame({name: y, "response": x["response"]})
            )


# -- complex and Categorical weights and offsets (input audit F4, F15 d) -----------------------


@pytest.mark.parametrize("constructor", ["arrays", "formula"])
def test_complex_weights_and_offsets_are_refused_not_cast_to_their_real_part(wine, constructor):
    """Before: numpy's ComplexWarning only; the weights' imaginary part was dropped."""
    x = wine["temp"].eq("warm").astype(float).rename("temp")

    def build(**given):
        if constructor == "arrays":
            return OrdinalModel(wine["rating"], x, **given)
        return OrdinalModel.from_formula("rating ~ temp", wine, **given)

    ones = np.ones(len(wine))
    for role, values in (("weights", ones * (1 + 5j)), ("offset", ones * 3j)):
        match = rf"{role} must be real numbers; got complex numbers \(complex128\)"
        for given in (values, pd.Series(values, index=wine.index)):
            with pytest.raises(DataError, match=match):
                build(**{role: given})


def test_categorical_weights_are_refused_by_the_array_constructor_too(wine):
    """Before: OrdinalModel(y, X, weights=<Categorical>) read the categories as weights
    (nobs 108), while from_formula(weights='w') refused the same column."""
    x = wine["temp"].eq("warm").astype(float).rename("temp")
    codes = pd.Categorical([1, 2] * 36)
    match = r"weights must be numeric; got dtype category"
    with pytest.raises(DataError, match=match):
        OrdinalModel.from_formula("rating ~ temp", wine.assign(w=codes), weights="w")
    for given in (codes, pd.Series(codes, index=wine.index)):
        with pytest.raises(DataError, match=match):
            OrdinalModel(wine["rating"], x, weights=given)
        with pytest.raises(DataError, match=match):
            OrdinalModel.from_formula("rating ~ temp", wine, weights=given)


# -- smaller messages (input audit F15 a, e) ---------------------------------------------------


def test_one_row_as_a_vector_is_reported_with_the_shape_passed_and_what_to_do(wine):
    """Before: 'got shape (2, 1)', the shape the vector was read as, not the (2,) passed."""
    X = pd.get_dummies(wine[["temp", "contact"]], drop_first=True).astype(float)
    res = OrdinalModel(wine["rating"], X).fit()
    row = X.to_numpy()[0]
    match = r"got shape \(2,\) \(a 1-d array is read as 2 row\(s\) of one column\).*x\[None, :\]"
    with pytest.raises(PredictionError, match=match):
        res.predict(row)
    with pytest.raises(PredictionError, match=match):
        res.get_prediction(row)
    np.testing.assert_array_equal(res.predict(row[None, :]), res.predict(X.iloc[:1]))


@pytest.mark.parametrize("extra", [{}, {"method": "bfgs"}, {"penalty": "firth"}])
def test_non_finite_start_params_are_refused_before_any_evaluation(wine, extra):
    """Before: numpy's RuntimeWarning (invalid value in matmul) leaked before the error for
    an infinite value, and all-NaN values got 'the objective is not finite'."""
    model = OrdinalModel.from_formula("rating ~ temp + contact", wine)
    cases = [
        ([-1.0, 0.0, 1.0, 2.0, np.inf, 0.0], r"1 non-finite value\(s\) \(at temp\[T.warm\]\)"),
        ([np.nan] * 6, r"6 non-finite value\(s\) \(at 1\|2, 2\|3, 3\|4, \.\.\.\)"),
    ]
    for start, where in cases:
        match = r"params must be 6 finite numbers \(1\|2, .*\); start_params has " + where
        with pytest.raises(SpecificationError, match=match + ": give finite start_params"):
            model.fit(start_params=start, **extra)


def test_clmm_fit_refuses_sandwich_covariances(wine):
    # before: a raw TypeError (unexpected keyword argument 'cov_type')
    model = OrdinalModel.from_formula("rating ~ temp + (1|judge)", wine)
    cluster = {"cov_type": "cluster", "cov_kwds": {"groups": "judge"}}
    for kwargs in ({"cov_type": "robust"}, cluster):
        with pytest.raises(SpecificationError, match=r"not available for a model with random"):
            model.fit(**kwargs)
    with pytest.raises(SpecificationError, match=r"drop the random terms and fit with cov_type="):
        model.fit(cov_type="HC1")
    assert model.fit(cov_type="nonrobust").llf == pytest.approx(model.fit().llf)


def test_emmeans_refuses_non_finite_contrasts_and_at_values(wine):
    # before: all-NaN tables, without a message or with a warning about rows of a
    # newdata the user never passed
    data = wine.assign(x=np.linspace(-1, 1, 72))
    res = OrdinalModel.from_formula("rating ~ temp + contact + x", data).fit()
    with pytest.raises(OrdstatsError, match=r"custom contrasts are .* with finite numbers"):
        res.emmeans("temp").contrast({"c": [1, np.nan]})
    with pytest.raises(OrdstatsError, match=r"custom contrasts are .* with finite numbers"):
        res.emmeans("temp").contrast({"c": [1, "a"]})
    for value in (np.inf, np.nan, [0.0, -np.inf], "a"):
        with pytest.raises(OrdstatsError, match=r"at=\{'x': ...\} must be finite numbers"):
            res.emmeans("temp", at={"x": value})
    assert np.isfinite(res.emmeans("temp", at={"x": 0.5}).summary_frame()["emmean"]).all()


def test_random_terms_whose_variances_are_not_identified_are_refused(wine):
    # before: both fitted without a word; a constant z beside the random intercept gave
    # arbitrary SDs and correlation, and the one-level factor's slope was dropped
    data = wine.assign(z=1.0, z2=np.linspace(0, 1, 72), f="a")
    refused = {
        "(1 + z|judge)": r"the column\(s\) 'z' of the random term",
        "(z2 + I(2 * z2)|judge)": r"combination of the term's other columns",
        "(1 + f|judge)": r"term\(s\) 'f' without columns: their factors",
    }
    for term, message in refused.items():
        with pytest.raises(SpecificationError, match=message):
            OrdinalModel.from_formula(f"rating ~ temp + {term}", data)
    with pytest.warns(SpecificationWarning, match=r"singular fit"):
        fit = OrdinalModel.from_formula("rating ~ temp + (1 + z2|judge)", data).fit()
    assert fit.varcorr()["name"].tolist() == ["(Intercept)", "z2"]


@pytest.mark.parametrize(
    "term", ["C(judge, contr.sum)", 'relevel(judge, ref = "3")', "ordered(judge)", "judge"]
)
def test_newdata_factor_of_numbers_inside_a_call_says_to_give_text(wine, term):
    # before (inside a call): "newdata has factor level(s) np.int64(1) that the model was
    # not fitted on", though the fit has level '1'
    res = OrdinalModel.from_formula(f"rating ~ temp + {term}", wine).fit()
    new = wine.iloc[:2].assign(judge=lambda d: d["judge"].astype(int))
    message = r"column 'judge'.* holds int64 values .*astype\(str\)"
    with pytest.raises(PredictionError, match=message):
        res.predict(new)


def test_newdata_text_for_a_factor_of_numbers_says_to_give_numbers(wine):
    data = wine.assign(jnum=wine["judge"].astype(int))
    res = OrdinalModel.from_formula("rating ~ temp + factor(jnum)", data).fit()
    new = data.iloc[:2].assign(jnum=lambda d: d["jnum"].astype(str))
    with pytest.raises(PredictionError, match=r"'jnum' \(in 'factor\(jnum\)'\) holds .*to_numeric"):
        res.predict(new)
    np.testing.assert_allclose(res.predict(data.iloc[:2]), res.predict().iloc[:2])


def test_predict_observed_warns_of_a_missing_response(wine):
    # before: the row's NaN came without a word (missing predictors warn)
    res = OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    rows = wine.head(4).astype({"rating": object})
    rows.loc[[1, 3], "rating"] = None
    with pytest.warns(
        MissingDataWarning, match=r"2 row\(s\) of newdata \(1, 3\) have a missing"
    ) as got:
        observed = res.predict(rows, which="observed")
    assert got[0].filename == __file__  # the warning names the user's line
    assert observed.isna().tolist() == [False, True, False, True]


def test_complex_offsets_for_predictions_and_in_offset_terms_are_refused(wine):
    """A complex offset= given to predict, or a complex column in an offset(...) term,
    lost its imaginary part with only numpy's ComplexWarning (or, with warnings as
    errors, an error that quoted that warning)."""
    fitted = OrdinalModel.from_formula("rating ~ temp", wine.assign(o=0.5), offset="o").fit()
    with pytest.raises(PredictionError, match="offset must be real numbers; got complex"):
        fitted.predict(wine.head(2), offset=np.array([1 + 2j, 1 + 2j]))
    with pytest.raises(FormulaError, match="complex numbers, whose imaginary part"):
        OrdinalModel.from_formula("rating ~ temp + offset(c)", wine.assign(c=1 + 1j))


@pytest.mark.parametrize(
    ("term", "message"),
    [
        ("poly(x, 0)", r"degree must be a whole number of at least 1; got 0"),
        ("poly(x, z, degree=2.5)", r"degree must be a whole number of at least 1; got 2.5"),
        ("poly(x, z, degree=True)", r"degree must be a whole number of at least 1; got True"),
        ("poly(x, degree=np.inf)", r"degree must be a whole number of at least 1; got inf"),
        ("poly(x, z, degree=2, raw='no')", r"raw must be True or False; got 'no'"),
        ("poly(x, b, degree=2)", r"degree=2 needs more than 2 distinct values"),
        ("poly(x, temp, degree=2)", r"poly\(\) takes numeric variables"),
    ],
)
def test_poly_arguments_and_variables_are_checked(wine, term, message):
    """poly()'s degree reached numpy (0: no columns with a note about single levels;
    2.5: 'float object cannot be interpreted as an integer'), raw='no' (truthy) gave
    raw polynomials silently, and poly of a boolean of degree 2 gave a column of 0/0
    reported as 'every row has a missing value'."""
    data = wine.assign(
        x=np.linspace(-1, 1, len(wine)), z=np.cos(np.arange(len(wine))), b=np.arange(len(wine)) % 2
    )
    with pytest.raises(FormulaError, match=message):
        OrdinalModel.from_formula(f"rating ~ {term}", data)


def test_margins_read_a_boolean_newdata_column_of_a_numeric_variable_as_numbers(wine):
    """predict reads a boolean x of a numeric fit as 0/1, but comparisons() and slopes()
    took it for a factor: 4 rows gave 1420, one contrast per distinct fitted x, with
    NaN p-values."""
    data = wine.assign(x=np.linspace(-1, 1, len(wine)))
    res = OrdinalModel.from_formula("rating ~ temp + x", data).fit()
    flags = data.head(4).assign(x=[True, False, True, False])
    numbers = flags.assign(x=flags["x"].astype(float))
    for verb in (res.comparisons, res.slopes):
        got, want = verb(flags, variables="x"), verb(numbers, variables="x")
        assert len(got) == len(want) == 20
        np.testing.assert_allclose(got["estimate"], want["estimate"])


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        (lambda d: d["rating"].astype(str), "text; convert them first"),
        (lambda d: d.index.to_series() % 3 == 0, "booleans; to average over the rows"),
        (lambda d: np.full(len(d), 1 + 1j), "complex numbers"),
        (lambda d: pd.Series(pd.Timestamp("2020-01-01"), index=d.index), "dates"),
    ],
)
def test_avg_wts_that_are_not_numbers_are_refused(wine, make, kind):
    """The fit's weights= refuses these; avg_*(wts=) parsed text as numbers, read
    booleans as 0/1 and dates as nanoseconds, and dropped an imaginary part with only
    numpy's ComplexWarning."""
    res = OrdinalModel.from_formula("rating ~ temp", wine).fit()
    with pytest.raises(OrdstatsError, match=f"wts must be numbers; got {kind}"):
        res.avg_predictions(wts=make(wine))


def test_censored_bounds_complex_two_dimensional_or_of_other_labels_are_refused():
    """A complex bound lost its imaginary part with only numpy's ComplexWarning, a 2-D
    bound raised pandas' 'Data must be 1-dimensional', and two Series with different
    labels were reindexed into NaN bounds, reported as 'one bound missing'."""
    lower = pd.Series([1.0, 2.0, 3.0, 4.0])
    with pytest.raises(DataError, match=r"lower must be numeric \(got dtype complex128\)"):
        ordstats.Censored(lower + 1j, lower)
    with pytest.raises(DataError, match=r"lower must be one value per row \(1-d\)"):
        ordstats.Censored(np.ones((4, 2)), lower)
    with pytest.raises(DataError, match="paired by row label, but their labels differ"):
        ordstats.Censored(lower, lower.set_axis([10, 11, 12, 13]))
    shuffled = ordstats.Censored(lower, lower.iloc[::-1])  # the same labels: aligned
    assert shuffled.upper.tolist() == lower.tolist()


def test_survival_times_are_not_booleans():
    """survival(times=True) was read as the time 1."""
    rng = np.random.default_rng(1)
    time = np.round(np.exp(1 + rng.normal(size=40)), 1)
    data = pd.DataFrame({"t": time, "x": rng.normal(size=40)})
    res = OrdinalModel.from_formula("Censored(t, t) ~ x", data, many_levels=True).fit()
    with pytest.raises(OrdstatsError, match="times must be one or more finite numbers"):
        res.survival(data.head(2), times=True)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"w": True}, r"weights must be numbers; the column 'w' has booleans"),
        ({"w": "2"}, r"weights must be numbers; the column 'w' has text"),
        ({"w": 2 + 1j}, r"weights must be numbers; the column 'w' has complex numbers"),
        ({"w": pd.Timestamp("2020-01-01")}, r"weights must be numbers; the column 'w' has dates"),
        ({"f": True}, r"fpc must be numbers; the column 'f' has booleans"),
    ],
)
def test_survey_weights_and_fpc_that_are_not_numbers_are_refused(wine, change, message):
    """numpy read these silently: booleans as weights of 1 (or an fpc of 1), numbers
    as text parsed, dates as nanoseconds, complex numbers with only a ComplexWarning;
    the fit's weights= refuses them all."""
    data = _survey_frame(wine).assign(f=100.0).assign(**change)
    with pytest.raises(DataError, match=message):
        ordstats.SurveyDesign(data, weights="w", psu="psu", fpc="f")


def test_survey_replicate_weights_that_are_not_numbers_are_refused(wine):
    data = _survey_frame(wine)
    flags = pd.DataFrame(np.ones((len(data), 3), dtype=bool), index=data.index)
    with pytest.raises(DataError, match=r"repweights must be numbers; the column '0' has booleans"):
        ordstats.ReplicateDesign(data, repweights=flags, weights="w", type="bootstrap")
    with pytest.raises(DataError, match=r"repweights must be numbers; they have complex numbers"):
        ordstats.ReplicateDesign(
            data, repweights=np.ones((len(data), 3)) + 1j, weights="w", type="bootstrap"
        )


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        (np.ones(72, dtype=bool), r"sample_weight must be numbers; got booleans"),
        (np.array(["1"] * 72), r"sample_weight must be numbers; got text"),
        (np.ones(72) + 1j, r"sample_weight must be numbers; got complex numbers"),
        (np.r_[np.nan, np.ones(71)], r"sample_weight has missing or non-finite values"),
        (np.ones(7), r"one number per row of X \(72\) or one number; got shape \(7,\)"),
    ],
)
def test_classifier_sample_weight_that_is_not_numbers_is_refused(wine, weights, message):
    """Booleans and text were read as numbers silently; NaN, complex weights and a wrong
    length got scikit-learn's errors."""
    pytest.importorskip("sklearn")
    from ordstats.learn import OrdinalClassifier

    X = pd.DataFrame({"a": np.linspace(-1, 1, len(wine))})
    with pytest.raises(DataError, match=message):
        OrdinalClassifier().fit(X, wine["rating"], sample_weight=weights)


@pytest.mark.parametrize(
    "params", [{"alpha": True}, {"alpha": 0.1, "l1_ratio": True}, {"standardize": "no"}]
)
def test_classifier_penalty_options_are_not_booleans_or_strings(wine, params):
    """alpha=True was an alpha of 1 and l1_ratio=True a lasso; standardize='no' (truthy)
    passed unchecked at alpha=0."""
    pytest.importorskip("sklearn")
    from ordstats.learn import OrdinalClassifier

    X = pd.DataFrame({"a": np.linspace(-1, 1, len(wine))})
    with pytest.raises(SpecificationError, match=r"must be (numbers|True or False)"):
        OrdinalClassifier(**params).fit(X, wine["rating"])


def test_an_object_column_of_booleans_among_numbers_warns(wine):
    """True equals 1, so an object column of 1 and True was one level: the term was
    dropped as 'a factor of a single level', with no word of the mixed types."""
    mixed = pd.Series([1, True] * (len(wine) // 2), dtype=object, index=wine.index)
    with (
        pytest.warns(SpecificationWarning, match="holds booleans among numbers; True equals 1"),
        pytest.warns(CollinearityWarning),
    ):
        OrdinalModel.from_formula("rating ~ m", wine.assign(m=mixed))


@pytest.mark.parametrize("value", [True, "1", np.nan, np.inf])
def test_datagrid_and_emmeans_at_take_finite_numbers_for_a_numeric_predictor(wine, value):
    """datagrid(x=[True]) and emmeans(at={'x': True}) read True as 1 and '1' as a
    number; datagrid kept NaN and inf, whose predictions were NaN."""
    data = wine.assign(x=np.linspace(-1, 1, len(wine)))
    res = OrdinalModel.from_formula("rating ~ temp + x", data).fit()
    with pytest.raises(OrdstatsError, match="'x' is numeric; give finite numbers"):
        ordstats.datagrid(res, x=[value])
    with pytest.raises(OrdstatsError, match=r"at=\{'x': ...\} must be finite numbers"):
        res.emmeans("temp", at={"x": value})


def test_a_mixed_model_fit_names_the_keywords_it_takes(wine):
    """fit(method=...) of a model with random terms raised Python's TypeError naming
    OrdinalMixedModel.fit()."""
    model = OrdinalModel.from_formula("rating ~ temp + (1|judge)", wine)
    with pytest.raises(
        SpecificationError, match=r"fit\(\) got unknown argument\(s\) 'method'; it takes .*nagq"
    ):
        model.fit(method="bfgs")


def test_regularization_path_alphas_are_not_booleans(wine):
    """path(alphas=[True, 0.1]) and cv(alphas=...) read True as an alpha of 1."""
    model = OrdinalModel.from_formula("rating ~ temp + contact", wine)
    for method in (model.path, model.cv):
        with pytest.raises(
            SpecificationError, match="alphas must be a non-empty sequence of numbers"
        ):
            method(alphas=[True, 0.1])


def test_backticked_names_in_offset_and_censored_bounds(wine):
    """offset(`my o`) failed with 'invalid syntax', and Censored(`lo w`, ...) with 'is
    not valid Python', although the formula's terms take backticked names."""
    data = wine.assign(x=np.linspace(-1, 1, len(wine)), t=np.arange(len(wine)) % 9 + 1.0)
    plain = OrdinalModel.from_formula("rating ~ x + offset(o)", data.assign(o=data["x"] / 3))
    quoted = OrdinalModel.from_formula(
        "rating ~ x + offset(`my o`)", data.assign(**{"my o": data["x"] / 3})
    )
    np.testing.assert_allclose(quoted.fit().params, plain.fit().params)
    with pytest.raises(FormulaError, match="names 'nope', which is not a column of the data"):
        OrdinalModel.from_formula("rating ~ x + offset(`nope`)", data)
    want = OrdinalModel.from_formula("Censored(t, t) ~ x", data, many_levels=True).fit()
    got = OrdinalModel.from_formula(
        "Censored(`t w`, np.where(`t w` > 0, `t w`, inf)) ~ x",
        data.assign(**{"t w": data["t"]}),
        many_levels=True,
    ).fit()
    np.testing.assert_allclose(got.params, want.params)


@pytest.mark.parametrize(
    "offset", [True, np.array([True, False, True, False]), np.array(["1"] * 4)]
)
def test_prediction_offsets_that_are_not_numbers_are_refused(wine, offset):
    """predict(offset=...) read booleans as 0/1 and parsed text, where the fit's offset=
    refuses both."""
    data = wine.assign(o=np.linspace(0, 1, len(wine)))
    res = OrdinalModel.from_formula("rating ~ temp", data, offset="o").fit()
    with pytest.raises(PredictionError, match=r"offset must be a number or one number per row"):
        res.predict(data.head(4), offset=offset)


def test_array_model_newdata_of_numbers_as_text_or_categories_is_refused(wine):
    """A model from arrays parsed a newdata column of numbers as text, or of categories,
    though its exog refuses both."""
    X = pd.DataFrame({"a": np.linspace(-1, 1, len(wine)), "b": (wine["temp"] == "warm") * 1.0})
    res = OrdinalModel(wine["rating"], X).fit()
    for column in (["1", "0", "1"], pd.Categorical([1.0, 0.0, 1.0])):
        with pytest.raises(PredictionError, match=r"column\(s\) 'b' that are not numbers"):
            res.predict(X.head(3).assign(b=column))


def test_classifier_names_the_columns_of_x_that_are_not_numbers(wine):
    """scikit-learn's validation said only "could not convert string to float: 'cold'"."""
    pytest.importorskip("sklearn")
    from ordstats.learn import OrdinalClassifier

    X = pd.DataFrame({"a": np.linspace(-1, 1, len(wine)), "temp": wine["temp"]})
    with pytest.raises(DataError, match=r"X column\(s\) 'temp' are not numbers"):
        OrdinalClassifier().fit(X, wine["rating"])
    fitted = OrdinalClassifier().fit(
        X[["a"]].assign(b=1.0 * (wine["temp"] == "warm")), wine["rating"]
    )
    with pytest.raises(DataError, match=r"X column\(s\) 'b' are not numbers"):
        fitted.predict_proba(X[["a"]].assign(b="1"))


def test_margins_variables_of_another_type_are_refused(wine):
    """variables=3 raised Python's "'int' object is not iterable", and {'x': [True,
    False]} was the contrast of x = 0 against x = 1."""
    res = OrdinalModel.from_formula(
        "rating ~ temp + x", wine.assign(x=np.linspace(-1, 1, 72))
    ).fit()
    with pytest.raises(OrdstatsError, match=r"variables= takes a column name, a list of names"):
        res.avg_comparisons(variables=3)
    with pytest.raises(OrdstatsError, match=r"'x' is numeric, so its contrast is two numbers"):
        res.avg_comparisons(variables={"x": [True, False]})


def test_empty_backticks_in_a_formula_are_refused(wine):
    """'rating ~ ``' fitted the model without predictors, with no word."""
    with pytest.raises(FormulaError, match="has backticks around no name"):
        OrdinalModel.from_formula("rating ~ ``", wine)


def test_hypothesis_matrices_of_booleans_or_nan_are_refused_saying_so(wine):
    """A boolean matrix was read as 0/1, and a matrix with NaN was refused with only its
    (right) shape."""
    res = OrdinalModel.from_formula("rating ~ temp", wine).fit()
    with pytest.raises(OrdstatsError, match=r"shape \(5, 1\) of booleans"):
        res.avg_predictions(hypothesis=np.ones((5, 1), dtype=bool))
    with pytest.raises(OrdstatsError, match=r"shape \(5, 1\) with missing or infinite values"):
        res.avg_predictions(hypothesis=np.full((5, 1), np.nan))


def test_pairs_reverse_and_reg_term_test_joint_are_flags(wine):
    """emmeans' pairs(reverse='no') gave the reversed contrasts and a survey fit's
    reg_term_test(joint='no') the joint test: the strings are truthy."""
    res = OrdinalModel.from_formula("rating ~ temp", wine).fit()
    with pytest.raises(SpecificationError, match="reverse must be True or False"):
        res.emmeans("temp").pairs(reverse="no")
    design = ordstats.SurveyDesign(_survey_frame(wine), weights="w", psu="psu")
    survey = OrdinalModel.from_formula("rating ~ temp + contact", design=design).fit()
    with pytest.raises(SpecificationError, match="joint must be True or False"):
        survey.reg_term_test(["temp", "contact"], joint="no")


def test_plot_flags_and_survey_conf_int_use_t_take_true_or_false(wine):
    """plot_coefficients(odds_ratios='no') plotted odds ratios, plot_predictions(draw='no')
    drew, and a survey fit's conf_int(use_t='no') gave t intervals: the strings are truthy."""
    pytest.importorskip("matplotlib")
    res = OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    with pytest.raises(SpecificationError, match="odds_ratios must be True or False"):
        ordstats.plotting.plot_coefficients(res, odds_ratios="no")
    with pytest.raises(SpecificationError, match="draw must be True or False"):
        ordstats.plotting.plot_predictions(res, condition="temp", draw="no")
    design = ordstats.SurveyDesign(_survey_frame(wine), weights="w", psu="psu")
    survey = OrdinalModel.from_formula("rating ~ temp", design=design).fit()
    with pytest.raises(SpecificationError, match="use_t must be True or False"):
        survey.conf_int(use_t="no")


@pytest.mark.parametrize(
    "verb", ["predictions", "avg_predictions", "comparisons", "avg_comparisons", "slopes"]
)
@pytest.mark.parametrize("mixed", [False, True], ids=["clm", "clmm"])
def test_a_margins_verb_names_newdata_rows_with_missing_values_once(wine, verb, mixed):
    # each counterfactual copy of the rows used to warn again (one warning per copy);
    # the copy that sets 'contact' no longer names row b, so the warnings also disagreed
    wine = wine.assign(x=np.linspace(0.0, 2.0, 72), off=np.linspace(0, 0.5, 72))
    if mixed:
        res = ordstats.OrdinalMixedModel.from_formula(
            "rating ~ temp + contact + x + offset(off) + (1 | judge)", wine
        ).fit()
    else:
        res = ordstats.OrdinalModel.from_formula(
            "rating ~ temp + contact + np.log1p(x)", wine
        ).fit()
    new = wine.head(4).set_axis(list("abcd")).astype({"contact": object})
    new.loc["b", "contact"] = np.nan
    new.loc["c", "x"] = np.nan
    if mixed:
        new.loc["d", "off"] = np.nan
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = getattr(res, verb)(newdata=new)
    messages = [str(w.message) for w in caught if w.category is MissingDataWarning]
    messages.sort(key=lambda message: "offset" in message)
    assert len(messages) == (2 if mixed else 1), messages
    assert re.search(r"2 row\(s\) of newdata \(b, c\).*'contact' \(1\)", messages[0])
    assert "'x' (1)" in messages[0]
    if mixed:
        assert re.search(r"1 row\(s\) of newdata \(d\).*offset", messages[1])
    assert {w.filename for w in caught} == {__file__}
    assert table["estimate"].notna().any()


def test_vector_random_terms_the_groups_cannot_estimate_warn_at_construction(wine):
    # before: both built and fitted without a word, ending at correlations of +-1
    data = wine.assign(jx=wine["judge"].cat.codes.astype(float), x=np.linspace(-1, 1, 72))
    with pytest.warns(SpecificationWarning, match=r"random slope 'jx' of \(1 \+ jx\|judge\) is "):
        OrdinalModel.from_formula("rating ~ temp + (1 + jx|judge)", data)
    three = data[data["judge"].isin(["1", "2", "3"])]
    with pytest.warns(SpecificationWarning, match=r"has 4 columns but 'judge' has only 3 levels"):
        OrdinalModel.from_formula("rating ~ temp + (1 + x + temp + contact|judge)", three)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a slope that varies within groups: no warning
        OrdinalModel.from_formula("rating ~ temp + (1 + x|judge)", data)
        OrdinalModel.from_formula("rating ~ temp + (0 + jx|judge)", data)


def test_a_singular_vector_term_warns_after_the_fit_naming_the_column(wine):
    # before: the fit ended at a correlation of -1 (the slope's SE left out) without a word
    data = wine.assign(x=np.linspace(-1, 1, 72))
    model = OrdinalModel.from_formula("rating ~ temp + (1 + x|judge)", data)
    message = r"singular fit: .*\(1 \+ x\|judge\).*'x' has SD 0"
    with pytest.warns(SpecificationWarning, match=message):
        res = model.fit()
    (cov,) = res.covariance_matrices()
    assert res.boundary == [1]
    assert abs(cov[0, 1]) / np.sqrt(cov[0, 0] * cov[1, 1]) == pytest.approx(1.0, abs=1e-6)
