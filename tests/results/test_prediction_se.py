"""Standard errors and intervals of predicted probabilities (R's predict.clm, se.fit, interval)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import ordstats
from ordstats.core.links import get_link
from ordstats.errors import OrdstatsError, PredictionError
from ordstats.families.cumulative.likelihood import ParamLayout
from ordstats.families.cumulative.prediction import threshold_matrix
from ordstats.results.prediction_se import NewRows, probability_gradients
from tests import _reference as ref
from tests._numdiff import central_jacobian

#: Delta-method SEs depend on the covariance (inverse Hessian): the SE bar.
RTOL_SE = 1e-4
#: Probabilities and interval ends are smooth functions of the estimates.
ATOL_PROB = 1e-7

SE_CASES = [
    c
    for c in ref.cases("predict_")
    if ref.load(c).get("newdata_prob_se") is not None and ref.load(c)["r_call"].startswith("clm(")
]


def test_cases_cover_links():
    assert {ref.load(c)["link"] for c in SE_CASES} >= {"logit", "probit", "cloglog"}


@pytest.mark.parametrize("case", SE_CASES)
def test_matches_r_predict_clm(case):
    data = ref.load(case)
    res = ref.fit_reference(case)
    prediction = res.get_prediction(ref.newdata(case))
    np.testing.assert_allclose(prediction.predicted, data["newdata_prob"], atol=ATOL_PROB)
    np.testing.assert_allclose(prediction.se, data["newdata_prob_se"], rtol=RTOL_SE)
    lower, upper = prediction.conf_int(alpha=0.05)
    np.testing.assert_allclose(lower, data["newdata_prob_lwr"], atol=ATOL_PROB)
    np.testing.assert_allclose(upper, data["newdata_prob_upr"], atol=ATOL_PROB)


def test_summary_frame(wine_res):
    newdata = pd.DataFrame({"temp": ["cold", "warm"], "contact": ["no", "yes"]}, index=["a", "b"])
    prediction = wine_res.get_prediction(newdata)
    frame = prediction.summary_frame(alpha=0.1)
    assert list(frame.columns) == ["prob", "se", "ci_lower", "ci_upper"]
    assert frame.index.names == ["row", "level"]
    assert list(frame.loc["b"].index) == ["1", "2", "3", "4", "5"]
    assert frame.loc[("a", "3"), "prob"] == pytest.approx(prediction.predicted.loc["a", "3"])
    assert (frame["ci_lower"] < frame["prob"]).all() and (frame["prob"] < frame["ci_upper"]).all()
    narrow, _ = prediction.conf_int(alpha=0.1)
    wide, _ = prediction.conf_int(alpha=0.01)
    assert (wide.to_numpy() < narrow.to_numpy()).all()
    np.testing.assert_allclose(prediction.predicted.sum(axis=1), 1.0)
    assert "2 rows x 5 levels" in repr(prediction)


def test_fitted_rows_and_cumulative(wine_res):
    fitted = wine_res.get_prediction()
    np.testing.assert_allclose(fitted.predicted, wine_res.predict())
    cumulative = wine_res.get_prediction(which="cumprob")
    np.testing.assert_allclose(cumulative.predicted, wine_res.predict(which="cumprob"))
    assert list(cumulative.predicted.columns) == ["1", "2", "3", "4"]
    # P(Y = 1) = P(Y <= 1): the same standard error
    np.testing.assert_allclose(cumulative.se["1"], fitted.se["1"])


def test_robust_covariance_gives_robust_standard_errors(wine_res):
    robust = wine_res.get_robustcov_results("robust")
    assert not np.allclose(robust.get_prediction().se, wine_res.get_prediction().se)


def test_bad_requests(wine_res):
    expected = r"'prob', 'cumprob', 'linear' or 'linear\.predictor'; got 'class'"
    with pytest.raises(OrdstatsError, match=expected):
        wine_res.get_prediction(which="class")
    with pytest.raises(PredictionError, match="not fitted on"):
        wine_res.get_prediction(pd.DataFrame({"temp": ["hot"], "contact": ["no"]}))
    with pytest.raises(OrdstatsError, match="alpha"):
        wine_res.get_prediction().conf_int(alpha=0)


# -- the gradient, checked by finite differences for every parameter block ---------

LAYOUT = ParamLayout(n_alpha=3, n_nominal_cols=1, n_beta=2, n_zeta=1)
JACOBIAN = np.eye(3)


def _rows(seed: int) -> NewRows:
    rng = np.random.default_rng(seed)
    return NewRows(
        X=rng.normal(size=(6, 2)),
        offset=rng.normal(scale=0.3, size=6),
        nominal=rng.normal(size=(6, 1)),
        scale=rng.normal(size=(6, 1)),
    )


@settings(max_examples=25, deadline=None)
@given(
    link=st.sampled_from(["logit", "probit", "cloglog", "loglog", "cauchit"]),
    seed=st.integers(0, 10_000),
    cumulative=st.booleans(),
)
def test_gradient_matches_finite_differences(link, seed, cumulative):
    rng = np.random.default_rng(seed)
    params = np.concatenate(
        [
            np.sort(rng.normal(scale=1.5, size=3)) + np.array([0.0, 0.6, 1.2]),  # ordered alpha_0
            rng.normal(scale=0.1, size=3),  # nominal effects, small so cut-points stay ordered
            rng.normal(size=2),
            rng.normal(scale=0.3, size=1),
        ]
    )
    rows, F = _rows(seed), get_link(link)
    theta = threshold_matrix(params[LAYOUT.thresholds], JACOBIAN, rows.nominal)
    # the nominal effects are small, but a large nominal value can still make two
    # cut-points cross (or nearly), where a probability is NaN by design
    assume(np.diff(theta, axis=1).min() > 1e-3)
    prob, grad = probability_gradients(F, params, LAYOUT, JACOBIAN, rows, cumulative)
    numeric = central_jacobian(
        lambda p: probability_gradients(F, p, LAYOUT, JACOBIAN, rows, cumulative)[0], params, 1e-6
    )
    np.testing.assert_allclose(grad, numeric, atol=1e-7)
    if not cumulative:
        np.testing.assert_allclose(prob.sum(axis=1), 1.0)
        np.testing.assert_allclose(grad.sum(axis=1), 0.0, atol=1e-12)


def test_same_parameter_order_as_the_likelihood():
    """Nominal and scale blocks are read in the likelihood's order."""
    from ordstats.families.cumulative.likelihood import CLMData, evaluate, prepare

    rows = _rows(7)
    y = np.array([0, 1, 2, 3, 1, 2])
    params = np.array([-1.0, 0.2, 1.4, 0.1, -0.2, 0.05, 0.5, -0.4, 0.3])
    data = CLMData(
        y=y,
        n_levels=4,
        X=rows.X,
        weights=np.ones(6),
        offset=rows.offset,
        link=get_link("probit"),
        threshold_jacobian=JACOBIAN,
        nominal=rows.nominal,
        scale=rows.scale,
    )
    problem = prepare(data)
    assert problem.layout == LAYOUT
    prob, _ = probability_gradients(get_link("probit"), params, LAYOUT, JACOBIAN, rows)
    np.testing.assert_allclose(prob[np.arange(6), y], evaluate(problem, params).fitted)


