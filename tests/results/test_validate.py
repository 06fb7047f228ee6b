"""res.validate(): rms's bootstrap optimism-corrected indexes (validate(fit, B) of an lrm).

Reference: ``tests/r/validate_refs.R`` (vendored in ``tests/data/r/validate/``): R's
tables and the bootstrap rows its ``predab.resample`` drew (checked there against
the rows validate itself printed), given back here through ``samples=``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from ordstats import OrdinalMixedModel, OrdinalModel, datasets
from ordstats.errors import ConvergenceWarning, NotFittedError, SpecificationError
from ordstats.results.validation import _orm_indexes, _OrmRows
from tests._parity import dataset
from tests.results.test_rms_stats import _orm_data

REFERENCE = Path(__file__).parents[1] / "data" / "r" / "validate"


def _reference(name: str) -> tuple[pd.DataFrame, np.ndarray]:
    ref = json.loads((REFERENCE / f"{name}.json").read_text())
    table = pd.DataFrame(np.array(ref["table"]), index=ref["index"], columns=ref["columns"])
    return table, np.array(ref["rows"])


def _wine_fit(formula: str = "rating ~ temp + contact", **kwargs: Any) -> Any:
    return OrdinalModel.from_formula(formula, datasets.load("wine"), **kwargs).fit()


def _binary_fit() -> Any:
    wine = datasets.load("wine")
    wine["bitter"] = wine["rating"].astype(int) > 2
    return OrdinalModel.from_formula("bitter ~ temp + contact", wine).fit()


def test_validate_matches_rms_with_its_bootstrap_rows() -> None:
    table, rows = _reference("lrm_wine")
    out = _wine_fit().validate(samples=rows, progress=False)
    assert list(out.index) == list(table.index)
    assert list(out.columns) == list(table.columns)
    np.testing.assert_allclose(out["index.orig"], table["index.orig"], rtol=0, atol=1e-8)
    np.testing.assert_allclose(out, table, rtol=0, atol=1e-6)


def test_validate_of_a_binary_response_matches_rms() -> None:
    # Dxy is somers2's exact one here, not lrm's binned one
    table, rows = _reference("lrm_wine_binary")
    out = _binary_fit().validate(samples=rows, progress=False)
    # rms's lrm stops at a gradient of 7e-7 on these rows (its own Max Deriv): its
    # slopes differ from glm(epsilon = 1e-14)'s, which ordstats' equal to 1e-9, by 2e-7,
    # so its apparent g differs by 1.5e-7
    np.testing.assert_allclose(out, table, rtol=0, atol=1e-6)


def test_validate_refuses_a_sample_without_some_level_as_rms() -> None:
    # set.seed(1)'s draws miss the lowest rating in one sample: rms stops there too
    rows = np.array(json.loads((REFERENCE / "lrm_wine_seed1_rows.json").read_text())["rows"])
    with pytest.raises(SpecificationError, match=r"no row of level\(s\) \['1'\]"):
        _wine_fit().validate(samples=rows, progress=False)


def test_bootstrap_refit_is_the_fit_of_the_repeated_rows() -> None:
    res = _wine_fit()
    rows = _reference("lrm_wine")[1][0]
    counts = np.bincount(rows, minlength=72).astype(float)
    weighted = res.model.with_changes(weights=counts).fit()
    wine = datasets.load("wine").iloc[rows].reset_index(drop=True)
    direct = OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    np.testing.assert_allclose(weighted.params, direct.params, rtol=1e-8)
    assert weighted.llf == pytest.approx(direct.llf, rel=1e-12)
    assert weighted.llnull == pytest.approx(direct.llnull, rel=1e-12)


def test_validate_draws_from_the_seed() -> None:
    res = _wine_fit()
    # seed 2 draws every level in each of 5 samples
    first = res.validate(B=5, seed=2, progress=False)
    again = res.validate(B=5, seed=2, progress=False)
    pd.testing.assert_frame_equal(first, again)
    rows = np.random.default_rng(2).integers(0, 72, size=(5, 72))
    pd.testing.assert_frame_equal(first, res.validate(samples=rows, progress=False))
    assert (first["n"] == 5).all()
    measured = first.drop(index="Emax")  # rms's Emax row reads 0, 0, Emax, Emax, Emax
    corrected = measured["index.orig"] - measured["optimism"]
    np.testing.assert_allclose(measured["index.corrected"], corrected, rtol=0, atol=1e-15)


def test_validate_reports_progress(capsys: pytest.CaptureFixture[str]) -> None:
    _, rows = _reference("lrm_wine")
    _wine_fit().validate(samples=rows[:2], progress=True)
    assert "bootstrap sample 2/2" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"B": 0}, "positive integer"),
        ({"B": 2.5}, "positive integer"),
        ({"B": True}, "positive integer"),
        ({"method": "crossvalidation"}, "method='boot' only"),
        ({"samples": np.zeros((2, 5), dtype=int)}, r"shape \(B, 72\)"),
        ({"samples": np.zeros(72, dtype=int)}, r"shape \(B, 72\)"),
        ({"samples": np.full((2, 72), 72)}, "0 to 71"),
        ({"samples": np.full((2, 72), -1)}, "0 to 71"),
        ({"samples": np.zeros((2, 72))}, "integers"),
        ({"samples": np.zeros((2, 72), dtype=int), "B": 3}, "B=3 but samples holds 2"),
        ({"samples": np.zeros((2, 72), dtype=int), "seed": 1}, "not both"),
    ],
)
def test_validate_checks_its_arguments(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(SpecificationError, match=match):
        _wine_fit().validate(progress=False, **kwargs)


def test_validate_refuses_fits_rms_does_not_validate() -> None:
    wine = datasets.load("wine")
    cases = [
        (_wine_fit(link="probit"), "logit"),
        (_wine_fit(threshold="equidistant"), "'equidistant'"),
        (_wine_fit("rating ~ 1"), "at least one slope"),
        (
            OrdinalModel.from_formula(
                "rating ~ temp", wine.assign(w=1.0 + (wine["judge"].cat.codes % 3)), weights="w"
            ).fit(),
            "weights and offset",
        ),
        (
            OrdinalModel.from_formula(
                "rating ~ temp + offset(o)", wine.assign(o=np.linspace(-1, 1, 72))
            ).fit(),
            "weights and offset",
        ),
        (_wine_fit("rating ~ temp", nominal="~ contact"), "nominal or scale"),
        (
            OrdinalModel.from_formula("rating ~ temp + contact", wine, chunksize=30).fit(),
            "in chunks",
        ),
    ]
    for res, match in cases:
        with pytest.raises(SpecificationError, match=match):
            res.validate(B=2, seed=2, progress=False)
    removed = _wine_fit()
    removed.remove_data()
    with pytest.raises(NotFittedError, match="validate\\(\\) needs the rows"):
        removed.validate(B=2, seed=2, progress=False)
    mixed = OrdinalMixedModel.from_formula("rating ~ temp + (1|judge)", wine).fit()
    with pytest.raises(SpecificationError, match="rms has no clmm"):
        mixed.validate()


def test_validate_leaves_out_samples_whose_refit_fails() -> None:
    # a sample of rows without contact, every rating among them: the contact slope has no
    # information, and the refit does not converge (rms leaves out a refit that fails)
    res = _wine_fit()
    wine = datasets.load("wine")
    without = np.flatnonzero((wine["contact"] == "no").to_numpy())
    _, rows = _reference("lrm_wine")
    bad = np.resize(without, 72)
    with pytest.warns(ConvergenceWarning, match="1 of 3 bootstrap samples"):
        out = res.validate(samples=np.vstack([rows[:2], bad]), progress=False)
    assert (out["n"] == 2).all()
    pd.testing.assert_frame_equal(out, res.validate(samples=rows[:2], progress=False))


def _warpbreaks() -> pd.DataFrame:
    return _orm_data("warpbreaks_logistic")


def _orm_fit(data: pd.DataFrame | None = None) -> Any:
    rows = _warpbreaks() if data is None else data
    return OrdinalModel.from_formula("breaks ~ wool + tension", rows, many_levels=True).fit()


def test_validate_orm_matches_rms_with_converged_refits() -> None:
    # R's orm.fit forced to eps = 1e-12 in every refit (validate_refs.R)
    table, rows = _reference("orm_warpbreaks_converged")
    out = _orm_fit().validate(samples=rows, progress=False, indexes="orm")
    assert list(out.index) == ["rho", "R2", "Slope", "g", "pdm"]
    np.testing.assert_allclose(out["index.orig"], table["index.orig"], rtol=0, atol=1e-8)
    np.testing.assert_allclose(out, table, rtol=0, atol=1e-6)


def test_validate_orm_against_rms_defaults() -> None:
    # rms's own validate.orm: its refits stop at orm.fit's eps = 5e-4 (its ormfit2 passes
    # no eps), ~1e-5 from the maximum, and so do its g and pdm
    table, rows = _reference("orm_warpbreaks")
    out = _orm_fit().validate(samples=rows, progress=False, indexes="orm")
    np.testing.assert_allclose(out, table, rtol=0, atol=1e-4)


def test_orm_bootstrap_refit_codes_the_levels_drawn() -> None:
    # a sample misses some of the 43 distinct break counts: its fit has thresholds only
    # between the counts drawn, the fit of the sample's rows repeated
    res = _orm_fit()
    _, rows = _reference("orm_warpbreaks_converged")
    counts = np.bincount(rows[0], minlength=54).astype(float)
    data = _OrmRows.of(res)
    boot = data.sample_model(res, counts).fit()
    direct = _orm_fit(_warpbreaks().iloc[rows[0]].reset_index(drop=True))
    assert len(boot.model.levels) == len(direct.model.levels) < len(res.model.levels)
    np.testing.assert_allclose(boot.params, direct.params, rtol=1e-7, atol=1e-9)
    assert boot.llf == pytest.approx(direct.llf, rel=1e-12)
    np.testing.assert_allclose(
        _orm_indexes(boot, counts), _orm_indexes(direct, np.ones(54)), rtol=1e-9, atol=1e-12
    )


def test_validate_names_its_index_sets() -> None:
    with pytest.raises(SpecificationError, match=r"'lrm'.*'orm'"):
        _wine_fit().validate(B=2, progress=False, indexes="ols")


def test_validate_with_rows_drawn_within_levels_matches_rms_group() -> None:
    # rms's group = y: R's own draws (set.seed(1), which without group misses a rating)
    table, rows = _reference("lrm_wine_group")
    res = _wine_fit()
    codes = np.asarray(res.model.design.response.codes)
    assert all((codes[sample] == codes).all() for sample in rows)  # rows stay in their level
    out = res.validate(samples=rows, progress=False)
    np.testing.assert_allclose(out["index.orig"], table["index.orig"], rtol=0, atol=1e-8)
    np.testing.assert_allclose(out, table, rtol=0, atol=1e-6)


def test_stratified_draws_keep_each_level_and_pass_where_plain_draws_fail() -> None:
    res = _wine_fit()
    with pytest.raises(SpecificationError, match="stratify=True"):
        res.validate(B=200, seed=3, progress=False)
    out = res.validate(B=30, seed=3, stratify=True, progress=False)
    assert (out["n"] == 30).all()
    codes = np.asarray(res.model.design.response.codes)
    rng = np.random.default_rng(3)
    rows = np.empty((30, 72), dtype=np.int64)
    for level in range(5):
        members = np.flatnonzero(codes == level)
        rows[:, members] = members[rng.integers(0, members.size, size=(30, members.size))]
    pd.testing.assert_frame_equal(out, res.validate(samples=rows, progress=False))
    with pytest.raises(SpecificationError, match="not both"):
        res.validate(samples=rows, stratify=True, progress=False)


def test_validate_of_three_levels_matches_rms() -> None:
    table, rows = _reference("lrm_bankwages")
    res = OrdinalModel.from_formula(
        "job ~ education + gender + minority", dataset("bankwages")
    ).fit()
    out = res.validate(samples=rows, progress=False)
    # rms's lrm stops at a gradient of 1.5e-6 here (its Max Deriv; ordstats' 4e-10), which
    # moves its apparent g by 2.6e-8
    np.testing.assert_allclose(out["index.orig"], table["index.orig"], rtol=0, atol=1e-7)
    np.testing.assert_allclose(out, table, rtol=0, atol=1e-6)
