"""Likelihood-ratio tests, anova, Vuong's test and compare_links (against R where R is right)."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import ordstats
from ordstats.errors import (
    CollinearityWarning,
    ConvergenceWarning,
    NotFittedError,
    OrdstatsError,
    SpecificationError,
    SpecificationWarning,
)
from ordstats.inference.describe import describe_model
from ordstats.inference.lr import lr_pvalue
from ordstats.inference.nesting import link_nesting
from tests import _reference as ref

#: Test statistics, p-values: the issue's bar.
ATOL_TEST = 1e-4
#: Log-likelihoods and information criteria: the project's bar for estimates.
RTOL_LOGLIK = 1e-6


def fit(formula, data, **kwargs):
    return ordstats.OrdinalModel.from_formula(formula, data, **kwargs).fit()


@pytest.fixture(scope="module")
def wine_fits(wine):
    return {
        "temp": fit("rating ~ temp", wine),
        "additive": fit("rating ~ temp + contact", wine),
        "interaction": fit("rating ~ temp * contact", wine),
        "contact": fit("rating ~ contact", wine),
    }


# -- anova against R ------------------------------------------------------------


@pytest.mark.parametrize("case", ref.cases("anova_wine_"))
def test_anova_matches_r(case):
    data = ref.load(case)
    calls = re.findall(r"clm\([^)]*\)", data["r_call"])
    fits = [ref.fit_reference_call(call) for call in calls]
    table = ordstats.anova(*fits)
    expected = pd.DataFrame(data["table"]["columns"]).replace("NA", np.nan).astype(float)
    assert list(table.columns) == list(expected.columns)
    np.testing.assert_array_equal(table["no.par"], expected["no.par"])
    for column in ("AIC", "logLik"):
        np.testing.assert_allclose(table[column], expected[column], rtol=RTOL_LOGLIK)
    for column in ("LR.stat", "df", "Pr(>Chisq)"):
        np.testing.assert_allclose(table[column], expected[column], atol=ATOL_TEST)


def test_anova_sorts_by_size_and_tests_each_step(wine_fits):
    table = ordstats.anova(wine_fits["interaction"], wine_fits["temp"], wine_fits["additive"])
    assert list(table["no.par"]) == [5, 6, 7]
    assert list(table.index) == [
        "rating ~ temp",
        "rating ~ temp + contact",
        "rating ~ temp * contact",
    ]
    step = ordstats.lr_test(wine_fits["additive"], wine_fits["interaction"])
    assert table["LR.stat"].iloc[2] == pytest.approx(step.statistic)
    assert np.isnan(table["LR.stat"].iloc[0])


def test_anova_names_and_errors(wine_fits):
    table = ordstats.anova(wine_fits["temp"], wine_fits["additive"], names=["small", "big"])
    assert list(table.index) == ["small", "big"]
    with pytest.raises(SpecificationError, match="at least two"):
        ordstats.anova()
    # one model: R's anova(fit) of one clm, Wald tests of its terms (test_anova_types.py)
    assert list(ordstats.anova(wine_fits["temp"]).columns) == ["Df", "Chisq", "Pr(>Chisq)"]
    with pytest.raises(SpecificationError, match="fitted ordstats models"):
        ordstats.anova(wine_fits["temp"].model)
    with pytest.raises(OrdstatsError, match="distinct labels"):
        ordstats.anova(wine_fits["temp"], wine_fits["additive"], names=["a", "a"])
    with pytest.raises(OrdstatsError, match="expected fitted models"):
        ordstats.anova(wine_fits["temp"], wine_fits["additive"].model)


ANOVA_MODELS = json.loads(
    (Path(__file__).parents[1] / "data" / "reference" / "anova_models.json").read_text()
)["cases"]


@pytest.mark.parametrize("case", sorted(ANOVA_MODELS))
def test_anova_describes_nominal_and_scale_parts_as_r(case):
    # R's attr(anova(m1, m2), "models") (tests/r/anova_models.R); before: both rows of
    # rating ~ temp vs rating ~ temp with nominal ~contact read "rating ~ temp"
    expected = ANOVA_MODELS[case]
    restricted = ref.fit_reference_call(expected["restricted"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CollinearityWarning)  # contact in location and nominal
        full = ref.fit_reference_call(expected["full"])
    table = ordstats.anova(full, restricted)
    models = pd.DataFrame(table.attrs["models"])
    assert models.to_dict(orient="list") == expected["models"]
    assert list(table["no.par"]) == expected["no.par"]
    np.testing.assert_allclose(table["logLik"], expected["logLik"], rtol=RTOL_LOGLIK)
    assert table["LR.stat"].iloc[1] == pytest.approx(expected["LR.stat"][1], abs=ATOL_TEST)
    for part in ("nominal", "scale"):  # the row labels and lr_test name the parts too
        if part in expected["models"]:
            label = f"{part}: {expected['models'][part][1]}"
            assert label in table.index[1] and label not in table.index[0]
            assert label in ordstats.lr_test(restricted, full).full
            assert label in str(ordstats.lr_test(restricted, full))


ANOVA_EQUAL_DF = ref.load("anova_equal_df")["cases"]


@pytest.mark.parametrize("case", sorted(ANOVA_EQUAL_DF))
def test_anova_of_models_of_the_same_size_as_r(case):
    # R's anova.clm (tests/r/anova_equal_df.R): a step between fits with as many
    # parameters (an aliased term dropped, or models that are not nested) has
    # LR.stat 2 * (logLik - logLik above), df 0 and p NA; before: an error
    expected = ANOVA_EQUAL_DF[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CollinearityWarning)  # the aliased I() column
        fits = [ref.fit_reference_call(call) for call in expected["calls"]]
    table = ordstats.anova(*fits)
    order = [i - 1 for i in expected["order"]]
    assert list(table.index) == [describe_model(fits[i]) for i in order]
    assert list(table["no.par"]) == expected["no.par"]
    for column in ("AIC", "logLik"):
        np.testing.assert_allclose(table[column], expected[column], rtol=RTOL_LOGLIK)
    r_columns = {"LR.stat": "LR.stat", "df": "df", "Pr(>Chisq)": "pvalue"}
    for column, r_column in r_columns.items():
        values = np.array([np.nan if v == "NA" else v for v in expected[r_column]], dtype=float)
        np.testing.assert_allclose(table[column], values, atol=ATOL_TEST)


ANOVA_EQUAL_DF_CLMM = ref.load("anova_equal_df_clmm")["cases"]


def _r_column(values):
    return np.array([np.nan if v == "NA" else v for v in values], dtype=float)


@pytest.fixture(scope="module")
def equal_size_fits():
    calls = {call for case in ANOVA_EQUAL_DF_CLMM.values() for call in case["calls"]}
    return {call: ref.fit_reference_call(call) for call in calls}


@pytest.mark.parametrize("case", sorted(ANOVA_EQUAL_DF_CLMM))
def test_lr_test_and_anova_of_fits_of_the_same_size_as_r(case, equal_size_fits):
    # R's anova of two clm or clmm fits (or one of each) with as many parameters
    # (tests/r/anova_equal_df_clmm.R): LR.stat 2 * (logLik - logLik above), df 0,
    # p NA; before: lr_test refused every such pair and anova one with a clmm
    expected = ANOVA_EQUAL_DF_CLMM[case]
    first, second = (equal_size_fits[call] for call in expected["calls"])
    test = ordstats.lr_test(first, second)
    assert test.statistic == pytest.approx(_r_column(expected["LR.stat"])[1], abs=ATOL_TEST)
    assert test.df == 0 and np.isnan(test.pvalue)
    text = str(test)
    assert f"LR = {test.statistic:.4f} on 0 df, p-value = NA" in text
    assert "no test" in text and "significant" not in text
    table = ordstats.anova(first, second)
    assert list(table["no.par"]) == expected["no.par"]
    for column in ("AIC", "logLik"):
        np.testing.assert_allclose(table[column], expected[column], rtol=RTOL_LOGLIK)
    r_columns = {"LR.stat": "LR.stat", "df": "df", "Pr(>Chisq)": "pvalue"}
    for column, r_column in r_columns.items():
        np.testing.assert_allclose(table[column], _r_column(expected[r_column]), atol=ATOL_TEST)


def test_lr_test_of_fits_of_the_same_size_checks_the_data(wine, equal_size_fits):
    # before: "the full model must be the mixed one", now the real reason
    data = wine.assign(w=np.r_[1.5, 0.5, np.ones(70)])  # the same total weight
    weighted = fit("rating ~ temp + contact", data, weights="w")
    clmm = equal_size_fits["clmm(rating ~ temp + (1|judge), data = wine)"]
    with pytest.raises(SpecificationError, match="different weights"):
        ordstats.lr_test(clmm, weighted)
    with pytest.raises(SpecificationError, match="different weights"):
        ordstats.anova(clmm, weighted)


def test_anova_labels_show_the_nominal_part(wine_fits, wine):
    nominal = fit("rating ~ temp", wine, nominal="~ contact")
    table = ordstats.anova(wine_fits["temp"], nominal)
    assert list(table.index) == ["rating ~ temp", "rating ~ temp, nominal: ~contact"]
    test = ordstats.lr_test(wine_fits["temp"], nominal)
    assert "full:       rating ~ temp, nominal: ~contact" in str(test)


# -- lr_test --------------------------------------------------------------------


def test_lr_test_statistic_and_report(wine_fits):
    test = ordstats.lr_test(wine_fits["temp"], wine_fits["additive"])
    expected = 2 * (wine_fits["additive"].llf - wine_fits["temp"].llf)
    assert test.statistic == pytest.approx(expected)
    assert test.df == 1 and test.pvalue == pytest.approx(stats.chi2.sf(expected, 1))
    text = str(test)
    assert "LR = 11.0430 on 1 df" in text and "fits significantly better" in text
    assert "rating ~ temp + contact" in text


def test_lr_pvalue_boundary_mixture():
    assert lr_pvalue(2.7, 1, boundary=True) == pytest.approx(0.5 * stats.chi2.sf(2.7, 1))
    assert lr_pvalue(0.0, 1, boundary=True) == 1.0
    mixed = 0.5 * stats.chi2.sf(4.0, 2) + 0.5 * stats.chi2.sf(4.0, 1)
    assert lr_pvalue(4.0, 2, boundary=True) == pytest.approx(mixed)


def test_link_nesting_table():
    assert link_nesting("logit", "Aranda-Ordaz").value == 1.0
    assert link_nesting("cloglog", "aranda-ordaz").boundary
    assert not link_nesting("cloglog", "log-gamma").boundary
    assert link_nesting("loglog", "log-gamma").value == -1.0
    assert link_nesting("probit", "log-gamma").value == 0.0
    assert link_nesting("cauchit", "log-gamma") is None


def test_threshold_structures_are_nested(wine):
    formula = "rating ~ temp + contact"
    flexible = fit(formula, wine)
    symmetric = fit(formula, wine, threshold="symmetric")
    symmetric2 = fit(formula, wine, threshold="symmetric2")
    equidistant = fit(formula, wine, threshold="equidistant")
    assert ordstats.lr_test(equidistant, flexible).df == 2
    assert ordstats.lr_test(symmetric, flexible).df == 1
    assert ordstats.lr_test(symmetric2, symmetric).df == 1
    # theta = (t, t + s, t + 2s, t + 3s) is symmetric about two centres
    assert ordstats.lr_test(equidistant, symmetric).df == 1


def test_nesting_is_read_from_the_designs(wine):
    """A linear trend is nested in the factor, whatever the formulas look like."""
    data = wine.assign(b=wine["bottle"].astype(int))
    linear = fit("rating ~ b", data)
    factor = fit("rating ~ C(b)", data)
    test = ordstats.lr_test(linear, factor)
    assert test.df == 6
    assert test.statistic == pytest.approx(2 * (factor.llf - linear.llf))


def test_offsets_in_the_span_are_nested(wine):
    data = wine.assign(off=1.5 * (wine["contact"] == "yes"), other=np.linspace(0, 1, 72))
    fixed = fit("rating ~ temp", data, offset="off")
    full = fit("rating ~ temp + contact", data)
    assert ordstats.lr_test(fixed, full).df == 1
    outside = fit("rating ~ temp", data, offset="other")
    with pytest.raises(SpecificationError, match="'offset'"):
        ordstats.lr_test(outside, full)


@pytest.mark.parametrize(
    ("restricted", "full", "message"),
    [
        ("additive", "temp", "pass the smaller model first"),
        ("interaction", "additive", "pass the smaller model first"),
    ],
)
def test_refuses_by_size(wine_fits, restricted, full, message):
    with pytest.raises(SpecificationError, match=message):
        ordstats.lr_test(wine_fits[restricted], wine_fits[full])


def test_refuses_terms_the_full_model_lacks(wine, wine_fits):
    judges = fit("rating ~ temp + judge", wine)
    with pytest.raises(SpecificationError, match=r"'contact\[T.yes\]' describe effects"):
        ordstats.lr_test(wine_fits["contact"], judges)


def test_refuses_different_links(wine, wine_fits):
    probit = fit("rating ~ temp * contact", wine, link="probit")
    with pytest.raises(SpecificationError, match=r"not valid.*compare_links"):
        ordstats.lr_test(wine_fits["temp"], probit)


def test_refuses_different_rows(wine, wine_fits):
    holes = wine.assign(x=np.where(np.arange(72) < 3, np.nan, 1.0) * np.arange(72))
    with pytest.warns(ordstats.errors.MissingDataWarning):
        fewer = fit("rating ~ temp + contact + x", holes)
    with pytest.raises(SpecificationError, match=r"different rows \(72 vs 69 used\)"):
        ordstats.lr_test(wine_fits["temp"], fewer)


def test_refuses_different_responses_and_weights(wine, wine_fits):
    values = wine["rating"].sample(frac=1.0, random_state=3).to_numpy()
    shuffled = wine.assign(rating=pd.Categorical(values, dtype=wine["rating"].dtype))
    with pytest.raises(SpecificationError, match="responses differ"):
        ordstats.lr_test(wine_fits["temp"], fit("rating ~ temp + contact", shuffled))
    renamed = wine.assign(score=wine["rating"])
    with pytest.raises(SpecificationError, match="different responses"):
        ordstats.lr_test(wine_fits["temp"], fit("score ~ temp + contact", renamed))
    weighted = fit("rating ~ temp + contact", wine.assign(w=np.r_[2.0, np.ones(71)]), weights="w")
    with pytest.raises(SpecificationError, match="different weights"):
        ordstats.lr_test(wine_fits["temp"], weighted)


def test_warns_about_unconverged_fits(wine, wine_fits):
    model = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine)
    with pytest.warns(ConvergenceWarning):
        rough = model.fit(maxiter=1)
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        ordstats.lr_test(wine_fits["temp"], rough)


# -- Vuong --------------------------------------------------------------------


def _observed_log_prob(res):
    prob = res.predict().to_numpy()
    return np.log(prob[np.arange(prob.shape[0]), res.model.data.y])


def test_vuong_by_hand(wine):
    logit = fit("rating ~ temp + contact", wine)
    probit = fit("rating ~ temp + contact", wine, link="probit")
    m = _observed_log_prob(logit) - _observed_log_prob(probit)
    z = m.sum() / (np.sqrt(72) * m.std())
    test = ordstats.vuong_test(logit, probit)
    assert test.statistic == pytest.approx(z, rel=1e-8)
    assert test.pvalue == pytest.approx(2 * stats.norm.sf(abs(z)))
    assert test.pvalue_second == pytest.approx(stats.norm.cdf(z))
    assert "cannot distinguish" in str(test)
    smaller = fit("rating ~ temp", wine, link="probit")
    bic = ordstats.vuong_test(logit, smaller, correction="bic")
    m = _observed_log_prob(logit) - _observed_log_prob(smaller)
    expected = (m.sum() - 0.5 * np.log(72)) / (np.sqrt(72) * m.std())
    assert bic.statistic == pytest.approx(expected, rel=1e-8)


def test_vuong_weighted_rows_count_as_observations(housing):
    expanded = housing.loc[housing.index.repeat(housing["Freq"])].reset_index(drop=True)
    formula = "Sat ~ Infl + Type + Cont"
    weighted = [fit(formula, housing, weights="Freq", link=link) for link in ("logit", "cloglog")]
    rows = [fit(formula, expanded, link=link) for link in ("logit", "cloglog")]
    assert ordstats.vuong_test(*weighted).statistic == pytest.approx(
        ordstats.vuong_test(*rows).statistic, rel=1e-6
    )


def test_vuong_identical_models_are_indistinguishable(wine_fits):
    # before: z and every p-value NaN; now 0/0 is reported as no evidence either way
    test = ordstats.vuong_test(wine_fits["temp"], wine_fits["temp"])
    assert test.statistic == 0.0 and test.omega == 0.0
    assert (test.pvalue, test.pvalue_first, test.pvalue_second) == (1.0, 0.5, 0.5)
    assert "indistinguishable" in str(test)
    with pytest.raises(OrdstatsError, match="correction"):
        ordstats.vuong_test(wine_fits["temp"], wine_fits["additive"], correction="hq")


# -- compare_links against R's link tables ---------------------------------------


def _exact_loglik(dataset: str, link: str, r_loglik: float) -> float:
    """R's logLik, except the cauchit's, which clm biases (README): use the exact one."""
    if link != "cauchit":
        return r_loglik
    return ref.load(f"clm_{dataset}_cauchit")["extra"]["cauchit_exact"]["loglik"]


@pytest.mark.parametrize("case", ref.cases("linktable_"))
def test_compare_links_matches_r_link_table(case):
    data = ref.load(case)
    formula, dataset, kwargs = ref.fit_call(data["r_call"].replace('"<link>"', '"logit"'))
    kwargs.pop("link")
    frame = ordstats.datasets.load(dataset)
    result = ordstats.compare_links(formula, frame, nested_tests=False, **kwargs)
    columns = data["table"]["columns"]
    assert list(result.table.index) == columns["link"]
    for i, link in enumerate(columns["link"]):
        loglik = _exact_loglik(dataset, link, columns["logLik"][i])
        row = result.table.loc[link]
        assert row["logLik"] == pytest.approx(loglik, rel=RTOL_LOGLIK)
        k = columns["edf"][i]
        assert row["no.par"] == k
        assert row["AIC"] == pytest.approx(-2 * loglik + 2 * k, rel=RTOL_LOGLIK)
        assert row["BIC"] == pytest.approx(
            -2 * loglik + np.log(data_nobs(frame, kwargs)) * k, rel=RTOL_LOGLIK
        )
        if link != "cauchit":
            assert row["AIC"] == pytest.approx(columns["AIC"][i], rel=RTOL_LOGLIK)
            assert row["BIC"] == pytest.approx(columns["BIC"][i], rel=RTOL_LOGLIK)
    assert len(result.vuong) == 10
    pair = result.vuong.iloc[0]
    direct = ordstats.vuong_test(result.results[pair["link 1"]], result.results[pair["link 2"]])
    assert pair["z"] == pytest.approx(direct.statistic)


def data_nobs(frame, kwargs):
    return frame[kwargs["weights"]].sum() if "weights" in kwargs else len(frame)


def test_compare_links_report(wine):
    result = ordstats.compare_links("rating ~ temp + contact", wine, links=("logit", "cloglog"))
    text = str(result)
    assert "Information criteria" in text and "Vuong" in text and "flexible family" in text
    assert result.best == "logit"
    assert not result.notes


#: The flexible fits of R's clm stop at max|grad| ~ 1e-5 (nlminb without gradient);
#: the reference files' ``refined`` optimum is profiled over lambda to 1e-10.
FLEXIBLE_LOGLIK = {
    "aranda-ordaz": "clm_{}_aranda_ordaz",
    "log-gamma": "clm_{}_log_gamma",
}


@pytest.mark.parametrize("dataset", ["wine", "housing"])
def test_nested_link_tests_match_r_fits(dataset):
    """LR of each link within its flexible family, from R's optima of both fits."""
    table = ref.load(f"linktable_{dataset}")
    formula, _, kwargs = ref.fit_call(table["r_call"].replace('"<link>"', '"logit"'))
    kwargs.pop("link")
    result = ordstats.compare_links(
        formula,
        ordstats.datasets.load(dataset),
        links=("logit", "probit", "cloglog", "loglog"),
        **kwargs,
    )
    columns = table["table"]["columns"]
    standard = dict(zip(columns["link"], columns["logLik"], strict=True))
    nested = result.nested.set_index(["link", "family"])
    assert len(nested) == 5
    for (link, family), row in nested.iterrows():
        refined = ref.load(FLEXIBLE_LOGLIK[family].format(dataset))["extra"]["refined"]
        statistic = 2 * (refined["loglik"] - standard[link])
        assert row["LR.stat"] == pytest.approx(statistic, abs=ATOL_TEST)
        assert row["lambda_hat"] == pytest.approx(refined["lambda"], abs=1e-4)
        boundary = (link, family) == ("cloglog", "aranda-ordaz")
        assert row["boundary"] == boundary
        expected = stats.chi2.sf(statistic, 1) * (0.5 if boundary else 1.0)
        assert row["Pr(>Chisq)"] == pytest.approx(expected, abs=ATOL_TEST)
        assert row["lambda0"] == link_nesting(link, family).value


