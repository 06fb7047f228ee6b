"""Penalised fits: elastic net (paths, CV, semi-parallel), ridge as MAP, Firth.

References: R's glmnet 4.1-6 and brglm2 0.9 (``tests/r/penalised.R``, vendored
in ``tests/data/reference/penalised/``) and scikit-learn's saga solver.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import optimize

from ordstats import OrdinalModel, lr_test
from ordstats.core.penalty import kkt_violation
from ordstats.errors import (
    CollinearityWarning,
    OrdstatsError,
    OrdstatsWarning,
    SeparationWarning,
    SpecificationError,
)
from ordstats.estimation.penalized import PenaltySpec
from ordstats.results.regularized import cv_loss

DATA = Path(__file__).parents[1] / "data"
REF = DATA / "reference" / "penalised"
BINARY = "y ~ temp + contact + z1 + z2"
GLMNET_NAMES = ["(Intercept)", "tempwarm", "contactyes", "z1", "z2"]


@pytest.fixture(scope="module")
def binary() -> pd.DataFrame:
    return pd.read_csv(DATA / "r_datasets" / "wine_binary.csv")


def _ref(name: str) -> dict:
    return json.loads((REF / f"{name}.json").read_text())


def _from_glm(coef: dict) -> np.ndarray:
    """glm/glmnet's (intercept, slopes) as our (threshold, slopes): theta = -intercept."""
    values = np.array([coef[name] for name in GLMNET_NAMES])
    values[0] = -values[0]
    return values


def _path_kkt(model: OrdinalModel, path, **spec_kw) -> np.ndarray:
    """Independent KKT check of every path point from the model's own gradient."""
    spec = PenaltySpec.for_model(model, **spec_kw)
    out = []
    for alpha, row, z in zip(path.alphas, path.params.to_numpy(), path.solver_params, strict=True):
        np.testing.assert_allclose(spec.to_params(z), row, atol=1e-14)
        g = spec.basis.T @ model.evaluate(row).gradient / spec.n_weight
        out.append(np.max(kkt_violation(g, z, spec.elastic_net(alpha, path.l1_ratio))))
    return np.array(out)


# -- elastic net against glmnet and scikit-learn ------------------------------


@pytest.mark.parametrize(
    "case",
    ["glmnet_alpha1", "glmnet_alpha05", "glmnet_alpha0", "glmnet_alpha05_standardize"],
)
def test_binary_logit_equals_glmnet(binary, case):
    ref = _ref(case)
    model = OrdinalModel.from_formula(BINARY, binary)
    path = model.path(
        ref["lambda"], l1_ratio=ref["alpha"], standardize=ref["standardize"], tol=1e-10
    )
    for k, coef in enumerate(ref["coef_by_lambda"]):
        np.testing.assert_allclose(path.params.iloc[k], _from_glm(coef), atol=2e-7)
        # exact zeros where glmnet has them
        assert (path.params.iloc[k].to_numpy()[1:] == 0).tolist() == [
            coef[name] == 0 for name in GLMNET_NAMES[1:]
        ]
    assert np.all(path.kkt <= 1e-10)


