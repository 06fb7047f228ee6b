"""The ``links``, ``compare`` and ``predict`` sub-commands, ``--sep``, ``--odds-ratios``."""

from __future__ import annotations

import io
import json
import re
import warnings
import zipfile

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats import cli
from tests import _reference


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_links_prints_the_comparison(capsys, wine):
    code, out, err = run(
        capsys, "links", "rating ~ temp", "--data", "wine", "--links", "logit,probit"
    )
    assert code == 0, err
    expected = ordstats.compare_links("rating ~ temp", wine, ["logit", "probit"])
    assert out.strip() == str(expected).strip()
    assert "Vuong" in out


def test_links_needs_two(capsys):
    code, _, err = run(capsys, "links", "rating ~ temp", "--data", "wine", "--links", "logit")
    assert code == 2 and "at least two" in err


def test_compare_is_the_lr_test(capsys, wine):
    code, out, err = run(
        capsys, "compare", "rating ~ temp + contact", "rating ~ temp", "--data", "wine"
    )
    assert code == 0, err
    small = ordstats.OrdinalModel.from_formula("rating ~ temp", wine).fit()
    large = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    assert str(ordstats.lr_test(small, large)) in out
    assert "Pr(>Chisq)" in out


def test_predict_prints_csv_of_probabilities(capsys, wine, tmp_path):
    new = wine.head(5)[["temp", "contact"]]
    new.to_csv(tmp_path / "new.tsv", sep="\t", index=False)
    code, out, err = run(
        capsys,
        "predict",
        "rating ~ temp + contact",
        "--data",
        "wine",
        "--newdata",
        str(tmp_path / "new.tsv"),
    )
    assert code == 0, err
    table = pd.read_csv(io.StringIO(out), index_col="row")
    res = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    np.testing.assert_allclose(table.to_numpy(), res.predict(new).to_numpy(), rtol=1e-5)


def test_predict_class(capsys):
    code, out, _ = run(
        capsys,
        "predict",
        "rating ~ temp",
        "--data",
        "wine",
        "--newdata",
        "wine",
        "--which",
        "class",
    )
    assert code == 0 and out.startswith("row,class\n0,")


def test_predict_observed_gives_each_row_its_own_level_s_probability(capsys, wine):
    code, out, err = run(
        capsys,
        "predict",
        "rating ~ temp",
        "--data",
        "wine",
        "--newdata",
        "wine",
        "--which",
        "observed",
    )
    assert code == 0, err
    table = pd.read_csv(io.StringIO(out), index_col="row")
    res = ordstats.OrdinalModel.from_formula("rating ~ temp", wine).fit()
    np.testing.assert_allclose(table["observed"], res.predict(wine, which="observed"), rtol=1e-5)
    assert np.log(table["observed"]).sum() == pytest.approx(res.llf, rel=1e-5)


@pytest.mark.parametrize(
    ("name", "sep", "flag"),
    [
        ("survey.txt", " ", None),
        ("survey.txt", ";", ";"),
        ("survey.tsv", "\t", None),
        ("s.csv", ";", ";"),
    ],
)
def test_delimited_text_files(capsys, wine, tmp_path, name, sep, flag):
    path = tmp_path / name
    wine[["rating", "temp", "contact"]].to_csv(path, sep=sep, index=False)
    extra = ["--sep", flag] if flag else []
    code, out, err = run(
        capsys, "fit", "rating ~ temp + contact", "--data", str(path), *extra, "--format", "json"
    )
    assert code == 0, err
    assert json.loads(out)["loglik"] == pytest.approx(-86.4919, abs=1e-4)


def test_unknown_extension_is_named(capsys, tmp_path):
    code, _, err = run(capsys, "fit", "y ~ x", "--data", str(tmp_path / "survey.dat"))
    assert code == 2
    assert "the extension '.dat' is not one of .csv, .tsv, .txt" in err


