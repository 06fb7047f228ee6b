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

**Groups with fewer categories** (brms' ``nthres`` per group,
:mod:`ordstats.design.threshold_groups`): ``t`` holds only the thresholds a group has;
the nominal model's others are put :data:`ABSENT_SPACING` apart above the group's last
one (``x = A t + c``), which gives the levels above the group's top probability 0 in
every family method, prediction and the JAX model alike; the step families' absent
intercepts are put at ``+-s`` (the family's ``absent_step_sign``,
:class:`~ordstats.families.capabilities.Capabilities`).

**Maximum likelihood** (every group at every level) has the same likelihood as
``nominal="~ g"`` (``clm(y ~ x, nominal = ~ g)`` in R), whose fit reports the reference
group's thresholds and the differences of the other groups'; a maximum-likelihood fit
of the ``thres()`` model refuses and says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from ordstats._typing import FloatArray
from ordstats.design.random import has_random_terms
from ordstats.design.threshold_groups import (
    ThresholdGroups,
    nominal_formula,
    reference_first,
    threshold_groups,
)
from ordstats.errors import DataError, FormulaError, SpecificationError

__all__ = ["ThresholdGroupMap", "grouped_threshold_model", "refuse_threshold_groups_ml"]


#: How far above a group's last threshold the nominal model's missing ones are put: far
#: enough that ``F`` of the cut-point is 1 in floating point for every link (so the
#: levels above the group's top get probability 0 exactly) at any plausible ``eta``.
ABSENT_SPACING = 1e20