def _sklearn_fit(X, y, alpha, l1_ratio, sample_weight=None):
    sklearn = pytest.importorskip("sklearn")
    from sklearn.linear_model import LogisticRegression

    n_w = len(y) if sample_weight is None else float(np.sum(sample_weight))
    kwargs = {"C": 1.0 / (n_w * alpha), "l1_ratio": l1_ratio, "solver": "saga"}
    if tuple(int(v) for v in sklearn.__version__.split(".")[:2]) < (1, 8):
        kwargs["penalty"] = "elasticnet"
    lr = LogisticRegression(tol=1e-13, max_iter=1_000_000, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        lr.fit(X, y, sample_weight=sample_weight)
    return np.concatenate([-lr.intercept_, lr.coef_.ravel()])


@pytest.mark.parametrize(("alpha", "l1_ratio"), [(0.03, 0.5), (0.01, 1.0), (0.05, 0.0)])
def test_binary_logit_equals_sklearn_saga(binary, alpha, l1_ratio):
    model = OrdinalModel.from_formula(BINARY, binary)
    res = model.fit_regularized(alpha=alpha, L1_wt=l1_ratio, tol=1e-11)
    expected = _sklearn_fit(model.data.X, model.data.y, alpha, l1_ratio)
    np.testing.assert_allclose(res.params.to_numpy(), expected, atol=1e-6)


def test_weights_are_frequencies_against_sklearn(binary):
    rng = np.random.default_rng(3)
    w = rng.integers(1, 4, size=len(binary)).astype(float)
    model = OrdinalModel.from_formula(BINARY, binary, weights=w)
    res = model.fit_regularized(alpha=0.02, L1_wt=0.7, tol=1e-11)
    expected = _sklearn_fit(model.data.X, model.data.y, 0.02, 0.7, sample_weight=w)
    np.testing.assert_allclose(res.params.to_numpy(), expected, atol=1e-6)
    # and equal to the fit on the rows repeated
    rows = binary.loc[binary.index.repeat(w.astype(int))].reset_index(drop=True)
    repeated = OrdinalModel.from_formula(BINARY, rows).fit_regularized(
        alpha=0.02, L1_wt=0.7, tol=1e-11
    )
    np.testing.assert_allclose(res.params, repeated.params, atol=1e-8)


# -- paths: KKT everywhere, every family ----------------------------------------


@pytest.mark.parametrize(
    ("family", "link", "nominal"),
    [
        ("cumulative", "logit", None),
        ("cumulative", "probit", None),
        ("sratio", "logit", "~ contact"),
        ("cratio", "cloglog", None),
        ("acat", "logit", "~ contact"),
    ],
)
def test_path_satisfies_kkt_at_every_point(wine, family, link, nominal):
    model = OrdinalModel.from_formula(
        "rating ~ temp + contact" if nominal is None else "rating ~ temp",
        wine,
        family=family,
        link=link,
        nominal=nominal,
    )
    path = model.path(n_alphas=25, l1_ratio=0.5, standardize=True)
    assert path.alphas.size == 25
    assert np.all(np.diff(path.alphas) < 0)
    # first point: the smallest alpha with every slope zero; just below it one is not
    assert path.n_nonzero.iloc[0] == 0
    assert path.n_nonzero.iloc[-1] > 0
    assert np.all(path.kkt <= 1e-6)
    assert np.all(_path_kkt(model, path, standardize=True) <= 1e-6)
    below = model.fit_regularized(alpha=path.alphas[0] * 0.99, L1_wt=0.5, standardize=True)
    assert below.n_nonzero > 0


def test_alpha_max_is_the_edge(binary):
    model = OrdinalModel.from_formula(BINARY, binary)
    path = model.path(n_alphas=3, l1_ratio=1.0)
    at = model.fit_regularized(alpha=path.alphas[0] * 1.0001, L1_wt=1.0)
    assert at.n_nonzero == 0
    # the thresholds at the null fit are the marginal logits
    p1 = binary["y"].mean()
    assert at.params["0|1"] == pytest.approx(np.log((1 - p1) / p1), abs=1e-8)


def test_alpha_zero_equals_unpenalised_fit(wine):
    model = OrdinalModel.from_formula("rating ~ temp + contact", wine, family="acat")
    ml = model.fit()
    for alpha in (0.0, 1e-10):
        res = model.fit_regularized(alpha=alpha, L1_wt=0.5, tol=1e-10)
        np.testing.assert_allclose(res.params, ml.params, atol=1e-6)
    assert res.llf == pytest.approx(ml.llf, abs=1e-9)


def test_standardize_equals_rescaled_columns(wine):
    model = OrdinalModel.from_formula("rating ~ temp + contact", wine, family="cratio")
    res = model.fit_regularized(alpha=0.05, L1_wt=0.3, standardize=True, tol=1e-10)
    X = model.data.X
    sd = X.std(axis=0)
    scaled = OrdinalModel(wine["rating"], X / sd, family="cratio")
    plain = scaled.fit_regularized(alpha=0.05, L1_wt=0.3, tol=1e-10)
    slopes = plain.params.to_numpy()[-2:] / sd
    np.testing.assert_allclose(res.params.to_numpy()[-2:], slopes, atol=1e-7)
    np.testing.assert_allclose(res.params.to_numpy()[:-2], plain.params.to_numpy()[:-2], atol=1e-7)


# -- ridge as MAP --------------------------------------------------------------


@pytest.mark.parametrize(("family", "link"), [("cumulative", "probit"), ("sratio", "logit")])
def test_ridge_is_the_map_estimate(wine, family, link):
    model = OrdinalModel.from_formula("rating ~ temp + contact", wine, family=family, link=link)
    alpha = 0.1
    res = model.fit_regularized(alpha=alpha, L1_wt=0.0, tol=1e-10)
    n = model.nobs
    beta = model.problem.layout.beta

    def neg_log_posterior(x):
        ev = model.evaluate(x)
        prior = 0.5 * n * alpha * np.sum(x[beta] ** 2)  # b_j ~ N(0, 1 / (n alpha))
        grad = ev.gradient.copy()
        grad[beta] += n * alpha * x[beta]
        return ev.nll + prior, grad

    direct = optimize.minimize(
        neg_log_posterior, model.start_params, jac=True, method="BFGS", options={"gtol": 1e-9}
    )
    np.testing.assert_allclose(res.params.to_numpy(), direct.x, atol=1e-6)
    # ridge sandwich standard errors, smaller than the unpenalised ones
    assert res.covariance.kind == "ridge sandwich"
    assert np.all(np.isfinite(res.bse))
    assert np.all(res.bse[beta] < model.fit().bse[beta])


def test_l1_fit_reports_no_standard_errors(binary):
    res = OrdinalModel.from_formula(BINARY, binary).fit_regularized(alpha=0.02, L1_wt=1.0)
    assert res.bse.isna().all()
    assert "none (L1 penalty)" in str(res)
    text = str(res.summary())
    assert "Elastic net" in text and "No standard errors after an L1 penalty" in text
    assert res.predict().shape == (len(binary), 2)
    assert np.allclose(res.predict().sum(axis=1), 1.0)
    with pytest.raises(SpecificationError, match="refits the model without its penalty"):
        res.brant_test()
    with pytest.raises(SpecificationError, match="maximum-likelihood estimates"):
        res.get_robustcov_results("HC0")
    ml = OrdinalModel.from_formula(BINARY, binary).fit()
    with pytest.raises(OrdstatsError, match="compare maximum-likelihood fits"):
        lr_test(res, ml)


# -- semi-parallel: shrinking non-parallel effects toward the parallel model --


def test_nominal_weight_shrinks_toward_parallel(wine):
    semi = OrdinalModel.from_formula("rating ~ temp", wine, family="sratio", nominal="~ contact")
    parallel = OrdinalModel.from_formula("rating ~ temp + contact", wine, family="sratio")
    alpha = 0.02
    strong = semi.fit_regularized(alpha=alpha, L1_wt=0.5, nominal_weight=1e4, tol=1e-10)
    par = parallel.fit_regularized(alpha=alpha, L1_wt=0.5, tol=1e-10)
    gammas = strong.params.to_numpy()[4:8]
    np.testing.assert_allclose(gammas, par.params["contact[T.yes]"], atol=1e-7)
    np.testing.assert_allclose(strong.params["temp[T.warm]"], par.params["temp[T.warm]"], atol=1e-7)
    free = semi.fit_regularized(alpha=alpha, L1_wt=0.5, nominal_weight=0.0, tol=1e-10)
    spread = lambda r: np.ptp(r.params.to_numpy()[4:8])  # noqa: E731
    assert spread(free) > spread(semi.fit_regularized(alpha=alpha, L1_wt=0.5)) > 1e-8


# -- cross-validation -------------------------------------------------------------


def test_cv_losses_by_hand():
    prob = np.array([[0.2, 0.5, 0.3], [0.6, 0.3, 0.1]])
    y = np.array([2, 1])
    w = np.array([1.0, 3.0])
    assert cv_loss("log_loss", prob, y, w) == pytest.approx(-(np.log(0.3) + 3 * np.log(0.3)) / 4)
    assert cv_loss("mae", prob, y, w) == pytest.approx((1 + 3 * 1) / 4)
    rps_1 = (0.2 - 0) ** 2 + (0.7 - 0) ** 2
    rps_2 = (0.6 - 0) ** 2 + (0.9 - 1) ** 2
    assert cv_loss("rps", prob, y, w) == pytest.approx((rps_1 + 3 * rps_2) / 4)


@pytest.mark.parametrize("scoring", ["log_loss", "mae", "rps"])
def test_cv_chooses_alpha_on_the_grid(wine, scoring):
    model = OrdinalModel.from_formula("rating ~ temp + contact", wine)
    cv = model.cv(n_alphas=8, cv=3, scoring=scoring, l1_ratio=1.0)
    assert cv.alpha_best in cv.alphas
    assert cv.alpha_1se >= cv.alpha_best
    assert cv.fold_losses.shape == (3, 8)
    assert cv.mean[list(cv.alphas).index(cv.alpha_best)] == cv.mean.min()
    assert list(cv.table().columns) == ["mean", "se", "n_nonzero"]


# -- Firth --------------------------------------------------------------------------


@pytest.mark.parametrize("case", ["firth", "firth_separated"])
def test_firth_binary_logit_equals_brglm2(binary, case):
    ref = _ref(case)
    formula = BINARY + (" + sep" if case == "firth_separated" else "")
    model = OrdinalModel.from_formula(formula, binary)
    res = model.fit(penalty="firth")
    names = list(ref["coef"])
    coef = np.array([ref["coef"][k] for k in names])
    coef[0] = -coef[0]
    np.testing.assert_allclose(res.params.to_numpy(), coef, atol=1e-6)
    se = np.array([ref["se"][k] for k in names])
    np.testing.assert_allclose(res.bse.to_numpy(), se, rtol=1e-6)
    assert res.converged and res.covariance.kind == "expected"
    assert "Firth (Jeffreys)" in str(res.summary())
    assert np.all(np.isfinite(res.params))


def test_firth_adjacent_equals_brglm2_bracl(wine):
    ref = _ref("bracl_wine_as_mean")
    model = OrdinalModel.from_formula("rating ~ temp + contact", wine, family="acat")
    res = model.fit(penalty="firth")
    # bracl: log P(j) / P(j+1), positive = lower levels; ours is its negation
    coef = -np.array(list(ref["coef"].values()))
    np.testing.assert_allclose(res.params.to_numpy(), coef, atol=1e-6)
    np.testing.assert_allclose(res.bse.to_numpy(), list(ref["se"].values()), rtol=1e-6)


def test_firth_cumulative_is_finite_under_separation(wine):
    data = wine.assign(sep=np.where(wine["rating"].astype(int) >= 3, 1.0, -1.0))
    model = OrdinalModel.from_formula("rating ~ temp + sep", data)
    with pytest.warns(SeparationWarning, match=r"fit\(penalty='firth'\)"):
        model.fit()
    res = model.fit(penalty="firth")
    assert res.converged
    assert np.all(np.isfinite(res.params)) and np.all(np.abs(res.params) < 20)


# -- bad input ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"alpha": -0.1}, "alpha must be a finite number >= 0"),
        ({"alpha": np.nan}, "alpha must be a finite number >= 0"),
        ({"alpha": 0.1, "L1_wt": 1.5}, r"L1_wt \(l1_ratio\) must lie in \[0, 1\]"),
        ({"alpha": 0.1, "L1_wt": -0.5}, r"must lie in \[0, 1\]"),
        ({"alpha": "big"}, "must be numbers"),
        ({"alpha": 0.1, "nominal_weight": -1}, "nominal_weight"),
        ({"alpha": 0.1, "method": "sqrt_lasso"}, "method must be 'elastic_net'"),
    ],
)
def test_bad_penalty_arguments(wine, kwargs, match):
    model = OrdinalModel.from_formula("rating ~ temp + contact", wine)
    with pytest.raises(SpecificationError, match=match):
        model.fit_regularized(**kwargs)


