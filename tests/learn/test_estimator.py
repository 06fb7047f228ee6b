"""OrdinalClassifier: equal to OrdinalModel, sklearn composition, bad input."""

from __future__ import annotations

import pickle
import sys

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("sklearn")

from sklearn.compose import ColumnTransformer
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

import ordstats
from ordstats.errors import OrdstatsError, ResponseError
from ordstats.learn import OrdinalClassifier, metrics


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(1)
    n = 300
    X = rng.normal(size=(n, 3))
    latent = X @ np.array([1.0, -0.5, 0.25]) + rng.logistic(size=n)
    y = np.digitize(latent, [-1.5, 0.0, 1.5]) * 10  # classes 0, 10, 20, 30
    return X, y


def test_import_ordstats_does_not_import_sklearn():
    import subprocess

    code = "import sys, ordstats, ordstats.learn, ordstats.metrics; print('sklearn' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize(
    ("family", "link"),
    [
        ("cumulative", "logit"),
        ("cumulative", "probit"),
        ("cumulative", "cloglog"),
        ("cumulative", "loglog"),
        ("cumulative", "cauchit"),
        ("sratio", "logit"),
        ("cratio", "probit"),
        ("acat", "logit"),
    ],
)
def test_equals_ordinal_model(data, family, link):
    X, y = data
    clf = OrdinalClassifier(family=family, link=link).fit(X, y)
    res = ordstats.OrdinalModel(y, X, family=family, link=link).fit()
    np.testing.assert_allclose(clf.results_.params.to_numpy(), res.params.to_numpy(), rtol=1e-10)
    np.testing.assert_allclose(clf.coef_, res.params[["x1", "x2", "x3"]].to_numpy(), rtol=1e-10)
    np.testing.assert_allclose(clf.predict_proba(X[:7]), res.predict(X[:7]).to_numpy(), rtol=1e-10)
    assert clf.results_.llf == pytest.approx(res.llf, rel=1e-12)
    np.testing.assert_array_equal(clf.classes_, [0, 10, 20, 30])


def test_threshold_structure_and_wine_llf(wine):
    X = (wine[["temp", "contact"]] != ["cold", "no"]).astype(float)
    clf = OrdinalClassifier(threshold="equidistant").fit(X, wine["rating"])
    res = ordstats.OrdinalModel.from_formula(
        "rating ~ temp + contact", wine, threshold="equidistant"
    ).fit()
    assert clf.results_.llf == pytest.approx(res.llf, rel=1e-10)
    assert list(clf.feature_names_in_) == ["temp", "contact"]
    assert list(clf.classes_) == list(wine["rating"].cat.categories)


def test_predictions(data):
    X, y = data
    clf = OrdinalClassifier().fit(X, y)
    prob = clf.predict_proba(X)
    np.testing.assert_allclose(prob.sum(axis=1), 1.0)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[prob.argmax(axis=1)])
    median = clf.predict(X, kind="median")
    first_half = (np.cumsum(prob, axis=1) >= 0.5).argmax(axis=1)
    np.testing.assert_array_equal(median, clf.classes_[first_half])
    expected = clf.expected_index(X)
    np.testing.assert_allclose(expected, prob @ np.arange(4))
    rounded = clf.predict(X, kind="expected")
    np.testing.assert_array_equal(rounded, clf.classes_[np.rint(expected).astype(int)])
    assert not np.array_equal(median, clf.predict(X, kind="mode"))


def test_score_is_minus_class_mae(data):
    X, y = data
    clf = OrdinalClassifier().fit(X, y)
    pred = clf.predict(X)
    mae = np.mean(
        np.abs(np.searchsorted([0, 10, 20, 30], pred) - np.searchsorted([0, 10, 20, 30], y))
    )
    assert clf.score(X, y) == pytest.approx(-mae)


def test_classes_order_from_categorical_and_explicit():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(200, 1))
    labels = np.array(["low", "mid", "high"])
    codes = np.digitize(X[:, 0] + rng.logistic(size=200), [-0.5, 0.5])
    y = pd.Series(pd.Categorical(labels[codes], categories=labels, ordered=True))
    clf = OrdinalClassifier().fit(X, y)
    assert list(clf.classes_) == ["low", "mid", "high"]
    assert clf.coef_[0] > 0  # higher X, higher class in the categorical's order
    explicit = OrdinalClassifier(classes=["low", "mid", "high"]).fit(X, labels[codes])
    np.testing.assert_allclose(explicit.coef_, clf.coef_)
    with pytest.raises(ResponseError, match=r"without an order .* 'high' < 'low' < 'mid'"):
        OrdinalClassifier().fit(X, labels[codes])  # text: never sorted alphabetically


