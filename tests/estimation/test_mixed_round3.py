"""clmm cases beyond clmm_extra / clmm_slopes, against R's ordinal::clmm (tests/r/clmm_round3.R).

symmetric2 thresholds, probit/cauchit/cloglog and structured thresholds under adaptive
quadrature, a numeric grouping column, ``subset=``, zero and fractional weights with an
offset, NA in the grouping factor, and carrots / Chem97 single-term and crossed fits.
Standard errors of R's single-term Laplace fits are taken from R's general path
(``se_env``): its default one is off under symmetric2 (see the R script).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats.errors import MissingDataWarning

DATA = Path(__file__).resolve().parents[1] / "data"
REF = json.loads((DATA / "reference" / "clmm_round3.json").read_text())
CASES = sorted(k for k, v in REF.items() if isinstance(v, dict))


@pytest.fixture(scope="module")
def frames(wine: pd.DataFrame) -> dict[str, pd.DataFrame]:
    w = wine.copy()
    i = np.arange(len(w))
    w["jnum"] = w["judge"].astype(int) * 10
    w["wfrac"] = 0.5 + (i % 4) * 0.3
    w["off"] = 0.1 * (i % 5)
    w["wzero"] = np.where((w["judge"].astype(str) == "3") | (i < 2), 0.0, 1.0)
    w["judge_na"] = w["judge"].astype(object)
    w.loc[[1, 4], "judge_na"] = None
    ca = pd.read_csv(DATA / "carrots.csv", dtype={"Consumer": str, "Product": str, "Homesize": str})
    ca["P"] = pd.Categorical(ca["Preference"], ordered=True)
    ch = pd.read_csv(DATA / "chem97_12lea.csv", dtype={"lea": str, "school": str, "gender": str})
    ch["S"] = pd.Categorical(ch["score"], ordered=True)
    return {"wine": w, "ca": ca, "ch": ch}


def _fit(case: str, frames: dict[str, pd.DataFrame]) -> ordstats.MixedResults:
    r = REF[case]
    data = frames[r["data"]]
    kw: dict[str, object] = {"link": r["ordstats_link"], "threshold": r["threshold"]}
    if r["weights"]:
        kw["weights"] = r["weights"]
    if r["subset"]:
        kw["subset"] = (data["judge"].astype(str) != "3").to_numpy()  # R's judge != '3'
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "2 of 72 rows", MissingDataWarning)
        return ordstats.OrdinalModel.from_formula(r["formula"], data, **kw).fit(nagq=r["nagq"])


def _r_name(name: str) -> str:
    return name.replace("[T.", "").replace("]", "")


@pytest.mark.parametrize("case", CASES)
def test_fit_matches_r(case: str, frames: dict[str, pd.DataFrame]) -> None:
    r = REF[case]
    res = _fit(case, frames)
    # R stops early on cauchit (gradient 1e-2): ordstats must reach at least its maximum
    assert res.llf >= r["loglik"] - 1e-6 * abs(r["loglik"])
    assert res.llf == pytest.approx(r["loglik"], abs=5e-4)
    r_coef = pd.Series(r["coef"])
    names = [_r_name(n) for n in res.params.index]
    np.testing.assert_allclose(res.params.to_numpy(), r_coef[names].to_numpy(), atol=1e-4)
    sd = res.varcorr()["sd"].to_numpy()
    r_sd = np.concatenate([np.atleast_1d(v) for v in r["sd"].values()])
    np.testing.assert_allclose(np.sort(sd), np.sort(r_sd), atol=2e-4)
    assert res.nobs == pytest.approx(r["nobs"])
    assert res.aic == pytest.approx(r["aic"], abs=1e-3)
    assert res.bic == pytest.approx(r["bic"], abs=1e-3)
    counts = sorted(len(frame) for frame in res.ranef().values())
    assert counts == sorted(r["ngroups"].values())


@pytest.mark.parametrize("case", CASES)
def test_standard_errors_match_r(case: str, frames: dict[str, pd.DataFrame]) -> None:
    r = REF[case]
    if r["link"] == "cauchit":
        pytest.skip("R's cauchit fit stops at a gradient of 1e-2")
    res = _fit(case, frames)
    r_se = pd.Series(r["se_env"] or r["se"])
    names = [_r_name(n) for n in res.params.index]
    # R differentiates its objective numerically (deriv12): agreement to ~0.5%
    np.testing.assert_allclose(res.bse.to_numpy(), r_se[names].to_numpy(), rtol=1e-2)


def test_one_row_per_level_warns_that_the_variance_is_not_identified(wine: pd.DataFrame) -> None:
    # R: "no. random effects (=72) >= no. observations (=72)"; under probit the exact
    # marginal likelihood is the clm's whatever the SD, P(Y <= j) = Phi((theta_j - eta) /
    # sqrt(1 + s^2)), while the Laplace approximation finds a spurious optimum far above it
    data = wine.assign(row=[f"r{i}" for i in range(len(wine))])
    model = ordstats.OrdinalModel.from_formula(
        "rating ~ temp + contact + (1|row)", data, link="probit"
    )
    with pytest.warns(ordstats.errors.SpecificationWarning, match="72 in \\(1\\|row\\); 72 rows"):
        laplace = model.fit()
    clm = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine, link="probit").fit()
    assert laplace.llf > clm.llf + 20  # what the warning is about
    for sd in (0.5, 2.0):  # the exact likelihood is flat along the clm's rescaled estimates
        x = np.r_[clm.params.to_numpy() * np.sqrt(1 + sd**2), np.log(sd)]
        assert model.loglike(x, nagq=40) == pytest.approx(clm.llf, abs=1e-6)


def test_levels_fewer_than_rows_do_not_warn(wine: pd.DataFrame) -> None:
    # 72 bottle-by-judge cells = 72 rows warns; the 9 judges x 8 bottles crossed do not
    pairs = ordstats.OrdinalModel.from_formula("rating ~ temp + (1|judge:bottle)", wine)
    with pytest.warns(ordstats.errors.SpecificationWarning, match="72 in"):
        pairs.fit()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ordstats.OrdinalModel.from_formula("rating ~ temp + (1|judge) + (1|bottle)", wine).fit()
