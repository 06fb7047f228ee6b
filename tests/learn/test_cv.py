"""OrdinalClassifierCV takes what scikit-learn's CV estimators take as cv= (issue 29, item 12)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sklearn")

from sklearn.model_selection import (
    GridSearchCV,
    GroupKFold,
    KFold,
    ShuffleSplit,
    StratifiedKFold,
    cross_val_score,
)

import ordstats
from ordstats.errors import SpecificationError
from ordstats.learn import OrdinalClassifierCV

OPTIONS = {"n_alphas": 6, "scoring": "rps"}


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(11)
    n = 150
    X = rng.normal(size=(n, 3))
    y = np.digitize(X @ np.array([1.0, -0.5, 0.0]) + rng.logistic(size=n), [-1.0, 0.0, 1.0])
    groups = np.repeat(np.arange(15), 10)
    return X, y, groups


def _reference(X, y, splits, weights=None):
    """OrdinalModel.cv on the same folds (positions among the model's rows)."""
    model = ordstats.OrdinalModel(y, X, weights=weights)
    return model.cv(n_alphas=6, cv=splits, scoring="rps", l1_ratio=0.5, standardize=True)


@pytest.mark.parametrize(
    "cv",
    [
        KFold(3, shuffle=True, random_state=0),
        StratifiedKFold(4),
        ShuffleSplit(3, test_size=0.3, random_state=1),
    ],
    ids=["KFold", "StratifiedKFold", "ShuffleSplit"],
)
def test_a_splitter_gives_its_folds(data, cv):
    X, y, _ = data
    clf = OrdinalClassifierCV(cv=cv, **OPTIONS).fit(X, y)
    ref = _reference(X, y, list(cv.split(X, y)))
    np.testing.assert_allclose(clf.cv_results_.fold_losses, ref.fold_losses, rtol=1e-10)
    assert clf.alpha_ == pytest.approx(ref.alpha_best)
    assert clf.cv_results_.fold_losses.shape[0] == cv.get_n_splits()


def test_group_folds_need_groups_and_use_them(data):
    X, y, groups = data
    clf = OrdinalClassifierCV(cv=GroupKFold(3), **OPTIONS).fit(X, y, groups=groups)
    splits = list(GroupKFold(3).split(X, y, groups))
    for train, test in splits:  # no group on both sides
        assert not set(groups[train]) & set(groups[test])
    ref = _reference(X, y, splits)
    np.testing.assert_allclose(clf.cv_results_.fold_losses, ref.fold_losses, rtol=1e-10)
    with pytest.raises(SpecificationError, match="pass groups= to fit"):
        OrdinalClassifierCV(cv=GroupKFold(3), **OPTIONS).fit(X, y)


def test_a_list_of_splits_and_none(data):
    X, y, _ = data
    splits = list(KFold(3).split(X))
    by_list = OrdinalClassifierCV(cv=splits, **OPTIONS).fit(X, y)
    by_splitter = OrdinalClassifierCV(cv=KFold(3), **OPTIONS).fit(X, y)
    np.testing.assert_array_equal(
        by_list.cv_results_.fold_losses, by_splitter.cv_results_.fold_losses
    )
    default = OrdinalClassifierCV(cv=None, **OPTIONS).fit(X, y)  # as scikit-learn: 5 folds
    np.testing.assert_array_equal(
        default.cv_results_.fold_losses,
        OrdinalClassifierCV(cv=5, **OPTIONS).fit(X, y).cv_results_.fold_losses,
    )


def test_rows_of_zero_weight_are_in_no_fold(data):
    X, y, _ = data
    w = np.ones(len(y))
    w[::7] = 0.0  # left out by the model: the splitter's positions are mapped past them
    splits = list(KFold(3).split(X))
    clf = OrdinalClassifierCV(cv=splits, **OPTIONS).fit(X, y, sample_weight=w)
    kept = np.flatnonzero(w > 0)
    position = np.full(len(y), -1)
    position[kept] = np.arange(len(kept))
    mapped = [
        (position[tr][position[tr] >= 0], position[te][position[te] >= 0]) for tr, te in splits
    ]
    ref = _reference(X[kept], y[kept], mapped)
    np.testing.assert_allclose(clf.cv_results_.fold_losses, ref.fold_losses, rtol=1e-10)


def test_a_splitter_in_grid_search_and_cross_val_score(data):
    X, y, _ = data
    clf = OrdinalClassifierCV(cv=StratifiedKFold(3), **OPTIONS)
    scores = cross_val_score(clf, X, y, cv=KFold(3))
    assert scores.shape == (3,) and np.all(np.isfinite(scores))
    search = GridSearchCV(clf, {"l1_ratio": [0.5, 1.0]}, cv=3).fit(X, y)
    assert search.best_estimator_.cv.n_splits == 3


@pytest.mark.parametrize(
    ("cv", "message"),
    [
        ("five", "could not split"),
        ([(np.arange(100), np.arange(100, 150))], "at least 2"),
        ([(np.arange(100), np.arange(100, 150)), (np.arange(50), [])], "non-empty"),
        ([(np.arange(100), np.arange(100, 160)), (np.arange(50), np.arange(50, 60))], "0..149"),
    ],
)
def test_bad_cv_is_named(data, cv, message):
    X, y, _ = data
    with pytest.raises(SpecificationError, match=message):
        OrdinalClassifierCV(cv=cv, **OPTIONS).fit(X, y)


def test_a_fold_without_a_class_is_named(data):
    X, y, _ = data
    order = np.argsort(y, kind="stable")  # sorted rows: the first of 3 folds holds class 0
    with pytest.raises(SpecificationError, match=r"cv fold 0: .* no rows of level\(s\) '0'"):
        OrdinalClassifierCV(cv=KFold(3), **OPTIONS).fit(X[order], y[order])
