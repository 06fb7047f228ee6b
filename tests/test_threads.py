"""Threads (issue 24): one BLAS thread inside every fit, the caller's settings kept.

The suite runs single-threaded (tests/conftest.py), so these tests set the
caller's BLAS threads to two with ``threadpool_limits`` themselves, as a default
process has on this 2-core machine, and look at the BLAS setting from inside
the fits through a recording wrapper around a function each model kind calls.
No test times anything.
"""

from __future__ import annotations

import contextlib
import importlib
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pandas as pd
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

import ordstats
from ordstats import OrdinalModel
from ordstats.config import resolve_threads, usable_cores
from ordstats.core import threads as core_threads
from ordstats.errors import OrdstatsError, SpecificationError


def blas_threads() -> list[int]:
    return sorted({pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"})


@pytest.fixture
def caller_two_threads() -> Iterator[list[int]]:
    """The caller's BLAS at two threads, as a default process on 2 cores."""
    with threadpool_limits(limits=2, user_api="blas"):
        yield blas_threads()


def record_threads(monkeypatch: pytest.MonkeyPatch, module: str, name: str) -> list[int]:
    """Wrap ``module.name`` so that every call records the BLAS threads it runs with."""
    seen: list[int] = []
    target = importlib.import_module(module)
    original: Callable[..., Any] = getattr(target, name)

    def recording(*args: Any, **kwargs: Any) -> Any:
        seen.append(max(blas_threads()))
        return original(*args, **kwargs)

    monkeypatch.setattr(target, name, recording)
    return seen


def wide_data(n: int = 400, p: int = 6, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    y = np.digitize(X @ np.linspace(-0.5, 0.5, p) + rng.logistic(size=n), [-1.0, 0.0, 1.0])
    return X, y


# -- the option --------------------------------------------------------------------


def test_default_options():
    assert ordstats.get_options() == {"threads": None, "chunk_cache": True}
    assert resolve_threads(None) == usable_cores()


def test_set_options_as_context_manager_restores():
    with ordstats.set_options(threads=1) as opts:
        assert isinstance(opts, ordstats.set_options)
        assert ordstats.get_options()["threads"] == 1
        assert resolve_threads(None) == 1
        with ordstats.set_options(threads=3):
            assert resolve_threads(None) == 3
        assert ordstats.get_options()["threads"] == 1
    assert ordstats.get_options()["threads"] is None


def test_set_options_without_with_stays_until_changed():
    try:
        ordstats.set_options(threads=2)
        assert ordstats.get_options()["threads"] == 2
    finally:
        ordstats.set_options(threads=None)
    assert ordstats.get_options()["threads"] is None


def test_set_options_restores_after_an_error_in_the_block():
    with pytest.raises(RuntimeError), ordstats.set_options(threads=1):
        raise RuntimeError("inside")
    assert ordstats.get_options()["threads"] is None


def test_negative_threads_count_back_from_the_cores_as_n_jobs():
    cores = usable_cores()
    assert resolve_threads(-1) == cores
    assert resolve_threads(-2) == max(1, cores - 1)
    assert resolve_threads(-1000) == 1
    with ordstats.set_options(threads=-1):
        assert resolve_threads(None) == cores
    assert resolve_threads(2.0) == 2
    assert resolve_threads(np.int64(1)) == 1


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (0, r"threads=0 is not a number of threads.*-1 for every core"),
        ("2", r"threads must be None, a positive whole number of threads, or -1.*got '2'"),
        (1.5, r"threads must be None, a positive whole number.*got 1.5"),
        (True, r"threads must be None, a positive whole number.*got True"),
        (float("nan"), r"threads must be None, a positive whole number.*got nan"),
        ([2], r"threads must be None, a positive whole number.*got \[2\]"),
    ],
)
def test_set_options_refuses_bad_threads(value, message):
    with pytest.raises(SpecificationError, match=message):
        ordstats.set_options(threads=value)
    assert ordstats.get_options()["threads"] is None


def test_set_options_refuses_unknown_names():
    with pytest.raises(SpecificationError, match=r"unknown option\(s\) \['thread'\].*'threads'"):
        ordstats.set_options(thread=2)


# -- fits run single-threaded and give the caller its settings back ------------------


def test_a_clm_fit_runs_on_one_blas_thread_and_restores(caller_two_threads, monkeypatch, wine):
    assert caller_two_threads == [2]
    seen = record_threads(monkeypatch, "ordstats.core.solver", "equilibrate")
    before = threadpool_info()
    OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    assert seen and set(seen) == {1}
    assert threadpool_info() == before


def test_a_fit_that_raises_restores_the_callers_settings(caller_two_threads, wine):
    before = threadpool_info()
    model = OrdinalModel.from_formula("rating ~ temp + contact", wine)
    with pytest.raises(OrdstatsError, match="params must be"):
        model.fit(start_params="abc")
    with pytest.raises(OrdstatsError):
        model.fit(maxiter=-1)
    assert threadpool_info() == before


def test_fits_give_identical_estimates_under_any_thread_setting(monkeypatch):
    X, y = wide_data()
    # every Gram product counts as large here, so the threaded path runs too
    monkeypatch.setattr(core_threads, "THREADED_WORK", 0.0)
    monkeypatch.setattr(core_threads, "THREADED_WIDTH", 1)

    def fit() -> np.ndarray:
        res = OrdinalModel(y, X).fit()
        return np.concatenate([res.params.to_numpy(), res.bse.to_numpy()])

    with threadpool_limits(limits=2, user_api="blas"):
        default = fit()
        with ordstats.set_options(threads=1):
            option = fit()
    with threadpool_limits(limits=1, user_api="blas"):
        limited = fit()
    np.testing.assert_array_equal(option, default)
    np.testing.assert_array_equal(limited, default)


def test_only_large_products_use_the_allowed_threads(caller_two_threads, monkeypatch):
    X, y = wide_data()
    seen = record_threads(monkeypatch, "ordstats.core.linalg", "_weighted_gram")
    # a thin unweighted product goes straight to numpy's rank-k update (b121e68)
    seen_thin = record_threads(monkeypatch, "ordstats.core.linalg", "_gram_of")
    OrdinalModel(y, X).fit()
    seen += seen_thin
    assert seen and set(seen) == {1}  # a 6-column design: thin, one thread
    seen.clear()
    monkeypatch.setattr(core_threads, "THREADED_WORK", 0.0)
    monkeypatch.setattr(core_threads, "THREADED_WIDTH", 1)
    OrdinalModel(y, X).fit()
    assert 2 in seen  # "large" now: the caller's two threads
    seen.clear()
    with ordstats.set_options(threads=1):
        OrdinalModel(y, X).fit()
    assert seen and set(seen) == {1}  # the option bounds it
    seen.clear()
    with threadpool_limits(limits=1, user_api="blas"):
        OrdinalModel(y, X).fit()
    assert seen and set(seen) == {1}  # so does the caller's own limit
    assert blas_threads() == [2]


def test_product_threads_change_nothing_outside_a_fit(caller_two_threads, monkeypatch):
    monkeypatch.setattr(core_threads, "THREADED_WORK", 0.0)
    monkeypatch.setattr(core_threads, "THREADED_WIDTH", 1)
    with core_threads.product_threads(1.0, 1):
        assert blas_threads() == [2]
    assert core_threads.allowed_threads() == 1


def test_fits_in_several_threads_keep_one_blas_thread_and_restore(caller_two_threads, wine):
    before = threadpool_info()
    model = OrdinalModel.from_formula("rating ~ temp + contact", wine)
    expected = model.fit().params
    barrier = threading.Barrier(4)

    def fit(_: int) -> tuple[pd.Series, list[int]]:
        barrier.wait()
        res = model.fit()
        return res.params, blas_threads()

    with ThreadPoolExecutor(max_workers=4) as pool:
        outcomes = list(pool.map(fit, range(4)))
    for params, _ in outcomes:
        pd.testing.assert_series_equal(params, expected)
    assert threadpool_info() == before


def test_numeric_threads_validates_before_changing_anything(caller_two_threads):
    with pytest.raises(SpecificationError, match="threads=0"), core_threads.numeric_threads(0):
        pass
    assert blas_threads() == [2]


# -- every model kind goes through the rule -------------------------------------------


@pytest.mark.parametrize("family", ["cumulative", "sratio", "cratio", "acat"])
def test_every_family_fits_on_one_thread(caller_two_threads, monkeypatch, wine, family):
    seen = record_threads(monkeypatch, "ordstats.core.solver", "equilibrate")
    OrdinalModel.from_formula("rating ~ temp + contact", wine, family=family).fit()
    assert seen and set(seen) == {1}
    assert blas_threads() == [2]


def test_penalised_fits_path_cv_and_firth_on_one_thread(caller_two_threads, monkeypatch):
    X, y = wide_data()
    model = OrdinalModel(y, X)
    seen = record_threads(monkeypatch, "ordstats.estimation.penalized", "proximal_newton")
    model.fit_regularized(alpha=0.01, L1_wt=0.5)
    model.path(n_alphas=4)
    model.cv(n_alphas=3, cv=2)
    assert len(seen) > 3 and set(seen) == {1}
    newton_seen = record_threads(monkeypatch, "ordstats.estimation.penalized", "positive_definite")
    model.fit(penalty="firth")
    assert newton_seen and set(newton_seen) == {1}
    assert blas_threads() == [2]


@pytest.mark.parametrize(
    ("formula", "nagq", "hook"),
    [
        ("rating ~ temp + contact + (1|judge)", 1, "laplace_gradient"),
        ("rating ~ temp + contact + (1|judge)", 5, "agq_gradient"),
        ("rating ~ temp + contact + (1|judge) + (1|bottle)", 1, "laplace_gradient_general"),
    ],
)
def test_mixed_models_fit_on_one_thread(caller_two_threads, monkeypatch, wine, formula, nagq, hook):
    seen = record_threads(monkeypatch, "ordstats.estimation.mixed", hook)
    res = OrdinalModel.from_formula(formula, wine).fit(nagq=nagq)
    assert seen and set(seen) == {1}
    assert blas_threads() == [2]
    seen.clear()
    res.sd_conf_int()  # profile refits of the random-effect SDs
    assert seen and set(seen) == {1}


@pytest.mark.filterwarnings("ignore::ordstats.errors.ConvergenceWarning")
def test_profile_and_term_test_refits_on_one_thread(caller_two_threads, monkeypatch, wine):
    res = OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    seen = record_threads(monkeypatch, "ordstats.core.solver", "equilibrate")
    res.conf_int(method="profile")
    res.nominal_test()
    assert len(seen) > 10 and set(seen) == {1}
    assert blas_threads() == [2]


@pytest.mark.filterwarnings("ignore::ordstats.errors.ConvergenceWarning")
def test_factorisation_on_one_blas_thread_and_pool_bounded(caller_two_threads, monkeypatch):
    sim = ordstats.simulate_ratings(30, 20, rank=1, density=0.5, seed=1)
    stars = pd.DataFrame({"user": sim.row, "item": sim.col, "stars": sim.y + 1})
    model = ordstats.OrdinalFactorization(stars, row="user", col="item", rating="stars", rank=1)
    seen = record_threads(monkeypatch, "ordstats.estimation.sweeps", "part_step")
    expected = model.fit(max_sweeps=5, n_jobs=2)
    assert seen and set(seen) == {1}
    pools: list[int] = []
    sweeps = importlib.import_module("ordstats.estimation.sweeps")
    real_pool = sweeps.ThreadPoolExecutor

    def counting_pool(max_workers: int) -> Any:
        pools.append(max_workers)
        return real_pool(max_workers=max_workers)

    monkeypatch.setattr(sweeps, "ThreadPoolExecutor", counting_pool)
    with ordstats.set_options(threads=1):
        bounded = model.fit(max_sweeps=5, n_jobs=2)  # same two parts, no pool
    assert pools == []
    np.testing.assert_array_equal(bounded.row_coef, expected.row_coef)
    assert blas_threads() == [2]


# -- estimators' n_jobs -------------------------------------------------------------


def test_classifier_n_jobs_bounds_blas_and_keeps_the_estimates(caller_two_threads, monkeypatch):
    pytest.importorskip("sklearn")
    from ordstats.learn import OrdinalClassifier

    X, y = wide_data()
    monkeypatch.setattr(core_threads, "THREADED_WORK", 0.0)
    monkeypatch.setattr(core_threads, "THREADED_WIDTH", 1)
    seen = record_threads(monkeypatch, "ordstats.core.linalg", "_weighted_gram")
    default = OrdinalClassifier().fit(X, y)
    assert 2 in seen
    seen.clear()
    one = OrdinalClassifier(n_jobs=1).fit(X, y)
    assert seen and set(seen) == {1}
    np.testing.assert_array_equal(one.coef_, default.coef_)
    np.testing.assert_array_equal(one.intercept_, default.intercept_)
    assert blas_threads() == [2]


@pytest.mark.parametrize("cls_name", ["OrdinalClassifier", "OrdinalClassifierCV"])
def test_classifier_refuses_bad_n_jobs(cls_name):
    pytest.importorskip("sklearn")
    from ordstats import learn

    X, y = wide_data(n=60)
    with pytest.raises(SpecificationError, match=r"n_jobs=0 is not a number of threads"):
        getattr(learn, cls_name)(n_jobs=0).fit(X, y)
    with pytest.raises(SpecificationError, match=r"n_jobs must be None, a positive whole"):
        getattr(learn, cls_name)(n_jobs="all").fit(X, y)


def test_lightgbm_booster_threads_follow_n_jobs_and_the_option(caller_two_threads, monkeypatch):
    pytest.importorskip("lightgbm")
    from ordstats.learn import OrdinalLGBMClassifier

    X, y = wide_data(n=200)
    seen = record_threads(monkeypatch, "ordstats.learn.boosting", "threshold_step")
    fit = OrdinalLGBMClassifier(n_estimators=6, n_jobs=1).fit(X, y)
    assert fit.booster_.params["num_threads"] == 1
    assert seen and set(seen) == {1}  # BLAS inside the boosting: one thread
    assert OrdinalLGBMClassifier(n_jobs=-1)._threads() == usable_cores()
    assert OrdinalLGBMClassifier()._threads() == usable_cores()
    with ordstats.set_options(threads=1):
        assert OrdinalLGBMClassifier()._threads() == 1
        assert OrdinalLGBMClassifier(n_jobs=2)._threads() == 2
    with pytest.raises(SpecificationError, match=r"n_jobs=0 is not a number of threads"):
        OrdinalLGBMClassifier(n_jobs=0).fit(X, y)
    assert blas_threads() == [2]


def test_xgboost_booster_threads_follow_n_jobs_and_the_option():
    pytest.importorskip("xgboost")
    import json

    from ordstats.learn import OrdinalXGBClassifier

    X, y = wide_data(n=200)
    with ordstats.set_options(threads=1):
        fit = OrdinalXGBClassifier(n_estimators=4).fit(X, y)
    config = json.loads(fit.booster_.save_config())
    assert config["learner"]["generic_param"]["nthread"] == "1"
    assert OrdinalXGBClassifier(n_jobs=2)._threads() == 2
    with pytest.raises(SpecificationError, match=r"n_jobs must be None, a positive whole"):
        OrdinalXGBClassifier(n_jobs=1.5).fit(X, y)


# -- Dask ---------------------------------------------------------------------------


def test_dask_local_pool_bounded_by_the_option(wine):
    dd = pytest.importorskip("dask.dataframe")
    from ordstats.data import distributed

    ddf = dd.from_pandas(wine, npartitions=3)
    tree = ddf.to_delayed()[0]
    with ordstats.set_options(threads=1):
        assert distributed._local_pool(tree) == {"num_workers": 1}
    assert distributed._local_pool(tree) == {"num_workers": usable_cores()}
    import dask

    with dask.config.set(scheduler="sync"):
        assert distributed._local_pool(tree) == {}


def test_a_task_outside_any_fit_runs_on_one_thread_and_restores(caller_two_threads):
    # what a dask.distributed worker process does with each chunk's task
    assert core_threads.single_threaded_call(blas_threads) == [1]
    assert blas_threads() == [2]


def test_dask_fit_agrees_and_restores(caller_two_threads, wine):
    dd = pytest.importorskip("dask.dataframe")
    before = threadpool_info()
    ddf = dd.from_pandas(wine, npartitions=3)
    res = OrdinalModel.from_formula("rating ~ temp + contact", ddf).fit()
    expected = OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    np.testing.assert_allclose(res.params, expected.params, rtol=1e-10)
    assert threadpool_info() == before


def test_the_thread_scope_does_not_hide_the_callers_variables():
    """from_formula reads names from its caller's frame, not from a wrapper's."""
    wine = ordstats.datasets.load("wine")
    local_column = np.arange(len(wine), dtype=float)  # noqa: F841 (read by the formula)
    res = ordstats.OrdinalModel.from_formula("rating ~ temp + local_column", wine).fit()
    assert "local_column" in res.params.index
    assert "data:    wine" in str(res.summary())


# ---------------------------------------------------------------------------
# pyarrow's pool while ordstats reads files in chunks


@pytest.fixture
def parquet_parts(tmp_path, wine) -> list[str]:
    pytest.importorskip("pyarrow")
    paths = []
    for k, start in enumerate(range(0, len(wine), 24)):
        path = tmp_path / f"part{k}.parquet"
        wine.iloc[start : start + 24].to_parquet(path, index=False)
        paths.append(str(path))
    return paths


@pytest.fixture
def arrow_cpu_count() -> Iterator[Callable[[int], None]]:
    """Set the caller's pyarrow CPU pool for the test; the original size restored after."""
    import pyarrow as pa

    original = pa.cpu_count()
    try:
        yield pa.set_cpu_count
    finally:
        pa.set_cpu_count(original)


def record_arrow_pool(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, bool]]:
    """Record pyarrow's pool size and ``use_threads`` at every record batch ordstats converts."""
    import pyarrow as pa

    from ordstats.data import sources

    seen: list[tuple[int, bool]] = []
    original = sources._ARROW_POOL.bounded

    @contextlib.contextmanager
    def recording() -> Iterator[bool]:
        with original() as use_threads:
            seen.append((pa.cpu_count(), use_threads))
            yield use_threads

    monkeypatch.setattr(sources._ARROW_POOL, "bounded", recording)
    return seen


