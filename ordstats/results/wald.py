r"""Wald tests of linear constraints ``R params = q`` written as formulas.

Constraints are parsed by :func:`ordstats.design.constraints.parse_constraints` (formulaic)
from strings such as ``"temp[T.warm] = contact[T.yes]"`` or
``"temp[T.warm], contact[T.yes]"`` (each expression ``= 0``), lists of such
strings, ``{"expression": value}`` dicts, a matrix ``R`` or a tuple ``(R, q)``.
Names that are not plain identifiers, like thresholds, go in backticks:
``"`1|2` = -1"``.  The results are statsmodels'
:class:`~statsmodels.stats.contrast.ContrastResults`.

* :func:`wald_test` -- joint test of all constraints:
  :math:`W = (R\hat\theta - q)^\top (R V R^\top)^{-1} (R\hat\theta - q)`, chi-square
  with as many df as constraints.  A small p-value says the data contradict at
  least one constraint.
* :func:`wald_test_terms` -- one joint test per formula term (all its columns
  ``= 0``; in the nominal and scale parts too), statsmodels' ``wald_test_terms``
  and R's ``car::Anova(type = 3, test = "Wald")`` for models without interactions.
* :func:`t_test` -- each constraint separately: the estimate of
  :math:`R\hat\theta - q`, its standard error and a z test (normal reference,
  as every test of an ordinal model is asymptotic).

``V`` is the covariance the results use (robust or cluster if fitted so).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.contrast import ContrastResults

from ordstats._typing import FloatArray
from ordstats.design import term_columns
from ordstats.design.constraints import parse_constraints
from ordstats.errors import SpecificationError
from ordstats.results.state import FittedState

__all__ = ["WaldMethods", "WaldTestResults", "t_test", "wald_test", "wald_test_terms"]


def _check_covariance(covariance: FloatArray) -> None:
    if not np.all(np.isfinite(covariance)):
        raise SpecificationError(
            "the covariance of the estimates is not available (singular Hessian), so no "
            "Wald test can be computed"
        )


class WaldTestResults(ContrastResults):
    """A joint Wald chi-square test: ``statistic``, ``df``, ``pvalue``.

    statsmodels' :class:`~statsmodels.stats.contrast.ContrastResults` (whose
    ``df_denom`` holds the chi-square df, kept for compatibility), printed as
    a chi-square test: the statistic to 4 significant digits, its df and the
    p-value as R prints it.
    """

    def __init__(self, statistic: float, df: int) -> None:
        super().__init__(
            chi2=statistic, df_denom=df, statistic=statistic, distribution="chi2", distargs=(df,)
        )
        #: degrees of freedom of the chi-square reference (the number of constraints)
        self.df = int(df)

    def summary(self, xname: object = None, alpha: float = 0.05, title: object = None) -> str:
        """One line: ``Wald test: chi2 = 27.91 on 2 df, p-value = 8.69e-07``."""
        return (
            f"Wald test: chi2 = {format_stat(self.statistic)} on {self.df} df, "
            f"p-value = {format_pvalue(float(self.pvalue))}"
        )

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        return f"<{self.summary()}>"


def format_stat(value: float) -> str:
    """A test statistic to 4 significant digits (``27.91``)."""
    return "nan" if not np.isfinite(value) else f"{value:.4g}"


def format_pvalue(value: float) -> str:
    """A p-value as R's ``format.pval`` prints it: ``0.0123``, ``2.19e-06``, ``< 2e-16``."""
    if not np.isfinite(value):
        return "nan"
    if value < 2.220446e-16:
        return "< 2e-16"
    return f"{value:.3g}"


def wald_test(
    params: FloatArray, covariance: FloatArray, names: Sequence[str], constraints: Any
) -> ContrastResults:
    """Joint Wald chi-square test of linear constraints (see module docstring).

    Parameters
    ----------
    params : ndarray
    covariance : ndarray
    names : sequence of str
    constraints
        See :func:`parse_constraints`.

    Returns
    -------
    WaldTestResults
        ``statistic``, ``pvalue``, ``df`` (the number of constraints).
    """
    _check_covariance(covariance)
    matrix, values, _ = parse_constraints(constraints, names)
    diff = matrix @ params - values
    middle = matrix @ covariance @ matrix.T
    statistic = float(diff @ np.linalg.solve(middle, diff))
    return WaldTestResults(statistic, matrix.shape[0])


