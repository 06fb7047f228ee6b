"""Cumulative link mixed models (clmm) against R's ordinal::clmm references and invariants."""

from __future__ import annotations

import itertools
import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats.errors import (
    FormulaError,
    PredictionError,
    PredictionWarning,
    SpecificationError,
    SpecificationWarning,
)
from ordstats.estimation.mixed import OrdinalMixedModel
from tests._numdiff import central_jacobian

REF = Path(__file__).resolve().parents[1] / "data" / "reference"
WINE_F = "rating ~ temp + contact + (1|judge)"


def _load(name: str) -> dict:
    return json.loads((REF / name).read_text())


def _wine_extra(wine: pd.DataFrame) -> pd.DataFrame:
    out = wine.copy()
    out["cyes"] = (out["contact"] == "yes").astype(float)
    out["off"] = 0.25 * (np.arange(72) % 3)
    out["w"] = 1.0 + (np.arange(1, 73) % 3)
    return out


# case file -> (dataset, formula, fit keywords, model keywords, which R numbers)
CASES = {
    "clmm_wine_laplace.json": ("wine", WINE_F, {}, {}),
    "clmm_wine_agq10.json": ("wine", WINE_F, {"nagq": 10}, {}),
    "clmm_wine_probit_laplace.json": ("wine", WINE_F, {}, {"link": "probit"}),
    "clmm_soup_laplace.json": ("soup", "SURENESS ~ PROD + (1|RESP)", {}, {}),
    "clmm_extra/wine_logit.json": ("wine", WINE_F, {}, {}),
    "clmm_extra/wine_probit.json": ("wine", WINE_F, {}, {"link": "probit"}),
    # R's single-term code swaps cloglog and loglog (clmm_extra/README.md)
    "clmm_extra/wine_cloglog.json": ("wine", WINE_F, {}, {"link": "loglog"}),
    "clmm_extra/wine_loglog.json": ("wine", WINE_F, {}, {"link": "cloglog"}),
    "clmm_extra/wine_equidistant.json": ("wine", WINE_F, {}, {"threshold": "equidistant"}),
    "clmm_extra/wine_symmetric.json": ("wine", WINE_F, {}, {"threshold": "symmetric"}),
    "clmm_extra/wine_weights.json": ("wine", WINE_F, {}, {"weights": "w"}),
    "clmm_extra/wine_agq3.json": ("wine", WINE_F, {"nagq": 3}, {}),
    "clmm_extra/wine_agq5.json": ("wine", WINE_F, {"nagq": 5}, {}),
    "clmm_extra/wine_agq20.json": ("wine", WINE_F, {"nagq": 20}, {}),
    "clmm_extra/wine_crossed.json": (
        "wine",
        "rating ~ temp + contact + (1|judge) + (1|bottle)",
        {},
        {},
    ),
    "clmm_extra/wine_corr_slope.json": (
        "wine",
        "rating ~ temp + contact + (1 + contact|judge)",
        {},
        {},
    ),
    "clmm_extra/wine_uncorr_factor.json": (
        "wine",
        "rating ~ temp + contact + (1|judge) + (0 + contact|judge)",
        {},
        {},
    ),
    "clmm_extra/wine_offset.json": ("wine", WINE_F, {}, {"offset": "off"}),
    "clmm_extra/wine_bottle_only.json": ("wine", "rating ~ temp + contact + (1|bottle)", {}, {}),
    "clmm_extra/wine_uncorr_dummy.json": (
        "wine",
        "rating ~ temp + contact + (1|judge) + (0 + cyes|judge)",
        {},
        {},
    ),
    "clmm_extra/soup_nested.json": ("soup", "SURENESS ~ PROD + (1|RESP/DAY)", {}, {}),
    "clmm_extra/soup_agq10.json": ("soup", "SURENESS ~ PROD + (1|RESP)", {"nagq": 10}, {}),
    "clmm_extra/soup_fixed3.json": ("soup", "SURENESS ~ PROD + DAY + SOUPTYPE + (1|RESP)", {}, {}),
}

_FITS: dict[str, ordstats.results.mixed.MixedResults] = {}


def _fit(case: str, wine: pd.DataFrame, soup: pd.DataFrame):
    if case not in _FITS:
        dataset, formula, fit_kw, model_kw = CASES[case]
        data = _wine_extra(wine) if dataset == "wine" else soup
        model = ordstats.OrdinalModel.from_formula(formula, data, **model_kw)
        assert isinstance(model, OrdinalMixedModel)
        if case in _SINGULAR:
            with pytest.warns(SpecificationWarning, match="singular fit"):
                _FITS[case] = model.fit(**fit_kw)
        else:
            _FITS[case] = model.fit(**fit_kw)
    return _FITS[case]


# R's fits of these end at a correlation of -1 too (their reference files)
_SINGULAR = {"clmm_extra/wine_corr_slope.json", "clmm_extra/wine_uncorr_factor.json"}


def _r_names(names: list[str]) -> list[str]:
    # ordstats names factor columns as formulaic ("temp[T.warm]"), R as "tempwarm"
    return [n.replace("[T.", "").replace("]", "") for n in names]


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_r(case: str, wine: pd.DataFrame, soup: pd.DataFrame) -> None:
    ref = _load(case)
    res = _fit(case, wine, soup)
    assert res.llf == pytest.approx(ref["loglik"], rel=1e-6)
    names = _r_names(list(res.params.index))
    r_coef = pd.Series(ref["coef"])
    np.testing.assert_allclose(res.params.to_numpy(), r_coef[names].to_numpy(), atol=1e-4)
    sd = res.varcorr()
    for group, entry in ref["extra"]["random_effects"].items():
        if "sd" in entry and isinstance(entry["sd"], dict):
            base = group.split(".")[0]
            for col, value in entry["sd"].items():
                mine = sd[(sd["group"] == base) & (_r_col(sd["name"]) == col)]["sd"]
                assert mine.size, (group, col)
                assert mine.max() == pytest.approx(value, abs=1e-3) or mine.min() == pytest.approx(
                    value, abs=1e-3
                )
        else:
            assert sd[sd["group"] == group]["sd"].iloc[0] == pytest.approx(entry["sd"], abs=1e-3)
    if case in _SWAPPED_LINK:
        return  # R's SEs for its mislabelled links have no exact counterpart (README)
    indep = ref["extra"].get("independent")
    # exact SEs (tests/r/clmm_indep.R) where available; R's own numerical ones otherwise
    r_se = pd.Series(indep["se"] if isinstance(indep, dict) and indep.get("se") else ref["se"])
    if not res.boundary:
        np.testing.assert_allclose(res.bse.to_numpy(), r_se[names].to_numpy(), rtol=1e-2)


_SWAPPED_LINK = {"clmm_extra/wine_cloglog.json", "clmm_extra/wine_loglog.json"}


def _r_col(names: pd.Series) -> pd.Series:
    return (
        names.str.replace("[T.", "", regex=False)
        .str.replace("]", "", regex=False)
        .str.replace("[", "", regex=False)
    )


def test_ranef_and_condvar_match_r(wine: pd.DataFrame, soup: pd.DataFrame) -> None:
    ref = _load("clmm_wine_laplace.json")["extra"]
    modes, cvar = _fit("clmm_wine_laplace.json", wine, soup).ranef(condvar=True)
    r_modes = pd.Series(ref["ranef"]["judge"])
    r_var = pd.Series(ref["condVar"]["judge"])
    np.testing.assert_allclose(modes["judge"].iloc[:, 0], r_modes[modes["judge"].index], atol=1e-3)
    np.testing.assert_allclose(cvar["judge"].iloc[:, 0], r_var[cvar["judge"].index], atol=1e-3)


def test_fitted_conditional_probabilities_match_r(wine: pd.DataFrame, soup: pd.DataFrame) -> None:
    ref = _load("clmm_wine_laplace.json")["extra"]["fitted_observed_first10"]
    res = _fit("clmm_wine_laplace.json", wine, soup)
    prob = res.predict(wine.iloc[:10])
    observed = prob.to_numpy()[np.arange(10), wine["rating"].cat.codes.to_numpy()[:10]]
    np.testing.assert_allclose(observed, ref, atol=1e-4)


# ---------------------------------------------------------------------------
# properties


def _wine_model(wine: pd.DataFrame, formula: str = WINE_F, **kw: object) -> OrdinalMixedModel:
    model = ordstats.OrdinalModel.from_formula(formula, wine, **kw)
    assert isinstance(model, OrdinalMixedModel)
    return model


