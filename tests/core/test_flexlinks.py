"""The flexible link families: identities, nesting, and lambda-derivatives."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, special
from scipy.special import log_ndtr

import ordstats
from ordstats.core.links import get_link
from ordstats.core.links.flexible import ArandaOrdaz, LogGamma
from ordstats.errors import ConvergenceWarning
from tests._numdiff import central_derivative

X = np.array([-8.0, -3.0, -1.0, -0.2, 0.0, 0.5, 1.5, 3.0, 6.0])
lg_lambda = st.floats(-1.8, 1.8).filter(lambda v: abs(v) > 1e-3 or v == 0.0)
ao_lambda = st.floats(0.05, 3.0)


def _family(kind: str, lam: float):
    return LogGamma(lam) if kind == "lg" else ArandaOrdaz(lam)


@pytest.mark.parametrize(
    "name, standard, lam",
    [
        ("aranda-ordaz", "logit", 1.0),
        ("log-gamma", "probit", 0.0),
        ("log-gamma", "cloglog", 1.0),
        ("log-gamma", "loglog", -1.0),
    ],
)
def test_families_nest_the_standard_links(name, standard, lam):
    flex = get_link(name).with_lambda(lam)
    ref = get_link(standard)
    np.testing.assert_allclose(flex.cdf(X), ref.cdf(X), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(flex.log_pdf(X), ref.log_pdf(X), rtol=1e-12)
    np.testing.assert_allclose(flex.dlog_pdf(X), ref.dlog_pdf(X), rtol=1e-10, atol=1e-12)


def test_aranda_ordaz_tends_to_cloglog():
    np.testing.assert_allclose(ArandaOrdaz(1e-9).cdf(X), get_link("cloglog").cdf(X), atol=1e-8)


@pytest.mark.parametrize("kind", ["lg", "ao"])
@given(data=st.data())
@settings(max_examples=25, deadline=None)
def test_density_integrates_to_cdf(kind, data):
    lam = data.draw(lg_lambda if kind == "lg" else ao_lambda)
    f = _family(kind, lam)
    for x in (-2.0, 0.3, 2.5):
        # quad's default epsrel (1.5e-8) is looser than the comparison
        value, _ = integrate.quad(
            lambda t: float(f.pdf(t)), -np.inf, x, epsabs=1e-14, epsrel=1e-13, limit=200
        )
        assert f.cdf(x) == pytest.approx(value, abs=1e-10)
        assert f.cdf(x) + f.sf(x) == pytest.approx(1.0, abs=1e-14)
    q = np.array([0.05, 0.5, 0.95])
    np.testing.assert_allclose(f.cdf(f.ppf(q)), q, atol=1e-10)


@pytest.mark.parametrize("kind", ["lg", "ao"])
@given(data=st.data())
@settings(max_examples=25, deadline=None)
def test_lambda_derivatives_match_finite_differences(kind, data):
    lam = data.draw(lg_lambda if kind == "lg" else ao_lambda)
    f = _family(kind, lam)
    h = 1e-4
    d1 = central_derivative(lambda t: f.with_lambda(t).cdf(X), lam, h)
    np.testing.assert_allclose(f.dcdf_dlam(X), d1, rtol=1e-5, atol=1e-8)
    d1g = central_derivative(lambda t: f.with_lambda(t).dcdf_dlam(X), lam, h)
    np.testing.assert_allclose(f.d2cdf_dlam2(X), d1g, rtol=1e-5, atol=1e-7)
    dl = central_derivative(lambda t: f.with_lambda(t).log_pdf(X), lam, h)
    np.testing.assert_allclose(f.dlog_pdf_dlam(X), dl, rtol=1e-5, atol=1e-6)


def test_log_gamma_derivatives_are_continuous_through_probit():
    """No cancellation near lambda = 0, where a = lambda^-2 explodes."""
    at_zero = LogGamma(0.0)
    for lam in (1e-6, -1e-6, 1e-4, -1e-4):
        near = LogGamma(lam)
        np.testing.assert_allclose(near.dcdf_dlam(X), at_zero.dcdf_dlam(X), atol=1e-4)
        np.testing.assert_allclose(near.cdf(X), at_zero.cdf(X), atol=1e-4)
        # first-order Taylor step in lambda: d2 log f / d lambda^2 at 0 = -(x^4/12 + 1/6)
        slope = (near.dlog_pdf_dlam(X) - at_zero.dlog_pdf_dlam(X)) / lam
        np.testing.assert_allclose(slope, -(X**4 / 12 + 1 / 6), rtol=1e-2, atol=1e-3)
    # d log f / d lambda at 0 is -x^3 / 6 (the skewness direction)
    np.testing.assert_allclose(at_zero.dlog_pdf_dlam(X), -(X**3) / 6, rtol=1e-12)


def test_aranda_ordaz_outside_its_domain_has_infinite_nll(wine):
    model = ordstats.OrdinalModel.from_formula("rating ~ temp", wine, link="aranda-ordaz")
    params = model.start_params
    params[-1] = -0.5
    assert model.loglike(params) == -np.inf


def test_flexible_fit_reports_lambda_and_beats_the_nested_link(wine):
    res = ordstats.OrdinalModel.from_formula(
        "rating ~ temp + contact", wine, link="Aranda-Ordaz"
    ).fit()
    logit = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    assert res.params.index[-1] == "lambda"
    assert res.llf >= logit.llf
    assert "Link parameter (aranda-ordaz)" in res.summary().as_text()
    prob = res.predict()
    np.testing.assert_allclose(prob.sum(axis=1), 1.0, rtol=1e-12)
    with pytest.raises(ordstats.OrdstatsError, match="odds ratios need the logit link"):
        res.odds_ratios()


def test_flexible_start_can_be_given(wine, recwarn):
    model = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine, link="log-gamma")
    res = model.fit()
    res2 = model.fit(start_params=res.params.to_numpy())
    np.testing.assert_allclose(res2.params, res.params, rtol=1e-8)
    assert not [w for w in recwarn if issubclass(w.category, ConvergenceWarning)]


# -- far tails: log F and the lambda-derivatives divided by P ----------------------


def test_log_gamma_log_tails_are_exact_where_the_probabilities_underflow():
    """lambda = -1 is the log-log link, F = exp(-e^{-x}); lambda = 1/2 has a = 4,
    where Q(4, v) = e^{-v} (1 + v + v^2/2 + v^3/6) and P(4, v) = e^{-v} sum_{k>=4} v^k/k!."""
    x = np.array([-7.0, -20.0, -300.0])  # F = exp(-e^{-x}) underflows from x ~ -6.6
    np.testing.assert_allclose(LogGamma(-1.0).log_cdf(x), -np.exp(-x), rtol=1e-13)
    np.testing.assert_allclose(LogGamma(-1.0).log_cdf(x), get_link("loglog").log_cdf(x), rtol=1e-13)
    half = LogGamma(0.5)
    # sf is Q(4, v), v = 4 e^{x/2}: underflows for v > ~720
    v = np.array([50.0, 800.0, 5000.0, 1e5])
    x_upper = 2.0 * np.log(v / 4.0)
    expected = -v + np.log1p(v + v**2 / 2 + v**3 / 6)
    np.testing.assert_allclose(half.log_sf(x_upper), expected, rtol=1e-13)
    # cdf is P(4, v): underflows for v < ~1e-77
    v = np.array([1e-3, 1e-90, 1e-200])
    x_lower = 2.0 * np.log(v / 4.0)
    series = sum(v ** (k - 4) / np.prod(np.arange(5, k + 1.0)) for k in range(4, 12))  # 4!/k!
    expected = -v + 4.0 * np.log(v) - np.log(24.0) + np.log(series)
    np.testing.assert_allclose(half.log_cdf(x_lower), expected, rtol=1e-13)
    assert half.log_cdf(np.array(-np.inf)) == -np.inf
    assert half.log_sf(np.array(np.inf)) == -np.inf
    assert np.shape(half.log_cdf(0.3)) == ()


@pytest.mark.parametrize("kind, lam", [("lg", -1.5), ("lg", 0.7), ("lg", 5e-4), ("ao", 0.4)])
def test_lambda_derivatives_divided_inside_the_links(kind, lam):
    """dF/dlambda / P computed with the division inside: equal where nothing
    underflows, finite in tails where both factors underflow."""
    f = _family(kind, lam)
    x = np.array([-2.0, -0.3, 0.8, 2.5])
    log_p = f.log_cdf(x)
    np.testing.assert_allclose(
        f.dcdf_dlam(x, log_p), f.dcdf_dlam(x) / np.exp(log_p), rtol=1e-9, atol=1e-12
    )
    np.testing.assert_allclose(
        f.d2cdf_dlam2(x, log_p), f.d2cdf_dlam2(x) / np.exp(log_p), rtol=1e-9, atol=1e-12
    )
    far = np.array([-60.0, 60.0]) if kind == "lg" else np.array([-300.0, 300.0])
    for log_divisor in (f.log_cdf(far), f.log_sf(far)):
        assert np.all(np.isfinite(log_divisor))
        assert np.all(np.isfinite(f.dcdf_dlam(far, log_divisor)))
        assert np.all(np.isfinite(f.d2cdf_dlam2(far, log_divisor)))


@pytest.mark.parametrize("lam", [5e-4, -5e-4, 0.3, -2.0])
def test_log_gamma_log_cdf_and_log_sf_agree_with_the_probabilities(lam):
    """Where F and 1 - F are representable the logs are their logs; beyond, finite."""
    f = LogGamma(lam)
    x = np.array([-6.0, -1.0, 0.0, 1.5, 6.0])
    for logs, probabilities in ((f.log_cdf(x), f.cdf(x)), (f.log_sf(x), f.sf(x))):
        # log(1 - tiny) is only known to ~1e-16 absolutely, and near the probit
        # 1 - F is computed as such, which loses the digits of a tiny 1 - F
        shown = probabilities > 1e-6
        np.testing.assert_allclose(
            logs[shown], np.log(probabilities[shown]), rtol=1e-10, atol=1e-15
        )
        assert np.all(np.isfinite(logs))
    far = np.array([-45.0, 45.0])
    assert np.all(np.isfinite(f.log_cdf(far))) and np.all(np.isfinite(f.log_sf(far)))
    if abs(lam) < 1e-3:  # near the probit the far tails are close to log Phi
        np.testing.assert_allclose(f.log_cdf(far[0]), log_ndtr(-45.0), rtol=0.02)
        np.testing.assert_allclose(f.log_sf(far[1]), log_ndtr(-45.0), rtol=0.02)


# -- beyond the double range of v = a e^{lambda x} and of lambda e^x ----------------


@given(
    lam=st.floats(-2.5, 2.5).filter(lambda v: abs(v) > 1e-3),
    depth=st.floats(800.0, 5000.0),
)
@settings(max_examples=40, deadline=None)
def test_log_gamma_far_tail_is_the_leading_term_where_v_underflows(lam, depth):
    """Where lambda x < -800, v = a e^{lambda x} underflows and P(a, v) is
    v^a / Gamma(a + 1) to double precision: a finite log, not -inf."""
    f = LogGamma(lam)
    a = lam**-2
    x = np.array([-depth / lam])  # lambda x = -depth
    log_v = np.log(a) - depth
    expected = a * log_v - special.gammaln(a + 1.0)
    # P is the lower tail of F for lambda > 0 and of 1 - F for lambda < 0
    got = f.log_cdf(x) if lam > 0 else f.log_sf(x)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


@pytest.mark.parametrize(
    "link, method, x, expected",
    [
        (LogGamma(1.0), "log_cdf", -900.0, -900.0),  # the cloglog: log F = x - e^x / 2
        (LogGamma(-1.0), "log_sf", 900.0, -900.0),  # the loglog
        (ArandaOrdaz(1e-3), "log_cdf", -746.0, -746.0),  # log F = x - (1 + lambda) e^x / 2
        (ArandaOrdaz(3.0), "log_cdf", -3000.0, -3000.0),
    ],
)
def test_flexible_links_log_tails_follow_their_limits(link, method, x, expected):
    assert getattr(link, method)(np.array([x]))[0] == pytest.approx(expected, rel=1e-14)


def test_log_gamma_quantiles_stay_finite_for_a_large_lambda():
    """lambda = 40: a = 1/1600 and the median's v = (Gamma(a + 1) / 2)^(1 / a)
    underflows; its logarithm does not, nor the median or F around it."""
    for lam in (40.0, -40.0):
        f = LogGamma(lam)
        q = np.array([1e-12, 0.05, 0.5, 0.95, 1.0 - 1e-9])
        x = f.ppf(q)
        assert np.all(np.isfinite(x))
        np.testing.assert_allclose(f.cdf(x), q, rtol=1e-9)
        np.testing.assert_allclose(np.exp(f.log_cdf(x)), q, rtol=1e-9)
        assert np.isfinite(f.dcdf_dlam(x)).all()


def test_a_row_far_in_the_log_gamma_tail_has_a_finite_log_likelihood(wine):
    """The highest rating at linear predictor -700, lambda = -1.21: 1 - F(theta + 700)
    is about exp(-578), representable; the log-likelihood is finite and equals the
    sum of the rows' log-probabilities."""
    data = wine.assign(off=0.0)
    top = data.index[data["rating"] == data["rating"].max()][0]
    data.loc[top, "off"] = -700.0
    model = ordstats.OrdinalModel.from_formula(
        "rating ~ temp + contact", data, link="log-gamma", offset="off"
    )
    params = model.start_params.copy()
    params[-1] = -1.21
    loglike = model.loglike(params)
    assert np.isfinite(loglike)
    assert loglike < -500.0  # the far row alone contributes about -578


