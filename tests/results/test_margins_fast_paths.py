"""The margins verbs' shortcuts give the general path's numbers.

Three optional hooks of clm-type fits (results/margins/ordinal.py) make the
verbs fast: ``_margins_linear_columns`` (a numeric predictor that is its own
column of the location design only has the slope ``b dy/d eta``, one slope
for all of them), ``_margins_rows_set`` (a counterfactual copy of the rows
rebuilds only the columns of the changed variable's own terms) and
``_margins_row_terms`` (averages of the Jacobian as sums of products, without
the (m, g, k) array of every row's Jacobian).  Each test runs a verb with the
hooks and with them removed (the general path: the design rebuilt for every
copy, the slope from the design's central difference, every row's Jacobian)
and asserts the same estimates and standard errors, on formulas
where some variables qualify and others (a transform, an interaction, a
polynomial, a nominal or scale effect) must not.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ordstats import OrdinalModel
from ordstats.results.margins.ordinal import OrdinalMarginsFit

HOOKS = ("_margins_linear_columns", "_margins_rows_set", "_margins_row_terms", "_margins_set_terms")
NUMBERS = ["estimate", "std_error", "statistic", "p_value", "conf_low", "conf_high"]


def _simulate(n: int = 400, seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "x": rng.uniform(0.5, 3.0, n),
            "z": rng.normal(size=n),
            "u": rng.normal(size=n),
            "w": rng.normal(size=n),
            "g": rng.choice(["a", "b", "c"], size=n),
        }
    )
    eta = 0.8 * np.log(frame["x"]) + 0.5 * frame["z"] - 0.4 * frame["u"] + 0.3 * frame["w"] ** 2
    eta = eta + 0.5 * (frame["g"] == "b") - 0.3 * frame["x"] * (frame["g"] == "c")
    latent = eta.to_numpy() + rng.logistic(size=n)
    frame["y"] = (latent[:, None] > np.array([-1.0, 0.0, 1.0, 2.0])).sum(axis=1)
    return frame


@pytest.fixture(scope="module")
def data() -> pd.DataFrame:
    return _simulate()


FORMULA = "y ~ np.log(x) + z + u + x:g + g + poly(w, 2)"


def _general(fit, verb: str, monkeypatch, **options) -> pd.DataFrame:
    with monkeypatch.context() as patch:
        for hook in HOOKS:
            patch.setattr(OrdinalMarginsFit, hook, None)
        return getattr(fit, verb)(**options)


def _assert_same(fast: pd.DataFrame, general: pd.DataFrame) -> None:
    assert list(fast.columns) == list(general.columns)
    pd.testing.assert_frame_equal(fast.drop(columns=NUMBERS), general.drop(columns=NUMBERS))
    np.testing.assert_allclose(fast["estimate"], general["estimate"], rtol=1e-7, atol=1e-11)
    np.testing.assert_allclose(fast["std_error"], general["std_error"], rtol=1e-7, atol=1e-11)


def test_the_hooks_find_exactly_the_variables_they_can_prove(data):
    fit = OrdinalModel.from_formula(FORMULA, data).fit()
    rows = fit.margins_rows(fit.margins_data())
    _, positions = fit._margins_linear_columns(rows)
    names = list(fit.params.index)
    assert {name: names[i] for name, i in positions.items()} == {"z": "z", "u": "u"}
    frame = fit.margins_data()
    # x is read by log(x) and by x:g, g by g and x:g: no shortcut for either
    assert fit._margins_rows_set(rows, frame, "x", 1.0) is None
    assert fit._margins_rows_set(rows, frame, "g", "b") is None
    # w's own terms (the polynomial) are rebuilt for one value, not for per-row values
    moved = fit._margins_rows_set(rows, frame, "w", 0.25)
    rebuilt = fit.margins_rows(frame.assign(w=0.25))
    np.testing.assert_allclose(moved.arrays["X"], rebuilt.arrays["X"], rtol=1e-14, atol=1e-15)
    assert fit._margins_rows_set(rows, frame, "w", frame["w"].to_numpy() + 1) is None
    shifted = fit._margins_rows_set(rows, frame, "z", frame["z"].to_numpy() + 0.5)
    expected = fit.margins_rows(frame.assign(z=frame["z"] + 0.5))
    np.testing.assert_array_equal(shifted.arrays["X"], expected.arrays["X"])


@pytest.mark.parametrize("type", ["prob", "cumprob", "exceedance", "expected", "linear", "latent"])
def test_average_slopes_equal_the_general_path(data, monkeypatch, type):
    fit = OrdinalModel.from_formula(FORMULA, data).fit()
    fast = fit.avg_slopes(type=type)
    _assert_same(fast, _general(fit, "avg_slopes", monkeypatch, type=type))
    by_group = fit.avg_slopes(variables=["z", "u", "w"], by="g", type=type)
    _assert_same(
        by_group,
        _general(fit, "avg_slopes", monkeypatch, variables=["z", "u", "w"], by="g", type=type),
    )


def test_per_row_slopes_and_elasticities_equal_the_general_path(data, monkeypatch):
    fit = OrdinalModel.from_formula(FORMULA, data).fit()
    rows = data.iloc[:15]
    for slope in ("dydx", "eyex", "dyex"):
        fast = fit.slopes(rows, variables=["z", "u", "x"], slope=slope)
        general = _general(fit, "slopes", monkeypatch, newdata=rows, variables=["z", "u", "x"])
        if slope == "dydx":
            _assert_same(fast, general)
        general = _general(
            fit, "slopes", monkeypatch, newdata=rows, variables=["z", "u", "x"], slope=slope
        )
        _assert_same(fast, general)


@pytest.mark.parametrize(
    "variables",
    ["g", "z", "w", {"w": "iqr"}, {"z": [0.0, 1.0]}, {"u": "sd"}, {"x": 0.2}, None],
)
def test_average_comparisons_equal_the_general_path(data, monkeypatch, variables):
    fit = OrdinalModel.from_formula(FORMULA, data).fit()
    fast = fit.avg_comparisons(variables=variables)
    _assert_same(fast, _general(fit, "avg_comparisons", monkeypatch, variables=variables))


def test_nominal_and_scale_effects_equal_the_general_path(data, monkeypatch):
    fit = OrdinalModel.from_formula("y ~ z + w + g", data, nominal="~ u", scale="~ g + w").fit()
    _, positions = fit._margins_linear_columns(fit.margins_rows(fit.margins_data()))
    assert set(positions) == {"z"}  # u has nominal effects, w a scale effect
    for verb, options in [
        ("avg_slopes", {}),
        ("avg_slopes", {"type": "cumprob", "by": "g"}),
        ("avg_comparisons", {"variables": "g"}),
        ("avg_comparisons", {"variables": ["z", "u", "w"]}),
    ]:
        _assert_same(getattr(fit, verb)(**options), _general(fit, verb, monkeypatch, **options))


@pytest.mark.parametrize(
    "options",
    [{"family": "sratio"}, {"family": "acat"}, {"link": "aranda-ordaz"}, {"link": "probit"}],
)
def test_other_families_and_links_equal_the_general_path(data, monkeypatch, options):
    fit = OrdinalModel.from_formula("y ~ z + u + g + np.log(x)", data, **options).fit()
    for verb, extra in [("avg_slopes", {}), ("avg_comparisons", {"variables": ["g", "z"]})]:
        _assert_same(getattr(fit, verb)(**extra), _general(fit, verb, monkeypatch, **extra))


def test_penalised_fit_equals_the_general_path(data, monkeypatch):
    fit = OrdinalModel.from_formula(FORMULA, data).fit(penalty="firth")
    _assert_same(fit.avg_slopes(), _general(fit, "avg_slopes", monkeypatch))


def test_streamed_averages_equal_the_general_path(data, monkeypatch):
    formula = "y ~ np.log(x) + z + u + x:g + g + I(w**2)"  # no state learnt from all rows
    fit = OrdinalModel.from_formula(formula, data, chunksize=97).fit()
    for verb, extra in [("avg_slopes", {}), ("avg_comparisons", {"variables": ["g", "z", "w"]})]:
        fast = getattr(fit, verb)(**extra)
        _assert_same(fast, _general(fit, verb, monkeypatch, **extra))
        memory = OrdinalModel.from_formula(formula, data).fit()
        np.testing.assert_allclose(
            fast["estimate"], getattr(memory, verb)(**extra)["estimate"], rtol=1e-6
        )


def test_averaged_probabilities_keep_both_tails():
    """The averages' cheaper category probabilities agree with the log-scale ones in the tails."""
    from ordstats.core.links import Cauchit, Cloglog, Logit, Loglog, Probit
    from ordstats.families.cumulative.prediction import category_probabilities
    from ordstats.results.margins.ordinal import _category_probabilities

    rng = np.random.default_rng(0)
    u = np.sort(rng.normal(scale=12, size=(5000, 4)), axis=1)
    u[0] = [-40.0, -39.0, 30.0, 35.0]  # P(Y = 1) and P(Y = 5) about 1e-18 and 1e-14 (logit)
    u[1] = np.nan
    for link in (Logit(), Probit(), Cloglog(), Loglog(), Cauchit()):
        expected = category_probabilities(link, u, np.zeros(len(u)))
        found = _category_probabilities(link, u)
        assert np.isnan(found[1]).all()
        np.testing.assert_allclose(found, expected, rtol=1e-9, atol=1e-300)  # subnormals


