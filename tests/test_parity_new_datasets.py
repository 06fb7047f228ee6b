"""carData::Vocab, brms::inhaler and AER::GSOEP9402 against R (tests/r/parity5.R).

Vocab (30,351 rows, 11 levels): clm under three links, equidistant thresholds, nominal and
scale effects and a year-by-sex interaction, in memory, in chunks and on Dask; predictions
with SEs; emmeans.  inhaler: clmm with the Laplace approximation and 10 quadrature nodes,
clm and polr.  GSOEP9402: polr and clm (probit) with profile intervals, predictions and
drop1.  Estimates and log-likelihoods to 1e-6, SEs to 1e-4.  Where R is off (clmm's Laplace
SEs, R's names aside) the test checks against an exact recomputation instead.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, special

import ordstats
from ordstats.errors import (
    CollinearityWarning,
    ConvergenceWarning,
    PredictionError,
    PredictionWarning,
)
from tests._parity import dataset

R = json.loads((Path(__file__).parent / "data" / "r" / "parity5.json").read_text())
VOCAB = "vocabulary ~ year * sex + education"
VOCAB_SPECS: dict[str, tuple[str, dict]] = {
    "logit": (VOCAB, {}),
    "probit": (VOCAB, {"link": "probit"}),
    "cloglog": (VOCAB, {"link": "cloglog"}),
    "equidistant": (VOCAB, {"threshold": "equidistant"}),
    "nominal": ("vocabulary ~ year + education", {"nominal": "~ sex"}),
    "scale": ("vocabulary ~ year + sex + education", {"scale": "~ education"}),
}
INHALER = "rating ~ treat + period + carry"
GSOEP = "school ~ meducation + memployment + log(income) + size + parity + state + gender + kids"


def _values(x: object) -> np.ndarray:
    """R's JSON numbers (a named list, a vector or matrix rows; "NA" as NaN) as floats."""
    values = list(x.values()) if isinstance(x, dict) else x
    table = np.array(pd.DataFrame(values).replace("NA", np.nan), dtype=float)
    return table if isinstance(values[0], list) else table[:, 0]


def _assert_fit(res: object, part: dict, se_rtol: float = 1e-4) -> None:
    """Estimates (R's names aside: ours are patsy's) to 1e-6, SEs to ``se_rtol``, logLik."""
    coef = _values(part["coef"])
    assert len(res.params) == len(coef)  # type: ignore[attr-defined]
    np.testing.assert_allclose(res.params, coef, rtol=1e-6, atol=1e-6)  # type: ignore[attr-defined]
    se = _values(part["se"])[: len(coef)]
    np.testing.assert_allclose(res.bse, se, rtol=se_rtol)  # type: ignore[attr-defined]
    assert res.llf == pytest.approx(part["logLik"], abs=1e-6)  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def vocab() -> pd.DataFrame:
    return dataset("vocab")


def _vocab_fit(name: str, data: object, **extra: object):
    formula, options = VOCAB_SPECS[name]
    return ordstats.OrdinalModel.from_formula(formula, data, **options, **extra).fit()


@pytest.fixture(scope="module")
def vocab_fits(vocab) -> dict:
    return {name: _vocab_fit(name, vocab) for name in ("logit", "scale")}


@pytest.mark.parametrize("name", list(VOCAB_SPECS))
def test_vocab_fits(vocab, name: str) -> None:
    _assert_fit(_vocab_fit(name, vocab), R["vocab"][name])


@pytest.mark.parametrize("name", ["logit", "nominal", "scale", "equidistant"])
def test_vocab_fits_in_chunks(vocab, name: str) -> None:
    _assert_fit(_vocab_fit(name, vocab, chunksize=4000), R["vocab"][name])


@pytest.mark.parametrize("name", ["logit", "nominal", "scale"])
def test_vocab_fits_on_dask(vocab, name: str) -> None:
    dask = pytest.importorskip("dask")
    dd = pytest.importorskip("dask.dataframe")
    with dask.config.set(scheduler="threads"):
        res = _vocab_fit(name, dd.from_pandas(vocab, npartitions=5))
    _assert_fit(res, R["vocab"][name])


NEW = pd.DataFrame(
    {
        "year": [1978, 1996, 2014],
        "sex": pd.Categorical(["Female", "Male", "Male"], categories=["Female", "Male"]),
        "education": [8, 12, 18],
    }
)


