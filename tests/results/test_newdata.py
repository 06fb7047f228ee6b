"""How fitted models read new data: caller variables, offsets, group ids, missing values."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats.errors import (
    DataError,
    FormulaError,
    MissingDataWarning,
    PredictionError,
    PredictionWarning,
    SpecificationWarning,
)

F = ordstats.OrdinalModel.from_formula
LACKS_XX = r"newdata lacks the column\(s\) 'xx'"

# -- item: a variable the formula read from the caller is a column of new data ---------


def _caller_values() -> np.ndarray:
    return np.random.default_rng(0).normal(size=72)


def test_the_issue_repro_refuses_the_fit_time_variable(wine):
    xx = _caller_values()
    res = F("rating ~ temp + xx", wine).fit()
    with pytest.raises(PredictionError, match=LACKS_XX):
        res.predict(wine[["temp"]].iloc[::-1])
    del xx
    with pytest.raises(PredictionError, match=LACKS_XX):
        res.predict(wine[["temp"]].iloc[::-1])


@pytest.mark.parametrize(
    ("formula", "keywords"),
    [
        ("rating ~ temp + xx", {}),
        ("rating ~ temp + np.log(xx**2)", {}),
        ("rating ~ temp + I(xx**2)", {}),
        ("rating ~ temp + xx:temp", {}),
        ("rating ~ temp + center(xx)", {}),
        ("rating ~ temp", {"scale": "~ xx"}),
        ("rating ~ temp", {"nominal": "~ xx"}),
    ],
)
def test_every_prediction_path_refuses_a_caller_variable(wine, formula, keywords):
    xx = _caller_values()
    res = F(formula, wine, **keywords).fit()
    new = wine[["temp"]].iloc[::-1]
    for which in ("prob", "cumprob", "class", "expected", "linear"):
        with pytest.raises(PredictionError, match=LACKS_XX):
            res.predict(new, which=which)
    with pytest.raises(PredictionError, match=LACKS_XX):
        res.get_prediction(new)
    with pytest.raises(PredictionError, match=LACKS_XX):
        pickle.loads(pickle.dumps(res)).predict(new)
    # the column in newdata is used, and gives the fitted rows' predictions
    with_column = wine.assign(xx=xx)
    np.testing.assert_allclose(res.predict(with_column), res.predict(), atol=1e-12)
    np.testing.assert_allclose(
        pickle.loads(pickle.dumps(res)).predict(with_column), res.predict(), atol=1e-12
    )
    reversed_rows = with_column.iloc[::-1]
    np.testing.assert_allclose(
        res.predict(reversed_rows).loc[wine.index], res.predict(), atol=1e-12
    )


def test_saved_results_hold_no_caller_rows_and_refuse_them(wine, tmp_path):
    xx = _caller_values()
    res = F("rating ~ temp + xx", wine).fit()
    new = wine[["temp"]].head(3)
    for remove in (False, True):
        path = tmp_path / f"fit{remove}.pkl"
        F("rating ~ temp + xx", wine).fit().save(path, remove_data=remove)
        loaded = ordstats.load(path)
        assert "xx" not in loaded.model.formula_context
        with pytest.raises(PredictionError, match=LACKS_XX):
            loaded.predict(new)
        with pytest.raises(PredictionError, match=LACKS_XX):
            loaded.get_prediction(new)
        np.testing.assert_allclose(
            loaded.predict(wine.assign(xx=xx).head(3)), res.predict().head(3), atol=1e-12
        )
    assert "xx" in res.model.formula_context  # the session's model keeps it for refits
    assert res.model.refit_formulas(scale="~ temp") is not None


def test_parameters_functions_and_scalars_of_the_caller_still_resolve(wine):
    lv = ["warm", "cold"]  # a list of levels: a parameter, not a column
    k = 2.0

    def sq(v):
        return v**2

    xx = _caller_values()
    new = wine.assign(xx=xx)
    for formula in (
        "rating ~ C(temp, levels=lv) + xx",
        "rating ~ temp + I(k * xx)",
        "rating ~ temp + sq(xx)",
    ):
        res = F(formula, wine).fit()
        np.testing.assert_allclose(res.predict(new), res.predict(), atol=1e-12)
        with pytest.raises(PredictionError, match=LACKS_XX):
            res.predict(wine)
    assert (lv, k) == (["warm", "cold"], 2.0)


def test_newdata_none_predicts_the_fitted_rows(wine):
    xx = _caller_values()
    res = F("rating ~ temp + xx", wine).fit()
    fitted = res.predict()
    assert fitted.shape == (72, 5)
    np.testing.assert_allclose(fitted, res.predict(wine.assign(xx=xx)), atol=1e-12)
    np.testing.assert_allclose(res.get_prediction().predicted, fitted, atol=1e-12)


def test_clmm_predictions_refuse_a_caller_variable(wine):
    xx = _caller_values()
    res = F("rating ~ temp + xx + (1|judge)", wine).fit()
    new = wine[["temp", "judge"]].iloc[::-1]
    for re_form in (None, 0, "marginal"):
        with pytest.raises(PredictionError, match=LACKS_XX):
            res.predict(new, re_form=re_form)
    np.testing.assert_allclose(res.predict(wine.assign(xx=xx)), res.predict(), atol=1e-12)
    del xx
    with pytest.raises(PredictionError, match=LACKS_XX):
        res.predict(new)
    assert res.predict().shape == (72, 5)


def test_a_caller_variable_follows_the_rows_the_fit_uses(wine):
    # as R's model.frame: a row dropped for a missing value drops the caller's value
    # too. Before: ValueError 'all input arrays must have the same shape' from numpy,
    # also for any data of more than 1000 rows (whose spec is learned from a few rows)
    xx = _caller_values()
    holes = wine.copy()
    holes.loc[3, "temp"] = np.nan
    many = pd.concat([wine] * 15, ignore_index=True)
    many_xx = np.tile(xx, 15)
    cases = [
        ("rating ~ temp + xx", holes, {"xx": xx}),
        ("rating ~ temp + xx + (1|judge)", holes, {"xx": xx}),
        ("rating ~ temp", holes, {"xx": xx, "nominal": "~ xx"}),
        ("rating ~ temp + xx", many, {"xx": many_xx}),
    ]
    for formula, data, extra in cases:
        values = extra.pop("xx")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MissingDataWarning)
            caller = F(formula, data, context={"xx": values}, **extra).fit()
            column = F(formula, data.assign(xx=values), **extra).fit()
        np.testing.assert_allclose(caller.params, column.params, rtol=1e-10, atol=1e-12)
        assert caller.llf == pytest.approx(column.llf, abs=1e-10)


def test_chunks_refuse_a_caller_variable_and_keep_caller_parameters(wine, tmp_path):
    xx = _caller_values()
    path = tmp_path / "wine.csv"
    wine.to_csv(path, index=False)
    big = tmp_path / "big.csv"
    pd.concat([wine] * 20, ignore_index=True).to_csv(big, index=False)
    # before: ValueError 'all input arrays must have the same shape'
    for data, keywords, values in (
        (wine, {"chunksize": 20}, xx),
        (path, {}, xx),
        (big, {"chunksize": 100}, list(np.tile(xx, 20))),
    ):
        with pytest.raises(FormulaError, match=r"'xx'.* calling scope.*add it to the data"):
            F("rating ~ temp + xx", data, context={"xx": values}, **keywords)
    # a parameter of the caller (an array of levels) still serves every chunk;
    # before: "a chunk has values it cannot encode (newdata lacks the column(s) 'lv')"
    levels = {"lv": np.array(["cold", "warm"])}
    in_memory = F("rating ~ C(temp, levels=lv)", wine, context=levels).fit()
    for data, keywords in ((wine, {"chunksize": 20}), (path, {})):
        chunked = F("rating ~ C(temp, levels=lv)", data, context=levels, **keywords).fit()
        assert chunked.llf == pytest.approx(in_memory.llf, abs=1e-9)
        np.testing.assert_allclose(chunked.predict(wine.head()), in_memory.predict(wine.head()))


# -- item: an offset Series for new data is paired by index label ----------------------


@pytest.fixture(scope="module")
def offset_res(wine):
    offset = pd.Series(np.linspace(-1, 1, 72), index=wine.index)
    return F("rating ~ temp + contact", wine, offset=offset).fit()


def test_offset_series_pairs_with_newdata_by_label(offset_res, wine):
    new = wine[["temp", "contact"]].iloc[:4]
    offset = pd.Series([0.0, 1.0, 2.0, 3.0], index=new.index)
    expected = offset_res.predict(new, which="linear", offset=offset)
    shuffled = offset.iloc[[2, 0, 3, 1]]
    pd.testing.assert_series_equal(
        offset_res.predict(new, which="linear", offset=shuffled), expected
    )
    pd.testing.assert_frame_equal(
        offset_res.get_prediction(new, offset=shuffled).predicted,
        offset_res.get_prediction(new, offset=offset).predicted,
    )
    for which in ("prob", "cumprob", "class", "expected"):
        assert offset_res.predict(new, which=which, offset=shuffled).equals(
            offset_res.predict(new, which=which, offset=offset)
        )
    # numpy arrays keep pairing by position
    np.testing.assert_allclose(
        offset_res.predict(new, which="linear", offset=offset.to_numpy()), expected
    )
    np.testing.assert_allclose(
        offset_res.predict(new, which="linear", offset=shuffled.to_numpy()),
        expected - offset + shuffled.to_numpy(),
    )


def test_offset_series_with_other_labels_is_refused(offset_res, wine):
    new = wine[["temp", "contact"]].iloc[:4]
    foreign = pd.Series([0.0, 1.0, 2.0, 3.0], index=[100, 101, 102, 103])
    match = r"index of offset does not hold the same labels as the index of newdata"
    with pytest.raises(DataError, match=match):
        offset_res.predict(new, offset=foreign)
    with pytest.raises(DataError, match=match):
        offset_res.get_prediction(new, offset=foreign)
    with pytest.raises(DataError, match=match):
        offset_res.predict(new, offset=pd.Series([0.0, 1.0, 2.0], index=new.index[:3]))
    with pytest.raises(PredictionError, match=r"one value per row of newdata \(4\); got 3"):
        offset_res.predict(new, offset=np.zeros(3))


def test_offset_for_the_fitted_rows_is_refused_not_ignored(offset_res, wine):
    match = r"offset= is the offset of newdata"
    with pytest.raises(PredictionError, match=match):
        offset_res.predict(offset=1.0)
    with pytest.raises(PredictionError, match=match):
        offset_res.get_prediction(offset=np.zeros(72))


def test_clmm_offset_given_for_newdata_pairs_by_label(wine):
    values = pd.Series(0.25 * (np.arange(72) % 3), index=wine.index)
    res = F("rating ~ temp + contact + (1|judge)", wine, offset=values.to_numpy()).fit()
    new = wine.iloc[:6]
    fitted = res.predict().iloc[:6]
    pd.testing.assert_frame_equal(res.predict(new, offset=values.iloc[:6]), fitted)
    pd.testing.assert_frame_equal(res.predict(new, offset=values.iloc[:6].iloc[::-1]), fitted)
    np.testing.assert_allclose(res.predict(new, offset=values.to_numpy()[:6]), fitted)
    with pytest.raises(DataError, match=r"index of offset does not hold the same labels"):
        res.predict(new, offset=values.iloc[6:12])
    # without it: offset 0 with the clm's note
    with pytest.warns(PredictionWarning, match=r"use offset 0 \(as statsmodels does\)"):
        zero = res.predict(new)
    pd.testing.assert_frame_equal(zero, res.predict(new, offset=0.0))
    with_column = F(
        "rating ~ temp + contact + (1|judge)", wine.assign(off=values), offset="off"
    ).fit()
    with pytest.warns(PredictionWarning, match=r"give newdata a column 'off' or pass offset="):
        with_column.predict(new)
    pd.testing.assert_frame_equal(with_column.predict(new.assign(off=values)), fitted)
    with pytest.warns(MissingDataWarning, match=r"1 row\(s\) of newdata \(2\).*offset"):
        nan_offset = with_column.predict(new.assign(off=values.where(values.index != 2)))
    assert nan_offset.isna().any(axis=1).tolist() == [False, False, True, False, False, False]
    with pytest.raises(PredictionError, match=r"offset= is the offset of newdata"):
        res.predict(offset=0.0)


# -- item: clmm group ids match by value; missing values give NaN with a warning --------


@pytest.fixture(scope="module")
def float_id_res(wine):
    data = wine.assign(j=wine["judge"].astype(int).astype(float))
    data.loc[data.index[0], "j"] = np.nan  # a NaN makes the id column float
    with pytest.warns(MissingDataWarning, match=r"missing or non-finite values in .j."):
        res = F("rating ~ temp + contact + (1|j)", data).fit()
    return data, res


def test_clmm_group_ids_are_matched_by_value(float_id_res):
    data, res = float_id_res
    assert list(res.ranef()["j"].index) == [str(k) for k in range(1, 10)]
    row = data.index[data["j"] == 3.0][0]
    expected = res.predict().loc[row]
    one = data.loc[[row], ["temp", "contact"]]
    for ids in ([3], [3.0], ["3"], np.array([3], dtype=np.int32), pd.array([3], dtype="Int64")):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = res.predict(one.assign(j=ids)).iloc[0]
        pd.testing.assert_series_equal(got, expected)
    mixed = data.loc[[row, row], ["temp", "contact"]]
    mixed["j"] = pd.Series([3, 3.0], index=mixed.index, dtype=object)
    np.testing.assert_allclose(res.predict(mixed), [expected, expected])


def test_clmm_unseen_group_level_is_named(float_id_res):
    data, res = float_id_res
    new = data.iloc[1:4][["temp", "contact"]].assign(j=[3, 10, 11.5])
    with pytest.warns(
        PredictionWarning,
        match=r"2 row\(s\) of newdata belong to level\(s\) '10', '11.5' of the grouping "
        r"factor 'j', not seen in the fit; their random effects \(1\|j\) are set to zero",
    ):
        prob = res.predict(new)
    population = res.predict(new, re_form=0)
    pd.testing.assert_frame_equal(prob.iloc[1:], population.iloc[1:])
    assert not np.allclose(prob.iloc[0], population.iloc[0])


def test_clm_and_clmm_missing_values_give_nan_rows_naming_the_columns(float_id_res):
    data, res = float_id_res
    new = pd.DataFrame(
        {
            "temp": pd.Categorical(["warm", None, "cold", "cold"], categories=["cold", "warm"]),
            "contact": pd.Categorical(["yes", "yes", "no", "no"], categories=["no", "yes"]),
            "j": [3.0, 3.0, np.nan, 2.0],
        },
        index=list("abcd"),
    )
    with pytest.warns(
        MissingDataWarning,
        match=r"2 row\(s\) of newdata \(b, c\) have missing or non-finite predictor values "
        r"\(in 'temp' \(1\), 'j' \(1\)\); their predictions are NaN",
    ) as caught:
        prob = res.predict(new)
    assert not [w for w in caught if issubclass(w.category, PredictionWarning)]
    assert prob.isna().any(axis=1).tolist() == [False, True, True, False]
    np.testing.assert_allclose(prob.loc[["a", "d"]].sum(axis=1), 1.0)
    for which in ("cumprob", "class", "expected"):
        with pytest.warns(MissingDataWarning, match=r"'temp' \(1\), 'j' \(1\)"):
            out = res.predict(new, which=which)
        assert pd.DataFrame(out).isna().any(axis=1).tolist() == [False, True, True, False]
    # without the groups (re_form=0, "marginal") a missing id does not matter
    for re_form in (0, "marginal"):
        with pytest.warns(MissingDataWarning, match=r"1 row\(s\) of newdata \(b\).*'temp' \(1\)\)"):
            out = res.predict(new, re_form=re_form)
        assert out.isna().any(axis=1).tolist() == [False, True, False, False]
    clm = F("rating ~ temp + contact", data).fit()
    with pytest.warns(
        MissingDataWarning, match=r"1 row\(s\) of newdata \(b\).*\(in 'temp' \(1\)\)"
    ):
        assert clm.predict(new).isna().any(axis=1).tolist() == [False, True, False, False]
    as_mapping = {"temp": ["cold", None], "contact": ["no", "yes"]}
    with pytest.warns(
        MissingDataWarning, match=r"1 row\(s\) of newdata \(1\).*\(in 'temp' \(1\)\)"
    ):
        assert clm.predict(as_mapping).isna().any(axis=1).tolist() == [False, True]


def test_clmm_missing_slope_values_give_nan_rows(wine):
    data = wine.assign(x=np.random.default_rng(1).normal(size=72))
    with pytest.warns(SpecificationWarning, match=r"singular fit"):  # 9 judges
        res = F("rating ~ temp + (1 + x|judge)", data).fit()
    new = data.head(4).copy()
    new.loc[new.index[1], "x"] = np.nan
    for re_form in (None, "marginal"):
        with pytest.warns(MissingDataWarning, match=r"1 row\(s\) of newdata \(1\).*'x' \(1\)"):
            prob = res.predict(new, re_form=re_form)
        assert prob.isna().any(axis=1).tolist() == [False, True, False, False]
        np.testing.assert_allclose(
            prob.drop(index=1), res.predict(new.drop(index=1), re_form=re_form)
        )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the slope is not read with the random effects at zero
        assert not res.predict(new, re_form=0).isna().any().any()
    with pytest.raises(PredictionError, match=r"newdata lacks the column\(s\) 'x' of the random"):
        res.predict(new.drop(columns="x").assign(x1=1.0), re_form="marginal")


def test_clmm_missing_factor_slope_value_gives_a_nan_row(wine):
    res = F("rating ~ temp + (1 + contact|judge)", wine).fit()
    new = wine.head(4).astype({"contact": object})
    new.loc[new.index[1], "contact"] = None
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # nothing but ordstats' own warning
        with pytest.warns(MissingDataWarning, match=r"'contact' \(1\)"):
            prob = res.predict(new)
    assert prob.isna().any(axis=1).tolist() == [False, True, False, False]
    with pytest.raises(PredictionError, match=r"level\(s\) 'maybe' that the model was not"):
        res.predict(new.assign(contact=["no", "maybe", "yes", "no"]))


def test_a_caller_list_used_with_dict_data_is_refused_after_remove_data(wine):
    """Data given as a mapping of columns records the caller's per-row variables too."""
    data = {"rating": pd.Categorical(wine["rating"], ordered=True), "temp": wine["temp"].to_numpy()}
    xx = list(np.random.default_rng(0).normal(size=len(wine)))  # noqa: F841 (read by the formula)
    res = F("rating ~ temp + xx", data).fit()
    res.remove_data()
    with pytest.raises(PredictionError, match=r"newdata lacks the column\(s\) 'xx'"):
        res.predict({"temp": wine["temp"].to_numpy()})


