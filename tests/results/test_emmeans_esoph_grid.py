"""emmeans' reference grid on esoph fitted with zero weights, and of transformed predictors.

R references: tests/r/emmeans_esoph_grid.R.  ``weights=ncontrols`` is 0 on 12 of
the 88 rows: R's clm and polr keep those rows in the model frame, so ``ref_grid``
counts them in its cells and covariate means (and leaves out rows with NAs).  A
factor used only through ``as.integer()`` is a numeric covariate of the grid, and
``log()``, ``I()`` and ``poly()`` of a numeric are evaluated at its mean.
Estimates to 1e-6, standard errors to 1e-4.
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
from ordstats.results.margins.emmeans import emmeans
from tests._parity import dataset

R = json.loads((Path(__file__).parents[1] / "data" / "r" / "emmeans_esoph_grid.json").read_text())


def _fit(formula: str, data: pd.DataFrame) -> ordstats.OrdinalResults:
    return ordstats.OrdinalModel.from_formula(formula, data, weights="ncontrols").fit()


def _check(res: ordstats.OrdinalResults, ref: dict, **kwargs: object) -> None:
    table = emmeans(res, "tobgp", **kwargs).summary().table
    assert [str(v) for v in table["tobgp"]] == ref["levels"]
    np.testing.assert_allclose(table["emmean"], ref["emmean"], rtol=1e-6)
    np.testing.assert_allclose(table["SE"], ref["SE"], rtol=1e-4)


@pytest.fixture(scope="module")
def esoph() -> pd.DataFrame:
    return dataset("esoph")


@pytest.mark.parametrize(
    ("case", "weights"),
    [
        ("proportional", "proportional"),
        ("cells", "cells"),
        ("outer", "outer"),
        ("polr_proportional", "proportional"),  # polr's model frame keeps them too
    ],
)
def test_zero_weight_rows_count_in_the_cells(esoph: pd.DataFrame, case: str, weights: str) -> None:
    """Before: the cells counted only rows of positive weight (-2.135 for 0-9g/day, R -2.191)."""
    assert (esoph["ncontrols"] == 0).sum() == 12
    _check(_fit("alcgp ~ agegp + tobgp", esoph), R[case], weights=weights)


def test_zero_weight_rows_count_in_covariate_means(esoph: pd.DataFrame) -> None:
    res = _fit("alcgp ~ agegp + tobgp + ncases", esoph)
    _check(res, R["covariate"], weights="proportional")


def test_rows_with_nas_are_left_out_and_zero_weights_kept(esoph: pd.DataFrame) -> None:
    data = esoph.copy()
    data.loc[data.index[[2, 39]], "agegp"] = np.nan
    data.loc[data.index[[4, 40]], "ncases"] = np.nan
    with pytest.warns(MissingDataWarning):
        res = _fit("alcgp ~ agegp + tobgp + ncases", data)
    _check(res, R["with_na"], weights="proportional")


@pytest.mark.parametrize(
    ("case", "formula"),
    [
        ("as_integer", "alcgp ~ as.integer(agegp) + tobgp"),
        ("as_integer_polr", "alcgp ~ as.integer(agegp) + tobgp"),
        ("log", "alcgp ~ tobgp + log(ncases + 1)"),
        ("square", "alcgp ~ tobgp + ncases + I(ncases**2)"),
        ("poly", "alcgp ~ tobgp + poly(ncases, 2)"),
    ],
)
def test_transformed_predictors_at_the_covariate_mean(esoph, case: str, formula: str) -> None:
    """Before: a factor read only through as.integer() was averaged over as a factor
    (0-9g/day -2.089, R -2.062, which takes as.integer() of the codes' mean 3.39, i.e. 3)."""
    _check(_fit(formula, esoph), R[case])


def test_factor_of_a_numeric_counts_rows_as_the_plain_factor(esoph: pd.DataFrame) -> None:
    """R's ref_grid sums the prior weights when the formula has a call (``factor(k)``:
    recover_data evaluates the model frame again, with ``(weights)``) but counts rows for
    the same model written without one; ordstats counts rows in both (R's plain rule)."""
    res = _fit("alcgp ~ factor(k) + tobgp", esoph.assign(k=esoph["agegp"].cat.codes + 1))
    _check(res, R["proportional"], weights="proportional")
    assert not np.allclose(R["factor_k_proportional"]["emmean"], R["proportional"]["emmean"])
    table = res.emmeans("k").summary().table
    np.testing.assert_allclose(table["emmean"], R["factor_k"]["emmean"], rtol=1e-6)
    np.testing.assert_allclose(table["SE"], R["factor_k"]["SE"], rtol=1e-4)


def test_as_integer_of_a_factor_in_a_fit_read_in_chunks(esoph: pd.DataFrame) -> None:
    """The streamed grid reads such a factor as its codes too (before: averaged over it)."""
    formula = "alcgp ~ as.integer(agegp) + tobgp"
    res = ordstats.OrdinalModel.from_formula(formula, esoph, weights="ncontrols", chunksize=20)
    _check(res.fit(), R["as_integer"])


@pytest.mark.parametrize("case", ["proportional", "cells", "covariate", "with_na"])
def test_a_fit_read_in_chunks_counts_the_zero_weight_rows_too(esoph, case) -> None:
    """Before: the streamed grid had only the estimation rows (-2.135, in memory -2.191)."""
    data = esoph.copy()
    formula = "alcgp ~ agegp + tobgp"
    if case in ("covariate", "with_na"):
        formula += " + ncases"
    if case == "with_na":
        data.loc[data.index[[2, 39]], "agegp"] = np.nan
        data.loc[data.index[[4, 40]], "ncases"] = np.nan
    options = {"weights": "ncontrols", "chunksize": 20}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingDataWarning)
        res = ordstats.OrdinalModel.from_formula(formula, data, **options).fit()
    weights = "cells" if case == "cells" else "proportional"
    _check(res, R[case], weights=weights)


def test_a_dask_fit_counts_the_zero_weight_rows_too(esoph) -> None:
    dd = pytest.importorskip("dask.dataframe")
    frame = dd.from_pandas(esoph, npartitions=3)
    res = ordstats.OrdinalModel.from_formula(
        "alcgp ~ agegp + tobgp", frame, weights="ncontrols"
    ).fit()
    _check(res, R["proportional"], weights="proportional")
