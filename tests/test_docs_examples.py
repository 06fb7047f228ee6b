"""The docs pages' examples print the numbers their text states.

A Python line of a docs page that ends in a comment starting with a literal
(``x.llf  # -2665.25, as R ...``) must evaluate to that literal; the numbers the
prose around the examples states are checked against the fits they describe.
"""

from __future__ import annotations

import ast
import contextlib
import io
import re
import shlex
import shutil
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats import cli

REPO = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data" / "docs"
RST_BLOCK = re.compile(r"^\.\. code-block:: (\w+)\n\n((?:^(?:   .*)?\n)+)", re.MULTILINE)


def rst_blocks(page: str, language: str) -> list[str]:
    """The dedented ``.. code-block:: language`` blocks of ``docs/<page>.rst``."""
    text = (REPO / "docs" / f"{page}.rst").read_text(encoding="utf-8")
    return [textwrap.dedent(body) for lang, body in RST_BLOCK.findall(text) if lang == language]


def stated_value(comment: str) -> object:
    """The literal a comment starts with (``-2665.25, as R ...`` gives -2665.25), or None."""
    for end in range(len(comment), 0, -1):
        if end < len(comment) and comment[end] not in " ,;":
            continue
        try:
            return ast.literal_eval(comment[:end].strip().rstrip(",;"))
        except (ValueError, SyntaxError):
            continue
    return None


def run_checking_comments(code: str, names: dict[str, object]) -> int:
    """Run ``code``; each expression line whose comment starts with a literal must equal it.

    Returns the number of lines checked.
    """
    checked = 0
    for node in ast.parse(code).body:
        line = code.splitlines()[node.end_lineno - 1]
        comment = line.split("  # ", 1)[1] if "  # " in line else ""
        expected = stated_value(comment) if isinstance(node, ast.Expr) else None
        if expected is None:
            exec(compile(ast.Module([node], []), "<docs>", "exec"), names)
            continue
        got = eval(compile(ast.Expression(node.value), "<docs>", "eval"), names)
        assert got == expected, f"{ast.unparse(node)}: the page says {expected!r}, got {got!r}"
        checked += 1
    return checked


def test_stated_value_reads_the_literal_a_comment_starts_with():
    assert stated_value("-2665.25, as R with useMatrix = TRUE") == -2665.25
    assert stated_value("[3.7697, 3.2126, 0.3168]") == [3.7697, 3.2126, 0.3168]
    assert stated_value("'-276.90063' at R's estimates") == "-276.90063"
    assert stated_value("logLik -86.4919, as R's clm") is None
    assert stated_value("") is None


def test_from_r_page_examples_print_what_the_page_says(tmp_path, monkeypatch):
    # the epilepsy example reads the files its R code writes (tests/r/docs_epil.R)
    for name in ("epil.csv", "r_estimates.txt"):
        shutil.copy(DATA / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    names: dict[str, object] = {"__name__": "docs"}
    checked = sum(run_checking_comments(code, names) for code in rst_blocks("from_r", "python"))
    # contrasts (2 lines), step's terms and AIC, lrm's C, soup's two links, the epilepsy
    # log-likelihoods (2 lines)
    assert checked == 9


def test_from_r_page_quotes_r_as_r_prints_it():
    page = (REPO / "docs" / "from_r.rst").read_text(encoding="utf-8")
    default, tight = (DATA / "r_loglik.txt").read_text().split()
    r_code = "\n".join(rst_blocks("from_r", "r"))
    assert f"# {default}" in r_code  # sprintf("%.5f", logLik(fit)) of the page's R code
    assert f"reports ``{tight}``" in page


def test_from_r_page_prose_numbers():
    page = " ".join((REPO / "docs" / "from_r.rst").read_text(encoding="utf-8").split())
    wine = ordstats.datasets.load("wine")
    fit = ordstats.OrdinalModel.from_formula
    # R's Laplace value against ordstats' on wine (R's: tests/data/reference/clmm_extra)
    for formula, r_value, quoted in [
        ("rating ~ temp + contact + (1|judge)", -81.5654093, "3.5e-6"),
        ("rating ~ temp + (1|judge)", -88.7388152, "4.3e-5"),
    ]:
        llf = fit(formula, wine).fit().llf
        assert f"ordstats ``{llf:.7f}``" in page
        difference = re.sub(r"e-0(\d)", r"e-\1", f"{abs(llf - r_value):.1e}")
        assert f"R ``{r_value:.7f}``" in page and difference == quoted
    # the nesting of bottle in temp that emmeans detects
    with pytest.warns(ordstats.OrdstatsWarning):  # bottle8 is aliased with temp
        res = fit("rating ~ temp + bottle", wine).fit()
    cold, warm = res.emmeans("temp").summary_frame()["emmean"]
    assert f"R's {cold:.3f} and {warm:.3f}" in page
    tests = res.joint_tests().set_index("model term")
    assert f"``temp`` (F {tests.loc['temp', 'F.ratio']:.2f})" in page
    assert f"``temp:bottle`` ({tests.loc['temp:bottle', 'df1']} df)" in page


def test_quickstart_command_lines_run(tmp_path, monkeypatch):
    # the files the commands name: new rows to predict, long ratings to factorise
    wine = ordstats.datasets.load("wine")
    wine[["temp", "contact"]].head(4).to_csv(tmp_path / "new.csv", index=False)
    rng = np.random.default_rng(1)
    ratings = pd.DataFrame(
        {
            "user": np.repeat(np.arange(30), 8),
            "item": np.tile(np.arange(8), 30),
            "stars": rng.integers(1, 6, 240),
        }
    ).sample(frac=0.6, random_state=1)  # unrated items to recommend
    ratings.to_csv(tmp_path / "ratings.csv", index=False)
    monkeypatch.chdir(tmp_path)
    commands = [
        line for block in rst_blocks("quickstart", "sh") for line in block.splitlines() if line
    ]
    assert len(commands) == 6
    for command in commands:
        argv, _, target = command.partition(" > ")
        words = shlex.split(argv)
        assert words[0] == "ordstats"
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert cli.main(words[1:]) == 0, command
        assert out.getvalue().strip(), command
        if target:
            assert pd.read_csv(io.StringIO(out.getvalue())).shape[0] > 0


def test_quickstart_python_examples_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the example saves wine_fit.pkl
    names: dict[str, object] = {"__name__": "docs"}
    with contextlib.redirect_stdout(io.StringIO()) as out:
        for code in rst_blocks("quickstart", "python") + rst_blocks("index", "python"):
            run_checking_comments(code, names)
    assert "-86.4919" in out.getvalue()  # "logLik -86.4919, as R's clm"
    res, again = names["res"], names["again"]
    pd.testing.assert_frame_equal(again.predict(names["wine"]), res.predict(names["wine"]))


def test_survey_page_examples_print_what_the_page_says(monkeypatch):
    # the page reads the api data vendored for the survey tests (tests/data/survey/)
    monkeypatch.chdir(REPO)
    names: dict[str, object] = {"__name__": "docs"}
    checked = sum(run_checking_comments(code, names) for code in rst_blocks("survey", "python"))
    # the raked fit's estimates and SEs, the calibrations' g and SEs, the trimmed g and totals
    assert checked == 6
