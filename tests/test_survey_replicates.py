"""Replicate-weight designs against R's svyolr on as.svrepdesign designs (issue 27).

R's svyolr refits each replicate with polr (BFGS), which stops short of the optimum, so
its replicate variance is only as accurate as those refits (0.7% for apistrat's JKn with
enroll, a coefficient of order 1e-3).  tests/r/survey_refs.R also computes svyolr's
replicate variance (svrVar with the design's scale, rscales and mse) from replicates
converged by ordinal::clm's Newton (``var_newton``): ordstats equals that to 1e-8.
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats.errors import OrdstatsWarning, SpecificationError
from tests.test_survey import DATA, F_ENROLL, F_STYPE, REFS, load, r_order

CASES = ["clus1_JK1", "clus1_bootstrap", "strat_JKn", "strat_BRR", "strat_Fay"]


def _assert_like_r(res, ref):
    """Estimates, Newton covariance and residual df of a replicate fit equal R's reference."""
    order = r_order(len(ref["coef"]))
    np.testing.assert_allclose(res.params, np.array(ref["coef"])[order], rtol=1e-6)
    expected = np.array(ref["var_newton"])[np.ix_(order, order)]
    np.testing.assert_allclose(res.cov_params().to_numpy(), expected, rtol=1e-5)
    assert res.df_resid == ref["df_residual"]


def replicate_design(ref: dict, data: pd.DataFrame) -> ordstats.ReplicateDesign:
    """The replicate design of an entry of refs.json (R's replicate weights) on ``data``."""
    return ordstats.ReplicateDesign(
        data,
        repweights=np.array(ref["repweights"]),
        weights="pw",
        type=ref["type"],
        rho=ref["rho"] if ref["type"] == "Fay" else None,
        scale=ref["scale"] if ref["type"] != "BRR" else None,
        rscales=ref["rscales"],
        mse=ref["mse"],
    )


def replicate_fit(name: str) -> ordstats.SurveyResults:
    ref = REFS[name]
    data = load("apiclus1" if name.startswith("clus1") else "apistrat")
    design = replicate_design(ref, data)
    formula = F_STYPE if name.startswith("clus1") else F_ENROLL
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # rows with missing avg.ed are dropped, as R
        return ordstats.OrdinalModel.from_formula(formula, design=design).fit(disp=False)


@pytest.mark.parametrize("name", CASES)
def test_replicate_covariance_equals_r(name):
    ref = REFS[name]
    res = replicate_fit(name)
    order = r_order(len(ref["coef"]))
    np.testing.assert_allclose(res.params, np.array(ref["coef_newton"])[order], rtol=1e-8)
    expected = np.array(ref["var_newton"])[np.ix_(order, order)]
    np.testing.assert_allclose(res.cov_params().to_numpy(), expected, rtol=1e-8)
    assert res.covariance.kind == "replicate"
    assert res.df_resid == ref["df_residual"]
    assert res.design_df == ref["degf"]
    # svyolr's own (polr/BFGS) replicate variance: near, not equal
    svyolr_se = np.sqrt(np.diag(np.array(ref["var"])))[order]
    np.testing.assert_allclose(res.bse, svyolr_se, rtol=1e-2)


def test_replicate_defaults_follow_r():
    data = load("apistrat")
    w = np.array(REFS["strat_BRR"]["repweights"])
    n_rep = w.shape[1]
    brr = ordstats.ReplicateDesign(data, repweights=w, weights="pw", type="BRR")
    assert brr.scale == pytest.approx(1 / n_rep)
    fay = ordstats.ReplicateDesign(data, repweights=w, weights="pw", type="Fay", rho=0.3)
    assert fay.scale == pytest.approx(1 / (n_rep * 0.7**2))
    boot = ordstats.ReplicateDesign(data, repweights=w, weights="pw", type="bootstrap")
    assert boot.scale == pytest.approx(1 / (n_rep - 1))
    with pytest.warns(OrdstatsWarning, match="guessing n"):
        jk1 = ordstats.ReplicateDesign(data, repweights=w, weights="pw", type="JK1")
    assert jk1.scale == pytest.approx((n_rep - 1) / n_rep)
    with pytest.raises(SpecificationError, match="rscales"):
        ordstats.ReplicateDesign(data, repweights=w, weights="pw", type="JKn")
    with pytest.raises(SpecificationError, match="rho"):
        ordstats.ReplicateDesign(data, repweights=w, weights="pw", type="Fay")
    np.testing.assert_array_equal(brr.rscales, np.ones(n_rep))