def test_odds_ratios(capsys, wine):
    code, out, err = run(capsys, "fit", "rating ~ temp", "--data", "wine", "--odds-ratios")
    assert code == 0, err
    assert "Odds ratios" in out and "9.843" in out
    code, out, _ = run(
        capsys, "fit", "rating ~ temp", "--data", "wine", "--odds-ratios", "--format", "json"
    )
    ratio = json.loads(out)["odds_ratios"]["temp[T.warm]"]["odds_ratio"]
    beta = ordstats.OrdinalModel.from_formula("rating ~ temp", wine).fit().params["temp[T.warm]"]
    assert ratio == pytest.approx(np.exp(beta), rel=1e-10)


def test_odds_ratios_of_a_mixed_model(capsys, wine):
    formula = "rating ~ temp + (1|judge)"
    code, out, err = run(capsys, "fit", formula, "--data", "wine", "--odds-ratios")
    assert code == 0, err
    assert "Odds ratios" in out
    code, out, _ = run(
        capsys, "fit", formula, "--data", "wine", "--odds-ratios", "--format", "json"
    )
    ratio = json.loads(out)["odds_ratios"]["temp[T.warm]"]["odds_ratio"]
    beta = ordstats.OrdinalModel.from_formula(formula, wine).fit().params["temp[T.warm]"]
    assert ratio == pytest.approx(np.exp(beta), rel=1e-8)


def test_formula_error_is_plain_text_and_quotes_the_formula(capsys):
    code, _, err = run(capsys, "fit", "rating ~ temp + (contact", "--data", "wine")
    assert code == 2
    assert "\x1b[" not in err
    assert "'rating ~ temp + (contact'" in err


def test_errors_are_one_line_and_name_what_to_do(capsys, tmp_path):
    """Before: formulaic's marker on lines of its own, pandas' ZIP message unlabelled,
    --link silently ignored by links, and 'groups has 1 missing labels' for --cluster."""
    code, _, err = run(capsys, "fit", "rating ~ temp +", "--data", "wine")
    assert code == 2 and err.count("\n") == 1 and "temp ⧛+⧚" in err
    code, _, err = run(capsys, "links", "rating ~ temp", "--data", "wine", "--link", "probit")
    assert code == 2 and "--link probit is not used by 'ordstats links'" in err
    archive = tmp_path / "two.csv.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("a.csv", "a,b\n1,2\n")
        zipped.writestr("b.csv", "a,b\n1,2\n")
    code, _, err = run(capsys, "fit", "a ~ b", "--data", str(archive))
    assert code == 2 and f"cannot read {str(archive)!r} as one CSV table" in err
    holes = ordstats.datasets.load("wine").assign(pair=[None] + ["p"] * 35 + ["q"] * 36)
    holes.to_csv(tmp_path / "holes.csv", index=False)
    code, _, err = run(
        capsys, "fit", "rating ~ temp", "--data", str(tmp_path / "holes.csv"), "--cluster", "pair"
    )
    assert code == 2 and "(the column 'pair'), have 1 missing values" in err


@pytest.mark.parametrize("command", ["links", "compare", "predict"])
def test_subcommands_share_the_model_options(command):
    parser = cli.build_parser()
    argv = {
        "links": ["links", "y ~ x", "--data", "d"],
        "compare": ["compare", "y ~ x", "y ~ 1", "--data", "d"],
        "predict": ["predict", "y ~ x", "--data", "d", "--newdata", "n"],
    }[command]
    args = parser.parse_args([*argv, "--many-levels", "--family", "acat", "--sep", ";"])
    assert args.many_levels and args.family == "acat" and args.sep == ";"


# -- factorize -------------------------------------------------------------------


@pytest.fixture(scope="module")
def ratings_csv(tmp_path_factory):
    sim = ordstats.simulate_ratings(40, 15, rank=1, density=0.6, seed=3)
    frame = pd.DataFrame({"user": sim.row, "item": sim.col, "stars": sim.y + 1})
    path = tmp_path_factory.mktemp("ratings") / "ratings.csv"
    frame.to_csv(path, index=False)
    return path, frame


