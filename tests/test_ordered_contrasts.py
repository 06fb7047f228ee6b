"""An ordered Categorical predictor gets R's default coding, ``contr.poly``.

R: ``options("contrasts")`` is ``c("contr.treatment", "contr.poly")``; model.frame
drops unused levels before coding.  The coefficients, names and predictions are
checked against R in tests/test_parity_sweep.py; here: the coding matrix itself,
new data of other dtypes, pickling, data read in chunks and the margins verbs.
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats.design import design_from_formula
from tests import _parity as parity
from tests._chunk_data import write_parquet

#: R 4.2: round(contr.poly(4), 15) (columns .L, .Q, .C)
R_CONTR_POLY_4 = np.array(
    [
        [-0.670820393249937, 0.5, -0.223606797749979],
        [-0.223606797749979, -0.5, 0.670820393249937],
        [0.223606797749979, -0.5, -0.670820393249937],
        [0.670820393249937, 0.5, 0.223606797749979],
    ]
)


def _housing() -> pd.DataFrame:
    return parity.dataset("housing_ordinf")


def _fit(formula: str, data: pd.DataFrame) -> ordstats.OrdinalResults:
    return ordstats.OrdinalModel.from_formula(formula, data, weights="Freq").fit()


def test_an_ordered_column_is_coded_with_r_polynomials_named_as_r_names_them():
    frame = pd.DataFrame(
        {
            "y": pd.Categorical(list("abcdabcd"), ordered=True),
            "x": pd.Categorical(list("pqrsspqr"), categories=list("pqrs"), ordered=True),
        }
    )
    design = design_from_formula("y ~ x", frame)
    assert design.location.names == ["x.L", "x.Q", "x.C"]
    rows = [0, 1, 2, 3]  # levels p, q, r, s
    np.testing.assert_allclose(design.location.matrix[rows], R_CONTR_POLY_4, rtol=0, atol=1e-15)


def test_unordered_and_text_columns_keep_treatment_contrasts():
    data = _housing()
    plain = data.assign(Infl=data["Infl"].astype(str))
    assert "Infl[T.Medium]" in _fit("Sat ~ Infl", plain).params.index
    unordered = data.assign(Infl=data["Infl"].cat.as_unordered())
    assert "Infl[T.Medium]" in _fit("Sat ~ Infl", unordered).params.index


def test_new_data_of_any_dtype_are_coded_as_fitted_and_the_fit_pickles():
    data = _housing()
    res = _fit("Sat ~ Infl + Type + Cont", data)
    rows = data.drop(columns="Sat").iloc[[0, 3, 6, 39]]
    expected = res.predict(rows).to_numpy()
    as_text = rows.assign(Infl=rows["Infl"].astype(str), Infl4=rows["Infl4"].astype(str))
    np.testing.assert_allclose(res.predict(as_text).to_numpy(), expected, rtol=1e-14)
    again = pickle.loads(pickle.dumps(res))
    np.testing.assert_allclose(again.predict(as_text).to_numpy(), expected, rtol=1e-14)
    with pytest.raises(ordstats.errors.PredictionError, match=r"level.*VeryHigh.*not fitted"):
        res.predict(as_text.assign(Infl="VeryHigh"))


def test_treatment_contrasts_on_request_give_the_same_model():
    data = _housing()
    poly = _fit("Sat ~ Infl + Type + Cont", data)
    treatment = _fit("Sat ~ C(Infl, contr.treatment) + Type + Cont", data)
    assert treatment.llf == pytest.approx(poly.llf, rel=1e-12)
    np.testing.assert_allclose(poly.predict(data), treatment.predict(data), atol=1e-12)


def test_chunked_fit_codes_the_levels_the_rows_take(tmp_path):
    """The chunked design's levels are the scanned ones: an unused level is left out
    of the polynomials as in memory (and in R), not made a dropped aliased column."""
    data = _housing()
    write_parquet(data, tmp_path / "h", n_files=3)
    memory = _fit("Sat ~ Infl4 + Type + Cont", data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ordstats.errors.OrdstatsWarning)
        chunked = ordstats.OrdinalModel.from_formula(
            "Sat ~ Infl4 + Type + Cont", str(tmp_path / "h"), weights="Freq", chunksize=20
        ).fit()
    assert list(chunked.params.index) == list(memory.params.index)
    np.testing.assert_allclose(chunked.params, memory.params, rtol=1e-9)
    assert chunked.llf == pytest.approx(memory.llf, rel=1e-12)


def test_margins_verbs_work_on_polynomial_contrasts():
    data = _housing()
    res = _fit("Sat ~ Infl + Type + Cont", data)
    table = res.avg_comparisons(variables="Infl")
    assert np.isfinite(np.asarray(table["estimate"], dtype=float)).all()
    treatment = _fit("Sat ~ C(Infl, contr.treatment) + Type + Cont", data)
    # the comparisons are of the model, not of its coding
    other = treatment.avg_comparisons(variables="Infl")
    np.testing.assert_allclose(
        np.asarray(table["estimate"], dtype=float),
        np.asarray(other["estimate"], dtype=float),
        atol=1e-9,
    )


@pytest.mark.parametrize(
    "sides",
    [{}, {"scale": "~ Infl4"}, {"nominal": "~ Infl4"}],
    ids=["location", "scale", "nominal"],
)
def test_an_unused_level_is_coded_without_pandas_deprecations(sides):
    """Coding an ordered factor whose categories include a level no row has (Infl4's
    VeryHigh; R's model.frame drops it) recast it onto the levels present, which pandas
    3.1 deprecates (``Pandas4Warning``: pandas 4 will raise); so did predicting new
    rows whose Categorical has the unused level.  The fit is the one with Infl."""
    data = _housing()
    location = "Sat ~ Type" if sides else "Sat ~ Infl4 + Type"
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        res = ordstats.OrdinalModel.from_formula(location, data, weights="Freq", **sides).fit()
        predicted = res.predict(data.iloc[:6]).to_numpy()
    same = {side: text.replace("Infl4", "Infl") for side, text in sides.items()}
    infl = ordstats.OrdinalModel.from_formula(
        location.replace("Infl4", "Infl"), data, weights="Freq", **same
    ).fit()
    np.testing.assert_allclose(res.params.to_numpy(), infl.params.to_numpy(), rtol=1e-10)
    np.testing.assert_allclose(predicted, infl.predict(data.iloc[:6]).to_numpy(), rtol=1e-10)