# -- new rows and a fit that dropped aliased columns (R's predict.clm warns) ------------

RANK_DEFICIENT = "predictions from a column rank-deficient fit may be misleading"


@pytest.fixture(scope="module")
def aliased_fit(wine):
    """``t2`` is twice ``temp == "warm"`` in the fit's rows: dropped as aliased."""
    data = wine.assign(t2=(wine["temp"] == "warm") * 2.0)
    with pytest.warns(ordstats.errors.CollinearityWarning, match="'t2'"):
        model = F("rating ~ temp + contact + t2", data)
    return model.fit(), data


def test_new_rows_from_a_rank_deficient_fit_warn_as_r(aliased_fit):
    res, data = aliased_fit
    new = data.iloc[:4].assign(t2=[5.0, -1.0, 0.0, 2.0])  # t2 no longer follows temp
    with pytest.warns(PredictionWarning, match=RANK_DEFICIENT + r": the fit dropped 't2'"):
        prob = res.predict(new)
    # the prediction itself ignores t2 (it has no estimated effect)
    assert np.allclose(prob.to_numpy(), res.predict().iloc[:4].to_numpy())
    with pytest.warns(PredictionWarning, match=RANK_DEFICIENT):
        res.get_prediction(new)
    with pytest.warns(PredictionWarning, match=RANK_DEFICIENT):
        res.predict(exog=new, which="class")
    with pytest.warns(PredictionWarning, match=RANK_DEFICIENT):
        res.survival(new, times=[2])
    with pytest.warns(PredictionWarning, match=RANK_DEFICIENT):
        res.mean(new)