def test_repweights_by_pattern_and_names_equal_the_matrix():
    data = load("apistrat")
    w = np.array(REFS["strat_Fay"]["repweights"])
    columns = pd.DataFrame(w, columns=[f"repw{r + 1}" for r in range(w.shape[1])])
    data = pd.concat([data, columns], axis=1)
    by_pattern = ordstats.ReplicateDesign(
        data, repweights="^repw", weights="pw", type="Fay", rho=0.3
    )
    by_names = ordstats.ReplicateDesign(
        data,
        repweights=[f"repw{r + 1}" for r in range(w.shape[1])],
        weights="pw",
        type="Fay",
        rho=0.3,
    )
    np.testing.assert_array_equal(by_pattern.repweights, w)
    np.testing.assert_array_equal(by_names.repweights, w)


def test_replicate_progress_is_shown_on_request(capsys):
    ref = REFS["clus1_JK1"]
    design = ordstats.ReplicateDesign(
        load("apiclus1"),
        repweights=np.array(ref["repweights"]),
        weights="pw",
        type="JK1",
        scale=ref["scale"],
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ordstats.OrdinalModel.from_formula(F_STYPE, design=design).fit(disp=True)
    assert "replicate 15/15" in capsys.readouterr().err


def test_refits_without_zero_weight_rows_when_the_shared_problem_fails(monkeypatch):
    # replicates are refitted on every row with zero weights (the designs built once); where
    # that fails (a zero-weight row's probability underflowing makes 0 * log 0 nan) the
    # refit drops those rows: the same numbers (Newton's refits: the chord iterations,
    # which evaluate gradients only, are left out here)
    import ordstats.estimation.survey as survey_fit

    monkeypatch.setattr(survey_fit, "_chord_estimates", lambda *args: None)
    expected = replicate_fit("clus1_JK1").cov_params()
    real = survey_fit.newton
    calls = {"shared": 0}

    def failing_on_zero_weights(objective, start, *args, **kwargs):
        problem = objective.args[1]
        if np.any(problem.data.weights == 0):
            calls["shared"] += 1
            raise ordstats.OrdstatsError("the objective is not finite at the starting values")
        return real(objective, start, *args, **kwargs)

    monkeypatch.setattr(survey_fit, "newton", failing_on_zero_weights)
    res = replicate_fit("clus1_JK1")
    assert calls["shared"] == 2 * 15  # every JK1 replicate drops a PSU; two starts each
    np.testing.assert_allclose(res.cov_params(), expected, rtol=1e-10)


DOMAIN_REFS = json.loads(
    (Path(__file__).parent / "data/survey/replicate_domain_refs.json").read_text()
)


@pytest.mark.parametrize("name", list(DOMAIN_REFS))
def test_replicate_domain_degrees_of_freedom_are_r_s(name):
    """R's subset of a replicate design recomputes degf on the domain's rows
    (tests/r/survey_replicate_domain_refs.R); before, ordstats kept the full design's
    (197 where R has 98 for apistrat's JKn without the elementary schools), so every
    p-value, interval and term test of a domain used too many degrees of freedom."""
    ref = DOMAIN_REFS[name]
    data = load("apiclus1" if name.startswith("clus1") else "apistrat")
    design = replicate_design(REFS[name.removesuffix("_fewer_psus")], data)
    assert design.degf() == ref["degf_full"]
    column, condition = ref["domain"].split(" ", 1)  # "dnum > 400", "yr.rnd == 'No'"
    domain = design.subset(data[column].to_frame("v").eval("v " + condition))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # rows with missing avg.ed are dropped, as R
        res = ordstats.OrdinalModel.from_formula("mealcat ~ avg_ed + mobility", design=domain).fit(
            disp=False
        )
    assert res.design_df == ref["degf"]
    assert res.df_resid == ref["df_residual"]
    assert res.reg_term_test("mobility")["ddf"].iloc[0] == ref["df_residual"]


def _fit_two_slopes(design: ordstats.ReplicateDesign) -> ordstats.SurveyResults:
    """svyolr(mealcat ~ avg.ed + mobility, design) (rows missing avg.ed dropped, as R)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ordstats.errors.MissingDataWarning)
        model = ordstats.OrdinalModel.from_formula("mealcat ~ avg_ed + mobility", design=design)
        return model.fit(disp=False)


GUESS_REFS = json.loads(
    (Path(__file__).parent / "data/survey/replicate_guesses_refs.json").read_text()
)


@pytest.mark.parametrize("name", list(GUESS_REFS))
def test_scales_guessed_from_multipliers_are_r_s(name):
    """Replicate weights given as multipliers (combined_weights=False) without JK1's scale or
    JKn's rscales: R guesses (n - 1)/n as one over the largest multiplier
    (tests/r/survey_replicate_guesses_refs.R).  Before, JK1 took (R - 1)/R from the number of
    replicates (9/10 where the 10 replicates of 15 districts give R's 14/15) and JKn was
    refused."""
    ref = GUESS_REFS[name]
    data = load("apiclus1" if name.startswith("clus1") else "apistrat")
    kind = name.split("_")[1]
    with pytest.warns(OrdstatsWarning, match="guessing"):
        design = ordstats.ReplicateDesign(
            data,
            repweights=np.array(ref["multipliers"]),
            weights="pw",
            type=kind,
            combined_weights=False,
        )
    assert design.scale == pytest.approx(ref["scale"], rel=1e-14)
    np.testing.assert_allclose(design.rscales, ref["rscales"], rtol=1e-14)
    assert design.degf() == ref["degf"]
    _assert_like_r(_fit_two_slopes(design), ref)


def test_svyolr_cloglog_on_replicates_is_the_cloglog_link():
    """svyolr(method = "cloglog") on a replicate design refits with MASS::polr, whose
    "cloglog" is 1 - exp(-exp(x)): link="cloglog", unlike svyolr on a Taylor design, whose
    "cloglog" is link="loglog" (tests/r/survey_replicate_links_refs.R)."""
    ref = json.loads((Path(__file__).parent / "data/survey/replicate_links_refs.json").read_text())
    data = load("apiclus1")
    design = ordstats.ReplicateDesign(
        data,
        repweights=np.array(ref["repweights"]),
        weights="pw",
        type="JK1",
        scale=ref["scale"],
        rscales=ref["rscales"],
    )
    order = r_order(len(ref["coef"]))
    fits = {}
    for link in ("cloglog", "loglog"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ordstats.errors.MissingDataWarning)
            fits[link] = ordstats.OrdinalModel.from_formula(
                "mealcat ~ avg_ed + mobility", design=design, link=link
            ).fit(disp=False)
    res = fits["cloglog"]
    _assert_like_r(res, ref)
    # svyolr's own (BFGS) estimates are within its tolerance of these; loglog's are far off
    np.testing.assert_allclose(res.params, np.array(ref["svyolr_coef"])[order], rtol=1e-3)
    assert np.max(np.abs(fits["loglog"].params - np.array(ref["svyolr_coef"])[order])) > 0.5


def test_negative_replicate_weights_are_accepted_as_r():
    """Preston's multistage bootstrap (as.svrepdesign(type = "mrbbootstrap")) gives negative
    replicate weights, which R's svrepdesign and svyolr accept
    (tests/r/survey_negative_repweights_refs.R: 100 of them); before, ordstats refused them."""
    ref = json.loads(
        (Path(__file__).parent / "data/survey/negative_repweights_refs.json").read_text()
    )
    data = pd.DataFrame(ref["data"])
    data["y"] = pd.Categorical(data["y"], categories=["L1", "L2", "L3", "L4"], ordered=True)
    repweights = np.array(ref["repweights"])
    assert (repweights < 0).sum() == ref["n_negative"] > 0
    design = ordstats.ReplicateDesign(
        data,
        repweights=repweights,
        weights="w",
        type="bootstrap",
        scale=ref["scale"],
        rscales=ref["rscales"],
    )
    assert design.degf() == ref["degf"]
    res = ordstats.OrdinalModel.from_formula("y ~ x + f", design=design).fit(disp=False)
    _assert_like_r(res, ref)


def test_a_replicate_without_weight_in_the_domain_gives_no_numpy_warning():
    # the JK1 replicate that drops the domain's only district has no weight on the fitted
    # rows; before, its one-step start divided by that zero total with numpy's "invalid value
    # encountered in divide" RuntimeWarning, besides ordstats' own warning
    ref = REFS["clus1_JK1"]
    data = load("apiclus1")
    design = replicate_design(ref, data)
    domain = design.subset(data["dnum"] == data["dnum"].min())
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        warnings.simplefilter("ignore", ordstats.errors.MissingDataWarning)
        warnings.simplefilter("ignore", ordstats.errors.LevelsWarning)  # no (75,100] here
        with pytest.warns(OrdstatsWarning, match="replicate fits? did not converge"):
            res = ordstats.OrdinalModel.from_formula("mealcat ~ avg_ed", design=domain).fit(
                disp=False
            )
    assert res.design_df == 0


TYPE_REFS = json.loads((DATA / "replicate_types_refs.json").read_text())
# R's arguments of each design beyond the data, the replicate weights and weights = ~pw
TYPE_ARGS = {
    "successive_difference": {"type": "successive-difference"},
    "ACS": {"type": "ACS", "scale": 2},
    "JK2": {"type": "JK2"},
    "other": {"type": "other", "scale": 0.9, "rscales": "given"},
    "other_mse": {"type": "other", "scale": 0.9, "rscales": "given", "mse": True},
    "other_default": {"type": "other"},
}


@pytest.mark.parametrize("name", list(TYPE_REFS))
def test_other_replicate_types_follow_svrepdesign(name):
    """svrepdesign's types ACS and successive-difference (scale 4/R), JK2 (scale 1) and
    other (scale and rscales by hand, 1 if left out) with R's warnings where it ignores or
    sets them (tests/r/survey_replicate_types_refs.R); before, they were refused."""
    ref = TYPE_REFS[name]
    args = dict(TYPE_ARGS[name])
    assert args["type"] == ref["type"]
    if args.get("rscales") == "given":
        args["rscales"] = ref["rscales"]
    repweights = np.array(ref["repweights"])
    data = load("apiclus1")
    # R's JK2 warns even without scale= or rscales=; ordstats only where they are given
    expect_warning = bool(ref["warnings"]) and not (name == "JK2")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        design = ordstats.ReplicateDesign(data, repweights=repweights, weights="pw", **args)
    messages = [str(w.message) for w in caught if issubclass(w.category, OrdstatsWarning)]
    assert len(messages) == int(expect_warning), messages
    if expect_warning:
        assert ("ignored" in messages[0]) == ("ignored" in ref["warnings"])
    assert design.scale == pytest.approx(ref["scale"], rel=1e-14)
    np.testing.assert_allclose(design.rscales, ref["rscales"], rtol=1e-14)
    assert design.mse == ref["mse"]
    assert design.degf() == ref["degf"]
    _assert_like_r(_fit_two_slopes(design), ref)


FPC_REFS = json.loads((DATA / "replicate_fpc_refs.json").read_text())


def _jackknife_with_fpc(ref: dict, **fpc) -> ordstats.ReplicateDesign:
    """apistrat's JKn (one school dropped per replicate) of replicate_fpc_refs.json."""
    data = load("apistrat")
    data = data[data["row"].isin(ref["rows"])].reset_index(drop=True)
    stype, pw = data["stype"].to_numpy(), data["pw"].to_numpy()
    dropped = np.array(ref["dropped"]) - 1
    same = stype[:, None] == stype[dropped][None, :]
    n_h = pd.Series(stype).map(pd.Series(stype).value_counts()).to_numpy(float)
    repweights = np.where(same, (pw * n_h / (n_h - 1))[:, None], pw[:, None])
    repweights[dropped, np.arange(dropped.size)] = 0.0
    return ordstats.ReplicateDesign(
        data, repweights, weights="pw", type="JKn", rscales=ref["rscales_given"], **fpc
    )


@pytest.mark.parametrize("fpctype", sorted(FPC_REFS))
def test_fpc_per_replicate_equals_svrepdesign(fpctype):
    """svrepdesign(fpc=, fpctype=) multiplies rscales by 1 - fpc or fpc; as.svrepdesign of
    the design with its fpc gives the same variance (tests/r/survey_replicate_fpc_refs.R)."""
    ref = FPC_REFS[fpctype]
    design = _jackknife_with_fpc(ref, fpc=ref["fpc"], fpctype=fpctype)
    np.testing.assert_allclose(design.rscales, ref["rscales"], rtol=1e-14)
    res = ordstats.OrdinalModel.from_formula("mealcat ~ avg_ed + mobility", design=design).fit(
        disp=False
    )
    order = r_order(5)
    np.testing.assert_allclose(res.params, np.array(ref["coef"])[order], rtol=1e-7)
    for key in ("var", "as_svrepdesign_var"):
        expected = np.array(ref[key])[np.ix_(order, order)]
        np.testing.assert_allclose(res.cov_params().to_numpy(), expected, rtol=1e-6)
    assert re.search(rf"FPC:\s+per replicate \({fpctype}\)", str(res.summary()))


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"fpc": 0.1}, "fpctype='fraction'"),
        ({"fpc": 0.1, "fpctype": "fraction"}, r"one value per replicate \(199\)"),
        ({"fpc": [1.5] * 199, "fpctype": "fraction"}, r"in \[0, 1\]"),
        ({"fpctype": "fraction"}, "without fpc="),
        ({"fpc": [0.1] * 199, "fpctype": "fraction", "type": "BRR"}, "not available for"),
        ({"fpc": [0.1] * 199, "fpctype": "fraction", "type": "bootstrap"}, "own correction"),
    ],
)
def test_bad_replicate_fpc_is_named(options, message):
    ref = FPC_REFS["fraction"]
    data = load("apistrat")
    data = data[data["row"].isin(ref["rows"])].reset_index(drop=True)
    options = {"type": "JKn", "rscales": ref["rscales_given"], **options}
    if options["type"] != "JKn":
        options.pop("rscales")
    with pytest.raises(SpecificationError, match=message):
        ordstats.ReplicateDesign(data, np.ones((len(data), 199)), weights="pw", **options)
