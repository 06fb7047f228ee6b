"""What an R user reaches for on the command line: ``--subset``, ``--ci profile``,
``--re-form``, and the covariance flags on commands that use no covariance."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats import cli
from tests import _reference

WINE = ["fit", "rating ~ temp + contact", "--data", "wine"]
HOUSING = ["fit", "Sat ~ Infl + Type", "--data", "housing", "--weights", "Freq"]
MIXED = "rating ~ temp + contact + (1|judge)"


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def fit_json(capsys, *argv):
    code, out, err = run(capsys, *argv, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def error(capsys, *argv):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "", err
    assert err.startswith("ordstats: error: ") and "Traceback" not in err
    return err


# -- --subset ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("case", "argv"), [("wine", WINE), ("housing", HOUSING)])
def test_subset_fits_r_s_subset(capsys, case, argv):
    """Before: no --subset; the fit equals R's clm(..., subset = ...) (tests/r/cli_subset.R)."""
    ref = _reference.load("cli_subset")[case]
    payload = fit_json(capsys, *argv, "--subset", ref["query"])
    estimates = [entry["estimate"] for entry in payload["params"].values()]
    np.testing.assert_allclose(estimates, list(ref["coef"].values()), rtol=1e-6, atol=1e-8)
    assert payload["loglik"] == pytest.approx(ref["logLik"], rel=1e-9)
    assert payload["nobs"] == ref["nobs"]


def test_subset_on_links_compare_and_predict_is_the_api_s(capsys, wine, tmp_path):
    query = "judge != '1' and bottle != '8'"
    fit = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine, subset=query).fit()
    new = wine.head(3)[["temp", "contact"]]
    path = str(tmp_path / "new.csv")
    new.to_csv(path, index=False)
    code, out, err = run(
        capsys, "predict", "rating ~ temp + contact", "--data", "wine", "--newdata", path,
        "--subset", query,
    )  # fmt: skip
    assert code == 0, err
    got = pd.read_csv(io.StringIO(out), index_col="row")
    np.testing.assert_allclose(got.to_numpy(), fit.predict(new).to_numpy(), rtol=1e-10)

    small = ordstats.OrdinalModel.from_formula("rating ~ temp", wine, subset=query).fit()
    code, out, err = run(
        capsys, "compare", "rating ~ temp + contact", "rating ~ temp", "--data", "wine",
        "--subset", query,
    )  # fmt: skip
    assert code == 0, err
    assert str(ordstats.lr_test(small, fit)) in out

    code, out, err = run(
        capsys, "links", "rating ~ temp + contact", "--data", "wine", "--links",
        "logit,probit", "--subset", query,
    )  # fmt: skip
    assert code == 0, err
    expected = ordstats.compare_links(
        "rating ~ temp + contact", wine, ["logit", "probit"], subset=query
    )
    assert out.strip() == str(expected).strip()


def test_subset_errors_name_the_flag(capsys):
    err = error(capsys, *WINE, "--subset", "judg != 1")
    assert "--subset 'judg != 1'" in err and "'judg'" in err
    assert "subset=" not in err and "@name" not in err  # the command line has no caller
    err = error(capsys, *WINE, "--subset", "judge == '99'")
    assert "--subset selects no row" in err


# -- --ci profile ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("case", "argv"),
    [
        ("clm_wine_logit", WINE),
        ("clm_wine_probit", [*WINE, "--link", "probit"]),
        ("clm_soup_logit", ["fit", "SURENESS ~ PROD + DAY + GENDER", "--data", "soup"]),
    ],
)
def test_ci_profile_gives_r_s_confint_beside_wald(capsys, case, argv):
    """Before: --ci did not exist; JSON adds R's profile intervals, keeping the Wald ones."""
    payload = fit_json(capsys, *argv, "--ci", "profile")
    assert payload["ci"] == "profile"
    ref = _reference.load(case)
    for r_name, (lower, upper) in ref["profile_ci"].items():
        name = next(n for n in payload["params"] if _reference.r_name(n) == r_name)
        entry = payload["params"][name]
        assert entry["profile_lower"] == pytest.approx(lower, rel=1e-4)
        assert entry["profile_upper"] == pytest.approx(upper, rel=1e-4)
        assert entry["lower"] != pytest.approx(lower, rel=1e-4)  # Wald stays beside it