def _factorize_args(path, *extra):
    return ("factorize", "--data", str(path), "--row", "user", "--col", "item",
            "--rating", "stars", "--rank", "1", *extra)  # fmt: skip


def test_factorize_prints_the_fit_and_its_thresholds(capsys, ratings_csv):
    path, frame = ratings_csv
    code, out, err = run(capsys, *_factorize_args(path))
    assert code == 0, err
    res = ordstats.OrdinalFactorization(frame, row="user", col="item", rating="stars", rank=1).fit()
    assert f"rows: {res.row_labels.size}  columns: {res.col_labels.size}" in out
    assert f"ratings: {len(frame)}  levels: 1, 2, 3, 4, 5" in out
    assert f"sweeps: {res.n_sweeps}  converged: yes" in out
    assert f"{res.objective:.4f}" in out
    for value in res.thresholds.loc["global"]:
        assert f"{value:.4f}" in out


def test_factorize_recommends_as_the_results_do(capsys, ratings_csv):
    path, frame = ratings_csv
    code, out, err = run(capsys, *_factorize_args(path, "--recommend", "3", "--link", "probit"))
    assert code == 0, err
    printed = pd.read_csv(io.StringIO(out))
    res = ordstats.OrdinalFactorization(
        frame, row="user", col="item", rating="stars", rank=1, link="probit"
    ).fit()
    expected = res.recommend(3)
    np.testing.assert_array_equal(printed[["row", "rank", "col"]], expected[["row", "rank", "col"]])
    np.testing.assert_allclose(printed["expected"], expected["expected"], rtol=1e-12)


def test_factorize_orders_text_ratings_by_levels_and_checks_its_input(
    capsys, ratings_csv, tmp_path
):
    path, frame = ratings_csv
    words = frame.assign(stars=frame["stars"].map(dict(enumerate("abcde", start=1))))
    text = tmp_path / "words.csv"
    words.to_csv(text, index=False)
    code, _, err = run(capsys, *_factorize_args(text))
    assert code == 2 and "--levels" in err  # text without an order
    code, out, err = run(capsys, *_factorize_args(text, "--levels", "a,b,c,d,e"))
    assert code == 0 and "levels: a, b, c, d, e" in out
    numbers = run(capsys, *_factorize_args(path))[1]
    # the same fit: same sweeps, objective and thresholds (named by the levels)
    assert out.splitlines()[2] == numbers.splitlines()[2]
    assert out.splitlines()[-1] == numbers.splitlines()[-1]
    code, _, err = run(capsys, *_factorize_args(path, "--recommend", "0"))
    assert code == 2 and "--recommend" in err
    code, _, err = run(capsys, "factorize", "--data", str(path), "--row", "usr")
    assert code == 2 and "'usr'" in err
    code, _, err = run(capsys, *_factorize_args(path, "--factor-penalty", "-1"))
    assert code == 2 and "--factor-penalty must be" in err


# -- bad input on the command line (issue 29) -----------------------------------


def assert_error(capsys, argv, pattern):
    code, out, err = run(capsys, *argv)
    assert code == 2, err
    assert out == ""
    assert err.startswith("ordstats: error: ") and "Traceback" not in err
    assert re.search(pattern, err), err
    return err


@pytest.mark.parametrize(
    ("name", "sep", "shown"),
    [("s.csv", ";", '";"'), ("s.csv", "\t", r'"\\t"'), ("s.tsv", ",", '","')],
)
def test_a_file_read_as_one_column_suggests_its_separator(capsys, wine, tmp_path, name, sep, shown):
    path = tmp_path / name
    wine[["rating", "temp", "contact"]].to_csv(path, sep=sep, index=False)
    argv = ["fit", "rating ~ temp", "--data", str(path)]
    assert_error(capsys, argv, rf"read .* as one column named 'rating.*pass --sep {shown}")
    code, out, err = run(capsys, *argv, "--sep", sep, "--format", "json")
    assert code == 0, err
    assert json.loads(out)["loglik"] == pytest.approx(-92.0134, abs=1e-4)


