"""Quantiles, means and exceedance probabilities of a continuous-response fit (issue 28).

R's ``rms::orm`` with ``Quantile``, ``Mean`` and ``ExProb`` (rms 6.5) is the
oracle: ``tests/r/orm_refs.R`` wrote ``tests/data/reference/orm/*.json`` (the
data, the rows evaluated and R's numbers).  Estimates and quantities agree to
1e-6 relative, intervals to 1e-4; the delta-method standard errors, which rms
does not report for ``Quantile``, are checked against a finite-difference delta
method.
"""

from __future__ import annotations

import json
import pickle
import warnings
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ordstats
from ordstats.errors import OrdstatsError
from ordstats.results.continuous import exceedance_cut, interpolated_quantiles

REF_DIR = Path(__file__).parent / "data" / "reference" / "orm"
CASES = sorted(p.stem for p in REF_DIR.glob("*.json"))
ESTIMATES, INTERVALS = 1e-6, 1e-4


@cache
def reference(case: str) -> dict:
    with open(REF_DIR / f"{case}.json") as handle:
        return json.load(handle)


@cache
def fitted(case: str) -> tuple[dict, ordstats.OrdinalResults, pd.DataFrame]:
    ref = reference(case)
    data = pd.DataFrame(ref["data"])
    model = ordstats.OrdinalModel.from_formula(
        ref["formula"], data, many_levels=True, link=ref["ordstats_link"]
    )
    newdata = data.iloc[np.asarray(ref["newdata_rows"]) - 1]
    return ref, model.fit(), newdata


def wide(out: pd.DataFrame, column: str, n_rows: int) -> np.ndarray:
    """A (row, key)-indexed column as a rows x keys array."""
    return out[column].to_numpy().reshape(n_rows, -1)


def assert_relative(got, want, rtol):
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0.0)


def test_references_cover_three_data_sets_and_three_links():
    assert CASES == ["airquality_probit", "boston_logistic", "mtcars_loglog"]
    assert {reference(c)["ordstats_link"] for c in CASES} == {"logit", "probit", "cloglog"}


@pytest.mark.parametrize("case", CASES)
def test_fit_equals_orm(case):
    ref, res, _ = fitted(case)
    names = list(ref["slopes"])
    assert len(res.model.levels) == ref["n_levels"]
    assert_relative(res.params[names], list(ref["slopes"].values()), ESTIMATES)
    assert_relative(res.bse[names], list(ref["slope_se"].values()), ESTIMATES)
    assert res.llf == pytest.approx(ref["loglik"], rel=1e-10)


@pytest.mark.parametrize("case", CASES)
def test_quantiles_equal_rms_quantile(case):
    ref, res, newdata = fitted(case)
    for entry in ref["quantile"]:
        out = res.quantile(entry["q"], newdata)
        assert list(out.index) == list(newdata.index)
        assert_relative(out["estimate"], entry["estimate"], ESTIMATES)
        assert_relative(out["estimate"], entry["estimate_from_lp"], ESTIMATES)
        assert_relative(out["lower"], entry["lower"], INTERVALS)
        assert_relative(out["upper"], entry["upper"], INTERVALS)


@pytest.mark.parametrize("case", CASES)
def test_mean_equals_rms_mean(case):
    ref, res, newdata = fitted(case)
    out = res.mean(newdata)
    assert_relative(out["estimate"], ref["mean"]["estimate"], ESTIMATES)
    assert_relative(out["lower"], ref["mean"]["lower"], INTERVALS)
    assert_relative(out["upper"], ref["mean"]["upper"], INTERVALS)


