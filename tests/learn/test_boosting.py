"""Ordinal boosters on LightGBM and XGBoost: likelihood, thresholds, sklearn, bad input."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("sklearn")
pytest.importorskip("lightgbm")
pytest.importorskip("xgboost")

from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import ordstats
from ordstats.core.links import get_link
from ordstats.errors import OrdstatsError
from ordstats.families.cumulative.boosting import round_derivatives
from ordstats.learn import OrdinalLGBMClassifier, OrdinalXGBClassifier

BOOSTERS = [OrdinalLGBMClassifier, OrdinalXGBClassifier]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    n = 1500
    X = rng.normal(size=(n, 3))
    latent = np.sin(2 * X[:, 0]) + X[:, 1] + rng.logistic(size=n)
    y = np.digitize(latent, [-1.0, 0.0, 1.0])
    return X, y


def _log_loss(prob, y):
    return float(-np.mean(np.log(prob[np.arange(len(y)), y])))


@pytest.mark.parametrize("cls", BOOSTERS)
@pytest.mark.parametrize("link", ["logit", "probit", "cloglog", "loglog", "cauchit"])
def test_every_link_fits_and_thresholds_never_raise_the_nll(cls, link, data):
    X, y = data
    clf = cls(link=link, n_estimators=40, learning_rate=0.1, threshold_update_every=1).fit(X, y)
    trace = clf.threshold_nll_trace_
    assert trace.shape == (40, 2) and np.all(trace[:, 1] <= trace[:, 0])
    prob = clf.predict_proba(X)
    np.testing.assert_allclose(prob.sum(axis=1), 1.0)
    assert np.all(np.diff(clf.thresholds_) > 0)
    assert clf.train_nll_ == pytest.approx(_log_loss(prob, y), rel=1e-10)
    # boosting beats the null model on the training rows
    null = ordstats.OrdinalModel(y, link=link).fit()
    assert clf.train_nll_ < -null.llf / len(y)


def test_gblinear_reaches_the_ordinal_model_likelihood(data):
    X, _ = data
    rng = np.random.default_rng(0)
    y = np.digitize(X @ np.array([1.0, -0.5, 0.3]) + rng.logistic(size=len(X)), [-1, 0, 1])
    res = ordstats.OrdinalModel(y, X).fit()
    clf = OrdinalXGBClassifier(
        booster="gblinear", n_estimators=200, learning_rate=0.5, reg_lambda=0.0
    ).fit(X, y)
    assert clf.train_nll_ * len(y) == pytest.approx(-res.llf, rel=1e-7)
    # the linear score is x'beta up to the shift the thresholds absorb
    eta = clf.latent_score(X)
    slope = np.linalg.lstsq(np.column_stack([X, np.ones(len(y))]), eta, rcond=None)[0][:3]
    np.testing.assert_allclose(slope, res.params.to_numpy()[3:], rtol=1e-3)


def test_constant_trees_converge_to_the_null_model_thresholds(data):
    """Root-only trees from a shifted start: thresholds minus the score -> the null fit."""
    X, y = data
    clf = OrdinalXGBClassifier(
        link="probit",
        n_estimators=60,
        learning_rate=0.5,
        min_child_weight=1e12,  # no split is ever allowed: each tree is one constant
        params={"base_score": 1.5},  # the scores start away from the thresholds' start
    ).fit(X, y)
    eta = clf.latent_score(X)
    assert np.ptp(eta) == pytest.approx(0.0, abs=1e-12)
    null = ordstats.OrdinalModel(y, link="probit").fit()
    np.testing.assert_allclose(clf.thresholds_ - eta[0], null.params, rtol=1e-6)
    # the per-round updates alone (before the final solve) converge too
    assert clf.threshold_nll_trace_[-1, 1] == pytest.approx(-null.llf, rel=1e-8)
    assert clf.threshold_nll_trace_[0, 0] > -null.llf + 1.0


@pytest.mark.parametrize("cls", BOOSTERS)
def test_early_stopping_on_validation_nll(cls, data):
    X, y = data
    clf = cls(n_estimators=500, learning_rate=0.3, early_stopping_rounds=10)
    clf.fit(X[:1000], y[:1000], eval_set=(X[1000:], y[1000:]))
    assert clf.best_iteration_ < 500
    history = clf.evals_result_["valid"]["ordinal_nll"]
    assert len(history) < 500
    assert min(history) == pytest.approx(history[clf.best_iteration_ - 1], rel=1e-12)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("cls", BOOSTERS)
def test_reported_best_score_is_the_returned_models_validation_nll(cls, weighted, data):
    # before: thresholds were re-solved on the training rows after early stopping, so
    # the returned model's validation NLL was 0.005-0.010 above the recorded best score
    # (and XGBoost's record was rounded to 6 decimals)
    X, y = data
    w = np.random.default_rng(5).uniform(0.5, 2.0, len(y)) if weighted else np.ones(len(y))
    fit_kw = {"sample_weight": w[:1000] if weighted else None}
    fit_kw["eval_sample_weight"] = w[1000:] if weighted else None
    clf = cls(n_estimators=500, learning_rate=0.3, early_stopping_rounds=10, n_jobs=1)
    clf.fit(X[:1000], y[:1000], eval_set=(X[1000:], y[1000:]), **fit_kw)
    history = clf.evals_result_["valid"]["ordinal_nll"]
    assert clf.best_iteration_ == int(np.argmin(history)) + 1 < len(history)
    prob = clf.predict_proba(X[1000:])
    nll = -np.sum(w[1000:] * np.log(prob[np.arange(500), y[1000:]])) / np.sum(w[1000:])
    assert abs(nll - history[clf.best_iteration_ - 1]) < 1e-10
    assert clf.best_score_ == history[clf.best_iteration_ - 1]
    # without early stopping: the last round's score is the returned model's
    plain = cls(n_estimators=8, n_jobs=1).fit(X[:1000], y[:1000], eval_set=(X[1000:], y[1000:]))
    prob = plain.predict_proba(X[1000:])
    assert abs(_log_loss(prob, y[1000:]) - plain.evals_result_["valid"]["ordinal_nll"][-1]) < 1e-10
    assert plain.best_score_ == plain.evals_result_["valid"]["ordinal_nll"][-1]
    assert plain.fit(X[:1000], y[:1000]).best_score_ is None  # refitted without eval_set


@pytest.mark.parametrize(
    "cls, options",
    [
        # row-count settings off: one bin per value, min_child_samples on few leaves
        (
            OrdinalLGBMClassifier,
            {
                "num_leaves": 4,
                "min_child_samples": 1,
                "params": {"max_bin": 1023, "min_data_in_bin": 1, "min_sum_hessian_in_leaf": 0},
            },
        ),
        (OrdinalXGBClassifier, {}),
    ],
)
def test_case_weights_are_repeated_rows(cls, options, data):
    X, y = data[0][:300], data[1][:300]
    k = np.random.default_rng(6).integers(1, 4, len(y))
    kw = {"n_estimators": 10, "threshold_update_every": 1, "n_jobs": 1, **options}
    weighted = cls(**kw).fit(X, y, sample_weight=k.astype(float))
    repeated = cls(**kw).fit(np.repeat(X, k, axis=0), np.repeat(y, k))
    np.testing.assert_allclose(weighted.thresholds_, repeated.thresholds_, atol=1e-7)
    np.testing.assert_allclose(weighted.predict_proba(X), repeated.predict_proba(X), atol=1e-7)
    assert weighted.train_nll_ == pytest.approx(repeated.train_nll_, rel=1e-8)


@pytest.mark.parametrize("cls", BOOSTERS)
def test_categories_at_prediction_are_those_of_the_fit(cls, data):
    # before: XGBoost refused a category column whose categories differed from the fit's
    # (an unused extra one, or a new value) with a raw XGBoostError; LightGBM recodes
    X, y = data[0][:400], data[1][:400]
    frame = pd.DataFrame(X[:, :2], columns=["a", "b"])
    group = np.where(X[:, 2] > 0, "hi", "lo")
    frame["g"] = pd.Categorical(group)
    y = np.clip(y + (group == "hi"), 0, 3)
    clf = cls(n_estimators=20, n_jobs=1).fit(frame, y)
    expected = clf.predict_proba(frame)
    extra = frame.copy()
    extra["g"] = pd.Categorical(group, categories=["lo", "hi", "new"])
    np.testing.assert_allclose(clf.predict_proba(extra), expected)
    unseen, missing = frame.copy(), frame.copy()
    unseen["g"] = pd.Categorical(np.where(group == "hi", "new", group))
    missing["g"] = pd.Categorical(np.where(group == "hi", None, group), categories=["hi", "lo"])
    np.testing.assert_allclose(clf.predict_proba(unseen), clf.predict_proba(missing))
    assert unseen["g"].cat.categories.tolist() == ["lo", "new"]  # the caller's frame


@pytest.mark.parametrize("cls", BOOSTERS)
def test_a_data_frame_with_infinite_or_text_values_is_refused_as_an_array_is(cls, data):
    # before: LightGBM fitted infinite values as large numbers, XGBoost failed with a raw
    # XGBoostError (a numpy X with them is refused); text columns got each booster's error
    X, y = data[0][:200], data[1][:200]
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    clf = cls(n_estimators=3, n_jobs=1).fit(frame, y)
    infinite = frame.assign(b=np.where(X[:, 1] > 1, np.inf, X[:, 1]))
    text = frame.assign(c=np.where(X[:, 2] > 0, "up", "down"))
    for bad, message in [(infinite, r"infinite values in column\(s\) 'b'"), (text, "'c'")]:
        with pytest.raises(OrdstatsError, match=message):
            cls(n_estimators=3, n_jobs=1).fit(bad, y)
        with pytest.raises(OrdstatsError, match=message):
            clf.predict_proba(bad)
    missing = frame.assign(b=pd.array(np.where(X[:, 1] > 1, None, X[:, 1]), dtype="Float64"))
    assert np.isfinite(cls(n_estimators=3, n_jobs=1).fit(missing, y).predict_proba(missing)).all()


@pytest.mark.parametrize("cls", BOOSTERS)
def test_fixed_thresholds_stay_at_the_null_model(cls, data):
    X, y = data
    clf = cls(n_estimators=20, learn_thresholds=False).fit(X, y)
    null = ordstats.OrdinalModel(y).fit()
    np.testing.assert_allclose(clf.thresholds_, null.params, rtol=1e-6)
    assert clf.threshold_nll_trace_.shape == (0, 2)


@pytest.mark.parametrize("cls", BOOSTERS)
def test_weights_pandas_categorical_features_and_pickle(cls, data):
    X, y = data
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    frame["group"] = pd.Categorical(np.where(X[:, 2] > 0, "hi", "lo"))
    labels = pd.Categorical.from_codes(y, ["low", "mid", "high", "top"], ordered=True)
    w = np.random.default_rng(1).uniform(0.5, 2.0, len(y))
    clf = cls(n_estimators=30).fit(frame, labels, sample_weight=w)
    assert clf.classes_.tolist() == ["low", "mid", "high", "top"]
    assert list(clf.feature_names_in_) == ["a", "b", "c", "group"]
    assert clf.feature_importances_.shape == (4,)
    assert set(clf.predict(frame)) <= set(clf.classes_)
    restored = pickle.loads(pickle.dumps(clf))
    np.testing.assert_allclose(restored.predict_proba(frame), clf.predict_proba(frame))
    # doubling every weight changes nothing when the booster's own penalties do not
    # depend on the Hessian's scale (XGBoost's defaults lambda = 1, min_child_weight = 1 do)
    plain = {"reg_lambda": 0.0, "min_child_weight": 0.0} if cls is OrdinalXGBClassifier else {}
    once = cls(n_estimators=30, **plain).fit(frame, labels, sample_weight=w)
    doubled = cls(n_estimators=30, **plain).fit(frame, labels, sample_weight=2 * w)
    np.testing.assert_allclose(doubled.thresholds_, once.thresholds_, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("cls", BOOSTERS)
def test_column_names_the_boosters_refuse_are_fitted_as_the_same_model(cls, data):
    # one-hot and binned columns get names such as "age_[18, 30)" or "x<0", whose
    # characters LightGBM (JSON: " , : [ ] { }) or XGBoost ([ ] <) refuse as feature names
    X, y = data
    plain = pd.DataFrame(X, columns=["a", "b", "c"])
    plain["group"] = pd.Categorical(np.where(X[:, 2] > 0, "hi", "lo"))
    odd = plain.set_axis(["age_[18, 30)", "x<0", 'q:"{z}"', "group"], axis=1)
    options = {"n_estimators": 15, "random_state": 0, "early_stopping_rounds": 3}
    fitted = cls(**options).fit(odd, y, eval_set=[(odd.iloc[:200], y[:200])])
    assert list(fitted.feature_names_in_) == list(odd.columns)
    reference = cls(**options).fit(plain, y, eval_set=[(plain.iloc[:200], y[:200])])
    np.testing.assert_array_equal(fitted.predict_proba(odd), reference.predict_proba(plain))
    assert fitted.best_iteration_ == reference.best_iteration_
    assert fitted.feature_importances_.shape == (4,)
    # names that become equal once cleaned ("a[1]", "a_1_") get positional ones
    clash = plain.iloc[:, :2].set_axis(["a[1]", "a_1_"], axis=1)
    assert cls(n_estimators=3).fit(clash, y).predict_proba(clash).shape == (len(y), 4)


@pytest.mark.parametrize("cls", BOOSTERS)
@pytest.mark.parametrize("importance_type", ["first", "gain"])
def test_importances_after_early_stopping_are_those_of_the_rounds_kept(cls, importance_type, data):
    # an early-stopped booster predicts with best_iteration_ rounds: its importances are
    # those of a booster of that many rounds, not of the rounds after the best one
    X, y = data
    kind = {"first": "split" if cls is OrdinalLGBMClassifier else "weight"}.get(
        importance_type, importance_type
    )
    options = {"learning_rate": 0.5, "random_state": 0, "importance_type": kind}
    valid = {"eval_set": [(X[:300], y[:300])]}
    stopped = cls(n_estimators=200, early_stopping_rounds=5, **options).fit(
        X[300:], y[300:], **valid
    )
    rounds = stopped.best_iteration_
    assert rounds < len(stopped.evals_result_["valid"]["ordinal_nll"])
    kept = cls(n_estimators=rounds, **options).fit(X[300:], y[300:], **valid)
    # the same trees (the thresholds, solved after the last round, agree to the solver's tolerance)
    np.testing.assert_allclose(stopped.predict_proba(X), kept.predict_proba(X), atol=1e-8)
    np.testing.assert_allclose(stopped.feature_importances_, kept.feature_importances_, rtol=1e-12)


@pytest.mark.parametrize("options", [{"booster": "gblinear"}, {"params": {"booster": "gblinear"}}])
def test_a_linear_xgboost_booster_is_not_early_stopped(options, data):
    # XGBoost predicts gblinear with its last coefficients whatever the iteration range:
    # an "early-stopped" model would report best_iteration_ rounds but predict with all
    X, y = data
    clf = OrdinalXGBClassifier(n_estimators=50, early_stopping_rounds=3, **options)
    with pytest.raises(OrdstatsError, match="cannot be used with booster='gblinear'"):
        clf.fit(X[300:], y[300:], eval_set=[(X[:300], y[:300])])
    # without early stopping the validation NLL is recorded as before
    clf.set_params(early_stopping_rounds=None).fit(X[300:], y[300:], eval_set=[(X[:300], y[:300])])
    assert len(clf.evals_result_["valid"]["ordinal_nll"]) == 50


@pytest.mark.parametrize("cls", BOOSTERS)
def test_sklearn_composition(cls, data):
    X, y = data
    pipe = make_pipeline(StandardScaler(), cls(n_estimators=20))
    scores = cross_val_score(pipe, X, y, cv=3)
    assert scores.shape == (3,) and np.all(scores <= 0)
    grid = GridSearchCV(cls(n_estimators=10), {"link": ["logit", "probit"]}, cv=2).fit(X, y)
    assert grid.best_params_["link"] in ("logit", "probit")
    assert clone(cls(link="cloglog")).get_params()["link"] == "cloglog"


@pytest.mark.parametrize("cls", BOOSTERS)
@pytest.mark.parametrize(
    ("kwargs", "y_change", "message"),
    [
        ({}, "one_class", "at least 2 classes"),
        ({}, "nan", "missing values"),
        ({"classes": [0, 1, 2]}, None, "not among classes"),
        ({"link": "logistic"}, None, "link must be one of"),
        ({"early_stopping_rounds": 5}, None, "needs validation rows"),
        ({"prediction": "median"}, None, r"no longer a parameter.*kind='median'"),
        ({"params": {"objective": "regression"}}, None, "may not set 'objective'"),
        ({"params": {"num_class": 4}}, None, "may not set 'num_class'"),
        ({"n_estimators": 0}, None, "n_estimators must be"),
    ],
)
def test_bad_input_gets_clear_errors(cls, data, kwargs, y_change, message):
    X, y = data
    y = y.astype(float)
    if y_change == "one_class":
        y = np.zeros(len(y))
    elif y_change == "nan":
        y[3] = np.nan
    with pytest.raises(OrdstatsError, match=message):
        cls(**{"n_estimators": 5, **kwargs}).fit(X, y)


@pytest.mark.parametrize("cls", BOOSTERS)
def test_unseen_validation_class_is_an_error(cls, data):
    # the error names the validation rows, and does not suggest classes= (a class
    # without training rows cannot be fitted)
    X, y = data
    with pytest.raises(OrdstatsError, match="not among classes") as info:
        cls(n_estimators=5).fit(X, y, eval_set=(X[:10], np.full(10, 7)))
    message = str(info.value)
    assert message.startswith("the validation y (eval_set) has the value 7")
    assert "classes=" not in message


@pytest.mark.parametrize(
    "cls, module", [(OrdinalLGBMClassifier, "lightgbm"), (OrdinalXGBClassifier, "xgboost")]
)
def test_missing_booster_names_the_extra(monkeypatch, cls, module, data):
    import importlib

    X, y = data
    fitted = cls(n_estimators=5, n_jobs=1).fit(X[:200], y[:200])
    real = importlib.import_module

    def fake(name, *args, **kwargs):
        if name == module:
            raise ImportError(f"no {module}")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(importlib, "import_module", fake)
    with pytest.raises(ImportError, match=rf"ordstats\[{module}\]"):
        cls(n_estimators=5).fit(X, y)
    if module == "xgboost":  # predicting builds an XGBoost matrix
        with pytest.raises(ImportError, match=r"ordstats\[xgboost\]"):
            fitted.predict_proba(X[:5])


@pytest.mark.parametrize("cls", BOOSTERS)
def test_thresholds_updated_every_few_rounds(cls, data):
    X, y = data
    every = cls(n_estimators=40).fit(X, y)  # the default: every 5th round
    assert every.threshold_update_every == 5
    assert every.threshold_nll_trace_.shape == (8, 2)
    assert np.all(every.threshold_nll_trace_[:, 1] <= every.threshold_nll_trace_[:, 0])
    each = cls(n_estimators=40, threshold_update_every=1).fit(X, y)
    assert every.train_nll_ == pytest.approx(each.train_nll_, rel=0.02)
    with pytest.raises(OrdstatsError, match="threshold_update_every"):
        cls(n_estimators=5, threshold_update_every=0).fit(X, y)


@pytest.mark.parametrize(
    "cls, options",
    [
        (OrdinalLGBMClassifier, {}),
        (OrdinalLGBMClassifier, {"subsample": 0.7}),
        (OrdinalLGBMClassifier, {"params": {"boosting": "dart"}}),
        (OrdinalLGBMClassifier, {"early_stopping_rounds": 3, "learning_rate": 0.8}),
        (OrdinalXGBClassifier, {"subsample": 0.7}),
        (OrdinalXGBClassifier, {"early_stopping_rounds": 3, "learning_rate": 0.8}),
    ],
)
def test_training_scores_equal_predicting_through_the_trees(cls, options, data):
    """The final thresholds use training scores kept from the last round (plus its tree):
    they must be the scores predict gives, so thresholds_ solve the model at them."""
    X, y = data
    fit_kw = {}
    if "early_stopping_rounds" in options:
        fit_kw["eval_set"] = (X[:300], y[:300])
    clf = cls(n_estimators=30, random_state=0, **options).fit(X[300:], y[300:], **fit_kw)
    prob = clf.predict_proba(X[300:])
    assert clf.train_nll_ == pytest.approx(_log_loss(prob, y[300:]), rel=1e-12)
    if fit_kw:  # validated: the best round's thresholds (its recorded validation NLL)
        valid = _log_loss(clf.predict_proba(X[:300]), y[:300])
        assert clf.best_score_ == pytest.approx(valid, rel=1e-12)
        return
    d = round_derivatives(clf.latent_score(X[300:]), y[300:], clf.thresholds_, get_link(clf.link))
    np.testing.assert_allclose(d.threshold_gradient, 0.0, atol=1e-7 * len(y))


@pytest.mark.parametrize("cls", BOOSTERS)
def test_pandas_inputs_pair_by_index_label(cls, data):
    # before: a pandas y and weights were paired with X by position whatever their indexes
    X = pd.DataFrame(data[0][:400], columns=["a", "b", "c"])
    y = pd.Series(data[1][:400])
    weights = pd.Series(np.linspace(0.5, 2.0, 400))
    order = np.random.default_rng(4).permutation(400)
    options = {"n_estimators": 5, "n_jobs": 1}
    expected = cls(**options).fit(X, y, sample_weight=weights, eval_set=(X, y))
    shuffled = cls(**options).fit(
        X.iloc[order], y, sample_weight=weights.iloc[order], eval_set=(X.iloc[order], y)
    )
    assert shuffled.train_nll_ == pytest.approx(expected.train_nll_, rel=1e-6)
    assert shuffled.score(X.iloc[order], y) == pytest.approx(expected.score(X, y))
    with pytest.raises(OrdstatsError, match=r"index of y does not hold the same labels as"):
        cls(**options).fit(X, y.set_axis(y.index + 1000))
    with pytest.raises(OrdstatsError, match=r"index of y_val does not hold the same labels"):
        cls(**options).fit(X, y, eval_set=(X, y.set_axis(y.index + 1000)))


@pytest.mark.parametrize("name", ["OrdinalLGBMClassifier", "OrdinalXGBClassifier"])
def test_an_unknown_fit_argument_is_named_without_internal_names(name):
    # before: "_OrdinalBooster.fit() got an unexpected keyword argument 'init_score'"
    import ordstats.learn

    X = np.random.default_rng(0).normal(size=(30, 2))
    y = np.arange(30) % 3
    with pytest.raises(TypeError, match=r"fit\(\) got the argument\(s\) 'init_score'") as err:
        getattr(ordstats.learn, name)().fit(X, y, init_score=np.zeros(30))
    assert "_Ordinal" not in str(err.value)
