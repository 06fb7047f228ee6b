"""The ordstats estimators whose libraries are installed, for tests that run on each."""

from __future__ import annotations

import importlib.util
from typing import Any

HAS_LIGHTGBM = importlib.util.find_spec("lightgbm") is not None
HAS_XGBOOST = importlib.util.find_spec("xgboost") is not None


def installed_boosters(lightgbm: dict[str, Any], xgboost: dict[str, Any]) -> list[Any]:
    """An OrdinalLGBMClassifier and an OrdinalXGBClassifier with these options, if installed."""
    found: list[Any] = []
    if HAS_LIGHTGBM:
        from ordstats.learn import OrdinalLGBMClassifier

        found.append(OrdinalLGBMClassifier(**lightgbm))
    if HAS_XGBOOST:
        from ordstats.learn import OrdinalXGBClassifier

        found.append(OrdinalXGBClassifier(**xgboost))
    return found


def ids(estimators: list[Any]) -> list[str]:
    """Test ids: the class names."""
    return [type(e).__name__ for e in estimators]
