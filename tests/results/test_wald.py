"""Wald and z tests of linear constraints written as formulas."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats

import ordstats
from ordstats.errors import SpecificationError


def test_single_constraint_by_hand(wine_res):
    test = wine_res.wald_test("temp[T.warm] = contact[T.yes]")
    diff = wine_res.params["temp[T.warm]"] - wine_res.params["contact[T.yes]"]
    cov = wine_res.cov_params()
    var = (
        cov.loc["temp[T.warm]", "temp[T.warm]"]
        + cov.loc["contact[T.yes]", "contact[T.yes]"]
        - 2 * cov.loc["temp[T.warm]", "contact[T.yes]"]
    )
    assert float(test.statistic) == pytest.approx(diff**2 / var)
    assert float(test.pvalue) == pytest.approx(stats.chi2.sf(diff**2 / var, 1))
    assert test.df_denom == 1 and test.distribution == "chi2"
    z = wine_res.t_test("temp[T.warm] = contact[T.yes]")
    assert float(z.effect[0]) == pytest.approx(diff)
    assert float(z.sd[0]) == pytest.approx(np.sqrt(var))
    assert float(z.statistic[0]) ** 2 == pytest.approx(float(test.statistic))


def test_joint_test_and_thresholds(wine_res):
    test = wine_res.wald_test("temp[T.warm] = 2.5, contact[T.yes] = 1.5, `4|5` - `3|4` = 1.5")
    R = np.zeros((3, 6))
    R[0, 4] = R[1, 5] = R[2, 3] = 1
    R[2, 2] = -1
    q = np.array([2.5, 1.5, 1.5])
    d = R @ wine_res.params.to_numpy() - q
    expected = d @ np.linalg.solve(R @ wine_res.cov_params().to_numpy() @ R.T, d)
    assert float(test.statistic) == pytest.approx(expected)
    assert test.df_denom == 3
    matrix = wine_res.wald_test((R, q))
    assert float(matrix.statistic) == pytest.approx(expected)


def test_single_coefficient_matches_z_test(wine_res):
    z = wine_res.t_test(["contact[T.yes]"])
    assert float(z.statistic[0]) == pytest.approx(wine_res.zvalues["contact[T.yes]"])
    assert float(z.pvalue) == pytest.approx(wine_res.pvalues["contact[T.yes]"])
    np.testing.assert_allclose(z.conf_int(), wine_res.conf_int().loc[["contact[T.yes]"]])
    table = str(z.summary())
    assert "contact[T.yes] = 0" in table


def test_matches_statsmodels_for_a_binary_logit(wine):
    high = (wine["rating"].astype(int) > 3).astype(int)
    exog = pd.DataFrame(
        {
            "warm": (wine["temp"] == "warm").astype(float),
            "yes": (wine["contact"] == "yes").astype(float),
        }
    )
    logit = sm.Logit(high, sm.add_constant(exog)).fit(disp=0)
    ours = ordstats.OrdinalModel(high, exog).fit()
    expected = logit.wald_test("warm = yes", scalar=True)
    ours_test = ours.wald_test("warm = yes")
    assert float(ours_test.statistic) == pytest.approx(float(expected.statistic), rel=1e-5)


def test_robust_covariance_is_used(wine_res):
    robust = wine_res.get_robustcov_results("robust")
    plain = float(wine_res.wald_test("temp[T.warm] = 0").statistic)
    sandwich = float(robust.wald_test("temp[T.warm] = 0").statistic)
    assert sandwich == pytest.approx(robust.zvalues["temp[T.warm]"] ** 2)
    assert sandwich != pytest.approx(plain)


@pytest.mark.parametrize(
    ("constraint", "message"),
    [
        ("temp = 0", "'temp', which is not a parameter"),
        ("temp[T.warm] = ", "cannot read the constraints"),
        ("temp[T.warm] = 0, 2 * temp[T.warm] = 0", "linearly dependent"),
        (np.ones((1, 4)), "does not match the number of columns"),
        # before: "linearly dependent ... drop the redundant ones" for a contradiction
        ("temp[T.warm] = 0, temp[T.warm] = 1", "inconsistent .*contradict"),
        # before: a raw OverflowError (int too large to convert to float)
        ("temp[T.warm] = 1e500", "too large for a float"),
        ("temp[T.warm] + 1e400 * contact[T.yes] = 0", "too large for a float"),
    ],
)
def test_bad_constraints(wine_res, constraint, message):
    with pytest.raises(SpecificationError, match=message):
        wine_res.wald_test(constraint)


# -- statsmodels' signatures: f_test, wald_test(R, q), scalar=, use_f=, t_test(use_t=) ----


@pytest.fixture(scope="module")
def statsmodels_fit(wine):
    """statsmodels' OrderedModel on the same data (its thresholds in another scale)."""
    from statsmodels.miscmodels.ordinal_model import OrderedModel

    exog = pd.DataFrame(
        {
            "warm": (wine["temp"] == "warm").astype(float),
            "yes": (wine["contact"] == "yes").astype(float),
        }
    )
    sm_res = OrderedModel(wine["rating"], exog, distr="logit").fit(method="newton", disp=0)
    assert sm_res.mle_retvals["converged"]
    return sm_res


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        ("temp[T.warm] = contact[T.yes]", "warm = yes"),
        ("temp[T.warm] = 2, contact[T.yes] = 1", "warm = 2, yes = 1"),
    ],
)
def test_f_test_matches_statsmodels_ordered_model(wine_res, statsmodels_fit, ours, theirs):
    # statsmodels' f_test of a likelihood model: F = W / m on (m, df_resid) df
    expected = statsmodels_fit.f_test(theirs)
    result = wine_res.f_test(ours)
    assert result.df_denom == expected.df_denom == wine_res.df_resid == 66
    assert result.df_num == expected.df_num
    assert float(result.fvalue) == pytest.approx(float(expected.fvalue), rel=1e-7)
    assert float(result.pvalue) == pytest.approx(float(expected.pvalue), rel=1e-7)
    chi2 = wine_res.wald_test(ours)
    assert float(result.fvalue) == pytest.approx(chi2.statistic / chi2.df)
    same = wine_res.wald_test(ours, use_f=True)
    assert float(same.fvalue) == pytest.approx(float(result.fvalue))


