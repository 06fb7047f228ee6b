"""Secondary results of the sratio, cratio and acat families against VGAM 1.1-7.

``tests/r/step_vglm_secondary.R`` fits, with ``vglm``, non-parallel effects of
some terms only (a factor with three levels; ``parallel = TRUE ~ -1 + Type``,
i.e. every other term non-parallel) with frequency weights and an offset,
probit/cloglog/cauchit links and ``reverse = TRUE``, and records what
``tests/test_families_vglm.py`` does not compare: Wald and profile confidence
intervals, ``predict(type = "response")`` on new data given as factor levels,
fitted values and ``lrtest()`` of parallel against non-parallel effects.

VGAM's Wald intervals use its standard errors, the inverse *expected*
information (equal to the observed one only for acat); its profile intervals
interpolate a spline through a grid of profile points, so they agree to ~1e-5,
except for soup's cratio(cauchit) fit, where VGAM's bounds are up to 2e-4 off: the
profile deviance at them is 2e-3 from the chi-squared quantile, at ordstats' bounds
1e-9 (:func:`test_profile_bounds_are_exact_where_vglm_interpolates`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats

import ordstats
from tests import _reference as ref
from tests import _vglm

REFERENCE = ref.load("step_vglm_secondary")
RTOL_ESTIMATE = 1e-6
#: VGAM's profile intervals are splines through profile points (see the module notes).
ATOL_PROFILE = 5e-5
#: ... and where the profile is far from quadratic, VGAM's spline is this far off.
ATOL_PROFILE_VGAM_OFF = {"soup_cratio_cauchit": 3e-4}
ATOL_PROB = 1e-7

#: Each case's fit in ordstats' terms: the terms of ``parallel = FALSE ~ term`` move
#: to ``nominal=`` (``parallel = TRUE ~ -1 + Type``: every term but Type).
_HOUSING = {"weights": "Freq"}
SPECS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "sratio_offset": (
        "Sat ~ Infl + Type",
        "housing",
        {"family": "sratio", "nominal": "~ Cont", "offset": True, **_HOUSING},
    ),
    "cratio_probit": (
        "Sat ~ Type + Cont",
        "housing",
        {"family": "cratio", "link": "probit", "nominal": "~ Infl", **_HOUSING},
    ),
    "acat_reverse_offset": (
        "Sat ~ Type",
        "housing",
        {"family": "acat", "reverse": True, "nominal": "~ Infl + Cont", "offset": True, **_HOUSING},
    ),
    "sratio_cloglog_reverse": (
        "Sat ~ Infl + Type",
        "housing",
        {"family": "sratio", "link": "cloglog", "reverse": True, "nominal": "~ Cont", **_HOUSING},
    ),
    "cratio_cauchit": (
        "Sat ~ Infl + Type + Cont",
        "housing",
        {"family": "cratio", "link": "cauchit", **_HOUSING},
    ),
    "soup_sratio_cloglog_reverse": (
        "SURENESS ~ DAY + COLD",
        "soup",
        {"family": "sratio", "link": "cloglog", "reverse": True, "nominal": "~ PROD"},
    ),
    "soup_cratio_cauchit": (
        "SURENESS ~ PROD",
        "soup",
        {"family": "cratio", "link": "cauchit", "nominal": "~ DAY"},
    ),
}


def _fit(case: str) -> ordstats.OrdinalResults:
    formula, dataset, options = SPECS[case]
    data = ordstats.datasets.load(dataset)
    options = dict(options)
    if options.pop("offset", False):  # the R script's housing_offset
        options["offset"] = 0.1 * (np.arange(len(data)) % 4)
    return ordstats.OrdinalModel.from_formula(formula, data, **options).fit()


@pytest.fixture(scope="module", params=sorted(SPECS))
def vglm_case(request: pytest.FixtureRequest) -> tuple[dict[str, Any], ordstats.OrdinalResults]:
    data = dict(REFERENCE["cases"][request.param], case=request.param)
    return data, _fit(request.param)


def test_cases_are_the_r_calls() -> None:
    assert sorted(SPECS) == sorted(REFERENCE["cases"])


def test_estimates_and_likelihood(vglm_case) -> None:
    data, res = vglm_case
    assert res.converged
    assert sorted(_vglm.vglm_names(res)) == sorted(data["coef"])
    assert res.llf == pytest.approx(data["loglik"], rel=RTOL_ESTIMATE)
    assert res.aic == pytest.approx(data["aic"], rel=RTOL_ESTIMATE)
    np.testing.assert_allclose(
        res.params.to_numpy(), _vglm.in_vglm_order(data["coef"], res), rtol=1e-6, atol=1e-6
    )


def test_wald_intervals_of_the_expected_information(vglm_case) -> None:
    data, res = vglm_case
    z = stats.norm.ppf(0.975)
    expected_se = np.sqrt(np.diag(res.expected_covariance.matrix))
    for bound, sign in (("wald_lower", -1.0), ("wald_upper", 1.0)):
        np.testing.assert_allclose(
            res.params.to_numpy() + sign * z * expected_se,
            _vglm.in_vglm_order(data[bound], res),
            atol=1e-6,
        )
    if res.model.family_spec.name == "acat":  # observed = expected information
        interval = res.conf_int().to_numpy()
        np.testing.assert_allclose(interval[:, 0], _vglm.in_vglm_order(data["wald_lower"], res))
        np.testing.assert_allclose(interval[:, 1], _vglm.in_vglm_order(data["wald_upper"], res))


def test_profile_intervals(vglm_case) -> None:
    data, res = vglm_case
    if data["profile_lower"] is None:  # VGAM's profile fails with an offset: see below
        return
    interval = res.conf_int(method="profile").to_numpy()
    atol = ATOL_PROFILE_VGAM_OFF.get(data["case"], ATOL_PROFILE)
    np.testing.assert_allclose(
        interval[:, 0], _vglm.in_vglm_order(data["profile_lower"], res), atol=atol
    )
    np.testing.assert_allclose(
        interval[:, 1], _vglm.in_vglm_order(data["profile_upper"], res), atol=atol
    )


#: Starting values near soup's cratio(cauchit) estimates (VGAM's, rounded).
SOUP_CAUCHIT_START = np.array([1.8, 1.5, 3.1, 2.8, 0.45, -0.2, -0.85, -0.95, 0.3, -0.25, 1.55])


def _cratio_cauchit_deviance(soup: pd.DataFrame, llf: float, k: int, value: float) -> float:
    """Profile deviance of soup's cratio(cauchit) fit with parameter ``k`` at ``value``,
    from an independent log-likelihood (``F(eta_j) = P(Y > j | Y >= j)``) and BFGS."""
    y = soup["SURENESS"].cat.codes.to_numpy()[:, None]
    day = (soup["DAY"].astype(str) == "2").to_numpy(float)[:, None]
    prod = (soup["PROD"].astype(str) == "Test").to_numpy(float)[:, None]
    steps = np.arange(5)[None, :]

    def nll(free: np.ndarray) -> float:
        p = np.insert(free, k, value)  # 5 intercepts, 5 DAY effects, PROD
        eta = p[:5] + day * p[5:10] + prod * p[10]
        go = np.where(steps < y, stats.cauchy.logcdf(eta), 0.0)
        stop = np.where(steps == y, stats.cauchy.logsf(eta), 0.0)
        return float(-(go.sum() + stop.sum()))

    start = np.delete(SOUP_CAUCHIT_START, k)
    best = optimize.minimize(nll, start, method="BFGS", options={"gtol": 1e-9})
    return 2.0 * (best.fun + llf)


def test_profile_bounds_are_exact_where_vglm_interpolates() -> None:
    data = REFERENCE["cases"]["soup_cratio_cauchit"]
    res = _fit("soup_cratio_cauchit")
    soup = ordstats.datasets.load("soup")
    interval = res.conf_int(method="profile").to_numpy()
    vglm_bounds = np.column_stack(
        [_vglm.in_vglm_order(data[f"profile_{side}"], res) for side in ("lower", "upper")]
    )
    critical = stats.chi2.ppf(0.95, 1)
    for k in (3, 7):  # '4:5', '3:4:DAY[T.2]': VGAM's largest misses
        for side in (0, 1):
            exact = _cratio_cauchit_deviance(soup, res.llf, k, interval[k, side])
            assert exact == pytest.approx(critical, abs=1e-6)
            off = _cratio_cauchit_deviance(soup, res.llf, k, vglm_bounds[k, side])
            assert abs(off - critical) > 1e-4


def test_fitted_and_new_data_probabilities(vglm_case) -> None:
    data, res = vglm_case
    np.testing.assert_allclose(
        res.predict().iloc[:5].to_numpy(), np.array(data["fitted_first5"]), atol=ATOL_PROB
    )
    if data["newdata_prob"] is None:
        return
    newdata = pd.DataFrame.from_records(REFERENCE["newdata"])
    reordered = newdata.assign(  # levels as another categorical order: read by label
        Infl=pd.Categorical(newdata["Infl"], categories=["High", "Medium", "Low"])
    )
    for rows in (newdata, reordered):
        np.testing.assert_allclose(
            res.predict(rows).to_numpy(), np.array(data["newdata_prob"]), atol=ATOL_PROB
        )


def test_lr_test_of_non_parallel_effects_is_vglm_lrtest() -> None:
    housing = ordstats.datasets.load("housing")
    model = ordstats.OrdinalModel.from_formula(
        "Sat ~ Infl + Type + Cont", housing, weights="Freq", family="sratio"
    )
    parallel = model.fit()
    nonparallel = ordstats.OrdinalModel.from_formula(
        "Sat ~ Infl + Type", housing, weights="Freq", family="sratio", nominal="~ Cont"
    ).fit()
    expected = REFERENCE["lrtest_sratio_cont"]
    test = ordstats.lr_test(parallel, nonparallel)
    assert test.statistic == pytest.approx(expected["chisq"], rel=1e-6)
    assert test.df == expected["df"]
    assert test.pvalue == pytest.approx(expected["p"], rel=1e-6)
    nominal_row = parallel.nominal_test().loc["Cont"]
    assert nominal_row["LRT"] == pytest.approx(expected["chisq"], rel=1e-6)


@pytest.mark.parametrize("case", ["sratio_offset", "acat_reverse_offset"])
def test_profile_intervals_with_an_offset(case: str) -> None:
    """VGAM cannot profile these fits; at ordstats' bounds for ``Type[T.Terrace]`` the
    fit with that coefficient held (its column moved into the offset) is the
    chi-squared quantile below the maximum."""
    res = _fit(case)
    formula, _, options = SPECS[case]
    housing = ordstats.datasets.load("housing")
    columns = pd.get_dummies(housing["Type"], dtype=float)
    data = pd.concat([housing, columns], axis=1)
    offset = 0.1 * (np.arange(len(data)) % 4)
    held_formula = formula.replace("Type", "Apartment + Atrium")
    held_options = {name: value for name, value in options.items() if name != "offset"}
    critical = stats.chi2.ppf(0.95, 1)
    for bound in res.conf_int(method="profile").loc["Type[T.Terrace]"]:
        held = ordstats.OrdinalModel.from_formula(
            held_formula, data, offset=offset + bound * data["Terrace"], **held_options
        ).fit()
        assert 2 * (res.llf - held.llf) == pytest.approx(critical, abs=1e-6)
