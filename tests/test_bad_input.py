"""Every bad input gets a clear ordstats error or warning that says what to do."""

from __future__ import annotations

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


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
def test_non_finite_values_from_transforms_are_dropped(wine):
    wine = wine.assign(x=np.r_[0.0, np.linspace(1, 3, 71)])
    with pytest.warns(MissingDataWarning, match=r"1 of 72 rows.*formula terms"):
        model = OrdinalModel.from_formula("rating ~ np.log(x) + temp", wine)
    assert model.n_rows == 71


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


def test_removing_the_intercept_is_undone_with_a_warning(wine):
    with pytest.warns(SpecificationWarning, match=r"thresholds act as intercepts"):
        res = OrdinalModel.from_formula("rating ~ temp + contact - 1", wine).fit()
    assert list(res.params.index[4:]) == ["temp[T.warm]", "contact[T.yes]"]


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
