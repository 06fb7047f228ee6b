"""Nominal and scale effects, flexible links and every threshold structure read in chunks.

Each fit of files read in chunks (Parquet, CSV) or of a Dask DataFrame equals
the in-memory fit of the same rows: estimates, standard errors, covariance,
log-likelihoods and iterations.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats.errors import CollinearityWarning, MissingDataWarning
from ordstats.estimation.evaluators import ChunkedEvaluator
from tests._chunk_data import assert_same_fit, write_parquet

WINE = "rating ~ temp + contact"

#: one model option per case; every case runs in memory and in chunks
WINE_CASES = {
    "nominal": {"nominal": "~ contact"},
    "scale": {"scale": "~ temp"},
    "nominal and scale": {"nominal": "~ contact", "scale": "~ temp"},
    "aranda-ordaz": {"link": "aranda-ordaz"},
    "log-gamma with scale": {"link": "log-gamma", "scale": "~ contact"},
    "equidistant": {"threshold": "equidistant"},
    "symmetric": {"threshold": "symmetric"},
    "symmetric2": {"threshold": "symmetric2"},
    "fixed thresholds": {"threshold": [-1.0, 1.0, 3.0, 5.0]},
    "equidistant with nominal": {"threshold": "equidistant", "nominal": "~ contact"},
}


def _wine_cases(*names):
    return [pytest.param(WINE_CASES[name], id=name) for name in names]


def _quiet_fit(formula, data, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CollinearityWarning)
        model = ordstats.OrdinalModel.from_formula(formula, data, **kw)
    return model, model.fit()


@pytest.fixture(scope="module")
def wine_files(tmp_path_factory):
    wine = ordstats.datasets.load("wine")
    root = tmp_path_factory.mktemp("wine")
    write_parquet(wine, root / "parquet", n_files=3)
    wine.to_csv(root / "wine.csv", index=False)
    return wine, root


@pytest.mark.parametrize("options", WINE_CASES.values(), ids=WINE_CASES.keys())
def test_wine_parquet_in_chunks_equals_in_memory(wine_files, options):
    wine, root = wine_files
    _, memory = _quiet_fit(WINE, wine, **options)
    model, chunked = _quiet_fit(WINE, str(root / "parquet"), chunksize=10, **options)
    assert isinstance(model.evaluator, ChunkedEvaluator)
    assert_same_fit(chunked, memory)
    assert [str(t) for t in chunked.summary().tables[1:]] == [
        str(t) for t in memory.summary().tables[1:]
    ]


@pytest.mark.parametrize(
    "options", _wine_cases("nominal and scale", "aranda-ordaz", "fixed thresholds")
)
def test_wine_csv_in_chunks_equals_in_memory(wine_files, options):
    _, root = wine_files
    # the file read by pandas in memory: the same column types as the chunked reader's
    _, memory = _quiet_fit(WINE, pd.read_csv(root / "wine.csv"), **options)
    _, chunked = _quiet_fit(WINE, str(root / "wine.csv"), chunksize=16, **options)
    assert_same_fit(chunked, memory)


def test_flexible_link_estimates_its_parameter_in_chunks(wine_files):
    wine, root = wine_files
    _, memory = _quiet_fit(WINE, wine, link="aranda-ordaz")
    _, chunked = _quiet_fit(WINE, str(root / "parquet"), chunksize=10, link="aranda-ordaz")
    assert chunked.params.index[-1] == "lambda"
    assert chunked.model.link.name == "aranda-ordaz"
    prob = chunked.predict(wine.iloc[:6])
    np.testing.assert_allclose(prob, memory.predict(wine.iloc[:6]), rtol=1e-9)


@pytest.mark.parametrize(
    "options", _wine_cases("nominal and scale", "log-gamma with scale", "fixed thresholds")
)
def test_results_methods_of_chunks_equal_in_memory(wine_files, options):
    wine, root = wine_files
    _, memory = _quiet_fit(WINE, wine, **options)
    _, chunked = _quiet_fit(WINE, str(root / "parquet"), chunksize=25, **options)
    np.testing.assert_allclose(chunked.conf_int(), memory.conf_int(), rtol=1e-8)
    np.testing.assert_allclose(chunked.resid_prob, memory.resid_prob, atol=1e-12)
    np.testing.assert_allclose(chunked.pseudo_rsquared, memory.pseudo_rsquared, atol=1e-12)
    np.testing.assert_allclose(chunked.predict(), memory.predict(wine), atol=1e-12)


def test_nominal_and_scale_predictions_over_the_files_equal_in_memory(wine_files):
    wine, root = wine_files
    options = WINE_CASES["nominal and scale"]
    _, memory = _quiet_fit(WINE, wine, **options)
    _, chunked = _quiet_fit(WINE, str(root / "parquet"), chunksize=10, **options)
    for which in ("prob", "cumprob", "linear"):
        got = pd.DataFrame(chunked.predict(which=which)).reset_index(drop=True)
        expected = pd.DataFrame(memory.predict(wine, which=which)).reset_index(drop=True)
        pd.testing.assert_frame_equal(got, expected, rtol=1e-9)


def test_housing_weights_scale_and_nominal_in_chunks(tmp_path):
    housing = ordstats.datasets.load("housing")
    write_parquet(housing, tmp_path / "housing", n_files=4)
    formula = "Sat ~ Infl + Type + Cont"
    options = {"weights": "Freq", "nominal": "~ Cont", "scale": "~ Type"}
    _, memory = _quiet_fit(formula, housing, **options)
    _, chunked = _quiet_fit(formula, str(tmp_path / "housing"), chunksize=7, **options)
    assert chunked.nobs == 1681
    assert_same_fit(chunked, memory)


SOUP_CASES = {
    "nominal, aranda-ordaz": (
        "SURENESS ~ PRODID + DAY",
        {"nominal": "~ DAY", "link": "aranda-ordaz"},
        4,
    ),
    "scale, log-gamma": ("SURENESS ~ PRODID", {"scale": "~ PROD", "link": "log-gamma"}, 3),
}


@pytest.mark.parametrize(
    ("formula", "options", "npartitions"), SOUP_CASES.values(), ids=SOUP_CASES.keys()
)
def test_soup_on_dask_equals_in_memory(formula, options, npartitions):
    dd = pytest.importorskip("dask.dataframe")
    dask = pytest.importorskip("dask")
    soup = ordstats.datasets.load("soup")
    _, memory = _quiet_fit(formula, soup, **options)
    with dask.config.set(scheduler="threads"):
        ddf = dd.from_pandas(soup, npartitions=npartitions)
        _, chunked = _quiet_fit(formula, ddf, **options)
    assert_same_fit(chunked, memory)


def test_aliased_nominal_and_scale_columns_are_dropped_as_in_memory(wine_files):
    wine, root = wine_files
    data = wine.assign(c2=(wine["contact"] == "yes").astype(float))
    write_parquet(data, root / "aliased", n_files=2)
    options = {"nominal": "~ contact + c2", "scale": "~ temp + c2"}
    with pytest.warns(CollinearityWarning) as in_memory:
        memory = ordstats.OrdinalModel.from_formula(WINE, data, **options).fit()
    with pytest.warns(CollinearityWarning) as in_chunks:
        model = ordstats.OrdinalModel.from_formula(
            WINE, str(root / "aliased"), chunksize=9, **options
        )
    assert [str(w.message) for w in in_chunks] == [str(w.message) for w in in_memory]
    assert model.nominal_names == ["contact[T.yes]"] and model.exog_names == ["temp[T.warm]"]
    assert_same_fit(model.fit(), memory)


def test_rows_with_non_finite_scale_terms_are_dropped_and_reported(tmp_path):
    rng = np.random.default_rng(3)
    n = 400
    x = rng.normal(size=n)
    z = rng.exponential(size=n)
    z[:7] = 0.0  # log(0): these rows cannot be used
    latent = x + np.exp(0.3 * np.log(np.where(z > 0, z, 1.0))) * rng.logistic(size=n)
    frame = pd.DataFrame({"y": np.digitize(latent, [-1.0, 0.5, 2.0]), "x": x, "z": z})
    write_parquet(frame, tmp_path / "scaled", n_files=3)
    options = {"scale": "~ np.log(z)", "context": {"np": np}}
    with pytest.warns(MissingDataWarning, match="scale: np.log\\(z\\)"):
        memory = ordstats.OrdinalModel.from_formula("y ~ x", frame, **options).fit()
    with pytest.warns(MissingDataWarning, match="scale: np.log\\(z\\)"):
        model = ordstats.OrdinalModel.from_formula(
            "y ~ x", str(tmp_path / "scaled"), chunksize=50, **options
        )
    assert_same_fit(model.fit(), memory)
    assert model.n_rows == n - 7


TERM_TEST_CASES = {
    "location only": {},
    "nominal": {"nominal": "~ contact"},
    "scale": {"scale": "~ temp"},
    "aranda-ordaz": {"link": "aranda-ordaz"},
}


@pytest.mark.parametrize("options", TERM_TEST_CASES.values(), ids=TERM_TEST_CASES.keys())
def test_nominal_and_scale_tests_of_files_equal_in_memory(wine_files, options):
    wine, root = wine_files
    _, memory = _quiet_fit(WINE, wine, **options)
    _, chunked = _quiet_fit(WINE, str(root / "parquet"), chunksize=30, **options)
    for method in ("nominal_test", "scale_test"):
        expected, expected_warnings = _recorded(getattr(memory, method))
        got, got_warnings = _recorded(getattr(chunked, method))
        assert len(got) >= 2 and got_warnings == expected_warnings
        pd.testing.assert_frame_equal(got, expected, rtol=1e-8)


def _recorded(method):
    """The method's result and the messages of the warnings it gave (e.g. a relaxed fit's)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = method()
    return result, [str(w.message) for w in caught]


