"""Rebuild VGAM ``vglm(...)`` reference fits with ordstats and map VGAM's names.

VGAM names the intercepts ``(Intercept):j``, shared slopes as R prints them
(``tempwarm``) and category-specific (non-parallel) effects ``<term>:j``;
ordstats names them ``"1:2"``, ``"temp[T.warm]"`` and ``"1:2.contact[T.yes]"``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

import ordstats
from ordstats.core.solver import newton
from ordstats.design import design_from_formula
from ordstats.families import get_family
from ordstats.families.cumulative.likelihood import CLMData
from tests import _reference as ref

_VGLM = re.compile(r"^vglm\((?P<formula>[^,]+), family = (?P<family>\w+)\((?P<args>[^)]*)\)")


@dataclass(frozen=True)
class VglmCall:
    """What an R ``vglm(...)`` call asks for, in ordstats' terms."""

    formula: str
    dataset: str
    family: str
    link: str
    reverse: bool
    nonparallel: str | None
    weights: str | None
    offset: np.ndarray | None


def parse_call(r_call: str) -> VglmCall:
    """Translate the ``vglm`` calls of the reference files."""
    match = _VGLM.match(r_call)
    if match is None:
        raise ValueError(f"cannot parse {r_call!r}")
    args = match.group("args")
    link = re.search(r'link = "(\w+)link"', args)
    nonparallel = re.search(r"parallel = FALSE ~ (\w+)", args)
    weights = re.search(r"weights = (\w+)", r_call)
    dataset = re.search(r"data = (\w+)", r_call).group(1)  # type: ignore[union-attr]
    offset = None
    if "offset = wine_offset" in r_call:  # tests/r/vglm_extra.R
        offset = 0.25 * (np.arange(72) % 3)
    return VglmCall(
        formula=match.group("formula"),
        dataset=dataset,
        family=match.group("family"),
        link=link.group(1) if link else "logit",
        reverse="reverse = TRUE" in args,
        nonparallel=nonparallel.group(1) if nonparallel else None,
        weights=weights.group(1) if weights else None,
        offset=offset,
    )


def fit(case: str) -> ordstats.OrdinalResults:
    """Fit a reference case with :class:`ordstats.OrdinalModel`.

    A term of ``parallel = FALSE ~ term`` moves from the formula to ``nominal=``.
    """
    call = parse_call(ref.load(case)["r_call"])
    data = ordstats.datasets.load(call.dataset)
    formula, nominal = call.formula, None
    if call.nonparallel:
        formula = re.sub(rf"\s*\+\s*{call.nonparallel}\b", "", formula)
        nominal = f"~ {call.nonparallel}"
    return ordstats.OrdinalModel.from_formula(
        formula,
        data,
        family=call.family,
        link=call.link,
        reverse=call.reverse,
        nominal=nominal,
        weights=call.weights,
        offset=call.offset,
    ).fit()


@dataclass(frozen=True)
class CoreFit:
    """A fit of the numerical core (no formula layer): estimates and information."""

    params: np.ndarray
    names: list[str]
    llf: float
    observed: np.ndarray
    expected: np.ndarray
    converged: bool


def fit_core(case: str) -> CoreFit:
    """Fit any reference case (also non-parallel) on arrays, with VGAM's names.

    The terms of ``parallel = FALSE ~ <term>`` become the nominal design.
    """
    call = parse_call(ref.load(case)["r_call"])
    data = ordstats.datasets.load(call.dataset)
    design = design_from_formula(call.formula, data, weights=call.weights)
    names = design.location.names
    X = design.location.matrix
    nominal_cols = [
        i for i, n in enumerate(names) if call.nonparallel and n.startswith(call.nonparallel)
    ]
    family = get_family(call.family, link=call.link, reverse=call.reverse)
    n_steps = len(design.response.levels) - 1
    arrays = CLMData(
        y=design.response.codes,
        n_levels=n_steps + 1,
        X=np.delete(X, nominal_cols, axis=1),
        weights=design.weights,
        offset=design.offset if call.offset is None else call.offset,
        link=family.link,
        threshold_jacobian=np.eye(n_steps),
        nominal=X[:, nominal_cols] if nominal_cols else np.empty((0, 0)),
    )
    problem = family.prepare(arrays)
    solution = newton(lambda x: family.evaluate(problem, x), family.initial_params(problem))
    vglm_names = [f"(Intercept):{j + 1}" for j in range(n_steps)]
    vglm_names += [f"{ref.r_name(names[i])}:{j + 1}" for i in nominal_cols for j in range(n_steps)]
    vglm_names += [ref.r_name(n) for k, n in enumerate(names) if k not in nominal_cols]
    return CoreFit(
        params=solution.x,
        names=vglm_names,
        llf=-solution.evaluation.nll,
        observed=solution.evaluation.hessian,
        expected=family.expected_information(problem, solution.x),
        converged=solution.converged,
    )


def vglm_names(res: ordstats.OrdinalResults) -> list[str]:
    """VGAM's names of the parameters of an ordstats fit, in ordstats' order.

    ``"1:2"`` -> ``(Intercept):1``; the non-parallel ``"1:2:contact[T.yes]"`` ->
    ``contactyes:1``; slopes as R prints them.
    """
    n_steps = len(res.model.levels) - 1
    names = [f"(Intercept):{j + 1}" for j in range(n_steps)]
    names += [
        f"{ref.r_name(term)}:{j + 1}" for term in res.model.nominal_names for j in range(n_steps)
    ]
    names += [ref.r_name(n) for n in res.model.exog_names]
    assert len(names) == res.k_params
    return names


def in_vglm_order(values: dict[str, Any], res: ordstats.OrdinalResults) -> np.ndarray:
    """VGAM's named values in the order of ordstats' parameters."""
    return np.array([float(values[name]) for name in vglm_names(res)])