@pytest.mark.parametrize(
    "formula",
    [
        WINE_F,
        "rating ~ temp + contact + (1|judge) + (1|bottle)",
        "rating ~ temp + (1 + contact|judge)",
    ],
)
def test_laplace_gradient_is_smooth_and_finite(wine: pd.DataFrame, formula: str) -> None:
    """Central differences at two step sizes agree: the objective is smooth (exact modes)."""
    model = _wine_model(wine, formula)
    x = model.start_params() + 0.1
    f = model.loglike
    g1 = central_jacobian(f, x, 1e-4)
    g2 = central_jacobian(f, x, 1e-6)
    np.testing.assert_allclose(g1, g2, rtol=1e-5, atol=1e-6)
    assert np.all(np.isfinite(g1))


def test_gradient_is_zero_at_the_optimum(wine: pd.DataFrame, soup: pd.DataFrame) -> None:
    res = _fit("clmm_wine_laplace.json", wine, soup)
    g = central_jacobian(res.model.loglike, res.params_all, 1e-6)
    assert np.max(np.abs(g)) < 1e-5


def test_agq_one_node_equals_laplace(wine: pd.DataFrame) -> None:
    model = _wine_model(wine)
    x = model.start_params() + np.linspace(-0.2, 0.2, 7)
    assert model.loglike(x, nagq=1) == pytest.approx(
        model.objective and -model.objective.value(x, 1)
    )
    # the quadrature formula itself with one node (x = 0, w = sqrt(pi)) is the Laplace value
    m = model.objective.modes(x)
    assert -model.objective._agq(x, m, 1) == pytest.approx(-m.laplace, rel=1e-12)


def test_agq_converges_as_nodes_grow(wine: pd.DataFrame) -> None:
    model = _wine_model(wine)
    x = model.start_params() + 0.3
    values = np.array([model.loglike(x, nagq=k) for k in (1, 3, 5, 10, 20, 30)])
    diffs = np.abs(np.diff(values))
    assert diffs[-1] < 1e-8
    assert diffs[-1] < diffs[0]


def test_offset_shifts_thresholds(wine: pd.DataFrame, soup: pd.DataFrame) -> None:
    base = _fit("clmm_wine_laplace.json", wine, soup)
    data = wine.assign(off=0.7)
    res = _wine_model(data, offset="off").fit()
    assert res.llf == pytest.approx(base.llf, rel=1e-8)
    np.testing.assert_allclose(res.params.iloc[:4], base.params.iloc[:4] + 0.7, atol=1e-4)
    np.testing.assert_allclose(res.params.iloc[4:], base.params.iloc[4:], atol=1e-4)


def test_vanishing_sd_reproduces_clm(wine: pd.DataFrame) -> None:
    clm = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    model = _wine_model(wine)
    x = np.concatenate([clm.params.to_numpy(), [-25.0]])
    assert model.loglike(x) == pytest.approx(clm.llf, rel=1e-10)
    assert model.loglike(x, nagq=7) == pytest.approx(clm.llf, rel=1e-10)


def test_boundary_fit_holds_sd_and_matches_clm(wine: pd.DataFrame) -> None:
    res = _wine_model(wine, "rating ~ temp + contact + (1|bottle)").fit()
    clm = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    assert res.varcorr()["sd"].iloc[0] < 1e-2
    assert res.llf == pytest.approx(clm.llf, abs=1e-6)
    np.testing.assert_allclose(res.params.to_numpy(), clm.params.to_numpy(), atol=1e-3)


# ---------------------------------------------------------------------------
# formulas and errors


def test_nested_syntax_equals_explicit_interaction(soup: pd.DataFrame) -> None:
    a = ordstats.OrdinalModel.from_formula("SURENESS ~ PROD + (1|RESP/DAY)", soup)
    b = ordstats.OrdinalModel.from_formula("SURENESS ~ PROD + (1|RESP) + (1|DAY:RESP)", soup)
    assert [t.group for t in a.terms] == ["RESP", "DAY:RESP"]
    x = a.start_params() + 0.2
    assert a.loglike(x) == pytest.approx(b.loglike(x), rel=1e-12)


def test_unknown_grouping_column(wine: pd.DataFrame) -> None:
    with pytest.raises(FormulaError, match=r"judges.*did you mean 'judge'"):
        ordstats.OrdinalModel.from_formula("rating ~ temp + (1|judges)", wine)


def test_unknown_slope_column(wine: pd.DataFrame) -> None:
    with pytest.raises(FormulaError, match="contct"):
        ordstats.OrdinalModel.from_formula("rating ~ temp + (1 + contct|judge)", wine)


def test_single_level_group(wine: pd.DataFrame) -> None:
    data = wine.assign(one="a")
    with pytest.raises(SpecificationError, match="single level"):
        ordstats.OrdinalModel.from_formula("rating ~ temp + (1|one)", data)


def test_grouping_factors_of_two_levels_are_refused_as_r_clmm_does(wine: pd.DataFrame) -> None:
    # before: (1|half) fitted an SD of 1.58 from two group effects; R's clmm stops with
    # "all(sapply(gfl, nlevels) > 2) is not TRUE"
    data = wine.assign(half=np.where(wine["judge"].cat.codes < 4, "a", "b"))
    message = r"'half' of \(1\|half\) has 2 levels \('a', 'b'\).*from two groups"
    model = ordstats.OrdinalModel.from_formula("rating ~ temp + (1|half)", data)
    with pytest.raises(SpecificationError, match=message):
        model.fit()
    two_judges = data[data["judge"].isin(["1", "2"])]
    model = ordstats.OrdinalModel.from_formula("rating ~ temp + (1|judge:half)", two_judges)
    with pytest.raises(SpecificationError, match=r"'judge:half' .* has 2 levels"):
        model.fit()
    # a prior on the SD makes the model proper (brms fits it): the posterior mode
    bayes = ordstats.OrdinalModel.from_formula("rating ~ temp + (1|half)", data)
    mode = bayes.fit(prior=ordstats.prior("normal(0, 1)", "sd"))
    assert np.all(np.isfinite(mode.params))
    three = data[data["judge"].isin(["1", "2", "3"])]  # three groups: fitted
    assert ordstats.OrdinalModel.from_formula("rating ~ temp + (1|judge)", three).fit().converged


def test_nominal_and_scale_not_available(wine: pd.DataFrame) -> None:
    with pytest.raises(SpecificationError, match="not available with random effects"):
        ordstats.OrdinalModel.from_formula(WINE_F, wine, nominal="~ contact")
    with pytest.raises(SpecificationError, match="not available with random effects"):
        ordstats.OrdinalModel.from_formula(WINE_F, wine, scale="~ temp")


def test_agq_needs_one_scalar_term(wine: pd.DataFrame) -> None:
    model = _wine_model(wine, "rating ~ temp + (1|judge) + (1|bottle)")
    with pytest.raises(SpecificationError, match="single scalar"):
        model.fit(nagq=5)


def test_missing_group_rows_are_dropped(wine: pd.DataFrame) -> None:
    data = wine.copy()
    data["judge"] = data["judge"].astype(object)
    data.loc[0, "judge"] = None
    with pytest.warns(ordstats.errors.MissingDataWarning):
        model = _wine_model(data)
    assert model.n_rows == 71


# ---------------------------------------------------------------------------
# predictions and reporting


def test_predictions(wine: pd.DataFrame, soup: pd.DataFrame) -> None:
    res = _fit("clmm_wine_laplace.json", wine, soup)
    new = wine.iloc[:4]
    for re_form in (None, 0, "marginal"):
        prob = res.predict(new, re_form=re_form)
        np.testing.assert_allclose(prob.sum(axis=1), 1.0)
        cum = res.predict(new, which="cumprob", re_form=re_form)
        np.testing.assert_allclose(cum.to_numpy(), np.cumsum(prob.to_numpy(), axis=1))
        expected = res.predict(new, which="expected", re_form=re_form)
        np.testing.assert_allclose(expected, prob.to_numpy() @ np.arange(1, 6))
    # the population average is flatter than the typical (zero) judge
    p0 = res.predict(new, re_form=0).to_numpy()
    pm = res.predict(new, re_form="marginal").to_numpy()
    assert np.all(pm.max(axis=1) < p0.max(axis=1))
    # marginal by brute-force integration over b ~ N(0, sigma^2)
    sigma = res.varcorr()["sd"].iloc[0]
    z = np.linspace(-8, 8, 4001)
    dens = np.exp(-0.5 * z**2) / np.sqrt(2 * np.pi)
    eta = 3.06299662584431 * 0 + res.params.iloc[4] * 0  # cold, no contact row 0
    theta = res.params.iloc[:4].to_numpy()
    cdf = 1 / (1 + np.exp(-(theta[:, None] - eta - sigma * z[None, :])))
    brute = np.trapezoid(cdf * dens, z, axis=1)
    cum_m = res.predict(new.iloc[:1], which="cumprob", re_form="marginal").to_numpy()[0, :4]
    np.testing.assert_allclose(cum_m, brute, atol=1e-8)


