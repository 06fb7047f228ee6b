"""The margins protocol of clmm fits: values, analytic Jacobians and slopes, every re_form.

Against central differences of the same predictions (``h = 1e-6`` in the parameters,
``h = 1e-5`` in the data, tests/_numdiff.py), and against ``MixedResults.predict``.
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest

from ordstats import OrdinalModel, datasets
from ordstats.errors import OrdstatsError, PredictionError
from ordstats.results.margins.protocol import MarginsFit
from tests._numdiff import central_jacobian

_SPECS = {
    "intercept": "rating ~ temp + contact + x + (1|judge)",
    "crossed": "rating ~ temp + x + (1|judge) + (1|bottle)",
    "slope": "rating ~ temp + contact + x + (1 + x|judge)",
    "probit-slope": "rating ~ temp + x + (0 + z|judge) + (1|judge)",
}
RE_FORMS = [None, 0, "marginal"]


@pytest.fixture(scope="module")
def data() -> pd.DataFrame:
    frame = datasets.load("wine")
    rng = np.random.default_rng(3)
    return frame.assign(x=rng.normal(size=len(frame)), z=rng.normal(size=len(frame)))


_FITS: dict[str, object] = {}


def _fit(data: pd.DataFrame, name: str):
    if name not in _FITS:
        link = "probit" if name.startswith("probit") else "logit"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _FITS[name] = OrdinalModel.from_formula(_SPECS[name], data, link=link).fit()
    return _FITS[name]


@pytest.fixture(scope="module", params=sorted(_SPECS))
def fit(request, data):
    return _fit(data, request.param)


def _rows(data: pd.DataFrame) -> pd.DataFrame:
    rows = data.iloc[[0, 9, 30, 44, 61, 70]].copy()
    rows["judge"] = rows["judge"].astype(object)
    rows.loc[rows.index[-1], "judge"] = "new judge"  # no random part when conditional
    return rows


def _moved(rows: pd.DataFrame, variable: str, step: float) -> pd.DataFrame:
    return rows.assign(**{variable: rows[variable] + step})


def test_mixed_fits_satisfy_the_protocol(fit):
    assert isinstance(fit, MarginsFit)
    assert len(fit.margins_params()) == fit.margins_covariance().shape[0] == fit.k_params


@pytest.mark.parametrize("re_form", RE_FORMS)
@pytest.mark.filterwarnings("ignore:.*not seen in the fit")
def test_values_are_those_of_predict(fit, data, re_form):
    view = fit.margins_options(re_form=re_form)
    rows = _rows(data)
    design = view.margins_rows(rows)
    params = view.margins_params()
    for kind, which in (("prob", "prob"), ("expected", "expected")):
        got = view.margins_predict(params, design, kind).values
        expected = fit.predict(rows, which=which, re_form=re_form).to_numpy()
        np.testing.assert_allclose(got.reshape(expected.shape), expected, rtol=1e-12, atol=1e-15)
    cum = view.margins_predict(params, design, "cumprob").values
    exceed = view.margins_predict(params, design, "exceedance").values
    np.testing.assert_allclose(cum + exceed, 1.0, rtol=0, atol=1e-13)
    position = view.margins_predict(params, design, "class").values[:, 0]
    expected_class = fit.predict(rows, which="class", re_form=re_form)
    assert list(np.asarray(fit.model.levels)[position.astype(int)]) == list(expected_class)


@pytest.mark.parametrize("re_form", RE_FORMS)
@pytest.mark.filterwarnings("ignore:.*not seen in the fit")
def test_jacobians_are_the_derivatives_in_the_parameters(fit, data, re_form):
    view = fit.margins_options(re_form=re_form)
    rows = view.margins_rows(_rows(data))
    params = view.margins_params()
    for kind in view.margins_types():
        got = view.margins_predict(params, rows, kind)
        if kind == "class":
            assert got.jacobian is None
            continue
        numeric = central_jacobian(
            lambda p, kind=kind: view.margins_predict(p, rows, kind).values, params, 1e-6
        )
        np.testing.assert_allclose(got.jacobian, numeric, rtol=1e-6, atol=2e-8, err_msg=kind)
        if re_form != 0:
            # the variance parameters move conditional and marginal predictions
            assert np.abs(got.jacobian[..., fit.k_fixed :]).max() > 1e-4, kind


@pytest.mark.parametrize("re_form", RE_FORMS)
@pytest.mark.filterwarnings("ignore:.*not seen in the fit")
def test_slopes_and_their_jacobians_are_analytic_derivatives(fit, data, re_form):
    view = fit.margins_options(re_form=re_form)
    base = _rows(data)
    rows = view.margins_rows(base)
    params = view.margins_params()
    h = 1e-5
    for variable in ("x", "z"):
        if variable not in view.margins_variables():
            continue
        up, down = (view.margins_rows(_moved(base, variable, s)) for s in (h, -h))
        direction = up.direction(down, h)
        for kind in view.margins_types():
            if kind == "class":
                continue
            got = view.margins_slope(params, rows, direction, kind)
            numeric_x = (
                view.margins_predict(params, up, kind).values
                - view.margins_predict(params, down, kind).values
            ) / (2 * h)
            np.testing.assert_allclose(got.values, numeric_x, rtol=1e-6, atol=1e-8, err_msg=kind)
            numeric_p = central_jacobian(
                lambda p, kind=kind, d=direction: view.margins_slope(p, rows, d, kind).values,
                params,
                1e-6,
            )
            np.testing.assert_allclose(
                got.jacobian, numeric_p, rtol=1e-5, atol=1e-7, err_msg=f"{variable} {kind}"
            )


def test_options_choose_the_prediction_and_leave_the_fit_alone(data):
    fit = _fit(data, "intercept")
    marginal = fit.margins_options(re_form="marginal")
    assert marginal.margins_re_form == "marginal" and fit.margins_re_form is None
    assert "linear" not in marginal.margins_types() and "latent" in fit.margins_types()
    with pytest.raises(OrdstatsError, match="type='linear' has no meaning for population-avera"):
        marginal.margins_predict(marginal.margins_params(), marginal.margins_rows(data), "linear")
    with pytest.raises(OrdstatsError, match=r"unknown option\(s\) 'quadrature' for a mixed model"):
        fit.margins_options(re_form="marginal", quadrature=40)
    with pytest.raises(PredictionError, match=r"re_form must be None, 0 or 'marginal'; got 'ma"):
        fit.margins_options(re_form="marginals")
    # marginal and re_form=0 rows need no grouping column; conditional ones do
    no_groups = data.drop(columns=["judge", "bottle"])
    for re_form in (0, "marginal"):
        view = fit.margins_options(re_form=re_form)
        assert view.margins_rows(no_groups).n_rows == len(data)
    with pytest.raises(PredictionError, match=r"lacks the column\(s\) 'judge'"):
        fit.margins_rows(no_groups)


def test_latent_is_the_linear_predictor_minus_the_mean_cut_point(data):
    fit = _fit(data, "intercept")
    rows = data.iloc[:5]
    at_zero = fit.margins_options(re_form=0)
    latent = at_zero.margins_predict(fit.margins_params(), at_zero.margins_rows(rows), "latent")
    beta = fit.params.iloc[4:].to_numpy()
    expected = fit.model.design.fixed.location.matrix[:5] @ beta - fit.params.iloc[:4].mean()
    np.testing.assert_allclose(latent.values[:, 0], expected, rtol=1e-12)
    conditional = fit.margins_predict(fit.margins_params(), fit.margins_rows(rows), "latent")
    shift = fit.ranef()["judge"].loc[rows["judge"]].to_numpy()[:, 0]
    np.testing.assert_allclose(conditional.values[:, 0], expected + shift, rtol=1e-9)


def test_estimation_rows_and_what_happens_without_them(data):
    fit = _fit(data, "slope")
    rows = fit.margins_data()
    assert list(rows.index) == list(fit.model.design.fixed.row_index)
    assert {"temp", "contact", "x", "judge"} <= set(rows.columns)
    assert "judge" not in fit.margins_variables() and "x" in fit.margins_variables()
    restored = pickle.loads(pickle.dumps(fit))
    with pytest.raises(OrdstatsError, match="fitted on is not kept"):
        restored.margins_data()
    assert restored.margins_rows(data.iloc[:3]).n_rows == 3  # new rows still work