def test_reading_parquet_bounds_pyarrows_pool_and_restores_it(
    parquet_parts, arrow_cpu_count, monkeypatch
):
    import pyarrow as pa

    from ordstats.data.sources import open_source

    arrow_cpu_count(4)
    source = open_source(parquet_parts, chunksize=10)
    inside: list[int] = []
    with ordstats.set_options(threads=2):
        rows = source.map_reduce(lambda chunk: inside.append(pa.cpu_count()) or len(chunk))
    assert rows == 72 and set(inside) == {2}
    assert pa.cpu_count() == 4
    with ordstats.set_options(threads=1):
        source.map_reduce(lambda chunk: inside.append(pa.cpu_count()) or 0)
    assert inside[-1] == 1 and pa.cpu_count() == 4
    source.map_reduce(lambda chunk: inside.append(pa.cpu_count()) or 0)  # the option's default
    assert inside[-1] == min(4, usable_cores()) and pa.cpu_count() == 4


def test_chunked_fit_with_one_thread_reads_without_pyarrows_pool_and_agrees(
    parquet_parts, arrow_cpu_count, monkeypatch, wine
):
    import pyarrow as pa

    arrow_cpu_count(3)
    formula = "rating ~ temp + contact"
    default = OrdinalModel.from_formula(formula, parquet_parts).fit()
    seen = record_arrow_pool(monkeypatch)
    with ordstats.set_options(threads=1):
        single = OrdinalModel.from_formula(formula, parquet_parts).fit()
    assert seen and set(seen) == {(1, False)}  # every pass: a pool of one, not used
    assert pa.cpu_count() == 3
    np.testing.assert_array_equal(single.params, default.params)
    np.testing.assert_array_equal(single.bse, default.bse)
    in_memory = OrdinalModel.from_formula(formula, wine).fit()
    np.testing.assert_allclose(single.params, in_memory.params, rtol=1e-10)


