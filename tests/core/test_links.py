"""Identities of every link distribution, including far in the tails."""

from __future__ import annotations

import decimal

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

from ordstats.core.links import Link, get_link, link_names, log1mexp
from ordstats.errors import SpecificationError
from tests._numdiff import central_derivative

LINKS = [get_link(name) for name in link_names()]
SCIPY = {
    "logit": stats.logistic,
    "probit": stats.norm,
    "cloglog": stats.gumbel_l,
    "loglog": stats.gumbel_r,
    "cauchit": stats.cauchy,
}
finite_x = st.floats(min_value=-30, max_value=30, allow_nan=False)


@pytest.mark.parametrize("link", LINKS, ids=str)
@given(x=finite_x)
@settings(max_examples=60, deadline=None)
def test_distribution_identities(link: Link, x: float) -> None:
    ref = SCIPY[link.name]
    assert link.cdf(x) == pytest.approx(ref.cdf(x), rel=1e-10, abs=1e-300)
    assert link.sf(x) == pytest.approx(ref.sf(x), rel=1e-10, abs=1e-300)
    assert link.log_pdf(x) == pytest.approx(ref.logpdf(x), rel=1e-10, abs=1e-12)
    assert link.cdf(x) + link.sf(x) == pytest.approx(1.0, rel=1e-14)


@pytest.mark.parametrize("link", LINKS, ids=str)
@given(x=finite_x)
@settings(max_examples=60, deadline=None)
def test_logs_match_and_derivatives_by_finite_differences(link: Link, x: float) -> None:
    h = 1e-5
    with np.errstate(divide="ignore"):
        assert np.exp(link.log_cdf(x)) == pytest.approx(link.cdf(x), rel=1e-12, abs=1e-300)
        assert np.exp(link.log_sf(x)) == pytest.approx(link.sf(x), rel=1e-12, abs=1e-300)
    if x <= 0:  # difference the smaller tail, or the finite difference itself cancels
        pdf_fd = central_derivative(link.cdf, x, h)
    else:
        pdf_fd = central_derivative(lambda t: -link.sf(t), x, h)
    assert link.pdf(x) == pytest.approx(pdf_fd, rel=1e-6, abs=1e-12)
    dlog_fd = central_derivative(link.log_pdf, x, h)
    assert link.dlog_pdf(x) == pytest.approx(dlog_fd, rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("link", LINKS, ids=str)
def test_quantile_inverts_cdf(link: Link) -> None:
    q = np.linspace(0.01, 0.99, 41)
    np.testing.assert_allclose(link.cdf(link.ppf(q)), q, rtol=1e-12)


@pytest.mark.parametrize("link", LINKS, ids=str)
def test_density_integrates_to_one(link: Link) -> None:
    total, _ = integrate.quad(lambda t: float(link.pdf(t)), -np.inf, np.inf, limit=200)
    assert total == pytest.approx(1.0, rel=1e-7)


@pytest.mark.parametrize("link", LINKS, ids=str)
def test_tails_keep_relative_precision(link: Link) -> None:
    """log F and log(1 - F) stay finite and accurate at |x| = 50."""
    ref = SCIPY[link.name]
    x = np.array([-50.0, -40.0, 40.0, 50.0])
    np.testing.assert_allclose(link.log_cdf(x), ref.logcdf(x), rtol=1e-9)
    np.testing.assert_allclose(link.log_sf(x), ref.logsf(x), rtol=1e-9)
    assert np.all(np.isfinite(link.log_pdf(x)) | (link.name in ("cloglog", "loglog")))


@pytest.mark.parametrize("link", LINKS, ids=str)
def test_infinite_arguments(link: Link) -> None:
    x = np.array([-np.inf, np.inf])
    np.testing.assert_array_equal(link.cdf(x), [0.0, 1.0])
    np.testing.assert_array_equal(link.sf(x), [1.0, 0.0])
    np.testing.assert_array_equal(link.log_pdf(x), [-np.inf, -np.inf])
    np.testing.assert_array_equal(link.dpdf(x), [0.0, 0.0])


def test_log1mexp_is_accurate_across_its_range() -> None:
    t = np.array([1e-20, 1e-8, 0.1, 0.69, 0.7, 5.0, 40.0, 800.0])
    # log(1 - e^-t) = log(t) + log((1 - e^-t)/t) for small t; -e^-t - e^-2t/2 for large t
    small = np.log(t[:2]) - t[:2] / 2
    large = -np.exp(-t[-2:]) - np.exp(-2 * t[-2:]) / 2
    np.testing.assert_allclose(log1mexp(t[:2]), small, rtol=1e-14)
    np.testing.assert_allclose(log1mexp(t[-2:]), large, rtol=1e-14)
    np.testing.assert_allclose(log1mexp(t[2:-2]), np.log(-np.expm1(-t[2:-2])), rtol=1e-14)


def test_unknown_link_names_choices() -> None:
    with pytest.raises(SpecificationError, match=r"unknown link 'logistic'.*'logit'"):
        get_link("logistic")
    assert get_link("Probit") == get_link("probit")


def _logistic_interval_exact(upper: float, lower: float) -> float:
    """log(F(u) - F(l)) in 60-digit decimal arithmetic."""
    with decimal.localcontext() as ctx:
        ctx.prec = 60
        hi, lo = decimal.Decimal(upper), decimal.Decimal(lower)
        diff = 1 / (1 + (-hi).exp()) - 1 / (1 + (-lo).exp())
        return float(diff.ln())


@given(a=st.floats(-60, 60), width=st.floats(1e-9, 80))
@settings(max_examples=200, deadline=None)
def test_logistic_interval_identity_is_exact(a, width):
    logit = get_link("logit")
    upper, lower = np.array([a + width]), np.array([a])
    exact = _logistic_interval_exact(upper[0], lower[0])
    assert logit.log_interval(upper, lower)[0] == pytest.approx(exact, rel=1e-12)
    # the generic tail rule (base class) agrees except for very narrow intervals,
    # where the difference of two logs loses ~ eps / width relative precision
    generic = Link.log_interval(logit, upper, lower)[0]
    assert generic == pytest.approx(exact, rel=1e-12 + 1e-15 / width)


def test_interval_with_infinite_bounds():
    for link in LINKS:
        value = link.log_interval(np.array([np.inf, 0.3]), np.array([-0.2, -np.inf]))
        np.testing.assert_allclose(value, [link.log_sf(-0.2), link.log_cdf(0.3)], rtol=1e-13)
        disordered = link.log_interval(np.array([0.0]), np.array([1.0]))
        assert np.isnan(disordered[0])