def test_weights_equal_repeated_rows(data):
    X, y = data
    w = np.arange(len(y)) % 3
    weighted = OrdinalClassifier().fit(X, y, sample_weight=w)
    repeated = OrdinalClassifier().fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    np.testing.assert_allclose(weighted.coef_, repeated.coef_, rtol=1e-8)
    np.testing.assert_allclose(weighted.intercept_, repeated.intercept_, rtol=1e-8)


def test_pickle_roundtrip(data):
    X, y = data
    clf = OrdinalClassifier(link="probit").fit(X, y)
    again = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(again.predict_proba(X), clf.predict_proba(X))
    assert again.get_params() == clf.get_params()


def test_pipeline_column_transformer_grid_search(data):
    X, y = data
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    frame["group"] = np.where(X[:, 0] > 0, "up", "down")
    pre = ColumnTransformer(
        [
            ("num", StandardScaler(), ["a", "b", "c"]),
            ("cat", OneHotEncoder(drop="first", sparse_output=False), ["group"]),
        ]
    )
    pipe = make_pipeline(pre, OrdinalClassifier())
    pipe.set_output(transform="pandas")
    pipe.fit(frame, y)
    assert pipe.predict_proba(frame).shape == (len(y), 4)
    assert list(pipe[-1].feature_names_in_) == ["num__a", "num__b", "num__c", "cat__group_up"]
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    scores = cross_val_score(pipe, frame, y, cv=cv)
    assert scores.shape == (3,) and np.all(scores <= 0)
    grid = GridSearchCV(
        make_pipeline(StandardScaler(), OrdinalClassifier()),
        {"ordinalclassifier__link": ["logit", "probit"]},
        cv=cv,
        scoring=metrics.SCORERS,
        refit="neg_rps",
    ).fit(X, y)
    assert grid.best_params_["ordinalclassifier__link"] in {"logit", "probit"}
    assert set(grid.cv_results_) >= {"mean_test_qwk", "mean_test_concordance"}


def test_bad_input(data):
    X, y = data
    with pytest.raises(ValueError, match="string"):
        OrdinalClassifier().fit(np.array([["a"], ["b"], ["c"]], dtype=object), [1, 2, 3])
    with pytest.raises(ValueError, match="class"):
        OrdinalClassifier().fit(X, np.ones(len(y)))
    with pytest.raises(OrdstatsError, match="not among classes"):
        OrdinalClassifier(classes=[0, 10, 20]).fit(X, y)
    with pytest.raises(OrdstatsError, match="no rows"):
        OrdinalClassifier(classes=[0, 5, 10, 20, 30]).fit(X, y)
    with pytest.raises(OrdstatsError, match="negative"):
        OrdinalClassifier().fit(X, y, sample_weight=-np.ones(len(y)))
    with pytest.raises(OrdstatsError, match=r"no longer a parameter.*predict\(X, kind="):
        OrdinalClassifier(prediction="median")
    clf = OrdinalClassifier().fit(X, y)
    with pytest.raises(OrdstatsError, match="kind must be one of"):
        clf.predict(X, kind="mean")
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :2])
    with pytest.raises(OrdstatsError, match="not among labels"):
        clf.score(X, y + 1)


# -- penalised and cross-validated classifiers ---------------------------------


def test_penalised_classifier_equals_fit_regularized(data):
    X, y = data
    clf = OrdinalClassifier(alpha=0.05, l1_ratio=0.7, standardize=True).fit(X, y)
    codes = np.searchsorted(np.unique(y), y)
    ref = ordstats.OrdinalModel(codes, X).fit_regularized(alpha=0.05, L1_wt=0.7, standardize=True)
    np.testing.assert_allclose(clf.results_.params.to_numpy(), ref.params.to_numpy(), atol=1e-9)
    np.testing.assert_allclose(clf.coef_, ref.params.to_numpy()[3:], atol=1e-9)
    # alpha = 0 is the maximum-likelihood fit itself
    plain = OrdinalClassifier(alpha=0.0).fit(X, y)
    mle = ordstats.OrdinalModel(codes, X).fit()
    np.testing.assert_allclose(plain.results_.params.to_numpy(), mle.params.to_numpy())