def test_wald_test_takes_statsmodels_arguments(wine_res, statsmodels_fit):
    R = np.zeros((1, 6))
    R[0, 4], R[0, 5] = 1.0, -1.0
    expected = wine_res.wald_test("temp[T.warm] = contact[T.yes]")
    for result in (
        wine_res.wald_test(R, [0.0]),  # before: TypeError, 2 positional arguments
        wine_res.wald_test(R, 0.0),
        wine_res.wald_test((R, [0.0])),
        wine_res.wald_test("temp[T.warm] = contact[T.yes]", scalar=True),  # before: TypeError
    ):
        assert result.statistic == pytest.approx(expected.statistic)
    theirs = statsmodels_fit.wald_test("warm = yes", scalar=True)
    assert expected.statistic == pytest.approx(float(theirs.statistic), rel=1e-7)
    array = wine_res.wald_test("temp[T.warm] = contact[T.yes]", scalar=False)
    assert np.shape(array.statistic) == (1, 1)
    assert "chi2 = " in str(array)
    # cov_p and invcov as statsmodels: the robust covariance gives the robust test
    robust = wine_res.get_robustcov_results("robust")
    given = wine_res.wald_test("temp[T.warm] = 0", cov_p=robust.cov_params().to_numpy())
    assert given.statistic == pytest.approx(robust.wald_test("temp[T.warm] = 0").statistic)
    inverse = 1.0 / wine_res.cov_params().loc["temp[T.warm]", "temp[T.warm]"]
    by_inverse = wine_res.wald_test("temp[T.warm] = 0", invcov=[[inverse]])
    assert by_inverse.statistic == pytest.approx(wine_res.zvalues["temp[T.warm]"] ** 2)
    assert wine_res.wald_test("temp[T.warm] = 0", df_constraints=2).df == 2


def test_t_test_takes_statsmodels_arguments(wine_res, statsmodels_fit):
    z = wine_res.t_test("temp[T.warm] = 2")
    t = wine_res.t_test("temp[T.warm] = 2", use_t=True)
    assert t.distribution == "t" and t.df_denom == wine_res.df_resid
    assert float(t.tvalue[0]) == pytest.approx(float(z.statistic[0]))
    assert float(t.pvalue) == pytest.approx(2 * stats.t.sf(abs(float(z.statistic[0])), 66))
    theirs = statsmodels_fit.t_test("warm = 2")
    assert float(z.statistic[0]) == pytest.approx(float(np.squeeze(theirs.statistic)), rel=1e-7)
    R = np.zeros(6)
    R[4] = 1.0
    by_matrix = wine_res.t_test(R, 2.0)  # t_test(R, q) as wald_test(R, q)
    assert float(by_matrix.statistic[0]) == pytest.approx(float(z.statistic[0]))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda r: r.t_test(("temp[T.warm]", 0)), "write 'temp\\[T.warm\\] = 0'"),
        (lambda r: r.wald_test(("temp[T.warm] = 0",)), "must be \\(R, q\\)"),
        (lambda r: r.wald_test((np.eye(6), [0] * 6, 1)), "a tuple of 3 item"),
        (lambda r: r.wald_test(None), "no constraints given"),
        (lambda r: r.wald_test(""), "no constraints given"),
        (lambda r: r.wald_test("temp[T.warm] = 0", [1.0]), "q go with a matrix R"),
        (lambda r: r.wald_test("temp[T.warm] = 0", np.eye(2)), "6 x 6 covariance"),
        (lambda r: r.wald_test("temp[T.warm] = 0", "robust"), "6 x 6 covariance"),
        (lambda r: r.wald_test("temp[T.warm] = 0", scalar="yes"), "scalar must be True or False"),
        (lambda r: r.wald_test("temp[T.warm] = 0", use_f=2), "use_f must be True or False"),
        (lambda r: r.wald_test("temp[T.warm] = 0", invcov=np.eye(2)), "1 x 1 matrix"),
        (lambda r: r.wald_test("temp[T.warm] = 0", df_constraints=0), "positive integer"),
        (lambda r: r.t_test("temp[T.warm] = 0", use_t="no"), "use_t must be True or False"),
        # not a constraint specification at all (was a raw IndexError from formulaic)
        (lambda r: r.wald_test(4), "cannot read 4 \\(int\\) as constraints"),
        (lambda r: r.t_test(np.float64(1.0)), "cannot read .* as constraints"),
        (lambda r: r.f_test({"temp[T.warm]"}), "cannot read .*\\(set\\) as constraints"),
        (lambda r: r.wald_test(b"temp[T.warm] = 0"), "\\(bytes\\) as constraints"),
        # a matrix with NaN (was a raw LinAlgError: SVD did not converge)
        (lambda r: r.wald_test(np.full((1, 6), np.nan)), "matrix R has missing or infinite"),
        (lambda r: r.t_test(np.eye(6)[4:], [0.0, np.inf]), "values q has missing or infinite"),
    ],
)
def test_bad_test_arguments_get_clear_errors(wine_res, call, message):
    with pytest.raises(SpecificationError, match=message):
        call(wine_res)


