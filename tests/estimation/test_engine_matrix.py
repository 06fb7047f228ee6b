"""Every results method on every fitting path: the in-memory numbers, or a clear refusal.

One model of each kind (weights and an offset; nominal and scale effects;
flexible links; equidistant, symmetric and fixed thresholds; a cluster
covariance) is fitted in memory, in chunks from a Parquet directory (several
chunks per file) and from a Dask DataFrame (synchronous scheduler), and each
results method of the chunked and Dask fits is compared with the in-memory
fit's (1e-8 relative).  tests/spark/test_spark_matrix.py does the same on Spark.
"""

from __future__ import annotations

import pickle
import re
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats.errors import (
    CollinearityWarning,
    ConvergenceWarning,
    MissingDataWarning,
    OrdstatsError,
)
from tests._chunk_data import ratings, write_parquet

FORMULA = "y ~ x1 + x2 + f + g"

#: the model kinds: from_formula options (and fit options under "fit")
KINDS: dict[str, dict[str, Any]] = {
    "weights and offset": {"weights": "w", "offset": "off"},
    "nominal": {"weights": "w", "nominal": "~ g"},
    "scale": {"weights": "w", "scale": "~ x1"},
    "nominal and scale": {"nominal": "~ g", "scale": "~ x2"},
    "aranda-ordaz": {"weights": "w", "link": "aranda-ordaz"},
    "log-gamma with scale": {"link": "log-gamma", "scale": "~ x1"},
    "equidistant": {"weights": "w", "threshold": "equidistant"},
    "symmetric": {"threshold": "symmetric", "offset": "off"},
    "fixed thresholds": {"weights": "w", "threshold": [-1.5, 0.0, 1.0, 2.5]},
    "cluster covariance": {
        "weights": "w",
        "fit": {"cov_type": "cluster", "cov_kwds": {"groups": "school"}},
    },
}

ENGINES = ("chunked", "dask")


def matrix_frame() -> pd.DataFrame:
    """``ratings`` with an offset, a cluster column and ``g`` as text (as Spark holds it)."""
    frame = ratings(1200, seed=3)
    rng = np.random.default_rng(4)
    frame["off"] = rng.normal(scale=0.2, size=len(frame))
    frame["school"] = (np.arange(len(frame)) * 7 % 41).astype(float)
    frame["g"] = frame["g"].astype(object)
    return frame


def new_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """Five complete rows that lack the factor level ``e`` (comparisons must still show it)."""
    return frame.dropna().iloc[[0, 300, 600, 900, 1100]].copy()


def fit_kind(data: Any, kind: str, **extra: Any) -> Any:
    """The fit of ``kind`` (warnings about the rows with missing values silenced)."""
    options = dict(KINDS[kind])
    fit_options = options.pop("fit", {})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingDataWarning)
        # g in the location and nominal formulas: its location columns dropped, as R's clm
        warnings.simplefilter("ignore", CollinearityWarning)
        model = ordstats.OrdinalModel.from_formula(FORMULA, data, **options, **extra)
        return model.fit(**fit_options)


def as_numbers(value: Any) -> Any:
    """A method's answer as a pandas object or array to compare (lazy results computed)."""
    if hasattr(value, "compute"):
        value = value.compute()
    if isinstance(value, pd.DataFrame):
        return value.apply(pd.to_numeric, errors="coerce")
    if isinstance(value, pd.Series):
        return pd.to_numeric(value, errors="coerce")
    return np.asarray(value, dtype=float)


def assert_same_numbers(got: Any, expected: Any, what: str, rtol: float = 1e-8) -> None:
    """Equal up to ``rtol``; a per-row answer over every row of the source is NaN off the fit."""
    got, expected = as_numbers(got), as_numbers(expected)
    if isinstance(expected, (pd.Series, pd.DataFrame)):
        if len(got) > len(expected):  # every row of the source: NaN where a row was not used
            assert got.drop(expected.index).isna().to_numpy().all(), what
            got = got.loc[expected.index]
        assert got.shape == expected.shape, f"{what}: shape {got.shape} vs {expected.shape}"
        if isinstance(expected, pd.DataFrame):
            assert list(map(str, got.columns)) == list(map(str, expected.columns)), what
    np.testing.assert_allclose(
        np.asarray(got, dtype=float),
        np.asarray(expected, dtype=float),
        rtol=rtol,
        atol=1e-12,
        err_msg=what,
    )


def _contrast(table: Any) -> Any:
    out = pd.DataFrame(table)
    return out.select_dtypes("number").assign(contrast=out["contrast"].astype(str).factorize()[0])


def _margeff(effects: Any) -> np.ndarray:
    return np.concatenate([np.ravel(effects.margeff), np.ravel(effects.margeff_se)])


def _test_numbers(result: Any) -> np.ndarray:
    return np.concatenate(
        [
            np.ravel(np.asarray(getattr(result, name), dtype=float))
            for name in ("statistic", "pvalue")
        ]
    )


