"""Censored responses (issue 28, item 2): Censored(lower, upper) in the cumulative link model.

The oracles are R's survival package (tests/r/censored_refs.R, vendored in
tests/data/reference/censored/): the fit without predictors of a right-censored
response is Kaplan-Meier's estimate, of an interval-censored one Turnbull's; with the
cloglog link (P(Y > t) = exp(-exp(theta_t - eta)): proportional hazards with hazard
ratio exp(-beta)) the slopes approach coxph's as the hazard jumps become small.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ordstats
from ordstats import Censored
from ordstats.core.links import get_link
from ordstats.design.censored import encode_censored
from ordstats.families.cumulative.likelihood import evaluate, prepare
from ordstats.families.problem import CLMData
from tests._numdiff import central_jacobian

REFERENCE = Path(__file__).parent / "data" / "reference" / "censored"


def _load(name: str) -> list[dict]:
    return json.loads((REFERENCE / f"{name}.json").read_text())


def _bounds(values: list) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in values], dtype=float)


def _right_censored(sample: dict) -> pd.DataFrame:
    time, status = np.array(sample["time"]), np.array(sample["status"])
    return pd.DataFrame({"time": time, "upper": np.where(status == 1, time, np.inf)})


def _intercept_only(frame: pd.DataFrame) -> ordstats.OrdinalResults:
    with warnings.catch_warnings():  # rows censored before the first event: no information
        warnings.simplefilter("ignore", ordstats.errors.LevelsWarning)
        model = ordstats.OrdinalModel.from_formula(
            "Censored(time, upper) ~ 1", frame, many_levels=True
        )
    return model.fit()


# ---------------------------------------------------------------------------
# oracles


@pytest.mark.parametrize("k", range(25))
def test_intercept_only_right_censored_fit_is_kaplan_meier(k):
    sample = _load("kaplan_meier")[k]
    res = _intercept_only(_right_censored(sample))
    km = sample["km"]
    times, surv = np.array(km["time"]), np.array(km["surv"])
    with np.errstate(invalid="ignore"):  # std.err is NaN where S = 0
        greenwood = surv * _bounds(km["std_err"])  # survfit's std.err is that of -log S
    # beyond the last event the right-censored rows form one level of their own (as in
    # rms's Ocens), so P(Y > t) is compared up to it
    top = res.model.design.response.values[-1]
    inside = times < top
    got = res.survival(pd.DataFrame(index=[0]), times=times[inside])
    assert inside.sum() >= np.sum(np.array(km["n_event"]) > 0) - 1
    np.testing.assert_allclose(got.predicted.to_numpy()[0], surv[inside], rtol=0, atol=1e-8)
    positive = surv[inside] > 0
    np.testing.assert_allclose(
        got.se.to_numpy()[0][positive], greenwood[inside][positive], rtol=0, atol=1e-8
    )


@pytest.mark.parametrize("k", range(10))
def test_intercept_only_interval_censored_fit_is_turnbull(k):
    sample = _load("turnbull")[k]
    lower, upper = _bounds(sample["lower"]), _bounds(sample["upper"])
    lower[np.isnan(lower)], upper[np.isnan(upper)] = -np.inf, np.inf
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ordstats.errors.LevelsWarning)  # rows covering all
        res = ordstats.OrdinalModel(Censored(lower, upper), None, many_levels=True).fit()
    for key, tol in (("turnbull_converged", 1e-6), ("turnbull", 1e-4)):
        times, surv = np.array(sample[key]["time"]), np.array(sample[key]["surv"])
        got = res.survival(pd.DataFrame(index=[0]), times=times).predicted.to_numpy()[0]
        np.testing.assert_allclose(got, surv, rtol=0, atol=tol, err_msg=key)


#: |cloglog slope + coxph slope| reached per sample size (continuous times, no ties);
#: the grouped-time and Breslow likelihoods differ by O(hazard jump), so about 1/n.
COX_TOLERANCE = {200: 0.015, 800: 0.003, 3200: 0.001}


@pytest.mark.parametrize("k", range(4))
def test_cloglog_slopes_approach_coxph_breslow(k):
    sample = _load("cox")[k]
    frame = _right_censored(sample).assign(x1=sample["x1"], x2=sample["x2"])
    with warnings.catch_warnings():  # rows censored before the first event: no information
        warnings.simplefilter("ignore", ordstats.errors.LevelsWarning)
        res = ordstats.OrdinalModel.from_formula(
            "Censored(time, upper) ~ x1 + x2", frame, link="cloglog", many_levels=True
        ).fit()
    slopes = -res.params[["x1", "x2"]].to_numpy()  # hazard ratio exp(-beta)
    diff = np.max(np.abs(slopes - np.array(sample["coef"])))
    if sample["ties"]:  # whole days: the grouped-time model is another model (diff 0.024)
        assert diff < 0.03
    else:
        assert diff < COX_TOLERANCE[len(sample["time"])]
        np.testing.assert_allclose(res.bse[["x1", "x2"]], sample["se"], rtol=0.01)


# ---------------------------------------------------------------------------
# the likelihood


LINKS = ["logit", "probit", "cloglog", "loglog", "cauchit"]


def _censored_data(seed: int, link: str, *, scale: bool = False, nominal: bool = False):
    rng = np.random.default_rng(seed)
    n, K = 40, 6
    y = rng.integers(0, K, n)
    low = y.copy()
    kind = rng.integers(0, 4, n)  # 0 exact, 1 right, 2 left, 3 interval
    low[kind == 1] = rng.integers(1, K, (kind == 1).sum())
    y[kind == 1] = K - 1
    y[kind == 2] = rng.integers(0, K - 1, (kind == 2).sum())
    low[kind == 2] = 0
    a = rng.integers(0, K, n)
    b = rng.integers(0, K, n)
    low[kind == 3], y[kind == 3] = np.minimum(a, b)[kind == 3], np.maximum(a, b)[kind == 3]
    X = rng.normal(size=(n, 2))
    data = CLMData(
        y=y,
        n_levels=K,
        X=X,
        weights=rng.uniform(0.5, 2, n),
        offset=np.zeros(n),
        link=get_link(link),
        threshold_jacobian=np.eye(K - 1),
        nominal=rng.normal(size=(n, 1)) if nominal else np.empty((n, 0)),
        scale=rng.normal(size=(n, 1)) if scale else np.empty((n, 0)),
        y_low=low,
    )
    problem = prepare(data)
    params = np.concatenate(
        [
            np.linspace(-1.5, 1.5, K - 1),
            0.1 * rng.normal(size=problem.layout.n_params - (K - 1)),
        ]
    )
    return data, problem, params


@pytest.mark.parametrize("link", LINKS)
@pytest.mark.parametrize("extra", [{}, {"scale": True}, {"nominal": True}])
def test_censored_gradient_and_hessian_match_finite_differences(link, extra):
    _, problem, params = _censored_data(3, link, **extra)
    ev = evaluate(problem, params)

    def nll(x):
        return evaluate(problem, x).nll

    def gradient(x):
        return evaluate(problem, x).gradient

    np.testing.assert_allclose(ev.gradient, central_jacobian(nll, params, 1e-6), atol=1e-6)
    np.testing.assert_allclose(ev.hessian, central_jacobian(gradient, params, 1e-5), atol=2e-5)


def test_censored_log_probability_is_the_interval_probability():
    data, problem, params = _censored_data(5, "probit")
    ev = evaluate(problem, params)
    theta = np.concatenate([[-np.inf], params[:5], [np.inf]])
    eta = data.X @ params[5:]
    link = get_link("probit")
    expected = np.log(link.cdf(theta[data.y + 1] - eta) - link.cdf(theta[data.y_low] - eta))
    np.testing.assert_allclose(ev.log_prob, expected, rtol=1e-12)


@pytest.mark.parametrize("link", LINKS)
def test_far_tail_censored_rows_keep_their_digits(link):
    """Right- and left-censored rows far in the tail: log P is the link's log_sf / log_cdf."""
    data, problem, params = _censored_data(1, link)
    far = params.copy()
    far[5:] = [30.0, 0.0]  # eta = 30 x1: |u| up to ~60
    ev = evaluate(problem, far)
    theta = np.concatenate([[-np.inf], far[:5], [np.inf]])
    eta = data.X @ far[5:]
    lnk = get_link(link)
    right = (data.y == 5) & (data.y_low > 0)
    left = (data.y_low == 0) & (data.y < 5)
    np.testing.assert_allclose(
        ev.log_prob[right], lnk.log_sf(theta[data.y_low[right]] - eta[right]), rtol=1e-10
    )
    np.testing.assert_allclose(
        ev.log_prob[left], lnk.log_cdf(theta[data.y[left] + 1] - eta[left]), rtol=1e-10
    )
    assert np.min(ev.log_prob[right | left]) < -4.5  # in the tails indeed (cauchit: -4.95)
    assert np.all(np.isfinite(ev.gradient)) and np.all(np.isfinite(ev.hessian))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), link=st.sampled_from(LINKS))