@pytest.mark.parametrize("sep", ["|", ";", "\t", ","])
def test_the_separator_of_a_txt_file_is_guessed_from_several_lines(capsys, wine, tmp_path, sep):
    # pandas' own guess reads the header only, where 'rating|temp' splits at 't'
    path = tmp_path / "survey.txt"
    wine[["rating", "temp"]].to_csv(path, sep=sep, index=False)
    code, out, err = run(capsys, "fit", "rating ~ temp", "--data", str(path), "--format", "json")
    assert code == 0, err
    assert json.loads(out)["loglik"] == pytest.approx(-92.0134, abs=1e-4)


def test_new_data_may_have_its_own_separator(capsys, wine, tmp_path):
    """--sep applied to --newdata too, whose error then advised the --sep that broke --data."""
    wine.to_csv(tmp_path / "train.csv", sep=";", index=False)
    wine.head(4).to_csv(tmp_path / "new.csv", index=False)
    argv = ["predict", "rating ~ temp", "--data", str(tmp_path / "train.csv"), "--sep", ";"]
    argv += ["--newdata", str(tmp_path / "new.csv")]
    assert_error(capsys, argv, r"one column named 'response,rating.*pass --newdata-sep \",\"$")
    code, out, err = run(capsys, *argv, "--newdata-sep", ",")
    assert code == 0, err
    expected = ordstats.OrdinalModel.from_formula("rating ~ temp", wine).fit().predict(wine.head(4))
    got = pd.read_csv(io.StringIO(out), index_col="row")
    np.testing.assert_allclose(got.to_numpy(), expected.to_numpy(), rtol=1e-10)
    code, out, err = run(capsys, *argv[:-2], "--newdata", str(tmp_path / "train.csv"))
    assert code == 0 and len(out.splitlines()) == len(wine) + 1  # --sep still serves both


def test_an_empty_separator_is_refused(capsys, wine, tmp_path):
    wine.to_csv(tmp_path / "wine.csv", index=False)
    argv = ["fit", "rating ~ temp", "--data", str(tmp_path / "wine.csv"), "--sep", ""]
    assert_error(capsys, argv, "--sep needs a separator")


def test_files_without_data_rows(capsys, wine, tmp_path):
    wine.iloc[:0].to_csv(tmp_path / "header.csv", index=False)
    wine.iloc[:0].to_parquet(tmp_path / "none.parquet", index=False)
    for name in ("header.csv", "none.parquet"):
        path = str(tmp_path / name)
        pattern = rf"'{re.escape(path)}' has no data rows \(only the column names: response, "
        assert_error(capsys, ["fit", "rating ~ temp", "--data", path], pattern)
        argv = ["predict", "rating ~ temp", "--data", "wine", "--newdata", path]
        assert_error(capsys, argv, "has no data rows")


def test_links_with_random_terms_is_a_clear_error(capsys):
    argv = ["links", "rating ~ temp + (1|judge)", "--data", "wine"]
    assert_error(capsys, argv, r"link comparison needs a model without random terms")


def test_nagq_must_be_a_positive_number(capsys):
    code, _, err = run(capsys, "fit", "rating ~ temp + (1|judge)", "--data", "wine", "--nagq", "0")
    assert code == 2 and "--nagq: must be a positive whole number" in err