def wald_test_terms(
    params: FloatArray, covariance: FloatArray, names: Sequence[str], terms: dict[str, list[str]]
) -> pd.DataFrame:
    """Joint Wald test that all parameters of each term are zero.

    Parameters
    ----------
    params, covariance, names
        As for :func:`wald_test`.
    terms : dict
        Term label to the names of its parameters.

    Returns
    -------
    pandas.DataFrame
        One row per term: ``"chi2"``, ``"df"``, ``"P>chi2"``.
    """
    _check_covariance(covariance)
    index = {name: k for k, name in enumerate(names)}
    rows = {}
    for term, members in terms.items():
        cols = [index[m] for m in members]
        sub = params[cols]
        statistic = float(sub @ np.linalg.solve(covariance[np.ix_(cols, cols)], sub))
        rows[term] = (statistic, len(cols), float(stats.chi2.sf(statistic, len(cols))))
    return pd.DataFrame.from_dict(rows, orient="index", columns=["chi2", "df", "P>chi2"])


def t_test(
    params: FloatArray, covariance: FloatArray, names: Sequence[str], constraints: Any
) -> ContrastResults:
    """Separate z tests of linear constraints (see module docstring).

    Parameters
    ----------
    params, covariance, names, constraints
        As for :func:`wald_test`.

    Returns
    -------
    statsmodels.stats.contrast.ContrastResults
        ``effect`` (``R params - q``), ``sd``, ``statistic`` (z), ``pvalue``,
        ``conf_int()``; ``summary()`` prints a table with one row per constraint.
    """
    _check_covariance(covariance)
    matrix, values, labels = parse_constraints(constraints, names)
    effect = matrix @ params - values
    sd = np.sqrt(np.einsum("ij,jk,ik->i", matrix, covariance, matrix))
    result = ContrastResults(effect=effect, sd=sd, statistic=effect / sd, distribution="norm")
    result.c_names = labels
    return result


class WaldMethods(FittedState):
    """Wald tests of linear constraints written as formulas."""

    def wald_test(self, constraints: Any) -> ContrastResults:
        """Joint Wald chi-square test of linear constraints on the parameters.

        ``W = (R p - q)' (R V R')^{-1} (R p - q)`` on as many df as constraints
        (``V`` the covariance in use, robust if fitted so).  A small p-value
        says the data contradict the constraints.

        Parameters
        ----------
        constraints : str, list, dict, ndarray or (R, q)
            E.g. ``"temp[T.warm] = contact[T.yes]"``; several separated by
            commas; thresholds in backticks (``"`1|2` = 0"``).  See
            :mod:`ordstats.results.wald`.

        Returns
        -------
        WaldTestResults
            ``statistic``, ``df``, ``pvalue`` (statsmodels' ``ContrastResults``).
        """
        return wald_test(
            self.params.to_numpy(), self.covariance.matrix, list(self.params.index), constraints
        )

    def t_test(self, constraints: Any) -> ContrastResults:
        """Test each linear constraint separately by a z test (estimate, SE, z, p, CI).

        Parameters
        ----------
        constraints
            As for :meth:`wald_test`.

        Returns
        -------
        statsmodels.stats.contrast.ContrastResults
            ``summary()`` prints one row per constraint.
        """
        return t_test(
            self.params.to_numpy(), self.covariance.matrix, list(self.params.index), constraints
        )

    def wald_test_terms(self) -> pd.DataFrame:
        """Joint Wald test of each formula term (statsmodels' ``wald_test_terms``).

        For every term of the location formula (``"temp"``, ``"temp:contact"``)
        all its coefficients ``= 0``; terms of the nominal formula (all their
        threshold-specific effects, labelled ``"nominal: term"``) and of the
        scale formula (``"scale: term"``) likewise.  Uses the covariance in use.

        Returns
        -------
        pandas.DataFrame
            One row per term: ``"chi2"``, ``"df"``, ``"P>chi2"``.
        """
        model = self.model
        design = model.design
        groups: dict[str, list[str]] = dict(term_columns(design.location))
        thresholds = model.threshold_param_names
        if design.nominal is not None:
            for term, cols in term_columns(design.nominal).items():
                groups[f"nominal: {term}"] = [f"{t}:{c}" for c in cols for t in thresholds]
        if design.scale is not None:
            for term, cols in term_columns(design.scale).items():
                groups[f"scale: {term}"] = [f"scale:{c}" for c in cols]
        return wald_test_terms(
            self.params.to_numpy(), self.covariance.matrix, list(self.params.index), groups
        )
