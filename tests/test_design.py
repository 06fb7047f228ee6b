"""The formula and array layers: how inputs become design matrices."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

import ordstats

OrdinalModel = ordstats.OrdinalModel


@pytest.fixture(scope="module")
def wine() -> pd.DataFrame:
    return ordstats.datasets.load("wine")


def _wine_arrays() -> tuple[pd.Series, pd.DataFrame, pd.Series, pd.Series]:
    wine = ordstats.datasets.load("wine")
    X = pd.get_dummies(wine[["temp", "contact"]], drop_first=True).astype(float)
    weights = pd.Series(np.resize([1.0, 2.0, 3.0], len(wine)), index=wine.index)
    offset = pd.Series(np.linspace(-0.5, 0.5, len(wine)), index=wine.index)
    return wine["rating"], X, weights, offset


# -- pandas inputs are paired by index label -------------------------------------------


@seed(20261123)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.permutations(range(72)), st.permutations(range(72)))
def test_shuffled_pandas_inputs_give_the_same_fit(order_x, order_w):
    y, X, weights, offset = _wine_arrays()
    expected = OrdinalModel(y, X, weights=weights, offset=offset).fit().params
    res = OrdinalModel(
        y,
        X.iloc[list(order_x)],
        weights=weights.iloc[list(order_w)],
        offset=offset.iloc[list(order_x)],
    ).fit()
    np.testing.assert_allclose(res.params, expected, rtol=1e-10, atol=1e-12)


def test_shuffled_weights_series_in_formula_interface(wine):
    w = pd.Series(np.resize([1.0, 2.0], 72), index=wine.index)
    expected = OrdinalModel.from_formula("rating ~ temp", wine, weights=w).fit().params
    shuffled = w.sample(frac=1.0, random_state=3)
    res = OrdinalModel.from_formula("rating ~ temp", wine, weights=shuffled).fit()
    np.testing.assert_allclose(res.params, expected, rtol=1e-10)


def test_numpy_inputs_pair_by_position():
    y, X, weights, _ = _wine_arrays()
    expected = OrdinalModel(y, X, weights=weights).fit().params
    res = OrdinalModel(y.array, X.to_numpy(), weights=weights.to_numpy()).fit()
    np.testing.assert_allclose(res.params.to_numpy(), expected.to_numpy(), rtol=1e-10)


def test_numpy_response_takes_the_labels_of_pandas_exog():
    y, X, _, _ = _wine_arrays()
    X = X.set_axis(np.arange(100, 172))
    model = OrdinalModel(y.cat.codes.to_numpy(), X)
    assert list(model.design.row_index[:2]) == [100, 101]


# -- aliased columns (R's drop.coef) ---------------------------------------------------


def _aliased_one_by_one(X: np.ndarray, tol: float = 1e-7) -> list[int]:
    """Reference: regress each unit-norm column on the kept earlier ones."""
    kept: list[int] = []
    aliased: list[int] = []
    for j in range(X.shape[1]):
        norm = np.linalg.norm(X[:, j])
        if norm == 0:
            aliased.append(j)
            continue
        x = X[:, j] / norm
        if kept:
            Q = np.linalg.qr(X[:, kept])[0]
            x = x - Q @ (Q.T @ x)
        (aliased if np.linalg.norm(x) < tol else kept).append(j)
    return aliased


@pytest.mark.parametrize("block", [1, 3, 64])
def test_aliased_columns_drop_the_later_column_like_r(block):
    rng = np.random.default_rng(7)
    for _ in range(20):
        p = int(rng.integers(2, 30))
        X = rng.normal(size=(50, p)) * 10.0 ** rng.integers(-3, 4, p)
        for _ in range(int(rng.integers(0, 4))):
            j = int(rng.integers(1, p))
            X[:, j] = X[:, :j] @ rng.normal(size=j) * (rng.random() < 0.8)
        X = np.column_stack([np.ones(50), X])
        expected = _aliased_one_by_one(X)
        found = ordstats.design.aliased_columns(X.T @ X, block=block)
        assert found == expected


def test_many_levels_alias_check_solves_no_system_per_column(monkeypatch):
    # one linear solve per column took ~10 s at 1000 levels; the blocked Cholesky
    # solves none (counted, not timed: a clock fails on a busy machine)
    import scipy.linalg

    solves: list[str] = []

    def counted(module, name):
        original = getattr(module, name)

        def wrapper(*args, **kwargs):
            solves.append(name)
            return original(*args, **kwargs)

        monkeypatch.setattr(module, name, wrapper)

    for name in ("solve", "inv", "lstsq", "pinv"):
        counted(np.linalg, name)
    for name in ("solve", "cho_solve", "solve_triangular", "lstsq"):
        counted(scipy.linalg, name)
    rng = np.random.default_rng(0)
    L, n = 1000, 5000
    codes = rng.integers(0, L, n)
    X = np.zeros((n, L))
    X[np.arange(n), codes] = 1.0
    X[:, 500] = 2 * X[:, 3]  # aliased with an earlier column
    found = ordstats.design.aliased_columns(ordstats.design.gram_with_intercept(X))
    assert 501 in found
    assert solves == []


def test_large_numeric_formula_design_equals_the_array_design():
    rng = np.random.default_rng(3)
    n = 3000
    df = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    df["f"] = np.where(np.arange(n) < 2500, "u", "v")  # level 'v' only after row 2500
    df["y"] = rng.integers(0, 3, n)
    design = ordstats.design.design_from_formula("y ~ a + b + c", df)
    np.testing.assert_array_equal(design.location.matrix, df[["a", "b", "c"]].to_numpy())
    assert design.location.matrix.flags.c_contiguous
    design = ordstats.design.design_from_formula("y ~ a + f", df)
    assert design.location.names == ["a", "f[T.v]"]


# -- ordered-factor predictors -----------------------------------------------------------


def test_polynomial_contrasts_of_an_ordered_factor_reproduce_r(wine):
    """R codes ordered factors with contr.poly; ``C(x, contr.poly)`` does the same.

    R 4 / ordinal 2022.11.16::

        wine$jo <- factor(wine$bottle, ordered = TRUE)
        clm(rating ~ contact + jo, data = wine)   # jo^7 is NA (aliased)
    """
    data = wine.assign(jo=wine["bottle"].cat.as_ordered())
    with pytest.warns(ordstats.errors.CollinearityWarning, match=r"\[\^7\]"):
        res = OrdinalModel.from_formula("rating ~ contact + C(jo, contr.poly)", data).fit()
    r_params = [-5.5678605281, -2.9240761059, -0.6580506135, 0.9415128598, -4.2616381750,
                6.8519412567, -0.0610152591, 3.1774211410, -0.9912768484, -5.0225184303,
                0.0676160019]  # fmt: skip
    np.testing.assert_allclose(res.params, r_params, atol=1e-6)
    assert res.llf == pytest.approx(-85.2591654827, abs=1e-8)
    names = [f"C(jo, contr.poly)[{s}]" for s in (".L", ".Q", ".C", "^4", "^5", "^6")]
    assert list(res.params.index[5:]) == names  # R: jo.L, jo.Q, jo.C, jo^4, ...
    # an ordered Categorical gets R's default, contr.poly, named as R names it
    with pytest.warns(ordstats.errors.CollinearityWarning, match=r"jo\^7"):
        default = OrdinalModel.from_formula("rating ~ contact + jo", data).fit()
    np.testing.assert_allclose(default.params, r_params, atol=1e-6)
    assert list(default.params.index[5:]) == ["jo.L", "jo.Q", "jo.C", "jo^4", "jo^5", "jo^6"]
    # treatment contrasts on request
    with pytest.warns(ordstats.errors.CollinearityWarning):
        treatment = OrdinalModel.from_formula("rating ~ contact + C(jo, contr.treatment)", data)
    assert treatment.exog_names[1] == "C(jo, contr.treatment)[T.2]"


def test_aliased_column_found_from_the_data_where_the_gram_matrix_is_too_coarse(wine):
    """R 4 / ordinal 2022.11.16: clm(rating ~ temp + jo) with jo = ordered(bottle).

    ``temp`` is a contrast of the bottles, so jo^7 is aliased (NA in R); its squared
    residual from the Gram matrix is 1.5e-14 (> 1e-14) but 1e-30 from the data.
    """
    data = wine.assign(jo=wine["bottle"].cat.as_ordered())
    with pytest.warns(ordstats.errors.CollinearityWarning, match=r"\[\^7\]"):
        res = OrdinalModel.from_formula("rating ~ temp + C(jo, contr.poly)", data).fit()
    r_params = [-2.58471380557, 0.0590706166722, 2.32509610902, 3.9246595823, 1.70465527001,
                2.1173289202, -0.0610152591114, 0.869306994284, -0.991276848397,
                -1.22898786396, 0.0676160019079]  # fmt: skip
    np.testing.assert_allclose(res.params, r_params, atol=1e-6)
    assert res.llf == pytest.approx(-85.2591654827, abs=1e-8)


# ---------------------------------------------------------------------------
# the aliasing check from a sample of the rows (issue 24: CPU per fit)


def _full_check(X):
    from ordstats.design.core import aliasing_gram

    gram, moments = aliasing_gram(X)
    return [j - 1 for j in ordstats.design.aliased_columns(gram) if j > 0], moments


def test_sampled_full_rank_gives_the_moments_of_the_full_check():
    from ordstats.design.core import sampled_full_rank

    rng = np.random.default_rng(3)
    X = rng.normal(size=(50_000, 6)) @ rng.normal(size=(6, 6))
    X[:, 2] = rng.random(50_000) < 0.02  # a rare dummy
    X[:, 3] = 45.0 + 15.0 * X[:, 3]  # not centred, like an age
    moments = sampled_full_rank(X)
    assert moments is not None
    aliased, full = _full_check(X)
    assert aliased == []
    np.testing.assert_allclose(moments.mean, full.mean, rtol=1e-14)
    np.testing.assert_allclose(moments.sd, full.sd, rtol=1e-12)


@pytest.mark.parametrize(
    "case",
    ["aliased", "nearly aliased", "constant", "far from zero", "unsampled dummy", "few rows"],
)
def test_sampled_full_rank_leaves_every_doubtful_design_to_the_full_check(case):
    from ordstats.design.core import sampled_full_rank

    rng = np.random.default_rng(4)
    n = 40 if case == "few rows" else 40_000
    X = rng.normal(size=(n, 4))
    if case == "aliased":
        X[:, 3] = X[:, 0] - 2.0 * X[:, 1]
    elif case == "nearly aliased":  # squared residual 1e-12: kept, but only the data can tell
        X[:, 3] = X[:, 0] + 1e-6 * X[:, 3]
    elif case == "constant":
        X[:, 1] = 7.0
    elif case == "far from zero":  # centred before squaring by the full check
        X[:, 2] += 1e4
    elif case == "unsampled dummy":  # ones only on rows the sample skips: full rank all the same
        X[:, 2] = 0.0
        X[1:200:20, 2] = 1.0
    assert sampled_full_rank(X) is None
    aliased, _ = _full_check(X)
    assert aliased == ([3] if case == "aliased" else [1] if case == "constant" else [])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scale=st.floats(-12.0, 2.0), column=st.integers(1, 4), seed_=st.integers(0, 2**16))
def test_sampled_full_rank_never_keeps_a_column_the_full_check_drops(scale, column, seed_):
    from ordstats.design.core import sampled_full_rank

    rng = np.random.default_rng(seed_)
    X = rng.normal(size=(6000, 5))
    # column = combination of the earlier ones plus noise of relative size 10^scale
    X[:, column] = X[:, :column] @ rng.normal(size=column) + 10.0**scale * X[:, column]
    moments = sampled_full_rank(X)
    aliased, full = _full_check(X)
    if moments is not None:
        assert aliased == []
        np.testing.assert_allclose(moments.sd, full.sd, rtol=1e-12)
    if aliased:
        assert moments is None


def test_design_from_arrays_drops_an_aliased_column_of_many_rows():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(30_000, 3))
    X = np.column_stack([X, X[:, 0] + X[:, 2]])
    y = rng.integers(0, 3, 30_000)
    with pytest.warns(ordstats.errors.CollinearityWarning, match="x4"):
        model = OrdinalModel(y, pd.DataFrame(X, columns=["x1", "x2", "x3", "x4"]))
    assert model.exog_names == ["x1", "x2", "x3"]


def test_bad_rows_of_numeric_columns_flag_each_missing_or_infinite_value():
    """The numeric fast path (column by column, no interleaved copy) flags what the
    general path flags: NaN and +-inf in float columns of any width, none in integers or
    booleans, none in a float column whose sum overflows."""
    from ordstats.design.core import _bad_rows

    n = 7
    frame = pd.DataFrame(
        {
            "a": np.arange(n, dtype=np.int64),
            "b": np.array([1.0, np.nan, 2.0, np.inf, 0.0, -np.inf, 3.0]),
            "c": np.full(n, 1.7e308),  # the sum overflows, every value is finite
            "d": np.array([0, 1, 0, 1, 1, 0, 0], dtype=bool),
            "e": np.array([np.inf, 1, 2, 3, 4, 5, np.nan], dtype=np.float32),
        },
        index=list("pqrstuv"),
    )
    fast = _bad_rows(frame)
    expected = frame.isna() | ~np.isfinite(frame.astype(float))
    pd.testing.assert_frame_equal(fast, expected)
    assert fast.to_numpy().sum() == 5


def test_wide_data_with_a_factor_and_weights_raise_no_pandas_fragmentation_warning():
    """More than 100 numeric columns beside a factor: the rows check frames its flags at
    once, so adding the weights' column raises no pandas PerformanceWarning (it did)."""
    import warnings

    from ordstats.design.core import _bad_rows

    rng = np.random.default_rng(0)
    n, p = 40, 101
    data = pd.DataFrame(rng.normal(size=(n, p)), columns=[f"x{j}" for j in range(p)])
    data["x3"] = data["x3"].where(np.arange(n) != 5, np.inf)
    data["f"] = pd.Series(rng.choice(list("ab"), n)).where(np.arange(n) != 7, None)
    data["y"] = rng.integers(0, 3, n)
    data["w"] = 1.0
    formula = "y ~ " + " + ".join(data.columns[:p]) + " + f"
    with warnings.catch_warnings():
        warnings.simplefilter("error", pd.errors.PerformanceWarning)
        with pytest.warns(ordstats.errors.MissingDataWarning, match="2 of 40 rows"):
            model = OrdinalModel.from_formula(formula, data, weights="w", collinear="keep")
    assert model.nobs == n - 2
    flags = _bad_rows(data[["x3", "f", "y"]])
    assert flags.to_numpy().sum() == 2 and flags.loc[5, "x3"] and flags.loc[7, "f"]