def test_ci_profile_text_and_html_show_the_api_s_intervals(capsys, wine):
    res = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    expected = res.conf_int(0.1, method="profile")
    code, out, err = run(capsys, *WINE, "--ci", "profile", "--alpha", "0.1")
    assert code == 0, err
    assert "[0.05" in out  # the Wald table is still there
    table = out.split("Profile likelihood intervals (90%)\n")[1]
    rows = {line.rsplit(None, 2)[0]: line.rsplit(None, 2)[1:] for line in table.splitlines()[1:]}
    for name, (lower, upper) in expected.iterrows():
        assert rows[name] == [f"{lower:.4f}", f"{upper:.4f}"]
    code, out, err = run(capsys, *WINE, "--ci", "profile", "--format", "html")
    assert code == 0 and "<h3>Profile likelihood intervals (95%)</h3>" in out


def test_ci_profile_refusals(capsys):
    err = error(capsys, "fit", MIXED, "--data", "wine", "--ci", "profile")
    assert "--ci profile is not available with random effects" in err
    assert "conf_int" not in err
    assert "--format text, html or json" in error(
        capsys, *WINE, "--ci", "profile", "--format", "latex"
    )


# -- --cov-type and --cluster where no covariance is used --------------------------------------


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["links", "rating ~ temp", "--data", "wine"], "use log-likelihoods only"),
        (
            ["compare", "rating ~ temp + contact", "rating ~ temp", "--data", "wine"],
            "likelihood-ratio test",
        ),
        (["predict", "rating ~ temp", "--data", "wine", "--newdata", "wine"], "point predictions"),
    ],
)
@pytest.mark.parametrize("flags", [["--cov-type", "robust"], ["--cluster", "judge"]])
def test_covariance_flags_are_refused_where_nothing_uses_them(capsys, argv, fragment, flags):
    """Before: argparse's 'unrecognized arguments'; now a reason."""
    err = error(capsys, *argv, *flags)
    assert f"{flags[0]} would change nothing" in err and fragment in err


# -- predict with random effects ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("choice", "re_form"), [(None, None), ("conditional", None), ("0", 0), ("marginal", "marginal")]
)
def test_predict_mixed_says_and_offers_which_predictions(capsys, wine, tmp_path, choice, re_form):
    """Before: conditional predictions, silently (and no way to ask for population-level ones)."""
    new = wine.head(4)[["temp", "contact", "judge"]]
    new.to_csv(tmp_path / "new.csv", index=False)
    argv = ["predict", MIXED, "--data", "wine", "--newdata", str(tmp_path / "new.csv")]
    code, out, err = run(capsys, *argv, *([] if choice is None else ["--re-form", choice]))
    assert code == 0, err
    assert ("predictions are conditional" in err) == (choice is None)
    res = ordstats.OrdinalModel.from_formula(MIXED, wine).fit()
    expected = res.predict(pd.read_csv(tmp_path / "new.csv"), re_form=re_form)
    got = pd.read_csv(io.StringIO(out), index_col="row")
    np.testing.assert_allclose(got.to_numpy(), expected.to_numpy(), rtol=1e-8)


def test_re_form_without_random_terms_is_refused(capsys):
    err = error(
        capsys, "predict", "rating ~ temp", "--data", "wine", "--newdata", "wine", "--re-form", "0"
    )
    assert "--re-form needs random terms" in err


# -- non-numeric weights -----------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["--weights", "--offset"])
def test_text_weights_name_the_flag_and_the_column(capsys, flag):
    """Before: 'weights must be numeric; got dtype category', naming neither."""
    err = error(capsys, *WINE, flag, "temp")
    assert f"{flag} temp: the column 'temp' must be numeric" in err and "category" in err


def test_predict_mixed_refuses_what_it_cannot_predict_before_any_note(capsys):
    err = error(
        capsys, "predict", MIXED, "--data", "wine", "--newdata", "wine", "--which", "linear"
    )
    assert "--which linear is not available with random terms" in err
    assert "note:" not in err and "which=" not in err


def test_ci_profile_of_a_penalised_fit_is_refused_in_flag_terms(capsys):
    """Before (with --ci profile): the message named conf_int(method='profile') and model.fit()."""
    err = error(capsys, *WINE, "--ci", "profile", "--penalty", "firth")
    assert "--ci profile refits the model without its penalty" in err
    assert "drop --penalty" in err and "conf_int" not in err and "model.fit" not in err


@pytest.mark.parametrize("query", ["response", "response.mean()"])
def test_a_subset_that_is_not_a_condition_gets_command_line_advice(capsys, query):
    """Before: the API's advice (data.iloc[...], a boolean Series, a function of the data)."""
    err = error(capsys, *WINE, "--subset", query)
    assert "--subset must be a condition, true or false on each row" in err
    assert "iloc" not in err and "function" not in err and "Series" not in err
