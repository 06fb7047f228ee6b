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
    ],
)
def test_bad_constraints(wine_res, constraint, message):
    with pytest.raises(SpecificationError, match=message):
        wine_res.wald_test(constraint)