def test_lr_test_between_a_link_and_its_family(wine):
    formula = "rating ~ temp + contact"
    family = fit(formula, wine, link="aranda-ordaz")
    logit = ordstats.lr_test(fit(formula, wine), family)
    assert logit.df == 1 and not logit.boundary
    cloglog = ordstats.lr_test(fit(formula, wine, link="cloglog"), family)
    assert cloglog.boundary and "mixture of chi2(0) and chi2(1)" in str(cloglog)
    assert cloglog.pvalue == pytest.approx(0.5 * stats.chi2.sf(cloglog.statistic, 1))
    with pytest.raises(SpecificationError, match="'probit' and 'aranda-ordaz'"):
        ordstats.lr_test(fit(formula, wine, link="probit"), family)


def test_compare_links_bad_input(wine):
    with pytest.raises(SpecificationError, match="at least two different links"):
        ordstats.compare_links("rating ~ temp", wine, links=("logit", "logit"))
    with pytest.raises(SpecificationError, match="links="):
        ordstats.compare_links("rating ~ temp", wine, link="probit")
    with pytest.raises(SpecificationError, match="unknown link"):
        ordstats.compare_links("rating ~ temp", wine, links=("logit", "tobit"))


def test_nominal_and_scale_nesting(wine):
    base = fit("rating ~ temp + contact", wine)
    scaled = fit("rating ~ temp + contact", wine, scale="~ temp")
    assert ordstats.lr_test(base, scaled).df == 1
    other_scale = fit("rating ~ temp + contact", wine, scale="~ contact")
    both = fit("rating ~ temp", wine, scale="~ temp", nominal="~ contact")
    with pytest.raises(SpecificationError, match=r"'scale:contact\[T.yes\]'"):
        ordstats.lr_test(other_scale, both)
    nominal = fit("rating ~ temp", wine, nominal="~ contact")
    assert ordstats.lr_test(base, nominal).df == 3
    assert ordstats.lr_test(nominal, both).df == 1


