"""The estimators' contract: predict is the argmax, other rules by kind=, clear parameter errors."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

pytest.importorskip("sklearn")

from sklearn.base import clone
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import (
    check_classifiers_train,
    check_methods_subset_invariance,
    check_supervised_y_2d,
)

from ordstats.errors import SpecificationError
from ordstats.learn import OrdinalClassifier, OrdinalClassifierCV
from tests.learn._estimators import HAS_LIGHTGBM, HAS_XGBOOST, ids, installed_boosters

ESTIMATORS = [
    OrdinalClassifier(),
    OrdinalClassifierCV(n_alphas=4, cv=3),
    *installed_boosters({"n_estimators": 20, "min_child_samples": 5}, {"n_estimators": 20}),
]
IDS = ids(ESTIMATORS)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(5)
    n = 400
    X = rng.normal(size=(n, 2))
    y = np.digitize(1.5 * X[:, 0] + rng.logistic(size=n), [-2.0, -0.5, 0.5, 2.0])
    return X, y


# -- predict: the classifier contract, and the other class rules by kind= -----------


@pytest.mark.filterwarnings("ignore::ordstats.errors.OrdstatsWarning")
@pytest.mark.parametrize("estimator", ESTIMATORS, ids=IDS)
def test_predict_is_the_argmax_and_kind_gives_the_other_rules(estimator, data):
    X, y = data
    clf = clone(estimator).fit(X, y)
    prob = clf.predict_proba(X)
    mode = clf.classes_[prob.argmax(axis=1)]
    np.testing.assert_array_equal(clf.predict(X), mode)  # what scikit-learn requires
    np.testing.assert_array_equal(clf.predict(X, kind="mode"), mode)
    median = clf.classes_[(np.cumsum(prob, axis=1) >= 0.5 - 1e-12).argmax(axis=1)]
    np.testing.assert_array_equal(clf.predict(X, kind="median"), median)
    nearest = np.clip(np.rint(prob @ np.arange(prob.shape[1])), 0, prob.shape[1] - 1)
    np.testing.assert_array_equal(
        clf.predict(X, kind="expected"), clf.classes_[nearest.astype(int)]
    )
    # the rules differ on these data, so the contract is not met by accident
    assert not np.array_equal(clf.predict(X, kind="median"), mode) or not np.array_equal(
        clf.predict(X, kind="expected"), mode
    )
    with pytest.raises(SpecificationError, match="kind must be one of"):
        clf.predict(X, kind="mean")
    # score and the scorers use the argmax
    assert clf.score(X, y) == pytest.approx(
        -np.mean(np.abs(np.searchsorted(clf.classes_, mode) - np.searchsorted(clf.classes_, y)))
    )


@pytest.mark.parametrize("estimator", ESTIMATORS[:1] + ESTIMATORS[2:], ids=IDS[:1] + IDS[2:])
def test_a_pipeline_passes_kind_on(estimator, data):
    X, y = data
    pipe = make_pipeline(StandardScaler(), clone(estimator)).fit(X, y)
    final = pipe[-1]
    Xs = pipe[0].transform(X)
    np.testing.assert_array_equal(pipe.predict(X, kind="median"), final.predict(Xs, kind="median"))
    np.testing.assert_array_equal(pipe.predict(X), final.predict(Xs))


@pytest.mark.filterwarnings("ignore::ordstats.errors.OrdstatsWarning")
@pytest.mark.parametrize("estimator", ESTIMATORS, ids=IDS)
@pytest.mark.parametrize(
    "check", [check_classifiers_train, check_methods_subset_invariance, check_supervised_y_2d]
)
def test_sklearn_prediction_checks(estimator, check):
    # check_classifiers_train asserts predict == argmax(predict_proba); with the
    # former prediction="median" / "expected" constructor option it failed
    check(type(estimator).__name__, clone(estimator))


# -- parameters that do not exist get an error saying where they belong -------------


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=IDS)
def test_the_former_prediction_option_points_at_kind(estimator):
    with pytest.raises(SpecificationError, match=r"no longer a parameter.*predict\(X, kind="):
        type(estimator)(prediction="median")
    with pytest.raises(SpecificationError, match=r"no longer a parameter"):
        clone(estimator).set_params(prediction="median")


@pytest.mark.skipif(not HAS_LIGHTGBM, reason="needs lightgbm")
def test_lightgbm_keywords_point_at_params(data):
    from ordstats.learn import OrdinalLGBMClassifier

    with pytest.raises(
        SpecificationError, match=r"no parameter 'verbose'.*params=\{'verbose': -1\}"
    ):
        OrdinalLGBMClassifier(verbose=-1)
    with pytest.raises(SpecificationError, match=r"params=\{'max_bin': 63\}"):
        OrdinalLGBMClassifier(n_estimators=5).set_params(max_bin=63)
    X, y = data
    clf = OrdinalLGBMClassifier(n_estimators=5, params={"verbose": -1, "max_bin": 63}).fit(X, y)
    assert clone(clf).get_params()["params"] == {"verbose": -1, "max_bin": 63}
    restored = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(restored.predict_proba(X[:5]), clf.predict_proba(X[:5]))


@pytest.mark.skipif(not HAS_XGBOOST, reason="needs xgboost")
def test_xgboost_keywords_point_at_params():
    from ordstats.learn import OrdinalXGBClassifier

    with pytest.raises(
        SpecificationError, match=r"no parameter 'verbosity'.*params=\{'verbosity': 0\}"
    ):
        OrdinalXGBClassifier(verbosity=0)


def test_classifier_keywords_list_the_parameters():
    with pytest.raises(SpecificationError, match=r"no parameter 'C'\. Its parameters are: .*alpha"):
        OrdinalClassifier(C=1.0)
    clf = OrdinalClassifier(link="probit")  # declared keywords and positions are unchanged
    assert clone(clf).get_params()["link"] == "probit"
    assert OrdinalClassifier("cumulative", "cloglog").link == "cloglog"


@pytest.mark.skipif(not HAS_LIGHTGBM, reason="needs lightgbm")
@pytest.mark.parametrize(
    "params",
    [
        {"objective": "regression"},
        {"application": "binary"},
        {"metric": "l2"},
        {"metrics": ["l1"]},
        {"num_class": 3},
    ],
)
def test_lightgbm_params_may_not_replace_the_ordinal_model(params, data):
    from ordstats.learn import OrdinalLGBMClassifier

    X, y = data
    with pytest.raises(SpecificationError, match="may not set"):
        OrdinalLGBMClassifier(n_estimators=3, params=params).fit(X, y)


@pytest.mark.skipif(not HAS_LIGHTGBM, reason="needs lightgbm")
@pytest.mark.parametrize("params", [{"boosting": "rf"}, {"boosting_type": "random_forest"}])
def test_lightgbm_random_forest_mode_is_refused_with_a_reason(params, data):
    # before: LightGBM's own LightGBMError from inside lightgbm.train ("RF mode do not
    # support custom objective function"), while a docstring listed it as supported
    from ordstats.learn import OrdinalLGBMClassifier

    X, y = data
    params = {**params, "bagging_fraction": 0.5, "bagging_freq": 1}
    with pytest.raises(SpecificationError, match=r"random-forest boosting \('rf'\).*gbdt"):
        OrdinalLGBMClassifier(n_estimators=3, params=params).fit(X, y)


@pytest.mark.skipif(not HAS_XGBOOST, reason="needs xgboost")
@pytest.mark.parametrize(
    "params", [{"objective": "reg:squarederror"}, {"eval_metric": "rmse"}, {"num_class": 3}]
)
def test_xgboost_params_may_not_replace_the_ordinal_model(params, data):
    from ordstats.learn import OrdinalXGBClassifier

    X, y = data
    with pytest.raises(SpecificationError, match="may not set"):
        OrdinalXGBClassifier(n_estimators=3, params=params).fit(X, y)


@pytest.mark.skipif(not HAS_LIGHTGBM or not HAS_XGBOOST, reason="needs lightgbm and xgboost")
def test_keywords_the_ordinal_model_owns_are_not_pointed_at_params():
    # objective= used to get "Pass LightGBM's own parameters through params=, e.g.
    # params={'objective': 'regression'}", which fit then refused
    from ordstats.learn import OrdinalLGBMClassifier, OrdinalXGBClassifier

    for make in (
        lambda: OrdinalLGBMClassifier(objective="regression"),
        lambda: OrdinalLGBMClassifier(verbose=-1, metric="l2"),
        lambda: OrdinalLGBMClassifier().set_params(num_class=3),
        lambda: OrdinalXGBClassifier(eval_metric="mlogloss"),
    ):
        with pytest.raises(SpecificationError, match="keywords may not set") as info:
            make()
        assert "params=" not in str(info.value)
