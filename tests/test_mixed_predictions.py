"""Predictions of clmm fits with delta-method standard errors (issue 23, item 4).

References: emmeans on R's clmm (tests/r/clmm_predictions.R), which predicts with the
random effects at zero (``re_form=0``); finite differences of the prediction function in
every parameter for the conditional and marginal predictions; scipy's adaptive
quadrature for the marginal integral and its derivatives.
"""

from __future__ import annotations

import copy
import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, special, stats

import ordstats
from ordstats.errors import PredictionError, SpecificationWarning
from ordstats.results.mixed_prediction import MixedPredictor, prediction_rows
from tests._numdiff import central_jacobian

REF = Path(__file__).resolve().parent / "data" / "reference" / "clmm_predictions.json"

FORMULAS = {
    "wine": "rating ~ temp + contact + (1|judge)",
    "wine_probit": "rating ~ temp + contact + (1|judge)",
    "crossed": "rating ~ temp + contact + (1|judge) + (1|bottle)",
    "slope": "rating ~ temp + contact + (1 + contact|judge)",
    "soup": "SURENESS ~ PROD + (1|RESP)",
    "nested": "SURENESS ~ PROD + (1|RESP/DAY)",
}
_FITS: dict[str, ordstats.MixedResults] = {}


def _fit(case: str, wine: pd.DataFrame, soup: pd.DataFrame) -> ordstats.MixedResults:
    if case not in _FITS:
        data = soup if case in ("soup", "nested") else wine
        link = "probit" if case == "wine_probit" else "logit"
        model = ordstats.OrdinalModel.from_formula(FORMULAS[case], data, link=link)
        _FITS[case] = _singular_fit(model) if case == "slope" else model.fit()
    return _FITS[case]


def _singular_fit(model) -> ordstats.MixedResults:
    # the logit and probit fits of (1 + contact|judge) on wine end at a correlation of -1
    # (as R's clmm: tests/data/reference/clmm_extra/wine_corr_slope.json)
    with pytest.warns(SpecificationWarning, match=r"singular fit: .*\(1 \+ contact\|judge\)"):
        return model.fit()


def _reference(case: str) -> dict:
    return json.loads(REF.read_text())[case]


def _grid(ref: dict, columns: list[str]) -> pd.DataFrame:
    """The cells of emmeans' reference grid, in R's order."""
    frame = pd.DataFrame(ref["linear_predictor"])[columns]
    return frame.reset_index(drop=True)


def _with_r_estimates(res: ordstats.MixedResults, ref: dict) -> ordstats.MixedResults:
    """A copy of ``res`` carrying R's estimates and R's covariance (names in R's order)."""
    out = copy.deepcopy(res)
    k = len(ref["coef"])
    out.params_all[:k] = list(ref["coef"].values())
    names = list(res.cov_params().index)
    out._cov = pd.DataFrame(np.asarray(ref["vcov"]), index=names, columns=names)
    return out


R_CASES = {
    "wine_logit": ("wine", ["temp", "contact"], "rating"),
    "wine_probit": ("wine_probit", ["temp", "contact"], "rating"),
    "soup_logit": ("soup", ["PROD"], "SURENESS"),
}


def _as_emmeans(pred: ordstats.results.prediction_se.PredictionResults) -> pd.DataFrame:
    """Estimates and SEs in emmeans' order: levels fastest, then the grid's cells."""
    return pd.DataFrame(
        {"estimate": pred.predicted.to_numpy().ravel(), "se": pred.se.to_numpy().ravel()}
    )


