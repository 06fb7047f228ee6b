"""What penalised fits say about their uncertainty and their fit criteria.

An L1 or elastic-net fit selects, so no covariance holds after it: every method that
returns estimates returns them with NaN standard errors and a
:class:`~ordstats.errors.StandardErrorWarning` saying why, and every test refuses.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ordstats import OrdinalModel
from ordstats.errors import OrdstatsError, StandardErrorWarning

WHY = r"without standard errors \(NaN\): an L1 or elastic-net penalty selects.*bootstrap"


@pytest.fixture(scope="module")
def model(wine: pd.DataFrame) -> OrdinalModel:
    return OrdinalModel.from_formula("rating ~ temp + contact", wine)


@pytest.fixture(scope="module")
def lasso(model):
    res = model.fit_regularized(alpha=0.05)
    assert res.n_nonzero == 2  # a lasso fit, with its slopes still in
    return res


def test_emmeans_of_a_lasso_fit_are_estimates_with_a_warning(lasso):
    with pytest.warns(StandardErrorWarning, match=WHY):
        contrast = lasso.emmeans("temp").contrast("pairwise")
    frame = contrast.summary_frame()
    # cold - warm on the latent scale is minus the temperature slope, exactly
    np.testing.assert_allclose(frame["estimate"], -lasso.params["temp[T.warm]"], rtol=1e-12)
    assert frame["SE"].isna().all()


@pytest.mark.parametrize("verb", ["avg_predictions", "avg_comparisons", "slopes"])
def test_margins_of_a_lasso_fit_warn_why_they_have_no_standard_errors(lasso, verb):
    with pytest.warns(StandardErrorWarning, match=WHY):
        table = getattr(lasso, verb)()
    assert table["estimate"].notna().all() and table["std_error"].isna().all()


def test_predictions_of_a_lasso_fit_warn_and_equal_predict(lasso, wine):
    with pytest.warns(StandardErrorWarning, match=WHY):
        pred = lasso.get_prediction(wine.iloc[:3])
    np.testing.assert_allclose(pred.predicted, lasso.predict(wine.iloc[:3]), rtol=1e-12)
    assert np.isnan(pred.se.to_numpy()).all()


def test_marginal_effects_of_a_lasso_fit_are_estimates_not_a_refusal(lasso, wine):
    """Before: get_margeff() raised while avg_comparisons() gave NaN standard errors."""
    with pytest.warns(StandardErrorWarning, match=WHY):
        effects = lasso.get_margeff()
    # average dP(Y = j)/dx_k = -b_k mean_i [f(theta_j - eta_i) - f(theta_{j-1} - eta_i)]
    p = lasso.params
    eta = p["temp[T.warm]"] * (wine["temp"] == "warm") + p["contact[T.yes]"] * (
        wine["contact"] == "yes"
    )
    cuts = np.concatenate([[-np.inf], p.iloc[:4].to_numpy(), [np.inf]])
    z = cuts[None, :] - eta.to_numpy()[:, None]
    density = np.where(np.isfinite(z), np.exp(-np.abs(z)) / (1 + np.exp(-np.abs(z))) ** 2, 0.0)
    by_level = np.diff(density, axis=1).mean(axis=0)
    for name in ("temp[T.warm]", "contact[T.yes]"):
        np.testing.assert_allclose(effects.margeff.loc[name], -p[name] * by_level, rtol=1e-10)
    assert np.isnan(effects.margeff_se.to_numpy()).all()


def test_tests_of_a_lasso_fit_refuse_without_a_warning(lasso):
    with pytest.raises(OrdstatsError, match="L1 or elastic-net penalty"):
        lasso.wald_test_terms()
    with pytest.raises(OrdstatsError, match="L1 or elastic-net penalty"):
        lasso.joint_tests()


def test_ridge_and_unpenalised_margins_do_not_warn(model):
    ridge = model.fit_regularized(alpha=0.05, L1_wt=0.0)
    assert ridge.avg_comparisons()["std_error"].gt(0).all()


# -- degrees of freedom and criteria --------------------------------------------------------


def test_ridge_aic_uses_the_trace_of_h_over_h_plus_p(model):
    alpha = 0.05
    ridge = model.fit_regularized(alpha=alpha, L1_wt=0.0)
    # exact recomputation: H the observed information at the estimates, P = n_w alpha on slopes
    H = model.evaluate(ridge.params.to_numpy()).hessian
    P = np.diag([0.0] * 4 + [ridge.nobs * alpha] * 2)
    edf = np.trace(H @ np.linalg.inv(H + P))
    assert 4 < edf < 6
    np.testing.assert_allclose(ridge.df_effective, edf, rtol=1e-10)
    np.testing.assert_allclose(ridge.aic, -2 * ridge.llf + 2 * edf, rtol=1e-12)
    np.testing.assert_allclose(ridge.bic, -2 * ridge.llf + np.log(72) * edf, rtol=1e-12)
    np.testing.assert_allclose(ridge.df_resid, 72 - edf, rtol=1e-12)
    assert f"{edf:.4g}" in str(ridge.summary())


def test_lasso_df_counts_the_thresholds_and_non_zero_slopes_as_glmnet(model):
    empty = model.fit_regularized(alpha=0.3)  # both slopes zero: the thresholds-only fit
    assert empty.n_nonzero == 0 and empty.df_model == 0
    assert empty.df_effective == 4
    np.testing.assert_allclose(empty.aic, -2 * empty.model.null_loglike() + 2 * 4, rtol=1e-10)
    full = model.fit_regularized(alpha=0.05)
    assert full.df_effective == 6 and full.df_model == 2


def test_llr_pvalue_of_an_elastic_net_fit_is_refused(lasso, model):
    with pytest.raises(OrdstatsError, match="no chi-square distribution"):
        _ = lasso.llr_pvalue
    assert 0 < model.fit(penalty="firth").llr_pvalue < 1e-3


def test_alpha_zero_lasso_has_the_maximum_likelihood_standard_errors(model, wine_res):
    """Before: alpha=0 (no penalty, nothing selected) with L1_wt=1 reported NaN SEs."""
    res = model.fit_regularized(alpha=0.0, tol=1e-10)
    np.testing.assert_allclose(res.bse, wine_res.bse, rtol=1e-6)
    np.testing.assert_allclose(res.aic, wine_res.aic, rtol=1e-10)
