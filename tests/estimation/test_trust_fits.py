"""Fits that used to stop short of R's maximum or break on extreme inputs (issue 14).

R's numbers are in ``tests/data/reference/trust_fits.json`` (``tests/r/trust_fits.R``).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats.errors import ConvergenceWarning

F = ordstats.OrdinalModel.from_formula
REFERENCE = json.loads(
    (Path(__file__).parents[1] / "data" / "reference" / "trust_fits.json").read_text()
)


def _wine2(wine: pd.DataFrame) -> pd.DataFrame:
    """The data of R ordinal's tests/test.clm.convergence.R."""
    cold_yes = (wine["temp"] == "cold") & (wine["contact"] == "yes")
    out = wine.loc[~cold_yes].reset_index(drop=True)
    out.loc[[8, 14, 45], "rating"] = np.nan
    return out


def _fit(model: ordstats.OrdinalModel) -> ordstats.OrdinalResults:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.fit()


def test_scale_aliased_with_nominal_reaches_r_maximum(wine: pd.DataFrame) -> None:
    ref = REFERENCE["fits"]["wine_scale_aliased_nominal"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = F("rating ~ temp * contact", wine, nominal="~ contact", scale="~ contact")
    res = _fit(model)
    assert res.llf == pytest.approx(ref["loglik"], abs=1e-6)
    # the same columns as R reported aliased (R: beta "contactyes"; none else)
    assert model.design.location.aliased == ["contact[T.yes]"]
    assert model.design.scale.aliased == []
    assert model.design.nominal.aliased == []
    assert res.params["temp[T.warm]"] == pytest.approx(ref["coef"]["tempwarm"], abs=1e-3)


def test_r_convergence_test_model_reaches_r_maximum(wine: pd.DataFrame) -> None:
    ref = REFERENCE["fits"]["convergence_wine2"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = F("rating ~ temp", _wine2(wine), nominal="~ contact", scale="~ contact")
    res = _fit(model)
    assert res.llf == pytest.approx(ref["loglik"], abs=1e-6)
    assert res.params["temp[T.warm]"] == pytest.approx(ref["coef"]["tempwarm"], abs=1e-3)


@pytest.mark.parametrize("factor", [1e7, 1e-7])
def test_badly_scaled_predictor_has_scaled_standard_errors(
    wine: pd.DataFrame, factor: float
) -> None:
    x = np.random.default_rng(0).normal(size=len(wine))
    base = F("rating ~ temp + x", wine.assign(x=x)).fit()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no singular-Hessian or convergence warning
        scaled = F("rating ~ temp + x", wine.assign(x=x * factor)).fit()
    assert scaled.params["x"] * factor == pytest.approx(base.params["x"], rel=1e-6)
    units = np.where(base.bse.index == "x", factor, 1.0)
    np.testing.assert_allclose(scaled.bse.to_numpy() * units, base.bse.to_numpy(), rtol=1e-6)


def test_tiny_predictor_is_not_called_a_combination_of_the_thresholds(wine: pd.DataFrame) -> None:
    x = np.random.default_rng(0).normal(size=len(wine))
    base = F("rating ~ temp + x", wine.assign(x=x)).fit()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = F("rating ~ temp + x", wine.assign(x=x * 1e-155))
    assert "x" in model.param_names and model.design.location.aliased == []
    res = model.fit()
    assert res.params["x"] * 1e-155 == pytest.approx(base.params["x"], rel=1e-6)


def test_shifted_predictor_is_not_called_a_combination_of_the_thresholds(
    wine: pd.DataFrame,
) -> None:
    x = np.random.default_rng(0).normal(size=len(wine))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = F("rating ~ temp + x", wine.assign(x=x + 1e8))
    assert "x" in model.param_names


@pytest.mark.parametrize("family", ["cumulative", "sratio", "cratio", "acat"])
@pytest.mark.parametrize("offset", [-40.0, -20.0, 20.0, 40.0])
def test_constant_offset_gives_the_fit_without_it(
    wine: pd.DataFrame, family: str, offset: float
) -> None:
    base = F("rating ~ temp + contact", wine, family=family).fit()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        res = F("rating ~ temp + contact", wine.assign(o=offset), offset="o", family=family).fit()
    assert res.llf == pytest.approx(base.llf, abs=1e-8)
    np.testing.assert_allclose(res.params[4:], base.params[4:], atol=1e-6)


@pytest.mark.parametrize("name, dist", [("logit", "logistic"), ("probit", "norm")])
def test_frozen_scipy_distribution_as_link(wine: pd.DataFrame, name: str, dist: str) -> None:
    from scipy import stats

    named = F("rating ~ temp + contact", wine, link=name).fit()
    frozen = F("rating ~ temp + contact", wine, link=getattr(stats, dist)()).fit()
    assert frozen.llf == pytest.approx(named.llf, abs=1e-10)
    np.testing.assert_allclose(frozen.params, named.params, atol=1e-8)
    np.testing.assert_allclose(frozen.bse, named.bse, rtol=1e-7)  # numerical f'


def test_heavy_tailed_scipy_distribution_fits_and_predicts(wine: pd.DataFrame) -> None:
    from scipy import stats

    res = F("rating ~ temp + contact", wine, link=stats.t(df=5)).fit()
    assert res.converged and np.all(np.isfinite(res.bse))
    probs = res.predict(wine.iloc[:3])
    np.testing.assert_allclose(probs.sum(axis=1), 1.0)
    assert res.model.link == F("rating ~ temp", wine, link=stats.t(df=5)).link
    assert res.model.link != F("rating ~ temp", wine, link=stats.t(df=6)).link