def test_reads_in_several_fits_at_once_use_one_pyarrow_thread(parquet_parts, arrow_cpu_count):
    import pyarrow as pa

    from ordstats.data.sources import open_source

    arrow_cpu_count(2)
    source = open_source(parquet_parts, chunksize=10)
    inside: list[int] = []
    started, release = threading.Barrier(2), threading.Event()

    def other_fit() -> None:  # a second fit in this process, inside its scope
        with core_threads.numeric_threads():
            started.wait()
            release.wait()

    worker = threading.Thread(target=other_fit)
    worker.start()
    try:
        with core_threads.numeric_threads(2):
            started.wait()
            source.map_reduce(lambda chunk: inside.append(pa.cpu_count()) or 0)
    finally:
        release.set()
        worker.join()
    assert set(inside) == {1} and pa.cpu_count() == 2


# ---------------------------------------------------------------------------
# walk of issue 24: posterior draws (Bayesian) run under the thread rule too


def test_posterior_draws_run_on_one_blas_thread_and_restore(caller_two_threads, monkeypatch, wine):
    mode = OrdinalModel.from_formula("rating ~ temp + contact", wine).fit(prior="default")
    seen = record_threads(monkeypatch, "ordstats.results.posterior", "adaptive_importance")
    before = threadpool_info()
    default = mode.posterior(200, seed=1)
    assert seen and set(seen) == {1}  # the draws' log-likelihoods: thin products
    assert threadpool_info() == before
    with threadpool_limits(limits=1, user_api="blas"):
        limited = mode.posterior(200, seed=1)
    np.testing.assert_array_equal(limited.mean(), default.mean())
    np.testing.assert_array_equal(limited.std(), default.std())


