"""Sphinx extension: run ``vignettes/*.py`` at build time and render them as a gallery.

Each vignette is a percent-format script (``# %%`` code cells, ``# %% [markdown]``
text cells).  At ``builder-inited`` every vignette runs cell by cell in one
namespace (with ``--plot`` pointing into the gallery, matplotlib's Agg backend),
and ``docs/gallery/<name>.rst`` is written: the text cells converted from the
small Markdown subset the vignettes use to reStructuredText, each code cell
followed by what it printed and by any figure it saved (``--plot FILE`` is
``<name>.png``; a vignette that saves more figures names them ``<name>-<suffix>.png``
beside it).  ``docs/gallery/index.rst`` lists the vignettes with their first
figures as thumbnails.  A failing vignette fails
the build.

The vignettes run in their quick mode (``ORDSTATS_VIGNETTES_QUICK=1``) unless the
build is started with ``ORDSTATS_VIGNETTES_QUICK=0``: their full runs take about an
hour.  A vignette that ran on reduced settings says so in a module variable
``REDUCED_RUN`` (a sentence naming its settings and the full run's), and its page
and its entry in the index say so where a reader sees it first.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

HEADING = {1: "=", 2: "-", 3: "~", 4: "^"}
#: the vignettes' switch to their reduced settings; "0" builds from the full runs
QUICK_VARIABLE = "ORDSTATS_VIGNETTES_QUICK"


def _cells(text: str) -> list[tuple[str, str]]:
    cells: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("# %%"):
            cells.append(("markdown" if "[markdown]" in line else "code", []))
        elif cells:
            cells[-1][1].append(line)
    return [(kind, "\n".join(lines).strip("\n")) for kind, lines in cells]


def _inline(text: str) -> str:
    text = re.sub(r"\[([^\]]+)\]\(([^)]+)\)", r"`\1 <\2>`__", text)
    return re.sub(r"(?<![`\w])`([^`]+)`(?![`\w])", r"``\1``", text)


def markdown_to_rst(markdown: str) -> str:
    """Convert the Markdown of a vignette's text cell (``# `` prefixed) to reST."""
    out: list[str] = []
    in_code = False
    in_table = False
    for raw in markdown.splitlines():
        line = raw[2:] if raw.startswith("# ") else raw[1:] if raw.startswith("#") else raw
        if line.lstrip().startswith("|"):  # a Markdown table: shown as it is written
            if not in_table:
                out += ["", "::", ""]
                in_table = True
            out.append("    " + line)
            continue
        if in_table:
            in_table = False
            out.append("")
        if line.startswith("    ") and not in_code and (not out or not out[-1].strip()):
            out += ["::", ""]
            in_code = True
        if in_code:
            if line.strip() and not line.startswith("    "):
                in_code = False
                out.append("")
            else:
                out.append(line)
                continue
        match = re.match(r"^(#{1,4}) (.*)$", line)
        if match:
            title = _inline(match.group(2).strip())
            out += ["", title, HEADING[len(match.group(1))] * max(len(title), 3), ""]
        else:
            out.append(_inline(line))
    return "\n".join(out)


def reduced_run_notice(path: Path, reduced: str) -> list[str]:
    """The admonition at the top of a page built from a reduced run."""
    script = f"vignettes/{path.name}"
    return [
        ".. admonition:: Reduced run",
        "   :class: warning",
        "",
        f"   This page was built from a reduced run of ``{script}``: {reduced}.",
        "   Every number and figure on it is that run's; the full run's differ",
        f"   (``python {script}``; ``bench/README.md`` records one).",
        "",
    ]


def _after_title(rst: str, notice: list[str]) -> str:
    """Insert ``notice`` after the first section title of ``rst``."""
    lines = rst.splitlines()
    for i in range(1, len(lines)):
        underline = lines[i].strip()
        if underline and set(underline) == {"="} and lines[i - 1].strip():
            return "\n".join([*lines[: i + 1], "", *notice, *lines[i + 1 :]])
    return "\n".join([*notice, rst])


def _figures(outdir: Path, name: str) -> list[Path]:
    """The figures a vignette saved: ``--plot``'s ``<name>.png`` and ``<name>-<suffix>.png``."""
    own = re.compile(rf"{re.escape(name)}(-.+)?")
    return sorted(p for p in outdir.glob(f"{name}*.png") if own.fullmatch(p.stem))


