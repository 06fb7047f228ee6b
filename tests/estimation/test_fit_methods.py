"""fit(method=...): statsmodels' optimiser names end with the Newton polish."""

from __future__ import annotations

import numpy as np
import pytest

import ordstats
from ordstats.core.prefit import FIT_METHODS
from ordstats.errors import SpecificationError


@pytest.fixture(scope="module")
def wine_model(wine):
    return ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine)


@pytest.mark.parametrize("method", [m for m in FIT_METHODS if m != "newton"])
def test_every_method_reaches_the_newton_estimates(wine_model, method):
    newton = wine_model.fit()
    res = wine_model.fit(method=method)
    assert res.converged
    assert res.fit_info.method == method
    assert res.fit_info.prefit is not None and res.fit_info.prefit.n_evaluations > 0
    np.testing.assert_allclose(res.params, newton.params, rtol=1e-5, atol=1e-6)
    assert res.llf == pytest.approx(newton.llf, abs=1e-8)


def test_method_is_case_insensitive_and_positional(wine_model):
    res = wine_model.fit(None, "BFGS")
    assert res.fit_info.method == "bfgs"


@pytest.mark.parametrize("family", ["sratio", "acat"])
def test_other_families_and_flexible_links(wine, family):
    model = ordstats.OrdinalModel.from_formula("rating ~ temp", wine, family=family)
    np.testing.assert_allclose(
        model.fit(method="lbfgs").params, model.fit().params, rtol=1e-5, atol=1e-6
    )
    flexible = ordstats.OrdinalModel.from_formula("rating ~ temp", wine, link="aranda-ordaz")
    np.testing.assert_allclose(
        flexible.fit(method="nm").params, flexible.fit().params, rtol=1e-4, atol=1e-5
    )


@pytest.mark.parametrize("bad", ["foo", 3, None])
def test_unknown_method_lists_the_accepted_ones(wine_model, bad):
    with pytest.raises(SpecificationError, match=r"'bfgs'.*'nm'"):
        wine_model.fit(method=bad)