def test_penalties_on_models_that_cannot_take_them(wine):
    with pytest.raises(SpecificationError, match="no slopes to penalise"):
        OrdinalModel.from_formula("rating ~ 1", wine).fit_regularized(alpha=0.1)
    with pytest.raises(SpecificationError, match="takes 'firth'"):
        OrdinalModel.from_formula("rating ~ temp", wine).fit(penalty="lasso")
    flexible = OrdinalModel.from_formula("rating ~ temp", wine, link="aranda-ordaz")
    with pytest.raises(SpecificationError, match="flexible link"):
        flexible.fit(penalty="firth")
    chunked = OrdinalModel.from_formula("rating ~ temp", wine, chunksize=30)
    with pytest.raises(SpecificationError, match="rows in memory"):
        chunked.fit_regularized(alpha=0.1)
    model = OrdinalModel.from_formula("rating ~ temp", wine)
    with pytest.raises(SpecificationError, match="scoring must be one of"):
        model.cv(scoring="accuracy")
    with pytest.raises(SpecificationError, match="n_alphas"):
        model.path(n_alphas=0)
    with pytest.raises(SpecificationError, match="non-empty sequence of numbers"):
        model.path(alphas=["a", "b"])
    with pytest.raises(SpecificationError, match="alpha must be a finite number"):
        model.path(alphas=[0.1, -0.1])
    with pytest.raises(SpecificationError, match="cov_type"):
        model.fit(penalty="firth", cov_type="robust")


