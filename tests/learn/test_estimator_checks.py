"""scikit-learn's own estimator checks on every ordstats estimator."""

from __future__ import annotations

import pytest

pytest.importorskip("sklearn")

from sklearn.utils.estimator_checks import parametrize_with_checks

from ordstats.learn import OrdinalClassifier, OrdinalClassifierCV


def _boosters() -> list:
    """The ordinal boosters whose booster is installed (the test extra installs both)."""
    import importlib.util

    from ordstats.learn import OrdinalLGBMClassifier, OrdinalXGBClassifier

    found = []
    if importlib.util.find_spec("lightgbm"):
        found.append(OrdinalLGBMClassifier(n_estimators=5))
    if importlib.util.find_spec("xgboost"):
        found.append(OrdinalXGBClassifier(n_estimators=5))
    return found


# sklearn's check data (blobs) are separable: the SeparationWarning is right there
pytestmark = pytest.mark.filterwarnings("ignore::ordstats.errors.OrdstatsWarning")

#: Checks OrdinalClassifier fails by design, with the reason (sklearn's mechanism).
EXPECTED_FAILED_CHECKS: dict[str, str] = {
    "check_sample_weight_equivalence_on_dense_data": (
        "the check's blobs are completely separated, so the maximum-likelihood estimates "
        "do not exist and Newton stops at different points of the ridge for weighted and "
        "repeated rows; on data with a finite MLE weights equal repeated rows exactly "
        "(tests/learn/test_estimator.py::test_weights_equal_repeated_rows)"
    ),
}


@parametrize_with_checks(
    [
        OrdinalClassifier(),
        OrdinalClassifier(family="acat", check_separation=False),
        OrdinalClassifier(alpha=0.01, l1_ratio=0.5),
        OrdinalClassifierCV(n_alphas=5, cv=3),
        *_boosters(),
    ],
    expected_failed_checks=lambda est: EXPECTED_FAILED_CHECKS,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
