"""The ``ordstats`` command line, run in-process through ``cli.main``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pandas as pd
import pytest

import ordstats
from ordstats import cli

REPO = Path(__file__).resolve().parents[1]
WINE = ["fit", "rating ~ temp + contact", "--data", "wine"]
HOUSING = ["fit", "Sat ~ Infl + Type + Cont", "--data", "housing", "--weights", "Freq"]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def fit_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    code, out, err = run(capsys, *argv, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def assert_error(capsys: pytest.CaptureFixture[str], argv: list[str], *fragments: str) -> str:
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert err.startswith("ordstats: error: ")
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err
    return err


# -- fitting bundled data ----------------------------------------------------


def test_fit_wine_text(capsys):
    code, out, err = run(capsys, *WINE)
    assert code == 0
    assert err == ""
    for name in ("temp[T.warm]", "contact[T.yes]", "1|2", "2|3", "3|4", "4|5"):
        assert name in out
    assert "-86.4919" in out
    assert "2.5031" in out and "1.5278" in out


def test_fit_housing_with_weights(capsys):
    result = fit_json(capsys, *HOUSING)
    assert result["nobs"] == 1681
    assert result["n_rows"] == 72
    assert result["loglik"] == pytest.approx(-1739.5746, abs=1e-4)
    # MASS::polr(Sat ~ Infl + Type + Cont, weights = Freq, data = housing)
    assert result["params"]["Infl[T.High]"]["estimate"] == pytest.approx(1.2888, abs=1e-4)
    assert result["params"]["Low|Medium"]["estimate"] == pytest.approx(-0.4961, abs=1e-4)


def test_weights_change_the_fit(capsys):
    weighted = fit_json(capsys, *HOUSING)
    unweighted = fit_json(capsys, *HOUSING[:4])
    assert unweighted["nobs"] == 72
    assert unweighted["loglik"] != pytest.approx(weighted["loglik"])


def test_fit_probit(capsys):
    result = fit_json(capsys, *WINE, "--link", "probit")
    assert result["link"] == "probit"
    assert result["loglik"] == pytest.approx(-85.7611, abs=1e-4)
    code, out, _ = run(capsys, *WINE, "--link", "probit")
    assert code == 0 and "probit" in out and "-85.7611" in out


def test_fit_equidistant_thresholds(capsys):
    result = fit_json(capsys, *WINE, "--threshold", "equidistant")
    assert result["threshold"] == "equidistant"
    assert list(result["params"])[:2] == ["threshold.1", "spacing"]
    assert result["loglik"] < -86.4919  # fewer parameters, lower likelihood


def test_fit_offset(capsys, tmp_path, wine):
    path = tmp_path / "wine.parquet"
    pytest.importorskip("pyarrow")
    wine.assign(off=0.5).to_parquet(path)
    plain = fit_json(capsys, *WINE)
    shifted = fit_json(
        capsys, "fit", "rating ~ temp + contact", "--data", str(path), "--offset", "off"
    )
    assert shifted["loglik"] == pytest.approx(plain["loglik"], abs=1e-6)
    plain_12 = plain["params"]["1|2"]["estimate"]
    assert shifted["params"]["1|2"]["estimate"] == pytest.approx(plain_12 + 0.5, abs=1e-5)


# -- output formats ----------------------------------------------------------


def test_format_json(capsys):
    result = fit_json(capsys, *WINE)
    for key in (
        "formula",
        "link",
        "nobs",
        "loglik",
        "aic",
        "bic",
        "converged",
        "niter",
        "max_grad",
        "cond_H",
    ):
        assert key in result
    assert result["formula"] == "rating ~ temp + contact"
    assert result["loglik"] == pytest.approx(-86.4919, abs=1e-4)
    assert result["aic"] == pytest.approx(184.9838, abs=1e-4)
    assert result["converged"] is True
    assert list(result["params"]) == ["1|2", "2|3", "3|4", "4|5", "temp[T.warm]", "contact[T.yes]"]
    warm = result["params"]["temp[T.warm]"]
    assert set(warm) == {"estimate", "se", "z", "p", "lower", "upper"}
    assert warm["estimate"] == pytest.approx(2.5031, abs=1e-4)
    assert warm["se"] == pytest.approx(0.5287, abs=1e-4)
    assert warm["lower"] < warm["estimate"] < warm["upper"]
    assert warm["z"] == pytest.approx(warm["estimate"] / warm["se"])


def test_json_names_the_aliased_columns_as_the_text_summary_does(capsys):
    """JSON left out a dropped column without a trace; the text notes it (R: fit$aliased)."""
    assert fit_json(capsys, *WINE)["aliased"] == {"location": [], "nominal": [], "scale": []}
    # contact is both a location and a nominal effect: R's clm gives its beta NA too
    argv = ["fit", "rating ~ temp + contact", "--data", "wine", "--nominal", "~ contact"]
    result = fit_json(capsys, *argv)
    assert result["aliased"] == {"location": ["contact[T.yes]"], "nominal": [], "scale": []}
    assert "contact[T.yes]" not in result["params"]
    code, out, _ = run(capsys, *argv)
    assert code == 0 and "Aliased columns dropped: contact[T.yes]." in out


def test_alpha_widens_intervals(capsys):
    narrow = fit_json(capsys, *WINE)["params"]["temp[T.warm]"]
    wide = fit_json(capsys, *WINE, "--alpha", "0.01")["params"]["temp[T.warm]"]
    assert wide["lower"] < narrow["lower"] and wide["upper"] > narrow["upper"]
    code, out, _ = run(capsys, *WINE, "--alpha", "0.1")
    assert code == 0 and "[0.05" in out and "0.95]" in out


def test_format_html(capsys):
    code, out, _ = run(capsys, *WINE, "--format", "html")
    assert code == 0
    assert "<table" in out and "temp[T.warm]" in out and "-86.4919" in out


def test_format_latex(capsys):
    code, out, _ = run(capsys, *WINE, "--format", "latex")
    assert code == 0
    assert "\\begin{tabular}" in out and "-86.4919" in out


# -- files -------------------------------------------------------------------


def test_csv_with_levels(capsys, tmp_path, housing):
    path = tmp_path / "housing.csv"
    housing.to_csv(path, index=False)
    result = fit_json(
        capsys,
        "fit",
        "Sat ~ Infl + Type + Cont",
        "--data",
        str(path),
        "--weights",
        "Freq",
        "--levels",
        "Low,Medium,High",
    )
    assert result["levels"] == ["Low", "Medium", "High"]
    assert list(result["params"])[:2] == ["Low|Medium", "Medium|High"]
    assert result["loglik"] == pytest.approx(-1739.5746, abs=1e-4)


def test_csv_levels_reverse_a_numeric_response(capsys, tmp_path, wine):
    path = tmp_path / "wine.csv"
    wine.astype({"rating": int}).to_csv(path, index=False)
    natural = fit_json(capsys, "fit", "rating ~ temp + contact", "--data", str(path))
    assert natural["levels"] == ["1", "2", "3", "4", "5"]
    assert natural["loglik"] == pytest.approx(-86.4919, abs=1e-4)
    reverse = fit_json(
        capsys, "fit", "rating ~ temp + contact", "--data", str(path), "--levels", "5,4,3,2,1"
    )
    assert next(iter(reverse["params"])) == "5|4"
    assert reverse["params"]["temp[T.warm]"]["estimate"] < 0


def test_parquet_keeps_ordered_categorical(capsys, tmp_path, housing):
    pytest.importorskip("pyarrow")
    housing = housing.copy()
    # an order that is neither alphabetical nor the order of appearance
    housing["Sat"] = housing["Sat"].cat.reorder_categories(["Medium", "Low", "High"])
    path = tmp_path / "housing.parquet"
    housing.to_parquet(path)
    result = fit_json(capsys, "fit", "Sat ~ Infl", "--data", str(path), "--weights", "Freq")
    assert result["levels"] == ["Medium", "Low", "High"]
    assert list(result["params"])[:2] == ["Medium|Low", "Low|High"]


def test_missing_values_warn_on_stderr(capsys, tmp_path, wine):
    wine = wine.copy()
    wine["temp"] = wine["temp"].astype(object)
    wine.loc[3, "temp"] = None
    path = tmp_path / "wine.csv"
    wine.to_csv(path, index=False)
    code, out, err = run(capsys, "fit", "rating ~ temp + contact", "--data", str(path))
    assert code == 0
    assert "No. Observations:                  71" in out
    assert err.startswith("ordstats: warning: 1 of 72 rows have missing")
    assert "'temp'" in err


# -- datasets and entry points -------------------------------------------------


def test_datasets_lists_names_and_descriptions(capsys):
    code, out, _ = run(capsys, "datasets")
    assert code == 0
    lines = out.splitlines()
    assert [line.split()[0] for line in lines] == ordstats.datasets.list_datasets()
    assert "Bitterness of wine" in out
    assert "Copenhagen housing" in out


def test_python_dash_m_ordstats():
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    proc = subprocess.run(
        [sys.executable, "-m", "ordstats", *WINE],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "-86.4919" in proc.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "ordstats", "fit", "rating ~ x", "--data", "wine"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert bad.returncode == 2
    assert bad.stderr.startswith("ordstats: error: ")
    assert "Traceback" not in bad.stderr


def test_version_and_help(capsys):
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.strip() == f"ordstats {ordstats.__version__}"
    code, out, _ = run(capsys, "fit", "--help")
    assert code == 0 and "--levels" in out


# -- errors ------------------------------------------------------------------


def test_error_missing_column(capsys):
    assert_error(
        capsys,
        ["fit", "rating ~ tmp + contact", "--data", "wine"],
        "'tmp'",
        "not a column",
        "Did you mean 'temp'",
    )


def test_error_missing_response(capsys):
    assert_error(capsys, ["fit", "score ~ temp", "--data", "wine"], "'score'", "not a column")


def test_error_missing_weights_column(capsys):
    assert_error(capsys, [*HOUSING[:4], "--weights", "Frq"], "'Frq'", "Did you mean 'Freq'")


def test_error_unordered_response_without_levels(capsys, tmp_path, housing):
    path = tmp_path / "housing.csv"
    housing.to_csv(path, index=False)
    err = assert_error(
        capsys, ["fit", "Sat ~ Infl", "--data", str(path)], "'Sat'", "no order", "--levels"
    )
    assert "High,Low,Medium" in err


def test_error_levels_missing_a_value(capsys, tmp_path, housing):
    path = tmp_path / "housing.csv"
    housing.to_csv(path, index=False)
    err = assert_error(
        capsys, ["fit", "Sat ~ Infl", "--data", str(path), "--levels", "Low,Medium"], "'High'"
    )
    # the flag as typed, not the API's levels=['Low', 'Medium']
    assert "not among --levels Low,Medium: 'High'" in err


def test_error_malformed_levels(capsys):
    assert_error(capsys, [*WINE, "--levels", "1,,2"], "--levels", "at least two")


@pytest.mark.parametrize("data", ["wine", "csv"])
def test_error_repeated_levels(capsys, tmp_path, data):
    """On the bundled wine data '--levels 1,1,2,3,4,5' was said to contradict its order."""
    if data == "csv":
        ordstats.datasets.load("wine").to_csv(tmp_path / "wine.csv", index=False)
        data = str(tmp_path / "wine.csv")
    argv = ["fit", "rating ~ temp", "--data", data, "--levels", "1,1,2,3,4,5"]
    err = assert_error(capsys, argv, "--levels lists '1' more than once")
    assert "contradicts" not in err


def test_error_missing_file(capsys, tmp_path):
    missing = tmp_path / "nope.csv"
    assert_error(capsys, ["fit", "y ~ x", "--data", str(missing)], str(missing), "does not exist")


def test_error_unknown_dataset(capsys):
    assert_error(
        capsys,
        ["fit", "y ~ x", "--data", "wines"],
        "'wines'",
        "wine, soup, housing",
        ".csv, .tsv, .txt or .parquet",
    )


def test_error_bad_formula(capsys):
    assert_error(capsys, ["fit", "rating temp", "--data", "wine"], "formula")


def test_error_unreadable_csv(capsys, tmp_path):
    path = tmp_path / "latin1.csv"
    path.write_bytes("rating,temp\n1,k\xe4lt\n2,warm\n".encode("latin-1"))
    assert_error(capsys, ["fit", "rating ~ temp", "--data", str(path)], "not UTF-8")


def test_error_parquet_without_pyarrow(capsys, tmp_path, monkeypatch):
    path = tmp_path / "data.parquet"
    path.write_bytes(b"PAR1")
    monkeypatch.setattr(cli, "find_spec", lambda name: None)
    assert_error(capsys, ["fit", "y ~ x", "--data", str(path)], "pyarrow", "pip install")


def test_error_corrupt_parquet(capsys, tmp_path):
    pytest.importorskip("pyarrow")
    path = tmp_path / "data.parquet"
    path.write_bytes(b"not parquet at all")
    assert_error(capsys, ["fit", "y ~ x", "--data", str(path)], "cannot read", "Parquet")


@pytest.mark.parametrize(
    "argv",
    [
        ["fit", "rating ~ temp", "--data", "wine", "--link", "logistic"],
        ["fit", "rating ~ temp", "--data", "wine", "--alpha", "1.5"],
        ["fit", "rating ~ temp"],
        [],
    ],
)
def test_bad_arguments_exit_2(capsys, argv):
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert "error:" in err and "Traceback" not in err


def test_load_data_reads_bundled_frame():
    frame = cli.load_data("wine")
    pd.testing.assert_frame_equal(frame, ordstats.datasets.load("wine"))


def test_other_warnings_pass_through_once(capsys):
    with pytest.warns(RuntimeWarning, match="not ours") as record:
        with cli._warnings_to(sys.stderr):
            warnings.warn("not ours", RuntimeWarning, stacklevel=1)
            warnings.warn("rows dropped", ordstats.errors.MissingDataWarning, stacklevel=1)
    assert len(record) == 1
    assert capsys.readouterr().err == "ordstats: warning: rows dropped\n"


def test_closed_pipe_gives_no_traceback():
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "ordstats", *WINE],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    proc.stdout.close()  # like `ordstats fit ... | head -0`
    _, err = proc.communicate()
    assert proc.returncode == 141
    assert b"Traceback" not in err and b"Exception ignored" not in err


def test_nominal_scale_and_flexible_link_flags(capsys):
    result = fit_json(
        capsys,
        "fit",
        "rating ~ temp",
        "--data",
        "wine",
        "--nominal",
        "~ contact",
        "--scale",
        "~ temp",
    )
    # clm(rating ~ temp, nominal = ~ contact, scale = ~ temp, data = wine)
    assert result["loglik"] == pytest.approx(-86.1324802809519, rel=1e-9)
    assert "1|2:contact[T.yes]" in result["params"]
    assert "scale:temp[T.warm]" in result["params"]
    code, out, _ = run(capsys, *WINE, "--link", "Aranda-Ordaz")
    assert code == 0 and "Link parameter (aranda-ordaz)" in out and "lambda" in out


def test_unknown_link_names_the_choices(capsys):
    assert_error(capsys, [*WINE, "--link", "logistic"], "unknown link 'logistic'", "'log-gamma'")


def test_robust_and_cluster_covariance_flags(capsys):
    plain = fit_json(capsys, *WINE)
    robust = fit_json(capsys, *WINE, "--cov-type", "robust")
    clustered = fit_json(capsys, *WINE, "--cluster", "judge")
    assert plain["cov_type"] == "nonrobust" and robust["cov_type"] == "robust"
    assert clustered["cov_type"] == "cluster"
    assert robust["loglik"] == plain["loglik"]
    # R: sqrt(diag(sandwich(fit))), sqrt(diag(vcovCL(fit, cluster = ~judge)))
    assert robust["params"]["temp[T.warm]"]["se"] == pytest.approx(0.485559543051, rel=1e-6)
    assert clustered["params"]["temp[T.warm]"]["se"] == pytest.approx(0.353901520951, rel=1e-6)
    code, out, _ = run(capsys, *WINE, "--cov-type", "robust")
    assert code == 0 and "robust (sandwich) covariance" in out


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (["--cov-type", "cluster"], "needs --cluster COL"),
        (["--cov-type", "robust", "--cluster", "judge"], "goes with --cov-type cluster"),
        (["--cluster", "jugde"], "'jugde' is not a column"),
    ],
)
def test_covariance_flag_errors(capsys, extra, fragment):
    assert_error(capsys, [*WINE, *extra], fragment)


def test_every_model_option_has_a_flag_with_the_options_default():
    from ordstats.cli import build_parser, model_options
    from ordstats.estimation.options import ModelOptions

    args = build_parser().parse_args(["fit", "rating ~ temp", "--data", "wine"])
    assert model_options(args) == ModelOptions()
    args = build_parser().parse_args(
        ["fit", "y ~ x", "--data", "d.csv", "--missing", "raise", "--many-levels"]
    )
    options = model_options(args)
    assert options.missing == "raise" and options.many_levels is True


def test_fit_random_intercept(capsys):
    code, out, _ = run(capsys, "fit", "rating ~ temp + contact + (1|judge)", "--data", "wine")
    assert code == 0
    assert "Cumulative Link Mixed Model" in out and "judge 9" in out
    result = fit_json(capsys, "fit", "rating ~ temp + contact + (1|judge)", "--data", "wine")
    assert result["loglik"] == pytest.approx(-81.5654127768, rel=1e-6)
    assert result["random_effects"][0]["sd"] == pytest.approx(1.13114, abs=1e-3)
    # the keys README lists for --format json (before: niter, max_grad, cond_H missing)
    assert {"niter", "max_grad", "cond_H", "n_rows", "cov_type", "alpha"} <= set(result)
    assert result["n_rows"] == 72 and result["max_grad"] < 1e-5 and result["cond_H"] > 1
    agq = fit_json(
        capsys, "fit", "rating ~ temp + contact + (1|judge)", "--data", "wine", "--nagq", "10"
    )
    assert agq["loglik"] == pytest.approx(-81.5324607116916, rel=1e-6)


def test_random_terms_bad_input(capsys):
    code, _, err = run(capsys, "fit", "rating ~ temp + (1|jdge)", "--data", "wine")
    assert code == 2 and "did you mean 'judge'" in err
    code, _, err = run(capsys, "fit", "rating ~ temp", "--data", "wine", "--nagq", "3")
    assert code == 2 and "random terms" in err
    code, _, err = run(
        capsys, "fit", "rating ~ temp + (1|judge)", "--data", "wine", "--cov-type", "robust"
    )
    assert code == 2 and "not available with random effects" in err


#: CLI flags and the API call they stand for (data: wine, unless a spec names housing)
SUMMARY_SPECS = {
    "probit": (["--link", "probit"], {"link": "probit"}, {}),
    "log-gamma, alpha": (["--link", "log-gamma", "--alpha", "0.1"], {"link": "log-gamma"}, {}),
    "nominal, scale": (
        ["--nominal", "~ judge", "--scale", "~ temp"],
        {"nominal": "~ judge", "scale": "~ temp"},
        {},
    ),
    "fixed cut-points": (["--threshold=0.5,1.5,2.5,3.5"], {"threshold": [0.5, 1.5, 2.5, 3.5]}, {}),
    "symmetric": (["--threshold", "symmetric"], {"threshold": "symmetric"}, {}),
    "sratio, reverse": (
        ["--family", "sratio", "--reverse"],
        {"family": "sratio", "reverse": True},
        {},
    ),
    "cratio, expected": (
        ["--family", "cratio", "--cov-type", "expected"],
        {"family": "cratio"},
        {"cov_type": "expected"},
    ),
    "housing, weights": (["--weights", "Freq"], {"weights": "Freq"}, {}),
}


@pytest.mark.parametrize("spec", SUMMARY_SPECS)
def test_the_printed_summary_is_the_api_s(capsys, spec):
    # every line of it, R's "data:" line included (the CLI printed none)
    flags, options, fit_options = SUMMARY_SPECS[spec]
    name, formula = ("wine", "rating ~ temp + contact")
    if spec.startswith("housing"):
        name, formula = ("housing", "Sat ~ Infl + Type + Cont")
    data = ordstats.datasets.load(name)
    code, out, err = run(capsys, "fit", formula, "--data", name, *flags)
    assert code == 0, err
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ordstats.OrdstatsWarning)
        res = ordstats.OrdinalModel.from_formula(formula, data, **options).fit(**fit_options)
    alpha = float(flags[flags.index("--alpha") + 1]) if "--alpha" in flags else 0.05
    assert out.rstrip("\n") == str(res.summary(alpha=alpha)).replace(
        "data:    data", f"data:    {name}"
    )
    assert f"data:    {name}" in out


def test_collinear_keep_reaches_the_model_the_warning_points_to(capsys):
    # the warning of a location column that is also a nominal effect says "--collinear
    # keep" estimates both under symmetric2 thresholds; the flag refused "keep"
    argv = ["fit", "rating ~ temp", "--data", "wine", "--nominal", "~ temp"]
    argv += ["--threshold", "symmetric2"]
    code, _, err = run(capsys, *argv)
    assert code == 0 and "--collinear keep estimates both" in err
    assert "not with --threshold symmetric2, whose" in err
    result = fit_json(capsys, *argv, "--collinear", "keep")
    wine = ordstats.datasets.load("wine")
    res = ordstats.OrdinalModel.from_formula(
        "rating ~ temp", wine, nominal="~ temp", threshold="symmetric2", collinear="keep"
    ).fit()
    assert result["loglik"] == pytest.approx(res.llf, rel=1e-12)
    assert result["params"]["temp[T.warm]"]["estimate"] == pytest.approx(res.params["temp[T.warm]"])


def test_an_abbreviated_option_is_refused_not_taken_for_the_full_one(capsys):
    """argparse took --odds-ratio for --odds-ratios; a shortened flag is a typo."""
    wine = ["fit", "rating ~ temp", "--data", "wine"]
    for extra in (["--odds-ratio"], ["--thresh", "equidistant"]):
        code, out, err = run(capsys, *wine, *extra)
        assert code == 2 and out == ""
        assert f"ordstats: error: unrecognized arguments: {extra[0]}" in err