def test_unseen_group_falls_back_with_warning(wine: pd.DataFrame, soup: pd.DataFrame) -> None:
    res = _fit("clmm_wine_laplace.json", wine, soup)
    new = wine.iloc[:2].copy()
    new["judge"] = ["99", "1"]
    with pytest.warns(PredictionWarning, match="not seen"):
        prob = res.predict(new)
    np.testing.assert_allclose(prob.iloc[0], res.predict(new.iloc[:1], re_form=0).iloc[0])
    klass = res.predict(new.iloc[1:], which="class")
    assert klass.iloc[0] in klass.cat.categories
    assert [str(v) for v in klass.cat.categories] == res.model.levels
    with pytest.raises(PredictionError):
        res.predict(new, re_form="conditional")


def test_summary_and_tables(wine: pd.DataFrame, soup: pd.DataFrame) -> None:
    res = _fit("clmm_wine_laplace.json", wine, soup)
    text = res.summary()
    for piece in (
        "Random effects:",
        "judge",
        "Number of groups:  judge 9",
        "Threshold coefficients:",
    ):
        assert piece in text
    ref = _load("clmm_wine_laplace.json")
    assert res.aic == pytest.approx(ref["aic"], rel=1e-6)
    assert res.bic == pytest.approx(ref["bic"], rel=1e-6)
    assert res.nobs == 72 and res.n_groups == {"judge": 9}
    ci = res.conf_int()
    r_ci = pd.DataFrame(ref["wald_ci"], index=["lower", "upper"]).T
    np.testing.assert_allclose(
        ci.to_numpy(), r_ci.loc[_r_names(list(ci.index))].to_numpy(), atol=1e-3
    )


# ---------------------------------------------------------------------------
# likelihood-ratio tests


def test_lr_test_clm_vs_clmm_uses_boundary_mixture(wine: pd.DataFrame, soup: pd.DataFrame) -> None:
    ref = _load("clmm_extra/wine_logit.json")["extra"]["anova_vs_clm"]["table"]["columns"]
    clm = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    clmm = _fit("clmm_wine_laplace.json", wine, soup)
    test = ordstats.lr_test(clm, clmm)
    assert test.statistic == pytest.approx(ref["LR.stat"][1], rel=1e-5)
    assert test.df == 1 and test.boundary
    # R's anova.clmm reports the naive chi2(1) p-value; the mixture halves it
    assert test.pvalue == pytest.approx(0.5 * ref["Pr(>Chisq)"][1], rel=1e-4)
    assert "boundary" in str(test) and "mixture" in str(test)
    table = ordstats.anova(clm, clmm)
    assert table["logLik"].tolist() == pytest.approx(ref["logLik"], rel=1e-6)
    assert table["AIC"].tolist() == pytest.approx(ref["AIC"], rel=1e-6)


def test_lr_test_between_clmm_fits(wine: pd.DataFrame, soup: pd.DataFrame) -> None:
    small = _fit("clmm_wine_laplace.json", wine, soup)
    big = _fit("clmm_extra/wine_corr_slope.json", wine, soup)
    test = ordstats.lr_test(small, big)
    assert test.df == 2 and test.boundary
    assert test.statistic == pytest.approx(2 * (big.llf - small.llf))
    with pytest.raises(SpecificationError, match="full model must be the mixed one"):
        ordstats.lr_test(big, ordstats.OrdinalModel.from_formula("rating ~ temp", wine).fit())
    with pytest.raises(SpecificationError, match="different rows"):
        ordstats.lr_test(_fit("clmm_soup_laplace.json", wine, soup), big)


def test_lr_test_of_clmm_fits_given_larger_first_says_to_swap_them(wine, soup) -> None:
    # it said "the restricted model has fixed effects ['contact[T.yes]'] that the full
    # one lacks: not nested", though the two are nested the other way round
    small = ordstats.OrdinalModel.from_formula("rating ~ temp + (1|judge)", wine).fit()
    big = _fit("clmm_wine_laplace.json", wine, soup)
    with pytest.raises(SpecificationError, match=r"pass the smaller model first"):
        ordstats.lr_test(big, small)
    assert ordstats.lr_test(small, big).df == 1
    with pytest.raises(SpecificationError, match=r"pass the smaller model first"):
        ordstats.lr_test(_fit("clmm_extra/wine_corr_slope.json", wine, soup), big)


@pytest.mark.parametrize(
    "kw",
    [{}, {"link": "probit"}, {"link": "cloglog"}, {"threshold": "symmetric"}, {"weights": "w"}],
)
def test_analytic_laplace_gradient_matches_finite_differences(wine: pd.DataFrame, kw: dict) -> None:
    from ordstats.families.mixed import laplace_gradient

    data = _wine_extra(wine).assign(z=np.arange(72) % 3 + 0.5)
    model = _wine_model(data, **kw)
    x = model.start_params() + np.linspace(-0.3, 0.3, model.start_params().size)
    value, grad = laplace_gradient(model.objective, x)
    assert value == pytest.approx(-model.loglike(x), rel=1e-12)
    fd = central_jacobian(lambda v: -model.loglike(v), x, 1e-6)
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-5)


def test_analytic_gradient_with_a_scalar_slope_term(wine: pd.DataFrame) -> None:
    from ordstats.families.mixed import laplace_gradient

    data = wine.assign(z=np.arange(72) % 3 + 0.5)
    model = _wine_model(data, "rating ~ temp + contact + (0 + z|judge)")
    x = model.start_params() + 0.2
    _, grad = laplace_gradient(model.objective, x)
    fd = central_jacobian(lambda v: -model.loglike(v), x, 1e-6)
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", ["clmm_extra/wine_logit.json", "clmm_extra/wine_agq10.json"])
def test_profile_interval_of_the_sd_matches_r(case: str, wine: pd.DataFrame, soup) -> None:
    """Exact profile limits (tests/r/clmm_extra.R, on the independent objective) and
    R's clmm2 profile (spline-interpolated on a grid, so only to ~3e-4)."""
    extra = _load(case)["extra"]
    nagq = 10 if "agq10" in case else 1
    res = ordstats.OrdinalModel.from_formula(WINE_F, wine).fit(nagq=nagq)
    got = res.sd_conf_int().loc["judge"]
    np.testing.assert_allclose(
        [got["lower"], got["upper"]], extra["profile_sd"]["sd_ci"], rtol=1e-4
    )
    if "profile_sd_clmm2" in extra:
        clmm2 = extra["profile_sd_clmm2"]["sd_ci"]
        np.testing.assert_allclose([got["lower"], got["upper"]], clmm2, rtol=1e-3)
    assert got["sd"] == pytest.approx(np.exp(res.variance_params.iloc[0]))


def test_profile_limits_drop_the_likelihood_by_half_the_chi_square_quantile(wine, soup) -> None:
    res = _fit("clmm_extra/wine_logit.json", wine, soup)
    ci = res.sd_conf_int(alpha=0.1).loc["judge"]
    index = res.k_fixed
    target = 0.5 * 1.6448536269514722**2
    for limit in (ci["lower"], ci["upper"]):
        llf, params = res.model.fit_with_held(index, np.log(limit), res.params_all)
        assert res.llf - llf == pytest.approx(target, abs=1e-5)
        assert params[index] == np.log(limit)
    narrower = res.sd_conf_int(alpha=0.2).loc["judge"]
    assert ci["lower"] < narrower["lower"] < narrower["sd"] < narrower["upper"] < ci["upper"]