@pytest.mark.parametrize("name,key", [("logit", "logit_prob"), ("scale", "scale_prob")])
def test_vocab_predictions_with_ses(vocab_fits, name: str, key: str) -> None:
    res, r = vocab_fits[name], R["vocab_predict"][key]
    np.testing.assert_allclose(res.predict(NEW), r["fit"], atol=1e-9)
    frame = res.get_prediction(NEW).summary_frame()
    for ours, theirs in [("se", "se.fit"), ("ci_lower", "lwr"), ("ci_upper", "upr")]:
        np.testing.assert_allclose(frame[ours].to_numpy().reshape(3, 11), r[theirs], atol=1e-9)


def test_vocab_cumulative_predictions(vocab_fits) -> None:
    r = R["vocab_predict"]["logit_cum"]
    cum = vocab_fits["logit"].get_prediction(NEW, which="cumprob").summary_frame()
    for ours, theirs in [("prob", "cprob1"), ("se", "se.cprob1")]:
        np.testing.assert_allclose(
            cum[ours].to_numpy().reshape(3, 10), _values(r[theirs])[:, :10], atol=1e-9
        )


@pytest.mark.parametrize(
    "name,spec,mode,key",
    [
        ("logit", "sex | year", "mean.class", "mean_class"),
        ("logit", "vocabulary | sex * year", "prob", "prob"),
        ("nominal", "vocabulary | sex * year", "prob", "nominal_prob"),
        ("scale", "sex | year", "mean.class", "scale_mean_class"),
    ],
)
def test_vocab_emmeans(vocab, vocab_fits, name: str, spec: str, mode: str, key: str) -> None:
    res = vocab_fits[name] if name in vocab_fits else _vocab_fit(name, vocab)
    ours = res.emmeans(spec, mode=mode, at={"year": [1980, 2010]}).summary_frame()
    r = pd.DataFrame(R["vocab_emmeans"][key])
    assert list(ours["sex"]) == list(r["sex"])
    np.testing.assert_array_equal(ours["year"], r["year"])
    estimate = r.columns[list(r.columns).index("SE") - 1]
    for col in (estimate, "SE", "asymp.LCL", "asymp.UCL"):
        np.testing.assert_allclose(ours[col], r[col], rtol=1e-7, atol=1e-9)


def test_vocab_drop1_keeps_marginality(vocab_fits) -> None:
    # year and sex sit in year:sex, so (as R) only education and year:sex are dropped
    table, r = vocab_fits["logit"].drop1(test="Chisq"), R["vocab_drop1"]
    assert list(table.index) == r["rows"]
    np.testing.assert_allclose(table.to_numpy(float), _values(r["values"]), rtol=1e-7)


@pytest.mark.parametrize("name,key", [("logit", "vocab_confint"), ("scale", "vocab_confint_scale")])
def test_vocab_profile_intervals(vocab_fits, name: str, key: str) -> None:
    r = _values(R[key]["values"])
    ours = vocab_fits[name].conf_int(method="profile").to_numpy()[-len(r) :]
    np.testing.assert_allclose(ours, r, rtol=1e-4)


@pytest.mark.parametrize("method", ["nominal_test", "scale_test"])
def test_vocab_nominal_and_scale_tests(vocab_fits, method: str) -> None:
    # the refits adding year (and year:sex) fail in R and here (crossing thresholds): NA rows
    with pytest.warns(ConvergenceWarning, match="adding 'year', 'year:sex'"):
        ours = getattr(vocab_fits["logit"], method)()
    r = R[f"vocab_{method}"]
    assert list(ours.index) == r["rows"]
    np.testing.assert_allclose(ours.to_numpy(float), _values(r["values"]), rtol=1e-6)


# --- brms::inhaler


@pytest.fixture(scope="module")
def inhaler() -> pd.DataFrame:
    return dataset("inhaler")


def _clmm(data: pd.DataFrame, nagq: int):
    model = ordstats.OrdinalMixedModel.from_formula(f"{INHALER} + (1|subject)", data)
    return model.fit(nagq=nagq)


def _mixed_ses(res) -> np.ndarray:
    return np.sqrt(np.diag(res.cov_params()))