def test_the_warning_names_the_callers_line(aliased_fit):
    res, data = aliased_fit
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res.predict(data.iloc[:2])
        res.get_prediction(data.iloc[:2])
        res.mean(data.iloc[:2])
    assert len(caught) == 3
    assert {w.filename for w in caught} == {__file__}


def test_the_fitted_rows_and_full_rank_fits_do_not_warn(aliased_fit, wine):
    res, _ = aliased_fit
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # R warns only with newdata
        res.predict()
        res.get_prediction()
        F("rating ~ temp + contact", wine).fit().predict(wine.iloc[:3])


def test_chunked_fit_warns_once_for_new_rows_not_for_its_own(tmp_path):
    from tests._chunk_data import ratings, write_parquet

    frame = ratings(1200, seed=3, missing=False).assign(x3=lambda d: d["x1"] - d["x2"])
    write_parquet(frame, tmp_path / "parts")
    with pytest.warns(ordstats.errors.CollinearityWarning, match="'x3'"):
        model = F("y ~ x1 + x2 + x3", str(tmp_path / "parts"), chunksize=300)
    res = model.fit()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        own = res.predict()  # the rows of its own files, chunk by chunk
    assert len(own) == len(frame)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res.predict(str(tmp_path / "parts"))  # files as new data: one warning, not per chunk
    assert [str(w.message).startswith(RANK_DEFICIENT) for w in caught] == [True]