@pytest.mark.parametrize("case", CASES)
def test_exceedance_equals_rms_exprob(case):
    ref, res, newdata = fitted(case)
    ys = ref["exprob"]["y"]
    out = res.exceedance(ys, newdata)
    got = {col: wide(out, col, len(newdata)) for col in ("estimate", "lower", "upper")}
    assert_relative(got["estimate"], ref["exprob"]["estimate"], ESTIMATES)
    assert_relative(got["estimate"], ref["exprob"]["estimate_from_lp"], ESTIMATES)
    # ExProb returns [0, 0] around a positive P(Y >= v_K) at the highest level v_K;
    # there the interval here is that of P(Y >= v_K) (checked below), elsewhere rms's
    top = np.asarray(ys) == max(res.model.design.response.values)
    assert top.sum() == 1
    for col, tol in (("lower", INTERVALS), ("upper", INTERVALS)):
        assert_relative(got[col][:, ~top], np.asarray(ref["exprob"][col])[:, ~top], tol)
    assert np.all(got["lower"][:, top] <= got["estimate"][:, top])
    assert np.all(got["estimate"][:, top] <= got["upper"][:, top])
    assert np.any(got["upper"][:, top] > 0.0)
    assert np.all(np.asarray(ref["exprob"]["upper"])[:, top] == 0.0)


def test_published_boston_numbers():
    # issue 28: orm(medv ~ lstat + rm) on MASS::Boston, rows 1-3, as rms prints them
    _, res, newdata = fitted("boston_logistic")
    rows = newdata.iloc[:3]
    np.testing.assert_allclose(
        res.quantile(0.5, rows)["estimate"], [28.12227, 23.14566, 32.96214], atol=5e-6
    )
    np.testing.assert_allclose(
        res.quantile(0.9, rows)["estimate"], [37.79342, 30.84391, 49.65734], atol=5e-6
    )
    np.testing.assert_allclose(
        res.exceedance(30, rows)["estimate"], [0.3872841, 0.1167581, 0.6577524], atol=5e-8
    )


# -- delta-method standard errors against finite differences ----------------------


def _finite_difference_se(res, function, step=1e-6):
    params = res.params.to_numpy()
    V = res.cov_params().to_numpy()
    columns = []
    for k in range(params.size):
        shift = np.zeros_like(params)
        shift[k] = step
        columns.append((function(params + shift) - function(params - shift)) / (2 * step))
    G = np.column_stack(columns)
    return np.sqrt(np.einsum("ij,jk,ik->i", G, V, G))


def _exceedance_at(res, newdata, params):
    """``S_j = P(Y >= v_{j+1})`` of each row of ``newdata`` at other parameter values."""
    model = res.model
    lay = model.problem.layout
    X = newdata[model.exog_names].to_numpy(dtype=float)
    u = params[lay.thresholds][None, :] - (X @ params[lay.beta])[:, None]
    if lay.n_zeta:
        Z = newdata[[n.removeprefix("scale:") for n in model.scale_names]].to_numpy(dtype=float)
        u = u / np.exp(Z @ params[lay.zeta])[:, None]
    return model.link.sf(u)


@pytest.mark.parametrize("scale", [None, "~ Wind"], ids=["location", "with-scale"])
def test_delta_method_ses_equal_finite_differences(scale):
    ref = reference("airquality_probit")
    data = pd.DataFrame(ref["data"])
    model = ordstats.OrdinalModel.from_formula(
        ref["formula"], data, many_levels=True, link="probit", scale=scale
    )
    res = model.fit(banded=False)  # the dense covariance the finite differences use
    newdata = data.iloc[[0, 5, 50, 100]]
    values = np.asarray(model.design.response.values, dtype=float)

    def exceed(p):
        return _exceedance_at(res, newdata, p)

    for q in (0.1, 0.5, 0.9):
        expected = _finite_difference_se(
            res, lambda p, q=q: interpolated_quantiles(exceed(p), values, q)
        )
        assert_relative(res.quantile(q, newdata)["se"], expected, 1e-5)
    expected = _finite_difference_se(res, lambda p: values[0] + exceed(p) @ np.diff(values))
    assert_relative(res.mean(newdata)["se"], expected, 1e-5)
    cut = int(exceedance_cut(values, np.array([40.5]))[0])
    expected = _finite_difference_se(res, lambda p: exceed(p)[:, cut])
    assert_relative(res.exceedance(40.5, newdata)["se"], expected, 1e-5)