def _assert_estimates_modes_and_variances(res, r: dict) -> None:
    """clmm stops within ~1e-5 of the maximum (its estimates up to 1.6e-5 off ours)."""
    np.testing.assert_allclose(res.params, _values(r["coef"]), atol=5e-5)
    assert res.llf == pytest.approx(r["logLik"], abs=1e-6)
    assert res.varcorr()["sd"].iloc[0] == pytest.approx(r["sd"], rel=1e-4)
    modes, variances = res.ranef(condvar=True)
    np.testing.assert_allclose(modes["subject"].iloc[:, 0], r["ranef"], atol=5e-5)
    np.testing.assert_allclose(variances["subject"].iloc[:, 0], r["condVar"], rtol=1e-4)


def test_inhaler_clmm_quadrature(inhaler) -> None:
    res, r = _clmm(inhaler, 10), R["inhaler_clmm"]["agq10"]
    _assert_estimates_modes_and_variances(res, r)
    np.testing.assert_allclose(_mixed_ses(res), _values(r["se"]), rtol=1e-4)


@pytest.mark.parametrize("nagq,key", [(1, "laplace"), (10, "agq10")])
def test_inhaler_clmm_observed_probabilities_are_r_fitted(inhaler, nagq: int, key: str) -> None:
    # R's fitted(clmm): each row's probability of its own level given the modes; the
    # mixed model's predict refused which="observed" that the clm's accepts
    res, r = _clmm(inhaler, nagq), R["inhaler_clmm"][key]
    np.testing.assert_allclose(res.predict(which="observed"), r["fitted"], atol=5e-5)
    ours = res.predict(inhaler.iloc[::7], which="observed")
    np.testing.assert_allclose(ours, np.asarray(r["fitted"])[::7], atol=5e-5)
    np.testing.assert_array_equal(ours.index, inhaler.index[::7])
    with pytest.raises(PredictionError, match="newdata needs the response column 'rating'"):
        res.predict(inhaler.drop(columns="rating"), which="observed")