@pytest.mark.parametrize("case", sorted(R_CASES))
@pytest.mark.parametrize(("which", "table", "column"), [("prob", "prob", "prob")])
def test_re_form_zero_matches_emmeans(wine, soup, case, which, table, column) -> None:
    fit_case, columns, _ = R_CASES[case]
    ref = _reference(case)
    res = _fit(fit_case, wine, soup)
    grid = _grid(ref, columns)
    r = pd.DataFrame(ref[table])
    # emmeans lists the response levels fastest within each cell of the grid
    got = _as_emmeans(res.get_prediction(grid, which=which, re_form=0))
    # R's fit: estimates agree to its optimiser's precision, SEs to its numerical Hessian's
    np.testing.assert_allclose(got["estimate"], r[column], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(got["se"], r["SE"], rtol=1e-3)
    # with R's estimates and covariance the formula itself reproduces emmeans exactly
    exact = _as_emmeans(_with_r_estimates(res, ref).get_prediction(grid, re_form=0))
    np.testing.assert_allclose(exact["estimate"], r[column], rtol=1e-8)
    np.testing.assert_allclose(exact["se"], r["SE"], rtol=1e-6)


@pytest.mark.parametrize("case", sorted(R_CASES))
def test_cumulative_probabilities_match_emmeans(wine, soup, case) -> None:
    fit_case, columns, _ = R_CASES[case]
    ref = _reference(case)
    res = _with_r_estimates(_fit(fit_case, wine, soup), ref)
    r = pd.DataFrame(ref["cum_prob"])
    got = _as_emmeans(res.get_prediction(_grid(ref, columns), which="cumprob", re_form=0))
    np.testing.assert_allclose(got["estimate"], r["cumprob"], rtol=1e-8)
    np.testing.assert_allclose(got["se"], r["SE"], rtol=1e-6)


def _new_rows(case: str, wine: pd.DataFrame, soup: pd.DataFrame) -> pd.DataFrame:
    if case in ("soup", "nested"):
        rows = soup.iloc[[0, 5, 40, 100, 200, 300]].copy()
        rows["RESP"] = rows["RESP"].astype(object)
        rows.loc[rows.index[-1], "RESP"] = "not a respondent"  # an unseen group
        return rows
    rows = wine.iloc[[0, 7, 20, 33, 50, 71]].copy()
    rows["judge"] = rows["judge"].astype(object)
    rows.loc[rows.index[-1], "judge"] = "99"  # an unseen judge: no random part
    return rows


def _cumulative_gradient(res: ordstats.MixedResults, rows: pd.DataFrame, re_form) -> np.ndarray:
    """The analytic gradient of ``P(Y <= j)``, ``j < K``, in every parameter."""
    new = prediction_rows(res.model, rows, None, re_form)
    return MixedPredictor(res.model, res.params_all, re_form).cumulative(new)[1]


def _predict_at(res: ordstats.MixedResults, params: np.ndarray, *args, **kw) -> np.ndarray:
    saved = res.params_all.copy()
    res.params_all[:] = params
    try:
        return res.predict(*args, **kw).to_numpy()
    finally:
        res.params_all[:] = saved


@pytest.mark.parametrize("case", ["wine", "wine_probit", "crossed", "slope", "soup", "nested"])
@pytest.mark.parametrize("re_form", [None, 0, "marginal"])
@pytest.mark.filterwarnings("ignore:.*not seen in the fit")
def test_gradients_equal_finite_differences(wine, soup, case, re_form) -> None:
    res = copy.deepcopy(_fit(case, wine, soup))
    rows = _new_rows(case, wine, soup)
    params = res.params_all.copy()
    cov = res._prediction_covariance()
    # P(Y <= j) differenced once: the gradient check and the cumprob SEs both use it
    cum_numeric = central_jacobian(
        lambda x: _predict_at(res, x, rows, which="cumprob", re_form=re_form), params, 1e-6
    )[:, :-1]  # P(Y <= K) = 1
    numerics = {
        "prob": central_jacobian(
            lambda x: _predict_at(res, x, rows, which="prob", re_form=re_form), params, 1e-6
        ),
        "cumprob": cum_numeric,
    }
    for which, numeric in numerics.items():
        pred = res.get_prediction(rows, which=which, re_form=re_form)
        expected = np.sqrt(np.einsum("mjk,kl,mjl->mj", numeric, cov, numeric))
        np.testing.assert_allclose(pred.se.to_numpy(), expected, rtol=1e-5, atol=1e-10)
    # the gradient itself, every parameter (the variance ones included)
    analytic = _cumulative_gradient(res, rows, re_form)
    np.testing.assert_allclose(analytic, cum_numeric, rtol=1e-5, atol=1e-8)
    if re_form == 0:  # the random effects do not enter
        assert np.all(analytic[:, :, res.k_fixed :] == 0.0)
    else:
        assert np.any(np.abs(analytic[:, :, res.k_fixed :]) > 1e-4)


def test_probit_marginal_is_exact(wine, soup) -> None:
    # probit: the marginal is Phi((theta - eta) / sqrt(1 + s^2)) in closed form, so its
    # gradient in log(s) is phi(.) (theta - eta) * (-s^2) / (1 + s^2)^(3/2)
    res = _fit("wine_probit", wine, soup)
    rows = wine.drop(columns="judge").iloc[:8]
    pred = res.get_prediction(rows, which="cumprob", re_form="marginal")
    eta = res.model.design.fixed.location.matrix[:8] @ res.params.to_numpy()[4:]
    cut = res.params.to_numpy()[:4][None, :] - eta[:, None]
    s2 = np.exp(2 * res.params_all[-1])
    np.testing.assert_allclose(
        pred.predicted.to_numpy(), special.ndtr(cut / np.sqrt(1 + s2)), rtol=0, atol=1e-12
    )
    grad = _cumulative_gradient(res, rows, "marginal")
    z = cut / np.sqrt(1 + s2)
    np.testing.assert_allclose(
        grad[:, :, -1], stats.norm.pdf(z) * cut * -s2 / (1 + s2) ** 1.5, rtol=1e-9, atol=1e-13
    )
    np.testing.assert_allclose(
        grad[:, :, 4],
        -stats.norm.pdf(z) * res.model.design.fixed.location.matrix[:8, [0]] / np.sqrt(1 + s2),
        rtol=1e-9,
        atol=1e-13,
    )


def test_marginal_and_population_predictions_need_no_grouping_column(wine, soup) -> None:
    res = _fit("crossed", wine, soup)
    with_groups = wine.iloc[:10]
    without = with_groups.drop(columns=["judge", "bottle"])
    for re_form in (0, "marginal"):
        a = res.get_prediction(with_groups, re_form=re_form).summary_frame()
        b = res.get_prediction(without, re_form=re_form).summary_frame()
        pd.testing.assert_frame_equal(a, b)
    with pytest.raises(PredictionError, match=r"lacks the column\(s\) 'judge'.*re_form='marginal'"):
        res.get_prediction(without)


def test_prediction_results_have_the_clm_shape(wine, soup, wine_res) -> None:
    res = _fit("wine", wine, soup)
    rows = wine.iloc[:4]
    mixed = res.get_prediction(rows, re_form="marginal").summary_frame(alpha=0.1)
    clm = wine_res.get_prediction(rows).summary_frame(alpha=0.1)
    assert list(mixed.columns) == list(clm.columns)
    assert mixed.index.names == clm.index.names and mixed.shape == clm.shape
    assert (mixed["ci_lower"] < mixed["prob"]).all() and (mixed["prob"] < mixed["ci_upper"]).all()
    assert (mixed["ci_lower"] > 0).all() and (mixed["ci_upper"] < 1).all()
    # the fitted rows by default; the estimates are predict()'s
    whole = res.get_prediction(re_form=None)
    pd.testing.assert_frame_equal(whole.predicted, res.predict(), check_names=False)
    np.testing.assert_allclose(
        res.get_prediction(rows, which="cumprob", re_form=0).predicted,
        res.predict(rows, which="cumprob", re_form=0).iloc[:, :-1],
    )


def test_missing_predictor_rows_give_nan_standard_errors(wine, soup) -> None:
    res = _fit("wine", wine, soup)
    rows = wine.iloc[:3].copy()
    rows["temp"] = rows["temp"].astype(object)
    rows.loc[rows.index[1], "temp"] = None
    with pytest.warns(ordstats.errors.MissingDataWarning):
        pred = res.get_prediction(rows, re_form="marginal")
    assert pred.se.iloc[1].isna().all() and pred.se.iloc[[0, 2]].notna().all().all()


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"which": "class"}, PredictionError, r"which must be 'prob' or 'cumprob'; got 'class'"),
        ({"re_form": "population"}, PredictionError, r"re_form must be None, 0 or 'marginal'"),
        ({"re_form": 1}, PredictionError, r"re_form must be None, 0 or 'marginal'; got 1"),
        ({"re_form": True}, PredictionError, r"re_form must be None, 0 or 'marginal'; got True"),
    ],
)
def test_bad_prediction_arguments(wine, soup, kwargs, error, match) -> None:
    res = _fit("wine", wine, soup)
    with pytest.raises(error, match=match):
        res.get_prediction(wine.iloc[:2], **kwargs)


