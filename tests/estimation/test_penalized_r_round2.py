"""Penalised fits against R, round 2: weights, offsets, non-parallel effects.

References (``tests/r/penalised_round2.R`` -> ``tests/data/reference/penalised/round2.json``):
brglm2's ``bracl`` (adjacent-category logit, bias-reduced) on ``stemcell`` and
``housing`` with frequency weights, parallel and non-parallel; brglm2's
``brglmFit`` for weighted binary logit/probit/cloglog, with an offset; glmnet with
case weights, an offset and ``standardize``, at R's lambdas and on its default grid.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ordstats import OrdinalMixedModel, OrdinalModel
from ordstats.errors import (
    OrdstatsError,
    SpecificationError,
    StandardErrorWarning,
)
from tests._parity import dataset

DATA = Path(__file__).parents[1] / "data"
REF = json.loads((DATA / "reference" / "penalised" / "round2.json").read_text())
BINARY = "y ~ temp + contact + z1 + z2"


@pytest.fixture(scope="module")
def stemcell() -> pd.DataFrame:
    data = dataset("stemcell")
    return data.assign(religion_num=data["religion"].cat.codes + 1.0)


@pytest.fixture(scope="module")
def binary() -> pd.DataFrame:
    """wine_binary with the script's case weights and offset."""
    data = pd.read_csv(DATA / "r_datasets" / "wine_binary.csv")
    return data.assign(
        w=np.resize([1.0, 2.0, 0.5], len(data)),
        off=np.round(np.linspace(-0.5, 0.5, len(data)), 6),
    )


def _fit(model: OrdinalModel, kind: str):
    return model.fit() if kind == "ML" else model.fit(penalty="firth")


def _check_bracl(res, ref: dict) -> None:
    # bracl: log P(j) / P(j + 1) = intercept_j + x'b, positive = lower levels; ours negates it
    # (its non-parallel coefficients are in our order: column by column, cut-point by cut-point)
    np.testing.assert_allclose(res.params.to_numpy(), -np.array([*ref["coef"].values()]), atol=1e-8)
    np.testing.assert_allclose(res.bse.to_numpy(), [*ref["se"].values()], rtol=1e-8)
    np.testing.assert_allclose(res.llf, ref["loglik"], rtol=1e-11)


@pytest.mark.parametrize("kind", ["ML", "AS_mean", "MPL_Jeffreys"])
@pytest.mark.parametrize("parallel", [True, False])
def test_acat_firth_on_weighted_stemcell_equals_bracl(stemcell, kind, parallel):
    if parallel:
        model = OrdinalModel.from_formula(
            "research ~ religion_num + gender", stemcell, family="acat", weights="frequency"
        )
    else:
        model = OrdinalModel.from_formula(
            "research ~ 1",
            stemcell,
            nominal="~ religion_num + gender",
            family="acat",
            weights="frequency",
        )
    key = f"stemcell_{'parallel' if parallel else 'nonparallel'}_{kind}"
    _check_bracl(_fit(model, kind), REF["bracl"][key])


@pytest.mark.parametrize("kind", ["ML", "AS_mean", "MPL_Jeffreys"])
def test_acat_firth_on_weighted_housing_equals_bracl(housing, kind):
    model = OrdinalModel.from_formula(
        "Sat ~ Infl + Type + Cont", housing, family="acat", weights="Freq"
    )
    _check_bracl(_fit(model, kind), REF["bracl"][f"housing_parallel_{kind}"])


def test_bracl_median_bias_reduction_is_not_ours(stemcell):
    """AS_median is another estimator (not offered): ours is AS_mean, ~3e-3 from it."""
    model = OrdinalModel.from_formula(
        "research ~ religion_num + gender", stemcell, family="acat", weights="frequency"
    )
    ours = model.fit(penalty="firth").params.to_numpy()
    median = -np.array([*REF["bracl"]["stemcell_parallel_AS_median"]["coef"].values()])
    assert 1e-3 < np.max(np.abs(ours - median)) < 1e-2


def _glm_coef(ref: dict, link: str) -> np.ndarray:
    """glm's (intercept, slopes) as ours; cloglog was fitted to 1 - y (see the R script)."""
    coef = np.array([*ref["coef"].values()])
    if link == "cloglog":
        coef[1:] = -coef[1:]
    else:
        coef[0] = -coef[0]
    return coef


def _half_weight_loglik(binary: pd.DataFrame, res, link: str) -> float:
    """The log-likelihood of the rows of weight 0.5, which R's binomial logLik leaves out."""
    half = OrdinalModel.from_formula(BINARY, binary[binary["w"] == 0.5], link=link, weights="w")
    return float(half.loglike(res.params.to_numpy()))


@pytest.mark.parametrize("link", ["logit", "probit", "cloglog"])
def test_weighted_binary_firth_equals_brglm2_mpl_jeffreys(binary, link):
    model = OrdinalModel.from_formula(BINARY, binary, link=link, weights="w")
    res = model.fit(penalty="firth")
    ref = REF["binary"][f"{link}_MPL_Jeffreys"]
    np.testing.assert_allclose(res.params.to_numpy(), _glm_coef(ref, link), atol=1e-8)
    np.testing.assert_allclose(res.bse.to_numpy(), [*ref["se"].values()], rtol=1e-8)
    # R rounds binomial trials: round(0.5) = 0 drops those rows from logLik() (not the fit)
    np.testing.assert_allclose(
        res.llf, ref["loglik"] + _half_weight_loglik(binary, res, link), rtol=1e-10
    )
    if link == "logit":  # canonical link: Jeffreys' mode is the mean-bias-reduced estimate
        as_mean = _glm_coef(REF["binary"]["logit_AS_mean"], link)
        np.testing.assert_allclose(res.params.to_numpy(), as_mean, atol=1e-8)


