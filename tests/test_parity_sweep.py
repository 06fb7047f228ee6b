"""Parity with R on data sets the other references do not use (tests/r/parity_sweep.R).

Each case of ``tests/data/reference/parity`` holds R's exact call; ``CASES`` gives
the ordstats spelling of the same model.  Estimates and log-likelihoods agree to
1e-6 relative, standard errors to 1e-4, unless a case says why not (``stops_short``,
``rtol_se``, :func:`reference`).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pytest

import ordstats
from tests import _reference as ref
from tests._parity import PARITY, dataset, load

RTOL_ESTIMATE = 1e-6
RTOL_SE = 1e-4


@dataclass(frozen=True)
class Spec:
    """The ordstats spelling of one R call."""

    data: str
    formula: str
    kind: str = "clm"  # clm, polr, vglm, clmm
    kwargs: dict[str, Any] = field(default_factory=dict)
    rows: Callable[[pd.DataFrame], Any] | None = None  # R's subset= / subset(data, ...)
    offset: Callable[[pd.DataFrame], Any] | None = None
    #: R's optimiser stopped short of the optimum (polr's and clmm's default
    #: tolerances): only the log-likelihoods are compared, ours at least as high;
    #: the case's ``_tight`` twin is compared in full
    stops_short: bool = False
    #: relative tolerance of the standard errors (polr's are from a numerical Hessian)
    rtol_se: float = RTOL_SE


#: polr's optim (BFGS) stops at its default reltol, up to ~2e-3 relative from the optimum
#: in the estimates (Cars93); clmm's default inner tolerance (gradTol = 1e-4 for the
#: conditional modes) leaves its Laplace log-likelihood up to 2e-5 relative below the
#: optimum (Cars93: -76.250426, with gradTol = 1e-8 -76.248888, ordstats -76.248887).
#: polr's standard errors come from optimHess (finite differences of the gradient): up
#: to 3e-4 relative from the analytic ones (MASS survey, Pulse); clm's of the same model
#: (clm_survey_smoke_ordered) agree to 1e-4.
RTOL_POLR_SE = 1e-3
#: clmm's standard errors: R's vcov and the independent optimum's are numDeriv
#: Hessians (Richardson, r = 2 for n > 500); ordstats' are forward differences of
#: the analytic gradient, which central differences of ordstats' log-likelihood
#: reproduce to 3e-5 (soup).  The two differ by up to 5e-4 relative (soup thresholds).
RTOL_CLMM_SE = 1e-3

PNEUMO = "severity ~ log(`exposure.time`)"
POSITIVE_COUNT = lambda d: d["count"] > 0  # noqa: E731  VGAM refuses zero weights

CASES: dict[str, Spec] = {
    "clm_housing_ordered_infl": Spec(
        "housing_ordinf", "Sat ~ Infl + Type + Cont", kwargs={"weights": "Freq"}
    ),
    "clm_housing_unused_level": Spec(
        "housing_ordinf", "Sat ~ Infl4 + Type + Cont", kwargs={"weights": "Freq"}
    ),
    "clm_housing_ordered_no_intercept": Spec(
        "housing_ordinf", "Sat ~ 0 + Infl + Type", kwargs={"weights": "Freq"}
    ),
    "clm_housing_ordered_interaction": Spec(
        "housing_ordinf", "Sat ~ Infl * Cont", kwargs={"weights": "Freq"}
    ),
    "clm_housing_ordered_nominal": Spec(
        "housing_ordinf", "Sat ~ Type", kwargs={"weights": "Freq", "nominal": "~ Infl"}
    ),
    "clm_housing_ordered_treatment": Spec(
        "housing_ordinf", "Sat ~ C(Infl, contr.treatment) + Type + Cont", kwargs={"weights": "Freq"}
    ),
    "clmm_housing_ordered_infl": Spec(
        "housing_ordinf",
        "Sat ~ Infl + Cont + (1 | Type)",
        "clmm",
        {"weights": "Freq"},
        stops_short=True,
    ),
    "clmm_housing_ordered_infl_tight": Spec(
        "housing_ordinf",
        "Sat ~ Infl + Cont + (1 | Type)",
        "clmm",
        {"weights": "Freq"},
        rtol_se=RTOL_CLMM_SE,
    ),
    **{
        f"clm_pneumo_{link}": Spec("pneumo", PNEUMO, kwargs={"weights": "count", "link": link})
        for link in ("logit", "probit", "cloglog", "loglog", "cauchit")
    },
    "clm_pneumo_equidistant": Spec(
        "pneumo", PNEUMO, kwargs={"weights": "count", "threshold": "equidistant"}
    ),
    "clm_pneumo_nominal": Spec(
        "pneumo", "severity ~ 1", kwargs={"weights": "count", "nominal": "~ log(`exposure.time`)"}
    ),
    "clm_pneumo_scale": Spec(
        "pneumo", PNEUMO, kwargs={"weights": "count", "scale": "~ log(`exposure.time`)"}
    ),
    "polr_pneumo": Spec("pneumo", PNEUMO, "polr", {"weights": "count"}, stops_short=True),
    "polr_pneumo_tight": Spec("pneumo", PNEUMO, "polr", {"weights": "count"}, rtol_se=RTOL_POLR_SE),
    **{
        f"vglm_pneumo_{family}_{kind}": Spec(
            "pneumo",
            PNEUMO if kind == "parallel" else "severity ~ 1",
            "vglm",
            {
                "weights": "count",
                "family": family,
                **({} if kind == "parallel" else {"nominal": "~ log(`exposure.time`)"}),
            },
            rows=POSITIVE_COUNT,
        )
        for family in ("cumulative", "acat", "sratio", "cratio")
        for kind in ("parallel", "nonparallel")
    },
    # VGAM's cumulative(reverse = TRUE) is clm's model with intercepts -theta (see vglm_signs)
    "vglm_pneumo_cumulative_reverse": Spec(
        "pneumo", PNEUMO, "vglm", {"weights": "count"}, rows=POSITIVE_COUNT
    ),
    "clm_survey_smoke_ordered": Spec("survey_students", "Exer ~ Sex + Smoke + Pulse"),
    "clm_survey_interaction_probit": Spec(
        "survey_students", "Exer ~ Sex * Age + Smoke", kwargs={"link": "probit"}
    ),
    "clm_survey_smoke_response": Spec("survey_students", "Smoke ~ Exer + Sex + Age"),
    "clm_survey_smoke_symmetric": Spec(
        "survey_students", "Smoke ~ Exer + Sex", kwargs={"threshold": "symmetric"}
    ),
    "clm_survey_smoke_equidistant": Spec(
        "survey_students",
        "Smoke ~ Exer + Sex",
        kwargs={"threshold": "equidistant", "link": "cloglog"},
    ),
    "clm_survey_nominal_scale": Spec(
        "survey_students", "Exer ~ Age + Smoke", kwargs={"nominal": "~ Sex", "scale": "~ Smoke"}
    ),
    "clm_survey_subset": Spec(
        "survey_students", "Exer ~ Smoke + Age", rows=lambda d: d["Sex"] == "Female"
    ),
    "clm_survey_no_intercept": Spec("survey_students", "Exer ~ 0 + Smoke + Sex"),
    "clm_survey_squared": Spec("survey_students", "Exer ~ Age + I(Age^2) + Sex"),
    "clm_survey_poly": Spec("survey_students", "Exer ~ poly(Age, 2) + Sex"),
    "clm_survey_scale_x": Spec("survey_students", "Exer ~ scale(Age) + Pulse"),
    "clm_survey_offset": Spec("survey_students", "Exer ~ Sex", offset=lambda d: d["Age"] / 10),
    "polr_survey": Spec("survey_students", "Exer ~ Sex + Smoke + Pulse", "polr", stops_short=True),
    "polr_survey_tight": Spec(
        "survey_students", "Exer ~ Sex + Smoke + Pulse", "polr", rtol_se=RTOL_POLR_SE
    ),
    "clm_esoph_alcohol": Spec("esoph", "alcgp ~ agegp + tobgp", kwargs={"weights": "ncontrols"}),
    "clm_esoph_tobacco_cloglog": Spec(
        "esoph", "tobgp ~ agegp", kwargs={"weights": "ncases", "link": "cloglog"}
    ),
    "clm_esoph_interaction": Spec(
        "esoph", "alcgp ~ agegp + tobgp:ncases", kwargs={"weights": "ncontrols"}
    ),
    "polr_esoph": Spec(
        "esoph", "alcgp ~ agegp + tobgp", "polr", {"weights": "ncontrols"}, rtol_se=RTOL_POLR_SE
    ),
    "vglm_esoph_acat": Spec(
        "esoph",
        "alcgp ~ tobgp",
        "vglm",
        {"weights": "ncontrols", "family": "acat"},
        rows=lambda d: d["ncontrols"] > 0,
    ),
    "clm_warpbreaks_poly": Spec("warpbreaks", "tension ~ poly(breaks, 2) + wool"),
    "clm_warpbreaks_log_interaction": Spec(
        "warpbreaks", "tension ~ wool * log(breaks)", kwargs={"link": "probit"}
    ),
    "clm_cars93": Spec("cars93", "AirBags ~ Price + Origin + log(Horsepower)"),
    "clm_cars93_scale": Spec("cars93", "AirBags ~ Price + Origin", kwargs={"scale": "~ Origin"}),
    "polr_cars93": Spec(
        "cars93", "AirBags ~ Price + Origin + `MPG.city`", "polr", stops_short=True
    ),
    "polr_cars93_tight": Spec(
        "cars93", "AirBags ~ Price + Origin + `MPG.city`", "polr", rtol_se=RTOL_POLR_SE
    ),
    "clmm_cars93": Spec(
        "cars93", "AirBags ~ Price + Origin + (1 | Manufacturer)", "clmm", stops_short=True
    ),
    "clmm_cars93_tight": Spec(
        "cars93", "AirBags ~ Price + Origin + (1 | Manufacturer)", "clmm", rtol_se=RTOL_CLMM_SE
    ),
    "clm_mtcars_carb": Spec("mtcars", "carb ~ hp + am"),
    "clm_mtcars_cyl_ordered": Spec("mtcars", "carb ~ cyl + wt", kwargs={"link": "probit"}),
    "clm_soup_three_factors": Spec(
        "soup", "SURENESS ~ PROD + GENDER + AGEGROUP", kwargs={"link": "loglog"}
    ),
    "clm_soup_symmetric_scale": Spec(
        "soup", "SURENESS ~ PROD", kwargs={"scale": "~ GENDER", "threshold": "symmetric"}
    ),
    "clmm_soup_soupfreq": Spec(
        "soup", "SURENESS ~ PROD + SOUPFREQ + (1 | RESP)", "clmm", stops_short=True
    ),
    "clmm_soup_soupfreq_tight": Spec(
        "soup", "SURENESS ~ PROD + SOUPFREQ + (1 | RESP)", "clmm", rtol_se=RTOL_CLMM_SE
    ),
    "clm_income_probit_equidistant": Spec(
        "income",
        "income ~ year",
        kwargs={"weights": "pct", "link": "probit", "threshold": "equidistant"},
    ),
    "vglm_income_sratio": Spec(
        "income", "income ~ year", "vglm", {"weights": "pct", "family": "sratio"}
    ),
    "vglm_income_cratio_nonparallel": Spec(
        "income", "income ~ 1", "vglm", {"weights": "pct", "family": "cratio", "nominal": "~ year"}
    ),
}


def fit_case(case: str) -> Any:
    """Fit the ordstats spelling of a case."""
    spec = CASES[case]
    data = dataset(spec.data)
    if spec.rows is not None:
        data = data.loc[spec.rows(data).fillna(False).to_numpy(dtype=bool)]
    kwargs = dict(spec.kwargs)
    if spec.offset is not None:
        kwargs["offset"] = spec.offset(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ordstats.errors.OrdstatsWarning)
        model = ordstats.OrdinalModel.from_formula(spec.formula, data, **kwargs)
        return model.fit()


def r_style(name: str) -> str:
    """An ordstats parameter name as R prints it.

    ``Type[T.Apartment]`` -> ``TypeApartment``, ``Infl[Low]`` -> ``InflLow``,
    ``poly(Age, 2)[1]`` -> ``poly(Age, 2)1``, ``log(`exposure.time`)`` ->
    ``log(exposure.time)``, ``I(Age ** 2)`` -> ``I(Age^2)``; ``Infl.L`` stays.
    """
    name = re.sub(r"C\((\w+), contr\.\w+\)", r"\1", name)  # R: contrasts = list(x = ...)
    name = re.sub(r"\[T\.(.+?)\]", r"\1", name)
    name = re.sub(r"\[(.+?)\]", r"\1", name)
    name = name.replace("`", "").replace(" ** ", "^").replace("**", "^")
    return name


def r_names(res: Any) -> list[str]:
    """R's names of a clm/polr/clmm fit's parameters, in ordstats' order."""
    return [r_style(n) for n in ref.r_names(list(res.params.index))]


