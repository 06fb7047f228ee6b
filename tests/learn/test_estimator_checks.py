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

#: Checks every ordstats estimator fails by design, with the reason.
EXPECTED_FAILED_CHECKS: dict[str, str] = {
    "check_classifiers_classes": (
        "the check fits unordered text labels ('one', 'two', 'three'); an ordinal estimator "
        "refuses to guess their order (it needs classes= or an ordered Categorical, "
        "tests/learn/test_estimator.py::test_text_labels_need_an_order)"
    ),
}

#: Checks that only some estimators fail by design.
EXPECTED_FAILED_BY_ESTIMATOR: dict[str, dict[str, str]] = {
    "OrdinalClassifierCV": {
        "check_sample_weight_equivalence_on_dense_data": (
            "alpha_ is chosen on folds of rows: a row of weight 2 sits in one fold while its "
            "two copies can fall into different folds, so the chosen penalty (and the fit) "
            "differ, as for any estimator that cross-validates inside fit"
        ),
    },
}


def expected_failed_checks(estimator) -> dict[str, str]:
    """The checks ``estimator`` fails by design (strict: a pass is reported as an error)."""
    return {
        **EXPECTED_FAILED_CHECKS,
        **EXPECTED_FAILED_BY_ESTIMATOR.get(type(estimator).__name__, {}),
    }


@parametrize_with_checks(
    [
        OrdinalClassifier(),
        OrdinalClassifier(family="acat", check_separation=False),
        OrdinalClassifier(alpha=0.01, l1_ratio=0.5),
        OrdinalClassifierCV(n_alphas=5, cv=3),
        *_boosters(),
    ],
    expected_failed_checks=expected_failed_checks,
    xfail_strict=True,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