def test_intervals_in_the_far_tails():
    """Probabilities within rounding of 0 or 1 keep finite, ordered intervals."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=200)
    y = (x + rng.logistic(size=200) > 0).astype(int) + (x > 1)
    res = ordstats.OrdinalModel(y, x).fit()
    for which in ("prob", "cumprob"):
        prediction = res.get_prediction(np.array([[-40.0], [60.0], [800.0]]), which=which)
        lower, upper = prediction.conf_int()
        p = prediction.predicted.to_numpy()
        assert np.all(np.isfinite(lower)) and np.all(np.isfinite(upper))
        assert np.all(lower.to_numpy() <= p) and np.all(p <= upper.to_numpy())
    top = res.get_prediction(np.array([[60.0]])).conf_int()[1].to_numpy()
    assert 0 < top[0, 0] < 1e-30  # a tiny upper limit, not 0 or NaN


@pytest.mark.parametrize(("family", "lam"), [("aranda-ordaz", 0.6), ("log-gamma", -0.4)])
def test_flexible_link_gradient_includes_lambda(family, lam):
    layout = ParamLayout(n_alpha=3, n_nominal_cols=1, n_beta=2, n_zeta=1, n_lambda=1)
    params = np.array([-1.0, 0.3, 1.5, 0.1, -0.05, 0.08, 0.7, -0.4, 0.2, lam])
    rows, base = _rows(3), get_link(family)

    def probabilities(p):
        link = base.with_lambda(p[layout.lam][0])
        return probability_gradients(link, p, layout, JACOBIAN, rows)

    _, grad = probabilities(params)
    numeric = central_jacobian(lambda p: probabilities(p)[0], params, 1e-6)
    np.testing.assert_allclose(grad, numeric, atol=1e-7)
    assert np.abs(grad[:, :, layout.lam]).max() > 1e-4  # lambda matters


def test_many_levels_fit_with_a_sparse_threshold_jacobian_gives_prediction_ses():
    """A many-levels fit keeps its threshold Jacobian sparse; get_prediction reads its rows.

    It raised "inconsistent shapes: >2D multiply()" from scipy before. The cumulative
    probabilities and their SEs equal 1 - P(Y >= next level) from ``exceedance``
    (results/continuous.py, its own delta method).
    """
    import scipy.sparse as sp

    rng = np.random.default_rng(3)
    x = rng.normal(size=150)
    data = pd.DataFrame({"y": np.round(x + rng.normal(size=150), 1), "x": x})
    res = ordstats.OrdinalModel.from_formula("y ~ x", data, many_levels=True).fit()
    assert sp.issparse(res.model.threshold_jacobian)
    new = data.iloc[:2]
    cum = res.get_prediction(new, which="cumprob")
    values = np.sort(data["y"].unique())
    above = res.exceedance(values[1:4], new)
    for row in range(2):
        want = above.xs(row, level="row")
        cumulative, se = np.asarray(cum.predicted)[row, :3], np.asarray(cum.se)[row, :3]
        np.testing.assert_allclose(cumulative, 1 - want["estimate"], rtol=1e-9)
        np.testing.assert_allclose(se, want["se"], rtol=1e-6)
    prob = res.get_prediction(new, which="prob")
    np.testing.assert_allclose(np.asarray(prob.predicted), np.asarray(res.predict(new)), rtol=1e-10)
