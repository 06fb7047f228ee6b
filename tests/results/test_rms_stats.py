"""res.lrm_stats() and res.orm_stats(): the statistics rms::lrm and rms::orm print (fit$stats).

Reference: ``tests/r/rms_stats.R`` (vendored in ``tests/data/reference/rms_stats/``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ordstats import OrdinalMixedModel, OrdinalModel, SurveyDesign, datasets
from ordstats.errors import SpecificationError
from ordstats.metrics import concordance_index
from ordstats.results.rms_stats import gini_mean_difference, rank_correlations
from tests._parity import dataset

REFERENCE = Path(__file__).parents[1] / "data" / "reference" / "rms_stats"
ORM_LINKS = Path(__file__).parents[1] / "data" / "reference" / "orm_links"


def _reference(name: str) -> pd.Series:
    ref = json.loads((REFERENCE / f"{name}.json").read_text())
    return pd.Series(ref["stats"], index=ref["names"], dtype=float)


def _fractional() -> Any:
    data = dataset("bankwages")
    data["wt"] = 1 + (np.arange(1, len(data) + 1) % 3) / 2
    return OrdinalModel.from_formula("job ~ education + gender", data, weights="wt").fit()


CASES: dict[str, Callable[[], Any]] = {
    "bankwages": lambda: OrdinalModel.from_formula(
        "job ~ education + gender + minority", dataset("bankwages")
    ).fit(),
    "wine": lambda: OrdinalModel.from_formula(
        "rating ~ temp + contact", datasets.load("wine")
    ).fit(),
    "housing_weights": lambda: OrdinalModel.from_formula(
        "Sat ~ Infl + Type + Cont", datasets.load("housing"), weights="Freq"
    ).fit(),
    "soup_six_levels": lambda: OrdinalModel.from_formula(
        "SURENESS ~ PROD + DAY + GENDER + AGEGROUP", datasets.load("soup")
    ).fit(),
    "bankwages_fractional_weights": _fractional,
    "bankwages_offset": lambda: OrdinalModel.from_formula(
        "job ~ education + gender + offset(o)",
        dataset("bankwages").eval("o = (education - 12) / 10"),
    ).fit(),
}
#: rms 6.5 rounds each row's weight for the rank correlations but not the level
#: totals: with fractional weights its C is 1.037 (above 1) and Tau-a 0.45
RMS_WEIGHT_DEFECT = {"C", "Dxy", "Gamma", "Tau-a"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_lrm_stats_equal_rms(name: str) -> None:
    ref = _reference(name)
    got = CASES[name]().lrm_stats()
    assert list(got.index) == list(ref.index)
    compared = [
        key
        for key in ref.index
        if key not in ("Max Deriv", "P")
        and not (name == "bankwages_fractional_weights" and key in RMS_WEIGHT_DEFECT)
    ]
    np.testing.assert_allclose(got[compared], ref[compared], rtol=2e-6, err_msg=name)
    # R prints P as 1 - pchisq (0 below 1e-16); ours is the upper tail itself
    assert got["P"] == pytest.approx(ref["P"], abs=1e-15)
    assert got["Max Deriv"] < 1e-4


def test_fractional_weights_give_weighted_pair_counts_where_rms_exceeds_one() -> None:
    ref = _reference("bankwages_fractional_weights")
    assert ref["C"] > 1  # rms 6.5's defect, not copied
    got = _fractional().lrm_stats()
    assert 0.5 < got["C"] < 1
    assert got["Dxy"] == pytest.approx(2 * got["C"] - 1)
    # integer weights give the expanded rows' pairs: rms and ordstats agree (housing)


def test_rank_correlations_equal_exact_concordance_when_bins_do_not_tie() -> None:
    rng = np.random.default_rng(7)
    codes = rng.integers(0, 4, size=300)
    rank = np.argsort(np.argsort(codes + rng.normal(size=300)))
    prob = (10 * rank + 0.5) / 5000  # one row per bin of 1/5000
    weights = np.ones(300)
    c_index, dxy, gamma, tau_a = rank_correlations(prob, codes, weights, 4)
    exact = concordance_index(codes, prob)
    assert c_index == pytest.approx(exact, rel=1e-12)
    assert dxy == pytest.approx(2 * c_index - 1, rel=1e-12)
    differing = (codes[:, None] != codes[None, :]).sum() / 2
    assert tau_a == pytest.approx(dxy * differing / (300 * 299 / 2), rel=1e-12)
    assert gamma == pytest.approx(dxy, rel=1e-12)  # no ties


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3), min_size=2, max_size=30))
def test_gini_mean_difference_is_the_mean_absolute_pairwise_difference(values: list[float]) -> None:
    x = np.array(values)
    pairwise = np.abs(x[:, None] - x[None, :]).sum() / (x.size * (x.size - 1))
    assert gini_mean_difference(x) == pytest.approx(pairwise, rel=1e-9, abs=1e-9)


def test_lrm_stats_refuse_models_lrm_cannot_fit() -> None:
    wine = datasets.load("wine")
    nominal = OrdinalModel.from_formula("rating ~ temp", wine, nominal="~ contact").fit()
    with pytest.raises(SpecificationError, match="nominal or scale"):
        nominal.lrm_stats()
    step = OrdinalModel.from_formula("rating ~ temp", wine, family="acat").fit()
    with pytest.raises(SpecificationError, match="'acat' family"):
        step.lrm_stats()
    # a step family with nominal effects: its family is the reason, not the nominal effects
    step_nominal = OrdinalModel.from_formula(
        "rating ~ temp", wine, family="sratio", nominal="~ contact"
    ).fit()
    for stats_of in (step_nominal.lrm_stats, step_nominal.orm_stats):
        with pytest.raises(SpecificationError, match="'sratio' family"):
            stats_of()
    design = SurveyDesign(wine.assign(w=1.0 + (wine["judge"].cat.codes % 3)), weights="w")
    survey = OrdinalModel.from_formula("rating ~ temp", design=design).fit()
    with pytest.raises(SpecificationError, match="pseudo-likelihood"):
        survey.lrm_stats()
    penalised = OrdinalModel.from_formula("rating ~ temp", wine).fit_regularized(alpha=0.1)
    with pytest.raises(SpecificationError, match="penalised"):
        penalised.lrm_stats()
    mixed = OrdinalMixedModel.from_formula("rating ~ temp + (1|judge)", wine).fit()
    with pytest.raises(SpecificationError, match="lrm_stats"):
        mixed.lrm_stats()


def _orm_data(case: str) -> pd.DataFrame:
    """The rows of an orm_links reference (warpbreaks, faithful), with R's factor levels."""
    ref = json.loads((ORM_LINKS / f"{case}.json").read_text())
    frame = pd.DataFrame(ref["data"])
    for name, categories in (ref["factor_levels"] or {}).items():
        frame[name] = pd.Categorical(frame[name], categories=categories)
    return frame


