"""Fixed, user-given thresholds (issue 14 item 18): ``threshold=[c_1, ..., c_{K-1}]``.

The cut-points are held at ``c`` and the location intercept is estimated instead:
``P(Y <= j) = F(c_j - alpha_0 - x'beta)``.
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, special

import ordstats
from ordstats.errors import SpecificationError

F = ordstats.OrdinalModel.from_formula


@pytest.fixture(scope="module")
def free(wine: pd.DataFrame) -> ordstats.OrdinalResults:
    return F("rating ~ temp + contact", wine).fit()


def test_thresholds_fixed_at_the_free_estimates_reproduce_the_free_fit(wine, free) -> None:
    cuts = free.params.iloc[:4].to_numpy()
    res = F("rating ~ temp + contact", wine, threshold=cuts).fit()
    assert res.converged
    assert res.llf == pytest.approx(free.llf, rel=1e-10)
    assert list(res.params.index) == ["(Intercept)", "temp[T.warm]", "contact[T.yes]"]
    assert res.params["(Intercept)"] == pytest.approx(0.0, abs=1e-8)
    slopes = ["temp[T.warm]", "contact[T.yes]"]
    np.testing.assert_allclose(res.params[slopes], free.params[slopes], rtol=1e-8)
    assert np.all(np.isfinite(res.bse)) and np.all(res.bse > 0)
    np.testing.assert_allclose(res.predict(wine), free.predict(wine), atol=1e-10)
    np.testing.assert_allclose(res.thresholds["estimate"], cuts, atol=1e-8)


def _simulate(n: int = 3000, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    g = rng.choice(["a", "b"], size=n)
    latent = 0.4 + 0.8 * x - 0.5 * (g == "b") + rng.logistic(size=n)
    y = np.searchsorted(np.arange(4) + 0.5, latent) + 1  # theta_r = r - 0.5
    return pd.DataFrame({"y": y, "x": x, "g": g})


def _direct_fit(data: pd.DataFrame, cuts: np.ndarray, scale: bool = False) -> np.ndarray:
    """The same model by scipy on a hand-written log-likelihood (logit link)."""
    X = np.column_stack([np.ones(len(data)), data["x"], (data["g"] == "b").astype(float)])
    Z = (data["g"] == "b").to_numpy(float)
    bounds = np.concatenate([[-np.inf], cuts, [np.inf]])
    y = data["y"].to_numpy() - 1

    def nll(p: np.ndarray) -> float:
        s = np.exp(p[3] * Z) if scale else 1.0
        eta = X @ p[:3]
        upper, lower = (bounds[y + 1] - eta) / s, (bounds[y] - eta) / s
        return -float(np.sum(np.log(special.expit(upper) - special.expit(lower))))

    start = np.zeros(4 if scale else 3)
    return optimize.minimize(nll, start, method="BFGS", options={"gtol": 1e-10}).x


def test_fixed_thresholds_match_a_direct_maximisation_and_recover_the_truth() -> None:
    data = _simulate()
    cuts = np.arange(4) + 0.5
    res = F("y ~ x + g", data, threshold=cuts).fit()
    direct = _direct_fit(data, cuts)
    np.testing.assert_allclose(res.params.to_numpy(), direct, rtol=1e-6, atol=1e-7)
    truth = np.array([0.4, 0.8, -0.5])
    assert np.all(np.abs(res.params.to_numpy() - truth) < 4 * res.bse.to_numpy())


def test_scale_effects_are_estimable_with_fixed_thresholds() -> None:
    data = _simulate(seed=2)
    cuts = np.arange(4) + 0.5
    res = F("y ~ x + g", data, threshold=cuts, scale="~ g").fit()
    direct = _direct_fit(data, cuts, scale=True)
    np.testing.assert_allclose(res.params.to_numpy(), direct, rtol=1e-5, atol=1e-6)


def test_lr_test_against_free_thresholds_has_k_minus_2_df(wine, free) -> None:
    res = F("rating ~ temp + contact", wine, threshold=[-1.0, 1.0, 3.0, 5.0]).fit()
    test = ordstats.lr_test(res, free)
    assert test.df == 3  # K - 1 = 4 free cut-points against one intercept
    assert test.statistic == pytest.approx(2 * (free.llf - res.llf), rel=1e-10)
    assert "threshold fixed at -1, 1, 3, 5" in str(test)


def test_predictions_sum_to_one_and_match_the_formula(wine) -> None:
    cuts = np.array([-1.0, 1.0, 3.0, 5.0])
    res = F("rating ~ temp + contact", wine, threshold=cuts).fit()
    prob = res.predict(wine)
    np.testing.assert_allclose(prob.sum(axis=1), 1.0, rtol=1e-12)
    eta = res.params["(Intercept)"] + wine["temp"].eq("warm") * res.params["temp[T.warm]"]
    eta = eta + wine["contact"].eq("yes") * res.params["contact[T.yes]"]
    cum = special.expit(cuts[None, :] - eta.to_numpy()[:, None])
    np.testing.assert_allclose(res.predict(wine, which="cumprob"), cum, rtol=1e-10)
    frame = res.get_prediction(wine.iloc[:3]).summary_frame()
    np.testing.assert_allclose(frame["prob"], prob.iloc[:3].to_numpy().ravel(), rtol=1e-10)
    again = pickle.loads(pickle.dumps(res))
    np.testing.assert_allclose(again.predict(wine), prob, rtol=1e-12)
    summary = str(res.summary())
    assert "Thresholds fixed at 1|2 = -1, 2|3 = 1, 3|4 = 3, 4|5 = 5" in summary
    ci = res.conf_int(method="profile")
    assert (
        ci.loc["(Intercept)", "lower"] < res.params["(Intercept)"] < ci.loc["(Intercept)", "upper"]
    )


@pytest.mark.parametrize(
    ("threshold", "message"),
    [
        ([0.0, 1.0, 2.0], "gives 3 fixed cut-points but the response has 5 levels, so it needs 4"),
        ([0.0, 1.0, 1.0, 2.0], "must increase strictly; cut-point 3 \\(1\\) is not above"),
        ([0.0, np.nan, 2.0, 3.0], "must be finite numbers"),
        ([[0.0, 1.0], [2.0, 3.0]], "one-dimensional list of K - 1 numbers"),
        (np.array([3.0, 2.0, 1.0, 0.0]), "must increase strictly"),
        ("fixed", "unknown threshold structure 'fixed'"),
        (["a", "b", "c", "d"], "a structure name or a list of fixed cut-points"),
    ],
)
def test_bad_fixed_thresholds(wine, threshold, message) -> None:
    with pytest.raises(SpecificationError, match=message):
        F("rating ~ temp", wine, threshold=threshold)


def test_what_fixed_thresholds_do_not_support_says_so(wine, tmp_path) -> None:
    cuts = [-1.0, 1.0, 3.0, 5.0]
    with pytest.raises(SpecificationError, match="cannot have nominal effects"):
        F("rating ~ temp", wine, threshold=cuts, nominal="~ contact")
    with pytest.raises(SpecificationError, match="cumulative family only"):
        F("rating ~ temp", wine, threshold=cuts, family="sratio")
    with pytest.raises(SpecificationError, match="cannot have nominal effects"):
        F("rating ~ temp", wine, threshold=cuts, nominal="~ contact", chunksize=20)
    with pytest.raises(SpecificationError, match="random effects"):
        F("rating ~ temp + (1|judge)", wine, threshold=cuts)
    model = F("rating ~ temp", wine, threshold=cuts)
    with pytest.raises(SpecificationError, match="penalised fits are not available"):
        model.fit_regularized(alpha=0.1)
    with pytest.raises(SpecificationError, match="penalised fits are not available"):
        model.fit(penalty="firth")


def test_fixed_thresholds_from_the_command_line(capsys) -> None:
    from ordstats.cli import main

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = main(["fit", "rating ~ temp + contact", "--data", "wine", "--threshold=-1,1,3,5"])
    out = capsys.readouterr().out
    assert code == 0
    assert "(Intercept)" in out and "Thresholds fixed at 1|2 = -1" in out