# -- models built from arrays: newdata's columns by name, or by position ---------------


def _array_fit(wine: pd.DataFrame, X: pd.DataFrame) -> ordstats.OrdinalResults:
    return ordstats.OrdinalModel(wine["rating"], X).fit()


@pytest.fixture(scope="module")
def dummies(wine):
    X = pd.get_dummies(wine[["temp", "contact"]], drop_first=True).astype(float)
    return X.assign(x=np.linspace(-1, 1, 72))


def test_array_newdata_naming_only_some_columns_is_refused_not_read_by_position(wine, dummies):
    """Before: the columns were read by position (probabilities off by 0.16), silently."""
    res = _array_fit(wine, dummies)
    new = dummies.iloc[[0, 5, 9]]
    partly = new[["contact_yes", "temp_warm", "x"]].rename(columns={"x": "X"})
    match = r"lacks the column\(s\) 'x' .*its column\(s\) 'X' are not among them"
    for method in (res.predict, res.get_prediction, res.avg_predictions):
        with pytest.raises(PredictionError, match=match):
            method(partly)
    # all names in another order: by name; no name at all: by position (documented)
    expected = res.predict(new)
    np.testing.assert_array_equal(res.predict(new[["x", "contact_yes", "temp_warm"]]), expected)
    np.testing.assert_array_equal(res.predict(pd.DataFrame(new.to_numpy())), expected)