@pytest.mark.parametrize("link", ["logit", "probit"])
def test_firth_with_an_offset_equals_brglm2(binary, link):
    model = OrdinalModel.from_formula(BINARY, binary, link=link, weights="w", offset="off")
    res = model.fit(penalty="firth")
    ref = REF["binary"][f"{link}_offset_MPL_Jeffreys"]
    np.testing.assert_allclose(res.params.to_numpy(), _glm_coef(ref, link), atol=1e-8)
    np.testing.assert_allclose(res.bse.to_numpy(), [*ref["se"].values()], rtol=1e-8)


@pytest.mark.parametrize("case", sorted(REF["glmnet"]))
def test_elastic_net_with_weights_and_offset_equals_glmnet(binary, case):
    ref = REF["glmnet"][case]
    lambdas = np.array(ref["lambda"])
    expected = np.array(ref["coef"])
    expected[:, 0] = -expected[:, 0]  # theta = -intercept
    model = OrdinalModel.from_formula(BINARY, binary, weights="w", offset="off")
    spec = {"l1_ratio": ref["alpha"], "standardize": ref["standardize"]}
    path = model.path(alphas=lambdas[::-1], tol=1e-12, **spec)  # fitted in decreasing order
    np.testing.assert_allclose(path.alphas, lambdas)
    np.testing.assert_allclose(path.params.to_numpy(), expected, atol=1e-8)
    # glmnet's default sequence: nlambda = 12, lambda.min.ratio = 0.02
    grid = model.path(n_alphas=12, eps=0.02, **spec).alphas
    np.testing.assert_allclose(grid, lambdas, rtol=1e-7)
    for k in (2, 7, 11):
        res = model.fit_regularized(
            alpha=lambdas[k], L1_wt=ref["alpha"], standardize=ref["standardize"], tol=1e-12
        )
        np.testing.assert_allclose(res.params.to_numpy(), expected[k], atol=1e-8)


def test_cv_with_weights_offset_and_standardize_equals_cv_glmnet(binary):
    """Each training fold is standardised on its own rows, as cv.glmnet does."""
    ref = REF["cv_glmnet"]
    model = OrdinalModel.from_formula(BINARY, binary, weights="w", offset="off")
    fold = np.array(ref["foldid"])
    splits = [(np.flatnonzero(fold != f), np.flatnonzero(fold == f)) for f in range(1, 5)]
    cv = model.cv(alphas=ref["lambda"], l1_ratio=0.3, cv=splits, standardize=True)
    np.testing.assert_allclose(2 * cv.mean, ref["cvm"], rtol=1e-7)  # deviance: twice log loss
    np.testing.assert_allclose(2 * cv.se, ref["cvsd"], rtol=1e-6)


@pytest.mark.parametrize("method", ["drop1", "add1"])
def test_term_refits_of_penalised_fits_are_refused(wine, method):
    """drop1/add1 refit without the penalty: their table would mix penalised and ML fits."""
    model = OrdinalModel.from_formula("rating ~ temp", wine)
    args = ("~ contact",) if method == "add1" else ()
    for res in (model.fit(penalty="firth"), model.fit_regularized(alpha=0.02, L1_wt=0.0)):
        with pytest.raises(SpecificationError, match=rf"{method}\(\) refits the model"):
            getattr(res, method)(*args)


def test_prediction_intervals_of_a_lasso_fit_are_missing_not_zero_width(wine):
    """No covariance after an L1 penalty: NaN limits, not the point estimate twice."""
    model = OrdinalModel.from_formula("rating ~ temp + contact", wine)
    with pytest.warns(StandardErrorWarning, match="without standard errors"):
        table = model.fit_regularized(alpha=0.02).get_prediction(wine.iloc[:2]).summary_frame()
    assert table["se"].isna().all()
    assert table["ci_lower"].isna().all() and table["ci_upper"].isna().all()
    ridge = model.fit_regularized(alpha=0.02, L1_wt=0.0).get_prediction(wine.iloc[:2])
    frame = ridge.summary_frame()
    assert (frame["ci_lower"] < frame["prob"]).all() and (frame["prob"] < frame["ci_upper"]).all()


def test_joint_tests_of_a_lasso_fit_are_refused_not_empty(wine):
    model = OrdinalModel.from_formula("rating ~ temp + contact", wine)
    with pytest.raises(OrdstatsError, match=r"joint_tests\(\) are Wald tests"):
        model.fit_regularized(alpha=0.02).joint_tests()
    firth = model.fit(penalty="firth")  # its covariance: one-df terms' F is Wald's chi2
    np.testing.assert_allclose(
        firth.joint_tests()["F.ratio"].to_numpy(),
        firth.wald_test_terms()["chi2"].to_numpy(),
        rtol=1e-10,
    )


def test_firth_on_a_model_with_random_terms_says_it_is_not_available(wine):
    model = OrdinalMixedModel.from_formula("rating ~ temp + (1|judge)", wine)
    with pytest.raises(SpecificationError, match=r"penalty=\.\.\.\) is not available .* random"):
        model.fit(penalty="firth")
