"""``from_formula(subset=, contrasts=)`` against R's ``clm`` (tests/r/subset_contrasts_refs.R).

R's references are in tests/data/r/subset_contrasts.json: estimates and
log-likelihoods agree to 1e-6 relative, standard errors to 1e-4, predicted
probabilities to 1e-6.
"""

from __future__ import annotations

import json
import warnings
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats.errors import DataError, LevelsWarning, MissingDataWarning, OrdstatsWarning
from tests._parity import dataset
from tests.test_parity_sweep import r_names

REFERENCE = Path(__file__).parent / "data" / "r" / "subset_contrasts.json"
CLAP = np.array([[-1.0, 1.0], [0.0, -2.0], [1.0, 1.0]])

#: the ordstats spelling of each case of tests/r/subset_contrasts_refs.R
CASES: dict[str, tuple[str, dict[str, Any]]] = {
    "contr_sum_helmert": (
        "Exer ~ Fold + Clap + Age",
        {"contrasts": {"Fold": "contr.sum", "Clap": "contr.helmert"}},
    ),
    "contr_poly_sas": (
        "Exer ~ Sex + Fold + Pulse",
        {"contrasts": {"Fold": "contr.poly", "Sex": "contr.SAS"}},
    ),
    "contr_nominal_treatment": (
        "Exer ~ Smoke",
        {"nominal": "~ Sex", "contrasts": {"Sex": "contr.sum", "Smoke": "contr.treatment"}},
    ),
    "contr_matrix": ("Exer ~ Clap + Sex", {"contrasts": {"Clap": CLAP}}),
    "contr_matrix_named": (
        "Exer ~ Clap + Sex",
        {"contrasts": {"Clap": pd.DataFrame(CLAP, columns=["lin", "quad"])}},
    ),
    "contr_interaction": ("Exer ~ Sex * Fold", {"contrasts": {"Fold": "contr.sum"}}),
    "subset_scale": ("Exer ~ scale(Age) + Sex", {"subset": 'Smoke != "Never"'}),
    "subset_poly": ("Exer ~ poly(Age, 2) + Sex", {"subset": lambda d: d["Height"] > 170}),
    "subset_weights_offset": (
        "Exer ~ Sex",
        {"weights": "w", "offset": "o", "subset": "Height > 165"},
    ),
    "subset_scale_effect": (
        "Exer ~ Sex",
        {"scale": "~ scale(Height)", "subset": '`W.Hnd` == "Right"'},
    ),
    "subset_contrasts": (
        "Exer ~ Fold + Smoke",
        {"subset": 'Sex == "Male"', "contrasts": {"Fold": "contr.sum"}},
    ),
}


@cache
def _reference() -> dict[str, Any]:
    return dict(json.loads(REFERENCE.read_text()))


def survey() -> pd.DataFrame:
    frame = dataset("survey_students")
    return frame.assign(w=frame["Pulse"] / 70, o=frame["Age"] / 10)


def fit(case: str) -> Any:
    formula, kwargs = CASES[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrdstatsWarning)
        return ordstats.OrdinalModel.from_formula(formula, survey(), **kwargs).fit()


def r_values(values: dict[str, Any], names: list[str]) -> np.ndarray:
    missing = [n for n in names if n not in values]
    assert not missing, f"R has no {missing}; R's names: {list(values)}"
    return np.array([float(values[n]) for n in names])