def test_banded_and_dense_covariances_give_the_same_quantities():
    _, banded, newdata = fitted("boston_logistic")
    assert type(banded.covariance).__name__ == "BandedCovariance"
    dense = banded.model.fit(banded=False)
    for quantity in (
        lambda r: r.quantile([0.25, 0.9], newdata),
        lambda r: r.mean(newdata),
        lambda r: r.exceedance([20.0, 30.0], newdata),
    ):
        pd.testing.assert_frame_equal(quantity(banded), quantity(dense), rtol=1e-7)


def test_delta_interval_is_estimate_plus_minus_z_se():
    _, res, newdata = fitted("boston_logistic")
    out = res.quantile(0.5, newdata, interval="delta", alpha=0.1)
    half = 1.6448536269514722 * out["se"]
    np.testing.assert_allclose(out["lower"], out["estimate"] - half, rtol=1e-12)
    np.testing.assert_allclose(out["upper"], out["estimate"] + half, rtol=1e-12)


# -- fitting paths and row alignment ------------------------------------------------


def test_chunked_fit_gives_the_same_quantities():
    ref, memory, newdata = fitted("boston_logistic")
    data = pd.DataFrame(ref["data"])
    chunked = ordstats.OrdinalModel.from_formula(
        ref["formula"], data, many_levels=True, chunksize=150
    ).fit()
    pd.testing.assert_frame_equal(
        chunked.quantile([0.5, 0.9], newdata), memory.quantile([0.5, 0.9], newdata), rtol=1e-7
    )
    pd.testing.assert_frame_equal(chunked.mean(newdata), memory.mean(newdata), rtol=1e-7)
    # without newdata: the fitted rows, chunk by chunk (before: refused, "not in memory")
    for quantity in (
        lambda res: res.mean(),
        lambda res: res.quantile([0.5, 0.9]),
        lambda res: res.exceedance([20.0, 30.0], alpha=0.1),
    ):
        pd.testing.assert_frame_equal(quantity(chunked), quantity(memory), rtol=1e-7)
    with pytest.raises(OrdstatsError, match="the offset must be a column of the data"):
        chunked.mean(offset=1.0)


def test_dask_fit_pickled_and_slimmed_results_give_the_same_quantities():
    dd = pytest.importorskip("dask.dataframe")
    ref, memory, newdata = fitted("boston_logistic")
    data = pd.DataFrame(ref["data"])
    expected = memory.quantile([0.5, 0.9], newdata)
    on_dask = ordstats.OrdinalModel.from_formula(
        ref["formula"], dd.from_pandas(data, npartitions=3), many_levels=True
    ).fit()
    pd.testing.assert_frame_equal(on_dask.quantile([0.5, 0.9], newdata), expected, rtol=1e-7)
    pd.testing.assert_frame_equal(
        on_dask.quantile([0.5, 0.9]), memory.quantile([0.5, 0.9]), rtol=1e-7
    )
    slim = pickle.loads(pickle.dumps(memory))
    slim.remove_data()
    pd.testing.assert_frame_equal(slim.quantile([0.5, 0.9], newdata), expected)
    with pytest.raises(OrdstatsError, match=r"mean\(\) without newdata needs the rows"):
        slim.mean()


def test_newdata_aligns_on_its_index():
    _, res, newdata = fitted("boston_logistic")
    labelled = newdata.set_axis([f"tract {i}" for i in range(len(newdata))])
    shuffled = labelled.iloc[::-1]
    for quantity in (
        lambda d: res.quantile([0.5, 0.9], d),
        lambda d: res.mean(d),
        lambda d: res.exceedance(30.0, d),
    ):
        forward, backward = quantity(labelled), quantity(shuffled)
        assert list(backward.index.get_level_values(0).unique()) == list(shuffled.index)
        pd.testing.assert_frame_equal(backward.loc[forward.index], forward)