def test_log_gamma_for_a_large_lambda_matches_high_precision_values():
    """lambda = 17.35 (a wine fit with a large offset goes there): F(-60) = P(a, v)
    with v ~ e^{-1047} underflowing but P ~ 0.031 (mpmath, 50 digits); and
    dF/dlambda near the mode, whose steep side is ~1/lambda wide."""
    f = LogGamma(17.35466094)
    assert f.cdf(np.array([-60.0]))[0] == pytest.approx(0.0309826477481727, rel=1e-12)
    x = np.array([-5.0, -1.0, 0.1])
    d1 = central_derivative(lambda t: f.with_lambda(t).cdf(x), f.lam, 1e-4)
    np.testing.assert_allclose(f.dcdf_dlam(x), d1, rtol=1e-5)


def test_aranda_ordaz_lambda_derivatives_beyond_z_of_e700():
    """Far in the upper tail (lambda e^x > e^700) d log f / d lambda grows like
    x / lambda^2; it was held at its value for lambda e^x = e^700."""
    f = ArandaOrdaz(0.5)
    x = np.array([650.0, 800.0, 1000.0])
    dl = central_derivative(lambda t: f.with_lambda(t).log_pdf(x), f.lam, 1e-6)
    np.testing.assert_allclose(f.dlog_pdf_dlam(x), dl, rtol=1e-8)
    # d log(1 - F) / d lambda = (L - p) / lambda^2, L = log(1 + lambda e^x)
    expected = -((x + np.log(0.5)) - 1.0) / 0.25
    np.testing.assert_allclose(f.dcdf_dlam(x, f.log_sf(x)), expected, rtol=1e-12)


