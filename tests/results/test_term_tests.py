"""nominal_test and scale_test against R's ordinal::nominal_test / scale_test."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats.errors import ConvergenceWarning, FormulaError, SpecificationError
from tests import _reference as ref

#: LR statistics and p-values to 1e-4 (the issue's bar for test statistics);
#: log-likelihoods and AIC to 1e-6 relative like every fit.
ATOL_TEST = 1e-4


@pytest.mark.parametrize("case", ref.cases("tests_"))
def test_against_r(case: str) -> None:
    data = ref.load(case)
    inner = data["r_call"].split("(", 1)[1].rsplit(")", 1)[0]  # the clm(...) call
    res = ref.fit_reference_call(inner)
    if case == "tests_wine_nominal_test":
        # no cold wine is rated 5 and no warm wine 1: temp as a nominal effect
        # diverges (R reports the supremum of the log-likelihood silently)
        with pytest.warns(ConvergenceWarning, match="relaxing 'temp'.*separation"):
            table = res.nominal_test()
    else:
        table = res.nominal_test() if "nominal_test" in case else res.scale_test()
    expected = pd.DataFrame(data["table"]["columns"], index=data["table"]["row_names"])
    expected = expected.replace("NA", np.nan).astype(float)
    # R names rows by term ("Infl"); so do we (formulaic term names)
    assert list(table.index) == list(expected.index)
    np.testing.assert_allclose(table["logLik"], expected["logLik"], rtol=1e-6)
    np.testing.assert_allclose(table["AIC"], expected["AIC"], rtol=1e-6)
    np.testing.assert_array_equal(table["Df"].iloc[1:], expected["Df"].iloc[1:])
    np.testing.assert_allclose(table["LRT"].iloc[1:], expected["LRT"].iloc[1:], atol=ATOL_TEST)
    np.testing.assert_allclose(
        table["Pr(>Chi)"].iloc[1:], expected["Pr(>Chi)"].iloc[1:], atol=ATOL_TEST
    )


def test_nominal_test_equals_explicit_refit(wine) -> None:
    res = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    relaxed = ordstats.OrdinalModel.from_formula("rating ~ temp", wine, nominal="~ contact").fit()
    with pytest.warns(ConvergenceWarning, match="relaxing 'temp'"):
        row = res.nominal_test().loc["contact"]
    assert row["logLik"] == pytest.approx(relaxed.llf, rel=1e-12)
    assert row["Df"] == relaxed.k_params - res.k_params == 3


def test_arrays_interface_tests_each_column(wine) -> None:
    X = pd.DataFrame(
        {
            "warm": (wine["temp"] == "warm").astype(float),
            "yes": (wine["contact"] == "yes").astype(float),
        }
    )
    res = ordstats.OrdinalModel(wine["rating"], X).fit()
    table = res.scale_test()
    assert list(table.index) == ["<none>", "warm", "yes"]
    # same numbers as the formula model
    formula = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    np.testing.assert_allclose(table["LRT"].iloc[1:], formula.scale_test()["LRT"].iloc[1:])


def test_terms_already_in_scale_are_skipped(wine) -> None:
    res = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine, scale="~ temp").fit()
    assert list(res.scale_test().index) == ["<none>", "contact"]


def test_invalid_relaxed_fit_is_flagged() -> None:
    rng = np.random.default_rng(1)
    w = rng.uniform(-3, 3, 300)
    middle = rng.uniform(size=300) < 1 / (1 + np.exp(3 * w))
    y = np.where(middle, 1, np.where(rng.uniform(size=300) < 0.5, 0, 2))
    res = ordstats.OrdinalModel.from_formula("y ~ w", pd.DataFrame({"y": y, "w": w})).fit()
    with pytest.warns(ConvergenceWarning, match="relaxing 'w' did not converge or is invalid"):
        table = res.nominal_test()
    assert table.loc["w", "Df"] == 1


def _r_table(table: dict) -> pd.DataFrame:
    columns = {"Df": "Df", "logLik": "logLik", "AIC": "AIC", "LRT": "LRT", "pvalue": "Pr(>Chi)"}
    frame = pd.DataFrame({ours: table[r] for r, ours in columns.items()}, index=table["row_names"])
    return frame.replace("NA", np.nan).astype(float)


def test_refit_at_its_maximum_with_a_singular_hessian_keeps_its_row(wine) -> None:
    """R keeps a scale_test row whose refit ends with a singular Hessian (its code 1):
    ``scale = ~ temp:contact`` beside ``nominal = ~ contact`` is not identified, and the
    Newton iterations here stop on the Hessian modifications at the same maximum."""
    expected = ref.load("term_tests_singular")
    with pytest.warns(ordstats.errors.CollinearityWarning, match="also a nominal effect"):
        res = ordstats.OrdinalModel.from_formula(
            expected["formula"], wine, link="cloglog", nominal=expected["nominal"]
        ).fit()
    # the refit ends on R's code 1 (a singular Hessian at a small gradient) or on
    # Hessian modifications at the same maximum: a warning names it either way
    with pytest.warns(ConvergenceWarning, match="'temp:contact'"):
        table = res.scale_test()
    r_table = _r_table(expected["scale_test"])
    assert list(table.index) == list(r_table.index)
    np.testing.assert_array_equal(table["Df"].iloc[1:], r_table["Df"].iloc[1:])
    assert table.loc["temp:contact", "Df"] == expected["refit"]["edf"] - res.k_params
    np.testing.assert_allclose(table["logLik"], r_table["logLik"], rtol=1e-6)
    np.testing.assert_allclose(table["AIC"], r_table["AIC"], rtol=1e-6)
    for column in ("LRT", "Pr(>Chi)"):
        np.testing.assert_allclose(table[column].iloc[1:], r_table[column].iloc[1:], atol=ATOL_TEST)
    # where R's refit fails (nominal temp:contact), the row stays NA
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        nominal = res.nominal_test()  # nominal temp diverges (separation): a warning too
    assert any("'temp:contact' to the nominal formula failed" in str(w.message) for w in caught)
    r_nominal = _r_table(expected["nominal_test"])
    assert list(nominal.index) == list(r_nominal.index)
    pd.testing.assert_series_equal(
        nominal.isna().all(axis=1), r_nominal.isna().all(axis=1), check_names=False
    )
    np.testing.assert_allclose(nominal["logLik"], r_nominal["logLik"], rtol=1e-6)


TERM_TESTS_DF0 = ref.load("term_tests_df0")


def _df0_table(case: dict) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ordstats.errors.CollinearityWarning)
        res = ref.fit_reference_call(case["r_call"])
        return getattr(res, case["test"])()


def test_rows_with_df_0_as_r() -> None:
    """A term the nominal (scale) formula already spans: R's refit is the same model,
    ``LRT`` exactly 0 and ``Pr(>Chi)`` ``pchisq(0, 0, lower.tail = FALSE)`` = 1
    (tests/r/term_tests_df0.R).  Before: the housing ``Infl`` row had LRT 4.5e-13."""
    for case in TERM_TESTS_DF0["cases"].values():
        table, r_table = _df0_table(case), _r_table(case["table"])
        assert list(table.index) == list(r_table.index)
        np.testing.assert_array_equal(table["Df"].iloc[1:], r_table["Df"].iloc[1:])
        np.testing.assert_allclose(table["logLik"], r_table["logLik"], rtol=1e-9)
        np.testing.assert_allclose(table["AIC"], r_table["AIC"], rtol=1e-9)
        df0 = r_table.index[r_table["Df"] == 0]
        assert len(df0) == 2
        for column in ("LRT", "Pr(>Chi)"):  # R's numbers exactly
            np.testing.assert_array_equal(table.loc[df0, column], r_table.loc[df0, column])
            np.testing.assert_allclose(
                table[column].iloc[1:], r_table[column].iloc[1:], atol=ATOL_TEST
            )


def test_term_tests_refit_updated_formulas_as_r(wine) -> None:
    """R's rules (issue 14 item 14): nominal_test also tries the scale terms; scale_test
    tries location terms that are nominal too; a term is recoded in its new formula
    (``scale = ~ temp:contact`` alone: 3 columns, not the 1 it has beside its margins)."""
    with pytest.warns(ordstats.errors.CollinearityWarning, match="also a nominal effect"):
        model = ordstats.OrdinalModel.from_formula(
            "rating ~ temp * contact", wine, nominal="~ contact", scale="~ temp"
        )
    res = model.fit()
    with pytest.warns(ConvergenceWarning):
        nominal = res.nominal_test()
    assert list(nominal.index) == ["<none>", "temp", "temp:contact"]  # temp from both
    with pytest.warns(ConvergenceWarning, match="relaxing 'contact'"):  # nominal and scale
        scale = res.scale_test()
    assert list(scale.index) == ["<none>", "contact", "temp:contact"]  # contact is nominal
    plain = ordstats.OrdinalModel.from_formula("rating ~ temp * contact", wine).fit()
    table = plain.scale_test()
    # R codes temp:contact alone with four indicator products, one aliased (dropped)
    with pytest.warns(ordstats.errors.CollinearityWarning, match="scale design is rank"):
        relaxed = ordstats.OrdinalModel.from_formula(
            "rating ~ temp * contact", wine, scale="~ temp:contact"
        ).fit()
    assert table.loc["temp:contact", "Df"] == 3 == len(relaxed.model.scale_names)
    assert table.loc["temp:contact", "logLik"] == pytest.approx(relaxed.llf, rel=1e-10)


def test_term_tests_never_report_a_negative_lrt(wine, soup) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ordstats.errors.CollinearityWarning)
        fits = [
            ordstats.OrdinalModel.from_formula("rating ~ temp * contact", wine, scale="~ contact"),
            ordstats.OrdinalModel.from_formula("SURENESS ~ PRODID + DAY", soup, nominal="~ DAY"),
        ]
    for model in fits:
        res = model.fit()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # separated refits
            tables = [res.nominal_test(), res.scale_test()]
        for table in tables:
            lrt = table["LRT"].iloc[1:].to_numpy(float)
            assert np.all(np.isnan(lrt) | (lrt >= 0.0))


def test_term_tests_after_pickling_move_columns(wine) -> None:
    """Without the DataFrame (a pickled fit) the test moves the fitted columns instead."""
    import pickle

    res = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    again = pickle.loads(pickle.dumps(res))
    assert not again.model.can_refit_formulas and res.model.can_refit_formulas
    pd.testing.assert_frame_equal(again.scale_test(), res.scale_test(), rtol=1e-8)


def test_drop1_keeps_margins_of_interactions_and_add1_respects_them():
    """R's drop.scope and add.scope: ``Infl`` is not dropped while ``Infl:Type`` is in the
    model, and ``Infl:Type`` is tried only where ``Infl`` and ``Type`` are."""
    housing = ordstats.datasets.load("housing")
    full = ordstats.OrdinalModel.from_formula(
        "Sat ~ Infl * Type + Cont", housing, weights="Freq"
    ).fit()
    assert list(full.drop1().index) == ["<none>", "Cont", "Infl:Type"]
    small = ordstats.OrdinalModel.from_formula("Sat ~ Infl + Cont", housing, weights="Freq").fit()
    tried = small.add1("~ Infl * Type + Cont", test="Chisq")
    assert list(tried.index) == ["<none>", "Type"]  # Infl:Type needs Type first
    assert tried.loc["Type", "LRT"] == pytest.approx(
        ordstats.lr_test(
            small,
            ordstats.OrdinalModel.from_formula(
                "Sat ~ Infl + Cont + Type", housing, weights="Freq"
            ).fit(),
        ).statistic,
        rel=1e-10,
    )


@pytest.mark.parametrize(
    ("scope", "message"),
    [
        ("~ contct", r"adding 'contct': .*not a column of the data\. Did you mean 'contact'"),
        ("~ foo(contact)", r"adding 'foo\(contact\)': the formula calls 'foo'.*context="),
    ],
)
def test_add1_of_a_term_that_names_nothing_is_an_error_not_an_na_row(scope, message):
    """Before: a row of NA and a ConvergenceWarning ('the refits ... failed')."""
    wine = ordstats.datasets.load("wine")
    res = ordstats.OrdinalModel.from_formula("rating ~ temp", wine).fit()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        with pytest.raises(FormulaError, match=message):
            res.add1(scope)


def test_drop1_and_add1_say_what_they_need():
    wine = ordstats.datasets.load("wine")
    res = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    with pytest.raises(SpecificationError, match=r"test='F': use 'none'"):
        res.drop1(test="F")
    with pytest.raises(SpecificationError, match="has no term to add"):
        res.add1("~ temp")
    with pytest.raises(SpecificationError, match="scope= is a one-sided formula"):
        res.add1(3)
    res.remove_data()
    with pytest.raises(SpecificationError, match="refits the model from its formula and data"):
        res.drop1()


def _symmetric2_nominal_loglik(data: pd.DataFrame, nominal: str) -> float:
    """Maximum log-likelihood of ``rating ~ temp + contact`` (logit, K = 5) whose
    symmetric2 thresholds ``(-s2, -s1, s1, s2)`` get the nominal effect
    ``(-g2, -g1, g1, g2) w`` while the location keeps ``w``: an exact
    recomputation, independent of ordstats' designs."""
    from scipy import optimize, special

    y = data["rating"].cat.codes.to_numpy()
    temp = (data["temp"] == "warm").to_numpy(float)
    contact = (data["contact"] == "yes").to_numpy(float)
    w = temp if nominal == "temp" else contact

    def nll(p: np.ndarray) -> float:
        s = p[0:2][:, None] + p[2:4][:, None] * w[None, :]  # (2, n): spacings per row
        theta = np.vstack([-s[1], -s[0], s[0], s[1]]).T  # (n, 4)
        cdf = special.expit(theta - (p[4] * temp + p[5] * contact)[:, None])
        cdf = np.column_stack([np.zeros(len(y)), cdf, np.ones(len(y))])
        prob = cdf[np.arange(len(y)), y + 1] - cdf[np.arange(len(y)), y]
        return -float(np.sum(np.log(prob))) if np.all(prob > 0) else np.inf

    start = np.array([1.0, 3.0, 0, 0, 0, 0])
    rough = optimize.minimize(nll, start, method="Nelder-Mead", options={"maxiter": 20000})
    return -float(optimize.minimize(nll, rough.x, method="BFGS", tol=1e-12).fun)


def test_symmetric2_nominal_test_keeps_the_location_effect(wine) -> None:
    """With ``threshold="symmetric2"`` a nominal effect moves only the spacings, so the
    relaxed model keeps the term's location effect and contains the fitted one.

    R's ``nominal_test`` (and before, ordstats) dropped the location effect as
    aliased: wine, logit, R's rows are temp ``Df 1, LRT -5.2703`` and contact
    ``Df 1, LRT 0.0980``, comparisons of models neither of which contains the
    other; ordstats gave temp an NA row and copied contact's.
    """
    res = ordstats.OrdinalModel.from_formula(
        "rating ~ temp + contact", wine, threshold="symmetric2"
    ).fit()
    table = res.nominal_test()
    for term in ("temp", "contact"):
        relaxed_llf = _symmetric2_nominal_loglik(wine, term)
        assert table.loc[term, "Df"] == 2
        assert table.loc[term, "logLik"] == pytest.approx(relaxed_llf, rel=1e-8)
        lrt = 2 * (relaxed_llf - res.llf)
        assert table.loc[term, "LRT"] == pytest.approx(lrt, rel=1e-5)
        assert table.loc[term, "Pr(>Chi)"] == pytest.approx(np.exp(-lrt / 2), rel=1e-5)
