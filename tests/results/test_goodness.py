"""Brant's test, pseudo-R² and probability-scale residuals, checked by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats

import ordstats
from ordstats.errors import ConvergenceWarning, SpecificationError

# -- Brant ----------------------------------------------------------------------


def _brant_by_hand(housing):
    """Brant (1990) as Stata's brant: separate logits (statsmodels), his covariance."""
    X = pd.get_dummies(housing[["Infl", "Type", "Cont"]], drop_first=True, dtype=float)
    X = sm.add_constant(X)
    y = housing["Sat"].map({"Low": 0, "Medium": 1, "High": 2}).to_numpy()
    w = housing["Freq"].to_numpy(dtype=float)
    fits = [
        sm.GLM((y > j).astype(float), X, family=sm.families.Binomial(), freq_weights=w).fit()
        for j in range(2)
    ]
    pis = [f.fittedvalues.to_numpy() for f in fits]  # P(Y > j)
    Xv = X.to_numpy()

    def cross(j, m):
        return (Xv * (w * pis[m] * (1 - pis[j]))[:, None]).T @ Xv

    inv = [np.linalg.inv(cross(j, j)) for j in range(2)]
    v01 = inv[0] @ cross(0, 1) @ inv[1]
    beta = [f.params.to_numpy()[1:] for f in fits]
    v = [inv[0][1:, 1:], v01[1:, 1:], inv[1][1:, 1:]]
    diff = beta[0] - beta[1]
    var = v[0] + v[2] - v[1] - v[1].T

    def wald(cols):
        d = diff[cols]
        return d @ np.linalg.solve(var[np.ix_(cols, cols)], d)

    names = list(X.columns[1:])
    return names, wald, beta


def test_brant_matches_hand_computation(housing, housing_res):
    table = housing_res.brant_test()
    names, wald, beta = _brant_by_hand(housing)
    ours = [n.replace("[T.", "_").rstrip("]") for n in housing_res.model.exog_names]
    assert ours == names
    assert table.loc["All", "chi2"] == pytest.approx(wald(list(range(6))), rel=1e-6)
    assert table.loc["All", "df"] == 6
    for j, name in enumerate(housing_res.model.exog_names):
        assert table.loc[name, "chi2"] == pytest.approx(wald([j]), rel=1e-6)
        assert table.loc[name, "df"] == 1
    assert table.loc["Infl", "chi2"] == pytest.approx(wald([0, 1]), rel=1e-6)
    assert table.loc["Type", "chi2"] == pytest.approx(wald([2, 3, 4]), rel=1e-6)
    assert "Cont" not in table.index  # single-column terms appear once
    np.testing.assert_allclose(
        table["Pr(>chi2)"], stats.chi2.sf(table["chi2"], table["df"]), rtol=1e-12
    )
    # binary slopes: statsmodels' logit slopes (statsmodels: P(Y > j) rises with x'b)
    slopes = pd.DataFrame(table.attrs["binary_params"])
    assert list(slopes.columns) == ["> Low", "> Medium"]
    np.testing.assert_allclose(slopes.to_numpy(), np.column_stack(beta), rtol=1e-5)


def test_brant_other_links_use_the_binary_information(housing, housing_res):
    """The diagonal blocks of the general covariance are each binary GLM's inverse information."""
    from ordstats.results.goodness import _binary_fits, _joint_covariance

    probit = ordstats.OrdinalModel.from_formula(
        "Sat ~ Infl + Cont", housing, weights="Freq", link="probit"
    ).fit()
    joint = _joint_covariance(probit, _binary_fits(probit))
    X = sm.add_constant(pd.get_dummies(housing[["Infl", "Cont"]], drop_first=True, dtype=float))
    y = housing["Sat"].map({"Low": 0, "Medium": 1, "High": 2}).to_numpy()
    k = X.shape[1]
    for j in range(2):
        glm = sm.GLM(
            (y > j).astype(float),
            X,
            family=sm.families.Binomial(sm.families.links.Probit()),
            freq_weights=housing["Freq"],
        ).fit()
        block = joint[j * k : (j + 1) * k, j * k : (j + 1) * k]
        np.testing.assert_allclose(np.sqrt(np.diag(block)), glm.bse, rtol=1e-4)
    assert np.isfinite(probit.brant_test().loc["All", "chi2"])


