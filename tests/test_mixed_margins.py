"""The margins protocol of clmm fits: values, analytic Jacobians and slopes, every re_form.

Against central differences of the same predictions (``h = 1e-6`` in the parameters,
``h = 1e-5`` in the data, tests/_numdiff.py), and against ``MixedResults.predict``.
"""

from __future__ import annotations

import copy
import json
import pickle
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ordstats import OrdinalModel, datagrid, datasets
from ordstats.errors import OrdstatsError, PredictionError
from ordstats.results.margins import verbs
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


# -- the verbs on clmm fits ---------------------------------------------------------------

REF = json.loads(
    (Path(__file__).resolve().parent / "data" / "reference" / "clmm_predictions.json").read_text()
)


def test_emmeans_issue_154_from_avg_predictions():
    # emmeans(clmm(rating ~ temp + contact + (1|judge)), ~ rating | temp, mode = "prob"):
    # equal weights over the temp x contact grid, random effects at zero
    wine = datasets.load("wine")
    fit = OrdinalModel.from_formula("rating ~ temp + contact + (1|judge)", wine).fit()
    grid = datagrid(fit, temp=["cold", "warm"], contact=["no", "yes"])
    ref = pd.DataFrame(REF["wine_logit"]["issue154"]).sort_values(["rating", "temp"])
    got = fit.avg_predictions(grid, by="temp", re_form=0, conf_type="wald")
    np.testing.assert_allclose(got["estimate"], ref["prob"], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(got["std_error"], ref["SE"], rtol=1e-3)
    assert got.iloc[0]["estimate"] == pytest.approx(0.09761, abs=1e-5)  # the issue's numbers
    assert got.iloc[2]["estimate"] == pytest.approx(0.52233, abs=1e-5)
    # R's estimates and covariance: emmeans' numbers to rounding
    r = copy.deepcopy(fit)
    r.params_all[:6] = list(REF["wine_logit"]["coef"].values())
    names = list(fit.cov_params().index)
    r._cov = pd.DataFrame(np.asarray(REF["wine_logit"]["vcov"]), index=names, columns=names)
    exact = r.avg_predictions(grid, by="temp", re_form=0, conf_type="wald")
    np.testing.assert_allclose(exact["estimate"], ref["prob"], rtol=1e-8)
    np.testing.assert_allclose(exact["std_error"], ref["SE"], rtol=1e-6)
    np.testing.assert_allclose(exact["conf_low"], ref["asymp.LCL"], rtol=1e-6, atol=1e-9)


def _estimates(fit, params: np.ndarray, call) -> np.ndarray:
    saved = fit.params_all.copy()
    fit.params_all[:] = params
    try:
        return call(fit)["estimate"].to_numpy()
    finally:
        fit.params_all[:] = saved


@pytest.mark.parametrize("re_form", RE_FORMS)
def test_every_verb_gives_delta_method_standard_errors(data, re_form):
    fit = _fit(data, "slope")
    calls = {
        "avg_predictions": lambda f: f.avg_predictions(by="temp", re_form=re_form),
        "avg_comparisons": lambda f: f.avg_comparisons(variables="contact", re_form=re_form),
        "avg_slopes": lambda f: f.avg_slopes(variables="x", re_form=re_form, type="expected"),
        "comparisons": lambda f: f.comparisons(
            data.iloc[:3], variables={"x": "sd"}, re_form=re_form, comparison="lnor"
        ),
    }
    params, cov = fit.margins_params(), fit.margins_covariance()
    for name, call in calls.items():
        table = call(fit)
        numeric = central_jacobian(lambda p, call=call: _estimates(fit, p, call), params, 1e-6)
        expected = np.sqrt(np.einsum("ik,kl,il->i", numeric, cov, numeric))
        np.testing.assert_allclose(table["std_error"], expected, rtol=1e-5, err_msg=name)
    # the probabilities' comparisons sum to zero over the levels
    compared = fit.avg_comparisons(variables="temp", re_form=re_form)
    assert abs(compared["estimate"].sum()) < 1e-12
    # a tiny contrast of a numeric predictor is its slope
    step = fit.avg_comparisons(variables={"x": 1e-4}, re_form=re_form)
    slope = fit.avg_slopes(variables="x", re_form=re_form)
    np.testing.assert_allclose(step["estimate"] / 1e-4, slope["estimate"], rtol=1e-6, atol=1e-9)


def test_the_three_predictions_differ_as_they_should(data):
    fit = _fit(data, "intercept")
    at_zero = fit.avg_predictions(by="temp", re_form=0)["estimate"].to_numpy()
    marginal = fit.avg_predictions(by="temp", re_form="marginal")["estimate"].to_numpy()
    conditional = fit.avg_predictions(by="temp")["estimate"].to_numpy()
    # population averaging spreads the probability towards the extreme levels
    assert marginal[0] > at_zero[0] and not np.allclose(conditional, marginal)
    # the methods pass re_form to the protocol: the verb on the fit predicting that way
    pd.testing.assert_frame_equal(
        fit.predictions(data.iloc[:4], re_form="marginal"),
        verbs.predictions(fit.margins_options(re_form="marginal"), data.iloc[:4]),
    )


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (
            lambda f, d: f.avg_predictions(re_form="marginal", nodes=40),
            OrdstatsError,
            r"avg_predictions\(\) got unknown argument\(s\) 'nodes'; it takes by, ",
        ),
        (
            lambda f, d: f.slopes(re_form="population"),
            PredictionError,
            r"re_form must be None, 0 or 'marginal'; got 'population'",
        ),
        (
            lambda f, d: f.avg_predictions(re_form="marginal", type="latent"),
            OrdstatsError,
            r"type='latent' has no meaning for population-averaged \(re_form='marginal'\)",
        ),
        (
            lambda f, d: f.avg_comparisons(d.drop(columns="judge")),
            PredictionError,
            r"newdata lacks the column\(s\) 'judge'.*re_form=0 or re_form='marginal'",
        ),
        (
            lambda f, d: f.avg_predictions(d.drop(columns="temp"), re_form=0),
            PredictionError,
            r"newdata lacks the column\(s\) 'temp'",
        ),
    ],
)
def test_bad_margins_arguments_of_a_mixed_model(data, call, error, match):
    with pytest.raises(error, match=match):
        call(_fit(data, "intercept"), data)