def test_compare_links_keeps_the_family_fits(wine):
    result = ordstats.compare_links("rating ~ temp", wine, links=("probit", "cauchit"))
    assert set(result.family_results) == {"log-gamma"}
    assert list(result.nested["link"]) == ["probit"]
    with pytest.raises(SpecificationError, match="flexible family"):
        ordstats.compare_links("rating ~ temp", wine, links=("logit", "aranda-ordaz"))


# -- fits whose data were removed (remove_data, save(..., remove_data=True)) -------------


def _removed(formula, data, **kwargs):
    res = fit(formula, data, **kwargs)
    res.remove_data()
    return res


def test_lr_test_and_anova_between_fits_without_their_data(wine, wine_fits):
    # R's anova works on such fits (it needs only logLik and df); before: a refusal
    # naming InMemoryEvaluator and DataRemovedEvaluator, or NotFittedError
    small, big = _removed("rating ~ temp", wine), _removed("rating ~ temp + contact", wine)
    expected = ordstats.lr_test(wine_fits["temp"], wine_fits["additive"])
    for pair in ((small, big), (wine_fits["temp"], big), (small, wine_fits["additive"])):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # nested by name: no warning
            test = ordstats.lr_test(*pair)
        assert test.statistic == pytest.approx(expected.statistic, rel=1e-12)
        assert test.df == 1
    table = ordstats.anova(big, small)
    assert table["LR.stat"].iloc[1] == pytest.approx(expected.statistic, rel=1e-12)
    nominal = _removed("rating ~ temp", wine, nominal="~ contact")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # contact relaxed by its nominal effect
        assert ordstats.lr_test(big, nominal).df == 3


