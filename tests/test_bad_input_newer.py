"""Bad input to the newer entry points (metrics, estimators) gets a clear ordstats error."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ordstats import metrics
from ordstats.errors import DataError

# -- metrics: missing values and values that are not numbers -----------------


@pytest.mark.parametrize(
    "missing",
    [
        pd.Series(["low", pd.NA, "high"], dtype="string"),
        pd.Series(["low", None, "high"], dtype=object),
        pd.Series(["low", np.nan, "high"], dtype=object),
    ],
    ids=["pd.NA", "None", "NaN"],
)
def test_metrics_name_missing_labels(missing):
    truth = pd.Series(["low", "mid", "high"])
    labels = ["low", "mid", "high"]
    with pytest.raises(DataError, match=r"y_pred has 1 missing value\(s\)"):
        metrics.mean_absolute_class_error(truth, missing, labels=labels)
    with pytest.raises(DataError, match=r"y_true has 1 missing value\(s\)"):
        metrics.concordance_index(missing, [0.1, 0.2, 0.3], labels=labels)


def test_metrics_refuse_text_scores_and_weights():
    with pytest.raises(DataError, match="y_score must be numbers"):
        metrics.concordance_index([1, 2, 3], ["a", "b", "c"])
    with pytest.raises(DataError, match="sample_weight must be numbers"):
        metrics.mean_absolute_class_error([1, 2], [1, 2], sample_weight=["a", "b"])


def _text_classifier():
    pytest.importorskip("sklearn")
    from ordstats.learn import OrdinalClassifier

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=60)}, index=np.arange(100, 160))
    y = pd.Series(np.digitize(X.a + rng.normal(size=60), [-0.5, 0.5]), index=X.index).map(
        {0: "low", 1: "mid", 2: "high"}
    )
    return OrdinalClassifier(classes=["low", "mid", "high"]).fit(X, y), X, y


def test_classifier_score_names_missing_labels():
    clf, X, y = _text_classifier()
    with pytest.raises(DataError, match=r"y_true has 1 missing value\(s\)"):
        clf.score(X, y.astype("string").mask(y.index == 103, pd.NA))


def test_probability_metrics_refuse_rows_that_do_not_sum_to_one():
    """Cumulative probabilities P(Y <= j) passed as y_prob gave a score, silently wrong."""
    prob = np.array([[0.2, 0.5, 0.3], [0.1, 0.3, 0.6]])
    cumulative = np.cumsum(prob, axis=1)
    for metric in (metrics.ranked_probability_score, metrics.ordinal_log_loss):
        assert np.isfinite(metric([1, 3], prob, labels=[1, 2, 3]))
        with pytest.raises(DataError, match=r"2 row\(s\) do not \(first at position 0: sum 1.9\)"):
            metric([1, 3], cumulative, labels=[1, 2, 3])
    # float32 probabilities (xgboost's predict_proba) are within the tolerance
    many = np.full((2, 20), 0.05, dtype=np.float32)
    assert np.isfinite(metrics.ranked_probability_score([0, 19], many, labels=list(range(20))))


@pytest.mark.parametrize("name", sorted(metrics.SCORERS))
def test_scorers_pair_a_pandas_y_with_X_by_label(name):
    """As estimator.score: a y in another row order was scored against the wrong rows."""
    clf, X, y = _text_classifier()
    scorer = metrics.SCORERS[name]
    shuffled = y.sample(frac=1, random_state=4)
    weights = pd.Series(np.arange(60) + 1.0, index=X.index)
    assert scorer(clf, X, shuffled) == pytest.approx(scorer(clf, X, y), rel=1e-12)
    assert scorer(clf, X, y, sample_weight=weights[::-1]) == pytest.approx(
        scorer(clf, X, y, sample_weight=weights.to_numpy()), rel=1e-12
    )
    with pytest.raises(DataError, match="X and y are pandas objects whose indexes hold"):
        scorer(clf, X, y.reset_index(drop=True))


# -- models from arrays: the response is checked before the columns -----------


def test_a_single_row_from_arrays_names_the_response_not_constant_columns():
    """One row made every exog column 'constant', which said to remove the columns."""
    from ordstats import OrdinalModel
    from ordstats.design.censored import Censored
    from ordstats.errors import ResponseError

    y = pd.Categorical(["2"], categories=["2"], ordered=True)
    X = pd.DataFrame({"a": [0.5], "b": [1.0]})
    with pytest.raises(ResponseError, match=r"1 observed level \(only '2'\)"):
        OrdinalModel(pd.Series(y), X)
    with pytest.raises(ResponseError, match=r"has 1 level after censoring"):
        OrdinalModel(Censored([1.0], [1.0]), X, many_levels=True)
