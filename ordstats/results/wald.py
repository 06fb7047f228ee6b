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
* :func:`t_test` -- each constraint separately: the estimate of
  :math:`R\hat\theta - q`, its standard error and a z test (normal reference,
  as every test of an ordinal model is asymptotic).

``V`` is the covariance the results use (robust or cluster if fitted so).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from statsmodels.stats.contrast import ContrastResults

from ordstats._typing import FloatArray
from ordstats.design.constraints import parse_constraints
from ordstats.errors import SpecificationError
from ordstats.results.state import FittedState

__all__ = ["WaldMethods", "t_test", "wald_test"]


def _check_covariance(covariance: FloatArray) -> None:
    if not np.all(np.isfinite(covariance)):
        raise SpecificationError(
            "the covariance of the estimates is not available (singular Hessian), so no "
            "Wald test can be computed"
        )


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
    statsmodels.stats.contrast.ContrastResults
        ``statistic``, ``pvalue``, ``df_denom`` (the number of constraints).
    """
    _check_covariance(covariance)
    matrix, values, _ = parse_constraints(constraints, names)
    diff = matrix @ params - values
    middle = matrix @ covariance @ matrix.T
    statistic = float(diff @ np.linalg.solve(middle, diff))
    df = matrix.shape[0]
    return ContrastResults(
        chi2=statistic, df_denom=df, statistic=statistic, distribution="chi2", distargs=(df,)
    )


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
        statsmodels.stats.contrast.ContrastResults
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
