"""The formula and array layers: how inputs become design matrices."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

import ordstats

OrdinalModel = ordstats.OrdinalModel


@pytest.fixture(scope="module")
def wine() -> pd.DataFrame:
    return ordstats.datasets.load("wine")


def _wine_arrays() -> tuple[pd.Series, pd.DataFrame, pd.Series, pd.Series]:
    wine = ordstats.datasets.load("wine")
    X = pd.get_dummies(wine[["temp", "contact"]], drop_first=True).astype(float)
    weights = pd.Series(np.resize([1.0, 2.0, 3.0], len(wine)), index=wine.index)
    offset = pd.Series(np.linspace(-0.5, 0.5, len(wine)), index=wine.index)
    return wine["rating"], X, weights, offset


# -- pandas inputs are paired by index label -------------------------------------------


@seed(20261123)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.permutations(range(72)), st.permutations(range(72)))
def test_shuffled_pandas_inputs_give_the_same_fit(order_x, order_w):
    y, X, weights, offset = _wine_arrays()
    expected = OrdinalModel(y, X, weights=weights, offset=offset).fit().params
    res = OrdinalModel(
        y,
        X.iloc[list(order_x)],
        weights=weights.iloc[list(order_w)],
        offset=offset.iloc[list(order_x)],
    ).fit()
    np.testing.assert_allclose(res.params, expected, rtol=1e-10, atol=1e-12)


def test_shuffled_weights_series_in_formula_interface(wine):
    w = pd.Series(np.resize([1.0, 2.0], 72), index=wine.index)
    expected = OrdinalModel.from_formula("rating ~ temp", wine, weights=w).fit().params
    shuffled = w.sample(frac=1.0, random_state=3)
    res = OrdinalModel.from_formula("rating ~ temp", wine, weights=shuffled).fit()
    np.testing.assert_allclose(res.params, expected, rtol=1e-10)


def test_numpy_inputs_pair_by_position():
    y, X, weights, _ = _wine_arrays()
    expected = OrdinalModel(y, X, weights=weights).fit().params
    res = OrdinalModel(y.array, X.to_numpy(), weights=weights.to_numpy()).fit()
    np.testing.assert_allclose(res.params.to_numpy(), expected.to_numpy(), rtol=1e-10)


def test_numpy_response_takes_the_labels_of_pandas_exog():
    y, X, _, _ = _wine_arrays()
    X = X.set_axis(np.arange(100, 172))
    model = OrdinalModel(y.cat.codes.to_numpy(), X)
    assert list(model.design.row_index[:2]) == [100, 101]