def test_rows_censored_at_their_own_value_are_exact_rows(seed, link):
    """Censored(y, y) is the exact observation y: same fit as the plain response."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"y": rng.integers(0, 5, 60).astype(float), "x": rng.normal(size=60)})
    plain = ordstats.OrdinalModel.from_formula("y ~ x", frame, link=link).fit()
    censored = ordstats.OrdinalModel.from_formula("Censored(y, y) ~ x", frame, link=link).fit()
    assert censored.llf == pytest.approx(plain.llf, rel=1e-12)
    np.testing.assert_allclose(censored.params.to_numpy(), plain.params.to_numpy(), atol=1e-8)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_fit_does_not_depend_on_row_order(seed):
    rng = np.random.default_rng(seed)
    n = 80
    y = np.round(rng.exponential(5, n))
    lower, upper = y.copy(), y.copy()
    kind = rng.integers(0, 4, n)
    upper[kind == 1] = np.inf
    lower[kind == 2] = -np.inf
    lower[kind == 3] = y[kind == 3] - rng.integers(1, 4, (kind == 3).sum())
    frame = pd.DataFrame({"lo": lower, "hi": upper, "x": rng.normal(size=n) + 0.1 * y})
    order = rng.permutation(n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ordstats.errors.LevelsWarning)
        fits = [
            ordstats.OrdinalModel.from_formula("Censored(lo, hi) ~ x", f, many_levels=True).fit()
            for f in (frame, frame.iloc[order])
        ]
    assert fits[1].llf == pytest.approx(fits[0].llf, rel=1e-10)
    np.testing.assert_allclose(fits[1].params, fits[0].params, atol=1e-7)
    np.testing.assert_allclose(fits[1].bse, fits[0].bse, rtol=1e-6)


def _interval_frame(n: int = 1500, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    y = np.round(np.exp(1 + 0.5 * x + 0.5 * rng.logistic(size=n)), 2)
    lower, upper = y.copy(), y.copy()
    u = rng.random(n)
    width = rng.uniform(0.5, 5, n)
    interval = u < 0.3
    lower[interval] = np.round(y[interval] - width[interval], 2)
    upper[interval] = np.round(y[interval] + width[interval], 2)
    upper[(u > 0.3) & (u < 0.4)] = np.inf
    lower[(u > 0.4) & (u < 0.45)] = -np.inf
    return pd.DataFrame({"lo": lower, "hi": upper, "x": x})


def test_sparse_threshold_block_fit_equals_dense_fit():
    """Interval rows couple distant thresholds: the sparse Newton step gives the dense fit."""
    frame = _interval_frame()
    model = ordstats.OrdinalModel.from_formula("Censored(lo, hi) ~ x", frame, many_levels=True)
    sparse, dense = model.fit(banded=True), model.fit(banded=False)
    assert len(model.levels) > 400
    assert type(sparse.nonrobust_covariance).__name__ == "BandedCovariance"
    assert sparse.llf == pytest.approx(dense.llf, rel=1e-12)
    np.testing.assert_allclose(sparse.params, dense.params, atol=1e-7)
    np.testing.assert_allclose(sparse.bse, dense.bse, rtol=1e-7)


def test_sparse_block_hessian_is_the_dense_hessian():
    from ordstats.families.cumulative.sparse_block import SparseBlockHessian, block_hessian

    _, problem, params = _censored_data(7, "logit")
    ev = evaluate(problem, params)
    hessian = block_hessian(ev)
    assert isinstance(hessian, SparseBlockHessian)
    np.testing.assert_allclose(hessian.toarray(), ev.hessian, atol=1e-12)
    g = ev.gradient
    np.testing.assert_allclose(hessian.factor().solve(g), np.linalg.solve(ev.hessian, g))
    np.testing.assert_allclose(
        hessian.factor().inverse_diagonal_a(), np.diag(np.linalg.inv(ev.hessian[:5, :5]))
    )


# ---------------------------------------------------------------------------
# encoding and survival


def test_levels_are_turnbull_intervals():
    # exact 1, 3, 5; right-censored at 2 (between), at 5 (tied with the top) and at 7;
    # left-censored at 3
    lower = np.array([1, 3, 5, 2, 5, 7, -np.inf], dtype=float)
    upper = np.array([1, 3, 5, np.inf, np.inf, np.inf, 3], dtype=float)
    enc = encode_censored(lower, upper)
    # the rows censored at or beyond the top exact value make one level, the innermost
    # interval (7, inf), valued at 7 + eps (rms's Ocens puts it at 5 + eps, the lowest of
    # those bounds; its eps is the same 0.001 for integer data)
    assert enc.values == [1.0, 3.0, 5.0, 7.001]
    assert enc.levels == ["1", "3", "5", "7.001"]
    assert enc.codes.tolist() == [0, 1, 2, 3, 3, 3, 1]
    assert enc.lower_codes.tolist() == [0, 1, 2, 1, 3, 3, 0]


def test_censored_from_arrays_equals_formula():
    sample = _load("kaplan_meier")[3]
    frame = _right_censored(sample)
    a = ordstats.OrdinalModel(Censored(frame["time"], frame["upper"]), None, many_levels=True).fit()
    b = _intercept_only(frame)
    np.testing.assert_allclose(a.params, b.params, atol=1e-12)


def test_formula_bounds_may_be_expressions():
    sample = _load("kaplan_meier")[4]
    frame = pd.DataFrame({"time": sample["time"], "status": sample["status"]})
    res = ordstats.OrdinalModel.from_formula(
        "Censored(time, np.where(status == 1, time, inf)) ~ 1", frame, many_levels=True
    ).fit()
    np.testing.assert_allclose(res.params, _intercept_only(_right_censored(sample)).params)


def test_survival_with_covariates_matches_the_cumulative_probabilities():
    sample = _load("cox")[3]  # whole days: 27 levels
    frame = _right_censored(sample).assign(x1=sample["x1"], x2=sample["x2"])
    res = ordstats.OrdinalModel.from_formula(
        "Censored(time, upper) ~ x1 + x2", frame, link="cloglog", many_levels=True
    ).fit()
    new = pd.DataFrame({"x1": [0.0, 1.0], "x2": [0, 1]})
    values = np.array(res.model.design.response.values)
    surv = res.survival(new, times=values[[3, 10, 20]])
    cum = res.get_prediction(new, which="cumprob")
    np.testing.assert_allclose(
        surv.predicted.to_numpy(), 1 - cum.predicted.to_numpy()[:, [3, 10, 20]], atol=1e-14
    )
    np.testing.assert_allclose(surv.se.to_numpy(), cum.se.to_numpy()[:, [3, 10, 20]], rtol=1e-9)
    lower, upper = surv.conf_int()
    assert np.all(lower.to_numpy() < surv.predicted.to_numpy())
    assert np.all(surv.predicted.to_numpy() < upper.to_numpy())
    # below the lowest value P(Y > t) = 1, from the highest on 0
    edge = res.survival(new, times=[values[0] - 1, values[-1]]).predicted.to_numpy()
    np.testing.assert_array_equal(edge, [[1.0, 0.0], [1.0, 0.0]])


# ---------------------------------------------------------------------------
# rows read in chunks


def test_chunked_fit_equals_in_memory_fit():
    frame = _interval_frame(n=2000, seed=4)
    frame[["lo", "hi"]] = frame[["lo", "hi"]].round(1)
    memory = ordstats.OrdinalModel.from_formula("Censored(lo, hi) ~ x", frame, many_levels=True)
    chunked = ordstats.OrdinalModel.from_formula(
        "Censored(lo, hi) ~ x", frame, many_levels=True, chunksize=450
    )
    assert chunked.levels == memory.levels
    a, b = memory.fit(), chunked.fit()
    assert b.llf == pytest.approx(a.llf, rel=1e-12)
    np.testing.assert_allclose(b.params, a.params, atol=1e-6)
    np.testing.assert_allclose(b.bse, a.bse, rtol=1e-6)
    new = pd.DataFrame({"x": [-1.0, 0.0, 1.5]})
    times = [2.0, 5.0, 9.0]
    np.testing.assert_allclose(
        b.survival(new, times).predicted, a.survival(new, times).predicted, atol=1e-7
    )


def test_chunked_right_censored_fit_from_parquet_is_kaplan_meier(tmp_path):
    sample = _load("kaplan_meier")[7]
    frame = _right_censored(sample)
    path = tmp_path / "km.parquet"
    frame.to_parquet(path)
    res = ordstats.OrdinalModel.from_formula(
        "Censored(time, upper) ~ 1", str(path), many_levels=True, chunksize=20
    ).fit()
    np.testing.assert_allclose(res.params, _intercept_only(frame).params, atol=1e-8)


def test_dask_fit_equals_in_memory_fit():
    dd = pytest.importorskip("dask.dataframe")
    sample = _load("cox")[3]
    frame = _right_censored(sample).assign(x1=sample["x1"], x2=sample["x2"])
    formula = "Censored(time, upper) ~ x1 + x2"
    memory = ordstats.OrdinalModel.from_formula(formula, frame, link="cloglog").fit()
    dask = ordstats.OrdinalModel.from_formula(
        formula, dd.from_pandas(frame, npartitions=3), link="cloglog"
    ).fit()
    assert dask.llf == pytest.approx(memory.llf, rel=1e-12)
    np.testing.assert_allclose(dask.params, memory.params, atol=1e-7)


def _direct_ml_frame(name: str) -> pd.DataFrame:
    """The rows of a tests/r/censored_direct_ml.R reference, with infinite bounds."""
    rows = pd.read_csv(REFERENCE / f"{name}.csv")
    return rows.assign(
        lower=np.where(rows["lower_inf"] == 1, -np.inf, rows["lower"]),
        upper=np.where(rows["upper_inf"] == 1, np.inf, rows["upper"]),
    ).drop(columns=["lower_inf", "upper_inf"])


def test_null_loglikelihood_of_a_censored_response_is_the_thresholds_only_fit():
    """llnull (and llr, prsquared) of a censored response: the thresholds-only model's
    maximum, by a direct maximisation in R with the thresholds kept in order
    (tests/r/censored_direct_ml.R).  Before, the closed form of the level counts gave
    -18.34372 (each censored row counted as exact at one level), so llr was 15.55."""
    ref = json.loads((REFERENCE / "empty_level_small.json").read_text())
    data = _direct_ml_frame("empty_level_small")
    null = ordstats.OrdinalModel.from_formula(
        "Censored(lower, upper) ~ 1", data, many_levels=True
    ).fit()
    assert null.llf == pytest.approx(ref["llnull"], rel=1e-9)
    for options in ({}, {"chunksize": 3}):
        res = ordstats.OrdinalModel.from_formula(
            "Censored(lower, upper) ~ x", data, many_levels=True, **options
        ).fit()
        assert res.llnull == pytest.approx(null.llf, rel=1e-9)
        assert res.llf == pytest.approx(ref["loglik"], rel=1e-9)
        assert res.llr == pytest.approx(2 * (ref["loglik"] - ref["llnull"]), rel=1e-7)
        assert res.prsquared == pytest.approx(1 - res.llf / null.llf, rel=1e-9)


def test_cauchit_fit_of_a_censored_response_reaches_the_maximum():
    """The cauchit log-likelihood is not concave: from the default start Newton's Hessian
    was indefinite five times in a row and the fit stopped (logLik -100.58, SEs NaN).
    Started at the probit fit, as R's clm starts cauchit models, it reaches the maximum
    that a direct maximisation in R finds with the thresholds kept in order
    (tests/r/censored_direct_ml.R): 9 of the 22 innermost intervals get no probability
    there, and are not levels here."""
    ref = json.loads((REFERENCE / "cauchit_c613.json").read_text())
    frame = _direct_ml_frame("cauchit_c613")
    for options in ({}, {"chunksize": 9}):
        with warnings.catch_warnings():
            warnings.simplefilter("error", ordstats.errors.ConvergenceWarning)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ordstats.errors.LevelsWarning)
                model = ordstats.OrdinalModel.from_formula(
                    "Censored(lower, upper) ~ x1",
                    frame,
                    many_levels=True,
                    link="cauchit",
                    **options,
                )
            res = model.fit()
        assert len(res.params) == ref["K"]
        _assert_equals_direct_ml(res, ref, "x1")


def _right_censored_ratings(n: int = 400, decimals: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    x1 = rng.normal(size=n)
    y = np.round(1 + 0.8 * x1 + rng.logistic(size=n) * 0.8, decimals)
    # right-censored above the lowest value (a row censored below it says nothing)
    upper = np.where((rng.uniform(size=n) < 0.3) & (y > y.min()), np.inf, y)
    return pd.DataFrame({"x1": x1, "lo": y, "up": upper})


def test_censored_results_pickle_and_score_dask_rows():
    """The covariance of a censored fit kept SuperLU's factor of its sparse threshold
    block, which cannot be pickled: pickle.dumps failed, and so did every Dask
    prediction (dask tokenizes the results), fitted rows or new rows."""
    import pickle

    dd = pytest.importorskip("dask.dataframe")
    data = _right_censored_ratings(decimals=1)  # about 80 levels: a sparse threshold block
    formula = "Censored(lo, up) ~ x1"
    memory = ordstats.OrdinalModel.from_formula(formula, data, many_levels=True).fit()
    restored = pickle.loads(pickle.dumps(memory))
    np.testing.assert_allclose(restored.bse, memory.bse, rtol=1e-12)
    frame = dd.from_pandas(data, npartitions=3)
    lazy = ordstats.OrdinalModel.from_formula(formula, frame, many_levels=True).fit()
    np.testing.assert_allclose(
        lazy.fittedvalues.compute().to_numpy(), memory.fittedvalues.to_numpy(), rtol=1e-6
    )
    scored = memory.predict(frame, which="linear").compute()
    np.testing.assert_allclose(scored.to_numpy(), memory.predict(data, which="linear"), rtol=1e-12)


def test_survival_of_the_fitted_rows_read_in_chunks():
    """survival() without newdata asked for the rows in memory out of core, while
    mean(), quantile() and exceedance() streamed them; it now streams them too."""
    dd = pytest.importorskip("dask.dataframe")
    data = _right_censored_ratings()
    formula = "Censored(lo, up) ~ x1"
    times = [0.0, 1.0, 2.5]
    memory = ordstats.OrdinalModel.from_formula(formula, data, many_levels=True).fit()
    expected = memory.survival(times=times)
    for source, options in ((data, {"chunksize": 70}), (dd.from_pandas(data, npartitions=3), {})):
        model = ordstats.OrdinalModel.from_formula(formula, source, many_levels=True, **options)
        got = model.fit().survival(times=times)
        assert list(got.predicted.index) == list(expected.predicted.index)
        np.testing.assert_allclose(got.predicted, expected.predicted, rtol=0, atol=1e-9)
        np.testing.assert_allclose(got.se, expected.se, rtol=1e-7, atol=1e-12)
        pd.testing.assert_frame_equal(
            got.summary_frame(), expected.summary_frame(), rtol=1e-7, atol=1e-9
        )


def test_chunked_probability_residuals_of_a_censored_response():
    """Out of core, resid_prob looked up the response by its name, Censored(lo, up),
    in the chunk's columns (a raw KeyError); it now codes each row's (lower, upper]."""
    data = _right_censored_ratings()
    formula = "Censored(lo, up) ~ x1"
    memory = ordstats.OrdinalModel.from_formula(formula, data, many_levels=True).fit()
    chunked = ordstats.OrdinalModel.from_formula(formula, data, many_levels=True, chunksize=70)
    got = chunked.fit().resid_prob
    np.testing.assert_allclose(got.to_numpy(), memory.resid_prob.to_numpy(), atol=1e-7)
    assert list(got.index) == list(memory.resid_prob.index)


def _assert_equals_direct_ml(res, ref: dict, slope: str, surv=None) -> None:
    """A censored fit against tests/r/censored_direct_ml.R's maximum (ordered thresholds)."""
    np.testing.assert_allclose(res.model.design.response.values, ref["vals"], rtol=1e-12)
    assert res.llf == pytest.approx(ref["loglik"], rel=1e-9)
    assert res.llnull == pytest.approx(ref["llnull"], rel=1e-9)
    np.testing.assert_allclose(res.params.to_numpy()[:-1], ref["theta"], rtol=0, atol=2e-6)
    assert res.params[slope] == pytest.approx(ref["beta"][0], rel=1e-6)
    np.testing.assert_allclose(res.bse.to_numpy(), ref["se"], rtol=1e-4)
    if surv is not None:
        np.testing.assert_allclose(surv.predicted.to_numpy(), ref["surv"], rtol=0, atol=2e-6)
        np.testing.assert_allclose(surv.se.to_numpy(), ref["surv_se"], rtol=1e-4, atol=1e-9)