def test_newdata_missing_a_fixed_effect_column_is_refused(wine, soup) -> None:
    res = _fit("slope", wine, soup)
    with pytest.raises(PredictionError, match=r"newdata lacks the column\(s\) 'temp'"):
        res.get_prediction(wine.drop(columns="temp").iloc[:3], re_form=0)
    # the random slope's variable is needed for the marginal SD of the random part
    rows = wine.drop(columns=["contact", "judge"]).iloc[:3]
    with pytest.raises(PredictionError, match=r"newdata lacks the column\(s\) 'contact'"):
        res.get_prediction(rows, re_form="marginal")


# -- the marginal integral --------------------------------------------------------------


def _quad(integrand, cut: float, sd: float) -> float:
    """``int integrand(z) phi(z) dz`` by scipy's adaptive quadrature, split around the step."""
    step = cut / sd
    inner = [step + d / sd for d in (-10.0, -1.0, 0.0, 1.0, 10.0) if abs(step + d / sd) < 12.0]
    edges = [-12.0, *sorted(inner), 12.0]
    return sum(
        integrate.quad(
            lambda z: integrand(z) * np.exp(-0.5 * z * z) / np.sqrt(2 * np.pi),
            a,
            b,
            epsabs=1e-14,
            epsrel=1e-13,
            limit=500,
        )[0]
        for a, b in itertools.pairwise(edges)
    )