def _warned_here(fit: Callable[[], Any], category: type[Warning]) -> list[str]:
    """The files that the warnings of ``category`` raised by ``fit()`` point at."""
    with pytest.warns(category) as record:
        fit()
    return [w.filename for w in record if issubclass(w.category, category)]


@pytest.mark.parametrize(
    "case",
    [
        "fit maxiter",
        "separation",
        "missing rows",
        "factorisation",
        "fit_regularized maxiter",
        "posterior k-hat",
    ],
)
def test_warnings_point_at_the_callers_line_not_the_thread_scope(case, wine):
    """The thread scope is a with-block in the public methods: a decorator's frame
    made every warning of fit(), OrdinalModel() and the factorisation's fit() point
    at contextlib.py instead of the user's line."""
    from ordstats.errors import ConvergenceWarning, MissingDataWarning, SeparationWarning
    from ordstats.results.posterior import PosteriorWarning

    X, _ = wide_data(n=60, p=2)
    separated = (X[:, 0] > 0).astype(int) + (X[:, 0] > 1)
    missing = X.copy()
    missing[0, 0] = np.nan
    sim = ordstats.simulate_ratings(30, 20, rank=1, density=0.5, seed=1)
    stars = pd.DataFrame({"user": sim.row, "item": sim.col, "stars": sim.y + 1})
    calls = {
        "fit maxiter": (
            lambda: OrdinalModel.from_formula("rating ~ temp", wine).fit(maxiter=1),
            ConvergenceWarning,
        ),
        "separation": (lambda: OrdinalModel(separated, X).fit(), SeparationWarning),
        "fit_regularized maxiter": (
            lambda: OrdinalModel.from_formula("rating ~ temp + contact", wine).fit_regularized(
                alpha=0.1, maxiter=1
            ),
            ConvergenceWarning,
        ),
        "posterior k-hat": (
            lambda: (
                OrdinalModel.from_formula("rating ~ temp + contact", wine)
                .fit(prior="default")
                .posterior(draws=10, seed=1)
            ),
            PosteriorWarning,
        ),
        "missing rows": (lambda: OrdinalModel(separated, missing), MissingDataWarning),
        "factorisation": (
            lambda: ordstats.OrdinalFactorization(
                stars, row="user", col="item", rating="stars", rank=1
            ).fit(max_sweeps=1),
            ConvergenceWarning,
        ),
    }
    fit, category = calls[case]
    assert set(_warned_here(fit, category)) == {__file__}