def test_a_location_factor_is_averaged_without_a_copy_of_the_design(data, monkeypatch):
    """``_margins_set_terms``: a factor (or number) set in every row, as a fixed column block."""
    fit = OrdinalModel.from_formula("y ~ g + z + np.log(x)", data).fit()
    rows, frame = fit._margins_fitted_rows(), fit.margins_data()
    params = fit.margins_params()
    for name, value in (("g", "c"), ("z", 0.5)):
        found = fit._margins_set_terms(params, rows, frame, name, value, "prob")
        assert found is not None
        copied = fit._margins_row_terms(
            params, fit._margins_rows_set(rows, frame, name, value), "prob"
        )
        np.testing.assert_allclose(found.values, copied.values, rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(
            found.jacobian.dense(), copied.jacobian.dense(), rtol=1e-12, atol=1e-15
        )
    for type in ("prob", "cumprob", "exceedance", "expected", "linear"):
        for options in ({"variables": ["g", "z"]}, {"variables": "g", "by": "g"}):
            fast = fit.avg_comparisons(type=type, **options)
            general = _general(fit, "avg_comparisons", monkeypatch, type=type, **options)
            pd.testing.assert_frame_equal(fast.drop(columns=NUMBERS), general.drop(columns=NUMBERS))
            for column in ("estimate", "std_error"):
                np.testing.assert_allclose(fast[column], general[column], rtol=1e-11, atol=1e-14)


def test_no_copy_path_is_refused_where_the_variable_moves_more_than_eta(data):
    fit = OrdinalModel.from_formula("y ~ z + w + g", data, nominal="~ u", scale="~ g + w").fit()
    rows, frame = fit._margins_fitted_rows(), fit.margins_data()
    params = fit.margins_params()
    assert fit._margins_set_terms(params, rows, frame, "g", "b", "prob") is None  # scale effect
    assert fit._margins_set_terms(params, rows, frame, "u", 0.5, "prob") is None  # nominal effect
    assert fit._margins_set_terms(params, rows, frame, "z", 0.5, "prob") is not None
    assert fit._margins_set_terms(params, rows, frame, "z", frame["z"].to_numpy(), "prob") is None
    step = OrdinalModel.from_formula("y ~ z + g", data, family="acat").fit()
    step_rows = step._margins_fitted_rows()
    args = (step.margins_params(), step_rows, step.margins_data(), "g", "b", "prob")
    assert step._margins_set_terms(*args) is None  # no latent scale: the general path