def test_term_tests_on_dask_equal_in_memory():
    dd = pytest.importorskip("dask.dataframe")
    dask = pytest.importorskip("dask")
    housing = ordstats.datasets.load("housing")
    formula = "Sat ~ Infl + Type + Cont"
    _, memory = _quiet_fit(formula, housing, weights="Freq")
    with dask.config.set(scheduler="threads"):
        _, chunked = _quiet_fit(formula, dd.from_pandas(housing, npartitions=3), weights="Freq")
        for method in ("nominal_test", "scale_test"):
            got = getattr(chunked, method)()
            pd.testing.assert_frame_equal(got, getattr(memory, method)(), rtol=1e-8)


def _same_brant(chunked, memory):
    expected, expected_warnings = _recorded(memory.brant_test)
    got, got_warnings = _recorded(chunked.brant_test)
    # the same binary models are unreliable (said as "is separated" or "did not
    # converge": the separation check runs only where a fit shows signs of it)
    assert [_which_model(m) for m in got_warnings] == [_which_model(m) for m in expected_warnings]
    pd.testing.assert_frame_equal(got, expected, rtol=1e-8)
    binary = pd.DataFrame(got.attrs["binary_params"])
    expected_binary = pd.DataFrame(expected.attrs["binary_params"])
    pd.testing.assert_frame_equal(binary, expected_binary, rtol=1e-8)


def _which_model(message):
    return message.split(" is separated")[0].split(" did not converge")[0]


def test_brant_test_of_weighted_files_equals_in_memory(tmp_path):
    housing = ordstats.datasets.load("housing")
    write_parquet(housing, tmp_path / "housing", n_files=3)
    formula = "Sat ~ Infl + Type + Cont"
    _, memory = _quiet_fit(formula, housing, weights="Freq")
    _, chunked = _quiet_fit(formula, str(tmp_path / "housing"), chunksize=10, weights="Freq")
    _same_brant(chunked, memory)
    assert chunked.brant_test().loc["All", "df"] == 6  # (K - 2) p = 1 x 6


def test_brant_test_on_dask_equals_in_memory():
    dd = pytest.importorskip("dask.dataframe")
    dask = pytest.importorskip("dask")
    housing = ordstats.datasets.load("housing")
    formula = "Sat ~ Infl + Type + Cont"
    options = {"weights": "Freq", "link": "probit"}
    _, memory = _quiet_fit(formula, housing, **options)
    with dask.config.set(scheduler="threads"):
        _, chunked = _quiet_fit(formula, dd.from_pandas(housing, npartitions=4), **options)
        _same_brant(chunked, memory)