def _laplace(params: np.ndarray, data: pd.DataFrame) -> float:
    """The Laplace log-likelihood of the inhaler clmm, independent of ordstats.

    One random intercept per subject, so the conditional modes are scalar Newton solves.
    """
    y = data["rating"].cat.codes.to_numpy()
    x = data[["treat", "period", "carry"]].to_numpy(float)
    group = np.unique(data["subject"].to_numpy(), return_inverse=True)[1]
    n_groups, sd = group.max() + 1, np.exp(params[6])
    theta = np.r_[-np.inf, params[:3], np.inf]
    upper, lower = theta[y + 1] - x @ params[3:6], theta[y] - x @ params[3:6]

    def terms(u: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        fa, fc = special.expit(upper - u[group]), special.expit(lower - u[group])
        da, dc = fa * (1 - fa), fc * (1 - fc)
        prob = fa - fc
        d1 = -(da - dc) / prob
        d2 = (da * (1 - 2 * fa) - dc * (1 - 2 * fc)) / prob - d1**2
        return np.log(prob), np.bincount(group, d1, n_groups), np.bincount(group, d2, n_groups)

    u = np.zeros(n_groups)
    for _ in range(50):
        _, d1, d2 = terms(u)
        step = (d1 - u / sd**2) / (d2 - 1 / sd**2)
        u -= step
        if np.max(np.abs(step)) < 1e-14:
            break
    logp, _, d2 = terms(u)
    joint = np.bincount(group, logp, n_groups) - 0.5 * u**2 / sd**2 - np.log(sd)
    return float(np.sum(joint - 0.5 * np.log(-(d2 - 1 / sd**2))))


def test_inhaler_clmm_laplace_against_exact_recomputation(inhaler) -> None:
    # clmm's Laplace SEs are 3-12% above the inverse Hessian of its own Laplace
    # log-likelihood (treat: 0.3353 vs 0.3005), while its nAGQ = 10 SEs agree with ours
    # to 1e-6: ours are checked against an independent Laplace recomputation
    res, r = _clmm(inhaler, 1), R["inhaler_clmm"]["laplace"]
    start = np.r_[_values(r["coef"]), np.log(r["sd"])]
    exact = optimize.minimize(
        lambda p: -_laplace(p, inhaler), start, method="BFGS", options={"gtol": 1e-9}
    )
    np.testing.assert_allclose(res.params_all, exact.x, atol=2e-6)
    assert res.llf == pytest.approx(-exact.fun, abs=1e-8)
    exact_ses = np.sqrt(np.diag(np.linalg.inv(-_hessian(lambda p: _laplace(p, inhaler), exact.x))))
    np.testing.assert_allclose(_mixed_ses(res), exact_ses, rtol=1e-4)
    assert not np.allclose(_values(r["se"]), _mixed_ses(res), rtol=0.03)
    _assert_estimates_modes_and_variances(res, r)


def _hessian(f, x: np.ndarray, h: float = 1e-4) -> np.ndarray:
    """Central second differences of ``f`` at ``x``."""
    steps = np.eye(x.size) * h
    return np.array(
        [[f(x + a + b) - f(x + a - b) - f(x - a + b) + f(x - a - b) for b in steps] for a in steps]
    ) / (4 * h * h)


@pytest.mark.parametrize("key", ["inhaler_clm", "inhaler_polr"])
def test_inhaler_clm_and_polr(inhaler, key: str) -> None:
    # polr (BFGS, reltol 1e-14, numerical Hessian) agrees with clm to ~1e-7
    res = ordstats.OrdinalModel.from_formula(INHALER, inhaler).fit()
    _assert_fit(res, R[key], se_rtol=1e-4 if key == "inhaler_clm" else 1e-5)


# --- AER::GSOEP9402


@pytest.fixture(scope="module")
def gsoep() -> ordstats.OrdinalResults:
    # five East German states have no rows: R's clm drops the unused levels, ours drops
    # their zero columns with a warning that says so
    with pytest.warns(CollinearityWarning, match="no row has the factor level.*Sachsen"):
        model = ordstats.OrdinalModel.from_formula(GSOEP, dataset("gsoep9402"), link="probit")
    return model.fit()


@pytest.mark.parametrize("key", ["gsoep_clm", "gsoep_polr"])
def test_gsoep_probit_fit(gsoep, key: str) -> None:
    _assert_fit(gsoep, R[key])


@pytest.mark.parametrize("key", ["gsoep_clm", "gsoep_polr"])
def test_gsoep_profile_intervals(gsoep, key: str) -> None:
    # R profiles the slopes only (confint.clm interpolates a spline, polr's too)
    r = _values(R[key]["confint"]["values"])
    ours = gsoep.conf_int(method="profile").to_numpy()[-len(r) :]
    np.testing.assert_allclose(ours, r, atol=1e-4)


def test_gsoep_predictions(gsoep) -> None:
    head = dataset("gsoep9402").iloc[:6]
    np.testing.assert_allclose(gsoep.predict(head), R["gsoep_polr"]["predict_head"], atol=1e-8)
    assert list(gsoep.predict(head, which="class")) == R["gsoep_polr"]["class_head"]
    frame = gsoep.get_prediction(head).summary_frame()
    r = R["gsoep_clm"]["predict"]
    np.testing.assert_allclose(frame["prob"].to_numpy().reshape(6, 3), r["fit"], atol=1e-9)
    np.testing.assert_allclose(frame["se"].to_numpy().reshape(6, 3), r["se.fit"], atol=1e-9)


@pytest.mark.parametrize("key", ["gsoep_clm", "gsoep_polr"])
def test_gsoep_drop1(gsoep, key: str) -> None:
    table, r = gsoep.drop1(test="Chisq"), R[key]["drop1"]
    assert list(table.index) == r["rows"]
    for col, theirs in [("Df", "df"), ("AIC", "AIC"), ("LRT", "LRT"), ("Pr(>Chi)", "p")]:
        np.testing.assert_allclose(table[col], _values(r[theirs]), rtol=1e-7)


def test_gsoep_emmeans_by_state(gsoep) -> None:
    # R's clm dropped the five empty states, so its emmeans lists the other eleven; ours
    # lists all sixteen, the empty ones NaN with a warning (emmeans' nonEst)
    with pytest.warns(PredictionWarning, match="had no rows in the fitted data"):
        ours = gsoep.emmeans("state", mode="mean.class").summary_frame()
    r = pd.DataFrame(R["gsoep_clm"]["emmeans_state"])
    estimable = ours[ours["state"].isin(r["state"])]
    assert list(estimable["state"]) == list(r["state"])
    assert ours["mean.class"].drop(estimable.index).isna().all()
    for col in ("mean.class", "SE", "asymp.LCL", "asymp.UCL"):
        np.testing.assert_allclose(estimable[col], r[col], rtol=1e-7)