@pytest.mark.parametrize("case", sorted(CASES))
def test_fit_matches_r(case: str) -> None:
    res, ref = fit(case), _reference()[case]
    names = r_names(res)
    assert sorted(names) == sorted(ref["coef"])
    np.testing.assert_allclose(res.params, r_values(ref["coef"], names), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(res.bse, r_values(ref["se"], names), rtol=1e-4)
    assert res.llf == pytest.approx(ref["loglik"], rel=1e-6)
    assert res.nobs == ref["nobs"]
    assert len(res.params) == ref["df"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_predictions_on_new_rows_match_r(case: str) -> None:
    res, ref = fit(case), _reference()[case]
    rows = survey().iloc[np.asarray(ref["newdata_rows"]) - 1].drop(columns="Exer")
    predicted = np.asarray(res.predict(rows), dtype=float)
    np.testing.assert_allclose(predicted, np.array(ref["newdata_prob"]), rtol=1e-6, atol=1e-10)


def test_r_names_of_each_contrast() -> None:
    """R names sum and Helmert coefficients by number, polynomials .L/.Q, SAS by level."""
    res = fit("contr_sum_helmert")
    assert [n for n in res.params.index if n[:4] in ("Fold", "Clap")] == [
        "Fold1",
        "Fold2",
        "Clap1",
        "Clap2",
    ]
    names = list(fit("contr_poly_sas").params.index)
    assert "Fold.L" in names and "Fold.Q" in names and "Sex[T.Female]" in names


def test_subset_learns_transforms_from_every_row_as_r() -> None:
    """R's model.frame evaluates scale(Age) on all rows, then subsets: not d[subset, ]."""
    frame = survey()
    res = fit("subset_scale")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrdstatsWarning)
        alone = ordstats.OrdinalModel.from_formula(
            "Exer ~ scale(Age) + Sex",
            frame.loc[frame["Smoke"].notna() & (frame["Smoke"] != "Never")],
        ).fit()
    assert res.nobs == alone.nobs
    assert res.llf == pytest.approx(alone.llf, rel=1e-9)  # the same model ...
    assert abs(res.params["scale(Age)"] / alone.params["scale(Age)"] - 1) > 1e-3  # ... scaled


def test_every_spelling_of_a_subset_gives_the_same_fit() -> None:
    frame = survey()
    mask = frame["Height"] > 165
    spellings = [
        "Height > 165",
        mask,
        mask.to_numpy(),
        mask.sample(frac=1.0, random_state=1),  # paired by label, not position
        lambda d: d["Height"] > 165,
    ]
    lim = 165  # noqa: F841  read by the query below as @lim
    spellings.append("Height > @lim")
    fits = []
    for subset in spellings:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", OrdstatsWarning)
            model = ordstats.OrdinalModel.from_formula(
                "Exer ~ Sex + Age", frame, subset=subset, weights="w"
            )
            fits.append(model.fit())
    used = frame[["Exer", "Sex", "Age", "w"]].notna().all(axis=1) & (frame["Height"] > 165)
    for res in fits:
        np.testing.assert_allclose(res.params, fits[0].params, rtol=1e-12)
        assert res.nobs == pytest.approx(frame.loc[used, "w"].sum())  # Height NA: not selected
        assert res.model.design.row_index.equals(frame.index[used])


def test_subset_weights_and_offsets_given_as_values_follow_the_rows() -> None:
    frame = survey()
    by_name = fit("subset_weights_offset")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrdstatsWarning)
        by_value = ordstats.OrdinalModel.from_formula(
            "Exer ~ Sex",
            frame,
            weights=frame["w"].to_numpy(),
            offset=frame["o"],
            subset="Height > 165",
        ).fit()
    np.testing.assert_allclose(by_value.params, by_name.params, rtol=1e-10)


def test_term_tests_refit_the_subset_with_the_contrasts() -> None:
    """nominal_test() refits the same rows with the same coding (R: the subset and contrasts).

    R's nominal_test(clm(Exer ~ Fold + Smoke, subset = Sex == "Male", contrasts =
    list(Fold = "contr.sum"))): Fold logLik -105.15, Smoke -105.29 (R prints no
    warning; ordstats warns that relaxing Fold diverges: a threshold effect runs
    to -13 and beyond, separation).
    """
    res = fit("subset_contrasts")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrdstatsWarning)
        table = res.nominal_test()
        relaxed = ordstats.OrdinalModel.from_formula(
            "Exer ~ Fold",
            survey(),
            nominal="~ Smoke",
            subset='Sex == "Male"',
            contrasts={"Fold": "contr.sum"},
        ).fit()
        everyone = ordstats.OrdinalModel.from_formula(
            "Exer ~ Fold", survey(), nominal="~ Smoke", contrasts={"Fold": "contr.sum"}
        ).fit()
    assert table.loc["Smoke", "logLik"] == pytest.approx(relaxed.llf, rel=1e-8)
    assert table.loc["Smoke", "logLik"] == pytest.approx(-105.29, abs=5e-3)  # R's, printed
    assert table.loc["Fold", "logLik"] == pytest.approx(-105.15, abs=5e-3)
    assert abs(everyone.llf - relaxed.llf) > 1.0  # the test would see a wrong subset
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrdstatsWarning)
        refitted = res.model.refit_formulas().fit()
    assert refitted.llf == pytest.approx(res.llf, rel=1e-10)


def test_contrasts_keep_their_coding_for_new_data_given_as_text() -> None:
    """New rows with plain strings are coded with the fitted contrasts and levels."""
    res = fit("contr_sum_helmert")
    rows = survey().iloc[:4].drop(columns="Exer")
    as_text = rows.assign(Fold=rows["Fold"].astype(str), Clap=rows["Clap"].astype(str))
    np.testing.assert_allclose(res.predict(as_text), res.predict(rows), rtol=1e-12)


