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


def test_classifier_score_names_missing_labels():
    pytest.importorskip("sklearn")
    from ordstats.learn import OrdinalClassifier

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=60)})
    y = pd.Series(np.digitize(X.a + rng.normal(size=60), [-0.5, 0.5])).map(
        {0: "low", 1: "mid", 2: "high"}
    )
    clf = OrdinalClassifier(classes=["low", "mid", "high"]).fit(X, y)
    with pytest.raises(DataError, match=r"y_true has 1 missing value\(s\)"):
        clf.score(X, y.astype("string").mask(y.index == 3, pd.NA))
