"""emmeans semantics against R's emmeans 1.8.4 (tests/r/emmeans_refs.R, vendored JSON).

Every recorded R call is translated into the Python API and its table compared:
estimates to 1e-8 relative, standard errors, intervals, z and p-values to 1e-6
relative (clm fits by ordstats; polr at R's own coef and vcov, whose optimum
and numerical Hessian differ from clm's at ~1e-6).  ``adjust = "mvt"`` p-values
and critical values are compared with R's high-precision recomputation
(``mvt_precise``, mvtnorm at abseps 1e-6) to 1e-4 (ours are exact for a correlation
of rank 1 or 2, quasi-Monte-Carlo to ~1e-5 beyond; mvtnorm's "precise" values on
singular correlations differ from a 2e7-draw simulation by up to ~2 of its SEs) and
with emmeans' own Monte-Carlo values (abseps 1e-3) to 3e-3.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats.results.margins.emmeans import EmmGrid, emmeans, joint_tests

REFERENCE = Path(__file__).parent / "data" / "reference" / "emmeans"
R_DATASETS = Path(__file__).parent / "data" / "r_datasets"

# R calls whose result is not emmeans' definition but an emmeans quirk: with mode =
# "mean.class" emmeans loses the cell counts and warns "'weights' requested but no
# weighting information is available", averaging with equal weights.
QUIRKS = re.compile(r'mode = "mean.class", weights|weights = "proportional", mode = "mean.class"')
# Where emmeans 1.8.4 is wrong: for polr(method = "loglog") its probability modes (and the
# regrid of linear predictors) use an inverse link that is not polr's (cumulative
# probabilities below 0 and above 1, e.g. -0.433 and 1.071 for Sat <= Low/Medium | Type);
# its latent and linear-predictor means and their contrasts agree with ordstats.
R_WRONG = {
    "polr_housing_loglog": re.compile(r'mode = "(cum\.prob|exc\.prob|prob|mean\.class)"|^regrid')
}


# -- fits ------------------------------------------------------------------------------


def _load(dataset: str) -> pd.DataFrame:
    if dataset == "wine_binary":
        meta = json.loads((R_DATASETS / "wine_binary.levels.json").read_text())
        data = pd.read_csv(R_DATASETS / "wine_binary.csv", dtype={"judge": str})
        for name, levels in {**meta["ordered"], **meta["factors"]}.items():
            data[name] = pd.Categorical(
                data[name].astype(str), categories=levels, ordered=name in meta["ordered"]
            )
        return data
    if dataset == "wine_weighted":  # tests/r/emmeans_refs.R: prior weights 1..4
        data = _load("wine_binary")
        return data.assign(w=1 + np.floor(data["z2"] + 2))
    return ordstats.datasets.load(dataset)


_FITS: dict[str, Any] = {}

_PYTHON_FITS = {
    "clm_wine": ("rating ~ temp + contact", {}),
    "polr_wine": ("rating ~ temp + contact", {}),
    "clm_wine_interaction": ("rating ~ temp * contact", {}),
    "clm_wine_z1": ("rating ~ temp + contact + z1", {}),
    "clm_wine_scale": ("rating ~ temp + contact", {"scale": "~ temp"}),
    "clm_wine_nominal": ("rating ~ temp", {"nominal": "~ contact"}),
    "clm_housing": ("Sat ~ Infl + Type + Cont", {"weights": "Freq"}),
    "polr_housing": ("Sat ~ Infl + Type + Cont", {"weights": "Freq"}),
    "clm_soup": ("SURENESS ~ PROD + DAY + GENDER", {}),
    "clm_soup_scale": ("SURENESS ~ PROD", {"scale": "~ PROD"}),
    "clmm_wine": ("rating ~ temp + contact + (1|judge)", {}),
    "clmm_soup": ("SURENESS ~ PROD + (1|RESP)", {}),
    "polr_housing_probit": ("Sat ~ Infl + Type + Cont", {"weights": "Freq", "link": "probit"}),
    "polr_housing_cloglog": ("Sat ~ Infl + Type + Cont", {"weights": "Freq", "link": "cloglog"}),
    "polr_housing_cauchit": ("Sat ~ Infl + Type + Cont", {"weights": "Freq", "link": "cauchit"}),
    "polr_housing_loglog": ("Sat ~ Infl + Type + Cont", {"weights": "Freq", "link": "loglog"}),
    "polr_wine_offset": ("rating ~ temp + contact + offset(z1)", {}),
    "clm_wine_weights": ("rating ~ temp + contact", {"weights": "w"}),
    "clm_wine_z1_grid": ("rating ~ temp + contact + z1", {}),
    "clm_wine_scale_offset": ("rating ~ temp + contact", {"scale": "~ contact + offset(z2)"}),
    "clmm_wine_contrasts": ("rating ~ temp * contact + (1|judge)", {}),
}


def _reference(case: str) -> dict[str, Any]:
    return json.loads((REFERENCE / f"{case}.json").read_text())


def _fit(case: str) -> Any:
    if case not in _FITS:
        ref = _reference(case)
        formula, options = _PYTHON_FITS[case]
        model = ordstats.OrdinalModel.from_formula(formula, data=_load(ref["dataset"]), **options)
        _FITS[case] = model.fit()
    return _FITS[case]


# -- a small reader of the R calls ------------------------------------------------------------


def _split_args(text: str) -> list[str]:
    args, depth, quoted, start = [], 0, False, 0
    for i, ch in enumerate(text):
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch == "(":
            depth += 1
        elif not quoted and ch == ")":
            depth -= 1
        elif not quoted and ch == "," and depth == 0:
            args.append(text[start:i].strip())
            start = i + 1
    args.append(text[start:].strip())
    return [a for a in args if a]


def _call(text: str) -> tuple[str, list[str], dict[str, str]]:
    match = re.fullmatch(r"([\w.]+)\((.*)\)", text.strip(), flags=re.S)
    assert match, text
    positional, named = [], {}
    for arg in _split_args(match.group(2)):
        kw = re.fullmatch(r"([\w.]+)\s*=\s*(.*)", arg, flags=re.S)
        if kw and not arg.startswith("~"):
            named[kw.group(1)] = kw.group(2)
        else:
            positional.append(arg)
    return match.group(1), positional, named


def _value(text: str) -> Any:
    text = text.strip()
    if text.startswith('"'):
        return text.strip('"')
    if text.startswith("c("):
        return [_value(v) for v in _split_args(text[2:-1])]
    if text.startswith("list("):
        _, _, named = _call(text)
        return {k: _value(v) for k, v in named.items()}
    if text in ("median", "mean"):
        return text
    if text == "range":
        return lambda x: [np.min(x), np.max(x)]
    return float(text)


@dataclass(frozen=True)
class _Level:
    """R's ``update(obj, level = ...)``: the result summarised at another confidence level."""

    result: EmmGrid
    level: float


