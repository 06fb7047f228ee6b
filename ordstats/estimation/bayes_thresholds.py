r"""Group-specific thresholds ``y | thres(gr = g) ~ ...`` in Bayesian fits (as brms).

The model is built as the clm with a nominal effect of ``g`` on every threshold
(:mod:`ordstats.design.threshold_groups`): parameters ``x = (alpha, gamma_2, ...,
gamma_G, beta, ...)``, the groups' thresholds ``theta_1 = alpha`` and ``theta_g = alpha +
gamma_g``.  The Bayesian fit samples ``t = (theta_1, ..., theta_G, beta, ...)``, the
parameters brms reports (``b_Intercept[g,j]``), and maps them by the linear map
``x = A t`` (``gamma_g = theta_g - theta_1``; unit determinant, so no Jacobian).  The
log-likelihood's gradient and Hessian in ``t`` are ``A'g`` and ``A'HA``.

**Priors.**  brms does not centre the design when thresholds are grouped (each group's
thresholds act on its own rows only, so one shift by the column means would not give
each group's intercepts): the ``Intercept`` prior (default ``student_t(3, 0, 2.5)``) is
on each group's thresholds as they are reported.  ``prior(..., class_="Intercept",
group="yes")`` puts a prior on one group's thresholds, ``coef="1"`` on the first of
each group.

**Maximum likelihood** has the same likelihood as ``nominal="~ g"`` (``clm(y ~ x,
nominal = ~ g)`` in R), whose fit reports the reference group's thresholds and the
differences of the other groups'; a maximum-likelihood fit of the ``thres()`` model
refuses and says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ordstats._typing import FloatArray
from ordstats.design.random import has_random_terms
from ordstats.design.threshold_groups import (
    ThresholdGroups,
    nominal_formula,
    threshold_groups,
)
from ordstats.errors import DataError, FormulaError, SpecificationError

__all__ = ["ThresholdGroupMap", "grouped_threshold_model", "refuse_threshold_groups_ml"]


@dataclass(frozen=True)
class ThresholdGroupMap:
    """``x = A t``: the nominal model's parameters from the groups' thresholds.

    Attributes
    ----------
    groups : ThresholdGroups
    k : int
        The number of parameters.
    thresholds : tuple of str
        The ungrouped thresholds' names (``"1|2"``, ...).
    """

    groups: ThresholdGroups
    k: int
    thresholds: tuple[str, ...]

    @property
    def matrix(self) -> FloatArray:
        """``A`` (k x k): ``gamma_g = theta_g - theta_1``, the rest unchanged."""
        K, G = self.groups.n_thresholds, self.groups.n_groups
        A = np.eye(self.k)
        for g in range(1, G):
            A[g * K + np.arange(K), np.arange(K)] = -1.0
        return A

    def expand(self, theta: FloatArray) -> FloatArray:
        """The nominal model's parameters of ``theta`` (rows of a 2-D array, or one)."""
        return np.asarray(theta, dtype=float) @ self.matrix.T

    def chain(
        self, theta: FloatArray, grad: FloatArray, hess: FloatArray | None
    ) -> tuple[FloatArray, FloatArray | None]:
        """Gradient and Hessian in ``theta`` from those in ``x`` (a linear map)."""
        A = self.matrix
        return A.T @ grad, None if hess is None else A.T @ hess @ A

    def contract(self, x: FloatArray) -> FloatArray:
        """The groups' thresholds of the nominal model's parameters ``x``."""
        return np.linalg.solve(self.matrix, np.asarray(x, dtype=float))

    def names(self) -> dict[int, tuple[str, ...]]:
        """Each group threshold's names by position: ordstats' ``1|2[g=a]``, brms', its number."""
        groups = self.groups
        out: dict[int, tuple[str, ...]] = {}
        for g, level in enumerate(groups.levels):
            for j, name in enumerate(self.thresholds):
                brms = f"Intercept[{level},{j + 1}]"
                out[g * groups.n_thresholds + j] = (
                    f"{name}[{groups.variable}={level}]",
                    brms,
                    f"b_{brms}",
                    str(j + 1),
                )
        return out

    def brms_columns(self, draws: pd.DataFrame) -> pd.DataFrame:
        """The draws of brms' ``b_Intercept[g,j]`` (the sampled thresholds, renamed)."""
        spelled = self.names()
        n = len(spelled)
        labels = [spelled[i][2] for i in range(n)]
        return pd.DataFrame(draws.to_numpy()[:, :n], index=draws.index, columns=labels)