def test_profile_interval_reaches_zero_when_the_sd_may_vanish() -> None:
    rng = np.random.default_rng(3)
    n, groups = 300, 30
    x = rng.normal(size=n)
    data = pd.DataFrame(
        {
            "y": np.searchsorted([-1.0, 0.5], x + rng.logistic(size=n)),
            "x": x,
            "g": np.repeat([f"g{i}" for i in range(groups)], n // groups),
        }
    )
    res = ordstats.OrdinalModel.from_formula("y ~ x + (1|g)", data).fit()
    ci = res.sd_conf_int().loc["g"]
    assert ci["lower"] == 0.0
    assert ci["upper"] > ci["sd"]
    llf, _ = res.model.fit_with_held(res.k_fixed, np.log(ci["upper"]), res.params_all)
    assert res.llf - llf == pytest.approx(0.5 * 1.959963984540054**2, abs=1e-5)


def test_wald_interval_of_the_sd_is_on_the_log_scale(wine, soup) -> None:
    res = _fit("clmm_extra/wine_logit.json", wine, soup)
    ci = res.sd_conf_int(method="wald").loc["judge"]
    t, se = res.variance_params.iloc[0], np.sqrt(res.cov_params().iloc[res.k_fixed, res.k_fixed])
    np.testing.assert_allclose(
        [ci["lower"], ci["upper"]], np.exp([t - 1.959963984540054 * se, t + 1.959963984540054 * se])
    )


def test_profile_interval_of_a_correlated_slope_sd(wine, soup) -> None:
    """The SD of a correlated term's second column is the norm of a Cholesky row: its
    profile holds that norm and re-maximises the row's direction and everything else."""
    data = _wine_extra(wine).assign(z=np.arange(72) % 3 + 0.5)
    with pytest.warns(SpecificationWarning, match=r"singular fit: .*'z' has SD 0 or a correlation"):
        res = _wine_model(data, "rating ~ temp + contact + (1 + z|judge)").fit()
    ci = res.sd_conf_int(alpha=0.2)
    assert list(ci.index) == ["judge:(Intercept)", "judge:z"]
    np.testing.assert_allclose(ci["sd"], res.varcorr()["sd"], rtol=1e-12)
    target = 0.5 * 1.2815515655446004**2
    for component, name in enumerate(["judge:(Intercept)", "judge:z"]):
        row = ci.loc[name]
        assert row["lower"] < row["sd"] < row["upper"]
        for limit in (row["lower"], row["upper"]):
            if limit == 0.0:
                continue
            llf, params = res.model.fit_with_held_sd(0, component, np.log(limit), res.params_all)
            assert res.llf - llf == pytest.approx(target, abs=1e-4)
            diag, off = res.model.sd_positions(0, component)
            held = np.sqrt(params[off] @ params[off] + np.exp(2 * params[diag]))
            assert held == pytest.approx(limit, rel=1e-12)
    wald = res.sd_conf_int(alpha=0.2, method="wald")
    first = wald.loc["judge:(Intercept)"]
    assert first["lower"] < first["sd"] < first["upper"]
    # the fit puts the correlation at -1 (log L[1, 1] on the boundary, left out of the
    # covariance as R does), so the delta method has no SE there: NaN, not a number
    assert res.boundary == [1] and np.isnan(wald.loc["judge:z", "lower"])


def test_sd_conf_int_rejects_bad_arguments(wine, soup) -> None:
    simple = _fit("clmm_extra/wine_logit.json", wine, soup)
    with pytest.raises(SpecificationError, match="method must be"):
        simple.sd_conf_int(method="bootstrap")
    with pytest.raises(SpecificationError, match="alpha must be"):
        simple.sd_conf_int(alpha=1.5)


@pytest.mark.parametrize("link", ["logit", "probit", "cauchit"])
def test_clm_start_reaches_the_same_optimum(wine: pd.DataFrame, link: str) -> None:
    """The default start (the clm fit, scaled for sd = 1, with a Hessian guess for BFGS)
    and the marginal start find the same maximum."""
    model = ordstats.OrdinalModel.from_formula(WINE_F, wine, link=link)
    fast = model.fit()
    plain = model.fit(start_params=model.start_params())
    assert fast.llf == pytest.approx(plain.llf, rel=1e-9)
    np.testing.assert_allclose(fast.params_all, plain.params_all, atol=2e-4)
    clm = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine, link=link).fit()
    x0, inverse = model._clm_start(model._objective_functions(1)[1])
    variance = {"logit": np.pi**2 / 3, "probit": 1.0}.get(link, np.inf)
    # two converged clm fits (a cauchit clm starts at the probit fit, the mixed start does
    # not): equal to the Newton tolerance, not bit for bit
    np.testing.assert_allclose(
        x0[: len(clm.params)], clm.params.to_numpy() * np.sqrt(1 + 1 / variance), rtol=1e-7
    )
    assert inverse is not None and np.all(np.linalg.eigvalsh(inverse) > 0)


@pytest.mark.parametrize(
    ("formula", "kw"),
    [
        ("rating ~ temp + contact + (1|judge) + (1|bottle)", {}),
        ("rating ~ temp + contact + (1 + contact|judge)", {"link": "probit"}),
        ("rating ~ temp + contact + (1|judge) + (0 + z|judge)", {"weights": "w"}),
        ("rating ~ temp + contact + (1 + z|judge)", {"threshold": "symmetric", "link": "cloglog"}),
    ],
)
def test_general_laplace_gradient_matches_finite_differences(
    wine: pd.DataFrame, formula: str, kw: dict
) -> None:
    from ordstats.families.mixed import laplace_gradient_general

    data = _wine_extra(wine).assign(z=np.arange(72) % 3 + 0.5)
    model = _wine_model(data, formula, **kw)
    x = model.start_params() + np.linspace(-0.3, 0.3, model.start_params().size)
    value, grad = laplace_gradient_general(model.objective, x)
    assert value == pytest.approx(-model.loglike(x), rel=1e-12)
    fd = central_jacobian(lambda v: -model.loglike(v), x, 1e-6)
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-6)


def test_general_gradient_equals_the_scalar_one(wine: pd.DataFrame) -> None:
    from ordstats.families.mixed import laplace_gradient, laplace_gradient_general

    model = _wine_model(_wine_extra(wine), link="loglog", weights="w")
    x = model.start_params() + 0.1
    np.testing.assert_allclose(
        laplace_gradient_general(model.objective, x)[1],
        laplace_gradient(model.objective, x)[1],
        rtol=1e-10,
        atol=1e-10,
    )