def test_nesting_without_data_is_judged_by_name_with_a_warning(wine):
    linear = _removed("rating ~ x", wine.assign(x=(wine["temp"] == "warm") * 2.0))
    factor = _removed("rating ~ temp + contact", wine)
    with pytest.warns(SpecificationWarning, match="'x' is not part of the full model by name"):
        test = ordstats.lr_test(linear, factor)
    assert test.df == 1


def test_fits_without_data_of_different_rows_are_refused(wine):
    small = _removed("rating ~ temp", wine.iloc[:60])
    big = _removed("rating ~ temp + contact", wine)
    with pytest.raises(SpecificationError, match=r"different rows or weights \(60 vs 72") as err:
        ordstats.lr_test(small, big)
    assert "Evaluator" not in str(err.value)
    with pytest.raises(NotFittedError, match="Vuong's test"):
        ordstats.vuong_test(big, _removed("rating ~ temp + contact", wine, link="probit"))


def test_vuong_one_model_under_two_codings_is_indistinguishable(wine):
    # the same model with other contrasts gives the same probabilities up to ~1e-12 per
    # row; before, z was that noise divided by its own spread (|z| of order 1 to 10)
    treatment = fit("rating ~ temp + judge", wine)
    summed = ordstats.OrdinalModel.from_formula(
        "rating ~ temp + judge", wine, contrasts={"judge": "contr.sum"}
    ).fit()
    test = ordstats.vuong_test(treatment, summed)
    assert test.statistic == 0.0 and test.pvalue == 1.0