def _refuse_combinations(
    variable: str, formula: str, data: Any, nominal: Any, options: dict[str, Any], **others: Any
) -> None:
    if nominal is not None:
        raise SpecificationError(
            f"thres(gr = {variable}) gives every group its own thresholds, so nominal "
            "(category-specific) effects are not available with it (as in brms); drop "
            "nominal= or thres()"
        )
    if has_random_terms(formula):
        raise SpecificationError(
            f"thres(gr = {variable}) is not available in models with random terms yet"
        )
    if others.get("chunksize") is not None or others.get("design") is not None:
        raise SpecificationError(
            f"thres(gr = {variable}) needs the rows in memory as a DataFrame (no chunks, "
            "no survey design)"
        )
    if not isinstance(data, pd.DataFrame):
        raise SpecificationError(
            f"thres(gr = {variable}) needs the data as a pandas DataFrame; got "
            f"{type(data).__name__}"
        )
    if variable not in data.columns:
        raise FormulaError(
            f"thres(gr = {variable}): the data have no column {variable!r}; the grouping "
            "factor must be a column"
        )
    seen = data[variable].dropna().unique()
    if len(seen) < 2:
        raise DataError(
            f"thres(gr = {variable}) needs at least two groups; {variable} has {len(seen)} "
            "level(s); without groups, drop thres()"
        )
    threshold = options.get("threshold", "flexible")
    if not (isinstance(threshold, str) and threshold == "flexible"):
        raise SpecificationError(
            f"thres(gr = {variable}) takes flexible thresholds only (threshold='flexible'); "
            f"got threshold={threshold!r}"
        )


def grouped_threshold_model(
    cls: Any,
    formula: str,
    data: Any,
    variable: str,
    *,
    nominal: Any = None,
    context: Any = None,
    chunksize: Any = None,
    design: Any = None,
    **keywords: Any,
) -> Any:
    """The model of ``y | thres(gr = variable) ~ ...`` (``formula`` without the ``thres()``).

    Parameters
    ----------
    cls : type
        The model class (its ``from_formula`` builds the nominal design).
    formula : str
    data : pandas.DataFrame
    variable : str
        The grouping column.
    nominal, context, chunksize, design, **keywords
        As for ``from_formula`` (``scale``, ``weights``, ``offset`` and the options).

    Returns
    -------
    OrdinalModel
        With ``threshold_groups`` set.

    Raises
    ------
    SpecificationError, FormulaError, DataError
        For what is not available with grouped thresholds, or groups without rows at
        some response level.
    """
    _refuse_combinations(
        variable, formula, data, nominal, keywords, chunksize=chunksize, design=design
    )
    column = data[variable]
    if isinstance(column.dtype, pd.CategoricalDtype):  # a group without rows has no thresholds
        data = data.assign(**{variable: column.cat.remove_unused_categories()})
    model = cls.from_formula(
        formula, data, nominal=nominal_formula(variable), context=context, **keywords
    )
    values = data.loc[model.design.row_index, variable]
    model.threshold_groups = threshold_groups(model.design, values, variable)
    return model


def refuse_threshold_groups_ml(model: Any) -> None:
    """Maximum-likelihood fits of ``thres(gr = g)`` point to ``nominal="~ g"``.

    Raises
    ------
    SpecificationError
    """
    groups = getattr(model, "threshold_groups", None)
    if groups is None:
        return
    raise SpecificationError(
        f"thres(gr = {groups.variable}) is fitted by Bayesian fits (fit(prior='default'), "
        "brms' priors). For maximum likelihood fit the same likelihood as "
        f"nominal='~ C({groups.variable})' without thres(): it reports the first group's "
        "thresholds and the other groups' differences from them"
    )
