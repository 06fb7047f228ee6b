"""Fits that used to stop short of R's maximum or break on extreme inputs (issue 14).

R's numbers are in ``tests/data/reference/trust_fits.json`` (``tests/r/trust_fits.R``).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats.errors import ConvergenceWarning

F = ordstats.OrdinalModel.from_formula
REFERENCE = json.loads(
    (Path(__file__).parents[1] / "data" / "reference" / "trust_fits.json").read_text()
)


def _wine2(wine: pd.DataFrame) -> pd.DataFrame:
    """The data of R ordinal's tests/test.clm.convergence.R."""
    cold_yes = (wine["temp"] == "cold") & (wine["contact"] == "yes")
    out = wine.loc[~cold_yes].reset_index(drop=True)
    out.loc[[8, 14, 45], "rating"] = np.nan
    return out


def _fit(model: ordstats.OrdinalModel) -> ordstats.OrdinalResults:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.fit()


def test_scale_aliased_with_nominal_reaches_r_maximum(wine: pd.DataFrame) -> None:
    ref = REFERENCE["fits"]["wine_scale_aliased_nominal"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = F("rating ~ temp * contact", wine, nominal="~ contact", scale="~ contact")
    res = _fit(model)
    assert res.llf == pytest.approx(ref["loglik"], abs=1e-6)
    # the same columns as R reported aliased (R: beta "contactyes"; none else)
    assert model.design.location.aliased == ["contact[T.yes]"]
    assert model.design.scale.aliased == []
    assert model.design.nominal.aliased == []
    assert res.params["temp[T.warm]"] == pytest.approx(ref["coef"]["tempwarm"], abs=1e-3)


def test_r_convergence_test_model_reaches_r_maximum(wine: pd.DataFrame) -> None:
    ref = REFERENCE["fits"]["convergence_wine2"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = F("rating ~ temp", _wine2(wine), nominal="~ contact", scale="~ contact")
    res = _fit(model)
    # R's logLik to 1e-10 relative or better (higher): the likelihood is flat along
    # 1|2:contact[T.yes], which drifts to -inf, so a fit may end a little above R's
    # value too, but not above the supremum (R's logLik + ~7e-9 here)
    assert res.llf >= ref["loglik"] - 1e-10 * abs(ref["loglik"])
    assert res.llf <= ref["loglik"] + 1e-8
    assert res.params["temp[T.warm]"] == pytest.approx(ref["coef"]["tempwarm"], abs=1e-3)


@pytest.mark.parametrize("factor", [1e7, 1e-7])
def test_badly_scaled_predictor_has_scaled_standard_errors(
    wine: pd.DataFrame, factor: float
) -> None:
    x = np.random.default_rng(0).normal(size=len(wine))
    base = F("rating ~ temp + x", wine.assign(x=x)).fit()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no singular-Hessian or convergence warning
        scaled = F("rating ~ temp + x", wine.assign(x=x * factor)).fit()
    assert scaled.params["x"] * factor == pytest.approx(base.params["x"], rel=1e-6)
    units = np.where(base.bse.index == "x", factor, 1.0)
    np.testing.assert_allclose(scaled.bse.to_numpy() * units, base.bse.to_numpy(), rtol=1e-6)


def test_tiny_predictor_is_not_called_a_combination_of_the_thresholds(wine: pd.DataFrame) -> None:
    x = np.random.default_rng(0).normal(size=len(wine))
    base = F("rating ~ temp + x", wine.assign(x=x)).fit()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = F("rating ~ temp + x", wine.assign(x=x * 1e-155))
    assert "x" in model.param_names and model.design.location.aliased == []
    res = model.fit()
    assert res.params["x"] * 1e-155 == pytest.approx(base.params["x"], rel=1e-6)


def test_shifted_predictor_is_not_called_a_combination_of_the_thresholds(
    wine: pd.DataFrame,
) -> None:
    x = np.random.default_rng(0).normal(size=len(wine))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = F("rating ~ temp + x", wine.assign(x=x + 1e8))
    assert "x" in model.param_names


@pytest.fixture(scope="module")
def shift_data() -> tuple[pd.DataFrame, ordstats.OrdinalResults]:
    """500 rows from a latent logistic model, and the fit on the unshifted predictor."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=500)
    y = np.searchsorted([-1.0, 0.0, 1.0], 0.8 * x + rng.logistic(size=500)) + 1
    z = rng.choice(["a", "b"], size=500)
    data = pd.DataFrame({"y": y, "x": x, "z": z})
    return data, F("y ~ x + z", data).fit()


@pytest.mark.parametrize("shift", [1e5, 1e8])
def test_shifted_predictor_gives_the_unshifted_fit(shift_data, shift: float) -> None:
    """x + 1e8: R's clm fails from x + 1e5 on (code -2/-1, wrong slope, NA SE;
    tests/r/shift.R); ordstats solves in a centred basis and maps back."""
    data, base = shift_data
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no convergence or singular-Hessian warning
        res = F("y ~ x + z", data.assign(x=data["x"] + shift)).fit()
    assert res.converged
    assert res.llf == pytest.approx(base.llf, rel=1e-9)
    slopes = ["x", "z[T.b]"]
    np.testing.assert_allclose(res.params[slopes], base.params[slopes], rtol=1e-7)
    np.testing.assert_allclose(res.bse[slopes], base.bse[slopes], rtol=1e-7)
    # thresholds move by beta * shift, and so does their uncertainty
    cuts = ["1|2", "2|3", "3|4"]
    np.testing.assert_allclose(
        res.params[cuts] - res.params["x"] * shift, base.params[cuts], atol=1e-5
    )
    var_shifted = base.cov_params().loc["x", "x"] * shift**2
    np.testing.assert_allclose(res.bse[cuts] ** 2, var_shifted, rtol=1e-5)
    # what reads the covariance and the likelihood sees the same numbers
    np.testing.assert_allclose(res.conf_int().loc[slopes], base.conf_int().loc[slopes], rtol=1e-6)
    np.testing.assert_allclose(
        res.predict(data.assign(x=data["x"] + shift)), base.predict(data), atol=1e-7
    )
    robust, base_robust = res.get_robustcov_results("HC0"), base.get_robustcov_results("HC0")
    np.testing.assert_allclose(robust.bse[slopes], base_robust.bse[slopes], rtol=1e-6)


def test_profile_interval_of_a_shifted_slope(shift_data) -> None:
    data, base = shift_data
    res = F("y ~ x + z", data.assign(x=data["x"] + 1e6)).fit()
    got = res.conf_int(method="profile", which=["x"]).loc["x"]
    expected = base.conf_int(method="profile", which=["x"]).loc["x"]
    np.testing.assert_allclose(got, expected, rtol=1e-5)


@pytest.mark.parametrize("factor", [1e-200, 1e-160, 1e11, 1e14, 1e20, 1e28, 1e200])
def test_extremely_scaled_predictor_keeps_finite_standard_errors(shift_data, factor) -> None:
    """Variances beyond 1e308 (x * 1e-160: SE ~ 1e159) or Hessian entries that underflow.

    From x * 1e11 the slope's gradient entry at the optimum is ~1e11 times the
    unit-scale one, beyond the absolute gradient tolerance: the fit converged
    to the right estimates but said it did not (issue 29 campaign).
    """
    data, base = shift_data
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = F("y ~ x + z", data.assign(x=data["x"] * factor)).fit()
    assert res.llf == pytest.approx(base.llf, rel=1e-10)
    assert res.params["x"] * factor == pytest.approx(base.params["x"], rel=1e-8)
    assert np.isfinite(res.bse).all()
    assert res.bse["x"] * factor == pytest.approx(base.bse["x"], rel=1e-8)
    assert res.pvalues["x"] == pytest.approx(base.pvalues["x"], rel=1e-6)


def test_ordinary_predictors_are_fitted_in_their_own_basis(wine: pd.DataFrame) -> None:
    model = F("rating ~ temp + contact", wine)
    assert model.evaluator.basis is None


def test_numerically_constant_column_is_named_as_such(shift_data) -> None:
    data, _ = shift_data
    with pytest.warns(ordstats.errors.CollinearityWarning, match="numerically constant; centre"):
        model = F("y ~ x + z", data.assign(x=data["x"] + 1e11))
    assert model.design.location.aliased == ["x"]


@pytest.mark.parametrize("family", ["cumulative", "sratio", "cratio", "acat"])
@pytest.mark.parametrize("offset", [-40.0, -20.0, 20.0, 40.0])
def test_constant_offset_gives_the_fit_without_it(
    wine: pd.DataFrame, family: str, offset: float
) -> None:
    base = F("rating ~ temp + contact", wine, family=family).fit()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        res = F("rating ~ temp + contact", wine.assign(o=offset), offset="o", family=family).fit()
    assert res.llf == pytest.approx(base.llf, abs=1e-8)
    np.testing.assert_allclose(res.params[4:], base.params[4:], atol=1e-6)


@pytest.mark.parametrize("name, dist", [("logit", "logistic"), ("probit", "norm")])
def test_frozen_scipy_distribution_as_link(wine: pd.DataFrame, name: str, dist: str) -> None:
    from scipy import stats

    named = F("rating ~ temp + contact", wine, link=name).fit()
    frozen = F("rating ~ temp + contact", wine, link=getattr(stats, dist)()).fit()
    assert frozen.llf == pytest.approx(named.llf, abs=1e-10)
    np.testing.assert_allclose(frozen.params, named.params, atol=1e-8)
    np.testing.assert_allclose(frozen.bse, named.bse, rtol=1e-7)  # numerical f'


def test_heavy_tailed_scipy_distribution_fits_and_predicts(wine: pd.DataFrame) -> None:
    from scipy import stats

    res = F("rating ~ temp + contact", wine, link=stats.t(df=5)).fit()
    assert res.converged and np.all(np.isfinite(res.bse))
    probs = res.predict(wine.iloc[:3])
    np.testing.assert_allclose(probs.sum(axis=1), 1.0)
    assert res.model.link == F("rating ~ temp", wine, link=stats.t(df=5)).link
    assert res.model.link != F("rating ~ temp", wine, link=stats.t(df=6)).link


@pytest.mark.parametrize("family", ["sratio", "cratio", "acat"])
@pytest.mark.parametrize("factor", [1e11, 1e14, 1e28])
def test_families_solved_in_extreme_units_converge_without_a_false_warning(
    wine: pd.DataFrame, family: str, factor: float
) -> None:
    """The absolute gradient test cannot be met in units of 1e11 and beyond.

    The estimates were right, but the fit ended on a failed step halving with a
    ConvergenceWarning; the unit-free Newton decrement now ends it as converged.
    """
    z = np.random.default_rng(0).normal(size=len(wine))
    base = F("rating ~ temp + x", wine.assign(x=z), family=family).fit()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = F("rating ~ temp + x", wine.assign(x=z * factor), family=family).fit()
    assert res.converged
    assert "rounding error" in res.mle_retvals["message"]  # not max|g| < gradtol
    assert res.llf == pytest.approx(base.llf, rel=1e-12)
    assert res.params["x"] * factor == pytest.approx(base.params["x"], rel=1e-8)
    assert res.bse["x"] * factor == pytest.approx(base.bse["x"], rel=1e-8)


def test_chunked_fit_in_extreme_units_converges(wine: pd.DataFrame) -> None:
    z = np.random.default_rng(0).normal(size=len(wine))
    base = F("rating ~ temp + x", wine.assign(x=z)).fit()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = F("rating ~ temp + x", wine.assign(x=z * 1e14), chunksize=20).fit()
    assert res.converged
    assert res.params["x"] * 1e14 == pytest.approx(base.params["x"], rel=1e-8)


@pytest.mark.parametrize("weight", [1 / 72, 1e-6, 1e-8, 1e-10])
@pytest.mark.parametrize("chunksize", [None, 20])
def test_constant_weights_of_any_size_give_r_estimates(
    wine: pd.DataFrame, weight: float, chunksize: int | None
) -> None:
    """Small weights make the gradient meet ``gradtol`` long before the estimates.

    A step criterion relative to ``max(1, |x|)`` stopped at 1e-6 one step
    short (``3|4`` 4.8e-7 off R's, which stops on the absolute step); at 1e-8
    R itself stops after five such steps (code 1) 5e-7 short.  Newton's steps
    still shrink quadratically there, and the fit goes on to the estimates.
    """
    ref = json.loads(
        (Path(__file__).parents[1] / "data" / "reference" / "clm_wine_logit.json").read_text()
    )
    expected = np.array(list(ref["coef"].values()))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = F(
            "rating ~ temp + contact", wine.assign(w=weight), weights="w", chunksize=chunksize
        ).fit()
    assert res.converged
    np.testing.assert_allclose(res.params.to_numpy(), expected, rtol=1e-8)


def test_near_separated_fit_with_tiny_weights_reaches_the_estimates() -> None:
    """With weights of 1e-8 the gradient is below ``gradtol`` from the start.

    The approach to a slope of about 11 takes steps that shrink slowly; R's
    rule (five such iterations are code 1) stopped it 6% short of the
    estimates with a false warning of unbounded parameters.
    """
    rng = np.random.default_rng(3)
    x = rng.normal(size=200)
    y = np.digitize(6 * x + rng.logistic(size=200) * 0.6, [-3, 0, 3]) + 1
    data = pd.DataFrame({"y": y, "x": x})
    base = F("y ~ x", data).fit()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = F("y ~ x", data.assign(w=1e-8), weights="w").fit()
    assert res.converged
    np.testing.assert_allclose(res.params, base.params, rtol=1e-8)


def test_tiny_constant_weights_do_not_stop_a_newton_step_short() -> None:
    """With weights of 1e-5, ``max|g| < gradtol`` holds from the first iterate.

    Only R's step criterion (``max|step| < reltol``, absolute) was left to stop
    the fit, and R's rule does not take the step that meets it: ``2|3`` (0.031)
    ended 3.2e-7 (1e-5 relative) off the maximum, where weights of 1 stop
    within 2e-8 relative of it.  That last step is now taken.
    """
    rng = np.random.default_rng(15)
    x = rng.normal(size=200)
    y = np.digitize(0.3 * x + rng.normal(size=200), [-1.0, 0.0, 0.3, 1.0]) + 1
    data = pd.DataFrame({"y": y, "x": x})
    exact = F("y ~ x", data, link="probit").fit(gradtol=1e-12, reltol=1e-12)
    unit = F("y ~ x", data, link="probit").fit()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tiny = F("y ~ x", data.assign(w=1e-5), weights="w", link="probit").fit()
    assert tiny.converged
    np.testing.assert_allclose(unit.params, exact.params, rtol=1e-7)
    np.testing.assert_allclose(tiny.params, exact.params, rtol=1e-10)
    np.testing.assert_allclose(tiny.bse * np.sqrt(1e-5), exact.bse, rtol=1e-8)


def _offset_pm1000(link: str) -> pd.DataFrame:
    """80 rows, 4 levels; the offset alternates +1000 / -1000 (R's clm cannot start)."""
    return pd.read_csv(Path(__file__).parents[1] / "data" / f"offset_pm1000_{link}.csv")


#: The maximum of the logit fit on ``offset_pm1000_logit.csv``: BFGS reaches
#: -52368.814084395, Nelder-Mead from four starts -52368.8140843948.
OFFSET_PM1000_LOGIT_LLF = -52368.8140843948


@pytest.mark.parametrize("chunksize", [None, 50])
def test_offsets_of_plus_minus_1000_reach_the_logit_maximum(chunksize: int | None) -> None:
    """Every row starts far in a tail of the logistic, where the log-likelihood is
    linear to rounding in the slopes and the thresholds' shift: the Hessian was
    singular, each modified step moved by max|g| and the fit stopped at -59864.84
    with code 4 and a warning blaming aliased predictors (there are none).  The
    log-likelihood is concave: Newton now reaches the maximum."""
    data = _offset_pm1000("logit")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = F("y ~ x1 + x2", data, offset="o", chunksize=chunksize).fit()
    assert res.converged and res.mle_retvals["code"] == 0
    assert res.llf == pytest.approx(OFFSET_PM1000_LOGIT_LLF, rel=1e-12)
    np.testing.assert_allclose(res.params[["x1", "x2"]], [701.87876566, 110.92105812], rtol=1e-8)


#: The best maximum of the cauchit fit on ``offset_pm1000_cauchit.csv`` any optimiser
#: found: Nelder-Mead from four starts, -353.69931276640; BFGS stops at -435.157.
OFFSET_PM1000_CAUCHIT_LLF = -353.6993127664


def test_offsets_of_plus_minus_1000_reach_the_best_cauchit_maximum() -> None:
    """The cauchit log-likelihood is not concave: from the default start the Hessian
    stays indefinite for many iterations.  The fit stopped after five of them (code 4)
    at -572.89; modified steps that are doubled (the objective still nearly linear
    along them) no longer count toward those five."""
    data = _offset_pm1000("cauchit")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = F("y ~ x1 + x2", data, offset="o", link="cauchit").fit()
    assert res.converged
    assert res.llf == pytest.approx(OFFSET_PM1000_CAUCHIT_LLF, rel=1e-11)


def test_a_fit_that_did_not_converge_does_not_blame_aliasing() -> None:
    """In chunks the same cauchit fit takes another path and is still climbing after
    100 iterations (code 2; before, code 4 at -572.89).  Its final Hessian is singular;
    the warning said so of "the estimates" and to look for aliased predictors (there
    are none); it now says the values are not a maximum."""
    data = _offset_pm1000("cauchit")
    with pytest.warns(ConvergenceWarning) as caught:
        res = F("y ~ x1 + x2", data, offset="o", link="cauchit", chunksize=50).fit()
    assert not res.converged
    text = " ".join(str(w.message) for w in caught)
    assert "aliased" not in text
    assert "not a maximum" in text
