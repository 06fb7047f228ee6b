"""The families vignette runs from start to end (its asserts included)."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

VIGNETTE = Path(__file__).parents[1] / "vignettes" / "sequential_and_adjacent.py"


def test_sequential_and_adjacent_vignette_runs(capsys: pytest.CaptureFixture[str]) -> None:
    runpy.run_path(str(VIGNETTE), run_name="__main__")
    out = capsys.readouterr().out
    assert "Stopping-Ratio Model Results" in out
    assert "dAIC" in out