def test_levels_without_probability_are_left_out():
    """Interval bounds that are not observed values, (y - 0.5, y + 0.3], make innermost
    intervals that only censored rows cover.  Nothing kept their probabilities from
    being negative: 17 of 92 fitted thresholds did not increase, P(Y > t) rose with t
    and every prediction was NaN, although the fit reported convergence.  Turnbull's
    estimate gives them no probability, and they are no longer levels; R's maximisation
    with ordered thresholds ties the same ones (tests/r/censored_direct_ml.R)."""
    ref = json.loads((REFERENCE / "empty_levels_shifted_bounds.json").read_text())
    data = _direct_ml_frame("empty_levels_shifted_bounds")
    formula = "Censored(lower, upper) ~ x1"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = ordstats.OrdinalModel.from_formula(formula, data, many_levels=True).fit()
        new = pd.read_csv(REFERENCE / "empty_levels_shifted_bounds_new.csv")
        probs = res.predict(new)
        surv = res.survival(new, times=np.array([-1.0, 0.05, 1.0, 1.35, 2.5]))
    _assert_equals_direct_ml(res, ref, "x1", surv)
    assert np.all(np.diff(res.params.to_numpy()[:-1]) > 0)
    assert np.all(probs.to_numpy() >= 0)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-12)
    chunked = ordstats.OrdinalModel.from_formula(formula, data, many_levels=True, chunksize=97)
    np.testing.assert_allclose(chunked.fit().params, res.params, rtol=1e-7, atol=1e-9)


