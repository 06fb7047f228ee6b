"""One helper forms a clm's cut-points and scale for predictions and for posterior draws.

``families.cumulative.prediction.cut_points_and_scale`` serves ``OrdinalResults.predict``
and ``Target.probabilities_batch``; at the same parameters both give the same
probabilities, with nominal and scale effects and new data.
"""

from __future__ import annotations

import numpy as np
import pytest

import ordstats
from ordstats.families.cumulative.prediction import cut_points_and_scale, threshold_matrix


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"nominal": "~ contact"}, {"scale": "~ temp"}, {"threshold": "equidistant"}],
)
def test_posterior_probabilities_at_the_mode_equal_predict(wine, kwargs):
    formula = "rating ~ temp" if "nominal" in kwargs else "rating ~ temp + contact"
    model = ordstats.OrdinalModel.from_formula(formula, wine, **kwargs)
    mode = model.fit(prior={"b": "normal(0, 5)"})
    params = mode.params.to_numpy()
    results = mode.target.results_at(params)
    for newdata in (None, wine.iloc[::7]):
        expected = np.asarray(results.predict(newdata, which="prob"))
        batch = mode.target.probabilities_batch(np.vstack([params, params]), newdata)
        np.testing.assert_allclose(batch[0], expected, rtol=1e-12, atol=1e-15)
        np.testing.assert_array_equal(batch[0], batch[1])


def test_cut_points_and_scale_by_hand(wine):
    model = ordstats.OrdinalModel.from_formula(
        "rating ~ temp", wine, nominal="~ contact", scale="~ contact"
    )
    lay = model.problem.layout
    params = np.asarray(model.fit().params, dtype=float)
    data = model.data
    theta, scale = cut_points_and_scale(
        params, lay, model.threshold_jacobian, data.nominal, data.scale
    )
    expected = threshold_matrix(params[lay.thresholds], model.threshold_jacobian, data.nominal)
    np.testing.assert_array_equal(theta, expected)
    assert theta.shape == (len(wine), 4)
    np.testing.assert_allclose(scale, np.exp(data.scale @ params[lay.zeta]))
    plain = ordstats.OrdinalModel.from_formula("rating ~ temp", wine)
    theta, scale = cut_points_and_scale(
        np.asarray(plain.fit().params, dtype=float),
        plain.problem.layout,
        plain.threshold_jacobian,
        plain.data.nominal,
        plain.data.scale,
    )
    assert theta.shape == (1, 4) and scale is None
