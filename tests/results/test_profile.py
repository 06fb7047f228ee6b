"""Profile-likelihood intervals and curves, against R's confint.clm and an independent profile."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import optimize, stats

import ordstats
from ordstats.errors import ConvergenceWarning, OrdstatsError, SpecificationError
from ordstats.results.profile import ParameterProfile, plot_profile
from tests import _reference as ref

#: R's confint.clm interpolates a spline through 8 profile steps per side, so
#: its ends are up to ~4e-5 from the exact roots (wine tempwarm lower: 1.5097483
#: exact, 1.5097627 from confint) and 1.5e-4 on the nominal + scale wine model
#: (profile_exact.json, uniroot on refits in R); ours are exact roots.
ATOL_PROFILE = 1e-4
#: clm's cauchit clamps the outer thresholds at -+1e5 (README), which moves its
#: profile by up to ~2e-4 on wine; the exact likelihood is profiled here.
ATOL_PROFILE_CAUCHIT = 5e-4

PROFILE_CASES = [
    c
    for c in ref.cases("clm_")
    if ref.load(c)["kind"] == "fit"
    and ref.load(c)["profile_ci"]
    and ref.load(c)["link"] in ("logit", "probit", "cloglog", "loglog", "cauchit")
]


def test_cases_cover_links_and_thresholds():
    assert len(PROFILE_CASES) >= 23
    calls = " ".join(ref.load(c)["r_call"] for c in PROFILE_CASES)
    assert "scale =" in calls and "nominal =" in calls
    assert {ref.load(c)["threshold"] for c in PROFILE_CASES} == {
        "flexible",
        "equidistant",
        "symmetric",
        "symmetric2",
    }


@pytest.mark.parametrize("case", PROFILE_CASES)
def test_profile_intervals_match_r_confint(case):
    data = ref.load(case)
    res = ref.fit_reference(case)
    r_names = dict(zip(ref.r_names(list(res.params.index)), res.params.index, strict=True))
    names = [r_names[r] for r in data["profile_ci"]]
    ci = res.conf_int(method="profile", which=names)
    expected = np.array(list(data["profile_ci"].values()), dtype=float)
    atol = ATOL_PROFILE_CAUCHIT if data["link"] == "cauchit" else ATOL_PROFILE
    exact = ref.load("profile_exact")["cases"].get(case)
    if exact is not None:  # R's spline is known to be further off here
        spline_error = np.abs(np.subtract(exact["confint"], exact["exact"])).max()
        atol = max(atol, spline_error + 1e-6)
    np.testing.assert_allclose(ci.to_numpy(), expected, atol=atol, rtol=0)


@pytest.mark.parametrize("case", sorted(ref.load("profile_exact")["cases"]))
def test_profile_ends_are_the_exact_roots(case):
    """Against R's own exact roots (uniroot on refits), not confint's spline."""
    data = ref.load("profile_exact")["cases"][case]
    res = ref.fit_reference_call(data["r_call"])
    name = dict(zip(ref.r_names(list(res.params.index)), res.params.index, strict=True))[
        data["param"]
    ]
    ci = res.conf_int(method="profile", which=[name])
    np.testing.assert_allclose(ci.loc[name], data["exact"], atol=1e-7, rtol=0)


def _independent_limit(res, name, side, z):
    """The interval end from scratch: BFGS for the profile, brentq for the root."""
    model = res.model
    k = list(res.params.index).index(name)
    hat = res.params.to_numpy()
    n_thresholds = len(model.threshold_param_names)

    def profile_llf(value):
        def negative(free):
            full = np.insert(free, k, value)
            return -model.loglike(full), -np.delete(model.score(full), k)

        start = hat.copy()
        start[:n_thresholds] += value - hat[k]  # shifted thresholds stay ordered
        found = optimize.minimize(
            negative, np.delete(start, k), jac=True, method="BFGS", options={"gtol": 1e-9}
        )
        return -found.fun

    def root(value):
        return (
            np.sign(value - hat[k]) * np.sqrt(max(2 * (res.llf - profile_llf(value)), 0)) - side * z
        )

    se = res.bse.iloc[k]
    return optimize.brentq(root, hat[k] + side * 0.5 * se, hat[k] + side * 4 * se, xtol=1e-9)


@pytest.mark.parametrize("name", ["1|2", "4|5"])
def test_threshold_intervals_against_independent_profile(wine_res, name):
    z = stats.norm.ppf(0.975)
    ci = wine_res.conf_int(method="profile", which=[name])
    for side, column in ((-1, "lower"), (1, "upper")):
        expected = _independent_limit(wine_res, name, side, z)
        assert ci.loc[name, column] == pytest.approx(expected, abs=1e-5)


def test_signed_root_reaches_the_cut_off(wine_res):
    z = stats.norm.ppf(0.95)
    k = list(wine_res.params.index).index("2|3")
    profile = ParameterProfile(
        wine_res.model.evaluator.evaluate,
        wine_res.params.to_numpy(),
        k,
        float(wine_res.bse.iloc[k]),
    )
    for side in (-1, 1):
        end = profile.limit(z, side)
        assert profile.signed_root(end) == pytest.approx(side * z, abs=1e-8)
        # the constrained fit is an optimum: zero gradient in the free parameters
        point = profile.point(end)
        gradient = wine_res.model.score(point.params)
        assert np.max(np.abs(np.delete(gradient, k))) < 1e-6


def test_profile_and_wald_agree_on_large_samples(housing_res):
    profile = housing_res.conf_int(method="profile")
    np.testing.assert_allclose(profile, housing_res.conf_int(), atol=0.01)


def test_profile_curve(wine_res):
    curve = wine_res.profile("temp[T.warm]", n_points=21)
    assert list(curve.columns[:3]) == ["value", "signed_root", "llf"]
    assert "temp[T.warm]" not in curve.columns and "contact[T.yes]" in curve.columns
    assert np.all(np.diff(curve["signed_root"]) > 0)
    at_estimate = curve.loc[np.isclose(curve["value"], wine_res.params["temp[T.warm]"])]
    assert at_estimate["signed_root"].iloc[0] == 0.0
    assert at_estimate["llf"].iloc[0] == pytest.approx(wine_res.llf)
    z = stats.norm.ppf(1 - 0.001 / 2)
    assert curve["signed_root"].iloc[0] == pytest.approx(-z, abs=1e-6)
    assert curve["signed_root"].iloc[-1] == pytest.approx(z, abs=1e-6)
    assert curve.attrs["param"] == "temp[T.warm]"
    assert curve.attrs["se"] == pytest.approx(wine_res.bse["temp[T.warm]"])


def test_plot_profile(wine_res):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    ax = wine_res.plot_profile("contact[T.yes]")
    assert ax.get_xlabel() == "contact[T.yes]"
    assert len(ax.get_lines()) >= 2
    with pytest.raises(OrdstatsError, match="returned by profile"):
        plot_profile(wine_res.params.to_frame())
    import matplotlib.pyplot as plt

    plt.close("all")


def test_profile_odds_ratios_are_exponentiated_intervals(wine_res):
    ratios = wine_res.odds_ratios(method="profile")
    ci = wine_res.conf_int(method="profile", which=["temp[T.warm]", "contact[T.yes]"])
    np.testing.assert_allclose(ratios[["lower", "upper"]], np.exp(ci))
    np.testing.assert_allclose(ratios["odds_ratio"], np.exp(wine_res.params.iloc[4:]))


def test_robust_fit_profiles_the_same_likelihood(wine_res):
    robust = wine_res.get_robustcov_results("robust")
    np.testing.assert_allclose(
        robust.conf_int(method="profile", which=["temp[T.warm]"]),
        wine_res.conf_int(method="profile", which=["temp[T.warm]"]),
    )


def test_separation_gives_an_open_interval():
    y = np.array([0, 0, 0, 1, 1, 1, 2, 2, 2, 0, 1, 2])
    x = np.array([0, 0, 0, 0, 0, 0, 1, 1, 1, 0.0, 1, 1])
    trend = np.arange(12.0)
    with pytest.warns(ordstats.SeparationWarning):
        res = ordstats.OrdinalModel(y, np.column_stack([x, trend])).fit()
    with pytest.warns(ConvergenceWarning, match="unbounded"):
        ci = res.conf_int(method="profile", which=["x1"])
    assert np.isfinite(ci.loc["x1", "lower"]) and ci.loc["x1", "upper"] == np.inf


def test_profile_of_a_separated_cloglog_fit_lets_no_numpy_warning_through():
    """Before: "overflow encountered in multiply" from the start moved along the
    diverging fit's steep path (slope times step); that start is now skipped."""
    rng = np.random.default_rng(1)
    x, z = rng.normal(size=300), rng.normal(size=300)
    data = {"y": np.digitize(x, [-0.5, 0.5]), "x": x, "z": z, "g": rng.choice(list("abc"), 300)}
    with pytest.warns(ordstats.errors.OrdstatsWarning):  # separation
        res = ordstats.OrdinalModel.from_formula("y ~ x + z + g", data, link="cloglog").fit()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ci = res.conf_int(method="profile", which=["1|2"])
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)]
    # the separated threshold's interval: far from zero, its upper end open or huge
    assert ci.loc["1|2", "lower"] > 0 and ci.loc["1|2", "upper"] > 100 * ci.loc["1|2", "lower"]