def test_log_gamma_near_the_probit_far_lower_tail():
    """|lambda| < 1e-3 (quadrature): f / Phi(x) overflowed beyond x ~ -1000, which
    gave log F = +inf; reference values by 40-digit quadrature of the density."""
    f = LogGamma(5e-4)
    x = np.array([-45.0, -1000.0, -1e4])
    expected = np.array([-1009.6636386755968, -426130.2259403971, -16026960.301076608])
    np.testing.assert_allclose(f.log_cdf(x), expected, rtol=1e-12)
    assert np.all(np.isfinite(LogGamma(-5e-4).log_sf(-x)))


@pytest.mark.parametrize("lam", [0.3, 1.0, 2.5])
def test_aranda_ordaz_lambda_derivatives_per_probability_far_in_the_lower_tail(lam):
    """dF/dlambda / F tends to 0 in the lower tail (F ~ lambda e^x / lambda, the
    derivative ~ e^{2x}); below x = -745 (1 - F) / F overflowed and gave NaN."""
    f = ArandaOrdaz(lam)
    x = np.array([-1e4, -1000.0, -746.0, -300.0])
    log_f = f.log_cdf(x)
    first, second = f.dcdf_dlam(x, log_f), f.d2cdf_dlam2(x, log_f)
    assert np.all(np.isfinite(first)) and np.all(np.isfinite(second))
    # leading terms: F ~ z / lambda, dF/dlambda ~ -z^2 / (2 lambda^2), z = lambda e^x
    np.testing.assert_allclose(first, -np.exp(x) / 2, rtol=1e-10, atol=0)
