"""Sphinx extension: run ``vignettes/*.py`` at build time and render them as a gallery.

Each vignette is a percent-format script (``# %%`` code cells, ``# %% [markdown]``
text cells).  At ``builder-inited`` every vignette runs cell by cell in one
namespace (with ``--plot`` pointing into the gallery, matplotlib's Agg backend),
and ``docs/gallery/<name>.rst`` is written: the text cells converted from the
small Markdown subset the vignettes use to reStructuredText, each code cell
followed by what it printed and by any figure it saved.  ``docs/gallery/index.rst``
lists the vignettes with their figures as thumbnails.  A failing vignette fails
the build.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
from pathlib import Path

HEADING = {1: "=", 2: "-", 3: "~", 4: "^"}


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


def run_vignette(path: Path, outdir: Path) -> tuple[str, str, list[str]]:
    """Run one vignette; return its title, its reST page and the figures it saved."""
    import matplotlib

    matplotlib.use("Agg")
    name = path.stem
    figure = outdir / f"{name}.png"
    if figure.exists():
        figure.unlink()
    namespace = {"__name__": "__main__", "__file__": str(path)}
    argv = sys.argv
    sys.argv = [str(path), "--plot", str(figure)]
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
            if figure.exists() and figure.name not in figures:
                figures.append(figure.name)
                parts += ["", f".. image:: {figure.name}", f"   :alt: figure of {name}", ""]
            parts.append("")
    finally:
        sys.argv = argv
        os.chdir(cwd)
    return title, "\n".join(parts) + "\n", figures


def build_gallery(app: object) -> None:
    """Write ``gallery/*.rst`` from the vignettes (connected to ``builder-inited``)."""
    srcdir = Path(app.srcdir)  # type: ignore[attr-defined]
    vignettes = Path(app.config.vignette_dir)  # type: ignore[attr-defined]
    if not vignettes.is_absolute():
        vignettes = (srcdir / vignettes).resolve()
    outdir = srcdir / "gallery"
    outdir.mkdir(exist_ok=True)
    entries = []
    for path in sorted(vignettes.glob("*.py")):
        title, page, figures = run_vignette(path, outdir)
        (outdir / f"{path.stem}.rst").write_text(f".. _vignette-{path.stem}:\n\n{page}")
        entries.append((path.stem, title, figures))
    lines = [
        "Gallery of vignettes",
        "====================",
        "",
        "Worked examples, executed when these pages were built: every number and figure",
        "below comes from running ``vignettes/*.py`` with this version of ordstats.",
        "",
    ]
    for stem, title, figures in entries:
        label = title.replace("`", "").replace("<", "").replace(">", "")
        lines += [f"- :doc:`{label} <{stem}>`"]
        if figures:
            lines += [
                "",
                f"  .. image:: {figures[0]}",
                "     :width: 320px",
                f"     :target: {stem}.html",
                f"     :alt: {title}",
                "",
            ]
    lines += ["", ".. toctree::", "   :hidden:", ""] + [f"   {stem}" for stem, _, _ in entries]
    (outdir / "index.rst").write_text("\n".join(lines) + "\n")


def setup(app: object) -> dict[str, object]:
    """Register the gallery step."""
    app.add_config_value("vignette_dir", "../vignettes", "env")  # type: ignore[attr-defined]
    app.connect("builder-inited", build_gallery)  # type: ignore[attr-defined]
    return {"parallel_read_safe": True, "version": "1"}