def test_offsets_and_weights_travel_with_the_estimation_rows(data):
    offset = 0.3 * np.arange(len(data)) % 1.0
    framed = data.assign(w=1.0 + np.arange(len(data)) % 3, off=offset)
    by_values = OrdinalModel.from_formula(
        "rating ~ temp + x + (1|judge)", framed, offset=offset
    ).fit()
    by_column = OrdinalModel.from_formula(
        "rating ~ temp + x + (1|judge)", framed, offset="off", weights="w"
    ).fit()
    for fit in (by_values, by_column):
        rows = fit.margins_data()
        assert ("(offset)" in rows) == (fit is by_values) and ("w" in rows) == (fit is by_column)
        for re_form in RE_FORMS:
            got = fit.predictions(re_form=re_form)["estimate"].to_numpy()
            expected = fit.predict(re_form=re_form).to_numpy().T.ravel()
            np.testing.assert_allclose(got, expected, rtol=1e-12)  # level-major, as the table
    weighted = by_column.avg_predictions(wts="w", re_form=0)["estimate"].to_numpy()
    prob = by_column.predict(re_form=0).to_numpy()
    np.testing.assert_allclose(weighted, framed["w"] @ prob / framed["w"].sum(), rtol=1e-12)


def test_latent_matches_emmeans_linear_predictor():
    # emmeans' mode = "linear.predictor" averaged over the cuts is mean(theta) - x'beta,
    # the negative of emmeans' (and ordstats') latent mean x'beta - mean(theta)
    wine = datasets.load("wine")
    fit = copy.deepcopy(
        OrdinalModel.from_formula("rating ~ temp + contact + (1|judge)", wine).fit()
    )
    fit.params_all[:6] = list(REF["wine_logit"]["coef"].values())
    names = list(fit.cov_params().index)
    fit._cov = pd.DataFrame(np.asarray(REF["wine_logit"]["vcov"]), index=names, columns=names)
    ref = pd.DataFrame(REF["wine_logit"]["linear_predictor"])
    got = fit.predictions(ref[["temp", "contact"]], type="latent", re_form=0)
    np.testing.assert_allclose(-got["estimate"], ref["emmean"], rtol=1e-10)
    np.testing.assert_allclose(got["std_error"], ref["SE"], rtol=1e-6)