@pytest.mark.parametrize("link_name", ["logit", "probit", "cloglog", "loglog", "cauchit"])
def test_analytic_third_derivatives_match_finite_differences(link_name: str) -> None:
    """d c / dU and d c / dL (c = d^2 log P / d eta^2) from d2log_pdf, against Richardson
    differences of c, on intervals of width >= 0.1 (narrower ones cancel in both)."""
    from ordstats.core.links import get_link
    from ordstats.families.cumulative.likelihood import interval_derivatives
    from ordstats.families.mixed import _third_derivatives

    link = get_link(link_name)
    rng = np.random.default_rng(7)
    lower = np.r_[rng.normal(size=400) * 3, -np.inf, -np.inf, 1.0]
    upper = np.r_[lower[:400] + 0.1 + rng.exponential(size=400), 0.5, -1.0, np.inf]

    def curvature(u: np.ndarray, lo: np.ndarray) -> np.ndarray:
        d = interval_derivatives(link, u, lo)
        return d.d2_upper + 2.0 * d.d2_cross + d.d2_lower

    def richardson(shift_upper: bool) -> np.ndarray:
        def diff(h: float) -> np.ndarray:
            if shift_upper:
                return (curvature(upper + h, lower) - curvature(upper - h, lower)) / (2 * h)
            return (curvature(upper, lower + h) - curvature(upper, lower - h)) / (2 * h)

        return (4 * diff(5e-4) - diff(1e-3)) / 3

    t_u, t_l = _third_derivatives(link, upper, lower)
    finite_u, finite_l = np.isfinite(upper), np.isfinite(lower)
    np.testing.assert_allclose(t_u[finite_u], richardson(True)[finite_u], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(t_l[finite_l], richardson(False)[finite_l], rtol=1e-6, atol=1e-7)
    assert np.all(t_u[~finite_u] == 0.0) and np.all(t_l[~finite_l] == 0.0)


@pytest.mark.parametrize("nagq", [1, 3, 10])
@pytest.mark.parametrize("kw", [{}, {"link": "probit", "weights": "w", "offset": "off"}])
def test_agq_gradient_matches_finite_differences(wine: pd.DataFrame, nagq: int, kw: dict) -> None:
    from ordstats.families.mixed import agq_gradient

    model = _wine_model(_wine_extra(wine), **kw)
    x = model.start_params() + np.linspace(-0.3, 0.3, model.start_params().size)
    value, grad = agq_gradient(model.objective, x, nagq)
    assert value == pytest.approx(-model.loglike(x, nagq=nagq), rel=1e-12)
    fd = central_jacobian(lambda v: -model.loglike(v, nagq=nagq), x, 1e-6)
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("link", ["Aranda-Ordaz", "log-gamma"])
def test_flexible_links_are_refused_with_random_effects(wine: pd.DataFrame, link: str) -> None:
    """Their lambda is not estimated in the mixed model: refuse rather than hold it at 1."""
    with pytest.raises(SpecificationError, match="flexible links"):
        ordstats.OrdinalModel.from_formula(WINE_F, wine, link=link)


# ---------------------------------------------------------------------------
# issue 29: repeated index labels, missing grouping values, cauchit, gradtol


def test_repeated_index_labels_fit_as_a_fresh_index(wine: pd.DataFrame) -> None:
    stacked = pd.concat([wine.iloc[:36], wine.iloc[36:]])
    stacked.index = list(range(36)) * 2  # labels repeat, as after pd.concat
    weights = pd.Series(1.0 + np.arange(72) % 3, index=stacked.index)
    res = _wine_model(stacked, weights=weights).fit()
    fresh = _wine_model(wine, weights=weights.to_numpy()).fit()
    np.testing.assert_allclose(res.params_all, fresh.params_all, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(res.llf, fresh.llf, rtol=1e-12)
    fitted = res.predict()
    assert list(fitted.index) == list(stacked.index)
    np.testing.assert_allclose(fitted.to_numpy(), fresh.predict().to_numpy(), atol=1e-8)


def test_missing_grouping_value_raises_or_drops_naming_the_column(wine: pd.DataFrame) -> None:
    data = wine.copy()
    data["judge"] = data["judge"].astype(object)
    data.loc[3, "judge"] = np.nan
    with pytest.raises(ordstats.errors.DataError, match=r"1 of 72 rows .* 'judge' \(1\)"):
        _wine_model(data, missing="raise")
    with pytest.warns(ordstats.errors.MissingDataWarning, match=r"'judge' \(1\).*dropped"):
        model = _wine_model(data, missing="drop")
    assert model.n_rows == 71 and 3 not in model.design.fixed.row_index


def _cauchit_data(seed: int, n: int = 300, groups: int = 12, sd: float = 2.5) -> pd.DataFrame:
    """``y ~ x + (1|g)`` with Cauchy latent errors (issue 29's failing case)."""
    from scipy import stats

    rng = np.random.default_rng(seed)
    g = rng.integers(0, groups, n)
    b = rng.normal(0.0, sd, groups)
    x = rng.normal(size=n)
    latent = x + b[g] + stats.cauchy.rvs(size=n, random_state=rng)
    y = np.digitize(latent, [-1.0, 0.0, 1.0])
    return pd.DataFrame({"y": pd.Categorical(y, ordered=True), "x": x, "g": [f"g{k}" for k in g]})


def _independent_laplace(model: OrdinalMixedModel, params: np.ndarray) -> float:
    """Eq. (3) for one scalar term, each group's mode found by a grid and Brent's method."""
    from scipy import optimize

    from ordstats.families.cumulative.likelihood import log_interval_probabilities

    p = model.problem
    alpha, beta, var = p.split(params)
    theta = p.jacobian @ alpha
    bounds = np.concatenate([[-np.inf], theta, [np.inf]])
    sd = float(np.exp(var[0]))

    def h(u: float, rows: np.ndarray) -> float:
        eta = p.X[rows] @ beta + p.offset[rows] + sd * u
        y = p.y[rows]
        lp = log_interval_probabilities(p.link, bounds[y + 1] - eta, bounds[y] - eta)
        return float(p.weights[rows] @ lp) - 0.5 * u * u

    total = 0.0
    grid = np.linspace(-10, 10, 2001)
    for level in range(p.terms[0].n_levels):
        rows = p.terms[0].codes == level
        best = grid[np.argmax([h(u, rows) for u in grid])]
        mode = optimize.minimize_scalar(
            lambda u, rows=rows: -h(u, rows), bracket=(best - 0.01, best, best + 0.01), tol=1e-12
        ).x
        step = 1e-4
        curvature = -(h(mode + step, rows) - 2 * h(mode, rows) + h(mode - step, rows)) / step**2
        total += h(mode, rows) - 0.5 * np.log(curvature)
    return total


@pytest.mark.parametrize("seed", [0, 6, 7])
def test_cauchit_fit_reaches_a_finite_optimum(seed: int) -> None:
    # these seeds gave llf = -inf with converged=True: log P of the cauchit link is not
    # concave in eta, so the inner Newton met an indefinite Hessian at the start
    model = ordstats.OrdinalModel.from_formula("y ~ x + (1|g)", _cauchit_data(seed), link="cauchit")
    res = model.fit()
    assert res.converged and np.isfinite(res.llf)
    assert np.all(np.isfinite(res.bse)) and np.all(np.isfinite(res.cov_params().to_numpy()))
    assert res.max_grad < 1e-5
    np.testing.assert_allclose(res.llf, _independent_laplace(model, res.params_all), atol=1e-6)
    # a better optimum is not nearby: the fit from a perturbed start ends at the same llf
    again = model.fit(start_params=res.params_all + 0.05)
    np.testing.assert_allclose(again.llf, res.llf, atol=1e-6)


def test_a_fit_never_converges_at_an_infinite_log_likelihood(wine: pd.DataFrame) -> None:
    model = _wine_model(wine)
    start = model.start_params()
    start[:2] = start[1::-1]  # thresholds decreasing: -inf
    with pytest.raises(SpecificationError, match="not finite at the start values"):
        model.fit(start_params=start)


def test_gradtol_is_the_name_and_gtol_still_works_with_a_future_warning(wine) -> None:
    model = _wine_model(wine)
    res = model.fit(gradtol=1e-6)
    with pytest.warns(FutureWarning, match="gtol is now called gradtol"):
        old = model.fit(gtol=1e-6)
    np.testing.assert_allclose(old.params_all, res.params_all)
    with pytest.raises(SpecificationError, match="not both"):
        model.fit(gradtol=1e-5, gtol=1e-6)


@pytest.mark.parametrize("value", [np.inf, 0.0, -1e-6, np.nan, "1e-6", None])
def test_gradtol_must_be_a_positive_finite_number(wine: pd.DataFrame, value: object) -> None:
    # gtol=np.inf used to report convergence at the start (llf -81.698 < -81.565)
    model = _wine_model(wine)
    with pytest.raises(SpecificationError, match="gradtol must be a positive number, and finite"):
        model.fit(gradtol=value)  # type: ignore[arg-type]
    with (
        pytest.warns(FutureWarning),
        pytest.raises(SpecificationError, match="gradtol must be a positive number"),
    ):
        model.fit(gtol=value if value is not None else np.inf)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# issue 29: formulas with offset(), transformed slopes, empty and repeated bars


def test_offset_in_a_mixed_formula_is_the_offset(wine: pd.DataFrame) -> None:
    """R's clmm takes an offset as a formula term; it was refused, asking for offset=."""
    data = _wine_extra(wine)
    given = ordstats.OrdinalModel.from_formula(
        "rating ~ temp + (1|judge)", data, offset="off"
    ).fit()
    for formula in (  # calls inside the offset (the old refusal's repro) too
        "rating ~ temp + offset(off) + (1|judge)",
        "rating ~ temp + offset(np.log(np.exp(off))) + (1|judge)",
    ):
        res = ordstats.OrdinalModel.from_formula(formula, data).fit()
        assert res.llf == pytest.approx(given.llf, rel=1e-10)
    zero = ordstats.OrdinalModel.from_formula(
        "rating ~ temp + offset(np.zeros(72)) + (1|judge)", data
    ).fit()
    plain = ordstats.OrdinalModel.from_formula("rating ~ temp + (1|judge)", data).fit()
    assert zero.llf == pytest.approx(plain.llf, rel=1e-10)


def test_transformed_slope_in_a_bar_matches_r(wine: pd.DataFrame) -> None:
    # R: clmm(rating ~ temp + (1 + log(x + 2)|judge), wine with x = seq(0, 3, length = 72))
    data = wine.assign(x=np.linspace(0.0, 3.0, 72))
    model = ordstats.OrdinalModel.from_formula("rating ~ temp + (1 + np.log(x + 2)|judge)", data)
    with pytest.warns(SpecificationWarning, match="singular fit"):
        res = model.fit()
    assert res.model.terms[0].columns == ["(Intercept)", "np.log(x + 2)"]
    np.testing.assert_allclose(res.llf, -88.5073752, atol=1e-6)


@pytest.mark.parametrize(
    ("formula", "match"),
    [
        ("rating ~ temp + (|judge)", r"nothing left of the bar; write '\(1\|judge\)'"),
        ("rating ~ temp + (1|judge) + (1|judge)", "variances are not identified"),
        ("rating ~ temp + ( 1 | judge ) + (1|judge)", "variances are not identified"),
        ("rating ~ temp + (1|judge/bottle) + (1|judge)", "variances are not identified"),
        ("rating ~ temp + (1|judge) + (1 + contact|judge)", r"effect\(s\) \['\(Intercept\)'\]"),
        ("rating ~ temp + (1|bottle:judge) + (1|judge:bottle)", "not identified"),
    ],
)
def test_empty_or_repeated_bars_are_refused(wine: pd.DataFrame, formula: str, match: str) -> None:
    with pytest.raises(FormulaError, match=match):
        ordstats.OrdinalModel.from_formula(formula, wine)


def test_separate_intercept_and_slope_terms_are_still_allowed(wine: pd.DataFrame) -> None:
    model = ordstats.OrdinalModel.from_formula(
        "rating ~ temp + (1|judge) + (0 + contact|judge)", wine
    )
    assert [t.columns for t in model.terms] == [
        ["(Intercept)"],
        ["contact[no]", "contact[yes]"],
    ]


# ---------------------------------------------------------------------------
# issue 29 item 5: population-averaged predictions at large random-effect SDs


def _marginal_reference(link: object, cut: float, sd: float) -> float:
    """``int F(cut - sd z) phi(z) dz`` by scipy's adaptive quadrature, split around the step."""
    from scipy import integrate

    def integrand(z: float) -> float:
        return (
            float(link.cdf(np.array([cut - sd * z]))[0]) * np.exp(-0.5 * z * z) / np.sqrt(2 * np.pi)
        )

    step = cut / sd
    inner = [step + d / sd for d in (-10.0, -1.0, 0.0, 1.0, 10.0) if abs(step + d / sd) < 12.0]
    edges = [-12.0, *inner, 12.0]
    return sum(
        integrate.quad(integrand, a, b, epsabs=1e-14, epsrel=1e-13, limit=500)[0]
        for a, b in itertools.pairwise(edges)
    )


@pytest.mark.parametrize("link_name", ["logit", "probit", "cloglog", "loglog", "cauchit"])
def test_marginal_integral_is_accurate_for_every_sd(link_name: str) -> None:
    from ordstats.core.links import get_link
    from ordstats.families.mixed import marginal_cumulative

    link = get_link(link_name)
    cuts = np.array([-40.0, -6.0, -1.3, 0.0, 0.4, 2.5, 7.0, 35.0])
    sds = np.array([0.1, 0.3, 1.0, 3.0, 10.0, 30.0])
    got = marginal_cumulative(link, np.tile(cuts, (sds.size, 1)), sds)
    expected = [[_marginal_reference(link, c, s) for c in cuts] for s in sds]
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-8)
    # no random part: the link itself
    np.testing.assert_allclose(
        marginal_cumulative(link, cuts[None, :], np.zeros(1))[0], link.cdf(cuts)
    )


@pytest.mark.parametrize("sd", [3.0, 10.0, 30.0])
def test_marginal_predictions_at_large_sds(wine: pd.DataFrame, soup, sd: float) -> None:
    import copy

    from scipy import special

    # probit: the marginal is exactly Phi((theta - eta) / sqrt(1 + sd^2))
    res = copy.deepcopy(_fit("clmm_wine_probit_laplace.json", wine, soup))
    res.params_all[-1] = np.log(sd)
    got = res.predict(wine.iloc[:6], which="cumprob", re_form="marginal").to_numpy()[:, :-1]
    eta = res.model.design.fixed.location.matrix[:6] @ res.params.to_numpy()[4:]
    theta = res.params.to_numpy()[:4]
    exact = special.ndtr((theta[None, :] - eta[:, None]) / np.sqrt(1.0 + sd**2))
    np.testing.assert_allclose(got, exact, rtol=0, atol=1e-8)


# ---------------------------------------------------------------------------
# issue 29 item 8: pickling, saving and the clm results' names


@pytest.mark.parametrize(
    "formula",
    ["rating ~ temp + np.sqrt(x) + (1|judge)", "rating ~ temp + (1 + np.log(x + 2)|judge)"],
)
def test_mixed_model_and_results_pickle_deepcopy_and_save(wine, tmp_path, formula: str) -> None:
    import copy
    import pickle

    data = wine.assign(x=np.linspace(0.0, 3.0, 72))
    model = ordstats.OrdinalModel.from_formula(formula, data)  # with the caller's np
    res = _fit_quietly(model)
    new = data.iloc[[0, 9, 40]]
    expected = res.predict(new)
    path = tmp_path / "clmm.pkl"
    res.save(path)
    for copied in (pickle.loads(pickle.dumps(res)), copy.deepcopy(res), ordstats.load(path)):
        assert isinstance(copied, ordstats.MixedResults)
        np.testing.assert_array_equal(copied.params_all, res.params_all)
        assert copied.llf == res.llf
        pd.testing.assert_frame_equal(copied.predict(new), expected)
        pd.testing.assert_frame_equal(copied.ranef()["judge"], res.ranef()["judge"])
    refit = _fit_quietly(pickle.loads(pickle.dumps(model)))
    np.testing.assert_allclose(refit.llf, res.llf, rtol=1e-10)


def _fit_quietly(model):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "singular fit", SpecificationWarning)  # the slope's
        return model.fit()