def test_bad_requests(wine_res):
    with pytest.raises(SpecificationError, match=r"not a parameter.*'temp\[T.warm\]'"):
        wine_res.conf_int(method="profile", which=["temp"])
    with pytest.raises(OrdstatsError, match="'wald' or 'profile'"):
        wine_res.conf_int(method="likelihood")
    with pytest.raises(OrdstatsError, match="alpha"):
        wine_res.profile("temp[T.warm]", alpha=1.5)
    with pytest.raises(OrdstatsError, match="n_points"):
        wine_res.profile("temp[T.warm]", n_points=2)


def test_threshold_structures_profile_their_own_parameters(wine):
    res = ordstats.OrdinalModel.from_formula(
        "rating ~ temp + contact", wine, threshold="equidistant"
    ).fit()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ci = res.conf_int(method="profile", which=["spacing", "threshold.1"])
    assert ci.loc["spacing", "lower"] > 0
    assert ci.loc["spacing", "lower"] < res.params["spacing"] < ci.loc["spacing", "upper"]


@pytest.mark.parametrize("column", ["dummy", "numeric"])
def test_profile_of_a_predictor_times_1e200_lets_no_numpy_warning_through(wine, column):
    # before: "overflow encountered in matmul" from the Hessian in the user's parameters,
    # then "the Hessian has non-finite entries"; the interval is the rescaled fit's / 1e200
    x = (
        (wine["temp"] == "warm").astype(float)
        if column == "dummy"
        else np.random.default_rng(0).normal(size=len(wine))
    )
    data = wine.assign(x=x, xb=x * 1e200)
    base = ordstats.OrdinalModel.from_formula("rating ~ x + contact", data).fit()
    expected = base.conf_int(method="profile")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        big = ordstats.OrdinalModel.from_formula("rating ~ xb + contact", data).fit()
        ci = big.conf_int(method="profile")
        curve = big.profile("xb", n_points=5)
    np.testing.assert_allclose(ci.loc["xb"] * 1e200, expected.loc["x"], rtol=1e-8)
    np.testing.assert_allclose(ci.drop("xb"), expected.drop("x"), rtol=1e-8, atol=1e-10)
    assert curve["value"].iloc[0] * 1e200 == pytest.approx(
        base.conf_int(method="profile", alpha=0.001, which=["x"]).loc["x", "lower"], rel=1e-8
    )


