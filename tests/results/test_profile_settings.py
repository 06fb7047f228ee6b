"""Profile likelihood against R beyond level 0.95 (tests/r/profile_settings.R).

Levels 0.9 and 0.99, scale effects, weights, an offset, structured thresholds, MASS's
``confint.polr``, the flexible links' ``lambda`` (which R's clm does not profile), and the
signed root at R's own profile grid.  R's ``confint.clm`` and ``confint.polr`` interpolate
a spline through profile steps, so their ends are compared within their distance from the
exact roots (uniroot on R's refits), which ours must match to 1e-7.
"""

from __future__ import annotations

import numpy as np
import pytest

from ordstats.errors import OrdstatsWarning
from ordstats.results.profile import ParameterProfile
from tests import _reference as ref

DATA = ref.load("profile_settings")
#: R's refits (clm's Newton, gradTol 1e-10) against ours: the signed roots agree to ~1e-6
#: at R's grid, where R's default refits (gradTol 1e-6) were made.
ATOL_LROOT = 2e-6
ATOL_EXACT = 1e-7

SPECS = [(case, p) for case, v in DATA["cases"].items() for p in v["params"]]


def _fit_and_name(r_call: str, r_param: str):
    res = ref.fit_reference_call(r_call)
    names = dict(zip(ref.r_names(list(res.params.index)), res.params.index, strict=True))
    return res, names[r_param]


def _profile(res, name: str) -> ParameterProfile:
    k = list(res.params.index).index(name)
    return ParameterProfile(
        res.model.evaluator.evaluate, res.params.to_numpy(), k, float(res.bse.iloc[k])
    )


@pytest.mark.parametrize(("case", "param"), SPECS)
@pytest.mark.parametrize("level", ["90", "99"])
def test_profile_ends_at_other_levels(case, param, level):
    data = DATA["cases"][case]
    spec = data["params"][param]
    res, name = _fit_and_name(data["r_call"], param)
    assert res.llf == pytest.approx(data["logLik"], abs=1e-8)
    ci = res.conf_int(method="profile", alpha=1 - int(level) / 100, which=[name]).loc[name]
    exact = np.array(spec[f"exact{level}"])
    np.testing.assert_allclose(ci, exact, atol=ATOL_EXACT, rtol=0)
    spline_error = np.abs(np.subtract(spec[f"confint{level}"], exact)).max()
    np.testing.assert_allclose(ci, spec[f"confint{level}"], atol=spline_error + 1e-9, rtol=0)


@pytest.mark.parametrize(("case", "param"), SPECS)
def test_signed_root_at_r_profile_grid(case, param):
    """R's ``lroot`` is ``-sign(value - estimate) sqrt(...)``: ours with the sign reversed."""
    data = DATA["cases"][case]
    spec = data["params"][param]
    res, name = _fit_and_name(data["r_call"], param)
    profile = _profile(res, name)
    ours = [profile.signed_root(v) for v in spec["profile_value"]]
    np.testing.assert_allclose(ours, -np.array(spec["profile_lroot"]), atol=ATOL_LROOT, rtol=0)
    assert max(np.abs(spec["profile_lroot"])) > 3.29  # R's grid spans alpha = 0.001


@pytest.mark.parametrize(
    ("case", "param"), [(c, p) for c, v in DATA["polr"].items() for p in v["params"]]
)
def test_polr_profile_intervals(case, param):
    """MASS's confint.polr (profile.polr steps and a spline): within its spline error."""
    data = DATA["polr"][case]
    spec = data["params"][param]
    res, name = _fit_and_name(data["r_call"], param)
    # polr's optim (BFGS) stops up to ~3e-5 from the optimum; its profile refits likewise
    assert res.params[name] == pytest.approx(spec["estimate"], abs=1e-4)
    ci = res.conf_int(method="profile", which=[name]).loc[name]
    np.testing.assert_allclose(ci, spec["exact95"], atol=ATOL_EXACT, rtol=0)
    spline_error = np.abs(np.subtract(spec["confint95"], spec["exact95"])).max()
    assert spline_error < 5e-5
    np.testing.assert_allclose(ci, spec["confint95"], atol=spline_error + 1e-9, rtol=0)


@pytest.mark.parametrize("level", ["90", "95"])
def test_log_gamma_lambda_profile_against_clm2_refits(level):
    """R's clm gives Wald intervals for flexible links (with a message); the exact
    profile of lambda is from clm2 refits with lambda held."""
    data = DATA["lambda"]["log_gamma"]
    assert "Wald intervals instead" in data["confint_message"]
    res = ref.fit_reference_call(data["r_call"])
    ci = res.conf_int(method="profile", alpha=1 - int(level) / 100, which=["lambda"])
    np.testing.assert_allclose(ci.loc["lambda"], data[f"exact{level}"], atol=1e-6, rtol=0)


@pytest.mark.parametrize("level", ["90", "95"])
def test_aranda_ordaz_lambda_interval_ends_at_its_domain(level):
    """Aranda-Ordaz's lambda > 0, the cloglog as lambda -> 0: on wine the profile stays above
    the cut-off all the way down (r -> -0.765, the cloglog fit's; clm2's refits agree), so
    the interval's lower end is the domain's edge, 0.  Before: -inf with a warning that the
    constrained fits "stop early" at 6e-11 (95%), and 9.4e-12 without a word (90%)."""
    data = DATA["lambda"]["aranda_ordaz"]
    res = ref.fit_reference_call(data["r_call"])
    profile = _profile(res, "lambda")
    assert profile.signed_root(data["lower_bracket"]) == pytest.approx(
        data["signed_root_at_lower_bracket"], abs=1e-6
    )
    with pytest.warns(OrdstatsWarning, match=r"'lambda'.*edge of its domain.*at 0\b"):
        ci = res.conf_int(method="profile", alpha=1 - int(level) / 100, which=["lambda"])
    assert ci.loc["lambda", "lower"] == 0.0
    assert ci.loc["lambda", "upper"] == pytest.approx(data[f"exact{level}"][1], abs=1e-6)
    with pytest.warns(OrdstatsWarning, match="edge of its domain"):
        curve = res.profile("lambda", alpha=1 - int(level) / 100, n_points=5)
    assert curve["value"].iloc[0] > 0 and np.isfinite(curve["llf"]).all()
    assert curve["signed_root"].iloc[0] == pytest.approx(-0.76468, abs=1e-4)
