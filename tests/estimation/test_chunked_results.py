"""Every results method on a fit read in chunks: the in-memory numbers, or a clear error."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats.errors import MissingDataWarning, OrdstatsError, SpecificationError
from tests._chunk_data import FORMULA, ratings

RTOL = 1e-8


@pytest.fixture(scope="module")
def frame():
    return ratings(2500, seed=11)


def _fit(frame, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingDataWarning)
        return ordstats.OrdinalModel.from_formula(FORMULA, frame, **kw).fit()


@pytest.fixture(scope="module")
def memory(frame):
    return _fit(frame)


@pytest.fixture(scope="module")
def chunked(frame):
    return _fit(frame, chunksize=400)


def test_profile_intervals_and_curve_equal_in_memory(memory, chunked):
    np.testing.assert_allclose(
        chunked.conf_int(method="profile", which=["x1", "1|2"]),
        memory.conf_int(method="profile", which=["x1", "1|2"]),
        rtol=1e-6,
    )
    curve, expected = chunked.profile("x1", n_points=5), memory.profile("x1", n_points=5)
    assert np.all(curve["llf"] < chunked.llf + 1e-9)
    np.testing.assert_allclose(curve["llf"], expected["llf"], rtol=1e-8)


@pytest.mark.parametrize("scale", [1e12, 1e-12])
def test_profile_of_a_predictor_far_from_unit_size_equals_in_memory(frame, scale):
    # the profile's steps follow the slope's units on every path (it once stopped
    # 0.5% short in chunks at 1e12, where memory rescaled the column)
    data = frame.assign(x1=frame["x1"] * scale)
    memory, chunked = _fit(data), _fit(data, chunksize=400)
    np.testing.assert_allclose(
        chunked.conf_int(method="profile", which=["x1"]),
        memory.conf_int(method="profile", which=["x1"]),
        rtol=1e-6,
    )


def test_profile_odds_ratios_are_finite(chunked, memory):
    got = chunked.odds_ratios(method="profile")
    assert np.all(np.isfinite(got.to_numpy()))
    np.testing.assert_allclose(got, memory.odds_ratios(method="profile"), rtol=1e-6)


def test_pseudo_rsquared_streams(memory, chunked):
    np.testing.assert_allclose(chunked.pseudo_rsquared, memory.pseudo_rsquared, rtol=RTOL)


def test_probability_residuals_stream_the_fitted_rows(frame, memory, chunked):
    """The rows of the in-memory fit (before: every row, NaN where one was not used)."""
    got = chunked.resid_prob
    used = memory.resid_prob
    assert got.name == "resid_prob" and len(used) < len(frame)
    pd.testing.assert_index_equal(got.index, used.index)
    np.testing.assert_allclose(got, used, rtol=RTOL, atol=1e-12)


def test_prediction_standard_errors_for_new_rows(frame, memory, chunked):
    new = frame.dropna().head(6)
    np.testing.assert_allclose(
        chunked.get_prediction(new).summary_frame(),
        memory.get_prediction(new).summary_frame(),
        rtol=1e-7,
    )
    # without newdata: the fitted rows, as predict() (tests/results/test_prediction_se_chunks.py)
    fitted = chunked.get_prediction()
    expected = memory.get_prediction().predicted
    pd.testing.assert_index_equal(fitted.predicted.index, expected.index)
    np.testing.assert_allclose(fitted.predicted, expected, rtol=1e-7)


def test_link_comparison_and_vuong_equal_in_memory(frame):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingDataWarning)
        links = ["logit", "probit", "cloglog"]
        memory = ordstats.compare_links(FORMULA, frame, links=links)
        chunked = ordstats.compare_links(FORMULA, frame, links=links, chunksize=700)
    np.testing.assert_allclose(chunked.table["logLik"], memory.table["logLik"], rtol=RTOL)
    np.testing.assert_allclose(chunked.vuong["z"], memory.vuong["z"], rtol=1e-7)
    # the nested LR tests against the flexible links (before: skipped with a note for
    # chunks, "flexible links are not available for data read in chunks")
    assert len(chunked.nested) == len(memory.nested) > 0 and chunked.notes == memory.notes
    numbers = memory.nested.select_dtypes("number").columns
    np.testing.assert_allclose(chunked.nested[numbers], memory.nested[numbers], rtol=1e-7)


def test_vuong_of_two_chunked_links_equals_in_memory(frame, memory, chunked):
    probit_memory = memory.model.with_changes(link="probit").fit()
    probit_chunked = chunked.model.with_changes(link="probit").fit()
    expected = ordstats.vuong_test(memory, probit_memory)
    got = ordstats.vuong_test(chunked, probit_chunked)
    assert got.statistic == pytest.approx(expected.statistic, rel=1e-7)
    assert got.omega == pytest.approx(expected.omega, rel=1e-7)


def test_refits_of_chunks_equal_in_memory(memory, chunked):
    # before: SpecificationError "refitting a model read in chunks with other terms ..."
    # and "Brant's test ... needs the rows in memory"
    for method in ("nominal_test", "scale_test", "brant_test"):
        expected = getattr(memory, method)()
        pd.testing.assert_frame_equal(getattr(chunked, method)(), expected, rtol=1e-8)


def test_marginal_effects_stream_with_the_in_memory_numbers(memory, chunked):
    # before: SpecificationError "get_margeff() averages over the fitted rows, which a model
    # read in chunks ... does not keep in memory"; the chunks are sorted by f, so most lack
    # some of its levels (whose indicator columns must still change together)
    for options in ({}, {"dummy": True, "at": "mean"}, {"at": "median", "method": "eyex"}):
        expected = memory.get_margeff(**options)
        got = chunked.get_margeff(**options)
        np.testing.assert_allclose(got.margeff, expected.margeff, rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(got.margeff_se, expected.margeff_se, rtol=1e-8, atol=1e-14)
    with pytest.raises(SpecificationError, match=r"at='all'\) gives every fitted row"):
        chunked.get_margeff(at="all")


def test_summary_and_predictions_are_the_in_memory_ones(frame, memory, chunked):
    new = pd.DataFrame(frame.dropna().head(4))
    np.testing.assert_allclose(chunked.predict(new), memory.predict(new), rtol=1e-8)
    assert str(chunked.summary()).splitlines()[3:] != []


def test_vuong_between_different_chunked_designs_says_what_to_do(frame, chunked):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingDataWarning)
        smaller = ordstats.OrdinalModel.from_formula("y ~ x1 + f + g", frame, chunksize=400).fit()
    with pytest.raises(SpecificationError, match=r"(same columns|same rows|different rows)"):
        ordstats.vuong_test(chunked, smaller)


def test_expected_covariance_streams(memory, chunked):
    # one pass over the chunks (it raised a raw ValueError, range() arg 3, before)
    np.testing.assert_allclose(
        chunked.expected_covariance.matrix, memory.expected_covariance.matrix, rtol=1e-8
    )
    assert chunked.expected_covariance.kind == "expected"


def test_expected_covariance_after_remove_data_says_the_rows_are_gone(frame):
    res = _fit(frame)
    res.remove_data()
    with pytest.raises(OrdstatsError, match=r"expected_covariance\) needs the rows of the data"):
        res.expected_covariance  # noqa: B018


def _saved(res):
    return pickle.loads(pickle.dumps(res))


def _without(res, term):
    with pytest.warns(MissingDataWarning):
        return res.update(f"~ . - {term}")


def test_lr_tests_of_saved_chunked_fits_equal_in_memory(memory, chunked):
    # before: NotFittedError "a chunked model keeps no rows in memory; use its summaries
    # (nobs, response_counts) or read the data yourself", from the row-by-row checks
    restricted = _without(chunked, "g")
    expected = ordstats.lr_test(_without(memory, "g"), memory)
    for pair in [(_saved(restricted), _saved(chunked)), (restricted, _saved(chunked))]:
        assert ordstats.lr_test(*pair).statistic == pytest.approx(expected.statistic, rel=1e-8)
    table = ordstats.anova(_saved(restricted), _saved(chunked))
    expected_table = ordstats.anova(_without(memory, "g"), memory)
    pd.testing.assert_frame_equal(table, expected_table, rtol=1e-8, check_names=False)


def test_saved_chunked_fits_are_checked_for_nesting_by_name(chunked):
    # before: a warning that "their data were removed (remove_data())", and a statistic
    without_g, without_x1 = _saved(_without(chunked, "g")), _saved(_without(chunked, "x1"))
    with pytest.raises(SpecificationError, match=r"'x1' is not part of the full model by name"):
        ordstats.lr_test(without_g, without_x1)


def test_vuong_of_a_saved_chunked_fit_says_its_rows_are_gone(chunked):
    probit = _saved(chunked.model.with_changes(link="probit").fit())
    with pytest.raises(OrdstatsError, match="does not keep when pickled: rebuild the model"):
        ordstats.vuong_test(_saved(chunked), probit)