ORM_CASES: dict[str, Callable[[], Any]] = {
    "orm_wine": CASES["wine"],
    "orm_warpbreaks": lambda: OrdinalModel.from_formula(
        "breaks ~ wool + tension", _orm_data("warpbreaks_logistic"), many_levels=True
    ).fit(),
    "orm_faithful_probit": lambda: OrdinalModel.from_formula(
        "waiting ~ eruptions", _orm_data("faithful_probit"), many_levels=True, link="probit"
    ).fit(),
    # orm's "loglog" family is ordstats' cloglog link and orm's "cloglog" its loglog
    "orm_faithful_loglog": lambda: OrdinalModel.from_formula(
        "waiting ~ eruptions", _orm_data("faithful_probit"), many_levels=True, link="cloglog"
    ).fit(),
    "orm_bankwages_cloglog": lambda: OrdinalModel.from_formula(
        "job ~ education + gender + minority", dataset("bankwages"), link="loglog"
    ).fit(),
}


@pytest.mark.parametrize("name", sorted(ORM_CASES))
def test_orm_stats_equal_rms(name: str) -> None:
    ref = _reference(name)
    got = ORM_CASES[name]().orm_stats()
    assert list(got.index) == list(ref.index)
    compared = [key for key in ref.index if key not in ("Max Deriv", "P", "Score P")]
    # the R fits ran to eps = 1e-12
    np.testing.assert_allclose(got[compared], ref[compared], rtol=2e-6, err_msg=name)
    # R prints P as 1 - pchisq (0 below 1e-16); ours is the upper tail itself
    for key in ("P", "Score P"):
        assert got[key] == pytest.approx(ref[key], rel=1e-5, abs=1e-15)
    assert got["Max Deriv"] < 1e-4


def test_orm_stats_score_equals_the_lr_test_to_first_order_and_refuse_weights() -> None:
    res = CASES["wine"]()
    stats_ = res.orm_stats()
    assert stats_["Score"] == pytest.approx(stats_["Model L.R."], rel=0.1)
    weighted = CASES["housing_weights"]()
    with pytest.raises(SpecificationError, match="no weights"):
        weighted.orm_stats()


def test_orm_stats_repeat_r2_names_as_r_when_the_effective_size_rounds_to_n() -> None:
    ref = json.loads((REFERENCE / "orm_lifecyclesavings.json").read_text())
    res = OrdinalModel.from_formula(
        "sr ~ pop15 + dpi", dataset("lifecyclesavings"), many_levels=True
    ).fit()
    got = res.orm_stats()
    assert list(got.index) == ref["names"]
    assert list(got.index).count("R2(50)") == 2
    keep = [i for i, name in enumerate(ref["names"]) if name not in ("Max Deriv", "P", "Score P")]
    np.testing.assert_allclose(got.to_numpy()[keep], np.array(ref["stats"])[keep], rtol=2e-6)
