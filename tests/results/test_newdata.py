"""How fitted models read new data: caller variables, offsets, group ids, missing values."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats.errors import DataError, PredictionError

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
