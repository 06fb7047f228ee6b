"""Classifier results carry the names of X and y; constant columns are left out (issue 29)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("sklearn")

from sklearn.compose import ColumnTransformer
from sklearn.model_selection import KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

import ordstats
from ordstats.errors import CollinearityWarning
from ordstats.learn import OrdinalClassifier, OrdinalClassifierCV

LEVELS = ["low", "mid", "high"]


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(21)
    n = 300
    X = pd.DataFrame(
        {
            "age": rng.normal(size=n),
            "income": rng.normal(size=n),
            "region": rng.choice(["north", "south"], n),
        }
    )
    codes = np.digitize(X["age"] + rng.logistic(size=n), [-1.0, 1.0])
    y = pd.Categorical(np.array(LEVELS)[codes], categories=LEVELS, ordered=True)
    return X, y


# -- names (item 14) -----------------------------------------------------------------


def test_params_are_named_after_the_columns_and_classes(frame):
    X, y = frame
    clf = OrdinalClassifier().fit(X[["age", "income"]], y)
    assert list(clf.results_.params.index) == ["low|mid", "mid|high", "age", "income"]
    assert "age" in str(clf.results_.summary())
    # the same names and numbers as OrdinalModel on the same pandas input
    ref = ordstats.OrdinalModel(pd.Series(y, index=X.index), X[["age", "income"]]).fit()
    pd.testing.assert_series_equal(clf.results_.params, ref.params, rtol=1e-10)


def test_arrays_keep_positional_names_and_class_values_name_the_thresholds(frame):
    X, _ = frame
    noise = np.random.default_rng(22).logistic(size=len(X))
    codes = np.digitize(X["age"].to_numpy() + noise, [-0.5, 0.5])
    half = np.array([1.0, 1.5, 2.0])[codes]
    clf = OrdinalClassifier().fit(X[["age", "income"]].to_numpy(), half)
    assert list(clf.results_.params.index) == ["1|1.5", "1.5|2", "x1", "x2"]


def test_column_transformer_pandas_output_names_reach_the_results(frame):
    X, y = frame
    encode = ColumnTransformer(
        [
            ("num", StandardScaler(), ["age", "income"]),
            ("cat", OneHotEncoder(drop="first", sparse_output=False), ["region"]),
        ]
    ).set_output(transform="pandas")
    pipe = make_pipeline(encode, OrdinalClassifier()).fit(X, y)
    names = list(pipe[-1].results_.params.index)
    assert names == ["low|mid", "mid|high", "num__age", "num__income", "cat__region_south"]
    assert list(pipe[-1].feature_names_in_) == names[2:]
    cv = OrdinalClassifierCV(n_alphas=4, cv=3).fit(pipe[0].transform(X), y)
    assert list(cv.results_.params.index) == names


def test_flexible_link_predicts_from_named_columns(frame):
    X, y = frame
    clf = OrdinalClassifier(link="aranda-ordaz").fit(X[["age", "income"]], y)
    assert list(clf.results_.params.index)[-1] == "lambda"
    np.testing.assert_allclose(
        clf.predict_proba(X[["age", "income"]].iloc[:5]),
        clf.results_.predict(X[["age", "income"]].iloc[:5]).to_numpy(),
    )


@pytest.mark.parametrize(("column", "link"), [("lambda", "aranda-ordaz"), ("low|mid", "logit")])
def test_a_column_named_as_another_parameter_keeps_positional_names(frame, column, link):
    # a column "lambda" beside the flexible link's lambda, or "low|mid" beside the
    # threshold, gave two parameters one name: summary() failed with a raw pandas error
    X, y = frame
    named = X[["age", "income"]].rename(columns={"income": column})
    clf = OrdinalClassifier(link=link).fit(named, y)
    params = clf.results_.params
    assert params.index.is_unique
    assert list(params.index[2:4]) == ["x1", "x2"]
    assert "x2" in str(clf.results_.summary())
    plain = OrdinalClassifier(link=link).fit(named.to_numpy(), y)
    pd.testing.assert_series_equal(params, plain.results_.params, rtol=1e-10)
    np.testing.assert_allclose(
        clf.predict_proba(named.iloc[:5]), plain.predict_proba(named.to_numpy()[:5]), rtol=1e-10
    )


# -- constant columns (item 23) ----------------------------------------------------------


def test_a_constant_column_is_left_out_with_a_warning(frame):
    X, y = frame
    with_constant = X[["age", "income"]].assign(one=1.0)
    with pytest.warns(CollinearityWarning, match=r"'one' are constant .*coefficient 0"):
        clf = OrdinalClassifier().fit(with_constant, y)
    plain = OrdinalClassifier().fit(X[["age", "income"]], y)
    np.testing.assert_allclose(clf.coef_, [*plain.coef_, 0.0], rtol=1e-12)
    assert list(clf.results_.params.index) == list(plain.results_.params.index)
    shifted = with_constant.assign(one=5.0)  # its value at prediction time has no effect
    np.testing.assert_allclose(
        clf.predict_proba(shifted), plain.predict_proba(X[["age", "income"]])
    )


def test_only_constant_columns_fit_the_thresholds(frame):
    _, y = frame
    with pytest.warns(CollinearityWarning, match="'x1', 'x2' are constant"):
        clf = OrdinalClassifier().fit(np.ones((len(y), 2)), y)
    assert list(clf.results_.params.index) == ["low|mid", "mid|high"]
    np.testing.assert_array_equal(clf.coef_, [0.0, 0.0])
    counts = pd.Series(y).value_counts(normalize=True)[LEVELS].to_numpy()
    np.testing.assert_allclose(clf.predict_proba(np.ones((1, 2)))[0], counts, atol=1e-6)


def test_constant_among_the_rows_of_positive_weight(frame):
    X, y = frame
    column = np.zeros(len(y))
    column[:5] = 1.0
    weights = np.ones(len(y))
    weights[:5] = 0.0  # the column varies only on rows the model leaves out
    data = np.column_stack([X["age"], column])
    with pytest.warns(CollinearityWarning, match="'x2' are constant"):
        clf = OrdinalClassifier().fit(data, y, sample_weight=weights)
    assert clf.coef_[1] == 0.0


def test_a_rare_dummy_absent_from_a_fold_does_not_fail_cross_validation(frame):
    X, y = frame
    rare = np.zeros(len(y))
    rare[:4] = 1.0  # all four in the first fold: constant in that fold's training rows
    data = np.column_stack([X["age"], rare])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # sklearn's FitFailedWarning would be an error
        warnings.simplefilter("ignore", CollinearityWarning)
        scores = cross_val_score(OrdinalClassifier(), data, y, cv=KFold(5), error_score="raise")
    assert np.all(np.isfinite(scores))