def _public(obj: object) -> set[str]:
    return {name for name in dir(obj) if not name.startswith("_")}


def test_mixed_results_have_every_name_of_a_clm_result(wine: pd.DataFrame, soup) -> None:
    clm = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    res = _fit("clmm_wine_laplace.json", wine, soup)
    # the margins protocol's optional hooks of clm-type fits are private names
    assert _public(clm) - _public(res) == set()


def test_summary_layout_of_crossed_terms(wine: pd.DataFrame) -> None:
    # R's summary.clmm: each group once, 4 significant digits, "judge 9,  bottle 8"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the bottle SD is at the boundary
        res = ordstats.OrdinalModel.from_formula(
            "rating ~ temp + contact + (1 + contact|judge) + (1|bottle)", wine
        ).fit()
    lines = res.summary().splitlines()
    start = lines.index("Random effects:")
    vc = res.varcorr()
    table = lines[start + 1 : start + 5]
    assert table[0].split() == ["Groups", "Name", "Variance", "Std.Dev.", "Corr"]
    assert table[1].split() == [
        "judge",
        "(Intercept)",
        f"{vc['variance'][0]:.4g}",
        f"{vc['sd'][0]:.4g}",
    ]
    assert table[2].split()[:3] == [
        "contact[T.yes]",
        f"{vc['variance'][1]:.4g}",
        f"{vc['sd'][1]:.4g}",
    ]
    assert table[3].split()[0] == "bottle"
    # the columns start where their headers start
    for column in ("Name", "Variance", "Std.Dev."):
        at = table[0].index(column)
        assert all(row[at - 1] == " " and row[at] != " " for row in table[1:4])
    assert lines[start + 5] == "Number of groups:  judge 9,  bottle 8"
    header = lines[lines.index("") + 4 : lines.index("") + 6]  # after the data: line
    assert header[0].split() == [
        "link",
        "threshold",
        "nobs",
        "logLik",
        "AIC",
        "niter",
        "max.grad",
        "cond.H",
    ]
    assert header[1].split()[:3] == ["logit", "flexible", "72"]


def test_wald_tests_on_the_fixed_effects(wine: pd.DataFrame, soup) -> None:
    res = _fit("clmm_wine_laplace.json", wine, soup)
    params, cov = res.params.to_numpy(), res.cov_params().to_numpy()[:6, :6]
    diff = np.array([params[4] - params[5]])
    var = cov[4, 4] + cov[5, 5] - 2 * cov[4, 5]
    test = res.wald_test("temp[T.warm] = contact[T.yes]")
    np.testing.assert_allclose(test.statistic, diff[0] ** 2 / var, rtol=1e-12)
    assert test.df == 1
    t = res.t_test("temp[T.warm] = 0, contact[T.yes] = 1")
    np.testing.assert_allclose(t.effect, [params[4], params[5] - 1.0])
    np.testing.assert_allclose(t.sd, np.sqrt([cov[4, 4], cov[5, 5]]))
    terms = res.wald_test_terms()
    np.testing.assert_allclose(terms["chi2"], res.zvalues.iloc[4:].to_numpy() ** 2)
    assert list(terms.index) == ["temp", "contact"]
    pd.testing.assert_series_equal(res.zvalues, res.tvalues)
    assert res.cov_type == "nonrobust" and res.covariance is res.nonrobust_covariance