def _crossing_data() -> pd.DataFrame:
    """Nominal effects of x whose cut-points cross at its far values (x = +-6, 7)."""
    rng = np.random.default_rng(5)
    x = rng.normal(size=150)
    x[:3] = [6, -6, 7]
    y = np.digitize(x + rng.logistic(size=150) * (1 + 0.8 * (x > 0)), [-1, 0.5, 1.5])
    return pd.DataFrame({"x": x, "z": rng.normal(size=150), "y": y})


def test_cv_passes_over_alphas_whose_held_out_rows_get_no_probabilities():
    """Held-out rows with crossing cut-points have no probabilities (a NaN loss).  Before,
    an alpha with a NaN mean loss could be "best" and the 1-SE rule raised numpy's
    "zero-size array to reduction operation minimum"."""
    model = OrdinalModel.from_formula("y ~ z", _crossing_data(), nominal="~ x")
    with pytest.warns(OrdstatsWarning, match=r"values of alpha give some held-out rows"):
        cv = model.cv(n_alphas=10, cv=5)
    chosen = [np.flatnonzero(cv.alphas == a)[0] for a in (cv.alpha_best, cv.alpha_1se)]
    assert np.isnan(cv.mean).any() and np.isfinite(cv.mean[chosen]).all()
    assert cv.mean[chosen[0]] == np.nanmin(cv.mean)
    with pytest.raises(OrdstatsError, match=r"no value of alpha gives every held-out row"):
        model.cv(n_alphas=10, cv=5, nominal_weight=0.0)