def _clmm(formula, data, **options):
    return ordstats.OrdinalModel.from_formula(formula, data, **options).fit()


@pytest.mark.parametrize(
    ("changed", "message"),
    [
        ("response", "responses differ on the same rows"),
        ("weights", "different weights"),
        ("offset", "different offsets"),
        ("grouping", "grouping factor 'judge' puts the same rows in different groups"),
    ],
)
@pytest.mark.parametrize("restricted_kind", ["clm", "clmm"])
def test_a_clmm_test_refuses_fits_of_different_data(wine, changed, message, restricted_kind):
    """Before: only the total weight was compared, and such pairs got a p-value (a
    shuffled response: LR -25.9, p = 1; different weights of the same total: p = 4e-13)."""
    if restricted_kind == "clm" and changed == "grouping":
        pytest.skip("a clm has no grouping factor")
    data, options = wine, {}
    if changed == "response":
        values = wine["rating"].sample(frac=1.0, random_state=3).to_numpy()
        data = wine.assign(rating=pd.Categorical(values, dtype=wine["rating"].dtype))
    elif changed == "weights":  # the same total
        data, options = wine.assign(w=np.r_[1.5, 0.5, np.ones(70)]), {"weights": "w"}
    elif changed == "offset":
        options = {"offset": np.linspace(-3.0, 3.0, 72)}
    else:
        data = wine.assign(judge=wine["judge"].sample(frac=1.0, random_state=4).to_numpy())
    restricted = _clmm(
        "rating ~ temp" + (" + (1|judge)" if restricted_kind == "clmm" else ""), wine
    )
    full = _clmm("rating ~ temp + contact + (1|judge)", data, **options)
    with pytest.raises(SpecificationError, match=message):
        ordstats.lr_test(restricted, full)
    with pytest.raises(SpecificationError, match=message):
        ordstats.anova(restricted, full)


