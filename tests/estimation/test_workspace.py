"""A fit frees its work arrays when it ends; whatever needs them again gets them back."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats.families.cumulative.likelihood import Evaluation

_ROW_TERMS = ("_first_order", "_logistic", "_pointwise", "_lambda_terms")


def _simulated(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    data = pd.DataFrame(rng.normal(size=(n, 3)), columns=["x1", "x2", "x3"])
    latent = data.to_numpy() @ [0.7, -0.4, 0.2] + rng.logistic(size=n)
    data["y"] = pd.Categorical(np.digitize(latent, [-1.5, 0.0, 1.2]), ordered=True)
    return data


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return _simulated(4_000, seed=5)


@pytest.mark.parametrize("link", ["logit", "probit", "log-gamma"])
def test_a_fit_keeps_no_grouped_copy_and_no_row_terms(frame, link):
    model = ordstats.OrdinalModel.from_formula("y ~ x1 + x2 + x3", frame, link=link)
    res = model.fit()
    assert "_rows_by_level" not in model.evaluator.problem.__dict__
    evaluation = res._evaluation
    assert isinstance(evaluation, Evaluation)
    assert not set(_ROW_TERMS) & set(evaluation.__dict__)
    # the kept Hessian and gradient are those of a fresh evaluation at the estimates
    fresh = model.evaluator.evaluate(res.params.to_numpy())
    np.testing.assert_allclose(evaluation.hessian, fresh.hessian, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(evaluation.gradient, fresh.gradient, atol=1e-12)


def test_row_terms_are_computed_again_when_asked_for(frame):
    model = ordstats.OrdinalModel.from_formula("y ~ x1 + x2 + x3", frame)
    res = model.fit()
    fresh = model.evaluator.evaluate(res.params.to_numpy())
    np.testing.assert_allclose(
        res._evaluation.observation_scores(), fresh.observation_scores(), rtol=1e-12
    )
    robust = res.get_robustcov_results("HC0")
    assert np.all(np.isfinite(robust.bse)) and not robust.bse.equals(res.bse)
    # the Hessian computed again after a release equals the first one
    first = fresh.hessian.copy()
    fresh.release_row_terms()
    model.evaluator.problem.release_workspace()
    fresh.__dict__.pop("hessian")
    fresh.__dict__.pop("_hessian_parts")
    np.testing.assert_allclose(fresh.hessian, first, rtol=1e-13, atol=1e-13)


def test_refitting_the_model_gives_the_same_estimates(frame):
    model = ordstats.OrdinalModel.from_formula("y ~ x1 + x2 + x3", frame)
    first, second = model.fit(), model.fit()
    np.testing.assert_array_equal(first.params, second.params)
    np.testing.assert_array_equal(first.bse, second.bse)


# -- fits that only predict: cov_type="none" --------------------------------------


@pytest.fixture(scope="module")
def many_rows() -> pd.DataFrame:
    return _simulated(30_000, seed=8)  # enough rows for the warm start


def test_estimates_only_fits_skip_the_final_hessian_and_compute_bse_when_asked(many_rows):
    model = ordstats.OrdinalModel.from_formula("y ~ x1 + x2 + x3", many_rows)
    full = model.fit()
    quick = model.fit(cov_type="none")
    np.testing.assert_array_equal(quick.params, full.params)
    assert quick.mle_retvals["iterations"] == full.mle_retvals["iterations"]
    assert quick.converged and quick.mle_retvals["code"] == 0
    # nothing second-order at the estimates yet ...
    assert "hessian" not in quick._evaluation.__dict__
    assert "nonrobust_covariance" not in quick.__dict__
    # ... until the standard errors are asked for: the same as the full fit's
    np.testing.assert_array_equal(quick.bse, full.bse)
    assert quick.covariance.kind == "nonrobust"
    assert "nonrobust_covariance" in quick.__dict__


def test_estimates_only_fits_warn_of_a_singular_hessian_when_it_is_computed(frame, monkeypatch):
    import ordstats.results.fitted as fitted
    from ordstats.results.covariance import Covariance

    model = ordstats.OrdinalModel.from_formula("y ~ x1 + x2", frame)
    res = model.fit(cov_type="none")
    k = len(res.params)
    singular = Covariance(np.full((k, k), np.nan), np.inf, True)
    monkeypatch.setattr(fitted, "evaluation_covariance", lambda evaluation: singular)
    with pytest.warns(ordstats.errors.ConvergenceWarning, match="numerically singular"):
        assert np.isnan(res.bse).all()
    with pytest.warns(ordstats.errors.ConvergenceWarning, match="numerically singular"):
        model.fit()  # computed at the fit otherwise: the warning comes with it


def test_the_classifier_fits_estimates_only(many_rows):
    from ordstats.learn import OrdinalClassifier

    X, y = many_rows[["x1", "x2", "x3"]].to_numpy(), many_rows["y"]
    clf = OrdinalClassifier().fit(X, y)
    assert "nonrobust_covariance" not in clf.results_.__dict__
    reference = ordstats.OrdinalModel.from_formula("y ~ x1 + x2 + x3", many_rows).fit()
    np.testing.assert_allclose(clf.coef_, reference.params[["x1", "x2", "x3"]], rtol=1e-10)
    np.testing.assert_allclose(clf.results_.bse.to_numpy(), reference.bse.to_numpy(), rtol=1e-10)


def test_an_unknown_cov_type_names_none_too(frame):
    model = ordstats.OrdinalModel.from_formula("y ~ x1", frame)
    with pytest.raises(ordstats.errors.SpecificationError, match="'none' for the estimates"):
        model.fit(cov_type="bogus")
    res = model.fit(cov_type="NONE")  # case-insensitive, as the other names
    assert "nonrobust_covariance" not in res.__dict__