#: results methods without refits: name -> function of (result, new rows)
METHODS: dict[str, Callable[[Any, pd.DataFrame], Any]] = {
    "params": lambda r, new: r.params,
    "bse": lambda r, new: r.bse,
    "tvalues and pvalues": lambda r, new: pd.concat([r.tvalues, r.pvalues], axis=1),
    "cov_params": lambda r, new: r.cov_params(),
    "likelihoods and sizes": lambda r, new: [
        r.llf,
        r.llnull,
        r.aic,
        r.bic,
        r.df_model,
        r.df_resid,
        r.nobs,
        r.n_rows,
        r.niter,
    ],
    "thresholds": lambda r, new: r.thresholds,
    "conf_int": lambda r, new: r.conf_int(),
    "predict prob": lambda r, new: r.predict(new),
    "predict cumprob": lambda r, new: r.predict(new, which="cumprob"),
    "predict class": lambda r, new: r.predict(new, which="class").astype(float),
    "predict expected": lambda r, new: r.predict(new, which="expected"),
    "predict linear": lambda r, new: r.predict(new, which="linear"),
    "predict fitted rows": lambda r, new: r.predict(),
    "fittedvalues": lambda r, new: r.fittedvalues,
    "get_prediction": lambda r, new: r.get_prediction(new).summary_frame(),
    "get_margeff": lambda r, new: _margeff(r.get_margeff()),
    "get_margeff at mean": lambda r, new: _margeff(r.get_margeff(at="mean", dummy=True)),
    "HC0": lambda r, new: r.get_robustcov_results("HC0").cov_params(),
    "HC1": lambda r, new: r.get_robustcov_results("HC1").bse,
    "cluster": lambda r, new: r.get_robustcov_results("cluster", {"groups": "school"}).bse,
    "expected_covariance": lambda r, new: r.expected_covariance.matrix,
    "wald_test": lambda r, new: _test_numbers(r.wald_test("x1 = x2", scalar=True)),
    "t_test": lambda r, new: np.ravel(r.t_test("x1 - x2 = 0").effect),
    "wald_test_terms": lambda r, new: r.wald_test_terms(),
    "resid_prob": lambda r, new: r.resid_prob,
    "pseudo_rsquared": lambda r, new: r.pseudo_rsquared,
    "llr": lambda r, new: [r.prsquared, r.llr, r.llr_pvalue],
    "avg_predictions": lambda r, new: r.avg_predictions(by="g").select_dtypes("number"),
    "avg_slopes": lambda r, new: r.avg_slopes(variables="x1").select_dtypes("number"),
    "comparisons of new rows": lambda r, new: _contrast(
        r.comparisons(new, variables={"f": "reference", "x1": "sd"})
    ),
    "slopes of new rows": lambda r, new: _contrast(r.slopes(new)),
    "hypotheses": lambda r, new: r.hypotheses("x1 = x2").select_dtypes("number"),
    "pickled": lambda r, new: pickle.loads(pickle.dumps(r)).predict(new),
}


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return matrix_frame()


@pytest.fixture(scope="module")
def parquet(tmp_path_factory, frame) -> str:
    root = tmp_path_factory.mktemp("matrix") / "parquet"
    write_parquet(frame, root, n_files=3)
    return str(root)


@pytest.fixture(scope="module")
def dask_frame(frame):
    dd = pytest.importorskip("dask.dataframe")
    return dd.from_pandas(frame, npartitions=4)


@pytest.fixture(scope="module")
def synchronous():
    dask = pytest.importorskip("dask")
    with dask.config.set(scheduler="synchronous"):
        yield


def _engine_fit(engine: str, kind: str, parquet: str, dask_frame: Any) -> Any:
    if engine == "chunked":
        return fit_kind(parquet, kind, chunksize=150)  # 3 files of 400 rows: 9 chunks
    return fit_kind(dask_frame, kind)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("kind", KINDS)
def test_results_methods_equal_in_memory(frame, parquet, dask_frame, synchronous, kind, engine):
    memory = fit_kind(frame, kind)
    other = _engine_fit(engine, kind, parquet, dask_frame)
    new = new_rows(frame)
    assert summary_lines(other) == summary_lines(memory)
    differ = []
    for name, method in METHODS.items():
        try:
            with warnings.catch_warnings():  # predictions of rows with missing values
                warnings.simplefilter("ignore", MissingDataWarning)
                expected = method(memory, new)
        except OrdstatsError as refused:  # refused in memory: refused alike
            with pytest.raises(type(refused), match=r"\w"):
                method(other, new)
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MissingDataWarning)
                assert_same_numbers(method(other, new), expected, name)
        except AssertionError as exc:
            differ.append(f"{name}: {exc}")
    assert not differ, "\n".join(differ)


def summary_lines(res: Any) -> list[str]:
    """The summary's tables without the data's name and max|grad| (zero up to rounding)."""
    text = str(res.summary())
    return [
        line
        for line in text.splitlines()
        if not line.startswith(("data:", "Date", "Time")) and "max|grad|" not in line
    ]


