"""emtrends(): slopes of marginal means in a numeric predictor, against R's emmeans.

R references: tests/r/emtrends_esoph.R (clm of esoph with a tobgp:ncases interaction,
weights=ncontrols).  emmeans differentiates with a forward difference of the grid
(h = 0.001 * range); the same difference here gives R's numbers to 1e-8.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import ordstats
from ordstats.errors import OrdstatsError
from tests._parity import dataset

R = json.loads((Path(__file__).parents[1] / "data" / "r" / "emtrends_esoph.json").read_text())


@pytest.fixture(scope="module")
def fit() -> ordstats.OrdinalResults:
    formula = "alcgp ~ agegp + tobgp * ncases"
    return ordstats.OrdinalModel.from_formula(formula, dataset("esoph"), weights="ncontrols").fit()


@pytest.mark.parametrize(
    ("case", "specs", "options"),
    [
        ("latent", "tobgp", {}),
        ("proportional", "tobgp", {"weights": "proportional"}),
        ("prob", "~ tobgp | alcgp", {"mode": "prob"}),
        ("mean_class", "tobgp", {"mode": "mean.class"}),
    ],
)
def test_emtrends_matches_r(fit, case: str, specs: str, options: dict) -> None:
    ref = R[case]
    table = fit.emtrends(specs, var="ncases", **options).summary().table
    assert [str(v) for v in table["tobgp"]] == ref["tobgp"]  # R labels alcgp's levels 1..4
    np.testing.assert_allclose(table["ncases.trend"], ref["trend"], rtol=1e-8)
    np.testing.assert_allclose(table["SE"], ref["SE"], rtol=1e-8)


def test_latent_trend_is_the_exact_slope(fit) -> None:
    """Linear in ncases: the slope is beta_ncases + beta_tobgp:ncases, whatever the step."""
    exact = fit.emtrends("tobgp", var="ncases", delta_var=5.0).summary().table
    np.testing.assert_allclose(exact["ncases.trend"], R["latent"]["trend"], rtol=1e-10)
    slopes = fit.emtrends("tobgp", var="ncases").pairs().summary().table
    assert len(slopes) == 6


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"var": "agegp"}, "not a numeric predictor"),
        ({"var": "nope"}, "not a numeric predictor"),
        ({"var": "ncases", "delta_var": 0.0}, "nonzero number"),
        ({"var": "ncases", "at": {"ncases": [3]}}, "differentiates in"),
    ],
)
def test_emtrends_refuses_bad_input(fit, kwargs: dict, message: str) -> None:
    with pytest.raises(OrdstatsError, match=message):
        fit.emtrends("tobgp", **kwargs)