def _soup_scale_model(link: str, threshold: str = "flexible"):
    soup = ordstats.datasets.load("soup")
    return ordstats.OrdinalModel.from_formula(
        "SURENESS ~ COLD + SOUPTYPE",
        soup,
        link=link,
        threshold=threshold,
        nominal="~ PROD",
        scale="~ PROD",
    )


def test_profile_of_a_converged_fit_needs_no_positive_definite_hessian():
    """A constrained fit of this converged model met a Hessian that was not positive
    definite even after R's inflation (|smallest eigenvalue| + 1 on a diagonal of
    1e5): numpy's LinAlgError escaped conf_int; another parameter's fit overflowed
    its Hessian ("the fit cannot continue").  R's confint gives SOUPTYPE[T.Canned]
    [-0.40105, -0.01212]; the upper end lies where the profile jumps between two
    branches of constrained optima (see the test of that jump)."""
    res = _soup_scale_model("logit").fit()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ci = res.conf_int(method="profile", which=["SOUPTYPE[T.Canned]", "4|5:PROD[T.Test]"])
    assert ci.loc["SOUPTYPE[T.Canned]", "lower"] == pytest.approx(-0.40105, abs=2e-5)
    assert np.isfinite(ci.loc["4|5:PROD[T.Test]", "lower"])


