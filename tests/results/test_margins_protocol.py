"""The margins protocol of clm-type fits: values, analytic Jacobians and slopes.

Every family and option (nominal and scale effects, flexible links, threshold
structures, fixed thresholds, sequential and adjacent families, penalised and
Firth fits) against central differences of the same predictions (``h = 1e-6``
in the parameters, ``h = 1e-5`` in the data, tests/_numdiff.py).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from ordstats import OrdinalModel, datasets
from ordstats.errors import OrdstatsError
from ordstats.results.margins.protocol import MarginsFit, central_slope
from tests._numdiff import central_jacobian

_NUMERIC = ("x", "z")


@pytest.fixture(scope="module")
def wine() -> pd.DataFrame:
    frame = datasets.load("wine")
    rng = np.random.default_rng(1)
    return frame.assign(x=rng.normal(size=len(frame)), z=rng.normal(size=len(frame)))


_SPECS = {
    "clm": ("rating ~ temp * contact + x", {}),
    "nominal+scale": ("rating ~ temp + x", {"nominal": "~ contact + z", "scale": "~ x"}),
    "aranda-ordaz": ("rating ~ temp + x", {"link": "Aranda-Ordaz"}),
    "symmetric": ("rating ~ temp + x", {"threshold": "symmetric"}),
    "fixed": ("rating ~ temp + x", {"threshold": (-1.0, 0.5, 2.0, 3.5)}),
    "sratio": ("rating ~ temp + x", {"family": "sratio", "nominal": "~ z"}),
    "cratio-reverse": (
        "rating ~ temp + x",
        {"family": "cratio", "reverse": True, "link": "cloglog"},
    ),
    "acat": ("rating ~ temp + x", {"family": "acat", "nominal": "~ contact"}),
    "firth": ("rating ~ temp + x", {"penalty": "firth"}),
    "ridge": ("rating ~ temp + x + z", {"alpha": 0.5}),
}


def _fit(wine: pd.DataFrame, name: str):
    formula, options = _SPECS[name]
    options = dict(options)
    penalty = options.pop("penalty", None)
    alpha = options.pop("alpha", None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = OrdinalModel.from_formula(formula, wine, **options)
        if alpha is not None:
            return model.fit_regularized(alpha=alpha, L1_wt=0.0)
        return model.fit(disp=False, penalty=penalty)


@pytest.fixture(scope="module", params=sorted(_SPECS))
def fit(request, wine):
    return _fit(wine, request.param)


def _moved(data: pd.DataFrame, variable: str, step: float) -> pd.DataFrame:
    return data.assign(**{variable: data[variable] + step})


def test_every_fit_satisfies_the_protocol(fit):
    assert isinstance(fit, MarginsFit)


def test_probabilities_are_those_of_predict(fit):
    rows = fit.margins_data().iloc[:7]
    got = fit.margins_predict(fit.margins_params(), fit.margins_rows(rows), "prob")
    np.testing.assert_allclose(got.values, fit.predict(rows).to_numpy(), rtol=1e-12, atol=1e-15)
    assert got.groups == [str(v) for v in fit.model.levels]


def test_jacobians_are_the_derivatives_in_the_parameters(fit):
    rows = fit.margins_rows(fit.margins_data().iloc[:6])
    params = fit.margins_params()
    for kind in fit.margins_types():
        got = fit.margins_predict(params, rows, kind)
        if kind == "class":
            assert got.jacobian is None
            continue
        numeric = central_jacobian(
            lambda p, kind=kind: fit.margins_predict(p, rows, kind).values, params, 1e-6
        )
        np.testing.assert_allclose(got.jacobian, numeric, rtol=0, atol=2e-8, err_msg=kind)


def test_slopes_and_their_jacobians_are_analytic_derivatives(fit):
    data = fit.margins_data().iloc[:6]
    rows = fit.margins_rows(data)
    params = fit.margins_params()
    h = 1e-5
    for variable in _NUMERIC:
        if variable not in fit.margins_variables():
            continue
        direction = fit.margins_rows(_moved(data, variable, h)).direction(
            fit.margins_rows(_moved(data, variable, -h)), h
        )
        for kind in fit.margins_types():
            if kind == "class":
                continue
            got = fit.margins_slope(params, rows, direction, kind)

            up, down = (fit.margins_rows(_moved(data, variable, s)) for s in (h, -h))
            numeric_x = (
                fit.margins_predict(params, up, kind).values
                - fit.margins_predict(params, down, kind).values
            ) / (2 * h)
            np.testing.assert_allclose(got.values, numeric_x, rtol=0, atol=1e-8)
            numeric_p = central_jacobian(
                lambda p, d=direction, kind=kind: fit.margins_slope(p, rows, d, kind).values,
                params,
                1e-6,
            )
            np.testing.assert_allclose(got.jacobian, numeric_p, rtol=0, atol=2e-7)


def test_central_slope_fallback_agrees_with_the_analytic_slope(wine):
    fit = _fit(wine, "nominal+scale")
    data = fit.margins_data().iloc[:5]
    rows, h = fit.margins_rows(data), 1e-5
    direction = fit.margins_rows(_moved(data, "x", h)).direction(
        fit.margins_rows(_moved(data, "x", -h)), h
    )
    params = fit.margins_params()
    exact = fit.margins_slope(params, rows, direction, "prob")
    fallback = central_slope(fit.margins_predict, params, rows, direction, "prob")
    np.testing.assert_allclose(fallback.values, exact.values, rtol=0, atol=1e-9)
    np.testing.assert_allclose(fallback.jacobian, exact.jacobian, rtol=0, atol=1e-8)


def test_types_are_the_documented_quantities(wine):
    fit = _fit(wine, "clm")
    data = fit.margins_data().iloc[:4]
    rows, params = fit.margins_rows(data), fit.margins_params()
    prob = fit.predict(data).to_numpy()
    exceed = fit.margins_predict(params, rows, "exceedance")
    np.testing.assert_allclose(exceed.values, 1 - np.cumsum(prob, axis=1)[:, :-1], atol=1e-14)
    assert exceed.groups == ["2", "3", "4", "5"]
    expected = fit.margins_predict(params, rows, "expected").values[:, 0]
    np.testing.assert_allclose(expected, fit.predict(data, which="expected").to_numpy())
    latent = fit.margins_predict(params, rows, "latent").values[:, 0]
    eta = fit.predict(data, which="linear").to_numpy()
    np.testing.assert_allclose(latent, eta - fit.params.iloc[:4].mean(), atol=1e-12)
    klass = fit.margins_predict(params, rows, "class").values[:, 0]
    np.testing.assert_array_equal(klass, prob.argmax(axis=1))


@pytest.mark.parametrize("family", ["sratio", "cratio", "acat"])
def test_latent_type_is_refused_for_a_family_without_a_latent_scale(wine, family):
    fit = OrdinalModel.from_formula("rating ~ temp", wine, family=family).fit(disp=False)
    rows = fit.margins_rows(fit.margins_data().iloc[:2])
    with pytest.raises(OrdstatsError, match=f"type='latent' has no meaning for the '{family}'"):
        fit.margins_predict(fit.margins_params(), rows, "latent")


def test_unknown_type_is_refused(wine):
    fit = _fit(wine, "clm")
    rows = fit.margins_rows(fit.margins_data().iloc[:2])
    with pytest.raises(OrdstatsError, match="type must be one of 'prob'"):
        fit.margins_predict(fit.margins_params(), rows, "probability")