def test_no_value_error_from_the_input_prints_a_traceback(capsys, monkeypatch):
    # a ValueError that ordstats did not word itself (numpy's, scipy's) still ends
    # as 'ordstats: error:' with exit status 2, never as a traceback
    def refuse(*args, **kwargs):
        raise ValueError("'hess_inv0' matrix isn't positive definite.")

    monkeypatch.setattr(ordstats.OrdinalModel, "fit", refuse)
    assert_error(capsys, ["fit", "rating ~ temp", "--data", "wine"], r"hess_inv0")


@pytest.mark.parametrize(
    ("formula", "pattern"),
    [
        ("rating ~ rating", r"response 'rating' is also used in the right-hand side"),
        ("rating ~ temp +", r"cannot parse the formula 'rating ~ temp \+'"),
        ("rating", r"formula must be a string like"),
        ("rating ~ nan", r"every row has a missing or non-finite value: 'nan' \(72\)"),
    ],
)
def test_formula_campaign(capsys, wine, tmp_path, formula, pattern):
    path = tmp_path / "with_nan.csv"
    wine.assign(nan=np.nan).to_csv(path, index=False)
    assert_error(capsys, ["fit", formula, "--data", str(path)], pattern)


@pytest.mark.parametrize("name", ["d.csv.gz", "d.csv.zip", "d.csv.bz2", "d.csv.xz", "d.txt.gz"])
def test_a_damaged_compressed_file_is_a_clear_error(capsys, tmp_path, name):
    (tmp_path / name).write_bytes(b"not compressed at all")
    argv = ["fit", "rating ~ temp", "--data", str(tmp_path / name)]
    assert_error(capsys, argv, rf"cannot read '.*{re.escape(name)}'")


def test_a_separator_of_several_characters_is_a_regular_expression(capsys, wine, tmp_path):
    """pandas reads such a separator as a regular expression: an invalid one was a
    traceback (re.error), and every one printed pandas' ParserWarning first."""
    path = tmp_path / "survey.csv"
    wine[["rating", "temp"]].to_csv(path, sep=";", index=False)
    argv = ["fit", "rating ~ temp", "--data", str(path)]
    assert_error(capsys, [*argv, "--sep", "(,"], r"--sep '\(,': a separator of several")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # pandas' ParserWarning is not shown
        code, out, err = run(capsys, *argv, "--sep", ";+", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["loglik"] == pytest.approx(-92.0134, abs=1e-4)


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["fit", "rating ~ temp", "--data", "wine", "--threshold=1,2"], "--threshold gives 2"),
        (
            ["fit", "rating ~ temp", "--data", "wine", "--link", "probit", "--odds-ratios"],
            "Refit with --link logit",
        ),
        (
            ["links", "rating ~ temp", "--data", "wine", "--links", "logit,aranda-ordaz"],
            "--links takes standard links",
        ),
    ],
)
def test_errors_name_the_command_s_flags(capsys, argv, flag):
    """The messages come from the Python API, which names its keywords (threshold=,
    link='logit', links=); the command line has flags for them."""
    err = assert_error(capsys, argv, re.escape(flag))
    assert "threshold=" not in err and "link='" not in err


def test_python_keywords_become_flags():
    assert cli.in_flag_terms("pass many_levels=True to fit") == "pass --many-levels to fit"
    assert cli.in_flag_terms("or pass missing='drop'") == "or pass --missing drop"
    assert cli.in_flag_terms("cov_kwds['groups'] (the column 'z')") == "--cluster (the column 'z')"
    assert cli.in_flag_terms("sample_weight= and row=5 stay") == "sample_weight= and row=5 stay"
    assert cli.in_flag_terms("among levels=['a', 'b c']: 'd'") == "among --levels a,b c: 'd'"
    assert cli.in_flag_terms("pass levels=[...] lowest first") == "pass levels=[...] lowest first"
    assert cli.in_flag_terms("not with threshold='symmetric2'") == "not with --threshold symmetric2"


