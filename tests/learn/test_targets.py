"""One rule for the classes of y in every ordstats estimator (ordstats/learn/_targets.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("sklearn")

from sklearn.base import clone

from ordstats.errors import DataError, ResponseError
from ordstats.learn import OrdinalClassifier
from tests.learn._estimators import ids, installed_boosters

ESTIMATORS = [
    OrdinalClassifier(check_separation=False),
    *installed_boosters({"n_estimators": 3, "min_child_samples": 2}, {"n_estimators": 3}),
]
IDS = ids(ESTIMATORS)


@pytest.fixture(scope="module")
def sample():
    rng = np.random.default_rng(7)
    n = 240
    X = rng.normal(size=(n, 1))
    codes = np.digitize(2.0 * X[:, 0] + rng.logistic(size=n), [-1.0, 1.0])
    return X, codes


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=IDS)
def test_text_labels_need_an_order(estimator, sample):
    X, codes = sample
    labels = np.array(["low", "mid", "high"])
    with pytest.raises(
        ResponseError, match=r"without an order .* 'high' < 'low' < 'mid'.*classes="
    ):
        clone(estimator).fit(X, labels[codes])
    with pytest.raises(ResponseError, match="without an order"):
        clone(estimator).fit(X, list(labels[codes]))
    unordered = pd.Categorical(labels[codes])  # an unordered Categorical of text
    with pytest.raises(ResponseError, match="ordered pandas Categorical"):
        clone(estimator).fit(X, unordered)
    explicit = clone(estimator).set_params(classes=["low", "mid", "high"]).fit(X, labels[codes])
    assert list(explicit.classes_) == ["low", "mid", "high"]
    ordered = pd.Categorical(labels[codes], categories=["low", "mid", "high"], ordered=True)
    by_categorical = clone(estimator).fit(X, ordered)
    assert list(by_categorical.classes_) == ["low", "mid", "high"]
    np.testing.assert_allclose(explicit.predict_proba(X), by_categorical.predict_proba(X))


def test_text_labels_in_their_order_give_the_right_slope(sample):
    # issue 29: sorted alphabetically the slope was -0.71 instead of about +2
    X, codes = sample
    labels = np.array(["low", "mid", "high"])
    clf = OrdinalClassifier(classes=["low", "mid", "high"]).fit(X, labels[codes])
    numeric = OrdinalClassifier().fit(X, codes)
    np.testing.assert_allclose(clf.coef_, numeric.coef_, rtol=1e-12)
    assert clf.coef_[0] > 1.5


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=IDS)
@pytest.mark.parametrize(
    "values",
    [
        [1, "a", 2],  # numbers and text
        [True, 2, 3],  # booleans and numbers
        np.array([1, "b", 2.5], dtype=object),
    ],
)
def test_mixed_types_need_an_order(estimator, values, sample):
    X, codes = sample
    y = [values[c] for c in codes]
    with pytest.raises(ResponseError, match="without an order of their own"):
        clone(estimator).fit(X, y)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=IDS)
@pytest.mark.parametrize(
    "classes",
    [
        np.array([10, 20, 30]),
        np.array([1.0, 1.5, 2.0]),  # half steps (issue 29, item 23)
        np.array([1, 2, 2.5], dtype=object),  # numbers stored as objects
        np.array([2**63, 2**63 + 1, 2**63 + 2], dtype=np.uint64),  # beyond int64 (item 22)
    ],
)
def test_numbers_keep_their_numeric_order(estimator, classes, sample):
    X, codes = sample
    rows = np.argsort(-X[:, 0])  # the first rows have the highest x and classes
    y = classes[codes][rows]
    clf = clone(estimator).fit(X[rows], y)
    assert clf.classes_.tolist() == classes.tolist()
    prob = clf.predict_proba(X)
    # a higher x means a higher class in numeric order, whatever the order of the rows
    assert np.corrcoef(prob @ np.arange(3), X[:, 0])[0, 1] > 0.5
    assert set(clf.predict(X).tolist()) <= set(classes.tolist())
    assert -2 <= clf.score(X[rows], y) <= 0


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=IDS)
def test_booleans_are_false_then_true(estimator, sample):
    X, codes = sample
    y = codes > 0
    clf = clone(estimator).fit(X, y)
    assert clf.classes_.tolist() == [False, True]
    assert clf.score(X, y) <= 0


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=IDS)
def test_a_continuous_target_is_refused_unless_its_classes_are_listed(estimator):
    rng = np.random.default_rng(8)
    X = rng.normal(size=(120, 1))
    y = np.round(X[:, 0] + rng.normal(size=120), 3)
    with pytest.raises(ResponseError, match=r"continuous target.*classes="):
        clone(estimator).fit(X, y)
    steps = np.repeat(np.arange(60), 2)  # 60 classes, each listed: one threshold per class
    clf = clone(estimator).set_params(classes=list(range(60))).fit(X, steps)
    assert len(clf.classes_) == 60


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=IDS)
def test_a_class_without_rows_is_told_apart_by_where_it_came_from(estimator, sample):
    # every such class was told "drop them from classes=", also without classes=
    X, codes = sample
    unused = pd.Categorical(codes, categories=[0, 1, 2, 3], ordered=True)
    with pytest.raises(ResponseError, match=r"\[3\] have no rows.*remove_unused_") as info:
        clone(estimator).fit(X, unused)
    assert "classes=" not in str(info.value)
    with pytest.raises(ResponseError, match=r"\[3\] have no rows.*drop them from classes="):
        clone(estimator).set_params(classes=[0, 1, 2, 3]).fit(X, codes)
    weights = (codes != 2).astype(float)
    with pytest.raises(ResponseError, match=r"\[2\] have only rows of sample_weight 0") as info:
        clone(estimator).fit(X, codes, sample_weight=weights)
    assert "classes=" not in str(info.value)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=IDS)
@pytest.mark.parametrize("missing", [None, np.nan, pd.NA])
def test_missing_values_in_y_get_one_clear_error(estimator, sample, missing):
    # OrdinalClassifier raised a raw TypeError from sorting for None in an object array
    X, codes = sample
    y = np.array([*codes[:-1], missing], dtype=object)
    with pytest.raises(DataError, match=r"y has missing values .*drop those rows or impute"):
        clone(estimator).fit(X, y)
    with pytest.raises(DataError, match=r"y has missing values"):
        clone(estimator).fit(X, list(y))