def test_t_test_intervals_check_alpha(wine_res):
    result = wine_res.t_test("temp[T.warm] = 0")
    for bad in ("0.05", 2, True):
        with pytest.raises(SpecificationError, match="alpha must be a number"):
            result.conf_int(alpha=bad)
        with pytest.raises(SpecificationError, match="alpha must be a number"):
            result.summary(alpha=bad)
    np.testing.assert_allclose(
        result.conf_int(0.1), wine_res.conf_int(0.1).loc[["temp[T.warm]"]], rtol=1e-12
    )


# -- signs after operators and scientific notation, as patsy reads them (statsmodels) ------

_PATSY_SPELLINGS = [
    "x1 = -x2",
    "x1 = - x2",
    "x1 - -x2",
    "x1 = +x2",
    "x1 = -2*x2",
    "x1 = -.5*x2",
    "-(x1 - x2) = 0",
    "x1 - x2 = -1",
    "x1 = -x2, x2 = -1",
    "x1 = 1e-3",
    "x1 = 2.5e+1*x2",
    "x1 = -1e-3",
]


@pytest.mark.parametrize("spelling", _PATSY_SPELLINGS)
def test_constraints_are_read_as_patsy_reads_them(spelling):
    """statsmodels' wald_test/t_test/f_test parse constraints with patsy; ordstats the same."""
    from patsy import DesignInfo

    from ordstats.design.constraints import parse_constraints

    names = ["x1", "x2"]
    expected = DesignInfo(names).linear_constraint(spelling)
    matrix, values, _ = parse_constraints(spelling, names)
    np.testing.assert_allclose(matrix, expected.coefs, atol=1e-15)
    np.testing.assert_allclose(values, expected.constants.reshape(-1), atol=1e-15)


@pytest.fixture(scope="module")
def numeric_fit():
    rng = np.random.default_rng(0)
    data = pd.DataFrame({"x1": rng.normal(size=200), "x2": rng.normal(size=200)})
    latent = data["x1"] + 0.5 * data["x2"] + rng.logistic(size=200)
    data["y"] = pd.cut(latent, [-np.inf, -1, 0, 1, np.inf], labels=list("abcd"))
    return ordstats.OrdinalModel.from_formula("y ~ x1 + x2", data).fit()


def test_a_negated_name_after_the_equals_sign_is_tested(numeric_fit):
    """``"x1 = -x2"`` is ``x1 + x2 = 0`` in all three tests (as statsmodels' OrderedModel)."""
    res = numeric_fit
    total = res.params["x1"] + res.params["x2"]
    se = np.sqrt(res.cov_params().loc[["x1", "x2"], ["x1", "x2"]].to_numpy().sum())
    t = res.t_test("x1 = -x2")
    assert float(t.effect[0]) == pytest.approx(total, rel=1e-12)
    assert float(t.sd[0]) == pytest.approx(se, rel=1e-10)
    wald = res.wald_test("x1 = -x2")
    assert wald.statistic == pytest.approx((total / se) ** 2, rel=1e-10)
    assert float(res.f_test("x1 = - x2").fvalue) == pytest.approx(wald.statistic, rel=1e-12)
    assert res.wald_test("x1 - -x2").statistic == pytest.approx(wald.statistic, rel=1e-12)


def test_a_negative_constant_for_a_threshold_in_backticks(wine_res):
    """The module's own example ``"`1|2` = -1"`` (formulaic alone cannot read it)."""
    t = wine_res.t_test("`1|2` = -1")
    assert float(t.effect[0]) == pytest.approx(wine_res.params["1|2"] + 1.0, rel=1e-12)
