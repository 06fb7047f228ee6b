"""emmeans(mode="scale") on the scale formula's reference grid, against R's emmeans.

Reference: ``tests/r/emmeans_scale_grid.R`` (vendored in
``tests/data/reference/emmeans/scale_grid.json``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from ordstats import OrdinalModel, datasets
from ordstats.errors import OrdstatsError

REF = json.loads(
    (Path(__file__).parents[1] / "data" / "reference" / "emmeans" / "scale_grid.json").read_text()
)
CALL = re.compile(r'emmeans\(fit, ~ (?P<specs>[^,]+), mode = "scale"\)')


@pytest.fixture(scope="module")
def fit():
    housing = datasets.load("housing")
    model = OrdinalModel.from_formula(
        "Sat ~ Infl + Type + Cont", housing, scale="~ Type + Cont", weights="Freq"
    )
    return model.fit()


@pytest.mark.parametrize("case", REF["calls"], ids=lambda case: case["call"])
def test_scale_means_are_over_the_scale_formula_s_grid(fit, case):
    """Before, a location-only variable (Infl) got constant "means" and the notes said the
    scale means were averaged over it; R refuses it."""
    parsed = CALL.fullmatch(case["call"])
    assert parsed is not None
    if "error" in case:
        assert "No variable named Infl" in case["error"]
        with pytest.raises(OrdstatsError, match=r"'Infl' is not among them"):
            fit.emmeans("~ " + parsed["specs"], mode="scale")
        return
    means = fit.emmeans("~ " + parsed["specs"], mode="scale")
    table = means.summary_frame()
    np.testing.assert_allclose(table["emmean"], case["estimate"], rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(table["SE"], case["se"], rtol=1e-4, atol=1e-9)
    assert "Infl" not in str(means)  # not averaged over
