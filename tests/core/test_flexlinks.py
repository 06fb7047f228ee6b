"""The flexible link families: identities, nesting, and lambda-derivatives."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate

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
        value, _ = integrate.quad(lambda t: float(f.pdf(t)), -np.inf, x, epsabs=1e-13)
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