def test_brant_warns_when_a_binary_split_is_separated(wine_res):
    with pytest.warns(ConvergenceWarning) as record:
        table = wine_res.brant_test()
    messages = [str(w.message) for w in record]
    assert any("rating > '1' is separated" in m for m in messages)
    assert any("rating > '4' is separated" in m for m in messages)
    assert list(table.index) == ["All", "temp[T.warm]", "contact[T.yes]"]
    assert list(table["df"]) == [6, 3, 3]


def _split_separated_by_x():
    """Three levels whose top one is exactly the rows with x > 1 (the split > 1 is separated)."""
    rng = np.random.default_rng(1)
    x, z = rng.normal(size=300), rng.normal(size=300)
    y = np.where(x > 1.0, 2, (x + 0.8 * rng.logistic(size=300) > 0).astype(int))
    return pd.DataFrame({"y": y, "x": x, "z": z})


@pytest.mark.parametrize("chunksize", [None, 100])
def test_brant_with_a_split_separated_by_a_continuous_column(chunksize):
    """Before: ValueError (array must not contain infs or NaNs) from the information's
    inverse, whose weights f^2 / (F (1 - F)) were 0/0 at the split's huge estimates;
    in chunks the warning said only "did not converge", then "may be separated" until
    chunked fits ran the separation check too."""
    data = _split_separated_by_x()
    options = {} if chunksize is None else {"chunksize": chunksize}
    res = ordstats.OrdinalModel.from_formula("y ~ x + z", data, **options).fit()
    with pytest.warns(ConvergenceWarning, match="binary model of y > '1' is separated"):
        table = res.brant_test()
    assert list(table.index) == ["All", "x", "z"]
    assert np.all(np.isfinite(table["chi2"])) and list(table["df"]) == [2, 1, 1]
    in_memory = _brant_quietly(ordstats.OrdinalModel.from_formula("y ~ x + z", data).fit())
    np.testing.assert_allclose(table["chi2"], in_memory["chi2"], rtol=1e-6, atol=1e-12)


def _brant_quietly(res):
    with pytest.warns(ConvergenceWarning):
        return res.brant_test()


def test_brant_weights_stay_finite_far_in_the_tails():
    """The cross products' weights f_j f_m / (P(Y > j) P(Y <= m)) are computed in logs:
    equal to the direct ratio where that is a number, and 0 (not NaN: 0/0 before) for
    rows whose f, F and 1 - F underflow."""
    from types import SimpleNamespace

    from ordstats.core.links import get_link
    from ordstats.results.goodness import brant_cross_products

    x = np.array([-900.0, -30.0, -2.0, 0.5, 3.0, 30.0, 900.0])
    n = len(x)
    data = SimpleNamespace(X=x[:, None], n_obs=n, offset=np.zeros(n), weights=np.ones(n))
    design = np.column_stack([np.ones(n), -x])
    fits = [(-0.3, np.array([1.0])), (0.4, np.array([0.8]))]
    for name in ("logit", "probit", "cloglog", "loglog", "cauchit"):
        link = get_link(name)
        cross = brant_cross_products(data, fits, link)
        eta = [theta - x * beta[0] for theta, beta in fits]
        for j, m in [(0, 0), (0, 1), (1, 1)]:
            with np.errstate(invalid="ignore", divide="ignore"):
                direct = link.pdf(eta[j]) * link.pdf(eta[m]) / (link.sf(eta[j]) * link.cdf(eta[m]))
            assert np.isnan(direct).any() or name == "cauchit"  # the far rows' 0/0
            expected = (design * np.nan_to_num(direct, nan=0.0)[:, None]).T @ design
            np.testing.assert_allclose(cross[j, m], expected, rtol=1e-9, atol=1e-300, err_msg=name)