def _separated_loglog() -> OrdinalModel:
    """x1 separates y completely; the loglog Firth score has a rounding floor near 1e-6."""
    rng = np.random.default_rng(403)
    n, k = int(rng.integers(30, 80)), int(rng.integers(3, 5))
    x1, x2 = rng.normal(size=n), rng.normal(size=n)
    f = rng.choice(list("ab"), n)
    rng.logistic(size=n)
    y = np.digitize(x1, np.quantile(x1, np.linspace(0, 1, k + 1)[1:-1]))
    frame = pd.DataFrame(
        {
            "x1": x1,
            "x2": x2,
            "f": f,
            "y": y,
            "w": rng.integers(1, 3, n) * 1.0,
            "off": 0.3 * rng.normal(size=n),
        }
    )
    return OrdinalModel.from_formula(
        "y ~ x1 + x2 + f", frame, link="loglog", weights="w", offset="off"
    )


def test_firth_takes_gradtol_and_converges_under_separation():
    """Before: gradtol was ignored (1e-7 always).  Then: the steps left out the penalty's
    curvature, so along the diverging direction each shrank the score by a factor near 1,
    and 300 iterations ended at max|score| ~1e-6, taken for the score's rounding."""
    model = _separated_loglog()
    loose = model.fit(penalty="firth", gradtol=1e-4)
    assert loose.converged and loose.mle_retvals["max_grad"] < 1e-5
    settled = model.fit(penalty="firth")
    assert settled.converged and settled.mle_retvals["iterations"] < 30
    assert settled.mle_retvals["max_grad"] < 1e-8
    np.testing.assert_allclose(settled.params, loose.params, rtol=1e-4)


