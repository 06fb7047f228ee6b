"""Slices, profiles and intervals of nominal and scale effects; flexible links with them.

Reference: ``tests/r/profile_nominal_scale.R`` (``profile_nominal_scale.json``).  R's
``confint.clm`` profiles only the location and scale effects, so the intervals of the
nominal effects are checked by an independent profile instead.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize, stats

from ordstats.errors import OrdstatsWarning
from tests import _reference as ref

REFERENCE = ref.load("profile_nominal_scale")
#: confint.clm interpolates a spline through its profile steps: 1.5e-4 from the exact
#: ends on the wine nominal + scale model (profile_exact.json, test_profile.py)
ATOL_SPLINE = 2e-4


def _r_values(values: list) -> np.ndarray:
    return np.array(values, dtype=float)  # R's "-Inf" (a slice through crossed thresholds)


@pytest.mark.parametrize("case", sorted(REFERENCE["profiles"]))
def test_slices_of_every_parameter_equal_r_s(case):
    data = REFERENCE["profiles"][case]
    res = ref.fit_reference_call(data["r_call"])
    np.testing.assert_allclose(res.params, data["coef"], rtol=1e-5, atol=1e-6)
    table = res.slice(grid=5)
    # by position: R names a scale effect as its location twin
    assert list(dict.fromkeys(table["parameter"])) == list(res.params.index)
    parts = table.groupby("parameter", sort=False)
    for part, (_, got) in zip(data["slices"], parts, strict=True):
        np.testing.assert_allclose(got["value"], _r_values(part["value"]), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got["logLik"], _r_values(part["logLik"]), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got["quad"], _r_values(part["quad"]), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("case", sorted(REFERENCE["profiles"]))
def test_location_and_scale_intervals_equal_r_confint(case):
    data = REFERENCE["profiles"][case]
    res = ref.fit_reference_call(data["r_call"])
    by_r_name = dict(zip(ref.r_names(list(res.params.index)), res.params.index, strict=True))
    names = [by_r_name[r] for r in data["confint_names"]]
    ci = res.conf_int(method="profile", which=names)
    np.testing.assert_allclose(ci.to_numpy(), data["confint"], atol=ATOL_SPLINE, rtol=0)


def _signed_root(res, k: int, value: float) -> float:
    """The signed root of the LR statistic with parameter k held at value, by BFGS."""
    model, hat = res.model, res.params.to_numpy()

    def negative(free):
        full = np.insert(free, k, value)
        return -model.loglike(full), -np.delete(model.score(full), k)

    found = optimize.minimize(
        negative, np.delete(hat, k), jac=True, method="BFGS", options={"gtol": 1e-9}
    )
    return float(np.sign(value - hat[k]) * np.sqrt(max(2.0 * (res.llf + found.fun), 0.0)))


def test_nominal_effect_interval_ends_are_the_exact_roots():
    data = REFERENCE["profiles"]["housing_nominal_probit"]
    res = ref.fit_reference_call(data["r_call"])
    names = [n for n in res.params.index if ":Cont[T.High]" in n and not n.startswith("scale")]
    assert len(names) == 2
    ci = res.conf_int(method="profile", which=names, alpha=0.1)
    z = stats.norm.ppf(0.95)
    for name in names:
        k = list(res.params.index).index(name)
        for side, column in ((-1, "lower"), (1, "upper")):
            assert _signed_root(res, k, ci.loc[name, column]) == pytest.approx(side * z, abs=1e-6)


FLEXIBLE = {name: case for name, case in REFERENCE["flexible"].items() if "r_error" not in case}


@pytest.mark.parametrize("case", sorted(FLEXIBLE))
def test_flexible_links_with_nominal_and_scale_reach_r_s_refined_optimum(case):
    data = FLEXIBLE[case]
    res = ref.fit_reference_call(data["r_call"])
    # clm's nlminb stops early; optimize() over clm2's likelihood at fixed lambda does not
    assert res.llf == pytest.approx(data["refined"]["loglik"], abs=1e-7)
    assert res.params["lambda"] == pytest.approx(data["refined"]["lambda"], abs=1e-5)
    assert res.llf >= data["logLik"] - 1e-8
    if data["max_abs_grad"] < 1e-3:  # clm near its optimum: its numbers too
        np.testing.assert_allclose(res.params, data["coef"], rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(res.bse, data["se"], rtol=1e-3)
        probabilities = np.asarray(res.predict(ref.pd.DataFrame(data["newdata"])))
        np.testing.assert_allclose(probabilities, data["pred_prob"], atol=1e-5)


def test_a_flexible_fit_r_cannot_finish_warns_instead():
    data = REFERENCE["flexible"]["wine_aranda_ordaz_scale"]
    assert "infinite or missing" in data["r_error"]  # R's clm fails in eigen()
    with pytest.warns(OrdstatsWarning):
        ref.fit_reference_call(data["r_call"])