def test_empty_levels_weigh_rows_as_the_rows_they_stand_for():
    """Which levels get no probability depends on how many rows there are of each
    kind: weights count as repeated rows, in memory and in chunks (whose first pass
    sums the weight of each distinct pair of bounds).  With three of each of the rows
    censored at 2 and at 2.5, the interval (2, 2.5] has probability; with one, none."""
    data = _direct_ml_frame("empty_level_small")
    data["w"] = np.where(data.index.isin([5, 7]), 3.0, 1.0)
    formula = "Censored(lower, upper) ~ x"
    repeated = data.loc[data.index.repeat(data["w"].astype(int))].reset_index(drop=True)
    expected = ordstats.OrdinalModel.from_formula(formula, repeated, many_levels=True).fit()
    assert expected.model.design.response.values == [1, 2, 2.00000001, 3, 4, 5, 6]
    for options in ({}, {"chunksize": 3}):
        model = ordstats.OrdinalModel.from_formula(
            formula, data, many_levels=True, weights="w", **options
        )
        res = model.fit()
        assert res.model.design.response.values == expected.model.design.response.values
        assert res.llf == pytest.approx(expected.llf, rel=1e-10)
        np.testing.assert_allclose(res.params, expected.params, rtol=1e-7, atol=1e-9)