@pytest.mark.parametrize(
    ("start", "match"),
    [
        # NaN: the message of every fit for values that are not finite numbers
        (np.full(5, np.nan), r"must be \d finite numbers .*start_params has \d non-finite value"),
        (np.array([3.0, -3.0, 0.0, 0.0, 0.0]), "start_params give no finite penalised"),
    ],
)
def test_firth_refuses_start_values_without_a_likelihood(start, match):
    """Before: NaN starts gave all-NaN estimates; thresholds out of order SciPy's
    "array must not contain infs or NaNs"."""
    model = _separated_loglog()
    with pytest.raises(SpecificationError, match=match):
        model.fit(penalty="firth", start_params=start[: len(model.start_params)])


def test_firth_refusal_of_a_robust_covariance_names_it(binary):
    model = OrdinalModel.from_formula(BINARY, binary)
    with pytest.raises(SpecificationError, match=r"not 'HC0'"):
        model.fit(penalty="firth", cov_type="HC0")


def test_aliased_columns_kept_for_the_penalty_give_glmnet_s_estimates():
    """x3 = x1 + x2 (tests/r/penalised_aliased.R).  With the default collinear="drop"
    x3 is dropped as R's clm drops it, and the penalised estimates differ from glmnet's
    (which keeps every column) with a warning saying so; collinear="keep" gives them."""
    ref = json.loads((DATA / "reference" / "penalised_aliased.json").read_text())
    data = pd.read_csv(DATA / "r_datasets" / "aliased_binary.csv")
    kept = OrdinalModel.from_formula("y ~ x1 + x2 + x3", data, collinear="keep")
    for fit in ref["fits"]:
        res = kept.fit_regularized(alpha=fit["lambda"], L1_wt=fit["alpha"], tol=1e-12)
        np.testing.assert_allclose(res.params.iloc[0], -fit["intercept"], rtol=1e-6)
        np.testing.assert_allclose(res.params.iloc[1:], fit["coef"], rtol=1e-6, atol=1e-9)
        assert res.objective == pytest.approx(fit["objective"], rel=1e-9)
    with pytest.warns(CollinearityWarning, match=r"'x3' is a linear combination"):
        dropped = OrdinalModel.from_formula("y ~ x1 + x2 + x3", data)
    with pytest.warns(
        CollinearityWarning, match=r"'x3' was dropped as aliased .* collinear='keep'"
    ):
        lasso = dropped.fit_regularized(alpha=0.05, L1_wt=1.0, tol=1e-12)
    assert lasso.objective > ref["fits"][0]["objective"] + 1e-4


def test_standardize_refuses_a_constant_column_whose_sd_rounds_above_zero():
    """With unequal weights a constant column's computed sd is ~4e-16, not 0: it used to
    pass, its penalty vanished and, aliased with the thresholds, it took arbitrary values
    (c = 0.0015 at alpha 0.05, -0.16 at 0.01); glmnet leaves such a column at zero."""
    rng = np.random.default_rng(3)
    n = 80
    data = pd.DataFrame({"x1": rng.normal(size=n), "x2": 3 * rng.normal(size=n), "c": 2.0}).assign(
        w=rng.uniform(0.5, 2, n)
    )
    data["y"] = np.digitize(data.x1 - data.x2 / 3 + rng.logistic(size=n), [-1, 0, 1])
    model = OrdinalModel.from_formula("y ~ x1 + x2 + c", data, weights="w", collinear="keep")
    for call in (
        lambda: model.fit_regularized(alpha=0.05, standardize=True),
        lambda: model.path(n_alphas=3, standardize=True),
    ):
        with pytest.raises(SpecificationError, match="zero variance"):
            call()
    # without standardize the penalty holds the aliased column at zero, as glmnet's
    assert model.fit_regularized(alpha=0.05).params["c"] == 0


def test_firth_refuses_aliased_columns_kept_in_the_design():
    """With collinear='keep' the expected information is singular: the fit used to return
    the start with NaN standard errors and a warning about max|score| = nan that advised
    other start values; with start_params it blamed the thresholds."""
    rng = np.random.default_rng(3)
    n = 80
    data = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.normal(size=n)})
    data["x3"] = data.x1 + data.x2
    data["y"] = np.digitize(data.x1 + rng.logistic(size=n), [-1, 0, 1])
    model = OrdinalModel.from_formula("y ~ x1 + x2 + x3", data, collinear="keep")
    for start in (None, [-1, 0, 1, 0.5, 0.1, 0.1]):
        with pytest.raises(SpecificationError, match="aliased columns"):
            model.fit(penalty="firth", start_params=start)