@pytest.mark.parametrize("link_name", ["logit", "probit", "cloglog", "cauchit"])
def test_marginal_integral_and_its_derivatives_against_quad(link_name: str) -> None:
    from ordstats.core.links import get_link
    from ordstats.families.mixed import marginal_integrals

    link = get_link(link_name)
    cuts = np.array([-25.0, -3.0, -0.4, 0.0, 1.1, 6.0, 30.0])
    sds = np.array([0.01, 0.1, 1.0, 5.0, 12.0, 30.0])
    got = marginal_integrals(link, np.tile(cuts, (sds.size, 1)), sds, order=2)
    upper = marginal_integrals(link, np.tile(cuts, (sds.size, 1)), sds, order=0, complement=True)

    def density_slope(x: np.ndarray) -> np.ndarray:
        return link.pdf(x) * link.dlog_pdf(x) if link.pdf(x)[0] > 0 else np.zeros(1)

    # (what, integrand F-like function of c - s z, power of z, sign)
    integrals = [
        (got.value, link.cdf, 0, 1.0),
        (upper.value, link.sf, 0, 1.0),
        (got.d_cut, link.pdf, 0, 1.0),
        (got.d_sd, link.pdf, 1, -1.0),
        (got.d_cut_cut, density_slope, 0, 1.0),
        (got.d_cut_sd, density_slope, 1, -1.0),
        (got.d_sd_sd, density_slope, 2, 1.0),
    ]
    for values, function, power, sign in integrals:
        for (i, s), (j, c) in itertools.product(enumerate(sds), enumerate(cuts)):
            expected = sign * _quad(
                lambda z, f=function, p=power, c=c, s=s: (
                    z**p * float(np.asarray(f(np.array([c - s * z])))[0])
                ),
                c,
                s,
            )
            assert values[i, j] == pytest.approx(expected, abs=1e-8), (i, j, power)


def test_marginal_predictions_of_several_terms_and_slopes_are_exact_for_probit(wine) -> None:
    # the random part z'b of eta sums independent normal terms, so for probit the marginal
    # is Phi(c / sqrt(1 + s^2)) with s^2 = sum_t z_t' Sigma_t z_t (crossed terms, slopes)
    res = _singular_fit(
        ordstats.OrdinalModel.from_formula(
            "rating ~ temp + contact + (1 + contact|judge) + (1|bottle)", wine, link="probit"
        )
    )
    rows = wine.drop(columns=["judge", "bottle"]).iloc[::9]
    got = res.predict(rows, which="cumprob", re_form="marginal").to_numpy()[:, :-1]
    sigma_judge, sigma_bottle = res.covariance_matrices()
    z = np.column_stack([np.ones(len(rows)), (rows["contact"] == "yes").to_numpy(float)])
    s2 = np.einsum("ij,jk,ik->i", z, sigma_judge, z) + sigma_bottle[0, 0]
    assert s2.min() > 0.05 and np.ptp(s2) > 0.01  # the slope makes s differ between rows
    eta = res.model.design.fixed.location.matrix[::9] @ res.params.to_numpy()[4:]
    cut = res.params.to_numpy()[:4][None, :] - eta[:, None]
    np.testing.assert_allclose(got, special.ndtr(cut / np.sqrt(1 + s2)[:, None]), atol=1e-12)


@pytest.mark.parametrize("sd", [0.01, 3.0, 30.0])
@pytest.mark.parametrize("link", ["logit", "cauchit"])
def test_marginal_gradients_at_small_and_large_sds(wine, link: str, sd: float) -> None:
    key = f"slope_{link}"  # one fit per link: the test sets the SDs itself
    if key not in _FITS:
        model = ordstats.OrdinalModel.from_formula(FORMULAS["slope"], wine, link=link)
        _FITS[key] = _singular_fit(model) if link == "logit" else model.fit()
    res = copy.deepcopy(_FITS[key])
    res.params_all[-3:-1] = np.log(sd)  # both SDs of (1 + contact|judge)
    rows = wine.drop(columns="judge").iloc[::7]
    analytic = _cumulative_gradient(res, rows, "marginal")
    numeric = central_jacobian(
        lambda x: _predict_at(res, x, rows, which="cumprob", re_form="marginal"),
        res.params_all.copy(),
        1e-6,
    )[:, :-1]
    np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-8)