def test_turnbull_estimate_leaves_out_an_interval_no_row_needs():
    """(2, 2.5] is an innermost interval: a right-censored row starts there and a
    left-censored one ends there.  Turnbull's estimate gives it no probability (its
    first-order ratio is 0.694 < 1), where the fit without the order constraint had made
    it -0.07 and raised the log-likelihood from -13.977 to -13.466."""
    lower = np.array([1, 2, 3, 4, 5, 2, 3, -np.inf, 6, 1.5])
    upper = np.array([1, 2, 3, 4, 5, np.inf, np.inf, 2.5, 6, 3])
    enc = encode_censored(lower, upper)
    assert enc.values == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    assert enc.lower_codes.tolist() == [0, 1, 2, 3, 4, 2, 3, 0, 5, 1]
    assert enc.codes.tolist() == [0, 1, 2, 3, 4, 5, 5, 1, 5, 2]
    # a row known to lie in (2, 2.5] gives it probability
    enc = encode_censored(np.append(lower, 2.0), np.append(upper, 2.5))
    assert enc.values == [1.0, 2.0, 2.00000001, 3.0, 4.0, 5.0, 6.0]


@pytest.mark.parametrize(
    "name, turnbull, fitted",
    [
        # the predictor makes the maximum want a negative probability at a level that
        # Turnbull's estimate keeps: its thresholds are tied (7 levels -> 6)
        ("ordered_thresholds_tied", 7, 6),
        # and gives probability to two intervals that Turnbull's estimate leaves out
        ("ordered_thresholds_freed", 17, 19),
    ],
)
def test_predictors_move_which_thresholds_are_tied(name, turnbull, fitted):
    """Turnbull's estimate ignores the predictors, which can call for a negative
    probability where it gives some, and for some where it gives none.  The fit said
    nothing and left thresholds that did not increase, so every prediction was NaN.
    Now an active-set method ties a level's thresholds where the step is not positive
    and frees a tied interval whose opening raises the likelihood, until neither
    holds: the maximum over ordered thresholds, as R's maximisation in that
    parametrisation finds (tests/r/censored_direct_ml.R), in memory and in chunks."""
    ref = json.loads((REFERENCE / f"{name}.json").read_text())
    data = _direct_ml_frame(name)
    new = pd.read_csv(REFERENCE / f"{name}_new.csv")
    times = np.array([-3.0, -1.0, 0.0, 1.0, 2.5])
    for options in ({}, {"chunksize": 7}):
        model = ordstats.OrdinalModel.from_formula(
            "Censored(lower, upper) ~ x", data, many_levels=True, **options
        )
        assert len(model.levels) == turnbull
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            res = model.fit()
            surv = res.survival(new, times=times)
        assert len(res.model.levels) == fitted
        _assert_equals_direct_ml(res, ref, "x", surv)