@pytest.mark.parametrize("kind", ["results", "mixed results", "classifier"])
def test_predictions_run_on_one_blas_thread_and_restore(
    kind, caller_two_threads, monkeypatch, wine
):
    """Predictions are thin products (``X @ beta``) too: outside a fit they ran on the
    caller's BLAS threads (predict_proba at 10^5 x 20 twice as slow under load, and in
    the scoring step of every cross-validation fold)."""
    X, y = wide_data(n=200, p=3)
    if kind == "results":
        res = OrdinalModel(y, X).fit()
        seen = record_threads(monkeypatch, "ordstats.results.fitted", "_mask_crossing")
        predict: Callable[[], Any] = lambda: res.predict(X)  # noqa: E731
    elif kind == "mixed results":
        mixed = OrdinalModel.from_formula("rating ~ temp + (1|judge)", wine).fit()
        seen = record_threads(monkeypatch, "ordstats.results.mixed", "prediction_rows")
        predict = lambda: mixed.predict(wine)  # noqa: E731
    else:
        pytest.importorskip("sklearn")
        from ordstats.learn import OrdinalClassifier

        clf = OrdinalClassifier().fit(X, y)
        seen = record_threads(monkeypatch, "ordstats.learn.estimator", "threshold_matrix")
        predict = lambda: (clf.predict_proba(X), clf.predict(X), clf.score(X, y))  # noqa: E731
    before = threadpool_info()
    default = predict()
    assert seen and set(seen) == {1}
    assert threadpool_info() == before
    with threadpool_limits(limits=1, user_api="blas"):
        limited = predict()
    pairs = zip(default, limited, strict=True) if kind == "classifier" else [(default, limited)]
    for a, b in pairs:
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.filterwarnings("ignore::ordstats.errors.ConvergenceWarning")
def test_profile_path_runs_on_one_blas_thread_and_restores(caller_two_threads, monkeypatch, wine):
    """Between its refits the profile evaluates the likelihood along the path: those
    thin products ran on the caller's BLAS threads."""
    res = OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    seen = record_threads(monkeypatch, "ordstats.results.profile", "_warn_profile")
    before = threadpool_info()
    res.conf_int(method="profile")
    res.profile("temp[T.warm]", n_points=5)
    assert seen and set(seen) == {1}
    assert threadpool_info() == before