def vglm_names(res: Any) -> list[str]:
    """VGAM's names of a fit's parameters, in ordstats' order."""
    n_steps = len(res.model.levels) - 1
    names = [f"(Intercept):{j + 1}" for j in range(n_steps)]
    names += [f"{r_style(t)}:{j + 1}" for t in res.model.nominal_names for j in range(n_steps)]
    return names + [r_style(n) for n in res.model.exog_names]


def r_values(values: dict[str, Any], names: list[str]) -> np.ndarray:
    missing = [n for n in names if n not in values]
    assert not missing, f"R has no {missing}; R's names: {list(values)}"
    return np.array([float(values[n]) for n in names])


def _fitted(case: str) -> tuple[Any, dict[str, Any], list[str]]:
    data = load(case)
    res = fit_case(case)
    names = vglm_names(res) if CASES[case].kind == "vglm" else r_names(res)
    return res, data, names


def vglm_signs(case: str, res: Any) -> np.ndarray:
    """Signs taking ordstats' parameters to VGAM's (tests/data/reference/README.md).

    ``cumulative()``: slopes -beta; ``cumulative(reverse = TRUE)``: intercepts -theta
    (and non-parallel effects, which are part of the thresholds).
    """
    n_steps = len(res.model.levels) - 1
    n_thresholds = n_steps * (1 + len(res.model.nominal_names))  # with the nominal effects
    signs = np.ones(res.k_params)
    if "cumulative" in case:
        if "reverse" in case:
            signs[:n_thresholds] = -1.0
        else:
            signs[n_thresholds:] = -1.0
    return signs