def _run(text: str, fit: Any, params: Any, cov: Any) -> Any:
    name, positional, named = _call(text)
    if name == "update":
        return _Level(_run(positional[0], fit, params, cov), _value(named["level"]))
    if name == "joint_tests":
        by = _value(named["by"]) if "by" in named else None
        return joint_tests(fit, by=by, params=params, cov=cov)
    if name == "emmeans":
        spec = positional[1]
        spec = spec.strip('"') if spec.startswith('"') else spec
        options: dict[str, Any] = {"specs": spec, "params": params, "cov": cov}
        for key, py in (("mode", "mode"), ("weights", "weights"), ("by", "by"), ("at", "at")):
            if key in named:
                options[py] = _value(named[key])
        if "at" in options:
            options["at"] = {
                k: (v if isinstance(v, list) else [v]) for k, v in options["at"].items()
            }
        if "cov.reduce" in named:
            options["cov_reduce"] = _value(named["cov.reduce"])
        return emmeans(fit, **options)
    inner = _run(positional[0], fit, params, cov)
    if name == "regrid":
        return inner.regrid()
    adjust = _value(named.get("adjust", '"none"'))
    if name == "pairs":
        by = None
        if "simple" in named:  # simple = "temp": compare temp within the other variables
            simple = _value(named["simple"])
            by = [c for c in inner.labels.columns if c != simple]
        return inner.pairs(adjust=adjust, by=by)
    method = _value(named["method"])
    ref = int(_value(named["ref"])) - 1 if "ref" in named else 0
    return inner.contrast(method, adjust=adjust, ref=ref)


# -- the comparison ------------------------------------------------------------------------------


def _numbers(values: list[Any]) -> np.ndarray:
    missing = ("NA", "NaN")
    return np.array(
        [np.inf if v == "Inf" else np.nan if v in missing else v for v in values], float
    )


