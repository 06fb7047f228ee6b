"""pymarginaleffects on an ordstats fit (through the adapter) gives ordstats' own numbers.

pymarginaleffects differentiates by forward differences (in the parameters
for standard errors, in ``x`` for slopes), so standard errors are compared to
its finite-difference precision; estimates of predictions and comparisons
tightly.  ordstats' intervals are compared with ``conf_type="wald"`` (the
adapter makes pymarginaleffects use z, as R).
"""

from __future__ import annotations

import importlib.util
import warnings

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats.errors import OrdstatsError

me = pytest.importorskip(
    "marginaleffects", reason="pymarginaleffects is not installed (ordstats[marginaleffects])"
)
pl = pytest.importorskip("polars", reason="pymarginaleffects needs polars")
from ordstats.interop.marginaleffects import adapt  # noqa: E402

POLARS_2 = int(pl.__version__.split(".")[0]) >= 2
#: pymarginaleffects' forward differences in the parameters (step ~1.5e-8 |theta|):
#: measured 7e-8 (average predictions) to 7e-6 (average comparisons) relative
SE_RTOL = 1e-4
#: slopes' SEs: its forward differences in the parameters of differences in x (measured 2e-3)
SLOPE_SE_RTOL = 5e-3


@pytest.fixture(scope="module")
def data() -> pd.DataFrame:
    wine = ordstats.datasets.load("wine")
    rng = np.random.default_rng(3)
    return wine.assign(x=rng.normal(size=len(wine)), n=rng.integers(0, 9, size=len(wine)))


@pytest.fixture(scope="module")
def res(data):
    return ordstats.OrdinalModel.from_formula("rating ~ temp * contact + x + n", data).fit()


def _frame(result, keys: list[str]) -> pd.DataFrame:
    """A pymarginaleffects result as pandas, sorted on ``keys`` (level labels as text)."""
    frame = result.to_pandas() if hasattr(result, "to_pandas") else pd.DataFrame(result)
    for key in keys:
        frame[key] = frame[key].astype(str)
    return frame.sort_values(keys).reset_index(drop=True)


def _compare(theirs, ours, keys: list[str], *, estimate_rtol: float, se_rtol: float) -> None:
    theirs, ours = _frame(theirs, keys), _frame(ours, keys)
    pd.testing.assert_frame_equal(theirs[keys], ours[keys])
    np.testing.assert_allclose(theirs["estimate"], ours["estimate"], rtol=estimate_rtol)
    np.testing.assert_allclose(theirs["std_error"], ours["std_error"], rtol=se_rtol)
    # z intervals from the same estimate and SE (not t)
    z = (theirs["conf_high"] - theirs["estimate"]) / theirs["std_error"]
    np.testing.assert_allclose(z, 1.959963984540054, rtol=1e-9)


def test_average_predictions_by_factors(res):
    theirs = me.avg_predictions(adapt(res), by=["temp", "contact"])
    ours = res.avg_predictions(by=["temp", "contact"], conf_type="wald")
    _compare(theirs, ours, ["group", "temp", "contact"], estimate_rtol=1e-12, se_rtol=SE_RTOL)


def test_predictions_on_a_grid_and_of_the_expected_rating(res):
    model = adapt(res, type="expected")
    # the function, not the module of the same name that a lazy import may leave in its place
    from marginaleffects.datagrid import datagrid

    grid = datagrid(model, temp=["cold", "warm"], contact=["no", "yes"])
    theirs = me.predictions(model, newdata=grid)
    ours = res.predictions(grid.to_pandas(), type="expected", conf_type="wald")
    _compare(theirs, ours, ["temp", "contact"], estimate_rtol=1e-12, se_rtol=SE_RTOL)


def test_average_comparisons_of_numeric_predictors(res):
    model = adapt(res)
    for variable, contrast in [("x", 1), ("n", 1), ("x", "sd")]:
        theirs = me.avg_comparisons(model, variables={variable: contrast})
        ours = res.avg_comparisons(variables={variable: contrast}, conf_type="wald")
        _compare(theirs, ours, ["group"], estimate_rtol=1e-10, se_rtol=SE_RTOL)


def test_average_slopes_to_the_precision_of_forward_differences(res):
    theirs = me.avg_slopes(adapt(res), variables="x")
    ours = res.avg_slopes(variables="x", conf_type="wald")
    # pymarginaleffects' forward differences in x, and in the parameters of those
    _compare(theirs, ours, ["group"], estimate_rtol=1e-9, se_rtol=SLOPE_SE_RTOL)


