"""Stepwise selection of location terms by AIC, as R's ``step()`` of a clm or polr.

Each step refits the model without each term that can be dropped and with each
term of the scope that can be added (:func:`~ordstats.results.term_tests.drop1`,
:func:`~ordstats.results.term_tests.add1`), and moves to the refit with the
smallest ``-2 llf + k edf`` while that is smaller than the current model's.  As
R's ``step``:

- without ``scope`` only terms are dropped (backward), and a term is dropped
  only when no other term contains it (``a`` stays while ``a:b`` is in the
  model);
- ``scope`` is the upper model (``"~ a * b * c"``) or a dict with ``"lower"``
  and ``"upper"``; terms of the lower model are never dropped, and a term of
  the upper model is added only when every lower-order term it contains is in
  the model;
- a term that adds no parameter (aliased) is dropped first, without a search;
- ``k = 2`` gives AIC, ``k = log(nobs)`` BIC.

The nominal and scale formulas, weights, offset, link and thresholds stay.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ordstats.errors import SpecificationError
from ordstats.results.state import FittedState
from ordstats.results.term_tests import (
    _factor_set,
    _location_terms,
    _scope_terms,
    _term_label,
    _term_text,
    add1,
    check_penalty_k,
    drop1,
    information_criterion,
    refit_with_terms,
)

__all__ = ["StepwiseMethods", "StepwiseSelection", "step"]

_DIRECTIONS = ("both", "backward", "forward")
#: R's step stops unless the new model's criterion is smaller by this much.
_IMPROVEMENT = 1e-7


@dataclass(frozen=True)
class StepwiseSelection:
    """The model a stepwise search chose, and its path (R's ``step()`` and its ``$anova``).

    Attributes
    ----------
    results : OrdinalResults
        The fit of the chosen model.
    anova : pandas.DataFrame
        One row per model visited, the start first: ``Step`` (``"- term"`` or
        ``"+ term"``), ``Df`` (change of the residual degrees of freedom),
        ``Deviance`` (its absolute change), ``Resid. Df`` (``nobs`` minus the
        parameters), ``Resid. Dev`` (``-2 llf``) and ``AIC`` (``-2 llf + k edf``).
    k : float
        The penalty per parameter of the criterion.
    """

    results: Any
    anova: pd.DataFrame
    k: float

    @property
    def terms(self) -> list[str]:
        """The chosen model's location terms (R's ``attr(terms(fit), "term.labels")``)."""
        return [_term_label(t) for t in _location_terms(self.results, "step")]

    def __repr__(self) -> str:
        """The chosen location terms and the path, as R prints ``step()$anova``."""
        return (
            f"Stepwise selection (k = {self.k:g}); chosen location terms: "
            f"{' + '.join(self.terms) or '(thresholds only)'}\n{self.anova.to_string()}"
        )


def _scope_bounds(scope: Any, terms: list[Any]) -> tuple[list[Any], list[Any]]:
    """The lower and upper scopes as formulaic terms (R's ``fdrop`` and ``fadd``)."""
    if scope is None:
        return [], []
    if isinstance(scope, dict):
        unknown = set(scope) - {"lower", "upper"}
        if unknown:
            raise SpecificationError(
                f"scope= as a dict takes the keys 'lower' and 'upper' (one-sided formulas); "
                f"got {sorted(map(str, unknown))}"
            )
        lower = _scope_terms(scope["lower"], terms) if scope.get("lower") is not None else []
        upper = _scope_terms(scope["upper"], terms) if scope.get("upper") is not None else []
        return lower, upper
    return [], _scope_terms(scope, terms)


def _can_drop(terms: list[Any], lower: list[Any]) -> list[Any]:
    """R's ``factor.scope(...)$drop``: terms neither in ``lower`` nor within another term."""
    kept = {_factor_set(t) for t in lower}
    return [
        t
        for t in terms
        if _factor_set(t) not in kept
        and not any(_factor_set(t) < _factor_set(other) for other in terms)
    ]


def _can_add(terms: list[Any], upper: list[Any]) -> list[Any]:
    """R's ``factor.scope(...)$add``: upper terms not in the model whose margins all are."""
    have = {_factor_set(t) for t in terms}
    return [
        t
        for t in upper
        if _factor_set(t) not in have
        and all(_factor_set(m) in have for m in upper if _factor_set(m) < _factor_set(t))
    ]


def _candidates(
    current: Any, terms: list[Any], drops: list[Any], adds: list[Any], k: float
) -> pd.DataFrame:
    """The ``<none>`` row and one row per move (``"- a"``, ``"+ b"``): Df and AIC."""
    parts = []
    if drops:
        table = drop1(current, scope=[_term_text(t) for t in drops], k=k)
        parts.append(table.rename(index=lambda r: r if r == "<none>" else f"- {r}"))
    if adds:
        table = add1(current, [_term_text(t) for t in adds], k=k)
        table = table.rename(index=lambda r: r if r == "<none>" else f"+ {r}")
        parts.append(table if not parts else table.iloc[1:])
    return pd.concat(parts)


def _path_table(models: list[dict[str, Any]]) -> pd.DataFrame:
    deviance = np.array([m["deviance"] for m in models])
    resid_df = np.array([m["df_resid"] for m in models], dtype=float)
    return pd.DataFrame(
        {
            "Step": [m["change"] for m in models],
            "Df": np.r_[np.nan, np.diff(resid_df)],
            "Deviance": np.r_[np.nan, np.abs(np.diff(deviance))],
            "Resid. Df": resid_df,
            "Resid. Dev": deviance,
            "AIC": [m["AIC"] for m in models],
        },
        index=pd.RangeIndex(1, len(models) + 1),
    )


def _visited(fit: Any, change: str, k: float) -> dict[str, Any]:
    return {
        "deviance": -2.0 * fit.llf,
        "df_resid": fit.nobs - fit.k_params,
        "change": change,
        "AIC": information_criterion(fit, k),
    }


def _check_direction(direction: Any) -> str:
    if direction not in _DIRECTIONS:
        raise SpecificationError(
            f"direction={direction!r}: use 'both' (R's default), 'backward' or 'forward'"
        )
    return str(direction)


def _check_steps(steps: Any) -> int:
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 0:
        raise SpecificationError(f"steps is the most steps to take, an integer >= 0; got {steps!r}")
    return int(steps)


def step(
    res: FittedState,
    scope: Any = None,
    direction: str = "both",
    k: float = 2.0,
    steps: int = 1000,
    trace: bool = False,
) -> StepwiseSelection:
    """Choose the location terms by AIC, one term at a time (R's ``step``).

    Parameters
    ----------
    res : OrdinalResults
        The starting fit (built with ``from_formula`` in this session).
    scope : str, list of str or dict, optional
        The upper model (``"~ a * b"``, R's ``.`` for the model's terms), or
        ``{"lower": "~ a", "upper": "~ a * b * c"}``.  Without it only terms
        are dropped.
    direction : {"both", "backward", "forward"}
    k : float
        Penalty per parameter: 2 for AIC, ``log(nobs)`` for BIC.
    steps : int
        The most steps to take.
    trace : bool
        Print each step's candidates, as R's ``trace = 1``.

    Returns
    -------
    StepwiseSelection
        ``.results`` is the chosen fit, ``.anova`` the path (R's ``$anova``).
    """
    direction = _check_direction(direction)
    k = check_penalty_k(k)
    steps = _check_steps(steps)
    terms = _location_terms(res, "step")
    lower, upper = _scope_bounds(scope, terms)
    backward = direction in ("both", "backward")
    forward = direction in ("both", "forward") and scope is not None
    current, criterion = res, information_criterion(res, k)
    models = [_visited(res, "", k)]
    if trace:
        _print_step("Start", current, criterion)
    for _ in range(steps):
        terms = _location_terms(current, "step")
        drops = _can_drop(terms, lower) if backward else []
        adds = _can_add(terms, upper) if forward else []
        if not drops and not adds:
            break
        table = _candidates(current, terms, drops, adds, k)
        aliased = table.index[(table["Df"] == 0).to_numpy()]
        aliased = [r for r in aliased if r.startswith("- ")]
        if aliased:
            change = aliased[-1]
        else:
            moves = table[(table["Df"] != 0) | table["Df"].isna()]
            order = moves["AIC"].sort_values(kind="stable", na_position="last")
            if trace:
                print(moves.loc[order.index].to_string(), "\n")
            if order.index[0] == "<none>":
                break
            change = str(order.index[0])
        fit = refit_with_terms(current, _moved(terms, change, adds), f"step {change!r}")
        new_criterion = information_criterion(fit, k)
        if new_criterion >= criterion + _IMPROVEMENT and not aliased:
            break
        current, criterion = fit, new_criterion
        models.append(_visited(fit, change, k))
        if trace:
            _print_step("Step", current, criterion)
    return StepwiseSelection(results=current, anova=_path_table(models), k=k)


def _moved(terms: list[Any], change: str, adds: list[Any]) -> list[Any]:
    """The location terms after ``change`` (``"- a:b"`` or ``"+ c"``)."""
    sign, label = change[0], change[2:]
    if sign == "-":
        return [t for t in terms if _term_label(t) != label]
    added = next(t for t in adds if _term_label(t) == label)
    return [*terms, added]


def _print_step(heading: str, fit: Any, criterion: float) -> None:
    terms = " + ".join(_term_label(t) for t in _location_terms(fit, "step")) or "1"
    print(f"{heading}:  AIC={criterion:.2f}\nlocation: {terms}\n")


class StepwiseMethods(FittedState):
    """R's ``step()`` as a results method."""

    def step(
        self,
        scope: Any = None,
        direction: str = "both",
        k: float = 2.0,
        steps: int = 1000,
        trace: bool = False,
    ) -> StepwiseSelection:
        """Choose the location terms by AIC, one term at a time (R's ``step``).

        See :func:`ordstats.results.stepwise.step`.

        Parameters
        ----------
        scope : str, list of str or dict, optional
            The upper model (``"~ a * b"``) or ``{"lower": ..., "upper": ...}``;
            without it only terms are dropped.
        direction : {"both", "backward", "forward"}
        k : float
            Penalty per parameter: 2 for AIC, ``log(nobs)`` for BIC.
        steps : int
            The most steps to take.
        trace : bool
            Print each step's candidates.

        Returns
        -------
        StepwiseSelection
            ``.results`` is the chosen fit, ``.anova`` its path (R's ``$anova``).
        """
        return step(self, scope, direction, k, steps, trace)