def test_an_option_given_twice_is_refused(capsys):
    """argparse kept the last value silently: --data wine --data soup fitted soup (and
    said the response 'rating' was not a column)."""
    argv = ["fit", "rating ~ temp", "--data", "wine", "--data", "soup"]
    assert_error(capsys, argv, r"--data given more than once")
    argv = ["fit", "rating ~ temp", "--data=wine", "--link=logit", "--link", "probit"]
    assert_error(capsys, argv, r"--link given more than once")
    code, _, err = run(capsys, "fit", "rating ~ temp", "--data", "wine", "--format", "json")
    assert code == 0, err


def test_a_directory_a_pattern_and_levels_that_are_not_utf8_are_named(capsys, tmp_path):
    (tmp_path / "a.parquet").write_bytes(b"")
    assert_error(
        capsys, ["fit", "y ~ x", "--data", str(tmp_path)], r"is a directory; the command reads"
    )
    pattern = str(tmp_path / "*.parquet")
    assert_error(capsys, ["fit", "y ~ x", "--data", pattern], r"does not expand patterns")
    levels = "1,2,3,4,\udcff"  # a byte 0xff of the command line, as Python's argv holds it
    argv = ["fit", "rating ~ temp", "--data", "wine", "--levels", levels]
    assert_error(capsys, argv, r"--levels holds bytes that are not UTF-8")


@pytest.mark.parametrize("command", ["fit", "predict", "compare", "links"])
def test_maxiter_is_a_flag_and_the_advice_names_it(capsys, wine, command):
    """The convergence advice said fit(maxiter=...), which the command line could not follow."""
    extra = {
        "fit": [],
        "predict": ["--newdata", "wine"],
        "compare": ["rating ~ temp + contact"],
        "links": ["--links", "logit,probit"],
    }[command]
    code, _, err = run(capsys, command, "rating ~ temp", *extra, "--data", "wine", "--maxiter", "2")
    assert code == 0, err
    assert "after 2 iterations" in err
    assert "--maxiter N allows more iterations" in err
    assert "fit(" not in err


def test_maxiter_gives_the_fit_its_limit(capsys, wine):
    code, out, err = run(
        capsys, "fit", "rating ~ temp", "--data", "wine", "--maxiter", "3", "--format", "json"
    )
    assert code == 0, err
    with pytest.warns(ordstats.ConvergenceWarning):
        expected = ordstats.OrdinalModel.from_formula("rating ~ temp", wine).fit(maxiter=3)
    assert json.loads(out)["niter"] == expected.niter == 3
    code, _, err = run(capsys, "fit", "rating ~ temp", "--data", "wine", "--maxiter", "0")
    assert code == 2 and "--maxiter" in err


def test_levels_that_contradict_a_parquet_order_are_refused(capsys, wine, tmp_path):
    """--levels reordered a Parquet file's ordered categorical silently (the API refuses)."""
    path = tmp_path / "wine.parquet"
    wine.to_parquet(path)
    with pytest.raises(ordstats.errors.ResponseError, match="contradicts"):
        ordstats.OrdinalModel.from_formula("rating ~ temp", wine, levels=list("54321"))
    code, out, err = run(
        capsys, "fit", "rating ~ temp", "--data", str(path), "--levels", "5,4,3,2,1"
    )
    assert code == 2 and out == ""
    assert "--levels 5,4,3,2,1 contradicts the order" in err and "drop --levels" in err
    assert "levels=" not in err
    code, _, err = run(capsys, "fit", "rating ~ temp", "--data", str(path), "--levels", "1,2,3,4,5")
    assert code == 0, err


def test_an_unknown_function_is_explained_without_python_advice(capsys):
    code, _, err = run(capsys, "fit", "rating ~ temp + foo(contact)", "--data", "wine")
    assert code == 2
    assert "'foo', which is not a function formulas can call on the command line" in err
    assert "context=" not in err and "import" not in err