@pytest.mark.parametrize(
    "kind",
    ["avg_predictions", "avg_slopes", "comparisons", "emmeans", "get_margeff", "brant_test"],
)
def test_results_methods_run_on_one_blas_thread_and_restore(
    kind, caller_two_threads, monkeypatch, wine
):
    """The margins verbs, emmeans, get_margeff and Brant's test evaluate the model's
    probabilities by the same thin products as a fit: the walk of issue 24 counted
    their calls on the caller's two BLAS threads."""
    formula = "rating ~ temp + contact"
    data = wine
    if kind == "brant_test":  # wine's binary model of rating > 1 is separated
        data = ordstats.datasets.load("housing")
        formula = "Sat ~ Infl + Type + Cont"
    if kind == "avg_slopes":  # a numeric regressor
        data = wine.assign(x=np.cos(np.arange(len(wine))))
        formula = "rating ~ temp + x"
    res = OrdinalModel.from_formula(formula, data).fit()
    watched = {
        "avg_predictions": ("ordstats.results.margins.verbs", "_evaluate"),
        "avg_slopes": ("ordstats.results.margins.verbs", "_evaluate"),
        "comparisons": ("ordstats.results.margins.verbs", "_evaluate"),
        "emmeans": ("ordstats.results.margins.emmeans", "emmeans"),
        "get_margeff": ("ordstats.results.marginal_effects", "_regressors"),
        "brant_test": ("ordstats.results.goodness", "brant_test"),
    }
    seen = record_threads(monkeypatch, *watched[kind])
    call = {
        "avg_predictions": lambda: pd.DataFrame(res.avg_predictions()),
        "avg_slopes": lambda: pd.DataFrame(res.avg_slopes(variables="x")),
        "comparisons": lambda: pd.DataFrame(res.comparisons(variables="contact")),
        "emmeans": lambda: pd.DataFrame(
            {"emmean": (grid := res.emmeans("temp")).values, "se": np.sqrt(np.diag(grid.vcov()))}
        ),
        "get_margeff": lambda: res.get_margeff().summary_frame(),
        "brant_test": lambda: res.brant_test(),
    }[kind]
    before = threadpool_info()
    default = call()
    assert seen and set(seen) == {1}
    assert threadpool_info() == before
    with threadpool_limits(limits=1, user_api="blas"):
        limited = call()
    pd.testing.assert_frame_equal(default, limited)