def test_which_intervals_are_tied_does_not_depend_on_the_scale_of_the_weights():
    """Freeing a tied interval raises the log-likelihood here by 8e-6 per unit of
    weight.  The threshold for freeing was an absolute rate (1e-4): with unit weights
    the interval stayed tied (logLik 1.6e-6 below R's maximum over ordered thresholds),
    with weights of 100 it was freed, so constant weights changed the levels and the
    estimates.  The rate is now per unit of mean weight, and smaller.  (The lowest
    level's probability vanishes at the maximum, so its threshold drifts down with a
    huge SE and the fit warns, in R's maximisation too: the slopes are not compared.)"""
    ref = json.loads((REFERENCE / "ordered_thresholds_small_gain.json").read_text())
    data = _direct_ml_frame("ordered_thresholds_small_gain")
    formula = "Censored(lower, upper) ~ x + g"
    for weight, options in ((1.0, {}), (0.01, {}), (100.0, {}), (1.0, {"chunksize": 6})):
        model = ordstats.OrdinalModel.from_formula(
            formula,
            data.assign(w=weight),
            many_levels=True,
            link="probit",
            weights="w",
            **options,
        )
        with pytest.warns(ordstats.errors.ConvergenceWarning, match="may be unbounded"):
            res = model.fit()
        np.testing.assert_allclose(res.model.design.response.values, ref["vals"], rtol=1e-12)
        assert res.llf / weight == pytest.approx(ref["loglik"], rel=1e-8)
        assert res.llnull / weight == pytest.approx(ref["llnull"], rel=1e-8)