def test_average_slopes_by_a_factor(res):
    theirs = me.avg_slopes(adapt(res, type="exceedance"), variables="x", by="temp")
    ours = res.avg_slopes(variables="x", by="temp", type="exceedance", conf_type="wald")
    _compare(theirs, ours, ["group", "temp"], estimate_rtol=1e-9, se_rtol=SLOPE_SE_RTOL)


@pytest.mark.xfail(
    POLARS_2,
    raises=AttributeError,
    strict=True,
    reason="pymarginaleffects 0.6's upcast() calls Series.cat.get_categories, removed in polars 2",
)
def test_average_comparisons_of_a_factor(res):
    theirs = me.avg_comparisons(adapt(res), variables="contact")
    ours = res.avg_comparisons(variables="contact", conf_type="wald")
    _compare(theirs, ours, ["group"], estimate_rtol=1e-10, se_rtol=SE_RTOL)


def test_other_fit_kinds(data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fits = [
            ordstats.OrdinalModel.from_formula(
                "rating ~ temp + x", data, nominal="~ contact", link="probit"
            ).fit(disp=False),
            ordstats.OrdinalModel.from_formula(
                "rating ~ temp + contact + x", data, family="acat"
            ).fit(disp=False),
            ordstats.OrdinalModel.from_formula(
                "rating ~ temp + contact + x", data, chunksize=20
            ).fit(disp=False),
        ]
    for fit in fits:
        theirs = me.avg_predictions(adapt(fit, data=data), by="temp")
        ours = fit.avg_predictions(data, by="temp", conf_type="wald")
        _compare(theirs, ours, ["group", "temp"], estimate_rtol=1e-12, se_rtol=SE_RTOL)


def test_a_mixed_fit_with_and_without_data(data):
    # the grouping column travels with the rows (it was missing: "newdata lacks the
    # column(s) 'judge'"), and the fitted response of a clmm is found without data=
    fit = ordstats.OrdinalModel.from_formula("rating ~ temp + contact + (1|judge)", data).fit()
    ours = fit.avg_predictions(by="temp", conf_type="wald")
    for model in (adapt(fit), adapt(fit, data=data)):
        assert "judge" not in model.find_variables()  # a group, never varied
        theirs = me.avg_predictions(model, by="temp")
        _compare(theirs, ours, ["group", "temp"], estimate_rtol=1e-12, se_rtol=SE_RTOL)
    with pytest.raises(OrdstatsError, match="every grouping column"):
        adapt(fit, data=data.drop(columns="judge"))


def test_the_adapter_is_a_marginaleffects_model(res):
    model = adapt(res)
    assert isinstance(model, me.classes.ModelAbstract)
    assert list(model.get_coefnames()) == list(res.params.index)
    np.testing.assert_array_equal(model.get_vcov(), res.cov_params().to_numpy())
    assert model.get_variable_type() == {
        "rating": "character",
        "temp": "character",
        "contact": "character",
        "x": "numeric",
        "n": "integer",
    }
    assert model.get_modeldata()["temp"].dtype == pl.Enum(["cold", "warm"])
    assert model.nobs == res.nobs  # other attributes are the fit's


def test_bad_adapter_input(res, data):
    with pytest.raises(OrdstatsError, match=r"adapt\(\) wraps an ordstats fit .* DataFrame has"):
        adapt(data)
    with pytest.raises(OrdstatsError, match="type must be one of"):
        adapt(res, type="odds")
    with pytest.raises(OrdstatsError, match="data has no column\\(s\\) 'x'"):
        adapt(res, data=data.drop(columns="x"))
    chunked = ordstats.OrdinalModel.from_formula("rating ~ temp + x", data, chunksize=20).fit()
    with pytest.raises(OrdstatsError, match="pass them, with the response, as data="):
        adapt(chunked)
    with pytest.raises(OrdstatsError, match="vcov= takes True or False"):
        me.avg_predictions(adapt(res), vcov="HC3")


def test_missing_package_gives_an_install_hint(res, monkeypatch):
    import builtins

    from ordstats.interop import marginaleffects as interop

    real_import = builtins.__import__

    def without_marginaleffects(name, *args, **kwargs):
        if name == "marginaleffects":
            raise ImportError("No module named 'marginaleffects'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", without_marginaleffects)
    with pytest.raises(OrdstatsError, match=r"pip install 'ordstats\[marginaleffects\]'"):
        interop._import()


def test_import_ordstats_does_not_import_marginaleffects():
    import subprocess
    import sys

    code = "import sys, ordstats, ordstats.interop; print('marginaleffects' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    assert importlib.util.find_spec("ordstats.interop.marginaleffects") is not None
