"""rms::orm under each of its five families, on data the other orm references do not use.

``tests/r/orm_links.R`` wrote ``tests/data/reference/orm_links/*.json``: warpbreaks
(two factor predictors, 31 distinct y), faithful (272 rows, 51 distinct y, many
ties) and survival::lung's times (186 distinct y), each under ``logistic``,
``probit``, ``loglog``, ``cloglog`` and ``cauchit``: every intercept and its
standard error (``vcov(fit, intercepts = "all")``), the slopes, log-likelihoods,
the LR chi-square, ``predict(type = "lp")``, ``Mean``, ``Quantile`` and ``ExProb``
with their 95% limits at new rows, some beyond the observed range of x and y
(rms 6.5 forms Quantile's and ExProb's limits only without factor predictors).

orm's intercepts are those of ``P(Y >= v_{j+1}) = F(alpha_j + x'beta)``, so
``alpha_j = -theta_j``, and its families name the distribution of that form:
orm's ``loglog`` is ordstats' ``"cloglog"`` and orm's ``cloglog`` ordstats'
``"loglog"``.  orm's ``lp`` adds the intercept ``interceptRef`` (the one nearest
the median of y) to ``x'beta``.  rms 6.5 has no weighted orm (``weights=`` stops
in ``orm.fit``); weighted fits are checked against the same rows replicated.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats.errors import ResponseError

REF_DIR = Path(__file__).parent / "data" / "reference" / "orm_links"
CASES = sorted(p.stem for p in REF_DIR.glob("*.json"))
# faithful under orm's cauchit family: orm stops with "singularity problem"
# (Max Deriv 36.6) at a log-likelihood 126 below the maximum ordstats reaches
R_UNCONVERGED = {"faithful_cauchit"}
CONVERGED = [c for c in CASES if c not in R_UNCONVERGED]
ESTIMATES, INTERVALS = 1e-6, 1e-4


@cache
def reference(case: str) -> dict:
    return json.loads((REF_DIR / f"{case}.json").read_text())


def _frame(columns: dict, levels: dict) -> pd.DataFrame:
    frame = pd.DataFrame(columns)
    for name, categories in levels.items():
        frame[name] = pd.Categorical(frame[name], categories=categories)
    return frame


@cache
def fitted(case: str) -> tuple[dict, ordstats.OrdinalResults, pd.DataFrame]:
    ref = reference(case)
    levels = ref["factor_levels"] or {}
    model = ordstats.OrdinalModel.from_formula(
        ref["formula"],
        _frame(ref["data"], levels),
        many_levels=True,
        link=ref["ordstats_link"],
    )
    return ref, model.fit(), _frame(ref["newdata"], levels)


def _slope_names(ref: dict) -> list[str]:
    """rms's ``sex=female`` is ordstats' ``sex[T.female]``."""
    return [re.sub(r"^(\w+)=(.*)$", r"\1[T.\2]", name) for name in ref["slopes"]]


def assert_relative(got, want, rtol=ESTIMATES):
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0.0)


def test_references_cover_three_data_sets_and_five_families():
    families = {reference(c)["family"] for c in CASES}
    assert families == {"logistic", "probit", "loglog", "cloglog", "cauchit"}
    assert {reference(c)["dataset"] for c in CASES} == {"warpbreaks", "faithful", "lung"}
    assert len(CASES) == 15


@pytest.mark.parametrize("case", CONVERGED)
def test_fit_equals_orm(case):
    ref, res, _ = fitted(case)
    k = len(ref["intercepts"])
    assert_relative(res.model.design.response.values, ref["yunique"], 0.0)
    assert_relative(-res.params.iloc[:k], ref["intercepts"])
    assert_relative(res.bse.iloc[:k], ref["intercept_se"])
    names = _slope_names(ref)
    assert list(res.params.index[k:]) == names
    assert_relative(res.params[names], list(ref["slopes"].values()))
    assert_relative(res.bse[names], list(ref["slope_se"].values()))
    assert res.llf == pytest.approx(ref["loglik"], rel=1e-10)
    assert_relative([-2 * res.llnull, -2 * res.llf], ref["deviance"], 1e-10)
    assert res.llr == pytest.approx(ref["lr_chi2"], rel=1e-7)


@pytest.mark.parametrize("case", CONVERGED)
def test_linear_predictor_is_orms_lp_less_its_reference_intercept(case):
    ref, res, newdata = fitted(case)
    alpha = -res.params.iloc[ref["interceptRef"] - 1]
    lp = np.asarray(res.predict(newdata, which="linear"), dtype=float).ravel()
    assert_relative(lp + alpha, ref["lp"])


def _assert_equals_rms(got: pd.DataFrame, want: dict, n_rows: int, columns=None) -> None:
    """Estimates to 1e-6; the 95% limits to 1e-4 where rms formed them."""
    keep = slice(None) if columns is None else columns
    for column, tol in (("estimate", ESTIMATES), ("lower", INTERVALS), ("upper", INTERVALS)):
        if column in want:
            wide = got[column].to_numpy().reshape(n_rows, -1)[:, keep]
            assert_relative(wide.squeeze(), np.asarray(want[column])[..., keep], tol)


@pytest.mark.parametrize("case", CONVERGED)
def test_mean_quantile_exceedance_equal_rms(case):
    ref, res, newdata = fitted(case)
    n = len(newdata)
    _assert_equals_rms(res.mean(newdata), ref["mean"], n)
    for entry in ref["quantile"]:
        _assert_equals_rms(res.quantile(entry["q"], newdata), entry, n)
    # y below the lowest level (P = 1), between levels, at the highest, beyond it (P = 0);
    # at the highest level ExProb's limits are [0, 0] (test_continuous_quantities)
    below_top = np.asarray(ref["exprob"]["y"]) < max(res.model.design.response.values)
    exceed = res.exceedance(ref["exprob"]["y"], newdata)
    _assert_equals_rms(exceed, {"estimate": ref["exprob"]["estimate"]}, n)
    _assert_equals_rms(exceed, ref["exprob"], n, columns=below_top)


def test_rms_limits_are_compared_where_rms_forms_them():
    # rms 6.5's Quantile/ExProb(conf.int =) stop for a factor predictor (tests/r/orm_links.R)
    with_limits = [c for c in CONVERGED if "interval_error" not in reference(c)["exprob"]]
    assert sorted(with_limits) == [
        f"faithful_{f}" for f in ("cloglog", "logistic", "loglog", "probit")
    ]
    assert all("lower" in reference(c)["mean"] for c in CONVERGED)


def test_where_orm_stops_short_the_fit_here_reaches_the_maximum():
    ref, res, _ = fitted("faithful_cauchit")
    assert ref["max_deriv"] > 1.0
    assert res.converged and res.mle_retvals["max_grad"] < 1e-6
    assert res.llf > ref["loglik"] + 100


@pytest.mark.parametrize("link", ["logit", "probit", "cloglog", "loglog", "cauchit"])
def test_case_weights_equal_replicated_rows(link):
    ref, _, newdata = fitted("warpbreaks_logistic")
    data = _frame(ref["data"], ref["factor_levels"]).assign(
        w=np.resize([1, 2, 3], len(ref["data"]["breaks"]))
    )
    formula = ref["formula"]
    weighted = ordstats.OrdinalModel.from_formula(
        formula, data, many_levels=True, link=link, weights="w"
    ).fit()
    replicated = ordstats.OrdinalModel.from_formula(
        formula, data.loc[data.index.repeat(data["w"])], many_levels=True, link=link
    ).fit()
    assert weighted.nobs == replicated.nobs == data["w"].sum()
    np.testing.assert_allclose(weighted.params, replicated.params, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(weighted.bse, replicated.bse, rtol=1e-9)
    assert weighted.llf == pytest.approx(replicated.llf, rel=1e-12)
    assert weighted.llnull == pytest.approx(replicated.llnull, rel=1e-12)
    for quantity in (
        lambda r: r.mean(newdata),
        lambda r: r.quantile([0.1, 0.5, 0.9], newdata),
        lambda r: r.exceedance([5.0, 26.0, 26.5, 80.0], newdata),
    ):
        pd.testing.assert_frame_equal(quantity(weighted), quantity(replicated), rtol=1e-8)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_a_missing_or_infinite_response_drops_its_row_with_a_warning(bad):
    ref, _, newdata = fitted("warpbreaks_probit")
    data = _frame(ref["data"], ref["factor_levels"]).astype({"breaks": float})
    data.loc[0, "breaks"] = bad
    with pytest.warns(ordstats.errors.OrdstatsWarning, match="1 of 54 rows"):
        dropped = ordstats.OrdinalModel.from_formula(
            ref["formula"], data, many_levels=True, link="probit"
        ).fit()
    kept = ordstats.OrdinalModel.from_formula(
        ref["formula"], data.iloc[1:], many_levels=True, link="probit"
    ).fit()
    assert dropped.nobs == 53
    assert dropped.llf == pytest.approx(kept.llf, rel=1e-12)
    pd.testing.assert_frame_equal(dropped.mean(newdata), kept.mean(newdata))


def test_numbers_given_as_strings_are_refused_with_the_way_out():
    ref, _, _ = fitted("warpbreaks_logistic")
    data = _frame(ref["data"], ref["factor_levels"])
    data["breaks"] = data["breaks"].astype(str)
    with pytest.raises(ResponseError, match=r"unordered labels.*levels="):
        ordstats.OrdinalModel.from_formula(ref["formula"], data, many_levels=True)