def test_brant_refuses_what_it_cannot_test(housing):
    binary = housing.assign(high=(housing["Sat"] == "High").astype(int))
    res = ordstats.OrdinalModel.from_formula("high ~ Infl", binary, weights="Freq").fit()
    with pytest.raises(SpecificationError, match="three response levels"):
        res.brant_test()
    null = ordstats.OrdinalModel.from_formula("Sat ~ 1", housing, weights="Freq").fit()
    with pytest.raises(SpecificationError, match="location effects to test"):
        null.brant_test()
    nominal = ordstats.OrdinalModel.from_formula(
        "Sat ~ Infl", housing, weights="Freq", nominal="~ Cont"
    ).fit()
    with pytest.raises(SpecificationError, match="nominal or scale effects"):
        nominal.brant_test()
    flexible = ordstats.OrdinalModel.from_formula(
        "Sat ~ Infl", housing, weights="Freq", link="aranda-ordaz"
    ).fit()
    with pytest.raises(SpecificationError, match="fixed link"):
        flexible.brant_test()


# -- pseudo-R² ------------------------------------------------------------------


def test_pseudo_rsquared_by_hand(wine_res):
    counts = np.bincount(wine_res.model.data.y)
    llnull = float(counts @ np.log(counts / 72))
    llf = wine_res.llf
    eta = wine_res.predict(which="linear").to_numpy()
    r2 = wine_res.pseudo_rsquared
    assert r2["mcfadden"] == pytest.approx(1 - llf / llnull)
    assert wine_res.prsquared == r2["mcfadden"]
    cox_snell = 1 - np.exp(2 * (llnull - llf) / 72)
    assert r2["cox_snell"] == pytest.approx(cox_snell)
    assert r2["nagelkerke"] == pytest.approx(cox_snell / (1 - np.exp(2 * llnull / 72)))
    var = eta.var()
    assert r2["mckelvey_zavoina"] == pytest.approx(var / (var + np.pi**2 / 3))
    assert 0 < r2["mcfadden"] < r2["nagelkerke"] < 1


def test_pseudo_rsquared_links_and_weights(housing, housing_res):
    expanded = housing.loc[housing.index.repeat(housing["Freq"])]
    rows = ordstats.OrdinalModel.from_formula("Sat ~ Infl + Type + Cont", expanded).fit()
    np.testing.assert_allclose(housing_res.pseudo_rsquared, rows.pseudo_rsquared, rtol=1e-6)
    probit = ordstats.OrdinalModel.from_formula(
        "Sat ~ Infl + Type + Cont", housing, weights="Freq", link="probit"
    ).fit()
    eta = probit.predict(which="linear").to_numpy()
    w = housing["Freq"].to_numpy()
    var = np.cov(eta, aweights=w, bias=True)
    assert probit.pseudo_rsquared["mckelvey_zavoina"] == pytest.approx(var / (var + 1))
    cauchit = ordstats.OrdinalModel.from_formula(
        "Sat ~ Infl", housing, weights="Freq", link="cauchit"
    ).fit()
    assert np.isnan(cauchit.pseudo_rsquared["mckelvey_zavoina"])


# -- probability-scale residuals --------------------------------------------------


def test_probability_residuals_by_hand(wine_res):
    cum = wine_res.predict(which="cumprob").to_numpy()
    cum = np.column_stack([np.zeros(72), cum, np.ones(72)])
    y = wine_res.model.data.y
    below = cum[np.arange(72), y]  # P(Y < y)
    above = 1 - cum[np.arange(72), y + 1]  # P(Y > y)
    np.testing.assert_allclose(wine_res.resid_prob, below - above, atol=1e-12)
    assert wine_res.resid_prob.name == "resid_prob"
    assert wine_res.resid_prob.between(-1, 1).all()


def test_probability_residuals_in_the_tails():
    """A top-category row far in the upper tail: P(Y < y) is tiny, not lost to rounding."""
    y = np.array([0, 1, 2, 0, 1, 2, 2, 0])
    x = np.array([0.0, 0.1, 0.2, -0.1, 0.3, 0.1, 0.15, 0.05])
    res = ordstats.OrdinalModel(y, x).fit()
    from ordstats.results.goodness import probability_residuals

    ev = res.model.evaluate(res.params.to_numpy())
    residual = probability_residuals(ev, res.model.link)
    top = y == 2
    # for the top category P(Y > y) = 0 exactly, so r = P(Y < y) = F(l)
    np.testing.assert_allclose(residual[top], res.model.link.cdf(ev.lower[top]))
    bottom = y == 0
    np.testing.assert_allclose(residual[bottom], -res.model.link.sf(ev.upper[bottom]))