def test_array_newdata_naming_none_of_the_columns_warns_that_it_is_read_by_position(wine, dummies):
    """Before: read by position silently (statsmodels reads any DataFrame so, also silently)."""
    new = dummies.iloc[[0, 5, 9]]
    renamed = new.set_axis(["a", "b", "c"], axis=1)
    for X in (dummies, dummies.to_numpy()):  # exog names temp_warm, ...; or x1, x2, x3
        res = _array_fit(wine, X)
        expected = res.predict(new.to_numpy())
        match = r"^newdata's columns \('a', 'b', 'c'\) match none of the exog columns the model"
        with pytest.warns(PredictionWarning, match=match) as caught:
            np.testing.assert_array_equal(res.predict(renamed), expected)
        with pytest.warns(PredictionWarning, match=match) as caught_too:
            predicted = res.get_prediction(renamed).predicted
        np.testing.assert_array_equal(predicted, expected)
        # each warning names the caller's line, whichever method reached the check
        assert {w.filename for w in [*caught, *caught_too]} == {__file__}


def test_array_newdata_with_the_fitted_frames_labels_that_are_not_text(wine, dummies):
    """Before: a raw KeyError (labels 0, 1 compared as text, then looked up as text)."""
    expected = _array_fit(wine, dummies).predict(dummies.iloc[:3])
    numbered = pd.DataFrame(dummies.to_numpy())  # columns 0, 1, 2
    tupled = dummies.set_axis(pd.MultiIndex.from_product([["a"], [1, 2, 3]]), axis=1)
    for X in (numbered, tupled):
        res = _array_fit(wine, X)
        np.testing.assert_allclose(res.predict(X.iloc[:3]), expected, rtol=1e-6)
        np.testing.assert_allclose(res.get_prediction(X.iloc[:3]).predicted, expected, rtol=1e-6)
        reordered = X.iloc[:3, [2, 0, 1]]  # by name, as for text labels
        np.testing.assert_allclose(res.predict(reordered), expected, rtol=1e-6)


def test_array_newdata_text_in_a_named_column_is_a_prediction_error(wine, dummies):
    """Before: a raw ValueError from pandas (the positional branch gave this error)."""
    res = _array_fit(wine, dummies)
    text = dummies.iloc[:3].assign(temp_warm=["a", "b", "c"])
    match = r"newdata must be numbers: .*'temp_warm' that are not numbers"
    with pytest.raises(PredictionError, match=match):
        res.predict(text)
    with pytest.raises(PredictionError, match=match):
        res.get_prediction(text)
    with pytest.raises(PredictionError, match=r"newdata must be numbers"):
        res.predict(text.to_numpy())