def test_rows_covering_every_level_are_counted_as_rows_in_chunks():
    """Out of core the first pass keeps each distinct pair of bounds once, and the
    warning counted those pairs: 1 row where memory said 3."""
    data = pd.DataFrame(
        {
            "lo": [1.0, 2, 3, 4, 0.5, 0.5, 0.5, 2, 1],
            "up": [1.0, 2, 3, 4, np.inf, np.inf, np.inf, 2, 1],
            "x": [0.1, -0.4, 0.3, 1.2, 0.0, 0.5, -0.7, 0.2, -1.1],
        }
    )
    for options in ({}, {"chunksize": 2}):
        with pytest.warns(ordstats.errors.LevelsWarning, match=r": 3 row\(s\) are censored"):
            ordstats.OrdinalModel.from_formula("Censored(lo, up) ~ x", data, **options)


def test_remove_data_drops_the_censored_rows_bounds():
    """The design keeps each row's bounds (to code the rows with other levels when the
    fit ties thresholds); remove_data() dropped the codes but kept the bounds and the
    lowest codes of every row."""
    data = _direct_ml_frame("ordered_thresholds_freed")
    res = ordstats.OrdinalModel.from_formula(
        "Censored(lower, upper) ~ x", data, many_levels=True
    ).fit()
    assert len(res.model.design.response.bounds[0]) == len(data)
    expected = res.predict(data.head(3))
    res.remove_data()
    response = res.model.design.response
    assert response.bounds is None and len(response.lower_codes) == 0
    pd.testing.assert_frame_equal(res.predict(data.head(3)), expected)


# -- survival::lung (tests/r/censored_lung.R) ---------------------------------------


def _lung() -> pd.DataFrame:
    return _direct_ml_frame("lung").assign(sex=lambda d: d["sex"].astype(str))