@pytest.fixture
def separated(tmp_path):
    """x separates the response (levels 1-2 at x = 0, 3-4 at x = 1)."""
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(
        {
            "y": np.r_[rng.integers(1, 3, 20), rng.integers(3, 5, 20)],
            "x": np.r_[np.zeros(20), np.ones(20)],
            "z": rng.normal(size=40),
            "g": np.repeat(np.arange(8), 5),
        }
    )
    path = tmp_path / "separated.csv"
    frame.to_csv(path, index=False)
    return frame, str(path)


def test_separation_advice_names_the_penalty_flag(capsys, separated):
    """The advice was fit(penalty='firth') or fit_regularized(...), with no flag for either."""
    frame, path = separated
    code, _, err = run(capsys, "fit", "y ~ x + z", "--data", path)
    assert code == 0 and "separation" in err
    assert "--penalty firth" in err and "fit(" not in err and "fit_regularized" not in err
    code, out, err = run(
        capsys, "fit", "y ~ x + z", "--data", path, "--penalty", "firth", "--format", "json"
    )
    assert code == 0 and err == ""
    expected = ordstats.OrdinalModel.from_formula("y ~ x + z", frame).fit(penalty="firth")
    got = {name: row["estimate"] for name, row in json.loads(out)["params"].items()}
    assert got == pytest.approx(expected.params.to_dict(), rel=1e-10)
    code, out, err = run(
        capsys, "predict", "y ~ x", "--data", path, "--newdata", path, "--penalty", "firth"
    )
    firth = ordstats.OrdinalModel.from_formula("y ~ x", frame).fit(penalty="firth")
    assert code == 0 and float(out.splitlines()[1].split(",")[1]) == pytest.approx(
        firth.predict(frame).iloc[0, 0], rel=1e-10
    )


def test_penalty_flag_refusals_are_in_flag_terms(capsys, separated):
    _, path = separated
    code, _, err = run(
        capsys, "fit", "y ~ x", "--data", path, "--penalty", "firth", "--cov-type", "robust"
    )
    assert code == 2 and "--penalty firth" in err and "--cov-type must be" in err
    code, _, err = run(capsys, "fit", "y ~ x + (1|g)", "--data", path, "--penalty", "firth")
    assert code == 2 and "--penalty is not available with random effects" in err


@pytest.mark.parametrize(
    ("argv", "said", "python_only"),
    [
        (["fit", "rating ~ temp", "--link", "foo"], "choose one of 'logit'", "scipy"),
        (["links", "rating ~ temp", "--links", "logit,foo"], "choose one of 'logit'", "scipy"),
        (
            ["factorize", "--row", "judge", "--col", "temp", "--rating", "rating"],
            "keep one rating per pair (e.g. the latest)",
            "drop_duplicates",
        ),
    ],
)
def test_errors_leave_out_what_only_python_accepts(capsys, argv, said, python_only):
    """A Link object, a scipy distribution or a pandas call are not command-line input."""
    code, _, err = run(capsys, *argv, "--data", "wine")
    assert code == 2 and said in err
    assert python_only not in err and "a Link" not in err


def test_odds_ratios_of_a_separated_fit_print_no_numpy_warning(capsys, separated):
    """exp() of the diverging interval's end overflowed with numpy's RuntimeWarning on stderr."""
    _, path = separated
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        code, out, err = run(
            capsys, "fit", "y ~ x", "--data", path, "--odds-ratios", "--format", "json"
        )
    assert code == 0 and "separation" in err
    assert [
        str(w.message) for w in seen if not issubclass(w.category, ordstats.OrdstatsWarning)
    ] == []
    ratio = json.loads(out)["odds_ratios"]["x"]
    assert ratio["upper"] is None and ratio["odds_ratio"] > 1e6  # inf in JSON, as R's exp(Inf)