def test_odds_ratios_and_thresholds(wine: pd.DataFrame, soup) -> None:
    res = _fit("clmm_wine_laplace.json", wine, soup)
    table = res.odds_ratios(alpha=0.1)
    np.testing.assert_allclose(table["odds_ratio"], np.exp(res.params.iloc[4:]))
    np.testing.assert_allclose(table[["lower", "upper"]], np.exp(res.conf_int(0.1).iloc[4:]))
    assert "within a group" in table.attrs["interpretation"]
    with pytest.raises(SpecificationError, match="profiling a fixed effect"):
        res.odds_ratios(method="profile")
    probit = _fit("clmm_wine_probit_laplace.json", wine, soup)
    with pytest.raises(SpecificationError, match="odds ratios need the logit link"):
        probit.odds_ratios()
    pd.testing.assert_series_equal(
        res.thresholds["estimate"], res.params.iloc[:4], check_names=False
    )
    np.testing.assert_allclose(res.thresholds["std err"], res.bse.iloc[:4])
    equidistant = _fit("clmm_extra/wine_equidistant.json", wine, soup)
    jac = equidistant.model.problem.jacobian
    alpha = equidistant.params.to_numpy()[:2]
    cov = equidistant.cov_params().to_numpy()[:2, :2]
    np.testing.assert_allclose(equidistant.thresholds["estimate"], jac @ alpha)
    np.testing.assert_allclose(
        equidistant.thresholds["std err"], np.sqrt(np.diag(jac @ cov @ jac.T))
    )
    assert list(equidistant.thresholds.index) == ["1|2", "2|3", "3|4", "4|5"]


def test_fit_information_fitted_values_and_residuals(wine: pd.DataFrame, soup) -> None:
    res = _fit("clmm_wine_laplace.json", wine, soup)
    r = _load("clmm_wine_laplace.json")
    np.testing.assert_allclose(res.cond_H, r["cond_H"], rtol=1e-4)  # R's cond.H
    assert res.fit_info.converged and res.mle_retvals["converged"] and res.niter > 0
    assert res.max_grad == res.fit_info.max_grad < 1e-6
    assert np.max(np.abs(res.gradient)) < 1e-6 and len(res.gradient) == 7
    assert res.df_model == 3 and res.df_resid == 65 and res.n_rows == 72
    # P(Y <= j) = F(theta_j - fitted linear predictor), the modes included
    theta = res.params.to_numpy()[:4]
    cum = 1 / (1 + np.exp(-(theta[None, :] - res.fittedvalues.to_numpy()[:, None])))
    np.testing.assert_allclose(res.predict(which="cumprob").to_numpy()[:, :4], cum, atol=1e-12)
    prob = res.predict().to_numpy()
    y = res.model.problem.y
    below = np.array([prob[i, : y[i]].sum() for i in range(72)])
    above = np.array([prob[i, y[i] + 1 :].sum() for i in range(72)])
    np.testing.assert_allclose(res.resid_prob, below - above, atol=1e-12)
    pd.testing.assert_series_equal(res.resid, res.resid_prob)


def test_summary2_has_the_coefficients_and_the_variance_components(wine, soup) -> None:
    res = _fit("clmm_wine_laplace.json", wine, soup)
    smry = res.summary2(alpha=0.1)
    coefficients, components = smry.tables[1], smry.tables[2]
    np.testing.assert_allclose(coefficients["coef"], res.params)
    assert "[0.05" in coefficients.columns
    np.testing.assert_allclose(components["sd"], res.varcorr()["sd"])
    assert "Cumulative Link Mixed Model" in str(smry)
    with pytest.raises(SpecificationError, match="xname must give 6 names"):
        res.summary2(xname=["a"])


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda r: r.brant_test(), "Brant's test is not available for mixed models"),
        (lambda r: r.nominal_test(), "nominal and scale effects cannot be fitted"),
        (lambda r: r.scale_test(), "nominal and scale effects cannot be fitted"),
        (lambda r: r.add1("~ . + bottle"), r"add1\(\) is not available.*anova"),
        (lambda r: r.profile("temp[T.warm]"), r"sd_conf_int\(method='profile'\)"),
        (lambda r: r.plot_profile("temp[T.warm]"), "confint.clmm"),
        (lambda r: r.get_margeff(), "re_form='marginal'"),
        (lambda r: r.get_robustcov_results("cluster"), "within-group correlation"),
        (lambda r: r.expected_covariance, "no closed-form expectation"),
        (lambda r: r.llnull, r"ordstats.lr_test\(restricted, full\)"),
        (lambda r: r.llr, "null model is ambiguous"),
        (lambda r: r.llr_pvalue, "null model is ambiguous"),
        (lambda r: r.prsquared, "null model is ambiguous"),
        (lambda r: r.pseudo_rsquared, "null model is ambiguous"),
        (lambda r: r.remove_data(), r"save\(fname\) without remove_data"),
        (lambda r: r.convergence(), "convergence\\(\\) has no clmm method"),
    ],
)
def test_results_methods_a_mixed_model_cannot_offer_say_why(wine, soup, call, match) -> None:
    res = _fit("clmm_wine_laplace.json", wine, soup)
    with pytest.raises(SpecificationError, match=match):
        call(res)


def test_save_without_the_rows_is_refused_and_keeps_the_result(wine, soup, tmp_path) -> None:
    res = _fit("clmm_wine_laplace.json", wine, soup)
    with pytest.raises(SpecificationError, match="remove_data"):
        res.save(tmp_path / "x.pkl", remove_data=True)
    assert res.predict().shape == (72, 5) and not res.data_removed


def test_mixed_results_take_the_clm_arguments(wine, soup) -> None:
    res = _fit("clmm_wine_laplace.json", wine, soup)
    # before: TypeError, unexpected keyword argument 'method' / 'exog'
    with pytest.raises(SpecificationError, match=r"conf_int\(method='profile'\) is not avail"):
        res.conf_int(method="profile")
    with pytest.raises(SpecificationError, match="method must be 'wald'"):
        res.conf_int(method="exact")
    pd.testing.assert_frame_equal(res.conf_int(method="wald"), res.conf_int())
    new = wine.iloc[:3]
    pd.testing.assert_frame_equal(res.predict(exog=new), res.predict(new))
    with pytest.raises(PredictionError, match="give newdata or exog"):
        res.predict(new, exog=new)
    # R's niter: iterations (evaluations); before: the evaluations alone under "niter"
    assert f" {res.niter}({res.n_evaluations}) " in res.summary()


def test_mixed_expected_response_uses_the_level_values_as_the_clm(wine) -> None:
    data = wine.assign(score=wine["rating"].astype(int) * 10)
    clm = ordstats.OrdinalModel.from_formula("score ~ temp", data).fit()
    clmm = ordstats.OrdinalModel.from_formula("score ~ temp + (1|judge)", data).fit()
    new = data.iloc[[0, 40]]
    for res, kwargs in ((clm, {}), (clmm, {"re_form": 0}), (clmm, {})):
        prob = res.predict(new, **kwargs).to_numpy()
        expected = res.predict(new, which="expected", **kwargs)
        # before: the clmm gave the level index (2.33), the clm the level value (23.7)
        np.testing.assert_allclose(expected, prob @ np.array([10.0, 20, 30, 40, 50]))
        assert expected.name == "expected"


def _grouped_ratings(n: int = 300, groups: int = 25, seed: int = 11) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x1 = rng.normal(size=n)
    g = rng.integers(0, groups, size=n)
    latent = 0.8 * x1 + 0.8 * rng.normal(size=groups)[g] + rng.logistic(size=n)
    y = np.searchsorted(np.quantile(latent, [0.25, 0.5, 0.75]), latent) + 1
    return pd.DataFrame({"y": y, "x1": x1, "g": g.astype(str)})


@pytest.mark.parametrize(
    ("a", "b"),
    [(1e4, 0.0), (1e-3, 0.0), (1e-3, 3.0), (1e8, 0.0), (1e-8, 0.0), (1e50, 0.0), (1e-100, 0.0)],
)
def test_clmm_standard_errors_follow_the_units_of_a_predictor(a: float, b: float) -> None:
    """x -> a x + b divides the slope's SE by |a|.  The Hessian behind the SEs was a
    forward difference of the gradient with a step of 1e-5 in every parameter: about a
    standard error of the slope of 1e4 x, so |a| SE moved by 1% (and by 1% for
    1e-3 x + 3, where the slope's variance is a small difference of large entries).
    For 1e8 x and 1e50 x the fit said it had not converged (the gradient in the
    slope's units is large at the maximum); the iterations now run with the slopes of
    such columns rescaled by powers of two."""
    data = _grouped_ratings()
    base = ordstats.OrdinalModel.from_formula("y ~ x1 + (1|g)", data).fit()
    moved = data.assign(x1=a * data["x1"] + b)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ordstats.errors.ConvergenceWarning)
        res = ordstats.OrdinalModel.from_formula("y ~ x1 + (1|g)", moved).fit()
    assert res.converged
    assert res.llf == pytest.approx(base.llf, rel=1e-10)
    assert res.params["x1"] * a == pytest.approx(base.params["x1"], rel=1e-5)
    assert res.bse["x1"] * a == pytest.approx(base.bse["x1"], rel=1e-3)