def test_a_clmm_test_of_the_same_data_is_unchanged(wine):
    """The check refuses nothing valid: grouping codes are compared as partitions."""
    restricted = _clmm("rating ~ temp + (1|judge)", wine)
    relabelled = wine.assign(judge=wine["judge"].astype(str).radd("j"))
    full = _clmm("rating ~ temp + contact + (1|judge)", relabelled)
    same = _clmm("rating ~ temp + contact + (1|judge)", wine)
    assert ordstats.lr_test(restricted, full).statistic == pytest.approx(
        ordstats.lr_test(restricted, same).statistic, rel=1e-9
    )


def test_vuong_test_of_a_clmm_says_why_not(wine):
    """Before: AttributeError 'endog_name' from the comparability check."""
    logit = _clmm("rating ~ temp + (1|judge)", wine)
    probit = _clmm("rating ~ temp + (1|judge)", wine, link="probit")
    with pytest.raises(SpecificationError, match="does not split into rows"):
        ordstats.vuong_test(logit, probit)


def test_compare_links_warnings_name_their_link_at_the_callers_line(wine):
    """Each link's fit warns alike; the warnings say which link and point at the caller."""
    with pytest.warns(ordstats.OrdstatsWarning) as caught:
        ordstats.compare_links(
            "rating ~ temp + contact",
            wine,
            ["logit", "probit"],
            nested_tests=False,
            fit_kwds={"maxiter": 1},
        )
    ours = [w for w in caught if issubclass(w.category, ordstats.OrdstatsWarning)]
    assert {str(w.message).split(":")[0] for w in ours} == {
        "under the logit link",
        "under the probit link",
    }
    assert {w.filename for w in ours} == {__file__}