def _compare(call: dict[str, Any], result: Any, estimate_rtol: float, se_rtol: float) -> None:
    table = call["table"]["columns"]
    level = 0.95
    if isinstance(result, _Level):
        result, level = result.result, result.level
    if isinstance(result, EmmGrid):
        frame = result.summary_frame(conf_level=level)
        assert frame.attrs["adjust"] == call["adjust"], (frame.attrs["adjust"], call["adjust"])
    else:
        frame = result
    names = call["table"]["names"]
    assert list(frame.columns) == names, (list(frame.columns), names)
    estimate = call["estimate_column"]
    for name in names:
        expected, got = table[name], frame[name].to_numpy()
        if isinstance(expected[0], str) and expected[0] not in ("Inf", "NA", "NaN"):
            assert [str(v) for v in got] == expected, name
            continue
        want = _numbers(expected)
        if name == "F.ratio":  # emmeans rounds F to 3 decimals
            bound = np.maximum(5.1e-4, se_rtol * np.abs(want))
            assert np.all(np.abs(got - want) <= bound), (got, want)
        elif name == estimate:
            scale = np.max(np.abs(want))
            np.testing.assert_allclose(got, want, rtol=estimate_rtol, atol=estimate_rtol * scale)
        elif name == "p.value" and call.get("adjust") == "mvt":
            precise = np.array(call["mvt_precise"]["p_value"])
            np.testing.assert_allclose(got, precise, atol=1e-4, err_msg="mvt vs precise")
            np.testing.assert_allclose(got, want, atol=3e-3, err_msg="mvt vs emmeans")
        elif name in ("asymp.LCL", "asymp.UCL") and call.get("adjust") == "mvt":
            np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3 * np.max(np.abs(want)))
        elif name == "p.value":
            np.testing.assert_allclose(got, want, rtol=se_rtol * 10, atol=1e-12, err_msg=name)
        else:
            scale = np.max(np.abs(want[np.isfinite(want)]), initial=0.0)
            atol = max(se_rtol * scale, 1e-14)
            np.testing.assert_allclose(got, want, rtol=se_rtol, atol=atol, err_msg=name)


def _cases(case: str) -> list[Any]:
    ref = _reference(case)
    out = []
    for call in ref["calls"]:
        text = call["r_call"]
        if text.startswith("ref_grid") or QUIRKS.search(text):
            continue
        if case in R_WRONG and R_WRONG[case].search(text):
            continue
        out.append(pytest.param(case, text, id=f"{case}: {text}"))
    return out


def _at_r_estimates(case: str) -> tuple[Any, Any]:
    """R's coef and vcov in ordstats' order (polr: its optimum, not clm's).

    clmm: R's coef has no ST1 (log SD), its vcov has it last, as ordstats'
    parameters; emmeans' predictions (random effects at zero) do not depend on it,
    so ordstats' own value fills it in.
    """
    ref = _reference(case)
    params = np.array(list(ref["coef"].values()), dtype=float)
    cov = np.array(ref["vcov"], dtype=float)
    if params.size < cov.shape[0]:
        own = _fit(case).margins_params()
        params = np.concatenate([params, own[params.size :]])
    return params, cov


CLM_CASES = ["clm_wine", "clm_wine_interaction", "clm_wine_z1", "clm_housing", "clm_soup"]
CLM_CASES += ["clm_wine_nominal", "clm_wine_scale", "clm_soup_scale"]
CLM_CASES += ["clm_wine_weights", "clm_wine_z1_grid", "clm_wine_scale_offset"]
POLR_CASES = ["polr_wine", "polr_housing", "polr_wine_offset"]
POLR_CASES += [f"polr_housing_{link}" for link in ("probit", "cloglog", "cauchit", "loglog")]
CLMM_CASES = ["clmm_wine", "clmm_soup", "clmm_wine_contrasts"]


@pytest.mark.parametrize(("case", "r_call"), [c for k in CLM_CASES for c in _cases(k)])
def test_clm_against_r(case: str, r_call: str) -> None:
    call = next(c for c in _reference(case)["calls"] if c["r_call"] == r_call)
    result = _run(r_call, _fit(case), None, None)
    _compare(call, result, estimate_rtol=1e-8, se_rtol=1e-6)


@pytest.mark.parametrize(
    ("case", "r_call"), [c for k in POLR_CASES + CLMM_CASES for c in _cases(k)]
)
def test_polr_against_r_at_r_estimates(case: str, r_call: str) -> None:
    call = next(c for c in _reference(case)["calls"] if c["r_call"] == r_call)
    params, cov = _at_r_estimates(case)
    result = _run(r_call, _fit(case), params, cov)
    _compare(call, result, estimate_rtol=1e-8, se_rtol=1e-6)


@pytest.mark.parametrize(("case", "r_call"), [c for k in CLMM_CASES for c in _cases(k)])
def test_clmm_against_r_own_fit(case: str, r_call: str) -> None:
    """With ordstats' own clmm fit: 1e-3 (R's vcov is the inverse of a numerical Hessian)."""
    call = next(c for c in _reference(case)["calls"] if c["r_call"] == r_call)
    result = _run(r_call, _fit(case), None, None)
    _compare(call, result, estimate_rtol=1e-3, se_rtol=1e-3)


def test_emmeans_issue_154_clmm_wine() -> None:
    """emmeans #154: clmm wine, P(rating | temp) with random effects at zero."""
    table = _fit("clmm_wine").emmeans("~ rating | temp", mode="prob").summary_frame()
    cold = table[table["temp"] == "cold"]
    np.testing.assert_allclose(cold["prob"].to_numpy()[:2], [0.09761, 0.52233], atol=5e-5)
    np.testing.assert_allclose(cold["SE"].to_numpy()[:2], [0.05626, 0.09102], atol=5e-5)