def test_clmm_of_a_column_beyond_floating_point_variances() -> None:
    """x * 1e-200 raised numpy's LinAlgError (the Hessian's equilibration divided by
    1e-620); an earlier path reported convergence at another optimum (the slope 26%
    off, logLik 0.05 lower).  The estimates are now the maximum's, and a warning says
    why the standard errors are NaN."""
    data = _grouped_ratings()
    base = ordstats.OrdinalModel.from_formula("y ~ x1 + (1|g)", data).fit()
    tiny = data.assign(x1=1e-200 * data["x1"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = ordstats.OrdinalModel.from_formula("y ~ x1 + (1|g)", tiny).fit()
        assert np.isnan(res.bse["x1"])
        llf, slope = res.llf, res.params["x1"]
    assert any(
        issubclass(w.category, ordstats.errors.CollinearityWarning)
        and "'x1'" in str(w.message)
        and "standard errors will be NaN" in str(w.message)
        for w in caught
    )
    assert llf == pytest.approx(base.llf, rel=1e-10)
    assert slope * 1e-200 == pytest.approx(base.params["x1"], rel=1e-6)


@pytest.mark.parametrize("link", ["cloglog", "loglog", "logit"])
def test_marginal_probabilities_keep_their_tails(link: str) -> None:
    """Population-averaged probabilities of levels above the median were differences
    of cumulative probabilities near 1: -1.1e-16 for cloglog at eta = -20, and rounding
    noise for probabilities of 1e-70.  They now come from the survival functions."""
    data = _grouped_ratings(200, 12, seed=4)
    res = ordstats.OrdinalModel.from_formula("y ~ x1 + (1|g)", data, link=link).fit()
    eta = np.array([-300.0, -40.0, -20.0, -8.0, 0.0, 8.0, 20.0, 40.0, 300.0])
    newdata = pd.DataFrame({"x1": eta / res.params["x1"]})
    prob = res.predict(newdata, re_form="marginal").to_numpy()
    assert np.all(prob >= 0.0)
    np.testing.assert_allclose(prob.sum(axis=1), 1.0, rtol=1e-12)
    if link == "logit":
        # far out, expit(x) = exp(x): P(Y = K) = exp(lambda - theta + s^2 / 2) at eta =
        # lambda, so moving eta from -20 to -40 divides it by exp(20)
        assert prob[1, -1] / prob[2, -1] == pytest.approx(np.exp(-20.0), rel=1e-4)


def test_far_trial_point_leaks_no_numpy_warnings() -> None:
    # A probit fit with a small SD whose BFGS path tries log(sigma) near 70: rows with
    # P = 0 there gave numpy's 'invalid value' RuntimeWarnings (multiply, add, slogdet)
    # although the fit ends at R's maximum (tests/r/clmm_far_trial.R).
    ref = _load("clmm_far_trial.json")
    data = pd.read_csv(REF.parent / "clmm_probit_far_trial.csv", dtype={"g": str, "f": str})
    data["y"] = pd.Categorical(data["y"].astype(str), ordered=True)
    model = ordstats.OrdinalModel.from_formula(ref["formula"], data, link="probit")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        res = model.fit()
        res_agq = model.fit(nagq=5)
    assert res.llf == pytest.approx(ref["loglik"], rel=1e-6)
    assert res.llf >= ref["loglik"] - 1e-8
    names = _r_names(list(res.params.index))
    r_coef = pd.Series(ref["coef"])[names].to_numpy()
    np.testing.assert_allclose(res.params.to_numpy(), r_coef, atol=1e-4)
    assert res.varcorr()["sd"].iloc[0] == pytest.approx(ref["sd"], abs=1e-4)
    assert res_agq.converged


def test_separation_by_the_fixed_effects_warns(wine: pd.DataFrame) -> None:
    # z = 1 only in rows rated 5: the likelihood grows without bound in z's direction
    # whatever the random effects (R's clmm: 'Hessian is numerically singular'); the fit
    # said nothing and reported z's estimate with an SE of about 1e5
    data = wine.assign(z=((wine["rating"].astype(int) == 5) & (np.arange(72) % 2 == 0)) * 1.0)
    model = ordstats.OrdinalModel.from_formula("rating ~ temp + z + (1|judge)", data)
    with pytest.warns(ordstats.SeparationWarning, match="'z' grow without bound"):
        model.fit()
    lowest = int(np.flatnonzero(wine["rating"].astype(int) == 1)[0])
    mixed = data.assign(z=data["z"].where(data.index != lowest, 1.0))  # z = 1 at both ends
    ordstats.OrdinalModel.from_formula("rating ~ temp + z + (1|judge)", mixed).fit()
    weighed_out = mixed.assign(w=np.where(data.index == lowest, 0.0, 1.0))
    with pytest.warns(ordstats.SeparationWarning, match="'z'"):
        ordstats.OrdinalModel.from_formula(
            "rating ~ temp + z + (1|judge)", weighed_out, weights="w"
        ).fit()


def test_constant_small_weights_reach_r_maximum(wine: pd.DataFrame) -> None:
    # weights of 1e-5 scale the gradient down below gradtol at the start: the fit stopped
    # there, thresholds 5e-4 and the log-likelihood 4e-5 (relative) short of R's
    # maximum (tests/r/clmm_small_weights.R); Newton now also needs a negligible step
    ref = _load("clmm_small_weights.json")
    data = wine.assign(w=ref["weight"])
    res = ordstats.OrdinalModel.from_formula(ref["formula"], data, weights="w").fit()
    names = _r_names(list(res.params.index))
    r_coef = pd.Series(ref["coef"])[names].to_numpy()
    np.testing.assert_allclose(res.params.to_numpy(), r_coef, atol=1e-5)
    assert res.llf == pytest.approx(ref["loglik"], rel=1e-5)
    assert res.converged


def test_separation_check_runs_as_the_clms_on_large_data(monkeypatch) -> None:
    # beyond 5000 rows the linear programme runs only on signs of divergence, as for the
    # clm (on 10^4 rows it took 40% of the fit's time)
    import ordstats.estimation.mixed as mixed_module

    def refuse(*args: object) -> None:
        raise AssertionError("the separation LP ran on a large fit without divergence")

    rng = np.random.default_rng(3)
    n = 6000
    g = rng.integers(0, 100, n)
    x = rng.normal(size=n)
    latent = x + rng.normal(size=100)[g] + rng.logistic(size=n)
    y = 1 + np.searchsorted([-1.0, 0.0, 1.0], latent)
    data = pd.DataFrame(
        {"y": pd.Categorical(y.astype(str), ordered=True), "x": x, "g": g.astype(str)}
    )
    monkeypatch.setattr(mixed_module, "detect_separation", refuse)
    res = ordstats.OrdinalModel.from_formula("y ~ x + (1|g)", data).fit()
    assert res.converged


def test_summary_header_has_r_cond_h_and_the_data_line(wine: pd.DataFrame) -> None:
    # before: the header stopped at max.grad and no data: line was printed (R's
    # summary.clmm prints both)
    ref = _load("clmm_wine_laplace.json")
    wine_data = wine.copy()
    res = ordstats.OrdinalModel.from_formula(WINE_F, wine_data).fit()
    lines = res.summary().splitlines()
    assert lines[3] == "data:    wine_data"
    names, values = lines[5].split(), lines[6].split()
    assert names[-2:] == ["max.grad", "cond.H"]
    assert values[-1] == f"{ref['cond_H']:.1e}"


def test_group_levels_follow_r_s_factor_order():
    """Text ids sort as text, as R's factor() of strings ("10" before "5"); numbers by value.

    Before: text ids were sorted by their numbers, so ranef() listed "5" first where
    R's clmm lists it last.
    """
    wine = ordstats.datasets.load("wine")
    data = wine.assign(
        text=(wine["judge"].astype(int) * 5).astype(str), number=wine["judge"].astype(int) * 5
    )
    by_text = ordstats.OrdinalModel.from_formula("rating ~ temp + (1|text)", data).fit()
    by_number = ordstats.OrdinalModel.from_formula("rating ~ temp + (1|number)", data).fit()
    assert by_text.ranef()["text"].index.tolist() == sorted(data["text"].unique())
    assert by_text.ranef()["text"].index[-1] == "5"
    assert by_number.ranef()["number"].index.tolist() == [str(5 * j) for j in range(1, 10)]
    assert by_text.llf == pytest.approx(by_number.llf, rel=1e-12)
    np.testing.assert_allclose(
        by_text.ranef()["text"].loc[by_number.ranef()["number"].index],
        by_number.ranef()["number"],
        rtol=1e-8,
    )
