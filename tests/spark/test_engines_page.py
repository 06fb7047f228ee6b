"""docs/engines.rst shows what its code prints: four engines, one summary."""

from __future__ import annotations

import contextlib
import io
import re
import textwrap
import warnings
from pathlib import Path

PAGE = Path(__file__).resolve().parents[2] / "docs" / "engines.rst"
BLOCK = re.compile(r"^\.\. code-block:: (\w+)\n\n((?:    .*\n|\n)+)", re.MULTILINE)


def page_blocks() -> dict[str, str]:
    """The page's python code and its printed text (first block of each language)."""
    found: dict[str, str] = {}
    for language, body in BLOCK.findall(PAGE.read_text(encoding="utf-8")):
        found.setdefault(language, textwrap.dedent(body).strip("\n"))
    return found


def test_the_engines_page_prints_what_it_shows(spark):
    blocks = page_blocks()
    out = io.StringIO()
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # pyspark on pandas 3
        exec(compile(blocks["python"], str(PAGE), "exec"), {"__name__": "engines_page"})
    printed = out.getvalue().rstrip("\n")
    assert printed == blocks["text"], printed
    # the claim of the page: only max|grad| differs between engines
    for line in printed.splitlines()[-4:]:
        assert re.fullmatch(r"[\w ]+: \d+ lines; differing from in memory: \[.*\]", line)
        assert "differing from in memory: []" in line or line.count("max|grad|") == 1
