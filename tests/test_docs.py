"""The Sphinx docs build without warnings, so broken docstrings fail the suite."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

API_PAGES = [
    "ordstats.OrdinalModel",
    "ordstats.OrdinalResults",
    "ordstats.links.get_link",
    "ordstats.links.ArandaOrdaz",
    "ordstats.families.get_family",
    "ordstats.datasets.load",
    "ordstats.errors.OrdstatsError",
    "ordstats.cli.main",
    "ordstats.lr_test",
    "ordstats.compare_links",
    "ordstats.plotting.plot_probabilities",
]


def test_docs_build_with_warnings_as_errors(tmp_path):
    pytest.importorskip("sphinx")
    pytest.importorskip("numpydoc")
    # build from a copy: autosummary writes its generated pages into the source tree
    source = tmp_path / "docs"
    shutil.copytree(REPO / "docs", source, ignore=shutil.ignore_patterns("_build", "generated"))
    out = tmp_path / "html"
    pythonpath = os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-W",
            "--keep-going",
            "-q",
            "-b",
            "html",
            str(source),
            str(out),
        ],
        env={**os.environ, "PYTHONPATH": pythonpath},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    for page in API_PAGES:
        assert (out / "generated" / f"{page}.html").is_file(), page
    model_page = (out / "generated" / "ordstats.OrdinalModel.html").read_text()
    assert "from_formula" in model_page