@pytest.mark.parametrize(
    ("kind", "random", "tol"),
    # the table prints 6 significant digits; clmm: R stops its fit earlier (docs/from_r.rst)
    [("clm", "", 5e-5), ("clmm", " + (1|judge)", 2e-4)],
)
def test_compare_fits_both_models_on_the_rows_complete_for_both(
    capsys, wine, tmp_path, kind, random, tol
):
    """A term with missing values in one model only stopped compare with Python advice."""
    ref = _reference.load("cli_compare_common_rows")[kind]
    i = np.arange(len(wine))
    frame = wine.assign(z=np.where(i % 7 == 0, np.nan, i % 3))
    frame.to_csv(tmp_path / "z.csv", index=False)
    small, large = f"rating ~ temp{random}", f"rating ~ temp + z{random}"
    code, out, err = run(capsys, "compare", small, large, "--data", str(tmp_path / "z.csv"))
    assert code == 0, err
    assert f"both are fitted to the {ref['nobs']} rows complete for both" in err
    rows = [line.split() for line in out.splitlines()[1:3]]
    assert [float(row[-4]) for row in rows] == pytest.approx(ref["logLik"], abs=tol)
    lr, df, p = map(float, rows[1][-3:])
    assert lr == pytest.approx(ref["LR.stat"], abs=tol) and df == ref["df"]
    assert p == pytest.approx(ref["pvalue"], abs=tol)


def test_predict_without_the_offset_column_gives_advice_the_command_can_follow(
    capsys, wine, tmp_path
):
    """The warning advised 'pass offset= (a number or one value per row)', a Python keyword."""
    wine.assign(off=np.linspace(-1, 1, len(wine))).to_csv(tmp_path / "train.csv", index=False)
    wine.head(3).to_csv(tmp_path / "new.csv", index=False)
    argv = ["predict", "rating ~ temp", "--data", str(tmp_path / "train.csv"), "--offset", "off"]
    code, out, err = run(capsys, *argv, "--newdata", str(tmp_path / "new.csv"))
    assert code == 0 and len(out.splitlines()) == 4
    assert "predictions use offset 0" in err and "give newdata a column 'off' to use another" in err
    assert "offset=" not in err


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--rank", "-1"),
        ("--tol", "-1"),
        ("--seed", "-1"),
        ("--bias-penalty", "nan"),
        ("--threshold-penalty", "-2"),
        ("--factor-penalty", "-1"),
    ],
)
def test_factorize_settings_are_named_by_their_flags(capsys, flag, value):
    """'rank must be ...', 'bias_penalty must be ...' named the Python keywords."""
    argv = ["factorize", "--data", "wine", "--row", "judge", "--col", "bottle"]
    err = assert_error(capsys, [*argv, "--rating", "rating", flag, value], f"{flag} must be a")
    assert "_" not in err.split(" must be")[0]


def test_links_warnings_name_the_link_whose_fit_they_are_about(capsys):
    """One 'the fit did not converge' per link, alike, left the user to guess which."""
    argv = ["links", "rating ~ temp + contact", "--data", "wine", "--links", "logit,probit"]
    code, out, err = run(capsys, *argv, "--maxiter", "1")
    assert code == 0 and "Vuong" in out
    lines = [line for line in err.splitlines() if "the fit did not converge" in line]
    named = [re.search(r"under the ([\w-]+) link: the fit did not", line) for line in lines]
    assert [m.group(1) for m in named if m] == ["logit", "probit", "aranda-ordaz", "log-gamma"]
    assert len(lines) == 4


def test_predict_observed_without_the_response_names_the_flag(capsys, tmp_path):
    """The refusal said which='observed' (the Python keyword) for --which observed."""
    pd.DataFrame({"temp": ["cold"], "contact": ["no"]}).to_csv(tmp_path / "new.csv", index=False)
    argv = ["predict", "rating ~ temp + contact", "--data", "wine", "--which", "observed"]
    err = assert_error(capsys, [*argv, "--newdata", str(tmp_path / "new.csv")], "--which observed")
    assert "which=" not in err and "response column 'rating'" in err
