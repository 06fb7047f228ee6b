"""The inference vignette runs as a script and prints the numbers its prose talks about."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
VIGNETTE = REPO / "vignettes" / "inference.py"

#: Lines the prose relies on (R's anova.clm / confint.clm / predict.clm numbers).
KEY_OUTPUT = [
    "LR = 11.0430 on 1 df",
    "rating ~ temp * contact       7  186.8324 -86.4162   0.1514  1.0      0.6972",
    "temp[T.warm]    1.467  3.539   1.510  3.595",
    "covariance used: cluster",
    "temp[T.warm] - contact[T.yes] = 0     0.9753",
    "All                8.5345   6     0.2015",
    "logit   probit -1.716   0.08625",
    "4   loglog     log-gamma       -1      0.1615    3.993   1     0.04569     False",
    "Lowest AIC: probit",
    "judge 1 rates higher and judge 7 lower",
    "cold, no contact 1      0.207  0.085     0.086     0.418",
]


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    pythonpath = os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, str(VIGNETTE), *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": pythonpath, "MPLBACKEND": "Agg"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_vignette_prints_key_numbers(tmp_path):
    proc = run(tmp_path)
    assert proc.returncode == 0, proc.stderr
    for expected in KEY_OUTPUT:
        assert expected in proc.stdout
    assert "Warning" not in proc.stderr
    assert list(tmp_path.iterdir()) == []  # writes nothing by default


def test_profile_plot_only_on_request(tmp_path):
    pytest.importorskip("matplotlib")
    target = tmp_path / "profile.png"
    proc = run(tmp_path, "--plot", str(target))
    assert proc.returncode == 0, proc.stderr
    assert target.stat().st_size > 1000
    assert [p.name for p in tmp_path.iterdir()] == ["profile.png"]