@pytest.mark.parametrize("offset", ["off", "offset(off)"])
def test_newdata_as_a_mapping_uses_its_offset_column(offset):
    """A mapping of columns is newdata as a DataFrame is: its offset column counts.

    It was ignored (offset 0, with a warning that none was given).
    """
    data = _few_levels(np.arange(12.0)).assign(off=lambda d: 0.3 * d["w"] - 0.2)
    if offset == "off":
        model = ordstats.OrdinalModel.from_formula("y ~ x", data, many_levels=True, offset="off")
    else:
        model = ordstats.OrdinalModel.from_formula("y ~ x + offset(off)", data, many_levels=True)
    res = model.fit()
    rows = {"x": [0.0, 1.0], "w": [0.0, 1.0], "off": [0.5, -1.0]}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for quantity in (
            lambda d: res.mean(d),
            lambda d: res.quantile(0.5, d),
            lambda d: res.exceedance(6.0, d),
        ):
            pd.testing.assert_frame_equal(quantity(rows), quantity(pd.DataFrame(rows)))
    assert res.predict(rows, which="linear").iloc[0] == pytest.approx(0.5 + res.params["x"] * 0.0)


def test_default_rows_are_the_fitted_rows():
    ref, res, _ = fitted("mtcars_loglog")
    data = pd.DataFrame(ref["data"])
    pd.testing.assert_frame_equal(res.mean(), res.mean(data))


def test_several_q_and_y_are_indexed_by_row_then_key():
    _, res, newdata = fitted("boston_logistic")
    out = res.quantile([0.9, 0.5], newdata.iloc[:2])
    assert out.index.names == ["row", "q"]
    assert list(out.index) == [(0, 0.9), (0, 0.5), (1, 0.9), (1, 0.5)]
    assert out.loc[(1, 0.5), "estimate"] == pytest.approx(23.14566, abs=5e-6)
    ex = res.exceedance([30, 5], newdata.iloc[:1])
    assert ex.index.names == ["row", "y"]
    assert ex.loc[(0, 5.0)].tolist() == [1.0, 0.0, 1.0, 1.0]


# -- properties ------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.001, 0.999), min_size=2, max_size=6, unique=True))
def test_quantiles_are_monotone_in_q(qs):
    _, res, newdata = fitted("boston_logistic")
    qs = sorted(qs)
    out = res.quantile(qs, newdata)
    for column in ("estimate", "lower", "upper"):
        assert np.all(np.diff(wide(out, column, len(newdata)), axis=1) >= -1e-9)
    assert np.all(out["lower"] <= out["estimate"] + 1e-9)
    assert np.all(out["estimate"] <= out["upper"] + 1e-9)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.0, 60.0), min_size=2, max_size=8, unique=True))
def test_exceedance_is_monotone_in_y(ys):
    _, res, newdata = fitted("boston_logistic")
    ys = sorted(ys)
    out = res.exceedance(ys, newdata)
    for column in ("estimate", "lower", "upper"):
        values = wide(out, column, len(newdata))
        assert np.all(np.diff(values, axis=1) <= 1e-12)
        assert np.all((values >= 0) & (values <= 1))


# -- bad input ---------------------------------------------------------------------------


@pytest.mark.parametrize("q", [0.0, 1.0, -0.5, 1.5, np.nan, "0.5", True, [], [0.5, 2.0]])
def test_quantile_outside_zero_one_is_refused(q):
    _, res, newdata = fitted("boston_logistic")
    with pytest.raises(OrdstatsError, match=r"q must be a probability strictly between 0 and 1"):
        res.quantile(q, newdata)


@pytest.mark.parametrize("y", ["30", None, np.nan, np.inf, ["a", 1], True, []])
def test_exceedance_needs_numbers(y):
    _, res, newdata = fitted("boston_logistic")
    with pytest.raises(OrdstatsError, match=r"y must be a finite number on the response's scale"):
        res.exceedance(y, newdata)


def test_unknown_interval_is_refused():
    _, res, newdata = fitted("boston_logistic")
    with pytest.raises(OrdstatsError, match=r"interval must be 'cdf' or 'delta'"):
        res.quantile(0.5, newdata, interval="wald")


def test_levels_that_are_not_numbers_are_refused():
    housing = ordstats.datasets.load("housing")
    res = ordstats.OrdinalModel.from_formula("Sat ~ Infl", housing, weights="Freq").fit()
    for call in (lambda: res.mean(), lambda: res.quantile(0.5), lambda: res.exceedance(2)):
        with pytest.raises(OrdstatsError, match=r"needs numeric response levels.*'Low'"):
            call()