def run_vignette(path: Path, outdir: Path) -> tuple[str, str, list[str], str | None]:
    """Run one vignette; return its title, reST page, saved figures and reduced-run note."""
    import matplotlib

    matplotlib.use("Agg")
    name = path.stem
    figure = outdir / f"{name}.png"
    for old in _figures(outdir, name):
        old.unlink()
    namespace = {"__name__": "__main__", "__file__": str(path)}
    argv, search_path = sys.argv, list(sys.path)
    sys.argv = [str(path), "--plot", str(figure)]
    sys.path.insert(0, str(path.parent))  # as for a script: its folder's helpers import
    parts: list[str] = []
    title = name
    figures: list[str] = []
    cwd = os.getcwd()
    try:
        os.chdir(path.parent)
        for kind, source in _cells(path.read_text()):
            if kind == "markdown":
                rst = markdown_to_rst(source)
                first = next((ln for ln in rst.splitlines() if ln.strip()), "")
                if title == name and first:
                    title = first
                parts.append(rst)
                continue
            if not source.strip():
                continue
            parts += ["", ".. code-block:: python", ""]
            parts += ["    " + ln for ln in source.splitlines()]
            buffer = io.StringIO()
            with contextlib.redirect_stdout(buffer):
                exec(compile(source, str(path), "exec"), namespace)
            printed = buffer.getvalue().rstrip()
            if printed:
                parts += ["", ".. code-block:: text", ""]
                parts += ["    " + ln for ln in printed.splitlines()]
            for saved in _figures(outdir, name):
                if saved.name not in figures:
                    figures.append(saved.name)
                    parts += ["", f".. image:: {saved.name}", f"   :alt: figure of {name}", ""]
            parts.append("")
    finally:
        sys.argv, sys.path[:] = argv, search_path
        os.chdir(cwd)
    page = "\n".join(parts) + "\n"
    reduced = namespace.get("REDUCED_RUN")
    if reduced:
        page = _after_title(page, reduced_run_notice(path, str(reduced)))
    return title, page, figures, str(reduced) if reduced else None


def vignette_files(folder: Path) -> list[Path]:
    """The vignettes in ``folder``: its ``*.py`` files but helpers named ``_*.py``."""
    return sorted(p for p in folder.glob("*.py") if not p.name.startswith("_"))


@contextlib.contextmanager
def _quick_mode() -> Iterator[bool]:
    """Set the vignettes' quick switch for the build (default on); restore it after."""
    before = os.environ.get(QUICK_VARIABLE)
    quick = before != "0"
    os.environ[QUICK_VARIABLE] = "1" if quick else "0"
    try:
        yield quick
    finally:
        if before is None:
            del os.environ[QUICK_VARIABLE]
        else:
            os.environ[QUICK_VARIABLE] = before


def build_gallery(app: object) -> None:
    """Write ``gallery/*.rst`` from the vignettes (connected to ``builder-inited``)."""
    srcdir = Path(app.srcdir)  # type: ignore[attr-defined]
    vignettes = Path(app.config.vignette_dir)  # type: ignore[attr-defined]
    if not vignettes.is_absolute():
        vignettes = (srcdir / vignettes).resolve()
    outdir = srcdir / "gallery"
    outdir.mkdir(exist_ok=True)
    entries = []
    with _quick_mode():
        for path in vignette_files(vignettes):
            title, page, figures, reduced = run_vignette(path, outdir)
            (outdir / f"{path.stem}.rst").write_text(f".. _vignette-{path.stem}:\n\n{page}")
            entries.append((path.stem, title, figures, reduced))
    lines = [
        "Gallery of vignettes",
        "====================",
        "",
        "Worked examples, executed when these pages were built: every number and figure",
        "below comes from running ``vignettes/*.py`` with this version of ordstats.",
        "",
    ]
    if any(reduced for *_, reduced in entries):
        lines += [
            "Pages marked *reduced run* ran on smaller settings (fewer splits, folds,",
            "rounds or rows) to keep the build to minutes; each says which at its top.",
            f"``{QUICK_VARIABLE}=0`` builds every page from the full run (about an hour).",
            "",
        ]
    for stem, title, figures, reduced in entries:
        label = title.replace("`", "").replace("<", "").replace(">", "")
        mark = " (*reduced run*)" if reduced else ""
        lines += [f"- :doc:`{label} <{stem}>`{mark}"]
        if figures:
            lines += [
                "",
                f"  .. image:: {figures[0]}",
                "     :width: 320px",
                f"     :target: {stem}.html",
                f"     :alt: {title}",
                "",
            ]
    lines += ["", ".. toctree::", "   :hidden:", ""] + [f"   {entry[0]}" for entry in entries]
    (outdir / "index.rst").write_text("\n".join(lines) + "\n")


def setup(app: object) -> dict[str, object]:
    """Register the gallery step."""
    app.add_config_value("vignette_dir", "../vignettes", "env")  # type: ignore[attr-defined]
    app.connect("builder-inited", build_gallery)  # type: ignore[attr-defined]
    return {"parallel_read_safe": True, "version": "1"}
