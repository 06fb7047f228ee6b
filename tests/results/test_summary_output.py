"""The printed summary: one width, R's p-values, call lines, LaTeX and HTML."""

from __future__ import annotations

import re
import shutil
import subprocess
from html import escape as html_escape

import numpy as np
import pytest

import ordstats
from ordstats.reporting import latex_escape
from tests._reference import load


@pytest.fixture(scope="module")
def nominal_res(wine):
    return ordstats.OrdinalModel.from_formula("rating ~ temp", wine, nominal="~ contact").fit()


def _table_part(text):
    return text.split("\n\nNotes:")[0].split("\n")


@pytest.mark.parametrize("which", ["wine_res", "nominal_res"])
def test_header_and_tables_have_one_width(which, request):
    res = request.getfixturevalue(which)
    lines = _table_part(str(res.summary()))
    rules = [line for line in lines if line and set(line) <= {"=", "-"}]
    assert len({len(rule) for rule in rules}) == 1
    width = len(rules[0])
    assert all(len(line) <= width for line in lines)
    # the right-hand column of the header and the last column of every table end at the edge
    assert any(line.endswith("-86.4919") or line.endswith("-86.2086") for line in lines)
    assert all(len(line) == width for line in lines if line.startswith("1|2 "))


def test_pvalues_standard_errors_and_call_lines_as_r(wine_res, wine):
    text = str(wine_res.summary())
    row = next(line for line in text.split("\n") if line.startswith("temp[T.warm]"))
    assert "2.19e-06" in row and "0.5287" in row  # R: Pr(>|z|) 2.19e-06, SE 0.5287
    assert "0.000 " not in text
    assert "formula: rating ~ temp + contact" in text
    assert "data:    wine" in text


def test_no_data_line_for_an_unnamed_frame(wine):
    res = ordstats.OrdinalModel.from_formula("rating ~ temp", wine.copy()).fit()
    assert "data:" not in str(res.summary())


def test_latex_keeps_titles_escapes_and_is_balanced(nominal_res):
    latex = nominal_res.summary().as_latex()
    for title in ["Location coefficients", "Nominal effects (on the thresholds)", "Thresholds"]:
        assert rf"\textbf{{{title}}}" in latex
    assert "theta\\_j" in latex and "1\\textbar{}2:contact[T.yes]" in latex
    plain = re.sub(r"\\[_&%$#{}|]", "", latex)
    assert "_" not in plain
    assert latex.count("{") - latex.count(r"\{") == latex.count("}") - latex.count(r"\}")
    for env in ("center", "tabular"):
        assert latex.count(rf"\begin{{{env}}}") == latex.count(rf"\end{{{env}}}") > 0
    # every row has as many cells as its tabular declares
    for block in re.findall(r"\\begin\{tabular\}\{(l r*)\}(.*?)\\end\{tabular\}", latex, re.S):
        spec, body = block
        rows = [r for r in body.split("\n") if r.endswith("\\\\")]
        assert rows and all(r.count(" & ") == len(spec) - 1 for r in rows)


PDFLATEX = shutil.which("pdflatex")


@pytest.mark.skipif(PDFLATEX is None, reason="no LaTeX engine (apt-get install texlive-latex-base)")
@pytest.mark.parametrize("which", ["wine_res", "nominal_res", "scale_flexible_res"])
def test_latex_summary_compiles(which, request, tmp_path):
    """The LaTeX summary compiles with pdflatex inside a bare article."""
    if which == "scale_flexible_res":
        wine = request.getfixturevalue("wine")
        res = ordstats.OrdinalModel.from_formula(
            "rating ~ temp", wine, scale="~ contact", link="Aranda-Ordaz"
        ).fit()
    else:
        res = request.getfixturevalue(which)
    body = res.summary().as_latex()
    document = "\\documentclass{article}\n\\begin{document}\n" + body + "\n\\end{document}\n"
    (tmp_path / "summary.tex").write_text(document, encoding="utf-8")
    run = subprocess.run(
        [PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", "summary.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-2000:]
    assert (tmp_path / "summary.pdf").stat().st_size > 0
    log = (tmp_path / "summary.log").read_text(encoding="latin-1")
    assert "Undefined control sequence" not in log and "Missing $" not in log


def test_latex_escape():
    assert latex_escape("a_b & 50% {x}|y ~ z") == (
        r"a\_b \& 50\% \{x\}\textbar{}y \textasciitilde{} z"
    )


def test_html_for_notebooks(wine_res):
    html = wine_res.summary()._repr_html_()
    assert "<caption>Thresholds</caption>" in html
    assert "formula: rating ~ temp + contact" in html
    assert "2.19e-06" in html


R_CALL_LINES = load("r_behaviours")["summary_lines"]


def _call_lines(text: str) -> list[str]:
    """The lines between the header's rule and the first table title, as R writes them."""
    lines = text.split("\n")
    start = next(k for k, line in enumerate(lines) if line.startswith("formula: "))
    block = []
    for line in lines[start:]:
        if not re.match(r"(formula|scale|nominal|data):", line):
            break
        block.append(line)
    return block


@pytest.mark.parametrize(
    ("case", "formula", "options"),
    [
        ("scale_nominal", "rating ~ temp", {"scale": "~ contact", "nominal": "~ contact"}),
        ("offset_only", "rating ~ temp + contact", {"scale": "~ offset(q)"}),
    ],
)
def test_call_lines_name_the_scale_and_nominal_formulas_as_r(wine, case, formula, options):
    """R's summary(clm) prints formula:, scale:, nominal: and data: lines; before, ordstats
    printed formula: and data: only (the scale and nominal formulas were in the header)."""
    frame = wine.assign(q=np.linspace(-0.5, 0.5, 72))
    res = ordstats.OrdinalModel.from_formula(formula, frame, **options).fit()
    res.model.data_name = "wine"
    ours = _call_lines(str(res.summary()))
    expected = [line for line in R_CALL_LINES[case] if line]
    # R writes a one-sided formula without the space after ~ (~contact)
    assert [re.sub(r"^((scale|nominal): +)~ ", r"\1~", line) for line in ours] == expected
    html = res.summary().as_html()
    assert all(html_escape(line) in html for line in ours)
