"""The margins verbs on a rank-deficient fit warn of the rows it cannot estimate.

wine's ``rating ~ temp * contact`` without its warm-and-contact cell drops the
interaction column as aliased.  A row in that cell is predicted as if the
interaction were 0: a number that depends on which column was dropped.  R's
``predict`` warns of such doubtful cases and emmeans prints ``nonEst``
(tests/results/test_emmeans_nonest.py); predictions, comparisons and slopes
warned of nothing before and gave such rows numbers.  They now warn once,
naming the rows, and stay silent where every row evaluated is estimable.
"""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

import ordstats
from ordstats.errors import PredictionWarning

FORMULA = "rating ~ temp * contact"
DOUBTFUL = "not estimable from this fit"


def _rows() -> pd.DataFrame:
    wine = ordstats.datasets.load("wine")
    return wine[~((wine["temp"] == "warm") & (wine["contact"] == "yes"))].reset_index(drop=True)


def _fit(formula: str, data: pd.DataFrame):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the aliased column's CollinearityWarning
        return ordstats.OrdinalModel.from_formula(formula, data).fit()


@pytest.fixture(scope="module")
def fit():
    return _fit(FORMULA, _rows())


@pytest.fixture(scope="module")
def mixed_fit():
    return _fit(f"{FORMULA} + (1|judge)", _rows())


def _cells(*pairs: tuple[str, str], index: list[str]) -> pd.DataFrame:
    temp, contact = zip(*pairs, strict=True)
    return pd.DataFrame(
        {
            "temp": pd.Categorical(temp, categories=["cold", "warm"]),
            "contact": pd.Categorical(contact, categories=["no", "yes"]),
        },
        index=index,
    )


GRID = _cells(("cold", "no"), ("warm", "no"), ("warm", "yes"), index=["a", "b", "c"])


def _silent(call):
    with warnings.catch_warnings():
        warnings.simplefilter("error", PredictionWarning)
        return call()


@pytest.mark.parametrize("which", ["fit", "mixed_fit"])
def test_predictions_in_the_empty_cell_warn_naming_the_row(which, request):
    res = request.getfixturevalue(which)
    grid = GRID.assign(judge=_rows()["judge"].iloc[0]) if which == "mixed_fit" else GRID
    with pytest.warns(PredictionWarning, match=rf"predictions: 1 row\(s\).*\(c\) are {DOUBTFUL}"):
        res.predictions(grid)
    _silent(lambda: res.predictions(grid.iloc[:2]))  # the covered cells


def test_the_fitted_rows_are_estimable(fit):
    _silent(lambda: fit.predictions())
    _silent(lambda: fit.predictions(by="temp"))


def test_counterfactual_predictions_warn(fit):
    with pytest.warns(PredictionWarning, match=DOUBTFUL):
        fit.predictions(variables="contact")


@pytest.mark.parametrize("by", [False, True])
def test_comparisons_into_the_empty_cell_warn(fit, by):
    with pytest.warns(PredictionWarning, match=f"comparisons: .*{DOUBTFUL}"):
        fit.comparisons(variables="contact", by=by)


def test_slopes_warn(fit):
    with pytest.warns(PredictionWarning, match=f"slopes: .*{DOUBTFUL}"):
        fit.slopes(variables="temp")


def test_a_warning_is_given_once_per_call(fit):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit.comparisons(variables=["temp", "contact"])
    assert sum(DOUBTFUL in str(w.message) for w in caught) == 1


def test_the_warning_points_at_the_caller(fit):
    with pytest.warns(PredictionWarning, match=DOUBTFUL) as caught:
        fit.predictions(GRID)
    assert caught[0].filename == __file__


def test_a_full_rank_fit_never_warns():
    res = _fit(FORMULA, ordstats.datasets.load("wine"))
    _silent(lambda: res.predictions(GRID))
    _silent(lambda: res.comparisons(variables="contact", by=True))
    _silent(lambda: res.slopes(variables="temp"))


def test_comparisons_within_the_covered_cells_are_silent(fit):
    cold = _cells(("cold", "no"), ("cold", "yes"), index=["x", "y"])
    _silent(lambda: fit.comparisons(cold, variables="contact"))


@pytest.mark.parametrize("verb", ["comparisons", "predictions"])
def test_a_chunked_fit_warns_once_of_as_many_rows(fit, verb):
    """Streamed averages count the rows chunk by chunk and warn once, as in memory."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        chunked = ordstats.OrdinalModel.from_formula(FORMULA, _rows(), chunksize=20).fit()
    options = {"variables": "contact", "by": "contact" if verb == "predictions" else True}
    counts = []
    for res in (fit, chunked):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            getattr(res, verb)(**options)
        doubtful = [w for w in caught if DOUBTFUL in str(w.message)]
        assert len(doubtful) == 1
        assert doubtful[0].filename == __file__  # the caller's line, streamed or not
        counts.append(str(doubtful[0].message).split(" row(s)")[0].split(": ")[-1])
    assert counts[0] == counts[1] == "18"