def test_lasso_classifier_zeroes_slopes_and_shrinks(data):
    X, y = data
    noise = np.column_stack([X, np.random.default_rng(5).normal(size=(len(y), 2))])
    unpenalised = OrdinalClassifier().fit(noise, y).coef_
    lasso = OrdinalClassifier(alpha=0.05, l1_ratio=1.0).fit(noise, y).coef_
    assert np.sum(lasso == 0) >= 1
    assert np.sum(np.abs(lasso)) < np.sum(np.abs(unpenalised))


def test_cv_classifier_chooses_alpha_as_model_cv_and_refits(data):
    from ordstats.learn import OrdinalClassifierCV

    X, y = data
    clf = OrdinalClassifierCV(n_alphas=12, cv=4, scoring="rps", random_state=3).fit(X, y)
    model = ordstats.OrdinalModel(np.searchsorted(np.unique(y), y), X)
    ref = model.cv(n_alphas=12, cv=4, scoring="rps", l1_ratio=0.5, standardize=True, seed=3)
    assert clf.alpha_ == pytest.approx(ref.alpha_best)
    np.testing.assert_allclose(clf.cv_results_.mean, ref.mean)
    direct = model.fit_regularized(alpha=clf.alpha_, L1_wt=0.5, standardize=True)
    np.testing.assert_allclose(clf.coef_, direct.params.to_numpy()[3:], atol=1e-6)
    one_se = OrdinalClassifierCV(
        n_alphas=12, cv=4, scoring="rps", random_state=3, select="1se"
    ).fit(X, y)
    assert one_se.alpha_ == pytest.approx(ref.alpha_1se) and one_se.alpha_ >= clf.alpha_
    assert clf.predict_proba(X[:5]).shape == (5, 4)
    assert set(clf.predict(X)) <= set(clf.classes_)
    restored = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(restored.predict_proba(X[:5]), clf.predict_proba(X[:5]))


def test_cv_classifier_in_a_pipeline_and_cross_val_score(data):
    from ordstats.learn import OrdinalClassifierCV

    X, y = data
    pipe = make_pipeline(StandardScaler(), OrdinalClassifierCV(n_alphas=6, cv=3))
    scores = cross_val_score(pipe, X, y, cv=StratifiedKFold(3))
    assert scores.shape == (3,) and np.all(scores <= 0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"select": "min"}, "select must be"),
        ({"scoring": "accuracy"}, "scoring must be one of"),
        ({"cv": 1}, "cv must be at least 2"),
        ({"l1_ratio": 2.0}, "l1_ratio"),
    ],
)
def test_cv_classifier_bad_options(data, kwargs, message):
    from ordstats.learn import OrdinalClassifierCV

    X, y = data
    with pytest.raises(OrdstatsError, match=message):
        OrdinalClassifierCV(n_alphas=4, **kwargs).fit(X, y)


def test_penalised_classifier_bad_alpha(data):
    X, y = data
    with pytest.raises(OrdstatsError, match="alpha must be a finite number"):
        OrdinalClassifier(alpha=-1.0).fit(X, y)