# -- refits (term tests, profiles): a few kinds, each refit costing a fit ----------------


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("kind", ["weights and offset", "scale", "fixed thresholds"])
def test_term_tests_and_profiles_equal_in_memory(
    frame, parquet, dask_frame, synchronous, kind, engine
):
    memory = fit_kind(frame, kind)
    other = _engine_fit(engine, kind, parquet, dask_frame)
    for method in ("nominal_test", "scale_test", "brant_test"):
        try:
            expected, expected_warnings = _recorded(getattr(memory, method))
        except OrdstatsError as refused:
            with pytest.raises(type(refused), match=re.escape(str(refused))):
                getattr(other, method)()
            continue
        got, got_warnings = _recorded(getattr(other, method))
        assert got_warnings == expected_warnings  # e.g. a refit that failed: its row NA
        pd.testing.assert_frame_equal(got, expected, rtol=1e-7)
    # the profile's curve is made of refits, each to the solver's tolerance
    np.testing.assert_allclose(
        other.conf_int(method="profile", which=["x1"]),
        memory.conf_int(method="profile", which=["x1"]),
        rtol=1e-6,
    )


def _recorded(method: Callable[[], Any]) -> tuple[Any, list[str]]:
    """The method's result and the messages of the warnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = method()
    return result, [str(w.message) for w in caught]


# -- what was broken ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def plain_fits(frame, parquet):
    return fit_kind(frame, "weights and offset"), fit_kind(
        parquet, "weights and offset", chunksize=150
    )


def test_comparisons_of_new_rows_take_the_fits_levels_and_spread(frame, plain_fits):
    """Before: the levels and the SD of newdata's columns (75 rows instead of 100, and a
    'sd' contrast 0.025 off), as the chunked fit has no estimation rows in memory."""
    memory, chunked = plain_fits
    new = new_rows(frame)
    assert "e" not in set(new["f"])
    for variables in ("f", {"x1": "sd"}, {"x2": "iqr", "f": "pairwise"}):
        expected = memory.comparisons(new, variables=variables)
        got = chunked.comparisons(new, variables=variables)
        assert list(got["contrast"].astype(str)) == list(expected["contrast"].astype(str))
        np.testing.assert_allclose(got["estimate"], expected["estimate"], rtol=1e-8, atol=1e-14)
        np.testing.assert_allclose(got["std_error"], expected["std_error"], rtol=1e-8)
    slopes = chunked.slopes(new, variables="f")
    assert set(slopes["contrast"].astype(str)) == {"b - a", "c - a", "d - a", "e - a"}


@pytest.mark.parametrize("how", ["pickled", "remove_data"])
def test_comparisons_without_the_rows_keep_the_levels_and_refuse_the_spread(frame, plain_fits, how):
    memory = plain_fits[0]
    without = pickle.loads(pickle.dumps(memory))
    if how == "remove_data":
        without.remove_data()
    new = new_rows(frame)
    pd.testing.assert_frame_equal(
        pd.DataFrame(without.comparisons(new, variables="f")),
        pd.DataFrame(memory.comparisons(new, variables="f")),
    )
    with pytest.raises(OrdstatsError, match=r"\{'x1': 'sd'\} are statistics of a column"):
        without.comparisons(new, variables={"x1": "sd"})


def test_thresholds_of_a_nominal_fit_in_chunks(frame, parquet):
    """Before: NotFittedError 'a chunked model keeps no rows in memory'; so remove_data too."""
    memory = fit_kind(frame, "nominal")
    chunked = fit_kind(parquet, "nominal", chunksize=150)
    assert memory.thresholds.index.nlevels == 2  # one block per pattern of g
    pd.testing.assert_frame_equal(chunked.thresholds, memory.thresholds, rtol=1e-8)
    chunked.remove_data()
    new = new_rows(frame)
    np.testing.assert_allclose(chunked.predict(new), memory.predict(new), rtol=1e-8)


@pytest.mark.parametrize("engine", ["memory", "chunked"])
def test_the_log_gamma_null_model_with_an_offset_converges_in_both_engines(frame, parquet, engine):
    """log-gamma with an offset: lambda ran off without predictors while the far
    tails underflowed (P(a, v) = 0 for a v beyond the double range), so llnull was
    the last iterate, different in memory (-1856.24819) and in chunks (-1856.24954).
    With the tails in log space the thresholds-only fit converges, to a higher
    log-likelihood, the same in both engines, and no warning is due."""
    data = frame if engine == "memory" else parquet
    extra = {} if engine == "memory" else {"chunksize": 150}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingDataWarning)
        res = ordstats.OrdinalModel.from_formula(
            FORMULA, data, link="log-gamma", offset="off", **extra
        ).fit()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        assert res.llnull == pytest.approx(-1856.2466353490875, rel=1e-9)