def test_lung_without_predictors_is_kaplan_meier():
    """survival::lung: 165 deaths at 139 distinct times, censored times tied with deaths."""
    km = _load("lung_kaplan_meier")
    res = ordstats.OrdinalModel.from_formula(
        "Censored(lower, upper) ~ 1", _lung(), many_levels=True
    ).fit()
    times, surv = np.array(km["time"]), np.array(km["surv"])
    got = res.survival(pd.DataFrame(index=[0]), times=times)
    np.testing.assert_allclose(got.predicted.to_numpy()[0], surv, rtol=0, atol=1e-12)
    np.testing.assert_allclose(
        got.se.to_numpy()[0], surv * np.array(km["std_err"]), rtol=0, atol=1e-12
    )
    # the largest time (1022) is censored: the mean is restricted to it, as survival's
    # (the top level's value is 1022.001, just above it: 5e-5 more, S(1022) = 0.05)
    mean = res.mean(pd.DataFrame(index=[0]))
    assert res.model.design.response.values[-1] == pytest.approx(1022.001)
    assert mean["estimate"].iloc[0] == pytest.approx(km["rmean"][0], rel=2e-7)
    assert mean["se"].iloc[0] == pytest.approx(km["rmean_se"][0], rel=1e-4)


@pytest.mark.parametrize("link", ["logit", "cloglog"])
def test_lung_with_age_and_sex_equals_direct_ml(link):
    """The reference's Hessian is Richardson's extrapolation of the gradient's differences
    (optimHess's plain differences erred by up to 2e-3 relative on these 140 parameters)."""
    ref = _load(f"lung_{link}")
    res = ordstats.OrdinalModel.from_formula(
        "Censored(lower, upper) ~ age + sex", _lung(), many_levels=True, link=link
    ).fit()
    new = pd.read_csv(REFERENCE / "lung_new.csv").assign(sex=lambda d: d["sex"].astype(str))
    surv = res.survival(new, times=np.array([5.0, 180.0, 365.5, 800.0, 1100.0]))
    np.testing.assert_allclose(res.model.design.response.values, ref["vals"], rtol=1e-12)
    assert res.llf == pytest.approx(ref["loglik"], rel=1e-11)
    assert res.llnull == pytest.approx(ref["llnull"], rel=1e-11)
    np.testing.assert_allclose(res.params.to_numpy()[:-2], ref["theta"], rtol=0, atol=1e-6)
    np.testing.assert_allclose(res.params.to_numpy()[-2:], ref["beta"], rtol=1e-6)
    np.testing.assert_allclose(res.bse.to_numpy(), ref["se"], rtol=1e-6)
    np.testing.assert_allclose(surv.predicted.to_numpy(), ref["surv"], rtol=0, atol=1e-7)
    np.testing.assert_allclose(surv.se.to_numpy(), ref["surv_se"], rtol=1e-6, atol=1e-9)


def _split_by_g(censor_g: bool) -> pd.DataFrame:
    """Exact values 0..39 at g = 0 and 50..89 at g = 1; every 7th row right-censored.

    With ``censor_g`` the rows at g = 1 are instead censored at values 0..39, right- and
    left-censored in turn, so no shift of g raises every row's probability: no separation
    (right-censored rows alone would be: they only gain as g's rows move up).
    """
    rng = np.random.default_rng(1)
    n = 120
    g = (np.arange(n) % 2).astype(float)
    value = np.where(g == 1, 50 + rng.integers(0, 40, n), rng.integers(0, 40, n)).astype(float)
    frame = pd.DataFrame({"lower": value, "upper": value, "x": rng.normal(size=n), "g": g})
    frame.loc[::7, "upper"] = np.inf
    if censor_g:
        bound = rng.integers(0, 40, n).astype(float)
        right = (g == 1) & (np.arange(n) % 4 == 1)
        left = (g == 1) & (np.arange(n) % 4 == 3)
        frame.loc[right, ["lower", "upper"]] = np.column_stack(
            [bound[right], np.full(right.sum(), np.inf)]
        )
        frame.loc[left, ["lower", "upper"]] = np.column_stack(
            [np.full(left.sum(), -np.inf), bound[left]]
        )
    return frame


def test_separation_of_a_censored_response_names_the_columns():
    """Before: the censored fit skipped the separation check and warned only 'the fit did not
    converge ... Check the data for separation', naming no column (the exact fit names g)."""
    frame = _split_by_g(censor_g=False)
    formula = "Censored(lower, upper) ~ x + g"
    for options in ({}, {"chunksize": 50}):
        model = ordstats.OrdinalModel.from_formula(formula, frame, many_levels=True, **options)
        with pytest.warns(ordstats.SeparationWarning, match=r"increasing as 'g' grow"):
            res = model.fit()
        assert res.fit_info.diverging == ("g",)
    exact = ordstats.OrdinalModel.from_formula("lower ~ x + g", frame, many_levels=True)
    with pytest.warns(ordstats.SeparationWarning, match=r"increasing as 'g' grow"):
        exact.fit()


def test_censored_rows_bounded_on_both_sides_are_not_separation():
    """Censored rows constrain the check only by the bounds they have."""
    frame = _split_by_g(censor_g=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = ordstats.OrdinalModel.from_formula(
            "Censored(lower, upper) ~ x + g", frame, many_levels=True
        ).fit()
    assert res.converged and res.fit_info.diverging == ()