def test_clmm_takes_subset_and_contrasts() -> None:
    frame = survey().dropna(subset=["Exer", "Fold", "Clap", "Sex"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrdstatsWarning)
        sub = ordstats.OrdinalModel.from_formula(
            "Exer ~ Fold + (1 | Clap)",
            frame,
            subset='Sex == "Male"',
            contrasts={"Fold": "contr.sum"},
        ).fit()
        alone = ordstats.OrdinalModel.from_formula(
            "Exer ~ Fold + (1 | Clap)",
            frame.loc[frame["Sex"] == "Male"],
            contrasts={"Fold": "contr.sum"},
        ).fit()
    assert "Fold1" in sub.params.index
    assert sub.llf == pytest.approx(alone.llf, rel=1e-9)


def test_subset_of_data_read_in_chunks_fits_the_same_rows() -> None:
    # before: refused ("subset= needs the data in memory"); tests/test_subset_chunks.py
    with pytest.warns(MissingDataWarning, match="'Sex' \\(1\\)"):
        memory = ordstats.OrdinalModel.from_formula("Exer ~ Sex", survey(), subset="Age > 20")
    with pytest.warns(MissingDataWarning, match="'Sex' \\(1\\)"):
        chunked = ordstats.OrdinalModel.from_formula(
            "Exer ~ Sex", survey(), subset="Age > 20", chunksize=50
        )
    assert chunked.nobs == memory.nobs
    assert chunked.fit().llf == pytest.approx(memory.fit().llf, rel=1e-12)


def test_zero_weights_count_as_r_counts_them() -> None:
    """R's clm: nobs leaves out zero-weight rows (71 of 72 for wine), logLik df unchanged."""
    wine = ordstats.datasets.load("wine")
    weights = np.ones(len(wine))
    weights[0] = 0.0
    res = ordstats.OrdinalModel.from_formula("rating ~ temp", wine, weights=weights).fit()
    assert res.nobs == 71
    assert res.llf == pytest.approx(-91.26816, abs=5e-6)  # R: logLik -91.26816 (df=5)
    assert len(res.params) == 5


def test_contrasts_give_the_same_fit_read_in_chunks_and_with_dask() -> None:
    dd = pytest.importorskip("dask.dataframe")
    frame = survey().dropna(subset=["Exer", "Fold", "Clap", "Age"])
    coding = {"Fold": "contr.sum", "Clap": "contr.helmert"}
    formula = "Exer ~ Fold + Clap + Age"
    memory = ordstats.OrdinalModel.from_formula(formula, frame, contrasts=coding).fit()
    chunked = ordstats.OrdinalModel.from_formula(
        formula, frame, contrasts=coding, chunksize=50
    ).fit()
    in_dask = ordstats.OrdinalModel.from_formula(
        formula, dd.from_pandas(frame, npartitions=3), contrasts=coding
    ).fit()
    ref = _reference()["contr_sum_helmert"]
    for res in (chunked, in_dask):
        assert list(res.params.index) == list(memory.params.index)
        np.testing.assert_allclose(res.params, memory.params, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(memory.params, r_values(ref["coef"], r_names(memory)), rtol=1e-6)
    rows = frame.iloc[:5].drop(columns="Exer")
    np.testing.assert_allclose(chunked.predict(rows), memory.predict(rows), rtol=1e-10)


def test_the_numbers_of_the_from_r_page() -> None:
    """docs/from_r.rst, "Subsets and contrasts": the numbers its code prints (R's too)."""
    page = (Path(__file__).parents[1] / "docs" / "from_r.rst").read_text()
    assert "# [3.7697, 3.2126, 0.3168]" in page and "# 36.0" in page
    wine = ordstats.datasets.load("wine")
    res = ordstats.OrdinalModel.from_formula(
        "rating ~ temp + judge",
        wine,
        subset='contact == "yes"',
        contrasts={"judge": "contr.sum"},
    ).fit()
    assert res.params[["temp[T.warm]", "judge1", "judge2"]].round(4).tolist() == [
        3.7697,
        3.2126,
        0.3168,
    ]
    assert res.nobs == 36.0


@pytest.mark.parametrize("case", ["contr_matrix_named", "contr_sum_helmert", "subset_scale"])
def test_a_pickled_fit_predicts_with_its_contrasts_and_transforms(case: str) -> None:
    import pickle

    res = fit(case)
    back = pickle.loads(pickle.dumps(res))
    rows = survey().iloc[:5].drop(columns="Exer")
    np.testing.assert_array_equal(back.predict(rows), res.predict(rows))


@pytest.mark.parametrize(
    ("query", "number"),
    [
        ("judge != 1", "1"),  # before: kept every row (72), where R keeps 64
        ("judge in [1, 2]", "1"),  # before: selected no row
        ("temp == 'warm' & judge != 3", "3"),  # & below the comparisons, as pandas reads it
        ("judge != '1' & response > 20 | 2 == judge", "2"),
    ],
)
def test_a_text_column_compared_with_a_number_is_refused(
    wine: pd.DataFrame, query: str, number: str
) -> None:
    """pandas finds the text '1' unequal to the number 1; R compares a factor with 1 as text."""
    with pytest.raises(
        DataError, match=rf"column 'judge', which holds text .* e\.g\. judge == '{number}'"
    ):
        ordstats.OrdinalModel.from_formula("rating ~ temp", wine, subset=query)


def test_text_compared_with_text_and_numbers_with_numbers_still_select(wine: pd.DataFrame) -> None:
    model = ordstats.OrdinalModel.from_formula("rating ~ temp", wine, subset="judge != '1'")
    assert model.nobs == 64
    query = "response > 20 & judge != '1'"  # no rating 1 left: a level dropped, as R
    with pytest.warns(LevelsWarning, match="level"):
        model = ordstats.OrdinalModel.from_formula("rating ~ temp", wine, subset=query)
    assert model.nobs == 59