@pytest.mark.parametrize(("link", "threshold"), [("cauchit", "symmetric"), ("logit", "flexible")])
def test_a_profile_that_stays_above_the_cut_off_gives_an_open_end(link, threshold):
    """The scale effect's profile levels off above the cut-off going down (R's confint:
    NA); the constrained fits there stop early, with log-likelihoods below the
    profile's, and the interval ended where they did (-4.44 for cauchit, -11.98 for
    logit).  The end is now open, with a warning saying where the fits stopped."""
    res = _soup_scale_model(link, threshold).fit()
    with pytest.warns(ConvergenceWarning, match="could not be followed beyond"):
        ci = res.conf_int(method="profile", which=["scale:PROD[T.Test]"])
    assert ci.iloc[0, 0] == -np.inf
    assert np.isfinite(ci.iloc[0, 1])


def test_a_profile_that_jumps_past_the_cut_off_ends_at_the_jump():
    """SOUPTYPE[T.Canned]: below 0 the profile follows a branch of constrained optima
    whose scale effect runs off to -inf as the value nears 0; above 0 that branch is gone
    and the profile drops, in a jump, past the cut-off (R's refits from both branches,
    profile_soup_branches.json).  The interval ended open where the fits stopped near 0.
    R's confint puts the end at -0.01212 by a spline across the jump (0.0033 and 0.0013
    with 16 and 32 steps); its own refits have |r| = 1.695 < z there."""
    data = ref.load("profile_soup_branches")
    res = _soup_scale_model("logit").fit()
    name = "SOUPTYPE[T.Canned]"
    with pytest.warns(ConvergenceWarning, match="in a jump at"):
        ci = res.conf_int(method="profile", which=[name])
    assert ci.loc[name, "lower"] == pytest.approx(data["confint"][0], abs=1e-4)
    # the jump lies between R's last value inside and first value outside
    z = stats.norm.ppf(0.975)
    inside = max(row["value"] for row in data["profile"] if row["signed_root"] < z)
    outside = min(row["value"] for row in data["profile"] if row["signed_root"] >= z)
    assert inside <= ci.loc[name, "upper"] <= outside
    assert ci.loc[name, "upper"] == pytest.approx(0.0, abs=1e-4)

    k = list(res.params.index).index(name)
    profile = ParameterProfile(
        res.model.evaluator.evaluate, res.params.to_numpy(), k, float(res.bse.iloc[k])
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for row in data["profile"]:
            assert profile.signed_root(row["value"]) == pytest.approx(
                row["signed_root"], abs=1e-4
            ), row["value"]
