"""``fit(disp=...)`` of a mixed model, as of the clm fit (a TypeError before)."""

from __future__ import annotations

import pytest

import ordstats
from ordstats.errors import SpecificationError


@pytest.fixture(scope="module")
def model():
    wine = ordstats.datasets.load("wine")
    return ordstats.OrdinalModel.from_formula("rating ~ temp + contact + (1|judge)", wine)


def test_disp_false_prints_nothing_and_fits_the_same(model, capsys):
    quiet = model.fit(disp=False)
    assert capsys.readouterr().out == ""
    assert quiet.llf == model.fit().llf


def test_disp_true_prints_one_line_per_step_down_to_the_optimum(model, capsys):
    res = model.fit(disp=True)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) >= 3 and all(line.startswith("iter") for line in lines)
    values = [float(line.split("nll = ")[1].split()[0]) for line in lines]
    assert values == sorted(values, reverse=True)  # each printed step lowers the objective
    assert values[-1] == pytest.approx(-res.llf, rel=1e-8)


def test_disp_must_be_a_flag(model):
    with pytest.raises(SpecificationError, match="disp must be True or False"):
        model.fit(disp="yes")