def estimates(case: str, res: Any) -> np.ndarray:
    """All estimates in R's parametrisation (clmm: with log(sd), R's ``ST1``)."""
    kind = CASES[case].kind
    if kind == "clmm":
        return np.asarray(res.params_all, dtype=float)
    values = res.params.to_numpy()
    return values * vglm_signs(case, res) if kind == "vglm" else values


def standard_errors(case: str, res: Any) -> np.ndarray:
    """R's standard errors: VGAM's from the expected information, clmm's with ``ST1``."""
    kind = CASES[case].kind
    if kind == "vglm":
        return np.sqrt(np.diag(res.expected_covariance.matrix))
    if kind == "clmm":
        return np.sqrt(np.diag(res.cov_params().to_numpy()))
    return res.bse.to_numpy()


def r_parameter_names(case: str, res: Any, names: list[str]) -> list[str]:
    return [*names, "ST1"] if CASES[case].kind == "clmm" else names


def reference(case: str) -> dict[str, Any]:
    """R's numbers of a case; for clmm the independent exact Laplace optimum.

    clm's cauchit: the exact MLE of the same model (``cauchit_exact``: clm puts the
    outer thresholds at -1e5/+1e5, tests/data/reference/README.md; pneumo: clm
    -213.859746, exact -213.857799).

    clmm's outer optimiser (nlminb on a numerical gradient) stops with max|gradient|
    2e-5 to 4e-3 even with gradTol = 1e-8, ~1e-5 relative from the optimum in the
    estimates; tests/r/clmm_indep.R (the same objective, conditional modes to 1e-13,
    Newton-polished) reaches it to max|gradient| < 1e-6: its log-likelihood is R's
    to 1e-9 and its estimates are compared at 1e-6.
    """
    data = load(case)
    if "cauchit_exact" in data:  # clm's outer thresholds are -1e5/+1e5, not -Inf/Inf
        return {**data, **data["cauchit_exact"]}
    if CASES[case].kind != "clmm":
        return data
    exact = data["independent"]
    return {**data, **exact, "coef": {**exact["coef"], **exact["st_par"]}}


