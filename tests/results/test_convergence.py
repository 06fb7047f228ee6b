"""res.convergence(): R ordinal's convergence(fit), against R and an exact recomputation.

Reference: ``tests/r/convergence.R`` (vendored in ``tests/data/reference/convergence.json``).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ordstats import OrdinalModel, SurveyDesign, datasets
from ordstats.errors import ConvergenceWarning, OrdstatsError, SpecificationError
from ordstats.results.convergence import correct_decimals, significant_digits

REF = json.loads(
    (Path(__file__).parents[1] / "data" / "reference" / "convergence.json").read_text()
)
MODELS = {
    "wine": ("rating ~ temp + contact", "wine", {}),
    "housing": ("Sat ~ Infl + Type + Cont", "housing", {"weights": "Freq", "link": "probit"}),
}


def _fit(name: str, **fit_kw):
    formula, data, kwargs = MODELS[name]
    return OrdinalModel.from_formula(formula, datasets.load(data), **kwargs).fit(**fit_kw)


@pytest.mark.parametrize("name", list(MODELS))
def test_converged_fit_s_table_and_eigenvalues_equal_r_s(name):
    ref = REF["fits"][name]
    report = _fit(name).convergence()
    assert report.info["nobs"] == ref["nobs"]
    assert report.info["logLik"] == pytest.approx(ref["logLik"], rel=1e-6)
    np.testing.assert_allclose(report.table["Estimate"], list(ref["estimate"].values()), rtol=1e-6)
    np.testing.assert_allclose(report.table["Std.Err"], list(ref["se"].values()), rtol=1e-4)
    np.testing.assert_allclose(report.eigenvalues, ref["eigenvalues"], rtol=1e-6)
    # at convergence the remaining error is far below the estimates' precision
    assert np.all(np.abs(report.table["Error"]) < 1e-6)
    assert np.all(report.table["Cor.Dec"] >= 6)
    assert abs(report.info["logLik_error"]) < 1e-10  # at most 0 up to rounding
    assert "Eigen values of Hessian" in str(report)


def test_correct_decimals_and_significant_digits_are_r_s():
    digits = REF["digits"]
    assert correct_decimals(np.array(digits["error"])).tolist() == digits["cor_dec"]
    got = significant_digits(np.array(digits["value"]), np.array(digits["error"]))
    assert got.tolist() == digits["signif_digits"]


def test_an_unconverged_fit_s_errors_are_the_newton_step_from_its_estimates():
    """Two iterations from the start: the Error column is H^{-1} g there, the log-likelihood
    error the log-likelihood gained by that step, and the step's size (0.087) warns."""
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        res = _fit("wine", maxiter=2)
    with pytest.warns(ConvergenceWarning, match=r"Newton step from the estimates is 0\.087"):
        report = res.convergence()
    x = res.params.to_numpy()
    evaluation = res.model.evaluate(x)
    step = np.linalg.solve(evaluation.hessian, evaluation.gradient)
    np.testing.assert_allclose(report.table["Error"], step, rtol=1e-10)
    np.testing.assert_allclose(report.table["Gradient"], evaluation.gradient, rtol=1e-12)
    gained = res.model.loglike(x - step) - res.llf
    assert report.info["logLik_error"] == pytest.approx(-gained, rel=1e-10)
    assert gained > 0
    se = np.sqrt(np.diag(np.linalg.inv(evaluation.hessian)))
    np.testing.assert_allclose(report.table["Std.Err"], se, rtol=1e-10)
    assert report.table["Cor.Dec"].tolist() == correct_decimals(step).tolist()


def test_a_singular_hessian_leaves_the_errors_out_as_r():
    """An aliased column kept (collinear='keep') makes the Hessian singular: R returns the
    table without errors, standard errors or the log-likelihood error."""
    wine = datasets.load("wine").assign(warm=lambda d: (d["temp"] == "warm").astype(float))
    model = OrdinalModel.from_formula("rating ~ temp + warm", wine, collinear="keep")
    with pytest.warns(ConvergenceWarning):
        res = model.fit()
    report = res.convergence()
    assert report.table["Error"].isna().all() and report.table["Std.Err"].isna().all()
    assert report.table["Cor.Dec"].isna().all()
    assert np.isnan(report.info["logLik_error"])
    assert np.min(np.abs(report.eigenvalues)) < 1e-6


def test_a_fit_without_its_rows_says_what_convergence_needs():
    res = _fit("wine")
    res.remove_data()
    with pytest.raises(OrdstatsError, match=r"convergence\(\) evaluates the likelihood"):
        res.convergence()


def test_penalised_and_survey_fits_refuse_it_saying_why():
    wine = datasets.load("wine")
    model = OrdinalModel.from_formula("rating ~ temp + contact", wine)
    with pytest.raises(SpecificationError, match=r"convergence\(\) needs maximum-likelihood"):
        model.fit(penalty="firth").convergence()
    design = SurveyDesign(wine.assign(w=np.linspace(1, 3, len(wine))), weights="w")
    survey = OrdinalModel.from_formula("rating ~ temp + contact", design=design).fit()
    with pytest.raises(SpecificationError, match=r"svyolr has no convergence"):
        survey.convergence()