@pytest.mark.parametrize("link", ["probit", "cloglog"])
def test_firth_with_another_link_is_brglm2_mpl_jeffreys_not_as_mean(binary, link):
    """Jeffreys' penalty, brglm2's MPL_Jeffreys (tests/r/firth_jeffreys.R), on separated
    data; its AS_mean (mean-bias reduction) differs by up to 0.3 with these links."""
    model = OrdinalModel.from_formula(BINARY + " + sep", binary, link=link)
    res = model.fit(penalty="firth")
    sign = -1.0 if link == "cloglog" else 1.0  # cloglog's R fit models P(y = 0)
    for kind in ("mpl_jeffreys", "as_mean"):
        ref = _ref(f"firth_{link}_{kind}")
        coef = sign * np.array(list(ref["coef"].values()))
        coef[0] = -coef[0]
        if kind == "as_mean":
            assert np.max(np.abs(res.params.to_numpy() - coef)) > 0.05
            continue
        np.testing.assert_allclose(res.params.to_numpy(), coef, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(res.bse.to_numpy(), list(ref["se"].values()), rtol=1e-5)
        assert res.converged


@pytest.mark.parametrize(
    ("option", "value"),
    [("method", "bfgs"), ("reltol", 1e-2), ("disp", True), ("banded", True), ("warm_start", True)],
)
def test_firth_refuses_fit_options_it_would_ignore(wine, option, value):
    """These were silently ignored by penalty='firth' (no scipy stage, no step criterion,
    no iteration print, no banded Hessian, no subsample start)."""
    model = OrdinalModel.from_formula("rating ~ temp", wine)
    with pytest.raises(SpecificationError, match=f"{option}=.* would be ignored"):
        model.fit(penalty="firth", **{option: value})
    assert model.fit(penalty="firth", method="newton", disp=False).converged


@pytest.mark.parametrize("weighting", ["unit_weights", "case_weighted"])
def test_cv_loss_and_its_se_weigh_folds_by_their_held_out_weight_as_cv_glmnet(binary, weighting):
    """Folds of 20, 20, 12, 12 and 8 rows: cv.glmnet's cvm and cvsd weigh each fold by its
    held-out weight.  Before, the folds' losses were averaged unweighted: twice the mean was
    1.1528 where glmnet's cvm is 1.1621 at lambda 0.01, and 0.003 was chosen where glmnet
    chooses 0.01."""
    ref = _ref("cv_glmnet_unequal_folds")
    foldid = np.asarray(ref["foldid"])
    splits = [(np.flatnonzero(foldid != f), np.flatnonzero(foldid == f)) for f in range(1, 6)]
    data = binary.assign(w=ref["case_weights"])
    weights = "w" if weighting == "case_weighted" else None
    model = OrdinalModel.from_formula(BINARY, data, weights=weights)
    cv = model.cv(alphas=ref["lambdas"], cv=splits, l1_ratio=1.0)
    glmnet = ref[weighting]
    np.testing.assert_allclose(cv.alphas, glmnet["lambda"])
    # glmnet's deviance is twice the log loss
    np.testing.assert_allclose(2 * cv.mean, glmnet["cvm"], rtol=1e-6)
    np.testing.assert_allclose(2 * cv.se, glmnet["cvsd"], rtol=1e-5)
    assert (cv.alpha_best, cv.alpha_1se) == (glmnet["lambda_min"], glmnet["lambda_1se"])


def test_path_fits_alphas_in_decreasing_order_as_glmnet(wine):
    """glmnet reorders a user's lambda decreasing; each row of the path is its own alpha's fit."""
    model = OrdinalModel.from_formula("rating ~ temp + contact", wine)
    path = model.path([0.01, 0.1, 0.05], tol=1e-10)
    assert path.alphas.tolist() == [0.1, 0.05, 0.01]
    for alpha, row in path.params.iterrows():
        single = model.fit_regularized(alpha=alpha, tol=1e-10).params
        np.testing.assert_allclose(row, single, atol=1e-7)
