"""Fits on many rows start at the estimates of a subsample: same estimates, fewer iterations."""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import pytest

import ordstats
import ordstats.estimation.evaluators as evaluators
import ordstats.estimation.last_step as last_step
import ordstats.estimation.warm_start as warm
from ordstats.core.solver import NewtonOptions
from ordstats.errors import OrdstatsError, SpecificationError


def _simulated(n: int, seed: int = 0, levels: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(rng.normal(size=(n, 3)), columns=["x1", "x2", "x3"])
    frame["g"] = rng.choice(["a", "b", "c"], size=n)
    latent = frame[["x1", "x2", "x3"]].to_numpy() @ [0.8, -0.5, 0.3] + rng.logistic(size=n)
    latent += frame["g"].map({"a": 0.0, "b": 0.4, "c": -0.6}).to_numpy()
    cuts = np.quantile(latent, np.linspace(0, 1, levels + 1)[1:-1])
    frame["y"] = pd.Categorical(np.digitize(latent, cuts), ordered=True)
    return frame


@pytest.fixture(scope="module")
def large() -> pd.DataFrame:
    return _simulated(30_000)


@pytest.mark.parametrize(
    ("kwargs", "formula"),
    [
        ({}, "y ~ x1 + x2 + x3 + g"),
        ({"link": "probit"}, "y ~ x1 + x2 + x3 + g"),
        ({"link": "cloglog", "threshold": "equidistant"}, "y ~ x1 + x2 + g"),
        ({"family": "acat"}, "y ~ x1 + x2 + x3"),
        ({"nominal": "~ x3", "scale": "~ x2"}, "y ~ x1 + g"),
    ],
)
def test_warm_start_gives_the_estimates_of_the_default_start(large, kwargs, formula):
    model = ordstats.OrdinalModel.from_formula(formula, large, **kwargs)
    cold = model.fit(warm_start=False)
    hot = model.fit()  # 30,000 rows: the default uses the subsample
    assert hot.mle_retvals["warm_start_rows"] > 0
    assert cold.mle_retvals["warm_start_rows"] == 0
    assert hot.converged and cold.converged
    np.testing.assert_allclose(hot.params, cold.params, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(hot.bse, cold.bse, rtol=1e-6)
    assert hot.llf == pytest.approx(cold.llf, rel=1e-12)
    assert hot.mle_retvals["iterations"] <= cold.mle_retvals["iterations"]


def test_warm_start_saves_full_data_iterations(large):
    model = ordstats.OrdinalModel.from_formula("y ~ x1 + x2 + x3 + g", large)
    cold, hot = model.fit(warm_start=False), model.fit()
    assert hot.mle_retvals["iterations"] < cold.mle_retvals["iterations"]


def test_small_data_start_at_the_default_unless_asked():
    frame = _simulated(8_000, seed=1)
    model = ordstats.OrdinalModel.from_formula("y ~ x1 + x2", frame)
    assert model.fit().mle_retvals["warm_start_rows"] == 0
    forced = model.fit(warm_start=True)
    assert 0 < forced.mle_retvals["warm_start_rows"] < 8_000
    np.testing.assert_allclose(forced.params, model.fit().params, rtol=1e-7, atol=1e-9)


def test_a_failed_subsample_fit_falls_back_to_the_default_start(large, monkeypatch):
    def failing(*args, **kwargs):
        raise OrdstatsError("the objective is not finite at the starting values")

    model = ordstats.OrdinalModel.from_formula("y ~ x1 + x2", large)
    expected = model.fit(warm_start=False)
    monkeypatch.setattr(warm, "newton", failing)
    res = model.fit()
    assert res.mle_retvals["warm_start_rows"] == 0
    np.testing.assert_allclose(res.params, expected.params, rtol=1e-12)


def test_the_subsample_keeps_every_level_and_is_reproducible():
    rng = np.random.default_rng(2)
    y = rng.integers(1, 4, size=100_000)
    rare = rng.choice(100_000, size=12, replace=False)
    y[rare] = 0  # 12 rows of level 0: all of them kept
    rows = warm.subsample_rows(y, 4)
    counts = np.bincount(y[rows], minlength=4)
    assert counts[0] == 12
    assert np.all(counts[1:] >= warm.MIN_ROWS_PER_LEVEL)
    assert 4_000 < rows.size < 6_500  # ~5% of the rows
    np.testing.assert_array_equal(rows, warm.subsample_rows(y, 4))
    assert np.all(np.diff(rows) > 0)


def test_warm_start_arguments_are_checked(large):
    model = ordstats.OrdinalModel.from_formula("y ~ x1", large)
    with pytest.raises(SpecificationError, match="warm_start must be True, False or None"):
        model.fit(warm_start="yes")
    chunked = ordstats.OrdinalModel.from_formula("y ~ x1", large, chunksize=10_000)
    with pytest.raises(SpecificationError, match="warm_start must be True, False or None"):
        chunked.fit(warm_start=1)


# -- the subsample's Hessian for the first full-data step ------------------------


def _full_hessian_points(monkeypatch, model) -> list[np.ndarray]:
    """Record the parameters at which the full problem's Hessian is computed."""
    from ordstats.families.cumulative.likelihood import Evaluation

    full = model.evaluator.problem
    points: list[np.ndarray] = []
    original = Evaluation._hessian_parts.func

    def recording(self):
        if self.problem is full:
            points.append(self.params.copy())
        return original(self)

    monkeypatch.setattr(Evaluation, "_hessian_parts", functools.cached_property(recording))
    Evaluation._hessian_parts.__set_name__(Evaluation, "_hessian_parts")
    return points


def test_the_first_full_data_step_uses_the_scaled_subsample_hessian(large, monkeypatch):
    model = ordstats.OrdinalModel.from_formula("y ~ x1 + x2 + x3 + g", large)
    cold = model.fit(warm_start=False)
    data = model.evaluator.data
    start = warm.subsample_start(model.family_spec, data, model.start_params, NewtonOptions())
    assert start.hessian is not None and start.n_rows > 0
    # the scaled subsample Hessian estimates the full one at the start to a few percent
    exact = np.asarray(model.evaluator.evaluate(start.params).hessian)
    assert np.max(np.abs(start.hessian - exact)) < 0.1 * np.max(np.abs(exact))
    points = _full_hessian_points(monkeypatch, model)
    hot = model.fit()
    np.testing.assert_allclose(hot.params, cold.params, rtol=1e-7, atol=1e-9)
    assert hot.mle_retvals["warm_start_rows"] == start.n_rows
    # one full Hessian per Newton iteration after the first, none at the start
    assert not any(np.array_equal(p, start.params) for p in points)
    assert len(points) == hot.mle_retvals["iterations"]


def test_a_topped_up_subsample_gives_no_hessian():
    frame = _simulated(30_000, seed=3)
    rare = frame.index[frame["y"] == 0][:40]  # level 0 keeps only 40 rows: topped up
    frame = frame.drop(frame.index[frame["y"] == 0].difference(rare))
    model = ordstats.OrdinalModel.from_formula("y ~ x1 + x2", frame)
    data = model.evaluator.data
    start = warm.subsample_start(model.family_spec, data, model.start_params, NewtonOptions())
    assert start.n_rows > 0 and start.hessian is None
    res = model.fit()
    np.testing.assert_allclose(res.params, model.fit(warm_start=False).params, rtol=1e-7, atol=1e-9)


# -- data read in chunks: the first pass keeps the subsample ----------------------


def _chunked(frame, formula="y ~ x1 + x2 + x3 + g", **kw):
    return ordstats.OrdinalModel.from_formula(formula, frame, **kw)


def test_chunked_warm_start_gives_the_in_memory_estimates_in_fewer_passes(large):
    memory = _chunked(large).fit()
    cold = _chunked(large, chunksize=7_000).fit(warm_start=False)
    hot = _chunked(large, chunksize=7_000).fit()  # 30,000 rows: the default uses the subsample
    assert cold.mle_retvals["warm_start_rows"] == 0
    # the 5% share of 30,000 rows is below the smallest subsample: 5,000 rows
    assert hot.mle_retvals["warm_start_rows"] == warm.MIN_SUBSAMPLE
    np.testing.assert_allclose(hot.params, memory.params, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(hot.bse, memory.bse, rtol=1e-9)
    # one pass per Newton evaluation, reported to the user; at the warm start the
    # summary pass made the evaluation already
    # the last step's check pass may be predicted (ordstats.estimation.last_step)
    skipped = cold.mle_retvals["last_step_predicted"]
    assert cold.mle_retvals["passes"] == cold.mle_retvals["iterations"] + 1 - skipped
    assert not hot.mle_retvals["last_step_predicted"]  # 5,000 rows: too far for that
    assert hot.mle_retvals["passes"] == hot.mle_retvals["iterations"]
    assert hot.mle_retvals["passes"] < cold.mle_retvals["passes"] - 1
    assert "passes" not in memory.mle_retvals


def test_the_summary_pass_evaluates_at_the_warm_start_only_if_the_layout_stays(large):
    model = _chunked(large, chunksize=7_000)
    assert model.evaluator.n_passes == 2  # levels and subsample, summary (and evaluation)
    warm_start, totals = model.evaluator.first_evaluation
    again = model.evaluator.evaluate(warm_start.params)  # no pass: made by the summary
    assert model.evaluator.n_passes == 2 and again.nll == totals.nll
    res = model.fit()
    assert res.mle_retvals["warm_start_rows"] == warm_start.n_rows
    # an aliased column is dropped by the summary: the evaluation there does not fit
    aliased = large.assign(x4=large["x1"] + large["x2"])
    formula = "y ~ x1 + x2 + x3 + x4 + g"
    with pytest.warns(ordstats.errors.CollinearityWarning):
        model = _chunked(aliased, formula, chunksize=7_000)
        expected = _chunked(aliased, formula).fit()
    assert model.evaluator.first_evaluation is None
    res = model.fit()
    assert res.mle_retvals["passes"] == res.mle_retvals["iterations"] + 1
    assert res.mle_retvals["warm_start_rows"] > 0
    np.testing.assert_allclose(res.params, expected.params, rtol=1e-9, atol=1e-12)


def test_the_chunked_subsample_does_not_depend_on_the_chunks(large):
    def subsample(data, **kw):
        evaluator = _chunked(data, **kw).evaluator
        arrays, topped_up = evaluator.subsample(6_000)
        return arrays, topped_up

    first, topped_up = subsample(large, chunksize=30_000)
    assert first.n_obs == 6_000 and not topped_up
    for kw in ({"chunksize": 1_000}, {"chunksize": 7_001}):
        again, _ = subsample(large, **kw)
        np.testing.assert_array_equal(again.X, first.X)
        np.testing.assert_array_equal(again.y, first.y)
    reordered, _ = subsample(large.iloc[::-1], chunksize=4_000)
    order = np.lexsort(first.X.T)
    np.testing.assert_array_equal(reordered.X[np.lexsort(reordered.X.T)], first.X[order])
    dd = pytest.importorskip("dask.dataframe")
    dask = pytest.importorskip("dask")
    with dask.config.set(scheduler="sync"):
        distributed, _ = subsample(dd.from_pandas(large, npartitions=5))
    np.testing.assert_array_equal(distributed.X, first.X)


def test_dask_partitions_send_only_their_share_of_the_subsample(large):
    """Each partition sends on its share of the warm start's rows (as a Spark partition
    does), not its whole reservoir; the subsample drawn is the chunked one."""
    dd = pytest.importorskip("dask.dataframe")
    dask = pytest.importorskip("dask")
    from ordstats.data.spark import sample_share

    chunked = _chunked(large, chunksize=30_000).evaluator
    with dask.config.set(scheduler="sync"):
        evaluator = _chunked(dd.from_pandas(large, npartitions=5)).evaluator
    share = sample_share(6_000, 5, warm.RESERVOIR_ROWS)  # 6,000 rows per partition
    # before: every row (the 200,000-row reservoirs held all 30,000)
    assert len(evaluator.reader.sample) <= 5 * (share + 5 * 50) < len(large) // 2
    assert evaluator.reader.sample.bound is not None
    size = warm.subsample_size(len(large))
    got, expected = evaluator.subsample(size)[0], chunked.subsample(size)[0]
    np.testing.assert_array_equal(got.X, expected.X)
    np.testing.assert_array_equal(got.y, expected.y)


def test_the_chunked_subsample_keeps_rows_of_every_level():
    frame = _simulated(30_000, seed=3)
    rare = frame.index[frame["y"] == 0][:40]  # level 0 keeps only 40 rows: all in
    frame = frame.drop(frame.index[frame["y"] == 0].difference(rare))
    model = _chunked(frame, "y ~ x1 + x2", chunksize=5_000)
    arrays, topped_up = model.evaluator.subsample(5_000)
    assert topped_up and np.sum(arrays.y == 0) == 40
    res = model.fit()
    assert res.mle_retvals["warm_start_rows"] == arrays.n_obs
    expected = _chunked(frame, "y ~ x1 + x2").fit()
    np.testing.assert_allclose(res.params, expected.params, rtol=1e-9, atol=1e-12)


def test_dask_fits_start_from_the_subsample(large):
    dask = pytest.importorskip("dask")
    dd = pytest.importorskip("dask.dataframe")
    with dask.config.set(scheduler="threads"):
        res = _chunked(dd.from_pandas(large, npartitions=4)).fit(warm_start=True)
    assert res.mle_retvals["warm_start_rows"] == warm.MIN_SUBSAMPLE
    np.testing.assert_allclose(res.params, _chunked(large).fit().params, rtol=1e-9, atol=1e-12)


def test_a_close_warm_start_takes_two_newton_passes_after_the_summary(large, monkeypatch):
    """Issue 25's target (3 passes after the scan) at a test size: a subsample of 90% of the rows.

    At 10^7 rows the 200,000-row subsample is as close in the sense that matters
    (the last Newton step is ~1e-8); here 90% of 30,000 rows is.  The summary
    pass evaluates at the warm start, two Newton passes follow, and the check of
    the last step comes from Newton's quadratic convergence, not a pass.  (Half
    of the rows, as this test first took, is close enough for some random
    subsamples only: 2 of 12 hash seeds of the sample's keys, 0 of 12 for the
    keys of :func:`~ordstats.data.reservoir.row_keys`; 90% for 10 of 12.)
    """
    monkeypatch.setattr(evaluators, "subsample_size", lambda n: n * 9 // 10)
    memory = _chunked(large).fit()
    model = _chunked(large, chunksize=7_000)
    assert model.evaluator.n_passes == 2  # levels and subsample, summary at the warm start
    res = model.fit()
    assert res.mle_retvals["warm_start_rows"] == 27_000
    assert res.mle_retvals["passes"] == 2 and res.mle_retvals["last_step_predicted"]
    assert model.evaluator.n_passes == 4 and res.converged
    assert res.niter == memory.niter
    np.testing.assert_allclose(res.params, memory.params, rtol=1e-9, atol=1e-12)
    assert res.llf == pytest.approx(memory.llf, rel=1e-12)
    # the covariance is the last evaluated point's Hessian's: within HESSIAN_RTOL
    np.testing.assert_allclose(res.bse, memory.bse, rtol=last_step.HESSIAN_RTOL)
    # without the shortcut the same fit makes one more pass, with the same estimates
    monkeypatch.setattr(evaluators, "LastStepPredictor", lambda one_pass, options: one_pass)
    checked = _chunked(large, chunksize=7_000).fit()
    assert checked.mle_retvals["passes"] == 3 and not checked.mle_retvals["last_step_predicted"]
    np.testing.assert_allclose(res.params, checked.params, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("share", [9, 5])
def test_a_large_subsample_takes_the_first_step_with_its_scaled_hessian(large, monkeypatch, share):
    """From QUASI_FIRST_STEP_ROWS subsample rows the summary pass evaluates no Hessian.

    The first Newton step takes the subsample's Hessian scaled to the full
    data's weight (as in memory); the estimates, log-likelihood and standard
    errors stay the in-memory fit's.  (At 10^7 rows the subsample holds
    200,000 rows; here the threshold is lowered to the test's subsample.)
    """
    monkeypatch.setattr(evaluators, "subsample_size", lambda n: n * share // 10)
    monkeypatch.setattr(evaluators, "QUASI_FIRST_STEP_ROWS", 15_000)
    memory = _chunked(large).fit()
    model = _chunked(large, chunksize=7_000)
    start, totals = model.evaluator.first_evaluation
    assert totals.hessian is None  # the summary pass made the gradient alone
    rows = large.shape[0] * share // 10
    assert start.hessian is not None and start.n_rows == rows
    exact = memory.model.evaluator.evaluate(start.params).hessian
    scaled_error = np.max(np.abs(start.hessian - exact)) / np.max(np.abs(exact))
    assert scaled_error < 0.1  # the subsample's Hessian, scaled to the full data
    res = model.fit()
    assert res.mle_retvals["warm_start_rows"] == rows and res.converged
    np.testing.assert_allclose(res.params, memory.params, rtol=1e-9, atol=1e-12)
    assert res.llf == pytest.approx(memory.llf, rel=1e-12)
    np.testing.assert_allclose(res.bse, memory.bse, rtol=last_step.HESSIAN_RTOL)
    # below the threshold the summary pass makes the Hessian, as before
    monkeypatch.setattr(evaluators, "QUASI_FIRST_STEP_ROWS", rows + 1)
    exact_first = _chunked(large, chunksize=7_000)
    assert exact_first.evaluator.first_evaluation[0].hessian is None
    assert exact_first.evaluator.first_evaluation[1].hessian is not None


def test_the_hessian_a_gradient_pass_left_out_is_made_by_a_pass_when_asked(large, monkeypatch):
    monkeypatch.setattr(evaluators, "subsample_size", lambda n: n // 2)
    monkeypatch.setattr(evaluators, "QUASI_FIRST_STEP_ROWS", 15_000)
    model = _chunked(large, chunksize=7_000)
    start = model.evaluator.first_evaluation[0]
    passes = model.evaluator.n_passes
    evaluation = model.evaluator.evaluate(start.params)
    assert not evaluation.has_hessian and model.evaluator.n_passes == passes
    hessian = evaluation.hessian  # e.g. a first step whose approximate Hessian is not PD
    assert evaluation.has_hessian and model.evaluator.n_passes == passes + 1
    expected = _chunked(large).evaluator.evaluate(start.params).hessian
    np.testing.assert_allclose(hessian, expected, rtol=1e-9, atol=1e-9)


def test_small_chunked_fits_check_every_step_with_a_pass():
    """Below 20,000 rows the check pass is cheap: the covariance is the estimates' own Hessian."""
    frame = _simulated(5_000)
    res = _chunked(frame, chunksize=2_000).fit()
    assert not res.mle_retvals["last_step_predicted"]
    assert res.mle_retvals["passes"] == res.mle_retvals["iterations"] + 1
    memory = _chunked(frame).fit()
    np.testing.assert_allclose(res.bse, memory.bse, rtol=1e-10)


def test_the_subsample_fit_stops_one_evaluation_early_at_the_same_start(large, monkeypatch):
    model = ordstats.OrdinalModel.from_formula("y ~ x1 + x2 + x3 + g", large)
    data, family = model.evaluator.data, model.family_spec
    rows = warm.subsample_rows(data.y, data.n_levels)
    problem = family.prepare(data.take(rows))
    full = ordstats.core.solver.newton(
        lambda x: family.evaluate(problem, x), model.start_params, NewtonOptions()
    )
    evaluated = []
    evaluate = family.evaluate

    def counting(problem_, x):
        evaluated.append(problem_.data.n_obs)
        return evaluate(problem_, x)

    monkeypatch.setattr(family, "evaluate", counting)
    start = warm.subsample_start(family, data, model.start_params, NewtonOptions())
    # the point one more Newton step reaches, a few 1e-10 from the converged one
    # here (the step after it is of the order of the squared pending step)
    np.testing.assert_allclose(start.params, full.x, rtol=1e-8)
    assert len(evaluated) < full.n_iter + 1
    assert start.hessian is not None
    monkeypatch.setattr(family, "evaluate", evaluate)
    hot = model.fit()
    monkeypatch.setattr(warm, "SUBSAMPLE_DECREMENT", 0.0)  # the subsample fitted to the end
    exact = model.fit()
    np.testing.assert_allclose(hot.params, exact.params, rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(hot.bse, exact.bse, rtol=1e-11)