@pytest.mark.parametrize("case", sorted(CASES))
def test_estimates_and_loglik_match_r(case: str) -> None:
    res, data, names = _fitted(case)
    if CASES[case].stops_short:
        assert res.llf >= data["loglik"] - 1e-9 * abs(data["loglik"])
        assert res.llf == pytest.approx(data["loglik"], rel=1e-4)
        return
    ref_data = reference(case)
    assert res.llf == pytest.approx(ref_data["loglik"], rel=RTOL_ESTIMATE)
    r_est = r_values(ref_data["coef"], r_parameter_names(case, res, names))
    np.testing.assert_allclose(estimates(case, res), r_est, rtol=RTOL_ESTIMATE, atol=1e-8)
    if CASES[case].kind == "clmm":
        assert ref_data["loglik"] == pytest.approx(data["loglik"], rel=1e-7)  # R's own
    if CASES[case].kind in ("clm", "polr"):
        aliased = [r_style(n) for n in ref.r_names(res.model.design.location.aliased)]
        assert sorted(data.get("aliased") or []) == sorted(aliased)


@pytest.mark.parametrize("case", sorted(c for c in CASES if not CASES[c].stops_short))
def test_standard_errors_match_r(case: str) -> None:
    res, _, names = _fitted(case)
    np.testing.assert_allclose(
        standard_errors(case, res),
        r_values(reference(case)["se"], r_parameter_names(case, res, names)),
        rtol=CASES[case].rtol_se,
    )