@pytest.mark.parametrize(
    "y",
    [
        np.array([3, -2, 7, 3, -2]),
        np.array([1, 2, 3, 2], dtype=np.uint8),
        np.array([0, 10**12, 5]),  # a wide span: hashed, not counted
        np.array([2.0, 0.5, 2.0]),
        np.array([2**63, 2**63 + 2, 2**63 + 1, 2**63], dtype=np.uint64),  # beyond int64
        np.array([2**63, 2**64 - 1, 2**63], dtype=np.uint64),
        np.array([-(2**63), -(2**63) + 3, -(2**63)]),
    ],
)
def test_integer_classes_are_counted_and_encoded_as_the_general_path(y):
    from ordstats.learn import _targets

    classes = _targets._observed_classes(y)
    np.testing.assert_array_equal(classes, np.unique(y))
    assert classes.dtype == np.unique(y).dtype
    np.testing.assert_array_equal(
        _targets.encode_classes(y, classes), pd.Index(np.unique(y)).get_indexer(y)
    )
    low = classes.min().item()  # an explicit class without rows, inside the type's range
    extra = low - 1 if y.dtype.kind == "f" or low > np.iinfo(y.dtype).min else low + 1
    wider = np.concatenate([classes, np.array([extra], dtype=y.dtype)])
    np.testing.assert_array_equal(_targets.encode_classes(y, wider), pd.Index(wider).get_indexer(y))
    as_list = np.array(classes.tolist(), dtype=object)  # classes= of Python integers
    np.testing.assert_array_equal(
        _targets.encode_classes(y, as_list), pd.Index(np.unique(y)).get_indexer(y)
    )
    with pytest.raises(ResponseError, match="not among classes"):
        _targets.encode_classes(y, classes[1:])


def test_pandas_inputs_pair_by_index_label(data):
    # before: X, y and sample_weight were paired by position whatever their indexes
    X = pd.DataFrame(data[0], columns=["a", "b", "c"])
    y = pd.Series(data[1])
    weights = pd.Series(np.linspace(0.5, 2.0, len(y)))
    order = np.random.default_rng(3).permutation(len(y))
    expected = OrdinalClassifier().fit(X, y, sample_weight=weights)
    shuffled = OrdinalClassifier().fit(X.iloc[order], y, sample_weight=weights.iloc[order])
    np.testing.assert_allclose(shuffled.coef_, expected.coef_, rtol=1e-8)
    assert shuffled.score(X.iloc[order], y) == pytest.approx(expected.score(X, y))
    # numpy on either side pairs by position, as in scikit-learn
    positional = OrdinalClassifier().fit(X.iloc[order], y.to_numpy())
    assert not np.allclose(positional.coef_, expected.coef_)
    relabelled = y.set_axis(y.index + 1000)
    with pytest.raises(OrdstatsError, match=r"index of y does not hold the same labels as.* X"):
        OrdinalClassifier().fit(X, relabelled)
    with pytest.raises(OrdstatsError, match=r"index of sample_weight does not hold the same"):
        OrdinalClassifier().fit(X, y, sample_weight=weights.set_axis(weights.index + 1000))
    with pytest.raises(OrdstatsError, match=r"index of y does not hold the same labels as"):
        expected.score(X, relabelled)


def test_score_with_classes_of_another_type_says_so(data):
    # before: "y_true has values ['1', '2'] that are not among labels ['1', '2']"
    X, y = data
    clf = OrdinalClassifier(classes=["0", "10", "20", "30"]).fit(X, y.astype(str))
    with pytest.raises(OrdstatsError, match=r"y_true holds int values and the labels are str"):
        clf.score(X, y)
    numeric = OrdinalClassifier().fit(X, y)
    message = r"values '0', .*not among labels \[0, 10.*astype\(int\)"
    with pytest.raises(OrdstatsError, match=message):
        numeric.score(X, y.astype(str))


@pytest.mark.parametrize(
    ("labels", "classes"),
    [
        (np.array(["low", "mid", "high", "top"]), ["low", "mid", "high", "top"]),
        (np.array([30, 20, 10, 0]), [30, 20, 10, 0]),
    ],
)
def test_probability_scorers_of_ordered_classes_read_classes_(data, labels, classes):
    """classes_ keep the classes' order. ordstats' log-loss scorer reads it; scikit-learn's
    pairs predict_proba's columns with the sorted labels and scores the wrong ones, as the
    class Notes and the README say (this guards that statement)."""
    from sklearn.metrics import get_scorer

    from ordstats.metrics import SCORERS

    X, y = data
    y_labels = labels[np.searchsorted(np.unique(y), y)]
    clf = OrdinalClassifier(classes=classes).fit(X, y_labels)
    prob = clf.predict_proba(X)
    index = np.array([classes.index(v) for v in y_labels])
    exact = float(np.mean(np.log(prob[np.arange(len(y_labels)), index])))
    assert SCORERS["neg_log_loss"](clf, X, y_labels) == pytest.approx(exact, rel=1e-12)
    assert get_scorer("neg_log_loss")(clf, X, y_labels) < exact - 0.05
