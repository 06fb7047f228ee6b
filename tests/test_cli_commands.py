"""The ``links``, ``compare`` and ``predict`` sub-commands, ``--sep``, ``--odds-ratios``."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats import cli


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


def test_formula_error_is_plain_text_and_quotes_the_formula(capsys):
    code, _, err = run(capsys, "fit", "rating ~ temp + (contact", "--data", "wine")
    assert code == 2
    assert "\x1b[" not in err
    assert "'rating ~ temp + (contact'" in err


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
    assert code == 2 and "factor_penalty" in err
