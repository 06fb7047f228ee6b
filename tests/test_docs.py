"""The Sphinx docs build without warnings, so broken docstrings fail the suite.

The gallery runs the vignettes in their quick mode (the docs build's default,
``ORDSTATS_VIGNETTES_QUICK=1``), and the pages built from a reduced run say so.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "docs" / "_ext"))
from vignette_gallery import vignette_files  # noqa: E402  (docs/_ext: no package)

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
    "ordstats.plotting.plot_predictions",
    "ordstats.plotting.plot_comparisons",
    "ordstats.plotting.plot_slopes",
    "ordstats.interop.marginaleffects.adapt",
    "ordstats.results.margins.table.MarginsTable",
    "ordstats.results.margins.emmeans.EmmGrid",
    "ordstats.set_options",
]


def build_docs(
    tmp: Path, *, skip: tuple[str, ...] = ()
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """Build the Sphinx site with warnings as errors from a copy of docs/ under ``tmp``.

    The copy keeps autosummary's generated pages out of the source tree; ``skip``
    names more folders of docs/ to leave out of the copy.
    """
    source = tmp / "docs"
    ignore = shutil.ignore_patterns("_build", "generated", *skip)
    shutil.copytree(REPO / "docs", source, ignore=ignore)
    out = tmp / "html"
    pythonpath = os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
    command = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html"]
    proc = subprocess.run(
        [*command, str(source), str(out)],
        # the gallery runs every vignette, those with a reduced mode in it
        env={**os.environ, "PYTHONPATH": pythonpath, "ORDSTATS_VIGNETTES_QUICK": "1"},
        capture_output=True,
        text=True,
        check=False,
    )
    return proc, out


def test_docs_build_with_warnings_as_errors(tmp_path):
    pytest.importorskip("sphinx")
    pytest.importorskip("numpydoc")
    proc, out = build_docs(tmp_path)
    assert proc.returncode == 0, proc.stderr
    for page in API_PAGES:
        assert (out / "generated" / f"{page}.html").is_file(), page
    model_page = (out / "generated" / "ordstats.OrdinalModel.html").read_text()
    assert "from_formula" in model_page
    _check_results_surface(out)
    _check_site(out)


def public_results_names(cls_name: str = "OrdinalResults") -> list[str]:
    """Every public method and property of a results class, mixins included."""
    import ordstats

    cls = getattr(ordstats, cls_name)
    return sorted(name for name in dir(cls) if not name.startswith("_"))


def _check_results_surface(out: Path) -> None:
    for cls_name in ("OrdinalResults", "MixedResults"):
        page = (out / "generated" / f"ordstats.{cls_name}.html").read_text()
        undocumented = [
            name
            for name in public_results_names(cls_name)
            if f'id="ordstats.{cls_name}.{name}"' not in page
        ]
        assert not undocumented, f"{cls_name} members without documentation: {undocumented}"


def _check_site(out: Path) -> None:
    # the pages users read first, the executed gallery with its figures, offline maths
    for page in ["quickstart", "from_r", "from_statsmodels", "families", "gallery/index"]:
        assert (out / f"{page}.html").is_file(), page
    vignettes = [p.stem for p in vignette_files(REPO / "vignettes")]
    for name in vignettes:
        assert (out / "gallery" / f"{name}.html").is_file(), name
    gallery = (out / "gallery" / "wine.html").read_text()
    assert "-86.4919" in gallery  # printed by running the vignette at build time
    assert '<img alt="figure of wine"' in gallery
    assert (out / "_images" / "wine.png").stat().st_size > 1000
    margins = (out / "gallery" / "margins.html").read_text()
    assert margins.count('<img alt="figure of margins"') == 4  # the four margins plots
    assert "0.19604" in margins  # marginaleffects #1759, printed at build time
    for name in (
        "margins.png",
        "margins-comparisons.png",
        "margins-pairs.png",
        "margins-slopes.png",
    ):
        assert (out / "_images" / name).stat().st_size > 1000, name
    _check_reduced_runs_are_marked(out, vignettes)
    families = (out / "families.html").read_text()
    assert 'src="_static/mathjax/tex-chtml.js"' in families
    assert "cdn" not in families.lower()
    assert (out / "_static" / "mathjax" / "tex-chtml.js").is_file()


REDUCED = ("boosting", "boston", "factorization")  # the vignettes with a quick mode


def _check_reduced_runs_are_marked(out: Path, vignettes: list[str]) -> None:
    # a page built from a reduced run says so at its top, and the gallery's index too
    index = (out / "gallery" / "index.html").read_text()
    for name in vignettes:
        page = (out / "gallery" / f"{name}.html").read_text()
        notice = page.find("This page was built from a reduced run of")
        assert (notice >= 0) == (name in REDUCED), name
        if name in REDUCED:
            assert notice < page.find("<h2"), f"{name}: the notice is not at the top"
            assert f"vignettes/{name}.py" in page[notice : notice + 300]
            assert f'href="{name}.html"' in index
    assert index.count("(<em>reduced run</em>)") == len(REDUCED)
