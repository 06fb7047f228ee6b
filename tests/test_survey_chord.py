"""Replicate refits by chord iterations on batched gradients (issue 27, replicate speed).

The replicate estimates of a cumulative model without nominal or scale effects come
from chord iterations on the full-sample Hessian with gradients of many replicates
at once (ordstats/estimation/survey_refits.py); they must equal Newton's refits, and
the batched gradients the one-replicate evaluations.  R's numbers are checked in
tests/test_survey_replicates.py.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import ordstats
import ordstats.estimation.survey as survey_fit
from ordstats.estimation.survey_refits import ReplicateGradients

CUTS = [-1.5, -0.3, 0.8, 1.9]


def simulated(n: int = 3000, psus: int = 60, seed: int = 0) -> pd.DataFrame:
    """A cluster sample: PSU effects, weights by stratum, three predictors and an offset."""
    rng = np.random.default_rng(seed)
    psu = rng.integers(0, psus, size=n)
    x = rng.normal(size=(n, 3))
    offset = 0.2 * rng.normal(size=n)
    eta = x @ np.array([0.5, -0.3, 0.2]) + offset + 0.3 * rng.normal(size=psus)[psu]
    y = (rng.logistic(size=n)[:, None] + eta[:, None] > np.array(CUTS)).sum(axis=1)
    frame = pd.DataFrame(x, columns=["x1", "x2", "x3"])
    frame["y"] = pd.Categorical(y, categories=range(5), ordered=True)
    frame["off"] = offset
    frame["psu"] = psu
    frame["w"] = 20.0 + 5.0 * (psu % 6)
    return frame


def fay_weights(frame: pd.DataFrame, n_rep: int, seed: int = 1) -> np.ndarray:
    """Random half-samples of the PSUs, weights times 1.5 / 0.5 (Fay, rho 0.5)."""
    rng = np.random.default_rng(seed)
    psu = frame["psu"].to_numpy()
    factors = np.where(rng.random((n_rep, psu.max() + 1)) < 0.5, 1.5, 0.5)
    return frame["w"].to_numpy()[:, None] * factors[:, psu].T


def jackknife_weights(frame: pd.DataFrame, n_rep: int) -> np.ndarray:
    """Drop-one-PSU (JK1) weights for the first ``n_rep`` PSUs: zero weights in each."""
    psu = frame["psu"].to_numpy()
    n_psu = psu.max() + 1
    columns = [np.where(psu == r, 0.0, n_psu / (n_psu - 1)) for r in range(n_rep)]
    return frame["w"].to_numpy()[:, None] * np.column_stack(columns)


def replicate_model(frame, repweights, type_="Fay", **kwargs):
    rho = 0.5 if type_ == "Fay" else None
    scale = None if type_ == "Fay" else (repweights.shape[1] - 1) / repweights.shape[1]
    design = ordstats.ReplicateDesign(
        frame, repweights=repweights, weights="w", type=type_, rho=rho, scale=scale
    )
    return ordstats.OrdinalModel.from_formula("y ~ x1 + x2 + x3", design=design, **kwargs)


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"link": "probit", "offset": "off"},
        {"link": "cloglog", "threshold": "equidistant", "offset": "off"},
        {"link": "cauchit", "threshold": "symmetric"},
    ],
)
def test_batched_gradients_equal_the_one_replicate_evaluations(options):
    frame = simulated()
    weights = np.column_stack([fay_weights(frame, 3), jackknife_weights(frame, 2)])
    model = ordstats.OrdinalModel.from_formula("y ~ x1 + x2 + x3", data=frame, **options)
    family = model.family_spec
    problem = family.prepare(model.data)
    gradients = ReplicateGradients.of(family, problem, weights, np.arange(len(frame)))
    assert gradients is not None
    fitted = model.fit().params.to_numpy()
    rng = np.random.default_rng(2)
    params = fitted + 0.05 * rng.normal(size=(weights.shape[1], fitted.size))
    batched = gradients(params, np.arange(weights.shape[1]))
    for r in range(weights.shape[1]):
        one = family.evaluate(problem.with_weights(weights[:, r]), params[r]).gradient
        np.testing.assert_allclose(batched[r], one, rtol=1e-10, atol=1e-9 * np.abs(one).max())
    # any subset of the replicates, in any order
    some = np.array([3, 0])
    np.testing.assert_allclose(gradients(params[some], some), batched[some], rtol=1e-10)


def test_overflowing_blocks_take_the_general_formulas():
    # eta - theta beyond ~700: e^{eta - theta} overflows, those blocks are computed by the
    # link's general formulas (as the one-replicate evaluation does)
    frame = simulated(n=400)
    weights = fay_weights(frame, 2)
    model = ordstats.OrdinalModel.from_formula("y ~ x1 + x2 + x3", data=frame)
    family = model.family_spec
    problem = family.prepare(model.data)
    gradients = ReplicateGradients.of(family, problem, weights, np.arange(len(frame)))
    params = np.array([[-1.5, -0.3, 0.8, 1.9, 900.0, 0.0, 0.0], [-1.5, -0.3, 0.8, 1.9, 0.5, 0, 0]])
    batched = gradients(params, np.arange(2))
    assert np.all(np.isfinite(batched))
    for r in range(2):
        one = family.evaluate(problem.with_weights(weights[:, r]), params[r]).gradient
        np.testing.assert_allclose(batched[r], one, rtol=1e-10, atol=1e-9 * np.abs(one).max())


def count_newton_calls(monkeypatch) -> dict[str, int]:
    calls = {"newton": 0}
    real = survey_fit.newton

    def counted(*args, **kwargs):
        calls["newton"] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(survey_fit, "newton", counted)
    return calls


@pytest.mark.parametrize(
    ("type_", "options"),
    [("Fay", {}), ("JK1", {"link": "probit", "offset": "off"}), ("Fay", {"link": "loglog"})],
)
def test_replicates_by_chord_iterations_equal_newton_refits(monkeypatch, type_, options):
    frame = simulated()
    repweights = fay_weights(frame, 12) if type_ == "Fay" else jackknife_weights(frame, 12)
    calls = count_newton_calls(monkeypatch)
    chord = replicate_model(frame, repweights, type_, **options).fit(disp=False)
    assert calls["newton"] == 0  # no replicate refitted by Newton
    monkeypatch.setattr(survey_fit, "_chord_estimates", lambda *args: None)
    newton = replicate_model(frame, repweights, type_, **options).fit(disp=False)
    assert calls["newton"] == 12
    np.testing.assert_allclose(chord.replicates, newton.replicates, rtol=1e-9)
    np.testing.assert_allclose(chord.cov_params(), newton.cov_params(), rtol=1e-7)


def test_chord_estimates_are_converged_as_the_newton_criteria_ask():
    frame = simulated()
    repweights = jackknife_weights(frame, 6)
    res = replicate_model(frame, repweights, "JK1").fit(disp=False)
    family = res.model.family_spec
    problem = family.prepare(res.model.data)
    for r in range(6):
        evaluation = family.evaluate(problem.with_weights(repweights[:, r]), res.replicates[r])
        assert np.max(np.abs(evaluation.gradient)) < 1e-6
        step = np.linalg.solve(evaluation.hessian, evaluation.gradient)
        assert np.all(np.abs(step) <= 1e-6 * np.maximum(1.0, np.abs(res.replicates[r])))


def test_replicates_in_threads_equal_one_thread():
    frame = simulated()
    repweights = fay_weights(frame, 10)
    with ordstats.set_options(threads=1):
        one = replicate_model(frame, repweights).fit(disp=False)
    with ordstats.set_options(threads=2):
        two = replicate_model(frame, repweights).fit(disp=False)
    np.testing.assert_allclose(two.replicates, one.replicates, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize(
    "options", [{"nominal": "~ off"}, {"scale": "~ x2"}, {"link": "Aranda-Ordaz"}]
)
def test_models_without_batched_gradients_refit_by_newton(monkeypatch, options):
    frame = simulated(n=1500)
    repweights = fay_weights(frame, 4)
    model = replicate_model(frame, repweights, **options)
    problem = model.family_spec.prepare(model.data)
    assert ReplicateGradients.of(model.family_spec, problem, repweights, np.arange(1500)) is None
    calls = count_newton_calls(monkeypatch)
    res = model.fit(disp=False)
    assert calls["newton"] >= 4
    assert np.all(np.isfinite(res.bse))