@dataclass(frozen=True)
class ThresholdGroupMap:
    """``x = A t + c``: the nominal model's parameters from the groups' thresholds.

    A group with ``m < K - 1`` thresholds (:attr:`ThresholdGroups.counts`) has no
    ``theta_{g,j}`` for ``j > m``; the nominal model gets ``theta_{g,m} + j' s`` there
    (``s`` = :data:`ABSENT_SPACING`, ``j' = 1, 2, ...``), so that its rows at the top
    level ``m`` have ``P = 1 - F(theta_{g,m} - eta)`` and the levels above ``m``
    probability 0, as brms.  The reference group has every threshold
    (:func:`~ordstats.design.threshold_groups.reference_first`).

    Attributes
    ----------
    groups : ThresholdGroups
    k : int
        The number of the nominal model's parameters.
    thresholds : tuple of str
        The ungrouped thresholds' names (``"1|2"``, ...).
    """

    groups: ThresholdGroups
    k: int
    thresholds: tuple[str, ...]
    #: 0: cumulative (absent thresholds above the group's last); +1 or -1: the step
    #: families' absent intercepts at +s or -s (the family's ``absent_step_sign``)
    sign: int = 0

    @property
    def starts(self) -> tuple[int, ...]:
        """Where each group's thresholds start in ``t``."""
        return tuple(int(s) for s in np.cumsum([0, *self.groups.counts[:-1]]))

    @property
    def n_group_thresholds(self) -> int:
        """The number of sampled thresholds (all groups)."""
        return int(sum(self.groups.counts))

    @property
    def n_sampled(self) -> int:
        """The length of ``t``."""
        K, G = self.groups.n_thresholds, self.groups.n_groups
        return self.n_group_thresholds + self.k - G * K

    @cached_property
    def _affine(self) -> tuple[FloatArray, FloatArray]:
        return self._rows()

    def _rows(self) -> tuple[FloatArray, FloatArray]:
        K, G = self.groups.n_thresholds, self.groups.n_groups
        A, c = np.zeros((self.k, self.n_sampled)), np.zeros(self.k)
        A[np.arange(K), np.arange(K)] = 1.0  # the reference group's thresholds
        for g, (start, m) in enumerate(zip(self.starts, self.groups.counts, strict=True)):
            if g == 0:
                continue
            rows = g * K + np.arange(K)
            A[rows, np.arange(K)] = -1.0  # gamma_{g,j} = theta_{g,j} - theta_{1,j}
            A[rows[:m], start + np.arange(m)] = 1.0
            if self.sign:  # a step family's absent intercepts: +-s
                c[rows[m:]] = self.sign * ABSENT_SPACING
                continue
            A[rows[m:], start + m - 1] = 1.0  # absent: theta_{g,m} + j' s
            c[rows[m:]] = ABSENT_SPACING * np.arange(1, K - m + 1)
        rest = np.arange(G * K, self.k)
        A[rest, self.n_group_thresholds + rest - G * K] = 1.0
        return A, c

    @property
    def matrix(self) -> FloatArray:
        """``A`` (k x the length of ``t``)."""
        return self._affine[0]

    @property
    def offset(self) -> FloatArray:
        """``c``: the absent thresholds' distances above their group's last one."""
        return self._affine[1]

    def expand(self, theta: FloatArray) -> FloatArray:
        """The nominal model's parameters of ``theta`` (rows of a 2-D array, or one)."""
        A, c = self._affine
        return np.asarray(theta, dtype=float) @ A.T + c

    def chain(
        self, theta: FloatArray, grad: FloatArray, hess: FloatArray | None
    ) -> tuple[FloatArray, FloatArray | None]:
        """Gradient and Hessian in ``theta`` from those in ``x`` (an affine map)."""
        A = self.matrix
        return A.T @ grad, None if hess is None else A.T @ hess @ A

    def contract(self, x: FloatArray) -> FloatArray:
        """The groups' thresholds of the nominal model's parameters ``x`` (``A t + c = x``)."""
        x = np.asarray(x, dtype=float)
        K, G = self.groups.n_thresholds, self.groups.n_groups
        parts = [x[:K]]
        for g, m in enumerate(self.groups.counts[1:], start=1):
            parts.append(x[:m] + x[g * K : g * K + m])
        return np.concatenate([*parts, x[G * K :]])

    def sampled_row(self, row: FloatArray) -> FloatArray:
        """A prior row on the nominal model's slopes or scale, as a row on ``t``."""
        K, G = self.groups.n_thresholds, self.groups.n_groups
        return np.concatenate([np.zeros(self.n_group_thresholds), np.asarray(row)[G * K :]])

    def names(self) -> dict[int, tuple[str, ...]]:
        """Each group threshold's names by position: ordstats' ``1|2[g=a]``, brms', its number."""
        groups = self.groups
        out: dict[int, tuple[str, ...]] = {}
        for g, (level, start) in enumerate(zip(groups.levels, self.starts, strict=True)):
            for j, name in enumerate(self.thresholds[: groups.counts[g]]):
                brms = f"Intercept[{level},{j + 1}]"
                out[start + j] = (
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
    rows = model.design.row_index
    reordered = reference_first(data[variable], rows, model.design.response.codes)
    if reordered is not None:  # the reference group must have every threshold
        data = data.assign(**{variable: reordered})
        model = cls.from_formula(
            formula, data, nominal=nominal_formula(variable), context=context, **keywords
        )
    values = data.loc[model.design.row_index, variable]
    groups = threshold_groups(model.design, values, variable)
    if groups.ragged and model.family_spec.capabilities.summed_steps and model.reverse:
        raise DataError(
            f"thres(gr = {variable}) with family='acat', reverse=True: some groups have no "
            "rows at the top level(s), so fewer thresholds, which this family fits only "
            "with reverse=False (the same model with the other sign of the slopes and "
            "intercepts)"
        )
    model.threshold_groups = groups
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
    if groups.ragged:
        raise SpecificationError(
            f"thres(gr = {groups.variable}) is fitted by Bayesian fits (fit(prior='default'), "
            "brms' priors): some groups lack response levels, so their thresholds have no "
            "maximum-likelihood estimate"
        )
    raise SpecificationError(
        f"thres(gr = {groups.variable}) is fitted by Bayesian fits (fit(prior='default'), "
        "brms' priors). For maximum likelihood fit the same likelihood as "
        f"nominal='~ C({groups.variable})' without thres(): it reports the first group's "
        "thresholds and the other groups' differences from them"
    )