#: clm's cauchit predictions use its -1e5/+1e5 outer thresholds too: not compared
PREDICTED = sorted(
    c
    for c in CASES
    if "newdata_rows" in load(c) and CASES[c].kind == "clm" and "cauchit_exact" not in load(c)
)


@pytest.mark.parametrize("case", PREDICTED)
def test_newdata_probabilities_match_r(case: str) -> None:
    """Predictions on rows of the data without the response."""
    res, data, _ = _fitted(case)
    spec = CASES[case]
    frame = dataset(spec.data)
    rows = frame.iloc[np.asarray(data["newdata_rows"]) - 1].drop(columns=res.model.endog_names)
    np.testing.assert_allclose(
        np.asarray(res.predict(rows), dtype=float),
        np.array(data["newdata_prob"]),
        rtol=1e-6,
        atol=1e-9,
    )


def test_every_reference_case_is_compared_or_excused() -> None:
    cases = {p.stem for p in PARITY.glob("*.json")}
    assert cases == set(CASES)


def test_text_predictors_give_the_factor_fit() -> None:
    """R codes a character column as a factor of its sorted values: so does ordstats."""
    frame = dataset("survey_students")
    as_text = frame.assign(Sex=frame["Sex"].astype(object))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ordstats.errors.MissingDataWarning)
        res = ordstats.OrdinalModel.from_formula("Exer ~ Sex + Smoke + Pulse", as_text).fit()
    data = load("clm_survey_smoke_ordered")
    np.testing.assert_allclose(res.params, r_values(data["coef"], r_names(res)), rtol=1e-6)