def _few_levels(values, seed=3, n=300):
    """A numeric response with the given level values, one numeric and one binary predictor."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    heavy = (rng.uniform(size=n) < 0.5).astype(float)
    latent = x + 0.5 * heavy + rng.logistic(size=n)
    cuts = np.quantile(latent, np.linspace(0, 1, len(values) + 1)[1:-1])
    return pd.DataFrame(
        {"y": np.asarray(values)[np.searchsorted(cuts, latent)], "x": x, "w": heavy}
    )


def test_other_families_and_nominal_effects_are_refused():
    data = _few_levels([1.5, 2.0, 3.5, 7.0])
    acat = ordstats.OrdinalModel.from_formula("y ~ x", data, family="acat").fit()
    with pytest.raises(OrdstatsError, match=r"defined for the cumulative family.*'acat'"):
        acat.mean()
    nominal = ordstats.OrdinalModel.from_formula("y ~ x", data, nominal="~ w").fit()
    with pytest.raises(OrdstatsError, match=r"nominal effects, which move the cut-points"):
        nominal.quantile(0.5)


def test_quantile_needs_three_levels():
    res = ordstats.OrdinalModel.from_formula("y ~ x", _few_levels([1.0, 2.0])).fit()
    with pytest.raises(OrdstatsError, match=r"at least three response levels"):
        res.quantile(0.5)
    assert res.mean()["estimate"].between(1, 2).all()  # the mean is defined with two


def test_quantile_where_every_exceedance_is_one_is_the_highest_value():
    """Every ``P(Y >= v_j)`` rounds to 1: a point mass at ``v_K``, not rms's line.

    ``tests/r/orm_extreme_lp.R``: rms's weights are then 0/0, R's approx drops
    those knots and ``Quantile`` reads the line from ``(1, v_1)`` to ``(0, v_K)``
    (a 10% quantile of 12.75 for a row whose every P(Y >= v_j) is 1); the
    estimate and limits here are ``v_K``, the limit of rms's curve as the
    linear predictor grows, with standard error 0.  The other rows equal rms.
    Before, the last row was rms's line (and NaN with division warnings before that).
    """
    with open(REF_DIR.parent / "orm_extreme" / "mtcars_extreme.json") as handle:
        ref = json.load(handle)
    res = ordstats.OrdinalModel.from_formula(
        ref["formula"], pd.DataFrame(ref["data"]), many_levels=True
    ).fit()
    newdata = pd.DataFrame(ref["newdata"])
    assert_relative(res.llf, ref["loglik"], ESTIMATES)
    assert np.all(np.asarray(ref["exceed_at_last_row"]) == 1.0)
    top = max(res.model.design.response.values)
    for want in ref["quantile"]:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = res.quantile(want["q"], newdata)
        assert_relative(got["estimate"].iloc[:-1], want["estimate"][:-1], ESTIMATES)
        assert_relative(got["lower"].iloc[:-1], want["lower"][:-1], INTERVALS)
        assert_relative(got["upper"].iloc[:-1], want["upper"][:-1], INTERVALS)
        assert got["se"].notna().all()
        last = got.iloc[-1]
        assert (last["estimate"], last["lower"], last["upper"], last["se"]) == (top, top, top, 0)
        assert want["estimate"][-1] < top  # rms's line


@pytest.mark.parametrize("direction", [1, -1], ids=["to-one", "to-zero"])
def test_quantiles_at_an_extreme_linear_predictor_tend_to_the_end_value(direction):
    """As x grows the quantiles approach v_K (v_1) and stay there once P(Y >= v_j) rounds.

    Before, a row whose every ``P(Y >= v_j)`` had rounded to 1 (or 0) got rms's
    0/0 line: faithful's median jumped from 96 at eruptions = 10 to 69.5 at 20
    (with P(Y >= 96) = 1 and mean 96 there).
    """
    ref, res, _ = fitted("boston_logistic")
    data = pd.DataFrame(ref["data"])
    values = np.asarray(res.model.design.response.values, dtype=float)
    beta = res.params["rm"]
    # rm moving x'beta by 40, 200 and 2000 from the mean: near 1 (0), then exactly
    steps = direction * np.array([40.0, 200.0, 2000.0]) / beta
    newdata = pd.DataFrame({"lstat": data["lstat"].mean(), "rm": data["rm"].mean() + steps})
    exceed = res.exceedance(values[1:], newdata)["estimate"].to_numpy().reshape(3, -1)
    end = values[-1] if direction == 1 else values[0]
    assert np.all(exceed[-1] == (1.0 if direction == 1 else 0.0))
    for q in (0.1, 0.5, 0.9):
        out = res.quantile(q, newdata)
        np.testing.assert_allclose(out["estimate"], end, rtol=1e-9)
        np.testing.assert_allclose(out[["lower", "upper"]].to_numpy(), end, rtol=1e-6)
        np.testing.assert_allclose(out["se"], 0.0, atol=1e-6)
    np.testing.assert_allclose(res.mean(newdata)["estimate"], end, rtol=1e-9)


@pytest.mark.parametrize(
    ("direction", "first"), [(1, 30.0), (-1, 703.0)], ids=["to-one", "to-zero"]
)
def test_quantiles_where_some_exceedances_round_to_one_are_the_end_value(direction, first):
    """x'beta moved by 30 to 46 (-703 to -719): some P(Y >= v_j) round to 1 (0), others near it.

    R's approx merges the knots whose S_j rounded to the same number into one at
    the mean of their values; the curve here reads them in order, its limit as
    they separate.  Before, on Boston at x'beta + 42 (212 of 228 S_j exactly 1)
    the 10% quantile was 45.56 where every other row nearby gives 50, and at
    x'beta + 32 the median's upper limit 49.54 was below its estimate 50, its
    standard error 0.85 at + 42.  (Towards 0 the first knot below 1 had not rounded,
    and the answers were already v_1.)
    """
    ref, res, _ = fitted("boston_logistic")
    data = pd.DataFrame(ref["data"])
    values = np.asarray(res.model.design.response.values, dtype=float)
    shifts = direction * np.arange(first, first + 17.0)
    newdata = pd.DataFrame(
        {"lstat": data["lstat"].mean(), "rm": data["rm"].mean() + shifts / res.params["rm"]}
    )
    exceed = res.exceedance(values[1:], newdata)["estimate"].to_numpy().reshape(shifts.size, -1)
    end_s, end = (1.0, values[-1]) if direction == 1 else (0.0, values[0])
    rounded = (exceed == end_s).sum(axis=1)
    assert np.any((rounded > 0) & (rounded < values.size - 1))  # runs of tied knots
    for q in (0.1, 0.5, 0.9):
        out = res.quantile(q, newdata)
        np.testing.assert_allclose(out[["estimate", "lower", "upper"]], end, rtol=1e-9)
        np.testing.assert_allclose(out["se"], 0.0, atol=1e-9)


# -- the plot ----------------------------------------------------------------------------


def test_conditional_cdf_plot_draws_one_step_function_per_row():
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    from ordstats import plotting

    _, res, newdata = fitted("boston_logistic")
    fig, ax = plt.subplots()
    plotting.plot_conditional_cdf(res, newdata.iloc[:3], ax=ax)
    lines = ax.get_lines()
    assert len(lines) == 3 and len(ax.collections) == 3  # steps and their bands
    values = np.asarray(res.model.design.response.values, dtype=float)
    np.testing.assert_allclose(lines[1].get_xdata(), values)
    exceed = res.exceedance(30.0, newdata.iloc[1:2])["estimate"].iloc[0]
    below_30 = np.searchsorted(values, 30.0) - 1  # the last level under 30
    assert lines[1].get_ydata()[below_30] == pytest.approx(1 - exceed, rel=1e-12)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["0", "1", "2"]
    plt.close(fig)
    with pytest.raises(OrdstatsError, match=r"labels must be a list of 3 names"):
        plotting.plot_conditional_cdf(res, newdata.iloc[:3], labels=["a"])
